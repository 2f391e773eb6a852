/* SPDX-License-Identifier: MIT */
/* kill: the kill path, as a module of its own. A struct killer owns the kill
 * in flight, the processes never to be chosen again (survivors of SIGKILL,
 * processes the daemon may not signal), the settle time, the no-candidate
 * back-off and the victim choice's scratch space. The daemon reaches it
 * through three calls -- killer_act (tiers fired), killer_exited (the
 * victim's pidfd is readable), killer_timer (the kill's timer expired) -- and
 * lends it fd and timer operations through struct killer_ops, so that tests
 * drive it without an event loop. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "config.h"
#include "history.h"
#include "log.h"
#include "pick.h"
#include "prekill.h"
#include "procfs.h"
#include "recovery.h"
#include "victim.h"

#define KILLER_EXCLUDE_MAX 32
/* A victim still alive at kill_timeout (in uninterruptible sleep, say,
 * swapping in under SIGKILL) is given up on but still frees its memory as
 * it goes: for this long, hold_recovery counts what it still holds as
 * memory coming back (the stall alone then kills nobody else). */
#define KILLER_DYING_HOLD_US (10 * 1000000ULL)
/* no candidate: the next scan of that tier waits from MIN doubling to MAX,
 * unless a process was created meanwhile */
#define KILLER_RESCAN_MIN_US 100000ULL
#define KILLER_RESCAN_MAX_US 1600000ULL
#define KILLER_IDLE_LOG_INTERVAL_US (10 * 1000000ULL)

enum fire_reason {
	FIRE_PSI,
	FIRE_LOW_MEMORY,
	FIRE_OOM, /* the watched group is out of memory, its OOM killer ours (oom_killer = daemon) */
	FIRE_MANAGED_PRESSURE, /* a unit's ManagedOOMMemoryPressure=kill limit held for its duration (daemon-moom.c) */
	FIRE_MANAGED_SWAP,     /* swap used over SwapUsedLimit=, in a ManagedOOMSwap=kill unit (daemon-moom.c) */
};

/* A last resort or an out-of-memory decision: it acts while settling and
 * does not wait for min_events, pre_kill or recovery; the other reasons
 * (a stall, a unit's ManagedOOM setting) do. */
static inline bool fire_urgent(enum fire_reason why)
{
	return why == FIRE_LOW_MEMORY || why == FIRE_OOM;
}

/* One tier that fired in a wakeup: its index in the configuration the
 * caller passes along with it, and why. */
struct fired {
	size_t tier;
	enum fire_reason why;
};

/* what a tier's low_available check found (tier_state.mem_state) */
enum { MEM_STATE_OK, MEM_STATE_SWAP_HELD, MEM_STATE_LOW, MEM_STATE_IDLE_HELD, MEM_STATE_FALL_HELD, MEM_STATE_COUNT };

/* A tier's counters and gate state; the daemon keeps one per tier of its
 * configuration (a reload carries them over by tier name). */
struct tier_state {
	uint64_t events;   /* events seen (kernel trigger or userspace monitor) */
	uint64_t deferred; /* events while a victim was dying or settling: counted, not acted on */
	uint64_t kills;
	uint64_t kills_low_memory; /* of them: reason=low_memory */
	uint64_t kills_oom;        /* of them: reason=oom (oom_killer = daemon); the rest: the tier's trigger */
	uint64_t warnings;         /* action = warn: LowMemoryWarning signals sent */
	uint64_t last_warn_us;
	uint64_t no_candidate;
	uint64_t last_kill_us;
	uint64_t gated;    /* events a gate (min_events, min_available) held back */
	uint64_t recovery_held; /* PSI events held back as recovery from the last kill (recovery.h) */
	uint64_t scans;    /* /proc scans for this tier */
	uint64_t last_idle_log_us; /* rate limit of "not acting" lines */
	unsigned idle_unlogged;
	unsigned streak;   /* consecutive events, for min_events */
	uint64_t last_event_us;
	uint64_t rescan_at_us;      /* no candidate: no scan before this, ... */
	uint64_t rescan_backoff_us; /* ... the wait doubles while nothing changes */
	long rescan_last_pid;       /* ... unless a process was created (-1: unknown) */
	/* low_available (the daemon's memory checks) */
	uint64_t mem_checks;  /* checks of the tier's low_available */
	uint64_t swap_held;   /* of them: available memory below low_available, but swap had room */
	uint64_t mem_growth;  /* of them: fired as anonymous growth would reach low_available within the horizon */
	uint64_t mem_log_us[MEM_STATE_COUNT]; /* rate limit of each kind of hold-back line */
	int mem_state;        /* MEM_STATE_*: what the last check found, logged when it changes */
	uint64_t idle_held;   /* checks held back for want of evidence (hold_idle): nothing stalled, and nothing grew or not below the floor */
	uint64_t idle_footprint; /* while held so: the least footprint seen */
	uint64_t idle_last;      /* ... the footprint at the last check */
	uint64_t idle_jump;      /* ... the largest rise between two checks since the least */
	uint64_t floor_since_us; /* the first of the checks in a row below hold_idle's floor; 0: above it */
};

