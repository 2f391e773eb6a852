/* SPDX-License-Identifier: MIT */
/* memory: available memory, system-wide or per memory cgroup (v1 or v2). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fileio.h"
#include "lines.h"
#include "memory.h"


int memory_parse_meminfo(const char *text, uint64_t *total, uint64_t *available)
{
	uint64_t t, a;

	if (lines_value(text, "MemTotal", &t) != 1 || lines_value(text, "MemAvailable", &a) != 1)
		return -EINVAL;
	*total = t * 1024;
	*available = a * 1024;
	return 0;
}

uint64_t memory_stat_value(const char *text, const char *key)
{
	uint64_t v = 0;

	return lines_value(text, key, &v) == 1 ? v : 0;
}

/* The LRU lines and the swap cache line of meminfo, v2 and v1 memory.stat
 * (memory_footprint). */
const struct footprint_keys FOOTPRINT_MEMINFO = { "Active(anon)", "Inactive(anon)", "Unevictable", "SwapCached" };
const struct footprint_keys FOOTPRINT_STAT_V2 = { "active_anon", "inactive_anon", "unevictable", "swapcached" };
const struct footprint_keys FOOTPRINT_STAT_V1 = { "total_active_anon", "total_inactive_anon", "total_unevictable",
						  "total_swapcached" };

uint64_t memory_footprint(const char *text, const struct footprint_keys *k, uint64_t unit, uint64_t anon_bytes,
			  uint64_t swap_used)
{
	uint64_t active, inactive;
	uint64_t cached = memory_stat_value(text, k->swapcached) * unit;

	if (lines_value(text, k->active_anon, &active) == 1 && lines_value(text, k->inactive_anon, &inactive) == 1)
		anon_bytes = (active + inactive + memory_stat_value(text, k->unevictable)) * unit;
	return anon_bytes + swap_used > cached ? anon_bytes + swap_used - cached : 0;
}

int memory_parse_meminfo_swap(const char *text, uint64_t *total, uint64_t *free)
{
	int has_total = lines_value(text, "SwapTotal", total), has_free = lines_value(text, "SwapFree", free);

	if (has_total == 0 && has_free == 0) {
		*total = *free = 0; /* CONFIG_SWAP=n */
		return 0;
	}
	if (has_total != 1 || has_free != 1)
		return -EINVAL;
	*total *= 1024;
	*free *= 1024;
	if (*free > *total)
		*free = *total;
	return 0;
}

/* The next whitespace-separated field of a line, at most size - 1 bytes of it. */
static const char *field(const char *s, char *out, size_t size)
{
	size_t n = 0;

	while (*s == ' ' || *s == '\t')
		s++;
	while (*s && *s != ' ' && *s != '\t' && *s != '\n') {
		if (n + 1 < size)
			out[n++] = *s;
		s++;
	}
	out[n] = '\0';
	return s;
}

static bool parse_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (*end || errno)
		return false;
	*out = v;
	return true;
}

int memory_next_swap(const char **pos, struct swap_entry *e)
{
	const char *s = *pos;

	while (s && *s) {
		char type[32], size[24], used[24];
		const char *nl = strchr(s, '\n');
		uint64_t sz, us;

		s = field(s, e->name, sizeof(e->name));
		s = field(s, type, sizeof(type));
		s = field(s, size, sizeof(size));
		s = field(s, used, sizeof(used));
		s = nl ? nl + 1 : s + strlen(s);
		/* the header ("Filename Type Size Used Priority") is not a number */
		if (e->name[0] && parse_u64(size, &sz) && parse_u64(used, &us)) {
			*pos = s;
			e->size_bytes = sz * 1024;
			e->used_bytes = us * 1024;
			return 1;
		}
	}
	*pos = s;
	return 0;
}

int memory_zram_index(const char *name)
{
	const char *p;
	long n = 0;

	if (strncmp(name, "/dev/zram", 9) != 0 || !name[9])
		return -1;
	for (p = name + 9; *p; p++) {
		if (*p < '0' || *p > '9' || n > 100000)
			return -1;
		n = n * 10 + (*p - '0');
	}
	return (int)n;
}

