/* SPDX-License-Identifier: MIT */
/* daemon-status: the daemon's side of `psi-lmkd --status` and of the
 * metrics file. It fills a status snapshot from the running daemon (the
 * watched file and available memory read now, the counters and the kill
 * history as they are, and with --candidates one dry choice per tier), and
 * hands it to status.c or metrics.c to format. Nothing here kills or logs a
 * kill; the candidates are chosen exactly as a kill would choose them. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/stat.h>

#include "control.h"
#include "daemon-private.h"
#include "event.h"
#include "fileio.h"
#include "memory.h"
#include "metrics.h"
#include "status.h"

/* One dry choice for tier i in env, into t's candidate. */
static void fill_candidate(struct daemon *d, const struct killer_env *env, size_t i, struct status_tier *t,
			   struct kill_pick *p)
{
	struct status_candidate *c = &t->cand;

	if (d->cfg.tiers[i].warn)
		return; /* kills nobody */
	t->has_candidate = true;
	if (!p) {
		c->err = -ENOMEM;
		return;
	}
	memset(p, 0, sizeof(*p));
	c->err = killer_preview(&d->killer, env, i, p);
	if (c->err)
		return;
	c->found = p->pick.found;
	c->victim = p->pick.best;
	c->candidates = p->pick.candidates;
	c->owner_pass = p->owner_pass;
	c->first_pid = p->first.pid;
	snprintf(c->first_comm, sizeof(c->first_comm), "%s", p->first.comm);
	if (c->victim.has_cgroup && !c->victim.cgroup_unknown)
		history_display_path(c->cgroup, sizeof(c->cgroup), c->victim.cgroup);
}

static void fill_candidates(struct daemon *d, struct status_snapshot *s)
{
	struct kill_pick *p = malloc(sizeof(*p));
	char dir[2 * CONFIG_PATH_MAX];
	struct killer_env env;
	size_t i;

	killer_env_of(d, &env);
	for (i = 0; i < s->n_tiers; i++)
		if (!*d->cfg.tiers[i].cgroup)
			fill_candidate(d, &env, i, &s->tiers[i], p);
	for (i = 0; i < s->n_instances; i++) {
		struct status_tier *t = &s->instances[i];
		struct group *g = d->groups.slot[t->slot];

		daemon_group_env(d, g, &env, dir, sizeof(dir));
		fill_candidate(d, &env, (size_t)(t->cfg - d->cfg.tiers), t, p);
	}
	free(p);
}

/* One status entry per watched group and tier (s->instances, malloc'ed). */
static void fill_instances(struct daemon *d, struct status_snapshot *s, uint64_t now)
{
	size_t slot, i, n = 0;

	s->has_groups = d->groups.active;
	s->groups_watched = d->groups.n;
	s->max_groups = d->cfg.max_groups;
	s->groups_not_watched = d->groups.not_watched;
	for (slot = 0; slot < d->groups.n_slots; slot++)
		if (d->groups.slot[slot])
			n += (size_t)__builtin_popcount(d->groups.slot[slot]->tiers);
	s->instances = n ? calloc(n, sizeof(*s->instances)) : NULL;
	if (!s->instances)
		return;
	for (slot = 0; slot < d->groups.n_slots; slot++) {
		const struct group *g = d->groups.slot[slot];

		for (i = 0; g && i < d->cfg.n_tiers; i++) {
			struct status_tier *t = &s->instances[s->n_instances];

			if (!(g->tiers & (1u << i)))
				continue;
			t->cfg = &d->cfg.tiers[i];
			t->group = g->name;
			t->slot = slot;
			t->source = g->lost ? "none" : tier_source_name(g->watch.tiers[i].source);
			t->counters = g->tiers_state[i];
			if (t->counters.last_kill_us)
				t->last_kill_ago_s = (now - t->counters.last_kill_us) / 1000000;
			s->n_instances++;
		}
	}
}

static void snapshot_free(struct status_snapshot *s)
{
	free(s->instances);
	free(s);
}

