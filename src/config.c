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
#include <grp.h>
#include <inttypes.h>
#include <limits.h>
#include <pwd.h>
#include <regex.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <ini.h>

#include "config.h"
#include "warn.h"
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

#define KEYS_MAX 32

struct parser {
	struct config *c;
	const char *filename;
	struct config_error *err;
	unsigned err_line;
	bool err_nomem; /* the error at err_line is running out of memory: -ENOMEM, not -EINVAL */

	/* line reader */
	const char *pos;
	unsigned line;
	bool mid_line; /* the last chunk returned did not end the line */
	char line_key[128];

	/* current section */
	enum section_kind sec;
	struct tier_config *tier;
	unsigned daemon_line;
	unsigned on_kill_line, on_kill_user_line;
	char on_kill_user[CONFIG_USER_MAX]; /* as written */
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

int config_parse_amount(const char *s, bool allow_percent, struct mem_amount *out, char *why, size_t whylen)
{
	static const struct {
		const char *suffix;
		uint64_t mult;
	} units[] = {
		{ "B", 1 },	      { "K", 1ULL << 10 },   { "KB", 1ULL << 10 }, { "KiB", 1ULL << 10 },
		{ "M", 1ULL << 20 },  { "MB", 1ULL << 20 },  { "MiB", 1ULL << 20 }, { "G", 1ULL << 30 },
		{ "GB", 1ULL << 30 }, { "GiB", 1ULL << 30 }, { "T", 1ULL << 40 },  { "TB", 1ULL << 40 },
		{ "TiB", 1ULL << 40 },
	};
	const char *p = s;
	uint64_t v;
	size_t i;

	if (allow_percent && *s && s[strlen(s) - 1] == '%') {
		if (parse_fixed(&p, 2, &v) < 0 || *p != '%' || p[1] != '\0' || v == 0 || v > 10000) {
			snprintf(why, whylen, "\"%s\" is not a percentage between 0.01%% and 100%%", s);
			return -EINVAL;
		}
		*out = (struct mem_amount){ .set = true, .percent = true, .value = v };
		return 0;
	}
	if (parse_fixed(&p, 0, &v) < 0) {
		snprintf(why, whylen, "\"%s\" is not a memory size (e.g. 512M, 2G%s)", s, allow_percent ? ", 5%" : "");
		return -EINVAL;
	}
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (strcmp(p, units[i].suffix) == 0)
			break;
	if (i == sizeof(units) / sizeof(units[0])) {
		snprintf(why, whylen, "\"%s\" needs a unit: B, K, M, G or T (powers of 1024)%s", s,
			 allow_percent ? ", or %" : "");
		return -EINVAL;
	}
	if (v > UINT64_MAX / units[i].mult) {
		snprintf(why, whylen, "\"%s\" is too large", s);
		return -ERANGE;
	}
	*out = (struct mem_amount){ .set = true, .percent = false, .value = v * units[i].mult };
	return 0;
}

const char *config_format_amount(char *buf, size_t size, const struct mem_amount *a)
{
	if (!a->set)
		snprintf(buf, size, "unset");
	else if (a->percent)
		snprintf(buf, size, "%" PRIu64 ".%02" PRIu64 "%%", a->value / 100, a->value % 100);
	else if (a->value % (1ULL << 30) == 0 && a->value)
		snprintf(buf, size, "%" PRIu64 "G", a->value >> 30);
	else if (a->value % (1ULL << 20) == 0 && a->value)
		snprintf(buf, size, "%" PRIu64 "M", a->value >> 20);
	else if (a->value % (1ULL << 10) == 0 && a->value)
		snprintf(buf, size, "%" PRIu64 "K", a->value >> 10);
	else
		snprintf(buf, size, "%" PRIu64 "B", a->value);
	return buf;
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
	p->c->pressure_line = p->line;
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
	int r = config_parse_trigger(v, p->tier, why, whylen);

	if (r == 0)
		p->tier->has_trigger = true;
	return r;
}

static int key_kill_signal(struct parser *p, const char *v, char *why, size_t whylen)
{
	if (strcmp(v, "SIGKILL") == 0 || strcmp(v, "KILL") == 0)
		p->tier->kill_signal = SIGKILL;
	else if (strcmp(v, "SIGTERM") == 0 || strcmp(v, "TERM") == 0)
		p->tier->kill_signal = SIGTERM;
	else {
		snprintf(why, whylen, "kill_signal must be SIGKILL or SIGTERM, not \"%s\"", v);
		return -EINVAL;
	}
	return 0;
}

static int key_term_timeout(struct parser *p, const char *v, char *why, size_t whylen)
{
	uint64_t us;

	if (config_parse_duration(v, false, &us, why, whylen) < 0)
		return -EINVAL;
	if (us < 10000 || us > 60000000ULL) {
		snprintf(why, whylen, "term_timeout must be between 10ms and 60s");
		return -EINVAL;
	}
	p->tier->term_timeout_us = us;
	return 0;
}

static int key_kill_cgroup(struct parser *p, const char *v, char *why, size_t whylen)
{
	if (parse_bool(v, &p->tier->kill_cgroup) < 0) {
		snprintf(why, whylen, "kill_cgroup must be true or false, not \"%s\"", v);
		return -EINVAL;
	}
	return 0;
}

static int key_action(struct parser *p, const char *v, char *why, size_t whylen)
{
	if (strcmp(v, "kill") != 0 && strcmp(v, "warn") != 0) {
		snprintf(why, whylen, "action must be kill or warn, not \"%s\"", v);
		return -EINVAL;
	}
	p->tier->warn = strcmp(v, "warn") == 0;
	return 0;
}

static int key_warn_level(struct parser *p, const char *v, char *why, size_t whylen)
{
	if (warn_parse_level(v, &p->tier->warn_level) < 0) {
		snprintf(why, whylen, "warn_level must be low, medium or critical (50, 100, 255), not \"%s\"", v);
		return -EINVAL;
	}
	return 0;
}

static int key_min_available(struct parser *p, const char *v, char *why, size_t whylen)
{
	return config_parse_amount(v, true, &p->tier->min_available, why, whylen);
}

static int key_low_available(struct parser *p, const char *v, char *why, size_t whylen)
{
	return config_parse_amount(v, true, &p->tier->low_available, why, whylen);
}

/* low_swap: an amount or a percentage of the swap; also 0 (swap full) */
static int key_low_swap(struct parser *p, const char *v, char *why, size_t whylen)
{
	if (strcmp(v, "0") == 0 || strcmp(v, "0%") == 0) {
		p->tier->low_swap = (struct mem_amount){ .set = true, .percent = false, .value = 0 };
		return 0;
	}
	return config_parse_amount(v, true, &p->tier->low_swap, why, whylen);
}

static int key_min_events(struct parser *p, const char *v, char *why, size_t whylen)
{
	long n;

	if (parse_int_range(v, 1, 100, &n) < 0) {
		snprintf(why, whylen, "min_events must be an integer between 1 and 100, not \"%s\"", v);
		return -EINVAL;
	}
	p->tier->min_events = (unsigned)n;
	return 0;
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

/* glibc's regcomp() can take gigabytes or minutes on a short pattern: it
 * copies the operand of every repetition ("a+" becomes "aa*", "a{3}" "aaa"),
 * so stacked or nested repetitions grow the compiled form exponentially ("a"
 * and 20 '+': 700 MB), and chains of optional parts make its epsilon closures
 * explode ("0", 36 '?' and 5 '+': over a minute). Found by
 * tests/fuzz/fuzz-config; a daemon that reloads such a file while memory is
 * short would stall or die. And back-references make regexec() backtrack:
 * "(.*)(.*)(.*)\3\2\1c" takes minutes on a 500-character command line,
 * in every scan. So, before regcomp(), a pattern must have no back-reference,
 * at most REGEX_DEPTH_MAX nested groups, no repetition of a repetition
 * ("a+*", "a??", "a{2}{3}": undefined in POSIX anyway), and at most
 * REGEX_PARTS_MAX parts once repetitions are expanded. Under these limits
 * every pattern tried compiles in a few MB and milliseconds. Other mistakes
 * are left to regcomp() to report. */
#define REGEX_DEPTH_MAX 8
#define REGEX_PARTS_MAX 1024
#define REGEX_GROUP_PARTS 4

static uint64_t regex_cap(uint64_t v)
{
	return v > REGEX_PARTS_MAX ? REGEX_PARTS_MAX + 1 : v;
}

/* Skips a bracket expression; s is just past its '['. NULL if unterminated. */
static const char *regex_skip_bracket(const char *s)
{
	if (*s == '^')
		s++;
	if (*s == ']')
		s++;
	while (*s && *s != ']') {
		if (*s == '[' && (s[1] == ':' || s[1] == '.' || s[1] == '=')) {
			const char *end = strchr(s + 2, s[1]);

			while (end && end[1] != ']')
				end = strchr(end + 1, s[1]);
			if (!end)
				return NULL;
			s = end + 2;
		} else {
			s++;
		}
	}
	return *s ? s + 1 : NULL;
}

/* Parses an interval "{m}", "{m,}", "{m,n}" or "{,n}" at s (just past '{'):
 * the number of copies regcomp() makes, and where it ends. 0 if s is not one. */
static uint64_t regex_interval(const char *s, const char **end_out)
{
	unsigned long m = 0, n;
	char *end = (char *)s;

	if (!isdigit((unsigned char)*s) && *s != ',')
		return 0;
	if (isdigit((unsigned char)*s))
		m = strtoul(s, &end, 10);
	n = m;
	if (*end == ',' && isdigit((unsigned char)end[1]))
		n = strtoul(end + 1, &end, 10);
	else if (*end == ',') {
		n = m + 1; /* {m,}: m copies and a star */
		end++;
	}
	if (*end != '}')
		return 0;
	*end_out = end + 1;
	return regex_cap(m > n ? m : n ? n : 1);
}

static bool regex_too_complex(const char *s)
{
	/* per open group: parts so far, and parts of the last item (what a repetition copies) */
	struct {
		uint64_t total, last;
	} g[REGEX_DEPTH_MAX + 1];
	size_t depth = 0;
	bool after_repeat = false;

	g[0].total = g[0].last = 0;
	while (*s) {
		const char *next = s + 1;
		uint64_t copies = 0;
		char c = *s;

		if (c == '*' || c == '?')
			copies = 1;
		else if (c == '+')
			copies = 2;
		else if (c == '{')
			copies = regex_interval(s + 1, &next);
		if (copies) {
			if (after_repeat)
				return true;
			/* the copies, and one node for the repetition itself */
			g[depth].total = regex_cap(g[depth].total + g[depth].last * (copies - 1) + 1);
			g[depth].last = regex_cap(g[depth].last * copies + 1);
			after_repeat = true;
			s = next;
			continue;
		}
		after_repeat = false;
		if (c == '(') {
			if (depth == REGEX_DEPTH_MAX)
				return true;
			depth++;
			g[depth].total = g[depth].last = 0;
		} else if (c == ')' && depth > 0) {
			/* a group costs more than an atom: regcomp() tracks every copy of
			 * it, and its memory grows with their square ("(){5337}": 450 MB) */
			uint64_t parts = g[depth--].total + REGEX_GROUP_PARTS;

			g[depth].last = parts;
			g[depth].total = regex_cap(g[depth].total + parts);
		} else if (c == '|') {
			g[depth].last = 0;
		} else {
			/* an atom: a character, an escaped one, or a bracket expression */
			if (c == '\\' && s[1] >= '1' && s[1] <= '9')
				return true; /* a back-reference */
			if (c == '\\' && s[1])
				next = s + 2;
			else if (c == '[' && !(next = regex_skip_bracket(s + 1)))
				break; /* regcomp() refuses it, but compiles what came before first */
			g[depth].last = 1;
			g[depth].total = regex_cap(g[depth].total + 1);
		}
		s = next;
	}
	while (depth > 0) {
		uint64_t parts = g[depth--].total + REGEX_GROUP_PARTS;

		g[depth].total = regex_cap(g[depth].total + parts);
	}
	return g[0].total > REGEX_PARTS_MAX;
}

static int set_regex(char *dst, const char *name, const char *v, char *why, size_t whylen)
{
	regex_t re;
	int r;

	if (strlen(v) >= CONFIG_REGEX_MAX) {
		snprintf(why, whylen, "%s is longer than %d characters", name, CONFIG_REGEX_MAX - 1);
		return -EINVAL;
	}
	if (regex_too_complex(v)) {
		snprintf(why, whylen,
			 "%s: regular expression too complex to use safely (no back-reference, at most %d nested "
			 "groups, no repetition of a repetition such as \"a+*\", at most %d parts once "
			 "repetitions are expanded): \"%s\"",
			 name, REGEX_DEPTH_MAX, REGEX_PARTS_MAX, v);
		return -EINVAL;
	}
	if (!*v) {
		dst[0] = '\0';
		return 0;
	}
	r = regcomp(&re, v, REG_EXTENDED | REG_NOSUB);
	if (r == REG_ESPACE) {
		snprintf(why, whylen, "%s: out of memory compiling the regular expression \"%s\"", name, v);
		return -ENOMEM;
	}
	if (r != 0) {
		char msg[128];

		regerror(r, &re, msg, sizeof(msg));
		snprintf(why, whylen, "%s: bad regular expression \"%s\": %s", name, v, msg);
		return -EINVAL;
	}
	regfree(&re);
	strcpy(dst, v);
	return 0;
}

#define REGEX_KEY(field)                                                                        \
	static int key_##field(struct parser *p, const char *v, char *why, size_t whylen)      \
	{                                                                                       \
		return set_regex(p->c->field, #field, v, why, whylen);                         \
	}
REGEX_KEY(protect)
REGEX_KEY(prefer)
REGEX_KEY(avoid)
REGEX_KEY(protect_cmdline)
REGEX_KEY(prefer_cmdline)
REGEX_KEY(avoid_cmdline)
REGEX_KEY(protect_cgroup)
REGEX_KEY(avoid_cgroup)

static int key_systemd_oom_preferences(struct parser *p, const char *v, char *why, size_t whylen)
{
	if (parse_bool(v, &p->c->systemd_oom_preferences) < 0) {
		snprintf(why, whylen, "systemd_oom_preferences must be true or false, not \"%s\"", v);
		return -EINVAL;
	}
	return 0;
}

static int key_trusted_uid_max(struct parser *p, const char *v, char *why, size_t whylen)
{
	unsigned long long n;
	char *end;

	/* a uid: 0 .. 2^32 - 2 ((uid_t)-1 is no uid) */
	errno = 0;
	n = strtoull(v, &end, 10);
	if (!isdigit((unsigned char)v[0]) || *end != '\0' || errno == ERANGE || n > UINT32_MAX - 1) {
		snprintf(why, whylen, "trusted_uid_max must be a uid (an integer between 0 and %u), not \"%s\"",
			 (unsigned)(UINT32_MAX - 1), v);
		return -EINVAL;
	}
	p->c->trusted_uid_max = (uid_t)n;
	return 0;
}

static int key_min_rss(struct parser *p, const char *v, char *why, size_t whylen)
{
	struct mem_amount a;

	if (config_parse_amount(v, false, &a, why, whylen) < 0)
		return -EINVAL;
	p->c->min_rss_kb = a.value / 1024;
	return 0;
}

static int key_settle(struct parser *p, const char *v, char *why, size_t whylen)
{
	uint64_t us;

	if (strcmp(v, "0") == 0) {
		p->c->settle_us = 0;
		return 0;
	}
	if (config_parse_duration(v, false, &us, why, whylen) < 0)
		return -EINVAL;
	if (us > 60000000ULL) {
		snprintf(why, whylen, "settle_time must be between 0 and 60s");
		return -EINVAL;
	}
	p->c->settle_us = us;
	return 0;
}

static bool trusted_owner(uid_t uid, uid_t euid)
{
	return uid == 0 || uid == euid;
}

/* The on_kill program runs with the daemon's trust, so nobody else may be
 * able to change it: the file (symlinks resolved) and every directory above
 * it must belong to root or to psi-lmkd's own euid and must not be writable
 * by group or others. A directory that others may write is accepted only
 * with the sticky bit (like /tmp), where nobody can rename or remove an
 * entry they do not own; the entry below it is owned by root or us anyway,
 * as every component is checked. */
int config_check_program(const char *path, char *why, size_t whylen)
{
	char real[PATH_MAX], dir[PATH_MAX];
	uid_t euid = geteuid();
	struct stat st;
	char *slash;

	if (!realpath(path, real)) {
		snprintf(why, whylen, "on_kill: %s is not an executable file (%s)", path, strerror(errno));
		return -EINVAL;
	}
	if (stat(real, &st) < 0 || !S_ISREG(st.st_mode) || access(real, X_OK) < 0) {
		snprintf(why, whylen, "on_kill: %s is not an executable file", path);
		return -EINVAL;
	}
	if (!trusted_owner(st.st_uid, euid)) {
		snprintf(why, whylen, "on_kill: %s is owned by uid %u; it must belong to root or to psi-lmkd's uid %u",
			 real, (unsigned)st.st_uid, (unsigned)euid);
		return -EINVAL;
	}
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		snprintf(why, whylen, "on_kill: %s is writable by its group or others (mode %04o)", real,
			 (unsigned)(st.st_mode & 07777));
		return -EINVAL;
	}
	strcpy(dir, real);
	do {
		slash = strrchr(dir, '/');
		if (!slash)
			break; /* realpath() returns an absolute path */
		if (slash == dir)
			slash[1] = '\0'; /* "/" itself */
		else
			*slash = '\0';
		if (lstat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
			snprintf(why, whylen, "on_kill: cannot check the directory %s above %s", dir, real);
			return -EINVAL;
		}
		if (!trusted_owner(st.st_uid, euid)) {
			snprintf(why, whylen, "on_kill: the directory %s above %s is owned by uid %u; it must belong to "
				 "root or to psi-lmkd's uid %u", dir, real, (unsigned)st.st_uid, (unsigned)euid);
			return -EINVAL;
		}
		if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX)) {
			snprintf(why, whylen, "on_kill: the directory %s above %s is writable by its group or others "
				 "(mode %04o) and not sticky: they could replace the program", dir, real,
				 (unsigned)(st.st_mode & 07777));
			return -EINVAL;
		}
	} while (strcmp(dir, "/") != 0);
	return 0;
}

