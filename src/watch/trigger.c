/* SPDX-License-Identifier: MIT */
/* trigger: kernel PSI triggers. The kernel copies the write into a buffer and
 * terminates it at the last byte written, so the trigger is written with its
 * terminating NUL. One trigger per open file description. */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "fileio.h"
#include "trigger.h"

int trigger_open(int rootfd, const char *path, enum psi_state state, uint64_t stall_us, uint64_t window_us)
{
	char buf[64];
	ssize_t n;
	int fd, len;

	len = psi_format_trigger(buf, sizeof(buf), state, stall_us, window_us);
	if (len < 0)
		return len;
	fd = sysroot_openat(rootfd, path, O_RDWR | O_NONBLOCK);
	if (fd < 0)
		return fd;
	n = write(fd, buf, (size_t)len + 1);
	if (n < 0) {
		int r = -errno;

		close(fd);
		return r;
	}
	return fd;
}

const char *trigger_error_hint(int err, uint64_t window_us, bool cap_sys_resource)
{
	switch (err) {
	case -EINVAL:
		if (!cap_sys_resource && window_us % PSI_UNPRIV_WINDOW_US != 0)
			return "without CAP_SYS_RESOURCE this kernel only accepts windows that are multiples of 2s "
			       "(use 2s, 4s, ... or give the daemon CAP_SYS_RESOURCE)";
		return "the kernel rejected the trigger (stall or window out of its range)";
	case -EPERM:
	case -EACCES:
		return "not allowed to create a trigger: kernels before 6.4 require CAP_SYS_RESOURCE, "
		       "and the file must be writable";
	case -ENOENT:
		return "no such pressure file: PSI needs CONFIG_PSI (and psi=1 if CONFIG_PSI_DEFAULT_DISABLED), "
		       "or the cgroup does not exist";
	case -EOPNOTSUPP:
		return "PSI is disabled on this kernel (booted with psi=0?)";
	case -EBUSY:
		return "a trigger already exists on this file descriptor";
	case -EROFS:
		return "the pressure file is read-only here (kernel without PSI trigger support, before 5.2?)";
	default:
		return "unexpected error from the kernel";
	}
}
