/* SPDX-License-Identifier: MIT */
/* test-psi-monitor: the userspace psi trigger algorithm (kernel/psi-monitor.h)
 * checked against the psi monitor patch series ("psi: introduce psi monitor",
 * Linux 5.2: window_update(), poll_triggers() and Documentation/accounting/
 * psi.txt). Every test feeds a synthetic timeline of (time, total stall)
 * samples; the expected numbers are worked out by hand in the comments.
 *
 * Units: everything is in microseconds; MS() and SEC() only make the
 * timelines readable. "thr" is the trigger threshold, "win" its window. */
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cunit-tap.h"
#include "psi-monitor.h"

#define MS(x) ((uint64_t)(x) * 1000ULL)
#define SEC(x) ((uint64_t)(x) * 1000000ULL)
#define N_ELEMS(a) (sizeof(a) / sizeof((a)[0]))

/* ---- helpers ---------------------------------------------------------- */

struct sample {
	uint64_t t_us;
	uint64_t total_us;
};

#define MAX_EVENTS 128

struct events {
	size_t n;                 /* all events, even those not stored */
	uint64_t t_us[MAX_EVENTS]; /* the first MAX_EVENTS event times */
};

/* Replays a timeline through a trigger and records when it fired. */
static size_t replay(struct psi_mon *m, const struct sample *s, size_t n, struct events *ev)
{
	size_t i;

	ev->n = 0;
	for (i = 0; i < n; i++) {
		bool new_stall;

		if (psi_mon_update(m, s[i].t_us, s[i].total_us, &new_stall)) {
			if (ev->n < MAX_EVENTS)
				ev->t_us[ev->n] = s[i].t_us;
			ev->n++;
		}
	}
	return ev->n;
}

/* A steady stall: a sample every period_us from t0_us through t_end_us, the
 * total starting at base_us and growing by stall_us each period. */
static size_t steady(struct sample *out, size_t max, uint64_t t0_us, uint64_t t_end_us, uint64_t period_us,
		     uint64_t base_us, uint64_t stall_us)
{
	size_t n = 0;
	uint64_t t;

	for (t = t0_us; t <= t_end_us && n < max; t += period_us, n++) {
		out[n].t_us = t;
		out[n].total_us = base_us + n * stall_us;
	}
	return n;
}

static void print_times(const char *label, const uint64_t *t, size_t n)
{
	size_t i;

	printf("#   %s (%zu):", label, n);
	for (i = 0; i < n && i < MAX_EVENTS; i++)
		printf(" %" PRIu64, t[i]);
	printf("\n");
}

static void check_events(const struct events *ev, const uint64_t *want, size_t n_want, unsigned line)
{
	bool same = ev->n == n_want;
	size_t i;

	for (i = 0; same && i < n_want; i++)
		same = ev->t_us[i] == want[i];
	if (!same) {
		printf("# line %u: event times (us) differ\n", line);
		print_times("got ", ev->t_us, ev->n);
		print_times("want", want, n_want);
	}
	CU_assertImplementation(same, line, "event times as expected", __FILE__, "", CU_FALSE);
}

#define CHECK_EVENTS(ev, want) check_events((ev), (want), N_ELEMS(want), __LINE__)
#define CHECK_NO_EVENTS(ev) check_events((ev), NULL, 0, __LINE__)

/* Feeds one sample and checks whether it fired and whether it saw new stall. */
static void feed(struct psi_mon *m, uint64_t t_us, uint64_t total_us, bool want_fire, bool want_new,
		 unsigned line)
{
	bool new_stall = !want_new;
	bool fired = psi_mon_update(m, t_us, total_us, &new_stall);

	if (fired != want_fire || new_stall != want_new)
		printf("# line %u: t=%" PRIu64 "us total=%" PRIu64 "us: fired=%d new_stall=%d, want %d %d\n",
		       line, t_us, total_us, fired, new_stall, want_fire, want_new);
	CU_assertImplementation(fired == want_fire, line, "fired as expected", __FILE__, "", CU_FALSE);
	CU_assertImplementation(new_stall == want_new, line, "new_stall as expected", __FILE__, "", CU_FALSE);
}

#define FEED(m, t, total, fire, news) feed((m), (t), (total), (fire), (news), __LINE__)

/* Checks the growth the trigger would compare with its threshold. */
static void growth_is(const struct psi_mon *m, uint64_t t_us, uint64_t total_us, uint64_t want, unsigned line)
{
	uint64_t got = psi_mon_growth(m, t_us, total_us);

	if (got != want)
		printf("# line %u: growth at t=%" PRIu64 "us total=%" PRIu64 "us is %" PRIu64 "us, want %" PRIu64
		       "us\n",
		       line, t_us, total_us, got, want);
	CU_assertImplementation(got == want, line, "growth as expected", __FILE__, "", CU_FALSE);
}

#define GROWTH_IS(m, t, total, want) growth_is((m), (t), (total), (want), __LINE__)

/* ---- the trigger ------------------------------------------------------- */

/* The first sample only starts the window: poll_triggers() on its first run
 * (SWITCHING -> POLLING) calls window_init() and generates nothing. A total
 * of one hour of stall since boot is history, not growth. */
