/* SPDX-License-Identifier: MIT */
/* oomhand: the OOM hand-over's states and transitions (see oomhand.h). */
#include <string.h>

#include "oomhand.h"

const char *oomhand_state_name(enum oomhand_state s)
{
	switch (s) {
	case OOMHAND_IDLE:
		return "idle";
	case OOMHAND_DECIDING:
		return "deciding";
	case OOMHAND_WAITING:
		return "waiting";
	case OOMHAND_RELEASED:
		return "released";
	}
	return "?";
}

void oomhand_init(struct oomhand *o, uint64_t bound_us)
{
	memset(o, 0, sizeof(*o));
	o->bound_us = bound_us;
}

bool oomhand_active(const struct oomhand *o)
{
	return o->state == OOMHAND_DECIDING || o->state == OOMHAND_WAITING;
}

void oomhand_notified(struct oomhand *o, uint64_t now)
{
	if (o->state == OOMHAND_RELEASED)
		return;
	if (o->state == OOMHAND_IDLE) {
		o->since_us = now;
		o->kills = 0;
	}
	/* a kill of ours in flight answers this notice too */
	if (o->state != OOMHAND_WAITING || o->ended_us)
		o->state = OOMHAND_DECIDING;
}

enum oomhand_do oomhand_decided(struct oomhand *o, uint64_t now, bool killed, const struct proc_ident *victim,
				bool busy)
{
	if (o->state != OOMHAND_DECIDING)
		return OOMHAND_NOTHING;
	if (killed) {
		o->state = OOMHAND_WAITING;
		o->victim = *victim;
		o->ended_us = 0;
		o->kills++;
		return OOMHAND_NOTHING;
	}
	if (busy && now - o->since_us < o->bound_us)
		return OOMHAND_NOTHING; /* decided again when that kill ends */
	o->state = OOMHAND_RELEASED;
	return OOMHAND_RELEASE;
}

enum oomhand_do oomhand_poll(struct oomhand *o, uint64_t now, int under_oom, bool kill_active)
{
	if (!oomhand_active(o))
		return OOMHAND_NOTHING;
	if (o->state == OOMHAND_WAITING && !kill_active && !o->ended_us) {
		o->ended_us = now; /* progress: the kill of ours is over */
		o->since_us = now;
	}
	if (under_oom <= 0) {
		o->state = OOMHAND_IDLE;
		return OOMHAND_OVER;
	}
	if (now - o->since_us >= o->bound_us) {
		o->state = OOMHAND_RELEASED;
		return OOMHAND_RELEASE;
	}
	if (kill_active)
		return OOMHAND_NOTHING;
	if (o->state == OOMHAND_WAITING) {
		if (now - o->ended_us < OOMHAND_RECHECK_US)
			return OOMHAND_NOTHING;
		o->state = OOMHAND_DECIDING;
	}
	return OOMHAND_DECIDE;
}
