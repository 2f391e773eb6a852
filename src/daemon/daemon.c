/* SPDX-License-Identifier: MIT */
/* daemon: the event loop and the decisions taken in it.
 *
 * One epoll set holds: a signalfd (TERM/INT quit, HUP reload, USR1 status),
 * one kernel trigger fd per tier (EPOLLPRI = fired, EPOLLERR = file gone),
 * and, while a kill is in flight, the victim's pidfd (readable = exited) and a
 * timerfd bounding the wait by kill_timeout. Only one kill is in flight at a
 * time; tier events that arrive meanwhile are counted, not acted on. The
 * tiers that fired in one wakeup go to the killer together (kill.c decides
 * which acts and kills) after the whole batch, unless a reload in that batch
 * changed what their indices mean. The daemon never exits because there is
 * nothing to kill. The loop dispatches through a table of per-tag handlers.
 * Neighbours: daemon-memory.c (low_available, the idle clock, the memory
 * cgroup's notifications), daemon-groups.c (cgroup-pattern tiers),
 * daemon-status.c (--status, metrics), daemon-warn.c (warn tiers), all
 * above daemon-base.c (the kill environment, a watch's fds, a tier fired);
 * what they need of the loop they get through d->up (daemon.h). */
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
#include <sched.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/wait.h>

#include "caps.h"
#include "coldtext.h"
#include "notify.h"
#include "cgroup.h"
#include "daemon-private.h"
#include "event.h"
#include "fileio.h"
#include "hook.h"
#include "lmkd-server.h"
#include "lmkprops.h"
#include "memory.h"
#include "mounts.h"
#include "reaper.h"
#include "trustpath.h"
#include "trigger.h"

/* ------------------------------------------------------------------ watch */

static int watch_fds_add(struct daemon *d)
{
	int r = daemon_watch_fds(d, &d->watch, true, TAG(TAG_TIER, 0), TAG(TAG_SENTINEL, 0), TAG(TAG_SAMPLE, 0));

	if (r < 0)
		log_err(&d->log, "cannot watch %s: %s", d->watch.path, strerror(-r));
	return r;
}

static void watch_fds_del(struct daemon *d)
{
	(void)daemon_watch_fds(d, &d->watch, false, 0, 0, 0);
}

static int open_watch(struct daemon *d, const struct config *cfg, struct watch *w)
{
	char err[512], where[CONFIG_WHERE_MAX];
	int r = watch_open(w, d->rootfd, cfg, d->cap_sys_resource, cfg->idle_poll_us, d->ops, err, sizeof(err));

	if (r < 0 && cfg->pressure_origin)
		log_err(&d->log, "%s: %s", config_where(cfg, cfg->pressure_origin, where, sizeof(where)), err);
	else if (r < 0)
		log_err(&d->log, "%s", err);
	return r;
}

static void rearm_sampler(struct daemon *d)
{
	if (d->watch_armed)
		watch_arm_timer(&d->watch, event_now_us());
}

static void daemon_notify_state(struct daemon *d, const char *prefix, bool ready);

/* Makes w the armed watch (closing the armed one, if any): a new generation,
 * so events still queued for the old fds are recognised and dropped. */
static int watch_install(struct daemon *d, const struct watch *w)
{
	int r;

	if (d->watch_armed) {
		watch_fds_del(d);
		watch_close(&d->watch);
	}
	d->watch = *w;
	d->watch_armed = true;
	d->generation++;
	r = watch_fds_add(d);
	daemon_log_watch(d, &d->watch, NULL);
	rearm_sampler(d);
	daemon_setup_memory(d);
	return r;
}

/* The pressure file failed (POLLERR on a trigger, or a read error): its
 * cgroup was most likely removed. Every tier is disarmed and the file is
 * retried on a timer, quickly at first (a service restart recreates its
 * cgroup at once), then every REARM_MAX_US, until it comes back or a reload
 * points elsewhere. */
static void watch_lost(struct daemon *d, int err)
{
	if (!d->watch_armed)
		return;
	log_err(&d->log, "%s is gone (%s; its cgroup was removed?): every tier is disarmed; psi-lmkd re-arms "
		"them when the file comes back", d->watch.path, err ? strerror(-err) : "POLLERR");
	watch_fds_del(d);
	watch_close(&d->watch);
	d->watch_armed = false;
	d->lost_at_us = event_now_us();
	d->rearm_delay_us = REARM_MIN_US;
	d->rearm_last_err = 0;
	event_timer_arm(d->rearmtimerfd, d->rearm_delay_us);
	daemon_notify_state(d, "", false);
}

/* The re-arm timer: try the configuration's pressure file again. */
static void watch_retry(struct daemon *d)
{
	char err[512];
	struct watch *w;
	int r;

	if (d->watch_armed)
		return; /* a reload re-armed it meanwhile */
	w = malloc(sizeof(*w));
	r = w ? watch_open(w, d->rootfd, &d->cfg, d->cap_sys_resource, d->cfg.idle_poll_us, d->ops, err, sizeof(err))
	      : -ENOMEM;
	if (r < 0) {
		if (r != d->rearm_last_err)
			log_warn(&d->log, "cannot re-arm yet: %s; retrying (at most %" PRIu64 " s apart)",
				 w ? err : "out of memory", REARM_MAX_US / 1000000);
		d->rearm_last_err = r;
		d->rearm_delay_us = d->rearm_delay_us * 2 > REARM_MAX_US ? REARM_MAX_US : d->rearm_delay_us * 2;
		event_timer_arm(d->rearmtimerfd, d->rearm_delay_us);
		free(w);
		return;
	}
	log_notice(&d->log, "%s is back after %" PRIu64 " ms: re-arming every tier", w->path,
		   (event_now_us() - d->lost_at_us) / 1000);
	if (watch_install(d, w) < 0)
		log_err(&d->log, "re-arm: not every tier could be watched");
	free(w);
	daemon_notify_state(d, "", false);
}

/* ------------------------------------------------------------------ wakeups */



/* After the batch: the killer decides on what fired, if the configuration
 * the events belong to is still the one in force. */
