/* SPDX-License-Identifier: MIT */
/* trustpath: opening a file or directory by a path that nobody but root and
 * psi-lmkd's own user can change, so that what is checked is what is used.
 *
 * The path is walked one component at a time from "/", each opened with
 * O_PATH | O_NOFOLLOW and checked with fstat before the next is looked up;
 * a symlink is read and followed by hand, its target walked the same way.
 * The rule, for every object met on the way -- each directory, each
 * symlink, whether on the path as written or on a link's target -- and for
 * the object itself:
 *   - it belongs to root or to psi-lmkd's euid;
 *   - a directory on the way is not writable by its group or others, unless
 *     it is sticky (like /tmp: nobody can rename or remove an entry they do
 *     not own, and the entries met are root's or ours);
 *   - the object itself is not writable by its group or others (a directory
 *     too, sticky or not), and is a regular file with an execute bit
 *     (TRUST_PROGRAM) or a directory (TRUST_DIR).
 * The caller keeps the fd and uses it (execveat, openat, renameat): a later
 * change of the path does not reach it. */
#pragma once

#include <stddef.h>

enum trust_kind {
	TRUST_PROGRAM, /* a regular file with an execute bit */
	TRUST_DIR,     /* a directory that holds files psi-lmkd writes */
};

/* Opens the absolute path as above. what names the setting in why
 * ("on_kill"). Returns an O_PATH | O_CLOEXEC fd, or -errno with why set:
 * -EPERM for an object the rule refuses, -ENOENT, -ELOOP (more than 40
 * links), -ENOTDIR, -EINVAL (not the kind wanted, or a relative path)... */
int trust_open(const char *path, enum trust_kind kind, const char *what, char *why, size_t whylen);

/* The rule for the object itself, again, on fd (one trust_open returned):
 * fstat, so that a chmod or chown since the open is seen. path is only for
 * why. 0 or -errno (-EPERM, -EINVAL) with why set. */
int trust_check_fd(int fd, enum trust_kind kind, const char *what, const char *path, char *why, size_t whylen);

/* Opens the directory of the absolute file path by trust_open's rule
 * (TRUST_DIR), *base set to the file's name in it. what names the setting
 * in why ("metrics_file"). The O_PATH fd, or -errno with why set. */
int trust_open_parent(const char *file, const char *what, const char **base, char *why, size_t whylen);
