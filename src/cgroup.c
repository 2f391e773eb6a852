/* cgroup: cgroup2 helpers for kill_cgroup and --probe. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "cgroup.h"
#include "fileio.h"

int cgroup_find_mount(const char *mounts, char *out, size_t size)
{
	const char *line = mounts;

	while (line && *line) {
		char dev[256], dir[1024], type[64];

		if (sscanf(line, "%255s %1023s %63s", dev, dir, type) == 3 && strcmp(type, "cgroup2") == 0) {
			if (strlen(dir) >= size)
				return -ENAMETOOLONG;
			strcpy(out, dir);
			return 0;
		}
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	return -ENOENT;
}

int cgroup_mount(int rootfd, char *out, size_t size)
{
	char *mounts = malloc(65536);
	ssize_t n;
	int r;

	if (!mounts)
		return -ENOMEM;
	n = read_file_at(rootfd, "proc/self/mounts", mounts, 65536);
	r = n < 0 ? (int)n : cgroup_find_mount(mounts, out, size);
	free(mounts);
	return r;
}

static void group_path(char *buf, size_t size, const char *mount, const char *cg, const char *file)
{
	if (strcmp(cg, "/") == 0)
		snprintf(buf, size, "%s/%s", mount, file);
	else
		snprintf(buf, size, "%s%s/%s", mount, cg, file);
}

int cgroup_read_procs(int rootfd, const char *mount, const char *cg, pid_t *pids, size_t max)
{
	char path[4096], *buf, *s;
	size_t n = 0;
	ssize_t len;

	buf = malloc(65536);
	if (!buf)
		return -ENOMEM;
	group_path(path, sizeof(path), mount, cg, "cgroup.procs");
	len = read_file_at(rootfd, path + (path[0] == '/'), buf, 65536);
	if (len < 0) {
		free(buf);
		return (int)len;
	}
	for (s = buf; *s;) {
		char *end;
		long v = strtol(s, &end, 10);

		if (end == s)
			break;
		if (n == max) {
			free(buf);
			return -E2BIG;
		}
		pids[n++] = (pid_t)v;
		s = end;
		while (*s == '\n')
			s++;
	}
	free(buf);
	return (int)n;
}

int cgroup_kill(int rootfd, const char *mount, const char *cg)
{
	char path[4096];

	group_path(path, sizeof(path), mount, cg, "cgroup.kill");
	return write_file_at(rootfd, path + (path[0] == '/'), "1");
}

/* Walks down from the mount one directory at a time (O_PATH, no symlinks:
 * cgroupfs has none, a fixture tree must not fake one), so that what is
 * checked is what the path names at that moment. */
int cgroup_path_trusted(int rootfd, const char *mount, const char *cg, uid_t max)
{
	const char *s = cg;
	struct stat st;
	int dir, r = 1;

	if (!*mount || cg[0] != '/')
		return -EINVAL;
	dir = sysroot_openat(rootfd, mount, O_PATH | O_DIRECTORY);
	if (dir < 0)
		return dir;
	while (r == 1 && *s) {
		char name[NAME_MAX + 1];
		size_t len;
		int next;

		while (*s == '/')
			s++;
		len = strcspn(s, "/");
		if (len == 0)
			break;
		if (len > NAME_MAX || (len == 1 && s[0] == '.') || (len == 2 && s[0] == '.' && s[1] == '.')) {
			r = -EINVAL;
			break;
		}
		memcpy(name, s, len);
		name[len] = '\0';
		s += len;
		next = openat(dir, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0) {
			r = -errno;
			break;
		}
		close(dir);
		dir = next;
		if (fstat(dir, &st) < 0)
			r = -errno;
		else if (st.st_uid > max)
			r = 0;
	}
	close(dir);
	return r;
}
