/* SPDX-License-Identifier: MIT */
/* daemon-memory: the daemon's side of available memory -- the low_available
 * tiers' checks with their swap condition and growth term, the idle clock
 * that runs them and takes every watch's safety sample, and the memory
 * cgroup's notifications (usage thresholds, memory.events, and the OOM
 * notification when oom_killer = daemon). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>

#include "brakeio.h"
#include "daemon-private.h"
#include "event.h"
#include "memory.h"

static void oom_poll(struct daemon *d, struct wake *w);
static void brake_check(struct daemon *d, const struct mem_info *mi);

/* ------------------------------------------------------------------ low memory */

/* The swap part of a low-memory log line: "no swap", or the free swap
 * against low_swap. */
static const char *swap_words(char *buf, size_t size, const struct mem_info *mi, uint64_t swap_limit)
{
	if (!mi->swap_total_bytes)
		snprintf(buf, size, "no swap%s", mi->cgroup ? " for this group" : "");
	else
		snprintf(buf, size, "free swap %" PRIu64 " of %" PRIu64 " MiB, %s low_swap (%" PRIu64 " MiB)",
			 mi->swap_free_bytes >> 20, mi->swap_total_bytes >> 20,
			 mi->swap_free_bytes <= swap_limit ? "at or below" : "above", swap_limit >> 20);
	return buf;
}

/* hold_idle's stall evidence: some task stalled on memory at least this
 * share of the time, measured over at least STALL_SPAN_US, STALL_HOT_SPANS
 * spans in a row -- a blip of reclaim as a fill ends (tens of ms) is no
 * emergency; a thrash goes on */
#define STALL_EVIDENCE_PERMILLE 100
#define STALL_SPAN_US ((uint64_t)500 * 1000)
#define STALL_HOT_SPANS 2
/* below the floor, a growth rate is evidence when it would use up the
 * memory still available within this many seconds: a runaway, a leak that
 * matters; not the trickle of a system at rest (0.1 MiB/s measured in the
 * idle3 guest), which the creep rule sees if it goes on */
#define GROWTH_EVIDENCE_HORIZON_S 10
/* ... or the footprint grew this much (and 1 % of the domain) since the hold began */
#define IDLE_GROWTH_MIN_BYTES (4ULL << 20)
/* culprit_growth's samples are taken once the footprint grows fast enough
 * to use up the headroom to a low_available line, or the available memory,
 * within this many seconds */
#define OBSERVE_HORIZON_S 10
/* hold_idle's floor is half the line, but in a small domain at least this
 * far from the edge (or at the line): a memory cgroup's kernel OOM killer
 * struck with 2.6 MiB "available" (2 MiB of it page cache a reader kept
 * in flight, which reclaim cannot take), so a floor of 2.5 MiB -- the
 * Android profile's 2 % line in a 256 MiB group -- was no margin at all
 * (arm64 smoke, 2026-12-06: the kernel's kill in 1 run of 6) */
#define IDLE_FLOOR_MIN_BYTES (8ULL << 20)
/* the floor is set aside this long after a kill by the tier or a kernel
 * OOM kill in its domain (recent_emergency) */
#define RECENT_EMERGENCY_US (30ULL * 1000 * 1000)
/* For this long after the kernel's OOM killer killed in the domain, its
 * victim is still giving memory back (the oom_reaper frees a few hundred
 * MiB in tens of ms) and only growth measured since that kill is evidence:
 * test-fast.sh (host, CI of b85da89) -- a first fill too fast for any
 * check, the kernel's kill, then the last resort 8 ms later on the fill's
 * own jump took stress-ng's 6.6 MiB parent, and memory was back above the
 * line 46 ms after the kernel's kill. The kernel's OOM killer waits the same way: no second
 * victim while the first one still exits. A kill counts so only while memory
 * is short (the idle clock's period under MISS_CHECK_US) and at most once
 * every KERNEL_VICTIM_EVERY_US: system-wide the counter holds every memory
 * cgroup's kills too, and a user who made their own group's OOM killer
 * strike in a loop would otherwise keep the growth evidence empty. */
#define KERNEL_VICTIM_US (200ULL * 1000)
#define KERNEL_VICTIM_EVERY_US (1000ULL * 1000)

/* The share of time (permille) some task stalled on memory lately, from
 * the main watch's pressure file; read at most every STALL_SPAN_US, as a
 * read of the file delays unprivileged kernel triggers. -1: unknown. */
static int stall_permille(struct daemon *d)
{
	struct psi_stats st;
	uint64_t now = event_now_us();

	if (!d->watch_armed || d->watch.read_fd < 0)
		return -1;
	if (d->stall.known && now - d->stall.t_us < STALL_SPAN_US)
		return (int)d->stall.permille;
	d->stall.known = false;
	if (watch_read_totals(d->watch.read_fd, &st) < 0)
		return -1;
	/* a share over a long quiet stretch says nothing about now: a
	 * reading older than four spans is only a new base */
	if (d->stall.t_us && now > d->stall.t_us && now - d->stall.t_us <= 4 * STALL_SPAN_US &&
	    st.some.total_us >= d->stall.total_us) {
		uint64_t pm = (st.some.total_us - d->stall.total_us) * 1000 / (now - d->stall.t_us);

		d->stall.permille = pm > 1000 ? 1000 : (unsigned)pm;
		d->stall.known = true;
		d->stall.hot = d->stall.permille >= STALL_EVIDENCE_PERMILLE ? d->stall.hot + 1 : 0;
	} else {
		d->stall.hot = 0;
	}
	d->stall.t_us = now;
	d->stall.total_us = st.some.total_us;
	return d->stall.known ? (int)d->stall.permille : -1;
}

/* Stall as hold_idle's evidence: a share of STALL_EVIDENCE_PERMILLE, for
 * STALL_HOT_SPANS spans in a row. *pm gets the share (-1: unknown). */
