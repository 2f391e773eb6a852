/* SPDX-License-Identifier: MIT */
/* growth: the samples a victim choice measures growth and reads from
 * (growth.h). Each measure fills as a min-heap, so keeping the largest of
 * any number of processes costs O(log n) each and no memory beyond the
 * sample; once complete it is sorted by pid for lookups, in place (no
 * qsort: glibc's allocates). */
#include <string.h>

#include "growth.h"

void growth_sample_begin(struct growth_sample *s, uint64_t floor_kb, uint64_t now_us, uint64_t ticks, bool reads)
{
	s->valid = false;
	s->at_us = now_us;
	s->ticks = ticks;
	s->floor_kb = floor_kb;
	s->n = 0;
	s->reads = reads;
	s->read_floor_kb = 0;
	s->nr = 0;
	s->refault_known = false;
	s->refault_file = s->refault_anon = 0;
}

static void swap_entries(struct growth_entry *a, struct growth_entry *b)
{
	struct growth_entry t = *a;

	*a = *b;
	*b = t;
}

static bool smaller(const struct growth_entry *a, const struct growth_entry *b)
{
	return a->kb < b->kb;
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

/* Keeps x among the cap largest of e[0..*n) (a min-heap by kb), all at
 * least *floor_kb. */
static void keep(struct growth_entry *e, size_t cap, size_t *n, uint64_t *floor_kb, struct growth_entry x)
{
	size_t i;

	if (x.kb < *floor_kb)
		return;
	if (*n < cap) {
		for (i = (*n)++; i > 0 && e[(i - 1) / 2].kb > x.kb; i = (i - 1) / 2)
			e[i] = e[(i - 1) / 2];
		e[i] = x;
		return;
	}
	/* full: the smaller of this one and the smallest kept is dropped, and
	 * nothing smaller than what was dropped is kept from now on */
	if (x.kb <= e[0].kb) {
		*floor_kb = x.kb + 1;
		return;
	}
	*floor_kb = e[0].kb + 1;
	e[0] = x;
	sift_down(e, *n, 0, smaller);
}

void growth_sample_add(struct growth_sample *s, pid_t pid, uint64_t start_time, uint64_t size_kb)
{
	keep(s->e, GROWTH_ENTRIES, &s->n, &s->floor_kb, (struct growth_entry){ pid, start_time, size_kb });
}

void growth_sample_add_reads(struct growth_sample *s, pid_t pid, uint64_t read_kb)
{
	if (s->reads)
		keep(s->r, GROWTH_READERS, &s->nr, &s->read_floor_kb, (struct growth_entry){ pid, 0, read_kb });
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

/* entries below a floor that rose after they were added were not dropped
 * by the heap; the floor describes them anyway */
static void finish(struct growth_entry *e, size_t *n, uint64_t floor_kb)
{
	size_t i, kept = 0;

	for (i = 0; i < *n; i++)
		if (e[i].kb >= floor_kb)
			e[kept++] = e[i];
	*n = kept;
	sort_by_pid(e, *n);
}

void growth_sample_end(struct growth_sample *s)
{
	finish(s->e, &s->n, s->floor_kb);
	finish(s->r, &s->nr, s->read_floor_kb);
	s->valid = true;
}

/* The entry of pid in e[0..n) (sorted by pid), or NULL. */
static const struct growth_entry *find(const struct growth_entry *e, size_t n, pid_t pid)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (e[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && e[lo].pid == pid ? &e[lo] : NULL;
}

uint64_t growth_kb(const struct growth_sample *s, pid_t pid, uint64_t start_time, uint64_t size_kb)
{
	const struct growth_entry *e = find(s->e, s->n, pid);
	uint64_t then = s->floor_kb;

	if (e && e->start_time == start_time)
		then = e->kb;
	else if (s->ticks && start_time > s->ticks)
		then = 0; /* started since */
	return size_kb > then ? size_kb - then : 0;
}

uint64_t growth_read_kb(const struct growth_sample *s, pid_t pid, uint64_t read_kb)
{
	const struct growth_entry *e = find(s->r, s->nr, pid);
	uint64_t then = e ? e->kb : s->read_floor_kb;

	if (!s->reads)
		return 0;
	return read_kb > then ? read_kb - then : 0;
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
