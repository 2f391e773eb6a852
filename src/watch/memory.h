/* SPDX-License-Identifier: MIT */
/* memory: how much memory is available -- system-wide (MemAvailable) or in a
 * memory cgroup (its limit minus its usage, counting reclaimable file pages,
 * see memory_reclaimable) -- for the min_available gate and the low_available last
 * resort; and how much swap the same domain can still use (SwapFree, or the
 * group's swap limit minus its swap usage, zram devices counted by what
 * they can still store in the RAM they may take), for low_swap. Parsers
 * are pure; readers go through the root fd. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "config.h"

struct mem_info {
	uint64_t total_bytes;     /* MemTotal, or the cgroup's limit */
	uint64_t available_bytes; /* MemAvailable, or limit - usage + reclaimable file */
	uint64_t swap_total_bytes; /* swap the domain may use; 0 = none (or not for this group) */
	uint64_t swap_free_bytes;  /* what it can still swap out (<= swap_total_bytes) */
	/* Anonymous and shmem pages in RAM, which reclaim cannot take back
	 * without swap (AnonPages + Shmem; memory.stat anon + shmem, v1
	 * total_rss + total_shmem); anon_known is false if it could not be read. */
	uint64_t anon_bytes;
	bool anon_known;
	bool cgroup;
	/* What the domain's processes hold, wherever it is: the anonymous LRU
	 * lists (and the unevictable one) plus the swap in use, less the swap
	 * cache, so that a page in both is counted once (memory_footprint).
	 * Swapping out, reading back in and mapping a page from the swap cache
	 * leave it as it is; only an allocation makes it grow. Known with
	 * anon_known. */
	uint64_t footprint_bytes;
	/* Memory nobody uses: MemFree, or the group's limit minus its usage. */
	uint64_t unused_bytes;
	/* Pages the kernel reclaimed (evicted or swapped out) so far, in bytes:
	 * /proc/vmstat's pgsteal counters, or a v2 group's memory.stat pgsteal.
	 * reclaim_known is false for a v1 group (no such counter) and, from
	 * memory_read, for the system (memory_read_evidence reads it). */
	uint64_t reclaimed_bytes;
	bool reclaim_known;
	/* Pages read back in after reclaim took them (workingset refaults) so
	 * far: of files, and of anonymous memory (from swap). refault_known is
	 * false where the kernel does not split them (before 5.9) and, from
	 * memory_read, for the system (memory_read_evidence reads them). */
	uint64_t refault_file;
	uint64_t refault_anon;
	bool refault_known;
};

/* The first four fields of /sys/block/zramN/mm_stat, in bytes. */
struct zram_mm {
	uint64_t orig_data;  /* data stored, uncompressed */
	uint64_t compr_data; /* the same, compressed */
	uint64_t mem_used;   /* RAM the device takes, allocator overhead included */
	uint64_t mem_limit;  /* 0 = no limit */
};

/* A line of /proc/swaps. name is cut at 63 bytes (enough to tell /dev/zramN). */
struct swap_entry {
	char name[64];
	uint64_t size_bytes, used_bytes;
};

/* What reclaim can take back at once from a memory cgroup, from the text of
 * its memory.stat (v2 names, or v1's total_* ones): every inactive file page,
 * and the active file pages that are neither mapped, dirty nor under
 * writeback (page cache read once more, which a write-then-read stream
 * leaves behind). Mapped file pages on the active list are a working set.
 * With mglru (the multi-gen LRU on: memory_mglru) there are no such lists:
 * memory.stat calls the pages of the two youngest generations active, so a
 * file being thrashed -- every page faulted in a moment ago, and mapped --
 * looks like a working set while reclaim takes it freely (a 128 MiB group
 * on 6.12 read as 3 MiB available). Every clean file page then counts, as
 * the kernel's MemAvailable counts page cache. */
uint64_t memory_reclaimable(const char *stat, bool v2, bool mglru);
/* Whether the multi-gen LRU is on (/sys/kernel/mm/lru_gen/enabled, its
 * first bit), under rootfd: false where the file is missing (no
 * CONFIG_LRU_GEN) or unreadable. */
bool memory_mglru(int rootfd);

/* /proc/meminfo: MemTotal and MemAvailable (in bytes). */
int memory_parse_meminfo(const char *text, uint64_t *total, uint64_t *available);
/* /proc/meminfo: SwapTotal and SwapFree (in bytes); 0 and 0 if the kernel
 * has no swap support (no such lines). -EINVAL if a line is malformed. */
int memory_parse_meminfo_swap(const char *text, uint64_t *total, uint64_t *free);
/* /proc/swaps, one device per call: *pos starts at the text and moves on.
 * Returns 1 with e filled, 0 at the end; the header and malformed lines are
 * skipped. */
int memory_next_swap(const char **pos, struct swap_entry *e);
/* N if name is a zram device ("/dev/zramN"), else -1. */
int memory_zram_index(const char *name);
/* /sys/block/zramN/mm_stat. 0 or -EINVAL. */
int memory_parse_zram_mm_stat(const char *text, struct zram_mm *z);
/* How much more data a zram device can take: its free swap space, capped
 * by the RAM it may still take -- ram_free (what the system has), and what
 * is left under its mem_limit -- at the compression ratio it reached so far
 * (data stored / RAM used, allocator overhead included; 1:1 while it holds
 * less than MEMORY_ZRAM_RATIO_MIN_BYTES). */
