/* SPDX-License-Identifier: MIT */
/* reaper: pidfd-based, identity-checked kills.
 * Race handled: the scanned process exits and its pid is reused before we
 * signal. pidfd_open() pins whatever process has the pid now; reading its
 * start time afterwards tells whether that is still the scanned one. If the
 * scanned process was gone before pidfd_open, the start time differs (or the
 * pid is absent) and nothing is signalled. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include "procfs.h"
#include "reaper.h"
#include "syscalls.h"

int reaper_open_verified(int procfd, pid_t pid, uint64_t start_time)
{
	uint64_t now_start;
	int fd, r;

	fd = sys_pidfd_open(pid, 0);
	if (fd < 0)
		return fd;
	r = procfs_read_start_time(procfd, pid, &now_start);
	if (r < 0 || now_start != start_time) {
		close(fd);
		return r < 0 && r != -ESRCH ? r : -ESRCH;
	}
	return fd;
}

int reaper_signal(int pidfd, int sig)
{
	return sys_pidfd_send_signal(pidfd, sig);
}

int reaper_mrelease(int pidfd)
{
	return sys_process_mrelease(pidfd, 0);
}

int reaper_exited(int pidfd)
{
	struct pollfd pfd = { .fd = pidfd, .events = POLLIN };
	int r = poll(&pfd, 1, 0);

	if (r < 0)
		return -errno;
	return r > 0 && (pfd.revents & POLLIN) ? 1 : 0;
}
