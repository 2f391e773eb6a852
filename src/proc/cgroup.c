/* SPDX-License-Identifier: MIT */
/* cgroup: cgroup2 helpers for kill_cgroup and --probe. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include "cgroup.h"
#include "fileio.h"
#include "mounts.h"

int cgroup_find_mount(const char *mounts, char *out, size_t size)
{
	struct mount_entry e;
	const char *pos = mounts;

	while (mounts_next(&pos, &e))
		if (strcmp(e.type, "cgroup2") == 0) {
			if (strlen(e.dir) >= size)
				return -ENAMETOOLONG;
			strcpy(out, e.dir);
			return 0;
		}
	return -ENOENT;
}

int cgroup_mount(int rootfd, char *out, size_t size)
{
	char *mounts;
	int r = mounts_read(rootfd, &mounts);

	if (r == 0)
		r = cgroup_find_mount(mounts, out, size);
	free(mounts);
	return r;
}

static void group_path(char *buf, size_t size, const char *mount, const char *cg, const char *file)
{
	if (strcmp(cg, "/") == 0)
		snprintf(buf, size, "%s/%s", mount, file);
	else
		snprintf(buf, size, "%s%s/%s", mount, cg, file);
}

int cgroup_read_procs(int rootfd, const char *mount, const char *cg, pid_t *pids, size_t max)
{
	char path[4096], *buf, *s;
	size_t n = 0;
	ssize_t len;

	buf = malloc(65536);
	if (!buf)
		return -ENOMEM;
	group_path(path, sizeof(path), mount, cg, "cgroup.procs");
	len = read_file_at(rootfd, path + (path[0] == '/'), buf, 65536);
	if (len < 0) {
		free(buf);
		return (int)len;
	}
	for (s = buf; *s;) {
		char *end;
		long v = strtol(s, &end, 10);

		if (end == s)
			break;
		if (n == max) {
			free(buf);
			return -E2BIG;
		}
		pids[n++] = (pid_t)v;
		s = end;
		while (*s == '\n')
			s++;
	}
	free(buf);
	return (int)n;
}

/* ---- the subtree walk: no heap, one directory fd per level ------------- */

/* getdents64 record header: d_ino (8), d_off (8), d_reclen (2), d_type (1),
 * then the NUL-terminated name. Read with memcpy: the buffer is a char array. */
#define DIRENT64_RECLEN_OFF 16
#define DIRENT64_TYPE_OFF 18
#define DIRENT64_NAME_OFF 19
#define WALK_DIRBUF 2048 /* per level, on the stack */
#define WALK_READBUF 512 /* cgroup.procs is read in chunks this large */

struct walk {
	pid_t *pids;
	size_t max;
	size_t n;
	unsigned max_depth;
	bool owners;     /* every group must be owned by a uid up to owner_max */
	uid_t owner_max;
};

/* Appends the pids of the cgroup.procs under dirfd, read in chunks (a pid may
 * straddle two). Returns 0, -ENOENT/-ENODEV when the group is gone, -E2BIG,
 * -EINVAL for text that is not a list of pids, or another -errno. */
