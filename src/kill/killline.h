/* SPDX-License-Identifier: MIT */
/* killline: the kill line, as text and as a journal entry (see killline.c). */
#pragma once

#include <stddef.h>

#include "log.h"

struct proc_info;
struct tier_config;

/* The kill line: "<verb> pid= comm= uid= oom_score_adj= rss_kb= badness_kb= tier= stall_us= window_us=
 * reason= cgroup=[ group=]". verb is "kill" or "would-kill"; badness_kb is pi->badness_kb, "?" when
 * unknown; cgroup is the victim's cgroup2 path ("?" when it was not read; cut after KILLLINE_CGROUP_MAX
 * bytes, ending in "..."); group, for an instance of a cgroup-pattern tier, the group that instance
 * watches ("" or NULL: none, no field). Paths are escaped as tokens. Returns the length (truncated
 * at size-1). */
#define KILLLINE_CGROUP_MAX 255
int killline_format(char *buf, size_t size, const char *verb, const struct proc_info *pi,
		    const struct tier_config *t, const char *reason, const char *group);

struct kill_record;

/* The MESSAGE_ID of every kill (and would-kill) entry in the journal:
 * journalctl MESSAGE_ID=3aad526eb9cf4728993578bee98844ab */
#define KILLLINE_MESSAGE_ID "3aad526eb9cf4728993578bee98844ab"

/* Where stderr goes to journald (l->journal): sends the kill line as one
 * structured entry (MESSAGE = line, the MESSAGE_ID above, PSI_LMKD_* fields
 * from r) to the journal's socket under rootfd, in its native protocol
 * (sdsock.h), and returns 0; the caller then writes no stderr line. -ENOTSUP
 * elsewhere (write the line), or the journal's -errno (write it too). */
int killline_journal(const struct log *l, int rootfd, int level, const char *verb, const char *line,
		     const struct kill_record *r);