static void test_first_sample_primes(void)
{
	const uint64_t t0 = SEC(1000), big = SEC(3600);
	struct psi_mon m, tiny;

	psi_mon_init(&m, MS(100), SEC(1));
	FEED(&m, t0, big, false, false);
	/* same total 100 ms later: nothing */
	FEED(&m, t0 + MS(100), big, false, false);
	/* +50 ms: growth is 50 ms from the first sample, below 100 ms */
	GROWTH_IS(&m, t0 + MS(200), big + MS(50), MS(50));
	FEED(&m, t0 + MS(200), big + MS(50), false, true);
	/* +100 ms since the first sample: 100 >= 100 fires */
	FEED(&m, t0 + MS(300), big + MS(100), true, true);

	/* even a 1 us threshold does not fire on the first sample, but does on
	 * the next sample that adds 1 us */
	psi_mon_init(&tiny, 1, MS(500));
	FEED(&tiny, 0, UINT64_C(1) << 50, false, false);
	FEED(&tiny, MS(50), (UINT64_C(1) << 50) + 1, true, true);
}

/* "growth < t->threshold: continue" -- growth equal to the threshold fires.
 * win 1 s, thr 100 ms, base total 7 s:
 *   0.1 s: +40 ms    -> 40 ms, no
 *   0.2 s: +99.999ms -> 99999 us, no
 *   0.3 s: +100 ms   -> 100000 us >= 100000 us, event */
static void test_threshold_reached_exactly(void)
{
	const uint64_t b = SEC(7);
	struct psi_mon m;
	struct sample s[16];
	struct events ev;
	size_t i;

	psi_mon_init(&m, MS(100), SEC(1));
	FEED(&m, 0, b, false, false);
	FEED(&m, MS(100), b + MS(40), false, true);
	FEED(&m, MS(200), b + MS(100) - 1, false, true);
	FEED(&m, MS(300), b + MS(100), true, true);

	/* a window that grows to 99.999 ms at most never fires: samples every
	 * 100 ms from 0 to 1.0 s, +9999.9 us each -> 99999 us at 1.0 s (the
	 * window, elapsed == 1 s, has not restarted yet) */
	for (i = 0; i <= 10; i++) {
		s[i].t_us = i * MS(100);
		s[i].total_us = b + (i * (MS(100) - 1)) / 10;
	}
	psi_mon_init(&m, MS(100), SEC(1));
	replay(&m, s, 11, &ev);
	CHECK_NO_EVENTS(&ev);
}

/* window_update(): within a window, growth = growth since the window start +
 * per_win_growth * unelapsed / size. LWN: "If the current window is 50% past,
 * the calculated stall value will be the time accumulated so far in this
 * window, plus 50% of the total from the previous window."
 * win 1 s, base B:
 *   0.0 s B      prime, window starts at 0
 *   0.5 s B+30   growth 30
 *   1.1 s B+60   elapsed 1.1 s > 1 s: restart at 1.1 s, previous window's
 *                growth G = 60 ms (1.1 s <= 2 windows: not a gap)
 *   1.6 s B+90   f = 0.5: 30 + 60 * 0.5  = 60 ms
 *   1.35s B+75   f = .25: 15 + 60 * 0.75 = 60 ms
 *   1.85s B+80   f = .75: 20 + 60 * 0.25 = 35 ms
 *   2.1 s B+100  f = 1:   40 + 60 * 0    = 40 ms (same window still) */
static void interpolation_history(struct psi_mon *m, uint64_t thr, uint64_t b)
{
	psi_mon_init(m, thr, SEC(1));
	FEED(m, 0, b, false, false);
	FEED(m, MS(500), b + MS(30), false, true);
	FEED(m, MS(1100), b + MS(60), false, true);
}

static void test_interpolation(void)
{
	const uint64_t b = SEC(50);
	struct psi_mon m;

	interpolation_history(&m, MS(100), b);
	GROWTH_IS(&m, MS(1600), b + MS(90), MS(60));
	GROWTH_IS(&m, MS(1350), b + MS(75), MS(60));
	GROWTH_IS(&m, MS(1850), b + MS(80), MS(35));
	GROWTH_IS(&m, MS(2100), b + MS(100), MS(40));

	/* the same numbers decide events: with thr 61 ms, 30 ms new at 1.6 s
	 * makes 60 ms (no event), 31 ms new makes 31 + 30 = 61 ms (event) */
	interpolation_history(&m, MS(61), b);
	FEED(&m, MS(1600), b + MS(90), false, true);
	interpolation_history(&m, MS(61), b);
	FEED(&m, MS(1600), b + MS(91), true, true);

	/* with thr 60 ms, 30 new at 0.5 s into the window reaches it exactly */
	psi_mon_init(&m, MS(60), SEC(1));
	FEED(&m, 0, b, false, false);
	FEED(&m, MS(500), b + MS(30), false, true);
	FEED(&m, MS(1100), b + MS(59), false, true); /* G = 59 ms < 60 ms */
	/* 1.6 s: 30 + 59 * 0.5 = 59.5 ms, no */
	FEED(&m, MS(1600), b + MS(89), false, true);
	/* 1.7 s: 31 + 59 * 0.4 = 54.6 ms, no; 1.8 s: 45 + 59 * 0.3 = 62.7 ms, yes */
	FEED(&m, MS(1700), b + MS(90), false, true);
	FEED(&m, MS(1800), b + MS(104), true, true);
}

