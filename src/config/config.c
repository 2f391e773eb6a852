/* SPDX-License-Identifier: MIT */
/* config: defaults, and the ini glue: the file read, inih driven, every
 * error given as "file:line: reason".
 *
 * inih (as packaged) does not report line numbers to the handler, does not call
 * it for empty sections, and silently joins indented lines to the previous
 * value. So the text is fed to ini_parse_stream() through our own line reader,
 * which numbers the lines, sees every section header (empty or not) and notes
 * each line's key, so that every error carries "file:line" and nothing is
 * accepted by accident. The first error wins; parsing never stops half-way
 * with a half-filled config visible to the caller. The values are parsed in
 * config-values.c, the keys handled in config-keys.c. */
#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <ini.h>

#include "coldtext.h"
#include "config-private.h"
#include "fileio.h"
#include "lines.h"
#include "lmkprops.h"
#include "warnlevel.h"

/* ------------------------------------------------------------------ sections */

static bool valid_tier_name(const char *s)
{
	if (!*s || strlen(s) > CONFIG_NAME_MAX)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '-' && *s != '_')
			return false;
	return true;
}

/* [tier NAME]: the tier of that name if an earlier file has it (this file
 * may name it once), else a new one. */
static void begin_tier(struct parser *p, const char *name)
{
	struct config *c = p->c;
	size_t i;

	for (i = 0; i < c->n_tiers && strcmp(c->tiers[i].name, name) != 0; i++)
		;
	if (i < c->n_tiers && p->tier_line[i]) {
		config_fail(p, p->line, "duplicate tier \"%s\" (first at line %u)", name, p->tier_line[i]);
		return;
	}
	if (i == CONFIG_TIERS_MAX) {
		config_fail(p, p->line, "too many tiers (at most %d)", CONFIG_TIERS_MAX);
		return;
	}
	p->tier_line[i] = p->line;
	p->tier = &c->tiers[i];
	p->sec = SEC_TIER;
	if (i < c->n_tiers)
		return;
	c->n_tiers++;
	memset(p->tier, 0, sizeof(*p->tier));
	strcpy(p->tier->name, name);
	p->tier->origin = config_here(p);
	p->tier->kill_signal = SIGKILL;
	p->tier->term_timeout_us = CONFIG_DEFAULT_TERM_TIMEOUT_US;
	p->tier->hold_idle = true;
	p->tier->min_events = 1;
	p->tier->warn_level = WARN_LEVEL_LOW;
}

static void begin_section(struct parser *p, const char *name)
{
	p->tier = NULL;
	p->sec = SEC_INVALID;
	if (strcmp(name, "daemon") == 0) {
		if (p->daemon_line) {
			config_fail(p, p->line, "duplicate section [daemon] (first at line %u)", p->daemon_line);
			return;
		}
		p->daemon_line = p->line;
		p->sec = SEC_DAEMON;
		return;
	}
	if (strncmp(name, "tier", 4) != 0 || (name[4] != '\0' && name[4] != ' ' && name[4] != '\t')) {
		config_fail(p, p->line, "unknown section [%s] (expected [daemon] or [tier NAME])", name);
		return;
	}
	name = config_skip_ws(name + 4);
	if (!*name)
		config_fail(p, p->line, "a tier section needs a name: [tier NAME]");
	else if (!valid_tier_name(name))
		config_fail(p, p->line, "bad tier name \"%s\" (1-%d characters of A-Z a-z 0-9 - _)", name, CONFIG_NAME_MAX);
	else
		begin_tier(p, name);
}

/* Looks at a fresh line as inih will see it: section headers start sections
 * here (so empty ones count), key lines record their key name. */
