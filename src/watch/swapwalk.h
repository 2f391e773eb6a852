/* SPDX-License-Identifier: MIT */
/* swapwalk: the group a ManagedOOMSwap=kill decision goes to, as
 * systemd-oomd chooses it: of the leaf groups below the managed units (no
 * child group, or memory.oom.group set: the kernel's unit of an OOM kill),
 * the one whose memory.swap.current is highest. A group's owner may shape
 * what lies below it (names, depth, thousands of empty groups), so nothing
 * there is skipped: a subtree the walk cannot or will not look into counts
 * as one group, its own counter holding its children's swap. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "config.h"

/* depth below a unit, and children read in one group a user owns, beyond
 * which the group counts whole; reads in one walk, beyond which it chooses
 * nothing (a flood of a user's groups then turns the swap kills off, with
 * a warning, never moves one elsewhere) */
#define SWAPWALK_DEPTH 32
#define SWAPWALK_CHILDREN_MAX 1024
#define SWAPWALK_READS_MAX 16384

struct swapwalk {
	uid_t trusted_uid_max;      /* groups of owners above this uid have their children capped */
	char best[CONFIG_PATH_MAX]; /* the group (a path below the cgroup2 mount); "" none */
	uint64_t best_swap;
	size_t reads;   /* memory.swap.current files read */
	bool exhausted; /* SWAPWALK_READS_MAX reached: no choice */
};

void swapwalk_init(struct swapwalk *w, uid_t trusted_uid_max);

/* Walks the groups below unit ("/" the root group, never a choice itself)
 * of the cgroup2 hierarchy mounted at mount, under rootfd, into w. Several
 * units go into one w. 0, or -errno when the unit cannot be opened. */
int swapwalk_unit(int rootfd, const char *mount, const char *unit, struct swapwalk *w);