/* window_update() restarts only when interval > win->size. win 1 s, thr 1 s
 * (never reached here), observed through psi_mon_growth():
 *   0    s total 0    prime
 *   1.0  s total 100  elapsed == 1 s: no restart, growth 100
 *   1.05 s total 110  window still from 0: elapsed 1.05 > 1, restart with
 *                     G = 110 -> growth 110 (had it restarted at 1.0 with
 *                     G = 100: 10 + 100 * 0.95 = 105)
 *   1.55 s total 130  20 + 110 * 0.5 = 75
 *   2.05 s total 150  elapsed exactly 1 s: 40 + 110 * 0 = 40
 *   2.06 s total 151  elapsed 1.01 s: restart, growth since 1.05 s = 41 */
static void test_window_restart_strictly_after(void)
{
	struct psi_mon m;

	psi_mon_init(&m, SEC(1), SEC(1));
	FEED(&m, 0, 0, false, false);
	GROWTH_IS(&m, SEC(1), MS(100), MS(100));
	FEED(&m, SEC(1), MS(100), false, true);
	GROWTH_IS(&m, MS(1050), MS(110), MS(110));
	FEED(&m, MS(1050), MS(110), false, true);
	GROWTH_IS(&m, MS(1550), MS(130), MS(75));
	FEED(&m, MS(1550), MS(130), false, true);
	GROWTH_IS(&m, MS(2050), MS(150), MS(40));
	FEED(&m, MS(2050), MS(150), false, true);
	GROWTH_IS(&m, MS(2060), MS(151), MS(41));

	/* the same as events: thr 110 ms fires at 1.05 s (110 >= 110), which it
	 * would not if the window had restarted at 1.0 s (105 < 110) */
	psi_mon_init(&m, MS(110), SEC(1));
	FEED(&m, 0, 0, false, false);
	FEED(&m, SEC(1), MS(100), false, true);
	FEED(&m, MS(1050), MS(110), true, true);
}

/* poll_triggers(): "if (group->polling_total[t->state] ==
 * group->total[t->state]) continue;" -- a sample without new stall neither
 * fires nor touches the window.
 * A) win 1 s, thr 100 ms:
 *   0   s total 0   prime
 *   0.5 s total 90  growth 90, no
 *   0.6 .. 1.5 s total 90: ignored (no event, new_stall false); in
 *        particular the window (from 0) is not restarted at 1.1 s
 *   1.6 s total 100: elapsed 1.6 s > 1 s, restart, growth 100 -> event.
 *        (If 1.1 s had restarted it with G = 90: 10 + 90 * 0.5 = 55, none.)
 * B) after an event at 0.9 s (growth 100), unchanged samples from 1.0 s to
 *    2.0 s never fire, although from 1.9 s on the rate limit would allow it
 *    and the window from 0 holds 100 ms of growth. */
static void test_unchanged_total_ignored(void)
{
	struct psi_mon m;
	uint64_t t;

	psi_mon_init(&m, MS(100), SEC(1));
	FEED(&m, 0, 0, false, false);
	FEED(&m, MS(500), MS(90), false, true);
	for (t = MS(600); t <= MS(1500); t += MS(100))
		FEED(&m, t, MS(90), false, false);
	FEED(&m, MS(1600), MS(100), true, true);

	psi_mon_init(&m, MS(100), SEC(1));
	FEED(&m, 0, SEC(3), false, false);
	FEED(&m, MS(900), SEC(3) + MS(100), true, true);
	for (t = SEC(1); t <= SEC(2); t += MS(50))
		FEED(&m, t, SEC(3) + MS(100), false, false);
}

/* "Notifications to the userspace are rate-limited to one per tracking
 * window": "if (now < t->last_event_time + t->win.size) continue;".
 * win 1 s, thr 100 ms, 50% stall (50 ms per 100 ms sample) from t = 0:
 *   0.2 s: growth 100 -> event
 *   0.3 .. 1.1 s: growth >= 100 but now < 0.2 + 1 -> suppressed
 *   1.1 s: restart (elapsed 1.1) with G = 550
 *   1.2 s: now == 0.2 + 1 (allowed), growth 50 + 550 * 0.9 = 545 -> event
 *   2.2 s: window from 1.1 s, elapsed 1.1 s: restart, G = 550 -> event
 * Over 0 .. 2.9 s: events at 0.2, 1.2, 2.2 s exactly. The first event at
 * 0.2 s also shows that an event is not suppressed at small times by a
 * never-set "last event" time. */
static void test_rate_limit(void)
{
	static const uint64_t want[] = { MS(200), MS(1200), MS(2200) };
	struct sample s[64];
	struct psi_mon m;
	struct events ev;
	size_t n;

	n = steady(s, N_ELEMS(s), 0, MS(2900), MS(100), 0, MS(50));
	psi_mon_init(&m, MS(100), SEC(1));
	replay(&m, s, n, &ev);
	CHECK_EVENTS(&ev, want);

	/* the boundary, with irregular samples: event at 0.3 s; at 1.299999 s the
	 * growth is 200 ms (restart) but 1 us short of a window since the event;
	 * at 1.3 s it is 100 + 200 * 999999 / 1000000 ms -> event */
	psi_mon_init(&m, MS(100), SEC(1));
	FEED(&m, 0, 0, false, false);
	FEED(&m, MS(300), MS(100), true, true);
	FEED(&m, MS(1300) - 1, MS(200), false, true);
	FEED(&m, MS(1300), MS(300), true, true);
}

