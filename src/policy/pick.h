/* SPDX-License-Identifier: MIT */
/* pick: one victim choice for one tier: a /proc scan through the root fd that
 * offers every process of the band to the pure rules of victim.c. It knows
 * nothing of the daemon; the caller hands it what the rules need. */
#pragma once

#include <stddef.h>
#include <sys/types.h>

#include "growth.h"
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
	bool strict_scope;                    /* victim.h: an unknown path is outside scope */
	const struct proc_ident *exclude;     /* never again: survivors, unkillable */
	size_t n_exclude;
	uid_t trusted_uid_max;                /* see victim.h: whose shields count for everyone */
	bool oomd_prefs;                      /* honour systemd's user.oomd_omit / user.oomd_avoid
					       * (systemd_oom_preferences) */
	enum victim_order order;              /* victim_order: who of the band goes first */
	uint64_t domain_kb;                   /* the OOM domain's memory, read once per
					       * decision; 0 = unknown (victim.h) */
	const char *member_of;                /* an OOM decision (oom_killer = daemon): only the
					       * processes of this memory cgroup directory (v1,
					       * under rootfd) and the groups below it; NULL: any */
	const struct growth_sample *growth;   /* measure each candidate's growth since this
					       * sample (growth.h); NULL: not known */
	uint64_t culprit_kb;                  /* with growth, victim_order badness and a
					       * domain: the growth that makes a culprit */
	bool readers;                         /* with culprit_kb and a sample of reads: a
					       * candidate that read culprit_kb from storage
					       * since the sample is a reader (victim.h; a
					       * choice on stall) */
	bool early_look;                      /* read stat, cgroup and the rest only of the
					       * processes that can still win after their
					       * oom_score_adj and status (victim_may_beat):
					       * the same victim, but pick.candidates then
					       * counts only those read in full */
};

/* The choice's working memory: kept by the caller so that choosing a victim
 * allocates nothing when memory is short. */
/* a scope's processes are read from its cgroup.procs (and those of the
 * groups below it, at most PICK_SCOPE_DEPTH levels) when there are at most
 * PICK_SCOPE_PIDS of them; else, and for scope "/", /proc is scanned */
#define PICK_SCOPE_PIDS 4096
#define PICK_SCOPE_DEPTH 32

struct kill_pick {
	struct victim_filter filter;
	pid_t scope_pids[PICK_SCOPE_PIDS];
	size_t n_scope_pids;
	bool scope_listed;        /* this choice scanned the scope's pids, not /proc */
	int procfd;
	int rootfd;               /* with cg2_mount: the cgroup directories' owners */
	const char *cg2_mount;
	struct proc_info scratch; /* the process being offered, with its cmdline */
	struct victim_pick pick;
	const struct growth_sample *growth; /* pick_ctx.growth */
	struct proc_info first;   /* the winner of the first pass, when a second ran */
	pid_t read_pid;           /* with filter.reader_kb: the last head whose reads the */
	uint64_t read_kb;         /* early look read, and what it counted (pick_visit's) */
	bool owner_pass;          /* the first winner had an untrusted shield that
				   * was ignored, so a second pass chose among its
				   * owner's processes with every shield applied */
	/* systemd marks (pick_ctx.oomd_prefs): the last group looked up and
	 * what it said, kept for one choice (both passes), since the
	 * processes of one unit share a group */
	bool oomd_prefs;
	bool oomd_cached;
	enum oomd_pref oomd_cache_pref;
	bool oomd_cache_trusted;
	int oomd_error;           /* -errno: a lookup ran out of fds or memory */
	unsigned oomd_lookups;    /* directory walks done (the cache's misses) */
	char oomd_cache_cg[PROC_CGROUP_MAX];
};

/* Scans /proc and leaves the best candidate with oom_score_adj >= min_adj in
 * p->pick (p->pick.found false: none). Two passes at most: the first counts
 * only trusted shields (victim.h); if its winner W had an untrusted one, a
 * second scan chooses among the processes of W's real uid with every shield
 * counted, and its winner, or W if none, is the victim. So a claimed shield
 * orders its owner's processes and never moves the kill to another user.
 * p->pick.candidates counts the first pass. With c->oomd_prefs, systemd's
 * marks are read (cgroup_oomd_pref) for the processes victim_needs_oomd
 * allows, one directory walk per distinct group in a row. Returns 0, or
 * -errno when /proc could not be scanned completely, or a mark could not be
 * read for want of fds or memory (the caller must not kill from a partial
 * picture). */
int pick_choose(const struct pick_ctx *c, int min_adj, struct kill_pick *p, struct procfs_scan_stats *st);

/* Fills s with the sizes of c's processes of at least floor_kb (every
 * process but those at oom_score_adj -1000, whatever the scope: any tier's
 * choice may measure growth from it), taken at now_us, and with reads what
 * each process had read (procfs_read_io_kb); s->valid tells if it is
 * complete. A process is read status first (procfs_scan_sizes): one below
 * the floor costs that one read, and its io with reads (not a kernel
 * thread's or a zombie's: no memory, no threads); one kept costs its
 * oom_score_adj and stat too (its start time), never its cgroup. Allocates
 * nothing. 0, or -errno when /proc could not be scanned. */
int pick_sample(const struct pick_ctx *c, struct growth_sample *s, uint64_t floor_kb, uint64_t now_us, bool reads);
