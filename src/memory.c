/* memory: available memory, system-wide or per memory cgroup (v1 or v2). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"
#include "memory.h"

#define ASSUMED_GROWTH_BYTES_PER_S (1ULL << 30)
#define CHECK_MIN_US 50000ULL
#define CHECK_MAX_US 5000000ULL

static bool line_value(const char *text, const char *key, uint64_t *out)
{
	size_t n = strlen(key);
	const char *s = text;

	while (s && *s) {
		if (strncmp(s, key, n) == 0 && (s[n] == ' ' || s[n] == '\t' || s[n] == ':')) {
			char *end;
			unsigned long long v;

			s += n + (s[n] == ':');
			errno = 0;
			v = strtoull(s, &end, 10);
			if (end == s || errno)
				return false;
			*out = v;
			return true;
		}
		s = strchr(s, '\n');
		if (s)
			s++;
	}
	return false;
}

int memory_parse_meminfo(const char *text, uint64_t *total, uint64_t *available)
{
	uint64_t t, a;

	if (!line_value(text, "MemTotal", &t) || !line_value(text, "MemAvailable", &a))
		return -EINVAL;
	*total = t * 1024;
	*available = a * 1024;
	return 0;
}

uint64_t memory_stat_value(const char *text, const char *key)
{
	uint64_t v = 0;

	return line_value(text, key, &v) ? v : 0;
}

int memory_read_system(int rootfd, struct mem_info *mi)
{
	char buf[8192];
	ssize_t n = read_file_at(rootfd, "proc/meminfo", buf, sizeof(buf));

	if (n == -EFBIG)
		n = 0; /* MemTotal and MemAvailable come first: parse what fit */
	if (n < 0)
		return (int)n;
	buf[sizeof(buf) - 1] = '\0';
	mi->cgroup = false;
	return memory_parse_meminfo(buf, &mi->total_bytes, &mi->available_bytes);
}

static int read_u64_file(int rootfd, const char *dir, const char *name, uint64_t *out, bool *unlimited)
{
	char path[CONFIG_PATH_MAX + 64], buf[64];
	ssize_t n;
	char *end;

	snprintf(path, sizeof(path), "%s/%s", dir + (*dir == '/'), name);
	n = read_file_at(rootfd, path, buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	if (unlimited && strncmp(buf, "max", 3) == 0) {
		*unlimited = true;
		return 0;
	}
	errno = 0;
	*out = strtoull(buf, &end, 10);
	if (end == buf || errno)
		return -EINVAL;
	return 0;
}

/* Sub that stops at 0. */
static uint64_t sub0(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

uint64_t memory_reclaimable(const char *stat, bool v2)
{
	uint64_t inactive = memory_stat_value(stat, v2 ? "inactive_file" : "total_inactive_file");
	uint64_t active = memory_stat_value(stat, v2 ? "active_file" : "total_active_file");
	uint64_t mapped = memory_stat_value(stat, v2 ? "file_mapped" : "total_mapped_file");
	uint64_t dirty = memory_stat_value(stat, v2 ? "file_dirty" : "total_dirty");
	uint64_t writeback = memory_stat_value(stat, v2 ? "file_writeback" : "total_writeback");

	return inactive + sub0(sub0(sub0(active, mapped), dirty), writeback);
}

int memory_read_cgroup(int rootfd, const char *dir, struct mem_info *mi)
{
	char path[CONFIG_PATH_MAX + 64], stat[8192];
	uint64_t limit = 0, usage = 0, reclaimable;
	bool unlimited = false, v2;
	ssize_t n;
	int r;

	r = read_u64_file(rootfd, dir, "memory.max", &limit, &unlimited);
	v2 = r == 0;
	if (r == -ENOENT)
		r = read_u64_file(rootfd, dir, "memory.limit_in_bytes", &limit, NULL);
	if (r < 0)
		return r;
	/* v1 says "no limit" with a huge number rounded to the page size */
	if (unlimited || limit >= (1ULL << 62))
		return -ENODATA;
	r = read_u64_file(rootfd, dir, v2 ? "memory.current" : "memory.usage_in_bytes", &usage, NULL);
	if (r < 0)
		return r;
	snprintf(path, sizeof(path), "%s/memory.stat", dir + (*dir == '/'));
	n = read_file_at(rootfd, path, stat, sizeof(stat));
	if (n == -EFBIG)
		n = 0;
	stat[sizeof(stat) - 1] = '\0';
	reclaimable = n >= 0 ? memory_reclaimable(stat, v2) : 0;
	mi->cgroup = true;
	mi->total_bytes = limit;
	usage = usage > reclaimable ? usage - reclaimable : 0;
	mi->available_bytes = limit > usage ? limit - usage : 0;
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

uint64_t memory_amount_bytes(const struct mem_amount *a, uint64_t total)
{
	if (!a->percent)
		return a->value;
	return total / 10000 * a->value + total % 10000 * a->value / 10000;
}

uint64_t memory_check_period_us(uint64_t available, uint64_t threshold)
{
	uint64_t headroom = available > threshold ? available - threshold : 0;
	uint64_t us;

	if (headroom >= ASSUMED_GROWTH_BYTES_PER_S / 1000000ULL * CHECK_MAX_US)
		return CHECK_MAX_US;
	us = headroom * 1000000ULL / ASSUMED_GROWTH_BYTES_PER_S;
	if (us < CHECK_MIN_US)
		return CHECK_MIN_US;
	if (us > CHECK_MAX_US)
		return CHECK_MAX_US;
	return us;
}
