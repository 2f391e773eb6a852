/* daemon-private: the daemon's epoll tags and limits, for daemon.c and the
 * tests that look inside a running daemon; nothing else may use them. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daemon.h"

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
	TAG_BUS,      /* the system bus (action = warn tiers) */
};

/* TAG_LMKD's index: an lmkd_fd_kind and its index (a client slot, a record) */
#define LMKD_TAG(kind, idx) (((uint32_t)(kind) << 28) | ((uint32_t)(idx)&0x0fffffffu))

/* epoll tags: kind, the watch generation (a reload starts a new one, so an
 * event of an old fd still queued in this wakeup is recognised), index */
#define TAG(kind, idx) (((uint64_t)(kind) << 56) | ((uint64_t)(d->generation & 0xffffffu) << 32) | (uint32_t)(idx))
#define TAG_KIND(tag) ((enum tag_kind)((tag) >> 56))
#define TAG_GEN(tag) ((uint32_t)(((tag) >> 32) & 0xffffffu))
#define TAG_INDEX(tag) ((size_t)((tag)&0xffffffffu))

/* retry delays of a lost pressure file: doubling from MIN up to MAX */
#define REARM_MIN_US ((uint64_t)100 * 1000)
#define REARM_MAX_US ((uint64_t)2 * 1000000)

/* -vv: the low_available check's debug line at most this often */
#define MEM_DEBUG_LOG_US ((uint64_t)100 * 1000)

/* fds a kill and a scan need beyond those held: pidfd, /proc dir, one /proc file */
#define FD_RESERVE 3
/* the soft RLIMIT_NOFILE psi-lmkd raises a lower one to (FD_SETSIZE) */
#define FD_SOFT_LIMIT 1024

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
/* Connects to the system bus while some tier warns, disconnects when none does. */
void daemon_warn_setup(struct daemon *d);
void daemon_warn_bus_event(struct daemon *d);
/* Tier i (a warn tier) fired: LowMemoryWarning, at most every WARN_INTERVAL_US. */
void daemon_warn(struct daemon *d, size_t i);
void daemon_warn_close(struct daemon *d);
/* Sends a Killed signal on the system bus for each new kill (warn.h). */
void daemon_warn_kills(struct daemon *d);
#define WARN_INTERVAL_US (10 * 1000000ULL)
