/* SPDX-License-Identifier: MIT */
/* lines: finding a keyed line in procfs and cgroupfs text. See lines.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lines.h"

const char *lines_find(const char *text, const char *key)
{
	size_t n = strlen(key);
	const char *s = text;

	while (s && *s) {
		if (strncmp(s, key, n) == 0)
			return s + n;
		s = strchr(s, '\n');
		if (s)
			s++;
	}
	return NULL;
}

int lines_value(const char *text, const char *key, uint64_t *out)
{
	const char *s = text, *p;

	while ((p = lines_find(s, key)) != NULL) {
		if (*p == ' ' || *p == '\t' || *p == ':') {
			unsigned long long v;
			char *end;

			p += *p == ':';
			errno = 0;
			v = strtoull(p, &end, 10);
			if (end == p || errno)
				return -EINVAL;
			*out = v;
			return 1;
		}
		/* a longer key that starts with this one: look on */
		s = strchr(p, '\n');
		if (!s)
			break;
		s++;
	}
	return 0;
}

unsigned lines_number(const char *text, const char *at)
{
	unsigned line = 1;

	for (; text < at; text++)
		line += *text == '\n';
	return line;
}

int lines_keyed(const char *line, size_t len, const char *const *keys)
{
	size_t i, n;

	for (i = 0; keys[i]; i++) {
		n = strlen(keys[i]);
		if (memcmp(line, keys[i], n < len ? n : len) == 0)
			return 1;
	}
	return 0;
}

size_t lines_filter(char *text, size_t len, const char *const *keys, size_t *tail)
{
	size_t at = 0, kept = 0;

	for (;;) {
		const char *nl = memchr(text + at, '\n', len - at);
		size_t n;

		if (!nl)
			break;
		n = (size_t)(nl - (text + at)) + 1;
		if (lines_keyed(text + at, n, keys)) {
			memmove(text + kept, text + at, n);
			kept += n;
		}
		at += n;
	}
	*tail = len - at;
	memmove(text + kept, text + at, *tail);
	return kept;
}
