/* SPDX-License-Identifier: MIT */
/* watch: everything that tells the daemon a tier fired, for one pressure file.
 *
 * Each tier runs on a kernel PSI trigger when the kernel accepts it
 * (source "kernel"), or else on the userspace monitor of kernel/psi-monitor
 * fed with the file's total= counters (source "userspace"). Every tier also
 * has a userspace shadow monitor fed with the same samples, so growth that a
 * kernel trigger did not report (unprivileged triggers are starved by other
 * readers of the file) still fires the tier, at most once per window.
 *
 * Sampling is adaptive so that an idle system costs (almost) nothing:
 *  - idle: no sampling, except a slow safety sample when some tier depends
 *    on an unprivileged (starvable) kernel trigger or on the userspace
 *    monitor; with CAP_SYS_RESOURCE and kernel triggers only, nothing at all.
 *    The safety sample is not on the watch's own timer: the daemon's one
 *    idle clock (below), which also runs the low_available check, takes it
 *    for every watch that is due (watch_idle_due), so idle wakeups do not
 *    grow with the number of watches. Its period follows the memory headroom
 *    (watch_idle_period_us): idle_poll (the longest) while memory is
 *    plentiful, shorter as it runs short. A safety sample that sees the
 *    stall grow (half a tier's threshold, scaled to its window) starts the
 *    fast sampling below, as a kernel event does;
 *  - a "sentinel" kernel trigger that the kernel does accept (window rounded
 *    up to a multiple of 2 s, the smallest stall of the userspace tiers)
 *    wakes the watch when userspace tiers might fire;
 *  - once stall is seen, it samples at a tenth of the smallest window until a
 *    smallest window passes without new stall, like the kernel's own poller.
 * The daemon owns the epoll set; this module owns the fds it lists. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "psi-monitor.h"
#include "psi.h"

enum tier_source {
	TIER_SOURCE_KERNEL,
	TIER_SOURCE_USERSPACE,
	TIER_SOURCE_NONE, /* no PSI trigger: a low_available-only tier */
	TIER_SOURCE_OFF,  /* not armed on this file (a cgroup-pattern tier, or one that has none) */
};

const char *tier_source_name(enum tier_source s);

/* The kernel seam: tests replace it to play a kernel that refuses triggers. */
struct watch_ops {
	int (*trigger_open)(int rootfd, const char *path, enum psi_state state, uint64_t stall_us, uint64_t window_us);
};

extern const struct watch_ops watch_kernel_ops;

/* What one watch arms: a pressure file, and which tiers of the configuration
 * (bit i = cfg->tiers[i]). The others stay TIER_SOURCE_OFF, so that tier
 * indices are those of the configuration in every watch. */
struct watch_target {
	const char *path;
	uint32_t tiers;
};

struct watch_tier {
	enum tier_source source;
	enum psi_state state;
	int fd;             /* kernel trigger, -1 for userspace tiers */
	int refused;        /* why the kernel refused (negative errno), 0 if accepted */
	struct psi_mon mon; /* primary (userspace) or shadow (kernel) monitor */
	uint64_t kernel_events, userspace_events;
};

struct watch {
	int rootfd;
	char path[CONFIG_PATH_MAX];
	int read_fd;     /* O_RDONLY fd for sampling total= */
	int sentinel_fd; /* coarse kernel trigger waking userspace tiers, or -1 */
	char sentinel[64];
	int timer_fd;
	bool privileged; /* CAP_SYS_RESOURCE: kernel triggers are not starvable */
	uint64_t idle_poll_us;
	size_t n_tiers;
	size_t n_psi; /* tiers with a PSI trigger (kernel or userspace) */
	struct watch_tier tiers[CONFIG_TIERS_MAX];
	struct psi_poller poller;
	uint64_t samples;
	uint64_t last_sample_us;
	struct psi_stats last;
	const struct watch_ops *ops;
};

