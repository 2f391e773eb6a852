/* SPDX-License-Identifier: MIT */
/* kill: the kill path. When tiers fire: hold back (a victim still dying,
 * settle_time, each tier's gates), choose a victim (pick.c: one /proc scan
 * through the root fd), kill it through an identity-checked pidfd (with
 * kill_cgroup, its whole cgroup2 subtree when every member may die) -- for
 * a PSI kill with pre_kill set, only once that hook exited or timed out
 * (prekill.h) -- reap its
 * memory with process_mrelease, start the on_kill hook, then wait for the
 * pidfd to report the exit, escalating SIGTERM to SIGKILL at term_timeout and
 * giving up at kill_timeout. Every hold-back and every outcome is logged.
 *
 * Nothing here may leave the killer stuck: a victim it may not signal is
 * remembered and the next one is tried; when the owner cannot watch the pidfd
 * or arm the timer, the killer waits for the victim itself, bounded by the
 * same timeouts; a tier with no candidate backs off its rescans until a
 * process is created. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "cgroup.h"
#include "domain.h"
#include "fileio.h"
#include "hook.h"
#include "kill.h"
#include "killline.h"
#include "memory.h"
#include "reaper.h"

/* choices per decision: a victim that exits or refuses the signal is skipped */
#define PICK_ATTEMPTS 4
/* kill_cgroup: at most this many processes and levels in the subtree */
#define GROUP_PIDS_MAX 1024
#define GROUP_DEPTH_MAX 16

static uint64_t now_us(const struct killer *k)
{
	return k->ops->now_us(k->ctx);
}

/* The kill path's cost (struct kill_path_cost): getrusage is a syscall on
 * a stack struct, nothing it does can fault once the warm-up ran it. */
static void path_start(struct killer *k)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) < 0)
		memset(&ru, 0, sizeof(ru));
	k->path.t0_us = now_us(k);
	k->path.minflt0 = (uint64_t)ru.ru_minflt;
	k->path.majflt0 = (uint64_t)ru.ru_majflt;
}

static void path_end(struct killer *k)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) < 0)
		memset(&ru, 0, sizeof(ru));
	k->path.us = now_us(k) - k->path.t0_us;
	k->path.minflt = (uint64_t)ru.ru_minflt - k->path.minflt0;
	k->path.majflt = (uint64_t)ru.ru_majflt - k->path.majflt0;
}

static void path_log(struct killer *k, const char *what, pid_t pid)
{
	log_debug(k->log, "kill path: %" PRIu64 " minor and %" PRIu64 " major page faults, %" PRIu64
		  " us from the decision to the %s of pid %d", k->path.minflt, k->path.majflt, k->path.us, what, (int)pid);
}

void killer_init(struct killer *k, const struct killer_ops *ops, void *ctx, const struct log *log, int procfd,
		 int rootfd, const char *cg2_mount, pid_t self)
{
	/* all of it written, not left to the zero page of a fresh mapping
	 * (daemon_new): the kill path writes here under pressure (the pick,
	 * the kill in flight, the history, the growth samples), so every page
	 * must be resident before mlockall */
	memset(k, 0, sizeof(*k));
	k->ops = ops;
	k->ctx = ctx;
	k->log = log;
	k->procfd = procfd;
	k->rootfd = rootfd;
	k->cg2_mount = cg2_mount;
	k->self = self;
	k->kill.pidfd = -1;
}

void tier_state_carry(struct tier_state *to, const struct tier_state *from)
{
	*to = *from;
	to->streak = 0;
	to->last_event_us = 0;
	to->rescan_at_us = 0;
	to->rescan_backoff_us = 0;
}

void killer_env_init(struct killer_env *env, const struct config *cfg, const struct victim_policy *policy,
		     struct tier_state *tiers)
{
	memset(env, 0, sizeof(*env));
	env->cfg = cfg;
	env->scope = cfg->scope;
	env->group = "";
	env->pressure = cfg->pressure;
	env->policy = policy;
	env->memory_cgroup = "";
	env->tiers = tiers;
	env->hook_fd = -1;
	env->prekill_fd = -1;
}

void killer_deinit(struct killer *k)
{
	(void)prekill_stop(&k->prekill); /* the victim is not signalled */
	k->kill.pre = false;
	if (k->kill.pidfd >= 0 && k->ops)
		k->ops->unwatch(k->ctx, k->kill.pidfd);
	close_fd(&k->kill.pidfd);
	k->kill.active = false;
}

/* How log lines name a tier: "NAME", or "NAME in GROUP" for an instance of
 * a cgroup-pattern tier (printf format and arguments). */
#define TIER_FMT "%s%s%s"
#define TIER_ARGS(env, t) (t)->name, *(env)->group ? " in " : "", (env)->group

/* The growth that makes a culprit in a domain of domain_kb (victim.h); 0:
 * growth does not rank (culprit_growth off, victim_order adj, domain
 * unknown). */
static bool culprit_ranks(const struct config *c)
{
	return c->victim_order == VICTIM_ORDER_BADNESS && c->culprit_growth.set;
}

static uint64_t culprit_kb(const struct config *c, uint64_t domain_kb)
{
	uint64_t b;

	if (!culprit_ranks(c) || !domain_kb)
		return 0;
	b = memory_amount_bytes(&c->culprit_growth, domain_kb * 1024);
	if (c->culprit_growth.percent && b < CONFIG_CULPRIT_MIN_BYTES)
		b = CONFIG_CULPRIT_MIN_BYTES;
	return b / 1024 ? b / 1024 : 1;
}

static struct pick_ctx pick_context(const struct killer *k, const struct killer_env *env, uint64_t domain_kb,
				    enum fire_reason why)
{
	uint64_t ckb = culprit_kb(env->cfg, domain_kb);

	struct pick_ctx c = { .procfd = k->procfd, .rootfd = k->rootfd, .cg2_mount = k->cg2_mount,
			      .policy = env->policy, .self = k->self, .scope = env->scope,
			      .strict_scope = env->strict_scope,
			      .trusted_uid_max = env->cfg->trusted_uid_max,
			      .exclude = k->exclude, .n_exclude = k->n_exclude,
			      .oomd_prefs = env->cfg->systemd_oom_preferences,
			      .order = env->cfg->victim_order, .domain_kb = domain_kb,
			      .early_look = true,
			      .culprit_kb = ckb,
			      .member_of = why == FIRE_OOM ? env->oom_group : NULL };

	return c;
}

/* Whether a choice on stall ranks readers (pick_ctx.readers), measured
 * from sample s: yes unless the domain read more anonymous pages back in
 * (from swap) than file pages since s was taken. In a swap storm the
 * processes that read most are those whose pages come back from swap --
 * the user's, as often as the culprit's -- so growth, then badness,
 * decide there; in a file thrash file refaults lead, and the reader of the
 * files is its cause. Unknown counts (before 5.9): readers rank. */
static bool readers_rank(struct killer *k, const struct killer_env *env, const struct growth_sample *s)
{
	struct mem_info mi;
	uint64_t file, anon;

	if (!s || !s->reads)
		return false;
	if (!s->refault_known || memory_read_evidence(k->rootfd, env->memory_cgroup, &mi) < 0 || !mi.refault_known)
		return true;
	file = mi.refault_file > s->refault_file ? mi.refault_file - s->refault_file : 0;
	anon = mi.refault_anon > s->refault_anon ? mi.refault_anon - s->refault_anon : 0;
	log_debug(k->log, "refaults since the sample: %" PRIu64 " file, %" PRIu64 " anonymous pages: readers %s", file,
		  anon, anon > file ? "do not rank (swap leads)" : "rank");
	return anon <= file;
}