static bool stall_evidence(struct daemon *d, int *pm)
{
	*pm = stall_permille(d);
	return *pm >= STALL_EVIDENCE_PERMILLE && d->stall.hot >= STALL_HOT_SPANS;
}

/* A growth rate that would use up what is available within
 * GROWTH_EVIDENCE_HORIZON_S, and growth still going on at this check at
 * half that rate or more: the rate spans the last second, so for a while
 * after a fill stopped it still says the fill's speed, and the footprint
 * moves a few hundred kB at each check as compaction migrates pages --
 * idle3 after runaways (2026-12-05): a fill at 216 MiB/s stopped, then
 * MemAvailable fell 26 MiB in 1.3 s with nothing growing (the kernel's
 * compaction held the free pages), and 0.4 s after the stop the rate still
 * said 3.4 MiB/s while the footprint rose 0.2 MiB: that was no runaway. */
static bool growth_evidence(const struct daemon *d, const struct mem_info *mi, uint64_t growth)
{
	return growth && memory_growth_now(&d->mem_growth, growth / 2) &&
	       memory_time_to_limit_us(mi->available_bytes, 0, growth) < (uint64_t)GROWTH_EVIDENCE_HORIZON_S * 1000000ULL;
}

/* hold_idle's creep baseline: the least footprint since the tier was
 * first held back for want of evidence (below the floor, where there is
 * one: what grew above it was watched, not counted), and the largest rise
 * between two checks since then. restart: start it at this check. */
static void idle_baseline(struct tier_state *ts, const struct mem_info *mi, bool restart)
{
	uint64_t now = mi->footprint_bytes;

	if (restart || ts->mem_state != MEM_STATE_IDLE_HELD || now < ts->idle_footprint) {
		ts->idle_footprint = now;
		ts->idle_jump = 0;
	} else if (now > ts->idle_last && now - ts->idle_last > ts->idle_jump) {
		ts->idle_jump = now - ts->idle_last;
	}
	ts->idle_last = now;
}

/* The creep since the hold began, less its largest step: memory allocated
 * at once between two checks and then left alone (a buffer pool filled at
 * GB/s) is no creep; what grows after it is. */
static uint64_t idle_creep(const struct tier_state *ts, const struct mem_info *mi)
{
	uint64_t rise = mi->footprint_bytes - ts->idle_footprint;

	return rise > ts->idle_jump ? rise - ts->idle_jump : 0;
}

/* hold_idle's floor for the line limit: half of it, at least
 * IDLE_FLOOR_MIN_BYTES (at most the line) */
static uint64_t idle_floor(uint64_t limit)
{
	uint64_t half = limit / 2, least = limit < IDLE_FLOOR_MIN_BYTES ? limit : IDLE_FLOOR_MIN_BYTES;

	return half > least ? half : least;
}

/* hold_idle's growth step: 1 % of the domain, at least IDLE_GROWTH_MIN_BYTES */
static uint64_t idle_step(const struct mem_info *mi)
{
	return mi->total_bytes / 100 > IDLE_GROWTH_MIN_BYTES ? mi->total_bytes / 100 : IDLE_GROWTH_MIN_BYTES;
}

/* hold_idle, below the floor with no sustained growth rate -- is there
 * evidence all the same? Growth going on now (a worker restarted after a
 * kill, a runaway that resumed: seen at the second check that rises, where
 * the rate takes a window), growth since the hold began (a slow creep, one
 * step of it set aside), or tasks stalling.
 * *pm gets the stall share (-1: unknown). */
static bool idle_evidence(struct daemon *d, struct tier_state *ts, const struct mem_info *mi, int *pm)
{
	uint64_t step = idle_step(mi);

	*pm = -1;
	idle_baseline(ts, mi, false);
	if (mi->anon_known &&
	    (memory_growth_rising(&d->mem_growth, step) || idle_creep(ts, mi) >= step))
		return true;
	return stall_evidence(d, pm);
}

/* hold_idle's judgement near the line, for a kill tier whose swap is low
 * while the kernel's OOM killer is in charge. Growth is evidence only
 * below the floor (idle_floor): a fill that crosses
 * the line may still stop short of the edge (a buffer pool sized to leave
 * 3 %), and until it has gone that deep it cannot be told from a runaway
 * -- so it is watched (culprit samples, the 50 ms clock), not killed.
 * Between the floor and the line (or about to cross it) only tasks
 * stalling on memory fire the tier: reclaim that hurts is harm whatever
 * grows. Below the floor (ts->floor_since_us) growth fires it too.
 * MEM_STATE_*; *pm the stall share read. */
static int patient_state(struct daemon *d, struct tier_state *ts, const struct mem_info *mi, uint64_t growth, int *pm)
{
	*pm = -1;
	if (ts->floor_since_us) { /* below the floor, so below the line */
		/* the first check below the floor cannot tell a fill that
		 * ends there from a runaway: growth counts from the next tick
		 * of the idle clock on, not at a check the kernel woke a few
		 * ms later (a memory cgroup's threshold); stall at once */
		if (event_now_us() - ts->floor_since_us < WATCH_IDLE_MIN_US) {
			idle_baseline(ts, mi, false);
			return stall_evidence(d, pm) ? MEM_STATE_LOW : MEM_STATE_IDLE_HELD;
		}
		return growth_evidence(d, mi, growth) || idle_evidence(d, ts, mi, pm) ? MEM_STATE_LOW : MEM_STATE_IDLE_HELD;
	}
	idle_baseline(ts, mi, true);
	if (stall_evidence(d, pm))
		return MEM_STATE_LOW;
	return growth ? MEM_STATE_FALL_HELD : MEM_STATE_IDLE_HELD;
}

/* A domain that ran out of memory lately -- this tier killed, or the
 * kernel's OOM killer did -- is no place for patience: growth toward the
 * line is that emergency again (a worker restarted after its kill refills
 * the group in well under a second, faster than the floor can be seen
 * coming), and fires the tier at the line as without the floor. */
