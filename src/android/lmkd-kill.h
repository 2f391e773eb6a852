/* SPDX-License-Identifier: MIT */
/* lmkd-kill: a kill as Android's lmkd tells it -- the kill_reason code of
 * the KILL_OCCURRED report (lmkd's statslog numbering) that stands for
 * psi-lmkd's cause, its description, and lmkd's own log line for the kill
 * ("Kill '<task>' (<pid>), uid ..., tag lowmemorykiller"), which Android
 * tooling and lmkd's tests grep for. Pure formatting, no I/O. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kill.h"

struct mem_info;
struct tier_config;

/* The tag lmkd logs under; its kill lines read "lowmemorykiller: Kill '...". */
#define LMKD_LOG_TAG "lowmemorykiller"

/* What psi-lmkd knew of a kill's cause, in the terms lmkd's reasons use. */
struct lmkd_cause {
	enum fire_reason why;
	bool psi_full;       /* FIRE_PSI: the tier's trigger counts full stall (else some) */
	bool mem_known;      /* the figures below were read */
	uint64_t available_kb;
	uint64_t swap_total_kb; /* 0: no swap */
	uint64_t swap_free_kb;
	uint64_t swap_limit_kb; /* the tier's low_swap in kB */
	const char *tier;
	uint64_t stall_ms, window_ms; /* the tier's trigger */
};

/* The cause of a kill tier t made for why, with the memory figures of mi
 * (NULL: unknown). */
void lmkd_cause_init(struct lmkd_cause *c, enum fire_reason why, const struct tier_config *t,
		     const struct mem_info *mi);

/* lmkd's kill_reason for c (LMKD_REASON_*, lmkd-proto.h):
 *   PSI full stall                     NOT_RESPONDING
 *   PSI some stall, swap low           LOW_SWAP_AND_THRASHING
 *   PSI some stall                     DIRECT_RECL_AND_THRASHING
 *   low_available, swap low            LOW_MEM_AND_SWAP
 *   low_available, no swap             LOW_MEM
 *   OOM handed over (oom_killer)       LOW_MEM
 * "swap low": there is swap and the free swap is at or below the tier's low_swap. */
int32_t lmkd_kill_reason(const struct lmkd_cause *c);

/* The reason's description, in lmkd's words with psi-lmkd's figures and the
 * tier ("device is not responding (tier critical: full stall 700ms in
 * 1000ms)"). Returns the length (truncated at size-1). */
int lmkd_kill_desc(char *buf, size_t size, const struct lmkd_cause *c);

/* One kill as lmkd's line tells it. */
struct lmkd_kill_line {
	const char *task; /* lmkd's task name: argv[0] */
	int32_t pid;
	int32_t uid;
	int32_t adj;
	int64_t rss_kb;
	int64_t swap_kb;
	const char *desc; /* NULL: no reason (lmkd then ends in "kb swap") */
};

/* lmkd's kill line, without the tag:
 * "Kill '<task>' (<pid>), uid <uid>, oom_score_adj <adj> to free <rss>kB rss, <swap>kB swap; reason: <desc>".
 * Returns the length (truncated at size-1). */
int lmkd_kill_line_format(char *buf, size_t size, const struct lmkd_kill_line *l);
