/* cgroup: cgroup2 helpers for kill_cgroup and --probe. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* TEMPORARY (replaced by the misc branch's walker) */
static int subtree(int rootfd, const char *mount, const char *cg, pid_t *pids, size_t max, size_t *n, unsigned depth)
{
	char path[4096];
	DIR *dir;
	struct dirent *de;
	int r, fd;

	if (depth == 0)
		return -ELOOP;
	r = cgroup_read_procs(rootfd, mount, cg, pids + *n, max - *n);
	if (r < 0)
		return r;
	*n += (size_t)r;
	group_path(path, sizeof(path), mount, cg, ".");
	fd = sysroot_openat(rootfd, path, O_RDONLY | O_DIRECTORY);
	if (fd < 0)
		return fd;
	dir = fdopendir(fd);
	if (!dir) {
		close(fd);
		return -errno;
	}
	while (r >= 0 && (de = readdir(dir))) {
		char child[4096];

		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		snprintf(child, sizeof(child), "%s/%s", strcmp(cg, "/") == 0 ? "" : cg, de->d_name);
		r = subtree(rootfd, mount, child, pids, max, n, depth - 1);
	}
	closedir(dir);
	return r < 0 ? r : 0;
}

int cgroup_read_subtree_procs(int rootfd, const char *mount, const char *cg, pid_t *pids, size_t max,
			      unsigned max_depth)
{
	size_t n = 0;
	int r = subtree(rootfd, mount, cg, pids, max, &n, max_depth);

	return r < 0 ? r : (int)n;
}

int cgroup_kill(int rootfd, const char *mount, const char *cg)
{
	char path[4096];

	group_path(path, sizeof(path), mount, cg, "cgroup.kill");
	return write_file_at(rootfd, path + (path[0] == '/'), "1");
}