static int key_on_kill(struct parser *p, const char *v, char *why, size_t whylen)
{
	if (v[0] != '/') {
		snprintf(why, whylen, "on_kill must be an absolute path to an executable");
		return -EINVAL;
	}
	if (strlen(v) >= sizeof(p->c->on_kill)) {
		snprintf(why, whylen, "on_kill path is too long");
		return -EINVAL;
	}
	if (config_check_program(v, why, whylen) < 0)
		return -EINVAL;
	strcpy(p->c->on_kill, v);
	p->on_kill_line = p->line;
	return 0;
}

static int key_on_kill_user(struct parser *p, const char *v, char *why, size_t whylen)
{
	if (!*v || strlen(v) >= sizeof(p->on_kill_user)) {
		snprintf(why, whylen, "on_kill_user must be a user name or a uid (at most %d characters)",
			 CONFIG_USER_MAX - 1);
		return -EINVAL;
	}
	strcpy(p->on_kill_user, v);
	p->on_kill_user_line = p->line;
	return 0;
}

int config_resolve_user(const char *spec, struct config_user *u, char *why, size_t whylen)
{
	char buf[16384];
	struct passwd pw, *found = NULL;
	const char *s;
	int r, n = CONFIG_GROUPS_MAX;

	for (s = spec; isdigit((unsigned char)*s); s++)
		;
	if (*spec && !*s) {
		char *end;
		unsigned long uid;

		errno = 0;
		uid = strtoul(spec, &end, 10);
		if (errno || uid >= (uid_t)-1) {
			snprintf(why, whylen, "on_kill_user: uid %s is out of range", spec);
			return -EINVAL;
		}
		r = getpwuid_r((uid_t)uid, &pw, buf, sizeof(buf), &found);
	} else {
		r = getpwnam_r(spec, &pw, buf, sizeof(buf), &found);
	}
	if (r == ENOMEM) {
		snprintf(why, whylen, "on_kill_user: out of memory looking up \"%s\"", spec);
		return -ENOMEM;
	}
	if (r != 0 && r != ENOENT && r != ESRCH && r != EBADF && r != EPERM) {
		snprintf(why, whylen, "on_kill_user: cannot look up \"%s\": %s", spec, strerror(r));
		return -EINVAL;
	}
	if (!found) {
		snprintf(why, whylen, "on_kill_user: no such user \"%s\" in the user database", spec);
		return -EINVAL;
	}
	if (pw.pw_uid == 0) {
		snprintf(why, whylen, "on_kill_user: \"%s\" is uid 0; the hook must not run as root (a uid-0 process "
			 "regains capabilities at exec)", spec);
		return -EINVAL;
	}
	if (strlen(pw.pw_name) >= sizeof(u->name)) {
		snprintf(why, whylen, "on_kill_user: the user name of \"%s\" is too long", spec);
		return -EINVAL;
	}
	if (getgrouplist(pw.pw_name, pw.pw_gid, u->groups, &n) < 0) {
		snprintf(why, whylen, "on_kill_user: %s is in more than %d groups", pw.pw_name, CONFIG_GROUPS_MAX);
		return -EINVAL;
	}
	strcpy(u->name, pw.pw_name);
	u->uid = pw.pw_uid;
	u->gid = pw.pw_gid;
	u->n_groups = (size_t)n;
	return 0;
}