static void wake_act(struct daemon *d, struct wake *w)
{
	struct fired f[CONFIG_TIERS_MAX];
	struct killer_env env;
	size_t i, n = 0;
	bool warned = false;

	uint64_t kills0 = d->killer.kills_total;

	if (d->quit || w->cfg_generation != d->cfg_generation)
		return;
	for (i = 0; i < d->cfg.n_tiers; i++)
		if (w->fired[i] && d->cfg.tiers[i].warn) {
			daemon_warn(d, i);
			warned = true;
		} else if (w->fired[i] && (!w->oom || w->why[i] == FIRE_OOM)) {
			/* an OOM decision (members of the group only) goes alone:
			 * another tier's choice would free nothing in the group */
			f[n].tier = i;
			f[n].why = w->why[i];
			n++;
		}
	killer_env_of(d, &env);
	killer_act(&d->killer, &env, f, n);
	if (n || w->observe || warned)
		killer_observe(&d->killer, &env);
	if (w->oom)
		daemon_memory_oom_decided(d, d->killer.kills_total != kills0);
	daemon_groups_act(d);
}

/* Samples the pressure file, feeds the monitors, re-arms the sampler. */
static void daemon_sample(struct daemon *d, struct wake *w)
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
		daemon_tier_fired(d, i, FIRE_PSI, w);
	}
	rearm_sampler(d);
}

/* ------------------------------------------------------------------ setup */

static int apply_policy(struct daemon *d, const struct config *cfg, struct policy *p)
{
	char err[256];
	int r = policy_init(p, cfg, err, sizeof(err));

	if (r < 0)
		log_err(&d->log, "%s: %s", cfg->path, err);
	return r;
}

/* /proc mounted with hidepid hides other users' processes from an
 * unprivileged daemon: say so, once, at start. */
static void warn_hidepid(struct daemon *d)
{
	struct mount_entry e;
	const char *pos;
	char *mounts;
	int r = mounts_read(d->rootfd, &mounts);

	if (r == -ENOMEM)
		log_warn(&d->log, "out of memory: cannot tell whether /proc hides other users' processes (hidepid)");
	for (pos = mounts; r == 0 && mounts_next(&pos, &e);) {
		const char *hp = strstr(e.opts, "hidepid=");

		if (strcmp(e.dir, "/proc") == 0 && strcmp(e.type, "proc") == 0 && hp && !strstr(e.opts, "hidepid=0") &&
		    !strstr(e.opts, "hidepid=off"))
			log_warn(&d->log, "/proc is mounted with %.*s: psi-lmkd sees only the processes it is allowed to "
				 "see; run it as root or in the gid= group of that mount", (int)strcspn(hp, ","), hp);
	}
	free(mounts);
}

/* ------------------------------------------------------------------ service manager */

/* STATUS= for systemctl status: what is armed where, and the kills so far. */
static void daemon_notify_state(struct daemon *d, const char *prefix, bool ready)
{
	char status[2 * CONFIG_PATH_MAX + 256], groups[64] = ""; /* notify_* cut it to NOTIFY_STATUS_MAX */
	size_t i, kernel = 0, armed = 0;

	if (!d->watch_armed) {
		snprintf(status, sizeof(status), "%sDISARMED: %s is gone; re-arming when it comes back; %" PRIu64 " kills",
			 prefix, d->cfg.pressure, d->killer.kills_total);
	} else {
		for (i = 0; i < d->cfg.n_tiers; i++) {
			kernel += d->watch.tiers[i].source == TIER_SOURCE_KERNEL;
			armed += d->watch.tiers[i].source != TIER_SOURCE_OFF;
		}
		if (d->groups.active)
			snprintf(groups, sizeof(groups), ", %zu groups watched", d->groups.n);
		snprintf(status, sizeof(status), "%s%zu tiers armed (%zu kernel, %zu userspace) on %s, scope %s%s; %" PRIu64
			 " kills%s%s%s",
			 prefix, armed, kernel, armed - kernel, d->cfg.pressure, d->cfg.scope, groups,
			 d->killer.kills_total, d->killer.kills_total ? ", last " : "", d->killer.kills_total ? d->killer.kill.victim.comm : "",
			 daemon_dry_run(d) ? "; DRY RUN" : "");
	}
	if (ready)
		notify_ready(d->rootfd, status);
	else
		notify_status(d->rootfd, "%s", status);
}

/* ------------------------------------------------------------------ signals */

static void log_status(struct daemon *d)
{
	size_t i;

	daemon_count_misses(d, true);
	log_notice(&d->log, "status: %zu tiers, %" PRIu64 " kills, %" PRIu64 " kernel OOM kills, %s, pressure %s, scope %s",
		   d->cfg.n_tiers, d->killer.kills_total, d->oomk.missed,
		   d->killer.kill.active ? "a kill is in flight" : "no kill in flight", d->cfg.pressure, d->cfg.scope);
	for (i = 0; i < d->cfg.n_tiers; i++) {
		const struct tier_state *ts = &d->tiers[i];
		char last[32] = "never";

		if (*d->cfg.tiers[i].cgroup)
			continue; /* one line per group: daemon_groups_log_status */
		if (ts->last_kill_us)
			snprintf(last, sizeof(last), "%" PRIu64 "s-ago", (event_now_us() - ts->last_kill_us) / 1000000);

		log_notice(&d->log,
			   "status tier=%s armed=%s source=%s events=%" PRIu64 " deferred=%" PRIu64 " kills=%" PRIu64
			   " no_candidate=%" PRIu64 " gated=%" PRIu64 " scans=%" PRIu64 " last_kill=%s mem_checks=%" PRIu64
			   " swap_held=%" PRIu64 " mem_growth=%" PRIu64,
			   d->cfg.tiers[i].name, d->watch_armed ? "yes" : "no",
			   tier_source_name(d->watch.tiers[i].source), ts->events, ts->deferred, ts->kills,
			   ts->no_candidate, ts->gated, ts->scans, last, ts->mem_checks, ts->swap_held, ts->mem_growth);
	}
	daemon_groups_log_status(d);
	daemon_moom_log_status(d);
	if (d->lmkd)
		lmkd_server_log_status(d->lmkd);
}

/* CAP_SETUID and CAP_SETGID, kept in the permitted set (never effective)
 * while on_kill or pre_kill is set, for the hook's child to switch users */
static const cap_value_t hook_caps[] = { CAP_SETUID, CAP_SETGID };

static bool hook_caps_permitted(struct daemon *d)
{
	int r = caps_query_permitted(CAP_SETUID), g = r == 1 ? caps_query_permitted(CAP_SETGID) : 0;

	if (r < 0 || g < 0)
		log_warn(&d->log, "cannot tell whether psi-lmkd holds CAP_SETUID and CAP_SETGID (%s): taken as no",
			 strerror(r < 0 ? -r : -g));
	return r == 1 && g == 1;
}

/* Whether the hooks of cfg (on_kill, pre_kill) can run: the child must be able to become
 * on_kill_user, which takes CAP_SETUID/CAP_SETGID unless that is already
 * the daemon's own user (a non-root daemon). Never run it otherwise: it
 * would fail in the child at best. Logs when it cannot. */
