/* SPDX-License-Identifier: MIT */
/* daemon-base: what every part of the daemon uses and nothing calls back
 * from: the kill environment of a decision, a watch's fds in the epoll set
 * and its "armed" lines, a tier noted as fired in a wakeup. daemon.c (the
 * loop) and its neighbours (daemon-memory.c, daemon-groups.c,
 * daemon-status.c, daemon-moom.c) call down into it; it calls none of them. */
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>

#include "daemon-private.h"
#include "event.h"
#include "lmkd-server.h"
#include "trigger.h"

bool daemon_dry_run(const struct daemon *d)
{
	return d->cli_dry_run || d->cfg.dry_run;
}

/* ------------------------------------------------------------------ watch */

/* "kills oom_score_adj >= N in SCOPE", or what a warn tier does instead */
const char *daemon_tier_action_words(char *buf, size_t size, const struct daemon *d, const struct tier_config *t,
				     const char *scope)
{
	if (t->warn)
		snprintf(buf, size, "warns (LowMemoryWarning %s on the system bus), kills nothing",
			 warn_level_name(t->warn_level));
	else
		snprintf(buf, size, "kills oom_score_adj >= %d in %s", t->min_oom_score_adj, scope);
	return buf;
}

void daemon_log_watch(struct daemon *d, const struct watch *w, const char *group)
{
	char a[32], b[32], band[CONFIG_PATH_MAX + 64];
	const char *in = group ? " in " : "", *g = group ? group : "", *scope = group ? group : d->cfg.scope;
	size_t i;

	for (i = 0; i < d->cfg.n_tiers; i++) {
		const struct tier_config *t = &d->cfg.tiers[i];
		const struct watch_tier *wt = &w->tiers[i];

		if (wt->source == TIER_SOURCE_OFF)
			continue;
		if (t->low_available.set)
			log_info(&d->log, "tier %s: also fires when available memory is below %s and, if there is "
				 "swap, free swap is at or below %s of it", t->name,
				 config_format_amount(a, sizeof(a), &t->low_available),
				 config_format_amount(b, sizeof(b), t->low_swap.set ? &t->low_swap : &CONFIG_DEFAULT_LOW_SWAP));
		if (wt->source == TIER_SOURCE_NONE)
			log_info(&d->log, "tier %s armed: no PSI trigger; %s", t->name,
				 daemon_tier_action_words(band, sizeof(band), d, t, scope));
		else if (wt->source == TIER_SOURCE_KERNEL)
			log_info(&d->log, "tier %s%s%s armed: %s %s %s on %s, kernel trigger%s; %s",
				 t->name, in, g, psi_state_name(t->state), config_format_duration(a, sizeof(a), t->stall_us),
				 config_format_duration(b, sizeof(b), t->window_us), w->path,
				 w->privileged ? "" : " (unprivileged: checked by the userspace monitor too)",
				 daemon_tier_action_words(band, sizeof(band), d, t, scope));
		else
			log_notice(&d->log, "tier %s%s%s armed: %s %s %s on %s, userspace monitor (the kernel refused the "
				   "trigger: %s: %s); %s",
				   t->name, in, g, psi_state_name(t->state), config_format_duration(a, sizeof(a), t->stall_us),
				   config_format_duration(b, sizeof(b), t->window_us), w->path, strerror(-wt->refused),
				   trigger_error_hint(wt->refused, t->window_us, w->privileged),
				   daemon_tier_action_words(band, sizeof(band), d, t, scope));
	}
	if (w->sentinel_fd >= 0)
		log_info(&d->log, "userspace tiers are woken by the kernel trigger \"%s\" on %s", w->sentinel, w->path);
	if (watch_idle_limit_us(w) != UINT64_MAX)
		log_info(&d->log, "safety sample of %s while idle (unprivileged triggers can be starved by other readers "
			 "of the file): every %s, more often as memory runs short", w->path,
			 config_format_duration(a, sizeof(a), w->idle_poll_us));
}

/* One fd of daemon_watch_fds: added (unless an add failed before: r) or removed. */
static int watch_fd(struct daemon *d, int fd, bool add, uint32_t events, uint64_t tag, int r)
{
	if (fd < 0)
		return r;
	if (!add) {
		event_del(d->epfd, fd);
		return r;
	}
	return r < 0 ? r : event_add(d->epfd, fd, events, tag);
}

int daemon_watch_fds(struct daemon *d, const struct watch *w, bool add, uint64_t tier_tag0, uint64_t sentinel_tag,
		     uint64_t sample_tag)
{
	size_t i;
	int r = 0;

	for (i = 0; i < w->n_tiers; i++)
		r = watch_fd(d, w->tiers[i].fd, add, EPOLLPRI, tier_tag0 + i, r);
	r = watch_fd(d, w->sentinel_fd, add, EPOLLPRI, sentinel_tag, r);
	return watch_fd(d, w->timer_fd, add, EPOLLIN, sample_tag, r);
}

/* ------------------------------------------------------------------ wakeups */

void daemon_wake_reset(const struct daemon *d, struct wake *w)
{
	memset(w, 0, sizeof(*w));
	w->cfg_generation = d->cfg_generation;
}

/* Notes that tier i fired (a low-memory reason wins over PSI: no min_events). */
void daemon_tier_fired(struct daemon *d, size_t i, enum fire_reason why, struct wake *w)
{
	if (w->cfg_generation != d->cfg_generation)
		daemon_wake_reset(d, w);
	d->tiers[i].events++;
	log_debug(&d->log, "tier %s fired (%s)", d->cfg.tiers[i].name,
		  why == FIRE_OOM ? "out of memory" : why == FIRE_LOW_MEMORY ? "low available memory" : "PSI");
	if (!w->fired[i] || why == FIRE_OOM || (why == FIRE_LOW_MEMORY && w->why[i] == FIRE_PSI))
		w->why[i] = why;
	w->fired[i] = true;
}

void killer_env_of(struct daemon *d, struct killer_env *env)
{
	killer_env_init(env, &d->cfg, &d->policy->vp, d->tiers);
	env->memory_cgroup = d->memory_cgroup;
	env->oom_group = d->memev.oom_taken ? d->memev.dir : NULL;
	env->dry_run = daemon_dry_run(d);
	env->hook_ok = d->hook_ok;
	env->hook_fd = d->hook_fd;
	env->prekill_fd = d->prekill_fd;
	env->source = d->lmkd ? &d->lmkd->source : NULL;
}
