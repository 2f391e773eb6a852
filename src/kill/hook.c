/* SPDX-License-Identifier: MIT */
/* hook: fork + exec of the on_kill program.
 *
 * Everything the child needs (environment, ids, groups) is prepared before
 * the fork; the child only makes plain system calls (no malloc, no stdio, no
 * libcap), in this order:
 *   1. signals: every disposition back to SIG_DFL (an ignored signal stays
 *      ignored across exec, glibc's internal ones too), then an empty mask;
 *   2. oom_score_adj 0 (the daemon's -1000 is inherited) through the daemon's
 *      /proc fd, nice 0, a new session, stdin/stdout on /dev/null;
 *   3. CAP_SETUID/CAP_SETGID raised into the effective set (the daemon keeps
 *      them permitted only), setgroups, setresgid, setresuid to on_kill_user;
 *   4. every capability cleared (capset with zeroed sets, the ambient set),
 *      no_new_privs;
 *   5. a check that all of it took: otherwise exit HOOK_EXIT_SETUP;
 *   6. alarm(HOOK_TIMEOUT_S) (alarms survive exec), then execveat of the
 *      program's fd, the file the daemon checked and opened (trustpath.h),
 *      never its path again: a link re-pointed since runs nothing new.
 * The daemon's fds are all O_CLOEXEC; it reaps the child on SIGCHLD. The
 * program's fd is the exception, in the child only: a script's interpreter
 * is given /dev/fd/N to open, which an fd closed at exec would not be (the
 * kernel refuses that exec with ENOENT), so the hook keeps that one O_PATH
 * fd of its own program. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "hook.h"
#include "escape.h"
#include "fileio.h"
#include "trustpath.h"

/* Appends "NAME=" and the value, escaped as mode says, to buf at *used as
 * one entry. -ENOSPC if it had to be cut. */
static int env_add(char *buf, size_t size, size_t *used, char **slot, const char *name, const char *value,
		   enum escape_mode mode)
{
	size_t n = strlen(name), room = size - *used, need;
	char *at = buf + *used;

	if (room < n + 2)
		return -ENOSPC;
	snprintf(at, room, "%s=", name);
	n++;
	need = escape_bytes(at + n, room - n, value, strlen(value), mode, NULL);
	*slot = at;
	*used += strlen(at) + 1;
	return need >= room - n ? -ENOSPC : 0;
}

int hook_env(char *buf, size_t size, char **envp, const struct proc_info *v, const char *tier, const char *reason)
{
	char num[4][32];
	/* the cgroup path is raw: it becomes a display name here, like comm in procfs */
	struct {
		const char *name, *value;
		enum escape_mode mode;
	} vars[HOOK_ENV_N - 1] = {
		{ "PSI_LMKD_PID", num[0], ESCAPE_CONTROL },
		{ "PSI_LMKD_COMM", v->comm, ESCAPE_CONTROL },
		{ "PSI_LMKD_UID", num[1], ESCAPE_CONTROL },
		{ "PSI_LMKD_OOM_SCORE_ADJ", num[2], ESCAPE_CONTROL },
		{ "PSI_LMKD_RSS_KB", num[3], ESCAPE_CONTROL },
		{ "PSI_LMKD_CGROUP", v->has_cgroup ? v->cgroup : "", ESCAPE_NAME },
		{ "PSI_LMKD_TIER", tier, ESCAPE_CONTROL },
		{ "PSI_LMKD_REASON", reason, ESCAPE_CONTROL },
	};
	size_t i, used = 0;
	int r = 0;

	snprintf(num[0], sizeof(num[0]), "%d", (int)v->pid);
	snprintf(num[1], sizeof(num[1]), "%u", (unsigned)v->uid);
	snprintf(num[2], sizeof(num[2]), "%d", v->oom_score_adj);
	snprintf(num[3], sizeof(num[3]), "%llu", (unsigned long long)v->rss_kb);
	for (i = 0; i < HOOK_ENV_N - 1; i++) {
		envp[i] = (char *)"PSI_LMKD_TRUNCATED=";
		if (env_add(buf, size, &used, &envp[i], vars[i].name, vars[i].value, vars[i].mode) < 0)
			r = -ENOSPC;
	}
	envp[HOOK_ENV_N - 1] = (char *)HOOK_PATH;
	envp[HOOK_ENV_N] = NULL;
	return r;
}

