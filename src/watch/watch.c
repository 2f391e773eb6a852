/* SPDX-License-Identifier: MIT */
/* watch: kernel triggers, the userspace monitor fallback and the adaptive
 * sampler of one pressure file. See watch.h for the design. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "event.h"
#include "fileio.h"
#include "trigger.h"
#include "watch.h"

const struct watch_ops watch_kernel_ops = {
	.trigger_open = trigger_open,
};

const char *tier_source_name(enum tier_source s)
{
	switch (s) {
	case TIER_SOURCE_KERNEL:
		return "kernel";
	case TIER_SOURCE_USERSPACE:
		return "userspace";
	case TIER_SOURCE_NONE:
		break;
	case TIER_SOURCE_OFF:
		return "off";
	}
	return "memory";
}

bool watch_tier_has_psi(const struct watch_tier *t)
{
	return t->source == TIER_SOURCE_KERNEL || t->source == TIER_SOURCE_USERSPACE;
}

int watch_read_totals(int fd, struct psi_stats *st)
{
	char buf[512];
	ssize_t n;

	n = pread(fd, buf, sizeof(buf) - 1, 0);
	if (n < 0)
		return -errno;
	if (n == 0)
		return -ENODATA;
	buf[n] = '\0';
	return psi_parse(buf, st) < 0 ? -EBADMSG : 0;
}

static uint64_t round_up(uint64_t v, uint64_t to)
{
	return (v + to - 1) / to * to;
}

/* The sentinel: one 'some' trigger the kernel accepts without privilege,
 * which fires whenever any userspace tier could (full stall implies some
 * stall, and stall S within a window W implies S within any longer window). */
static void open_sentinel(struct watch *w, const struct config *cfg)
{
	uint64_t stall = UINT64_MAX, window = 0;
	size_t i;

	for (i = 0; i < cfg->n_tiers; i++) {
		if (w->tiers[i].source != TIER_SOURCE_USERSPACE)
			continue;
		if (cfg->tiers[i].stall_us < stall)
			stall = cfg->tiers[i].stall_us;
		if (cfg->tiers[i].window_us > window)
			window = cfg->tiers[i].window_us;
	}
	if (window == 0)
		return;
	window = round_up(window, PSI_UNPRIV_WINDOW_US);
	if (window > PSI_WINDOW_MAX_US)
		window = PSI_WINDOW_MAX_US;
	w->sentinel_fd = w->ops->trigger_open(w->rootfd, w->path, PSI_SOME, stall, window);
	if (w->sentinel_fd >= 0)
		psi_format_trigger(w->sentinel, sizeof(w->sentinel), PSI_SOME, stall, window);
	else
		w->sentinel_fd = -1;
}

/* Opens a pressure file and reads its totals; on failure says why in err. */
static int open_pressure(int rootfd, const char *path, struct psi_stats *st, char *err, size_t errlen)
{
	int fd = sysroot_openat(rootfd, path, O_RDONLY), r = fd;

	if (fd >= 0)
		r = watch_read_totals(fd, st);
	if (r >= 0)
		return fd;
	if (fd >= 0)
		close(fd);
	snprintf(err, errlen, "cannot read %s: %s%s", path, r == -EBADMSG ? "not a PSI pressure file" : strerror(-r),
		 r == -ENOENT ? " (is PSI enabled: CONFIG_PSI, psi=1? does the cgroup exist?)" : "");
	return r;
}

