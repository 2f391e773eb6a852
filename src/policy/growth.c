/* SPDX-License-Identifier: MIT */
/* growth: the size samples a victim choice measures growth from (growth.h).
 * A sample fills as a min-heap by size, so keeping the GROWTH_ENTRIES
 * largest of any number of processes costs O(log n) each and no memory
 * beyond the sample; once complete it is sorted by pid for lookups, in
 * place (no qsort: glibc's allocates). */
#include <string.h>

#include "growth.h"

void growth_sample_begin(struct growth_sample *s, uint64_t floor_kb, uint64_t now_us, uint64_t ticks)
{
	s->valid = false;
	s->at_us = now_us;
	s->ticks = ticks;
	s->floor_kb = floor_kb;
	s->n = 0;
}

static void swap_entries(struct growth_entry *a, struct growth_entry *b)
{
	struct growth_entry t = *a;

	*a = *b;
	*b = t;
}

static bool smaller(const struct growth_entry *a, const struct growth_entry *b)
{
	return a->size_kb < b->size_kb;
}

static bool larger_pid(const struct growth_entry *a, const struct growth_entry *b)
{
	return a->pid > b->pid;
}

/* Moves e[i] down the heap e[0..n) whose top is what comes first by above. */
static void sift_down(struct growth_entry *e, size_t n, size_t i,
		      bool (*above)(const struct growth_entry *, const struct growth_entry *))
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;

		if (l < n && above(&e[l], &e[m]))
			m = l;
		if (r < n && above(&e[r], &e[m]))
			m = r;
		if (m == i)
			return;
		swap_entries(&e[i], &e[m]);
		i = m;
	}
}

void growth_sample_add(struct growth_sample *s, pid_t pid, uint64_t start_time, uint64_t size_kb)
{
	const struct growth_entry e = { pid, start_time, size_kb };
	size_t i;

	if (size_kb < s->floor_kb)
		return;
	if (s->n < GROWTH_ENTRIES) {
		for (i = s->n++; i > 0 && s->e[(i - 1) / 2].size_kb > size_kb; i = (i - 1) / 2)
			s->e[i] = s->e[(i - 1) / 2];
		s->e[i] = e;
		return;
	}
	/* full: the smaller of this one and the smallest kept is dropped, and
	 * nothing smaller than what was dropped is kept from now on */
	if (size_kb <= s->e[0].size_kb) {
		s->floor_kb = size_kb + 1;
		return;
	}
	s->floor_kb = s->e[0].size_kb + 1;
	s->e[0] = e;
	sift_down(s->e, s->n, 0, smaller);
}

/* Heapsort by pid, in place: glibc's qsort allocates a buffer for arrays
 * of more than 1 kB, and a sample is taken when memory is short. */
static void sort_by_pid(struct growth_entry *e, size_t n)
{
	size_t i;

	for (i = n / 2; i > 0; i--)
		sift_down(e, n, i - 1, larger_pid);
	for (i = n; i > 1; i--) {
		swap_entries(&e[0], &e[i - 1]);
		sift_down(e, i - 1, 0, larger_pid);
	}
}

void growth_sample_end(struct growth_sample *s)
{
	size_t i, kept = 0;

	/* entries below a floor that rose after they were added were not
	 * dropped by the heap; the floor describes them anyway */
	for (i = 0; i < s->n; i++)
		if (s->e[i].size_kb >= s->floor_kb)
			s->e[kept++] = s->e[i];
	s->n = kept;
	sort_by_pid(s->e, s->n);
	s->valid = true;
}

uint64_t growth_kb(const struct growth_sample *s, pid_t pid, uint64_t start_time, uint64_t size_kb)
{
	size_t lo = 0, hi = s->n;
	uint64_t then = s->floor_kb;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->e[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < s->n && s->e[lo].pid == pid && s->e[lo].start_time == start_time)
		then = s->e[lo].size_kb;
	else if (s->ticks && start_time > s->ticks)
		then = 0; /* started since */
	return size_kb > then ? size_kb - then : 0;
}

struct growth_sample *growth_due(struct growth_track *t, uint64_t now_us)
{
	const struct growth_sample *n = &t->s[t->newer];

	if (n->valid && now_us - n->at_us < GROWTH_REFRESH_US)
		return NULL;
	return &t->s[n->valid ? 1 - t->newer : t->newer];
}

void growth_commit(struct growth_track *t, const struct growth_sample *s)
{
	if (s->valid)
		t->newer = s == &t->s[0] ? 0 : 1;
}

const struct growth_sample *growth_base(const struct growth_track *t, uint64_t now_us)
{
	const struct growth_sample *n = &t->s[t->newer], *o = &t->s[1 - t->newer];

	if (o->valid && o->at_us < now_us && now_us - o->at_us <= GROWTH_MAX_AGE_US)
		return o;
	if (n->valid && n->at_us < now_us && now_us - n->at_us <= GROWTH_MAX_AGE_US)
		return n;
	return NULL;
}
