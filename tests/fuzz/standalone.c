/* SPDX-License-Identifier: MIT */
/* standalone: main() for the fuzz targets when they are not built with
 * libFuzzer. Runs LLVMFuzzerTestOneInput() once on each FILE given (every
 * regular file inside a DIRECTORY given), or on standard input without
 * arguments. Exit status 0 when every input ran; a crash aborts as usual. */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static int read_all(FILE *f, uint8_t **out, size_t *len)
{
	size_t cap = 4096, n = 0;
	uint8_t *buf = malloc(cap);

	if (!buf)
		return -ENOMEM;
	for (;;) {
		size_t r = fread(buf + n, 1, cap - n, f);

		n += r;
		if (n < cap) {
			if (ferror(f)) {
				free(buf);
				return -EIO;
			}
			break;
		}
		uint8_t *bigger = realloc(buf, cap * 2);

		if (!bigger) {
			free(buf);
			return -ENOMEM;
		}
		buf = bigger;
		cap *= 2;
	}
	*out = buf;
	*len = n;
	return 0;
}

static int run_stream(FILE *f, const char *name)
{
	uint8_t *buf;
	size_t len;

	if (read_all(f, &buf, &len) < 0) {
		fprintf(stderr, "%s: cannot read\n", name);
		return -1;
	}
	LLVMFuzzerTestOneInput(buf, len);
	free(buf);
	return 0;
}

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	int r;

	if (!f) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return -1;
	}
	r = run_stream(f, path);
	fclose(f);
	return r;
}

/* Runs path, or every regular file directly inside it. Returns the number
 * of inputs run, or -1. */
static int run_path(const char *path)
{
	struct dirent **names;
	struct stat st;
	int n, i, runs = 0, bad = 0;

	if (stat(path, &st) < 0) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode))
		return run_file(path) < 0 ? -1 : 1;
	n = scandir(path, &names, NULL, alphasort);
	if (n < 0) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return -1;
	}
	for (i = 0; i < n; i++) {
		char sub[4096];

		if (names[i]->d_name[0] != '.' &&
		    (size_t)snprintf(sub, sizeof(sub), "%s/%s", path, names[i]->d_name) < sizeof(sub) &&
		    stat(sub, &st) == 0 && S_ISREG(st.st_mode)) {
			if (run_file(sub) < 0)
				bad = 1;
			else
				runs++;
		}
		free(names[i]);
	}
	free(names);
	return bad ? -1 : runs;
}

int main(int argc, char **argv)
{
	int i, runs = 0, r;

	if (argc < 2)
		return run_stream(stdin, "<stdin>") < 0 ? 1 : 0;
	for (i = 1; i < argc; i++) {
		r = run_path(argv[i]);
		if (r < 0)
			return 1;
		runs += r;
	}
	fprintf(stderr, "%s: %d inputs ran\n", argv[0], runs);
	return 0;
}
