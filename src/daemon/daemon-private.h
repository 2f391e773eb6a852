/* SPDX-License-Identifier: MIT */
/* daemon-private: the daemon's epoll tags and limits, for daemon.c and the
 * tests that look inside a running daemon; nothing else may use them. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daemon.h"
#include "kill.h"
#include "watch.h"

enum tag_kind {
	TAG_SIGNAL = 1,
	TAG_TIER,     /* a tier's kernel trigger */
	TAG_SENTINEL, /* the coarse trigger that wakes userspace tiers */
	TAG_SAMPLE,   /* the watch's sampling timer */
	TAG_PIDFD,    /* the victim in flight exited */
	TAG_TIMER,    /* kill_timeout */
	TAG_MEMORY,   /* the idle clock: low_available check, safety samples */
	TAG_WATCHDOG, /* time for WATCHDOG=1 */
	TAG_REARM,    /* retry a pressure file that went away */
	TAG_MEMWAKE,  /* the memory cgroup's usage threshold or memory.events */
	TAG_MEMOOM,   /* the memory cgroup is out of memory (oom_killer = daemon) */
	TAG_LMKD,     /* the lmkd socket: index = LMKD_TAG(kind, index) */
	TAG_CONTROL,  /* a --status client connected */
	TAG_BUS,      /* the system bus (index 0) and its timer (1): warn tiers, Killed */
	TAG_GROUPS,   /* inotify: a group may have come or gone */
	TAG_GTIER,    /* a group's kernel trigger: GTAG index = slot << 8 | tier */
	TAG_GSENTINEL, /* a group's sentinel trigger */
	TAG_GSAMPLE,  /* a group's sampling timer */
	TAG_MOOM,     /* ManagedOOM: the connection to PID 1 (index 0), its timer (1), the user managers' socket (2), their connections (3 + i) */
};

/* TAG_LMKD's index: an lmkd_fd_kind and its index (a client slot, a record) */
#define LMKD_TAG(kind, idx) (((uint32_t)(kind) << 28) | ((uint32_t)(idx)&0x0fffffffu))

/* epoll tags: kind, the watch generation (a reload starts a new one, so an
 * event of an old fd still queued in this wakeup is recognised), index */
#define TAG(kind, idx) (((uint64_t)(kind) << 56) | ((uint64_t)(d->generation & 0xffffffu) << 32) | (uint32_t)(idx))
#define TAG_KIND(tag) ((enum tag_kind)((tag) >> 56))
#define TAG_GEN(tag) ((uint32_t)(((tag) >> 32) & 0xffffffu))
#define TAG_INDEX(tag) ((size_t)((tag)&0xffffffffu))

/* a group's fds: the group's own serial in the generation field (a slot
 * reused after a group went, or a reload, is told apart), slot and tier */
#define GTAG(kind, serial, slot, tier)                                                                          \
	(((uint64_t)(kind) << 56) | ((uint64_t)((serial)&0xffffffu) << 32) | ((uint32_t)(slot) << 8) | (uint32_t)(tier))
#define GTAG_SLOT(tag) ((size_t)(((tag) >> 8) & 0xffffffu))
#define GTAG_TIER(tag) ((size_t)((tag)&0xffu))

/* One group watched for the cgroup-pattern tiers that match it. Tier indices
 * are the configuration's, like the main watch's. */
struct group {
	char path[CONFIG_PATH_MAX];          /* cgroup2 path, relative to the mount */
	bool has_memory;                     /* it has memory.max: available memory is the group's */
	uint32_t tiers;                      /* the configuration's tiers armed on it */
	uint32_t serial;
	bool seen;                           /* matched by the walk in progress */
	bool lost;                           /* its file failed: disarmed, gone at the next walk */
	bool pending;                        /* some tier fired in this wakeup */
	struct watch watch;
	bool fired[CONFIG_TIERS_MAX];
	enum fire_reason why[CONFIG_TIERS_MAX];
	struct tier_state tiers_state[CONFIG_TIERS_MAX];
	char name[];                         /* path as a display name (escape.h): for status and metrics */
};

