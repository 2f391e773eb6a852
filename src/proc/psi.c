/* SPDX-License-Identifier: MIT */
/* psi: parser for the /proc/pressure files and cgroup2 *.pressure files, and the
 * trigger string the kernel expects. Pure functions, unit-tested directly. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "psi.h"

const char *psi_state_name(enum psi_state s)
{
	return s == PSI_FULL ? "full" : "some";
}

/* "12.34" -> 1234; at most two decimals, at most 100.00 */
static int parse_pct(const char *s, const char **end, uint32_t *out)
{
	uint32_t whole = 0, frac = 0;
	int digits = 0, fdigits = 0;

	while (*s >= '0' && *s <= '9') {
		whole = whole * 10 + (uint32_t)(*s++ - '0');
		if (++digits > 3)
			return -EINVAL;
	}
	if (digits == 0)
		return -EINVAL;
	if (*s == '.') {
		s++;
		while (*s >= '0' && *s <= '9') {
			if (fdigits < 2)
				frac = frac * 10 + (uint32_t)(*s - '0');
			fdigits++;
			s++;
		}
		if (fdigits == 0)
			return -EINVAL;
		if (fdigits == 1)
			frac *= 10;
	}
	if (whole > 100 || (whole == 100 && frac > 0))
		return -EINVAL;
	*out = whole * 100 + frac;
	*end = s;
	return 0;
}

static int parse_u64(const char *s, const char **end, uint64_t *out)
{
	uint64_t v = 0;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	while (*s >= '0' && *s <= '9') {
		uint64_t d = (uint64_t)(*s++ - '0');

		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	*out = v;
	*end = s;
	return 0;
}

static int expect(const char **s, const char *word)
{
	size_t n = strlen(word);

	if (strncmp(*s, word, n) != 0)
		return -EINVAL;
	*s += n;
	return 0;
}

static int parse_line(const char *s, const char **end, struct psi_line *l)
{
	if (expect(&s, " avg10=") < 0 || parse_pct(s, &s, &l->avg10) < 0 ||
	    expect(&s, " avg60=") < 0 || parse_pct(s, &s, &l->avg60) < 0 ||
	    expect(&s, " avg300=") < 0 || parse_pct(s, &s, &l->avg300) < 0 ||
	    expect(&s, " total=") < 0 || parse_u64(s, &s, &l->total_us) < 0)
		return -EINVAL;
	if (*s == '\n')
		s++;
	else if (*s != '\0')
		return -EINVAL;
	l->present = true;
	*end = s;
	return 0;
}

int psi_parse(const char *text, struct psi_stats *out)
{
	const char *s = text;

	memset(out, 0, sizeof(*out));
	while (*s) {
		struct psi_line *l;

		if (strncmp(s, "some", 4) == 0)
			l = &out->some;
		else if (strncmp(s, "full", 4) == 0)
			l = &out->full;
		else
			return -EINVAL;
		if (l->present)
			return -EINVAL;
		if (parse_line(s + 4, &s, l) < 0)
			return -EINVAL;
	}
	return out->some.present ? 0 : -EINVAL;
}

int psi_format_trigger(char *buf, size_t size, enum psi_state st, uint64_t stall_us, uint64_t window_us)
{
	int n = snprintf(buf, size, "%s %" PRIu64 " %" PRIu64, psi_state_name(st), stall_us, window_us);

	if (n < 0 || (size_t)n >= size)
		return -ENOSPC;
	return n;
}

unsigned psi_streak_next(unsigned streak, uint64_t last_us, uint64_t now_us, uint64_t window_us)
{
	uint64_t gap = 2 * window_us + PSI_UNPRIV_WINDOW_US;

	return streak && now_us >= last_us && now_us - last_us <= gap ? streak + 1 : 1;
}
