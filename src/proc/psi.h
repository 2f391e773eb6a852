/* SPDX-License-Identifier: MIT */
/* psi: pure parsing of PSI pressure files and formatting of trigger strings.
 * No I/O here: callers read the file and pass its text. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum psi_state {
	PSI_SOME = 0,
	PSI_FULL = 1,
};

#define PSI_WINDOW_MIN_US 500000ULL    /* kernel limits on a trigger window */
#define PSI_WINDOW_MAX_US 10000000ULL
#define PSI_UNPRIV_WINDOW_US 2000000ULL /* unprivileged windows: multiples of 2 s (Linux 6.4+) */

struct psi_line {
	bool present;
	uint32_t avg10, avg60, avg300; /* hundredths of a percent: 12.34% -> 1234 */
	uint64_t total_us;
};

struct psi_stats {
	struct psi_line some, full;
};

const char *psi_state_name(enum psi_state s);

/* Parses the text of a pressure file ("some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n
 * full ..."). "some" is required, "full" is optional (the cpu file of older kernels).
 * Returns 0 or -EINVAL for malformed text. */
int psi_parse(const char *text, struct psi_stats *out);

/* Formats the kernel's trigger syntax "some 150000 2000000" into buf.
 * Returns the string length (the caller writes it with its NUL), or -ENOSPC. */
int psi_format_trigger(char *buf, size_t size, enum psi_state s, uint64_t stall_us, uint64_t window_us);

/* min_events: the length of a tier's run of events after one more event at
 * now_us, given the run so far (0: none) and the time of the last event.
 * Events count as in a row when at most two windows plus PSI_UNPRIV_WINDOW_US
 * apart: an unprivileged kernel trigger, or the sentinel that wakes the
 * userspace monitor, may space out the events of a 1 s tier by 2 s. */
unsigned psi_streak_next(unsigned streak, uint64_t last_us, uint64_t now_us, uint64_t window_us);
