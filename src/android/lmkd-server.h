/* SPDX-License-Identifier: MIT */
/* lmkd-server: Android lmkd's control socket, served. It takes the listening
 * socket init made (ANDROID_SOCKET_lmkd) or makes one at the configured path,
 * keeps up to three clients (a fourth evicts them all, as lmkd does), reads
 * each one's requests in order with the sender's credentials, applies them
 * to the registry and to /proc/PID/oom_score_adj, and answers the requests
 * that have answers. Bad input is logged (at most one line per kind and
 * LMKD_BAD_LOG_INTERVAL_US, and one that counts the rest) and ignored: never
 * answered, never a reason to drop a client. It is also the kill path's source of victims
 * while it runs (struct kill_source), and sends the kill reports.
 * The daemon lends it its epoll set and its reload through the ops. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "kill.h"
#include "lmkd-proto.h"
#include "lmkd-registry.h"
#include "lmkd-watchdog.h"
#include "log.h"

#define LMKD_CLIENTS_MAX 3
#define LMKD_LISTEN_BACKLOG 3
#define LMKD_SOCKET_ENV "ANDROID_SOCKET_lmkd"
#define LMKD_ANDROID_SOCKET "/dev/socket/lmkd"
#define LMKD_CLIENT_TIMEOUT_MS 5000
/* lmkd takes at most one TARGET a second */
#define LMKD_TARGET_INTERVAL_US 1000000ULL
/* registered processes get pidfds only below RLIMIT_NOFILE minus this: the
 * kill path, a /proc scan and a reload must still find fds */
#define LMKD_FD_RESERVE 64
/* bad input is logged once per interval and kind: the first, then one line
 * that counts the rest */
#define LMKD_BAD_LOG_INTERVAL_US 10000000ULL
enum lmkd_bad_kind {
	LMKD_BAD_PACKET,   /* a packet the codec refuses */
	LMKD_BAD_PRIORITY, /* a priority lmkd refuses */
	LMKD_BAD_THREAD,   /* a priority for a thread, not a process */
	LMKD_BAD_TARGET,   /* TARGET less than a second after the last */
	LMKD_BAD_KINDS
};
/* datagrams read from one client in one wakeup; the rest wait for the next */
#define LMKD_BATCH_MAX 64

enum lmkd_fd_kind { LMKD_FD_LISTEN, LMKD_FD_CLIENT, LMKD_FD_PROC };

/* A client fd's index for the event loop: its slot and its serial, so that
 * an event of an evicted client still queued in the same wakeup is not
 * taken for the newcomer in its slot. Fits the 28 bits the loop keeps. */
#define LMKD_CLIENT_SLOT_BITS 2
#define LMKD_CLIENT_SERIAL_MASK ((1u << 26) - 1)
#define LMKD_CLIENT_INDEX(serial, slot) ((size_t)(serial) << LMKD_CLIENT_SLOT_BITS | (size_t)(slot))
_Static_assert(LMKD_CLIENTS_MAX <= 1u << LMKD_CLIENT_SLOT_BITS, "a client slot fits its bits");

struct lmkd_server_ops {
	/* add fd to the event loop (readable, hang-up); lmkd_server_event
	 * gets kind and index back. 0 or -errno */
	int (*watch)(void *ctx, int fd, enum lmkd_fd_kind kind, size_t index);
	void (*unwatch)(void *ctx, int fd);
	/* UPDATE_PROPS: re-read the configuration. 0, or -errno with the old
	 * one kept */
	int (*reload)(void *ctx);
	uint64_t (*now_us)(void *ctx);
};

struct lmkd_client {
	int fd;           /* -1: free slot */
	pid_t pid;        /* of the last packet's credentials; owns its records */
	uid_t uid;
	unsigned events;  /* 1 << LMKD_EVENT_*: subscriptions */
	uint64_t packets;
	uint32_t serial;  /* of this connection (LMKD_CLIENT_INDEX) */
};

