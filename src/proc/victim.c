/* SPDX-License-Identifier: MIT */
/* victim: the rules that decide who may die and who dies first.
 * Exclusions: pid 1, the daemon, kernel threads, oom_score_adj -1000, anything
 * outside the scope cgroup, zombies, processes already signalled, the user's
 * protect rules, processes smaller than min_rss (procfs_size_kb), and
 * anything below the tier's band.
 * Order: prefer/avoid class, then oom_score_adj, then size (procfs_size_kb:
 * resident + swap + page tables; victim_better);
 * or, with victim_order = badness, the class, then the culprits (growth
 * since the sample, growth.h), then on stall the readers (storage reads
 * since the sample), then the kernel OOM killer's points
 * (victim_badness_kb).
 * protect and avoid count only where the process cannot have forged them
 * (see victim.h); pure: the facts that need I/O, the ownership of the cgroup
 * directories and systemd's marks on them, come in pi->cgroup_trusted,
 * pi->oomd_pref and pi->oomd_trusted. */
#include <string.h>

#include "victim.h"

const char *victim_verdict_name(enum victim_verdict v)
{
	switch (v) {
	case VICTIM_OK:
		return "candidate";
	case VICTIM_INIT:
		return "init";
	case VICTIM_SELF:
		return "self";
	case VICTIM_KTHREAD:
		return "kernel-thread";
	case VICTIM_UNKILLABLE:
		return "oom_score_adj=-1000";
	case VICTIM_BELOW_BAND:
		return "below-band";
	case VICTIM_OUT_OF_SCOPE:
		return "out-of-scope";
	case VICTIM_DYING:
		return "dying";
	case VICTIM_PROTECTED:
		return "protected";
	case VICTIM_SMALL:
		return "below-min_rss";
	case VICTIM_OTHER_OWNER:
		return "other-owner";
	}
	return "?";
}

bool victim_cgroup_in_scope(const char *cgroup, const char *scope)
{
	size_t n;

	if (strcmp(scope, "/") == 0)
		return true;
	n = strlen(scope);
	return strncmp(cgroup, scope, n) == 0 && (cgroup[n] == '\0' || cgroup[n] == '/');
}

static bool matches(const regex_t *re, const char *s)
{
	return re && regexec(re, s, 0, NULL, 0) == 0;
}

/* For protect and avoid: regexec() allocates, and when it fails (REG_ESPACE,
 * out of memory: when this daemon runs) the process counts as matching, so
 * that a failed match never makes a process more likely to be killed. */
static bool matches_or_fails(const regex_t *re, const char *s)
{
	return re && regexec(re, s, 0, NULL, 0) != REG_NOMATCH;
}

bool victim_identity_trusted(const struct proc_info *pi, uid_t max)
{
	size_t i;

	for (i = 0; i < 4; i++)
		if (pi->uids[i] > max)
			return false;
	return true;
}

bool victim_cgroup_rule_matches(const struct victim_filter *f, const struct proc_info *pi)
{
	const struct victim_policy *p = f->policy;

	return p && pi->has_cgroup &&
	       (matches_or_fails(p->protect_cgroup, pi->cgroup) || matches_or_fails(p->avoid_cgroup, pi->cgroup));
}

/* Which of pi's shields of one kind (protect or avoid: the name, command-line
 * and cgroup regexes given) match, split by whether they count here. */
struct shield {
	bool counts;  /* a matching shield counts: trusted, or all_shields */
	bool ignored; /* a matching shield did not count */
};

static struct shield shield_of(const struct victim_filter *f, const struct proc_info *pi, const regex_t *name,
			       const regex_t *cmdline, const regex_t *cgroup, enum oomd_pref mark)
{
	struct shield s = { false, false };
	bool by_name = matches_or_fails(name, pi->comm) || (pi->has_cmdline && matches_or_fails(cmdline, pi->cmdline));
	bool by_cgroup = pi->has_cgroup && matches_or_fails(cgroup, pi->cgroup);

	/* systemd's mark rests on the same fact as a cgroup rule: who owns the
	 * marked group and the groups above it (pi->oomd_trusted) */
	if (mark != OOMD_PREF_NONE && pi->oomd_pref == mark) {
		if (f->all_shields || pi->oomd_trusted)
			s.counts = true;
		else
			s.ignored = true;
	}

	if (by_name) {
		if (f->all_shields || victim_identity_trusted(pi, f->trusted_uid_max))
			s.counts = true;
		else
			s.ignored = true;
	}
	if (by_cgroup) {
		if (f->all_shields || pi->cgroup_trusted)
			s.counts = true;
		else
			s.ignored = true;
	}
	if (s.counts)
		s.ignored = false;
	return s;
}

/* The exclusions that come before the shields: cheap, no regex, no I/O. */
static enum victim_verdict excluded(const struct victim_filter *f, const struct proc_info *pi)
{
	size_t i;

