/* SPDX-License-Identifier: MIT */
/* trigger: arming a kernel PSI trigger on a pressure file (the fd then reports
 * EPOLLPRI when the trigger fires, EPOLLERR when the file's cgroup is gone). */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "psi.h"

/* Opens path (under rootfd) and writes the trigger "some|full STALL WINDOW".
 * Returns the fd or -errno. */
int trigger_open(int rootfd, const char *path, enum psi_state state, uint64_t stall_us, uint64_t window_us);

/* A sentence telling the user what a trigger_open() error means on this kernel. */
const char *trigger_error_hint(int err, uint64_t window_us, bool cap_sys_resource);
