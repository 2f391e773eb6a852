/* SPDX-License-Identifier: MIT */
/* config-regex: the regex keys' check: length, a guard against patterns that
 * would make glibc's regcomp()/regexec() take gigabytes or minutes, then
 * regcomp() itself. Pure but for regcomp's memory. */
#include <ctype.h>
#include <errno.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coldtext.h"
#include "config-private.h"

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

/* What regex_too_complex() knows at a point of the pattern: per open group,
 * the parts so far and the parts of the last item (what a repetition copies). */
struct regex_cost {
	struct {
		uint64_t total, last;
	} g[REGEX_DEPTH_MAX + 1];
	size_t depth;
};

/* The copies of the last item a repetition makes, and one node for the repetition itself. */
static void regex_repeat(struct regex_cost *c, uint64_t copies)
{
	uint64_t *total = &c->g[c->depth].total, *last = &c->g[c->depth].last;

	*total = regex_cap(*total + *last * (copies - 1) + 1);
	*last = regex_cap(*last * copies + 1);
}

/* Closes the innermost group: it costs more than an atom, as regcomp() tracks
 * every copy of it and its memory grows with their square ("(){5337}": 450 MB). */
static void regex_close_group(struct regex_cost *c)
{
	uint64_t parts = c->g[c->depth--].total + REGEX_GROUP_PARTS;

	c->g[c->depth].last = parts;
	c->g[c->depth].total = regex_cap(c->g[c->depth].total + parts);
}

/* How many copies a repetition operator at s makes (0: s is not one); next is past it. */
static uint64_t regex_repetition(const char *s, const char **next)
{
	*next = s + 1;
	if (*s == '*' || *s == '?')
		return 1;
	if (*s == '+')
		return 2;
	if (*s == '{')
		return regex_interval(s + 1, next);
	return 0;
}

static bool regex_too_complex(const char *s)
{
	struct regex_cost c = { .depth = 0 };
	bool after_repeat = false;

	c.g[0].total = c.g[0].last = 0;
	while (*s) {
		const char *next;
		uint64_t copies = regex_repetition(s, &next);

		if (copies) {
			if (after_repeat)
				return true;
			regex_repeat(&c, copies);
			after_repeat = true;
			s = next;
			continue;
		}
		after_repeat = false;
		next = s + 1;
		if (*s == '(') {
			if (c.depth == REGEX_DEPTH_MAX)
				return true;
			c.depth++;
			c.g[c.depth].total = c.g[c.depth].last = 0;
		} else if (*s == ')' && c.depth > 0) {
			regex_close_group(&c);
		} else if (*s == '|') {
			c.g[c.depth].last = 0;
		} else {
			/* an atom: a character, an escaped one, or a bracket expression */
			if (*s == '\\' && s[1] >= '1' && s[1] <= '9')
				return true; /* a back-reference */
			if (*s == '\\' && s[1])
				next = s + 2;
			else if (*s == '[' && !(next = regex_skip_bracket(s + 1)))
				break; /* regcomp() refuses it, but compiles what came before first */
			c.g[c.depth].last = 1;
			c.g[c.depth].total = regex_cap(c.g[c.depth].total + 1);
		}
		s = next;
	}
	while (c.depth > 0)
		regex_close_group(&c);
	return c.g[0].total > REGEX_PARTS_MAX;
}

COLD_TEXT int config_set_regex(char *dst, const char *name, const char *v, char *why, size_t whylen)
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
