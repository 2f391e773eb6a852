/* SPDX-License-Identifier: MIT */
/* hook: runs a hook program -- on_kill after a kill, fire and forget;
 * pre_kill before the signal, waited for by kill.c (prekill.h) -- never
 * blocking the event loop: it gets the victim's fields in its environment, and is
 * sent SIGALRM (default action: exit) after HOOK_TIMEOUT_S seconds.
 *
 * The victim's owner chose its comm and (in a delegated subtree) its cgroup,
 * and both reach the hook, so the hook gets nothing the victim's owner could
 * borrow: it runs as on_kill_user (never root) without any capability, with
 * no_new_privs, default signal dispositions, an empty signal mask,
 * oom_score_adj 0 and nice 0, in its own session, with control characters
 * in every PSI_LMKD_* value escaped. */
#pragma once

#include <sys/types.h>

#include "config.h"
#include "procfs.h"

#define HOOK_TIMEOUT_S 10

/* Exit statuses of the child that mean the hook never ran */
#define HOOK_EXIT_SETUP 126 /* a step before execve failed: the hook was not started */
#define HOOK_EXIT_EXEC 127  /* execve failed */

/* The PATH the hook gets */
#define HOOK_PATH "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

/* Number of environment entries of the hook (PSI_LMKD_* and PATH) */
#define HOOK_ENV_N 9

/* Fills the environment of a hook into buf (size bytes) and envp
 * (HOOK_ENV_N + 1 entries, NULL-terminated): PSI_LMKD_PID, PSI_LMKD_COMM,
 * PSI_LMKD_UID, PSI_LMKD_OOM_SCORE_ADJ, PSI_LMKD_RSS_KB, PSI_LMKD_CGROUP,
 * PSI_LMKD_TIER, PSI_LMKD_REASON (display names, see escape.h: control
 * characters and invalid UTF-8 as \xHH; comm comes escaped from procfs
 * already, the cgroup path is escaped here with ESCAPE_NAME) and HOOK_PATH. A
 * value that does not fit is cut at an escape boundary. Returns 0 or -ENOSPC if something was cut. */
int hook_env(char *buf, size_t size, char **envp, const struct proc_info *victim, const char *tier,
	     const char *reason);

/* Starts the program progfd (trust_open's O_PATH fd of path; path is only
 * its argv[0]) as user with the victim's fields in its environment (hook_env).
 * stdin/stdout of the hook are devnull_fd (the root's /dev/null), dup'ed; its
 * oom_score_adj is reset through procfd (the daemon's /proc). The child raises
 * CAP_SETUID/CAP_SETGID from its permitted set just to switch users, then
 * drops every capability; if a step fails it exits with HOOK_EXIT_SETUP
 * without running anything. Returns the child's pid or -errno (-EBADF:
 * progfd, devnull_fd or procfd is not open). */
pid_t hook_run(int progfd, const char *path, const struct config_user *user, int procfd, int devnull_fd,
	       const struct proc_info *victim, const char *tier, const char *reason);

/* hook_run for a hook program of the configuration (key: "on_kill" or
 * "pre_kill", for why): progfd checked again first (trust_check_fd: a chmod
 * or chown since the load reaches it), /dev/null opened through rootfd.
 * The child's pid, or -errno with why set. */
pid_t hook_launch(int progfd, const char *key, const char *path, const struct config_user *user, int procfd,
		  int rootfd, const struct proc_info *victim, const char *tier, const char *reason, char *why,
		  size_t whylen);

/* How a hook's wait status reads in a log line ("exited with status 0",
 * "was killed by Killed", with what HOOK_EXIT_* and SIGALRM mean). Returns
 * buf. */
const char *hook_status_text(char *buf, size_t size, int status);
