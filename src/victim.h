/* victim: pure victim choice. Which processes may be killed for a tier, and
 * which of them goes first. No I/O: it works on struct proc_info values. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "procfs.h"

#define OOM_SCORE_ADJ_MIN (-1000)

struct proc_ident {
	pid_t pid;
	uint64_t start_time;
};

struct victim_filter {
	int min_adj;       /* the tier's band floor */
	pid_t self;        /* the daemon itself */
	const char *scope; /* cgroup2 path; "/" = everything */
	const struct proc_ident *exclude; /* already signalled, still dying: never again */
	size_t n_exclude;
};

/* Why a process is not a candidate; VICTIM_OK when it is. */
enum victim_verdict {
	VICTIM_OK = 0,
	VICTIM_INIT,
	VICTIM_SELF,
	VICTIM_KTHREAD,
	VICTIM_UNKILLABLE, /* oom_score_adj -1000 */
	VICTIM_BELOW_BAND,
	VICTIM_OUT_OF_SCOPE,
	VICTIM_DYING,      /* zombie or dead, or killed already */
};

const char *victim_verdict_name(enum victim_verdict v);

/* true when cgroup path is scope itself or below it */
bool victim_cgroup_in_scope(const char *cgroup, const char *scope);

enum victim_verdict victim_check(const struct victim_filter *f, const struct proc_info *pi);

/* true when a should be killed before b: higher oom_score_adj, then larger RSS,
 * then the younger process (larger start time), then the larger pid. */
bool victim_better(const struct proc_info *a, const struct proc_info *b);

/* Index of the process to kill in list[0..n), or -1 if none is a candidate. */
ssize_t victim_choose(const struct victim_filter *f, const struct proc_info *list, size_t n);
