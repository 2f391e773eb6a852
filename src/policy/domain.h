/* SPDX-License-Identifier: MIT */
/* domain: the size of the OOM domain a tier protects -- the memory that the
 * kernel's OOM killer weighs oom_score_adj against (victim_badness_kb).
 * System-wide that is RAM + swap; in a memory cgroup with a limit it is the
 * limit plus the swap the group may use. The parsers are pure; domain_read
 * goes through the root fd. */
#pragma once

#include <stdint.h>

/* /proc/meminfo: MemTotal and SwapTotal in kB (SwapTotal 0 when absent).
 * -EINVAL without MemTotal. */
int domain_parse_meminfo(const char *text, uint64_t *mem_kb, uint64_t *swap_kb);

/* A memory cgroup's domain in kB: limit_bytes plus the swap it may use, at
 * most swap_total_kb (swap_limit_bytes UINT64_MAX: no swap limit). */
uint64_t domain_cgroup_kb(uint64_t limit_bytes, uint64_t swap_limit_bytes, uint64_t swap_total_kb);

/* The domain of memory_cgroup (a cgroup directory: v2 memory.max and
 * memory.swap.max, or v1 memory.limit_in_bytes, memory.memsw.limit_in_bytes
 * and memory.swappiness), or of the system when memory_cgroup is "" or the
 * group has no limit. Two or three small reads; allocates nothing. 0 or
 * -errno. */
int domain_read(int rootfd, const char *memory_cgroup, uint64_t *kb);
