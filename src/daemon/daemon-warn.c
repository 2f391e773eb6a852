/* SPDX-License-Identifier: MIT */
/* daemon-warn: tiers with action = warn, and the Killed signals. When a
 * warn tier fires, the daemon sends LowMemoryWarning on the system bus
 * (warn.c) instead of killing, at most once per WARN_INTERVAL_US per tier.
 * The bus connection lives while some tier of the configuration warns, or
 * once a kill was signalled. The bus never holds the loop up: it is
 * connected without waiting, its fd and its timer are in the epoll set,
 * signals that cannot be queued are dropped (and reported, at most every
 * WARN_BUS_DROP_LOG_US), and a connection that fails, is lost or is not up
 * within WARN_BUS_CONNECT_US is retried later, with backoff. */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>

#include "daemon-private.h"
#include "event.h"

static bool any_warn_tier(const struct daemon *d)
{
	size_t i;

	for (i = 0; i < d->cfg.n_tiers; i++)
		if (d->cfg.tiers[i].warn)
			return true;
	return false;
}

static bool bus_wanted(const struct daemon *d)
{
	return any_warn_tier(d) || d->warnbus.kills;
}

void daemon_warn_close(struct daemon *d)
{
	int fd = warn_bus_fd(&d->warnbus);

	if (fd >= 0 && d->warnbus.events)
		event_del(d->epfd, fd);
	d->warnbus.events = 0;
	warn_bus_close(&d->warnbus);
}

/* A connection failed, or was lost: closed, and tried again later (never,
 * without sd-bus). Each new reason is logged once. */
static void bus_retry_later(struct daemon *d, int r, const char *why, uint64_t now)
{
	struct warn_bus *w = &d->warnbus;

	daemon_warn_close(d);
	if (r != w->last_err)
		log_msg(&d->log, any_warn_tier(d) ? LOG_WARNING : LOG_INFO, "system bus: %s; no low-memory warning or "
			"kill signal will be heard until it answers (%s, logged again only if the reason changes)", why,
			r == -ENOTSUP ? "not retried" : "retried in the background");
	w->last_err = r;
	if (r == -ENOTSUP) {
		w->retry_us = UINT64_MAX;
		return;
	}
	if (!w->backoff_us)
		w->backoff_us = WARN_BUS_RETRY_MIN_US;
	w->retry_us = now + w->backoff_us;
	w->backoff_us = w->backoff_us * 2 < WARN_BUS_RETRY_MAX_US ? w->backoff_us * 2 : WARN_BUS_RETRY_MAX_US;
}

/* Starts connecting, if closed and the retry is due: 0 or -errno. */
static int connect_bus(struct daemon *d, uint64_t now)
{
	struct warn_bus *w = &d->warnbus;
	char why[256];
	int r;

	if (w->bus)
		return 0;
	if (now < w->retry_us)
		return -EAGAIN;
	log_debug(&d->log, "system bus: connecting");
	r = warn_bus_open(w, now, why, sizeof(why));
	if (r == 0) {
		r = event_add(d->epfd, warn_bus_fd(w), EPOLLIN, TAG(TAG_BUS, 0));
		if (r < 0)
			snprintf(why, sizeof(why), "cannot watch the system bus: %s", strerror(-r));
		else
			w->events = EPOLLIN;
	}
	if (r < 0)
		bus_retry_later(d, r, why, now);
	return r;
}

/* The connection failed after it started (r = -ETIMEDOUT: not up in time). */
static void bus_lost(struct daemon *d, int r, uint64_t now)
{
	struct warn_bus *w = &d->warnbus;
	char why[160];

	if (w->ready && now - w->ready_us >= WARN_BUS_RETRY_MAX_US)
		w->backoff_us = 0; /* it had worked for a while: retry soon */
	if (w->ready)
		snprintf(why, sizeof(why), "the connection is lost (%s)", strerror(-r));
	else if (r == -ETIMEDOUT)
		snprintf(why, sizeof(why), "no answer within %llu s (a stalled dbus-daemon?): connection given up",
			 WARN_BUS_CONNECT_US / 1000000);
	else
		snprintf(why, sizeof(why), "cannot connect to the system bus: %s", strerror(-r));
	w->name_news = false; /* a made-up reply of the closing connection */
	bus_retry_later(d, r, why, now);
}

/* The RequestName reply, once. */
static void bus_name_news(struct daemon *d)
{
	struct warn_bus *w = &d->warnbus;
	int r = w->name_err;

	if (!w->name_news)
		return;
	w->name_news = false;
	if (w->owner)
		log_info(&d->log, "warn tiers: %s owned on the system bus", WARN_BUS_NAME);
	else if (any_warn_tier(d))
		log_warn(&d->log, "warn tiers: cannot own %s on the system bus: %s%s; their warnings will not reach "
			 "GMemoryMonitor", WARN_BUS_NAME, strerror(-r), r == -EEXIST ? " (low-memory-monitor runs?)" :
			 r == -EACCES ? " (no D-Bus policy lets psi-lmkd own it: install psi-lmkd.dbus.conf into "
			 "/usr/share/dbus-1/system.d)" : "");
}

