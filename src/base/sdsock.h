/* SPDX-License-Identifier: MIT */
/* sdsock: the service manager's two datagram protocols, written here instead
 * of linked from libsystemd (systemd documents both as stable interfaces for
 * other implementations): sd_notify's "KEY=value" lines sent to
 * $NOTIFY_SOCKET, and journald's native protocol on SDSOCK_JOURNAL.
 *
 * A socket path that is a filesystem path goes through the daemon's root
 * (sysroot_unix_path); one that starts with '@' names an abstract socket
 * ('@' stands for the leading NUL byte). Each message is one datagram on a
 * fresh socket: no fd is kept between messages. */
#pragma once

#include <stdarg.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/un.h>

#define SDSOCK_JOURNAL "/run/systemd/journal/socket"

/* A journal entry's datagram: fields "NAME=value\n", or, for a value that
 * holds a newline, "NAME\n", the value's length as 64-bit little endian, the
 * value, "\n". NAME is upper-case letters, digits and '_' (the caller's
 * constants; not checked). 8 KiB holds the kill entry many times over. */
#define SDSOCK_ENTRY_MAX 8192
struct sdsock_entry {
	size_t len;
	int err; /* the first field that did not fit: -EMSGSIZE, and no field after it */
	char buf[SDSOCK_ENTRY_MAX];
};

void sdsock_entry_init(struct sdsock_entry *e);
/* Appends NAME=value (the binary form when value holds a newline). */
void sdsock_entry_add(struct sdsock_entry *e, const char *name, const char *value);
/* The same with a printf value (one that formats longer than 1 KiB is cut). */
__attribute__((format(printf, 3, 4))) void sdsock_entry_addf(struct sdsock_entry *e, const char *name,
							      const char *fmt, ...);

/* The address of the socket at path ('@name' abstract, '/...' under rootfd).
 * 0, -EINVAL (neither), -ENAMETOOLONG. */
int sdsock_addr(int rootfd, const char *path, struct sockaddr_un *sa, socklen_t *salen);
/* Sends buf as one datagram to the socket at path (as sdsock_addr); waits
 * while the receiver's queue is full, as sd_notify(3) does (a lost READY=1
 * would fail the service's start). 0 or -errno. */
int sdsock_send(int rootfd, const char *path, const void *buf, size_t len);
/* Sends a journal entry to SDSOCK_JOURNAL under rootfd, never waiting:
 * -EAGAIN when journald's queue is full (sd_journal_send(3) would block), and
 * the caller writes its line to stderr instead. 0, e->err, or -errno. */
int sdsock_journal(int rootfd, const struct sdsock_entry *e);
