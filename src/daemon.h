/* daemon: the one context of a running psi-lmkd, and its event loop.
 * It wires config, triggers, the /proc scan, victim choice and the reaper. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "config.h"
#include "log.h"
#include "procfs.h"
#include "pick.h"
#include "policy.h"
#include "victim.h"
#include "watch.h"

#define DAEMON_SURVIVORS_MAX 32

struct daemon_options {
	const char *root; /* "/" in production; a fixture tree in tests */
	bool dry_run;     /* -n: overrides the config's dry_run = false */
	int log_level;
	bool use_syslog;
	const struct watch_ops *ops; /* NULL: the real kernel */
	bool drop_caps;              /* keep only caps_needed (the daemon; not tests) */
};

struct tier_state {
	uint64_t events;   /* events seen (kernel trigger or userspace monitor) */
	uint64_t deferred; /* events while a victim was dying: counted, not acted on */
	uint64_t kills;
	uint64_t no_candidate;
	uint64_t last_kill_us;
	uint64_t gated;    /* events a gate (min_events, min_available) held back */
	uint64_t last_idle_log_us; /* rate limit of "not acting" lines */
	unsigned idle_unlogged;
	unsigned streak;   /* consecutive events, for min_events */
	uint64_t last_event_us;
};

struct inflight_kill {
	bool active;
	int pidfd;
	struct proc_info victim;
	char tier[CONFIG_NAME_MAX + 1];
	uint64_t sent_us;    /* the first signal */
	uint64_t sigkill_us; /* SIGKILL (== sent_us unless SIGTERM came first) */
	bool term_phase; /* SIGTERM sent, SIGKILL follows at the timer */
	uint64_t kill_timeout_us;
};

struct daemon {
	struct config cfg;
	struct log log;
	bool cli_dry_run;
	int rootfd;
	int procfd;
	int epfd;
	int sigfd;
	int timerfd;    /* kill_timeout / term_timeout */
	int memtimerfd; /* low_available checks */
	int wdtimerfd;  /* sd_notify watchdog keep-alive, -1 without WatchdogSec= */
	int rearmtimerfd; /* retries a lost pressure file */
	uint64_t rearm_delay_us;
	int rearm_last_err;
	uint64_t lost_at_us;
	uint64_t watchdog_usec;
	pid_t self;
	struct policy *policy;
	char cg2_mount[CONFIG_PATH_MAX];
	char memory_cgroup[CONFIG_PATH_MAX]; /* effective; "" = system-wide */
	bool has_low_memory_tiers;
	int mem_read_err; /* the last failure to read it, logged once */
	uint64_t settle_until_us;
	bool cap_sys_resource;
	bool manage_caps; /* opt->drop_caps: the daemon's capabilities are ours to change */
	bool hook_caps;   /* CAP_SETUID and CAP_SETGID are permitted (never effective) */
	bool hook_caps_dropped; /* we dropped them (no on_kill): only a restart brings them back */
	bool hook_ok;     /* the on_kill hook can switch to on_kill_user: run it */
	const struct watch_ops *ops;
	struct watch watch;
	bool watch_armed;
	uint32_t generation; /* bumped by each reload and re-arm */
	struct tier_state tiers[CONFIG_TIERS_MAX];
	struct inflight_kill kill;
	struct kill_pick pick;
	struct proc_ident survivors[DAEMON_SURVIVORS_MAX]; /* signalled, outlived kill_timeout */
	size_t n_survivors;
	uint64_t kills_total;
	bool quit;
};

/* Sets up everything and arms every tier. Logs what failed; returns 0 or -errno. */
int daemon_init(struct daemon *d, const struct config *cfg, const struct daemon_options *opt);
/* Runs the event loop until SIGTERM/SIGINT. Returns 0 or -errno on a fatal error. */
int daemon_run(struct daemon *d);
void daemon_deinit(struct daemon *d);