int watch_check_file(int rootfd, const char *path, char *err, size_t errlen)
{
	struct psi_stats st;
	int fd = open_pressure(rootfd, path, &st, err, errlen);

	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

int watch_open(struct watch *w, int rootfd, const struct config *cfg, bool privileged, uint64_t idle_poll_us,
	       const struct watch_ops *ops, char *err, size_t errlen)
{
	const struct watch_target t = { .path = cfg->pressure, .tiers = config_cgroup_tiers(cfg, "") };

	return watch_open_target(w, rootfd, cfg, &t, privileged, idle_poll_us, ops, err, errlen);
}

/* Arms tier i of cfg on the watch's file: a kernel trigger, else the
 * userspace monitor (or OFF / NONE). 0, or -ENOENT / -ENOTDIR: the file went
 * (err says so). */
static int open_tier(struct watch *w, const struct config *cfg, const struct watch_target *target, size_t i,
		     char *err, size_t errlen)
{
	const struct tier_config *t = &cfg->tiers[i];
	struct watch_tier *wt = &w->tiers[i];
	int fd;

	if (!(target->tiers & (1u << i))) {
		wt->source = TIER_SOURCE_OFF;
		return 0;
	}
	if (!t->has_trigger) {
		wt->source = TIER_SOURCE_NONE;
		return 0;
	}
	fd = w->ops->trigger_open(w->rootfd, target->path, t->state, t->stall_us, t->window_us);
	if (fd == -ENOENT || fd == -ENOTDIR) {
		snprintf(err, errlen, "cannot open %s: %s", target->path, strerror(-fd));
		return fd;
	}
	wt->fd = fd >= 0 ? fd : -1;
	wt->refused = fd >= 0 ? 0 : fd;
	wt->source = fd >= 0 ? TIER_SOURCE_KERNEL : TIER_SOURCE_USERSPACE;
	wt->state = t->state;
	psi_mon_init(&wt->mon, t->stall_us, t->window_us);
	return 0;
}

/* The totals read when the file was opened start every monitor's window. */
static void start_monitors(struct watch *w, const struct psi_stats *st)
{
	size_t i;

	w->last = *st;
	w->last_sample_us = event_now_us();
	for (i = 0; i < w->n_tiers; i++) {
		bool new_stall;

		if (!watch_tier_has_psi(&w->tiers[i]))
			continue;
		psi_mon_update(&w->tiers[i].mon, w->last_sample_us,
			       w->tiers[i].state == PSI_FULL ? st->full.total_us : st->some.total_us, &new_stall);
	}
}

int watch_open_target(struct watch *w, int rootfd, const struct config *cfg, const struct watch_target *target,
		      bool privileged, uint64_t idle_poll_us, const struct watch_ops *ops, char *err, size_t errlen)
{
	uint64_t min_window = UINT64_MAX;
	struct psi_stats st;
	size_t i;
	int r;

	memset(w, 0, sizeof(*w));
	w->rootfd = rootfd;
	w->read_fd = w->sentinel_fd = w->timer_fd = -1;
	w->ops = ops ? ops : &watch_kernel_ops;
	w->privileged = privileged;
	w->idle_poll_us = idle_poll_us;
	snprintf(w->path, sizeof(w->path), "%s", target->path);
	for (i = 0; i < CONFIG_TIERS_MAX; i++)
		w->tiers[i].fd = -1;

	r = w->read_fd = open_pressure(rootfd, target->path, &st, err, errlen);
	if (r >= 0) {
		r = w->timer_fd = event_timerfd_new();
		if (r < 0)
			snprintf(err, errlen, "cannot create a timer: %s", strerror(-r));
	}
	w->n_tiers = cfg->n_tiers;
	for (i = 0; r >= 0 && i < cfg->n_tiers; i++)
		r = open_tier(w, cfg, target, i, err, errlen);
	if (r < 0) {
		w->read_fd = w->read_fd < 0 ? -1 : w->read_fd;
		w->timer_fd = w->timer_fd < 0 ? -1 : w->timer_fd;
		watch_close(w);
		return r;
	}
	for (i = 0; i < w->n_tiers; i++)
		if (watch_tier_has_psi(&w->tiers[i])) {
			w->n_psi++;
			if (cfg->tiers[i].window_us < min_window)
				min_window = cfg->tiers[i].window_us;
		}
	psi_poller_init(&w->poller, w->n_psi ? min_window : PSI_WINDOW_MAX_US);
	open_sentinel(w, cfg);
	start_monitors(w, &st);
	return 0;
}

void watch_close(struct watch *w)
{
	size_t i;

	for (i = 0; i < CONFIG_TIERS_MAX; i++)
		close_fd(&w->tiers[i].fd);
	close_fd(&w->sentinel_fd);
	close_fd(&w->read_fd);
	close_fd(&w->timer_fd);
}

bool watch_needs_sampling(const struct watch *w)
{
	size_t i;

	for (i = 0; i < w->n_tiers; i++)
		if (w->tiers[i].source == TIER_SOURCE_USERSPACE ||
		    (w->tiers[i].source == TIER_SOURCE_KERNEL && !w->privileged))
			return true;
	return false;
}

void watch_kernel_event(struct watch *w, size_t i, uint64_t now_us)
{
	w->tiers[i].kernel_events++;
	psi_mon_note_event(&w->tiers[i].mon, now_us);
	if (watch_needs_sampling(w))
		psi_poller_start(&w->poller, now_us);
}

void watch_sentinel_event(struct watch *w, uint64_t now_us)
{
	psi_poller_start(&w->poller, now_us);
}

int watch_sample(struct watch *w, uint64_t now_us, bool *fired)
{
	struct psi_stats st = { 0 }; /* set by watch_read_totals() unless it fails (the analyzer cannot tell) */
	bool any_new = false, wake = false;
	size_t i;
	int r;

	r = watch_read_totals(w->read_fd, &st);
	if (r < 0)
		return r;
	w->samples++;
	w->last_sample_us = now_us;
	w->last = st;
	for (i = 0; i < w->n_tiers; i++) {
		struct watch_tier *wt = &w->tiers[i];
		uint64_t total = wt->state == PSI_FULL ? st.full.total_us : st.some.total_us, growth;
		bool new_stall;

		fired[i] = false;
		if (!watch_tier_has_psi(wt))
			continue;
		growth = psi_mon_growth(&wt->mon, now_us, total);
		fired[i] = psi_mon_update(&wt->mon, now_us, total, &new_stall);
		/* an idle (safety) sample that sees new stall bring the growth
		 * to half a threshold starts fast sampling, as a kernel event
		 * would have */
		if (new_stall && !w->poller.active && wt->mon.threshold_us && growth * 2 >= wt->mon.threshold_us)
			wake = true;
		if (fired[i])
			wt->userspace_events++;
		any_new |= new_stall;
	}
	if (wake && watch_needs_sampling(w))
		psi_poller_start(&w->poller, now_us);
	psi_poller_after_sample(&w->poller, now_us, any_new);
	return 0;
}

uint64_t watch_arm_timer(struct watch *w, uint64_t now_us)
{
	uint64_t delay = w->poller.active ? w->poller.period_us : 0;

	(void)now_us;
	event_timer_arm(w->timer_fd, delay);
	return delay;
}

uint64_t watch_idle_period_us(uint64_t headroom_bytes)
{
	uint64_t us;

	if (headroom_bytes >= WATCH_IDLE_GROWTH_BYTES_PER_S / 1000000ULL * WATCH_IDLE_MAX_US)
		return WATCH_IDLE_MAX_US;
	/* headroom < 10 GiB here: headroom * 10^6 fits in 64 bits */
	us = headroom_bytes * 1000000ULL / WATCH_IDLE_GROWTH_BYTES_PER_S;
	if (us < WATCH_IDLE_MIN_US)
		return WATCH_IDLE_MIN_US;
	return us > WATCH_IDLE_MAX_US ? WATCH_IDLE_MAX_US : us;
}

uint64_t watch_idle_limit_us(const struct watch *w)
{
	return w->idle_poll_us && watch_needs_sampling(w) ? w->idle_poll_us : UINT64_MAX;
}

/* ticks are armed after the work of the previous one: a sample may look a
 * little younger than the period */
#define IDLE_DUE_SLACK_US 1000ULL

bool watch_idle_due(const struct watch *w, uint64_t now_us, uint64_t period_us)
{
	uint64_t limit = watch_idle_limit_us(w), need = period_us < limit ? period_us : limit;

	if (limit == UINT64_MAX || w->poller.active)
		return false;
	return now_us >= w->last_sample_us && now_us - w->last_sample_us + IDLE_DUE_SLACK_US >= need;
}
