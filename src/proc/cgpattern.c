/* SPDX-License-Identifier: MIT */
/* cgpattern: cgroup2 path patterns, one fnmatch component per level. See
 * cgpattern.h. Matching is done component by component (never FNM_PATHNAME
 * over the whole path), so a '*' never crosses a '/', and without
 * FNM_PERIOD, so a group whose name starts with '.' is matched like any
 * other: a user cannot hide a group from a pattern by its name. */
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>

#include "cgpattern.h"

/* Where the bracket expression opening at s[0] == '[' ends (its ']'), or
 * NULL if it does not close within len bytes. A ']' first in the set (after
 * an optional '!' or '^') belongs to the set. */
static const char *bracket_end(const char *s, size_t len)
{
	size_t i = 1;

	if (i < len && (s[i] == '!' || s[i] == '^'))
		i++;
	if (i < len && s[i] == ']')
		i++;
	for (; i < len; i++)
		if (s[i] == ']')
			return s + i;
	return NULL;
}

/* Checks one component's wildcards: closed brackets, no trailing '\'. */
static int check_component(const char *s, size_t len, char *why, size_t whylen)
{
	size_t i;

	for (i = 0; i < len; i++) {
		if (s[i] == '\\') {
			if (i + 1 == len) {
				snprintf(why, whylen, "cgroup pattern component \"%.*s\" ends with a lone '\\'", (int)len, s);
				return -EINVAL;
			}
			i++;
		} else if (s[i] == '[') {
			const char *end = bracket_end(s + i, len - i);

			if (!end) {
				snprintf(why, whylen, "cgroup pattern component \"%.*s\" has a '[' without its ']'", (int)len, s);
				return -EINVAL;
			}
			i = (size_t)(end - s);
		}
	}
	return 0;
}

int cgpattern_normalize(const char *v, const char *key, bool pattern, char *out, size_t size, char *why,
			size_t whylen)
{
	const char *s = v;
	size_t o = 0;

	if (*s != '/') {
		snprintf(why, whylen, "%s must be a cgroup2 path%s starting with '/', e.g. %s", key,
			 pattern ? " pattern" : "", pattern ? "/user.slice/user-*.slice" : "/ or /user.slice");
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
			snprintf(why, whylen, "%s must not contain '.' or '..' components", key);
			return -EINVAL;
		}
		if (len > CGPATTERN_COMPONENT_MAX) {
			snprintf(why, whylen, "%s has a component longer than %d bytes", key, CGPATTERN_COMPONENT_MAX);
			return -EINVAL;
		}
		if (pattern && check_component(s, len, why, whylen) < 0)
			return -EINVAL;
		if (o + 1 + len + 1 > size) {
			snprintf(why, whylen, "%s path is too long", key);
			return -EINVAL;
		}
		out[o++] = '/';
		memcpy(out + o, s, len);
		o += len;
		s += len;
	}
	if (o == 0 && pattern) {
		snprintf(why, whylen, "%s = / is the whole system: leave %s out and use [daemon] pressure and scope", key,
			 key);
		return -EINVAL;
	}
	if (o == 0)
		out[o++] = '/';
	out[o] = '\0';
	return 0;
}

int cgpattern_parse(const char *v, char *out, size_t size, char *why, size_t whylen)
{
	return cgpattern_normalize(v, "cgroup", true, out, size, why, whylen);
}

size_t cgpattern_depth(const char *pat)
{
	size_t n = 0;

	while (cgpattern_component(pat, n, &(size_t){ 0 }))
		n++;
	return n;
}

const char *cgpattern_component(const char *pat, size_t k, size_t *len)
{
	const char *s = pat;

	for (;;) {
		while (*s == '/')
			s++;
		if (!*s)
			return NULL;
		*len = strcspn(s, "/");
		if (k-- == 0)
			return s;
		s += *len;
	}
}

bool cgpattern_literal(const char *pat, size_t k)
{
	size_t len, i;
	const char *c = cgpattern_component(pat, k, &len);

	if (!c)
		return false;
	for (i = 0; i < len; i++)
		if (c[i] == '*' || c[i] == '?' || c[i] == '[' || c[i] == '\\')
			return false;
	return true;
}

bool cgpattern_match_component(const char *pat, size_t k, const char *name)
{
	char comp[CGPATTERN_COMPONENT_MAX + 1];
	size_t len;
	const char *c = cgpattern_component(pat, k, &len);

	if (!c || len > CGPATTERN_COMPONENT_MAX)
		return false;
	memcpy(comp, c, len);
	comp[len] = '\0';
	return fnmatch(comp, name, 0) == 0;
}

/* Whether the first n components of path match pat's, path having them. */
static bool match_prefix(const char *pat, const char *path, size_t n)
{
	char name[CGPATTERN_COMPONENT_MAX + 1];
	size_t k, len;

	for (k = 0; k < n; k++) {
		const char *c = cgpattern_component(path, k, &len);

		if (!c || len > CGPATTERN_COMPONENT_MAX)
			return false;
		memcpy(name, c, len);
		name[len] = '\0';
		if (!cgpattern_match_component(pat, k, name))
			return false;
	}
	return true;
}

bool cgpattern_match(const char *pat, const char *path)
{
	size_t n = cgpattern_depth(pat);

	return cgpattern_depth(path) == n && match_prefix(pat, path, n);
}

bool cgpattern_within(const char *pat, const char *scope)
{
	size_t n = cgpattern_depth(scope);

	return cgpattern_depth(pat) >= n && match_prefix(pat, scope, n);
}