/* A tier's state carried into a new configuration (a reload keeping the
 * tier): the counters stay; what a gate or a back-off was in the middle of
 * (the min_events streak, the rescan back-off) starts over. */
void tier_state_carry(struct tier_state *to, const struct tier_state *from);

struct inflight_kill {
	bool active;
	int pidfd;
	struct proc_info victim;
	char tier[CONFIG_NAME_MAX + 1];
	uint64_t sent_us;    /* the first signal */
	uint64_t sigkill_us; /* SIGKILL (== sent_us unless SIGTERM came first) */
	bool term_phase;     /* SIGTERM sent, SIGKILL follows at the timer */
	bool pre;            /* the pre_kill hook runs; no signal yet (prekill.h) */
	uint64_t kill_timeout_us;
	uint64_t settle_us;  /* the settle_time in force when it was killed */
};

struct killer_env;

/* What the killer borrows from its owner. */
struct killer_ops {
	int (*watch)(void *ctx, int pidfd);       /* report readability: killer_exited; -errno */
	void (*unwatch)(void *ctx, int pidfd);
	int (*arm_timer)(void *ctx, uint64_t us); /* one shot, then killer_timer; 0 disarms; -errno */
	void (*changed)(void *ctx);               /* a kill started or ended (service status) */
	uint64_t (*now_us)(void *ctx);            /* CLOCK_MONOTONIC */
	/* pre_kill: the env of a decision of group ("" = the main watch) as
	 * it is now, for the signal after the hook (buf: the env's strings);
	 * -ENOENT if the group is no longer watched */
	int (*env)(void *ctx, const char *group, struct killer_env *env, char *buf, size_t size);
};

/* Another source of victims than the /proc scan (the lmkd socket's
 * registry, lmkd-server.h). choose replaces pick_choose (same contract);
 * done hears how the kill of its choice went: 0 signalled, -ESRCH gone
 * before the signal, -EPERM not allowed (dry runs report nothing). */
struct kill_source {
	int (*choose)(void *ctx, const struct pick_ctx *c, int min_adj, struct kill_pick *p,
		      struct procfs_scan_stats *st);
	void (*done)(void *ctx, const struct proc_info *victim, const struct tier_config *t, enum fire_reason why,
		     int result);
	void *ctx;
};

/* What one decision uses of the owner's current configuration. */
struct killer_env {
	const struct config *cfg;
	const char *scope;    /* cgroup2 path victims are chosen in: cfg->scope, or a tier instance's group */
	bool strict_scope;    /* only inside scope: a process of unknown path is outside (victim.h) */
	const char *group;    /* the group a cgroup-pattern tier's instance watches; "" = none */
	const char *pressure; /* the pressure file the tiers run on (read into the history) */
	const struct victim_policy *policy;
	const char *memory_cgroup; /* bounds available memory; "" = system-wide */
	const char *oom_group;     /* oom_killer = daemon took this group's OOM: a FIRE_OOM
				    * decision chooses among its members only; NULL: none */
	bool dry_run;
	bool hook_ok;              /* on_kill can switch to on_kill_user */
	int hook_fd;               /* on_kill as checked and opened (trustpath.h); -1: none */
	int prekill_fd;            /* pre_kill, the same way; -1: none */
	struct tier_state *tiers;  /* parallel to cfg->tiers */
	const struct kill_source *source; /* NULL: the /proc scan (pick.h) */
};

