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
#include <sys/syscall.h>

#include "procfs.h"
#include "reaper.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif
#ifndef SYS_process_mrelease
#define SYS_process_mrelease 448
#endif

int reaper_open_verified(int procfd, pid_t pid, uint64_t start_time)
{
	uint64_t now_start;
	int fd, r;

	fd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (fd < 0)
		return errno == ESRCH ? -ESRCH : -errno;
	r = procfs_read_start_time(procfd, pid, &now_start);
	if (r < 0 || now_start != start_time) {
		close(fd);
		return r < 0 && r != -ESRCH ? r : -ESRCH;
	}
	return fd;
}

int reaper_signal(int pidfd, int sig)
{
	if (syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0) < 0)
		return -errno;
	return 0;
}

int reaper_mrelease(int pidfd)
{
	if (syscall(SYS_process_mrelease, pidfd, 0) < 0)
		return -errno;
	return 0;
}

int reaper_exited(int pidfd)
{
	struct pollfd pfd = { .fd = pidfd, .events = POLLIN };
	int r = poll(&pfd, 1, 0);

	if (r < 0)
		return -errno;
	return r > 0 && (pfd.revents & POLLIN) ? 1 : 0;
}
