/* SPDX-License-Identifier: MIT */
/* psi-monitor: sliding-window stall growth, threshold events, adaptive polling.
 * Our own implementation of the semantics described by the psi monitor patch
 * series; see psi-monitor.h for the rules and the deliberate differences. */
#include "psi-monitor.h"

void psi_mon_init(struct psi_mon *m, uint64_t threshold_us, uint64_t window_us)
{
	*m = (struct psi_mon){ .threshold_us = threshold_us, .window_us = window_us };
}

/* a * b / c without overflow for the ranges used here (b <= 10 s in us),
 * and without 128-bit arithmetic, which 32-bit targets lack. A zero divisor
 * (a zero window) gives 0 rather than SIGFPE: no window, no growth. */
static uint64_t mul_div(uint64_t a, uint64_t b, uint64_t c)
{
	if (c == 0)
		return 0;
	if (b == 0 || a <= UINT64_MAX / b)
		return a * b / c;
	return (a / c) * b + (a % c) * b / c;
}

static void window_restart(struct psi_mon *m, uint64_t now, uint64_t total, uint64_t prev_growth)
{
	m->win_start_us = now;
	m->win_start_total = total;
	m->prev_win_growth = prev_growth;
}

/* Growth over the (approximate) sliding window ending at now. When commit is
 * set, the window restarts if it has fully elapsed. */
static uint64_t window_growth(struct psi_mon *m, uint64_t now, uint64_t total, bool commit)
{
	uint64_t elapsed = now - m->win_start_us;
	uint64_t growth = total - m->win_start_total;
	uint64_t gap = now - m->last_sample_us;

	if (elapsed > m->window_us) {
		uint64_t per_window = growth;

		/* nobody sampled for more than two windows: the growth happened
		 * somewhere in that gap, so spread it evenly over the gap rather
		 * than count it all as one window's growth */
		if (gap > 2 * m->window_us)
			per_window = mul_div(growth, m->window_us, gap);
		if (commit)
			window_restart(m, now, total, per_window);
		return per_window;
	}
	return growth + mul_div(m->prev_win_growth, m->window_us - elapsed, m->window_us);
}

uint64_t psi_mon_growth(const struct psi_mon *m, uint64_t now_us, uint64_t total_us)
{
	struct psi_mon copy = *m;

	if (!m->primed || m->window_us == 0 || total_us < m->win_start_total || now_us < m->last_sample_us)
		return 0;
	return window_growth(&copy, now_us, total_us, false);
}

bool psi_mon_update(struct psi_mon *m, uint64_t now_us, uint64_t total_us, bool *new_stall)
{
	uint64_t growth;

	*new_stall = false;
	if (!m->primed || total_us < m->last_total || now_us < m->last_sample_us) {
		/* first sample, or the counter went backwards: start afresh */
		m->primed = true;
		m->last_total = total_us;
		m->last_sample_us = now_us;
		window_restart(m, now_us, total_us, 0);
		return false;
	}
	/* no new stall: the kernel skips the trigger (the window is not advanced) */
	if (total_us == m->last_total) {
		m->last_sample_us = now_us;
		return false;
	}
	*new_stall = true;
	m->last_total = total_us;
	/* no window (a tier without a trigger): nothing to measure, never fires */
	if (m->window_us == 0) {
		m->last_sample_us = now_us;
		return false;
	}
	growth = window_growth(m, now_us, total_us, true);
	m->last_sample_us = now_us;
	if (growth < m->threshold_us)
		return false;
	if (m->fired && now_us < m->last_event_us + m->window_us)
		return false;
	psi_mon_note_event(m, now_us);
	return true;
}

void psi_mon_note_event(struct psi_mon *m, uint64_t now_us)
{
	m->fired = true;
	m->last_event_us = now_us;
}

void psi_poller_init(struct psi_poller *p, uint64_t min_window_us)
{
	*p = (struct psi_poller){
		.period_us = min_window_us / PSI_MON_UPDATES_PER_WINDOW,
		.min_window_us = min_window_us,
	};
}

void psi_poller_start(struct psi_poller *p, uint64_t now_us)
{
	if (!p->active) {
		p->active = true;
		p->until_us = now_us + p->min_window_us;
	}
}

bool psi_poller_after_sample(struct psi_poller *p, uint64_t now_us, bool new_stall)
{
	if (!p->active)
		return false;
	if (new_stall)
		p->until_us = now_us + p->min_window_us;
	if (now_us >= p->until_us)
		p->active = false;
	return p->active;
}
