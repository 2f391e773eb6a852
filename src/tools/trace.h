/* SPDX-License-Identifier: MIT */
/* trace: recorded pressure traces -- one sample of a pressure file's totals
 * per line -- for tuning thresholds offline and for replay tests.
 *
 * Format (text, one sample a line, '#' starts a comment line):
 *   # psi-lmkd trace v1 pressure=/proc/pressure/memory interval_us=100000
 *   <time_us> <some_total_us> <full_total_us>
 * time_us is monotonic (any origin) and never goes backwards. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "config.h"

struct trace_sample {
	uint64_t t_us;
	uint64_t some_us;
	uint64_t full_us;
};

/* Parses one line. Returns 1 for a sample, 0 for a blank or comment line,
 * -EINVAL for anything else. */
int trace_parse_line(const char *line, struct trace_sample *out);

/* Samples the pressure file at path (under rootfd) every interval_us for
 * duration_us (0 = until SIGINT/SIGTERM), writing a trace to out.
 * Returns 0 or -errno; a failed write to out (-EPIPE when its reader is
 * gone) ends the recording. */
int trace_record(int rootfd, const char *path, uint64_t interval_us, uint64_t duration_us, FILE *out);

struct trace_replay_stats {
	unsigned long lines;
	unsigned long samples;
	unsigned long events[CONFIG_TIERS_MAX];
	bool skipped[CONFIG_TIERS_MAX]; /* tier without a trigger: not replayed */
};

/* Feeds every sample of in to a userspace monitor per tier of cfg and prints
 * one line per event to out: "<t_s> tier=NAME growth_us=N threshold_us=N".
 * A tier without a trigger (only low_available) is not replayed: it gets a
 * "# tier NAME: no trigger, not replayed ..." line first and no events.
 * Samples may repeat a timestamp.
 * On a malformed line or time going backwards, returns -EINVAL and sets
 * *bad_line. */
int trace_replay(const struct config *cfg, FILE *in, FILE *out, struct trace_replay_stats *st,
		 unsigned long *bad_line);
