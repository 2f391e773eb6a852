/* pick: the streaming victim choice. procfs_scan reads each process of the
 * band once (oom_score_adj first, so the rest of /proc costs one small read
 * each); each is offered to victim_offer, which keeps the best so far. The
 * command line is read only when a *_cmdline rule needs it. Nothing here
 * allocates. */
#include <string.h>

#include "pick.h"

static void pick_visit(const struct proc_info *pi, void *userdata)
{
	struct kill_pick *p = userdata;
	struct proc_info *c = &p->scratch;

	*c = *pi;
	if (victim_needs_cmdline(&p->filter))
		c->has_cmdline = procfs_read_cmdline(p->procfd, c->pid, c->cmdline, sizeof(c->cmdline)) == 0;
	victim_offer(&p->filter, &p->pick, c);
}

int pick_choose(const struct pick_ctx *c, int min_adj, struct kill_pick *p, struct procfs_scan_stats *st)
{
	memset(p, 0, sizeof(*p));
	p->procfd = c->procfd;
	p->filter.policy = c->policy;
	p->filter.min_adj = min_adj;
	p->filter.self = c->self;
	p->filter.scope = c->scope;
	p->filter.exclude = c->exclude;
	p->filter.n_exclude = c->n_exclude;
	return procfs_scan(c->procfd, min_adj, pick_visit, p, st);
}
