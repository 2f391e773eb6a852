/* SPDX-License-Identifier: MIT */
/* stall-thread - stops one thread of a process, and only that one, in the
 * middle of its work, for a while: the fault a stuck event loop is
 * (test-lmkd-watchdog.sh).
 *
 * Usage: stall-thread TID MS
 *
 * SIGSTOP would stop every thread of the process; a ptrace stop is per
 * thread. The tool seizes TID (PTRACE_SEIZE, PTRACE_INTERRUPT), prints
 * "tracing", and follows its system calls (PTRACE_SYSCALL,
 * PTRACE_GET_SYSCALL_INFO) until an epoll_wait (or epoll_pwait) returns
 * events: the loop is then handling them. At the next system call it
 * makes, the thread is held, "stalled" printed, for MS ms; PTRACE_DETACH
 * then lets it go. The process's other threads run on all along. Gives up
 * (exit 1) when no events come within 30 s. Needs CAP_SYS_PTRACE (or the
 * same uid and Yama's ptrace_scope 0) and Linux 5.3.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/ptrace.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static bool is_epoll_wait(long nr)
{
#ifdef SYS_epoll_wait
	if (nr == SYS_epoll_wait)
		return true;
#endif
#ifdef SYS_epoll_pwait2
	if (nr == SYS_epoll_pwait2)
		return true;
#endif
	return nr == SYS_epoll_pwait;
}

/* the raw system call: the kernel's header, whatever the C library's
 * <sys/ptrace.h> knows of PTRACE_GET_SYSCALL_INFO */
static long trace(long req, pid_t tid, void *addr, void *data)
{
	return syscall(SYS_ptrace, req, (long)tid, addr, data);
}

static int fail(pid_t tid, const char *what)
{
	fprintf(stderr, "stall-thread: %s (thread %d): %s\n", what, (int)tid, strerror(errno));
	return 1;
}

int main(int argc, char **argv)
{
	struct ptrace_syscall_info info;
	struct timespec ts;
	time_t give_up = time(NULL) + 30;
	long last_nr = -1, ms;
	bool handling = false;
	pid_t tid;
	int st, sig = 0;

	if (argc != 3) {
		fprintf(stderr, "usage: stall-thread TID MS\n");
		return 2;
	}
	tid = (pid_t)atol(argv[1]);
	ms = atol(argv[2]);
	if (trace(PTRACE_SEIZE, tid, NULL, (void *)(long)PTRACE_O_TRACESYSGOOD) < 0)
		return fail(tid, "PTRACE_SEIZE");
	if (trace(PTRACE_INTERRUPT, tid, NULL, NULL) < 0)
		return fail(tid, "PTRACE_INTERRUPT");
	if (waitpid(tid, &st, __WALL) != tid || !WIFSTOPPED(st))
		return fail(tid, "waitpid");
	printf("tracing\n");
	fflush(stdout);
	for (;;) {
		if (time(NULL) > give_up) {
			errno = ETIMEDOUT;
			trace(PTRACE_DETACH, tid, NULL, NULL);
			return fail(tid, "no events came");
		}
		if (trace(PTRACE_SYSCALL, tid, NULL, (void *)(long)sig) < 0)
			return fail(tid, "PTRACE_SYSCALL");
		sig = 0;
		if (waitpid(tid, &st, __WALL) != tid)
			return fail(tid, "waitpid");
		if (!WIFSTOPPED(st))
			return fail(tid, "the thread ended");
		if (WSTOPSIG(st) != (SIGTRAP | 0x80)) {
			/* a signal for the thread goes on to it; other stops are passed */
			if (st >> 16 == 0 && WSTOPSIG(st) != SIGTRAP)
				sig = WSTOPSIG(st);
			continue;
		}
		if (trace(PTRACE_GET_SYSCALL_INFO, tid, (void *)sizeof(info), &info) <= 0)
			return fail(tid, "PTRACE_GET_SYSCALL_INFO");
		if (info.op == PTRACE_SYSCALL_INFO_ENTRY) {
			if (handling)
				break;
			last_nr = (long)info.entry.nr;
		} else if (info.op == PTRACE_SYSCALL_INFO_EXIT) {
			handling = is_epoll_wait(last_nr) && !info.exit.is_error && info.exit.rval > 0;
		}
	}
	printf("stalled\n");
	fflush(stdout);
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000L;
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
	if (trace(PTRACE_DETACH, tid, NULL, NULL) < 0)
		return fail(tid, "PTRACE_DETACH");
	return 0;
}
