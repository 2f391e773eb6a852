/* daemon-warn: tiers with action = warn. When one fires, the daemon sends
 * LowMemoryWarning on the system bus (warn.c) instead of killing, at most
 * once per WARN_INTERVAL_US per tier; the bus connection lives while some
 * tier of the configuration warns. A bus that cannot be reached is logged
 * and retried at the next warning, never fatal. */
#include <errno.h>
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

void daemon_warn_close(struct daemon *d)
{
	int fd = warn_bus_fd(&d->warnbus);

	if (fd >= 0)
		event_del(d->epfd, fd);
	warn_bus_close(&d->warnbus);
}

/* Connects and watches the bus fd; 0 or -errno (logged). */
static int connect_bus(struct daemon *d)
{
	char why[256];
	int r = warn_bus_open(&d->warnbus, why, sizeof(why));

	if (r == 0)
		r = event_add(d->epfd, warn_bus_fd(&d->warnbus), EPOLLIN, TAG(TAG_BUS, 0));
	if (r < 0) {
		if (d->warnbus.bus)
			snprintf(why, sizeof(why), "cannot watch the system bus: %s", strerror(-r));
		warn_bus_close(&d->warnbus);
		/* without warn tiers only desktop agents miss something: no warning */
		if (r != d->warnbus.last_err)
			log_msg(&d->log, any_warn_tier(d) ? LOG_WARNING : LOG_INFO, "system bus: %s; no low-memory "
				"warning or kill signal will be heard (retried at each, logged again only if the reason "
				"changes)", why);
		d->warnbus.last_err = r;
		return r;
	}
	d->warnbus.last_err = 0;
	if (d->warnbus.owner)
		log_info(&d->log, "warn tiers: %s owned on the system bus", WARN_BUS_NAME);
	else if (any_warn_tier(d))
		log_warn(&d->log, "warn tiers: %s; their warnings will not reach GMemoryMonitor", why);
	return 0;
}

void daemon_warn_setup(struct daemon *d)
{
	bool need = any_warn_tier(d);

	if (need && !d->warnbus.bus)
		(void)connect_bus(d);
	else if (!need && d->warnbus.bus)
		daemon_warn_close(d);
}

void daemon_warn_bus_event(struct daemon *d)
{
	int r = warn_bus_process(&d->warnbus);

	if (r < 0) {
		log_warn(&d->log, "warn tiers: the system bus connection is lost (%s); reconnecting at the next warning",
			 strerror(-r));
		daemon_warn_close(d);
	}
}

void daemon_warn(struct daemon *d, size_t i)
{
	const struct tier_config *t = &d->cfg.tiers[i];
	struct tier_state *ts = &d->tiers[i];
	uint64_t now = event_now_us();
	int r;

	if (ts->last_warn_us && now - ts->last_warn_us < WARN_INTERVAL_US)
		return;
	ts->last_warn_us = now;
	if (!d->warnbus.bus && connect_bus(d) < 0)
		return;
	r = warn_bus_send(&d->warnbus, t->warn_level);
	if (r < 0) {
		log_warn(&d->log, "tier %s: cannot send LowMemoryWarning: %s", t->name, strerror(-r));
		daemon_warn_close(d);
		return;
	}
	ts->warnings++;
	log_notice(&d->log, "warn tier=%s level=%u (%s): LowMemoryWarning sent on the system bus", t->name,
		   t->warn_level, warn_level_name(t->warn_level));
}

/* After each wakeup: the kills the history gained go out as Killed
 * signals (not would-kills), for desktop agents. The bus is connected at
 * the first kill if no warn tier has connected it. */
void daemon_warn_kills(struct daemon *d)
{
	const struct kill_history *h = &d->killer.history;
	const struct kill_record *r;
	size_t fresh, i;
	int e;

	fresh = d->killer.kills_total - d->kills_signalled;
	if (!fresh)
		return;
	d->kills_signalled = d->killer.kills_total;
	if (!d->warnbus.bus && connect_bus(d) < 0)
		return;
	/* newest first in the history: send the oldest of the fresh ones first */
	for (i = fresh > h->count ? h->count : fresh; i-- > 0;) {
		r = history_newest(h, i);
		if (!r || r->dry_run)
			continue;
		e = warn_bus_send_kill(&d->warnbus, r);
		if (e < 0) {
			log_warn(&d->log, "cannot send the Killed signal of pid %d: %s", (int)r->pid, strerror(-e));
			daemon_warn_close(d);
			return;
		}
	}
}
