/* SPDX-License-Identifier: MIT */
/* trustpath: the walk of a path under the ownership rule; see trustpath.h. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "trustpath.h"

#define TRUST_LINKS_MAX 40 /* as the kernel's own limit */

/* One walk: what is left to look up, where it is looked up, and for the
 * messages the path as resolved so far. */
struct walk {
	const char *what, *path; /* the setting and the path as written */
	char rest[PATH_MAX];     /* still to look up, relative to dirfd */
	size_t pos;              /* in rest */
	char seen[PATH_MAX];     /* the resolved path of dirfd, "" for "/" */
	int dirfd;
	unsigned links;
	uid_t euid;
	char *why;
	size_t whylen;
};

static bool trusted_uid(uid_t uid, uid_t euid)
{
	return uid == 0 || uid == euid;
}

static bool writable_by_others(const struct stat *st)
{
	return (st->st_mode & (S_IWGRP | S_IWOTH)) != 0;
}

int trust_check_fd(int fd, enum trust_kind kind, const char *what, const char *path, char *why, size_t whylen)
{
	const char *noun = kind == TRUST_DIR ? "the directory " : "";
	uid_t euid = geteuid();
	struct stat st;

	if (fstat(fd, &st) < 0) {
		int r = -errno;

		snprintf(why, whylen, "%s: cannot check %s: %s", what, path, strerror(-r));
		return r;
	}
	if (kind == TRUST_PROGRAM ? !S_ISREG(st.st_mode) || !(st.st_mode & (S_IXUSR | S_IXGRP | S_IXOTH))
				  : !S_ISDIR(st.st_mode)) {
		snprintf(why, whylen, "%s: %s is not %s", what, path,
			 kind == TRUST_PROGRAM ? "an executable file" : "a directory");
		return -EINVAL;
	}
	if (!trusted_uid(st.st_uid, euid)) {
		snprintf(why, whylen, "%s: %s%s is owned by uid %u; it must belong to root or to psi-lmkd's uid %u",
			 what, noun, path, (unsigned)st.st_uid, (unsigned)euid);
		return -EPERM;
	}
	if (writable_by_others(&st)) {
		snprintf(why, whylen, "%s: %s%s is writable by its group or others (mode %04o)", what, noun, path,
			 (unsigned)(st.st_mode & 07777));
		return -EPERM;
	}
	return 0;
}

/* A directory or a symlink met on the way, at w->seen. */
static int check_on_the_way(struct walk *w, const struct stat *st)
{
	const char *kind = S_ISLNK(st->st_mode) ? "symlink" : "directory";
	const char *shown = w->seen[0] ? w->seen : "/";

	if (!trusted_uid(st->st_uid, w->euid)) {
		snprintf(w->why, w->whylen, "%s: the %s %s above %s is owned by uid %u; it must belong to root or to "
			 "psi-lmkd's uid %u", w->what, kind, shown, w->path, (unsigned)st->st_uid, (unsigned)w->euid);
		return -EPERM;
	}
	if (S_ISDIR(st->st_mode) && writable_by_others(st) && !(st->st_mode & S_ISVTX)) {
		snprintf(w->why, w->whylen, "%s: the directory %s above %s is writable by its group or others (mode "
			 "%04o) and not sticky: they could replace what it holds", w->what, shown, w->path,
			 (unsigned)(st->st_mode & 07777));
		return -EPERM;
	}
	return 0;
}

/* w->seen, one name further down ("." stays, ".." goes up) */
static int seen_push(struct walk *w, const char *name)
{
	size_t n = strlen(w->seen);

	if (strcmp(name, "..") == 0) {
		char *slash = strrchr(w->seen, '/');

		if (slash)
			*slash = '\0';
		return 0;
	}
	if (n + 1 + strlen(name) >= sizeof(w->seen))
		return -ENAMETOOLONG;
	snprintf(w->seen + n, sizeof(w->seen) - n, "/%s", name);
	return 0;
}

/* The next name of w->rest into name; *last: nothing follows it. 1 when
 * no name is left, 0, or -ENAMETOOLONG. */
static int take_name(struct walk *w, char *name, size_t size, bool *last)
{
	size_t n;

	while (w->rest[w->pos] == '/')
		w->pos++;
	if (!w->rest[w->pos])
		return 1;
	n = strcspn(w->rest + w->pos, "/");
	if (n >= size)
		return -ENAMETOOLONG;
	memcpy(name, w->rest + w->pos, n);
	name[n] = '\0';
	w->pos += n;
	*last = w->rest[w->pos + strspn(w->rest + w->pos, "/")] == '\0';
	return 0;
}