	if (pi->pid == 1)
		return VICTIM_INIT;
	if (pi->pid == f->self)
		return VICTIM_SELF;
	if (pi->kthread)
		return VICTIM_KTHREAD;
	if (pi->oom_score_adj <= OOM_SCORE_ADJ_MIN)
		return VICTIM_UNKILLABLE;
	/* an unknown (too deep) path hides nothing: in every scope, unless
	 * the scope is strict (a kill that may happen only inside one unit) */
	if (strcmp(f->scope, "/") != 0 && (pi->cgroup_unknown ? f->strict_scope :
	    (!pi->has_cgroup || !victim_cgroup_in_scope(pi->cgroup, f->scope))))
		return VICTIM_OUT_OF_SCOPE;
	if (f->owner_only && pi->uid != f->owner)
		return VICTIM_OTHER_OWNER;
	/* an exited thread-group leader whose other threads still run is alive */
	if ((pi->state == 'Z' && pi->threads <= 1) || pi->state == 'X' || pi->state == 'x')
		return VICTIM_DYING;
	for (i = 0; i < f->n_exclude; i++)
		if (f->exclude[i].pid == pi->pid && f->exclude[i].start_time == pi->start_time)
			return VICTIM_DYING;
	return VICTIM_OK;
}

/* No policy: no regex matches, no minimum RSS; systemd's marks still count. */
static const struct victim_policy no_policy;

static enum victim_verdict check(const struct victim_filter *f, const struct proc_info *pi, bool *ignored)
{
	const struct victim_policy *p = f->policy ? f->policy : &no_policy;
	enum victim_verdict v = excluded(f, pi);
	struct shield s;

	*ignored = false;
	if (v != VICTIM_OK)
		return v;
	s = shield_of(f, pi, p->protect, p->protect_cmdline, p->protect_cgroup, OOMD_PREF_OMIT);
	if (s.counts)
		return VICTIM_PROTECTED;
	*ignored = s.ignored;
	if (procfs_size_kb(pi) < p->min_rss_kb)
		return VICTIM_SMALL;
	if (pi->oom_score_adj < f->min_adj)
		return VICTIM_BELOW_BAND;
	return VICTIM_OK;
}

enum victim_verdict victim_check(const struct victim_filter *f, const struct proc_info *pi)
{
	bool ignored;

	return check(f, pi, &ignored);
}

bool victim_needs_oomd(const struct victim_filter *f, const struct proc_info *pi)
{
	const struct victim_policy *p = f->policy ? f->policy : &no_policy;

	return pi->has_cgroup && pi->oom_score_adj >= f->min_adj && procfs_size_kb(pi) >= p->min_rss_kb &&
	       excluded(f, pi) == VICTIM_OK;
}

bool victim_needs_cmdline(const struct victim_filter *f)
{
	const struct victim_policy *p = f->policy;

	return p && (p->protect_cmdline || p->prefer_cmdline || p->avoid_cmdline);
}

static int preference(const struct victim_filter *f, const struct proc_info *pi, bool *ignored)
{
	const struct victim_policy *p = f->policy ? f->policy : &no_policy;
	struct shield s;

	*ignored = false;
	s = shield_of(f, pi, p->avoid, p->avoid_cmdline, p->avoid_cgroup, OOMD_PREF_AVOID);
	if (s.counts)
		return -1;
	*ignored = s.ignored;
	if (matches(p->prefer, pi->comm) || (pi->has_cmdline && matches(p->prefer_cmdline, pi->cmdline)))
		return 1;
	return 0;
}

int victim_preference(const struct victim_filter *f, const struct proc_info *pi)
{
	bool ignored;

	return preference(f, pi, &ignored);
}

const char *victim_order_name(enum victim_order o)
{
	return o == VICTIM_ORDER_BADNESS ? "badness" : "adj";
}

/* Bounds that keep the sum below INT64_MAX whatever /proc says: 2^62 kB of
 * memory, a domain of 2^50 kB (1 EiB) times 1000. */
#define BADNESS_MEM_MAX (1ULL << 62)
#define BADNESS_DOMAIN_MAX (1ULL << 50)

static uint64_t cap(uint64_t v, uint64_t max)
{
	return v > max ? max : v;
}

int64_t victim_badness_kb(const struct proc_info *pi, uint64_t domain_kb)
{
	int64_t mem = (int64_t)cap(procfs_size_kb(pi), BADNESS_MEM_MAX);
	int adj = pi->oom_score_adj;

	if (adj < OOM_SCORE_ADJ_MIN)
		adj = OOM_SCORE_ADJ_MIN;
	if (adj > OOM_SCORE_ADJ_MAX)
		adj = OOM_SCORE_ADJ_MAX;
	return mem + (int64_t)adj * (int64_t)cap(domain_kb, BADNESS_DOMAIN_MAX) / 1000;
}

