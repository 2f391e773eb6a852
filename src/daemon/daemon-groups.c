/* SPDX-License-Identifier: MIT */
/* daemon-groups: the tiers with a cgroup pattern (`cgroup = PATTERN`). Each
 * group that matches a pattern gets one instance of the tiers whose
 * pattern it matches: a watch on its memory.pressure (kernel triggers or
 * the userspace monitor, like the main watch), its own counters, and
 * decisions that choose victims only inside it, with available memory
 * from its memory.max when it has one.
 *
 * Groups are found by walking the patterns (groupset.h) at start, at each
 * reload, and after any change inotify reports in the directories above
 * the matches (a mkdir, rmdir or rename there), or after a group's file
 * failed. The walk runs after the wakeup's batch, so a slot is never
 * reused while events of its old fds may still be in the batch, and every
 * fd carries its group's serial in the epoll tag. At most max_groups are
 * watched; matches beyond that are logged, never silently dropped. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "cgpattern.h"
#include "daemon-private.h"
#include "escape.h"
#include "event.h"
#include "memory.h"

/* Adds the fds of the group in slot to the epoll set, tagged with its serial. */
static void group_fds_add(struct daemon *d, size_t slot)
{
	const struct group *g = d->groups.slot[slot];
	int r = daemon_watch_fds(d, &g->watch, true, GTAG(TAG_GTIER, g->serial, slot, 0),
				 GTAG(TAG_GSENTINEL, g->serial, slot, 0), GTAG(TAG_GSAMPLE, g->serial, slot, 0));

	if (r < 0)
		log_err(&d->log, "cgroup %s: cannot watch every fd of its tiers: %s", g->path, strerror(-r));
}

/* Closes a group's watch (its counters stay until the slot is freed). */
static void group_disarm(struct daemon *d, struct group *g)
{
	if (g->lost)
		return;
	(void)daemon_watch_fds(d, &g->watch, false, 0, 0, 0);
	watch_close(&g->watch);
	g->lost = true;
}

static void group_free(struct daemon *d, size_t slot)
{
	struct group *g = d->groups.slot[slot];

	if (!g)
		return;
	group_disarm(d, g);
	free(g);
	d->groups.slot[slot] = NULL;
	d->groups.n--;
}

/* "a (kernel), b (userspace)": the tiers armed on a group */
static const char *tier_words(char *buf, size_t size, const struct daemon *d, const struct watch *w)
{
	size_t i, o = 0;

	buf[0] = '\0';
	for (i = 0; i < d->cfg.n_tiers && o < size; i++)
		if (watch_tier_has_psi(&w->tiers[i])) {
			int n = snprintf(buf + o, size - o, "%s%s (%s)", o ? ", " : "", d->cfg.tiers[i].name,
					 tier_source_name(w->tiers[i].source));

			o = n < 0 ? size : o + (size_t)n;
		}
	return buf;
}

/* Arms the tiers of mask on the group at path, in a free slot. 0, -ENOENT
 * (it went before it could be armed), -ENOSPC (no slot) or -errno. */
static int group_arm(struct daemon *d, const char *path, uint32_t mask, bool detailed)
{
	char file[2 * CONFIG_PATH_MAX], err[512], words[512];
	const struct watch_target target = { .path = file, .tiers = mask };
	struct mem_info mi;
	struct group *g;
	size_t slot, n;
	int r;

	for (slot = 0; slot < d->groups.n_slots && d->groups.slot[slot]; slot++)
		;
	if (slot == d->groups.n_slots)
		return -ENOSPC;
	n = escape_bytes(NULL, 0, path, strlen(path), ESCAPE_NAME, NULL) + 1;
	g = calloc(1, sizeof(*g) + n);
	if (!g) {
		log_err(&d->log, "cgroup %s: cannot arm its tiers: out of memory", path);
		return -ENOMEM;
	}
	snprintf(g->path, sizeof(g->path), "%s", path);
	escape_bytes(g->name, n, path, strlen(path), ESCAPE_NAME, NULL);
	snprintf(file, sizeof(file), "%s%s/memory.pressure", d->cg2_mount, path);
	r = watch_open_target(&g->watch, d->rootfd, &d->cfg, &target, d->cap_sys_resource, d->cfg.idle_poll_us, d->ops,
			      err, sizeof(err));
	if (r < 0) {
		if (r != -ENOENT)
			log_err(&d->log, "cgroup %s: cannot arm its tiers: %s", path, err);
		free(g);
		return r;
	}
	snprintf(file, sizeof(file), "%s%s", d->cg2_mount, path);
	r = memory_read_cgroup(d->rootfd, file, &mi);
	g->has_memory = r == 0 || r == -ENODATA;
	g->tiers = mask;
	g->serial = ++d->groups.serial;
	g->seen = true;
	d->groups.slot[slot] = g;
	d->groups.n++;
	d->groups.arms++;
	group_fds_add(d, slot);
	watch_arm_timer(&g->watch, event_now_us());
	if (detailed)
		daemon_log_watch(d, &g->watch, g->path);
	log_info(&d->log, "cgroup %s watched: tiers %s; available memory %s", path,
		 tier_words(words, sizeof(words), d, &g->watch),
		 g->has_memory ? "from its memory.max" : "system-wide (it has no memory.max)");
	return 0;
}

