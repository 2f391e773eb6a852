/* SPDX-License-Identifier: MIT */
/* pick: the streaming victim choice. procfs_scan reads each process of the
 * band once (oom_score_adj first, so the rest of /proc costs one small read
 * each); each is offered to victim_offer, which keeps the best so far. With
 * pick_ctx.early_look, a process whose adj and status show it cannot beat
 * the best so far (victim_may_beat) costs no more reads. The
 * command line is read only when a *_cmdline rule needs it, the owners of a
 * process's cgroup directories only when a cgroup rule matches its path,
 * systemd's marks only for a process that passed the cheap exclusions, and
 * then once per run of processes in one group.
 * Nothing here allocates. */
#include <errno.h>
#include <string.h>

#include "cgroup.h"
#include "pick.h"

/* Sets c's systemd mark, from the cache when c is in the group looked up
 * last. A walk that stops early keeps what the groups above said (a group
 * gone meanwhile, or one the daemon may not read, hides only its own mark);
 * running out of fds or memory fails the whole choice, as in procfs_scan. */
static void oomd_lookup(struct kill_pick *p, struct proc_info *c)
{
	int r;

	if (!p->oomd_cached || strcmp(p->oomd_cache_cg, c->cgroup) != 0) {
		r = cgroup_oomd_pref(p->rootfd, p->cg2_mount, c->cgroup, p->filter.trusted_uid_max, &p->oomd_cache_pref,
				     &p->oomd_cache_trusted);
		if ((r == -EMFILE || r == -ENFILE || r == -ENOMEM) && !p->oomd_error)
			p->oomd_error = r;
		p->oomd_lookups++;
		p->oomd_cached = true;
		strcpy(p->oomd_cache_cg, c->cgroup);
	}
	c->oomd_pref = p->oomd_cache_pref;
	c->oomd_trusted = p->oomd_cache_trusted;
}

/* What process pid read since the sample: a process whose io cannot be
 * read (gone, or not traceable) read nothing. */
static uint64_t reads_since(const struct kill_pick *p, pid_t pid)
{
	uint64_t kb;

	return procfs_read_io_kb(p->procfd, pid, &kb) == 0 ? growth_read_kb(p->growth, pid, kb) : 0;
}

static void pick_visit(const struct proc_info *pi, void *userdata)
{
	struct kill_pick *p = userdata;
	struct proc_info *c = &p->scratch;

	*c = *pi;
	if (victim_needs_cmdline(&p->filter))
		c->has_cmdline = procfs_read_cmdline(p->procfd, c->pid, c->cmdline, sizeof(c->cmdline)) == 0;
	/* every shield counts in an owner pass: no need to know who owns the group */
	if (!p->filter.all_shields && victim_cgroup_rule_matches(&p->filter, c))
		c->cgroup_trusted = cgroup_path_trusted(p->rootfd, p->cg2_mount, c->cgroup, p->filter.trusted_uid_max) == 1;
	if (p->oomd_prefs && *p->cg2_mount && victim_needs_oomd(&p->filter, c))
		oomd_lookup(p, c);
	if (p->growth)
		c->growth_kb = growth_kb(p->growth, c->pid, c->start_time, procfs_footprint_kb(c));
	c->read_kb = 0;
	if (p->filter.reader_kb)
		c->read_kb = p->read_pid == c->pid ? p->read_kb : reads_since(p, c->pid);
	victim_offer(&p->filter, &p->pick, c);
}

/* With readers ranked, a head's reads are read with its status, and the
 * visit counts the same (growth_read_kb goes by pid alone). */
static bool pick_prune(const struct proc_info *head, bool status_read, void *userdata)
{
	struct kill_pick *p = userdata;

	if (!status_read || !p->filter.reader_kb)
		return !victim_may_beat(&p->filter, &p->pick, head, status_read);
	p->read_pid = head->pid;
	p->read_kb = reads_since(p, head->pid);
	return !victim_may_beat_reads(&p->filter, &p->pick, head, true, p->read_kb);
}

/* One pass: the scope's own processes when they could be listed, else /proc. */
static int pick_scan(const struct pick_ctx *c, int min_adj, struct kill_pick *p, struct procfs_scan_stats *st)
{
	if (p->scope_listed)
		return procfs_scan_pids(c->procfd, p->scope_pids, p->n_scope_pids, min_adj, c->early_look ? pick_prune : NULL,
					pick_visit, p, st);
	return procfs_scan_pruned(c->procfd, min_adj, c->early_look ? pick_prune : NULL, pick_visit, p, st);
}

/* A scope below the root lists its processes in cgroup.procs: reading them
 * (and the groups below) spares reading every other process's
 * oom_score_adj. Any failure -- too many, too deep (a path the kernel would
 * not even print), the group gone, no cgroup2, a group of the scope that a
 * user above trusted_uid_max owns (who could move a process past the
 * walk) -- falls back to /proc, whose scan the filter narrows to the scope
 * as before. */
