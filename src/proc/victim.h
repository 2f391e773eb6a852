/* SPDX-License-Identifier: MIT */
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
#define OOM_SCORE_ADJ_MAX 1000

/* proc_info.badness_kb when there was no OOM domain to weigh adj against */
#define VICTIM_BADNESS_UNKNOWN INT64_MIN

/* Which candidate of a tier's band dies first (config key victim_order).
 * Both come after the prefer/avoid class (victim_better_in).
 *  - ADJ: the highest oom_score_adj, then the largest size (procfs_size_kb:
 *    Android lmkd's order, adj is a rank and memory only breaks ties);
 *  - BADNESS: the kernel OOM killer's points, victim_badness_kb (adj is a
 *    share of the memory the OOM domain holds, added to the memory the
 *    process uses); but first the culprits, the processes that grew by at
 *    least the filter's culprit_kb while memory got short (growth.h), the
 *    one that grew most first: a big idle process, or a small one its
 *    owner marked expendable, does not die for another's growth. Without
 *    a culprit, in a choice on stall (culprit_kb and reader_kb), the
 *    readers: the processes that read at least reader_kb from storage
 *    since the sample, the one that read most first -- a file thrash's
 *    reader grows nothing (its mapped pages are page cache), but it is
 *    what refaults. */
enum victim_order {
	VICTIM_ORDER_ADJ = 0,
	VICTIM_ORDER_BADNESS,
};

const char *victim_order_name(enum victim_order o);

struct proc_ident {
	pid_t pid;
	uint64_t start_time;
};

/* The user's policy (config keys protect, prefer, avoid, their _cmdline and
 * _cgroup variants, and min_rss). NULL regexes are unset. */
struct victim_policy {
	const regex_t *protect, *prefer, *avoid;
	const regex_t *protect_cmdline, *prefer_cmdline, *avoid_cmdline;
	const regex_t *protect_cgroup, *avoid_cgroup;
	uint64_t min_rss_kb;
};

/* Shields (protect and avoid, by name, command line or cgroup) and trust.
 * Any user can give their processes any name and command line, and can
 * create cgroups inside a subtree delegated to them; what they cannot forge
 * is their uids and the ownership of cgroup directories outside that subtree.
 * So a shield counts for everyone ("globally") only when it rests on such a
 * fact:
 *  - a name or command-line shield when all four uids of the process are at
 *    most trusted_uid_max (victim_identity_trusted);
 *  - a cgroup shield when pi->cgroup_trusted (the group and every ancestor
 *    below the cgroup2 mount are owned by trusted uids: the pick checks that,
 *    with I/O, only when a cgroup rule matches; victim_cgroup_rule_matches);
 *  - systemd's ManagedOOMPreference= mark (pi->oomd_pref: omit shields like
 *    protect, avoid like avoid) when pi->oomd_trusted (the marked group and
 *    its ancestors are owned by trusted uids: systemd-oomd's own rule, a
 *    root-owned unit's mark counts system-wide, a user's own units' only
 *    among that user's processes). The pick looks the marks up only for
 *    processes victim_needs_oomd says could be candidates.
 * Other shields are owner-scoped: they are ignored when choosing among all
 * processes (victim_offer then sets pi->shield_ignored), and count only in a
 * second choice among the processes of one owner (owner_only, all_shields),
 * so that a shield a user claims can reorder that user's own processes but
 * never moves a kill to another user's. */
struct victim_filter {
	const struct victim_policy *policy; /* NULL: no policy */
	int min_adj;       /* the tier's band floor */
	pid_t self;        /* the daemon itself */
	const char *scope; /* cgroup2 path; "/" = everything */
	bool strict_scope; /* a process whose cgroup path is unknown (too deep) is outside
			    * scope, not inside every one: a kill that must stay in one
			    * unit (ManagedOOM, daemon-moom.c) */
	const struct proc_ident *exclude; /* already signalled, still dying: never again */
	size_t n_exclude;
	uid_t trusted_uid_max; /* uids up to this one are the system's (0: root only) */
	bool all_shields;  /* every matching shield counts, trusted or not */
	bool owner_only;   /* only processes whose real uid is owner are candidates */
	uid_t owner;
	enum victim_order order;
	uint64_t domain_kb; /* the OOM domain's memory (victim_badness_kb); 0 = unknown:
			     * then BADNESS falls back to ADJ */
	uint64_t culprit_kb; /* BADNESS: a candidate whose pi->growth_kb is at least
			      * this is a culprit; 0 = growth not known, or not used */
	uint64_t reader_kb;  /* BADNESS, with culprit_kb: a candidate that is no
			      * culprit and whose pi->read_kb is at least this is a
			      * reader; 0 = reads not known, or not used */
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
	VICTIM_SMALL,      /* smaller than min_rss (procfs_size_kb: RSS + swap + page tables) */
	VICTIM_OTHER_OWNER, /* owner_only, and another real uid */
};

const char *victim_verdict_name(enum victim_verdict v);

/* true when cgroup path is scope itself or below it */
bool victim_cgroup_in_scope(const char *cgroup, const char *scope);

/* true when all four uids of pi are at most max */
bool victim_identity_trusted(const struct proc_info *pi, uid_t max);

/* true when protect_cgroup or avoid_cgroup matches pi's cgroup path (or
 * regexec() cannot tell): only then does pi->cgroup_trusted matter. */
bool victim_cgroup_rule_matches(const struct victim_filter *f, const struct proc_info *pi);

