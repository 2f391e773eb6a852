/* SPDX-License-Identifier: MIT */
/* cgpattern: the cgroup2 path patterns of a tier's `cgroup` key
 * ("/user.slice/user-*.slice"): checking and normalizing one, and matching
 * paths and path prefixes against it, one shell-style wildcard component
 * (fnmatch: * ? [...]) per directory level. Pure: no I/O. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* A component longer than this cannot name a directory (NAME_MAX). */
#define CGPATTERN_COMPONENT_MAX 255

/* Normalizes a cgroup2 path (pattern false: the scope key) or pattern
 * (true) v into out: one '/' between components, none at the end; no '.'
 * or '..' component, none longer than a name can be; a pattern's bracket
 * expressions closed, and a pattern is never "/" alone. key names the
 * setting in messages. 0, or -EINVAL with the reason in why. */
int cgpattern_normalize(const char *v, const char *key, bool pattern, char *out, size_t size, char *why,
			size_t whylen);

/* Checks v and writes it normalized to out (one '/' between components,
 * none at the end). A pattern is absolute, names at least one level below
 * the root, has no '.' or '..' component, and its bracket expressions are
 * closed. 0, or -EINVAL with the reason in why. */
int cgpattern_parse(const char *v, char *out, size_t size, char *why, size_t whylen);

/* The number of components of a normalized pattern or path ("/" has 0). */
size_t cgpattern_depth(const char *pat);

/* Component k (from 0) of a normalized pattern or path: its start, and its
 * length in *len. NULL if there is no such component. */
const char *cgpattern_component(const char *pat, size_t k, size_t *len);

/* true if component k of pat has no wildcard: it names one directory. */
bool cgpattern_literal(const char *pat, size_t k);

/* true if the directory name matches component k of pat. */
bool cgpattern_match_component(const char *pat, size_t k, const char *name);

/* true if the normalized cgroup2 path matches all of pat (as many
 * components, each matching). */
bool cgpattern_match(const char *pat, const char *path);

/* true if some path matching pat lies inside scope (scope itself or below
 * it): the pattern is deeper than scope and its first components match
 * scope's. */
bool cgpattern_within(const char *pat, const char *scope);