static bool recent_emergency(const struct daemon *d, size_t i)
{
	uint64_t now = event_now_us(), kill = d->tiers[i].last_kill_us, oom = d->oomk.seen_us;

	return (kill && now - kill < RECENT_EMERGENCY_US) || (oom && now - oom < RECENT_EMERGENCY_US);
}

/* The kernel's OOM killer killed in the domain moments ago (KERNEL_VICTIM_US). */
static bool kernel_victim_exiting(const struct daemon *d)
{
	return d->oomk.victim_us && event_now_us() - d->oomk.victim_us < KERNEL_VICTIM_US;
}

/* The state a tier's low_available check finds: MEM_STATE_OK (above the
 * line and not about to cross it), SWAP_HELD (swap has room), LOW (fire),
 * IDLE_HELD or FALL_HELD (hold_idle: no evidence). oom_killer = daemon:
 * the kernel tells when the group is out of memory, so the estimate (which
 * file thrash can push below the line while the kernel still reclaims)
 * fires only while the footprint grows. */
static int memory_state(struct daemon *d, size_t i, const struct mem_info *mi, uint64_t limit, uint64_t growth,
			bool soon, int *pm)
{
	const struct tier_config *t = &d->cfg.tiers[i];
	bool below = mi->available_bytes < limit, swap_low = memory_swap_low(mi, &t->low_swap, &(uint64_t){ 0 });
	struct tier_state *ts = &d->tiers[i];

	*pm = -1;
	if (mi->available_bytes >= idle_floor(limit))
		ts->floor_since_us = 0;
	else if (!ts->floor_since_us)
		ts->floor_since_us = event_now_us();
	if (!below && !soon)
		return MEM_STATE_OK;
	if (!swap_low)
		return MEM_STATE_SWAP_HELD;
	if (d->memev.oom_taken)
		return below && !growth ? MEM_STATE_IDLE_HELD : MEM_STATE_LOW;
	if (!t->hold_idle || t->warn)
		return MEM_STATE_LOW;
	/* there a jump of the footprint at this check is a worker restarted
	 * after its kill refilling memory: evidence at once, not a check later */
	if (recent_emergency(d, i)) {
		bool grew = growth || (mi->anon_known && memory_growth_jumped(&d->mem_growth, idle_step(mi)));

		/* (the growth samples start at the kernel's kill: see daemon_count_misses) */
		if (kernel_victim_exiting(d))
			return below && !grew ? MEM_STATE_IDLE_HELD : MEM_STATE_LOW;
		return below && !grew && !idle_evidence(d, &d->tiers[i], mi, pm) ? MEM_STATE_IDLE_HELD : MEM_STATE_LOW;
	}
	return patient_state(d, &d->tiers[i], mi, growth, pm);
}

/* "does not grow", or "grows only R MiB/s" (below what is evidence). */
static const char *growth_words(char *buf, size_t size, uint64_t growth)
{
	if (!growth)
		return "does not grow";
	snprintf(buf, size, "grows only %.2f MiB/s", growth / 1048576.0);
	return buf;
}

/* The line a tier's check logs when its state changes to state (the
 * hold-backs at most every KILLER_IDLE_LOG_INTERVAL_US). */
static void log_memory_state(struct daemon *d, size_t i, const struct mem_info *mi, uint64_t limit, uint64_t growth,
			     int state, int pm)
{
	const struct tier_config *t = &d->cfg.tiers[i];
	struct tier_state *ts = &d->tiers[i];
	bool below = mi->available_bytes < limit;
	uint64_t swap_limit, ttl, now = event_now_us();
	char a[32], sw[128], st[64] = "", gw[48];

	if (state == ts->mem_state)
		return;
	(void)memory_swap_low(mi, &t->low_swap, &swap_limit);
	config_format_amount(a, sizeof(a), &t->low_available);
	swap_words(sw, sizeof(sw), mi, swap_limit);
	if (pm >= 0)
		snprintf(st, sizeof(st), state == MEM_STATE_FALL_HELD ? " (%.1f %%)" : " and tasks stall %.1f %% of the time",
			 pm / 10.0);
	if (state == MEM_STATE_OK) {
		if (ts->mem_state == MEM_STATE_LOW)
			log_info(&d->log, "tier %s: available memory %" PRIu64 " MiB is above low_available again", t->name,
				 mi->available_bytes >> 20);
		return;
	}
	if (state == MEM_STATE_LOW) {
		if (!below && memory_growth_low(mi->available_bytes, limit, growth, &ttl))
			log_info(&d->log, "tier %s: available memory %.1f MiB will fall below low_available %s (%.1f MiB) in "
				 "%" PRIu64 " ms at the rate memory grows (%.1f MiB/s; horizon %llu ms)%s, %s: firing", t->name,
				 mi->available_bytes / 1048576.0, a, limit / 1048576.0, ttl / 1000, growth / 1048576.0,
				 MEMORY_GROWTH_HORIZON_US / 1000, st, sw);
		else
			log_info(&d->log, "tier %s: available memory %" PRIu64 " MiB is below low_available %s (%" PRIu64
				 " MiB; memory grows %.1f MiB/s)%s, %s: firing", t->name, mi->available_bytes >> 20, a,
				 limit >> 20, growth / 1048576.0, st, sw);
		return;
	}
	if (ts->mem_log_us[state] && now - ts->mem_log_us[state] < KILLER_IDLE_LOG_INTERVAL_US)
		return;
	ts->mem_log_us[state] = now;
	if (state == MEM_STATE_SWAP_HELD)
		log_info(&d->log, "tier %s: available memory %" PRIu64 " MiB is %s low_available %s (%" PRIu64
			 " MiB), but %s: not firing while the kernel can still swap", t->name, mi->available_bytes >> 20,
			 below ? "below" : "about to fall below", a, limit >> 20, sw);
	else if (state == MEM_STATE_FALL_HELD)
		log_info(&d->log, "tier %s: available memory %" PRIu64 " MiB is %s low_available %s (%" PRIu64
			 " MiB) and memory grows %.1f MiB/s, but tasks stall less than %d %% of the time%s: not firing "
			 "unless it falls below the floor (%.1f MiB) still growing, or tasks stall (hold_idle)",
			 t->name, mi->available_bytes >> 20, below ? "below" : "about to fall below", a, limit >> 20,
			 growth / 1048576.0, STALL_EVIDENCE_PERMILLE / 10, pm >= 0 ? st : "", idle_floor(limit) / 1048576.0);
	else if (d->memev.oom_taken)
		log_info(&d->log, "tier %s: available memory %" PRIu64 " MiB is below low_available %s (%" PRIu64
			 " MiB), but memory does not grow and the group's OOM killer is psi-lmkd's: not firing until it "
			 "grows or the group is out of memory", t->name, mi->available_bytes >> 20, a, limit >> 20);
	else
		log_info(&d->log, "tier %s: available memory %" PRIu64 " MiB is below low_available %s (%" PRIu64
			 " MiB), but memory %s%s: no evidence of an emergency, not firing until memory grows "
			 "or tasks stall (hold_idle)", t->name, mi->available_bytes >> 20, a, limit >> 20,
			 growth_words(gw, sizeof(gw), growth), st);
}

