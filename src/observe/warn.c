/* SPDX-License-Identifier: MIT */
/* warn: the system-bus side of action = warn tiers; see warn.h. sd-bus is
 * not linked: libsystemd (and what it pulls in: libgcrypt, liblzma, libzstd,
 * liblz4) is loaded with dlopen when a connection is opened and unloaded when
 * it is closed, so a daemon that never needs the bus never maps it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef HAVE_SYSTEMD
#include <dlfcn.h>
#include <systemd/sd-bus.h>
#endif

#include "history.h"
#include "warn.h"

#ifdef HAVE_SYSTEMD
/* the sd-bus functions used here, looked up by their own names */
#define SDBUS_FUNCS(X)                                                                                                 \
	X(sd_bus_new)                                                                                                  \
	X(sd_bus_set_address)                                                                                          \
	X(sd_bus_set_bus_client)                                                                                       \
	X(sd_bus_set_method_call_timeout)                                                                              \
	X(sd_bus_start)                                                                                                \
	X(sd_bus_request_name_async)                                                                                   \
	X(sd_bus_close_unref)                                                                                          \
	X(sd_bus_get_fd)                                                                                               \
	X(sd_bus_get_events)                                                                                           \
	X(sd_bus_get_timeout)                                                                                          \
	X(sd_bus_get_n_queued_write)                                                                                   \
	X(sd_bus_process)                                                                                              \
	X(sd_bus_is_open)                                                                                              \
	X(sd_bus_is_ready)                                                                                             \
	X(sd_bus_emit_signal)                                                                                          \
	X(sd_bus_message_is_method_error)                                                                              \
	X(sd_bus_message_get_errno)                                                                                    \
	X(sd_bus_message_read)

/* libsystemd while a connection needs it: the handle and its functions,
 * typed from sd-bus.h */
struct warn_lib {
	void *handle;
/* f names a member here: it cannot be parenthesized */
#define SDBUS_FIELD(f) __typeof__(f) *f; /* NOLINT(bugprone-macro-parentheses) */
	SDBUS_FUNCS(SDBUS_FIELD)
#undef SDBUS_FIELD
};

static void lib_unload(struct warn_bus *w)
{
	if (!w->lib)
		return;
	dlclose(w->lib->handle);
	free(w->lib);
	w->lib = NULL;
}

/* Loads WARN_LIBSYSTEMD into w->lib. 0, -ENOMEM, or -ENOTSUP with why
 * filled (not installed, or too old: a function is missing). */
