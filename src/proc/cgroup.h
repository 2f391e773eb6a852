/* SPDX-License-Identifier: MIT */
/* cgroup: the cgroup2 mount, the processes of a group and of its subtree,
 * and cgroup.kill.
 * Paths go through the root fd. */
#pragma once

#include <stddef.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "procfs.h"

/* Finds the cgroup2 mount point in the text of /proc/self/mounts. */
int cgroup_find_mount(const char *mounts, char *out, size_t size);
/* Reads /proc/self/mounts under rootfd and finds the cgroup2 mount. */
int cgroup_mount(int rootfd, char *out, size_t size);
/* Reads the pids of group cg (a path relative to the cgroup2 mount). Returns
 * the count (at most max) or -errno; -E2BIG if there are more than max. */
int cgroup_read_procs(int rootfd, const char *mount, const char *cg, pid_t *pids, size_t max);
/* 0 when group cg (absolute, "/" = the root) is a directory under the
 * cgroup2 mount, else -ENOENT or the -errno of the failed open. */
int cgroup_exists(int rootfd, const char *mount, const char *cg);
/* Reads the pids of group cg and of every group below it -- what cgroup.kill
 * kills -- group first, then each child's subtree (directory order).
 * cg is absolute ("/" = the mount itself); max_depth is how many levels of
 * child groups may exist below cg (0: cg must have none). Needs no heap: one
 * directory fd (O_CLOEXEC|O_NOFOLLOW) per level, closed on every path, and
 * about 2 KiB of stack per level.
 * Returns the number of pids stored, or
 *   -E2BIG   more than max pids;
 *   -ELOOP   a group deeper than max_depth;
 *   -ENOENT  cg itself does not exist (a group below it that vanishes
 *            during the walk is skipped, not an error);
 *   -EINVAL  cg not absolute, or a cgroup.procs that is not a list of pids;
 *   -ENAMETOOLONG, or the -errno of a failed open, read or getdents64.
 * The walk is not atomic: a process that moves meanwhile may be missed or
 * listed twice; new processes may appear after it. */
int cgroup_read_subtree_procs(int rootfd, const char *mount, const char *cg, pid_t *pids, size_t max,
			      unsigned max_depth);
/* cgroup_read_subtree_procs for a list a choice may trust to be whole:
 * -EPERM when a group of the subtree is owned by a uid above owner_max.
 * The owner of a delegated group can move their processes between its
 * groups while the walk reads them one after another, and so keep one out
 * of the list; only /proc, where each process names its own group, sees it
 * wherever it goes. */
int cgroup_read_owned_procs(int rootfd, const char *mount, const char *cg, pid_t *pids, size_t max,
			    unsigned max_depth, uid_t owner_max);
/* 1 if group cg has child groups, 0 if it is a leaf, or -errno. No heap. */
int cgroup_has_children(int rootfd, const char *mount, const char *cg);
/* Writes 1 to the group's cgroup.kill (Linux 5.14+). */
int cgroup_kill(int rootfd, const char *mount, const char *cg);
/* Whether group cg (relative to the cgroup2 mount) and every ancestor below
 * the mount are owned by uids <= max, i.e. no user was delegated any of them
 * (a user can create groups, and move their own processes, only inside a
 * subtree they own). Returns 1 (trusted), 0 (some directory is owned by
 * another uid) or -errno (then trust nothing). */
int cgroup_path_trusted(int rootfd, const char *mount, const char *cg, uid_t max);
/* The topmost directory on that path (cg included) owned by a uid above
 * max, the root of what one user was delegated: 1 with *first its stat, 0
 * if there is none (trusted), or -errno. */
int cgroup_path_untrusted(int rootfd, const char *mount, const char *cg, uid_t max, struct stat *first);

/* systemd's ManagedOOMPreference= marks on group cg (relative to the cgroup2
 * mount): the extended attributes user.oomd_omit and user.oomd_avoid, which
 * systemd sets on a unit's cgroup directory. Each directory below the mount,
 * from the top down to cg, is opened (O_RDONLY|O_DIRECTORY|O_NOFOLLOW, one at
 * a time) and read with fgetxattr(); the nearest marked group wins (a unit's
 * processes often sit in sub-groups of it), omit over avoid on one group. A
 * mark is an attribute whose value is exactly "1" (what systemd writes); any
 * other value, "0" included, is as if absent. The mount's own directory is not
 * looked at (systemd never marks the root group). *trusted tells whether the
 * marked group and every ancestor below the mount are owned by uids <= max
 * (as cgroup_path_trusted).
 * Returns 0 when the walk reached cg, or -errno when it stopped early (a group
 * gone meanwhile: -ENOENT/-ENOTDIR; no permission: -EACCES; no fds: -EMFILE;
 * -EINVAL for a path that is not absolute or holds "." or ".."); *pref and
 * *trusted then hold what the groups above the failure said. A cgroupfs
 * without user xattrs (Linux < 5.7: EOPNOTSUPP) has no marks: 0, none. */
int cgroup_oomd_pref(int rootfd, const char *mount, const char *cg, uid_t max, enum oomd_pref *pref, bool *trusted);

/* The counters systemd-oomd keeps on a unit's cgroup, which the service
 * manager reads when the group empties to say the unit was killed for
 * memory (Result=oom-kill): user.oomd_ooms, raised by one before a kill,
 * and user.oomd_kill, raised by the number of processes killed. */
#define CGROUP_OOMD_OOMS "user.oomd_ooms"
#define CGROUP_OOMD_KILL "user.oomd_kill"
/* Adds add to the decimal counter attr of the unit group of cg (relative to
 * the cgroup2 mount): the deepest directory on the path whose name ends in
 * ".service" or ".scope" (a unit's own group; a process often sits in a
 * sub-group of it), walked down as cgroup_oomd_pref does. An absent or
 * unreadable value counts as 0. Returns 1 (done), 0 (no unit group on the
 * path) or -errno (-EOPNOTSUPP: no user xattrs on this cgroupfs). */
int cgroup_unit_count(int rootfd, const char *mount, const char *cg, const char *attr, uint64_t add);
