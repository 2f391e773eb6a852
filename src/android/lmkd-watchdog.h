/* SPDX-License-Identifier: MIT */
/* lmkd-watchdog: lmkd's watchdog that kills. While the lmkd socket is
 * served, a thread of its own watches the event loop: when the loop has
 * been busy (out of epoll_wait) for timeout_us -- stuck in the kernel, or a
 * bug -- it SIGKILLs the most expendable registered process, as lmkd's
 * watchdog does, and says so; again every timeout_us while the loop stays
 * stuck. It never touches the registry: the loop publishes the candidates
 * it has chosen itself (registered, in the band, not shielded; highest adj
 * first), and the thread kills one only while its pid still names the
 * process of that start time and its oom_score_adj is still the adj it was
 * chosen at. A healthy loop (back in epoll_wait within timeout_us) is never
 * bitten. In a dry run it logs what it would kill. */
#pragma once

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "log.h"
#include "procfs.h"

/* lmkd's WATCHDOG_TIMEOUT_SEC */
#define LMKD_WATCHDOG_TIMEOUT_US (2 * 1000000ULL)
/* the loop republishes its candidates at most this often (when the registry changed) */
#define LMKD_WATCHDOG_REFRESH_US 1000000ULL
#define LMKD_WATCHDOG_CANDIDATES 4

struct lmkd_watchdog_cand {
	pid_t pid;
	uint64_t start_time;
	int adj;
	uid_t uid;
	char comm[PROC_COMM_MAX];
};

struct lmkd_watchdog {
	int procfd;
	const struct log *log;
	uint64_t timeout_us;
	int stop_fd;                   /* eventfd: the thread ends when readable */
	pthread_t thread;
	bool running;
	atomic_uint_least64_t busy_since_us; /* CLOCK_MONOTONIC; 0: the loop waits for events */
	atomic_bool dry_run;
	atomic_uint_least64_t kills;
	uint64_t last_bite_us;         /* the thread's own */
	pthread_mutex_t lock;          /* guards cand and n */
	struct lmkd_watchdog_cand cand[LMKD_WATCHDOG_CANDIDATES];
	size_t n;
};

/* Starts the thread (signals blocked in it). 0 or -errno. */
int lmkd_watchdog_start(struct lmkd_watchdog *w, int procfd, const struct log *log, uint64_t timeout_us);
/* Stops and joins it; safe on one never started. */
void lmkd_watchdog_stop(struct lmkd_watchdog *w);

/* The loop left epoll_wait at now_us (busy), or goes back (idle). */
void lmkd_watchdog_busy(struct lmkd_watchdog *w, uint64_t now_us);
void lmkd_watchdog_idle(struct lmkd_watchdog *w);

/* The loop's candidates, most expendable first (at most
 * LMKD_WATCHDOG_CANDIDATES are kept). */
void lmkd_watchdog_publish(struct lmkd_watchdog *w, const struct lmkd_watchdog_cand *c, size_t n);

/* Whether to bite at now: the loop busy since busy_since (0: not busy) for
 * timeout or more, and the last bite (0: none) at least timeout ago. */
bool lmkd_watchdog_due(uint64_t busy_since, uint64_t last_bite, uint64_t now, uint64_t timeout);

/* One bite: SIGKILL to the first candidate that is still the process it was
 * and still at its adj (a dry run only logs it). 0 with *killed its pid, or
 * -ESRCH when no candidate qualified (logged). */
int lmkd_watchdog_bite(struct lmkd_watchdog *w, uint64_t busy_us, pid_t *killed);
