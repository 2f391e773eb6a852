/* SPDX-License-Identifier: MIT */
/* brakeio: the memory.high brake's I/O on a cgroup2 group (brakeio.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/xattr.h>

#include "brakeio.h"
#include "fileio.h"
#include "memory.h"

void brakeio_memory_cgroup(int rootfd, const struct config *cfg, char *out, size_t size)
{
	const char *p = cfg->pressure;
	size_t n = strlen(p);
	struct mem_info mi;

	*out = '\0';
	if (*cfg->memory_cgroup) {
		snprintf(out, size, "%s", cfg->memory_cgroup);
	} else if (n > 16 && strcmp(p + n - 16, "/memory.pressure") == 0) {
		char dir[CONFIG_PATH_MAX];

		snprintf(dir, sizeof(dir), "%.*s", (int)(n - 16), p);
		if (memory_read_cgroup(rootfd, dir, &mi) == 0)
			snprintf(out, size, "%s", dir);
	}
}

/* The record on the group open at fd: 0 (none), 1 (*r read), or -errno. A
 * record that does not parse is no record. */
static int read_record(int fd, struct brake_record *r)
{
	char v[64];
	ssize_t n = fgetxattr(fd, BRAKE_XATTR, v, sizeof(v));

	if (n < 0)
		return errno == ENODATA || errno == ERANGE ? 0 : -errno;
	return brake_parse(v, (size_t)n, r) == 0 ? 1 : 0;
}

static int drop_record(int fd)
{
	return fremovexattr(fd, BRAKE_XATTR) < 0 && errno != ENODATA ? -errno : 0;
}

int brakeio_write_high(int rootfd, const char *dir, uint64_t v)
{
	char path[CONFIG_PATH_MAX + 16], s[24];

	snprintf(path, sizeof(path), "%s/memory.high", dir + (*dir == '/'));
	return write_file_at(rootfd, path, brake_value(s, sizeof(s), v));
}

int brakeio_apply(int rootfd, const char *dir, uint64_t margin, struct brakeio_result *res)
{
	uint64_t max = 0, cur = 0, high = 0;
	bool held = false; /* memory.high holds a leftover brake */
	char v[64];
	int fd, r, n;

	*res = (struct brakeio_result){ .target = -EINVAL };
	r = memory_read_value(rootfd, dir, "memory.max", true, &max);
	if (r == 0)
		r = memory_read_value(rootfd, dir, "memory.high", true, &cur);
	if (r < 0)
		return r;
	fd = sysroot_openat(rootfd, dir, O_RDONLY | O_DIRECTORY);
	if (fd < 0)
		return fd;
	r = read_record(fd, &res->rec);
	if (r < 0)
		goto out;
	/* a leftover brake still in place: the value before it is the one to keep */
	res->adopted = r == 1;
	held = res->adopted && brake_restore(&res->rec, cur, &res->rec.orig);
	if (held)
		cur = res->rec.orig;
	res->rec.orig = cur;
	r = 0;
	res->target = brake_target(max, cur, margin, &high);
	if (res->target != 0) {
		/* not braked: memory.high is cur, which a record must not undo */
		if (res->adopted) {
			r = drop_record(fd);
			if (r == 0 && held)
				r = brakeio_write_high(rootfd, dir, cur);
		}
		goto out;
	}
	res->rec.set = high;
	n = brake_format(v, sizeof(v), &res->rec);
	if (n < 0) {
		r = n;
		goto out;
	}
	if (fsetxattr(fd, BRAKE_XATTR, v, (size_t)n, 0) < 0) {
		r = -errno;
		goto out;
	}
	r = brakeio_write_high(rootfd, dir, high);
	if (r < 0)
		(void)drop_record(fd);
out:
	close(fd);
	return r;
}

int brakeio_release(int rootfd, const char *dir, uint64_t *restored)
{
	struct brake_record rec;
	uint64_t cur;
	int fd, r;

	fd = sysroot_openat(rootfd, dir, O_RDONLY | O_DIRECTORY);
	if (fd < 0)
		return fd;
	r = read_record(fd, &rec);
	if (r <= 0)
		goto out;
	r = memory_read_value(rootfd, dir, "memory.high", true, &cur);
	if (r < 0)
		goto out;
	if (brake_restore(&rec, cur, restored)) {
		r = brakeio_write_high(rootfd, dir, *restored);
		if (r < 0)
			goto out;
		r = 1;
	} else {
		r = 2;
	}
	{
		int d = drop_record(fd);

		r = d < 0 ? d : r;
	}
out:
	close(fd);
	return r;
}