struct lmkd_server {
	const struct lmkd_server_ops *ops;
	void *ctx;
	const struct log *log;
	int procfd;
	int rootfd;
	int listen_fd;
	bool inherited;        /* the fd came from init */
	char path[108];        /* the socket we created ("" if inherited), unlinked at close */
	bool short_prockill;   /* 12-byte PROCKILL (Android 11-15 frameworks) */
	bool kill_log;         /* lmkd's own kill line too (lmkd-kill.h) */
	const char *memory_cgroup; /* the owner's: bounds the available memory a kill
				    * report tells; NULL or "" = system-wide */
	struct lmkd_client clients[LMKD_CLIENTS_MAX];
	uint32_t client_serial; /* the last connection's, never 0 once one came */
	struct lmkd_registry reg;
	struct kill_source source; /* the kill path's view of this server */
	uint64_t last_target_us;
	unsigned n_targets;
	int32_t target_minfree[LMKD_TARGETS_MAX], target_adj[LMKD_TARGETS_MAX];
	bool boot_completed;
	/* the victim of the last choice, named as lmkd names it (as a display
	 * name), read before the kill (a dead process has no command line) */
	pid_t chosen_pid;
	char chosen_task[LMKD_TASKNAME_MAX + 1];
	uint64_t packets, bad_packets, reports_lost;
	/* the throttle of bad-input lines (LMKD_BAD_LOG_INTERVAL_US), by kind */
	struct lmkd_bad_log {
		bool logged;        /* a line was logged, at logged_us */
		uint64_t logged_us;
		uint64_t unlogged;  /* lines held back since */
		pid_t unlogged_pid; /* the client of the last one held back */
	} bad[LMKD_BAD_KINDS];
	bool pidfd_warned;
	int pidfd_limit; /* pidfds at or above this fd number are not kept */
	/* the watchdog that kills (lmkd-watchdog.h), once started; the
	 * registry's gen and the time of its candidates' last publication */
	struct lmkd_watchdog wd;
	bool wd_on;
	bool wd_published;
	uint64_t wd_gen, wd_refresh_us;
	struct kill_pick wd_pick; /* the choice's working memory (large: not on the stack) */
};

/* The listening socket: the fd in env_fd (the value of ANDROID_SOCKET_lmkd,
 * NULL when unset) if given, else a new socket bound at path (mode 0660; a
 * stale socket there is replaced, anything else refused). SOCK_SEQPACKET
 * with SO_PASSCRED, listening with backlog 3. Logs what failed; 0 or -errno. */
int lmkd_server_open(struct lmkd_server *s, const char *env_fd, const char *path, const struct lmkd_server_ops *ops,
		     void *ctx, const struct log *log, int rootfd, int procfd);
/* Closes the clients and the socket (unlinking a socket it made) and
 * forgets the registry. */
void lmkd_server_close(struct lmkd_server *s);

/* Starts the watchdog that kills when the event loop is stuck for
 * timeout_us (lmkd-watchdog.h). 0 or -errno (then there is none). */
int lmkd_server_watchdog_start(struct lmkd_server *s, uint64_t timeout_us);
/* The event loop left epoll_wait: the watchdog's clock runs. */
void lmkd_server_loop_busy(struct lmkd_server *s);
/* The event loop goes back to epoll_wait: the clock stops; when the
 * registry changed (at most every LMKD_WATCHDOG_REFRESH_US) the watchdog
 * gets new candidates, chosen as the kill path chooses with c (band floor
 * min_adj, never below 0) and their order. */
void lmkd_server_loop_idle(struct lmkd_server *s, const struct pick_ctx *c, int min_adj, bool dry_run);

/* An fd of kind/index reported events (EPOLL* bits). A client's index is
 * the one its watch was given (LMKD_CLIENT_INDEX); one of a connection
 * closed since is ignored. */
void lmkd_server_event(struct lmkd_server *s, enum lmkd_fd_kind kind, size_t index, uint32_t events);

/* One status line (SIGUSR1): clients, registered processes, packets, kills. */
void lmkd_server_log_status(const struct lmkd_server *s);

/* Handles one request of client c: exposed for tests. */
void lmkd_server_handle(struct lmkd_server *s, struct lmkd_client *c, const uint8_t *buf, size_t len);

/* Client side: connects to path, sends the request (cmd with no
 * arguments), waits for the 8-byte reply (at most timeout_ms). 0 and
 * *value, or -errno (-EBADMSG: an answer that is not a reply to cmd). */
int lmkd_client_call(const char *path, enum lmkd_cmd cmd, int timeout_ms, int32_t *value);
