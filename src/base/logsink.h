/* SPDX-License-Identifier: MIT */
/* logsink: log lines on their way to stderr without ever blocking the daemon.
 *
 * Under memory pressure the reader of the daemon's stderr (journald, a pipe
 * to a logger) is often the slowest process on the machine. A write(2) into
 * its full socket or pipe would hold the killer in the kernel until the
 * reader catches up -- while the kernel's OOM killer acts in its place. So a
 * line goes out only when the sink has room for it now (a socket: sent with
 * MSG_DONTWAIT; a pipe: the bytes it still holds, FIONREAD, against its
 * size), and otherwise waits in a fixed queue, in order, for the next flush.
 * Lines of level notice and above (kills, warnings, errors) may fill the
 * whole queue; info and debug lines only its first half, so a flood of
 * debug lines never crowds out a kill line. A line that does not fit is
 * dropped and counted (the caller reports the count once the queue is
 * empty). Anything else (a terminal, a file, /dev/null) is written as
 * before: it does not block on a reader.
 *
 * The sink is a plain value in the daemon's context; nothing here is global. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LOGSINK_SIZE ((size_t)64 * 1024)

enum logsink_kind {
	LOGSINK_DIRECT, /* write(2) as it comes: no reader to wait for */
	LOGSINK_SOCKET, /* send(MSG_DONTWAIT): journald's stream, a socket */
	LOGSINK_PIPE,   /* write(2) once FIONREAD says the pipe has room */
};

struct logsink {
	int fd;
	enum logsink_kind kind;
	size_t pipe_size; /* F_GETPIPE_SZ, LOGSINK_PIPE only */
	size_t len;       /* bytes queued in buf */
	uint64_t dropped; /* lines dropped since the caller last took the count */
	char buf[LOGSINK_SIZE];
};

/* Looks at what fd is (fstat, F_GETPIPE_SZ) and chooses how to write to it. */
void logsink_init(struct logsink *s, int fd);

/* One whole line (len bytes, its '\n' included): written now if the queue
 * is empty and the sink has room, else queued, else dropped and counted.
 * important: a line of level notice or above. */
void logsink_put(struct logsink *s, const char *line, size_t len, bool important);

/* Writes out of the queue as much as the sink takes now, never blocking.
 * Returns true if bytes stay queued. */
bool logsink_flush(struct logsink *s);

/* At exit: flushes, waiting for the reader up to timeout_ms in all. */
void logsink_drain(struct logsink *s, int timeout_ms);

/* Whether a pipe of pipe_size bytes that holds unread bytes takes len more
 * now without blocking. Each write of a line fills the pipe's last page or
 * takes a new one, so at most two pages are partly used (the reader's and
 * the writer's): a line of at most a page fits if three pages are free, or
 * in any empty pipe. */
bool logsink_pipe_has_room(size_t pipe_size, size_t unread, size_t len);
