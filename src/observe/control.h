/* SPDX-License-Identifier: MIT */
/* control: the control socket that `psi-lmkd --status` talks to. A unix
 * stream socket, 0600 in a 0700 directory; each connection carries one
 * request line ("status", optionally followed by " candidates" and
 * " json") and gets one answer ("OK\n" and the status text, or "ERR reason\n"),
 * then the daemon closes it. The peer's uid (SO_PEERCRED) must be root's or
 * the daemon's own. The server side never blocks the event loop for long:
 * the connections of one wakeup have CONTROL_IO_TIMEOUT_MS in all to send
 * their lines and take their answers (a deadline, however the peer trickles
 * its bytes); those left wait for the next wakeup. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#define CONTROL_DEFAULT_SOCKET "/run/psi-lmkd/control"
#define CONTROL_REQUEST_MAX 64
#define CONTROL_IO_TIMEOUT_MS 500

struct control_request {
	bool candidates;
	bool json;
};

struct control_peer {
	pid_t pid;
	uid_t uid;
};

/* Parses a request line ("status candidates json\n"; words after "status"
 * in any order). 0, or -EINVAL for anything else. */
int control_parse_request(const char *line, struct control_request *req);
/* The request line for req, with its newline. */
void control_format_request(char *buf, size_t size, const struct control_request *req);

/* Binds and listens on path (non-blocking, close-on-exec). Creates the
 * parent directory (0700) when it is missing; a socket file left by a dead
 * daemon is replaced, one another daemon still answers on is not (-EADDRINUSE).
 * The socket is made 0600. Returns the fd or -errno, with a reason in why. */
int control_listen(const char *path, char *why, size_t whylen);
/* Removes the socket file if it is still the one of inode ino (lstat after
 * control_listen): a newer daemon may have replaced it. */
void control_unlink(const char *path, ino_t ino);
/* CLOCK_MONOTONIC in microseconds, for the deadlines below. */
uint64_t control_now_us(void);
/* Accepts one connection and checks its peer: returns the connected fd
 * (non-blocking), -EPERM when the peer is neither root nor allowed_uid
 * (then *peer says who it was; the connection is closed), -EAGAIN when there
 * was none, or -errno. */
int control_accept(int listenfd, uid_t allowed_uid, struct control_peer *peer);
/* Reads the request line of a connection, waiting until deadline_us
 * (control_now_us) at most: -ETIMEDOUT then. */
int control_read_request(int fd, struct control_request *req, uint64_t deadline_us);
/* Writes all of buf, waiting until deadline_us at most. 0 or -errno
 * (-ETIMEDOUT: the peer did not take it in time). */
int control_send(int fd, const char *buf, size_t len, uint64_t deadline_us);

/* The client: sends req to the daemon at path and copies the answer's body
 * to out. 0; -ECONNREFUSED/-ENOENT when no daemon listens; -EPROTO when the
 * daemon answered ERR (its reason is written to err); or -errno. */
int control_query(const char *path, const struct control_request *req, FILE *out, FILE *err);