COLD_TEXT static void scan_line(struct parser *p, const char *line, size_t len)
{
	char buf[256];
	const char *s, *end;
	size_t n;

	p->line_key[0] = '\0';
	p->line_key_long = false;
	if (p->line == 1 && len >= 3 && memcmp(line, "\xEF\xBB\xBF", 3) == 0) {
		line += 3;
		len -= 3;
	}
	n = len < sizeof(buf) - 1 ? len : sizeof(buf) - 1;
	memcpy(buf, line, n);
	buf[n] = '\0';
	buf[strcspn(buf, "\r\n")] = '\0';
	s = config_skip_ws(buf);
	if (*s == '[') {
		end = strchr(s, ']');
		if (!end)
			return; /* inih reports the syntax error */
		char name[sizeof(buf)] = ""; /* zero-filled: the static analyzer cannot tell that
					      * begin_section() reads name[4] only after "tier" */
		const char *a = config_skip_ws(s + 1);
		size_t nl = (size_t)(end - a);

		while (nl > 0 && (a[nl - 1] == ' ' || a[nl - 1] == '\t'))
			nl--;
		memcpy(name, a, nl);
		name[nl] = '\0';
		/* inih drops what follows the ']': a key written there would be lost */
		a = config_skip_ws(end + 1);
		if (*a && *a != ';' && *a != '#') {
			p->tier = NULL;
			p->sec = SEC_INVALID;
			config_fail(p, p->line, "text after the section header [%s]: \"%s\" (a key goes on a line of its own)",
				    name, a);
			return;
		}
		begin_section(p, name);
		return;
	}
	if (*s == ';' || *s == '#' || *s == '\0')
		return;
	n = strcspn(s, "=:");
	while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	p->line_key_long = n >= sizeof(p->line_key);
	p->line_key_len = n;
	if (p->line_key_long)
		n = sizeof(p->line_key) - 1;
	memcpy(p->line_key, s, n);
	p->line_key[n] = '\0';
}

/* A line longer than inih's buffer (line, len bytes with its newline) that
 * inih can be given short: a comment becomes ";", a key line (not indented,
 * with '=' or ':') "KEY=", its value, trimmed as inih trims one (blanks
 * around it and an inline comment -- ';' after a blank -- cut off), kept
 * in p->long_value for the handler. Writes the short line into str (num
 * bytes) and returns true, or false for a line that stays an error. */
