/* SPDX-License-Identifier: MIT */
/* history: the ring of the last kills; see history.h. */
#include <stdio.h>
#include <string.h>

#include "escape.h"
#include "history.h"

void history_display_path(char *dst, size_t size, const char *raw)
{
	size_t n = strlen(raw);

	if (size < 4 || escape_bytes(dst, size, raw, n, ESCAPE_NAME, NULL) < size)
		return;
	escape_bytes(dst, size - 3, raw, n, ESCAPE_NAME, NULL);
	strcat(dst, "...");
}

void history_record_init(struct kill_record *r, uint64_t wall_ms, bool dry_run, const struct proc_info *pi,
			 const char *tier, const char *reason)
{
	memset(r, 0, sizeof(*r));
	r->wall_ms = wall_ms;
	r->dry_run = dry_run;
	r->pid = pi->pid;
	r->uid = pi->uid;
	r->oom_score_adj = pi->oom_score_adj;
	r->rss_kb = pi->rss_kb;
	r->size_kb = procfs_size_kb(pi);
	r->badness_kb = pi->badness_kb;
	r->grew_kb = pi->culprit ? pi->growth_kb : 0;
	r->read_kb = pi->reader ? pi->read_kb : 0;
	snprintf(r->comm, sizeof(r->comm), "%s", pi->comm);
	snprintf(r->tier, sizeof(r->tier), "%s", tier);
	snprintf(r->reason, sizeof(r->reason), "%s", reason);
	if (pi->has_cgroup && !pi->cgroup_unknown)
		history_display_path(r->cgroup, sizeof(r->cgroup), pi->cgroup);
}

void history_push(struct kill_history *h, const struct kill_record *r)
{
	h->rec[h->next] = *r;
	h->next = (h->next + 1) % HISTORY_MAX;
	if (h->count < HISTORY_MAX)
		h->count++;
}

const struct kill_record *history_newest(const struct kill_history *h, size_t i)
{
	if (i >= h->count)
		return NULL;
	return &h->rec[(h->next + HISTORY_MAX - 1 - i) % HISTORY_MAX];
}