static void hook_check(struct daemon *d, const struct config *cfg)
{
	const struct config_user *u = &cfg->on_kill_user;
	bool own = u->uid == getuid() && u->uid == geteuid() && u->gid == getgid() && u->gid == getegid();

	const char *key = *cfg->on_kill ? "on_kill" : "pre_kill", *prog = *cfg->on_kill ? cfg->on_kill : cfg->pre_kill;

	d->hook_ok = config_has_hook(cfg) && (d->hook_caps || own);
	if (!config_has_hook(cfg) || d->hook_ok)
		return;
	if (d->hook_caps_dropped)
		log_warn(&d->log, "%s %s will not run until psi-lmkd restarts: it no longer holds CAP_SETUID and "
			 "CAP_SETGID to switch to on_kill_user %s (it keeps them only when on_kill or pre_kill is set at "
			 "start)", key, prog, u->name);
	else
		log_warn(&d->log, "%s %s will not run: psi-lmkd lacks CAP_SETUID and CAP_SETGID to switch to "
			 "on_kill_user %s (add them to its capability bounding set)", key, prog, u->name);
}

/* A hook program of cfg (key: on_kill or pre_kill, at path), checked and
 * opened into *fd (-1 without one): what every run of it under this
 * configuration runs, whatever its path leads to later. 0 or -errno
 * (logged). */
static int program_open(struct daemon *d, const char *key, const char *path, int *fd)
{
	char why[2 * CONFIG_PATH_MAX + 128];
	int r;

	*fd = -1;
	if (!*path)
		return 0;
	r = trust_open(path, TRUST_PROGRAM, key, why, sizeof(why));
	if (r < 0) {
		log_err(&d->log, "%s", why);
		return r;
	}
	*fd = r;
	return 0;
}

/* on_kill into *fd and pre_kill into *prefd, as program_open; on failure
 * neither stays open. */
static int hook_open(struct daemon *d, const struct config *cfg, int *fd, int *prefd)
{
	int r = program_open(d, "on_kill", cfg->on_kill, fd);

	*prefd = -1;
	if (r == 0 && (r = program_open(d, "pre_kill", cfg->pre_kill, prefd)) < 0)
		close_fd(fd);
	return r;
}

/* A reload that removes on_kill: CAP_SETUID and CAP_SETGID go for good. */
static void hook_caps_release(struct daemon *d)
{
	int r;

	if (config_has_hook(&d->cfg) || !d->hook_caps || !d->manage_caps)
		return;
	r = caps_drop_permitted(hook_caps, sizeof(hook_caps) / sizeof(hook_caps[0]));
	if (r < 0) {
		log_warn(&d->log, "on_kill removed, but CAP_SETUID and CAP_SETGID cannot be dropped: %s", strerror(-r));
		return;
	}
	d->hook_caps = false;
	d->hook_caps_dropped = true;
	log_notice(&d->log, "on_kill removed: CAP_SETUID and CAP_SETGID dropped from the permitted set; a new on_kill "
		   "needs a restart");
}

/* A reload keeps the counters of the tiers it keeps (same name); a new
 * tier starts from zero, and so does every min_events streak. */
static void carry_tier_state(struct daemon *d, const struct config *next)
{
	struct tier_state old[CONFIG_TIERS_MAX];
	size_t i, j;

	memcpy(old, d->tiers, sizeof(old));
	memset(d->tiers, 0, sizeof(d->tiers));
	for (i = 0; i < next->n_tiers; i++)
		for (j = 0; j < d->cfg.n_tiers; j++)
			if (strcmp(next->tiers[i].name, d->cfg.tiers[j].name) == 0) {
				tier_state_carry(&d->tiers[i], &old[j]);
				break;
			}
}

static int check_fd_headroom(struct daemon *d);

/* A scope that is no group kills nothing, silently: said at start and on
 * each reload (it may yet appear, a user's slice at login). */
static void check_scope(struct daemon *d)
{
	int r;

	if (!*d->cg2_mount || strcmp(d->cfg.scope, "/") == 0)
		return;
	r = cgroup_exists(d->rootfd, d->cg2_mount, d->cfg.scope);
	if (r < 0)
		log_warn(&d->log, "scope %s: %s under %s: nothing can be killed until it exists", d->cfg.scope,
			 r == -ENOENT ? "no such cgroup" : strerror(-r), d->cg2_mount);
}

/* Switches to the new configuration next, whose policy and watch w are
 * ready: the counters of kept tiers carry over, then the new watch and
 * groups are installed. Cannot fail. */
static void reload_switch(struct daemon *d, const struct config *next, struct policy *policy, const struct watch *w,
			  int hook_fd, int prekill_fd)
{
	char old_names[CONFIG_TIERS_MAX][CONFIG_NAME_MAX + 1];
	size_t old_n;

	policy_deinit(d->policy);
	free(d->policy);
	d->policy = policy;
	carry_tier_state(d, next);
	for (old_n = 0; old_n < d->cfg.n_tiers; old_n++)
		memcpy(old_names[old_n], d->cfg.tiers[old_n].name, sizeof(old_names[0]));
	d->cfg = *next;
	d->cfg_generation++;
	close_fd(&d->hook_fd);
	d->hook_fd = hook_fd;
	close_fd(&d->prekill_fd);
	d->prekill_fd = prekill_fd;
	hook_caps_release(d);
	hook_check(d, &d->cfg);
	check_scope(d);
	daemon_warn_setup(d);
	if (watch_install(d, w) < 0)
		log_err(&d->log, "reload: not every tier could be watched");
	daemon_groups_reload(d, old_names, old_n);
	daemon_moom_reload(d);
	if (d->groups.active)
		(void)check_fd_headroom(d); /* max_groups may have grown: raised, or said why not */
	event_timer_arm(d->rearmtimerfd, 0);
	if (d->lmkd) {
		d->lmkd->short_prockill = d->cfg.lmkd_prockill_short;
		d->lmkd->kill_log = d->cfg.lmkd_kill_log;
	}
}

/* One line: the drop-in files read after the main one, in order. */
static void log_dropins(const struct daemon *d)
{
	char list[2048], name[CONFIG_WHERE_MAX];
	size_t i, n = 0;

	if (!d->cfg.n_dropins) {
		log_info(&d->log, "%s: no drop-in files (*.conf in %s.d%s%s)", d->cfg.path, d->cfg.path,
			 *d->cfg.vendor_dir ? " or " : "", d->cfg.vendor_dir);
		return;
	}
	list[0] = '\0';
	for (i = 0; i < d->cfg.n_dropins && n < sizeof(list); i++) {
		int k = snprintf(list + n, sizeof(list) - n, "%s%s", i ? ", " : "",
				 config_file_name(&d->cfg, (unsigned)i + 1, name, sizeof(name)));

		n += k > 0 ? (size_t)k : 0;
	}
	log_notice(&d->log, "%s: %zu drop-in file%s read after it, in order: %s", d->cfg.path, d->cfg.n_dropins,
		   d->cfg.n_dropins == 1 ? "" : "s", list);
}