#define MEMORY_ZRAM_RATIO_MIN_BYTES (8ULL << 20)
uint64_t memory_zram_room(const struct zram_mm *z, uint64_t space_free, uint64_t ram_free);
/* The swap condition of a low_available tier: true if the domain has no
 * swap, or its free swap is at or below low_swap (unset: the default
 * CONFIG_DEFAULT_LOW_SWAP, 10% of the domain's swap). *threshold gets low_swap
 * in bytes. */
bool memory_swap_low(const struct mem_info *mi, const struct mem_amount *low_swap, uint64_t *threshold);

/* A "key value" line of memory.stat ("inactive_file 123"); 0 if absent. */
uint64_t memory_stat_value(const char *text, const char *key);

/* memory_footprint's keys: the anonymous LRU lists, the unevictable list
 * and the swap cache of a meminfo (kB) or memory.stat (bytes) text. */
struct footprint_keys {
	const char *active_anon, *inactive_anon, *unevictable, *swapcached;
};
extern const struct footprint_keys FOOTPRINT_MEMINFO, FOOTPRINT_STAT_V2, FOOTPRINT_STAT_V1;
/* The footprint of text (one of the above; unit 1024 for kB): the LRU's
 * anonymous and unevictable pages plus swap_used (bytes) less the swap
 * cache. Not AnonPages (memory.stat anon, v1 total_rss): a page swapped out
 * but still in the swap cache is in neither, yet holds its slot, and the
 * fault that maps it back would look like an allocation. Without the LRU
 * lines (an older file), anon_bytes stands for them. */
uint64_t memory_footprint(const char *text, const struct footprint_keys *k, uint64_t unit, uint64_t anon_bytes,
			  uint64_t swap_used);

/* v1 says "no limit" with a huge number rounded to the page size */
#define MEMORY_V1_UNLIMITED (1ULL << 62)
/* The number in the cgroup file dir/name (under rootfd); with allow_max,
 * v2's "max" reads as UINT64_MAX. 0 or -errno (-EINVAL: not a number). */
int memory_read_value(int rootfd, const char *dir, const char *name, bool allow_max, uint64_t *out);

/* MemTotal, MemAvailable, and the swap the system can still use (SwapFree,
 * less what zram devices in /proc/swaps cannot store for lack of RAM). */
int memory_read_system(int rootfd, struct mem_info *mi);
/* dir is a cgroup directory: cgroup2 (memory.max, memory.current) or v1
 * (memory.limit_in_bytes, memory.usage_in_bytes). -ENODATA if it has no limit.
 * Swap: the system's, bounded by the group's own limit (v2 memory.swap.max
 * and memory.swap.current; v1 memory.memsw.limit_in_bytes less the memory
 * limit, and memory.memsw.usage_in_bytes less the usage); none for a v1
 * group with memory.swappiness 0 (its reclaim never swaps). */
int memory_read_cgroup(int rootfd, const char *dir, struct mem_info *mi);

/* The cgroup dir, else the system. */
int memory_read(int rootfd, const char *cgroup_dir, struct mem_info *mi);
/* memory_read, and for the system /proc/vmstat's reclaim counters too
 * (reclaimed_bytes): the evidence a kill decision after a kill needs. */
int memory_read_evidence(int rootfd, const char *cgroup_dir, struct mem_info *mi);
/* The workingset_refault_file and _anon counters of a memory.stat (v1:
 * PREFIX "total_", the hierarchy's) or /proc/vmstat (PREFIX "") into mi's
 * refault fields. */
void memory_parse_refaults(const char *text, const char *prefix, struct mem_info *mi);
/* /proc/vmstat: pages reclaimed so far -- pgsteal_anon + pgsteal_file, or
 * on kernels without them pgsteal_kswapd + pgsteal_direct +
 * pgsteal_khugepaged. 0, or -ENODATA if it has none of them. */
int memory_parse_vmstat_reclaimed(const char *text, uint64_t *pages);

/* An amount (bytes or a percentage of total) in bytes. */
uint64_t memory_amount_bytes(const struct mem_amount *a, uint64_t total);

/* The growth of the memory footprint (mem_info.footprint_bytes), for the
 * low_available tiers: a short history of (time, bytes) from the memory checks, in a fixed
 * array (the low-memory path does not allocate). */
#define MEMORY_GROWTH_SAMPLES 32
/* Rates are taken over the last MEMORY_GROWTH_WINDOW_US of samples (the
 * last three at least), and only if they span at least
 * MEMORY_GROWTH_MIN_SPAN_US; a gap of more than MEMORY_GROWTH_GAP_US
 * between two checks starts the history again. The idle clock's period is
 * the headroom (free swap included) over 1 GiB/s, so checks a second or
 * more apart still give a rate up to 2.5 GiB of headroom: with a swap disk
 * a runaway filled RAM at 50 MiB/s while the checks, 1.0-1.4 s apart,
 * said "growing 0.0 MiB/s" (6.1 guest, 2026-12-06), and the culprit
 * samples began only when less than a tenth of RAM was left. */