/* ------------------------------------------------------------------ the child */

static int capget_self(struct __user_cap_data_struct d[2])
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };

	memset(d, 0, 2 * sizeof(d[0])); /* valgrind cannot tell that the kernel fills both */
	return (int)syscall(SYS_capget, &h, d);
}

static int capset_self(struct __user_cap_data_struct d[2])
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };

	return (int)syscall(SYS_capset, &h, d);
}

/* Moves cap from the permitted into the effective set, if it is permitted. */
static void raise_permitted(struct __user_cap_data_struct d[2], int cap)
{
	unsigned i = (unsigned)cap / 32, bit = 1U << ((unsigned)cap % 32);

	if (d[i].permitted & bit)
		d[i].effective |= bit;
}

/* true if the process's supplementary groups are exactly want[0..n) */
static bool groups_are(const gid_t *want, size_t n)
{
	gid_t have[CONFIG_GROUPS_MAX + 1];
	int k = getgroups(CONFIG_GROUPS_MAX + 1, have);
	size_t i, j;

	if (k < 0)
		return false;
	for (i = 0; i < (size_t)k; i++) {
		for (j = 0; j < n && want[j] != have[i]; j++)
			;
		if (j == n)
			return false;
	}
	for (j = 0; j < n; j++) {
		for (i = 0; i < (size_t)k && want[j] != have[i]; i++)
			;
		if (i == (size_t)k)
			return false;
	}
	return true;
}

static bool switched(const struct config_user *u)
{
	struct __user_cap_data_struct d[2];
	uid_t ru, eu, su;
	gid_t rg, eg, sg;

	if (getresuid(&ru, &eu, &su) < 0 || ru != u->uid || eu != u->uid || su != u->uid)
		return false;
	if (getresgid(&rg, &eg, &sg) < 0 || rg != u->gid || eg != u->gid || sg != u->gid)
		return false;
	if (!groups_are(u->groups, u->n_groups))
		return false;
	if (capget_self(d) < 0 || d[0].effective || d[1].effective || d[0].permitted || d[1].permitted ||
	    d[0].inheritable || d[1].inheritable)
		return false;
	return prctl(PR_GET_NO_NEW_PRIVS, 0UL, 0UL, 0UL, 0UL) == 1;
}

/* 1. signals: SIG_IGN survives execve, a blocked mask too. The raw system
 * call, as glibc refuses its own signals (32, 33) that an ancestor may still
 * have set to SIG_IGN; all zeros is SIG_DFL, no flags, empty mask, whatever
 * the architecture's layout. false on any failure. */
static bool child_reset_signals(void)
{
	static const unsigned long dfl[8]; /* more than any kernel struct sigaction */
	sigset_t none;
	int sig;

	for (sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP &&
		    syscall(SYS_rt_sigaction, sig, dfl, NULL, (size_t)(NSIG - 1) / 8) < 0)
			return false;
	sigemptyset(&none);
	return sigprocmask(SIG_SETMASK, &none, NULL) == 0;
}

/* 2. what the daemon gave itself: OOM immunity, priority, its session,
 * its stdin and stdout. */
static bool child_reset_daemon_state(int procfd, int devnull_fd)
{
	int fd = openat(procfd, "self/oom_score_adj", O_WRONLY | O_CLOEXEC);

	if (fd < 0 || write(fd, "0", 1) != 1)
		return false;
	close(fd);
	/* raising the nice value always works; lowering it to 0 (a daemon set
	 * to nice > 0) may not, and a hook at a lower priority is harmless */
	(void)setpriority(PRIO_PROCESS, 0, 0);
	return setsid() >= 0 && dup2(devnull_fd, STDIN_FILENO) >= 0 && dup2(devnull_fd, STDOUT_FILENO) >= 0;
}

/* 3. the user: CAP_SETGID/CAP_SETUID are effective only for this; then 4.
 * no capability left in any set, and none to gain at exec. */