/* Precedence: pid 1, self, kernel threads, adj -1000, scope (a process whose
 * cgroup path is unknown is inside every scope), the owner (owner_only),
 * zombies (a zombie thread-group leader with live threads is not one) and
 * processes already signalled are never candidates; then protect or a
 * systemd omit mark (when the shield counts, see above); then min_rss; then
 * the band. A protect regex
 * that regexec() cannot evaluate (out of memory) protects. */
enum victim_verdict victim_check(const struct victim_filter *f, const struct proc_info *pi);

/* true when pi passes every exclusion but the shields (pid 1, self, kernel
 * threads, adj -1000, the band, scope, owner, dying, min_rss) and has a known
 * cgroup2 path: only then is its systemd mark (pi->oomd_pref) worth the I/O
 * of looking it up. */
bool victim_needs_oomd(const struct victim_filter *f, const struct proc_info *pi);

/* true if the filter's policy needs the command line of pi */
bool victim_needs_cmdline(const struct victim_filter *f);

/* +1 if pi matches prefer/prefer_cmdline, -1 if a counting avoid,
 * avoid_cmdline or avoid_cgroup shield matches or a counting systemd avoid
 * mark is set (avoid wins over prefer), else
 * 0. prefer counts for everyone: claiming it only hurts oneself. An avoid
 * regex that regexec() cannot evaluate counts as a match, a prefer regex as
 * none. */
int victim_preference(const struct victim_filter *f, const struct proc_info *pi);

/* The kernel OOM killer's badness of pi in kB (mm/oom_kill.c, oom_badness):
 * the memory it would free -- RSS, swap and page tables -- plus
 * oom_score_adj thousandths of domain_kb, the memory of the OOM domain the
 * tier protects (RAM + swap system-wide; a memory cgroup's limit plus its
 * swap limit). So adj 300 weighs as much as 30 % of the domain. Negative for
 * a small process with a negative adj. Saturates instead of overflowing; adj
 * -1000 processes are never candidates, so their score does not matter. */
int64_t victim_badness_kb(const struct proc_info *pi, uint64_t domain_kb);

/* true when a should be killed before b: preferred before neutral before
 * avoided (pi->preference), then higher oom_score_adj, then larger size
 * (procfs_size_kb), then
 * the younger process (larger start time), then the larger pid. This is
 * victim_better_in(VICTIM_ORDER_ADJ). */
bool victim_better(const struct proc_info *a, const struct proc_info *b);

/* victim_better in the given order. BADNESS: preferred before neutral
 * before avoided, then culprits before the rest and the larger growth first
 * among them (pi->culprit, pi->growth_kb), then readers before the rest and
 * the larger reads first among them (pi->reader, pi->read_kb), then the
 * higher pi->badness_kb
 * (victim_offer sets it; two UNKNOWN scores compare as in ADJ), then as
 * victim_better. */
bool victim_better_in(enum victim_order order, const struct proc_info *a, const struct proc_info *b);

/* Streaming choice, for a scan that sees one process at a time: offer each
 * process (with its cmdline read if victim_needs_cmdline, and cgroup_trusted
 * set if victim_cgroup_rule_matches); best holds the winner so far, in
 * f->order. Sets pi->preference, pi->shield_ignored, pi->culprit (from
 * pi->growth_kb and f->culprit_kb), pi->reader (from pi->read_kb and
 * f->reader_kb) and pi->badness_kb (from f->domain_kb, in
 * either order, for the kill line) of a candidate. Returns
 * true if pi became the best so far. */
struct victim_pick {
	struct proc_info best;
	bool found;
	unsigned candidates;
};

bool victim_offer(const struct victim_filter *f, struct victim_pick *p, struct proc_info *pi);

/* The early look of a scan (procfs_scan_pruned): head has only pid and
 * oom_score_adj, and with status_read also what status says (uids, threads,
 * RSS, swap, page tables). Returns false only when head surely cannot
 * become p's best whatever the rest of it says: it would be excluded
 * (owner_only, min_rss), or even its best possible preference (+1 only when
 * a prefer rule exists) with what is known of its badness, adj and RSS
 * orders it after p->best in f->order. Without status only the adj can rule
 * it out (the adj order, or badness without a domain, where every score is
 * unknown). With culprit_kb, a head at least that large may have grown that
 * much and may always beat, and a smaller one never beats a culprit. A
 * thread-group leader without memory of its own (more than one
 * thread, size 0: an exited leader, whose memory comes from a live thread)
 * may always beat. So a choice that skips the rest of every head this
 * rejects chooses exactly as one that reads everything; only p->candidates
 * counts fewer. victim_may_beat_reads(..., 0). */
bool victim_may_beat(const struct victim_filter *f, const struct victim_pick *p, const struct proc_info *head,
		     bool status_read);
/* The same where f->reader_kb ranks readers: with status_read, read_kb is
 * what head read since the sample (as the choice will count it: 0 when its
 * io cannot be read). A head that is no culprit then beats a best that is
 * none only as a reader that read more, or as no reader by badness, as
 * victim_better_in orders them. */
bool victim_may_beat_reads(const struct victim_filter *f, const struct victim_pick *p, const struct proc_info *head,
			   bool status_read, uint64_t read_kb);

/* Index of the process to kill in list[0..n), or -1 if none is a candidate.
 * Sets list[i].preference for the candidates. */
ssize_t victim_choose(const struct victim_filter *f, struct proc_info *list, size_t n);
