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
/* The pids of group cg and of every group below it, at most max of them
 * (-E2BIG beyond) and at most max_depth levels (-ELOOP beyond). */
int cgroup_read_subtree_procs(int rootfd, const char *mount, const char *cg, pid_t *pids, size_t max,
			      unsigned max_depth);
/* Writes 1 to the group's cgroup.kill (Linux 5.14+). */
int cgroup_kill(int rootfd, const char *mount, const char *cg);
