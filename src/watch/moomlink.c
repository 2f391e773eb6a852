/* SPDX-License-Identifier: MIT */
/* moomlink: the varlink client socket to PID 1 (moomlink.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
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
	for (;;) {
		size_t start = 0, i;
		ssize_t n;
		int r = 0;

		if (l->cap - l->len < 4096) {
			size_t cap = l->cap ? l->cap * 2 : 8192;
			char *nb;

			if (cap > MOOM_MSG_MAX + 8192)
				cap = MOOM_MSG_MAX + 8192;
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
		if (l->len > MOOM_MSG_MAX) {
			moom_link_close(l);
			return -EMSGSIZE;
		}
	}
}
