/* anongrow - grow resident anonymous memory at a steady rate until killed.
 *
 * Usage: anongrow RATE_MIB_PER_S ADJ [MAX_MIB]
 *
 * Sets /proc/self/oom_score_adj to ADJ, prints "ready <pid>", then every
 * 1/RATE s allocates one more MiB (malloc) and writes to every page of it,
 * so that the process's resident anonymous memory grows by RATE MiB/s, and
 * prints "grown <MiB> <ms since ready>" after each MiB.  With no swap this
 * leaves the kernel nothing to reclaim: PSI sees little or no stall before
 * the memory limit is reached.  At MAX_MIB (default 65536) it stops growing
 * and sleeps until killed.  The allocations are never freed.
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

	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: anongrow RATE_MIB_PER_S ADJ [MAX_MIB]\n");
		return 2;
	}
	rate = kh_parse_long(argv[1], 1, 4096, "RATE_MIB_PER_S");
	adj = kh_parse_long(argv[2], -1000, 1000, "ADJ");
	if (argc == 4)
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
		for (off = 0; off < MIB; off += (size_t)page)
			p[off] = (unsigned char)(1 + (off / (size_t)page) % 251);
		printf("grown %ld %lld\n", grown, (now_ns() - t0) / 1000000LL);
	}
	for (;;)
		pause();
}