/* read_now: read the pressure file and available memory (the status query;
 * the metrics show counters only, and must not read the watched file on
 * every wakeup) */
static void fill_snapshot(struct daemon *d, struct status_snapshot *s, bool read_now, bool candidates)
{
	uint64_t now = event_now_us();
	char buf[512];
	size_t i;

	memset(s, 0, sizeof(*s));
	s->version = VERSION;
	s->pid = d->self;
	s->uptime_s = (now - d->ctl.start_us) / 1000000;
	s->dry_run = daemon_dry_run(d);
	s->armed = d->watch_armed;
	s->kill_in_flight = d->killer.kill.active;
	s->inflight_pid = d->killer.kill.victim.pid;
	snprintf(s->inflight_comm, sizeof(s->inflight_comm), "%s", d->killer.kill.victim.comm);
	s->pressure = d->cfg.pressure;
	s->scope = d->cfg.scope;
	s->victim_order = victim_order_name(d->cfg.victim_order);
	s->oom_killer_daemon = d->cfg.oom_killer_daemon;
	s->memory_cgroup = d->memory_cgroup;
	if (read_now) {
		s->psi_err = (int)read_file_at(d->rootfd, d->cfg.pressure + strspn(d->cfg.pressure, "/"), buf, sizeof(buf));
		s->psi_err = s->psi_err < 0 ? s->psi_err : psi_parse(buf, &s->psi) < 0 ? -EBADMSG : 0;
		s->mem_err = memory_read(d->rootfd, d->memory_cgroup, &s->mem);
	}
	if (read_now)
		daemon_count_misses(d, true);
	s->kills_total = d->killer.kills_total;
	s->kernel_oom_kills = d->oomk.missed;
	s->has_moom = d->moom.active;
	s->moom_kills_pressure = d->moom.kills_pressure;
	s->moom_kills_swap = d->moom.kills_swap;
	s->prekill = d->killer.prekill;
	s->has_prekill = *d->cfg.pre_kill || s->prekill.runs;
	s->inflight_pre = d->killer.kill.active && d->killer.kill.pre;
	s->n_tiers = d->cfg.n_tiers;
	for (i = 0; i < s->n_tiers; i++) {
		struct status_tier *t = &s->tiers[i];

		t->cfg = &d->cfg.tiers[i];
		t->source = d->watch_armed ? tier_source_name(d->watch.tiers[i].source) : "none";
		t->counters = d->tiers[i];
		if (t->counters.last_kill_us)
			t->last_kill_ago_s = (now - t->counters.last_kill_us) / 1000000;
	}
	fill_instances(d, s, now);
	s->history = &d->killer.history;
	if (candidates)
		fill_candidates(d, s);
}

/* The answer to one request: "OK\n" and the status, or "ERR ...\n". */
static void answer(struct daemon *d, int fd, const struct control_request *req, uint64_t deadline_us)
{
	struct status_snapshot *s = malloc(sizeof(*s));
	char *buf = NULL;
	size_t len = 0;
	FILE *f = s ? open_memstream(&buf, &len) : NULL;
	int r;

	if (!f) {
		control_send(fd, "ERR out of memory\n", 18, deadline_us);
		free(s);
		return;
	}
	fill_snapshot(d, s, true, req->candidates);
	fputs("OK\n", f);
	if (req->json)
		status_format_json(s, f);
	else
		status_format_text(s, f);
	if (fclose(f) != 0) {
		control_send(fd, "ERR out of memory\n", 18, deadline_us);
	} else {
		r = control_send(fd, buf, len, deadline_us);
		if (r < 0)
			log_info(&d->log, "control: the client went away before it had the status (%s)", strerror(-r));
	}
	free(buf);
	snapshot_free(s);
}

/* A few connections per wakeup at most, and CONTROL_IO_TIMEOUT_MS for all
 * of them: the loop has other work (a kill may be due in this wakeup); the
 * rest wait in the listen queue for the next one. */