/* After the whole file: on_kill gets its user (on_kill_user, or nobody). */
static void resolve_hook_user(struct parser *p)
{
	char why[256];
	unsigned line;
	int r;

	if (!*p->c->on_kill) {
		if (p->on_kill_user_line)
			fail(p, p->on_kill_user_line, "on_kill_user is set but there is no on_kill program");
		return;
	}
	line = p->on_kill_user_line ? p->on_kill_user_line : p->on_kill_line;
	r = config_resolve_user(p->on_kill_user_line ? p->on_kill_user : CONFIG_DEFAULT_HOOK_USER, &p->c->on_kill_user,
				why, sizeof(why));
	if (r < 0) {
		fail(p, line, "%s%s", why, p->on_kill_user_line ? "" : " (the default on_kill_user; set another)");
		p->err_nomem = r == -ENOMEM;
	}
}

static int key_victim_order(struct parser *p, const char *v, char *why, size_t whylen)
{
	if (strcmp(v, "adj") == 0)
		p->c->victim_order = VICTIM_ORDER_ADJ;
	else if (strcmp(v, "badness") == 0)
		p->c->victim_order = VICTIM_ORDER_BADNESS;
	else {
		snprintf(why, whylen, "victim_order must be adj or badness, not \"%s\"", v);
		return -EINVAL;
	}
	return 0;
}