/* One tier's low_available check: fires it when available memory is below
 * low_available -- or, being less than twice that, will be below it within
 * MEMORY_GROWTH_HORIZON_US at the rate the memory footprint grows (growth,
 * in bytes/s; 0: none; memory_growth_low) -- and the swap is (nearly) full
 * too, or there is none. While swap has room the kernel can still relieve
 * memory by swapping (and if that thrashes, PSI tiers see the stall): held
 * back, counted, logged. Low memory alone is no emergency either: a process
 * that filled memory once and idles (a buffer pool, a VM's guest memory)
 * harms nobody, so with hold_idle the tier fires only on evidence
 * (patient_state); the idle clock ticks every 50 ms this close to the
 * edge, so growth that goes on is seen within two or three ticks. */
static void check_tier_memory(struct daemon *d, size_t i, const struct mem_info *mi, uint64_t growth,
			      struct wake *w)
{
	struct tier_state *ts = &d->tiers[i];
	uint64_t limit = memory_amount_bytes(&d->cfg.tiers[i].low_available, mi->total_bytes), ttl;
	bool soon = mi->available_bytes >= limit && memory_growth_low(mi->available_bytes, limit, growth, &ttl);
	int pm, state = memory_state(d, i, mi, limit, growth, soon, &pm);

	ts->mem_checks++;
	log_memory_state(d, i, mi, limit, growth, state, pm);
	if (state == MEM_STATE_LOW) {
		if (soon)
			ts->mem_growth++;
		daemon_tier_fired(d, i, FIRE_LOW_MEMORY, w);
	} else if (state == MEM_STATE_SWAP_HELD)
		ts->swap_held++;
	else if (state == MEM_STATE_IDLE_HELD || state == MEM_STATE_FALL_HELD)
		ts->idle_held++;
	ts->mem_state = state;
}

/* Tiers with low_available fire when available memory falls below it, or
 * the memory footprint grows fast enough to take it there within
 * MEMORY_GROWTH_HORIZON_US (and swap is nearly full, see check_tier_memory).
 * The check runs on the idle clock, whose period shrinks with the headroom
 * returned here -- available memory above the highest threshold plus free
 * swap above low_swap, the smallest over the tiers (watch_idle_period_us) --
 * so it is rare while memory is plentiful, and every 50 ms near the edge,
 * where the growth history (d->mem_growth) gets enough samples for a rate.
 * Without low_available tiers it only reads the headroom (available memory)
 * for the clock. UINT64_MAX: unknown. */
static uint64_t check_memory(struct daemon *d, struct wake *w)
{
	uint64_t headroom = UINT64_MAX, growth, near;
	struct mem_info mi;
	size_t i;
	int r;

	r = memory_read(d->rootfd, d->memory_cgroup, &mi);
	if (r < 0 && !d->has_low_memory_tiers)
		return UINT64_MAX;
	if (r < 0) {
		if (r != d->mem_read_err)
			log_warn(&d->log, "cannot read available memory%s%s: %s; low_available tiers wait for it", *d->memory_cgroup
				 ? " of " : "", d->memory_cgroup, strerror(-r));
		d->mem_read_err = r;
		memory_growth_reset(&d->mem_growth);
		return UINT64_MAX;
	}
	if (!d->has_low_memory_tiers)
		return mi.available_bytes;
	if (d->mem_read_err)
		log_notice(&d->log, "available memory can be read again");
	d->mem_read_err = 0;
	if (mi.anon_known)
		memory_growth_add(&d->mem_growth, event_now_us(), mi.footprint_bytes);
	else
		memory_growth_reset(&d->mem_growth);
	growth = memory_growth_rate(&d->mem_growth);
	brake_check(d, &mi);
	/* a group thrashing on its page cache sits at its limit and wakes a
	 * check every few ms: the debug line at most every MEM_DEBUG_LOG_US */
	if (event_now_us() - d->mem_debug_us >= MEM_DEBUG_LOG_US) {
		d->mem_debug_us = event_now_us();
		log_debug(&d->log, "memory check: available %.1f of %.1f MiB, footprint %.1f MiB%s, growing %.1f MiB/s",
			  mi.available_bytes / 1048576.0, mi.total_bytes / 1048576.0, mi.footprint_bytes / 1048576.0,
			  mi.anon_known ? "" : " (unknown)", growth / 1048576.0);
	}
	for (i = 0; i < d->cfg.n_tiers; i++) {
		const struct tier_config *t = &d->cfg.tiers[i];
		uint64_t limit, swap_limit, swap_room, room;

		if (!t->low_available.set)
			continue;
		limit = memory_amount_bytes(&t->low_available, mi.total_bytes);
		(void)memory_swap_low(&mi, &t->low_swap, &swap_limit);
		swap_room = mi.swap_total_bytes && mi.swap_free_bytes > swap_limit ? mi.swap_free_bytes - swap_limit : 0;
		room = mi.available_bytes + swap_room > limit ? mi.available_bytes + swap_room - limit : 0;
		if (room < headroom)
			headroom = room;
		check_tier_memory(d, i, &mi, growth, w);
	}
	/* within a tenth of the domain of a line, or less than a tenth of it
	 * available (swap may still have room), or growing fast enough to use
	 * up the headroom or the available memory within OBSERVE_HORIZON_S (a
	 * fill that crosses the last tenth between two checks leaves no
	 * sample before its kill otherwise; and with swap the PSI tiers fire
	 * as RAM runs out, swap or no swap -- a base sample 1.5 s old there
	 * showed a runaway slowed by the swap disk growing less than a
	 * culprit's line, and badness killed a renderer first): who grows is
	 * worth knowing before a tier fires */
	near = headroom < mi.available_bytes ? headroom : mi.available_bytes;
	if (headroom < mi.total_bytes / 10 || mi.available_bytes < mi.total_bytes / 10 ||
	    (growth && near / growth < OBSERVE_HORIZON_S))
		w->observe = true;
	return headroom;
}

