/* SPDX-License-Identifier: MIT */
/* sdsock: sd_notify datagrams and journald's native protocol, encoded and
 * sent without libsystemd; see sdsock.h. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fileio.h"
#include "sdsock.h"

void sdsock_entry_init(struct sdsock_entry *e)
{
	e->len = 0;
	e->err = 0;
}

/* Appends n bytes of p; false (and e->err) when they do not fit. */
static bool put(struct sdsock_entry *e, const void *p, size_t n)
{
	if (e->err || n > sizeof(e->buf) - e->len) {
		e->err = -EMSGSIZE;
		return false;
	}
	memcpy(e->buf + e->len, p, n);
	e->len += n;
	return true;
}

void sdsock_entry_add(struct sdsock_entry *e, const char *name, const char *value)
{
	size_t n = strlen(name), v = strlen(value), start = e->len;
	unsigned char size[8];
	uint64_t len = v;
	size_t i;
	bool ok;

	if (!memchr(value, '\n', v)) {
		ok = put(e, name, n) && put(e, "=", 1) && put(e, value, v) && put(e, "\n", 1);
	} else {
		for (i = 0; i < sizeof(size); i++)
			size[i] = (unsigned char)(len >> (8 * i));
		ok = put(e, name, n) && put(e, "\n", 1) && put(e, size, sizeof(size)) && put(e, value, v) &&
		     put(e, "\n", 1);
	}
	if (!ok)
		e->len = start; /* no half field */
}

void sdsock_entry_addf(struct sdsock_entry *e, const char *name, const char *fmt, ...)
{
	char value[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(value, sizeof(value), fmt, ap);
	va_end(ap);
	sdsock_entry_add(e, name, value);
}

int sdsock_addr(int rootfd, const char *path, struct sockaddr_un *sa, socklen_t *salen)
{
	size_t n = strlen(path);
	int r;

	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (path[0] == '@') {
		if (n > sizeof(sa->sun_path))
			return -ENAMETOOLONG;
		memcpy(sa->sun_path + 1, path + 1, n - 1); /* sun_path[0] stays NUL */
		*salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
		return 0;
	}
	if (path[0] != '/')
		return -EINVAL;
	r = sysroot_unix_path(rootfd, path, sa->sun_path, sizeof(sa->sun_path));
	if (r < 0)
		return r;
	*salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(sa->sun_path) + 1);
	return 0;
}

/* One datagram to the socket at path; flags for sendto beside MSG_NOSIGNAL. */
static int send_dgram(int rootfd, const char *path, const void *buf, size_t len, int flags)
{
	struct sockaddr_un sa;
	socklen_t salen;
	int fd, r;

	r = sdsock_addr(rootfd, path, &sa, &salen);
	if (r < 0)
		return r;
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	r = sendto(fd, buf, len, MSG_NOSIGNAL | flags, (struct sockaddr *)&sa, salen) < 0 ? -errno : 0;
	close(fd);
	return r;
}

int sdsock_send(int rootfd, const char *path, const void *buf, size_t len)
{
	return send_dgram(rootfd, path, buf, len, 0);
}

int sdsock_journal(int rootfd, const struct sdsock_entry *e)
{
	if (e->err)
		return e->err;
	/* never waits: a journald that reads nothing (stalled under memory
	 * pressure) must not hold up the kill path */
	return send_dgram(rootfd, SDSOCK_JOURNAL, e->buf, e->len, MSG_DONTWAIT);
}
