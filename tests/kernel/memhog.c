/* memhog - hold a fixed amount of resident anonymous memory.
 *
 * Usage: memhog MIB ADJ [pageout]
 *
 * Allocates MIB MiB of anonymous memory, writes to every page so that all of
 * it is resident, sets /proc/self/oom_score_adj to ADJ, prints "ready <pid>"
 * on stdout and then sleeps until killed.  Used by the real-kernel tests as a
 * victim with a known size and a known oom_score_adj.
 *
 * With "pageout" it then asks the kernel to page all of it out
 * (MADV_PAGEOUT, Linux 5.4): with swap on, the memory moves to swap and
 * VmRSS drops to a few hundred kB -- a hog that looks small by RSS alone.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif

#define KH_NAME "memhog"
#include "khelper.h"

int main(int argc, char **argv)
{
	long mib, adj, page;
	size_t size, off;
	unsigned char *mem;

	if (argc != 3 && !(argc == 4 && strcmp(argv[3], "pageout") == 0)) {
		fprintf(stderr, "usage: memhog MIB ADJ [pageout]\n");
		return 2;
	}
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
	/* A write fault on every page: each one gets its own non-zero page. */
	for (off = 0; off < size; off += (size_t)page)
		mem[off] = (unsigned char)(1 + (off / (size_t)page) % 251);

	if (argc == 4 && madvise(mem, size, MADV_PAGEOUT) != 0)
		kh_die("madvise(MADV_PAGEOUT)", NULL);

	kh_set_oom_score_adj(adj);

	if (printf("ready %ld\n", (long)getpid()) < 0 || fflush(stdout) != 0)
		kh_die("stdout", NULL);

	for (;;)
		pause();
}