static int lib_load(struct warn_bus *w, char *why, size_t whylen)
{
	struct warn_lib *lib = calloc(1, sizeof(*lib));
	const char *missing = NULL;

	if (!lib)
		return -ENOMEM;
	lib->handle = dlopen(WARN_LIBSYSTEMD, RTLD_NOW | RTLD_LOCAL);
	if (!lib->handle) {
		snprintf(why, whylen, "cannot load %s (sd-bus): %s", WARN_LIBSYSTEMD, dlerror());
		free(lib);
		return -ENOTSUP;
	}
#define SDBUS_LOAD(f)                                                                                                  \
	if (!missing && !(lib->f = (__typeof__(lib->f))dlsym(lib->handle, #f)))                                        \
		missing = #f;
	SDBUS_FUNCS(SDBUS_LOAD)
#undef SDBUS_LOAD
	if (missing) {
		snprintf(why, whylen, "%s has no %s (sd-bus too old)", WARN_LIBSYSTEMD, missing);
		dlclose(lib->handle);
		free(lib);
		return -ENOTSUP;
	}
	w->lib = lib;
	return 0;
}

/* a call through the loaded library: L(w)->sd_bus_xxx(...) */
#define L(w) ((w)->lib)

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
	if (L(w)->sd_bus_message_is_method_error(m, NULL)) {
		r = L(w)->sd_bus_message_get_errno(m);
		r = -(r > 0 ? r : EIO);
	} else if (L(w)->sd_bus_message_read(m, "u", &answer) < 0)
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
	if (!w->lib && (r = lib_load(w, why, whylen)) < 0) {
		if (r == -ENOMEM)
			snprintf(why, whylen, "cannot load %s: %s", WARN_LIBSYSTEMD, strerror(-r));
		return r;
	}
	r = L(w)->sd_bus_new(&bus);
	if (r >= 0)
		r = L(w)->sd_bus_set_address(bus, address);
	if (r >= 0)
		r = L(w)->sd_bus_set_bus_client(bus, 1);
	if (r >= 0) /* bounds Hello and RequestName too */
		r = L(w)->sd_bus_set_method_call_timeout(bus, WARN_BUS_CONNECT_US);
	if (r >= 0) /* connects, starts authenticating and queues Hello: no wait */
		r = L(w)->sd_bus_start(bus);
	if (r >= 0)
		r = L(w)->sd_bus_request_name_async(bus, NULL, WARN_BUS_NAME, 0, name_reply, w);
	if (r < 0) {
		snprintf(why, whylen, "cannot connect to the system bus: %s", strerror(-r));
		L(w)->sd_bus_close_unref(bus);
		lib_unload(w);
		return r;
	}
	w->bus = bus;
	w->deadline_us = now_us + WARN_BUS_CONNECT_US;
	return 0;
}

int warn_bus_fd(const struct warn_bus *w)
{
	return w->bus ? L(w)->sd_bus_get_fd(w->bus) : -1;
}

int warn_bus_wants(const struct warn_bus *w, uint32_t *poll_events, uint64_t *when_us)
{
	uint64_t t = UINT64_MAX;
	int e;

	if (!w->bus)
		return -ENOTCONN;
	e = L(w)->sd_bus_get_events(w->bus);
	if (e < 0)
		return e;
	if (L(w)->sd_bus_get_timeout(w->bus, &t) <= 0)
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

	if (L(w)->sd_bus_get_n_queued_write(w->bus, &n) >= 0 && n == 0)
		w->unsent = 0;
}

int warn_bus_process(struct warn_bus *w, uint64_t now_us)
{
	int r = 0, n;

	if (!w->bus)
		return -ENOTCONN;
	for (n = 0; n < PROCESS_MAX && (r = L(w)->sd_bus_process(w->bus, NULL)) > 0; n++)
		;
	if (r < 0)
		return r;
	if (L(w)->sd_bus_is_open(w->bus) <= 0)
		return -ECONNRESET;
	w->ready = L(w)->sd_bus_is_ready(w->bus) > 0;
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
	if (L(w)->sd_bus_get_n_queued_write(w->bus, &n) >= 0 && n < WARN_BUS_QUEUE_MAX)
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
	return queued(w, L(w)->sd_bus_emit_signal(w->bus, WARN_BUS_PATH, WARN_BUS_INTERFACE, "LowMemoryWarning", "y",
					    (uint8_t)level));
}

int warn_bus_send_kill(struct warn_bus *w, const struct kill_record *r)
{
	int e = queue_room(w);

	if (e < 0)
		return e;
	return queued(w, L(w)->sd_bus_emit_signal(w->bus, KILLS_BUS_PATH, KILLS_BUS_INTERFACE, "Killed", "ususst",
					    (uint32_t)r->pid, r->comm, (uint32_t)r->uid, r->tier, r->reason,
					    (uint64_t)r->rss_kb));
}

void warn_bus_close(struct warn_bus *w)
{
	uint64_t n = 0;

	if (w->bus) {
		/* what of ours sd-bus still holds is lost: closing never flushes */
		if (L(w)->sd_bus_get_n_queued_write(w->bus, &n) < 0 || n > w->unsent)
			n = w->unsent;
		if (n) {
			w->dropped += n;
			w->drop_err = -ECONNABORTED;
		}
		L(w)->sd_bus_close_unref(w->bus);
	}
	lib_unload(w);
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