static int key_oom_killer(struct parser *p, const char *v, char *why, size_t whylen)
{
	if (strcmp(v, "kernel") == 0)
		p->c->oom_killer_daemon = false;
	else if (strcmp(v, "daemon") == 0)
		p->c->oom_killer_daemon = true;
	else {
		snprintf(why, whylen, "oom_killer must be kernel or daemon, not \"%s\"", v);
		return -EINVAL;
	}
	return 0;
}

static int key_memory_cgroup(struct parser *p, const char *v, char *why, size_t whylen)
{
	if (v[0] != '/' || strlen(v) >= sizeof(p->c->memory_cgroup)) {
		snprintf(why, whylen, "memory_cgroup must be an absolute path of a cgroup directory, "
			 "e.g. /sys/fs/cgroup/user.slice");
		return -EINVAL;
	}
	strcpy(p->c->memory_cgroup, v);
	return 0;
}

static int key_control_socket(struct parser *p, const char *v, char *why, size_t whylen)
{
	if (strcmp(v, "off") == 0) {
		p->c->control_socket[0] = '\0';
		return 0;
	}
	if (v[0] != '/' || strlen(v) >= sizeof(p->c->control_socket) || v[strlen(v) - 1] == '/') {
		snprintf(why, whylen, "control_socket must be off or an absolute path of a socket file, shorter "
			 "than %zu bytes", sizeof(p->c->control_socket));
		return -EINVAL;
	}
	strcpy(p->c->control_socket, v);
	return 0;
}

