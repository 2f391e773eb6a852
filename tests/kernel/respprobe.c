/* SPDX-License-Identifier: MIT */
/* respprobe - how frozen a machine feels: the responsiveness probe of the
 * head-to-head benchmark (bench/peers, issue 27 item 1).
 *
 * Usage: respprobe ANON_MIB FILE FILE_MIB ADJ [SECS]
 *
 * Holds ANON_MIB MiB of anonymous memory and a shared read-only mapping of
 * FILE (created with FILE_MIB MiB of non-zero data when its size differs),
 * sets its own oom_score_adj to ADJ, prints "ready <pid>", and then every
 * 20 ms touches one byte of every page of both -- as a user's terminal, its
 * shell and its libraries would be touched by a keystroke. A round is late
 * by the time from when it was due to when its last touch was done; a round
 * that overran its successors' slots is followed by the next slot still in
 * the future (missed slots are not counted twice).
 *
 * On SIGTERM or SIGINT, or after SECS s, it prints one line on stdout and
 * exits 0:
 *   respprobe rounds=N freeze_ms=F worst_ms=W late100=K secs=S
 * freeze_ms is the sum over rounds of the lateness beyond 100 ms, worst_ms
 * the largest lateness, late100 the rounds more than 100 ms late. Each round
 * more than 100 ms late is also logged on stderr as "late T_S MS" (T_S:
 * seconds since ready) so that a freeze can be placed on a timeline.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define KH_NAME "respprobe"
#include "khelper.h"

#define PERIOD_NS 20000000LL	/* a round every 20 ms */
#define FREEZE_NS 100000000LL	/* later than 100 ms: the user feels it */

static volatile sig_atomic_t stop;
static volatile unsigned long sink;

static void on_stop(int sig)
{
	(void)sig;
	stop = 1;
}

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* FILE with exactly MIB MiB of non-zero data (rewritten when its size
 * differs), mapped shared and read-only */
static const unsigned char *map_file(const char *path, long mib, size_t *len)
{
	struct stat st;
	size_t size = (size_t)mib << 20;
	unsigned char buf[65536];
	uint64_t s = 0x9e3779b97f4a7c15ULL;
	void *map;
	size_t done, i;
	int fd;

	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		kh_die("open", path);
	if (fstat(fd, &st) != 0)
		kh_die("fstat", path);
	if ((size_t)st.st_size != size) {
		if (ftruncate(fd, 0) != 0)
			kh_die("ftruncate", path);
		for (done = 0; done < size; done += sizeof(buf)) {
			for (i = 0; i < sizeof(buf); i++) {
				s ^= s << 13;
				s ^= s >> 7;
				s ^= s << 17;
				buf[i] = (unsigned char)(s | 1);
			}
			if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
				kh_die("write", path);
		}
	}
	map = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		kh_die("mmap", path);
	close(fd);
	*len = size;
	return map;
}

int main(int argc, char **argv)
{
	long anon_mib, file_mib, adj, secs = 0, page;
	size_t anon_len, file_len, off;
	unsigned char *anon;
	const unsigned char *file;
	long long t0, due, end, late, worst = 0, freeze = 0, deadline = 0;
	unsigned long rounds = 0, late100 = 0, sum = 0;
	struct sigaction sa;

	if (argc != 5 && argc != 6) {
		fprintf(stderr, "usage: respprobe ANON_MIB FILE FILE_MIB ADJ [SECS]\n");
		return 2;
	}
	anon_mib = kh_parse_long(argv[1], 1, 4096, "ANON_MIB");
	file_mib = kh_parse_long(argv[3], 1, 4096, "FILE_MIB");
	adj = kh_parse_long(argv[4], -1000, 1000, "ADJ");
	if (argc == 6)
		secs = kh_parse_long(argv[5], 1, 86400, "SECS");
	page = sysconf(_SC_PAGESIZE);
	if (page <= 0)
		page = 4096;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	if (sigaction(SIGTERM, &sa, NULL) != 0 || sigaction(SIGINT, &sa, NULL) != 0)
		kh_die("sigaction", NULL);

	anon_len = (size_t)anon_mib << 20;
	anon = mmap(NULL, anon_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (anon == MAP_FAILED)
		kh_die("mmap", NULL);
	kh_touch(anon, 0, anon_len, (size_t)page);
	file = map_file(argv[2], file_mib, &file_len);
	kh_set_oom_score_adj(adj);

	if (printf("ready %ld\n", (long)getpid()) < 0 || fflush(stdout) != 0)
		kh_die("stdout", NULL);

	t0 = now_ns();
	if (secs > 0)
		deadline = t0 + secs * 1000000000LL;
	due = t0;
	while (!stop) {
		for (off = 0; off < anon_len; off += (size_t)page)
			anon[off]++;
		for (off = 0; off < file_len; off += (size_t)page)
			sum += file[off];
		sink = sum;
		end = now_ns();
		late = end - due;
		rounds++;
		if (late > worst)
			worst = late;
		if (late > FREEZE_NS) {
			freeze += late - FREEZE_NS;
			late100++;
			fprintf(stderr, "late %.2f %lld\n", (double)(end - t0) / 1e9, late / 1000000);
		}
		if (deadline && end >= deadline)
			break;
		/* the next slot still ahead: missed ones are not counted again */
		due += PERIOD_NS;
		if (due <= end)
			due += ((end - due) / PERIOD_NS + 1) * PERIOD_NS;
		{
			struct timespec ts = { (time_t)(due / 1000000000LL), (long)(due % 1000000000LL) };

			while (!stop && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
				;
		}
	}
	printf("respprobe rounds=%lu freeze_ms=%lld worst_ms=%lld late100=%lu secs=%.1f\n", rounds,
	       freeze / 1000000, worst / 1000000, late100, (double)(now_ns() - t0) / 1e9);
	return 0;
}
