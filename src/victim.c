/* victim: the rules that decide who may die and who dies first.
 * Exclusions: pid 1, the daemon, kernel threads, oom_score_adj -1000, anything
 * outside the scope cgroup, zombies, processes already signalled, the user's
 * protect rules, processes below min_rss, and anything below the tier's band.
 * Order: prefer/avoid class, then oom_score_adj, then RSS (victim_better). */
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

enum victim_verdict victim_check(const struct victim_filter *f, const struct proc_info *pi)
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
	if (strcmp(f->scope, "/") != 0 && (!pi->has_cgroup || !victim_cgroup_in_scope(pi->cgroup, f->scope)))
		return VICTIM_OUT_OF_SCOPE;
	if (pi->state == 'Z' || pi->state == 'X' || pi->state == 'x')
		return VICTIM_DYING;
	for (i = 0; i < f->n_exclude; i++)
		if (f->exclude[i].pid == pi->pid && f->exclude[i].start_time == pi->start_time)
			return VICTIM_DYING;
	if (f->policy) {
		const struct victim_policy *p = f->policy;

		if (matches_or_fails(p->protect, pi->comm) ||
		    (pi->has_cmdline && matches_or_fails(p->protect_cmdline, pi->cmdline)))
			return VICTIM_PROTECTED;
		if (pi->rss_kb < p->min_rss_kb)
			return VICTIM_SMALL;
	}
	if (pi->oom_score_adj < f->min_adj)
		return VICTIM_BELOW_BAND;
	return VICTIM_OK;
}

bool victim_needs_cmdline(const struct victim_filter *f)
{
	const struct victim_policy *p = f->policy;

	return p && (p->protect_cmdline || p->prefer_cmdline || p->avoid_cmdline);
}

int victim_preference(const struct victim_filter *f, const struct proc_info *pi)
{
	const struct victim_policy *p = f->policy;

	if (!p)
		return 0;
	if (matches_or_fails(p->avoid, pi->comm) || (pi->has_cmdline && matches_or_fails(p->avoid_cmdline, pi->cmdline)))
		return -1;
	if (matches(p->prefer, pi->comm) || (pi->has_cmdline && matches(p->prefer_cmdline, pi->cmdline)))
		return 1;
	return 0;
}

bool victim_better(const struct proc_info *a, const struct proc_info *b)
{
	if (a->preference != b->preference)
		return a->preference > b->preference;
	if (a->oom_score_adj != b->oom_score_adj)
		return a->oom_score_adj > b->oom_score_adj;
	if (a->rss_kb != b->rss_kb)
		return a->rss_kb > b->rss_kb;
	if (a->start_time != b->start_time)
		return a->start_time > b->start_time;
	return a->pid > b->pid;
}

bool victim_offer(const struct victim_filter *f, struct victim_pick *p, struct proc_info *pi)
{
	if (victim_check(f, pi) != VICTIM_OK)
		return false;
	pi->preference = victim_preference(f, pi);
	p->candidates++;
	if (p->found && !victim_better(pi, &p->best))
		return false;
	p->best = *pi;
	p->found = true;
	return true;
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