COLD_TEXT static bool shorten_long_line(struct parser *p, const char *line, size_t len, char *str, int num)
{
	const char *s = line, *end = line + len, *v, *e;
	bool was_space = false;
	int n;

	while (end > s && (end[-1] == '\n' || end[-1] == '\r'))
		end--;
	if (p->line == 1 && end - s >= 3 && memcmp(s, "\xEF\xBB\xBF", 3) == 0)
		s += 3;
	v = config_skip_ws_n(s, end);
	if (v == end || *v == ';' || *v == '#') { /* a comment or a blank line, of any length */
		n = snprintf(str, (size_t)num, ";\n");
		return n > 0 && n < num;
	}
	if (!p->line_key[0] || s == end || *s == ' ' || *s == '\t' || (size_t)(end - line) > CONFIG_LONG_LINE_MAX)
		return false;
	for (v = s; v < end && *v != '=' && *v != ':'; v++)
		;
	if (v == end)
		return false;
	for (v++; v < end && (*v == ' ' || *v == '\t'); v++)
		;
	for (e = v; e < end && !(was_space && *e == ';'); e++)
		was_space = *e == ' ' || *e == '\t';
	if (e < end) /* the blank before the ';' is no part of the value */
		e--;
	while (e > v && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	n = snprintf(str, (size_t)num, "%s=\n", p->line_key);
	if (n <= 0 || n >= num)
		return false;
	memcpy(p->long_value, v, (size_t)(e - v));
	p->long_value[e - v] = '\0';
	p->long_line = p->line;
	return true;
}

/* A line (len bytes with its newline, if any) with a '\r' elsewhere than
 * right before its end. */
static bool stray_cr(const char *line, size_t len)
{
	if (len > 0 && line[len - 1] == '\n')
		len--;
	if (len > 0 && line[len - 1] == '\r')
		len--;
	return memchr(line, '\r', len) != NULL;
}

COLD_TEXT static char *reader(char *str, int num, void *stream)
{
	struct parser *p = stream;
	size_t max = (size_t)num - 1, len;
	const char *nl;

	if (!*p->pos)
		return NULL;
	nl = strchr(p->pos, '\n');
	len = nl ? (size_t)(nl - p->pos) + 1 : strlen(p->pos);
	if (!p->mid_line) {
		if (p->line == CONFIG_LINE_MAX) {
			config_fail(p, p->line, "the file has more than %u lines", CONFIG_LINE_MAX);
			return NULL;
		}
		p->line++;
		if (stray_cr(p->pos, len))
			config_fail(p, p->line, "a carriage return (\\r) inside the line: lines end with LF or CR LF "
				    "(a file with classic Mac CR line endings reads as one line)");
		scan_line(p, p->pos, len);
	}
	if (len > max && !p->mid_line && shorten_long_line(p, p->pos, len, str, num)) {
		p->pos += len;
		return str;
	}
	if (len > max) {
		if (!p->mid_line && strcspn(p->pos, "\r\n") > CONFIG_LONG_LINE_MAX)
			config_fail(p, p->line, "line is longer than %d characters", CONFIG_LONG_LINE_MAX);
		else if (!p->mid_line)
			config_fail(p, p->line,
				    "line is longer than %d characters, which only a key = value line (not indented) "
				    "or a comment may be",
				    num - 2);
		len = max;
		p->mid_line = true;
	} else {
		p->mid_line = false;
	}
	memcpy(str, p->pos, len);
	str[len] = '\0';
	p->pos += len;
	return str;
}

COLD_TEXT static int handler(void *user, const char *section, const char *name, const char *value)
{
	struct parser *p = user;
	const struct key_def *keys;
	unsigned *seen;
	char why[1024];
	size_t i;
	int r;

	(void)section;
	if (p->err_line)
		return 0;
	if (p->long_line == p->line)
		value = p->long_value;
	if (p->line_key_long && strncmp(name, p->line_key, strlen(p->line_key)) == 0) {
		config_fail(p, p->line, "unknown key \"%.40s...\" (%s%zu characters; no key is that long)", name,
			    p->line_key_len + 1 >= 255 ? "over " : "", p->line_key_len);
		return 0;
	}
	if (strcmp(name, p->line_key) != 0) {
		config_fail(p, p->line, "indented line continues the value of \"%s\"; multi-line values are not supported", name);
		return 0;
	}
	switch (p->sec) {
	case SEC_NONE:
		config_fail(p, p->line, "key \"%s\" is outside any section ([daemon] or [tier NAME])", name);
		return 0;
	case SEC_INVALID:
		return 0;
	case SEC_DAEMON:
		keys = config_daemon_keys;
		seen = p->c->origin[0];
		break;
	case SEC_TIER:
		keys = config_tier_keys;
		seen = p->c->origin[1 + (p->tier - p->c->tiers)];
		break;
	default:
		return 0;
	}
	for (i = 0; keys[i].name; i++)
		if (strcmp(keys[i].name, name) == 0)
			break;
	if (!keys[i].name) {
		config_fail(p, p->line, "unknown key \"%s\" in %s", name, p->sec == SEC_DAEMON ? "[daemon]" : "a [tier] section");
		return 0;
	}
	if (seen[i] && CONFIG_ORIGIN_FILE(seen[i]) == p->file) {
		config_fail(p, p->line, "duplicate key \"%s\" (first set at line %u)", name, CONFIG_ORIGIN_LINE(seen[i]));
		return 0;
	}
	seen[i] = config_here(p); /* a later file overrides an earlier one */
	why[0] = '\0';
	r = config_key_parse(p, &keys[i], value, why, sizeof(why));
	if (r < 0) {
		p->err_nomem = r == -ENOMEM;
		if (strncmp(why, name, strlen(name)) == 0)
			config_fail(p, p->line, "%s", why);
		else
			config_fail(p, p->line, "%s: %s", name, why);
		return 0;
	}
	return 1;
}

uint32_t config_cgroup_tiers(const struct config *c, const char *pat)
{
	uint32_t mask = 0;
	size_t i;

	for (i = 0; i < c->n_tiers; i++)
		if (strcmp(c->tiers[i].cgroup, pat) == 0)
			mask |= 1u << i;
	return mask;
}

size_t config_cgroup_tier_count(const struct config *c)
{
	return c->n_tiers - (size_t)__builtin_popcount(config_cgroup_tiers(c, ""));
}

bool config_cgroup_first(const struct config *c, size_t i)
{
	return *c->tiers[i].cgroup && (config_cgroup_tiers(c, c->tiers[i].cgroup) & ((1u << i) - 1)) == 0;
}

COLD_TEXT void config_init(struct config *c)
{
	memset(c, 0, sizeof(*c));
	strcpy(c->pressure, CONFIG_DEFAULT_PRESSURE);
	strcpy(c->scope, CONFIG_DEFAULT_SCOPE);
	c->kill_timeout_us = CONFIG_DEFAULT_KILL_TIMEOUT_US;
	c->pre_kill_timeout_us = CONFIG_DEFAULT_PRE_KILL_TIMEOUT_US;
	c->idle_poll_us = CONFIG_DEFAULT_IDLE_POLL_US;
	c->max_groups = CONFIG_DEFAULT_MAX_GROUPS;
	c->settle_us = CONFIG_DEFAULT_SETTLE_US;
	c->trusted_uid_max = CONFIG_DEFAULT_TRUSTED_UID_MAX;
	c->systemd_oom_preferences = true;
	c->hold_recovery = true;
	c->culprit_growth = CONFIG_DEFAULT_CULPRIT_GROWTH;
	c->victim_order = CONFIG_DEFAULT_VICTIM_ORDER;
	strcpy(c->control_socket, CONFIG_DEFAULT_CONTROL_SOCKET);
	c->lmkd_properties = CONFIG_DEFAULT_PROPS;
}

/* A parser with a fresh config for path (its main file); 0 or -ENOMEM with err set.
 * The config it fills (37 kB, all written by config_init) gets a mapping of
 * its own, unmapped by parser_end: from malloc it would leave 37 kB of
 * written free heap behind, resident (and locked once the daemon locks
 * itself) though nothing uses it. */
COLD_TEXT static int parser_new(struct parser **pp, const char *path, struct config_error *err)
{
	struct parser *p = calloc(1, sizeof(*p));

	err->msg[0] = '\0';
	if (p) {
		void *m = mmap(NULL, sizeof(*p->c), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		p->c = m == MAP_FAILED ? NULL : m;
	}
	if (!p || !p->c) {
		free(p);
		snprintf(err->msg, sizeof(err->msg), "%s: out of memory", path);
		return -ENOMEM;
	}
	config_init(p->c);
	snprintf(p->c->path, sizeof(p->c->path), "%s", path);
	p->err = err;
	*pp = p;
	return 0;
}

/* Parses text as file number file of p->c: 0, or -EINVAL/-ENOMEM with the error set. */
COLD_TEXT static int parse_text(struct parser *p, unsigned file, const char *text)
{
	int r;

	p->file = file;
	p->pos = text;
	p->line = 0;
	p->long_line = 0;
	p->mid_line = false;
	p->sec = SEC_NONE;
	p->tier = NULL;
	p->daemon_line = 0;
	memset(p->tier_line, 0, sizeof(p->tier_line));
	r = ini_parse_stream(reader, p, handler, p);
	if (r > 0 && (!p->err_line || (unsigned)r < p->err_line)) {
		p->err_line = 0;
		p->err_nomem = false;
		config_fail(p, (unsigned)r, "syntax error (expected [section], key = value, or a ; comment)");
	} else if (r < 0 && !p->err_line) {
		config_fail(p, p->line, "cannot parse (inih error %d)", r);
	}
	return p->err_line ? (p->err_nomem ? -ENOMEM : -EINVAL) : 0;
}

/* After the last file (r: how reading went): the checks that need all of
 * it, then c takes the new config if all went well. Frees p. */
COLD_TEXT static int parser_end(struct parser *p, struct config *c, int r)
{
	if (r == 0 && p->c->n_tiers == 0)
		config_fail(p, p->line, "no [tier NAME] section: at least one tier is needed");
	if (r == 0 && !p->err_line)
		config_resolve_hook_user(p);
	if (r == 0 && !p->err_line)
		config_check_tiers(p);
	if (r == 0 && p->err_line)
		r = p->err_nomem ? -ENOMEM : -EINVAL;
	/* lmkd's properties, last: they win over the files (README, Android) */
	if (r == 0 && p->c->lmkd_properties != CONFIG_PROPS_OFF)
		r = lmkprops_load(p->c, p->err);
	if (r == 0)
		*c = *p->c;
	munmap(p->c, sizeof(*p->c));
	free(p);
	return r;
}

COLD_TEXT int config_parse_string(struct config *c, const char *text, const char *filename, struct config_error *err)
{
	struct parser *p;
	int r = parser_new(&p, filename, err);

	if (r < 0)
		return r;
	return parser_end(p, c, parse_text(p, 0, text));
}

/* The text of a config file into *text (to free); 0, or -errno with err set. */
static int read_text(const char *path, char **text, struct config_error *err)
{
	size_t len = 0;
	int r = read_regular_file(path, CONFIG_FILE_MAX, text, &len);

	if (r == -EISDIR || r == -EINVAL) {
		snprintf(err->msg, sizeof(err->msg), "%s: cannot read config: not a regular file", path);
		return r;
	}
	if (r == -EFBIG) {
		snprintf(err->msg, sizeof(err->msg), "%s: cannot read config: larger than %d bytes", path, CONFIG_FILE_MAX);
		return r;
	}
	if (r < 0) {
		snprintf(err->msg, sizeof(err->msg), "%s: cannot read config: %s", path, strerror(-r));
		return r;
	}
	if (strlen(*text) != len) {
		snprintf(err->msg, sizeof(err->msg), "%s:%u: the file contains a NUL byte", path,
			 lines_number(*text, *text + strlen(*text)));
		free(*text);
		return -EINVAL;
	}
	return 0;
}

/* Reads and parses file number file of p->c; 0 or -errno with the error set. */
COLD_TEXT static int parse_file(struct parser *p, unsigned file)
{
	char path[CONFIG_WHERE_MAX];
	char *text = NULL;
	int r = read_text(config_file_name(p->c, file, path, sizeof(path)), &text, p->err);

	if (r < 0)
		return r;
	r = parse_text(p, file, text);
	free(text);
	return r;
}

/* c->path and c->vendor_dir hold a path, and "<path>.d" is made from it */
static bool path_too_long(const char *path)
{
	return path && strlen(path) + sizeof(".d") > CONFIG_PATH_MAX;
}

COLD_TEXT int config_load_file(struct config *c, const char *path, const char *vendor_dir, struct config_error *err)
{
	struct parser *p;
	size_t i;
	int r;

	err->msg[0] = '\0';
	if (path_too_long(path) || path_too_long(vendor_dir)) {
		const char *bad = path_too_long(path) ? path : vendor_dir;

		snprintf(err->msg, sizeof(err->msg), "%.64s...: cannot read config: a path of %zu bytes is too long "
			 "(at most %d)", bad, strlen(bad), CONFIG_PATH_MAX - 3);
		return -ENAMETOOLONG;
	}
	r = parser_new(&p, path, err);
	if (r < 0)
		return r;
	snprintf(p->c->vendor_dir, sizeof(p->c->vendor_dir), "%s", vendor_dir ? vendor_dir : "");
	r = parse_file(p, 0);
	if (r == 0)
		r = config_list_dropins(p->c, err);
	for (i = 0; r == 0 && i < p->c->n_dropins; i++)
		r = parse_file(p, (unsigned)i + 1);
	return parser_end(p, c, r);
}
