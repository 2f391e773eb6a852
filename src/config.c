/* config: defaults, the inih-driven parser and the typed value parsers.
 *
 * inih (as packaged) does not report line numbers to the handler, does not call
 * it for empty sections, and silently joins indented lines to the previous
 * value. So the text is fed to ini_parse_stream() through our own line reader,
 * which numbers the lines, sees every section header (empty or not) and notes
 * each line's key, so that every error carries "file:line" and nothing is
 * accepted by accident. The first error wins; parsing never stops half-way
 * with a half-filled config visible to the caller. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <ini.h>

#include "config.h"
#include "fileio.h"

enum section_kind {
	SEC_NONE,
	SEC_DAEMON,
	SEC_TIER,
	SEC_INVALID, /* an error was already reported for this section */
};

struct parser;

typedef int (*value_parser)(struct parser *p, const char *value, char *why, size_t whylen);

struct key_def {
	const char *name;
	value_parser parse;
};

#define KEYS_MAX 8

struct parser {
	struct config *c;
	const char *filename;
	struct config_error *err;
	unsigned err_line;

	/* line reader */
	const char *pos;
	unsigned line;
	bool mid_line; /* the last chunk returned did not end the line */
	char line_key[128];

	/* current section */
	enum section_kind sec;
	struct tier_config *tier;
	unsigned daemon_line;
	unsigned seen[CONFIG_TIERS_MAX + 1][KEYS_MAX]; /* line a key was set on; [0] = daemon */
};

__attribute__((format(printf, 3, 4))) static void fail(struct parser *p, unsigned line, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (p->err_line)
		return;
	p->err_line = line ? line : 1;
	n = snprintf(p->err->msg, sizeof(p->err->msg), "%s:%u: ", p->filename, p->err_line);
	if (n < 0 || (size_t)n >= sizeof(p->err->msg))
		return;
	va_start(ap, fmt);
	vsnprintf(p->err->msg + n, sizeof(p->err->msg) - (size_t)n, fmt, ap);
	va_end(ap);
}

/* ------------------------------------------------------------------ value parsers */