/* psi_mon_note_event(): an event seen from another source (the kernel
 * trigger) starts the same one-per-window rate limit.
 * Same 50% stall as test_rate_limit, an external event at 0.1 s:
 *   0.2 .. 1.0 s: growth >= 100 ms, but now < 0.1 + 1 -> suppressed
 *   1.1 s: restart, G = 550, now == 0.1 + 1 -> event
 *   2.1 s: window from 1.1 s, elapsed exactly 1 s: growth 500 + 550 * 0
 *          = 500 ms, now == 1.1 + 1 -> event
 * Over 0 .. 2.5 s: events at 1.1 and 2.1 s (without the note: 0.2, 1.2, 2.2). */
static void test_note_event(void)
{
	static const uint64_t want[] = { MS(1100), MS(2100) };
	static const uint64_t want_alone[] = { MS(200), MS(1200), MS(2200) };
	struct sample s[64];
	struct psi_mon m;
	struct events ev;
	size_t n;

	n = steady(s, N_ELEMS(s), 0, MS(2500), MS(100), 0, MS(50));
	psi_mon_init(&m, MS(100), SEC(1));
	FEED(&m, s[0].t_us, s[0].total_us, false, false);
	psi_mon_note_event(&m, MS(100));
	replay(&m, s + 1, n - 1, &ev);
	CHECK_EVENTS(&ev, want);

	psi_mon_init(&m, MS(100), SEC(1));
	replay(&m, s, n, &ev);
	CHECK_EVENTS(&ev, want_alone);

	/* a note later than our own event pushes the next event further:
	 * own event at 0.2 s, kernel event at 0.9 s -> next no earlier than 1.9 s.
	 * 1.9 s: window from 1.1 s (G = 550), 400 + 550 * 0.2 = 510 ms -> event */
	psi_mon_init(&m, MS(100), SEC(1));
	replay(&m, s, 10, &ev); /* 0 .. 0.9 s */
	CU_ASSERT_EQUAL(ev.n, 1);
	psi_mon_note_event(&m, MS(900));
	{
		static const uint64_t want_later[] = { MS(1900) };

		replay(&m, s + 10, 10, &ev); /* 1.0 .. 1.9 s */
		CHECK_EVENTS(&ev, want_later);
	}
}

/* Counter reset (documented difference: the cgroup was recreated and its
 * total starts again from 0): the window restarts at the reset sample,
 * without an event. win 1 s, thr 100 ms:
 *   0   s total 20 s       prime
 *   0.1 s total 20.06 s    growth 60, no
 *   0.2 s total 10 ms      backwards: no event (total - start would wrap to
 *                          ~1.8e19 us if it were taken as growth)
 *   0.3 s total 70 ms      60 ms since the reset, no (nothing is carried
 *                          over from the old cgroup's window: 60 + 60 = 120
 *                          would fire)
 *   0.4 s total 110 ms     100 ms since the reset -> event */
static void test_counter_reset(void)
{
	struct psi_mon m;

	psi_mon_init(&m, MS(100), SEC(1));
	FEED(&m, 0, SEC(20), false, false);
	FEED(&m, MS(100), SEC(20) + MS(60), false, true);
	FEED(&m, MS(200), MS(10), false, false);
	GROWTH_IS(&m, MS(300), MS(70), MS(60));
	FEED(&m, MS(300), MS(70), false, true);
	FEED(&m, MS(400), MS(110), true, true);

	/* a reset in a later window, after the old window had a full window's
	 * growth of 90 ms: the reset still starts from nothing */
	psi_mon_init(&m, MS(100), SEC(1));
	FEED(&m, 0, SEC(5), false, false);
	FEED(&m, MS(1100), SEC(5) + MS(90), false, true); /* restart, G = 90 */
	FEED(&m, MS(1200), MS(1), false, false);          /* reset */
	/* 1.3 s: 20 ms since the reset; with G = 90 carried over it would be
	 * 20 + 90 * 0.8 = 92; either way no event, but the growth is 20 */
	GROWTH_IS(&m, MS(1300), MS(21), MS(20));
	FEED(&m, MS(1300), MS(21), false, true);
}

/* Sampling gaps (documented difference): when more than two windows have
 * passed since the window start, growth is spread: growth * win / elapsed.
 * win 1 s, thr 100 ms.
 * A) a small steady stall over a long gap: 0 s total 0, 5 s total 250 ms
 *    (5%): 250 * 1 / 5 = 50 ms, no event (the kernel would count all 250).
 *    Then 5% sampled every 100 ms until 15 s: window from 5 s with G = 50:
 *    at 5 s + k*0.1: 5k + 50 * (1 - 0.1k) = 50, ... never 100 -> no events.
 * B) a stall that exceeds the threshold rate over the gap: 0 s total 0,
 *    4 s total 800 ms: 800 / 4 = 200 ms >= 100 -> event at 4 s.
 * C) a burst after a gap: 0 s total 0, 5 s total 50 ms (-> 10 ms, restart
 *    with G = 10), 5.1 s total 170 ms: 120 + 10 * 0.9 = 129 ms -> event.
 * D) the bound is strict: a gap of exactly two windows is not spread:
 *    0 s total 0, 2 s total 150 ms -> 150 ms, event; at 2.000001 s it is
 *    spread: 150 ms * 1 / 2.000001 = 74999.96 us, no event. */
