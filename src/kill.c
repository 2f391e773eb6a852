/* kill: the kill path of a running daemon. When a tier fires: hold back
 * (a victim still dying, settle_time, the tier's gates), choose a victim
 * (one /proc scan through the root fd, victim_check/victim_better), kill it
 * through an identity-checked pidfd (or its whole cgroup2 leaf), reap its
 * memory with process_mrelease, start the on_kill hook, then wait for the
 * pidfd to report the exit, escalating SIGTERM to SIGKILL at term_timeout and
 * giving up at kill_timeout. Every hold-back and every outcome is logged. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>

#include "cgroup.h"
#include "daemon-private.h"
#include "event.h"
#include "fileio.h"
#include "hook.h"
#include "memory.h"
#include "pick.h"
#include "reaper.h"

#define PICK_ATTEMPTS 3

static struct pick_ctx pick_context(const struct daemon *d)
{
	struct pick_ctx c = { .procfd = d->procfd, .rootfd = d->rootfd, .cg2_mount = d->cg2_mount,
			      .policy = &d->policy->vp, .self = d->self, .scope = d->cfg.scope,
			      .trusted_uid_max = d->cfg.trusted_uid_max,
			      .exclude = d->survivors, .n_exclude = d->n_survivors };

	return c;
}

static int pick_victim(struct daemon *d, const struct tier_config *t, struct kill_pick *p)
{
	struct pick_ctx c = pick_context(d);
	struct procfs_scan_stats st;
	int r = pick_choose(&c, t->min_oom_score_adj, p, &st);

	if (r < 0) {
		log_err(&d->log, "tier %s: cannot scan /proc (%s); nothing killed rather than choosing from an incomplete "
			"list", t->name, strerror(-r));
		return r;
	}
	log_debug(&d->log, "tier %s: scanned %u processes (%u read, %u vanished, %u unreadable), %u candidates",
		  t->name, st.seen, st.read, st.vanished, st.errors, p->pick.candidates);
	return 0;
}

/* Logs why a tier did not act, at most every IDLE_LOG_INTERVAL_US per tier. */
__attribute__((format(printf, 3, 4))) static void log_idle(struct daemon *d, size_t i, const char *fmt, ...)
{
	struct tier_state *ts = &d->tiers[i];
	uint64_t now = event_now_us();
	char msg[512];
	va_list ap;

	if (ts->last_idle_log_us && now - ts->last_idle_log_us < IDLE_LOG_INTERVAL_US) {
		ts->idle_unlogged++;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_notice(&d->log, "tier %s fired but %s%s", d->cfg.tiers[i].name, msg,
		   ts->idle_unlogged ? " (and earlier events since the last report)" : "");
	ts->last_idle_log_us = now;
	ts->idle_unlogged = 0;
}

static const char *reason_name(const struct tier_config *t, enum fire_reason why)
{
	if (why == FIRE_LOW_MEMORY)
		return "low_memory";
	return t->state == PSI_FULL ? "psi_full" : "psi_some";
}

static void log_kill(struct daemon *d, const char *verb, const struct proc_info *pi, const struct tier_config *t,
		     enum fire_reason why)
{
	char line[512];

	log_format_kill(line, sizeof(line), verb, pi, t, reason_name(t, why));
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

/* process_mrelease: the victim's memory comes back now, not when its exit
 * finishes. EINVAL (not dying yet), ESRCH (gone) and ENOSYS (< 5.15) are fine. */
static void release_memory(struct daemon *d, int fd, const struct proc_info *v)
{
	uint64_t t0 = event_now_us();
	int r = reaper_mrelease(fd);

	if (r == 0)
		log_info(&d->log, "process_mrelease(pid %d): about %" PRIu64 " kB released in %" PRIu64 " us", (int)v->pid,
			 v->rss_kb, event_now_us() - t0);
	else if (r == -ESRCH)
		log_info(&d->log, "process_mrelease(pid %d): it had already released its memory and exited", (int)v->pid);
	else if (r != -EINVAL && r != -ENOSYS)
		log_warn(&d->log, "process_mrelease(pid %d): %s", (int)v->pid, strerror(-r));
}

/* kill_cgroup: the victim's whole cgroup2 leaf dies through cgroup.kill, but
 * only if every process in it could have been a victim on its own (never
 * init, the daemon, adj -1000 or a protected process) and the group is not
 * the cgroup root. Returns the number of processes killed, or -errno. */
static int kill_leaf(struct daemon *d, const struct proc_info *victim)
{
	struct victim_filter f = { .policy = &d->policy->vp, .min_adj = OOM_SCORE_ADJ_MIN + 1, .self = d->self,
				   .scope = d->cfg.scope };
	pid_t pids[256];
	int n, k;

	if (!victim->has_cgroup || strcmp(victim->cgroup, "/") == 0 || !d->cg2_mount[0])
		return -EPERM;
	n = cgroup_read_procs(d->rootfd, d->cg2_mount, victim->cgroup, pids, sizeof(pids) / sizeof(pids[0]));
	if (n < 0)
		return n;
	for (k = 0; k < n; k++) {
		struct proc_info pi;
		enum victim_verdict v;

		if (procfs_read_pid(d->procfd, pids[k], &pi) < 0)
			continue; /* gone already */
		if (victim_needs_cmdline(&f))
			pi.has_cmdline = procfs_read_cmdline(d->procfd, pi.pid, pi.cmdline, sizeof(pi.cmdline)) == 0;
		v = victim_check(&f, &pi);
		if (v != VICTIM_OK && v != VICTIM_SMALL && v != VICTIM_DYING) {
			log_warn(&d->log, "kill_cgroup: %s holds pid %d (%s, %s): killing pid %d alone", victim->cgroup,
				 (int)pi.pid, pi.comm, victim_verdict_name(v), (int)victim->pid);
			return -EPERM;
		}
	}
	k = cgroup_kill(d->rootfd, d->cg2_mount, victim->cgroup);
	return k < 0 ? k : n;
}

/* Signals the chosen process (its whole cgroup with kill_cgroup). Returns 0
 * when the kill is in flight, -ESRCH when the victim vanished before it could
 * be signalled (pick again). */
static int kill_victim(struct daemon *d, size_t i, const struct proc_info *victim, enum fire_reason why)
{
	const struct tier_config *t = &d->cfg.tiers[i];
	int sig = t->kill_signal, fd, r, n = -1;

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
	if (t->kill_cgroup && sig == SIGKILL) {
		n = kill_leaf(d, victim);
		if (n < 0 && n != -EPERM)
			log_warn(&d->log, "kill_cgroup: cannot kill %s: %s; killing pid %d alone", victim->cgroup,
				 strerror(-n), (int)victim->pid);
	}
	r = n >= 0 ? 0 : reaper_signal(fd, sig);
	if (r < 0) {
		close(fd);
		if (r == -ESRCH)
			log_info(&d->log, "pid %d (%s) exited before the signal reached it; choosing again",
				 (int)victim->pid, victim->comm);
		else
			log_err(&d->log, "cannot kill pid %d (%s): %s", (int)victim->pid, victim->comm, strerror(-r));
		return r;
	}
	d->kill.sent_us = d->kill.sigkill_us = event_now_us();
	/* reap first, log after: the victim is not going to wait for our log line */
	if (sig == SIGKILL)
		release_memory(d, fd, victim);
	log_kill(d, "kill", victim, t, why);
	if (n >= 0)
		log_notice(&d->log, "killed cgroup %s through cgroup.kill (%d processes)", victim->cgroup, n);
	if (sig == SIGTERM)
		log_info(&d->log, "sent SIGTERM to pid %d; SIGKILL follows in %" PRIu64 " ms if it is still alive",
			 (int)victim->pid, t->term_timeout_us / 1000);
	d->tiers[i].kills++;
	d->tiers[i].last_kill_us = d->kill.sent_us;
	d->tiers[i].streak = 0;
	d->kills_total++;

	d->kill.active = true;
	d->kill.term_phase = sig == SIGTERM;
	d->kill.pidfd = fd;
	d->kill.victim = *victim;
	d->kill.kill_timeout_us = d->cfg.kill_timeout_us;
	snprintf(d->kill.tier, sizeof(d->kill.tier), "%s", t->name);
	daemon_notify_state(d, "", false);
	r = event_add(d->epfd, fd, EPOLLIN, TAG(TAG_PIDFD, 0));
	if (r == 0)
		r = event_timer_arm(d->timerfd, sig == SIGTERM ? t->term_timeout_us : d->cfg.kill_timeout_us);
	if (r < 0)
		log_err(&d->log, "cannot wait for pid %d to exit: %s; waiting for the next event instead",
			(int)victim->pid, strerror(-r));
	if (*d->cfg.on_kill) {
		int devnull = sysroot_openat(d->rootfd, "/dev/null", O_RDWR);
		pid_t hook = hook_run(d->cfg.on_kill, devnull, victim, t->name, reason_name(t, why));

		if (devnull >= 0)
			close(devnull);

		if (hook < 0)
			log_warn(&d->log, "on_kill %s: %s", d->cfg.on_kill, strerror(-hook));
	}
	return 0;
}

/* The gates of a tier: min_events consecutive events, and available memory
 * below min_available. Returns true if the tier may kill now. */
static bool gates_open(struct daemon *d, size_t i, enum fire_reason why)
{
	const struct tier_config *t = &d->cfg.tiers[i];
	struct tier_state *ts = &d->tiers[i];
	uint64_t now = event_now_us();
	char a[32], b[32];

	ts->streak = psi_streak_next(ts->streak, ts->last_event_us, now,
				     t->has_trigger ? t->window_us : PSI_UNPRIV_WINDOW_US);
	ts->last_event_us = now;
	if (why == FIRE_PSI && ts->streak < t->min_events) {
		ts->gated++;
		log_info(&d->log, "tier %s: event %u of %u consecutive needed; not killing yet", t->name, ts->streak,
			 t->min_events);
		return false;
	}
	if (t->min_available.set) {
		struct mem_info mi;
		uint64_t limit;
		int r = memory_read(d->rootfd, d->memory_cgroup, &mi);

		if (r < 0) {
			log_warn(&d->log, "tier %s: cannot read available memory (%s); min_available not checked", t->name,
				 strerror(-r));
			return true;
		}
		limit = memory_amount_bytes(&t->min_available, mi.total_bytes);
		if (mi.available_bytes >= limit) {
			ts->gated++;
			log_idle(d, i, "%s available memory is %" PRIu64 " MiB, not below min_available %s (%s MiB); not killing",
				 mi.cgroup ? "the cgroup's" : "MemAvailable: the", mi.available_bytes >> 20,
				 config_format_amount(a, sizeof(a), &t->min_available),
				 (snprintf(b, sizeof(b), "%" PRIu64, limit >> 20), b));
			return false;
		}
	}
	return true;
}

void kill_act(struct daemon *d, size_t i, enum fire_reason why)
{
	const struct tier_config *t = &d->cfg.tiers[i];
	struct tier_state *ts = &d->tiers[i];
	uint64_t now = event_now_us();
	struct kill_pick *p = &d->pick;
	int attempt;

	if (d->kill.active) {
		ts->deferred++;
		log_idle(d, i, "pid %d is still dying; not acting (%" PRIu64 " such events so far)",
			 (int)d->kill.victim.pid, ts->deferred);
		return;
	}
	if (now < d->settle_until_us) {
		ts->deferred++;
		log_idle(d, i, "the last victim died %" PRIu64 " ms ago; settling for settle_time, not acting",
			 (now + d->cfg.settle_us - d->settle_until_us) / 1000);
		return;
	}
	if (!gates_open(d, i, why))
		return;
	for (attempt = 0; attempt < PICK_ATTEMPTS; attempt++) {
		if (pick_victim(d, t, p) < 0)
			break;
		if (!p->pick.found) {
			ts->no_candidate++;
			log_idle(d, i, "no process has oom_score_adj >= %d in %s%s; nothing killed", t->min_oom_score_adj,
				 d->cfg.scope, d->cfg.min_rss_kb || *d->cfg.protect ? " (besides protected or small ones)" : "");
			break;
		}
		if (daemon_dry_run(d)) {
			log_kill(d, "would-kill", &p->pick.best, t, why);
			break;
		}
		if (kill_victim(d, i, &p->pick.best, why) != -ESRCH)
			break;
	}
}

void kill_finished(struct daemon *d, bool exited)
{
	const struct proc_info *v = &d->kill.victim;
	uint64_t ms = (event_now_us() - d->kill.sent_us) / 1000;

	if (!exited && d->kill.term_phase) {
		int r = reaper_signal(d->kill.pidfd, SIGKILL);

		d->kill.term_phase = false;
		if (r == 0) {
			d->kill.sigkill_us = event_now_us();
			log_notice(&d->log, "pid %d (%s) did not exit %" PRIu64 " ms after SIGTERM; sent SIGKILL", (int)v->pid,
				   v->comm, ms);
			release_memory(d, d->kill.pidfd, v);
			event_timer_arm(d->timerfd, d->kill.kill_timeout_us);
			return;
		}
		exited = r == -ESRCH;
	}
	if (exited) {
		uint64_t since_kill = (event_now_us() - d->kill.sigkill_us) / 1000;

		if (d->kill.sigkill_us != d->kill.sent_us)
			log_info(&d->log, "pid %d (%s) exited %" PRIu64 " ms after SIGKILL, %" PRIu64 " ms after SIGTERM "
				 "(tier %s, rss_kb=%" PRIu64 ", cgroup %s)", (int)v->pid, v->comm, since_kill, ms, d->kill.tier,
				 v->rss_kb, v->has_cgroup ? v->cgroup : "?");
		else
			log_info(&d->log, "pid %d (%s) exited %" PRIu64 " ms after the signal (tier %s, rss_kb=%" PRIu64
				 ", cgroup %s)", (int)v->pid, v->comm, ms, d->kill.tier, v->rss_kb,
				 v->has_cgroup ? v->cgroup : "?");
		d->settle_until_us = event_now_us() + d->cfg.settle_us;
	} else {
		log_warn(&d->log, "pid %d (%s) is still alive %" PRIu64 " ms after SIGKILL (state %c before the kill); "
			 "moving on, it will not be chosen again", (int)v->pid, v->comm, ms, v->state);
		remember_survivor(d, v);
	}
	event_del(d->epfd, d->kill.pidfd);
	daemon_close_fd(&d->kill.pidfd);
	event_timer_arm(d->timerfd, 0);
	d->kill.active = false;
}