/* lmkd's properties (lmkprops.h): ro.lmk.debug's log level, and one line
 * for each property found, in force or without a psi-lmkd meaning. */
static void log_props(struct daemon *d)
{
	int level = d->cfg.lmk_debug ? LOG_DEBUG : d->cli_log_level;
	size_t i;

	/* written only when it changes: the lmkd watchdog's thread reads it */
	if (d->log.max_level != level)
		d->log.max_level = level;
	if (d->cfg.lmkd_properties == CONFIG_PROPS_OFF)
		return;
	for (i = 0; i < d->cfg.n_props; i++) {
		const struct config_prop *p = &d->cfg.props[i];

		if (p->used)
			log_info(&d->log, "lmkd property %s=%s in force", p->name, p->value);
		else
			log_notice(&d->log, "lmkd property %s=%s ignored: it has no psi-lmkd meaning (psi-lmkd(8), ANDROID)",
				   p->name, p->value);
	}
	log_info(&d->log, "%zu of lmkd's properties found in %s", d->cfg.n_props,
		 d->cfg.lmkd_properties == CONFIG_PROPS_FILE ? d->cfg.lmkd_properties_file : "the property area");
}

/* Reads the file again and prepares all that can fail -- the config, its
 * policy, the new triggers -- before anything changes: a reload that fails
 * leaves the daemon as it was, and one that works is never unarmed. */
static int reload(struct daemon *d)
{
	struct config_error err;
	struct config *next = malloc(sizeof(*next));
	struct watch *w = malloc(sizeof(*w));
	struct policy *policy = NULL;
	int rc = -EINVAL, hook_fd = -1, prekill_fd = -1;

	notify_reloading(d->rootfd);
	if (!next || !w)
		log_err(&d->log, "reload: out of memory; keeping the current configuration");
	else if (config_load_file(next, d->cfg.path, *d->cfg.vendor_dir ? d->cfg.vendor_dir : NULL, &err) < 0)
		log_err(&d->log, "reload failed, keeping the current configuration: %s", err.msg);
	else if (hook_open(d, next, &hook_fd, &prekill_fd) < 0)
		log_err(&d->log, "reload failed at on_kill or pre_kill, keeping the current configuration");
	else if (!(policy = calloc(1, sizeof(*policy))))
		log_err(&d->log, "reload: out of memory for the new kill policy; keeping the current configuration");
	else if (apply_policy(d, next, policy) < 0)
		log_err(&d->log, "reload failed, keeping the current configuration");
	else if (open_watch(d, next, w) < 0)
		log_err(&d->log, "reload failed, keeping the current configuration and triggers");
	else
		rc = 0;
	if (rc == 0) {
		reload_switch(d, next, policy, w, hook_fd, prekill_fd);
		policy = NULL;
		hook_fd = prekill_fd = -1;
		log_notice(&d->log, "configuration reloaded from %s: %zu tiers", d->cfg.path, d->cfg.n_tiers);
		log_dropins(d);
		log_props(d);
	}
	daemon_notify_state(d, rc == 0 ? "" : "reload failed, old configuration kept: ", true);
	if (policy) {
		policy_deinit(policy);
		free(policy);
	}
	close_fd(&hook_fd);
	close_fd(&prekill_fd);
	free(next);
	free(w);
	return rc;
}

/* hooks (on_kill, pre_kill) are the daemon's only children; the killer
 * hears of its pre_kill hooks first */
static void reap_hooks(struct daemon *d)
{
	char st[256];
	int status;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
		if (!killer_child_exited(&d->killer, pid, status) &&
		    (WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) != 0)))
			log_warn(&d->log, "on_kill hook (pid %d) %s", (int)pid, hook_status_text(st, sizeof(st), status));
}

