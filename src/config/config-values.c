/* SPDX-License-Identifier: MIT */
/* config-values: the typed value parsers and formatters of the config file:
 * durations, PSI triggers, memory amounts and percentages, integers in a
 * range, booleans. Pure: no I/O, no parser state; an error is a sentence in
 * why and -EINVAL/-ERANGE. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "coldtext.h"
#include "config-private.h"

COLD_TEXT const char *config_skip_ws(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

COLD_TEXT const char *config_skip_ws_n(const char *s, const char *end)
{
	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	return s;
}

/* Parses "<digits>[.<digits>]" scaled by 10^scale_digits into an integer,
 * e.g. ("1.5", 3) -> 1500. Rejects precision finer than the scale. */
int config_parse_fixed(const char **sp, unsigned scale_digits, uint64_t *out)
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

COLD_TEXT int config_parse_duration(const char *s, bool bare_is_us, uint64_t *out, char *why, size_t whylen)
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
	r = config_parse_fixed(&num, units[i].digits, &fixed);
	if (r == -EDOM) {
		snprintf(why, whylen, "\"%s\" is finer than a microsecond", s);
		return -EINVAL;
	}
	if (r == -ERANGE) { /* digits past 2^64: too large, not malformed */
		snprintf(why, whylen, "\"%s\" is too large", s);
		return -ERANGE;
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

/* Splits a trigger into its three words; a message in why if it has not three. */
static int trigger_words(const char *s, char tok[3][64], char *why, size_t whylen)
{
	const char *p = config_skip_ws(s);
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
		p = config_skip_ws(p + len);
	}
	if (n != 3) {
		snprintf(why, whylen, "trigger \"%s\" must be \"some|full STALL WINDOW\", e.g. \"some 70ms 1s\"", s);
		return -EINVAL;
	}
	return 0;
}

/* The stall: a duration, or a percentage of the window ("10%"); tok is modified. */
static int trigger_stall(char *tok, uint64_t window, uint64_t *stall, char *why, size_t whylen)
{
	size_t len = strlen(tok);

	if (len > 0 && tok[len - 1] == '%') {
		const char *q = tok;
		uint64_t pct; /* hundredths of a percent */

		tok[len - 1] = '\0';
		if (config_parse_fixed(&q, 2, &pct) < 0 || *q != '\0' || pct > 10000) {
			snprintf(why, whylen, "trigger stall \"%s%%\" is not a percentage between 0%% and 100%%", tok);
			return -EINVAL;
		}
		*stall = window * pct / 10000;
		return 0;
	}
	return config_parse_duration(tok, true, stall, why, whylen) < 0 ? -EINVAL : 0;
}

COLD_TEXT int config_parse_trigger(const char *s, struct tier_config *t, char *why, size_t whylen)
{
	char tok[3][64], wbuf[32], sbuf[32];
	enum psi_state state;
	uint64_t stall, window;

	if (trigger_words(s, tok, why, whylen) < 0)
		return -EINVAL;
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
	if (trigger_stall(tok[1], window, &stall, why, whylen) < 0)
		return -EINVAL;
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

/* The bytes a memory unit stands for ("M": 2^20), or 0 for no unit. */
static uint64_t amount_unit(const char *suffix)
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
	size_t i;

	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (strcmp(suffix, units[i].suffix) == 0)
			return units[i].mult;
	return 0;
}

COLD_TEXT bool config_amount_is_zero(const char *s, bool allow_percent)
{
	const char *p = s;
	uint64_t v;

	if (config_parse_fixed(&p, 2, &v) < 0 || v != 0)
		return false;
	return *p == '\0' || (allow_percent && strcmp(p, "%") == 0) || amount_unit(p) != 0;
}

int config_parse_amount(const char *s, bool allow_percent, struct mem_amount *out, char *why, size_t whylen)
{
	const char *p = s;
	uint64_t v, mult;

	if (allow_percent && *s && s[strlen(s) - 1] == '%') {
		if (config_parse_fixed(&p, 2, &v) < 0 || *p != '%' || p[1] != '\0' || v == 0 || v > 10000) {
			snprintf(why, whylen, "\"%s\" is not a percentage between 0.01%% and 100%%", s);
			return -EINVAL;
		}
		*out = (struct mem_amount){ .set = true, .percent = true, .value = v };
		return 0;
	}
	if (config_parse_fixed(&p, 0, &v) < 0) {
		snprintf(why, whylen, "\"%s\" is not a memory size (e.g. 512M, 2G%s)", s, allow_percent ? ", 5%" : "");
		return -EINVAL;
	}
	mult = amount_unit(p);
	if (!mult) {
		snprintf(why, whylen, "\"%s\" needs a unit: B, K, M, G or T (powers of 1024)%s", s,
			 allow_percent ? ", or %" : "");
		return -EINVAL;
	}
	if (v > UINT64_MAX / mult) {
		snprintf(why, whylen, "\"%s\" is too large", s);
		return -ERANGE;
	}
	*out = (struct mem_amount){ .set = true, .percent = false, .value = v * mult };
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

COLD_TEXT int config_parse_int_range(const char *s, long lo, long hi, long *out)
{
	char *end;
	long v;

	/* digits, after a '-' for a negative number: no blanks, no '+' (strtol takes both) */
	if (!isdigit((unsigned char)(*s == '-' ? s[1] : s[0])))
		return -EINVAL;
	errno = 0;
	v = strtol(s, &end, 10);
	if (end == s || *end != '\0' || errno == ERANGE)
		return -EINVAL;
	if (v < lo || v > hi)
		return -ERANGE;
	*out = v;
	return 0;
}

COLD_TEXT int config_parse_bool(const char *s, bool *out)
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
