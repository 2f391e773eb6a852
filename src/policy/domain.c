/* SPDX-License-Identifier: MIT */
/* domain: the OOM domain's size for the badness order, the way the kernel
 * measures it (mm/oom_kill.c: totalpages; memcontrol.c: a group's max plus
 * the swap it may use, none when its swappiness is 0 on v1). */
#include <errno.h>

#include "lines.h"
#include "domain.h"
#include "fileio.h"
#include "memory.h"

int domain_parse_meminfo(const char *text, uint64_t *mem_kb, uint64_t *swap_kb)
{
	int r = lines_value(text, "MemTotal", mem_kb);

	if (r != 1)
		return -EINVAL;
	r = lines_value(text, "SwapTotal", swap_kb);
	if (r == 0)
		*swap_kb = 0;
	return r < 0 ? r : 0;
}

uint64_t domain_cgroup_kb(uint64_t limit_bytes, uint64_t swap_limit_bytes, uint64_t swap_total_kb)
{
	uint64_t swap_kb = swap_limit_bytes / 1024;

	if (swap_kb > swap_total_kb)
		swap_kb = swap_total_kb;
	return limit_bytes / 1024 + swap_kb;
}

/* The group's domain; -ENODATA when it has no limit. */
static int read_cgroup(int rootfd, const char *dir, uint64_t swap_total_kb, uint64_t *kb)
{
	uint64_t limit, swap = UINT64_MAX, memsw, swappiness;
	int r = memory_read_value(rootfd, dir, "memory.max", true, &limit);

	if (r == 0) {
		if (limit == UINT64_MAX)
			return -ENODATA;
		/* absent without swap accounting: then the kernel counts all of swap */
		if (memory_read_value(rootfd, dir, "memory.swap.max", true, &swap) < 0)
			swap = UINT64_MAX;
		*kb = domain_cgroup_kb(limit, swap, swap_total_kb);
		return 0;
	}
	if (r != -ENOENT)
		return r;
	r = memory_read_value(rootfd, dir, "memory.limit_in_bytes", false, &limit);
	if (r < 0)
		return r;
	if (limit >= MEMORY_V1_UNLIMITED)
		return -ENODATA;
	if (memory_read_value(rootfd, dir, "memory.swappiness", false, &swappiness) == 0 && swappiness == 0)
		swap = 0;
	else if (memory_read_value(rootfd, dir, "memory.memsw.limit_in_bytes", false, &memsw) == 0)
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