static int walk_read_procs(int dirfd, struct walk *w)
{
	char buf[WALK_READBUF];
	long long v = 0;
	bool in_num = false;
	ssize_t len = 1, i;
	int fd, r = 0;

	fd = openat(dirfd, "cgroup.procs", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	while (r == 0 && len > 0) {
		len = read(fd, buf, sizeof(buf));
		if (len < 0) {
			if (errno != EINTR)
				r = -errno;
			len = 1;
			continue;
		}
		/* at the end of the file (len 0) a pending pid ends too */
		for (i = 0; r == 0 && i < (len ? len : 1); i++) {
			char c = len ? buf[i] : '\n';

			if (c >= '0' && c <= '9') {
				v = v * 10 + (c - '0');
				in_num = true;
				if (v > INT_MAX)
					r = -EINVAL;
			} else if (c != '\n' && c != ' ' && c != '\t') {
				r = -EINVAL;
			} else if (in_num && w->n == w->max) {
				r = -E2BIG;
			} else if (in_num) {
				w->pids[w->n++] = (pid_t)v;
				v = 0;
				in_num = false;
			}
		}
	}
	close(fd);
	return r;
}

/* The group open at dirfd (depth levels below the walk's start), then each
 * child group. Closes dirfd on every path. */
static int walk_group(int dirfd, unsigned depth, struct walk *w);

/* One entry of a group's listing: a child group is walked (one past the
 * deepest level allowed is -ELOOP); anything else is skipped. */
static int walk_entry(int dirfd, unsigned depth, struct walk *w, const char *name, unsigned char type)
{
	int child;

	if ((type != DT_DIR && type != DT_UNKNOWN) || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return 0;
	if (depth >= w->max_depth) {
		/* a child group below the deepest level allowed */
		struct stat sb;

		if (type == DT_UNKNOWN && (fstatat(dirfd, name, &sb, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(sb.st_mode)))
			return 0;
		return -ELOOP;
	}
	child = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (child < 0) {
		/* removed since the listing (ENOENT), or not a directory after
		 * all (DT_UNKNOWN: ENOTDIR, or a symlink: ELOOP) */
		return errno == ENOENT || errno == ENOTDIR || errno == ELOOP ? 0 : -errno;
	}
	return walk_group(child, depth + 1, w);
}

/* Whether only uids up to max can move processes into the group at dirfd:
 * the kernel asks for write access to its cgroup.procs (and to a common
 * ancestor's), so the directory and that file must be theirs, the file
 * writable by no one else (a delegation may hand over cgroup.procs alone,
 * or by its mode). A group without the file (a fixture) counts by its
 * directory. */
static bool owned(int dirfd, uid_t max)
{
	struct stat sb;

	if (fstat(dirfd, &sb) < 0 || sb.st_uid > max)
		return false;
	if (fstatat(dirfd, "cgroup.procs", &sb, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT;
	return sb.st_uid <= max && !(sb.st_mode & S_IWOTH) && (!(sb.st_mode & S_IWGRP) || sb.st_gid <= max);
}

static int walk_group(int dirfd, unsigned depth, struct walk *w)
{
	char buf[WALK_DIRBUF];
	int r;

	if (w->owners && !owned(dirfd, w->owner_max)) {
		close(dirfd);
		return -EPERM;
	}
	r = walk_read_procs(dirfd, w);
	while (r >= 0) {
		ssize_t len = getdents64(dirfd, (void *)buf, sizeof(buf)), off;

		if (len < 0 && errno == EINTR)
			continue;
		if (len < 0) {
			/* the group was removed while being listed */
			r = errno == ENOENT || errno == ENODEV ? -ENOENT : -errno;
			break;
		}
		if (len == 0)
			break;
		for (off = 0; r >= 0 && off + DIRENT64_NAME_OFF < len;) {
			unsigned short reclen;
			unsigned char type;

			memcpy(&reclen, buf + off + DIRENT64_RECLEN_OFF, sizeof(reclen));
			memcpy(&type, buf + off + DIRENT64_TYPE_OFF, sizeof(type));
			if (reclen == 0 || off + reclen > len) {
				r = -EIO;
				break;
			}
			r = walk_entry(dirfd, depth, w, buf + off + DIRENT64_NAME_OFF, type);
			/* a child group that vanished mid-walk is no error */
			if (r == -ENOENT || r == -ENODEV)
				r = 0;
			off += reclen;
		}
	}
	close(dirfd);
	return r;
}

/* Opens the directory of group cg under the cgroup2 mount. */
static int open_group(int rootfd, const char *mount, const char *cg)
{
	char path[4096];
	int n;

	if (!cg || cg[0] != '/')
		return -EINVAL;
	n = strcmp(cg, "/") == 0 ? snprintf(path, sizeof(path), "%s", mount)
				 : snprintf(path, sizeof(path), "%s%s", mount, cg);
	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENAMETOOLONG;
	return sysroot_openat(rootfd, path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
}

int cgroup_exists(int rootfd, const char *mount, const char *cg)
{
	int fd = open_group(rootfd, mount, cg);

	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

static int read_subtree(int rootfd, const char *mount, const char *cg, struct walk *w);

int cgroup_read_subtree_procs(int rootfd, const char *mount, const char *cg, pid_t *pids, size_t max,
			      unsigned max_depth)
{
	struct walk w = { .pids = pids, .max = max, .max_depth = max_depth };

	return read_subtree(rootfd, mount, cg, &w);
}

int cgroup_read_owned_procs(int rootfd, const char *mount, const char *cg, pid_t *pids, size_t max,
			    unsigned max_depth, uid_t owner_max)
{
	struct walk w = { .pids = pids, .max = max, .max_depth = max_depth, .owners = true, .owner_max = owner_max };

	return read_subtree(rootfd, mount, cg, &w);
}

static int read_subtree(int rootfd, const char *mount, const char *cg, struct walk *w)
{
	int fd, r;

	if (w->max > INT_MAX)
		return -EINVAL;
	fd = open_group(rootfd, mount, cg);
	if (fd < 0)
		return fd;
	r = walk_group(fd, 0, w);
	if (r == -ENODEV) /* cg itself was removed while being read */
		r = -ENOENT;
	return r < 0 ? r : (int)w->n;
}

int cgroup_has_children(int rootfd, const char *mount, const char *cg)
{
	char buf[WALK_DIRBUF];
	int fd, r = 0;

	fd = open_group(rootfd, mount, cg);
	if (fd < 0)
		return fd;
	while (r == 0) {
		ssize_t len = getdents64(fd, (void *)buf, sizeof(buf)), off;

		if (len < 0 && errno == EINTR)
			continue;
		if (len < 0) {
			r = -errno;
			break;
		}
		if (len == 0)
			break;
		for (off = 0; r == 0 && off + DIRENT64_NAME_OFF < len;) {
			unsigned short reclen;
			unsigned char type;
			const char *name = buf + off + DIRENT64_NAME_OFF;
			struct stat sb;

			memcpy(&reclen, buf + off + DIRENT64_RECLEN_OFF, sizeof(reclen));
			memcpy(&type, buf + off + DIRENT64_TYPE_OFF, sizeof(type));
			if (reclen == 0 || off + reclen > len) {
				r = -EIO;
				break;
			}
			off += reclen;
			if ((type != DT_DIR && type != DT_UNKNOWN) || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
				continue;
			if (type == DT_UNKNOWN &&
			    (fstatat(fd, name, &sb, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(sb.st_mode)))
				continue;
			r = 1;
		}
	}
	close(fd);
	return r;
}

int cgroup_kill(int rootfd, const char *mount, const char *cg)
{
	char path[4096];

	group_path(path, sizeof(path), mount, cg, "cgroup.kill");
	return write_file_at(rootfd, path + (path[0] == '/'), "1");
}

/* One step of a walk down a cgroup path: opens the next component of *s
 * below *dir (no symlinks: cgroupfs has none, a fixture tree must not fake
 * one; never "." or ".."), closes *dir and leaves the new fd there. Returns
 * 1 after a step, 0 at the end of the path, or -errno (*dir stays open). */
static int walk_down(int *dir, const char **s, int flags)
{
	char name[NAME_MAX + 1];
	size_t len;
	int next;

	while (**s == '/')
		(*s)++;
	len = strcspn(*s, "/");
	if (len == 0)
		return 0;
	if (len > NAME_MAX || (len == 1 && (*s)[0] == '.') || (len == 2 && (*s)[0] == '.' && (*s)[1] == '.'))
		return -EINVAL;
	memcpy(name, *s, len);
	name[len] = '\0';
	*s += len;
	next = openat(*dir, name, flags | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (next < 0)
		return -errno;
	close(*dir);
	*dir = next;
	return 1;
}

/* Walks down from the mount one directory at a time (O_PATH), so that what
 * is checked is what the path names at that moment. */
int cgroup_path_untrusted(int rootfd, const char *mount, const char *cg, uid_t max, struct stat *first)
{
	const char *s = cg;
	struct stat st;
	int dir, r = 0;

	if (!*mount || cg[0] != '/')
		return -EINVAL;
	dir = sysroot_openat(rootfd, mount, O_PATH | O_DIRECTORY);
	if (dir < 0)
		return dir;
	while (r == 0) {
		int step = walk_down(&dir, &s, O_PATH);

		if (step <= 0) {
			r = step;
			break;
		}
		if (fstat(dir, &st) < 0)
			r = -errno;
		else if (st.st_uid > max)
			r = 1;
	}
	close(dir);
	if (r == 1 && first)
		*first = st;
	return r;
}

int cgroup_path_trusted(int rootfd, const char *mount, const char *cg, uid_t max)
{
	int r = cgroup_path_untrusted(rootfd, mount, cg, max, NULL);

	return r < 0 ? r : !r;
}

/* 1 if the directory open at fd carries attribute name with the value "1",
 * 0 if not (absent, or another value), or -errno. */
static int oomd_mark_set(int fd, const char *name)
{
	char v[2];
	ssize_t n = fgetxattr(fd, name, v, sizeof(v));

	if (n < 0)
		return errno == ENODATA || errno == ERANGE ? 0 : -errno;
	return n == 1 && v[0] == '1';
}

/* A unit's group: "NAME.service" or "NAME.scope" (slices hold units, they
 * are not the unit of a process) */
static bool unit_dir_name(const char *name, size_t len)
{
	return (len > 8 && memcmp(name + len - 8, ".service", 8) == 0) ||
	       (len > 6 && memcmp(name + len - 6, ".scope", 6) == 0);
}

static int add_to_counter(int fd, const char *attr, uint64_t add)
{
	char v[24];
	ssize_t n = fgetxattr(fd, attr, v, sizeof(v) - 1);
	uint64_t cur = 0;
	int len;

	if (n < 0 && errno != ENODATA && errno != ERANGE)
		return -errno;
	if (n > 0) {
		char *end;

		v[n] = '\0';
		errno = 0;
		cur = strtoull(v, &end, 10);
		if (end == v || *end || errno)
			cur = 0;
	}
	len = snprintf(v, sizeof(v), "%" PRIu64, cur + add);
	return fsetxattr(fd, attr, v, (size_t)len, 0) < 0 ? -errno : 1;
}

int cgroup_unit_count(int rootfd, const char *mount, const char *cg, const char *attr, uint64_t add)
{
	const char *s = cg, *name;
	int dir, unit = -1, r;

	if (!*mount || cg[0] != '/')
		return -EINVAL;
	dir = sysroot_openat(rootfd, mount, O_RDONLY | O_DIRECTORY);
	if (dir < 0)
		return dir;
	for (;;) {
		while (*s == '/')
			s++;
		name = s;
		r = walk_down(&dir, &s, O_RDONLY);
		if (r <= 0)
			break;
		if (unit_dir_name(name, (size_t)(s - name))) {
			if (unit >= 0)
				close(unit);
			unit = dup(dir);
			if (unit < 0) {
				r = -errno;
				break;
			}
		}
	}
	close(dir);
	if (r < 0 || unit < 0) {
		if (unit >= 0)
			close(unit);
		return r < 0 ? r : 0;
	}
	r = add_to_counter(unit, attr, add);
	close(unit);
	return r;
}

/* Walks down like cgroup_path_trusted, but with O_RDONLY directory fds:
 * fgetxattr() needs a real open file (O_PATH gives EBADF), and this needs no
 * /proc/self/fd path (which would not go through the injectable root). */
int cgroup_oomd_pref(int rootfd, const char *mount, const char *cg, uid_t max, enum oomd_pref *pref, bool *trusted)
{
	const char *s = cg;
	bool all_trusted = true;
	struct stat st;
	int dir, r = 0;

	*pref = OOMD_PREF_NONE;
	*trusted = false;
	if (!*mount || cg[0] != '/')
		return -EINVAL;
	dir = sysroot_openat(rootfd, mount, O_RDONLY | O_DIRECTORY);
	if (dir < 0)
		return dir;
	while (r == 0) {
		int step = walk_down(&dir, &s, O_RDONLY), omit, avoid;

		if (step <= 0) {
			r = step;
			break;
		}
		if (fstat(dir, &st) < 0) {
			r = -errno;
			break;
		}
		if (st.st_uid > max)
			all_trusted = false;
		omit = oomd_mark_set(dir, "user.oomd_omit");
		avoid = omit == 1 ? 0 : oomd_mark_set(dir, "user.oomd_avoid");
		if (omit == -EOPNOTSUPP || avoid == -EOPNOTSUPP)
			break; /* no user xattrs on this cgroupfs: no marks anywhere */
		if (omit < 0 || avoid < 0) {
			r = omit < 0 ? omit : avoid;
			break;
		}
		if (omit || avoid) {
			*pref = omit ? OOMD_PREF_OMIT : OOMD_PREF_AVOID;
			*trusted = all_trusted;
		}
	}
	close(dir);
	return r;
}
