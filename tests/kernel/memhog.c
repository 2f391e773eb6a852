/* memhog - hold a fixed amount of resident anonymous memory.
 *
 * Usage: memhog MIB ADJ
 *
 * Allocates MIB MiB of anonymous memory, writes to every page so that all of
 * it is resident, sets /proc/self/oom_score_adj to ADJ, prints "ready <pid>"
 * on stdout and then sleeps until killed.  Used by the real-kernel tests as a
 * victim with a known size and a known oom_score_adj.
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

static void die(const char *what)
{
	fprintf(stderr, "memhog: %s: %s\n", what, strerror(errno));
	exit(1);
}

static long parse_long(const char *s, long lo, long hi, const char *name)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi) {
		fprintf(stderr, "memhog: bad %s '%s' (want %ld..%ld)\n",
			name, s, lo, hi);
		exit(2);
	}
	return v;
}

static void set_oom_score_adj(long adj)
{
	char buf[32];
	int fd, len;
	ssize_t n;

	len = snprintf(buf, sizeof(buf), "%ld\n", adj);
	fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		die("open /proc/self/oom_score_adj");
	n = write(fd, buf, (size_t)len);
	if (n != len)
		die("write /proc/self/oom_score_adj");
	if (close(fd) != 0)
		die("close /proc/self/oom_score_adj");
}

int main(int argc, char **argv)
{
	long mib, adj, page;
	size_t size, off;
	unsigned char *mem;

	if (argc != 3) {
		fprintf(stderr, "usage: memhog MIB ADJ\n");
		return 2;
	}
	mib = parse_long(argv[1], 1, 65536, "MIB");
	adj = parse_long(argv[2], -1000, 1000, "ADJ");

	page = sysconf(_SC_PAGESIZE);
	if (page <= 0)
		page = 4096;
	size = (size_t)mib << 20;

	mem = mmap(NULL, size, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		die("mmap");
	/* A write fault on every page: each one gets its own non-zero page. */
	for (off = 0; off < size; off += (size_t)page)
		mem[off] = (unsigned char)(1 + (off / (size_t)page) % 251);

	set_oom_score_adj(adj);

	if (printf("ready %ld\n", (long)getpid()) < 0 || fflush(stdout) != 0)
		die("stdout");

	for (;;)
		pause();
}
