/* SPDX-License-Identifier: MIT */
/* groupset: walking cgroup patterns and watching the walk's directories
 * with inotify. See groupset.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgpattern.h"
#include "cgroup.h"
#include "victim.h"
#include "config.h"
#include "fileio.h"
#include "groupset.h"

#define GROUPSET_EVENTS (IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)

int groupset_init(struct groupset *s, int rootfd, const char *mount, bool watch)
{
	memset(s, 0, sizeof(*s));
	s->rootfd = rootfd;
	s->mount = mount;
	s->inotify_fd = -1;
	if (watch) {
		s->inotify_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
		if (s->inotify_fd < 0)
			return -errno;
	}
	return 0;
}

void groupset_deinit(struct groupset *s)
{
	close_fd(&s->inotify_fd);
}

/* One walk: the path built so far in path (relative to the mount, "" at the
 * root) and the pattern's depth. */
struct walk {
	struct groupset *s;
	const char *pat;
	size_t depth;
	groupset_match_fn match;
	void *ctx;
	char path[CONFIG_PATH_MAX];
	int matches;
};

/* Opens mount + path (a directory) under the root. */
static int open_dir(const struct walk *w, int flags)
{
	char full[2 * CONFIG_PATH_MAX];

	snprintf(full, sizeof(full), "%s%s", w->s->mount, *w->path ? w->path : "/");
	return sysroot_openat(w->s->rootfd, full, flags | O_DIRECTORY | O_CLOEXEC);
}

/* Watches the directory being walked for groups coming and going. */
static void watch_dir(struct walk *w)
{
	char link[64];
	int fd, wd;

	if (w->s->inotify_fd < 0)
		return;
	fd = open_dir(w, O_PATH);
	if (fd < 0)
		return; /* gone meanwhile: its parent's watch reports that */
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	wd = inotify_add_watch(w->s->inotify_fd, link, GROUPSET_EVENTS);
	if (wd < 0) {
		w->s->watch_err = -errno;
		snprintf(w->s->watch_err_dir, sizeof(w->s->watch_err_dir), "%s", *w->path ? w->path : "/");
	} else {
		w->s->dirs_watched++;
	}
	close(fd);
}

static int walk_level(struct walk *w, size_t k);

/* Descends into child name of the current path, then comes back. */
static int descend(struct walk *w, size_t k, const char *name, size_t len)
{
	size_t at = strlen(w->path);
	int r;

	if (at + 1 + len + 1 > sizeof(w->path))
		return 0; /* longer than any path the daemon handles: not a group of ours */
	w->path[at] = '/';
	memcpy(w->path + at + 1, name, len);
	w->path[at + 1 + len] = '\0';
	r = walk_level(w, k + 1);
	w->path[at] = '\0';
	return r;
}

/* A literal component: one lookup. */
static int walk_literal(struct walk *w, size_t k)
{
	size_t len;
	const char *c = cgpattern_component(w->pat, k, &len);
	char name[CGPATTERN_COMPONENT_MAX + 1];
	struct stat st;
	int fd, r;

	memcpy(name, c, len);
	name[len] = '\0';
	fd = open_dir(w, O_PATH);
	if (fd < 0)
		return fd == -ENOENT || fd == -ENOTDIR ? 0 : fd;
	r = fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
	close(fd);
	if (r == -ENOENT || r == -ENOTDIR || (r == 0 && !S_ISDIR(st.st_mode)))
		return 0;
	return r < 0 ? r : descend(w, k, name, len);
}

/* A wildcard component: one listing of the current directory. */
static int walk_wildcard(struct walk *w, size_t k)
{
	struct dirent *e;
	int fd, r = 0;
	DIR *dir;

	fd = open_dir(w, O_RDONLY);
	if (fd < 0)
		return fd == -ENOENT || fd == -ENOTDIR ? 0 : fd;
	dir = fdopendir(fd);
	if (!dir) {
		r = -errno;
		close(fd);
		return r;
	}
	w->s->dirs_read++;
	{
		struct stat dst;

		if (fstat(dirfd(dir), &dst) == 0 && dst.st_uid >= w->s->listed_uid_max) {
			w->s->listed_uid_max = dst.st_uid;
			snprintf(w->s->listed_uid_dir, sizeof(w->s->listed_uid_dir), "%s", *w->path ? w->path : "/");
		}
	}
	while (r >= 0 && (errno = 0, e = readdir(dir)) != NULL) {
		struct stat st;

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (e->d_type == DT_UNKNOWN) {
			if (fstatat(dirfd(dir), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode))
				continue;
		} else if (e->d_type != DT_DIR) {
			continue;
		}
		if (cgpattern_match_component(w->pat, k, e->d_name))
			r = descend(w, k, e->d_name, strlen(e->d_name));
	}
	if (r >= 0 && errno && errno != ENOENT)
		r = -errno;
	closedir(dir);
	return r;
}

