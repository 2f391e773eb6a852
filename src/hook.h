/* hook: runs the on_kill program after a kill, fire and forget: it never
 * blocks the event loop, gets the victim's fields in its environment, and is
 * sent SIGALRM (default action: exit) after HOOK_TIMEOUT_S seconds. */
#pragma once

#include <sys/types.h>

#include "procfs.h"

#define HOOK_TIMEOUT_S 10

/* Starts path with PSI_LMKD_PID, PSI_LMKD_COMM, PSI_LMKD_UID,
 * PSI_LMKD_OOM_SCORE_ADJ, PSI_LMKD_RSS_KB, PSI_LMKD_CGROUP, PSI_LMKD_TIER,
 * PSI_LMKD_REASON set. Returns the child's pid or -errno. */
/* stdin/stdout of the hook are devnull_fd (the root's /dev/null), dup'ed. */
pid_t hook_run(const char *path, int devnull_fd, const struct proc_info *victim, const char *tier,
	       const char *reason);
