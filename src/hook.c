/* hook: fork + exec of the on_kill program. The child gets an alarm before
 * exec (alarms survive exec), stdin/stdout on /dev/null, a clean signal mask,
 * and nothing of the daemon's fds (all are O_CLOEXEC). The daemon reaps it
 * on SIGCHLD. /dev/null comes from the daemon's root fd, like every /dev path. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hook.h"

pid_t hook_run(const char *path, int devnull_fd, const struct proc_info *v, const char *tier, const char *reason)
{
	char e[8][PROC_CGROUP_MAX + 32];
	char *envp[10], *argv[2];
	sigset_t all;
	pid_t pid;
	int i;

	snprintf(e[0], sizeof(e[0]), "PSI_LMKD_PID=%d", (int)v->pid);
	snprintf(e[1], sizeof(e[1]), "PSI_LMKD_COMM=%s", v->comm);
	snprintf(e[2], sizeof(e[2]), "PSI_LMKD_UID=%u", (unsigned)v->uid);
	snprintf(e[3], sizeof(e[3]), "PSI_LMKD_OOM_SCORE_ADJ=%d", v->oom_score_adj);
	snprintf(e[4], sizeof(e[4]), "PSI_LMKD_RSS_KB=%llu", (unsigned long long)v->rss_kb);
	snprintf(e[5], sizeof(e[5]), "PSI_LMKD_CGROUP=%s", v->has_cgroup ? v->cgroup : "");
	snprintf(e[6], sizeof(e[6]), "PSI_LMKD_TIER=%s", tier);
	snprintf(e[7], sizeof(e[7]), "PSI_LMKD_REASON=%s", reason);
	for (i = 0; i < 8; i++)
		envp[i] = e[i];
	envp[8] = (char *)"PATH=/usr/local/bin:/usr/bin:/bin";
	envp[9] = NULL;
	argv[0] = (char *)path;
	argv[1] = NULL;

	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid > 0)
		return pid;
	/* child: only async-signal-safe calls from here */
	sigemptyset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	if (devnull_fd >= 0) {
		dup2(devnull_fd, STDIN_FILENO);
		dup2(devnull_fd, STDOUT_FILENO);
	}
	setsid();
	alarm(HOOK_TIMEOUT_S);
	execve(path, argv, envp);
	_exit(127);
}