/* The env of a decision on cfg's own tiers: scope and pressure file from
 * cfg, no group, memory system-wide, no other source, not a dry run. */
void killer_env_init(struct killer_env *env, const struct config *cfg, const struct victim_policy *policy,
		     struct tier_state *tiers);

struct killer;

/* The choice context a PSI decision of env would use (the OOM domain
 * unknown: victim_order badness then ranks by adj): for choices made
 * outside a decision (the lmkd watchdog's candidates). */
void killer_pick_ctx(const struct killer *k, const struct killer_env *env, struct pick_ctx *c);

struct killer {
	const struct killer_ops *ops;
	void *ctx;
	const struct log *log;
	int procfd, rootfd;
	const char *cg2_mount; /* "" when there is none */
	pid_t self;
	struct inflight_kill kill;
	uint64_t settle_until_us;
	struct recovery recovery; /* since the last victim died (hold_recovery) */
	struct proc_ident dying;  /* a victim alive at kill_timeout (pid 0: none) */
	uint64_t dying_until_us;  /* ... counted as memory coming back until then */
	struct proc_ident exclude[KILLER_EXCLUDE_MAX]; /* never chosen again */
	size_t n_exclude;
	struct kill_pick pick;
	struct growth_track growth; /* size samples the choices measure growth from (killer_observe) */
	uint64_t kills_total;
	uint64_t decisions; /* kills and would-kills */
	char last_tier[CONFIG_NAME_MAX + 1]; /* tier of the last decision */
	struct kill_history history; /* the last kills and would-kills (status query, metrics) */
	struct prekill prekill;      /* the pre_kill hook of the kill in flight, and its counters */
	/* The cost of the last decision, from killer_act to the signal (or the
	 * would-kill): page faults of the daemon (getrusage) and time; logged
	 * at debug level, read by bench/killpath. */
	struct kill_path_cost {
		uint64_t t0_us, minflt0, majflt0; /* at killer_act */
		uint64_t us, minflt, majflt;      /* at the signal */
	} path;
};

void killer_init(struct killer *k, const struct killer_ops *ops, void *ctx, const struct log *log, int procfd,
		 int rootfd, const char *cg2_mount, pid_t self);
/* Closes the pidfd of a kill in flight; nothing is signalled. */
void killer_deinit(struct killer *k);

/* Tiers fired in one wakeup (n of them, in any order; indices into
 * env->cfg). Unless a victim is still dying or settling, every fired tier
 * advances its min_events streak, and the most severe one (lowest band
 * floor) whose gates are open chooses and kills. */
void killer_act(struct killer *k, const struct killer_env *env, const struct fired *f, size_t n);
/* Tiers fired, or memory runs short, in this wakeup (after killer_act):
 * with culprit_growth in force, takes a size sample of the processes if
 * none was taken in the last GROWTH_REFRESH_US, so that a later choice
 * knows who grew (growth.h). Costs one scan of /proc at most that often,
 * only while pressure lasts. */
void killer_observe(struct killer *k, const struct killer_env *env);
/* The victim's pidfd became readable. */
void killer_exited(struct killer *k);
/* The kill's timer expired: SIGKILL after SIGTERM, or give up at
 * kill_timeout; or the pre_kill hook's timeout: its group killed, the
 * victim signalled. */
void killer_timer(struct killer *k);
/* The daemon reaped a child of its own (pid, wait status): if it is the
 * pre_kill hook, logs how it ended and, if the kill waits for it, signals
 * the victim now. false if it is no pre_kill hook (an on_kill one). */
bool killer_child_exited(struct killer *k, pid_t pid, int status);

/* Who tier i of env->cfg would kill now, and why, into p (p->pick.found
 * false: nobody): the same choice a kill makes (pick_choose), with nothing
 * logged or signalled. 0 or -errno (an incomplete /proc scan). */
int killer_preview(struct killer *k, const struct killer_env *env, size_t i, struct kill_pick *p);

/* One dry victim choice, logging nothing, and a touch of every page of the
 * program's code and of KILLER_STACK_PREFAULT bytes of stack: faults in
 * the kill path's code, stack and data before the daemon locks its memory
 * (mlockall MCL_ONFAULT locks only what is mapped by then). */
void killer_warm_up(struct killer *k, const struct killer_env *env);
