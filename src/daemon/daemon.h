/* SPDX-License-Identifier: MIT */
/* daemon: the one context of a running psi-lmkd, and its event loop.
 * It wires config, triggers, the /proc scan, victim choice and the reaper. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "config.h"
#include "groupset.h"
#include "memevent.h"
#include "brake.h"
#include "oomhand.h"
#include "memory.h"
#include "moom.h"
#include "moomlink.h"
#include "kill.h"
#include "log.h"
#include "logsink.h"
#include "procfs.h"
#include "policy.h"
#include "victim.h"
#include "warn.h"
#include "watch.h"

struct lmkd_server;
struct group;
struct wake;

/* The groups the cgroup-pattern tiers watch (daemon-groups.c). */
struct daemon_groups {
	bool active;          /* the configuration has cgroup-pattern tiers */
	struct groupset set;  /* walks and the inotify watch of their directories */
	struct group **slot;  /* cfg.max_groups slots, NULL = free */
	size_t n_slots, n;
	uint32_t serial;      /* bumped for each group armed: tags its fds */
	bool walk;            /* something changed: walk again after this wakeup */
	uint64_t walks;
	uint64_t arms, losses; /* groups armed, and disarmed because they were removed */
	uint64_t not_watched;  /* matches left out at the last walk: max_groups reached */
	uint64_t last_walk_us; /* how long the last walk and arming took */
	int walk_err;          /* the last walk's error, logged once */
};

/* systemd_managed_oom: the units' ManagedOOM settings (daemon-moom.c) */
struct daemon_moom {
	bool active;
	struct moom_link link;   /* the subscription to PID 1 */
	struct moom_set set;     /* the managed units */
	int timerfd;             /* the 1 s check while units are managed, and the reconnect */
	uint64_t backoff_us, retry_at_us;
	int last_err;            /* the last connect error, logged once */
	bool denied;             /* PID 1 refused the subscription */
	bool full_logged;
	bool swap_walk_logged;   /* the last swap walk was cut short, logged (once per stretch) */
	struct config *cfg;      /* the managed kills' configuration: the daemon's with one tier */
	struct tier_state tiers[1];
	uint64_t messages, bad_messages, connects, kills;
	uint64_t kills_pressure, kills_swap; /* of the kills: reason=managed_oom_pressure, managed_oom_swap */
	/* the user managers' reports, on systemd-oomd's socket (MOOM_USER_SOCKET) */
	int lfd;                 /* -1: not listening */
	bool lfd_passed;         /* systemd-oomd.socket's, passed at start */
	bool ldir_made;          /* its directory made here (removed at stop) */
	char lpath[CONFIG_SOCKET_MAX]; /* where it listens (removed at stop if bound here) */
	struct moom_link clients[MOOM_CLIENTS_MAX];
	unsigned long client_uid[MOOM_CLIENTS_MAX];
	struct moom_set user;    /* their units, apart from PID 1's (whose full lists replace only those) */
	uint64_t user_messages, user_refused, clients_refused;
	uint64_t managerless_refused; /* of clients_refused: uids with no user manager */
};

struct daemon_options {
	const char *root; /* "/" in production; a fixture tree in tests */
	bool dry_run;     /* -n: overrides the config's dry_run = false */
	int log_level;
	bool use_syslog;
	const struct watch_ops *ops; /* NULL: the real kernel */
	bool drop_caps;              /* keep only caps_needed (the daemon; not tests) */
	bool control;                /* open the config's control_socket (the daemon; not tests) */
	bool zeroed;                 /* d is daemon_new's, untouched: not memset (the daemon; not tests) */
};

/* The control socket and the metrics file (daemon-status.c). */
struct daemon_ctl {
	int fd;               /* listening control socket, -1 = none */
	ino_t ino;            /* its file, removed at exit if still ours */
	char path[CONFIG_SOCKET_MAX];
	uint64_t start_us;    /* for the uptime */
	bool metrics_written; /* metrics_sig is what the file holds */
	uint64_t metrics_sig;
	int metrics_err;      /* the last write error, logged once */
};