static void test_gap_spread(void)
{
	static struct sample s[256];
	struct psi_mon m;
	struct events ev;
	uint64_t g;
	size_t n;

	psi_mon_init(&m, MS(100), SEC(1));
	FEED(&m, 0, 0, false, false);
	GROWTH_IS(&m, SEC(5), MS(250), MS(50));
	FEED(&m, SEC(5), MS(250), false, true);
	GROWTH_IS(&m, MS(5100), MS(255), MS(50));
	n = steady(s, N_ELEMS(s), MS(5100), SEC(15), MS(100), MS(255), MS(5));
	replay(&m, s, n, &ev);
	CHECK_NO_EVENTS(&ev);

	psi_mon_init(&m, MS(100), SEC(1));
	FEED(&m, 0, 0, false, false);
	GROWTH_IS(&m, SEC(4), MS(800), MS(200));
	FEED(&m, SEC(4), MS(800), true, true);

	psi_mon_init(&m, MS(100), SEC(1));
	FEED(&m, 0, 0, false, false);
	FEED(&m, SEC(5), MS(50), false, true);
	GROWTH_IS(&m, MS(5100), MS(170), MS(129));
	FEED(&m, MS(5100), MS(170), true, true);

	psi_mon_init(&m, MS(100), SEC(1));
	FEED(&m, 0, 0, false, false);
	GROWTH_IS(&m, SEC(2), MS(150), MS(150));
	FEED(&m, SEC(2), MS(150), true, true);

	psi_mon_init(&m, MS(100), SEC(1));
	FEED(&m, 0, 0, false, false);
	g = psi_mon_growth(&m, SEC(2) + 1, MS(150));
	CU_ASSERT(g >= 74999 && g <= 75000);
	FEED(&m, SEC(2) + 1, MS(150), false, true);
}

/* A burst after a short quiet period, regularly sampled: the quiet samples
 * are ignored (window not advanced), the burst sample restarts the window
 * with everything since its start.
 * win 1 s, thr 100 ms: 0 s total 0, samples every 100 ms with total 0 up to
 * 1.4 s, 1.5 s total 150 ms: elapsed 1.5 s (<= 2 windows), growth 150 ->
 * event. This is what window_update() computes as well. */
static void test_burst_after_short_quiet(void)
{
	struct psi_mon m;
	uint64_t t;

	psi_mon_init(&m, MS(100), SEC(1));
	FEED(&m, 0, 0, false, false);
	for (t = MS(100); t < MS(1500); t += MS(100))
		FEED(&m, t, 0, false, false);
	FEED(&m, MS(1500), MS(150), true, true);
}

/* The same burst after a long quiet period that was sampled regularly every
 * 100 ms. Documentation: "A trigger describes the maximum cumulative stall
 * time over a specific time window, e.g. 100ms of total stall time within
 * any 500ms window to generate a wakeup event." Here 150 ms of stall
 * happened within (5.0 s, 5.1 s], so within any 1 s window ending at 5.1 s,
 * and window_update() (interval 5.1 s > size) returns growth 150 >= 100:
 * the kernel fires. There is no gap in sampling (a sample every 100 ms), so
 * the library's gap rule ("a gap in sampling longer than two windows")
 * should not apply either.
 * win 1 s, thr 100 ms: 0 s total 0, total 0 every 100 ms to 5.0 s,
 * 5.1 s total 150 ms -> event expected. A stall that then stops must not be
 * lost: no later sample can see it. */
static void test_burst_after_long_quiet(void)
{
	struct psi_mon m;
	uint64_t t;
	bool fired;
	bool new_stall;

	psi_mon_init(&m, MS(100), SEC(1));
	FEED(&m, 0, 0, false, false);
	for (t = MS(100); t <= SEC(5); t += MS(100))
		FEED(&m, t, 0, false, false);
	FEED(&m, MS(5100), MS(150), true, true);

	/* and if the burst was not reported at 5.1 s, it must be at the latest
	 * when more stall follows inside the same window: 5.2 s total 151 ms
	 * (150 ms of it within (5.0, 5.2]) */
	psi_mon_init(&m, MS(100), SEC(1));
	fired = psi_mon_update(&m, 0, 0, &new_stall);
	for (t = MS(100); t <= SEC(5); t += MS(100))
		fired |= psi_mon_update(&m, t, 0, &new_stall);
	fired |= psi_mon_update(&m, MS(5100), MS(150), &new_stall);
	fired |= psi_mon_update(&m, MS(5200), MS(151), &new_stall);
	CU_ASSERT_TRUE(fired);
}

/* psi_mon_growth() only looks: asking about a time that would restart the
 * window leaves the window as it was.
 * win 1 s: 0 s total 0, 0.5 s total 50. Asking at 1.5 s (would restart)
 * and then at 0.9 s total 90 still gives 90 (window from 0, no G). */
static void test_growth_does_not_change_state(void)
{
	struct psi_mon m;

	psi_mon_init(&m, MS(100), SEC(1));
	FEED(&m, 0, 0, false, false);
	FEED(&m, MS(500), MS(50), false, true);
	GROWTH_IS(&m, MS(1500), MS(60), MS(60));
	GROWTH_IS(&m, MS(900), MS(90), MS(90));
	FEED(&m, MS(900), MS(90), false, true);
	FEED(&m, MS(950), MS(100), true, true);
}