/* The longest period of the idle clock the watches allow (watch.h), and
 * the OOM hand-over while it is active (its re-checks and bound):
 * UINT64_MAX if nothing needs the clock. */
static uint64_t idle_clock_limit(const struct daemon *d)
{
	uint64_t main = d->watch_armed ? watch_idle_limit_us(&d->watch) : UINT64_MAX, groups = daemon_groups_idle_limit(d);
	uint64_t limit = main < groups ? main : groups;

	return oomhand_active(&d->oomh) && limit > OOMHAND_TICK_US ? OOMHAND_TICK_US : limit;
}

/* The idle clock's period for a headroom (check_memory), 0 when nothing
 * needs it (privileged kernel triggers only, no low_available: an idle
 * daemon then never wakes). */
static uint64_t idle_clock_period(const struct daemon *d, uint64_t headroom)
{
	uint64_t p = watch_idle_period_us(headroom), limit = idle_clock_limit(d);

	if (!d->has_low_memory_tiers && limit == UINT64_MAX)
		return 0;
	return p < limit ? p : limit;
}

static void idle_clock_arm(struct daemon *d, uint64_t headroom)
{
	d->idle_period_us = idle_clock_period(d, headroom);
	event_timer_arm(d->memtimerfd, d->idle_period_us);
}

/* A tick of the idle clock: the low_available check, then the safety
 * sample of every watch that is due -- all in this one wakeup. */
/* misses are looked for at most this often, on wakeups the daemon has anyway */
#define MISS_CHECK_US ((uint64_t)1000 * 1000)

void daemon_count_misses(struct daemon *d, bool now)
{
	uint64_t count, t = event_now_us(), every = MISS_CHECK_US;

	/* while memory is short the clock ticks every few tens of ms: a
	 * kernel's kill is then seen at the next tick, before a decision */
	if (d->idle_period_us && d->idle_period_us < every)
		every = d->idle_period_us / 2;
	if (!now && d->oomk.known && t - d->oomk.read_us < every)
		return;
	d->oomk.read_us = t;
	if (memevent_read_oom_kills(d->rootfd, d->memory_cgroup, &count) < 0) {
		d->oomk.known = false;
		return;
	}
	if (d->oomk.known && count > d->oomk.base) {
		d->oomk.missed += count - d->oomk.base;
		d->oomk.seen_us = t;
		/* what grew before the kill was the victim's doing, and the
		 * victim is gone: growth is measured afresh from here */
		if (d->idle_period_us && d->idle_period_us < MISS_CHECK_US &&
		    (!d->oomk.victim_us || t - d->oomk.victim_us >= KERNEL_VICTIM_EVERY_US)) {
			d->oomk.victim_us = t;
			memory_growth_reset(&d->mem_growth);
		}
		log_warn(&d->log, "the kernel's OOM killer killed %" PRIu64 " process%s %s%s: psi-lmkd did not act in time "
			 "(%" PRIu64 " such kills since psi-lmkd started)", count - d->oomk.base,
			 count - d->oomk.base == 1 ? "" : "es", *d->memory_cgroup ? "in the memory cgroup " : "system-wide",
			 d->memory_cgroup, d->oomk.missed);
	}
	d->oomk.base = count; /* a group made anew counts from 0 again */
	d->oomk.known = true;
}

void daemon_idle_tick(struct daemon *d, struct wake *w)
{
	uint64_t headroom;

	daemon_count_misses(d, false);
	oom_poll(d, w);
	headroom = check_memory(d, w);

	if (d->watch_armed && watch_idle_due(&d->watch, event_now_us(), d->idle_period_us))
		d->up.sample(d, w);
	daemon_groups_idle_tick(d, event_now_us(), d->idle_period_us);
	idle_clock_arm(d, headroom);
}

void daemon_idle_clock_update(struct daemon *d)
{
	uint64_t limit = idle_clock_limit(d);

	if (limit != UINT64_MAX && (d->idle_period_us == 0 || limit < d->idle_period_us)) {
		d->idle_period_us = limit;
		event_timer_arm(d->memtimerfd, limit);
	}
}


/* ------------------------------------------------------------------ the memory cgroup's notifications */

