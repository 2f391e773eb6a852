/* daemon: the event loop and the decisions taken in it.
 *
 * One epoll set holds: a signalfd (TERM/INT quit, HUP reload, USR1 status),
 * one kernel trigger fd per tier (EPOLLPRI = fired, EPOLLERR = file gone),
 * and, while a kill is in flight, the victim's pidfd (readable = exited) and a
 * timerfd bounding the wait by kill_timeout. Only one kill is in flight at a
 * time; tier events that arrive meanwhile are counted, not acted on. When
 * several tiers fire in one wakeup, the most severe one (lowest band floor)
 * acts. The daemon never exits because there is nothing to kill. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/signalfd.h>

#include "caps.h"
#include "daemon.h"
#include "event.h"
#include "fileio.h"
#include "reaper.h"
#include "trigger.h"

enum tag_kind {
	TAG_SIGNAL = 1,
	TAG_TIER,     /* a tier's kernel trigger */
	TAG_SENTINEL, /* the coarse trigger that wakes userspace tiers */
	TAG_SAMPLE,   /* the watch's sampling timer */
	TAG_PIDFD,    /* the victim in flight exited */
	TAG_TIMER,    /* kill_timeout */
};

/* epoll tags: kind, the watch generation (a reload starts a new one, so an
 * event of an old fd still queued in this wakeup is recognised), index */
#define TAG(kind, idx) (((uint64_t)(kind) << 56) | ((uint64_t)(d->generation & 0xffffffu) << 32) | (uint32_t)(idx))
#define TAG_KIND(tag) ((enum tag_kind)((tag) >> 56))
#define TAG_GEN(tag) ((uint32_t)(((tag) >> 32) & 0xffffffu))
#define TAG_INDEX(tag) ((size_t)((tag)&0xffffffffu))

#define IDLE_LOG_INTERVAL_US (10 * 1000000ULL)
#define PICK_ATTEMPTS 3