/* What a choice measures growth from (pick_ctx.growth): the base sample;
 * NULL if c has no culprit_kb or no sample is young enough. Without one,
 * nothing tells growth from a start: a process started a moment ago holds
 * what it allocated at start, not a culprit's growth, so badness decides. */
static const struct growth_sample *decision_growth(struct killer *k, const struct pick_ctx *c)
{
	return c->culprit_kb ? growth_base(&k->growth, now_us(k)) : NULL;
}

void killer_pick_ctx(const struct killer *k, const struct killer_env *env, struct pick_ctx *c)
{
	*c = pick_context(k, env, 0, FIRE_PSI);
}

/* The OOM domain of this decision, in kB (domain.h): the memory cgroup the
 * daemon watches, else the system. Read in either order, so that the kill
 * line always tells the kernel's view; 0 when it cannot be read (then the
 * badness order falls back to adj, and says so). */
static uint64_t decision_domain(struct killer *k, const struct killer_env *env, const struct tier_config *t)
{
	uint64_t kb = 0;
	int r = domain_read(k->rootfd, env->memory_cgroup, &kb);

	if (r < 0) {
		if (env->cfg->victim_order == VICTIM_ORDER_BADNESS)
			log_warn(k->log, "tier " TIER_FMT ": cannot read the size of the OOM domain (%s): choosing by oom_score_adj "
				 "this time", TIER_ARGS(env, t), strerror(-r));
		return 0;
	}
	return kb;
}