static bool child_become_user(const struct config_user *u)
{
	struct __user_cap_data_struct caps[2];

	if (capget_self(caps) == 0) {
		raise_permitted(caps, CAP_SETGID);
		raise_permitted(caps, CAP_SETUID);
		(void)capset_self(caps); /* without them only a switch to ourselves works, checked below */
	}
	if (setgroups(u->n_groups, u->groups) < 0 && !(errno == EPERM && groups_are(u->groups, u->n_groups)))
		return false;
	if (setresgid(u->gid, u->gid, u->gid) < 0 || setresuid(u->uid, u->uid, u->uid) < 0)
		return false;
	memset(caps, 0, sizeof(caps));
	if (capset_self(caps) < 0)
		return false;
	/* EINVAL before Linux 4.3, which has no ambient set */
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0UL, 0UL, 0UL) < 0 && errno != EINVAL)
		return false;
	return prctl(PR_SET_NO_NEW_PRIVS, 1UL, 0UL, 0UL, 0UL) == 0;
}

__attribute__((noreturn)) static void child(int progfd, char *const argv[], char *const envp[],
					    const struct config_user *u, int procfd, int devnull_fd)
{
	/* 5. trust nothing: the ids, the groups, the empty sets are checked */
	if (!child_reset_signals() || !child_reset_daemon_state(procfd, devnull_fd) || !child_become_user(u) ||
	    !switched(u))
		_exit(HOOK_EXIT_SETUP);
	/* 6. */
	alarm(HOOK_TIMEOUT_S);
	if (fcntl(progfd, F_SETFD, 0) == 0)
		syscall(SYS_execveat, progfd, "", argv, envp, AT_EMPTY_PATH);
	_exit(HOOK_EXIT_EXEC);
}

pid_t hook_run(int progfd, const char *path, const struct config_user *user, int procfd, int devnull_fd,
	       const struct proc_info *v, const char *tier, const char *reason)
{
	char buf[4 * (PROC_COMM_MAX + PROC_CGROUP_MAX + CONFIG_NAME_MAX) + 512];
	char *envp[HOOK_ENV_N + 1], *argv[2];
	pid_t pid;

	if (progfd < 0 || procfd < 0 || devnull_fd < 0)
		return -EBADF;
	if (user->uid == 0 || user->n_groups > CONFIG_GROUPS_MAX)
		return -EPERM; /* config.c refuses these; never run a hook as root */
	(void)hook_env(buf, sizeof(buf), envp, v, tier, reason); /* the buffer holds the longest fields */
	argv[0] = (char *)path;
	argv[1] = NULL;

	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0)
		child(progfd, argv, envp, user, procfd, devnull_fd);
	return pid;
}

pid_t hook_launch(int progfd, const char *key, const char *path, const struct config_user *user, int procfd,
		  int rootfd, const struct proc_info *v, const char *tier, const char *reason, char *why, size_t whylen)
{
	int devnull, r;
	pid_t pid;

	/* the file opened at load, as it is now: chmod and chown reach it */
	r = trust_check_fd(progfd, TRUST_PROGRAM, key, path, why, whylen);
	if (r < 0)
		return r;
	devnull = sysroot_openat(rootfd, "/dev/null", O_RDWR);
	if (devnull < 0) {
		snprintf(why, whylen, "%s %s: cannot open /dev/null: %s", key, path, strerror(-devnull));
		return devnull;
	}
	pid = hook_run(progfd, path, user, procfd, devnull, v, tier, reason);
	close(devnull);
	if (pid < 0)
		snprintf(why, whylen, "%s %s: %s", key, path, strerror(-pid));
	return pid;
}

const char *hook_status_text(char *buf, size_t size, int status)
{
	if (WIFEXITED(status))
		snprintf(buf, size, "exited with status %d%s%s%s", WEXITSTATUS(status),
			 WEXITSTATUS(status) == HOOK_EXIT_SETUP ? " (or its process could not be set up as on_kill_user: "
				 "not run)" : "",
			 WEXITSTATUS(status) == HOOK_EXIT_EXEC ? " (or on_kill_user could not execute " : "",
			 WEXITSTATUS(status) == HOOK_EXIT_EXEC ? "it)" : "");
	else if (WIFSIGNALED(status))
		snprintf(buf, size, "was killed by %s%s", strsignal(WTERMSIG(status)),
			 WTERMSIG(status) == SIGALRM ? " (timeout)" : "");
	else
		snprintf(buf, size, "ended with wait status 0x%x", (unsigned)status);
	return buf;
}