/* Replaces the symlink at fd, just looked up, by its target followed by
 * what was left: an absolute target starts again from "/". */
/* The root directory as an O_PATH fd. Through the process's own root link
 * first: an emulator's sysroot (qemu-user -L) takes a plain "/" for its own
 * tree, /proc/self/root it leaves alone; "/" when /proc is not there. */
static int open_root(void)
{
	int fd = open("/proc/self/root", O_PATH | O_DIRECTORY | O_CLOEXEC);

	return fd >= 0 ? fd : open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
}

static int follow(struct walk *w, int fd)
{
	char target[PATH_MAX], joined[PATH_MAX];
	ssize_t n;

	if (++w->links > TRUST_LINKS_MAX)
		return -ELOOP;
	n = readlinkat(fd, "", target, sizeof(target) - 1);
	if (n < 0)
		return -errno;
	target[n] = '\0';
	if ((size_t)snprintf(joined, sizeof(joined), "%s/%s", target, w->rest + w->pos) >= sizeof(joined))
		return -ENAMETOOLONG;
	memcpy(w->rest, joined, sizeof(joined));
	w->pos = 0;
	(void)seen_push(w, ".."); /* the link's own name */
	if (target[0] == '/') {
		int root = open_root();

		if (root < 0)
			return -errno;
		close(w->dirfd);
		w->dirfd = root;
		w->seen[0] = '\0';
	}
	return 0;
}

/* One name of the path: 0 to go on, 1 when w->dirfd is the object (its rule
 * not checked yet), or -errno (why set when it is the rule's). */
static int step(struct walk *w)
{
	char name[NAME_MAX + 1];
	struct stat st;
	bool last = false;
	int fd, r;

	r = take_name(w, name, sizeof(name), &last);
	if (r != 0)
		return r;
	if (strcmp(name, ".") == 0)
		return last;
	fd = openat(w->dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	r = fstat(fd, &st) < 0 ? -errno : seen_push(w, name);
	if (r == 0 && (S_ISLNK(st.st_mode) || !last))
		r = check_on_the_way(w, &st);
	if (r == 0 && S_ISLNK(st.st_mode)) {
		r = follow(w, fd);
		close(fd);
		return r;
	}
	if (r == 0 && !last && !S_ISDIR(st.st_mode))
		r = -ENOTDIR;
	if (r < 0) {
		close(fd);
		return r;
	}
	close(w->dirfd);
	w->dirfd = fd;
	return last;
}

int trust_open(const char *path, enum trust_kind kind, const char *what, char *why, size_t whylen)
{
	struct walk w = { .what = what, .path = path, .euid = geteuid(), .why = why, .whylen = whylen };
	struct stat st;
	int r;

	why[0] = '\0';
	if (path[0] != '/' || strlen(path) >= sizeof(w.rest)) {
		snprintf(why, whylen, "%s: %s is not an absolute path shorter than %zu bytes", what, path, sizeof(w.rest));
		return -EINVAL;
	}
	strcpy(w.rest, path);
	w.dirfd = open_root();
	if (w.dirfd < 0)
		r = -errno;
	else
		r = fstat(w.dirfd, &st) < 0 ? -errno : check_on_the_way(&w, &st);
	while (r == 0)
		r = step(&w);
	if (r > 0)
		r = trust_check_fd(w.dirfd, kind, what, w.seen[0] ? w.seen : "/", why, whylen);
	if (r == 0)
		return w.dirfd;
	if (w.dirfd >= 0)
		close(w.dirfd);
	if (!why[0])
		snprintf(why, whylen, "%s: %s is not %s (%s)", what, path,
			 kind == TRUST_PROGRAM ? "an executable file" : "a directory", strerror(-r));
	return r;
}

int trust_open_parent(const char *file, const char *what, const char **base, char *why, size_t whylen)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(file, '/');

	if (file[0] != '/' || !slash[1] || (size_t)(slash - file) >= sizeof(dir)) {
		snprintf(why, whylen, "%s: %s is not an absolute path of a file", what, file);
		return -EINVAL;
	}
	if (slash == file) {
		strcpy(dir, "/"); /* a file in the root */
	} else {
		memcpy(dir, file, (size_t)(slash - file));
		dir[slash - file] = '\0';
	}
	*base = slash + 1;
	return trust_open(dir, TRUST_DIR, what, why, whylen);
}