static void handle_signals(struct daemon *d)
{
	struct signalfd_siginfo si;

	while (read(d->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		switch (si.ssi_signo) {
		case SIGTERM:
		case SIGINT:
			log_notice(&d->log, "signal %s: exiting", strsignal((int)si.ssi_signo));
			notify_stopping(d->rootfd);
			d->quit = true;
			break;
		case SIGHUP:
			(void)reload(d);
			break;
		case SIGUSR1:
			log_status(d);
			break;
		case SIGCHLD:
			reap_hooks(d);
			break;
		default:
			break;
		}
	}
}

/* ------------------------------------------------------------------ the killer's ops */

static int killer_watch(void *ctx, int pidfd)
{
	struct daemon *d = ctx;

	return event_add(d->epfd, pidfd, EPOLLIN, TAG(TAG_PIDFD, 0));
}

static void killer_unwatch(void *ctx, int pidfd)
{
	struct daemon *d = ctx;

	event_del(d->epfd, pidfd);
}

static int killer_arm(void *ctx, uint64_t us)
{
	struct daemon *d = ctx;

	return event_timer_arm(d->timerfd, us);
}

static void killer_changed(void *ctx)
{
	daemon_notify_state(ctx, "", false);
}

static uint64_t killer_now(void *ctx)
{
	(void)ctx;
	return event_now_us();
}

static int killer_env_now(void *ctx, const char *group, struct killer_env *env, char *buf, size_t size)
{
	struct daemon *d = ctx;
	size_t s;

	if (!*group) {
		killer_env_of(d, env);
		return 0;
	}
	for (s = 0; s < d->groups.n_slots; s++) {
		struct group *g = d->groups.slot[s];

		if (g && !g->lost && strcmp(g->path, group) == 0) {
			daemon_group_env(d, g, env, buf, size);
			return 0;
		}
	}
	return -ENOENT;
}

static const struct killer_ops daemon_killer_ops = {
	.watch = killer_watch,
	.unwatch = killer_unwatch,
	.arm_timer = killer_arm,
	.changed = killer_changed,
	.now_us = killer_now,
	.env = killer_env_now,
};

/* ------------------------------------------------------------------ the lmkd socket's ops */

static int lmkd_watch(void *ctx, int fd, enum lmkd_fd_kind kind, size_t index)
{
	struct daemon *d = ctx;

	return event_add(d->epfd, fd, kind == LMKD_FD_PROC ? EPOLLIN : EPOLLIN | EPOLLRDHUP,
			 TAG(TAG_LMKD, LMKD_TAG(kind, index)));
}

static int lmkd_reload(void *ctx)
{
	return reload(ctx);
}

static const struct lmkd_server_ops daemon_lmkd_ops = {
	.watch = lmkd_watch,
	.unwatch = killer_unwatch,
	.reload = lmkd_reload,
	.now_us = killer_now,
};

/* Android: the lmkd socket init handed over (ANDROID_SOCKET_lmkd), else the
 * configured one; neither: nothing changes. */
static int lmkd_start(struct daemon *d)
{
	const char *env = getenv(LMKD_SOCKET_ENV);
	int r;

	if (!env && !*d->cfg.lmkd_socket)
		return 0;
	d->lmkd = calloc(1, sizeof(*d->lmkd));
	if (!d->lmkd) {
		log_err(&d->log, "out of memory setting up the lmkd socket");
		return -ENOMEM;
	}
	r = lmkd_server_open(d->lmkd, env, d->cfg.lmkd_socket, &daemon_lmkd_ops, d, &d->log, d->rootfd, d->procfd);
	if (r < 0) {
		free(d->lmkd);
		d->lmkd = NULL;
		return r;
	}
	d->lmkd->short_prockill = d->cfg.lmkd_prockill_short;
	d->lmkd->kill_log = d->cfg.lmkd_kill_log;
	d->lmkd->memory_cgroup = d->memory_cgroup;
	/* as lmkd: the framework learns that kills are reported */
	r = lmkprops_publish_reportkills();
	if (r == 0)
		log_info(&d->log, "lmkd socket: %s=1 published", LMKPROPS_REPORTKILLS);
	else if (r != -ENOTSUP)
		log_warn(&d->log, "lmkd socket: cannot publish %s=1 (%s): ActivityManager will not know that kills are "
			 "reported", LMKPROPS_REPORTKILLS, strerror(-r));
	r = lmkd_server_watchdog_start(d->lmkd, LMKD_WATCHDOG_TIMEOUT_US);
	if (r < 0)
		log_warn(&d->log, "lmkd socket: no watchdog: %s; a stuck event loop kills nothing", strerror(-r));
	else
		log_info(&d->log, "lmkd socket: watchdog on: an event loop stuck for %llu ms kills the most expendable "
			 "registered process", (unsigned long long)(LMKD_WATCHDOG_TIMEOUT_US / 1000));
	return 0;
}

/* Back to epoll_wait: the lmkd watchdog's clock stops, and it gets the
 * kill path's current choices, down to the lowest band floor of the tiers
 * (never below 0, as lmkd's watchdog). d->lmkd may have gone (a reload). */
static void lmkd_watchdog_idle_of(struct daemon *d)
{
	struct killer_env env;
	struct pick_ctx c;
	int floor = OOM_SCORE_ADJ_MAX;
	size_t i;

	if (!d->lmkd)
		return;
	for (i = 0; i < d->cfg.n_tiers; i++)
		if (d->cfg.tiers[i].min_oom_score_adj < floor)
			floor = d->cfg.tiers[i].min_oom_score_adj;
	killer_env_of(d, &env);
	killer_pick_ctx(&d->killer, &env, &c);
	lmkd_server_loop_idle(d->lmkd, &c, floor, env.dry_run);
}

static void lmkd_stop(struct daemon *d)
{
	if (!d->lmkd)
		return;
	lmkd_server_close(d->lmkd);
	free(d->lmkd);
	d->lmkd = NULL;
}

/* ------------------------------------------------------------------ lifecycle */

/* nice / realtime_priority, set once at start (a reload does not change
 * them). SCHED_RESET_ON_FORK: on_kill hooks do not inherit real-time. */
static void set_priority(struct daemon *d)
{
	if (d->cfg.has_nice && setpriority(PRIO_PROCESS, 0, d->cfg.nice) < 0)
		log_warn(&d->log, "cannot set nice %d: %s%s", d->cfg.nice, strerror(errno),
			 errno == EACCES || errno == EPERM ? " (needs CAP_SYS_NICE)" : "");
	if (d->cfg.realtime_priority) {
		struct sched_param sp = { .sched_priority = d->cfg.realtime_priority };

		if (sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK, &sp) < 0)
			log_warn(&d->log, "cannot run at SCHED_FIFO priority %d: %s%s", d->cfg.realtime_priority,
				 strerror(errno), errno == EPERM ? " (needs CAP_SYS_NICE or RLIMIT_RTPRIO)" : "");
		else
			log_info(&d->log, "running at SCHED_FIFO priority %d", d->cfg.realtime_priority);
	}
}

/* File descriptors: a soft limit below 1024 is raised towards it, as far as
 * the hard limit allows (1024, not more: on_kill hooks inherit it, and
 * select() cannot go beyond it). Then, with every tier
 * armed, there must be room for what the worst moment needs at once: a
 * victim's pidfd, the /proc scan (a directory and a file), and a reload or
 * re-arm opening a second set of trigger fds. Failing now, with a clear
 * message, beats failing to kill under pressure. */
static void raise_fd_limit(struct daemon *d)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < FD_SOFT_LIMIT && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max < FD_SOFT_LIMIT ? rl.rlim_max : FD_SOFT_LIMIT;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
			log_warn(&d->log, "cannot raise the soft file descriptor limit: %s", strerror(errno));
	}
}

static int check_fd_headroom(struct daemon *d)
{
	int open_fds = count_entries_at(d->procfd, "self/fd");
	uint64_t need;
	struct rlimit rl;

	if (open_fds == -ENOENT)
		return 0; /* no /proc/self/fd under a fixture root: nothing to check */
	if (open_fds == -EMFILE && getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < INT32_MAX)
		open_fds = (int)rl.rlim_cur + 1; /* all of them, and the count's own fd would be one more */
	if (open_fds < 0) {
		log_warn(&d->log, "cannot count open file descriptors (%s): the limit is not checked",
			 strerror(-open_fds));
		return 0;
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY)
		return 0;
	need = (uint64_t)(open_fds - 1) + FD_RESERVE + d->watch.n_tiers + 3 + daemon_groups_fd_need(d) + 2 /* ManagedOOM */;
	if (need > rl.rlim_cur && need <= rl.rlim_max) {
		struct rlimit up = { .rlim_cur = need, .rlim_max = rl.rlim_max };

		if (setrlimit(RLIMIT_NOFILE, &up) == 0)
			return 0;
	}
	if (need <= rl.rlim_cur)
		return 0;
	log_err(&d->log, "the file descriptor limit (RLIMIT_NOFILE) is %" PRIu64 ": psi-lmkd holds %d and needs %" PRIu64
		" to kill, scan /proc and reload; raise it (ulimit -n, LimitNOFILE=)", (uint64_t)rl.rlim_cur,
		open_fds - 1, need);
	return -EMFILE;
}

