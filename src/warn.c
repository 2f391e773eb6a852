/* warn: the system-bus side of action = warn tiers; see warn.h. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>

#ifdef HAVE_SYSTEMD
#include <systemd/sd-bus.h>
#endif

#include "history.h"
#include "warn.h"

int warn_parse_level(const char *s, unsigned *level)
{
	if (strcmp(s, "low") == 0 || strcmp(s, "50") == 0)
		*level = WARN_LEVEL_LOW;
	else if (strcmp(s, "medium") == 0 || strcmp(s, "100") == 0)
		*level = WARN_LEVEL_MEDIUM;
	else if (strcmp(s, "critical") == 0 || strcmp(s, "255") == 0)
		*level = WARN_LEVEL_CRITICAL;
	else
		return -EINVAL;
	return 0;
}

const char *warn_level_name(unsigned level)
{
	return level == WARN_LEVEL_CRITICAL ? "critical" : level == WARN_LEVEL_MEDIUM ? "medium" : "low";
}

#ifdef HAVE_SYSTEMD
int warn_bus_open(struct warn_bus *w, char *why, size_t whylen)
{
	sd_bus *bus = NULL;
	int r;

	w->bus = NULL;
	w->owner = false;
	r = sd_bus_open_system(&bus);
	if (r < 0) {
		snprintf(why, whylen, "cannot connect to the system bus: %s", strerror(-r));
		return r;
	}
	w->bus = bus;
	r = sd_bus_request_name(bus, WARN_BUS_NAME, 0);
	w->owner = r >= 0;
	if (r < 0)
		snprintf(why, whylen, "cannot own %s on the system bus: %s%s", WARN_BUS_NAME, strerror(-r),
			 r == -EEXIST ? " (low-memory-monitor runs?)" : r == -EACCES ? " (no D-Bus policy lets psi-lmkd "
			 "own it: install psi-lmkd.dbus.conf into /usr/share/dbus-1/system.d)" : "");
	return 0;
}

int warn_bus_fd(const struct warn_bus *w)
{
	return w->bus ? sd_bus_get_fd(w->bus) : -1;
}

int warn_bus_process(struct warn_bus *w)
{
	int r;

	if (!w->bus)
		return -ENOTCONN;
	do
		r = sd_bus_process(w->bus, NULL);
	while (r > 0);
	return r;
}

int warn_bus_send(struct warn_bus *w, unsigned level)
{
	int r;

	if (!w->bus)
		return -ENOTCONN;
	r = sd_bus_emit_signal(w->bus, WARN_BUS_PATH, WARN_BUS_INTERFACE, "LowMemoryWarning", "y", (uint8_t)level);
	if (r >= 0 && (sd_bus_get_events(w->bus) & POLLOUT))
		r = sd_bus_flush(w->bus); /* rare: the socket was full */
	return r < 0 ? r : 0;
}

int warn_bus_send_kill(struct warn_bus *w, const struct kill_record *r)
{
	int e;

	if (!w->bus)
		return -ENOTCONN;
	e = sd_bus_emit_signal(w->bus, KILLS_BUS_PATH, KILLS_BUS_INTERFACE, "Killed", "ususst", (uint32_t)r->pid,
			       r->comm, (uint32_t)r->uid, r->tier, r->reason, (uint64_t)r->rss_kb);
	if (e >= 0 && (sd_bus_get_events(w->bus) & POLLOUT))
		e = sd_bus_flush(w->bus);
	return e < 0 ? e : 0;
}

void warn_bus_close(struct warn_bus *w)
{
	if (w->bus)
		sd_bus_flush_close_unref(w->bus);
	w->bus = NULL;
	w->owner = false;
}
#else
int warn_bus_open(struct warn_bus *w, char *why, size_t whylen)
{
	w->bus = NULL;
	snprintf(why, whylen, "psi-lmkd was built without libsystemd (sd-bus)");
	return -ENOTSUP;
}

int warn_bus_fd(const struct warn_bus *w)
{
	(void)w;
	return -1;
}

int warn_bus_process(struct warn_bus *w)
{
	(void)w;
	return -ENOTSUP;
}

int warn_bus_send(struct warn_bus *w, unsigned level)
{
	(void)w;
	(void)level;
	return -ENOTSUP;
}

int warn_bus_send_kill(struct warn_bus *w, const struct kill_record *r)
{
	(void)w;
	(void)r;
	return -ENOTSUP;
}

void warn_bus_close(struct warn_bus *w)
{
	w->bus = NULL;
}
#endif