static bool adj_better(const struct proc_info *a, const struct proc_info *b)
{
	uint64_t sa = procfs_size_kb(a), sb = procfs_size_kb(b);

	if (a->oom_score_adj != b->oom_score_adj)
		return a->oom_score_adj > b->oom_score_adj;
	if (sa != sb)
		return sa > sb;
	if (a->start_time != b->start_time)
		return a->start_time > b->start_time;
	return a->pid > b->pid;
}

bool victim_better_in(enum victim_order order, const struct proc_info *a, const struct proc_info *b)
{
	if (a->preference != b->preference)
		return a->preference > b->preference;
	if (order == VICTIM_ORDER_BADNESS) {
		if (a->culprit != b->culprit)
			return a->culprit;
		if (a->culprit && a->growth_kb != b->growth_kb)
			return a->growth_kb > b->growth_kb;
		if (a->reader != b->reader)
			return a->reader;
		if (a->reader && a->read_kb != b->read_kb)
			return a->read_kb > b->read_kb;
		if (a->badness_kb != b->badness_kb)
			return a->badness_kb > b->badness_kb;
	}
	return adj_better(a, b);
}

bool victim_better(const struct proc_info *a, const struct proc_info *b)
{
	return victim_better_in(VICTIM_ORDER_ADJ, a, b);
}

bool victim_offer(const struct victim_filter *f, struct victim_pick *p, struct proc_info *pi)
{
	bool protect_ignored, avoid_ignored;

	if (check(f, pi, &protect_ignored) != VICTIM_OK)
		return false;
	pi->preference = preference(f, pi, &avoid_ignored);
	pi->shield_ignored = protect_ignored || avoid_ignored;
	pi->badness_kb = f->domain_kb ? victim_badness_kb(pi, f->domain_kb) : VICTIM_BADNESS_UNKNOWN;
	pi->culprit = f->order == VICTIM_ORDER_BADNESS && f->domain_kb && f->culprit_kb && pi->growth_kb >= f->culprit_kb;
	pi->reader = f->order == VICTIM_ORDER_BADNESS && f->domain_kb && f->culprit_kb && f->reader_kb && !pi->culprit &&
		     pi->read_kb >= f->reader_kb;
	p->candidates++;
	if (p->found && !victim_better_in(f->order, pi, &p->best))
		return false;
	p->best = *pi;
	p->found = true;
	return true;
}

bool victim_may_beat(const struct victim_filter *f, const struct victim_pick *p, const struct proc_info *head,
		     bool status_read)
{
	return victim_may_beat_reads(f, p, head, status_read, 0);
}

bool victim_may_beat_reads(const struct victim_filter *f, const struct victim_pick *p, const struct proc_info *head,
			   bool status_read, uint64_t read_kb)
{
	const struct victim_policy *pol = f->policy ? f->policy : &no_policy;
	const struct proc_info *b = &p->best;
	int pref_max = pol->prefer || pol->prefer_cmdline ? 1 : 0;
	uint64_t size = procfs_size_kb(head);
	int64_t badness;

	if (status_read) {
		if (f->owner_only && head->uid != f->owner)
			return false;
		if (head->threads > 1 && size == 0)
			return true; /* its memory is read later, from a live thread */
		if (size < pol->min_rss_kb)
			return false; /* protected, small or excluded: never a candidate */
	}
	if (!p->found)
		return true;
	if (pref_max != b->preference)
		return pref_max > b->preference;
	if (f->order == VICTIM_ORDER_BADNESS && f->domain_kb) {
		if (!status_read)
			return true; /* the memory weighs as much as the adj */
		if (f->culprit_kb) {
			/* it grew at most its footprint */
			if (procfs_footprint_kb(head) >= f->culprit_kb)
				return true;
			if (b->culprit)
				return false;
			if (f->reader_kb) {
				bool reader = read_kb >= f->reader_kb;

				if (reader != b->reader)
					return reader;
				if (reader && read_kb != b->read_kb)
					return read_kb > b->read_kb;
			}
		}
		badness = victim_badness_kb(head, f->domain_kb);
		if (badness != b->badness_kb)
			return badness > b->badness_kb;
	}
	if (head->oom_score_adj != b->oom_score_adj)
		return head->oom_score_adj > b->oom_score_adj;
	if (!status_read)
		return true;
	if (size != procfs_size_kb(b))
		return size > procfs_size_kb(b);
	return true; /* the start time decides, and it is not known yet */
}

ssize_t victim_choose(const struct victim_filter *f, struct proc_info *list, size_t n)
{
	struct victim_pick p = { .found = false };
	ssize_t best = -1;
	size_t i;

	for (i = 0; i < n; i++)
		if (victim_offer(f, &p, &list[i]))
			best = (ssize_t)i;
	return best;
}