/* The largest low_available in bytes of a domain of total bytes. */
static uint64_t largest_low_available(const struct config *c, uint64_t total)
{
	uint64_t low = 0, a;
	size_t i;

	for (i = 0; i < c->n_tiers; i++) {
		if (!c->tiers[i].low_available.set)
			continue;
		a = memory_amount_bytes(&c->tiers[i].low_available, total);
		low = a > low ? a : low;
	}
	return low;
}

/* The wake-up of the memory cgroup: usage at its limit less twice, once and
 * half the largest low_available (the growth term, memory.h, the plain rule,
 * and on), so the check runs when the group fills, not up to 50 ms later. */
static void open_memory_wake(struct daemon *d, const struct mem_info *mi)
{
	uint64_t margin = largest_low_available(&d->cfg, mi->total_bytes), at[3];
	int r;

	margin = margin > mi->total_bytes / 2 ? mi->total_bytes / 2 : margin;
	/* where the growth term may fire, where the plain rule does, and halfway on */
	at[0] = mi->total_bytes - 2 * margin;
	at[1] = mi->total_bytes - margin;
	at[2] = mi->total_bytes - margin / 2;
	r = memevent_open_wake(&d->memev, d->rootfd, d->memory_cgroup, at, 3);
	if (r == 0)
		/* a kernfs file always polls readable: only EPOLLPRI tells a change */
		r = event_add(d->epfd, d->memev.wake_fd, d->memev.v2 ? EPOLLPRI : EPOLLIN, TAG(TAG_MEMWAKE, 0));
	if (r < 0) {
		log_warn(&d->log, "cannot watch the memory cgroup %s for its kernel notifications (%s); low_available is "
			 "checked on the timer alone", d->memory_cgroup, strerror(-r));
		return;
	}
	log_info(&d->log, "memory cgroup %s: woken by the kernel %s", d->memory_cgroup,
		 d->memev.v2 ? "whenever memory.events changes" : "when its usage nears its limit (2, 1 and 1/2 low_available from it)");
}

/* oom_killer = daemon: the OOM decisions of the memory cgroup (v1) are the
 * daemon's while it runs (memevent.h); not in a dry run, which must not
 * change what the kernel does. */
static void take_memory_oom(struct daemon *d)
{
	int r, adopted;

	if (daemon_dry_run(d) || !*d->memory_cgroup || !d->has_low_memory_tiers) {
		log_warn(&d->log, "oom_killer = daemon: %s; the kernel keeps the OOM decisions",
			 daemon_dry_run(d) ? "a dry run changes nothing" : !*d->memory_cgroup ? "no memory cgroup is watched "
			 "(system-wide OOM cannot be taken from the kernel)" : "no tier has low_available");
		return;
	}
	r = adopted = memevent_take_oom(&d->memev, d->rootfd, d->memory_cgroup);
	if (r >= 0)
		r = event_add(d->epfd, d->memev.oom_fd, EPOLLIN, TAG(TAG_MEMOOM, 0));
	if (r < 0) {
		(void)memevent_release(&d->memev, d->rootfd);
		log_warn(&d->log, "oom_killer = daemon: cannot take the OOM decisions of %s (%s); the kernel keeps them",
			 d->memory_cgroup, r == -EOPNOTSUPP ? "cgroup v2 has no memory.oom_control" : strerror(-r));
		return;
	}
	log_notice(&d->log, "memory cgroup %s: the kernel's OOM killer is off (memory.oom_control%s); psi-lmkd kills "
		   "on its OOM notification and turns it back on when it stops", d->memory_cgroup,
		   adopted == 1 ? ": it was off already, left so by a psi-lmkd that did not stop cleanly or by someone "
		   "else" : "");
}

/* How long the group may stay out of memory without progress before the
 * kernel gets it back: the longest a kill may take (SIGTERM's grace, then
 * kill_timeout after SIGKILL), and a second. */
static uint64_t oom_bound_us(const struct config *c)
{
	uint64_t term = 0;
	size_t i;

	for (i = 0; i < c->n_tiers; i++)
		if (c->tiers[i].low_available.set && c->tiers[i].term_timeout_us > term)
			term = c->tiers[i].term_timeout_us;
	return c->kill_timeout_us + term + OOMHAND_SLACK_US;
}

/* ------------------------------------------------------------------ the memory.high brake */

/* memory_high_brake: memory.high a margin below memory.max of the cgroup2
 * memory cgroup, while the daemon runs (brake.h); not in a dry run, which
 * must not change what the kernel does. */