/* The tiers that fired in one wakeup, and why: tier indices of the
 * configuration of cfg_generation. A reload in the same wakeup empties it
 * (the monitors raise a still-present stall again within a window), so that
 * a decision never runs on another configuration's tier. */
struct wake {
	uint32_t cfg_generation;
	bool fired[CONFIG_TIERS_MAX];
	enum fire_reason why[CONFIG_TIERS_MAX];
	bool oom; /* the memory cgroup reported OOM (oom_killer = daemon) */
	bool observe; /* memory is close to a low_available line: sample who grows (killer_observe) */
};

/* daemon-base.c: adds (add) or removes every fd of watch w to/from the epoll
 * set: tier i's trigger tagged tier_tag0 + i, the sentinel and the sampling
 * timer with theirs. 0 or the first -errno of an add (the rest not added). */
int daemon_watch_fds(struct daemon *d, const struct watch *w, bool add, uint64_t tier_tag0, uint64_t sentinel_tag,
		     uint64_t sample_tag);
/* daemon-base.c: an empty wakeup of d's configuration; the wakeup's fired tiers */
void daemon_wake_reset(const struct daemon *d, struct wake *w);
void daemon_tier_fired(struct daemon *d, size_t i, enum fire_reason why, struct wake *w);

/* daemon-memory.c */
/* The memory cgroup that bounds "available", the low_available tiers and
 * the idle clock's first tick; the memory cgroup's notifications. */
void daemon_setup_memory(struct daemon *d);
/* A tick of the idle clock: the low_available check, then every due safety sample. */
void daemon_idle_tick(struct daemon *d, struct wake *w);
/* The memory cgroup's usage threshold or memory.events fired. */
void daemon_memory_wake(struct daemon *d, struct wake *w);
/* memory.high back to what it was before the brake, if there is one. */
void daemon_brake_release(struct daemon *d);
/* Looks at the kernel's OOM kill counter of the memory domain (the memory
 * cgroup, or system-wide) and says so when it moved: a kill psi-lmkd did not
 * make in time. Rate-limited to once a second unless now. */
void daemon_count_misses(struct daemon *d, bool now);
/* The memory cgroup's OOM notification (oom_killer = daemon). */
void daemon_memory_oom(struct daemon *d, struct wake *w);
/* After the decision on an OOM (killed: a member of the group was
 * signalled): the hand-over waits for it, or for the kill in flight, or
 * gives the group back to the kernel (oomhand.h). */
void daemon_memory_oom_decided(struct daemon *d, bool killed);

/* daemon-groups.c */
/* Arms the groups of the configuration's cgroup-pattern tiers (none: a
 * no-op). 0, or -errno when they cannot be watched at all (no cgroup2). */
int daemon_groups_start(struct daemon *d);
/* After a reload replaced d->cfg: the groups of the new patterns are armed,
 * and a group and tier kept (same path, same tier name among the old_n
 * old_names) keep their counters. */
void daemon_groups_reload(struct daemon *d, const char (*old_names)[CONFIG_NAME_MAX + 1], size_t old_n);
/* Disarms and forgets every group. */
void daemon_groups_stop(struct daemon *d);
/* A group fd or the inotify fd reported (TAG_GROUPS, TAG_G*). */
void daemon_groups_event(struct daemon *d, uint64_t tag, uint32_t events);
/* The env of a decision for group g: its scope, pressure file, memory
 * domain (its memory.max, written to dir) and counters. */
void daemon_group_env(struct daemon *d, struct group *g, struct killer_env *env, char *dir, size_t size);
/* After the batch: the killer decides on each group whose tiers fired. */
void daemon_groups_act(struct daemon *d);
/* After the batch: walk again if a group came, went or failed. */
void daemon_groups_refresh(struct daemon *d);
/* The fds the groups may take at most (max_groups of them armed). */
uint64_t daemon_groups_fd_need(const struct daemon *d);
/* A tick of the idle clock at now_us (period period_us): the safety sample
 * of every group watch that is due. */
void daemon_groups_idle_tick(struct daemon *d, uint64_t now_us, uint64_t period_us);
/* The longest idle clock period the group watches allow (UINT64_MAX: none
 * needs safety samples). */
