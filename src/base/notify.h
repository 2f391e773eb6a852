/* SPDX-License-Identifier: MIT */
/* notify: the service manager's notification protocol (sd_notify(3)).
 *
 * The messages go to $NOTIFY_SOCKET ('@' for an abstract socket; a path is
 * looked up under the daemon's root, rootfd), written by sdsock.c in every
 * build, with or without libsystemd. Without $NOTIFY_SOCKET (not started by
 * systemd, or started with another Type=) the functions return 0 and send
 * nothing.
 *
 * Messages sent (exactly; tests/test-notify.c checks them byte for byte):
 *   notify_ready("x")     "READY=1\nSTATUS=x"    (status NULL or "": "READY=1")
 *   notify_status(...)    "STATUS=<formatted>"
 *   notify_reloading()    "RELOADING=1\nMONOTONIC_USEC=<CLOCK_MONOTONIC in us>"
 *   notify_stopping()     "STOPPING=1"
 *   notify_watchdog()     "WATCHDOG=1"
 * A status is one line: newlines and other control characters become spaces,
 * and it is cut at NOTIFY_STATUS_MAX bytes.
 *
 * The daemon must stay the service's main process (psi-lmkd -f under systemd):
 * with the default NotifyAccess=main, messages from a detached child are
 * ignored, and the watchdog is only enabled for the pid in $WATCHDOG_PID. */
#pragma once

#include <stdint.h>

#define NOTIFY_STATUS_MAX 480

/* READY=1 with an optional status. Returns 0 or -errno. */
int notify_ready(int rootfd, const char *status);
/* STATUS=... (printf format). Returns 0 or -errno. */
__attribute__((format(printf, 2, 3))) int notify_status(int rootfd, const char *fmt, ...);
/* RELOADING=1 and MONOTONIC_USEC= (systemd 253+ wants both for Type=notify-reload;
 * 252 reads RELOADING=1 and ignores the rest). Follow with notify_ready(). */
int notify_reloading(int rootfd);
/* STOPPING=1. Returns 0 or -errno. */
int notify_stopping(int rootfd);
/* The watchdog period systemd expects keep-alives within, in microseconds
 * ($WATCHDOG_USEC, if $WATCHDOG_PID is unset or this process, as
 * sd_watchdog_enabled(3) reads them); 0 = no watchdog.
 * Send notify_watchdog() about every half of it. */
uint64_t notify_watchdog_usec(void);
/* WATCHDOG=1. Returns 0 or -errno. */
int notify_watchdog(int rootfd);
