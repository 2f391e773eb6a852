/* SPDX-License-Identifier: MIT */
/* recovery: recovery after a kill, told from a shortage (recovery.h). */
#include <inttypes.h>
#include <stdio.h>

#include "recovery.h"

void recovery_start(struct recovery *r, uint64_t now_us)
{
	*r = (struct recovery){ .active = true, .since_us = now_us, .last_fire_us = now_us };
}

bool recovery_fire(struct recovery *r, uint64_t now_us)
{
	if (r->active && now_us >= r->last_fire_us && now_us - r->last_fire_us > RECOVERY_QUIET_US)
		r->active = false;
	if (r->active)
		r->last_fire_us = now_us;
	return r->active;
}

static uint64_t permille(uint64_t total, unsigned pm)
{
	return total / 1000 * pm + total % 1000 * pm / 1000;
}

uint64_t recovery_floor(uint64_t total, uint64_t low_max)
{
	uint64_t f = permille(total, RECOVERY_AVAILABLE_PERMILLE);

	return low_max > f ? low_max : f;
}

#define MIB(x) ((double)(x) / 1048576.0)

int recovery_short(struct recovery *r, const struct mem_info *mi, uint64_t floor, char *why, size_t size)
{
	uint64_t step = permille(mi->total_bytes, RECOVERY_STEP_PERMILLE), swap_limit;

	if (step < RECOVERY_STEP_MIN_BYTES)
		step = RECOVERY_STEP_MIN_BYTES;
	if (!r->based) {
		r->based = true;
		r->footprint_known = mi->anon_known;
		r->footprint_min = mi->footprint_bytes;
		r->reclaim_known = mi->reclaim_known;
		r->reclaimed0 = mi->reclaimed_bytes;
	}
	if (mi->anon_known && r->footprint_known && mi->footprint_bytes < r->footprint_min)
		r->footprint_min = mi->footprint_bytes;
	if (mi->available_bytes < floor) {
		snprintf(why, size, "available memory %.1f MiB is below %.1f MiB", MIB(mi->available_bytes), MIB(floor));
		return 1;
	}
	if (mi->swap_total_bytes && memory_swap_low(mi, &CONFIG_DEFAULT_LOW_SWAP, &swap_limit)) {
		snprintf(why, size, "free swap %.1f MiB is at or below %.1f MiB", MIB(mi->swap_free_bytes), MIB(swap_limit));
		return 1;
	}
	if (mi->anon_known && r->footprint_known && mi->footprint_bytes - r->footprint_min >= step) {
		snprintf(why, size, "the memory footprint grew %.1f MiB since the last victim died",
			 MIB(mi->footprint_bytes - r->footprint_min));
		return 1;
	}
	if (mi->reclaim_known && r->reclaim_known && mi->reclaimed_bytes >= r->reclaimed0 &&
	    mi->reclaimed_bytes - r->reclaimed0 >= step) {
		snprintf(why, size, "the kernel reclaimed %.1f MiB since the last victim died",
			 MIB(mi->reclaimed_bytes - r->reclaimed0));
		return 1;
	}
	if (mi->cgroup && !mi->reclaim_known && mi->unused_bytes < permille(mi->total_bytes, RECOVERY_V1_UNUSED_PERMILLE)) {
		snprintf(why, size, "the group is at its limit (%.1f MiB unused)", MIB(mi->unused_bytes));
		return 1;
	}
	snprintf(why, size, "available memory %.1f MiB, %s; since the last victim died, footprint growth %s %.1f MiB, "
		 "reclaim %s", MIB(mi->available_bytes), mi->swap_total_bytes ? "swap has room" : "no swap",
		 mi->anon_known && r->footprint_known ? "below" : "unknown, evidence at", MIB(step),
		 mi->reclaim_known && r->reclaim_known ? "below it too" : mi->cgroup ? "unknown (the group has room)" : "unknown");
	return 0;
}
