/* SPDX-License-Identifier: MIT */
/* prekill: the pre_kill hook in flight (prekill.h); kill.c drives it. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "prekill.h"

void prekill_started(struct prekill *pk, pid_t pid, uint64_t now, int why, const char *group)
{
	pk->hook = pid;
	pk->start_us = now;
	pk->why = why;
	snprintf(pk->group, sizeof(pk->group), "%s", group);
	pk->runs++;
}

pid_t prekill_stop(struct prekill *pk)
{
	pid_t pid = pk->hook;

	if (pid <= 0)
		return 0;
	/* ESRCH: the group is empty already (the leader a zombie, nothing
	 * else), or the child never got as far as setsid: then it alone */
	(void)kill(-pid, SIGKILL);
	(void)kill(pid, SIGKILL);
	pk->hook = 0;
	pk->ended = pid;
	return pid;
}

enum prekill_child prekill_reaped(struct prekill *pk, pid_t pid)
{
	if (pid <= 0)
		return PREKILL_NOT_OURS;
	if (pid == pk->hook) {
		pk->hook = 0;
		return PREKILL_IN_FLIGHT;
	}
	if (pid == pk->ended) {
		pk->ended = 0;
		return PREKILL_ENDED;
	}
	return PREKILL_NOT_OURS;
}