/* The smallest window, 500 ms ("min monitoring update interval is 50ms"):
 * A) thr 100 ms, 40% stall (20 ms per 50 ms sample) from 0:
 *   0.25 s: 100 -> event
 *   0.55 s: elapsed 0.55 > 0.5: restart, G = 220
 *   0.75 s: allowed (0.25 + 0.5); 80 + 220 * 0.3/0.5 = 212 -> event
 *   1.1  s: restart, G = 220
 *   1.25 s: 60 + 220 * 0.35/0.5 = 214 -> event
 *   up to 1.45 s: events at 0.25, 0.75, 1.25 s
 * B) thr = win = 500 ms, 100% stall (50 ms per 50 ms): 0.45 s: 450, no;
 *    0.5 s: elapsed == win, 500 >= 500 -> event.
 * C) gap bound at 2 windows = 1 s: 0 s total 0, 1 s total 100 -> 100,
 *    event; 1.05 s instead: 100 * 0.5 / 1.05 = 47.6 ms, no event. */
static void test_window_500ms(void)
{
	static const uint64_t want[] = { MS(250), MS(750), MS(1250) };
	struct sample s[64];
	struct psi_mon m;
	struct events ev;
	size_t n;

	n = steady(s, N_ELEMS(s), 0, MS(1450), MS(50), SEC(9), MS(20));
	psi_mon_init(&m, MS(100), MS(500));
	replay(&m, s, n, &ev);
	CHECK_EVENTS(&ev, want);

	psi_mon_init(&m, MS(500), MS(500));
	FEED(&m, 0, 0, false, false);
	FEED(&m, MS(450), MS(450), false, true);
	FEED(&m, MS(500), MS(500), true, true);

	psi_mon_init(&m, MS(100), MS(500));
	FEED(&m, 0, 0, false, false);
	FEED(&m, SEC(1), MS(100), true, true);
	psi_mon_init(&m, MS(100), MS(500));
	FEED(&m, 0, 0, false, false);
	FEED(&m, MS(1050), MS(100), false, true);
}

/* The largest window, 10 s (update interval 1 s), thr 1 s (10%):
 * A) 15% stall, 150 ms per 1 s sample, from 0:
 *   7 s: 1050 >= 1000 -> event (6 s: 900, no)
 *   11 s: restart, G = 1650
 *   17 s: allowed (7 + 10); 900 + 1650 * 0.4 = 1560 -> event
 *   22 s: restart, G = 1650
 *   27 s: 750 + 1650 * 0.5 = 1575 -> event
 *   up to 30 s: events at 7, 17, 27 s
 * B) 5% stall: first window reaches 500 at 10 s; restarts every 11 s with
 *    G = 550; k s into a window: 50k + 550 * (10 - k)/10 = 550 - 5k < 1000:
 *    no event in 60 s.
 * C) interpolation: 0 s total 0, 10.5 s total 1 s (restart, G = 1 s),
 *    13 s (f = 0.25) total 1.2 s: 200 + 1000 * 0.75 = 950 ms.
 * D) gap bound at 20 s: 20 s total 1 s -> 1 s, event; 20.000001 s -> ~500 ms,
 *    none. */
static void test_window_10s(void)
{
	static const uint64_t want[] = { SEC(7), SEC(17), SEC(27) };
	struct sample s[64];
	struct psi_mon m;
	struct events ev;
	size_t n;

	n = steady(s, N_ELEMS(s), 0, SEC(30), SEC(1), 0, MS(150));
	psi_mon_init(&m, SEC(1), SEC(10));
	replay(&m, s, n, &ev);
	CHECK_EVENTS(&ev, want);

	n = steady(s, N_ELEMS(s), 0, SEC(60), SEC(1), SEC(1), MS(50));
	psi_mon_init(&m, SEC(1), SEC(10));
	replay(&m, s, n, &ev);
	CHECK_NO_EVENTS(&ev);

	psi_mon_init(&m, SEC(1), SEC(10));
	FEED(&m, 0, 0, false, false);
	FEED(&m, MS(10500), SEC(1), true, true); /* 1 s over 10.5 s: not a gap, 1 s >= 1 s */
	GROWTH_IS(&m, SEC(13), MS(1200), MS(950));

	psi_mon_init(&m, SEC(1), SEC(10));
	FEED(&m, 0, 0, false, false);
	FEED(&m, SEC(20), SEC(1), true, true);
	psi_mon_init(&m, SEC(1), SEC(10));
	FEED(&m, 0, 0, false, false);
	FEED(&m, SEC(20) + 1, SEC(1), false, true);
}

/* The Documentation's example trigger "some 15% 1000000" (150 ms per 1 s)
 * is the wrong way round for this test; use "some 100ms 1s" (thr 100 ms,
 * win 1 s) sampled every 100 ms (win / 10), for 10 s:
 * A) 15% steady stall (15 ms per sample): first event at 0.7 s (105 ms),
 *    then, as in test_rate_limit, one event as soon as a window has passed:
 *    growth at any point is ~150 ms >= 100. Expected: 9..10 events (10:
 *    0.7, 1.7, ..., 9.7 s), spaced by at least 1 s (one per window) and at
 *    most 1.1 s (the first sample once the rate limit allows).
 * B) 5% steady stall (5 ms per sample): at most 50 ms in the first window,
 *    then G = 55 and growth 5k + 55 * (1 - k/10) <= 55 < 100: no event.
 * Sampling starts an hour after boot with an arbitrary base total. */
