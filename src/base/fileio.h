/* SPDX-License-Identifier: MIT */
/* fileio: small helpers to read whole files relative to a directory fd.
 * Every path to /proc, /sys and /dev is opened relative to the daemon's root fd
 * (see sysroot_*), so tests can point the daemon at a fixture tree. */
#pragma once

#include <stddef.h>
#include <sys/types.h>

/* Opens an absolute path ("/proc/1/stat") or a relative one under rootfd. */
int sysroot_openat(int rootfd, const char *path, int flags);
/* Opens the root directory ("/" in production, a fixture tree in tests). */
int sysroot_open(const char *dir);
/* A unix socket's absolute path as connect(2)/sendto(2) must name it under
 * rootfd (there is no connectat): the path itself when rootfd is the real
 * root, else "/proc/self/fd/<rootfd><path>". 0, or -ENAMETOOLONG when that
 * does not fit in size bytes. */
int sysroot_unix_path(int rootfd, const char *path, char *buf, size_t size);

/* Reads the whole file at dirfd/path into buf (NUL-terminated).
 * Returns the length, or -errno; -EFBIG if it does not fit. */
ssize_t read_file_at(int dirfd, const char *path, char *buf, size_t size);
/* read_file_at for a file the kernel prints whole at the first read: a
 * regular file, or a /proc/PID file of one record (single_open: status,
 * stat, cgroup; oom_score_adj): a read that returns less than asked is
 * taken as the whole file, which spares the read that would return 0 (0.4
 * to 1.4 us a file on Linux 6.18). Not for files of many records
 * (cgroup.procs, maps): those may return less before their end. */
ssize_t read_record_at(int dirfd, const char *path, char *buf, size_t size);
/* read_record_at for a file of "Key: value" lines whose length a process
 * may choose (/proc/PID/status: its Groups line grows by one entry per
 * supplementary group, and a user namespace lets its owner set hundreds):
 * keeps only the lines that start with one of keys (NULL-terminated), read
 * in pieces, so that the file may be of any length. Returns the length
 * kept (0 for an empty file), -ENODATA when none of them is there, -EFBIG
 * when the wanted lines do not fit in size - 2 bytes, or -errno. */
ssize_t read_lines_at(int dirfd, const char *path, char *buf, size_t size, const char *const *keys);

/* Reads a whole regular file into a new malloc'ed NUL-terminated buffer of at
 * most max bytes. Returns 0 or -errno: -EISDIR for a directory, -EINVAL for any
 * other non-regular file (FIFOs are opened non-blocking, never waited on),
 * -EFBIG if larger than max. */
int read_regular_file(const char *path, size_t max, char **out, size_t *len);

/* Writes a whole string to dirfd/path (for /proc/self/oom_score_adj and the like). */
int write_file_at(int dirfd, const char *path, const char *s);

/* Number of entries in the directory dirfd/path, "." and ".." aside (for
 * /proc/self/fd, the count includes the fd used to list it). -errno on error. */
int count_entries_at(int dirfd, const char *path);

/* Closes *fd if it is open (>= 0) and sets it to -1, so a second call or a
 * cleanup path that runs twice closes nothing. */
void close_fd(int *fd);