static int walk_level(struct walk *w, size_t k)
{
	int r;

	if (k == w->depth) {
		r = w->match(w->ctx, w->path);
		if (r < 0)
			return r;
		w->matches++;
		return 0;
	}
	watch_dir(w);
	return cgpattern_literal(w->pat, k) ? walk_literal(w, k) : walk_wildcard(w, k);
}

int groupset_walk(struct groupset *s, const char *pat, groupset_match_fn match, void *ctx)
{
	struct walk w = { .s = s, .pat = pat, .depth = cgpattern_depth(pat), .match = match, .ctx = ctx };
	int r;

	r = walk_level(&w, 0);
	return r < 0 ? r : w.matches;
}

bool groupset_drain(struct groupset *s)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	bool any = false;

	if (s->inotify_fd < 0)
		return false;
	/* what the events say does not matter: any of them means walk again */
	while (read(s->inotify_fd, buf, sizeof(buf)) > 0)
		any = true;
	return any;
}

/* What a report walk counts. */
struct report {
	const struct config *cfg;
	FILE *out;
	size_t n, outside;
	char first[CONFIG_PATH_MAX];
};

static int report_match(void *ctx, const char *path)
{
	struct report *r = ctx;

	if (!victim_cgroup_in_scope(path, r->cfg->scope)) {
		r->outside++;
		return 0;
	}
	if (!r->n)
		snprintf(r->first, sizeof(r->first), "%s", path);
	if (r->n < GROUPSET_REPORT_LIST)
		fprintf(r->out, "  %s\n", path);
	r->n++;
	return 0;
}

/* "a, b": the tiers with pattern pat */
static void print_tiers(FILE *out, const struct config *cfg, const char *pat)
{
	size_t i, n = 0;

	for (i = 0; i < cfg->n_tiers; i++)
		if (strcmp(cfg->tiers[i].cgroup, pat) == 0)
			fprintf(out, "%s%s", n++ ? ", " : "", cfg->tiers[i].name);
}

/* One pattern's part of the report: its matches, those outside the scope,
 * and a wildcard level its owner could fill. The matches, or -errno. */
static int report_pattern(struct groupset *s, const struct config *cfg, const char *pat, FILE *out,
			  char *first, size_t first_size)
{
	struct report rep = { .cfg = cfg, .out = out };
	int r;

	fprintf(out, "cgroup = %s (tier ", pat);
	print_tiers(out, cfg, pat);
	fprintf(out, "), groups matching now under %s:\n", s->mount);
	s->listed_uid_max = 0;
	r = groupset_walk(s, pat, report_match, &rep);
	if (r < 0) {
		fprintf(out, "  cannot list them: %s\n", strerror(-r));
		return r;
	}
	if (rep.n > GROUPSET_REPORT_LIST)
		fprintf(out, "  ... and %zu more\n", rep.n - GROUPSET_REPORT_LIST);
	fprintf(out, "  %zu group%s%s", rep.n, rep.n == 1 ? "" : "s",
		rep.n ? "" : " (the tiers are armed when a matching group appears)");
	if (rep.outside)
		fprintf(out, "; %zu more outside scope %s, not watched", rep.outside, cfg->scope);
	fprintf(out, "\n");
	if (s->listed_uid_max > cfg->trusted_uid_max)
		fprintf(out, "  warning: %s is owned by uid %u (above trusted_uid_max): its owner can make groups that "
			"match, up to max_groups, so that groups made later are not watched\n",
			s->listed_uid_dir, (unsigned)s->listed_uid_max);
	if (first)
		snprintf(first, first_size, "%s", rep.first);
	return (int)rep.n;
}

int groupset_report(int rootfd, const struct config *cfg, FILE *out, char (*first)[CONFIG_PATH_MAX])
{
	char mount[CONFIG_PATH_MAX];
	struct groupset s;
	size_t i, total = 0;
	int r = 0;

	if (!config_cgroup_tier_count(cfg))
		return 0;
	r = cgroup_mount(rootfd, mount, sizeof(mount));
	if (r < 0) {
		fprintf(out, "tiers with a cgroup pattern need the cgroup2 hierarchy: %s\n",
			r == -ENOENT ? "none is mounted" : strerror(-r));
		return r;
	}
	(void)groupset_init(&s, rootfd, mount, false);
	for (i = 0; i < cfg->n_tiers && r >= 0; i++) {
		if (first)
			first[i][0] = '\0';
		if (!config_cgroup_first(cfg, i))
			continue; /* no pattern, or one reported already */
		r = report_pattern(&s, cfg, cfg->tiers[i].cgroup, out, first ? first[i] : NULL, sizeof(first[0]));
		total += r > 0 ? (size_t)r : 0;
	}
	if (r >= 0 && total > cfg->max_groups)
		fprintf(out, "warning: %zu groups match, max_groups = %u: only the first %u found are watched\n", total,
			cfg->max_groups, cfg->max_groups);
	groupset_deinit(&s);
	return r < 0 ? r : 0;
}
