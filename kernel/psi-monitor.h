/* SPDX-License-Identifier: MIT */
/* psi-monitor: the PSI trigger algorithm of the kernel's psi monitor (Linux
 * 5.2, "psi: introduce psi monitor") as a pure userspace library. A trigger is
 * fed (time, total stall) samples -- the "total=" field of a pressure file --
 * and answers whether it fires. No I/O, no clock: callers pass the time.
 *
 * Per trigger, as in the kernel:
 *  - stall growth is measured over a tracking window that restarts each time
 *    more than a window has passed since its start; a partially elapsed window
 *    adds the previous window's growth, scaled by the part of the window not
 *    yet elapsed (linear interpolation of a sliding window);
 *  - samples without new stall are ignored (the window is not advanced);
 *  - an event fires when that growth reaches the threshold, at most once per
 *    window.
 * Per group of triggers on one file (struct psi_poller), as in the kernel:
 *  - polling runs at a tenth of the smallest window while stall grows, and
 *    stays on for at least one smallest window after the last growth.
 *
 * Where this library differs on purpose (see kernel/README.md):
 *  - a gap in sampling (no sample at all, with or without new stall) longer
 *    than two windows does not count all the growth of the gap as one
 *    window's growth: it is scaled to the window;
 *  - a total that goes backwards (the cgroup was recreated) restarts the
 *    window without an event;
 *  - the first sample only starts the window. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#define PSI_MON_WINDOW_MIN_US 500000ULL
#define PSI_MON_WINDOW_MAX_US 10000000ULL
#define PSI_MON_UPDATES_PER_WINDOW 10

struct psi_mon {
	uint64_t threshold_us;
	uint64_t window_us;
	bool primed;             /* has seen a sample */
	uint64_t last_total;     /* total at the previous sample */
	uint64_t last_sample_us; /* time of the previous sample, with or without stall */
	uint64_t win_start_us;   /* start of the current tracking window */
	uint64_t win_start_total;
	uint64_t prev_win_growth; /* growth over the previous whole window */
	bool fired;              /* an event has been generated */
	uint64_t last_event_us;
};

/* threshold_us <= window_us, window within 500ms..10s: checked by the caller.
 * A window of 0 makes an inert trigger: it tracks the total (new_stall) but
 * never fires and its growth is 0. Samples at equal times are valid. */
void psi_mon_init(struct psi_mon *m, uint64_t threshold_us, uint64_t window_us);

/* Feeds a sample. Returns true if the trigger fires at now_us. *new_stall is
 * set when total grew since the previous sample (callers keep polling then). */
bool psi_mon_update(struct psi_mon *m, uint64_t now_us, uint64_t total_us, bool *new_stall);

/* The growth the trigger would compare with its threshold at now_us for
 * total_us, without changing the state (for logging and tests). */
uint64_t psi_mon_growth(const struct psi_mon *m, uint64_t now_us, uint64_t total_us);

/* Records an event reported by another source (a kernel trigger with the same
 * parameters), so the rate limit of one event per window covers both. */
void psi_mon_note_event(struct psi_mon *m, uint64_t now_us);

/* The polling state of a group of triggers on one pressure file. */
struct psi_poller {
	uint64_t period_us;     /* smallest window / 10 */
	uint64_t min_window_us; /* polling stays on this long after the last growth */
	bool active;
	uint64_t until_us;
};

void psi_poller_init(struct psi_poller *p, uint64_t min_window_us);
/* Something suggests stall (a coarse kernel trigger, growth seen by a slow
 * sample): poll from now on. */
void psi_poller_start(struct psi_poller *p, uint64_t now_us);
/* After a sample: extends polling on new stall, stops it a window after the
 * last growth. Returns true while polling goes on. */
bool psi_poller_after_sample(struct psi_poller *p, uint64_t now_us, bool new_stall);