static bool dry_run(const struct daemon *d)
{
	return d->cli_dry_run || d->cfg.dry_run;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* ------------------------------------------------------------------ watch */

static void log_tiers(struct daemon *d)
{
	const struct watch *w = &d->watch;
	char a[32], b[32];
	size_t i;

	for (i = 0; i < d->cfg.n_tiers; i++) {
		const struct tier_config *t = &d->cfg.tiers[i];
		const struct watch_tier *wt = &w->tiers[i];

		if (wt->source == TIER_SOURCE_KERNEL)
			log_info(&d->log, "tier %s armed: %s %s %s on %s, kernel trigger%s; kills oom_score_adj >= %d in %s",
				 t->name, psi_state_name(t->state), config_format_duration(a, sizeof(a), t->stall_us),
				 config_format_duration(b, sizeof(b), t->window_us), w->path,
				 w->privileged ? "" : " (unprivileged: checked by the userspace monitor too)",
				 t->min_oom_score_adj, d->cfg.scope);
		else
			log_notice(&d->log, "tier %s armed: %s %s %s on %s, userspace monitor (the kernel refused the "
				   "trigger: %s: %s); kills oom_score_adj >= %d in %s",
				   t->name, psi_state_name(t->state), config_format_duration(a, sizeof(a), t->stall_us),
				   config_format_duration(b, sizeof(b), t->window_us), w->path, strerror(-wt->refused),
				   trigger_error_hint(wt->refused, t->window_us, w->privileged), t->min_oom_score_adj,
				   d->cfg.scope);
	}
	if (w->sentinel_fd >= 0)
		log_info(&d->log, "userspace tiers are woken by the kernel trigger \"%s\" on %s", w->sentinel, w->path);
	if (watch_needs_sampling(w) && w->idle_poll_us)
		log_info(&d->log, "safety sample of %s every %s while idle (unprivileged triggers can be starved by "
			 "other readers of the file)", w->path, config_format_duration(a, sizeof(a), w->idle_poll_us));
}

static int watch_fds_add(struct daemon *d)
{
	const struct watch *w = &d->watch;
	size_t i;
	int r = 0;

	for (i = 0; i < w->n_tiers && r == 0; i++)
		if (w->tiers[i].fd >= 0)
			r = event_add(d->epfd, w->tiers[i].fd, EPOLLPRI, TAG(TAG_TIER, i));
	if (r == 0 && w->sentinel_fd >= 0)
		r = event_add(d->epfd, w->sentinel_fd, EPOLLPRI, TAG(TAG_SENTINEL, 0));
	if (r == 0)
		r = event_add(d->epfd, w->timer_fd, EPOLLIN, TAG(TAG_SAMPLE, 0));
	if (r < 0)
		log_err(&d->log, "cannot watch %s: %s", w->path, strerror(-r));
	return r;
}

static void watch_fds_del(struct daemon *d)
{
	const struct watch *w = &d->watch;
	size_t i;

	for (i = 0; i < w->n_tiers; i++)
		if (w->tiers[i].fd >= 0)
			event_del(d->epfd, w->tiers[i].fd);
	if (w->sentinel_fd >= 0)
		event_del(d->epfd, w->sentinel_fd);
	if (w->timer_fd >= 0)
		event_del(d->epfd, w->timer_fd);
}

static int open_watch(struct daemon *d, const struct config *cfg, struct watch *w)
{
	char err[512];
	int r = watch_open(w, d->rootfd, cfg, d->cap_sys_resource, cfg->idle_poll_us, d->ops, err, sizeof(err));

	if (r < 0)
		log_err(&d->log, "%s", err);
	return r;
}

static void watch_lost(struct daemon *d, int err)
{
	if (!d->watch_armed)
		return;
	log_err(&d->log, "%s is gone (%s; its cgroup was removed?): every tier is disarmed until a reload (SIGHUP) "
		"or restart", d->watch.path, err ? strerror(-err) : "POLLERR");
	watch_fds_del(d);
	watch_close(&d->watch);
	d->watch_armed = false;
}

static void rearm_sampler(struct daemon *d)
{
	if (d->watch_armed)
		watch_arm_timer(&d->watch, event_now_us());
}

/* ------------------------------------------------------------------ victims */

struct pick {
	struct victim_filter filter;
	struct proc_info best;
	bool found;
	unsigned candidates;
};

static void pick_visit(const struct proc_info *pi, void *userdata)
{
	struct pick *p = userdata;

	if (victim_check(&p->filter, pi) != VICTIM_OK)
		return;
	p->candidates++;
	if (!p->found || victim_better(pi, &p->best)) {
		p->best = *pi;
		p->found = true;
	}
}

static int pick_victim(struct daemon *d, const struct tier_config *t, struct pick *p)
{
	struct procfs_scan_stats st;
	int r;

	memset(p, 0, sizeof(*p));
	p->filter.min_adj = t->min_oom_score_adj;
	p->filter.self = d->self;
	p->filter.scope = d->cfg.scope;
	p->filter.exclude = d->survivors;
	p->filter.n_exclude = d->n_survivors;
	r = procfs_scan(d->procfd, t->min_oom_score_adj, pick_visit, p, &st);
	if (r < 0) {
		log_err(&d->log, "cannot scan /proc: %s", strerror(-r));
		return r;
	}
	log_debug(&d->log, "tier %s: scanned %u processes (%u read, %u vanished, %u unreadable), %u candidates",
		  t->name, st.seen, st.read, st.vanished, st.errors, p->candidates);
	return 0;
}

static void log_no_candidate(struct daemon *d, size_t i, uint64_t now)
{
	const struct tier_config *t = &d->cfg.tiers[i];
	struct tier_state *ts = &d->tiers[i];

	ts->no_candidate++;
	if (ts->last_idle_log_us && now - ts->last_idle_log_us < IDLE_LOG_INTERVAL_US) {
		ts->idle_unlogged++;
		return;
	}
	log_notice(&d->log, "tier %s fired but no process has oom_score_adj >= %d in %s; nothing killed%s", t->name,
		   t->min_oom_score_adj, d->cfg.scope, ts->idle_unlogged ? " (repeated since the last report)" : "");
	ts->last_idle_log_us = now;
	ts->idle_unlogged = 0;
}

static void log_kill(struct daemon *d, const char *verb, const struct proc_info *pi, const struct tier_config *t)
{
	char line[512];

	log_format_kill(line, sizeof(line), verb, pi, t, t->state == PSI_FULL ? "psi_full" : "psi_some");
	log_notice(&d->log, "%s", line);
}

static void remember_survivor(struct daemon *d, const struct proc_info *pi)
{
	if (d->n_survivors == DAEMON_SURVIVORS_MAX) {
		memmove(d->survivors, d->survivors + 1, sizeof(d->survivors[0]) * (DAEMON_SURVIVORS_MAX - 1));
		d->n_survivors--;
	}
	d->survivors[d->n_survivors].pid = pi->pid;
	d->survivors[d->n_survivors].start_time = pi->start_time;
	d->n_survivors++;
}

/* Sends SIGKILL to the chosen process. Returns 0 when the kill is in flight,
 * -ESRCH when the victim vanished before it could be signalled (pick again). */
static int kill_victim(struct daemon *d, size_t i, const struct proc_info *victim)
{
	const struct tier_config *t = &d->cfg.tiers[i];
	int fd, r;

	fd = reaper_open_verified(d->procfd, victim->pid, victim->start_time);
	if (fd == -ESRCH) {
		log_info(&d->log, "pid %d (%s) exited before it could be killed; choosing again", (int)victim->pid,
			 victim->comm);
		return fd;
	}
	if (fd < 0) {
		log_err(&d->log, "cannot open a pidfd for pid %d: %s", (int)victim->pid, strerror(-fd));
		return fd;
	}
	r = reaper_signal(fd, SIGKILL);
	if (r < 0) {
		close(fd);
		if (r != -ESRCH)
			log_err(&d->log, "cannot kill pid %d (%s): %s", (int)victim->pid, victim->comm, strerror(-r));
		return r;
	}
	d->kill.sent_us = event_now_us();
	log_kill(d, "kill", victim, t);
	d->tiers[i].kills++;
	d->tiers[i].last_kill_us = d->kill.sent_us;
	d->kills_total++;

	r = reaper_mrelease(fd);
	if (r < 0 && r != -EINVAL && r != -ESRCH && r != -ENOSYS)
		log_warn(&d->log, "process_mrelease(pid %d): %s", (int)victim->pid, strerror(-r));

	d->kill.active = true;
	d->kill.pidfd = fd;
	d->kill.victim = *victim;
	snprintf(d->kill.tier, sizeof(d->kill.tier), "%s", t->name);
	r = event_add(d->epfd, fd, EPOLLIN, TAG(TAG_PIDFD, 0));
	if (r == 0)
		r = event_timer_arm(d->timerfd, d->cfg.kill_timeout_us);
	if (r < 0)
		log_err(&d->log, "cannot wait for pid %d to exit: %s; waiting for the next event instead",
			(int)victim->pid, strerror(-r));
	return 0;
}

/* Notes that tier i fired; *fired keeps the most severe tier of this wakeup. */
static void tier_fired(struct daemon *d, size_t i, const char *how, ssize_t *fired)
{
	d->tiers[i].events++;
	log_debug(&d->log, "tier %s fired (%s)", d->cfg.tiers[i].name, how);
	if (*fired < 0 || d->cfg.tiers[i].min_oom_score_adj < d->cfg.tiers[*fired].min_oom_score_adj)
		*fired = (ssize_t)i;
}

/* Samples the pressure file, feeds the monitors, re-arms the sampler. */
static void sample(struct daemon *d, ssize_t *fired)
{
	bool hit[CONFIG_TIERS_MAX];
	size_t i;
	int r;

	r = watch_sample(&d->watch, event_now_us(), hit);
	if (r < 0) {
		watch_lost(d, r);
		return;
	}
	for (i = 0; i < d->watch.n_tiers; i++) {
		if (!hit[i])
			continue;
		/* Expected with unprivileged triggers: the kernel checks them only
		 * every 2 s, and reads of the file (ours included) delay that. */
		if (d->watch.tiers[i].source == TIER_SOURCE_KERNEL)
			log_debug(&d->log, "tier %s: stall passed its threshold before its kernel trigger reported it",
				  d->cfg.tiers[i].name);
		tier_fired(d, i, "userspace monitor", fired);
	}
	rearm_sampler(d);
}

static void act(struct daemon *d, size_t i)
{
	const struct tier_config *t = &d->cfg.tiers[i];
	struct tier_state *ts = &d->tiers[i];
	struct pick p;
	int attempt;

	if (d->kill.active) {
		ts->deferred++;
		log_info(&d->log, "tier %s fired while pid %d is dying; not acting (%" PRIu64 " such events)", t->name,
			 (int)d->kill.victim.pid, ts->deferred);
		return;
	}
	for (attempt = 0; attempt < PICK_ATTEMPTS; attempt++) {
		if (pick_victim(d, t, &p) < 0)
			return;
		if (!p.found) {
			log_no_candidate(d, i, event_now_us());
			return;
		}
		if (dry_run(d)) {
			log_kill(d, "would-kill", &p.best, t);
			return;
		}
		if (kill_victim(d, i, &p.best) != -ESRCH)
			return;
	}
}

static void kill_finished(struct daemon *d, bool exited)
{
	const struct proc_info *v = &d->kill.victim;
	uint64_t ms = (event_now_us() - d->kill.sent_us) / 1000;

	if (exited)
		log_info(&d->log, "pid %d (%s) exited %" PRIu64 " ms after SIGKILL (tier %s, rss_kb=%" PRIu64 ", cgroup %s)",
			 (int)v->pid, v->comm, ms, d->kill.tier, v->rss_kb, v->has_cgroup ? v->cgroup : "?");
	else {
		log_warn(&d->log, "pid %d (%s) is still alive %" PRIu64 " ms after SIGKILL (state %c before the kill); "
			 "moving on, it will not be chosen again", (int)v->pid, v->comm, ms, v->state);
		remember_survivor(d, v);
	}
	event_del(d->epfd, d->kill.pidfd);
	close_fd(&d->kill.pidfd);
	event_timer_arm(d->timerfd, 0);
	d->kill.active = false;
}

/* ------------------------------------------------------------------ signals */

static void log_status(struct daemon *d)
{
	size_t i;

	log_notice(&d->log, "status: %zu tiers, %" PRIu64 " kills, %s, pressure %s, scope %s", d->cfg.n_tiers,
		   d->kills_total, d->kill.active ? "a kill is in flight" : "no kill in flight", d->cfg.pressure,
		   d->cfg.scope);
	for (i = 0; i < d->cfg.n_tiers; i++) {
		const struct tier_state *ts = &d->tiers[i];
		uint64_t ago = ts->last_kill_us ? (event_now_us() - ts->last_kill_us) / 1000000 : 0;

		log_notice(&d->log,
			   "status tier=%s armed=%s source=%s events=%" PRIu64 " deferred=%" PRIu64 " kills=%" PRIu64
			   " no_candidate=%" PRIu64 " last_kill=%s%" PRIu64 "%s",
			   d->cfg.tiers[i].name, d->watch_armed ? "yes" : "no",
			   tier_source_name(d->watch.tiers[i].source), ts->events, ts->deferred, ts->kills,
			   ts->no_candidate, ts->last_kill_us ? "" : "never", ts->last_kill_us ? ago : 0,
			   ts->last_kill_us ? "s-ago" : "");
	}
}

static void reload(struct daemon *d)
{
	struct config_error err;
	struct config *next = malloc(sizeof(*next));
	struct watch *w = malloc(sizeof(*w));

	if (!next || !w) {
		log_err(&d->log, "reload: out of memory; keeping the current configuration");
		goto out;
	}
	if (config_load_file(next, d->cfg.path, &err) < 0) {
		log_err(&d->log, "reload failed, keeping the current configuration: %s", err.msg);
		goto out;
	}
	/* arm the new triggers before dropping the old ones: never a moment unarmed */
	if (open_watch(d, next, w) < 0) {
		log_err(&d->log, "reload failed, keeping the current configuration and triggers");
		goto out;
	}
	if (d->watch_armed) {
		watch_fds_del(d);
		watch_close(&d->watch);
	}
	d->cfg = *next;
	d->watch = *w;
	d->watch_armed = true;
	d->generation++;
	memset(d->tiers, 0, sizeof(d->tiers));
	if (watch_fds_add(d) < 0)
		log_err(&d->log, "reload: not every tier could be watched");
	log_tiers(d);
	rearm_sampler(d);
	log_notice(&d->log, "configuration reloaded from %s: %zu tiers", d->cfg.path, d->cfg.n_tiers);
out:
	free(next);
	free(w);
}

static void handle_signals(struct daemon *d)
{
	struct signalfd_siginfo si;

	while (read(d->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		switch (si.ssi_signo) {
		case SIGTERM:
		case SIGINT:
			log_notice(&d->log, "signal %s: exiting", strsignal((int)si.ssi_signo));
			d->quit = true;
			break;
		case SIGHUP:
			reload(d);
			break;
		case SIGUSR1:
			log_status(d);
			break;
		default:
			break;
		}
	}
}

/* ------------------------------------------------------------------ lifecycle */

static void protect_self(struct daemon *d)
{
	int r = write_file_at(d->procfd, "self/oom_score_adj", "-1000");

	if (r < 0)
		log_warn(&d->log, "cannot set own oom_score_adj to -1000: %s%s; the kernel OOM killer could pick psi-lmkd",
			 strerror(-r), r == -EACCES ? " (needs CAP_SYS_RESOURCE)" : "");
	if (mlockall(MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT) < 0)
		log_warn(&d->log, "cannot lock psi-lmkd in memory (mlockall: %s); it may be slow under pressure",
			 strerror(errno));
}

int daemon_init(struct daemon *d, const struct config *cfg, const struct daemon_options *opt)
{
	static const int sigs[] = { SIGTERM, SIGINT, SIGHUP, SIGUSR1 };
	int r;

	memset(d, 0, sizeof(*d));
	d->rootfd = d->procfd = d->epfd = d->sigfd = d->timerfd = d->kill.pidfd = -1;
	d->ops = opt->ops ? opt->ops : &watch_kernel_ops;
	d->cfg = *cfg;
	d->cli_dry_run = opt->dry_run;
	d->self = getpid();
	log_init(&d->log, opt->log_level, opt->use_syslog);
	d->cap_sys_resource = caps_have(CAP_SYS_RESOURCE);

	r = d->rootfd = sysroot_open(opt->root ? opt->root : "/");
	if (r < 0) {
		log_err(&d->log, "cannot open root %s: %s", opt->root ? opt->root : "/", strerror(-r));
		return r;
	}
	r = d->procfd = sysroot_openat(d->rootfd, "/proc", O_RDONLY | O_DIRECTORY);
	if (r < 0) {
		log_err(&d->log, "cannot open /proc: %s", strerror(-r));
		return r;
	}
	if ((r = d->epfd = event_epoll_new()) < 0 || (r = d->timerfd = event_timerfd_new()) < 0 ||
	    (r = d->sigfd = event_signalfd_new(sigs, (int)(sizeof(sigs) / sizeof(sigs[0])))) < 0 ||
	    (r = event_add(d->epfd, d->sigfd, EPOLLIN, TAG(TAG_SIGNAL, 0))) < 0 ||
	    (r = event_add(d->epfd, d->timerfd, EPOLLIN, TAG(TAG_TIMER, 0))) < 0) {
		log_err(&d->log, "cannot set up the event loop: %s", strerror(-r));
		return r;
	}
	protect_self(d);
	r = open_watch(d, &d->cfg, &d->watch);
	if (r < 0)
		return r;
	d->watch_armed = true;
	r = watch_fds_add(d);
	if (r < 0)
		return r;
	log_tiers(d);
	rearm_sampler(d);
	log_notice(&d->log, "psi-lmkd %s running: %zu tiers on %s, scope %s, kill_timeout %" PRIu64 " ms%s", VERSION,
		   d->cfg.n_tiers, d->cfg.pressure, d->cfg.scope, d->cfg.kill_timeout_us / 1000,
		   dry_run(d) ? ", DRY RUN (nothing will be killed)" : "");
	return 0;
}

int daemon_run(struct daemon *d)
{
	struct epoll_event evs[CONFIG_TIERS_MAX + 4];

	while (!d->quit) {
		ssize_t fired = -1;
		int n, k;

		n = epoll_wait(d->epfd, evs, (int)(sizeof(evs) / sizeof(evs[0])), -1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			log_err(&d->log, "epoll_wait: %s", strerror(errno));
			return -errno;
		}
		for (k = 0; k < n; k++) {
			uint64_t tag = evs[k].data.u64;
			size_t i = TAG_INDEX(tag);
			enum tag_kind kind = TAG_KIND(tag);

			if ((kind == TAG_TIER || kind == TAG_SENTINEL || kind == TAG_SAMPLE) &&
			    (!d->watch_armed || TAG_GEN(tag) != (d->generation & 0xffffffu)))
				continue; /* an fd closed by a reload or a loss earlier in this wakeup */
			switch (kind) {
			case TAG_SIGNAL:
				handle_signals(d);
				break;
			case TAG_TIER:
				if (evs[k].events & (EPOLLERR | EPOLLHUP)) {
					watch_lost(d, 0);
					break;
				}
				watch_kernel_event(&d->watch, i, event_now_us());
				tier_fired(d, i, "kernel trigger", &fired);
				rearm_sampler(d);
				break;
			case TAG_SENTINEL:
				if (evs[k].events & (EPOLLERR | EPOLLHUP)) {
					watch_lost(d, 0);
					break;
				}
				log_debug(&d->log, "sentinel trigger fired: sampling %s", d->watch.path);
				watch_sentinel_event(&d->watch, event_now_us());
				sample(d, &fired);
				break;
			case TAG_SAMPLE: {
				uint64_t ticks;

				if (read(d->watch.timer_fd, &ticks, sizeof(ticks)) < 0)
					break;
				sample(d, &fired);
				break;
			}
			case TAG_PIDFD:
				if (d->kill.active)
					kill_finished(d, true);
				break;
			case TAG_TIMER: {
				uint64_t ticks;

				if (read(d->timerfd, &ticks, sizeof(ticks)) < 0 || !d->kill.active)
					break;
				kill_finished(d, reaper_exited(d->kill.pidfd) == 1);
				break;
			}
			}
		}
		if (fired >= 0 && !d->quit)
			act(d, (size_t)fired);
	}
	return 0;
}

void daemon_deinit(struct daemon *d)
{
	if (d->watch_armed)
		watch_close(&d->watch);
	d->watch_armed = false;
	close_fd(&d->kill.pidfd);
	close_fd(&d->timerfd);
	close_fd(&d->sigfd);
	close_fd(&d->epfd);
	close_fd(&d->procfd);
	close_fd(&d->rootfd);
}