uint64_t daemon_groups_idle_limit(const struct daemon *d);
/* daemon-memory.c: a watch appeared that may need the idle clock sooner
 * than it ticks (or at all): the clock is re-armed if so (daemon-groups.c
 * reaches it through d->up.idle_clock_update). */
void daemon_idle_clock_update(struct daemon *d);
/* SIGUSR1: one status line per group and tier. */
void daemon_groups_log_status(struct daemon *d);
/* "kills oom_score_adj >= N in SCOPE" (daemon-base.c), shared with the groups */
const char *daemon_tier_action_words(char *buf, size_t size, const struct daemon *d, const struct tier_config *t,
				     const char *scope);
/* The "tier X armed" lines of one watch; group: the group it watches, or NULL. */
void daemon_log_watch(struct daemon *d, const struct watch *w, const char *group);

/* daemon-moom.c: systemd_managed_oom */
/* Subscribes to PID 1's ManagedOOM settings when the configuration asks
 * (root: unused; the socket is found under the root fd). 0 or -errno. */
int daemon_moom_start(struct daemon *d, const char *root);
void daemon_moom_stop(struct daemon *d);
/* After a reload: started, stopped, or the kills' configuration rebuilt. */
void daemon_moom_reload(struct daemon *d);
/* TAG_MOOM: the connection (index 0), the timer (1), the user managers'
 * socket (2) or one of their connections (3 + i) reported. */
void daemon_moom_event(struct daemon *d, size_t index, uint32_t events);
/* SIGUSR1: the subscription and each managed unit. */
void daemon_moom_log_status(struct daemon *d);

/* retry delays of a lost pressure file: doubling from MIN up to MAX */
#define REARM_MIN_US ((uint64_t)100 * 1000)
#define REARM_MAX_US ((uint64_t)2 * 1000000)

/* -vv: the low_available check's debug line at most this often */
#define MEM_DEBUG_LOG_US ((uint64_t)100 * 1000)

/* fds a kill and a scan need beyond those held: pidfd, /proc dir, one /proc file */
#define FD_RESERVE 3
/* the soft RLIMIT_NOFILE psi-lmkd raises a lower one to (FD_SETSIZE) */
#define FD_SOFT_LIMIT 1024

/* daemon-base.c: --dry-run or dry_run = true; the env of a decision on the main watch */
bool daemon_dry_run(const struct daemon *d);

struct killer_env;
void killer_env_of(struct daemon *d, struct killer_env *env);

/* daemon-status.c: the control socket (--status) and the metrics file */
void daemon_ctl_open(struct daemon *d, bool enable);
void daemon_ctl_event(struct daemon *d);
/* Rewrites the metrics file if any value in it changed (no-op without metrics_file). */
void daemon_ctl_metrics(struct daemon *d);
void daemon_ctl_close(struct daemon *d);

/* daemon-warn.c: action = warn tiers */
/* Connects to the system bus while some tier warns (or a kill was
 * signalled), disconnects when nothing wants it. */
void daemon_warn_setup(struct daemon *d);
/* The bus fd (index 0) or the bus timer (1) reported. */
void daemon_warn_bus_event(struct daemon *d, size_t index);
/* Tier i (a warn tier) fired: LowMemoryWarning, at most every WARN_INTERVAL_US. */
void daemon_warn(struct daemon *d, size_t i);
void daemon_warn_close(struct daemon *d);
/* Sends a Killed signal on the system bus for each new kill (warn.h). */
void daemon_warn_kills(struct daemon *d);
/* After each wakeup: the bus fd's events and the bus timer as the
 * connection needs them, and the drops reported (at most every
 * WARN_BUS_DROP_LOG_US). */
void daemon_warn_poll(struct daemon *d);
#define WARN_INTERVAL_US (10 * 1000000ULL)
/* a failed or lost connection is retried after 1 s, doubling up to 60 s */
#define WARN_BUS_RETRY_MIN_US (1000000ULL)
#define WARN_BUS_RETRY_MAX_US (60 * 1000000ULL)
#define WARN_BUS_DROP_LOG_US (60 * 1000000ULL)