struct daemon {
	struct config cfg;
	struct log log;
	struct logsink logsink; /* stderr's lines the reader has not taken yet */
	int cli_log_level; /* -v's; ro.lmk.debug raises it to debug while set */
	bool cli_dry_run;
	int rootfd;
	int procfd;
	int epfd;
	int sigfd;
	int timerfd;    /* kill_timeout / term_timeout */
	int memtimerfd; /* the idle clock: low_available checks and safety samples (watch.h) */
	uint64_t idle_period_us; /* its period, 0 = stopped */
	int wdtimerfd;  /* sd_notify watchdog keep-alive, -1 without WatchdogSec= */
	int rearmtimerfd; /* retries a lost pressure file */
	uint64_t rearm_delay_us;
	int rearm_last_err;
	uint64_t lost_at_us;
	uint64_t watchdog_usec;
	pid_t self;
	struct policy *policy;
	char cg2_mount[CONFIG_PATH_MAX];
	int cg2_err; /* why cg2_mount is "" (-ENOENT: no cgroup2 mounted) */
	char memory_cgroup[CONFIG_PATH_MAX]; /* effective; "" = system-wide */
	bool has_low_memory_tiers;
	int mem_read_err; /* the last failure to read it, logged once */
	struct mem_growth mem_growth; /* the memory footprint over the last checks */
	/* the pressure file's "some" stall, for a low_available tier's hold
	 * (hold_idle): its total at the last read, the share since the one
	 * before, and how many shares in a row reached the evidence line */
	struct {
		bool known;
		uint64_t t_us, total_us;
		unsigned permille, hot;
	} stall;
	struct memevent memev;        /* the memory cgroup's notifications (memevent.h) */
	struct oomhand oomh;          /* its OOM, when oom_killer = daemon took it (oomhand.h) */
	struct brake brake;           /* its memory.high brake (memory_high_brake, brake.h) */
	struct brake_record brake_rec; /* ... what memory.high was before it, and the brake */
	char brake_dir[CONFIG_PATH_MAX]; /* ... the group braked; "" = none */
	uint64_t mem_wakes, mem_ooms; /* their counts */
	/* the kernel's own OOM kills where psi-lmkd watches (its misses) */
	struct {
		bool known;       /* base holds a reading of the counter */
		uint64_t base;    /* the kernel's oom_kill count at the last look */
		uint64_t missed;  /* kernel OOM kills seen since start */
		uint64_t read_us; /* the last look */
		uint64_t seen_us; /* when the last of them was seen (0: none) */
		uint64_t victim_us; /* the last that ended the growth evidence (KERNEL_VICTIM_US) */
	} oomk;
	uint64_t mem_debug_us;        /* when the last memory check's debug line was logged */
	bool cap_sys_resource;
	bool manage_caps; /* opt->drop_caps: the daemon's capabilities are ours to change */
	bool hook_caps;   /* CAP_SETUID and CAP_SETGID are permitted (never effective) */
	bool hook_caps_dropped; /* we dropped them (no on_kill, no pre_kill): only a restart brings them back */
	bool hook_ok;     /* the hooks (on_kill, pre_kill) can switch to on_kill_user: run them */
	int hook_fd;      /* on_kill, checked and opened at start or reload (trustpath.h); -1: none */
	int prekill_fd;   /* pre_kill, the same way; -1: none */
	const struct watch_ops *ops;
	struct watch watch;
	bool watch_armed;
	uint32_t generation;     /* bumped by each reload and re-arm: tags fds */
	uint32_t cfg_generation; /* bumped by each reload: tier indices of older events mean nothing */
	struct tier_state tiers[CONFIG_TIERS_MAX]; /* parallel to cfg.tiers */
	struct daemon_groups groups;
	struct daemon_moom moom;
	struct killer killer;
	struct lmkd_server *lmkd; /* Android's lmkd socket, NULL when not served */
	struct daemon_ctl ctl;
	struct warn_bus warnbus; /* the system bus: warn tiers, Killed signals */
	int bustimerfd;          /* its timeouts, the connect deadline, the retry */
	uint64_t kills_signalled; /* killer.kills_total when the last Killed signals went out */
	bool quit;
	/* What the lower parts of the daemon ask of the parts above them, handed
	 * down by daemon_init so that no file calls back into one that calls it:
	 * the idle clock (daemon-memory.c) samples the main watch (daemon.c);
	 * a new group (daemon-groups.c) may need the idle clock sooner. */
	struct daemon_up {
		void (*sample)(struct daemon *d, struct wake *w);
		void (*idle_clock_update)(struct daemon *d);
	} up;
};

/* A daemon for daemon_init in a zero-filled mapping of its own (NULL: out of
 * memory): its pages become resident only as they are written, where a
 * memset of all of it (~140 kB, most of it room for the worst case: paths,
 * tier and property slots) would make every page private memory for good
 * once mlockall has run. daemon_delete unmaps it. */
struct daemon *daemon_new(void);
void daemon_delete(struct daemon *d);
/* Sets up everything and arms every tier. Logs what failed; returns 0 or -errno.
 * d may hold anything (it is zeroed first) unless opt->zeroed says it is
 * daemon_new's: then only what the daemon writes becomes resident. */
int daemon_init(struct daemon *d, const struct config *cfg, const struct daemon_options *opt);
/* Runs the event loop until SIGTERM/SIGINT. Returns 0 or -errno on a fatal error. */
int daemon_run(struct daemon *d);
/* One wakeup of the loop: waits at most timeout_ms (-1: for ever) for events,
 * handles the whole batch, then acts on the tiers that fired in it. Returns 0,
 * or -errno on a fatal error. */
int daemon_step(struct daemon *d, int timeout_ms);
void daemon_deinit(struct daemon *d);
