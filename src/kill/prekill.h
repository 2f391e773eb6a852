/* SPDX-License-Identifier: MIT */
/* prekill: the pre_kill hook's phase of a kill. Between the choice of a
 * victim (pinned by its pidfd) and its signal, kill.c runs the pre_kill
 * program (hook.h: as on_kill_user, no capabilities, adj 0, the victim's
 * fields escaped in its environment) and signals when the program exits or
 * at pre_kill_timeout, whichever comes first; the event loop runs on
 * meanwhile. This module owns the hook in flight -- its pid, when it
 * started, the kill's decision time -- its end (its process group killed at
 * the timeout), the rule of which kills may wait for it, and the phase's
 * counters. Only PSI kills wait: a last-resort kill (reason=low_memory), an
 * OOM hand-over kill (oom_killer = daemon) and the lmkd watchdog's kills
 * (its own thread, never through kill.c) signal at once, and so do kills of
 * the lmkd socket's registered processes (the protocol reports a kill to
 * its client as it happens). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "config.h"

struct prekill {
	pid_t hook;        /* the hook of the kill in flight; 0: none */
	pid_t ended;       /* a hook ended here (timeout, victim gone) not reaped yet; 0: none */
	uint64_t start_us; /* when the hook started */
	uint64_t decision_us; /* the kill's decision (killer_act), for the delay the hook added */
	uint64_t minflt0, majflt0; /* the kill path's fault counts at the decision */
	int why;           /* the kill's enum fire_reason */
	char group[CONFIG_PATH_MAX]; /* the env's group of the decision ("" = the main watch) */
	/* counters (status, metrics) */
	uint64_t runs;        /* hooks started */
	uint64_t exited;      /* of them: exited before the timeout */
	uint64_t timeouts;    /* of them: process group killed at the timeout */
	uint64_t victim_gone; /* of them: the victim exited meanwhile, no signal */
	uint64_t cancelled;   /* of them: the tier or group gone at the signal (reload), no signal */
};

/* Whether a kill for this reason may wait for the pre_kill hook: only a
 * PSI decision (psi true); a last resort or an OOM decision must free
 * memory now. */
static inline bool prekill_may_wait(bool psi)
{
	return psi;
}

/* The hook pid started at now for a decision of env group (why: its
 * enum fire_reason) is in flight. */
void prekill_started(struct prekill *pk, pid_t pid, uint64_t now, int why, const char *group);

/* Ends the hook in flight early: SIGKILL to its process group (the hook
 * leads a session of its own; its pid stays unreaped until the daemon
 * reaps it, so the group cannot be another's). Returns its pid, 0 if none. */
pid_t prekill_stop(struct prekill *pk);

enum prekill_child {
	PREKILL_NOT_OURS, /* another child (on_kill) */
	PREKILL_IN_FLIGHT, /* the hook of the kill in flight exited: signal now */
	PREKILL_ENDED,    /* a hook ended earlier (prekill_stop) is reaped */
};

/* A child the daemon reaped: which kind it is. The hook is forgotten. */
enum prekill_child prekill_reaped(struct prekill *pk, pid_t pid);

/* Milliseconds since the hook started. */
static inline uint64_t prekill_ms(const struct prekill *pk, uint64_t now)
{
	return now > pk->start_us ? (now - pk->start_us) / 1000 : 0;
}
