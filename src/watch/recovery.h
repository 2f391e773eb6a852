/* SPDX-License-Identifier: MIT */
/* recovery: after a kill, tells the stall of recovery -- the survivors
 * reading their pages back in from swap or disk, which PSI counts as memory
 * stall however much memory the kill freed -- from a shortage that needs
 * another kill. While recovering, a PSI tier kills again only on evidence
 * that memory is still short: available memory or free swap low, the
 * memory footprint growing again (an allocation; reading pages back in
 * leaves it as it is), or the kernel reclaiming again. Recovery ends when
 * the PSI tiers have been quiet for RECOVERY_QUIET_US. Pure logic: the
 * killer reads memory (memory_read_evidence) and feeds it here. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "memory.h"

/* no PSI fire for this long: the stall is over, and with it the recovery */
#define RECOVERY_QUIET_US (5 * 1000000ULL)
/* available memory below this share of the domain (or below the highest
 * low_available, if that is more) is short, whatever the stall */
#define RECOVERY_AVAILABLE_PERMILLE 100
/* growth of the footprint, or memory reclaimed, since recovery began: at
 * least this share of the domain and RECOVERY_STEP_MIN_BYTES */
#define RECOVERY_STEP_PERMILLE 20
#define RECOVERY_STEP_MIN_BYTES (8ULL << 20)
/* a v1 group (no reclaim counter) is short when less than this share of its
 * limit is unused: every new page then needs reclaim */
#define RECOVERY_V1_UNUSED_PERMILLE 10

struct recovery {
	bool active;           /* a victim died, and the stall has not been quiet since */
	uint64_t since_us;     /* when the victim died */
	uint64_t last_fire_us; /* the last PSI fire while active */
	bool based;            /* the first reading after the death was taken */
	bool footprint_known;
	uint64_t footprint_min; /* the least footprint seen since */
	bool reclaim_known;
	uint64_t reclaimed0;    /* the reclaim counter at the first reading */
};

/* A victim died at now_us: recovery begins (or begins again). */
void recovery_start(struct recovery *r, uint64_t now_us);
/* A PSI tier fired at now_us: true if this is still recovery from the last
 * kill (active, and the tiers were not quiet for RECOVERY_QUIET_US, which
 * ends it). */
bool recovery_fire(struct recovery *r, uint64_t now_us);
/* The evidence in mi (memory_read_evidence), with floor the least available
 * memory that is not short (recovery_floor): 1 if memory is short, 0 if
 * this is recovery; why (size bytes) says which in words, with figures. */
int recovery_short(struct recovery *r, const struct mem_info *mi, uint64_t floor, char *why, size_t size);
/* The floor for a domain of total bytes: RECOVERY_AVAILABLE_PERMILLE of it,
 * or low_max (the highest low_available of the tiers, in bytes) if more. */
uint64_t recovery_floor(uint64_t total, uint64_t low_max);
