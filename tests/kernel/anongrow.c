/* SPDX-License-Identifier: MIT */
/* anongrow - grow resident anonymous memory at a steady rate until killed.
 *
 * Usage: anongrow RATE_MIB_PER_S ADJ [MAX_MIB [FILL]]
 *
 * Sets /proc/self/oom_score_adj to ADJ, prints "ready <pid>", then every
 * 1/RATE s allocates one more MiB (malloc) and writes to every page of it,
 * so that the process's resident anonymous memory grows by RATE MiB/s, and
 * prints "grown <MiB> <ms since ready>" after each MiB.  With no swap this
 * leaves the kernel nothing to reclaim: PSI sees little or no stall before
 * the memory limit is reached.  At MAX_MIB (default 65536) it stops growing
 * and sleeps until killed.  The allocations are never freed.
 *
 * FILL is how pages are written: "sparse" (the default) writes one byte
 * per page, which zram compresses to almost nothing; "half" fills the
 * first half of each page with pseudo-random bytes and leaves the rest
 * zero, which compresses about 2:1 -- the ratio typical data gets in zram,
 * so that a zram swap device costs RAM as it would in real use.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define KH_NAME "anongrow"
#include "khelper.h"

#define MIB (1UL << 20)

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long rate, adj, max = 65536, page, grown;
	long long t0, step, next;
	unsigned long long seed = 0x9e3779b97f4a7c15ULL;
	int half = 0;

	if (argc < 3 || argc > 5) {
		fprintf(stderr, "usage: anongrow RATE_MIB_PER_S ADJ [MAX_MIB [sparse|half]]\n");
		return 2;
	}
	if (argc == 5) {
		if (strcmp(argv[4], "half") == 0) {
			half = 1;
		} else if (strcmp(argv[4], "sparse") != 0) {
			fprintf(stderr, "anongrow: FILL must be sparse or half, not \"%s\"\n", argv[4]);
			return 2;
		}
	}
	rate = kh_parse_long(argv[1], 1, 4096, "RATE_MIB_PER_S");
	adj = kh_parse_long(argv[2], -1000, 1000, "ADJ");
	if (argc >= 4)
		max = kh_parse_long(argv[3], 1, 65536, "MAX_MIB");
	page = sysconf(_SC_PAGESIZE);
	if (page <= 0)
		page = 4096;

	kh_set_oom_score_adj(adj);
	/* Line-buffered: the last line tells how far it got when it died. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (printf("ready %ld\n", (long)getpid()) < 0)
		kh_die("stdout", NULL);

	step = 1000000000LL / rate;
	t0 = now_ns();
	next = t0;
	for (grown = 1; grown <= max; grown++) {
		unsigned char *p;
		struct timespec ts;
		size_t off;

		next += step;
		ts.tv_sec = (time_t)(next / 1000000000LL);
		ts.tv_nsec = (long)(next % 1000000000LL);
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
		p = malloc(MIB);
		if (p == NULL)
			kh_die("malloc", NULL);
		/* A write fault on every page, non-zero so no page is shared. */
		for (off = 0; off < MIB; off += (size_t)page) {
			p[off] = (unsigned char)(1 + (off / (size_t)page) % 251);
			if (half) {
				size_t i;

				/* xorshift64: incompressible bytes, 8 at a time */
				for (i = 0; i + 8 <= (size_t)page / 2; i += 8) {
					seed ^= seed << 13;
					seed ^= seed >> 7;
					seed ^= seed << 17;
					memcpy(p + off + i, &seed, 8);
				}
			}
		}
		printf("grown %ld %lld\n", grown, (now_ns() - t0) / 1000000LL);
	}
	for (;;)
		pause();
}