static void protect_self(struct daemon *d)
{
	int r = write_file_at(d->procfd, "self/oom_score_adj", "-1000");

	if (r < 0)
		log_warn(&d->log, "cannot set own oom_score_adj to -1000: %s%s; the kernel OOM killer could pick psi-lmkd",
			 strerror(-r), r == -EACCES ? " (needs CAP_SYS_RESOURCE)" : "");
}

/* Locks the daemon in memory, after one dry run of the kill path so that its
 * code and stack pages are resident before they are needed under pressure
 * (MCL_ONFAULT locks only pages touched by then). The heap's free pages stay
 * (no malloc_trim): the kill path's own allocations (regexec, kill_cgroup's
 * read of cgroup.procs) reuse them without a fault. */
static void lock_memory(struct daemon *d)
{
	struct killer_env env;
	long dropped;

	killer_env_of(d, &env);
	killer_warm_up(&d->killer, &env);
	/* the code of start-up, reloads and the tools, and the unwind tables
	 * (coldtext.h): mapped by now (the warm-up reads all of the text), not
	 * needed till a reload */
	dropped = coldtext_drop();
	if (dropped < 0)
		log_debug(&d->log, "cannot drop the start-up code's pages: %s", strerror((int)-dropped));
	else
		log_debug(&d->log, "dropped %ld kB of start-up code and unwind tables before locking", dropped / 1024);
	if (mlockall(MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT) < 0)
		log_warn(&d->log, "cannot lock psi-lmkd in memory (mlockall: %s); it may be slow under pressure",
			 strerror(errno));
}

/* Capabilities: drop all but what the daemon needs (and the hook's, kept
 * permitted only, with on_kill); find out whether CAP_SYS_RESOURCE stayed. */
static void init_caps(struct daemon *d, const struct config *cfg, const struct daemon_options *opt)
{
	int r;

	d->manage_caps = opt->drop_caps;
	if (opt->drop_caps) {
		char err[256], caps[512];

		r = config_has_hook(cfg) ? caps_drop_keep(hook_caps, 2, err, sizeof(err)) : caps_drop_to_needed(err, sizeof(err));
		if (r < 0)
			log_warn(&d->log, "cannot drop capabilities: %s", strerror(-r));
		else if (err[0])
			log_info(&d->log, "capabilities: %s", err);
		if (caps_describe(caps, sizeof(caps)) == 0)
			log_notice(&d->log, "capabilities kept: %s", caps);
	}
	/* dropped above unless on_kill is set */
	d->hook_caps_dropped = opt->drop_caps && !config_has_hook(cfg);
	d->hook_caps = !d->hook_caps_dropped && hook_caps_permitted(d);
	if (config_has_hook(cfg) && d->hook_caps)
		log_notice(&d->log, "CAP_SETUID and CAP_SETGID kept in the permitted set only, for the hooks to "
			   "switch to %s", cfg->on_kill_user.name);
	hook_check(d, cfg);
	r = caps_query(CAP_SYS_RESOURCE);
	if (r < 0)
		log_warn(&d->log, "cannot tell whether psi-lmkd has CAP_SYS_RESOURCE (%s): taken as no", strerror(-r));
	d->cap_sys_resource = r == 1;
}

/* The root and /proc, the epoll set and the daemon's own fds: signals and
 * its timers. 0 or -errno (logged). */
static int open_loop(struct daemon *d, const char *root)
{
	static const int sigs[] = { SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGCHLD };
	int r;

	r = d->rootfd = sysroot_open(root);
	if (r < 0) {
		log_err(&d->log, "cannot open root %s: %s", root, strerror(-r));
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
	    (r = event_add(d->epfd, d->timerfd, EPOLLIN, TAG(TAG_TIMER, 0))) < 0 ||
	    (r = d->memtimerfd = event_timerfd_new()) < 0 ||
	    (r = event_add(d->epfd, d->memtimerfd, EPOLLIN, TAG(TAG_MEMORY, 0))) < 0 ||
	    (r = d->rearmtimerfd = event_timerfd_new()) < 0 ||
	    (r = event_add(d->epfd, d->rearmtimerfd, EPOLLIN, TAG(TAG_REARM, 0))) < 0 ||
	    (r = d->bustimerfd = event_timerfd_new()) < 0 ||
	    (r = event_add(d->epfd, d->bustimerfd, EPOLLIN, TAG(TAG_BUS, 1))) < 0) {
		log_err(&d->log, "cannot set up the event loop: %s", strerror(-r));
		return r;
	}
	return 0;
}

/* The cgroup2 mount, for kill_cgroup, scopes and the groups. */
static void find_cgroup2(struct daemon *d)
{
	int r = cgroup_mount(d->rootfd, d->cg2_mount, sizeof(d->cg2_mount));

	d->cg2_err = r < 0 ? r : 0;
	if (r < 0) {
		d->cg2_mount[0] = '\0';
		if (r != -ENOENT)
			log_warn(&d->log, "cannot find the cgroup2 mount (%s): kill_cgroup will not work", strerror(-r));
	}
}

/* The kill policy, the main watch and the groups, then what they need: the
 * fd headroom and the lmkd socket. 0 or -errno (logged). */
static int arm(struct daemon *d)
{
	struct watch *w;
	int r;

	d->policy = calloc(1, sizeof(*d->policy));
	if (!d->policy) {
		log_err(&d->log, "out of memory setting up the kill policy");
		return -ENOMEM;
	}
	r = apply_policy(d, &d->cfg, d->policy);
	if (r < 0)
		return r;
	w = malloc(sizeof(*w));
	if (!w) {
		log_err(&d->log, "out of memory arming the tiers");
		return -ENOMEM;
	}
	r = open_watch(d, &d->cfg, w);
	if (r == 0)
		r = watch_install(d, w);
	free(w);
	if (r == 0)
		r = daemon_groups_start(d);
	if (r == 0)
		r = check_fd_headroom(d);
	return r < 0 ? r : lmkd_start(d);
}