static void test_realistic_15_vs_5(void)
{
	const uint64_t t0 = SEC(3600), base = UINT64_C(123456789);
	static struct sample s[128];
	struct psi_mon m;
	struct events ev;
	size_t n, i;

	n = steady(s, N_ELEMS(s), t0, t0 + SEC(10), MS(100), base, MS(15));
	CU_ASSERT_EQUAL_FATAL(n, 101);
	psi_mon_init(&m, MS(100), SEC(1));
	replay(&m, s, n, &ev);
	if (ev.n < 9 || ev.n > 10)
		print_times("events (us)", ev.t_us, ev.n);
	CU_ASSERT(ev.n >= 9 && ev.n <= 10);
	CU_ASSERT(ev.n == 0 || ev.t_us[0] <= t0 + MS(1000));
	for (i = 1; i < ev.n && i < MAX_EVENTS; i++) {
		CU_ASSERT(ev.t_us[i] - ev.t_us[i - 1] >= SEC(1));
		CU_ASSERT(ev.t_us[i] - ev.t_us[i - 1] <= MS(1100));
	}

	n = steady(s, N_ELEMS(s), t0, t0 + SEC(10), MS(100), base, MS(5));
	psi_mon_init(&m, MS(100), SEC(1));
	replay(&m, s, n, &ev);
	CHECK_NO_EVENTS(&ev);
}

/* A trigger without a window (a tier with only low_available has stall 0 and
 * window 0) has nothing to measure: it never fires, whatever it is fed, and
 * its arithmetic never divides by the zero window -- not even for two
 * samples at the same time (elapsed 0), which used to be 0 * 0 / 0 and
 * SIGFPE. It still reports new stall, so a poller can follow it. */
static void test_zero_window_inert(void)
{
	struct psi_mon m;

	psi_mon_init(&m, 0, 0);
	FEED(&m, MS(100), 100, false, false);
	FEED(&m, MS(100), 200, false, true);
	FEED(&m, MS(100), 300, false, true);
	FEED(&m, MS(200), 300, false, false);
	FEED(&m, SEC(5), SEC(5), false, true);
	GROWTH_IS(&m, SEC(5), SEC(6), 0);
	GROWTH_IS(&m, SEC(6), SEC(6), 0);
}

/* Two samples at the same time (a coarse clock, a trace with a repeated
 * timestamp) with a real window: elapsed 0 means no part of the previous
 * window has slid out yet, so all of its growth still counts; the new
 * growth counts in full. win 1 s, thr 100 ms:
 *   0.0 s: total 0 (primes)
 *   1.1 s: +60 ms  -> restart (elapsed 1.1 s > 1 s), G = 60 ms, no event
 *   1.1 s: +50 ms  -> same time, elapsed 0: 50 + 60 * (1 - 0) = 110 -> event
 *   1.1 s: +50 ms  -> growth 160, but the rate limit holds it back */
static void test_equal_timestamps(void)
{
	struct psi_mon m;

	psi_mon_init(&m, MS(100), SEC(1));
	FEED(&m, 0, 0, false, false);
	FEED(&m, MS(1100), MS(60), false, true);
	GROWTH_IS(&m, MS(1100), MS(110), MS(110));
	FEED(&m, MS(1100), MS(110), true, true);
	FEED(&m, MS(1100), MS(160), false, true);
	GROWTH_IS(&m, MS(1100), MS(160), MS(160));
}

/* ---- the poller -------------------------------------------------------- */

/* "While system is in the stall state psi signal growth is monitored at a
 * rate of 10 times per tracking window ... min monitoring update interval is
 * 50ms and max is 1s." */
static void test_poller_period(void)
{
	struct psi_poller p;

	psi_poller_init(&p, MS(500));
	CU_ASSERT_EQUAL(p.period_us, MS(50));
	CU_ASSERT_FALSE(p.active);
	psi_poller_init(&p, SEC(1));
	CU_ASSERT_EQUAL(p.period_us, MS(100));
	psi_poller_init(&p, SEC(10));
	CU_ASSERT_EQUAL(p.period_us, SEC(1));
	CU_ASSERT_FALSE(p.active);
	/* not started: a sample without stall does not start polling */
	CU_ASSERT_FALSE(psi_poller_after_sample(&p, SEC(5), false));
	CU_ASSERT_FALSE(p.active);
}

/* poll_triggers(): on activation polling_until = now + min window; new stall
 * sets polling_until = now + min window; "if (now >= group->polling_until)"
 * polling stops. min window 1 s:
 *   start at 10 s      -> until 11 s
 *   10.1 s, new stall  -> until 11.1 s, polling
 *   10.2 .. 11.0 s     -> no stall, still polling (11.0 < 11.1)
 *   11.1 s, no stall   -> now >= until: stops
 * Started again at 20 s (until 21 s), no stall: 20.5 s polling, a late
 * sample at 21.05 s (after until) stops it. */
static void test_poller_start_extend_stop(void)
{
	struct psi_poller p;
	uint64_t t;

	psi_poller_init(&p, SEC(1));
	psi_poller_start(&p, SEC(10));
	CU_ASSERT_TRUE(p.active);
	CU_ASSERT_EQUAL(p.until_us, SEC(11));
	CU_ASSERT_TRUE(psi_poller_after_sample(&p, MS(10100), true));
	CU_ASSERT_EQUAL(p.until_us, MS(11100));
	for (t = MS(10200); t <= SEC(11); t += MS(100))
		CU_ASSERT_TRUE(psi_poller_after_sample(&p, t, false));
	CU_ASSERT_EQUAL(p.until_us, MS(11100));
	CU_ASSERT_FALSE(psi_poller_after_sample(&p, MS(11100), false));
	CU_ASSERT_FALSE(p.active);
	/* stays off */
	CU_ASSERT_FALSE(psi_poller_after_sample(&p, MS(11200), false));

	psi_poller_start(&p, SEC(20));
	CU_ASSERT_TRUE(p.active);
	CU_ASSERT_EQUAL(p.until_us, SEC(21));
	CU_ASSERT_TRUE(psi_poller_after_sample(&p, MS(20500), false));
	CU_ASSERT_FALSE(psi_poller_after_sample(&p, MS(21050), false));
	CU_ASSERT_FALSE(p.active);

	/* new stall right at the deadline keeps it on for another window */
	psi_poller_start(&p, SEC(30));
	CU_ASSERT_TRUE(psi_poller_after_sample(&p, SEC(31), true));
	CU_ASSERT_EQUAL(p.until_us, SEC(32));
}

