/* SPDX-License-Identifier: MIT */
/* groupset: finding the cgroups that match the tiers' cgroup patterns, and
 * hearing when groups come and go.
 *
 * A walk reads only the directories a pattern can reach: a literal
 * component is one stat, a wildcard one is one readdir of its parent. Change
 * notification is inotify on the directories of the walk above the matches
 * (the pattern's proper prefixes): cgroupfs reports mkdir, rmdir and rename
 * of child groups there as IN_CREATE, IN_DELETE and IN_MOVED_*, so a new or
 * removed group costs one wakeup and one walk, and a quiet tree costs
 * nothing -- no polling. Every path goes through the root fd; inotify is
 * given the directory through its own /proc/self/fd link, so a fixture tree
 * works like the real one. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "config.h"

/* Called for each cgroup2 path (relative to the mount, "/a/b") that matches
 * the pattern; a negative return stops the walk and is returned. */
typedef int (*groupset_match_fn)(void *ctx, const char *path);

struct groupset {
	int rootfd;
	const char *mount; /* the cgroup2 mount under rootfd (owned by the caller) */
	int inotify_fd;    /* -1: not watching */
	int watch_err;     /* the last inotify_add_watch failure (-errno), 0 = none */
	char watch_err_dir[CONFIG_PATH_MAX]; /* ... and where */
	size_t dirs_watched;     /* directories the last walks added watches on */
	size_t dirs_read;        /* directories the last walks listed */
	/* the most open wildcard level seen: its owner may make groups there */
	uid_t listed_uid_max;
	char listed_uid_dir[CONFIG_PATH_MAX];
};

/* Sets up a set on the cgroup2 mount; with watch, opens the inotify fd
 * (non-blocking, close-on-exec). 0 or -errno (inotify_init1). */
int groupset_init(struct groupset *s, int rootfd, const char *mount, bool watch);
void groupset_deinit(struct groupset *s);

/* Walks the tree for pattern pat (normalized, cgpattern.h), calling match for
 * each group that matches, and, when the set watches, adding an inotify
 * watch on each directory above the matches. Returns the number of matches
 * or -errno (the first error that stopped the walk; a directory removed
 * during the walk is no error). A failed watch is recorded in watch_err and
 * does not stop the walk. */
int groupset_walk(struct groupset *s, const char *pat, groupset_match_fn match, void *ctx);

/* Drains the inotify fd. true if some event was read (a group may have come
 * or gone: walk again); false if there was nothing to read. */
bool groupset_drain(struct groupset *s);

/* --check-config and --probe: for each pattern of cfg, the groups that
 * match it now inside cfg's scope (up to GROUPSET_REPORT_LIST of them by
 * name), a warning when they are more than max_groups, and one when a
 * wildcard level is a directory owned by a uid above trusted_uid_max (its
 * owner can make groups there and fill max_groups). first (may be NULL)
 * gets, for the first tier of each pattern (config_cgroup_first), the
 * pattern's first match ("" = none), for the probe to arm. 0 (nothing to report, or reported), or -errno when the groups
 * cannot be listed (no cgroup2 mount: the daemon would not start). */
#define GROUPSET_REPORT_LIST 16
int groupset_report(int rootfd, const struct config *cfg, FILE *out, char (*first)[CONFIG_PATH_MAX]);