#define CTL_ACCEPT_MAX 4

void daemon_ctl_event(struct daemon *d)
{
	static const char bad[] = "ERR bad request (expected \"status [candidates] [json]\")\n";
	uint64_t deadline = control_now_us() + CONTROL_IO_TIMEOUT_MS * 1000ULL;
	struct control_request req;
	struct control_peer peer;
	int i, fd, r;

	for (i = 0; i < CTL_ACCEPT_MAX && control_now_us() < deadline; i++) {
		fd = control_accept(d->ctl.fd, geteuid(), &peer);
		if (fd == -EAGAIN)
			return;
		if (fd == -EPERM) {
			log_warn(&d->log, "control: refused a request from uid %u (pid %d): only root and uid %u may query "
				 "psi-lmkd", (unsigned)peer.uid, (int)peer.pid, (unsigned)geteuid());
			continue;
		}
		if (fd < 0) {
			log_warn(&d->log, "control: accept: %s", strerror(-fd));
			return;
		}
		r = control_read_request(fd, &req, deadline);
		if (r == -ETIMEDOUT)
			log_info(&d->log, "control: pid %d sent no request in time; closed", (int)peer.pid);
		else if (r < 0)
			control_send(fd, bad, sizeof(bad) - 1, deadline);
		else
			answer(d, fd, &req, deadline);
		close(fd);
	}
}

void daemon_ctl_open(struct daemon *d, bool enable)
{
	char why[256];
	struct stat st;
	int fd, r;

	d->ctl.start_us = event_now_us();
	daemon_ctl_metrics(d);
	if (!enable || !*d->cfg.control_socket)
		return;
	fd = control_listen(d->cfg.control_socket, why, sizeof(why));
	if (fd < 0) {
		log_warn(&d->log, "no control socket (psi-lmkd --status will not work): %s", why);
		return;
	}
	r = event_add(d->epfd, fd, EPOLLIN, TAG(TAG_CONTROL, 0));
	if (r < 0) {
		log_warn(&d->log, "no control socket: cannot watch it: %s", strerror(-r));
		close(fd);
		unlink(d->cfg.control_socket);
		return;
	}
	d->ctl.fd = fd;
	d->ctl.ino = lstat(d->cfg.control_socket, &st) == 0 ? st.st_ino : 0;
	snprintf(d->ctl.path, sizeof(d->ctl.path), "%s", d->cfg.control_socket);
	log_info(&d->log, "control socket %s (psi-lmkd --status)", d->ctl.path);
}

void daemon_ctl_close(struct daemon *d)
{
	if (d->ctl.fd < 0)
		return;
	control_unlink(d->ctl.path, d->ctl.ino);
	close(d->ctl.fd);
	d->ctl.fd = -1;
}

void daemon_ctl_metrics(struct daemon *d)
{
	struct status_snapshot *s;
	char why[1024] = "out of memory", *buf = NULL;
	size_t len = 0;
	uint64_t sig;
	FILE *f;
	int r;

	if (!*d->cfg.metrics_file)
		return;
	s = malloc(sizeof(*s));
	if (!s)
		return;
	fill_snapshot(d, s, false, false);
	sig = metrics_signature(s);
	if (d->ctl.metrics_written && sig == d->ctl.metrics_sig) {
		snapshot_free(s);
		return;
	}
	f = open_memstream(&buf, &len);
	if (f) {
		metrics_format(s, f);
		r = fclose(f) == 0 ? metrics_write_file(d->cfg.metrics_file, buf, len, why, sizeof(why)) : -ENOMEM;
	} else {
		r = -ENOMEM;
	}
	if (r < 0 && r != d->ctl.metrics_err)
		log_warn(&d->log, "metrics_file %s not written: %s", d->cfg.metrics_file, why);
	d->ctl.metrics_err = r < 0 ? r : 0;
	d->ctl.metrics_written = r == 0;
	d->ctl.metrics_sig = sig;
	free(buf);
	snapshot_free(s);
}
