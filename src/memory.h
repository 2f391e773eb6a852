/* memory: how much memory is available -- system-wide (MemAvailable) or in a
 * memory cgroup (its limit minus its usage, counting reclaimable file pages,
 * see memory_reclaimable) -- for the min_available gate and the low_available last
 * resort. Parsers are pure; readers go through the root fd. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "config.h"

struct mem_info {
	uint64_t total_bytes;     /* MemTotal, or the cgroup's limit */
	uint64_t available_bytes; /* MemAvailable, or limit - usage + reclaimable file */
	bool cgroup;
};

/* What reclaim can take back at once from a memory cgroup, from the text of
 * its memory.stat (v2 names, or v1's total_* ones): every inactive file page,
 * and the active file pages that are neither mapped, dirty nor under
 * writeback (page cache read once more, which a write-then-read stream
 * leaves behind). Mapped file pages on the active list are a working set. */
uint64_t memory_reclaimable(const char *stat, bool v2);

/* /proc/meminfo: MemTotal and MemAvailable (in bytes). */
int memory_parse_meminfo(const char *text, uint64_t *total, uint64_t *available);
/* A "key value" line of memory.stat ("inactive_file 123"); 0 if absent. */
uint64_t memory_stat_value(const char *text, const char *key);

int memory_read_system(int rootfd, struct mem_info *mi);
/* dir is a cgroup directory: cgroup2 (memory.max, memory.current) or v1
 * (memory.limit_in_bytes, memory.usage_in_bytes). -ENODATA if it has no limit. */
int memory_read_cgroup(int rootfd, const char *dir, struct mem_info *mi);

/* The cgroup dir, else the system. */
int memory_read(int rootfd, const char *cgroup_dir, struct mem_info *mi);

/* An amount (bytes or a percentage of total) in bytes. */
uint64_t memory_amount_bytes(const struct mem_amount *a, uint64_t total);

/* How long until the next check of a low_available rule: the time the
 * remaining headroom above the threshold lasts at 1 GiB/s of growth,
 * between 50 ms and 5 s. */
uint64_t memory_check_period_us(uint64_t available, uint64_t threshold);