/* WATCHDOG=1 every half of WatchdogSec=, when the service manager asks. */
static int start_watchdog(struct daemon *d)
{
	int r;

	d->watchdog_usec = notify_watchdog_usec();
	if (!d->watchdog_usec)
		return 0;
	r = d->wdtimerfd = event_timerfd_new();
	if (r < 0 || (r = event_add(d->epfd, d->wdtimerfd, EPOLLIN, TAG(TAG_WATCHDOG, 0))) < 0 ||
	    (r = event_timer_arm(d->wdtimerfd, d->watchdog_usec / 2)) < 0)
		log_err(&d->log, "cannot set up the watchdog timer: %s", strerror(-r));
	return r < 0 ? r : 0;
}

struct daemon *daemon_new(void)
{
	void *p = mmap(NULL, sizeof(struct daemon), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

void daemon_delete(struct daemon *d)
{
	if (!d)
		return;
	if (d->log.sink)
		logsink_drain(d->log.sink, 1000); /* the last lines, if the reader takes them within a second */
	munmap(d, sizeof(*d));
}

/* Copies src over zeroed dst, skipping its zero runs (64 bytes at a time):
 * most of a configuration is unused room (path and pattern buffers, tier and
 * property slots), and a page of dst that only zeros would go to stays the
 * zero page. */
static void copy_sparse(void *dst, const void *src, size_t size)
{
	unsigned char *o = dst;
	const unsigned char *b = src;
	size_t i, j, n;

	for (i = 0; i < size; i += n) {
		n = size - i < 64 ? size - i : 64;
		for (j = 0; j < n; j++)
			if (b[i + j]) {
				memcpy(o + i, b + i, n);
				break;
			}
	}
}

int daemon_init(struct daemon *d, const struct config *cfg, const struct daemon_options *opt)
{
	int r;

	/* From daemon_new, d is zero already: what start-up and the idle loop
	 * write becomes resident, and the killer's state all of it
	 * (killer_init); the rest of the mapping is not touched. */
	if (!opt->zeroed)
		memset(d, 0, sizeof(*d));
	d->up.sample = daemon_sample;
	d->up.idle_clock_update = daemon_idle_clock_update;
	d->rootfd = d->procfd = d->epfd = d->sigfd = d->timerfd = d->memtimerfd = d->rearmtimerfd = -1;
	d->wdtimerfd = d->bustimerfd = d->hook_fd = d->prekill_fd = -1;
	memevent_init(&d->memev);
	d->ctl.fd = -1;
	d->groups.set.inotify_fd = -1;
	d->moom.timerfd = -1;
	d->moom.link.fd = -1;
	killer_init(&d->killer, &daemon_killer_ops, d, &d->log, -1, -1, d->cg2_mount, getpid());
	d->ops = opt->ops ? opt->ops : &watch_kernel_ops;
	copy_sparse(&d->cfg, cfg, sizeof(d->cfg));
	cfg = &d->cfg; /* the caller may release its copy once this returns */
	d->cli_dry_run = opt->dry_run;
	d->self = getpid();
	log_init(&d->log, opt->log_level, opt->use_syslog);
	logsink_init(&d->logsink, STDERR_FILENO);
	log_use_sink(&d->log, &d->logsink);
	d->cli_log_level = opt->log_level;
	if (cfg->lmk_debug)
		d->log.max_level = LOG_DEBUG; /* ro.lmk.debug, from the start (log_props) */
	raise_fd_limit(d);
	init_caps(d, cfg, opt);
	r = hook_open(d, cfg, &d->hook_fd, &d->prekill_fd);
	if (r == 0)
		r = open_loop(d, opt->root ? opt->root : "/");
	if (r < 0)
		return r;
	protect_self(d);
	set_priority(d);
	warn_hidepid(d);
	find_cgroup2(d);
	d->killer.procfd = d->procfd;
	d->killer.rootfd = d->rootfd;
	r = arm(d);
	if (r == 0)
		r = daemon_moom_start(d, opt->root);
	if (r < 0)
		return r;
	lock_memory(d);
	r = start_watchdog(d);
	if (r < 0)
		return r;
	daemon_ctl_open(d, opt->control);
	daemon_warn_setup(d);
	log_dropins(d);
	log_props(d);
	check_scope(d);
	log_notice(&d->log, "psi-lmkd %s running: %zu tiers on %s%s, scope %s, kill_timeout %" PRIu64 " ms%s", VERSION,
		   d->cfg.n_tiers, d->cfg.pressure, d->groups.active ? " and the groups their cgroup patterns match" : "",
		   d->cfg.scope, d->cfg.kill_timeout_us / 1000, daemon_dry_run(d) ? ", DRY RUN (nothing will be killed)" : "");
	daemon_notify_state(d, "", true);
	return 0;
}

/* A trigger fd reported: POLLERR means its file is gone. */
static bool trigger_lost(struct daemon *d, uint32_t events)
{
	if (!(events & (EPOLLERR | EPOLLHUP)))
		return false;
	watch_lost(d, 0);
	return true;
}

/* ------------------------------------------------------------------ dispatch */

/* One handler per epoll tag kind: the event's tag index, its events, and
 * the wakeup's fired tiers. */
typedef void (*tag_handler)(struct daemon *d, size_t i, uint32_t events, uint64_t tag, struct wake *w);

static void on_signal(struct daemon *d, size_t i, uint32_t events, uint64_t tag, struct wake *w)
{
	(void)i, (void)events, (void)tag, (void)w;
	handle_signals(d);
}

static void on_tier(struct daemon *d, size_t i, uint32_t events, uint64_t tag, struct wake *w)
{
	(void)tag;
	if (trigger_lost(d, events))
		return;
	watch_kernel_event(&d->watch, i, event_now_us());
	daemon_tier_fired(d, i, FIRE_PSI, w);
	rearm_sampler(d);
}

static void on_sentinel(struct daemon *d, size_t i, uint32_t events, uint64_t tag, struct wake *w)
{
	(void)i, (void)tag;
	if (trigger_lost(d, events))
		return;
	log_debug(&d->log, "sentinel trigger fired: sampling %s", d->watch.path);
	watch_sentinel_event(&d->watch, event_now_us());
	daemon_sample(d, w);
}

static void on_sample(struct daemon *d, size_t i, uint32_t events, uint64_t tag, struct wake *w)
{
	(void)i, (void)events, (void)tag;
	if (event_timer_expired(d->watch.timer_fd))
		daemon_sample(d, w);
}

static void on_idle_clock(struct daemon *d, size_t i, uint32_t events, uint64_t tag, struct wake *w)
{
	(void)i, (void)events, (void)tag;
	if (event_timer_expired(d->memtimerfd))
		daemon_idle_tick(d, w);
}

static void on_memwake(struct daemon *d, size_t i, uint32_t events, uint64_t tag, struct wake *w)
{
	(void)i, (void)events, (void)tag;
	daemon_memory_wake(d, w);
}

static void on_memoom(struct daemon *d, size_t i, uint32_t events, uint64_t tag, struct wake *w)
{
	(void)i, (void)events, (void)tag;
	daemon_memory_oom(d, w);
}

static void on_rearm(struct daemon *d, size_t i, uint32_t events, uint64_t tag, struct wake *w)
{
	(void)i, (void)events, (void)tag, (void)w;
	if (event_timer_expired(d->rearmtimerfd))
		watch_retry(d);
}

static void on_watchdog(struct daemon *d, size_t i, uint32_t events, uint64_t tag, struct wake *w)
{
	(void)i, (void)events, (void)tag, (void)w;
	if (event_timer_expired(d->wdtimerfd)) {
		notify_watchdog(d->rootfd);
		event_timer_arm(d->wdtimerfd, d->watchdog_usec / 2);
	}
}

static void on_pidfd(struct daemon *d, size_t i, uint32_t events, uint64_t tag, struct wake *w)
{
	(void)i, (void)events, (void)tag, (void)w;
	killer_exited(&d->killer);
}

static void on_kill_timer(struct daemon *d, size_t i, uint32_t events, uint64_t tag, struct wake *w)
{
	(void)i, (void)events, (void)tag, (void)w;
	if (event_timer_expired(d->timerfd))
		killer_timer(&d->killer);
}

static void on_lmkd(struct daemon *d, size_t i, uint32_t events, uint64_t tag, struct wake *w)
{
	(void)tag, (void)w;
	if (d->lmkd)
		lmkd_server_event(d->lmkd, (enum lmkd_fd_kind)(i >> 28), i & 0x0fffffffu, events);
}

static void on_control(struct daemon *d, size_t i, uint32_t events, uint64_t tag, struct wake *w)
{
	(void)i, (void)events, (void)tag, (void)w;
	daemon_ctl_event(d);
}

static void on_bus(struct daemon *d, size_t i, uint32_t events, uint64_t tag, struct wake *w)
{
	(void)events, (void)tag, (void)w;
	daemon_warn_bus_event(d, i);
}

static void on_groups(struct daemon *d, size_t i, uint32_t events, uint64_t tag, struct wake *w)
{
	(void)i, (void)w;
	daemon_groups_event(d, tag, events);
}

static void on_moom(struct daemon *d, size_t i, uint32_t events, uint64_t tag, struct wake *w)
{
	(void)tag, (void)w;
	daemon_moom_event(d, i, events);
}

static const tag_handler handlers[] = {
	[TAG_SIGNAL] = on_signal,
	[TAG_TIER] = on_tier,
	[TAG_SENTINEL] = on_sentinel,
	[TAG_SAMPLE] = on_sample,
	[TAG_PIDFD] = on_pidfd,
	[TAG_TIMER] = on_kill_timer,
	[TAG_MEMORY] = on_idle_clock,
	[TAG_WATCHDOG] = on_watchdog,
	[TAG_REARM] = on_rearm,
	[TAG_MEMWAKE] = on_memwake,
	[TAG_MEMOOM] = on_memoom,
	[TAG_LMKD] = on_lmkd,
	[TAG_CONTROL] = on_control,
	[TAG_BUS] = on_bus,
	[TAG_GROUPS] = on_groups,
	[TAG_GTIER] = on_groups,
	[TAG_GSENTINEL] = on_groups,
	[TAG_GSAMPLE] = on_groups,
	[TAG_MOOM] = on_moom,
};

static void dispatch(struct daemon *d, const struct epoll_event *ev, struct wake *w)
{
	uint64_t tag = ev->data.u64;
	enum tag_kind kind = TAG_KIND(tag);

	if ((kind == TAG_TIER || kind == TAG_SENTINEL || kind == TAG_SAMPLE) &&
	    (!d->watch_armed || TAG_GEN(tag) != (d->generation & 0xffffffu)))
		return; /* an fd closed by a reload or a loss earlier in this wakeup */
	if ((size_t)kind < sizeof(handlers) / sizeof(handlers[0]) && handlers[kind])
		handlers[kind](d, TAG_INDEX(tag), ev->events, tag, w);
}

int daemon_step(struct daemon *d, int timeout_ms)
{
	struct epoll_event evs[CONFIG_TIERS_MAX + 8];
	struct wake w;
	int n, k;

	daemon_wake_reset(d, &w);
	/* lines stderr's reader has not taken: looked at again soon */
	if (log_flush(&d->log) && (timeout_ms < 0 || timeout_ms > LOG_RETRY_MS))
		timeout_ms = LOG_RETRY_MS;
	n = epoll_wait(d->epfd, evs, (int)(sizeof(evs) / sizeof(evs[0])), timeout_ms);
	if (n < 0) {
		if (errno == EINTR)
			return 0;
		log_err(&d->log, "epoll_wait: %s", strerror(errno));
		return -errno;
	}
	if (d->lmkd)
		lmkd_server_loop_busy(d->lmkd);
	for (k = 0; k < n; k++)
		dispatch(d, &evs[k], &w);
	wake_act(d, &w);
	daemon_groups_refresh(d);
	daemon_ctl_metrics(d);
	daemon_warn_kills(d);
	daemon_warn_poll(d);
	lmkd_watchdog_idle_of(d);
	return 0;
}

int daemon_run(struct daemon *d)
{
	int r = 0;

	while (!d->quit && r == 0)
		r = daemon_step(d, -1);
	return r;
}

void daemon_deinit(struct daemon *d)
{
	daemon_moom_stop(d);
	daemon_groups_stop(d);
	if (d->watch_armed)
		watch_close(&d->watch);
	d->watch_armed = false;
	killer_deinit(&d->killer);
	if (d->memev.oom_taken && memevent_release(&d->memev, d->rootfd) < 0)
		log_err(&d->log, "cannot turn the kernel's OOM killer of %s back on", d->memev.dir);
	memevent_close(&d->memev, d->rootfd);
	daemon_brake_release(d);
	lmkd_stop(d);
	daemon_ctl_close(d);
	daemon_warn_close(d);
	close_fd(&d->timerfd);
	close_fd(&d->memtimerfd);
	close_fd(&d->rearmtimerfd);
	close_fd(&d->wdtimerfd);
	close_fd(&d->bustimerfd);
	if (d->policy) {
		policy_deinit(d->policy);
		free(d->policy);
		d->policy = NULL;
	}
	close_fd(&d->sigfd);
	close_fd(&d->epfd);
	close_fd(&d->procfd);
	close_fd(&d->rootfd);
	close_fd(&d->hook_fd);
	close_fd(&d->prekill_fd);
}
