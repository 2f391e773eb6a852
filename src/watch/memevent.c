/* SPDX-License-Identifier: MIT */
/* memevent: kernel notifications of the watched memory cgroup, and the
 * opt-in v1 OOM handover (see memevent.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "lines.h"
#include "fileio.h"
#include "memevent.h"

/* "dir/name" relative to the root fd */
static void group_path(char *out, size_t size, const char *dir, const char *name)
{
	snprintf(out, size, "%s/%s", dir + (*dir == '/'), name);
}

int memevent_parse_oom_control(const char *text, bool *kill_disabled, bool *under_oom)
{
	uint64_t a, b;

	if (lines_value(text, "oom_kill_disable", &a) != 1 || lines_value(text, "under_oom", &b) != 1)
		return -EINVAL;
	*kill_disabled = a != 0;
	*under_oom = b != 0;
	return 0;
}

void memevent_init(struct memevent *m)
{
	memset(m, 0, sizeof(*m));
	m->wake_fd = m->oom_fd = -1;
}

/* Registers eventfd efd for the control file dir/name with args (v1
 * cgroup.event_control: "<eventfd> <fd of the file> <args>"). The file's fd
 * is needed only for the registration; closing the eventfd unregisters every
 * registration made with it. */
static int register_event(int rootfd, const char *dir, const char *name, int efd, const char *args)
{
	char path[CONFIG_PATH_MAX + 32], line[96];
	int cfd, r;

	group_path(path, sizeof(path), dir, name);
	cfd = sysroot_openat(rootfd, path, O_RDONLY);
	if (cfd < 0)
		return cfd;
	snprintf(line, sizeof(line), "%d %d%s%s", efd, cfd, *args ? " " : "", args);
	group_path(path, sizeof(path), dir, "cgroup.event_control");
	r = write_file_at(rootfd, path, line);
	close(cfd);
	return r;
}

static int new_eventfd(void)
{
	int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);

	return efd < 0 ? -errno : efd;
}

int memevent_open_wake(struct memevent *m, int rootfd, const char *dir, const uint64_t *usage, size_t n)
{
	char path[CONFIG_PATH_MAX + 32], args[32];
	size_t i;
	int fd, r = 0;

	snprintf(m->dir, sizeof(m->dir), "%s", dir);
	group_path(path, sizeof(path), dir, "memory.events");
	fd = sysroot_openat(rootfd, path, O_RDONLY);
	if (fd >= 0) {
		m->v2 = true;
		m->wake_fd = fd;
		(void)memevent_drain(m, fd);
		return 0;
	}
	if (n == 0)
		return -EINVAL;
	fd = new_eventfd();
	if (fd < 0)
		return fd;
	for (i = 0; i < n && r == 0; i++) {
		snprintf(args, sizeof(args), "%" PRIu64, usage[i]);
		r = register_event(rootfd, dir, "memory.usage_in_bytes", fd, args);
	}
	if (r < 0) {
		close(fd);
		return r;
	}
	m->v2 = false;
	m->wake_fd = fd;
	return 0;
}

int memevent_take_oom(struct memevent *m, int rootfd, const char *dir)
{
	char path[CONFIG_PATH_MAX + 32], buf[256];
	bool disabled, under;
	ssize_t n;
	int fd, r;

	if (m->oom_taken)
		return 0;
	group_path(path, sizeof(path), dir, "memory.oom_control");
	n = read_file_at(rootfd, path, buf, sizeof(buf));
	if (n == -ENOENT)
		return -EOPNOTSUPP;
	if (n < 0)
		return (int)n;
	if (memevent_parse_oom_control(buf, &disabled, &under) < 0)
		return -EINVAL;
	fd = new_eventfd();
	if (fd < 0)
		return fd;
	r = register_event(rootfd, dir, "memory.oom_control", fd, "");
	if (r == 0 && !disabled)
		r = write_file_at(rootfd, path, "1");
	/* tasks already waiting at OOM (left by a daemon that died) send no new
	 * notification: one is made up */
	if (r == 0 && under && eventfd_write(fd, 1) < 0)
		r = -errno;
	if (r < 0) {
		close(fd);
		return r;
	}
	snprintf(m->dir, sizeof(m->dir), "%s", dir);
	m->oom_fd = fd;
	m->oom_taken = true;
	return disabled ? 1 : 0;
}

int memevent_release(struct memevent *m, int rootfd)
{
	char path[CONFIG_PATH_MAX + 32];
	int r = 0;

	if (m->oom_taken) {
		group_path(path, sizeof(path), m->dir, "memory.oom_control");
		r = write_file_at(rootfd, path, "0");
		/* a group that is gone has no OOM killer to restore */
		if (r == -ENOENT || r == -ENODEV)
			r = 0;
		m->oom_taken = false;
	}
	close_fd(&m->oom_fd);
	return r;
}

void memevent_close(struct memevent *m, int rootfd)
{
	(void)memevent_release(m, rootfd);
	close_fd(&m->wake_fd);
}

int memevent_drain(const struct memevent *m, int fd)
{
	char buf[512];
	uint64_t count;

	if (fd < 0)
		return 0;
	if (m->v2 && fd == m->wake_fd)
		return pread(fd, buf, sizeof(buf), 0) < 0 ? -errno : 0;
	if (read(fd, &count, sizeof(count)) < 0 && errno != EAGAIN)
		return -errno;
	return 0;
}

int memevent_under_oom(int rootfd, const char *dir)
{
	char path[CONFIG_PATH_MAX + 32], buf[256];
	bool disabled, under;
	ssize_t n;

	group_path(path, sizeof(path), dir, "memory.oom_control");
	n = read_file_at(rootfd, path, buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	if (memevent_parse_oom_control(buf, &disabled, &under) < 0)
		return -EINVAL;
	return under;
}

/* "oom_kill N" from a file under the root: 0 with *count, -ENODATA when the
 * file has no such line, or -errno. */
static int read_oom_kill(int rootfd, const char *path, uint64_t *count)
{
	char buf[8192];
	ssize_t n = read_file_at(rootfd, path, buf, sizeof(buf));
	int r;

	if (n < 0)
		return (int)n;
	r = lines_value(buf, "oom_kill", count);
	return r == 1 ? 0 : r == 0 ? -ENODATA : r;
}

int memevent_read_oom_kills(int rootfd, const char *dir, uint64_t *count)
{
	char path[CONFIG_PATH_MAX + 32];
	int r;

	if (!*dir)
		return read_oom_kill(rootfd, "proc/vmstat", count);
	group_path(path, sizeof(path), dir, "memory.events");
	r = read_oom_kill(rootfd, path, count);
	if (r != -ENOENT)
		return r;
	group_path(path, sizeof(path), dir, "memory.oom_control");
	return read_oom_kill(rootfd, path, count);
}
