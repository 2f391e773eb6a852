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

/* Connects to the system bus ($DBUS_SYSTEM_BUS_ADDRESS or the default
 * socket) and asks for WARN_BUS_NAME. 0, or -errno with why filled
 * (-EEXIST: another process owns the name, e.g. low-memory-monitor). */
int warn_bus_open(struct warn_bus *w, char *why, size_t whylen);
/* The connection's fd for epoll (readable: call warn_bus_process), -1 closed. */
int warn_bus_fd(const struct warn_bus *w);
/* Handles what the bus sent. 0, or -errno when the connection is lost. */
int warn_bus_process(struct warn_bus *w);
/* Emits LowMemoryWarning(level). 0 or -errno. */
int warn_bus_send(struct warn_bus *w, unsigned level);
void warn_bus_close(struct warn_bus *w);
