/* SPDX-License-Identifier: MIT */
/* mounts: the one reader of /proc/self/mounts. The parser is pure; the
 * reader goes through the root fd. Paths stay as the kernel escapes them
 * (a space is \040), which every caller compares against plain paths
 * without spaces. */
#pragma once

#include <stddef.h>

/* Longer fields are cut (a line with one is still returned). */
struct mount_entry {
	char dev[256];
	char dir[1024];
	char type[64];
	char opts[1024];
};

/* One mount per call: *pos starts at the text and moves on. 1 with e
 * filled, 0 at the end; lines without four fields are skipped. */
int mounts_next(const char **pos, struct mount_entry *e);

/* Reads ROOT/proc/self/mounts into a new malloc'ed NUL-terminated buffer
 * (*text; the caller frees it). 0 or -errno. */
int mounts_read(int rootfd, char **text);
