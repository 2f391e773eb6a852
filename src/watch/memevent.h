/* SPDX-License-Identifier: MIT */
/* memevent: the kernel's own notifications from the watched memory cgroup,
 * so that the daemon hears of a group filling up when it happens instead of
 * at its next timed check, and (opt-in, cgroup v1 only) the handover of the
 * group's OOM decisions from the kernel to the daemon.
 *
 *   wake-up   v1: an eventfd the kernel signals when memory.usage_in_bytes
 *             crosses a threshold (cgroup.event_control); v2: memory.events,
 *             which the kernel marks for poll (EPOLLPRI) whenever one of its
 *             counters (high, max, oom, oom_kill) moves.
 *   handover  v1: memory.oom_control oom_kill_disable = 1 and an eventfd the
 *             kernel signals each time the group runs out of memory; the
 *             group's tasks then wait (killable) until memory is freed, the
 *             daemon kills, or oom_kill_disable goes back to 0, which
 *             memevent_release does (and memevent_close). Nothing undoes it
 *             if the daemon is SIGKILLed: see psi-lmkd.conf(5), oom_killer.
 *
 * Paths go through the root fd. Nothing here logs: callers do. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"

struct memevent {
	int wake_fd;    /* v1 usage-threshold eventfd, or v2 memory.events; -1 = none */
	int oom_fd;     /* v1 OOM eventfd while the group's OOM is ours; -1 = none */
	bool v2;        /* wake_fd is memory.events (read it to re-arm the poll) */
	bool oom_taken; /* we set oom_kill_disable: memevent_release sets it back */
	char dir[CONFIG_PATH_MAX];
};

/* Parses v1 memory.oom_control ("oom_kill_disable 0\nunder_oom 0\n...").
 * 0 or -EINVAL. */
int memevent_parse_oom_control(const char *text, bool *kill_disabled, bool *under_oom);

void memevent_init(struct memevent *m);
/* Opens the wake-up of memory cgroup dir: on v1 for usage crossing any of
 * the n thresholds usage[] (bytes; either way), on v2 any memory.events
 * change. 0 or -errno (-ENOENT: dir is no memory cgroup). */
int memevent_open_wake(struct memevent *m, int rootfd, const char *dir, const uint64_t *usage, size_t n);
/* Takes the OOM decisions of v1 memory cgroup dir from the kernel: registers
 * the OOM eventfd (m->oom_fd), then sets oom_kill_disable. If it was set
 * already -- most likely by a psi-lmkd that was SIGKILLed -- the group is
 * adopted as it is (and given back on release: a group left without any OOM
 * killer is the worse outcome); tasks already waiting at OOM then get a
 * notification made up at once. Returns 0 (taken), 1 (adopted), or -errno
 * (nothing changed): -EOPNOTSUPP on cgroup v2, which has no such switch. */
int memevent_take_oom(struct memevent *m, int rootfd, const char *dir);
/* Gives the OOM decisions back to the kernel (oom_kill_disable 0, which
 * also wakes the tasks waiting at OOM) if memevent_take_oom took them, and
 * closes the OOM eventfd. 0 or the -errno of the write (then the group may
 * still be without its OOM killer). */
int memevent_release(struct memevent *m, int rootfd);
/* memevent_release, then closes the wake-up. */
void memevent_close(struct memevent *m, int rootfd);
/* Consumes a notification of fd (one of m's): the eventfd's count, or on v2
 * memory.events a read that re-arms its poll. 0, or -errno: on v2 a group
 * that is gone (-ENODEV) keeps polling ready, so its fd must be closed. */
int memevent_drain(const struct memevent *m, int fd);
/* Whether v1 memory cgroup dir is out of memory now (under_oom): 1, 0 or
 * -errno (-ENOENT: the group is gone). */
int memevent_under_oom(int rootfd, const char *dir);
/* How many processes the kernel's OOM killer has killed: in memory cgroup
 * dir (v2 memory.events, v1 memory.oom_control "oom_kill"; the kernel
 * counts a group's own kills), or system-wide with dir "" (/proc/vmstat).
 * 0, -ENODATA (a kernel without the counter) or -errno. */
int memevent_read_oom_kills(int rootfd, const char *dir, uint64_t *count);
