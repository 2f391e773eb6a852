/* SPDX-License-Identifier: MIT */
/* growth: who grew, and who read, while memory got short. A sample of the
 * processes' footprints (procfs_footprint_kb), taken while pressure builds,
 * against which a later victim choice measures each candidate's growth
 * (victim.h, culprit); and, when asked, of what each had read from storage
 * (/proc/PID/io read_bytes, a count since it started), against which a
 * choice on stall measures its reads (victim.h, reader). Each measure keeps
 * only its largest values, those of at least a floor: one not kept that was
 * already running then was below the floor, so it is measured from the
 * floor: never more than it really grew or read; one started since counts
 * all it holds (sizes; reads count from the floor). Pure: the scan that fills a sample is pick_sample
 * (pick.h). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define GROWTH_ENTRIES 256
#define GROWTH_READERS 128

struct growth_entry {
	pid_t pid;
	uint64_t start_time; /* with pid, the process's identity (sizes; reads
			      * are kept by pid alone) */
	uint64_t kb;
};

struct growth_sample {
	bool valid;          /* complete (growth_sample_end) */
	uint64_t at_us;      /* CLOCK_MONOTONIC when taken */
	uint64_t ticks;      /* ... in clock ticks since boot (proc_info.start_time's
			      * unit); 0 = unknown: a process not kept counts from
			      * the floor, whenever it started */
	uint64_t floor_kb;   /* processes smaller than this were not kept */
	size_t n;
	/* a min-heap by size while filling, sorted by pid once complete */
	struct growth_entry e[GROWTH_ENTRIES];
	bool reads;             /* the reads were sampled too */
	uint64_t read_floor_kb; /* processes that had read less were not kept */
	size_t nr;
	struct growth_entry r[GROWTH_READERS]; /* the same, by reads */
	/* the domain's refaults when the sample was taken (mem_info's; set by
	 * its taker): a choice on stall ranks readers only when files, not
	 * swap, were read back in most since */
	bool refault_known;
	uint64_t refault_file;
	uint64_t refault_anon;
};

/* Starts an empty sample of processes of at least floor_kb, taken at
 * now_us, ticks since boot (0: unknown); with reads, of their reads too. */
void growth_sample_begin(struct growth_sample *s, uint64_t floor_kb, uint64_t now_us, uint64_t ticks, bool reads);
/* Offers one process. When the sample is full, the smallest kept one makes
 * room for a larger one, and the floor rises to the larger of the two
 * sizes that were not kept. */
void growth_sample_add(struct growth_sample *s, pid_t pid, uint64_t start_time, uint64_t size_kb);
/* Offers one process's reads (read_kb since it started), by pid alone;
 * kept as sizes are, in GROWTH_READERS places (growth_read_kb). */
void growth_sample_add_reads(struct growth_sample *s, pid_t pid, uint64_t read_kb);
/* Completes the sample: sorted by pid for growth_kb and growth_read_kb. */
void growth_sample_end(struct growth_sample *s);
/* How much a process of size_kb now grew since s was taken: from its size
 * then; if it was not kept, from nothing if it started after s (start_time
 * past s->ticks), else from the floor; 0 if it did not grow. */
uint64_t growth_kb(const struct growth_sample *s, pid_t pid, uint64_t start_time, uint64_t size_kb);
/* How much process pid, which has read read_kb since it started, read since
 * s was taken: from its count then if kept, else from the floor, by pid
 * alone (a choice reads a process's reads before its start time: a pid
 * reused since counts from its predecessor's, a process started since from
 * the floor, both less than its own); 0 if s has no reads. */
uint64_t growth_read_kb(const struct growth_sample *s, pid_t pid, uint64_t read_kb);

/* Two samples, the newer refreshed at most every GROWTH_REFRESH_US while
 * tiers fire: a choice measures growth from the older one while it is at
 * most GROWTH_MAX_AGE_US old, so over GROWTH_REFRESH_US to twice that. */
#define GROWTH_REFRESH_US (5 * 1000000ULL)
#define GROWTH_MAX_AGE_US (30 * 1000000ULL)

struct growth_track {
	struct growth_sample s[2];
	unsigned newer; /* index of the newer sample */
};

/* Whether a new sample is due at now (none yet, or the newer one is
 * GROWTH_REFRESH_US old); if so, returns the slot to fill (the older one,
 * which becomes the newer when complete). NULL: not due. */
struct growth_sample *growth_due(struct growth_track *t, uint64_t now_us);
/* The slot growth_due gave is complete (valid): it becomes the newer one. */
void growth_commit(struct growth_track *t, const struct growth_sample *s);
/* The sample a choice at now measures growth from: the oldest valid one
 * at most GROWTH_MAX_AGE_US old and taken before now; NULL: none. */
const struct growth_sample *growth_base(const struct growth_track *t, uint64_t now_us);

