/* SPDX-License-Identifier: MIT */
/* history: the last kills (and would-kills), a bounded ring the kill path
 * fills and the status query and the metrics read. Pure: no I/O, no allocation. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "config.h"
#include "procfs.h"
#include "psi.h"

#define HISTORY_MAX 32
#define HISTORY_CGROUP_MAX 256 /* a longer cgroup path is kept cut, ending in "..." */
#define HISTORY_REASON_MAX 24 /* the longest: "managed_oom_pressure" */

struct kill_record {
	uint64_t wall_ms; /* CLOCK_REALTIME, milliseconds since the epoch */
	bool dry_run;     /* a would-kill */
	pid_t pid;
	uid_t uid;
	int oom_score_adj;
	uint64_t rss_kb;
	uint64_t size_kb;   /* procfs_size_kb: resident + swap + page tables */
	int64_t badness_kb; /* VICTIM_BADNESS_UNKNOWN when the domain was unknown */
	uint64_t grew_kb;   /* chosen as a culprit (victim.h): its growth; 0 = not */
	uint64_t read_kb;   /* chosen as a reader (victim.h): its reads; 0 = not */
	/* names as every output shows them: display names (escape.h) */
	char comm[PROC_COMM_MAX];
	char tier[CONFIG_NAME_MAX + 1];
	char reason[HISTORY_REASON_MAX];
	char cgroup[HISTORY_CGROUP_MAX]; /* "" = unknown */
	char group[HISTORY_CGROUP_MAX];  /* the group a cgroup-pattern tier's instance watches; "" = none */
	/* the watched pressure file and available memory just after the kill */
	bool has_psi;
	struct psi_stats psi;
	bool has_mem;
	uint64_t available_bytes, total_bytes;
};

struct kill_history {
	struct kill_record rec[HISTORY_MAX];
	size_t next;  /* where the next record goes */
	size_t count; /* records held, at most HISTORY_MAX */
};

/* The kill line's fields: victim, tier and reason (the rest stays zero).
 * The victim's cgroup path becomes a display name here (history_display_path). */
void history_record_init(struct kill_record *r, uint64_t wall_ms, bool dry_run, const struct proc_info *pi,
			 const char *tier, const char *reason);
/* A raw cgroup path as a display name (escape.h, ESCAPE_NAME) in dst, cut
 * to fit size with "..." at the end. */
void history_display_path(char *dst, size_t size, const char *raw);
/* Adds r; the oldest record makes room when the ring is full. */
void history_push(struct kill_history *h, const struct kill_record *r);
/* The i-th newest record (0 = the last one), NULL past the end. */
const struct kill_record *history_newest(const struct kill_history *h, size_t i);
