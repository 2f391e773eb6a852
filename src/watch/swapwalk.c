/* SPDX-License-Identifier: MIT */
/* swapwalk: ManagedOOMSwap's choice of a group (swapwalk.h). Directory fds
 * all the way down (no path length bounds the walk; a path is kept only
 * for the group chosen), and pruning: memory.swap.current counts a group's
 * descendants, so a child whose counter does not beat the best leaf so far
 * holds no leaf that could, and is not entered. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "cgroup.h"
#include "fileio.h"
#include "memory.h"
#include "swapwalk.h"

void swapwalk_init(struct swapwalk *w, uid_t trusted_uid_max)
{
	memset(w, 0, sizeof(*w));
	w->trusted_uid_max = trusted_uid_max;
}

/* memory.swap.current of the group open at dfd, counted as a read, and as
 * one of the reads of the user's subtree the walk is in */
static int read_swap(int dfd, struct swapwalk *w, uint64_t *v)
{
	if (w->reads >= SWAPWALK_READS_MAX) {
		w->exhausted = true;
		return -E2BIG;
	}
	if (w->owner && w->owner->reads >= SWAPWALK_OWNER_READS_MAX) {
		w->owner_over = true;
		return -E2BIG;
	}
	w->reads++;
	if (w->owner)
		w->owner->reads++;
	return memory_read_value(dfd, ".", "memory.swap.current", false, v);
}

static bool oom_group(int dfd)
{
	uint64_t v;

	return memory_read_value(dfd, ".", "memory.oom.group", false, &v) == 0 && v == 1;
}

static void consider(struct swapwalk *w, const char *path, uint64_t v)
{
	if (v > w->best_swap) {
		w->best_swap = v;
		snprintf(w->best, sizeof(w->best), "%s", path);
	}
}

static bool is_dir(int dfd, const struct dirent *e)
{
	struct stat st;

	if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
		return false;
	if (e->d_type != DT_UNKNOWN)
		return e->d_type == DT_DIR;
	return fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
}

/* Whether child name of the group at dfd was removed, its read having
 * failed with r: a missing counter file is also ENOENT, so the directory
 * itself must be gone. */
static bool gone(int dfd, const char *name, int r)
{
	struct stat st;

	return (r == -ENOENT || r == -ENODEV) && fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT;
}

/* The walk goes into the user's subtree whose topmost group is st: its
 * reads so far in this walk are counted on. */
static void enter_owner(struct swapwalk *w, const struct stat *st)
{
	size_t i;

	for (i = 0; i < w->n_owners; i++)
		if (w->owners[i].dev == st->st_dev && w->owners[i].ino == st->st_ino)
			break;
	if (i == SWAPWALK_OWNERS) {
		w->spare = (struct swapwalk_owner){ 0 };
		w->owner = &w->spare;
		return;
	}
	if (i == w->n_owners)
		w->owners[w->n_owners++] = (struct swapwalk_owner){ .dev = st->st_dev, .ino = st->st_ino };
	w->owner = &w->owners[i];
}

/* The walk leaves the user's subtree: true if its reads ran out, so that
 * the group where it entered counts whole. */
static bool leave_owner(struct swapwalk *w)
{
	bool over = w->owner_over && !w->exhausted;

	if (over)
		w->owner_whole++;
	w->owner_over = false;
	w->owner = NULL;
	return over;
}

/* The walk stops early: all its reads, or the subtree's, ran out */
static bool stopped(const struct swapwalk *w)
{
	return w->exhausted || w->owner_over;
}

/* The group open at dfd (taken), named path (len bytes of a
 * CONFIG_PATH_MAX buffer), its counter v: a leaf is a candidate, so is a
 * group whose children cannot all be looked into; the rest is walked. */
static void walk(int dfd, char *path, size_t len, uint64_t v, int depth, bool root, struct swapwalk *w)
{
	struct stat st = { 0 };
	size_t children = 0;
	bool whole = false, capped, top;
	struct dirent *e;
	DIR *dp;

	/* only a group's owner makes children there: a user's flood is capped,
	 * and counts whole, an administrator's groups are read to the last */
	capped = fstat(dfd, &st) < 0 || st.st_uid > w->trusted_uid_max;
	top = capped && !w->owner;
	if (top)
		enter_owner(w, &st);
	dp = fdopendir(dfd);
	if (!dp) {
		close(dfd);
		if (!root)
			consider(w, path, v); /* cannot look inside: whole */
		if (top)
			leave_owner(w);
		return;
	}
	while (!stopped(w) && (e = readdir(dp)) != NULL) {
		size_t n = strlen(e->d_name);
		uint64_t cv = 0;
		int cfd, r;

		if (!is_dir(dirfd(dp), e))
			continue;
		if ((++children > SWAPWALK_CHILDREN_MAX && capped) || depth + 1 >= SWAPWALK_DEPTH ||
		    len + 1 + n >= CONFIG_PATH_MAX) {
			whole = true; /* too many, too deep or too long a name to keep */
			break;
		}
		cfd = openat(dirfd(dp), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		r = cfd < 0 ? -errno : read_swap(cfd, w, &cv);
		if (r < 0) {
			/* removed meanwhile: nothing to count; else no counter of
			 * its own (the memory controller not enabled below) or
			 * unreadable: its swap is this group's, which counts whole */
			whole |= !stopped(w) && !gone(dirfd(dp), e->d_name, r);
			if (cfd >= 0)
				close(cfd);
			continue;
		}
		if (cv <= w->best_swap) {
			close(cfd);
			continue; /* nothing below it can beat the best */
		}
		snprintf(path + len, CONFIG_PATH_MAX - len, "%s%s", root ? "" : "/", e->d_name);
		if (oom_group(cfd)) {
			consider(w, path, cv);
			close(cfd);
		} else {
			walk(cfd, path, len + (root ? 0 : 1) + n, cv, depth + 1, false, w);
		}
		path[len] = '\0';
	}
	closedir(dp);
	if (top && leave_owner(w))
		whole = true; /* too many of the user's groups to read: theirs whole */
	if (!root && !stopped(w) && (children == 0 || whole))
		consider(w, path, v);
}

int swapwalk_unit(int rootfd, const char *mount, const char *unit, struct swapwalk *w)
{
	char dir[2 * CONFIG_PATH_MAX], path[CONFIG_PATH_MAX];
	bool root = strcmp(unit, "/") == 0;
	struct stat top;
	uint64_t v = 0;
	int fd, r;

	if (snprintf(dir, sizeof(dir), "%s%s", mount, root ? "" : unit) >= (int)sizeof(dir) ||
	    snprintf(path, sizeof(path), "%s", root ? "/" : unit) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	fd = sysroot_openat(rootfd, dir, O_RDONLY | O_DIRECTORY);
	if (fd < 0)
		return fd;
	/* a unit in a user's subtree (a user manager's, or one delegated
	 * whole) shares that subtree's reads with its other units: once they
	 * ran out, it counts whole */
	r = root ? 0 : cgroup_path_untrusted(rootfd, mount, unit, w->trusted_uid_max, &top);
	if (r < 0) {
		close(fd);
		return r;
	}
	if (!root && read_swap(fd, w, &v) < 0)
		v = 0;
	if (r)
		enter_owner(w, &top);
	walk(fd, path, root ? 1 : strlen(path), v, 0, root, w);
	if (w->owner && leave_owner(w))
		consider(w, path, v);
	return 0;
}