/* Reads a pressure file's text from an O_RDONLY fd (pread at offset 0: the
 * kernel regenerates it on every read) and parses it. Returns 0, -errno,
 * -ENODATA for an empty read or -EBADMSG for text that is not PSI. */
int watch_read_totals(int fd, struct psi_stats *st);

/* Checks that path (under rootfd) is a readable PSI pressure file. Returns 0,
 * or -errno with the reason in err (size errlen). */
int watch_check_file(int rootfd, const char *path, char *err, size_t errlen);

/* Arms every tier of cfg: a kernel trigger where the kernel accepts it, the
 * userspace monitor where it refuses (EINVAL, EPERM, EACCES, EROFS, EBUSY...).
 * Fails only if the pressure file cannot be read at all; the message goes to
 * err (size errlen). Returns 0 or -errno. */
int watch_open(struct watch *w, int rootfd, const struct config *cfg, bool privileged, uint64_t idle_poll_us,
	       const struct watch_ops *ops, char *err, size_t errlen);
/* watch_open on another file and set of tiers (a cgroup-pattern tier's group):
 * watch_open is this on cfg->pressure with the tiers that have no cgroup key. */
int watch_open_target(struct watch *w, int rootfd, const struct config *cfg, const struct watch_target *target,
		      bool privileged, uint64_t idle_poll_us, const struct watch_ops *ops, char *err, size_t errlen);
/* true if the tier runs on this watch's PSI samples (kernel or userspace). */
bool watch_tier_has_psi(const struct watch_tier *t);
void watch_close(struct watch *w);

/* true if any tier needs the sampler (userspace tiers, or unprivileged kernel triggers) */
bool watch_needs_sampling(const struct watch *w);

/* A kernel trigger of tier i fired at now: counts it, tells its shadow, and
 * starts sampling if the watch samples at all. */
void watch_kernel_event(struct watch *w, size_t i, uint64_t now_us);

/* The sentinel fired: start fast sampling. */
void watch_sentinel_event(struct watch *w, uint64_t now_us);

/* Reads the totals and feeds every monitor. fired[i] is set for each tier
 * whose monitor fired (never for a kernel tier whose kernel trigger fired
 * within the window). Returns 0 or -errno (file unreadable: its cgroup gone). */
int watch_sample(struct watch *w, uint64_t now_us, bool *fired);

/* Re-arms the watch's own timer: the fast period while stall grows,
 * otherwise disarmed (the idle clock takes the safety samples). Returns the
 * delay (0 = off). */
uint64_t watch_arm_timer(struct watch *w, uint64_t now_us);

/* The idle clock: one timer of the daemon for the low_available check and
 * the safety samples of every watch. Its period is the time the headroom --
 * available memory (and usable swap) above the highest low_available
 * threshold, above 0 without one -- lasts at WATCH_IDLE_GROWTH_BYTES_PER_S,
 * a fast growth (the last resort's reasoning: the next tick comes before
 * memory at that rate could reach the threshold), between WATCH_IDLE_MIN_US
 * and WATCH_IDLE_MAX_US (UINT64_MAX: headroom unknown, the longest); and no
 * longer than the idle_poll of any watch that needs safety samples
 * (watch_idle_limit_us). */
#define WATCH_IDLE_GROWTH_BYTES_PER_S (1ULL << 30)
#define WATCH_IDLE_MIN_US 50000ULL
#define WATCH_IDLE_MAX_US 10000000ULL
uint64_t watch_idle_period_us(uint64_t headroom_bytes);

/* The longest period of the idle clock that w allows: its idle_poll if it
 * needs safety samples (watch_needs_sampling, idle_poll not off), else
 * UINT64_MAX (none: the clock may stop). */
uint64_t watch_idle_limit_us(const struct watch *w);

/* true if a tick of the idle clock at now_us, of period period_us, takes a
 * safety sample of w: it needs them, is not sampling fast already, and its
 * last sample is about a period old, or idle_poll if that is shorter (one
 * clock serves watches with different idle_poll). */
bool watch_idle_due(const struct watch *w, uint64_t now_us, uint64_t period_us);
