/* SPDX-License-Identifier: MIT */
/* fake-kernel: see fake-kernel.h. */
#include <errno.h>
#include <sys/eventfd.h>

#include "fake-kernel.h"

static int unprivileged_open(int rfd, const char *path, enum psi_state state, uint64_t stall_us, uint64_t window_us)
{
	(void)rfd;
	(void)path;
	(void)state;
	(void)stall_us;
	if (window_us % 2000000 != 0)
		return -EINVAL;
	return eventfd(0, EFD_CLOEXEC);
}

static int no_trigger_open(int rfd, const char *path, enum psi_state state, uint64_t stall_us, uint64_t window_us)
{
	(void)rfd;
	(void)path;
	(void)state;
	(void)stall_us;
	(void)window_us;
	return -EACCES;
}

const struct watch_ops fake_kernel_unprivileged = { .trigger_open = unprivileged_open };
const struct watch_ops fake_kernel_no_triggers = { .trigger_open = no_trigger_open };
