/* cgroup: the cgroup2 mount, the processes of a group, and cgroup.kill.
 * Paths go through the root fd. */
#pragma once

#include <stddef.h>
#include <sys/types.h>

/* Finds the cgroup2 mount point in the text of /proc/self/mounts. */
int cgroup_find_mount(const char *mounts, char *out, size_t size);
/* Reads /proc/self/mounts under rootfd and finds the cgroup2 mount. */
int cgroup_mount(int rootfd, char *out, size_t size);
/* Reads the pids of group cg (a path relative to the cgroup2 mount). Returns
 * the count (at most max) or -errno; -E2BIG if there are more than max. */
int cgroup_read_procs(int rootfd, const char *mount, const char *cg, pid_t *pids, size_t max);
/* Writes 1 to the group's cgroup.kill (Linux 5.14+). */
int cgroup_kill(int rootfd, const char *mount, const char *cg);
/* Whether group cg (relative to the cgroup2 mount) and every ancestor below
 * the mount are owned by uids <= max, i.e. no user was delegated any of them
 * (a user can create groups, and move their own processes, only inside a
 * subtree they own). Returns 1 (trusted), 0 (some directory is owned by
 * another uid) or -errno (then trust nothing). */
int cgroup_path_trusted(int rootfd, const char *mount, const char *cg, uid_t max);
