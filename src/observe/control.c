/* SPDX-License-Identifier: MIT */
/* control: the control socket's I/O and its tiny protocol; see control.h.
 * What the answer says is status.c's business, who asks is checked here. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "control.h"

int control_parse_request(const char *line, struct control_request *req)
{
	char buf[CONTROL_REQUEST_MAX], *word, *save = NULL;
	size_t n = strlen(line);

	memset(req, 0, sizeof(*req));
	if (n && line[n - 1] == '\n')
		n--;
	if (n >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, line, n);
	buf[n] = '\0';
	word = strtok_r(buf, " ", &save);
	if (!word || strcmp(word, "status") != 0)
		return -EINVAL;
	while ((word = strtok_r(NULL, " ", &save))) {
		if (strcmp(word, "candidates") == 0)
			req->candidates = true;
		else if (strcmp(word, "json") == 0)
			req->json = true;
		else
			return -EINVAL;
	}
	return 0;
}

void control_format_request(char *buf, size_t size, const struct control_request *req)
{
	snprintf(buf, size, "status%s%s\n", req->candidates ? " candidates" : "", req->json ? " json" : "");
}

static int socket_address(const char *path, struct sockaddr_un *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sa->sun_path))
		return -ENAMETOOLONG;
	strcpy(sa->sun_path, path);
	return 0;
}

/* The parent directory: made 0700 if it is missing (one level only). */
static int make_parent(const char *path, char *why, size_t whylen)
{
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return 0;
	*slash = '\0';
	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		int r = -errno;

		snprintf(why, whylen, "cannot create %s: %s", dir, strerror(errno));
		return r;
	}
	return 0;
}

/* A socket file at path: replaced if nobody answers on it any more. */
static int clear_stale(const struct sockaddr_un *sa, char *why, size_t whylen)
{
	struct stat st;
	int fd, r;

	if (lstat(sa->sun_path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode)) {
		snprintf(why, whylen, "%s exists and is not a socket", sa->sun_path);
		return -EEXIST;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	r = connect(fd, (const struct sockaddr *)sa, sizeof(*sa));
	close(fd);
	if (r == 0) {
		snprintf(why, whylen, "another psi-lmkd answers on %s", sa->sun_path);
		return -EADDRINUSE;
	}
	return unlink(sa->sun_path) < 0 && errno != ENOENT ? -errno : 0;
}

int control_listen(const char *path, char *why, size_t whylen)
{
	struct sockaddr_un sa;
	mode_t old;
	int fd, r;

	why[0] = '\0';
	r = socket_address(path, &sa);
	if (r == 0)
		r = make_parent(path, why, whylen);
	if (r == 0)
		r = clear_stale(&sa, why, whylen);
	if (r < 0)
		goto fail;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		r = -errno;
		goto fail;
	}
	old = umask(0177); /* born 0600: never a moment open to others */
	r = bind(fd, (const struct sockaddr *)&sa, sizeof(sa)) < 0 ? -errno : 0;
	umask(old);
	if (r == 0 && listen(fd, 8) < 0)
		r = -errno;
	if (r < 0) {
		close(fd);
		goto fail;
	}
	return fd;
fail:
	if (!why[0])
		snprintf(why, whylen, "%s: %s", path, strerror(-r));
	return r;
}

void control_unlink(const char *path, ino_t ino)
{
	struct stat st;

	/* only our own file: a newer daemon may have replaced it */
	if (lstat(path, &st) == 0 && S_ISSOCK(st.st_mode) && st.st_ino == ino)
		unlink(path);
}

uint64_t control_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000ULL + (uint64_t)ts.tv_nsec / 1000;
}

/* Waits for events on fd until deadline_us: 0 when ready, -ETIMEDOUT, or
 * -errno. A peer that trickles one byte at a time cannot stretch it. */