static void brake_apply(struct daemon *d)
{
	struct brakeio_result res;
	uint64_t max, low, margin;
	char a[32], b[24], c[24];
	int r;

	d->brake = (struct brake){ .state = BRAKE_OFF };
	if (daemon_dry_run(d) || !*d->memory_cgroup || !d->has_low_memory_tiers) {
		log_warn(&d->log, "memory_high_brake: %s; no brake", daemon_dry_run(d) ? "a dry run changes nothing"
			 : !*d->memory_cgroup ? "no memory cgroup is watched" : "no tier has low_available");
		return;
	}
	r = memory_read_value(d->rootfd, d->memory_cgroup, "memory.max", true, &max);
	if (r == 0 && max == UINT64_MAX)
		r = -ENODATA;
	if (r < 0) {
		log_warn(&d->log, "memory_high_brake: %s has no memory.max to brake below (%s); no brake", d->memory_cgroup,
			 r == -ENOENT ? "not a cgroup2 memory cgroup" : strerror(-r));
		return;
	}
	low = largest_low_available(&d->cfg, max);
	margin = brake_margin(d->cfg.brake_margin.value ? memory_amount_bytes(&d->cfg.brake_margin, max) : 0, low);
	r = brakeio_apply(d->rootfd, d->memory_cgroup, margin, &res);
	if (r < 0) {
		log_warn(&d->log, "memory_high_brake: cannot brake %s (%s); no brake", d->memory_cgroup,
			 r == -EOPNOTSUPP ? "no user xattrs on this cgroupfs to keep memory.high's value in (Linux < 5.7)"
			 : strerror(-r));
		return;
	}
	if (res.target == 1) {
		log_notice(&d->log, "memory_high_brake: memory.high of %s is %s, at or below %.1f MiB under memory.max "
			   "already; left as it is", d->memory_cgroup, brake_value(b, sizeof(b), res.rec.orig),
			   margin / 1048576.0);
		return;
	}
	if (res.target < 0) {
		log_warn(&d->log, "memory_high_brake: a margin of %.1f MiB below memory.max (%.1f MiB) %s; no brake",
			 margin / 1048576.0, max / 1048576.0, res.target == -ERANGE ? "is more than half of it" : "is empty");
		return;
	}
	d->brake_rec = res.rec;
	snprintf(d->brake_dir, sizeof(d->brake_dir), "%s", d->memory_cgroup);
	brake_start(&d->brake, res.rec.set);
	log_notice(&d->log, "memory cgroup %s: memory.high %s (%.1f MiB, %s below memory.max%s), was %s%s; restored "
		   "when psi-lmkd stops (after a SIGKILL: psi-lmkd --release-brake)", d->memory_cgroup,
		   brake_value(b, sizeof(b), res.rec.set), res.rec.set / 1048576.0,
		   d->cfg.brake_margin.value ? config_format_amount(a, sizeof(a), &d->cfg.brake_margin) : "twice low_available",
		   d->cfg.brake_margin.value && d->cfg.brake_margin.percent ? " of it" : "",
		   brake_value(c, sizeof(c), res.rec.orig), res.adopted ? " (adopted from a psi-lmkd that did not stop cleanly)"
		   : "");
}

void daemon_brake_release(struct daemon *d)
{
	uint64_t v = 0;
	char b[24];
	int r;

	if (!*d->brake_dir)
		return;
	r = brakeio_release(d->rootfd, d->brake_dir, &v);
	if (r < 0)
		log_err(&d->log, "memory_high_brake: cannot restore memory.high of %s: %s", d->brake_dir, strerror(-r));
	else if (r == 1)
		log_notice(&d->log, "memory cgroup %s: memory.high restored to %s", d->brake_dir, brake_value(b, sizeof(b), v));
	else if (r == 2)
		log_notice(&d->log, "memory cgroup %s: memory.high was changed by someone else; left as it is",
			   d->brake_dir);
	d->brake_dir[0] = '\0';
	d->brake.state = BRAKE_OFF;
}

/* A memory check with the brake on: a group parked at it with nothing
 * growing gets memory.high back, and the brake again when it grows. */
static void brake_check(struct daemon *d, const struct mem_info *mi)
{
	uint64_t usage = mi->total_bytes - mi->unused_bytes;
	enum brake_do act;
	char b[24];
	int r;

	if (d->brake.state == BRAKE_OFF)
		return;
	if (!mi->anon_known)
		return; /* no footprint: nothing parks, nothing changes */
	act = brake_poll(&d->brake, event_now_us(), usage, mi->footprint_bytes);
	if (act == BRAKE_NOTHING)
		return;
	r = brakeio_write_high(d->rootfd, d->brake_dir, act == BRAKE_LIFT ? d->brake_rec.orig : d->brake_rec.set);
	if (r < 0)
		log_warn(&d->log, "memory_high_brake: cannot write memory.high of %s: %s", d->brake_dir, strerror(-r));
	else if (act == BRAKE_LIFT)
		log_info(&d->log, "memory cgroup %s: %.1f MiB in use, at the brake for %" PRIu64 " ms with nothing "
			 "growing: memory.high back to %s until memory grows", d->brake_dir, usage / 1048576.0,
			 BRAKE_PARK_US / 1000, brake_value(b, sizeof(b), d->brake_rec.orig));
	else
		log_info(&d->log, "memory cgroup %s: memory grows: the brake again (memory.high %s)", d->brake_dir,
			 brake_value(b, sizeof(b), d->brake_rec.set));
}

/* The memory cgroup's notifications, from scratch (a reload or a re-armed
 * pressure file may have changed the group): the OOM decisions taken before
 * go back to the kernel first. */
static void setup_memevents(struct daemon *d)
{
	struct mem_info mi;

	if (d->memev.oom_taken && memevent_release(&d->memev, d->rootfd) < 0)
		log_err(&d->log, "cannot turn the kernel's OOM killer of %s back on", d->memev.dir);
	memevent_close(&d->memev, d->rootfd);
	memevent_init(&d->memev);
	oomhand_init(&d->oomh, oom_bound_us(&d->cfg));
	if (*d->memory_cgroup && d->has_low_memory_tiers && memory_read(d->rootfd, d->memory_cgroup, &mi) == 0)
		open_memory_wake(d, &mi);
	if (d->cfg.oom_killer_daemon)
		take_memory_oom(d);
	daemon_brake_release(d);
	if (d->cfg.brake_margin.set)
		brake_apply(d);
}

/* Every low_available tier fires for the OOM (swap cannot help a group at
 * its limit); the decision chooses among the group's members only. */
static void oom_fire(struct daemon *d, struct wake *w)
{
	size_t i;

	for (i = 0; i < d->cfg.n_tiers; i++)
		if (d->cfg.tiers[i].low_available.set)
			daemon_tier_fired(d, i, FIRE_OOM, w);
	w->oom = true;
}

/* The group is out of memory and its OOM killer is ours. The notification
 * also comes when the group is removed: under_oom tells. */
