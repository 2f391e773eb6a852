/* SPDX-License-Identifier: MIT */
/* memhog - hold a fixed amount of resident anonymous memory.
 *
 * Usage: memhog MIB ADJ [pageout | term=MS | active=MS | leave=PCT]
 *
 * Allocates MIB MiB of anonymous memory, writes to every page so that all of
 * it is resident, sets /proc/self/oom_score_adj to ADJ, prints "ready <pid>"
 * on stdout and then sleeps until killed.  Used by the real-kernel tests as a
 * victim with a known size and a known oom_score_adj.
 *
 * With "pageout" it then asks the kernel to page all of it out
 * (MADV_PAGEOUT, Linux 5.4): with swap on, the memory moves to swap and
 * VmRSS drops to a few hundred kB -- a hog that looks small by RSS alone.
 *
 * With "term=MS" SIGTERM is a graceful shutdown: it exits MS ms after it, as
 * a service that saves its state would (a kill that takes a while).
 *
 * With "active=MS" it re-touches (reads and writes) one byte of every page
 * every MS ms instead of sleeping: an application that keeps using its
 * memory, so that pages swapped out under pressure are read back in
 * afterwards (the recovery the head-to-head benchmark, bench/peers, sees).
 *
 * With "leave=PCT" it fills memory until PCT % of it is available: MIB is
 * at most what it fills, written 2 MiB at a time while /proc/meminfo's
 * MemAvailable stays above PCT % of MemTotal after the next step; when it
 * would not, it waits 100 ms and reads again, and stops once a second has
 * passed without room for a step. It says on stderr how much it filled.
 * (A size computed from one reading of MemAvailable before the fill ends
 * anywhere within ~1 % of the machine of its aim: page tables, the
 * kernel's own allocations and what the others did meanwhile.)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif

#define KH_NAME "memhog"
#include "khelper.h"

#define LEAVE_STEP ((size_t)2 << 20)
#define LEAVE_WAIT_MS 100
#define LEAVE_SETTLE_MS 1000

static volatile sig_atomic_t terminated;

/* MemTotal and MemAvailable (kB) from /proc/meminfo */
static void meminfo(long *total_kb, long *avail_kb)
{
	char line[256];
	FILE *f = fopen("/proc/meminfo", "re");

	if (!f)
		kh_die("open", "/proc/meminfo");
	*total_kb = *avail_kb = -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "MemTotal: %ld kB", total_kb) == 1)
			continue;
		(void)sscanf(line, "MemAvailable: %ld kB", avail_kb);
	}
	fclose(f);
	if (*total_kb <= 0 || *avail_kb < 0)
		kh_die("no MemTotal or MemAvailable in", "/proc/meminfo");
}

/* leave=PCT: fill up to size, LEAVE_STEP at a time, while MemAvailable
 * keeps pct % of MemTotal after the step; the bytes filled */
static size_t fill_leaving(unsigned char *mem, size_t size, size_t page, long pct)
{
	const struct timespec wait = { 0, LEAVE_WAIT_MS * 1000000L };
	size_t off = 0;
	long total, avail, waited = 0;

	while (off < size && waited < LEAVE_SETTLE_MS) {
		size_t step = size - off < LEAVE_STEP ? size - off : LEAVE_STEP;

		meminfo(&total, &avail);
		if (avail - (long)(step >> 10) < total / 100 * pct) {
			nanosleep(&wait, NULL);
			waited += LEAVE_WAIT_MS;
			continue;
		}
		kh_touch(mem, off, off + step, page);
		off += step;
		waited = 0;
	}
	return off;
}

static void on_term(int sig)
{
	(void)sig;
	terminated = 1;
}

/* term=MS: SIGTERM ends the process MS ms after it comes */
static long term_grace(int argc, char **argv)
{
	struct sigaction sa;
	long ms;

	if (argc != 4 || strncmp(argv[3], "term=", 5) != 0)
		return -1;
	ms = kh_parse_long(argv[3] + 5, 0, 60000, "term=MS");
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_term;
	if (sigaction(SIGTERM, &sa, NULL) != 0)
		kh_die("sigaction", NULL);
	return ms;
}

int main(int argc, char **argv)
{
	long mib, adj, page, grace, active = 0, leave = -1;
	size_t size, off;
	unsigned char *mem;

	if (argc != 3 && !(argc == 4 && (strcmp(argv[3], "pageout") == 0 || strncmp(argv[3], "term=", 5) == 0 ||
					 strncmp(argv[3], "active=", 7) == 0 || strncmp(argv[3], "leave=", 6) == 0))) {
		fprintf(stderr, "usage: memhog MIB ADJ [pageout | term=MS | active=MS | leave=PCT]\n");
		return 2;
	}
	if (argc == 4 && strncmp(argv[3], "active=", 7) == 0)
		active = kh_parse_long(argv[3] + 7, 1, 3600000, "active=MS");
	if (argc == 4 && strncmp(argv[3], "leave=", 6) == 0)
		leave = kh_parse_long(argv[3] + 6, 0, 99, "leave=PCT");
	grace = term_grace(argc, argv);
	mib = kh_parse_long(argv[1], 1, 65536, "MIB");
	adj = kh_parse_long(argv[2], -1000, 1000, "ADJ");

	page = sysconf(_SC_PAGESIZE);
	if (page <= 0)
		page = 4096;
	size = (size_t)mib << 20;

	mem = mmap(NULL, size, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		kh_die("mmap", NULL);
	if (leave >= 0) {
		size = fill_leaving(mem, size, (size_t)page, leave);
		fprintf(stderr, "memhog: filled %zu MiB, leaving %ld %% of MemTotal available\n", size >> 20, leave);
	} else {
		kh_touch(mem, 0, size, (size_t)page);
	}

	if (argc == 4 && grace < 0 && !active && leave < 0 && madvise(mem, size, MADV_PAGEOUT) != 0)
		kh_die("madvise(MADV_PAGEOUT)", NULL);

	kh_set_oom_score_adj(adj);

	if (printf("ready %ld\n", (long)getpid()) < 0 || fflush(stdout) != 0)
		kh_die("stdout", NULL);

	while (!terminated && active) {
		struct timespec ts = { active / 1000, (active % 1000) * 1000000L };

		nanosleep(&ts, NULL);
		for (off = 0; off < size; off += (size_t)page)
			mem[off]++;
	}
	while (!terminated)
		pause();
	{
		struct timespec ts = { grace / 1000, (grace % 1000) * 1000000L };

		while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
			;
	}
	return 0;
}