static int key_metrics_file(struct parser *p, const char *v, char *why, size_t whylen)
{
	if (v[0] != '/' || strlen(v) + 4 >= sizeof(p->c->metrics_file) || v[strlen(v) - 1] == '/') {
		snprintf(why, whylen, "metrics_file must be an absolute path of a file, e.g. "
			 "/var/lib/prometheus/node-exporter/psi-lmkd.prom");
		return -EINVAL;
	}
	strcpy(p->c->metrics_file, v);
	return 0;
}

static int key_nice(struct parser *p, const char *v, char *why, size_t whylen)
{
	long n;

	if (parse_int_range(v, -20, 19, &n) < 0) {
		snprintf(why, whylen, "nice must be an integer between -20 and 19, not \"%s\"", v);
		return -EINVAL;
	}
	p->c->has_nice = true;
	p->c->nice = (int)n;
	return 0;
}

static int key_realtime_priority(struct parser *p, const char *v, char *why, size_t whylen)
{
	long n;

	if (parse_int_range(v, 0, 99, &n) < 0) {
		snprintf(why, whylen, "realtime_priority must be 0 (off) or a SCHED_FIFO priority 1..99, not \"%s\"", v);
		return -EINVAL;
	}
	p->c->realtime_priority = (int)n;
	return 0;
}

