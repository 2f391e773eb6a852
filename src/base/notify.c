/* SPDX-License-Identifier: MIT */
/* notify: readiness, status, reload, stop and watchdog messages to the
 * service manager, sent by sdsock (no libsystemd: every build sends them). */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "notify.h"
#include "sdsock.h"

/* One datagram to $NOTIFY_SOCKET; nothing (0) without it. */
static int send_msg(int rootfd, const char *msg)
{
	const char *path = getenv("NOTIFY_SOCKET");

	if (!path || !*path)
		return 0;
	return sdsock_send(rootfd, path, msg, strlen(msg));
}

/* A whole decimal number without sign, or -EINVAL. */
static int parse_u64(const char *s, uint64_t *v)
{
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	*v = strtoull(s, &end, 10);
	return errno || *end ? -EINVAL : 0;
}

/* Number of bytes a UTF-8 sequence starting with lead byte c claims (1 for
 * ASCII and for bytes that cannot start a sequence). */
static size_t utf8_claim(unsigned char c)
{
	if (c >= 0xf0 && c <= 0xf7)
		return 4;
	if (c >= 0xe0)
		return c <= 0xef ? 3 : 1;
	if (c >= 0xc0)
		return 2;
	return 1;
}

/* Appends "STATUS=" and status, made one line (control characters become
 * spaces) and cut at NOTIFY_STATUS_MAX bytes without splitting a UTF-8
 * sequence: systemd ignores a status that is not valid UTF-8. */
static void append_status(char *msg, size_t size, const char *status)
{
	size_t len = strlen(msg), start, n, i;

	if (len + sizeof("STATUS=") >= size)
		return;
	memcpy(msg + len, "STATUS=", sizeof("STATUS="));
	len += sizeof("STATUS=") - 1;
	start = len;
	for (n = 0; n < NOTIFY_STATUS_MAX && status[n] && len + 1 < size; n++) {
		unsigned char c = (unsigned char)status[n];

		msg[len++] = (c < 0x20 || c == 0x7f) ? ' ' : (char)c;
	}
	/* drop a sequence the cut left incomplete */
	for (i = len; i > start && len - i < 4; i--) {
		unsigned char c = (unsigned char)msg[i - 1];

		if ((c & 0xc0) != 0x80) { /* the last sequence's first byte */
			if (utf8_claim(c) > len - (i - 1))
				len = i - 1;
			break;
		}
	}
	msg[len] = '\0';
}

int notify_ready(int rootfd, const char *status)
{
	char msg[NOTIFY_STATUS_MAX + 32] = "READY=1";

	if (status && *status) {
		strcat(msg, "\n");
		append_status(msg, sizeof(msg), status);
	}
	return send_msg(rootfd, msg);
}

int notify_status(int rootfd, const char *fmt, ...)
{
	char text[NOTIFY_STATUS_MAX + 1], msg[NOTIFY_STATUS_MAX + 32] = "";
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	append_status(msg, sizeof(msg), text);
	return send_msg(rootfd, msg);
}

int notify_reloading(int rootfd)
{
	struct timespec ts;
	char msg[64];

	if (clock_gettime(CLOCK_MONOTONIC, &ts) < 0)
		return -errno;
	snprintf(msg, sizeof(msg), "RELOADING=1\nMONOTONIC_USEC=%" PRIu64,
		 (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u);
	return send_msg(rootfd, msg);
}

int notify_stopping(int rootfd)
{
	return send_msg(rootfd, "STOPPING=1");
}

uint64_t notify_watchdog_usec(void)
{
	const char *pid = getenv("WATCHDOG_PID");
	uint64_t usec, p;

	if (parse_u64(getenv("WATCHDOG_USEC"), &usec) < 0 || !usec)
		return 0;
	if (pid && (parse_u64(pid, &p) < 0 || p != (uint64_t)getpid()))
		return 0;
	return usec;
}

int notify_watchdog(int rootfd)
{
	return send_msg(rootfd, "WATCHDOG=1");
}
