/* domain: the OOM domain's size for the badness order, the way the kernel
 * measures it (mm/oom_kill.c: totalpages; memcontrol.c: a group's max plus
 * the swap it may use, none when its swappiness is 0 on v1). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "domain.h"
#include "fileio.h"

/* v1 says "no limit" with a huge number rounded to the page size */
#define V1_UNLIMITED (1ULL << 62)

static int meminfo_value(const char *text, const char *key, uint64_t *out)
{
	size_t n = strlen(key);
	const char *s = text;

	while (s && *s) {
		if (strncmp(s, key, n) == 0 && s[n] == ':') {
			unsigned long long v;
			char *end;

			errno = 0;
			v = strtoull(s + n + 1, &end, 10);
			if (end == s + n + 1 || errno)
				return -EINVAL;
			*out = v;
			return 0;
		}
		s = strchr(s, '\n');
		if (s)
			s++;
	}
	return -ENOENT;
}

int domain_parse_meminfo(const char *text, uint64_t *mem_kb, uint64_t *swap_kb)
{
	int r = meminfo_value(text, "MemTotal", mem_kb);

	if (r < 0)
		return -EINVAL;
	r = meminfo_value(text, "SwapTotal", swap_kb);
	if (r == -ENOENT) {
		*swap_kb = 0;
		r = 0;
	}
	return r;
}

uint64_t domain_cgroup_kb(uint64_t limit_bytes, uint64_t swap_limit_bytes, uint64_t swap_total_kb)
{
	uint64_t swap_kb = swap_limit_bytes / 1024;

	if (swap_kb > swap_total_kb)
		swap_kb = swap_total_kb;
	return limit_bytes / 1024 + swap_kb;
}

/* One number (or "max": *out = UINT64_MAX) from dir/name. */
static int read_limit(int rootfd, const char *dir, const char *name, uint64_t *out)
{
	char path[CONFIG_PATH_MAX + 64], buf[64];
	unsigned long long v;
	ssize_t n;
	char *end;

	snprintf(path, sizeof(path), "%s/%s", dir + (*dir == '/'), name);
	n = read_file_at(rootfd, path, buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	if (strncmp(buf, "max", 3) == 0) {
		*out = UINT64_MAX;
		return 0;
	}
	errno = 0;
	v = strtoull(buf, &end, 10);
	if (end == buf || errno)
		return -EINVAL;
	*out = v;
	return 0;
}

/* The group's domain; -ENODATA when it has no limit. */
static int read_cgroup(int rootfd, const char *dir, uint64_t swap_total_kb, uint64_t *kb)
{
	uint64_t limit, swap = UINT64_MAX, memsw, swappiness;
	int r = read_limit(rootfd, dir, "memory.max", &limit);

	if (r == 0) {
		if (limit == UINT64_MAX)
			return -ENODATA;
		/* absent without swap accounting: then the kernel counts all of swap */
		if (read_limit(rootfd, dir, "memory.swap.max", &swap) < 0)
			swap = UINT64_MAX;
		*kb = domain_cgroup_kb(limit, swap, swap_total_kb);
		return 0;
	}
	if (r != -ENOENT)
		return r;
	r = read_limit(rootfd, dir, "memory.limit_in_bytes", &limit);
	if (r < 0)
		return r;
	if (limit >= V1_UNLIMITED)
		return -ENODATA;
	if (read_limit(rootfd, dir, "memory.swappiness", &swappiness) == 0 && swappiness == 0)
		swap = 0;
	else if (read_limit(rootfd, dir, "memory.memsw.limit_in_bytes", &memsw) == 0)
		swap = memsw > limit ? memsw - limit : 0;
	*kb = domain_cgroup_kb(limit, swap, swap_total_kb);
	return 0;
}

int domain_read(int rootfd, const char *memory_cgroup, uint64_t *kb)
{
	char buf[8192];
	uint64_t mem_kb, swap_kb;
	ssize_t n = read_file_at(rootfd, "proc/meminfo", buf, sizeof(buf));
	int r;

	if (n == -EFBIG)
		n = 0; /* MemTotal comes first, SwapTotal a few lines later: parse what fit */
	if (n < 0)
		return (int)n;
	buf[sizeof(buf) - 1] = '\0';
	r = domain_parse_meminfo(buf, &mem_kb, &swap_kb);
	if (r < 0)
		return r;
	if (memory_cgroup && *memory_cgroup) {
		r = read_cgroup(rootfd, memory_cgroup, swap_kb, kb);
		if (r != -ENODATA)
			return r;
	}
	*kb = mem_kb + swap_kb;
	return 0;
}
