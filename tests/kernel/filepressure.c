/* SPDX-License-Identifier: MIT */
/* filepressure - create real memory pressure from a file-backed working set.
 *
 * Usage: filepressure FILE MIB [ADJ]
 *
 * Makes sure FILE holds MIB MiB of pseudo-random (non-zero, incompressible)
 * data, creating or rewriting it if its size differs; sets its own
 * oom_score_adj to ADJ if given; drops the file's page cache; prints
 * "ready <pid>" and then reads through the whole file forever, touching
 * every page of a shared read-only mapping of it.
 *
 * Run inside a memory cgroup whose limit is well below MIB: every pass has to
 * evict pages that the next pass needs again, so the reader keeps refaulting
 * pages of its own working set and reclaiming, which the kernel accounts as
 * memory stall (PSI "some", and "full" when nothing else in the group runs).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define KH_NAME "filepressure"
#include "khelper.h"

#define CHUNK (1u << 20)	/* write unit: 1 MiB */
#define SYNC_EVERY 16		/* while creating: flush + drop every 16 MiB */

static volatile unsigned long sink;

/* xorshift64*: cheap pseudo-random data that no filesystem can compress or
 * treat as a hole. */
static uint64_t rng_next(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * UINT64_C(2685821657736338717);
}

static void write_all(int fd, const unsigned char *buf, size_t len,
		      const char *path)
{
	while (len > 0) {
		ssize_t n = write(fd, buf, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			kh_die("write", path);
		}
		buf += n;
		len -= (size_t)n;
	}
}

static void create_file(const char *path, long mib, unsigned char *buf)
{
	uint64_t seed = UINT64_C(0x9e3779b97f4a7c15) ^ (uint64_t)getpid();
	int fd;
	long i;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		kh_die("create", path);
	for (i = 0; i < mib; i++) {
		uint64_t *w = (uint64_t *)(void *)buf;
		size_t j;

		for (j = 0; j < CHUNK / sizeof(*w); j++)
			w[j] = rng_next(&seed) | 1;	/* never a zero word */
		write_all(fd, buf, CHUNK, path);
		/* Keep dirty page cache small: this may run inside the small
		 * cgroup the pressure is meant for. */
		if ((i + 1) % SYNC_EVERY == 0 || i + 1 == mib) {
			if (fdatasync(fd) != 0)
				kh_die("fdatasync", path);
			(void)posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
		}
	}
	if (close(fd) != 0)
		kh_die("close", path);
}

int main(int argc, char **argv)
{
	const char *path;
	unsigned char *buf;
	struct stat st;
	long mib, adj = 0;
	off_t size;
	const volatile unsigned char *map;
	long page;
	int fd, err;

	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: filepressure FILE MIB [ADJ]\n");
		return 2;
	}
	path = argv[1];
	mib = kh_parse_long(argv[2], 1, 1L << 20, "MIB");
	size = (off_t)mib << 20;
	if (argc == 4)
		adj = kh_parse_long(argv[3], -1000, 1000, "ADJ");

	page = sysconf(_SC_PAGESIZE);
	if (page <= 0)
		page = 4096;

	buf = malloc(CHUNK);
	if (buf == NULL)
		kh_die("malloc", NULL);

	if (stat(path, &st) != 0) {
		if (errno != ENOENT)
			kh_die("stat", path);
		create_file(path, mib, buf);
	} else if (!S_ISREG(st.st_mode)) {
		fprintf(stderr, "filepressure: %s: not a regular file\n", path);
		free(buf);
		return 1;
	} else if (st.st_size != size) {
		create_file(path, mib, buf);
	}

	if (argc == 4)
		kh_set_oom_score_adj(adj);

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		kh_die("open", path);
	free(buf);

	/* Start cold: nothing of the file in the page cache. */
	err = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	if (err != 0) {
		errno = err;
		kh_die("posix_fadvise", path);
	}

	/* mmap rather than read(): measured on Linux 6.18 (128 MiB group,
	 * 300 MiB file, 8 MiB disk readahead) page faults on the mapping gave
	 * ~20 % "some" memory stall and a "some 100ms 2s" trigger event every
	 * 2-4 s, a read() loop only ~2 % stall and no events. */
	map = mmap(NULL, (size_t)size, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		kh_die("mmap", path);

	if (printf("ready %ld\n", (long)getpid()) < 0 || fflush(stdout) != 0)
		kh_die("stdout", NULL);

	for (;;) {
		/* Fault in every page of the file, in order, forever. */
		for (size_t off = 0; off < (size_t)size; off += (size_t)page)
			sink += map[off];
	}
}