static int wait_until(int fd, short events, uint64_t deadline_us)
{
	struct pollfd p = { .fd = fd, .events = events };
	uint64_t now;
	int r;

	for (;;) {
		now = control_now_us();
		if (now >= deadline_us)
			return -ETIMEDOUT;
		r = poll(&p, 1, (int)((deadline_us - now + 999) / 1000));
		if (r > 0)
			return 0;
		if (r < 0 && errno != EINTR)
			return -errno;
	}
}

/* Tells a refused peer why, without waiting for it, and closes. What it
 * sent is drained first, so that the close does not reset the connection
 * before the peer reads the reason. */
static void refuse(int fd, uid_t allowed_uid)
{
	char buf[CONTROL_REQUEST_MAX + 64];
	int n;

	n = snprintf(buf, sizeof(buf), "ERR permission denied: only root and uid %u may query psi-lmkd\n",
		     (unsigned)allowed_uid);
	(void)send(fd, buf, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL);
	(void)shutdown(fd, SHUT_WR);
	(void)recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
	close(fd);
}

int control_accept(int listenfd, uid_t allowed_uid, struct control_peer *peer)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	int fd = accept4(listenfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

	if (fd < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
		int r = -errno;

		close(fd);
		return r;
	}
	peer->pid = cred.pid;
	peer->uid = cred.uid;
	if (cred.uid != 0 && cred.uid != allowed_uid) {
		refuse(fd, allowed_uid);
		return -EPERM;
	}
	return fd;
}

int control_read_request(int fd, struct control_request *req, uint64_t deadline_us)
{
	char buf[CONTROL_REQUEST_MAX];
	size_t off = 0;
	ssize_t n;
	int r = -ETIMEDOUT;

	while (off < sizeof(buf) - 1) {
		n = recv(fd, buf + off, sizeof(buf) - 1 - off, MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN && (r = wait_until(fd, POLLIN, deadline_us)) == 0)
			continue;
		if (n < 0)
			return errno == EAGAIN ? r : -errno;
		if (n == 0)
			break;
		off += (size_t)n;
		if (memchr(buf, '\n', off))
			break;
	}
	buf[off] = '\0';
	return control_parse_request(buf, req);
}

int control_send(int fd, const char *buf, size_t len, uint64_t deadline_us)
{
	ssize_t n;
	int r = -ETIMEDOUT;

	while (len) {
		n = send(fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN && (r = wait_until(fd, POLLOUT, deadline_us)) == 0)
			continue;
		if (n < 0)
			return errno == EAGAIN ? r : -errno;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Copies the answer to out (its "OK\n" dropped) or its ERR line to err. */
static int copy_answer(int fd, FILE *out, FILE *err)
{
	char buf[4096];
	bool first = true, failed = false;
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		char *p = buf;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (first) {
			first = false;
			failed = n < 3 || memcmp(buf, "OK\n", 3) != 0;
			if (!failed) {
				p += 3;
				n -= 3;
			} else if (n >= 4 && memcmp(buf, "ERR ", 4) == 0) {
				fputs("psi-lmkd: error: ", err);
				p += 4;
				n -= 4;
			}
		}
		fwrite(p, 1, (size_t)n, failed ? err : out);
	}
	if (first)
		return -EPROTO; /* closed without a word: refused */
	return failed ? -EPROTO : 0;
}

int control_query(const char *path, const struct control_request *req, FILE *out, FILE *err)
{
	struct sockaddr_un sa;
	char line[CONTROL_REQUEST_MAX];
	int fd, r;

	r = socket_address(path, &sa);
	if (r < 0)
		return r;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (const struct sockaddr *)&sa, sizeof(sa)) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	control_format_request(line, sizeof(line), req);
	r = control_send(fd, line, strlen(line), control_now_us() + 5000000ULL);
	if (r == 0 || r == -EPIPE || r == -ECONNRESET)
		r = copy_answer(fd, out, err);
	close(fd);
	/* closed on us without an answer: refused */
	return r == -EPIPE || r == -ECONNRESET ? -EPROTO : r;
}