static const char *skip_ws(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

/* Parses "<digits>[.<digits>]" scaled by 10^scale_digits into an integer,
 * e.g. ("1.5", 3) -> 1500. Rejects precision finer than the scale. */
static int parse_fixed(const char **sp, unsigned scale_digits, uint64_t *out)
{
	const char *s = *sp;
	uint64_t v = 0;
	unsigned frac = 0;
	bool any = false;

	while (isdigit((unsigned char)*s)) {
		uint64_t d = (uint64_t)(*s++ - '0');

		if (v > (UINT64_MAX / 10 - d))
			return -ERANGE;
		v = v * 10 + d;
		any = true;
	}
	if (*s == '.') {
		s++;
		if (!isdigit((unsigned char)*s))
			return -EINVAL;
		while (isdigit((unsigned char)*s)) {
			if (frac == scale_digits) {
				if (*s != '0')
					return -EDOM;
			} else {
				if (v > UINT64_MAX / 10 - 9)
					return -ERANGE;
				v = v * 10 + (uint64_t)(*s - '0');
				frac++;
			}
			s++;
		}
		any = true;
	}
	if (!any)
		return -EINVAL;
	for (; frac < scale_digits; frac++) {
		if (v > UINT64_MAX / 10)
			return -ERANGE;
		v *= 10;
	}
	*out = v;
	*sp = s;
	return 0;
}

int config_parse_duration(const char *s, bool bare_is_us, uint64_t *out, char *why, size_t whylen)
{
	static const struct {
		const char *unit;
		uint64_t us;
		unsigned digits; /* decimals allowed so the result stays whole microseconds */
	} units[] = { { "us", 1, 0 }, { "ms", 1000, 3 }, { "s", 1000000, 6 } };
	const char *num = s, *unit;
	uint64_t fixed;
	size_t i;
	int r;

	/* find where the number ends to pick the unit */
	for (unit = s; isdigit((unsigned char)*unit) || *unit == '.'; unit++)
		;
	if (unit == s) {
		snprintf(why, whylen, "\"%s\" is not a duration (expected e.g. 100ms, 2s, 500000us)", s);
		return -EINVAL;
	}
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (strcmp(unit, units[i].unit) == 0)
			break;
	if (i == sizeof(units) / sizeof(units[0])) {
		if (*unit == '\0' && bare_is_us) {
			i = 0;
		} else if (*unit == '\0') {
			snprintf(why, whylen, "\"%s\" has no unit (use us, ms or s)", s);
			return -EINVAL;
		} else {
			snprintf(why, whylen, "\"%s\" has an unknown unit \"%s\" (use us, ms or s)", s, unit);
			return -EINVAL;
		}
	}
	r = parse_fixed(&num, units[i].digits, &fixed);
	if (r == -EDOM) {
		snprintf(why, whylen, "\"%s\" is finer than a microsecond", s);
		return -EINVAL;
	}
	if (r < 0 || num != unit) {
		snprintf(why, whylen, "\"%s\" is not a valid number", s);
		return -EINVAL;
	}
	/* fixed is in units of (unit / 10^digits) == microseconds */
	if (units[i].digits == 0 && fixed > UINT64_MAX / units[i].us) {
		snprintf(why, whylen, "\"%s\" is too large", s);
		return -ERANGE;
	}
	*out = units[i].digits == 0 ? fixed * units[i].us : fixed;
	if (*out > 3600ULL * 1000000ULL) {
		snprintf(why, whylen, "\"%s\" is too large", s);
		return -ERANGE;
	}
	return 0;
}

const char *config_format_duration(char *buf, size_t size, uint64_t us)
{
	if (us != 0 && us % 1000000 == 0)
		snprintf(buf, size, "%" PRIu64 "s", us / 1000000);
	else if (us != 0 && us % 1000 == 0)
		snprintf(buf, size, "%" PRIu64 "ms", us / 1000);
	else
		snprintf(buf, size, "%" PRIu64 "us", us);
	return buf;
}

int config_parse_trigger(const char *s, struct tier_config *t, char *why, size_t whylen)
{
	char tok[3][64], wbuf[32], sbuf[32];
	const char *p = skip_ws(s);
	enum psi_state state;
	uint64_t stall, window;
	size_t n = 0, len;

	while (*p) {
		len = strcspn(p, " \t");
		if (n == 3) {
			snprintf(why, whylen, "trigger \"%s\" has extra words (expected \"some|full STALL WINDOW\")", s);
			return -EINVAL;
		}
		if (len >= sizeof(tok[0])) {
			snprintf(why, whylen, "trigger \"%s\" has a word that is too long", s);
			return -EINVAL;
		}
		memcpy(tok[n], p, len);
		tok[n++][len] = '\0';
		p = skip_ws(p + len);
	}
	if (n != 3) {
		snprintf(why, whylen, "trigger \"%s\" must be \"some|full STALL WINDOW\", e.g. \"some 70ms 1s\"", s);
		return -EINVAL;
	}
	if (strcmp(tok[0], "some") == 0)
		state = PSI_SOME;
	else if (strcmp(tok[0], "full") == 0)
		state = PSI_FULL;
	else {
		snprintf(why, whylen, "trigger state \"%s\" must be \"some\" or \"full\"", tok[0]);
		return -EINVAL;
	}
	if (config_parse_duration(tok[2], true, &window, why, whylen) < 0)
		return -EINVAL;
	if (window < PSI_WINDOW_MIN_US || window > PSI_WINDOW_MAX_US) {
		snprintf(why, whylen, "trigger window %s is outside 500ms..10s",
			 config_format_duration(wbuf, sizeof(wbuf), window));
		return -EINVAL;
	}
	len = strlen(tok[1]);
	if (len > 0 && tok[1][len - 1] == '%') {
		const char *q = tok[1];
		uint64_t pct; /* hundredths of a percent */

		tok[1][len - 1] = '\0';
		if (parse_fixed(&q, 2, &pct) < 0 || *q != '\0' || pct > 10000) {
			snprintf(why, whylen, "trigger stall \"%s%%\" is not a percentage between 0%% and 100%%", tok[1]);
			return -EINVAL;
		}
		stall = window * pct / 10000;
	} else if (config_parse_duration(tok[1], true, &stall, why, whylen) < 0) {
		return -EINVAL;
	}
	if (stall == 0) {
		snprintf(why, whylen, "trigger stall must be greater than zero");
		return -EINVAL;
	}
	if (stall > window) {
		snprintf(why, whylen, "trigger stall %s is longer than its window %s",
			 config_format_duration(sbuf, sizeof(sbuf), stall),
			 config_format_duration(wbuf, sizeof(wbuf), window));
		return -EINVAL;
	}
	t->state = state;
	t->stall_us = stall;
	t->window_us = window;
	return 0;
}

static int parse_int_range(const char *s, long lo, long hi, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (end == s || *end != '\0' || errno == ERANGE)
		return -EINVAL;
	if (v < lo || v > hi)
		return -ERANGE;
	*out = v;
	return 0;
}

static int parse_bool(const char *s, bool *out)
{
	static const char *const yes[] = { "true", "yes", "on", "1" };
	static const char *const no[] = { "false", "no", "off", "0" };
	size_t i;

	for (i = 0; i < 4; i++) {
		if (strcasecmp(s, yes[i]) == 0) {
			*out = true;
			return 0;
		}
		if (strcasecmp(s, no[i]) == 0) {
			*out = false;
			return 0;
		}
	}
	return -EINVAL;
}

/* ------------------------------------------------------------------ keys */

static int key_pressure(struct parser *p, const char *v, char *why, size_t whylen)
{
	if (v[0] != '/') {
		snprintf(why, whylen, "pressure must be an absolute path, e.g. /proc/pressure/memory");
		return -EINVAL;
	}
	if (strlen(v) >= sizeof(p->c->pressure)) {
		snprintf(why, whylen, "pressure path is too long");
		return -EINVAL;
	}
	strcpy(p->c->pressure, v);
	return 0;
}

/* Normalizes a cgroup2 path: one '/' between components, none at the end. */
static int normalize_cgroup_path(const char *v, char *out, size_t size, char *why, size_t whylen)
{
	size_t o = 0;
	const char *s = v;

	if (*s != '/') {
		snprintf(why, whylen, "scope must be a cgroup2 path starting with '/', e.g. / or /user.slice");
		return -EINVAL;
	}
	while (*s) {
		size_t len;

		while (*s == '/')
			s++;
		len = strcspn(s, "/");
		if (len == 0)
			break;
		if ((len == 1 && s[0] == '.') || (len == 2 && s[0] == '.' && s[1] == '.')) {
			snprintf(why, whylen, "scope must not contain '.' or '..' components");
			return -EINVAL;
		}
		if (o + 1 + len + 1 > size) {
			snprintf(why, whylen, "scope path is too long");
			return -EINVAL;
		}
		out[o++] = '/';
		memcpy(out + o, s, len);
		o += len;
		s += len;
	}
	if (o == 0)
		out[o++] = '/';
	out[o] = '\0';
	return 0;
}

static int key_scope(struct parser *p, const char *v, char *why, size_t whylen)
{
	return normalize_cgroup_path(v, p->c->scope, sizeof(p->c->scope), why, whylen);
}

static int key_kill_timeout(struct parser *p, const char *v, char *why, size_t whylen)
{
	uint64_t us;

	if (config_parse_duration(v, false, &us, why, whylen) < 0)
		return -EINVAL;
	if (us < CONFIG_KILL_TIMEOUT_MIN_US || us > CONFIG_KILL_TIMEOUT_MAX_US) {
		snprintf(why, whylen, "kill_timeout must be between 10ms and 60s");
		return -EINVAL;
	}
	p->c->kill_timeout_us = us;
	return 0;
}

static int key_idle_poll(struct parser *p, const char *v, char *why, size_t whylen)
{
	uint64_t us;

	if (strcmp(v, "off") == 0) {
		p->c->idle_poll_us = 0;
		return 0;
	}
	if (config_parse_duration(v, false, &us, why, whylen) < 0)
		return -EINVAL;
	if (us < CONFIG_IDLE_POLL_MIN_US || us > CONFIG_IDLE_POLL_MAX_US) {
		snprintf(why, whylen, "idle_poll_interval must be off or between 100ms and 60s");
		return -EINVAL;
	}
	p->c->idle_poll_us = us;
	return 0;
}

static int key_dry_run(struct parser *p, const char *v, char *why, size_t whylen)
{
	if (parse_bool(v, &p->c->dry_run) < 0) {
		snprintf(why, whylen, "dry_run must be true or false, not \"%s\"", v);
		return -EINVAL;
	}
	return 0;
}

static int key_trigger(struct parser *p, const char *v, char *why, size_t whylen)
{
	return config_parse_trigger(v, p->tier, why, whylen);
}

static int key_min_adj(struct parser *p, const char *v, char *why, size_t whylen)
{
	long adj;
	int r = parse_int_range(v, -1000, 1000, &adj);

	if (r < 0) {
		snprintf(why, whylen, "min_oom_score_adj must be an integer between -1000 and 1000, not \"%s\"", v);
		return r;
	}
	p->tier->min_oom_score_adj = (int)adj;
	return 0;
}

static const struct key_def daemon_keys[] = {
	{ "pressure", key_pressure },
	{ "scope", key_scope },
	{ "kill_timeout", key_kill_timeout },
	{ "idle_poll_interval", key_idle_poll },
	{ "dry_run", key_dry_run },
	{ NULL, NULL },
};

enum { TIER_KEY_TRIGGER, TIER_KEY_MIN_ADJ };

static const struct key_def tier_keys[] = {
	[TIER_KEY_TRIGGER] = { "trigger", key_trigger },
	[TIER_KEY_MIN_ADJ] = { "min_oom_score_adj", key_min_adj },
	{ NULL, NULL },
};

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

static void begin_section(struct parser *p, const char *name)
{
	struct config *c = p->c;
	size_t i;

	p->tier = NULL;
	p->sec = SEC_INVALID;
	if (strcmp(name, "daemon") == 0) {
		if (p->daemon_line) {
			fail(p, p->line, "duplicate section [daemon] (first at line %u)", p->daemon_line);
			return;
		}
		p->daemon_line = p->line;
		p->sec = SEC_DAEMON;
		return;
	}
	if (strncmp(name, "tier", 4) != 0 || (name[4] != '\0' && name[4] != ' ' && name[4] != '\t')) {
		fail(p, p->line, "unknown section [%s] (expected [daemon] or [tier NAME])", name);
		return;
	}
	name = skip_ws(name + 4);
	if (!*name) {
		fail(p, p->line, "a tier section needs a name: [tier NAME]");
		return;
	}
	if (!valid_tier_name(name)) {
		fail(p, p->line, "bad tier name \"%s\" (1-%d characters of A-Z a-z 0-9 - _)", name, CONFIG_NAME_MAX);
		return;
	}
	for (i = 0; i < c->n_tiers; i++) {
		if (strcmp(c->tiers[i].name, name) == 0) {
			fail(p, p->line, "duplicate tier \"%s\" (first at line %u)", name, c->tiers[i].line);
			return;
		}
	}
	if (c->n_tiers == CONFIG_TIERS_MAX) {
		fail(p, p->line, "too many tiers (at most %d)", CONFIG_TIERS_MAX);
		return;
	}
	p->tier = &c->tiers[c->n_tiers++];
	memset(p->tier, 0, sizeof(*p->tier));
	strcpy(p->tier->name, name);
	p->tier->line = p->line;
	p->sec = SEC_TIER;
}

/* Looks at a fresh line as inih will see it: section headers start sections
 * here (so empty ones count), key lines record their key name. */
static void scan_line(struct parser *p, const char *line, size_t len)
{
	char buf[256];
	const char *s, *end;
	size_t n;

	p->line_key[0] = '\0';
	if (p->line == 1 && len >= 3 && memcmp(line, "\xEF\xBB\xBF", 3) == 0) {
		line += 3;
		len -= 3;
	}
	n = len < sizeof(buf) - 1 ? len : sizeof(buf) - 1;
	memcpy(buf, line, n);
	buf[n] = '\0';
	buf[strcspn(buf, "\r\n")] = '\0';
	s = skip_ws(buf);
	if (*s == '[') {
		end = strchr(s, ']');
		if (!end)
			return; /* inih reports the syntax error */
		char name[sizeof(buf)];
		const char *a = skip_ws(s + 1);
		size_t nl = (size_t)(end - a);

		while (nl > 0 && (a[nl - 1] == ' ' || a[nl - 1] == '\t'))
			nl--;
		memcpy(name, a, nl);
		name[nl] = '\0';
		begin_section(p, name);
		return;
	}
	if (*s == ';' || *s == '#' || *s == '\0')
		return;
	n = strcspn(s, "=:");
	while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	if (n >= sizeof(p->line_key))
		n = sizeof(p->line_key) - 1;
	memcpy(p->line_key, s, n);
	p->line_key[n] = '\0';
}

static char *reader(char *str, int num, void *stream)
{
	struct parser *p = stream;
	size_t max = (size_t)num - 1, len;
	const char *nl;

	if (!*p->pos)
		return NULL;
	nl = strchr(p->pos, '\n');
	len = nl ? (size_t)(nl - p->pos) + 1 : strlen(p->pos);
	if (!p->mid_line) {
		p->line++;
		scan_line(p, p->pos, len);
	}
	if (len > max) {
		if (!p->mid_line)
			fail(p, p->line, "line is longer than %d characters", num - 2);
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

static int handler(void *user, const char *section, const char *name, const char *value)
{
	struct parser *p = user;
	const struct key_def *keys;
	unsigned *seen;
	char why[256];
	size_t i;

	(void)section;
	if (p->err_line)
		return 0;
	if (strcmp(name, p->line_key) != 0) {
		fail(p, p->line, "indented line continues the value of \"%s\"; multi-line values are not supported", name);
		return 0;
	}
	switch (p->sec) {
	case SEC_NONE:
		fail(p, p->line, "key \"%s\" is outside any section ([daemon] or [tier NAME])", name);
		return 0;
	case SEC_INVALID:
		return 0;
	case SEC_DAEMON:
		keys = daemon_keys;
		seen = p->seen[0];
		break;
	case SEC_TIER:
		keys = tier_keys;
		seen = p->seen[1 + (p->tier - p->c->tiers)];
		break;
	default:
		return 0;
	}
	for (i = 0; keys[i].name; i++)
		if (strcmp(keys[i].name, name) == 0)
			break;
	if (!keys[i].name) {
		fail(p, p->line, "unknown key \"%s\" in %s", name, p->sec == SEC_DAEMON ? "[daemon]" : "a [tier] section");
		return 0;
	}
	if (seen[i]) {
		fail(p, p->line, "duplicate key \"%s\" (first set at line %u)", name, seen[i]);
		return 0;
	}
	seen[i] = p->line;
	why[0] = '\0';
	if (keys[i].parse(p, value, why, sizeof(why)) < 0) {
		if (strncmp(why, name, strlen(name)) == 0)
			fail(p, p->line, "%s", why);
		else
			fail(p, p->line, "%s: %s", name, why);
		return 0;
	}
	return 1;
}

void config_init(struct config *c)
{
	memset(c, 0, sizeof(*c));
	strcpy(c->pressure, CONFIG_DEFAULT_PRESSURE);
	strcpy(c->scope, CONFIG_DEFAULT_SCOPE);
	c->kill_timeout_us = CONFIG_DEFAULT_KILL_TIMEOUT_US;
	c->idle_poll_us = CONFIG_DEFAULT_IDLE_POLL_US;
}

int config_parse_string(struct config *c, const char *text, const char *filename, struct config_error *err)
{
	struct parser *p;
	struct config *tmp;
	size_t i;
	int r;

	err->msg[0] = '\0';
	p = calloc(1, sizeof(*p));
	tmp = malloc(sizeof(*tmp));
	if (!p || !tmp) {
		free(p);
		free(tmp);
		snprintf(err->msg, sizeof(err->msg), "%s: out of memory", filename);
		return -ENOMEM;
	}
	config_init(tmp);
	snprintf(tmp->path, sizeof(tmp->path), "%s", filename);
	p->c = tmp;
	p->filename = filename;
	p->err = err;
	p->pos = text;

	r = ini_parse_stream(reader, p, handler, p);
	if (r > 0 && (!p->err_line || (unsigned)r < p->err_line)) {
		p->err_line = 0;
		fail(p, (unsigned)r, "syntax error (expected [section], key = value, or a ; comment)");
	} else if (r < 0 && !p->err_line) {
		fail(p, p->line, "cannot parse (inih error %d)", r);
	}
	if (!p->err_line && tmp->n_tiers == 0)
		fail(p, p->line, "no [tier NAME] section: at least one tier is needed");
	for (i = 0; !p->err_line && i < tmp->n_tiers; i++) {
		const struct tier_config *t = &tmp->tiers[i];

		if (!p->seen[1 + i][TIER_KEY_TRIGGER])
			fail(p, t->line, "tier \"%s\" has no trigger (e.g. trigger = some 70ms 1s)", t->name);
		else if (!p->seen[1 + i][TIER_KEY_MIN_ADJ])
			fail(p, t->line, "tier \"%s\" has no min_oom_score_adj (e.g. min_oom_score_adj = 800)", t->name);
	}
	r = p->err_line ? -EINVAL : 0;
	if (r == 0)
		*c = *tmp;
	free(p);
	free(tmp);
	return r;
}

int config_load_file(struct config *c, const char *path, struct config_error *err)
{
	char *text = NULL;
	size_t len = 0;
	int r;

	err->msg[0] = '\0';
	r = read_regular_file(path, CONFIG_FILE_MAX, &text, &len);
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
	if (strlen(text) != len) {
		unsigned line = 1;
		const char *s;

		for (s = text; *s; s++)
			line += *s == '\n';
		snprintf(err->msg, sizeof(err->msg), "%s:%u: the file contains a NUL byte", path, line);
		free(text);
		return -EINVAL;
	}
	r = config_parse_string(c, text, path, err);
	free(text);
	return r;
}

void config_print(const struct config *c, FILE *f)
{
	char a[32], b[32];
	size_t i;

	fprintf(f, "config = %s\n", c->path);
	fprintf(f, "pressure = %s\n", c->pressure);
	fprintf(f, "scope = %s\n", c->scope);
	fprintf(f, "kill_timeout = %s\n", config_format_duration(a, sizeof(a), c->kill_timeout_us));
	fprintf(f, "idle_poll_interval = %s\n",
		c->idle_poll_us ? config_format_duration(a, sizeof(a), c->idle_poll_us) : "off");
	fprintf(f, "dry_run = %s\n", c->dry_run ? "true" : "false");
	for (i = 0; i < c->n_tiers; i++) {
		const struct tier_config *t = &c->tiers[i];

		fprintf(f, "tier %s: trigger = %s %s %s (kernel form \"%s %" PRIu64 " %" PRIu64 "\"), min_oom_score_adj = %d\n",
			t->name, psi_state_name(t->state), config_format_duration(a, sizeof(a), t->stall_us),
			config_format_duration(b, sizeof(b), t->window_us), psi_state_name(t->state), t->stall_us,
			t->window_us, t->min_oom_score_adj);
	}
}