static int key_lmkd_socket(struct parser *p, const char *v, char *why, size_t whylen)
{
	if (v[0] != '/' || strlen(v) >= sizeof(p->c->lmkd_socket)) {
		snprintf(why, whylen, "lmkd_socket must be an absolute path of at most %d bytes, e.g. /dev/socket/lmkd",
			 CONFIG_SOCKET_MAX - 1);
		return -EINVAL;
	}
	strcpy(p->c->lmkd_socket, v);
	return 0;
}

static int key_lmkd_prockill_size(struct parser *p, const char *v, char *why, size_t whylen)
{
	if (strcmp(v, "12") != 0 && strcmp(v, "16") != 0) {
		snprintf(why, whylen, "lmkd_prockill_size must be 16 (Android 16 frameworks) or 12 (Android 11 to 15), "
			 "not \"%s\"", v);
		return -EINVAL;
	}
	p->c->lmkd_prockill_short = v[0] == '1' && v[1] == '2';
	return 0;
}

static const struct key_def daemon_keys[] = {
	{ "pressure", key_pressure },
	{ "scope", key_scope },
	{ "kill_timeout", key_kill_timeout },
	{ "idle_poll_interval", key_idle_poll },
	{ "settle_time", key_settle },
	{ "dry_run", key_dry_run },
	{ "protect", key_protect },
	{ "prefer", key_prefer },
	{ "avoid", key_avoid },
	{ "protect_cmdline", key_protect_cmdline },
	{ "prefer_cmdline", key_prefer_cmdline },
	{ "avoid_cmdline", key_avoid_cmdline },
	{ "protect_cgroup", key_protect_cgroup },
	{ "avoid_cgroup", key_avoid_cgroup },
	{ "systemd_oom_preferences", key_systemd_oom_preferences },
	{ "trusted_uid_max", key_trusted_uid_max },
	{ "victim_order", key_victim_order },
	{ "oom_killer", key_oom_killer },
	{ "min_rss", key_min_rss },
	{ "on_kill", key_on_kill },
	{ "on_kill_user", key_on_kill_user },
	{ "memory_cgroup", key_memory_cgroup },
	{ "nice", key_nice },
	{ "realtime_priority", key_realtime_priority },
	{ "lmkd_socket", key_lmkd_socket },
	{ "lmkd_prockill_size", key_lmkd_prockill_size },
	{ "control_socket", key_control_socket },
	{ "metrics_file", key_metrics_file },
	{ NULL, NULL },
};

enum { TIER_KEY_TRIGGER, TIER_KEY_MIN_ADJ, TIER_KEY_LOW_AVAILABLE, TIER_KEY_KILL_SIGNAL, TIER_KEY_TERM_TIMEOUT };

