/* pick: one victim choice for one tier: a /proc scan through the root fd that
 * offers every process of the band to the pure rules of victim.c. It knows
 * nothing of the daemon; the caller hands it what the rules need. */
#pragma once

#include <stddef.h>
#include <sys/types.h>

#include "procfs.h"
#include "victim.h"

/* What a choice needs to know besides /proc. */
struct pick_ctx {
	int procfd;                           /* "/proc" under the injectable root */
	int rootfd;                           /* the root, for cgroup files */
	const char *cg2_mount;                /* "" when there is no cgroup2 mount */
	const struct victim_policy *policy;   /* NULL: no policy */
	pid_t self;                           /* the daemon */
	const char *scope;                    /* cgroup2 path; "/" = everything */
	const struct proc_ident *exclude;     /* never again: survivors, unkillable */
	size_t n_exclude;
};

/* The choice's working memory: kept by the caller so that choosing a victim
 * allocates nothing when memory is short. */
struct kill_pick {
	struct victim_filter filter;
	int procfd;
	struct proc_info scratch; /* the process being offered, with its cmdline */
	struct victim_pick pick;
};

/* Scans /proc and leaves the best candidate with oom_score_adj >= min_adj in
 * p->pick (p->pick.found false: none). Returns 0, or -errno when /proc could
 * not be scanned completely (the caller must not kill from a partial list). */
int pick_choose(const struct pick_ctx *c, int min_adj, struct kill_pick *p, struct procfs_scan_stats *st);
