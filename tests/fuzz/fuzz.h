/* SPDX-License-Identifier: MIT */
/* fuzz: shared declarations of the fuzz targets (issue 7).
 *
 * Each tests/fuzz/fuzz-*.c defines LLVMFuzzerTestOneInput(). Built with
 * --enable-fuzzing (clang), libFuzzer supplies main(); otherwise
 * tests/fuzz/standalone.c does, and the binary runs each file given on its
 * command line once -- the regression replay of tests/fuzz-regress.sh.
 *
 * A target aborts (through FUZZ_CHECK) when a parser breaks a promise of its
 * header, so that logic errors count as crashes too, not only memory errors. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A NUL-terminated copy of data (as the parsers take C strings); the text
 * ends at the first NUL byte, as a C string read from a file would. Aborts
 * when out of memory. The caller frees it. */
char *fuzz_text(const uint8_t *data, size_t size);

/* A stream that discards what is written to it (opened once). */
FILE *fuzz_devnull(void);

/* Aborts with the failed condition and where it failed. */
void fuzz_fail(const char *what, const char *file, int line) __attribute__((noreturn));

#define FUZZ_CHECK(cond)                                    \
	do {                                                \
		if (!(cond))                                \
			fuzz_fail(#cond, __FILE__, __LINE__); \
	} while (0)
