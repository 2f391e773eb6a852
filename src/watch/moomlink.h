/* SPDX-License-Identifier: MIT */
/* moomlink: the varlink connection to PID 1 for the units' ManagedOOM
 * settings (moom.h): a non-blocking AF_UNIX stream whose messages are JSON
 * texts ended by a NUL byte. It connects, checks who answers (uid 0 or our
 * own euid; PID 1 itself when required), sends the subscription
 * ({"method":...,"more":true}) and splits what comes back into messages,
 * none longer than MOOM_MSG_MAX. The event loop and the parsing are the
 * caller's (daemon-moom.c). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "config.h"

struct moom_link {
	int fd;                         /* -1: not connected */
	char path[CONFIG_SOCKET_MAX];   /* the socket */
	bool need_pid1;                 /* the peer must be PID 1 (production) */
	char *buf;                      /* what was read and not yet split */
	size_t len, cap;
	size_t msgs;                    /* messages of this connection so far */
};

void moom_link_init(struct moom_link *l, const char *path, bool need_pid1);
/* Connects and subscribes. 0, or -errno: -ENOENT/-ECONNREFUSED (nobody
 * listens), -EPERM (the peer is not who it must be), -EAGAIN, ... */
int moom_link_connect(struct moom_link *l);
/* The message handler: one message (NUL not included), its index on this
 * connection; a negative return closes the connection and is returned. */
typedef int (*moom_msg_fn)(void *ctx, const char *msg, size_t len, size_t index);
/* Reads what the socket holds and hands each whole message to fn. 0 while
 * the connection lasts; -ECONNRESET when the peer closed it, -EMSGSIZE for
 * a message over MOOM_MSG_MAX, or -errno; the link is then closed. */
int moom_link_read(struct moom_link *l, moom_msg_fn fn, void *ctx);
void moom_link_close(struct moom_link *l);