#define MEMORY_GROWTH_WINDOW_US 1000000ULL
#define MEMORY_GROWTH_MIN_SPAN_US 400000ULL
#define MEMORY_GROWTH_GAP_US 2500000ULL
/* Growth "now" (memory_growth_now) is judged over at least the last
 * MEMORY_GROWTH_NOW_US, and a rise of at most MEMORY_GROWTH_NOISE_BYTES
 * there is no growth: the footprint (the anon LRU lists) moves by a few
 * hundred kB between checks with nothing growing, as the kernel's
 * compaction takes anon pages off the lists to migrate them and puts them
 * back (0.2-0.5 MiB per check after a fill on a 1 GiB guest, 2026-12-05). */
#define MEMORY_GROWTH_NOW_US 250000ULL
#define MEMORY_GROWTH_NOISE_BYTES (512ULL << 10)
/* ... and the last check must be a new high of that span by more than
 * MEMORY_GROWTH_CHECK_NOISE_BYTES: growth of 2.5 MiB/s or more at 50 ms
 * checks (slower creeps are hold_idle's creep rule's) */
#define MEMORY_GROWTH_CHECK_NOISE_BYTES (128ULL << 10)
/* A low_available tier also fires when its threshold is less than this far
 * away at the current growth of anonymous memory (see README.md, "The last
 * resort"). */
#define MEMORY_GROWTH_HORIZON_US 500000ULL

struct mem_growth_sample {
	uint64_t t_us;
	uint64_t anon_bytes;
};

struct mem_growth {
	struct mem_growth_sample s[MEMORY_GROWTH_SAMPLES];
	unsigned head; /* index of the newest sample */
	unsigned n;    /* samples held */
};

void memory_growth_reset(struct mem_growth *g);
/* Adds a sample taken at now_us. A clock that went back, or a gap of more
 * than MEMORY_GROWTH_GAP_US since the last sample, starts a new history. */
void memory_growth_add(struct mem_growth *g, uint64_t now_us, uint64_t anon_bytes);
/* The sustained growth of the footprint, in bytes per second: the samples
 * of the last MEMORY_GROWTH_WINDOW_US (or the last three, when the checks
 * are further apart) are cut in two halves at the sample
 * nearest their middle time, and the rate is the smaller of the two halves'
 * rates -- 0 unless both grew. So a single jump (a process that allocates
 * once, then idles), noise, and memory that comes and goes give 0; growth
 * that goes on over the whole window gives its rate. 0 too while the
 * history spans less than MEMORY_GROWTH_MIN_SPAN_US or has fewer than 3
 * samples. */
uint64_t memory_growth_rate(const struct mem_growth *g);
/* Growth going on now, however it started: true if the newest sample is
 * at least min_rise above the least of the last MEMORY_GROWTH_WINDOW_US,
 * and memory_growth_now(g, 0) (memory that was allocated once and stopped
 * is not growth). A jump that goes on (a worker restarted after a kill)
 * counts at the next check, where the rate takes a window to follow. */
bool memory_growth_rising(const struct mem_growth *g, uint64_t min_rise);
/* A jump at the last check: the newest sample at least min_rise above the
 * one before it (after a kill, a restarted worker refilling memory). */
bool memory_growth_jumped(const struct mem_growth *g, uint64_t min_rise);
/* Is the footprint still growing at the last check? The span is the
 * samples back to the first one at least MEMORY_GROWTH_NOW_US and two
 * checks old (or the oldest). True if the newest sample is above every
 * other of the span by more than MEMORY_GROWTH_CHECK_NOISE_BYTES, above
 * the least of the span by more than its largest rise between two checks
 * plus MEMORY_GROWTH_NOISE_BYTES, and above the span's first sample at
 * min_rate bytes/s or more. The rate of
 * memory_growth_rate spans a second, so for a moment after a fill stops it
 * still says the fill's speed; this says whether it goes on. And a rise
 * made of one step is memory allocated at once between two checks (a
 * buffer pool filled at GB/s): it is growth only once the next check
 * rises again, as a runaway's does. */
bool memory_growth_now(const struct mem_growth *g, uint64_t min_rate);
/* How long until available memory falls to threshold if it shrinks by
 * rate bytes per second: 0 if it is already at or below it, UINT64_MAX if
 * rate is 0. */
uint64_t memory_time_to_limit_us(uint64_t available, uint64_t threshold, uint64_t rate);
/* The growth part of a low_available tier: true if available memory is
 * above threshold but by no more than threshold again (the growth term at
 * most doubles the threshold: a fast allocation that stops short of the
 * limit, like a program's start, is no emergency while that far away), and
 * falls to threshold within MEMORY_GROWTH_HORIZON_US at rate bytes/s.
 * *ttl_us gets memory_time_to_limit_us. */
bool memory_growth_low(uint64_t available, uint64_t threshold, uint64_t rate, uint64_t *ttl_us);
