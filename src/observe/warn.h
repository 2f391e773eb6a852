/* SPDX-License-Identifier: MIT */
/* warn: low-memory warnings as org.freedesktop.LowMemoryMonitor sends them
 * on the system bus (the signal LowMemoryWarning, one byte: 50 low, 100
 * medium, 255 critical, on /org/freedesktop/LowMemoryMonitor), so that
 * GLib's GMemoryMonitor in every application hears a tier with
 * action = warn. The daemon owns the bus name, as GLib listens to its
 * owner only. Through sd-bus, loaded with dlopen (WARN_LIBSYSTEMD) only
 * while a connection is open; built without libsystemd (--with-systemd=no),
 * or where the library cannot be loaded, opening fails with -ENOTSUP. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "warnlevel.h"

#define WARN_BUS_NAME "org.freedesktop.LowMemoryMonitor"
#define WARN_BUS_PATH "/org/freedesktop/LowMemoryMonitor"
#define WARN_BUS_INTERFACE "org.freedesktop.LowMemoryMonitor"

/* The connection never blocks the daemon's loop: it is started without
 * waiting (authentication, Hello and RequestName are answered later, on
 * the fd or the timer the daemon polls for it), signals are queued, never
 * flushed, and one that would make the queue longer than WARN_BUS_QUEUE_MAX
 * is dropped. A connection not up within WARN_BUS_CONNECT_US is dropped;
 * the daemon (daemon-warn.c) retries later, with backoff. */
/* the library sd-bus is loaded from: its soname */
#define WARN_LIBSYSTEMD "libsystemd.so.0"

struct warn_lib;

struct warn_bus {
	void *bus;            /* sd_bus *, NULL when closed */
	struct warn_lib *lib; /* libsystemd, loaded while bus is open; NULL when closed */
	bool ready;           /* authenticated and Hello answered */
	bool owner;           /* the name is ours */
	bool name_news;       /* the RequestName reply came since the daemon last looked */
	int name_err;         /* why the name is not ours (-errno), 0 while asked or ours */
	uint64_t deadline_us; /* CLOCK_MONOTONIC: not ready by then is given up */
	uint64_t unsent;      /* signals queued since the queue was last seen empty */
	uint64_t dropped;     /* signals dropped since the daemon last reported them */
	int drop_err;         /* why the last one was (-errno) */
	int last_err; /* the last failure to connect (the owner logs each new one once) */
	/* the daemon's side: retries, the fd's registered events, the timer */
	bool kills;           /* a kill wants the bus (warn tiers want it anyway) */
	uint64_t retry_us;    /* closed: no new connection before then */
	uint64_t backoff_us;  /* the next retry's delay */
	uint64_t drop_log_us; /* when drops were last reported */
	uint64_t ready_us;    /* when the connection came up */
	uint32_t events;      /* epoll events registered for the fd, 0 = not in the set */
	uint64_t armed_us;    /* what the timer is armed for, 0 = disarmed */
};

/* signals that may wait in the connection's queue (with Hello and RequestName) */
#define WARN_BUS_QUEUE_MAX 16
/* authentication, Hello, and any method call, at most this long */
#define WARN_BUS_CONNECT_US (5 * 1000000ULL)

/* Kills go out on the system bus too, for desktop agents
 * (tools/psi-lmkd-notify-agent): signal Killed(u pid, s comm, u uid,
 * s tier, s reason, t rss_kb) on KILLS_BUS_PATH, interface KILLS_BUS_INTERFACE. */
#define KILLS_BUS_PATH "/io/github/psi_lmkd/Killer1"
#define KILLS_BUS_INTERFACE "io.github.psi_lmkd.Killer1"

struct kill_record;

/* Starts connecting to the system bus ($DBUS_SYSTEM_BUS_ADDRESS or the
 * default socket) and asks for WARN_BUS_NAME, without waiting for either:
 * w->ready and w->owner tell later (after warn_bus_process). 0, or -errno
 * with why filled when there is no connection. */
int warn_bus_open(struct warn_bus *w, uint64_t now_us, char *why, size_t whylen);
/* The connection's fd for epoll, -1 closed. */
int warn_bus_fd(const struct warn_bus *w);
/* What the connection waits for: the poll events (POLLIN, POLLOUT) its fd
 * should report, and when (CLOCK_MONOTONIC us, UINT64_MAX: never) it
 * should be processed anyway. 0, or -errno when closed. */
int warn_bus_wants(const struct warn_bus *w, uint32_t *poll_events, uint64_t *when_us);
/* Reads and writes what the socket allows, handles replies and timeouts.
 * 0, or -errno when the connection is lost or, at now_us, not up in time
 * (-ETIMEDOUT). */
int warn_bus_process(struct warn_bus *w, uint64_t now_us);
/* Queues LowMemoryWarning(level). 0; -ENOBUFS when the queue is full (the
 * signal is dropped and counted), -ENOTCONN closed, another -errno. */
int warn_bus_send(struct warn_bus *w, unsigned level);
/* Queues Killed for a kill of the history; as warn_bus_send. */
int warn_bus_send_kill(struct warn_bus *w, const struct kill_record *r);
/* Closes without waiting; the signals still queued count as dropped. */
void warn_bus_close(struct warn_bus *w);
