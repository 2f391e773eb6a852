/* SPDX-License-Identifier: MIT */
/* moomlink: the varlink client socket to PID 1, and the listening socket
 * for the user managers (moomlink.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "moom.h"
#include "moomlink.h"

void moom_link_init(struct moom_link *l, const char *path, bool need_pid1)
{
	memset(l, 0, sizeof(*l));
	l->fd = -1;
	snprintf(l->path, sizeof(l->path), "%s", path);
	l->need_pid1 = need_pid1;
}

void moom_link_close(struct moom_link *l)
{
	if (l->fd >= 0)
		close(l->fd);
	l->fd = -1;
	free(l->buf);
	l->buf = NULL;
	l->len = l->cap = 0;
	l->msgs = 0;
}

int moom_link_connect(struct moom_link *l)
{
	static const char req[] = "{\"method\":\"" MOOM_METHOD "\",\"more\":true}";
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct ucred cred;
	socklen_t clen = sizeof(cred);
	ssize_t w;
	int fd, r;

	moom_link_close(l);
	if (strlen(l->path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, l->path, strlen(l->path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	/* the settings decide kills: only root (or, in tests, ourselves) may
	 * send them, and in production only PID 1 */
	if ((cred.uid != 0 && cred.uid != geteuid()) || (l->need_pid1 && cred.pid != 1)) {
		close(fd);
		return -EPERM;
	}
	/* a fresh socket's buffer takes the request whole */
	w = send(fd, req, sizeof(req), MSG_NOSIGNAL); /* with its NUL */
	if (w != (ssize_t)sizeof(req)) {
		r = w < 0 ? -errno : -EAGAIN;
		close(fd);
		return r;
	}
	l->fd = fd;
	return 0;
}

int moom_link_read(struct moom_link *l, moom_msg_fn fn, void *ctx)
{
	size_t max = l->msg_max ? l->msg_max : MOOM_MSG_MAX;
	unsigned reads = 0;

	for (;;) {
		size_t start = 0, i;
		ssize_t n;
		int r = 0;

		if (l->burst && reads++ == l->burst)
			return 0; /* the rest at the next wakeup: one sender does not hold the loop */
		if (l->cap - l->len < 4096) {
			size_t cap = l->cap ? l->cap * 2 : 8192;
			char *nb;

			if (cap > max + 8192)
				cap = max + 8192;
			if (cap <= l->len) {
				moom_link_close(l);
				return -EMSGSIZE;
			}
			nb = realloc(l->buf, cap);
			if (!nb) {
				moom_link_close(l);
				return -ENOMEM;
			}
			l->buf = nb;
			l->cap = cap;
		}
		n = recv(l->fd, l->buf + l->len, l->cap - l->len, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			r = -errno;
			moom_link_close(l);
			return r;
		}
		if (n == 0) {
			moom_link_close(l);
			return -ECONNRESET;
		}
		/* split: only the new bytes can hold a NUL */
		for (i = l->len; i < l->len + (size_t)n; i++) {
			if (l->buf[i] != '\0')
				continue;
			r = fn(ctx, l->buf + start, i - start, l->msgs++);
			if (r < 0 || l->fd < 0) {
				moom_link_close(l);
				return r < 0 ? r : -ECONNRESET;
			}
			start = i + 1;
		}
		l->len += (size_t)n;
		if (start) {
			memmove(l->buf, l->buf + start, l->len - start);
			l->len -= start;
		}
		if (l->len > max) {
			moom_link_close(l);
			return -EMSGSIZE;
		}
	}
}

/* a count or pid in decimal, nothing else; -1 otherwise */
static long decimal(const char *v)
{
	char *end;
	long n;

	if (!v || *v < '0' || *v > '9')
		return -1;
	errno = 0;
	n = strtol(v, &end, 10);
	return errno || *end || n < 0 ? -1 : n;
}

int moom_passed_fds(const char *listen_pid, const char *listen_fds, long self)
{
	long n = decimal(listen_fds);

	if (decimal(listen_pid) != self || n <= 0 || n > 64)
		return 0;
	return (int)n;
}

/* whether fd is an AF_UNIX listening stream socket bound to path */
static bool is_listener(int fd, const char *path)
{
	struct sockaddr_un sa;
	socklen_t len = sizeof(sa);
	int type = 0, acc = 0;
	socklen_t tl = sizeof(type), al = sizeof(acc);

	memset(&sa, 0, sizeof(sa));
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tl) < 0 || type != SOCK_STREAM ||
	    getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &acc, &al) < 0 || !acc ||
	    getsockname(fd, (struct sockaddr *)&sa, &len) < 0 || sa.sun_family != AF_UNIX ||
	    len <= offsetof(struct sockaddr_un, sun_path))
		return false;
	sa.sun_path[sizeof(sa.sun_path) - 1] = '\0';
	return strcmp(sa.sun_path, path) == 0;
}

static int set_flags(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0 || fcntl(fd, F_SETFD, FD_CLOEXEC) < 0)
		return -errno;
	return 0;
}

int moom_user_listen(const char *path, int n, bool *passed)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, i, r;

	*passed = false;
	for (i = 0; i < n; i++)
		if (is_listener(3 + i, path)) {
			r = set_flags(3 + i);
			if (r < 0)
				return r;
			*passed = true;
			return 3 + i;
		}
	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		/* someone else's, or a socket file left behind: only the latter goes */
		struct stat st;
		int probe;
		bool alive;

		r = -errno;
		if (r != -EADDRINUSE) {
			close(fd);
			return r;
		}
		probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		alive = probe >= 0 && connect(probe, (struct sockaddr *)&sa, sizeof(sa)) == 0;
		if (probe >= 0)
			close(probe);
		if (alive || lstat(path, &st) < 0 || !S_ISSOCK(st.st_mode)) {
			close(fd);
			return -EADDRINUSE;
		}
		if (unlink(path) < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
			r = -errno;
			close(fd);
			return r;
		}
	}
	/* user managers run as their users: everyone may connect, as to
	 * systemd-oomd's socket; what a sender may say is checked per message */
	if (chmod(path, 0666) < 0 || listen(fd, 16) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	return fd;
}

int moom_user_accept(int lfd, unsigned long *uid)
{
	struct ucred cred;
	socklen_t clen = sizeof(cred);
	int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC), r;

	if (fd < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	*uid = cred.uid;
	return fd;
}
