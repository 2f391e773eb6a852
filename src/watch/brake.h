/* SPDX-License-Identifier: MIT */
/* brake: the memory.high brake of a cgroup2 memory cgroup (memory_high_brake).
 * While psi-lmkd runs, the watched group's memory.high sits a margin below
 * its memory.max: the kernel reclaims above it and throttles the tasks that
 * allocate there, so a runaway slows down before the group reaches
 * memory.max, where the kernel's OOM killer would act, and psi-lmkd's
 * low_available check (whose line is above the brake) has time to choose.
 *
 * The value memory.high had before is kept on the group itself, in the
 * extended attribute BRAKE_XATTR ("ORIG SET": what to restore, what was
 * written), so that a clean stop, the next start, or `psi-lmkd
 * --release-brake` (ExecStopPost= of the unit, for a daemon that was
 * SIGKILLed) can put it back -- and only if memory.high still holds what
 * psi-lmkd wrote.
 *
 * The margin is twice the largest low_available unless the configuration
 * names one: the kernel starts to throttle a runaway one low_available
 * before psi-lmkd's line, and at memory.max the overage is large enough
 * for its delays to matter (the kernel's penalty grows with the square of
 * the share over memory.high).
 *
 * A group parked at the brake (usage within BRAKE_PARK_STEP of it or above:
 * the kernel keeps a group that has page cache to give just under it, by
 * reclaiming its working set; its footprint -- anonymous memory and swap --
 * grown less than BRAKE_PARK_STEP) for BRAKE_PARK_US gets
 * its memory.high back until the footprint grows again: a benign workload
 * that settled there is not throttled for ever (nor again each time its
 * usage dips below the brake and comes back), and a throttled runaway,
 * which still grows, is never let go.
 *
 * Pure: the daemon's side is daemon-brake.c. UINT64_MAX stands for "max". */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BRAKE_XATTR "user.psi_lmkd.memory_high"
/* at the brake this long with no growth: parked, memory.high restored */
#define BRAKE_PARK_US ((uint64_t)1000 * 1000)
/* ... growing less than this meanwhile; "at": usage within this of it */
#define BRAKE_PARK_STEP (1ULL << 20)
#define BRAKE_PAGE 4096ULL

/* What BRAKE_XATTR holds. */
struct brake_record {
	uint64_t orig; /* memory.high before the brake (UINT64_MAX: "max") */
	uint64_t set;  /* what psi-lmkd wrote */
};

/* "ORIG SET", each a number or "max". The length, or -ENOSPC. */
int brake_format(char *buf, size_t size, const struct brake_record *r);
/* The attribute's text (not NUL-terminated: len bytes). 0 or -EINVAL. */
int brake_parse(const char *text, size_t len, struct brake_record *r);
/* A value as memory.high takes it: a number, or "max". */
const char *brake_value(char *buf, size_t size, uint64_t v);

/* The margin in bytes: margin_bytes if the configuration names one, else
 * ("on") twice the largest low_available. */
uint64_t brake_margin(uint64_t margin_bytes, uint64_t low_available);

/* The brake of a group with memory.max max, memory.high cur_high: *high =
 * max less margin, page aligned. 0 (brake it), 1 (memory.high is at or
 * below that already: leave it), or why not: -ENODATA (no memory.max),
 * -EINVAL (no margin), -ERANGE (the margin is more than half of max). */
int brake_target(uint64_t max, uint64_t cur_high, uint64_t margin, uint64_t *high);

/* On release: true and *to = the value to write back if memory.high still
 * holds what psi-lmkd wrote (or the original: parked); false if someone
 * changed it since (left as it is). */
bool brake_restore(const struct brake_record *r, uint64_t cur_high, uint64_t *to);

enum brake_state {
	BRAKE_OFF = 0, /* no brake on the group */
	BRAKE_ON,      /* memory.high = high */
	BRAKE_PARKED,  /* lifted for a group parked at it */
};

enum brake_do {
	BRAKE_NOTHING = 0,
	BRAKE_LIFT,  /* write the original memory.high back (parked) */
	BRAKE_APPLY, /* write high again */
};

struct brake {
	enum brake_state state;
	uint64_t high;          /* the brake's memory.high */
	uint64_t over_since_us; /* ON: at high, not growing, since; 0 = not */
	uint64_t base;          /* the footprint then (ON), or when parked */
	unsigned parks;         /* times lifted for a parked group */
};

/* The brake is on at high. */
void brake_start(struct brake *b, uint64_t high);
/* A memory check: the group's usage and its footprint (bytes). */
enum brake_do brake_poll(struct brake *b, uint64_t now, uint64_t usage, uint64_t footprint);
