/* victim: pure victim choice. Which processes may be killed for a tier, and
 * which of them goes first. No I/O: it works on struct proc_info values. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <regex.h>

#include "procfs.h"

#define OOM_SCORE_ADJ_MIN (-1000)

struct proc_ident {
	pid_t pid;
	uint64_t start_time;
};

/* The user's policy (config keys protect, prefer, avoid, their _cmdline
 * variants, and min_rss). NULL regexes are unset. */
struct victim_policy {
	const regex_t *protect, *prefer, *avoid;
	const regex_t *protect_cmdline, *prefer_cmdline, *avoid_cmdline;
	uint64_t min_rss_kb;
};

struct victim_filter {
	const struct victim_policy *policy; /* NULL: no policy */
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
	VICTIM_PROTECTED,  /* matches protect / protect_cmdline */
	VICTIM_SMALL,      /* RSS below min_rss */
};

const char *victim_verdict_name(enum victim_verdict v);

/* true when cgroup path is scope itself or below it */
bool victim_cgroup_in_scope(const char *cgroup, const char *scope);

/* Precedence: pid 1, self, kernel threads, adj -1000, scope, zombies and
 * processes already signalled are never candidates; then protect; then
 * min_rss; then the band. A protect regex that regexec() cannot evaluate
 * (out of memory) protects. */
enum victim_verdict victim_check(const struct victim_filter *f, const struct proc_info *pi);

/* true if the filter's policy needs the command line of pi */
bool victim_needs_cmdline(const struct victim_filter *f);

/* +1 if pi matches prefer/prefer_cmdline, -1 if avoid/avoid_cmdline (avoid
 * wins over prefer), else 0. An avoid regex that regexec() cannot evaluate
 * counts as a match, a prefer regex as none. */
int victim_preference(const struct victim_filter *f, const struct proc_info *pi);

/* true when a should be killed before b: preferred before neutral before
 * avoided (pi->preference), then higher oom_score_adj, then larger RSS, then
 * the younger process (larger start time), then the larger pid. */
bool victim_better(const struct proc_info *a, const struct proc_info *b);

/* Streaming choice, for a scan that sees one process at a time: offer each
 * process (with its cmdline read if victim_needs_cmdline); best holds the
 * winner so far. Returns true if pi became the best so far. */
struct victim_pick {
	struct proc_info best;
	bool found;
	unsigned candidates;
};

bool victim_offer(const struct victim_filter *f, struct victim_pick *p, struct proc_info *pi);

/* Index of the process to kill in list[0..n), or -1 if none is a candidate.
 * Sets list[i].preference for the candidates. */
ssize_t victim_choose(const struct victim_filter *f, struct proc_info *list, size_t n);