/* One walk's state: which pattern's tiers, how many armed and left out. */
struct walk_ctx {
	struct daemon *d;
	uint32_t mask;
	size_t armed, left_out;
	char first_left_out[CONFIG_PATH_MAX];
	bool detailed; /* the first group armed by this start logs its tiers in full */
};

static int on_match(void *ctx, const char *path)
{
	struct walk_ctx *c = ctx;
	struct daemon *d = c->d;
	uint32_t mask = c->mask;
	size_t slot;
	int r;

	if (!victim_cgroup_in_scope(path, d->cfg.scope))
		return 0; /* matches the pattern, but lies outside the daemon's scope */
	for (slot = 0; slot < d->groups.n_slots; slot++) {
		struct group *g = d->groups.slot[slot];

		if (!g || strcmp(g->path, path) != 0)
			continue;
		if (!g->lost && (g->tiers & mask) == mask) {
			g->seen = true;
			return 0;
		}
		/* lost (its file failed) and still there, or matched by a second
		 * pattern too: a fresh instance with every tier that applies */
		if (!g->lost)
			mask |= g->tiers;
		group_free(d, slot);
		break;
	}
	r = group_arm(d, path, mask, c->detailed);
	if (r == 0) {
		c->armed++;
		c->detailed = false;
	} else if (r == -ENOSPC && !c->left_out++) {
		snprintf(c->first_left_out, sizeof(c->first_left_out), "%s", path);
	}
	return 0;
}

/* Walks every pattern; arms what is new, disarms what went. */
static void walk(struct daemon *d, bool detailed)
{
	struct walk_ctx c = { .d = d, .detailed = detailed };
	uint64_t t0 = event_now_us();
	size_t i, gone = 0;
	int r, err = 0;

	d->groups.walk = false;
	d->groups.walks++;
	d->groups.set.dirs_read = d->groups.set.dirs_watched = 0;
	for (i = 0; i < d->groups.n_slots; i++)
		if (d->groups.slot[i])
			d->groups.slot[i]->seen = false;
	for (i = 0; i < d->cfg.n_tiers; i++) {
		if (!config_cgroup_first(&d->cfg, i))
			continue;
		c.mask = config_cgroup_tiers(&d->cfg, d->cfg.tiers[i].cgroup);
		r = groupset_walk(&d->groups.set, d->cfg.tiers[i].cgroup, on_match, &c);
		if (r < 0 && !err) {
			err = r;
			if (r != d->groups.walk_err)
				log_err(&d->log, "cannot list the groups matching %s: %s; groups already watched stay armed",
					d->cfg.tiers[i].cgroup, strerror(-r));
		}
	}
	d->groups.walk_err = err;
	for (i = 0; i < d->groups.n_slots; i++) {
		struct group *g = d->groups.slot[i];

		if (!g || g->seen || (err && !g->lost))
			continue;
		log_info(&d->log, "cgroup %s is gone: its tiers are disarmed", g->path);
		d->groups.losses++;
		gone++;
		group_free(d, i);
	}
	if (c.left_out && c.left_out != d->groups.not_watched)
		log_err(&d->log, "max_groups = %u reached: %zu matching groups are not watched (the first: %s); raise "
			"max_groups or narrow the patterns", d->cfg.max_groups, c.left_out, c.first_left_out);
	d->groups.not_watched = c.left_out;
	if (d->groups.set.watch_err)
		log_warn(&d->log, "cannot watch %s for new groups (inotify: %s): groups created there are found only at "
			 "the next change elsewhere, a reload or a restart", d->groups.set.watch_err_dir,
			 strerror(-d->groups.set.watch_err));
	d->groups.set.watch_err = 0;
	d->groups.last_walk_us = event_now_us() - t0;
	if (c.armed)
		d->up.idle_clock_update(d); /* a new group may need safety samples the clock does not take yet */
	log_debug(&d->log, "groups walked in %" PRIu64 " us: %zu watched, %zu new, %zu gone, %zu directories listed, "
		  "%zu watched for changes", d->groups.last_walk_us, d->groups.n, c.armed, gone, d->groups.set.dirs_read,
		  d->groups.set.dirs_watched);
}

