/* SPDX-License-Identifier: MIT */
/* status: what `psi-lmkd --status` shows, as a snapshot the daemon fills
 * (control.c does the I/O) and pure formatters, text and JSON, that the
 * tests drive directly. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "config.h"
#include "history.h"
#include "kill.h"
#include "memory.h"
#include "psi.h"

/* who a tier would kill now (--candidates) */
struct status_candidate {
	int err;           /* -errno: the /proc scan failed */
	bool found;
	struct proc_info victim; /* badness_kb and preference set by the choice */
	unsigned candidates;     /* processes in the band */
	bool owner_pass;         /* chosen among the first winner's owner's processes */
	pid_t first_pid;         /* ... that first winner */
	char first_comm[PROC_COMM_MAX];
	char cgroup[HISTORY_CGROUP_MAX]; /* the victim's, as a display name; "" = unknown */
};

struct status_tier {
	const struct tier_config *cfg;
	const char *group; /* an instance of a cgroup-pattern tier: the group it watches; NULL otherwise */
	size_t slot;       /* ... and the daemon's slot of that group */
	const char *source; /* "kernel", "userspace", "none" */
	struct tier_state counters;
	uint64_t last_kill_ago_s; /* with counters.last_kill_us != 0 */
	bool has_candidate;       /* --candidates was asked for */
	struct status_candidate cand;
};

struct status_snapshot {
	const char *version;
	pid_t pid;
	uint64_t uptime_s;
	uint64_t now_ms; /* wall clock, for "ago" in the history */
	bool dry_run;
	bool armed;
	bool kill_in_flight;
	pid_t inflight_pid;
	char inflight_comm[PROC_COMM_MAX];
	const char *pressure; /* the watched file */
	const char *scope;
	const char *victim_order;
	bool oom_killer_daemon; /* the low_available tiers also kill for the group's OOM */
	int psi_err; /* -errno: the file could not be read now */
	struct psi_stats psi;
	const char *memory_cgroup; /* "" = system-wide */
	int mem_err;
	struct mem_info mem;
	uint64_t kills_total;
	uint64_t kernel_oom_kills; /* the kernel's OOM kills in the memory domain since start */
	bool has_prekill;          /* pre_kill is set (or ran since start): its counters below */
	bool inflight_pre;         /* the kill in flight waits for its pre_kill hook */
	struct prekill prekill;    /* the pre_kill hooks' counters */
	size_t n_tiers;
	struct status_tier tiers[CONFIG_TIERS_MAX];
	/* cgroup-pattern tiers: one instance per watched group and tier */
	bool has_groups;
	size_t groups_watched;
	unsigned max_groups;
	uint64_t groups_not_watched; /* matches left out: max_groups reached */
	size_t n_instances;
	struct status_tier *instances; /* owned by whoever filled the snapshot */
	const struct kill_history *history;
	/* systemd_managed_oom: the kills in the units, by reason */
	bool has_moom;
	uint64_t moom_kills_pressure, moom_kills_swap;
};

/* The human form: a header, the pressure and memory lines, one block per
 * tier, then the last kills, newest first. */
void status_format_text(const struct status_snapshot *s, FILE *f);
/* The same as one JSON object (and a newline). */
void status_format_json(const struct status_snapshot *s, FILE *f);
/* A JSON string literal of s (quotes included), valid UTF-8 whatever s
 * holds: a byte that is not part of a UTF-8 sequence shows as \\xHH, as in
 * a display name (escape.h). */
void status_json_string(FILE *f, const char *s);
/* "2026-12-03T19:20:01.123Z" */
const char *status_format_time(char *buf, size_t size, uint64_t wall_ms);