/* The kernel initialises polling_until only on the SWITCHING -> POLLING
 * transition; being asked to start while already polling changes nothing:
 *   start 10 s        -> until 11 s
 *   start 10.5 s      -> still 11 s (not extended to 11.5)
 *   stall at 10.6 s   -> until 11.6 s
 *   start 10.9 s      -> still 11.6 s
 *   start 9.0 s       -> still 11.6 s (not shortened to 10.0) */
static void test_poller_start_while_active(void)
{
	struct psi_poller p;

	psi_poller_init(&p, SEC(1));
	psi_poller_start(&p, SEC(10));
	psi_poller_start(&p, MS(10500));
	CU_ASSERT_TRUE(p.active);
	CU_ASSERT_EQUAL(p.until_us, SEC(11));
	CU_ASSERT_TRUE(psi_poller_after_sample(&p, MS(10600), true));
	CU_ASSERT_EQUAL(p.until_us, MS(11600));
	psi_poller_start(&p, MS(10900));
	CU_ASSERT_EQUAL(p.until_us, MS(11600));
	psi_poller_start(&p, SEC(9));
	CU_ASSERT_EQUAL(p.until_us, MS(11600));
	CU_ASSERT_TRUE(p.active);
}

/* A poll loop as lmkd would run it: a coarse signal at 10 s starts polling
 * (the first sample primes the trigger), stall grows 15 ms per 100 ms up to
 * 12.0 s and then stops. win 1 s, thr 100 ms:
 *   10.7 s: 105 ms -> event
 *   11.1 s: restart, G = 165; 11.7 s: 90 + 165 * 0.4 = 156 -> event
 *   12.1 s on: no new stall, ignored -> no event at 12.7 s
 *   the last growth is at 12.0 s, so polling stops at the 13.0 s sample. */
static uint64_t stall_until_12s(uint64_t t)
{
	uint64_t end = t < SEC(12) ? t : SEC(12);

	return SEC(40) + (end - SEC(10)) / MS(100) * MS(15);
}

static void test_poller_with_trigger(void)
{
	static const uint64_t want[] = { MS(10700), MS(11700) };
	struct psi_poller p;
	struct psi_mon m;
	struct events ev = { 0 };
	uint64_t t;
	unsigned samples = 0;

	psi_poller_init(&p, SEC(1));
	psi_mon_init(&m, MS(100), SEC(1));
	psi_poller_start(&p, SEC(10));
	for (t = SEC(10); samples < 1000; t += p.period_us) {
		bool new_stall;

		samples++;
		if (psi_mon_update(&m, t, stall_until_12s(t), &new_stall)) {
			if (ev.n < MAX_EVENTS)
				ev.t_us[ev.n] = t;
			ev.n++;
		}
		if (!psi_poller_after_sample(&p, t, new_stall))
			break;
	}
	CU_ASSERT_EQUAL(t, SEC(13));
	CU_ASSERT_EQUAL(samples, 31); /* 10.0, 10.1, ..., 13.0 s */
	CHECK_EVENTS(&ev, want);
}

int main(void)
{
	static CU_TestInfo mon_tests[] = {
		{ "first sample primes", test_first_sample_primes },
		{ "threshold reached exactly", test_threshold_reached_exactly },
		{ "interpolation", test_interpolation },
		{ "window restarts strictly after", test_window_restart_strictly_after },
		{ "unchanged total ignored", test_unchanged_total_ignored },
		{ "rate limit", test_rate_limit },
		{ "note event", test_note_event },
		{ "counter reset", test_counter_reset },
		{ "gap spread", test_gap_spread },
		{ "burst after short quiet", test_burst_after_short_quiet },
		{ "burst after long quiet", test_burst_after_long_quiet },
		{ "growth does not change state", test_growth_does_not_change_state },
		{ "window 500ms", test_window_500ms },
		{ "window 10s", test_window_10s },
		{ "realistic 15% vs 5%", test_realistic_15_vs_5 },
		{ "zero window is inert", test_zero_window_inert },
		{ "equal timestamps", test_equal_timestamps },
		CU_TEST_INFO_NULL,
	};
	static CU_TestInfo poller_tests[] = {
		{ "period", test_poller_period },
		{ "start extend stop", test_poller_start_extend_stop },
		{ "start while active", test_poller_start_while_active },
		{ "with trigger", test_poller_with_trigger },
		CU_TEST_INFO_NULL,
	};
	static CU_SuiteInfo suites[] = {
		{ "psi-monitor", NULL, NULL, NULL, NULL, mon_tests },
		{ "psi-poller", NULL, NULL, NULL, NULL, poller_tests },
		CU_SUITE_INFO_NULL,
	};

	return cunit_tap_main(suites);
}