static const struct key_def tier_keys[] = {
	[TIER_KEY_TRIGGER] = { "trigger", key_trigger },
	[TIER_KEY_MIN_ADJ] = { "min_oom_score_adj", key_min_adj },
	[TIER_KEY_LOW_AVAILABLE] = { "low_available", key_low_available },
	[TIER_KEY_KILL_SIGNAL] = { "kill_signal", key_kill_signal },
	[TIER_KEY_TERM_TIMEOUT] = { "term_timeout", key_term_timeout },
	{ "kill_cgroup", key_kill_cgroup },
	{ "min_available", key_min_available },
	{ "low_swap", key_low_swap },
	{ "min_events", key_min_events },
	{ "action", key_action },
	{ "warn_level", key_warn_level },
	{ NULL, NULL },
};

/* The line a tier key was set on (0: not set). */
static unsigned tier_key_line(const unsigned *seen, const char *name)
{
	size_t i;

	for (i = 0; tier_keys[i].name; i++)
		if (strcmp(tier_keys[i].name, name) == 0)
			return seen[i];
	return 0;
}

/* A warn tier kills nothing: the keys of a kill have no place in it. */
static void check_warn_tier(struct parser *p, const struct tier_config *t, const unsigned *seen)
{
	static const char *const kill_keys[] = { "min_oom_score_adj", "kill_signal", "term_timeout", "kill_cgroup",
						 "min_available" };
	size_t i;

	for (i = 0; i < sizeof(kill_keys) / sizeof(kill_keys[0]); i++)
		if (tier_key_line(seen, kill_keys[i])) {
			fail(p, tier_key_line(seen, kill_keys[i]), "tier \"%s\" has action = warn: it kills nothing, "
			     "so %s does not apply", t->name, kill_keys[i]);
			return;
		}
}

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
	p->tier->kill_signal = SIGKILL;
	p->tier->term_timeout_us = CONFIG_DEFAULT_TERM_TIMEOUT_US;
	p->tier->min_events = 1;
	p->tier->warn_level = WARN_LEVEL_LOW;
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
		char name[sizeof(buf)] = ""; /* zero-filled: the static analyzer cannot tell that
					      * begin_section() reads name[4] only after "tier" */
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
	int r;

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
	r = keys[i].parse(p, value, why, sizeof(why));
	if (r < 0) {
		p->err_nomem = r == -ENOMEM;
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
	c->settle_us = CONFIG_DEFAULT_SETTLE_US;
	c->trusted_uid_max = CONFIG_DEFAULT_TRUSTED_UID_MAX;
	c->systemd_oom_preferences = true;
	c->victim_order = CONFIG_DEFAULT_VICTIM_ORDER;
	strcpy(c->control_socket, CONFIG_DEFAULT_CONTROL_SOCKET);
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
		p->err_nomem = false;
		fail(p, (unsigned)r, "syntax error (expected [section], key = value, or a ; comment)");
	} else if (r < 0 && !p->err_line) {
		fail(p, p->line, "cannot parse (inih error %d)", r);
	}
	if (!p->err_line && tmp->n_tiers == 0)
		fail(p, p->line, "no [tier NAME] section: at least one tier is needed");
	if (!p->err_line)
		resolve_hook_user(p);
	for (i = 0; !p->err_line && i < tmp->n_tiers; i++) {
		const struct tier_config *t = &tmp->tiers[i];

		const unsigned *seen = p->seen[1 + i];

		if (!seen[TIER_KEY_TRIGGER] && !seen[TIER_KEY_LOW_AVAILABLE])
			fail(p, t->line, "tier \"%s\" has no trigger (e.g. trigger = some 70ms 1s) and no low_available",
			     t->name);
		else if (t->warn)
			check_warn_tier(p, t, seen);
		else if (tier_key_line(seen, "warn_level"))
			fail(p, tier_key_line(seen, "warn_level"), "warn_level only applies with action = warn");
		else if (!seen[TIER_KEY_MIN_ADJ])
			fail(p, t->line, "tier \"%s\" has no min_oom_score_adj (e.g. min_oom_score_adj = 800)", t->name);
		else if (seen[TIER_KEY_TERM_TIMEOUT] && t->kill_signal != SIGTERM)
			fail(p, seen[TIER_KEY_TERM_TIMEOUT], "term_timeout only applies with kill_signal = SIGTERM");
		else if (t->kill_cgroup && t->kill_signal != SIGKILL)
			fail(p, seen[TIER_KEY_KILL_SIGNAL], "kill_cgroup = true kills with cgroup.kill (SIGKILL): "
			     "it cannot be combined with kill_signal = SIGTERM");
		else if (t->low_swap.set && !t->low_available.set)
			fail(p, tier_key_line(seen, "low_swap"), "low_swap only applies with low_available (the last "
			     "resort fires when available memory is below low_available and free swap is at or below low_swap)");
	}
	r = p->err_line ? (p->err_nomem ? -ENOMEM : -EINVAL) : 0;
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

