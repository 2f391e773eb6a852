/* SPDX-License-Identifier: MIT */
/* oomhand: the hand-over of a memory cgroup's OOM (oom_killer = daemon) as a
 * state machine of its own, so that "was this OOM answered?" is never read
 * off a flag that means something else (a kill of some tier in flight).
 *
 *   IDLE      the group is not out of memory (or its OOM is not ours)
 *   DECIDING  out of memory: a decision is due, now or as soon as the kill
 *             in flight (some other tier's) has ended
 *   WAITING   a member of the group was signalled for this OOM: waiting for
 *             it to die, then a re-check after OOMHAND_RECHECK_US
 *   RELEASED  given back to the kernel's OOM killer
 *
 * Out of memory for bound_us without progress (a kill of ours that ended),
 * whatever happened, the group goes back to the kernel: nothing stays hung.
 * Pure: the caller reads under_oom, makes the decisions and the release. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "victim.h"

/* after a kill of ours ended, the group's waiting tasks get this long to
 * take the freed memory before "still out of memory" means a new decision */
#define OOMHAND_RECHECK_US ((uint64_t)200 * 1000)
/* the longest the idle clock may sleep while an OOM is being handled */
#define OOMHAND_TICK_US ((uint64_t)50 * 1000)
/* beyond the kill's own timeouts, the bound's slack */
#define OOMHAND_SLACK_US ((uint64_t)1000 * 1000)

enum oomhand_state {
	OOMHAND_IDLE = 0,
	OOMHAND_DECIDING,
	OOMHAND_WAITING,
	OOMHAND_RELEASED,
};

/* What the caller does next. */
enum oomhand_do {
	OOMHAND_NOTHING = 0,
	OOMHAND_DECIDE,  /* fire the OOM decision (members of the group only) */
	OOMHAND_RELEASE, /* give the group's OOM back to the kernel */
	OOMHAND_OVER,    /* the group is no longer out of memory */
};

struct oomhand {
	enum oomhand_state state;
	uint64_t bound_us;  /* out of memory this long without progress: released */
	uint64_t since_us;  /* the notice, or the end of the last kill of ours */
	uint64_t ended_us;  /* WAITING: when the kill of ours ended; 0 = in flight */
	struct proc_ident victim; /* WAITING: the member signalled */
	unsigned kills;     /* members signalled for this OOM */
};

const char *oomhand_state_name(enum oomhand_state s);

/* bound_us: kill_timeout + the longest term_timeout + OOMHAND_SLACK_US. */
void oomhand_init(struct oomhand *o, uint64_t bound_us);
/* The kernel says the group is out of memory (under_oom 1): DECIDING,
 * unless a kill of ours for it is in flight (then it stays WAITING). */
void oomhand_notified(struct oomhand *o, uint64_t now);
/* After the decision a notice or a DECIDE asked for: killed (a member was
 * signalled, victim), or busy (another kill is in flight: decide when it
 * ends). RELEASE when neither: nothing will free memory in the group. */
enum oomhand_do oomhand_decided(struct oomhand *o, uint64_t now, bool killed, const struct proc_ident *victim,
				bool busy);
/* Each tick while oomhand_active: under_oom as read (1, 0, or -errno: the
 * group is gone or unreadable, which ends the hand-over) and whether a kill
 * is in flight. */
enum oomhand_do oomhand_poll(struct oomhand *o, uint64_t now, int under_oom, bool kill_active);
/* DECIDING or WAITING: the idle clock must tick at least every OOMHAND_TICK_US. */
bool oomhand_active(const struct oomhand *o);
