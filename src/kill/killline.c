/* SPDX-License-Identifier: MIT */
/* killline: the kill line, as text (one line of key=value tokens) and as a
 * structured journal entry. It belongs to the kill path: it knows tiers,
 * victims and history records, which the logger below it does not. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "escape.h"
#include "history.h"
#include "killline.h"
#include "procfs.h"
#include "sdsock.h"
#include "victim.h"

/* A path as one token, cut after KILLLINE_CGROUP_MAX bytes ("..." then). */
static void escape_path(char *dst, size_t size, const char *path)
{
	size_t n = strlen(path), o;

	o = escape_bytes(dst, size, path, n > KILLLINE_CGROUP_MAX ? KILLLINE_CGROUP_MAX : n, ESCAPE_TOKEN, NULL);
	if (n > KILLLINE_CGROUP_MAX && o + 4 <= size)
		memcpy(dst + o, "...", 4);
}

int killline_format(char *buf, size_t size, const char *verb, const struct proc_info *pi,
		    const struct tier_config *t, const char *reason, const char *group)
{
	char comm[4 * PROC_COMM_MAX + 1], badness[24], cg[4 * KILLLINE_CGROUP_MAX + 4], grp[4 * KILLLINE_CGROUP_MAX + 4];
	int n;

	log_escape_token(comm, sizeof(comm), pi->comm[0] ? pi->comm : "?");
	if (pi->badness_kb == VICTIM_BADNESS_UNKNOWN)
		snprintf(badness, sizeof(badness), "?");
	else
		snprintf(badness, sizeof(badness), "%" PRId64, pi->badness_kb);
	escape_path(cg, sizeof(cg), pi->has_cgroup && !pi->cgroup_unknown ? pi->cgroup : "?");
	escape_path(grp, sizeof(grp), group ? group : "");
	n = snprintf(buf, size,
		     "%s pid=%d comm=%s uid=%u oom_score_adj=%d rss_kb=%" PRIu64 " size_kb=%" PRIu64 " badness_kb=%s tier=%s stall_us=%" PRIu64
		     " window_us=%" PRIu64 " reason=%s cgroup=%s%s%s",
		     verb, (int)pi->pid, comm, (unsigned)pi->uid, pi->oom_score_adj, pi->rss_kb, procfs_size_kb(pi), badness, t->name,
		     t->stall_us, t->window_us, reason, cg, *grp ? " group=" : "", grp);
	if (n >= 0 && (size_t)n < size && pi->culprit)
		n += snprintf(buf + n, size - (size_t)n, " grew_kb=%" PRIu64, pi->growth_kb);
	if (n >= 0 && (size_t)n < size && pi->reader)
		n += snprintf(buf + n, size - (size_t)n, " read_kb=%" PRIu64, pi->read_kb);
	if (n < 0)
		return 0;
	return (size_t)n >= size ? (int)size - 1 : n;
}

/* "12.34", or "" when the file could not be read */
static const char *avg10(char *buf, size_t size, bool has, uint32_t v)
{
	if (has)
		snprintf(buf, size, "%u.%02u", v / 100, v % 100);
	else
		buf[0] = '\0';
	return buf;
}

int killline_journal(const struct log *l, int rootfd, int level, const char *verb, const char *line,
		     const struct kill_record *r)
{
	char cg[4 * HISTORY_CGROUP_MAX], grp[4 * HISTORY_CGROUP_MAX], some[16], full[16];
	struct sdsock_entry e;

	if (!l->journal || l->use_syslog || level > l->max_level)
		return -ENOTSUP;
	escape_bytes(cg, sizeof(cg), r->cgroup, strlen(r->cgroup), ESCAPE_CONTROL, NULL);
	escape_bytes(grp, sizeof(grp), r->group, strlen(r->group), ESCAPE_CONTROL, NULL);
	sdsock_entry_init(&e);
	/* where sd_journal_send(3) would say it was called from */
	sdsock_entry_add(&e, "CODE_FILE", __FILE__);
	sdsock_entry_addf(&e, "CODE_LINE", "%d", __LINE__);
	sdsock_entry_add(&e, "CODE_FUNC", __func__);
	sdsock_entry_add(&e, "MESSAGE", line);
	sdsock_entry_add(&e, "MESSAGE_ID", KILLLINE_MESSAGE_ID);
	sdsock_entry_addf(&e, "PRIORITY", "%d", level);
	sdsock_entry_add(&e, "SYSLOG_IDENTIFIER", "psi-lmkd");
	sdsock_entry_add(&e, "PSI_LMKD_ACTION", verb);
	sdsock_entry_addf(&e, "PSI_LMKD_PID", "%d", (int)r->pid);
	sdsock_entry_add(&e, "PSI_LMKD_COMM", r->comm);
	sdsock_entry_addf(&e, "PSI_LMKD_UID", "%u", (unsigned)r->uid);
	sdsock_entry_addf(&e, "PSI_LMKD_OOM_SCORE_ADJ", "%d", r->oom_score_adj);
	sdsock_entry_addf(&e, "PSI_LMKD_RSS_KB", "%" PRIu64, r->rss_kb);
	sdsock_entry_addf(&e, "PSI_LMKD_SIZE_KB", "%" PRIu64, r->size_kb);
	if (r->badness_kb == VICTIM_BADNESS_UNKNOWN)
		sdsock_entry_add(&e, "PSI_LMKD_BADNESS_KB", "");
	else
		sdsock_entry_addf(&e, "PSI_LMKD_BADNESS_KB", "%" PRId64, r->badness_kb);
	if (r->grew_kb)
		sdsock_entry_addf(&e, "PSI_LMKD_GREW_KB", "%" PRIu64, r->grew_kb);
	if (r->read_kb)
		sdsock_entry_addf(&e, "PSI_LMKD_READ_KB", "%" PRIu64, r->read_kb);
	sdsock_entry_add(&e, "PSI_LMKD_TIER", r->tier);
	sdsock_entry_add(&e, "PSI_LMKD_REASON", r->reason);
	sdsock_entry_add(&e, "PSI_LMKD_CGROUP", cg);
	sdsock_entry_add(&e, "PSI_LMKD_GROUP", grp);
	sdsock_entry_add(&e, "PSI_LMKD_PRESSURE_SOME_AVG10", avg10(some, sizeof(some), r->has_psi, r->psi.some.avg10));
	sdsock_entry_add(&e, "PSI_LMKD_PRESSURE_FULL_AVG10",
			 avg10(full, sizeof(full), r->has_psi && r->psi.full.present, r->psi.full.avg10));
	if (r->has_mem)
		sdsock_entry_addf(&e, "PSI_LMKD_AVAILABLE_KB", "%" PRIu64, r->available_bytes >> 10);
	else
		sdsock_entry_add(&e, "PSI_LMKD_AVAILABLE_KB", "");
	return sdsock_journal(rootfd, &e);
}
