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
 * which the group counts whole */
#define SWAPWALK_DEPTH 32
#define SWAPWALK_CHILDREN_MAX 1024
/* reads below one user's groups -- from the topmost group on the path that
 * a user owns, what they were delegated (user@UID.service, a service with
 * Delegate=), down, over every unit of the walk -- beyond which the group
 * where the walk entered them counts whole: a flood of nested groups costs
 * its owner their own subtree, and no one else anything */
#define SWAPWALK_OWNER_READS_MAX 4096
/* delegated subtrees kept apart in one walk; past that, each further one
 * has its reads counted from each entry */
#define SWAPWALK_OWNERS 128
/* reads in one walk, beyond which it chooses nothing (several users'
 * floods together: the swap kills are then off, with a warning, never
 * moved elsewhere) */
#define SWAPWALK_READS_MAX 16384

/* a delegated subtree, by its topmost group, and its reads in the walk */
struct swapwalk_owner {
	dev_t dev;
	ino_t ino;
	size_t reads;
};

struct swapwalk {
	uid_t trusted_uid_max;      /* groups of owners above this uid are a user's */
	char best[CONFIG_PATH_MAX]; /* the group (a path below the cgroup2 mount); "" none */
	uint64_t best_swap;
	size_t reads;   /* memory.swap.current files read */
	bool exhausted; /* SWAPWALK_READS_MAX reached: no choice */
	struct swapwalk_owner owners[SWAPWALK_OWNERS], spare;
	size_t n_owners;
	struct swapwalk_owner *owner; /* the subtree the walk is in; NULL: none */
	bool owner_over;              /* its reads ran out: back up to where the walk entered it */
	size_t owner_whole;           /* groups counted whole for that */
};

void swapwalk_init(struct swapwalk *w, uid_t trusted_uid_max);

/* Walks the groups below unit ("/" the root group, never a choice itself)
 * of the cgroup2 hierarchy mounted at mount, under rootfd, into w. Several
 * units go into one w. 0, or -errno when the unit cannot be opened. */
int swapwalk_unit(int rootfd, const char *mount, const char *unit, struct swapwalk *w);
