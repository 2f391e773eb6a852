/* config-hook: the on_kill checks that ask the system: is the program safe
 * to run with the daemon's trust (owner and mode of it and every directory
 * above it), and who is on_kill_user (the user database, its groups). */
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

#include "config.h"

static bool trusted_owner(uid_t uid, uid_t euid)
{
	return uid == 0 || uid == euid;
}

/* The on_kill program runs with the daemon's trust, so nobody else may be
 * able to change it: the file (symlinks resolved) and every directory above
 * it must belong to root or to psi-lmkd's own euid and must not be writable
 * by group or others. A directory that others may write is accepted only
 * with the sticky bit (like /tmp), where nobody can rename or remove an
 * entry they do not own; the entry below it is owned by root or us anyway,
 * as every component is checked. */
int config_check_program(const char *path, char *why, size_t whylen)
{
	char real[PATH_MAX], dir[PATH_MAX];
	uid_t euid = geteuid();
	struct stat st;
	char *slash;

	if (!realpath(path, real)) {
		snprintf(why, whylen, "on_kill: %s is not an executable file (%s)", path, strerror(errno));
		return -EINVAL;
	}
	if (stat(real, &st) < 0 || !S_ISREG(st.st_mode) || access(real, X_OK) < 0) {
		snprintf(why, whylen, "on_kill: %s is not an executable file", path);
		return -EINVAL;
	}
	if (!trusted_owner(st.st_uid, euid)) {
		snprintf(why, whylen, "on_kill: %s is owned by uid %u; it must belong to root or to psi-lmkd's uid %u",
			 real, (unsigned)st.st_uid, (unsigned)euid);
		return -EINVAL;
	}
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		snprintf(why, whylen, "on_kill: %s is writable by its group or others (mode %04o)", real,
			 (unsigned)(st.st_mode & 07777));
		return -EINVAL;
	}
	strcpy(dir, real);
	do {
		slash = strrchr(dir, '/');
		if (!slash)
			break; /* realpath() returns an absolute path */
		if (slash == dir)
			slash[1] = '\0'; /* "/" itself */
		else
			*slash = '\0';
		if (lstat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
			snprintf(why, whylen, "on_kill: cannot check the directory %s above %s", dir, real);
			return -EINVAL;
		}
		if (!trusted_owner(st.st_uid, euid)) {
			snprintf(why, whylen, "on_kill: the directory %s above %s is owned by uid %u; it must belong to "
				 "root or to psi-lmkd's uid %u", dir, real, (unsigned)st.st_uid, (unsigned)euid);
			return -EINVAL;
		}
		if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX)) {
			snprintf(why, whylen, "on_kill: the directory %s above %s is writable by its group or others "
				 "(mode %04o) and not sticky: they could replace the program", dir, real,
				 (unsigned)(st.st_mode & 07777));
			return -EINVAL;
		}
	} while (strcmp(dir, "/") != 0);
	return 0;
}

int config_resolve_user(const char *spec, struct config_user *u, char *why, size_t whylen)
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
