/* SPDX-License-Identifier: MIT */
/* mounts: /proc/self/mounts, read once and split into entries. See mounts.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"
#include "mounts.h"

/* /proc/self/mounts of a busy container host stays far below this */
#define MOUNTS_MAX 65536

int mounts_next(const char **pos, struct mount_entry *e)
{
	char line[4096];

	while (*pos && **pos) {
		size_t len = strcspn(*pos, "\n");

		/* one line at a time: sscanf's %s would run on into the next */
		snprintf(line, sizeof(line), "%.*s", (int)(len < sizeof(line) ? len : sizeof(line) - 1), *pos);
		*pos += len + ((*pos)[len] == '\n');
		if (sscanf(line, "%255s %1023s %63s %1023s", e->dev, e->dir, e->type, e->opts) == 4)
			return 1;
	}
	return 0;
}

int mounts_read(int rootfd, char **text)
{
	char *buf = malloc(MOUNTS_MAX);
	ssize_t n;

	*text = NULL;
	if (!buf)
		return -ENOMEM;
	n = read_file_at(rootfd, "proc/self/mounts", buf, MOUNTS_MAX);
	if (n < 0) {
		free(buf);
		return (int)n;
	}
	*text = buf;
	return 0;
}
