/* SPDX-License-Identifier: MIT */
/* khelper: what the real-kernel test programs (memhog, filepressure,
 * anongrow, respprobe, zleader) share: dying with a message, strict number
 * parsing, setting their own oom_score_adj, and making memory resident.
 * Header-only: the programs build without the project's library. Each
 * program defines KH_NAME before including it. */
#pragma once

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef KH_NAME
#error "define KH_NAME (the program's name) before including khelper.h"
#endif

/* "NAME: what[ arg]: strerror(errno)", exit 1 */
static void kh_die(const char *what, const char *arg)
{
	fprintf(stderr, "%s: %s%s%s: %s\n", KH_NAME, what, arg ? " " : "", arg ? arg : "", strerror(errno));
	exit(1);
}

/* a whole decimal number within lo..hi, or exit 2 */
static long kh_parse_long(const char *s, long lo, long hi, const char *name)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi) {
		fprintf(stderr, "%s: bad %s '%s' (want %ld..%ld)\n", KH_NAME, name, s, lo, hi);
		exit(2);
	}
	return v;
}

/* writes adj to /proc/self/oom_score_adj, or dies (loudly: EACCES for a
 * negative value without CAP_SYS_RESOURCE) */
static void kh_set_oom_score_adj(long adj)
{
	char buf[32];
	int fd, len;

	len = snprintf(buf, sizeof(buf), "%ld\n", adj);
	fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		kh_die("open", "/proc/self/oom_score_adj");
	if (write(fd, buf, (size_t)len) != len)
		kh_die("write", "/proc/self/oom_score_adj");
	if (close(fd) != 0)
		kh_die("close", "/proc/self/oom_score_adj");
}

/* A write fault on every page of mem from..to (byte offsets), each page a
 * non-zero value of its own, so that all of it is resident and none is
 * shared with the zero page or another. */
static inline void kh_touch(unsigned char *mem, size_t from, size_t to, size_t page)
{
	for (size_t off = from; off < to; off += page)
		mem[off] = (unsigned char)(1 + (off / page) % 251);
}
