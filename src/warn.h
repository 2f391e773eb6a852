/* warn: low-memory warnings as org.freedesktop.LowMemoryMonitor sends them
 * on the system bus (the signal LowMemoryWarning, one byte: 50 low, 100
 * medium, 255 critical, on /org/freedesktop/LowMemoryMonitor), so that
 * GLib's GMemoryMonitor in every application hears a tier with
 * action = warn. The daemon owns the bus name, as GLib listens to its
 * owner only. Through sd-bus; without libsystemd every call is -ENOTSUP. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define WARN_BUS_NAME "org.freedesktop.LowMemoryMonitor"
#define WARN_BUS_PATH "/org/freedesktop/LowMemoryMonitor"
#define WARN_BUS_INTERFACE "org.freedesktop.LowMemoryMonitor"

enum warn_level {
	WARN_LEVEL_LOW = 50,
	WARN_LEVEL_MEDIUM = 100,
	WARN_LEVEL_CRITICAL = 255,
};

struct warn_bus {
	void *bus;  /* sd_bus *, NULL when closed */
	bool owner; /* the name is ours */
	int last_err; /* the last failure to connect (the owner logs each new one once) */
};

/* "low", "medium", "critical" (or 50, 100, 255). 0 or -EINVAL. */
int warn_parse_level(const char *s, unsigned *level);
const char *warn_level_name(unsigned level);

/* Kills go out on the system bus too, for desktop agents
 * (tools/psi-lmkd-notify-agent): signal Killed(u pid, s comm, u uid,
 * s tier, s reason, t rss_kb) on KILLS_BUS_PATH, interface KILLS_BUS_INTERFACE. */
#define KILLS_BUS_PATH "/io/github/psi_lmkd/Killer1"
#define KILLS_BUS_INTERFACE "io.github.psi_lmkd.Killer1"

struct kill_record;

/* Connects to the system bus ($DBUS_SYSTEM_BUS_ADDRESS or the default
 * socket) and asks for WARN_BUS_NAME. 0 when connected; w->owner says
 * whether the name is ours (why tells why not: another process owns it,
 * e.g. low-memory-monitor, or no policy allows it). -errno when there is
 * no connection. */
int warn_bus_open(struct warn_bus *w, char *why, size_t whylen);
/* The connection's fd for epoll (readable: call warn_bus_process), -1 closed. */
int warn_bus_fd(const struct warn_bus *w);
/* Handles what the bus sent. 0, or -errno when the connection is lost. */
int warn_bus_process(struct warn_bus *w);
/* Emits LowMemoryWarning(level). 0 or -errno. */
int warn_bus_send(struct warn_bus *w, unsigned level);
/* Emits Killed for a kill of the history. 0 or -errno. */
int warn_bus_send_kill(struct warn_bus *w, const struct kill_record *r);
void warn_bus_close(struct warn_bus *w);
