/* SPDX-License-Identifier: MIT */
/* logsink: log lines to stderr without blocking (see logsink.h). Owns the
 * queue of lines the reader has not taken yet and the choice of how to
 * write to the file descriptor. */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "logsink.h"

#define PIPE_PAGE ((size_t)4096)

bool logsink_pipe_has_room(size_t pipe_size, size_t unread, size_t len)
{
	if (len > PIPE_PAGE)
		return false; /* not one atomic write: never asked of a pipe */
	if (unread == 0)
		return pipe_size >= len;
	return unread + 3 * PIPE_PAGE <= pipe_size;
}

void logsink_init(struct logsink *s, int fd)
{
	struct stat st;
	int n;

	s->fd = fd;
	s->kind = LOGSINK_DIRECT;
	s->len = 0;
	s->dropped = 0;
	if (fstat(fd, &st) < 0)
		return;
	if (S_ISSOCK(st.st_mode)) {
		s->kind = LOGSINK_SOCKET;
	} else if (S_ISFIFO(st.st_mode)) {
		n = fcntl(fd, F_GETPIPE_SZ);
		if (n >= (int)PIPE_PAGE) {
			s->kind = LOGSINK_PIPE;
			s->pipe_size = (size_t)n;
		}
	}
}

/* Writes up to len bytes without blocking (LOGSINK_DIRECT: as write(2)
 * does). Returns the bytes taken; a sink that fails for good (EPIPE, a
 * closed reader) takes everything: there is no one left to read it. */
static size_t sink_write(struct logsink *s, const char *p, size_t len)
{
	ssize_t n;
	int unread;

	switch (s->kind) {
	case LOGSINK_SOCKET:
		n = send(s->fd, p, len, MSG_DONTWAIT | MSG_NOSIGNAL);
		break;
	case LOGSINK_PIPE:
		/* (a pipe that cannot say what it holds is written as it comes) */
		if (ioctl(s->fd, FIONREAD, &unread) == 0 && unread >= 0 &&
		    !logsink_pipe_has_room(s->pipe_size, (size_t)unread, len))
			return 0;
		n = write(s->fd, p, len);
		break;
	default:
		n = write(s->fd, p, len);
		break;
	}
	if (n >= 0)
		return (size_t)n;
	if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
		return 0;
	return len;
}

/* The queued bytes up to and including the first whole line: a pipe is
 * written one line at a time (each an atomic write). */
static size_t first_line(const struct logsink *s)
{
	const char *nl = memchr(s->buf, '\n', s->len);

	return nl ? (size_t)(nl - s->buf) + 1 : s->len;
}

bool logsink_flush(struct logsink *s)
{
	size_t want, n;

	while (s->len > 0) {
		want = s->kind == LOGSINK_PIPE ? first_line(s) : s->len;
		n = sink_write(s, s->buf, want);
		if (n == 0)
			return true;
		memmove(s->buf, s->buf + n, s->len - n);
		s->len -= n;
	}
	return false;
}

void logsink_put(struct logsink *s, const char *line, size_t len, bool important)
{
	size_t n = 0, limit;

	if (s->len > 0)
		(void)logsink_flush(s);
	if (s->len == 0) {
		n = sink_write(s, line, len);
		if (n == len)
			return;
		line += n;
		len -= n;
	}
	/* the rest of a line half sent must follow it; notice and above may
	 * fill the queue, the rest only its first half */
	limit = n > 0 || important ? sizeof(s->buf) : sizeof(s->buf) / 2;
	if (s->len + len > limit) {
		s->dropped++;
		return;
	}
	memcpy(s->buf + s->len, line, len);
	s->len += len;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void logsink_drain(struct logsink *s, int timeout_ms)
{
	int64_t end = now_ms() + timeout_ms, left;
	struct pollfd pfd = { .fd = s->fd, .events = POLLOUT };

	while (logsink_flush(s)) {
		left = end - now_ms();
		if (left <= 0)
			return;
		if (left > 10)
			left = 10;
		/* a pipe says POLLOUT while it has a page free, not the three
		 * pages a line may need: it is looked at again every 10 ms */
		if (poll(s->kind == LOGSINK_PIPE ? NULL : &pfd, s->kind == LOGSINK_PIPE ? 0 : 1, (int)left) < 0 &&
		    errno != EINTR)
			return;
	}
}
