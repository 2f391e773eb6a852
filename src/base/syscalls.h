/* SPDX-License-Identifier: MIT */
/* syscalls: the pidfd and process_mrelease system calls, which older C
 * libraries have no wrapper (or no number) for. The numbers are the same on
 * every architecture (the unified table since Linux 5.1). Each wrapper
 * returns the result or -errno, and leaves errno as the kernel set it. */
#pragma once

#include <errno.h>
#include <signal.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/types.h>

#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_process_mrelease
#define SYS_process_mrelease 448
#endif

/* A pidfd for pid: the fd, or -errno (-ESRCH: no such process, -ENOSYS: before 5.3). */
static inline int sys_pidfd_open(pid_t pid, unsigned flags)
{
	long r = syscall(SYS_pidfd_open, pid, flags);

	return r < 0 ? -errno : (int)r;
}

/* Sends sig to the process behind pidfd: 0 or -errno. */
static inline int sys_pidfd_send_signal(int pidfd, int sig)
{
	return syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0) < 0 ? -errno : 0;
}

/* Frees a dying process's memory now: 0 or -errno (-ENOSYS: before 5.15). */
static inline int sys_process_mrelease(int pidfd, unsigned flags)
{
	return syscall(SYS_process_mrelease, pidfd, flags) < 0 ? -errno : 0;
}