int memory_parse_zram_mm_stat(const char *text, struct zram_mm *z)
{
	uint64_t v[4];
	const char *s = text;
	size_t i;

	for (i = 0; i < 4; i++) {
		char num[24];

		s = field(s, num, sizeof(num));
		if (!parse_u64(num, &v[i]))
			return -EINVAL;
	}
	*z = (struct zram_mm){ .orig_data = v[0], .compr_data = v[1], .mem_used = v[2], .mem_limit = v[3] };
	return 0;
}

/* Sub that stops at 0. */
static uint64_t sub0(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

static uint64_t min64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

uint64_t memory_zram_room(const struct zram_mm *z, uint64_t space_free, uint64_t ram_free)
{
	uint64_t budget = ram_free;
	double room;

	if (z->mem_limit)
		budget = min64(budget, sub0(z->mem_limit, z->mem_used));
	/* The ratio of a few pages (mkswap's header alone: 4 KiB in 12 KiB of
	 * zsmalloc pages) says nothing; until there is some data, 1:1. */
	if (z->orig_data < MEMORY_ZRAM_RATIO_MIN_BYTES || !z->mem_used)
		return min64(space_free, budget);
	room = (double)budget * (double)z->orig_data / (double)z->mem_used;
	return room >= (double)space_free ? space_free : (uint64_t)room;
}

bool memory_swap_low(const struct mem_info *mi, const struct mem_amount *low_swap, uint64_t *threshold)
{
	*threshold = memory_amount_bytes(low_swap->set ? low_swap : &CONFIG_DEFAULT_LOW_SWAP, mi->swap_total_bytes);
	return !mi->swap_total_bytes || mi->swap_free_bytes <= *threshold;
}

/* The swap the system can still use: SwapFree, less, for each zram device,
 * the part of its free space it cannot fill for lack of RAM. Without
 * /proc/swaps (or a device's mm_stat) a device counts at its free space. */
static void read_swap_system(int rootfd, const char *meminfo, uint64_t ram_free, uint64_t *total, uint64_t *free)
{
	char swaps[4096];
	const char *pos = swaps;
	struct swap_entry e;
	ssize_t n;

	if (memory_parse_meminfo_swap(meminfo, total, free) < 0 || !*total) {
		*total = *free = 0;
		return;
	}
	n = read_file_at(rootfd, "proc/swaps", swaps, sizeof(swaps));
	if (n < 0 && n != -EFBIG)
		return;
	swaps[sizeof(swaps) - 1] = '\0';
	while (memory_next_swap(&pos, &e) == 1) {
		char path[64], mm[256];
		struct zram_mm z;
		uint64_t space, room;
		int i = memory_zram_index(e.name);

		if (i < 0)
			continue;
		snprintf(path, sizeof(path), "sys/block/zram%d/mm_stat", i);
		if (read_file_at(rootfd, path, mm, sizeof(mm)) < 0 || memory_parse_zram_mm_stat(mm, &z) < 0)
			continue;
		space = sub0(e.size_bytes, e.used_bytes);
		room = memory_zram_room(&z, space, ram_free);
		*free = sub0(*free, space - room);
	}
}

int memory_read_system(int rootfd, struct mem_info *mi)
{
	char buf[8192];
	ssize_t n = read_file_at(rootfd, "proc/meminfo", buf, sizeof(buf));
	int r;

	if (n == -EFBIG)
		n = 0; /* MemTotal, MemAvailable and the swap lines come first: parse what fit */
	if (n < 0)
		return (int)n;
	buf[sizeof(buf) - 1] = '\0';
	mi->cgroup = false;
	r = memory_parse_meminfo(buf, &mi->total_bytes, &mi->available_bytes);
	if (r < 0)
		return r;
	read_swap_system(rootfd, buf, mi->available_bytes, &mi->swap_total_bytes, &mi->swap_free_bytes);
	{
		uint64_t anon = 0, shmem = 0, swap_total = 0, swap_free = 0, free = 0;

		mi->anon_known = lines_value(buf, "AnonPages", &anon) == 1;
		(void)lines_value(buf, "Shmem", &shmem);
		mi->anon_bytes = (anon + shmem) * 1024;
		(void)lines_value(buf, "MemFree", &free);
		mi->unused_bytes = free * 1024;
		/* the raw swap lines: zram's room (above) is not what is in use */
		if (memory_parse_meminfo_swap(buf, &swap_total, &swap_free) < 0)
			swap_total = swap_free = 0;
		mi->footprint_bytes = memory_footprint(buf, &FOOTPRINT_MEMINFO, 1024, mi->anon_bytes, swap_total - swap_free);
	}
	mi->reclaim_known = false;
	mi->reclaimed_bytes = 0;
	mi->refault_known = false;
	mi->refault_file = mi->refault_anon = 0;
	return 0;
}

void memory_parse_refaults(const char *text, const char *prefix, struct mem_info *mi)
{
	char file[64], anon[64];

	snprintf(file, sizeof(file), "%sworkingset_refault_file", prefix);
	snprintf(anon, sizeof(anon), "%sworkingset_refault_anon", prefix);
	mi->refault_known = lines_value(text, file, &mi->refault_file) == 1 && lines_value(text, anon, &mi->refault_anon) == 1;
	if (!mi->refault_known)
		mi->refault_file = mi->refault_anon = 0;
}

int memory_parse_vmstat_reclaimed(const char *text, uint64_t *pages)
{
	static const char *const split[] = { "pgsteal_anon", "pgsteal_file" };
	static const char *const old[] = { "pgsteal_kswapd", "pgsteal_direct", "pgsteal_khugepaged" };
	const char *const *keys = split;
	size_t n = 2, i, found = 0;
	uint64_t sum = 0, v;

	if (lines_value(text, "pgsteal_anon", &v) != 1) {
		keys = old;
		n = 3;
	}
	for (i = 0; i < n; i++)
		if (lines_value(text, keys[i], &v) == 1) {
			sum += v;
			found++;
		}
	if (!found)
		return -ENODATA;
	*pages = sum;
	return 0;
}

static uint64_t page_bytes(void)
{
	long p = sysconf(_SC_PAGESIZE);

	return p > 0 ? (uint64_t)p : 4096;
}

int memory_read_value(int rootfd, const char *dir, const char *name, bool allow_max, uint64_t *out)
{
	char path[CONFIG_PATH_MAX + 64], buf[64];
	ssize_t n;
	char *end;

	snprintf(path, sizeof(path), "%s/%s", dir + (*dir == '/'), name);
	n = read_file_at(rootfd, path, buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	if (allow_max && strncmp(buf, "max", 3) == 0) {
		*out = UINT64_MAX;
		return 0;
	}
	errno = 0;
	*out = strtoull(buf, &end, 10);
	if (end == buf || errno)
		return -EINVAL;
	return 0;
}

uint64_t memory_reclaimable(const char *stat, bool v2, bool mglru)
{
	uint64_t inactive = memory_stat_value(stat, v2 ? "inactive_file" : "total_inactive_file");
	uint64_t active = memory_stat_value(stat, v2 ? "active_file" : "total_active_file");
	uint64_t mapped = mglru ? 0 : memory_stat_value(stat, v2 ? "file_mapped" : "total_mapped_file");
	uint64_t dirty = memory_stat_value(stat, v2 ? "file_dirty" : "total_dirty");
	uint64_t writeback = memory_stat_value(stat, v2 ? "file_writeback" : "total_writeback");

	return inactive + sub0(sub0(sub0(active, mapped), dirty), writeback);
}

bool memory_mglru(int rootfd)
{
	char buf[32], *end;
	unsigned long v;
	ssize_t n = read_file_at(rootfd, "sys/kernel/mm/lru_gen/enabled", buf, sizeof(buf));

	if (n <= 0)
		return false;
	buf[sizeof(buf) - 1] = '\0';
	errno = 0;
	v = strtoul(buf, &end, 16);
	return end != buf && !errno && (v & 1);
}

/* The group's share of the system's swap (sys, from memory_read_system):
 * see memory_read_cgroup. */
static void read_swap_cgroup(int rootfd, const char *dir, bool v2, uint64_t limit, uint64_t usage,
			     const struct mem_info *sys, struct mem_info *mi)
{
	uint64_t max = 0, cur = 0;

	mi->swap_total_bytes = sys->swap_total_bytes;
	mi->swap_free_bytes = sys->swap_free_bytes;
	if (!sys->swap_total_bytes)
		return;
	if (v2) {
		if (memory_read_value(rootfd, dir, "memory.swap.max", true, &max) < 0 || max == UINT64_MAX ||
		    memory_read_value(rootfd, dir, "memory.swap.current", false, &cur) < 0)
			return; /* no swap accounting, or no limit of its own */
	} else {
		uint64_t swappiness = 1, memsw_limit, memsw_usage;

		if (memory_read_value(rootfd, dir, "memory.swappiness", false, &swappiness) == 0 && swappiness == 0) {
			mi->swap_total_bytes = mi->swap_free_bytes = 0;
			return;
		}
		if (memory_read_value(rootfd, dir, "memory.memsw.limit_in_bytes", false, &memsw_limit) < 0 ||
		    memsw_limit >= MEMORY_V1_UNLIMITED ||
		    memory_read_value(rootfd, dir, "memory.memsw.usage_in_bytes", false, &memsw_usage) < 0)
			return; /* no swap accounting, or no limit of its own */
		/* memsw counts memory and swap together */
		max = sub0(memsw_limit, limit);
		cur = sub0(memsw_usage, usage);
	}
	mi->swap_total_bytes = min64(max, sys->swap_total_bytes);
	mi->swap_free_bytes = min64(min64(sub0(max, cur), sys->swap_free_bytes), mi->swap_total_bytes);
}

/* memory_read_cgroup's reading of memory.stat, with sys (the system's
 * figures) read before: a frame of its own, so that its buffers and
 * memory_read_system's are never on the stack together (the kill path's
 * depth: KILLER_STACK_PREFAULT). */
__attribute__((noinline)) static void read_cgroup_stat(int rootfd, const char *dir, bool v2, uint64_t limit,
						       uint64_t usage, struct mem_info *sys, struct mem_info *mi)
{
	char path[CONFIG_PATH_MAX + 64], stat[8192];
	uint64_t reclaimable;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/memory.stat", dir + (*dir == '/'));
	n = read_file_at(rootfd, path, stat, sizeof(stat));
	if (n == -EFBIG)
		n = 0;
	stat[sizeof(stat) - 1] = '\0';
	if (n < 0)
		stat[0] = '\0'; /* unread: every line below is absent */
	reclaimable = n >= 0 ? memory_reclaimable(stat, v2, memory_mglru(rootfd)) : 0;
	mi->anon_bytes = 0;
	mi->anon_known = lines_value(stat, v2 ? "anon" : "total_rss", &mi->anon_bytes) == 1;
	if (mi->anon_known)
		mi->anon_bytes += memory_stat_value(stat, v2 ? "shmem" : "total_shmem");
	read_swap_cgroup(rootfd, dir, v2, limit, usage, sys, mi);
	if (v2) {
		uint64_t swap = 0;

		if (!sys->swap_total_bytes || memory_read_value(rootfd, dir, "memory.swap.current", false, &swap) < 0)
			swap = 0;
		mi->footprint_bytes = memory_footprint(stat, &FOOTPRINT_STAT_V2, 1, mi->anon_bytes, swap);
	} else {
		mi->footprint_bytes = memory_footprint(stat, &FOOTPRINT_STAT_V1, 1, mi->anon_bytes,
						       memory_stat_value(stat, "total_swap"));
	}
	mi->unused_bytes = sub0(limit, usage);
	mi->reclaim_known = v2 && lines_value(stat, "pgsteal", &mi->reclaimed_bytes) == 1;
	mi->reclaimed_bytes = mi->reclaim_known ? mi->reclaimed_bytes * page_bytes() : 0;
	memory_parse_refaults(stat, v2 ? "" : "total_", mi);
	usage = usage > reclaimable ? usage - reclaimable : 0;
	mi->available_bytes = limit > usage ? limit - usage : 0;
}

int memory_read_cgroup(int rootfd, const char *dir, struct mem_info *mi)
{
	uint64_t limit = 0, usage = 0;
	bool v2;
	struct mem_info sys;
	int r;

	r = memory_read_value(rootfd, dir, "memory.max", true, &limit);
	v2 = r == 0;
	if (r == -ENOENT)
		r = memory_read_value(rootfd, dir, "memory.limit_in_bytes", false, &limit);
	if (r < 0)
		return r;
	if (limit == UINT64_MAX || limit >= MEMORY_V1_UNLIMITED)
		return -ENODATA;
	r = memory_read_value(rootfd, dir, v2 ? "memory.current" : "memory.usage_in_bytes", false, &usage);
	if (r < 0)
		return r;
	/* the group's swap is bounded by the system's (zram's RAM is not charged to it) */
	if (memory_read_system(rootfd, &sys) < 0)
		sys.swap_total_bytes = sys.swap_free_bytes = 0;
	read_cgroup_stat(rootfd, dir, v2, limit, usage, &sys, mi);
	mi->cgroup = true;
	mi->total_bytes = limit;
	return 0;
}

int memory_read(int rootfd, const char *cgroup_dir, struct mem_info *mi)
{
	if (cgroup_dir && *cgroup_dir) {
		int r = memory_read_cgroup(rootfd, cgroup_dir, mi);

		if (r != -ENODATA)
			return r;
	}
	return memory_read_system(rootfd, mi);
}

/* memory_read_evidence's reading of /proc/vmstat: a frame of its own, after
 * memory_read's (the kill path's depth: KILLER_STACK_PREFAULT). */
__attribute__((noinline)) static void read_vmstat_evidence(int rootfd, struct mem_info *mi)
{
	char buf[8192];
	uint64_t pages;
	ssize_t n;

	n = read_file_at(rootfd, "proc/vmstat", buf, sizeof(buf));
	if (n == -EFBIG)
		n = 0; /* the pgsteal lines come in the first half: parse what fit */
	if (n < 0)
		return; /* the rest is still good; reclaim stays unknown */
	buf[sizeof(buf) - 1] = '\0';
	if (memory_parse_vmstat_reclaimed(buf, &pages) == 0) {
		mi->reclaim_known = true;
		mi->reclaimed_bytes = pages * page_bytes();
	}
	memory_parse_refaults(buf, "", mi);
}

int memory_read_evidence(int rootfd, const char *cgroup_dir, struct mem_info *mi)
{
	int r = memory_read(rootfd, cgroup_dir, mi);

	if (r < 0 || mi->cgroup)
		return r;
	read_vmstat_evidence(rootfd, mi);
	return 0;
}

uint64_t memory_amount_bytes(const struct mem_amount *a, uint64_t total)
{
	if (!a->percent)
		return a->value;
	return total / 10000 * a->value + total % 10000 * a->value / 10000;
}

void memory_growth_reset(struct mem_growth *g)
{
	g->head = 0;
	g->n = 0;
}

static const struct mem_growth_sample *growth_at(const struct mem_growth *g, unsigned age)
{
	return &g->s[(g->head + MEMORY_GROWTH_SAMPLES - age) % MEMORY_GROWTH_SAMPLES];
}

void memory_growth_add(struct mem_growth *g, uint64_t now_us, uint64_t anon_bytes)
{
	if (g->n) {
		uint64_t last = growth_at(g, 0)->t_us;

		if (now_us < last || now_us - last > MEMORY_GROWTH_GAP_US)
			memory_growth_reset(g);
		else if (now_us == last)
			g->n--; /* the same instant twice: keep the newer value */
	}
	if (g->n)
		g->head = (g->head + 1) % MEMORY_GROWTH_SAMPLES;
	g->s[g->head] = (struct mem_growth_sample){ .t_us = now_us, .anon_bytes = anon_bytes };
	if (g->n < MEMORY_GROWTH_SAMPLES)
		g->n++;
}

/* Bytes per second from a to b (b later), 0 if it did not grow. */
static uint64_t growth_slope(const struct mem_growth_sample *a, const struct mem_growth_sample *b)
{
	uint64_t dt = b->t_us - a->t_us, d;

	if (!dt || b->anon_bytes <= a->anon_bytes)
		return 0;
	d = b->anon_bytes - a->anon_bytes;
	/* d < 2^44 (16 TiB) keeps d * 10^6 within 64 bits */
	if (d >= (1ULL << 44))
		return d / dt * 1000000ULL;
	return d * 1000000ULL / dt;
}

uint64_t memory_growth_rate(const struct mem_growth *g)
{
	const struct mem_growth_sample *newest, *oldest, *mid;
	uint64_t span, middle, best = UINT64_MAX, r1, r2;
	unsigned age, old_age = 0;

	if (g->n < 3)
		return 0;
	newest = growth_at(g, 0);
	for (age = 1; age < g->n; age++) {
		if (age > 2 && newest->t_us - growth_at(g, age)->t_us > MEMORY_GROWTH_WINDOW_US)
			break;
		old_age = age;
	}
	oldest = growth_at(g, old_age);
	span = newest->t_us - oldest->t_us;
	if (span < MEMORY_GROWTH_MIN_SPAN_US)
		return 0;
	middle = oldest->t_us + span / 2;
	mid = growth_at(g, 1); /* old_age >= 2: one sample lies between at least */
	for (age = 1; age < old_age; age++) {
		const struct mem_growth_sample *s = growth_at(g, age);
		uint64_t dist = s->t_us > middle ? s->t_us - middle : middle - s->t_us;

		if (dist < best) {
			best = dist;
			mid = s;
		}
	}
	r1 = growth_slope(oldest, mid);
	r2 = growth_slope(mid, newest);
	return r1 < r2 ? r1 : r2;
}

bool memory_growth_rising(const struct mem_growth *g, uint64_t min_rise)
{
	const struct mem_growth_sample *newest;
	uint64_t least;
	unsigned age;

	if (!memory_growth_now(g, 0))
		return false;
	newest = growth_at(g, 0);
	least = newest->anon_bytes;
	for (age = 1; age < g->n && newest->t_us - growth_at(g, age)->t_us <= MEMORY_GROWTH_WINDOW_US; age++)
		if (growth_at(g, age)->anon_bytes < least)
			least = growth_at(g, age)->anon_bytes;
	return newest->anon_bytes - least >= min_rise;
}

bool memory_growth_jumped(const struct mem_growth *g, uint64_t min_rise)
{
	return g->n >= 2 && growth_at(g, 0)->anon_bytes >= growth_at(g, 1)->anon_bytes + min_rise;
}

bool memory_growth_now(const struct mem_growth *g, uint64_t min_rate)
{
	const struct mem_growth_sample *newest, *then = NULL, *s;
	uint64_t least, high = 0, step = 0;
	unsigned age;

	if (g->n < 2)
		return false;
	newest = growth_at(g, 0);
	/* the span: back to the first sample at least MEMORY_GROWTH_NOW_US
	 * old and two checks back; its least and highest samples before the
	 * newest, and its largest rise between two checks */
	least = newest->anon_bytes;
	for (age = 1; age < g->n; age++) {
		then = growth_at(g, age);
		s = growth_at(g, age - 1);
		if (s->anon_bytes > then->anon_bytes && s->anon_bytes - then->anon_bytes > step)
			step = s->anon_bytes - then->anon_bytes;
		if (then->anon_bytes < least)
			least = then->anon_bytes;
		if (then->anon_bytes > high)
			high = then->anon_bytes;
		if (age >= 2 && newest->t_us - then->t_us >= MEMORY_GROWTH_NOW_US)
			break;
	}
	/* a new high at this check: pages that left the LRU lists and came
	 * back make none; and a rise made of one step is an allocation seen
	 * once, which goes on only if the rest of the span rose too */
	return newest->anon_bytes > high && newest->anon_bytes - high > MEMORY_GROWTH_CHECK_NOISE_BYTES &&
	       newest->anon_bytes - least > step + MEMORY_GROWTH_NOISE_BYTES && growth_slope(then, newest) >= min_rate;
}

uint64_t memory_time_to_limit_us(uint64_t available, uint64_t threshold, uint64_t rate)
{
	uint64_t headroom;

	if (available <= threshold)
		return 0;
	if (!rate)
		return UINT64_MAX;
	headroom = available - threshold;
	if (headroom >= (1ULL << 44))
		return headroom / rate >= UINT64_MAX / 1000000ULL ? UINT64_MAX : headroom / rate * 1000000ULL;
	return headroom * 1000000ULL / rate;
}

bool memory_growth_low(uint64_t available, uint64_t threshold, uint64_t rate, uint64_t *ttl_us)
{
	*ttl_us = memory_time_to_limit_us(available, threshold, rate);
	return available > threshold && available - threshold <= threshold && *ttl_us < MEMORY_GROWTH_HORIZON_US;
}
