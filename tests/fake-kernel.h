/* SPDX-License-Identifier: MIT */
/* fake-kernel: watch_ops that play a kernel's answers to trigger writes, for
 * unit tests of the watch and of what is built on it. */
#pragma once

#include "watch.h"

/* An unprivileged 6.4+ kernel: windows must be multiples of 2 s. An accepted
 * trigger is an eventfd, which epoll takes as the daemon's loop does. */
extern const struct watch_ops fake_kernel_unprivileged;
/* A kernel without PSI triggers at all (before 5.2, or a read-only file). */
extern const struct watch_ops fake_kernel_no_triggers;