static void list_scope(const struct pick_ctx *c, struct kill_pick *p)
{
	int n;

	if (c->member_of)
		return; /* list_members chose the processes */
	p->scope_listed = false;
	if (!c->cg2_mount || !*c->cg2_mount || !c->scope || strcmp(c->scope, "/") == 0)
		return;
	n = cgroup_read_owned_procs(c->rootfd, c->cg2_mount, c->scope, p->scope_pids, PICK_SCOPE_PIDS, PICK_SCOPE_DEPTH,
				    c->trusted_uid_max);
	if (n < 0)
		return;
	p->n_scope_pids = (size_t)n;
	p->scope_listed = true;
}

/* An OOM decision frees memory only by killing a member of the group at
 * OOM: its processes (and those of the groups below) are the only ones
 * scanned, the scope's filter still applying. No fallback: a group that
 * cannot be listed gives -errno, and nothing is killed. The group is a v1
 * memory cgroup (oom_killer = daemon is v1 only), whose name a process's
 * /proc/PID/cgroup gives on no line the filter reads: the list is the only
 * way, though the walk is not atomic (cgroup.h). */
static int list_members(const struct pick_ctx *c, struct kill_pick *p)
{
	int n;

	if (!c->member_of)
		return 0;
	n = cgroup_read_subtree_procs(c->rootfd, "", c->member_of, p->scope_pids, PICK_SCOPE_PIDS, PICK_SCOPE_DEPTH);
	if (n < 0)
		return n;
	p->n_scope_pids = (size_t)n;
	p->scope_listed = true;
	return 0;
}

int pick_choose(const struct pick_ctx *c, int min_adj, struct kill_pick *p, struct procfs_scan_stats *st)
{
	struct procfs_scan_stats st2;
	unsigned candidates;
	int r;

	memset(p, 0, sizeof(*p));
	p->procfd = c->procfd;
	p->rootfd = c->rootfd;
	p->cg2_mount = c->cg2_mount ? c->cg2_mount : "";
	p->filter.policy = c->policy;
	p->filter.min_adj = min_adj;
	p->filter.self = c->self;
	p->filter.scope = c->scope;
	p->filter.strict_scope = c->strict_scope;
	p->filter.exclude = c->exclude;
	p->filter.n_exclude = c->n_exclude;
	p->filter.trusted_uid_max = c->trusted_uid_max;
	p->oomd_prefs = c->oomd_prefs;
	p->filter.order = c->order;
	p->filter.domain_kb = c->domain_kb;
	p->growth = c->growth;
	p->filter.culprit_kb = c->growth && c->domain_kb ? c->culprit_kb : 0;
	p->filter.reader_kb = c->readers && c->growth && c->growth->reads ? p->filter.culprit_kb : 0;
	r = list_members(c, p);
	if (r < 0)
		return r;
	list_scope(c, p);
	r = pick_scan(c, min_adj, p, st);
	if (r == 0)
		r = p->oomd_error;
	if (r < 0 || !p->pick.found || !p->pick.best.shield_ignored)
		return r;

	/* The winner W claimed a shield it cannot be trusted with: that shield
	 * still orders W's owner's own processes, never anyone else's. */
	p->owner_pass = true;
	p->first = p->pick.best;
	candidates = p->pick.candidates;
	memset(&p->pick, 0, sizeof(p->pick));
	p->filter.all_shields = true;
	p->filter.owner_only = true;
	p->filter.owner = p->first.uid;
	r = pick_scan(c, min_adj, p, &st2);
	if (r == 0)
		r = p->oomd_error;
	if (r < 0)
		return r;
	if (!p->pick.found) {
		p->pick.best = p->first;
		p->pick.found = true;
	}
	p->pick.candidates = candidates;
	return 0;
}

/* what a sample's scan works with */
struct sample_job {
	struct growth_sample *s;
	int procfd;
};

/* Every process passes here once, after its status: its reads are noted
 * (not a kernel thread's or a zombie's, which hold no memory and no
 * threads), then the size floor rules it out or not. */
static bool sample_prune(const struct proc_info *head, bool status_read, void *userdata)
{
	const struct sample_job *j = userdata;
	uint64_t read_kb;

	if (!status_read)
		return false;
	if (j->s->reads && (head->rss_kb || head->threads > 1) && procfs_read_io_kb(j->procfd, head->pid, &read_kb) == 0)
		growth_sample_add_reads(j->s, head->pid, read_kb);
	/* an exited leader's memory is read later, from a live thread */
	return procfs_footprint_kb(head) < j->s->floor_kb && !(head->threads > 1 && head->rss_kb == 0);
}

static void sample_visit(const struct proc_info *pi, void *userdata)
{
	const struct sample_job *j = userdata;

	if (!pi->kthread)
		growth_sample_add(j->s, pi->pid, pi->start_time, procfs_footprint_kb(pi));
}

int pick_sample(const struct pick_ctx *c, struct growth_sample *s, uint64_t floor_kb, uint64_t now_us, bool reads)
{
	struct sample_job j = { s, c->procfd };
	struct procfs_scan_stats st;
	uint64_t ticks;
	int r;

	growth_sample_begin(s, floor_kb, now_us, procfs_read_uptime_ticks(c->procfd, &ticks) == 0 ? ticks : 0, reads);
	r = procfs_scan_sizes(c->procfd, OOM_SCORE_ADJ_MIN + 1, sample_prune, sample_visit, &j, &st);
	if (r == 0)
		growth_sample_end(s);
	return r;
}