void daemon_memory_oom(struct daemon *d, struct wake *w)
{
	int r;

	(void)memevent_drain(&d->memev, d->memev.oom_fd);
	r = memevent_under_oom(d->rootfd, d->memory_cgroup);
	if (r <= 0) {
		log_debug(&d->log, "OOM notification of %s, but it is not out of memory (%s)", d->memory_cgroup,
			  r < 0 ? strerror(-r) : "under_oom 0");
		return;
	}
	d->mem_ooms++;
	oomhand_notified(&d->oomh, event_now_us());
	if (d->oomh.state != OOMHAND_DECIDING) {
		log_debug(&d->log, "memory cgroup %s is out of memory; the kill of pid %d for it is in flight",
			  d->memory_cgroup, (int)d->oomh.victim.pid);
		return;
	}
	log_info(&d->log, "memory cgroup %s is out of memory (its OOM killer is psi-lmkd's): firing", d->memory_cgroup);
	oom_fire(d, w);
}

/* Nothing psi-lmkd does will end the OOM (no candidate in the group, a
 * gate, an error, or the bound passed): the group's tasks would wait for
 * ever, so the kernel gets its OOM killer back. */
static void oom_release(struct daemon *d, const char *why)
{
	int r = memevent_release(&d->memev, d->rootfd);

	log_err(&d->log, "memory cgroup %s is out of memory and %s: its OOM killer is the kernel's again%s%s (until a "
		"reload or restart)", d->memory_cgroup, why, r < 0 ? "; turning it back on failed: " : "",
		r < 0 ? strerror(-r) : "");
}

void daemon_memory_oom_decided(struct daemon *d, bool killed)
{
	const struct inflight_kill *k = &d->killer.kill;
	struct proc_ident v = { k->victim.pid, k->victim.start_time };

	killed = killed && k->active;
	if (oomhand_decided(&d->oomh, event_now_us(), killed, &v, k->active) == OOMHAND_RELEASE) {
		oom_release(d, k->active ? "the kill in flight did not end in time" : "psi-lmkd killed nothing in it");
		return;
	}
	if (killed)
		log_info(&d->log, "memory cgroup %s: waiting for pid %d (%s), a member killed for its OOM", d->memory_cgroup,
			 (int)v.pid, k->victim.comm);
	daemon_idle_clock_update(d); /* an active hand-over needs the clock within OOMHAND_TICK_US */
}

/* A tick while the hand-over is active: the group's OOM is over, still
 * there after our kill (decide again), or past its bound (release). */
static void oom_poll(struct daemon *d, struct wake *w)
{
	uint64_t now = event_now_us(), since = d->oomh.since_us;
	int under;

	if (!oomhand_active(&d->oomh))
		return;
	under = memevent_under_oom(d->rootfd, d->memory_cgroup);
	switch (oomhand_poll(&d->oomh, now, under, d->killer.kill.active)) {
	case OOMHAND_OVER:
		log_info(&d->log, "memory cgroup %s is no longer out of memory (%u kills for it)", d->memory_cgroup,
			 d->oomh.kills);
		break;
	case OOMHAND_RELEASE:
		log_warn(&d->log, "memory cgroup %s: out of memory for %" PRIu64 " ms without relief", d->memory_cgroup,
			 (now - since) / 1000);
		oom_release(d, "nothing psi-lmkd did freed memory in it in time");
		break;
	case OOMHAND_DECIDE:
		log_info(&d->log, "memory cgroup %s is still out of memory after %u kills for it: firing again",
			 d->memory_cgroup, d->oomh.kills);
		oom_fire(d, w);
		break;
	case OOMHAND_NOTHING:
		break;
	}
}

void daemon_memory_wake(struct daemon *d, struct wake *w)
{
	int r = memevent_drain(&d->memev, d->memev.wake_fd);

	if (r < 0) {
		log_warn(&d->log, "the memory cgroup %s's notifications failed (%s); low_available is checked on the "
			 "timer alone", d->memory_cgroup, strerror(-r));
		(void)event_del(d->epfd, d->memev.wake_fd);
		close(d->memev.wake_fd);
		d->memev.wake_fd = -1;
		return;
	}
	d->mem_wakes++;
	daemon_count_misses(d, true); /* memory.events: oom_kill may be what moved */
	/* the group fills: a tick now, so the clock's next one follows the new
	 * headroom -- and takes the safety samples that are due, which a group
	 * that notifies more often than the clock's period would otherwise put
	 * off for as long as it does */
	daemon_idle_tick(d, w);
}

/* The memory cgroup that bounds "available": the configured one, else the
 * directory of a cgroup2 memory.pressure when it has memory.max, else none
 * (MemAvailable). Arms the low_available check if some tier has one. */
void daemon_setup_memory(struct daemon *d)
{
	struct mem_info mi;
	size_t i;

	brakeio_memory_cgroup(d->rootfd, &d->cfg, d->memory_cgroup, sizeof(d->memory_cgroup));
	memory_growth_reset(&d->mem_growth);
	d->oomk.known = false; /* a new domain: its counter is read afresh */
	daemon_count_misses(d, true);
	d->has_low_memory_tiers = false;
	for (i = 0; i < d->cfg.n_tiers; i++)
		d->has_low_memory_tiers |= d->cfg.tiers[i].low_available.set;
	if (memory_read(d->rootfd, d->memory_cgroup, &mi) == 0)
		log_info(&d->log, "available memory is measured %s%s: %" PRIu64 " of %" PRIu64 " MiB now; swap: %" PRIu64
			 " of %" PRIu64 " MiB free%s", *d->memory_cgroup ? "in the memory cgroup " : "system-wide (MemAvailable)",
			 d->memory_cgroup, mi.available_bytes >> 20, mi.total_bytes >> 20, mi.swap_free_bytes >> 20,
			 mi.swap_total_bytes >> 20, mi.swap_total_bytes ? " (zram devices counted by the RAM they may still take)"
			 : mi.cgroup ? " (none for this group)" : "");
	/* the first tick at once: it sets the period */
	d->idle_period_us = idle_clock_period(d, UINT64_MAX);
	event_timer_arm(d->memtimerfd, d->idle_period_us ? 1 : 0);
	setup_memevents(d);
}

