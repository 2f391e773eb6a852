/* SPDX-License-Identifier: MIT */
/* fuzz-util: helpers shared by the fuzz targets (see fuzz.h). */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

char *fuzz_text(const uint8_t *data, size_t size)
{
	const uint8_t *nul = size ? memchr(data, '\0', size) : NULL;
	size_t n = nul ? (size_t)(nul - data) : size;
	char *s = malloc(n + 1);

	if (!s)
		abort();
	if (n)
		memcpy(s, data, n);
	s[n] = '\0';
	return s;
}

FILE *fuzz_devnull(void)
{
	static FILE *f;

	if (!f) {
		f = fopen("/dev/null", "w");
		if (!f)
			abort();
	}
	return f;
}

void fuzz_fail(const char *what, const char *file, int line)
{
	fprintf(stderr, "%s:%d: check failed: %s\n", file, line, what);
	abort();
}