static void print_regex(FILE *f, const char *key, const char *v)
{
	if (*v)
		fprintf(f, "%s = %s\n", key, v);
}

void config_print(const struct config *c, FILE *f)
{
	char a[32], b[32];
	size_t i;

	fprintf(f, "config = %s\n", c->path);
	fprintf(f, "pressure = %s\n", c->pressure);
	fprintf(f, "scope = %s\n", c->scope);
	fprintf(f, "kill_timeout = %s\n", config_format_duration(a, sizeof(a), c->kill_timeout_us));
	fprintf(f, "settle_time = %s\n", config_format_duration(a, sizeof(a), c->settle_us));
	fprintf(f, "idle_poll_interval = %s\n",
		c->idle_poll_us ? config_format_duration(a, sizeof(a), c->idle_poll_us) : "off");
	fprintf(f, "dry_run = %s\n", c->dry_run ? "true" : "false");
	print_regex(f, "protect", c->protect);
	print_regex(f, "prefer", c->prefer);
	print_regex(f, "avoid", c->avoid);
	print_regex(f, "protect_cmdline", c->protect_cmdline);
	print_regex(f, "prefer_cmdline", c->prefer_cmdline);
	print_regex(f, "avoid_cmdline", c->avoid_cmdline);
	print_regex(f, "protect_cgroup", c->protect_cgroup);
	print_regex(f, "avoid_cgroup", c->avoid_cgroup);
	fprintf(f, "systemd_oom_preferences = %s\n", c->systemd_oom_preferences ? "true" : "false");
	fprintf(f, "trusted_uid_max = %u\n", (unsigned)c->trusted_uid_max);
	fprintf(f, "victim_order = %s\n", victim_order_name(c->victim_order));
	fprintf(f, "oom_killer = %s\n", c->oom_killer_daemon ? "daemon" : "kernel");
	if (c->min_rss_kb)
		fprintf(f, "min_rss = %" PRIu64 "K\n", c->min_rss_kb);
	if (*c->on_kill)
		fprintf(f, "on_kill = %s\non_kill_user = %s (uid %u, gid %u, %zu groups)\n", c->on_kill,
			c->on_kill_user.name, (unsigned)c->on_kill_user.uid, (unsigned)c->on_kill_user.gid,
			c->on_kill_user.n_groups);
	if (*c->memory_cgroup)
		fprintf(f, "memory_cgroup = %s\n", c->memory_cgroup);
	if (c->has_nice)
		fprintf(f, "nice = %d\n", c->nice);
	if (c->realtime_priority)
		fprintf(f, "realtime_priority = %d\n", c->realtime_priority);
	if (*c->lmkd_socket)
		fprintf(f, "lmkd_socket = %s\n", c->lmkd_socket);
	if (c->lmkd_prockill_short)
		fprintf(f, "lmkd_prockill_size = 12\n");
	if (strcmp(c->control_socket, CONFIG_DEFAULT_CONTROL_SOCKET) != 0)
		fprintf(f, "control_socket = %s\n", *c->control_socket ? c->control_socket : "off");
	if (*c->metrics_file)
		fprintf(f, "metrics_file = %s\n", c->metrics_file);
	for (i = 0; i < c->n_tiers; i++) {
		const struct tier_config *t = &c->tiers[i];

		fprintf(f, "tier %s:", t->name);
		if (t->has_trigger)
			fprintf(f, " trigger = %s %s %s (kernel form \"%s %" PRIu64 " %" PRIu64 "\"),", psi_state_name(t->state),
				config_format_duration(a, sizeof(a), t->stall_us),
				config_format_duration(b, sizeof(b), t->window_us), psi_state_name(t->state), t->stall_us,
				t->window_us);
		if (t->low_available.set)
			fprintf(f, " low_available = %s, low_swap = %s%s,", config_format_amount(a, sizeof(a), &t->low_available),
				config_format_amount(b, sizeof(b), t->low_swap.set ? &t->low_swap : &CONFIG_DEFAULT_LOW_SWAP),
				t->low_swap.set ? "" : " (default; of the swap, when there is swap)");
		if (t->warn)
			fprintf(f, " action = warn, warn_level = %s", warn_level_name(t->warn_level));
		else
			fprintf(f, " min_oom_score_adj = %d, kill_signal = %s", t->min_oom_score_adj,
				t->kill_signal == SIGTERM ? "SIGTERM" : "SIGKILL");
		if (t->kill_signal == SIGTERM)
			fprintf(f, ", term_timeout = %s", config_format_duration(a, sizeof(a), t->term_timeout_us));
		if (t->kill_cgroup)
			fprintf(f, ", kill_cgroup = true");
		if (t->min_available.set)
			fprintf(f, ", min_available = %s", config_format_amount(a, sizeof(a), &t->min_available));
		if (t->min_events > 1)
			fprintf(f, ", min_events = %u", t->min_events);
		fprintf(f, "\n");
	}
}
