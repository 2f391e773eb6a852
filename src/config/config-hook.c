/* SPDX-License-Identifier: MIT */
/* config-hook: the hook checks (on_kill, pre_kill) that ask the system: is the program safe
 * to run with the daemon's trust (owner and mode of it, of every directory
 * and symlink on its path: trustpath.h), and who is on_kill_user (the user
 * database, its groups); and metrics_file's directory, by the same rule. */
#include <ctype.h>
#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "coldtext.h"
#include "config.h"
#include "trustpath.h"

/* The hook programs (on_kill, pre_kill) run with the daemon's trust, so
 * nobody else may be able to change them, nor what their path leads to:
 * trustpath.h's rule, for the path as written and every symlink on it. The
 * daemon opens them the same way and runs what it opened (hook.h). */
COLD_TEXT int config_check_program(const char *key, const char *path, char *why, size_t whylen)
{
	int fd = trust_open(path, TRUST_PROGRAM, key, why, whylen);

	if (fd < 0)
		return -EINVAL;
	close(fd);
	return 0;
}

COLD_TEXT int config_check_metrics_dir(const char *file, char *why, size_t whylen)
{
	const char *base;
	int fd = trust_open_parent(file, "metrics_file", &base, why, whylen);

	if (fd == -ENOENT)
		return 0; /* checked at each write, when it exists */
	if (fd < 0)
		return -EINVAL;
	close(fd);
	return 0;
}

COLD_TEXT int config_resolve_user(const char *spec, struct config_user *u, char *why, size_t whylen)
{
	char buf[16384];
	struct passwd pw, *found = NULL;
	const char *s;
	int r, n = CONFIG_GROUPS_MAX;

	for (s = spec; isdigit((unsigned char)*s); s++)
		;
	if (*spec && !*s) {
		char *end;
		unsigned long uid;

		errno = 0;
		uid = strtoul(spec, &end, 10);
		if (errno || uid >= (uid_t)-1) {
			snprintf(why, whylen, "on_kill_user: uid %s is out of range", spec);
			return -EINVAL;
		}
		r = getpwuid_r((uid_t)uid, &pw, buf, sizeof(buf), &found);
	} else {
		r = getpwnam_r(spec, &pw, buf, sizeof(buf), &found);
	}
	if (r == ENOMEM) {
		snprintf(why, whylen, "on_kill_user: out of memory looking up \"%s\"", spec);
		return -ENOMEM;
	}
	if (r != 0 && r != ENOENT && r != ESRCH && r != EBADF && r != EPERM) {
		snprintf(why, whylen, "on_kill_user: cannot look up \"%s\": %s", spec, strerror(r));
		return -EINVAL;
	}
	if (!found) {
		snprintf(why, whylen, "on_kill_user: no such user \"%s\" in the user database", spec);
		return -EINVAL;
	}
	if (pw.pw_uid == 0) {
		snprintf(why, whylen, "on_kill_user: \"%s\" is uid 0; the hook must not run as root (a uid-0 process "
			 "regains capabilities at exec)", spec);
		return -EINVAL;
	}
	if (strlen(pw.pw_name) >= sizeof(u->name)) {
		snprintf(why, whylen, "on_kill_user: the user name of \"%s\" is too long", spec);
		return -EINVAL;
	}
	if (getgrouplist(pw.pw_name, pw.pw_gid, u->groups, &n) < 0) {
		snprintf(why, whylen, "on_kill_user: %s is in more than %d groups", pw.pw_name, CONFIG_GROUPS_MAX);
		return -EINVAL;
	}
	strcpy(u->name, pw.pw_name);
	u->uid = pw.pw_uid;
	u->gid = pw.pw_gid;
	u->n_groups = (size_t)n;
	return 0;
}
