/* SPDX-License-Identifier: MIT */
/* lmkd-kill: psi-lmkd's kill causes as lmkd's kill reasons, and lmkd's kill
 * line (see lmkd-kill.h). The wording follows lmkd's own descriptions, so
 * that what greps for them on Android still finds them. */
#include <inttypes.h>
#include <stdio.h>

#include "config.h"
#include "lmkd-kill.h"
#include "lmkd-proto.h"
#include "memory.h"

void lmkd_cause_init(struct lmkd_cause *c, enum fire_reason why, const struct tier_config *t,
		     const struct mem_info *mi)
{
	uint64_t limit = 0;

	*c = (struct lmkd_cause){ .why = why, .psi_full = t->state == PSI_FULL, .tier = t->name,
				  .stall_ms = t->stall_us / 1000, .window_ms = t->window_us / 1000 };
	if (!mi)
		return;
	(void)memory_swap_low(mi, &t->low_swap, &limit);
	c->mem_known = true;
	c->available_kb = mi->available_bytes >> 10;
	c->swap_total_kb = mi->swap_total_bytes >> 10;
	c->swap_free_kb = mi->swap_free_bytes >> 10;
	c->swap_limit_kb = limit >> 10;
}

static bool swap_low(const struct lmkd_cause *c)
{
	return c->mem_known && c->swap_total_kb && c->swap_free_kb <= c->swap_limit_kb;
}

int32_t lmkd_kill_reason(const struct lmkd_cause *c)
{
	switch (c->why) {
	case FIRE_PSI:
		if (c->psi_full)
			return LMKD_REASON_NOT_RESPONDING;
		return swap_low(c) ? LMKD_REASON_LOW_SWAP_AND_THRASHING : LMKD_REASON_DIRECT_RECL_AND_THRASHING;
	case FIRE_LOW_MEMORY:
		return swap_low(c) ? LMKD_REASON_LOW_MEM_AND_SWAP : LMKD_REASON_LOW_MEM;
	case FIRE_OOM:
		return LMKD_REASON_LOW_MEM;
	}
	return LMKD_REASON_NONE;
}

static int clamp_len(int n, size_t size)
{
	if (n < 0)
		return 0;
	return (size_t)n >= size ? (int)size - 1 : n;
}

int lmkd_kill_desc(char *buf, size_t size, const struct lmkd_cause *c)
{
	int n;

	switch (lmkd_kill_reason(c)) {
	case LMKD_REASON_NOT_RESPONDING:
		n = snprintf(buf, size, "device is not responding (tier %s: full stall %" PRIu64 "ms in %" PRIu64 "ms)",
			     c->tier, c->stall_ms, c->window_ms);
		break;
	case LMKD_REASON_LOW_SWAP_AND_THRASHING:
		n = snprintf(buf, size, "device is low on swap (%" PRIu64 "kB <= %" PRIu64 "kB) and thrashing (tier %s: "
			     "some stall %" PRIu64 "ms in %" PRIu64 "ms)", c->swap_free_kb, c->swap_limit_kb, c->tier,
			     c->stall_ms, c->window_ms);
		break;
	case LMKD_REASON_DIRECT_RECL_AND_THRASHING:
		n = snprintf(buf, size, "device is in direct reclaim and thrashing (tier %s: some stall %" PRIu64
			     "ms in %" PRIu64 "ms)", c->tier, c->stall_ms, c->window_ms);
		break;
	case LMKD_REASON_LOW_MEM_AND_SWAP:
		n = snprintf(buf, size, "available memory is low (%" PRIu64 "kB) and swap is low (%" PRIu64 "kB <= %" PRIu64
			     "kB) (tier %s)", c->available_kb, c->swap_free_kb, c->swap_limit_kb, c->tier);
		break;
	default:
		if (c->why == FIRE_OOM)
			n = snprintf(buf, size, "out of memory, the kernel's OOM handed over (tier %s)", c->tier);
		else if (c->mem_known)
			n = snprintf(buf, size, "available memory is low (%" PRIu64 "kB) (tier %s)", c->available_kb,
				     c->tier);
		else
			n = snprintf(buf, size, "available memory is low (tier %s)", c->tier);
		break;
	}
	return clamp_len(n, size);
}

int lmkd_kill_line_format(char *buf, size_t size, const struct lmkd_kill_line *l)
{
	int n;

	if (l->desc)
		n = snprintf(buf, size, "Kill '%s' (%" PRId32 "), uid %" PRId32 ", oom_score_adj %" PRId32 " to free %" PRId64
			     "kB rss, %" PRId64 "kB swap; reason: %s", l->task, l->pid, l->uid, l->adj, l->rss_kb, l->swap_kb,
			     l->desc);
	else
		n = snprintf(buf, size, "Kill '%s' (%" PRId32 "), uid %" PRId32 ", oom_score_adj %" PRId32 " to free %" PRId64
			     "kB rss, %" PRId64 "kb swap", l->task, l->pid, l->uid, l->adj, l->rss_kb, l->swap_kb);
	return clamp_len(n, size);
}