int daemon_groups_start(struct daemon *d)
{
	struct daemon_groups *gs = &d->groups;
	uint32_t serial = gs->serial; /* never reused: an event of a group of an earlier start is stale */
	size_t i;
	int r;

	memset(gs, 0, sizeof(*gs));
	gs->serial = serial;
	gs->set.inotify_fd = -1;
	gs->active = config_cgroup_tier_count(&d->cfg) > 0;
	if (!gs->active)
		return 0;
	if (!*d->cg2_mount) {
		r = d->cg2_err ? d->cg2_err : -ENOENT;
		log_err(&d->log, "tiers with a cgroup pattern need the cgroup2 hierarchy: %s",
			r == -ENOENT ? "none is mounted" : strerror(-r));
		gs->active = false;
		return r;
	}
	gs->slot = calloc(d->cfg.max_groups, sizeof(struct group *));
	if (!gs->slot) {
		log_err(&d->log, "out of memory for %u group slots", d->cfg.max_groups);
		gs->active = false;
		return -ENOMEM;
	}
	gs->n_slots = d->cfg.max_groups;
	r = groupset_init(&gs->set, d->rootfd, d->cg2_mount, true);
	if (r < 0) {
		log_warn(&d->log, "cannot watch for new groups (inotify_init1: %s): groups are found at start and at each "
			 "reload only", strerror(-r));
		groupset_deinit(&gs->set);
		(void)groupset_init(&gs->set, d->rootfd, d->cg2_mount, false);
	} else if ((r = event_add(d->epfd, gs->set.inotify_fd, EPOLLIN, TAG(TAG_GROUPS, 0))) < 0) {
		log_err(&d->log, "cannot watch for new groups: %s", strerror(-r));
	}
	for (i = 0; i < d->cfg.n_tiers; i++)
		if (config_cgroup_first(&d->cfg, i))
			log_info(&d->log, "tiers with cgroup = %s run once per matching group%s%s", d->cfg.tiers[i].cgroup,
				 strcmp(d->cfg.scope, "/") ? " inside scope " : "", strcmp(d->cfg.scope, "/") ? d->cfg.scope : "");
	gs->set.listed_uid_max = 0;
	walk(d, true);
	log_notice(&d->log, "%zu groups watched (at most %u), found in %" PRIu64 " us", gs->n, d->cfg.max_groups,
		   gs->last_walk_us);
	if (gs->set.listed_uid_max > d->cfg.trusted_uid_max)
		log_warn(&d->log, "%s is owned by uid %u (above trusted_uid_max) and a cgroup pattern lists it: its owner "
			 "can make matching groups up to max_groups, so that groups made later are not watched",
			 gs->set.listed_uid_dir, (unsigned)gs->set.listed_uid_max);
	return 0;
}

void daemon_groups_stop(struct daemon *d)
{
	struct daemon_groups *gs = &d->groups;
	size_t i;

	for (i = 0; i < gs->n_slots; i++)
		group_free(d, i);
	free(gs->slot);
	gs->slot = NULL;
	gs->n_slots = 0;
	if (gs->set.inotify_fd >= 0)
		event_del(d->epfd, gs->set.inotify_fd);
	groupset_deinit(&gs->set);
	gs->active = false;
}

