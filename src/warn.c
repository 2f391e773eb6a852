/* SPDX-License-Identifier: MIT */
/* warn: the system-bus side of action = warn tiers; see warn.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
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
#define DEFAULT_SYSTEM_BUS "unix:path=/run/dbus/system_bus_socket"
/* RequestName's answers (the D-Bus specification) */
#define NAME_PRIMARY_OWNER 1
#define NAME_EXISTS 3
#define NAME_ALREADY_OWNER 4
/* sd_bus_process calls per wakeup: the rest waits for the next (the timer
 * fires at once while sd-bus holds unread messages) */
#define PROCESS_MAX 64

/* RequestName's reply (or the error sd-bus makes up on a timeout or a
 * lost connection). */
static int name_reply(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
	struct warn_bus *w = userdata;
	uint32_t answer = 0;
	int r;

	(void)ret_error;
	if (sd_bus_message_is_method_error(m, NULL)) {
		r = sd_bus_message_get_errno(m);
		r = -(r > 0 ? r : EIO);
	} else if (sd_bus_message_read(m, "u", &answer) < 0)
		r = -EBADMSG;
	else if (answer == NAME_PRIMARY_OWNER || answer == NAME_ALREADY_OWNER)
		r = 0;
	else
		r = answer == NAME_EXISTS ? -EEXIST : -EBUSY;
	w->owner = r == 0;
	w->name_err = r;
	w->name_news = true;
	return 0;
}

int warn_bus_open(struct warn_bus *w, uint64_t now_us, char *why, size_t whylen)
{
	const char *address = secure_getenv("DBUS_SYSTEM_BUS_ADDRESS");
	sd_bus *bus = NULL;
	int r;

	w->bus = NULL;
	w->ready = w->owner = w->name_news = false;
	w->name_err = 0;
	w->unsent = 0;
	if (!address || !*address)
		address = DEFAULT_SYSTEM_BUS;
	r = sd_bus_new(&bus);
	if (r >= 0)
		r = sd_bus_set_address(bus, address);
	if (r >= 0)
		r = sd_bus_set_bus_client(bus, 1);
	if (r >= 0) /* bounds Hello and RequestName too */
		r = sd_bus_set_method_call_timeout(bus, WARN_BUS_CONNECT_US);
	if (r >= 0) /* connects, starts authenticating and queues Hello: no wait */
		r = sd_bus_start(bus);
	if (r >= 0)
		r = sd_bus_request_name_async(bus, NULL, WARN_BUS_NAME, 0, name_reply, w);
	if (r < 0) {
		snprintf(why, whylen, "cannot connect to the system bus: %s", strerror(-r));
		sd_bus_close_unref(bus);
		return r;
	}
	w->bus = bus;
	w->deadline_us = now_us + WARN_BUS_CONNECT_US;
	return 0;
}

int warn_bus_fd(const struct warn_bus *w)
{
	return w->bus ? sd_bus_get_fd(w->bus) : -1;
}

int warn_bus_wants(const struct warn_bus *w, uint32_t *poll_events, uint64_t *when_us)
{
	uint64_t t = UINT64_MAX;
	int e;

	if (!w->bus)
		return -ENOTCONN;
	e = sd_bus_get_events(w->bus);
	if (e < 0)
		return e;
	if (sd_bus_get_timeout(w->bus, &t) <= 0)
		t = UINT64_MAX;
	if (!w->ready && w->deadline_us < t)
		t = w->deadline_us;
	*poll_events = (uint32_t)e;
	*when_us = t;
	return 0;
}

/* The queue was written out: nothing of ours waits any more. */
static void note_queue(struct warn_bus *w)
{
	uint64_t n = 0;

	if (sd_bus_get_n_queued_write(w->bus, &n) >= 0 && n == 0)
		w->unsent = 0;
}

int warn_bus_process(struct warn_bus *w, uint64_t now_us)
{
	int r = 0, n;

	if (!w->bus)
		return -ENOTCONN;
	for (n = 0; n < PROCESS_MAX && (r = sd_bus_process(w->bus, NULL)) > 0; n++)
		;
	if (r < 0)
		return r;
	if (sd_bus_is_open(w->bus) <= 0)
		return -ECONNRESET;
	w->ready = sd_bus_is_ready(w->bus) > 0;
	if (!w->ready && now_us >= w->deadline_us)
		return -ETIMEDOUT;
	note_queue(w);
	return 0;
}

/* Room for one more signal in the queue: 0, or -errno (dropped; counted
 * unless there is no connection, which the daemon has logged already). */
static int queue_room(struct warn_bus *w)
{
	uint64_t n = 0;

	if (!w->bus)
		return -ENOTCONN;
	if (sd_bus_get_n_queued_write(w->bus, &n) >= 0 && n < WARN_BUS_QUEUE_MAX)
		return 0;
	w->dropped++;
	w->drop_err = -ENOBUFS;
	return -ENOBUFS;
}

/* After sd_bus_emit_signal returned r (it writes what the socket takes
 * and queues the rest, never waits): 0 or -errno (dropped, counted). */
static int queued(struct warn_bus *w, int r)
{
	if (r < 0) {
		w->dropped++;
		w->drop_err = r;
		return r;
	}
	w->unsent++;
	note_queue(w);
	return 0;
}

int warn_bus_send(struct warn_bus *w, unsigned level)
{
	int r = queue_room(w);

	if (r < 0)
		return r;
	return queued(w, sd_bus_emit_signal(w->bus, WARN_BUS_PATH, WARN_BUS_INTERFACE, "LowMemoryWarning", "y",
					    (uint8_t)level));
}

int warn_bus_send_kill(struct warn_bus *w, const struct kill_record *r)
{
	int e = queue_room(w);

	if (e < 0)
		return e;
	return queued(w, sd_bus_emit_signal(w->bus, KILLS_BUS_PATH, KILLS_BUS_INTERFACE, "Killed", "ususst",
					    (uint32_t)r->pid, r->comm, (uint32_t)r->uid, r->tier, r->reason,
					    (uint64_t)r->rss_kb));
}

void warn_bus_close(struct warn_bus *w)
{
	uint64_t n = 0;

	if (w->bus) {
		/* what of ours sd-bus still holds is lost: closing never flushes */
		if (sd_bus_get_n_queued_write(w->bus, &n) < 0 || n > w->unsent)
			n = w->unsent;
		if (n) {
			w->dropped += n;
			w->drop_err = -ECONNABORTED;
		}
		sd_bus_close_unref(w->bus);
	}
	w->bus = NULL;
	w->ready = w->owner = w->name_news = false;
	w->unsent = 0;
}
#else
int warn_bus_open(struct warn_bus *w, uint64_t now_us, char *why, size_t whylen)
{
	(void)now_us;
	w->bus = NULL;
	snprintf(why, whylen, "psi-lmkd was built without libsystemd (sd-bus)");
	return -ENOTSUP;
}

int warn_bus_fd(const struct warn_bus *w)
{
	(void)w;
	return -1;
}

int warn_bus_wants(const struct warn_bus *w, uint32_t *poll_events, uint64_t *when_us)
{
	(void)w;
	(void)poll_events;
	(void)when_us;
	return -ENOTSUP;
}

int warn_bus_process(struct warn_bus *w, uint64_t now_us)
{
	(void)w;
	(void)now_us;
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