void daemon_warn_setup(struct daemon *d)
{
	if (bus_wanted(d))
		(void)connect_bus(d, event_now_us());
	else if (d->warnbus.bus)
		daemon_warn_close(d);
	daemon_warn_poll(d);
}

void daemon_warn_bus_event(struct daemon *d, size_t index)
{
	struct warn_bus *w = &d->warnbus;
	uint64_t now = event_now_us();
	bool was_ready = w->ready;
	int r;

	if (index == 1) {
		if (!event_timer_expired(d->bustimerfd))
			return; /* re-armed since */
		w->armed_us = 0;
	}
	if (!w->bus) {
		if (bus_wanted(d))
			(void)connect_bus(d, now);
		return;
	}
	r = warn_bus_process(w, now);
	if (r < 0) {
		bus_lost(d, r, now);
		return;
	}
	if (w->ready && !was_ready) {
		w->ready_us = now;
		if (w->last_err)
			log_notice(&d->log, "system bus: connected again");
		w->last_err = 0;
	}
	bus_name_news(d);
}

void daemon_warn(struct daemon *d, size_t i)
{
	const struct tier_config *t = &d->cfg.tiers[i];
	struct tier_state *ts = &d->tiers[i];
	uint64_t now = event_now_us();

	if (ts->last_warn_us && now - ts->last_warn_us < WARN_INTERVAL_US)
		return;
	ts->last_warn_us = now;
	(void)connect_bus(d, now);
	if (warn_bus_send(&d->warnbus, t->warn_level) < 0)
		return; /* dropped: counted and reported by daemon_warn_poll, or no connection (logged) */
	ts->warnings++;
	log_notice(&d->log, "warn tier=%s level=%u (%s): LowMemoryWarning sent on the system bus%s", t->name,
		   t->warn_level, warn_level_name(t->warn_level),
		   d->warnbus.ready ? "" : " (queued until the connection is up)");
}

/* After each wakeup: the kills the history gained go out as Killed
 * signals (not would-kills), for desktop agents. The bus is connected at
 * the first kill if no warn tier has connected it; a signal that cannot
 * be queued now is dropped. */
void daemon_warn_kills(struct daemon *d)
{
	const struct kill_history *h = &d->killer.history;
	const struct kill_record *r;
	size_t fresh, i;

	fresh = d->killer.kills_total - d->kills_signalled;
	if (!fresh)
		return;
	d->kills_signalled = d->killer.kills_total;
	/* newest first in the history: send the oldest of the fresh ones first */
	for (i = fresh > h->count ? h->count : fresh; i-- > 0;) {
		r = history_newest(h, i);
		if (!r || r->dry_run)
			continue;
		d->warnbus.kills = true;
		(void)connect_bus(d, event_now_us());
		(void)warn_bus_send_kill(&d->warnbus, r); /* dropped: as in daemon_warn */
	}
}

/* Signals dropped since the last report, at most every WARN_BUS_DROP_LOG_US. */
static void bus_report_drops(struct daemon *d, uint64_t now)
{
	struct warn_bus *w = &d->warnbus;
	int e = w->drop_err;

	if (!w->dropped || (w->drop_log_us && now - w->drop_log_us < WARN_BUS_DROP_LOG_US))
		return;
	log_warn(&d->log, "system bus: %" PRIu64 " LowMemoryWarning or Killed signal(s) dropped (last: %s); psi-lmkd "
		 "never waits for the bus (reported at most every %llu s)", w->dropped,
		 e == -ENOBUFS ? "the connection's queue is full, the bus reads nothing" : e == -ECONNABORTED ? "still queued when the connection was given up" :
		 strerror(-e), WARN_BUS_DROP_LOG_US / 1000000);
	w->dropped = 0;
	w->drop_log_us = now;
}

/* The fd's events and the timer's expiry as the connection needs them
 * (when closed: the retry, if the bus is wanted). */
static void bus_rearm(struct daemon *d, uint64_t now)
{
	struct warn_bus *w = &d->warnbus;
	uint64_t when = UINT64_MAX;
	uint32_t pe = 0, ev;
	int r;

	if (w->bus && (r = warn_bus_wants(w, &pe, &when)) < 0)
		bus_lost(d, r, now);
	if (w->bus) {
		ev = (pe & POLLIN ? EPOLLIN : 0) | (pe & POLLOUT ? EPOLLOUT : 0);
		ev = ev ? ev : EPOLLIN;
		if (ev != w->events && event_mod(d->epfd, warn_bus_fd(w), ev, TAG(TAG_BUS, 0)) == 0)
			w->events = ev;
	} else if (bus_wanted(d))
		when = w->retry_us;
	/* 0 stands for disarmed: "now" is 1 */
	when = when == UINT64_MAX ? 0 : when ? when : 1;
	if (when == w->armed_us)
		return;
	if (event_timer_arm(d->bustimerfd, !when ? 0 : when > now ? when - now : 1) == 0)
		w->armed_us = when;
}

void daemon_warn_poll(struct daemon *d)
{
	uint64_t now = event_now_us();

	bus_report_drops(d, now);
	bus_rearm(d, now);
}
