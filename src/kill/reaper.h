/* SPDX-License-Identifier: MIT */
/* reaper: the kill path. Opens a pidfd, proves it names the process that was
 * scanned (same start time), signals through the pidfd, and asks the kernel to
 * release the victim's memory at once (process_mrelease). Returns -errno; the
 * caller logs. */
#pragma once

#include <stdint.h>
#include <sys/types.h>

/* Opens a pidfd for pid and checks, through /proc under procfd, that the pid
 * still names the process started at start_time. Returns the pidfd, or
 * -ESRCH if the process is gone or the pid now names another process. */
int reaper_open_verified(int procfd, pid_t pid, uint64_t start_time);

/* Sends sig through the pidfd. -ESRCH if it already exited. */
int reaper_signal(int pidfd, int sig);

/* After SIGKILL: reaps the victim's address space now instead of when it
 * finishes exiting. -EINVAL while the task is not yet dying, -ESRCH if gone,
 * -ENOSYS on kernels before 5.15; none of these is an error for the caller. */
int reaper_mrelease(int pidfd);

/* 1 if the process behind the pidfd has exited, 0 if alive, -errno. */
int reaper_exited(int pidfd);