/* Logs why a tier did not act, at most every KILLER_IDLE_LOG_INTERVAL_US per tier. */
__attribute__((format(printf, 4, 5))) static void log_idle(struct killer *k, const struct killer_env *env, size_t i,
							   const char *fmt, ...)
{
	struct tier_state *ts = &env->tiers[i];
	uint64_t now = now_us(k);
	char msg[512];
	va_list ap;

	if (ts->last_idle_log_us && now - ts->last_idle_log_us < KILLER_IDLE_LOG_INTERVAL_US) {
		ts->idle_unlogged++;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_notice(k->log, "tier " TIER_FMT " fired but %s%s", TIER_ARGS(env, &env->cfg->tiers[i]), msg,
		   ts->idle_unlogged ? " (and earlier events since the last report)" : "");
	ts->last_idle_log_us = now;
	ts->idle_unlogged = 0;
}

static const char *reason_name(const struct tier_config *t, enum fire_reason why)
{
	if (why == FIRE_LOW_MEMORY)
		return "low_memory";
	if (why == FIRE_OOM)
		return "oom";
	if (why == FIRE_MANAGED_PRESSURE)
		return "managed_oom_pressure";
	if (why == FIRE_MANAGED_SWAP)
		return "managed_oom_swap";
	return t->state == PSI_FULL ? "psi_full" : "psi_some";
}

/* The kill line; under journald, one structured entry with the history
 * record's fields instead (killline_journal). */
static void log_kill(struct killer *k, const char *verb, const struct proc_info *pi, const struct tier_config *t,
		     enum fire_reason why, const struct kill_record *r)
{
	char line[2048];

	killline_format(line, sizeof(line), verb, pi, t, reason_name(t, why), r->group);
	if (killline_journal(k->log, k->rootfd, LOG_NOTICE, verb, line, r) == 0)
		return;
	log_notice(k->log, "%s", line);
}

/* Into the history: the kill line's fields, with the watched pressure and
 * the available memory of this moment (read after the kill: the victim
 * does not wait for them). */
static const struct kill_record *remember(struct killer *k, const struct killer_env *env, bool dry,
					 const struct proc_info *pi, const struct tier_config *t, enum fire_reason why)
{
	struct kill_record r;
	struct timespec ts;
	struct mem_info mi;
	char buf[512];

	clock_gettime(CLOCK_REALTIME, &ts);
	history_record_init(&r, (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000, dry, pi, t->name,
			    reason_name(t, why));
	history_display_path(r.group, sizeof(r.group), env->group);
	r.has_psi = read_file_at(k->rootfd, env->pressure + strspn(env->pressure, "/"), buf, sizeof(buf)) > 0 &&
		    psi_parse(buf, &r.psi) == 0;
	if (memory_read(k->rootfd, env->memory_cgroup, &mi) == 0) {
		r.has_mem = true;
		r.available_bytes = mi.available_bytes;
		r.total_bytes = mi.total_bytes;
	}
	history_push(&k->history, &r);
	return history_newest(&k->history, 0);
}

/* Never chosen again: a survivor of SIGKILL, or a process we may not signal.
 * The oldest entry makes room when the list is full. */
static void exclude(struct killer *k, const struct proc_info *pi)
{
	if (k->n_exclude == KILLER_EXCLUDE_MAX) {
		memmove(k->exclude, k->exclude + 1, sizeof(k->exclude[0]) * (KILLER_EXCLUDE_MAX - 1));
		k->n_exclude--;
	}
	k->exclude[k->n_exclude].pid = pi->pid;
	k->exclude[k->n_exclude].start_time = pi->start_time;
	k->n_exclude++;
}

/* process_mrelease: the victim's memory comes back now, not when its exit
 * finishes. EINVAL (not dying yet), ESRCH (gone) and ENOSYS (< 5.15) are fine. */
static void release_memory(struct killer *k, int fd, const struct proc_info *v)
{
	uint64_t t0 = now_us(k);
	int r = reaper_mrelease(fd);

	if (r == 0)
		log_info(k->log, "process_mrelease(pid %d): about %" PRIu64 " kB released in %" PRIu64 " us", (int)v->pid,
			 v->rss_kb, now_us(k) - t0);
	else if (r == -ESRCH)
		log_info(k->log, "process_mrelease(pid %d): it had already released its memory and exited", (int)v->pid);
	else if (r != -EINVAL && r != -ENOSYS)
		log_warn(k->log, "process_mrelease(pid %d): %s", (int)v->pid, strerror(-r));
}

/* One member of the subtree kill_group looked at: 0 if it may die with the
 * group (or is gone: -ESRCH), -EPERM if it may not -- it is shielded, out of
 * the band, or could not be read (logged: the victim then dies alone) -- or
 * -EMFILE/-ENFILE/-ENOMEM for a systemd mark that could not be read. */
static int vet_member(struct killer *k, const struct killer_env *env, const struct victim_filter *f,
		      const struct proc_info *victim, pid_t pid)
{
	struct proc_info pi;
	enum victim_verdict v;
	int r;

	r = procfs_read_pid(k->procfd, pid, &pi);
	if (r == -ESRCH)
		return 0; /* gone already */
	if (r < 0) {
		/* unvetted: cgroup.kill would take it all the same */
		log_warn(k->log, "kill_cgroup: cannot read pid %d in the subtree of %s (%s): killing pid %d alone",
			 (int)pid, victim->cgroup, strerror(-r), (int)victim->pid);
		return -EPERM;
	}
	if (victim_needs_cmdline(f))
		pi.has_cmdline = procfs_read_cmdline(k->procfd, pi.pid, pi.cmdline, sizeof(pi.cmdline)) == 0;
	/* a systemd omit mark on a group below the victim's keeps the group
	 * alive too; a mark that cannot be read for want of fds or memory
	 * keeps it alive as well */
	if (env->cfg->systemd_oom_preferences && victim_needs_oomd(f, &pi)) {
		r = cgroup_oomd_pref(k->rootfd, k->cg2_mount, pi.cgroup, f->trusted_uid_max, &pi.oomd_pref,
				     &pi.oomd_trusted);
		if (r == -EMFILE || r == -ENFILE || r == -ENOMEM)
			return r;
	}
	v = victim_check(f, &pi);
	if (v != VICTIM_OK && v != VICTIM_SMALL && v != VICTIM_DYING) {
		log_warn(k->log, "kill_cgroup: the subtree of %s holds pid %d (%s, %s, in %s): killing pid %d alone",
			 victim->cgroup, (int)pi.pid, pi.comm, victim_verdict_name(v), pi.has_cgroup ? pi.cgroup : "?",
			 (int)victim->pid);
		return -EPERM;
	}
	return 0;
}

/* kill_cgroup: the victim's cgroup2 group dies through cgroup.kill, which is
 * recursive, so only if every process in the group and in all its descendant
 * groups could have been this tier's victim on its own (in the tier's band;
 * never init, the daemon, adj -1000 or a shielded process; each one read,
 * see vet_member), the group is not the cgroup root, and the victim --
 * already pinned by its pidfd -- is still in the group it was chosen in.
 * Returns the number of processes in the subtree, -EPERM when the group may
 * not die whole (logged), or -errno. */
/* kill_group's check that the victim is still in its group, and its vetting
 * and kill of the group's members: frames of their own, so that the one's
 * process record and the other's pid list are never on the stack together
 * (the kill path's depth: KILLER_STACK_PREFAULT). */
__attribute__((noinline)) static int group_kept(struct killer *k, const struct proc_info *victim)
{
	struct proc_info pi;
	int r;

	/* the pidfd pins the process, not its group: read the group again */
	r = procfs_read_pid(k->procfd, victim->pid, &pi);
	if (r < 0)
		return r;
	if (!pi.has_cgroup || strcmp(pi.cgroup, victim->cgroup) != 0) {
		log_warn(k->log, "kill_cgroup: pid %d left %s after it was chosen: killing pid %d alone", (int)victim->pid,
			 victim->cgroup, (int)victim->pid);
		return -EPERM;
	}
	return 0;
}

__attribute__((noinline)) static int group_members_kill(struct killer *k, const struct killer_env *env,
							const struct victim_filter *f, const struct proc_info *victim)
{
	pid_t pids[GROUP_PIDS_MAX];
	int n, i, r;

	n = cgroup_read_subtree_procs(k->rootfd, k->cg2_mount, victim->cgroup, pids, GROUP_PIDS_MAX,
				      GROUP_DEPTH_MAX);
	if (n == -E2BIG || n == -ELOOP) {
		log_warn(k->log, "kill_cgroup: %s holds more than %d processes or %d levels: killing pid %d alone",
			 victim->cgroup, GROUP_PIDS_MAX, GROUP_DEPTH_MAX, (int)victim->pid);
		return -EPERM;
	}
	for (i = 0, r = 0; i < n && r == 0; i++)
		r = vet_member(k, env, f, victim, pids[i]);
	if (n < 0 || r < 0)
		return n < 0 ? n : r;
	r = cgroup_kill(k->rootfd, k->cg2_mount, victim->cgroup);
	return r < 0 ? r : n;
}

static int kill_group(struct killer *k, const struct killer_env *env, const struct tier_config *t,
		      const struct proc_info *victim)
{
	/* every shield counts here, forgeable or not: a group kill is never
	 * worth a process anybody asked to keep */
	struct victim_filter f = { .policy = env->policy, .min_adj = t->min_oom_score_adj, .self = k->self,
				   .scope = env->scope, .strict_scope = env->strict_scope,
				   .trusted_uid_max = env->cfg->trusted_uid_max, .all_shields = true };
	int r;

	if (!victim->has_cgroup || strcmp(victim->cgroup, "/") == 0 || !k->cg2_mount[0])
		return -EPERM;
	r = group_kept(k, victim);
	return r < 0 ? r : group_members_kill(k, env, &f, victim);
}

/* Starts the on_kill hook (never waited for), unless it cannot switch to
 * on_kill_user (the daemon said so when the configuration came). */
static void hook_start(struct killer *k, const struct killer_env *env, const struct proc_info *victim,
		       const struct tier_config *t, enum fire_reason why)
{
	const struct config *c = env->cfg;
	char refused[2 * CONFIG_PATH_MAX + 128];
	pid_t hook;

	if (!*c->on_kill)
		return;
	if (!env->hook_ok) {
		log_info(k->log, "on_kill %s not run: it cannot switch to on_kill_user %s", c->on_kill,
			 c->on_kill_user.name);
		return;
	}
	hook = hook_launch(env->hook_fd, "on_kill", c->on_kill, &c->on_kill_user, k->procfd, k->rootfd, victim,
			   t->name, reason_name(t, why), refused, sizeof(refused));
	if (hook < 0)
		log_warn(k->log, "on_kill hook not run: %s", refused);
	else
		log_debug(k->log, "on_kill %s started as pid %d, user %s", c->on_kill, (int)hook, c->on_kill_user.name);
}

static void finish(struct killer *k, bool exited);

/* The owner could not watch the pidfd or arm the timer: wait here, bounded
 * by the same timeout, rather than leave a kill in flight that nothing ends. */
static void wait_here(struct killer *k, uint64_t timeout_us, int err)
{
	struct pollfd p = { .fd = k->kill.pidfd, .events = POLLIN };
	int r;

	log_err(k->log, "cannot wait for pid %d through the event loop (%s): waiting for it here, at most %" PRIu64
		" ms", (int)k->kill.victim.pid, strerror(-err), timeout_us / 1000);
	do
		r = poll(&p, 1, (int)((timeout_us + 999) / 1000));
	while (r < 0 && errno == EINTR);
	if (r > 0)
		killer_exited(k);
	else
		killer_timer(k);
}

/* Signals the chosen process (its whole cgroup with kill_cgroup). Returns 0
 * when the kill is in flight, -ESRCH when the victim vanished and -EPERM when
 * it may not be signalled (both: choose again). */
/* Signals the victim (with kill_cgroup, its group through cgroup.kill
 * first) through pidfd fd; *group_n gets the processes cgroup.kill took
 * (-1: none). 0, or -ESRCH (gone: choose again) or -EPERM (not allowed:
 * never again), the fd then closed. */
static int send_kill(struct killer *k, const struct killer_env *env, const struct tier_config *t, int fd,
		     const struct proc_info *victim, int *group_n)
{
	int sig = t->kill_signal, r, n = -1;

	if (t->kill_cgroup && sig == SIGKILL) {
		n = kill_group(k, env, t, victim);
		if (n < 0 && n != -EPERM)
			log_warn(k->log, "kill_cgroup: cannot kill %s: %s; killing pid %d alone", victim->cgroup,
				 strerror(-n), (int)victim->pid);
	}
	/* the victim itself is always signalled, also after cgroup.kill */
	r = reaper_signal(fd, sig);
	if (r == -ESRCH && n >= 0)
		r = 0; /* cgroup.kill was faster */
	*group_n = n;
	if (r == 0)
		return 0;
	close(fd);
	if (r == -ESRCH)
		log_info(k->log, "pid %d (%s) exited before the signal reached it; choosing again", (int)victim->pid,
			 victim->comm);
	else
		log_err(k->log, "cannot kill pid %d (%s): %s; it will not be chosen again", (int)victim->pid,
			victim->comm, strerror(-r));
	return r == -ESRCH ? r : -EPERM;
}

/* The kill in flight from now on: counters, then the wait for the victim
 * on its pidfd and the kill's timer. */
static void track_kill(struct killer *k, const struct killer_env *env, size_t i, const struct proc_info *victim,
		       enum fire_reason why, int fd)
{
	const struct tier_config *t = &env->cfg->tiers[i];
	struct tier_state *ts = &env->tiers[i];
	uint64_t wait_us = t->kill_signal == SIGTERM ? t->term_timeout_us : env->cfg->kill_timeout_us;
	int r;

	ts->kills++;
	ts->kills_low_memory += why == FIRE_LOW_MEMORY;
	ts->kills_oom += why == FIRE_OOM;
	ts->last_kill_us = k->kill.sent_us;
	ts->streak = 0;
	k->kills_total++;
	k->decisions++;
	snprintf(k->last_tier, sizeof(k->last_tier), "%s", t->name);
	k->kill.active = true;
	k->kill.term_phase = t->kill_signal == SIGTERM;
	k->kill.pidfd = fd;
	k->kill.victim = *victim;
	k->kill.kill_timeout_us = env->cfg->kill_timeout_us;
	k->kill.settle_us = env->cfg->settle_us;
	snprintf(k->kill.tier, sizeof(k->kill.tier), "%s", t->name);
	k->ops->changed(k->ctx);
	hook_start(k, env, victim, t, why);
	r = k->ops->watch(k->ctx, fd);
	if (r == 0) {
		r = k->ops->arm_timer(k->ctx, wait_us);
		if (r < 0)
			k->ops->unwatch(k->ctx, fd);
	}
	if (r < 0)
		wait_here(k, wait_us, r);
}

/* systemd_oom_marks: the counters systemd-oomd raises on the victim's unit
 * group (cgroup_unit_count), so that the service manager, when the group
 * empties, says the unit was killed for memory. A failure is logged, never
 * in the way of the kill. */
static void mark_unit(struct killer *k, const struct killer_env *env, const struct proc_info *victim,
		      const char *attr, uint64_t add)
{
	int r;

	if (!env->cfg->systemd_oom_marks || !victim->has_cgroup || !*k->cg2_mount)
		return;
	r = cgroup_unit_count(k->rootfd, k->cg2_mount, victim->cgroup, attr, add);
	if (r < 0)
		log_warn(k->log, "cannot raise %s on the unit group of %s: %s", attr, victim->cgroup, strerror(-r));
	else if (r == 0 && strcmp(attr, CGROUP_OOMD_OOMS) == 0)
		log_debug(k->log, "%s: no unit group (.service, .scope) on the path; no systemd-oomd mark", victim->cgroup);
}

static int prekill_begin(struct killer *k, const struct killer_env *env, size_t i, const struct proc_info *victim,
			 enum fire_reason why, int fd);
static int signal_victim(struct killer *k, const struct killer_env *env, size_t i, const struct proc_info *victim,
			 enum fire_reason why, int fd);
static void prekill_cut(struct killer *k, const char *because);

static int kill_victim(struct killer *k, const struct killer_env *env, size_t i, const struct proc_info *victim,
		       enum fire_reason why)
{
	int fd;

	fd = reaper_open_verified(k->procfd, victim->pid, victim->start_time);
	if (fd == -ESRCH) {
		log_info(k->log, "pid %d (%s) exited before it could be killed; choosing again", (int)victim->pid,
			 victim->comm);
		return fd;
	}
	if (fd < 0) {
		log_err(k->log, "cannot open a pidfd for pid %d: %s", (int)victim->pid, strerror(-fd));
		return fd;
	}
	/* pinned: with pre_kill, the signal waits for the hook */
	if (prekill_begin(k, env, i, victim, why, fd) == 0)
		return 0;
	return signal_victim(k, env, i, victim, why, fd);
}

/* The signal to the victim pinned by fd, and the kill in flight from then
 * on. 0, -ESRCH or -EPERM as kill_victim. */
static int signal_victim(struct killer *k, const struct killer_env *env, size_t i, const struct proc_info *victim,
			 enum fire_reason why, int fd)
{
	const struct tier_config *t = &env->cfg->tiers[i];
	int n, r;

	mark_unit(k, env, victim, CGROUP_OOMD_OOMS, 1);
	r = send_kill(k, env, t, fd, victim, &n);
	if (r < 0)
		return r;
	path_end(k);
	mark_unit(k, env, victim, CGROUP_OOMD_KILL, n >= 0 ? (uint64_t)n : 1);
	k->kill.sent_us = k->kill.sigkill_us = now_us(k);
	/* reap first, log after: the victim is not going to wait for our log line */
	if (t->kill_signal == SIGKILL)
		release_memory(k, fd, victim);
	log_kill(k, "kill", victim, t, why, remember(k, env, false, victim, t, why));
	path_log(k, "signal", victim->pid);
	if (n >= 0)
		log_notice(k->log, "killed cgroup %s through cgroup.kill (%d processes in its subtree)", victim->cgroup,
			   n);
	if (t->kill_signal == SIGTERM)
		log_info(k->log, "sent SIGTERM to pid %d; SIGKILL follows in %" PRIu64 " ms if it is still alive",
			 (int)victim->pid, t->term_timeout_us / 1000);
	track_kill(k, env, i, victim, why, fd);
	return 0;
}

/* min_events: every fired tier counts its event, acting or not. */
static void advance_streak(struct killer *k, const struct killer_env *env, size_t i)
{
	const struct tier_config *t = &env->cfg->tiers[i];
	struct tier_state *ts = &env->tiers[i];
	uint64_t now = now_us(k);

	ts->streak = psi_streak_next(ts->streak, ts->last_event_us, now,
				     t->has_trigger ? t->window_us : PSI_UNPRIV_WINDOW_US);
	ts->last_event_us = now;
}

/* The gates of a tier: min_events consecutive events, and available memory
 * below min_available. Returns true if the tier may kill now. */
static bool gates_open(struct killer *k, const struct killer_env *env, size_t i, enum fire_reason why)
{
	const struct tier_config *t = &env->cfg->tiers[i];
	struct tier_state *ts = &env->tiers[i];
	char a[32];

	if (!fire_urgent(why) && ts->streak < t->min_events) {
		ts->gated++;
		log_info(k->log, "tier " TIER_FMT ": event %u of %u consecutive needed; not killing yet", TIER_ARGS(env, t), ts->streak,
			 t->min_events);
		return false;
	}
	if (t->min_available.set) {
		struct mem_info mi;
		uint64_t limit;
		int r = memory_read(k->rootfd, env->memory_cgroup, &mi);

		if (r < 0) {
			log_warn(k->log, "tier " TIER_FMT ": cannot read available memory (%s); min_available not checked", TIER_ARGS(env, t),
				 strerror(-r));
			return true;
		}
		limit = memory_amount_bytes(&t->min_available, mi.total_bytes);
		if (mi.available_bytes >= limit) {
			ts->gated++;
			log_idle(k, env, i, "%s is %" PRIu64 " MiB, not below min_available %s (%" PRIu64 " MiB); not killing",
				 mi.cgroup ? "the cgroup's available memory" : "MemAvailable", mi.available_bytes >> 20,
				 config_format_amount(a, sizeof(a), &t->min_available), limit >> 20);
			return false;
		}
	}
	return true;
}

/* The last pid the kernel handed out (/proc/loadavg), -1 if unknown: a
 * new process since the last scan may be a candidate. */
static long last_pid(const struct killer *k)
{
	char buf[128];
	long pid;

	if (read_file_at(k->procfd, "loadavg", buf, sizeof(buf)) <= 0 || procfs_parse_loadavg_last_pid(buf, &pid) < 0)
		return -1;
	return pid;
}

/* No candidate last time, no new process since, and the back-off not over:
 * a rescan would find the same nothing. */
static bool rescan_pointless(struct killer *k, struct tier_state *ts)
{
	long pid;

	if (!ts->rescan_at_us || now_us(k) >= ts->rescan_at_us)
		return false;
	pid = last_pid(k);
	return pid < 0 || pid == ts->rescan_last_pid;
}

static void no_candidate(struct killer *k, const struct killer_env *env, size_t i)
{
	struct tier_state *ts = &env->tiers[i];
	const struct config *c = env->cfg;

	ts->no_candidate++;
	ts->rescan_backoff_us = !ts->rescan_backoff_us ? KILLER_RESCAN_MIN_US
			      : ts->rescan_backoff_us * 2 > KILLER_RESCAN_MAX_US ? KILLER_RESCAN_MAX_US
										 : ts->rescan_backoff_us * 2;
	ts->rescan_at_us = now_us(k) + ts->rescan_backoff_us;
	ts->rescan_last_pid = last_pid(k);
	log_idle(k, env, i, "no process has oom_score_adj >= %d in %s%s; nothing killed",
		 c->tiers[i].min_oom_score_adj, env->scope,
		 c->min_rss_kb || *c->protect || *c->protect_cmdline ? " (besides shielded or small ones)" : "");
}

/* Chooses and kills for tier i. */
static void act_tier(struct killer *k, const struct killer_env *env, size_t i, enum fire_reason why)
{
	const struct tier_config *t = &env->cfg->tiers[i];
	struct tier_state *ts = &env->tiers[i];
	struct kill_pick *p = &k->pick;
	/* an OOM decision frees memory only in the group at OOM: its members
	 * are listed and scanned, whatever other source the victims come from */
	const struct kill_source *src = why == FIRE_OOM && env->oom_group ? NULL : env->source;
	uint64_t domain_kb;
	int attempt, r;

	/* the scan's back-off; a registry's choice costs no scan */
	if (!src && rescan_pointless(k, ts)) {
		ts->no_candidate++;
		log_idle(k, env, i, "no process had oom_score_adj >= %d in %s at the last scan and none was created "
			 "since; not scanning again yet", t->min_oom_score_adj, env->scope);
		return;
	}
	domain_kb = decision_domain(k, env, t);
	for (attempt = 0; attempt < PICK_ATTEMPTS; attempt++) {
		struct pick_ctx c = pick_context(k, env, domain_kb, why);

		c.growth = decision_growth(k, &c);
		c.readers = why == FIRE_PSI && readers_rank(k, env, c.growth);
		struct procfs_scan_stats st;

		ts->scans++;
		r = src ? src->choose(src->ctx, &c, t->min_oom_score_adj, p, &st) : pick_choose(&c, t->min_oom_score_adj, p, &st);
		if (r < 0) {
			log_err(k->log, "tier " TIER_FMT ": cannot scan /proc (%s); nothing killed rather than choosing from an "
				"incomplete list", TIER_ARGS(env, t), strerror(-r));
			return;
		}
		log_debug(k->log, "tier " TIER_FMT ": scanned %u processes (%u read, %u ruled out early, %u vanished, %u unreadable), "
			  "%u candidates, "
			  "by %s (OOM domain %" PRIu64 " kB)", TIER_ARGS(env, t), st.seen, st.read, st.pruned, st.vanished, st.errors,
			  p->pick.candidates, victim_order_name(env->cfg->victim_order), domain_kb);
		if (!p->pick.found) {
			no_candidate(k, env, i);
			return;
		}
		ts->rescan_at_us = 0;
		ts->rescan_backoff_us = 0;
		if (p->owner_pass)
			log_info(k->log, "tier " TIER_FMT ": pid %d (%s) is shielded only by a rule its owner could forge: choosing "
				 "among uid %u's processes, pid %d (%s)", TIER_ARGS(env, t), (int)p->first.pid, p->first.comm,
				 (unsigned)p->first.uid, (int)p->pick.best.pid, p->pick.best.comm);
		if (env->dry_run) {
			path_end(k);
			log_kill(k, "would-kill", &p->pick.best, t, why, remember(k, env, true, &p->pick.best, t, why));
			path_log(k, "dry-run choice", p->pick.best.pid);
			k->decisions++;
			snprintf(k->last_tier, sizeof(k->last_tier), "%s", t->name);
			return;
		}
		r = kill_victim(k, env, i, &p->pick.best, why);
		if (src && src->done)
			src->done(src->ctx, &p->pick.best, t, why, r);
		if (r == -EPERM)
			exclude(k, &p->pick.best);
		else if (r != -ESRCH)
			return;
	}
}

static void act_fired(struct killer *k, const struct killer_env *env, const struct fired *f, size_t n);

/* Acts on the memory fires of f alone (the PSI ones are left to the
 * caller, which counts them); false if there are none. */
static bool act_memory_fires(struct killer *k, const struct killer_env *env, const struct fired *f, size_t n)
{
	struct fired mem[CONFIG_TIERS_MAX];
	size_t a, m = 0;

	for (a = 0; a < n && m < CONFIG_TIERS_MAX; a++)
		if (fire_urgent(f[a].why))
			mem[m++] = f[a];
	if (m == 0)
		return false;
	act_fired(k, env, mem, m);
	return true;
}

/* While settling: if some of f are memory fires, acts on those alone (the
 * PSI ones are counted as deferred) and returns true. */
static bool settle_memory_fires(struct killer *k, const struct killer_env *env, const struct fired *f, size_t n)
{
	size_t a;

	if (!act_memory_fires(k, env, f, n))
		return false;
	for (a = 0; a < n; a++)
		if (!fire_urgent(f[a].why))
			env->tiers[f[a].tier].deferred++;
	return true;
}

/* The highest low_available of env's tiers, in bytes of a domain of total. */
static uint64_t highest_low_available(const struct killer_env *env, uint64_t total)
{
	uint64_t hi = 0, b;
	size_t i;

	for (i = 0; i < env->cfg->n_tiers; i++)
		if (env->cfg->tiers[i].low_available.set &&
		    (b = memory_amount_bytes(&env->cfg->tiers[i].low_available, total)) > hi)
			hi = b;
	return hi;
}

/* What the victim given up on at kill_timeout still holds, if it lives
 * (the same process) and KILLER_DYING_HOLD_US has not passed: its resident
 * and swapped-out bytes, into *rss and *swap. false when there is none. */
static bool dying_holds(struct killer *k, uint64_t *rss, uint64_t *swap)
{
	struct proc_info pi;

	if (!k->dying.pid)
		return false;
	if (now_us(k) >= k->dying_until_us || procfs_read_pid(k->procfd, k->dying.pid, &pi) < 0 ||
	    pi.start_time != k->dying.start_time) {
		k->dying.pid = 0;
		return false;
	}
	*rss = pi.rss_kb << 10;
	*swap = pi.swap_kb << 10;
	return *rss || *swap;
}

/* Counts what a dying victim still holds as available memory (and unused
 * memory of a group) and free swap in mi: they come back as it exits. The
 * kernel's reclaim is no evidence meanwhile (memory stays short, and is
 * reclaimed, until the victim's comes back): the recovery's reclaim
 * baseline moves with it. Says so in note. */
static void count_dying(struct killer *k, struct mem_info *mi, char *note, size_t size)
{
	uint64_t rss = 0, swap = 0, used;

	*note = '\0';
	if (!dying_holds(k, &rss, &swap))
		return;
	mi->available_bytes += rss;
	used = mi->swap_total_bytes > mi->swap_free_bytes ? mi->swap_total_bytes - mi->swap_free_bytes : 0;
	mi->swap_free_bytes += swap < used ? swap : used;
	mi->unused_bytes += rss;
	if (k->recovery.based && mi->reclaim_known)
		k->recovery.reclaimed0 = mi->reclaimed_bytes;
	snprintf(note, size, " (counting the %" PRIu64 " MiB that pid %d, still dying, holds)", (rss + swap) >> 20,
		 (int)k->dying.pid);
}

/* hold_recovery: while the stall after the last kill may be recovery (the
 * survivors reading their pages back in), the PSI fires of f kill only on
 * evidence that memory is still short (recovery.h). Returns true if they
 * were held back (the memory fires among f acted alone). Main watch only: a
 * group's tier has its own memory domain. */
static bool recovery_holds(struct killer *k, const struct killer_env *env, const struct fired *f, size_t n)
{
	char why[256], dying[96];
	struct mem_info mi;
	size_t a;
	bool psi = false;

	for (a = 0; a < n; a++)
		psi |= !fire_urgent(f[a].why);
	if (!psi || !env->cfg->hold_recovery || *env->group || !recovery_fire(&k->recovery, now_us(k)))
		return false;
	if (memory_read_evidence(k->rootfd, env->memory_cgroup, &mi) < 0)
		return false; /* no evidence either way: the stall decides, as without hold_recovery */
	count_dying(k, &mi, dying, sizeof(dying));
	if (recovery_short(&k->recovery, &mi, recovery_floor(mi.total_bytes, highest_low_available(env, mi.total_bytes)),
			   why, sizeof(why))) {
		log_notice(k->log, "still short of memory %" PRIu64 " ms after the last kill: %s%s; acting on the stall",
			 (now_us(k) - k->recovery.since_us) / 1000, why, dying);
		k->recovery.active = false; /* evidence found: the next victim's death starts a new recovery */
		return false;
	}
	for (a = 0; a < n; a++)
		if (!fire_urgent(f[a].why)) {
			env->tiers[f[a].tier].recovery_held++;
			log_idle(k, env, f[a].tier, "recovering from the last kill (%" PRIu64 " ms ago): %s%s; the stall alone "
				 "is no evidence, not acting", (now_us(k) - k->recovery.since_us) / 1000, why, dying);
		}
	act_memory_fires(k, env, f, n);
	return true;
}

void killer_act(struct killer *k, const struct killer_env *env, const struct fired *f, size_t n)
{
	size_t a;
	uint64_t now = now_us(k);

	if (n == 0)
		return;
	/* a last resort or an OOM decision may not wait for pre_kill: the
	 * hook of the kill in flight ends now, its victim signalled */
	for (a = 0; k->kill.pre && a < n; a++)
		if (!prekill_may_wait(!fire_urgent(f[a].why)))
			prekill_cut(k, f[a].why == FIRE_OOM ? "out of memory" : "low available memory");
	path_start(k);
	/* settle_time is for PSI windows that still hold the stall from before
	 * the last kill; a memory reading is fresh, so while settling the memory
	 * fires act and only the PSI ones are held back */
	if (!k->kill.active && now < k->settle_until_us && settle_memory_fires(k, env, f, n))
		return;
	if (k->kill.active || now < k->settle_until_us) {
		for (a = 0; a < n; a++) {
			env->tiers[f[a].tier].deferred++;
			if (k->kill.active)
				log_idle(k, env, f[a].tier, "pid %d is still dying; not acting (%" PRIu64 " such events so far)",
					 (int)k->kill.victim.pid, env->tiers[f[a].tier].deferred);
			else
				log_idle(k, env, f[a].tier, "the last victim died %" PRIu64
					 " ms ago; settling for settle_time, not acting",
					 (now + k->kill.settle_us - k->settle_until_us) / 1000);
		}
		return;
	}
	if (recovery_holds(k, env, f, n))
		return;
	act_fired(k, env, f, n);
}

void killer_observe(struct killer *k, const struct killer_env *env)
{
	struct growth_sample *s;
	struct pick_ctx c;
	struct mem_info mi;
	uint64_t domain_kb = 0, ckb, floor_kb, t0;
	int r;

	if (!culprit_ranks(env->cfg) || *env->group)
		return; /* before any I/O: nothing would use the sample */
	s = growth_due(&k->growth, now_us(k));
	if (!s || domain_read(k->rootfd, env->memory_cgroup, &domain_kb) < 0 || !(ckb = culprit_kb(env->cfg, domain_kb)))
		return;
	/* kept: what could still grow into a culprit's lead over the floor */
	floor_kb = ckb / 4 > env->cfg->min_rss_kb ? ckb / 4 : env->cfg->min_rss_kb;
	c = pick_context(k, env, domain_kb, FIRE_PSI);
	t0 = now_us(k);
	r = pick_sample(&c, s, floor_kb, t0, true);
	if (r < 0) {
		log_debug(k->log, "cannot sample the processes' sizes (%s); growth unknown", strerror(-r));
		return;
	}
	if (memory_read_evidence(k->rootfd, env->memory_cgroup, &mi) == 0 && mi.refault_known) {
		s->refault_known = true;
		s->refault_file = mi.refault_file;
		s->refault_anon = mi.refault_anon;
	}
	growth_commit(&k->growth, s);
	log_debug(k->log, "sampled the sizes of %zu processes of at least %" PRIu64 " kB and the reads of %zu in %" PRIu64
		  " us (culprit: %" PRIu64 " kB of growth, or of reads on stall)", s->n, s->floor_kb, s->nr, now_us(k) - t0, ckb);
}

/* The most severe fired tier (lowest band floor) whose gates are open acts;
 * every fired tier advances its min_events streak. */
static void act_fired(struct killer *k, const struct killer_env *env, const struct fired *f, size_t n)
{
	size_t order[CONFIG_TIERS_MAX], m = 0, a, b;

	/* most severe first: the lowest band floor */
	for (a = 0; a < n && m < CONFIG_TIERS_MAX; a++) {
		for (b = m; b > 0 && env->cfg->tiers[f[a].tier].min_oom_score_adj <
					     env->cfg->tiers[f[order[b - 1]].tier].min_oom_score_adj;
		     b--)
			order[b] = order[b - 1];
		order[b] = a;
		m++;
	}
	for (a = 0; a < m; a++)
		advance_streak(k, env, f[order[a]].tier);
	for (a = 0; a < m; a++) {
		const struct fired *x = &f[order[a]];

		if (gates_open(k, env, x->tier, x->why)) {
			act_tier(k, env, x->tier, x->why);
			return;
		}
	}
}

static void finish(struct killer *k, bool exited)
{
	const struct proc_info *v = &k->kill.victim;
	uint64_t now = now_us(k), ms = (now - k->kill.sent_us) / 1000;

	if (exited) {
		uint64_t since_kill = (now - k->kill.sigkill_us) / 1000;

		if (k->kill.sigkill_us != k->kill.sent_us)
			log_info(k->log, "pid %d (%s) exited %" PRIu64 " ms after SIGKILL, %" PRIu64 " ms after SIGTERM "
				 "(tier %s, rss_kb=%" PRIu64 ", cgroup %s)", (int)v->pid, v->comm, since_kill, ms, k->kill.tier,
				 v->rss_kb, v->has_cgroup ? v->cgroup : "?");
		else
			log_info(k->log, "pid %d (%s) exited %" PRIu64 " ms after the signal (tier %s, rss_kb=%" PRIu64
				 ", cgroup %s)", (int)v->pid, v->comm, ms, k->kill.tier, v->rss_kb,
				 v->has_cgroup ? v->cgroup : "?");
	} else {
		log_warn(k->log, "pid %d (%s) is still alive %" PRIu64 " ms after SIGKILL (state %c before the kill); "
			 "moving on, it will not be chosen again", (int)v->pid, v->comm, ms, v->state);
		exclude(k, v);
		/* it may still be dying: what it frees is recovery, not a new
		 * shortage (recovery_holds counts what it still holds) */
		k->dying = (struct proc_ident){ .pid = v->pid, .start_time = v->start_time };
		k->dying_until_us = now + KILLER_DYING_HOLD_US;
	}
	/* dead or given up on, the kill is over: settle, then recovery */
	k->settle_until_us = now + k->kill.settle_us;
	recovery_start(&k->recovery, now);
	k->ops->unwatch(k->ctx, k->kill.pidfd);
	close_fd(&k->kill.pidfd);
	k->ops->arm_timer(k->ctx, 0);
	k->kill.active = false;
	k->ops->changed(k->ctx);
}

/* ------------------------------------------------------------------ pre_kill (prekill.h) */

/* Whether the kill of victim for why waits for pre_kill; logs why not when
 * pre_kill is set but may not or cannot run. */
static bool prekill_wanted(struct killer *k, const struct killer_env *env, const struct proc_info *victim,
			   enum fire_reason why)
{
	const struct config *c = env->cfg;

	if (!*c->pre_kill)
		return false;
	if (!prekill_may_wait(!fire_urgent(why))) {
		log_info(k->log, "pre_kill not run for pid %d (%s): %s kill does not wait", (int)victim->pid, victim->comm,
			 why == FIRE_OOM ? "an out-of-memory (oom_killer = daemon)" : "a last-resort (reason=low_memory)");
		return false;
	}
	if (env->source) {
		/* the lmkd protocol reports a kill to its client as it happens */
		log_info(k->log, "pre_kill not run for pid %d (%s): a process of the lmkd socket's registry does not wait",
			 (int)victim->pid, victim->comm);
		return false;
	}
	if (!env->hook_ok) {
		log_info(k->log, "pre_kill %s not run: it cannot switch to on_kill_user %s", c->pre_kill,
			 c->on_kill_user.name);
		return false;
	}
	return true;
}

/* Starts the pre_kill hook for the victim pinned by fd: the kill is in
 * flight from now on, without a signal yet; its end is killer_exited (the
 * victim died meanwhile), killer_child_exited (the hook exited) or
 * killer_timer (pre_kill_timeout). 0, or -errno when the signal is not to
 * wait (fd still open: the caller signals now). */
static int prekill_begin(struct killer *k, const struct killer_env *env, size_t i, const struct proc_info *victim,
			 enum fire_reason why, int fd)
{
	const struct config *c = env->cfg;
	const struct tier_config *t = &c->tiers[i];
	char msg[2 * CONFIG_PATH_MAX + 128];
	pid_t pid;
	int r;

	if (!prekill_wanted(k, env, victim, why))
		return -ENOENT;
	pid = hook_launch(env->prekill_fd, "pre_kill", c->pre_kill, &c->on_kill_user, k->procfd, k->rootfd, victim,
			  t->name, reason_name(t, why), msg, sizeof(msg));
	if (pid < 0) {
		log_warn(k->log, "pre_kill hook not run: %s; signalling pid %d now", msg, (int)victim->pid);
		return pid;
	}
	prekill_started(&k->prekill, pid, now_us(k), (int)why, env->group);
	k->prekill.decision_us = k->path.t0_us;
	k->prekill.minflt0 = k->path.minflt0;
	k->prekill.majflt0 = k->path.majflt0;
	r = k->ops->watch(k->ctx, fd);
	if (r == 0) {
		r = k->ops->arm_timer(k->ctx, c->pre_kill_timeout_us);
		if (r < 0)
			k->ops->unwatch(k->ctx, fd);
	}
	if (r < 0) {
		(void)prekill_stop(&k->prekill);
		log_err(k->log, "cannot wait for the pre_kill hook through the event loop (%s): its process group killed, "
			"signalling pid %d now", strerror(-r), (int)victim->pid);
		return r;
	}
	k->kill.active = true;
	k->kill.pre = true;
	k->kill.term_phase = false;
	k->kill.pidfd = fd;
	k->kill.victim = *victim;
	k->kill.settle_us = c->settle_us;
	snprintf(k->kill.tier, sizeof(k->kill.tier), "%s", t->name);
	log_notice(k->log, "pre_kill %s started as pid %d (user %s) for pid %d (%s) of tier " TIER_FMT "; the signal follows "
		   "when it exits, at most %" PRIu64 " ms from now", c->pre_kill, (int)pid, c->on_kill_user.name,
		   (int)victim->pid, victim->comm, TIER_ARGS(env, t), c->pre_kill_timeout_us / 1000);
	k->ops->changed(k->ctx);
	return 0;
}

/* The pre-kill phase is over: the victim's pidfd unwatched, the timer
 * disarmed, no kill in flight. Returns the pidfd, still open. */
static int prekill_leave(struct killer *k)
{
	int fd = k->kill.pidfd;

	k->ops->unwatch(k->ctx, fd);
	k->ops->arm_timer(k->ctx, 0);
	k->kill.pidfd = -1;
	k->kill.active = false;
	k->kill.pre = false;
	return fd;
}

/* The victim exited while the hook ran: nothing to signal; the hook's work
 * is moot, its process group killed; settle as after any victim's death. */
static void prekill_victim_gone(struct killer *k)
{
	const struct proc_info *v = &k->kill.victim;
	uint64_t now = now_us(k);
	pid_t hook = prekill_stop(&k->prekill);
	int fd = prekill_leave(k);

	k->prekill.victim_gone++;
	log_notice(k->log, "pid %d (%s) exited while the pre_kill hook (pid %d) ran, %" PRIu64 " ms after it started: "
		   "not signalled; the hook's process group killed", (int)v->pid, v->comm, (int)hook,
		   prekill_ms(&k->prekill, now));
	close(fd);
	k->settle_until_us = now + k->kill.settle_us;
	recovery_start(&k->recovery, now);
	k->ops->changed(k->ctx);
}

/* The hook exited or was ended: the victim is signalled now, with the
 * configuration in force now (a reload meanwhile: the tier of the same
 * name; none, or the group no longer watched: no signal, the next event
 * decides again). */
static void prekill_signal(struct killer *k)
{
	struct proc_info victim = k->kill.victim;
	char tier[sizeof(k->kill.tier)], buf[2 * CONFIG_PATH_MAX];
	struct killer_env env;
	uint64_t now = now_us(k);
	size_t i = 0;
	int fd, r;

	memcpy(tier, k->kill.tier, sizeof(tier));
	fd = prekill_leave(k);
	r = k->ops->env ? k->ops->env(k->ctx, k->prekill.group, &env, buf, sizeof(buf)) : -ENOSYS;
	while (r == 0 && i < env.cfg->n_tiers && strcmp(env.cfg->tiers[i].name, tier) != 0)
		i++;
	if (r < 0 || i == env.cfg->n_tiers) {
		k->prekill.cancelled++;
		log_notice(k->log, "pid %d (%s) not signalled: tier %s%s%s is gone since the decision; the next event decides "
			   "again", (int)victim.pid, victim.comm, tier, *k->prekill.group ? " in " : "", k->prekill.group);
		close(fd);
		k->ops->changed(k->ctx);
		return;
	}
	/* the kill path's cost runs from the decision, across the hook */
	k->path.t0_us = k->prekill.decision_us;
	k->path.minflt0 = k->prekill.minflt0;
	k->path.majflt0 = k->prekill.majflt0;
	r = signal_victim(k, &env, i, &victim, (enum fire_reason)k->prekill.why, fd);
	if (r == 0)
		log_info(k->log, "pid %d signalled %" PRIu64 " ms after the decision, %" PRIu64 " ms after the pre_kill hook "
			 "started", (int)victim.pid, (now - k->prekill.decision_us) / 1000, prekill_ms(&k->prekill, now));
	else
		k->ops->changed(k->ctx);
	if (r == -EPERM)
		exclude(k, &victim);
}

/* pre_kill_timeout, or a last resort that may not wait: the hook's process
 * group is killed and the victim signalled (unless it is gone already). */
static void prekill_cut(struct killer *k, const char *because)
{
	uint64_t now = now_us(k);
	pid_t hook;

	if (reaper_exited(k->kill.pidfd) == 1) {
		prekill_victim_gone(k);
		return;
	}
	hook = prekill_stop(&k->prekill);
	k->prekill.timeouts++;
	log_warn(k->log, "pre_kill hook (pid %d) still running %" PRIu64 " ms after it started (%s): its process group "
		 "killed; signalling pid %d (%s)", (int)hook, prekill_ms(&k->prekill, now), because,
		 (int)k->kill.victim.pid, k->kill.victim.comm);
	prekill_signal(k);
}

bool killer_child_exited(struct killer *k, pid_t pid, int status)
{
	char st[256];

	switch (prekill_reaped(&k->prekill, pid)) {
	case PREKILL_NOT_OURS:
		return false;
	case PREKILL_ENDED:
		log_debug(k->log, "pre_kill hook (pid %d) %s", (int)pid, hook_status_text(st, sizeof(st), status));
		return true;
	case PREKILL_IN_FLIGHT:
		break;
	}
	k->prekill.exited++;
	hook_status_text(st, sizeof(st), status);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		log_info(k->log, "pre_kill hook (pid %d) %s after %" PRIu64 " ms", (int)pid, st,
			 prekill_ms(&k->prekill, now_us(k)));
	else
		log_warn(k->log, "pre_kill hook (pid %d) %s after %" PRIu64 " ms", (int)pid, st,
			 prekill_ms(&k->prekill, now_us(k)));
	if (k->kill.active && k->kill.pre)
		prekill_signal(k);
	return true;
}

void killer_exited(struct killer *k)
{
	if (k->kill.active && k->kill.pre)
		prekill_victim_gone(k);
	else if (k->kill.active)
		finish(k, true);
}

void killer_timer(struct killer *k)
{
	const struct proc_info *v = &k->kill.victim;
	int r;

	if (!k->kill.active)
		return;
	if (k->kill.pre) {
		prekill_cut(k, "pre_kill_timeout");
		return;
	}
	if (reaper_exited(k->kill.pidfd) == 1) {
		finish(k, true);
		return;
	}
	if (!k->kill.term_phase) {
		finish(k, false);
		return;
	}
	k->kill.term_phase = false;
	r = reaper_signal(k->kill.pidfd, SIGKILL);
	if (r < 0) {
		finish(k, r == -ESRCH);
		return;
	}
	k->kill.sigkill_us = now_us(k);
	log_notice(k->log, "pid %d (%s) did not exit %" PRIu64 " ms after SIGTERM; sent SIGKILL", (int)v->pid, v->comm,
		   (k->kill.sigkill_us - k->kill.sent_us) / 1000);
	release_memory(k, k->kill.pidfd, v);
	r = k->ops->arm_timer(k->ctx, k->kill.kill_timeout_us);
	if (r < 0)
		wait_here(k, k->kill.kill_timeout_us, r);
}

int killer_preview(struct killer *k, const struct killer_env *env, size_t i, struct kill_pick *p)
{
	struct procfs_scan_stats st;
	uint64_t domain_kb = 0;
	struct pick_ctx c;

	(void)domain_read(k->rootfd, env->memory_cgroup, &domain_kb);
	c = pick_context(k, env, domain_kb, FIRE_PSI);
	c.growth = decision_growth(k, &c);
	c.early_look = false; /* the status tells how many candidates there were */
	return pick_choose(&c, env->cfg->tiers[i].min_oom_score_adj, p, &st);
}

/* The program's code, from the linker's symbols: the kill path's code that
 * the dry choice below does not run (the pidfd, the signal, the reaper) is
 * mapped too before mlockall(MCL_ONFAULT) locks what is mapped. A read maps
 * the page for execution as well. */
extern const char __executable_start[], etext[];

static void prefault_text(void)
{
	long page = sysconf(_SC_PAGESIZE);
	uintptr_t a = (uintptr_t)__executable_start, end = (uintptr_t)etext;

	if (page <= 0)
		page = 4096;
	for (; a < end; a += (uintptr_t)page)
		(void)*(const volatile char *)a;
}

/* Stack below the warm-up's own frames, for the frames of the kill path
 * that the dry choice does not reach (kill_victim and what it calls).
 * Sized from GCC's static call graph (-fstack-usage -fcallgraph-info=su,
 * bench/README.md, rss): the deepest chain below daemon_step (832 bytes) is
 * 43 kB, a ManagedOOM kill that starts the on_kill hook (moom_check_pressure
 * > moom_kill > killer_act > recovery_holds > act_fired > signal_victim >
 * hook_start > hook_run, 17.6 kB of it the hook's environment); the warm-up
 * sits ~2.8 kB below daemon_run's frame, so 56 kB leaves 15 kB for libc's
 * frames and the indirect calls the graph does not follow (the killer's ops:
 * 4.4 kB at most; sd-bus), the margin the 64 kB had over the 54 kB before
 * the readers of memory.stat, /proc/vmstat and /proc/PID/stat and kill_group
 * had their buffers in frames of their own. Recheck when a frame on the kill
 * path grows. */
#define KILLER_STACK_PREFAULT (56 * 1024)

__attribute__((noinline)) static void prefault_stack(void)
{
	char buf[KILLER_STACK_PREFAULT];

	memset(buf, 0, sizeof(buf));
	__asm__ __volatile__("" : : "r"(buf) : "memory"); /* the stores must happen */
}

void killer_warm_up(struct killer *k, const struct killer_env *env)
{
	struct procfs_scan_stats st;
	struct pick_ctx c;
	struct mem_info mi;
	uint64_t domain_kb = 0;
	char line[2048];

	prefault_text();
	prefault_stack();
	path_start(k);
	path_end(k);
	(void)domain_read(k->rootfd, env->memory_cgroup, &domain_kb);
	c = pick_context(k, env, domain_kb, FIRE_PSI);
	(void)pick_choose(&c, OOM_SCORE_ADJ_MIN + 1, &k->pick, &st);
	(void)memory_read(k->rootfd, env->memory_cgroup, &mi);
	(void)last_pid(k);
	if (env->cfg->n_tiers)
		killline_format(line, sizeof(line), "would-kill", &k->pick.pick.best, &env->cfg->tiers[0], "warm-up", env->group);
	memset(&k->pick, 0, sizeof(k->pick));
}
