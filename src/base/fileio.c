/* SPDX-License-Identifier: MIT */
/* fileio: whole-file reads and writes relative to directory fds, and the
 * injectable root through which every /proc, /sys and /dev path is opened. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "fileio.h"
#include "lines.h"

int sysroot_open(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

int sysroot_openat(int rootfd, const char *path, int flags)
{
	int fd;

	while (*path == '/')
		path++;
	fd = openat(rootfd, *path ? path : ".", flags | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* rootfd is the directory "/" names: the same inode on the same device */
static bool is_real_root(int rootfd)
{
	struct stat a, b;

	return fstat(rootfd, &a) == 0 && stat("/", &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

int sysroot_unix_path(int rootfd, const char *path, char *buf, size_t size)
{
	int n;

	if (rootfd < 0 || is_real_root(rootfd))
		n = snprintf(buf, size, "%s", path);
	else
		n = snprintf(buf, size, "/proc/self/fd/%d%s", rootfd, path);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/* read(2) again after a signal: the count, or -errno */
static ssize_t read_some(int fd, void *buf, size_t n)
{
	ssize_t r;

	do
		r = read(fd, buf, n);
	while (r < 0 && errno == EINTR);
	return r < 0 ? -errno : r;
}

/* short_is_end: a read that returns less than asked was the last. */
static ssize_t read_all(int fd, char *buf, size_t size, bool short_is_end)
{
	size_t off = 0;

	for (;;) {
		ssize_t n;

		if (off + 1 >= size) {
			char extra;

			n = read_some(fd, &extra, 1);
			if (n < 0)
				return n;
			if (n > 0)
				return -EFBIG;
			break;
		}
		n = read_some(fd, buf + off, size - 1 - off);
		if (n < 0)
			return n;
		if (n == 0)
			break;
		off += (size_t)n;
		if (short_is_end && off + 1 < size)
			break;
	}
	buf[off] = '\0';
	return (ssize_t)off;
}

/* read_lines_at's loop on fd: buf holds the kept lines, then the line
 * being read (its tail bytes so far). A line that fills what is left is
 * skipped to its end, unless it may be one of keys: then -EFBIG, as a
 * wanted line is never cut or dropped. */
static ssize_t read_lines(int fd, char *buf, size_t size, const char *const *keys)
{
	size_t kept = 0, tail = 0, total = 0;
	bool skip = false;

	for (;;) {
		size_t room;
		char *p;
		ssize_t n;

		if (kept + tail + 1 >= size) {
			if (!skip && lines_keyed(buf + kept, tail, keys))
				return -EFBIG;
			skip = true;
			tail = 0;
		}
		room = size - 1 - kept - tail;
		p = buf + kept + tail;
		n = read_some(fd, p, room);
		if (n < 0)
			return n;
		if (n == 0)
			break;
		total += (size_t)n;
		if (skip) {
			const char *nl = memchr(p, '\n', (size_t)n);

			if (nl) {
				size_t rest = (size_t)n - (size_t)(nl + 1 - p);

				memmove(p, nl + 1, rest);
				skip = false;
				tail += rest;
			}
		} else {
			tail += (size_t)n;
		}
		if (!skip)
			kept += lines_filter(buf + kept, tail, keys, &tail);
		if ((size_t)n < room)
			break; /* one record: the kernel printed it whole (read_record_at) */
	}
	if (!skip && tail && lines_keyed(buf + kept, tail, keys))
		kept += tail; /* the last line, without its '\n' */
	buf[kept] = '\0';
	return kept ? (ssize_t)kept : total ? -ENODATA : 0;
}

/* keys: read_lines, else read_all */
static ssize_t read_at(int dirfd, const char *path, char *buf, size_t size, bool short_is_end,
		       const char *const *keys)
{
	ssize_t r;
	int fd;

	if (size < (keys ? 2 : 1))
		return -EINVAL;
	fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	r = keys ? read_lines(fd, buf, size, keys) : read_all(fd, buf, size, short_is_end);
	close(fd);
	return r;
}

ssize_t read_lines_at(int dirfd, const char *path, char *buf, size_t size, const char *const *keys)
{
	return read_at(dirfd, path, buf, size, true, keys);
}

ssize_t read_file_at(int dirfd, const char *path, char *buf, size_t size)
{
	return read_at(dirfd, path, buf, size, false, NULL);
}

ssize_t read_record_at(int dirfd, const char *path, char *buf, size_t size)
{
	return read_at(dirfd, path, buf, size, true, NULL);
}

int read_regular_file(const char *path, size_t max, char **out, size_t *len)
{
	struct stat st;
	char *buf;
	ssize_t r;
	int fd;

	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		r = -errno;
		close(fd);
		return (int)r;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
	}
	if ((size_t)st.st_size > max) {
		close(fd);
		return -EFBIG;
	}
	buf = malloc(max + 1);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	r = read_all(fd, buf, max + 1, false);
	close(fd);
	if (r < 0) {
		free(buf);
		return (int)r;
	}
	*out = buf;
	*len = (size_t)r;
	return 0;
}

int write_file_at(int dirfd, const char *path, const char *s)
{
	size_t len = strlen(s);
	ssize_t n;
	int fd, r = 0;

	fd = openat(dirfd, path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, s, len);
	if (n < 0)
		r = -errno;
	else if ((size_t)n != len)
		r = -EIO;
	close(fd);
	return r;
}

int count_entries_at(int dirfd, const char *path)
{
	int fd = openat(dirfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC), n = 0, r;
	struct dirent *de;
	DIR *dir;

	if (fd < 0)
		return -errno;
	dir = fdopendir(fd);
	if (!dir) {
		r = -errno;
		close(fd);
		return r;
	}
	while ((errno = 0, de = readdir(dir)))
		n += strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0;
	r = errno ? -errno : n;
	closedir(dir);
	return r;
}

void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}
