/* SPDX-License-Identifier: MIT */
/* brake: the pure decisions of the memory.high brake (brake.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "brake.h"

const char *brake_value(char *buf, size_t size, uint64_t v)
{
	if (v == UINT64_MAX)
		snprintf(buf, size, "max");
	else
		snprintf(buf, size, "%" PRIu64, v);
	return buf;
}

int brake_format(char *buf, size_t size, const struct brake_record *r)
{
	char a[24], b[24];
	int n = snprintf(buf, size, "%s %s", brake_value(a, sizeof(a), r->orig), brake_value(b, sizeof(b), r->set));

	return n < 0 || (size_t)n >= size ? -ENOSPC : n;
}

/* One word of the record: a number or "max"; *p moves past it. */
static int parse_word(const char **p, const char *end, uint64_t *v)
{
	const char *s = *p;
	uint64_t x = 0;

	if (end - s >= 3 && memcmp(s, "max", 3) == 0) {
		*v = UINT64_MAX;
		*p = s + 3;
		return 0;
	}
	if (s == end || *s < '0' || *s > '9')
		return -EINVAL;
	for (; s < end && *s >= '0' && *s <= '9'; s++) {
		if (x > (UINT64_MAX - 9) / 10)
			return -EINVAL;
		x = x * 10 + (uint64_t)(*s - '0');
	}
	*v = x;
	*p = s;
	return 0;
}

int brake_parse(const char *text, size_t len, struct brake_record *r)
{
	const char *p = text, *end = text + len;

	if (parse_word(&p, end, &r->orig) < 0 || p == end || *p++ != ' ' || parse_word(&p, end, &r->set) < 0 ||
	    p != end || r->set == UINT64_MAX)
		return -EINVAL;
	return 0;
}

uint64_t brake_margin(uint64_t margin_bytes, uint64_t low_available)
{
	return margin_bytes ? margin_bytes : 2 * low_available;
}

int brake_target(uint64_t max, uint64_t cur_high, uint64_t margin, uint64_t *high)
{
	if (max == UINT64_MAX)
		return -ENODATA;
	if (!margin)
		return -EINVAL;
	if (margin > max / 2)
		return -ERANGE;
	*high = (max - margin) / BRAKE_PAGE * BRAKE_PAGE;
	return cur_high <= *high ? 1 : 0;
}

bool brake_restore(const struct brake_record *r, uint64_t cur_high, uint64_t *to)
{
	/* the kernel stores memory.high in pages: what it reads back is the
	 * written value rounded down to one; the original already there (a
	 * daemon that died while the group was parked) is no one else's */
	if (cur_high != r->set / BRAKE_PAGE * BRAKE_PAGE && cur_high != r->orig)
		return false;
	*to = r->orig;
	return true;
}

void brake_start(struct brake *b, uint64_t high)
{
	*b = (struct brake){ .state = BRAKE_ON, .high = high };
}

enum brake_do brake_poll(struct brake *b, uint64_t now, uint64_t usage, uint64_t footprint)
{
	switch (b->state) {
	case BRAKE_OFF:
		return BRAKE_NOTHING;
	case BRAKE_ON:
		if (usage + BRAKE_PARK_STEP <= b->high) {
			b->over_since_us = 0;
			return BRAKE_NOTHING;
		}
		/* at the brake: the clock starts, and starts anew while it grows */
		if (!b->over_since_us || footprint >= b->base + BRAKE_PARK_STEP) {
			b->over_since_us = now ? now : 1;
			b->base = footprint;
			return BRAKE_NOTHING;
		}
		if (footprint < b->base)
			b->base = footprint;
		if (now - b->over_since_us < BRAKE_PARK_US)
			return BRAKE_NOTHING;
		b->state = BRAKE_PARKED;
		b->over_since_us = 0;
		b->base = footprint;
		b->parks++;
		return BRAKE_LIFT;
	case BRAKE_PARKED:
		if (footprint < b->base)
			b->base = footprint;
		/* only growth brakes again: usage that merely dips below the
		 * brake and comes back would throttle the same benign group
		 * over and over (seen in the 6.1 guest: a 2.3 s round) */
		if (footprint < b->base + BRAKE_PARK_STEP)
			return BRAKE_NOTHING;
		b->state = BRAKE_ON;
		return BRAKE_APPLY;
	}
	return BRAKE_NOTHING;
}