void daemon_groups_reload(struct daemon *d, const char (*old_names)[CONFIG_NAME_MAX + 1], size_t old_n)
{
	struct daemon_groups old = d->groups;
	size_t s, o, i, j;
	int r;

	for (o = 0; o < old.n_slots; o++)
		if (old.slot[o])
			group_disarm(d, old.slot[o]);
	if (old.set.inotify_fd >= 0)
		event_del(d->epfd, old.set.inotify_fd);
	groupset_deinit(&old.set);
	r = daemon_groups_start(d); /* starts from a clean set, the serial aside */
	if (r < 0)
		log_err(&d->log, "reload: the tiers with a cgroup pattern are not armed");
	/* the same group and tier name: the counters go on */
	for (s = 0; s < d->groups.n_slots; s++) {
		struct group *g = d->groups.slot[s];

		for (o = 0; g && o < old.n_slots; o++) {
			const struct group *og = old.slot[o];

			if (!og || strcmp(og->path, g->path) != 0)
				continue;
			for (i = 0; i < d->cfg.n_tiers; i++)
				for (j = 0; j < old_n; j++)
					if ((g->tiers & (1u << i)) && (og->tiers & (1u << j)) &&
					    strcmp(d->cfg.tiers[i].name, old_names[j]) == 0)
						tier_state_carry(&g->tiers_state[i], &og->tiers_state[j]);
			break;
		}
	}
	for (o = 0; o < old.n_slots; o++)
		free(old.slot[o]);
	free(old.slot);
}

/* Notes that tier i of group g fired. */
static void group_fired(struct daemon *d, struct group *g, size_t i, enum fire_reason why)
{
	g->tiers_state[i].events++;
	log_debug(&d->log, "tier %s in %s fired (PSI)", d->cfg.tiers[i].name, g->path);
	if (!g->fired[i])
		g->why[i] = why;
	g->fired[i] = true;
	g->pending = true;
}

/* The group's file failed (POLLERR, or a read error): most likely it was
 * removed. Disarmed now; the walk after this wakeup frees it, or arms it
 * again if a group of that name is back. */
static void group_lost(struct daemon *d, struct group *g, int err)
{
	log_debug(&d->log, "cgroup %s: its memory.pressure failed (%s)", g->path, err ? strerror(-err) : "POLLERR");
	group_disarm(d, g);
	d->groups.walk = true;
}

static void group_sample(struct daemon *d, struct group *g)
{
	bool hit[CONFIG_TIERS_MAX];
	size_t i;
	int r = watch_sample(&g->watch, event_now_us(), hit);

	if (r < 0) {
		group_lost(d, g, r);
		return;
	}
	for (i = 0; i < g->watch.n_tiers; i++)
		if (hit[i])
			group_fired(d, g, i, FIRE_PSI);
	watch_arm_timer(&g->watch, event_now_us());
}

void daemon_groups_event(struct daemon *d, uint64_t tag, uint32_t events)
{
	enum tag_kind kind = TAG_KIND(tag);
	size_t slot = GTAG_SLOT(tag), i = GTAG_TIER(tag);
	struct group *g;

	if (kind == TAG_GROUPS) {
		if (groupset_drain(&d->groups.set))
			d->groups.walk = true;
		return;
	}
	if (slot >= d->groups.n_slots || !(g = d->groups.slot[slot]) || g->lost ||
	    (g->serial & 0xffffffu) != TAG_GEN(tag))
		return; /* a group disarmed earlier in this wakeup, or by a reload */
	if (kind != TAG_GSAMPLE && (events & (EPOLLERR | EPOLLHUP))) {
		group_lost(d, g, 0);
		return;
	}
	switch (kind) {
	case TAG_GTIER:
		if (i >= g->watch.n_tiers)
			return;
		watch_kernel_event(&g->watch, i, event_now_us());
		group_fired(d, g, i, FIRE_PSI);
		watch_arm_timer(&g->watch, event_now_us());
		break;
	case TAG_GSENTINEL:
		watch_sentinel_event(&g->watch, event_now_us());
		group_sample(d, g);
		break;
	case TAG_GSAMPLE:
		if (event_timer_expired(g->watch.timer_fd))
			group_sample(d, g);
		break;
	default:
		break;
	}
}

