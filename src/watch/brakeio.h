/* SPDX-License-Identifier: MIT */
/* brakeio: the memory.high brake's reads and writes on a cgroup2 group
 * (memory.max, memory.high, and the record BRAKE_XATTR on the group's
 * directory), through the root fd; the decisions are brake.h's. Used by
 * the daemon (daemon-memory.c) and by `psi-lmkd --release-brake`.
 * Nothing here logs: callers do. */
#pragma once

#include <stdint.h>

#include "brake.h"
#include "config.h"

/* The memory cgroup that bounds "available" (daemon_setup_memory):
 * cfg's memory_cgroup, else the directory of a cgroup2 memory.pressure
 * that has a memory limit; "" when none. */
void brakeio_memory_cgroup(int rootfd, const struct config *cfg, char *out, size_t size);

/* What brakeio_apply did. */
struct brakeio_result {
	int target;              /* brake_target's verdict: 0 braked, 1 left (already lower), or -errno */
	bool adopted;            /* a record was there (a psi-lmkd that did not stop cleanly) */
	struct brake_record rec; /* orig: what a release writes back; set: the brake */
};

/* Puts the brake on group dir (absolute) margin bytes below its
 * memory.max: the record first, then memory.high.
 * A record left by a psi-lmkd that died is adopted (its original value is
 * the one kept). 0 (see res->target: only 0 changed anything), or -errno
 * of the I/O: -ENOENT (no memory.max: not a cgroup2 memory group),
 * -EOPNOTSUPP (no user xattrs on this cgroupfs: Linux < 5.7, and then no
 * brake, as nothing could restore it after a SIGKILL). */
int brakeio_apply(int rootfd, const char *dir, uint64_t margin, struct brakeio_result *res);
/* Writes v into dir's memory.high. 0 or -errno. */
int brakeio_write_high(int rootfd, const char *dir, uint64_t v);
/* Takes the brake off group dir: memory.high back to the recorded value if
 * it still holds the brake, and the record removed. 0 (no record), 1
 * (restored: *restored the value), 2 (memory.high changed by someone else:
 * left as it is, the record removed), or -errno. */
int brakeio_release(int rootfd, const char *dir, uint64_t *restored);