void daemon_group_env(struct daemon *d, struct group *g, struct killer_env *env, char *dir, size_t size)
{
	killer_env_of(d, env);
	snprintf(dir, size, "%s%s", d->cg2_mount, g->path);
	env->scope = g->path;
	env->group = g->path;
	env->pressure = g->watch.path;
	env->memory_cgroup = g->has_memory ? dir : "";
	env->tiers = g->tiers_state;
	env->source = NULL; /* the lmkd registry knows no groups */
}

void daemon_groups_idle_tick(struct daemon *d, uint64_t now_us, uint64_t period_us)
{
	size_t s;

	for (s = 0; s < d->groups.n_slots; s++) {
		struct group *g = d->groups.slot[s];

		if (g && !g->lost && watch_idle_due(&g->watch, now_us, period_us))
			group_sample(d, g);
	}
}

uint64_t daemon_groups_idle_limit(const struct daemon *d)
{
	uint64_t limit = UINT64_MAX, l;
	size_t s;

	for (s = 0; s < d->groups.n_slots; s++) {
		const struct group *g = d->groups.slot[s];

		if (g && !g->lost && (l = watch_idle_limit_us(&g->watch)) < limit)
			limit = l;
	}
	return limit;
}

void daemon_groups_act(struct daemon *d)
{
	struct fired f[CONFIG_TIERS_MAX];
	struct killer_env env;
	char dir[2 * CONFIG_PATH_MAX];
	size_t s, i, n;

	for (s = 0; s < d->groups.n_slots; s++) {
		struct group *g = d->groups.slot[s];

		if (!g || !g->pending)
			continue;
		g->pending = false;
		for (i = n = 0; i < d->cfg.n_tiers; i++)
			if (g->fired[i]) {
				f[n].tier = i;
				f[n].why = g->why[i];
				n++;
				g->fired[i] = false;
			}
		if (g->lost || !n)
			continue;
		daemon_group_env(d, g, &env, dir, sizeof(dir));
		killer_act(&d->killer, &env, f, n);
	}
}

void daemon_groups_refresh(struct daemon *d)
{
	if (d->groups.active && d->groups.walk && !d->quit)
		walk(d, false);
}

uint64_t daemon_groups_fd_need(const struct daemon *d)
{
	/* the pressure file, the sampling timer, a sentinel, a trigger per tier */
	uint64_t per_group = 3 + config_cgroup_tier_count(&d->cfg);

	if (!d->groups.active)
		return 0;
	return 1 + (uint64_t)d->cfg.max_groups * per_group; /* and the inotify fd */
}

void daemon_groups_log_status(struct daemon *d)
{
	char path[4 * CONFIG_PATH_MAX + 1];
	size_t s, i;

	if (!d->groups.active)
		return;
	log_notice(&d->log, "status groups=%zu max_groups=%u not_watched=%" PRIu64 " armed_total=%" PRIu64
		   " gone_total=%" PRIu64 " walks=%" PRIu64, d->groups.n, d->cfg.max_groups, d->groups.not_watched,
		   d->groups.arms, d->groups.losses, d->groups.walks);
	for (s = 0; s < d->groups.n_slots; s++) {
		const struct group *g = d->groups.slot[s];

		if (!g)
			continue;
		log_escape_token(path, sizeof(path), g->path); /* a user may name a delegated group */
		for (i = 0; i < d->cfg.n_tiers; i++) {
			const struct tier_state *ts = &g->tiers_state[i];

			if (!(g->tiers & (1u << i)))
				continue;
			log_notice(&d->log, "status tier=%s group=%s armed=%s source=%s events=%" PRIu64 " deferred=%" PRIu64
				   " kills=%" PRIu64 " no_candidate=%" PRIu64 " gated=%" PRIu64 " scans=%" PRIu64,
				   d->cfg.tiers[i].name, path, g->lost ? "no" : "yes",
				   tier_source_name(g->watch.tiers[i].source), ts->events, ts->deferred, ts->kills,
				   ts->no_candidate, ts->gated, ts->scans);
		}
	}
}
