/* SPDX-License-Identifier: MIT */
/* lmkd-registry: records in a slot array (stable indices for epoll tags),
 * chained per adj, found by pid through an open-addressing hash. See
 * lmkd-registry.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lmkd-registry.h"

#define NIL (-1)

static size_t slot_of_adj(int adj)
{
	return (size_t)(adj - LMKD_ADJ_MIN);
}

static size_t hash_pid(pid_t pid, size_t cap)
{
	return ((uint32_t)pid * 2654435761u) & (cap - 1);
}

void lmkd_registry_init(struct lmkd_registry *r)
{
	size_t i;

	memset(r, 0, sizeof(*r));
	r->free_head = NIL;
	for (i = 0; i < LMKD_ADJ_SLOTS; i++)
		r->head[i] = NIL;
}

void lmkd_registry_free(struct lmkd_registry *r)
{
	size_t i;

	for (i = 0; i < r->cap; i++)
		if (r->rec[i].used && r->rec[i].pidfd >= 0)
			close(r->rec[i].pidfd);
	free(r->rec);
	free(r->hash);
	lmkd_registry_init(r);
}

/* the hash slot holding pid, or the empty one where it would go */
static size_t hash_probe(const struct lmkd_registry *r, pid_t pid)
{
	size_t h = hash_pid(pid, r->hash_cap);

	while (r->hash[h] != NIL && r->rec[r->hash[h]].pid != pid)
		h = (h + 1) & (r->hash_cap - 1);
	return h;
}

struct lmkd_record *lmkd_registry_find(const struct lmkd_registry *r, pid_t pid)
{
	size_t h;

	if (!r->hash_cap)
		return NULL;
	h = hash_probe(r, pid);
	return r->hash[h] == NIL ? NULL : &r->rec[r->hash[h]];
}

size_t lmkd_registry_index(const struct lmkd_registry *r, const struct lmkd_record *rec)
{
	return (size_t)(rec - r->rec);
}

struct lmkd_record *lmkd_registry_at(const struct lmkd_registry *r, size_t i)
{
	return i < r->cap && r->rec[i].used ? &r->rec[i] : NULL;
}

/* Removes pid from the hash, shifting later entries of its run back so that
 * probing never meets a hole before them. */
static void hash_del(struct lmkd_registry *r, pid_t pid)
{
	size_t mask = r->hash_cap - 1, i = hash_probe(r, pid), j = i, k;

	if (r->hash[i] == NIL)
		return;
	for (;;) {
		r->hash[i] = NIL;
		do {
			j = (j + 1) & mask;
			if (r->hash[j] == NIL)
				return;
			k = hash_pid(r->rec[r->hash[j]].pid, r->hash_cap);
			/* j's entry may move to i only if its home k is not in (i, j] */
		} while (i <= j ? (i < k && k <= j) : (i < k || k <= j));
		r->hash[i] = r->hash[j];
		i = j;
	}
}

/* Room for one more record: the slot array and the hash (kept at most half
 * full) grow by doubling. */
static int grow(struct lmkd_registry *r)
{
	size_t cap = r->cap ? 2 * r->cap : 64, i;
	struct lmkd_record *rec;
	int32_t *hash;

	if (r->free_head != NIL)
		return 0;
	if (cap > INT32_MAX / 4)
		return -ENOMEM;
	rec = realloc(r->rec, cap * sizeof(*rec));
	if (!rec)
		return -ENOMEM;
	r->rec = rec;
	hash = malloc(2 * cap * sizeof(*hash));
	if (!hash)
		return -ENOMEM; /* the larger slot array is kept, unused */
	for (i = r->cap; i < cap; i++) {
		memset(&rec[i], 0, sizeof(rec[i]));
		rec[i].pidfd = -1;
		rec[i].next = i + 1 < cap ? (int32_t)(i + 1) : r->free_head;
	}
	r->free_head = (int32_t)r->cap;
	free(r->hash);
	r->hash = hash;
	r->hash_cap = 2 * cap;
	for (i = 0; i < r->hash_cap; i++)
		hash[i] = NIL;
	r->cap = cap;
	for (i = 0; i < cap; i++)
		if (rec[i].used)
			hash[hash_probe(r, rec[i].pid)] = (int32_t)i;
	return 0;
}

static void list_unlink(struct lmkd_registry *r, struct lmkd_record *x)
{
	r->gen++;
	if (x->prev != NIL)
		r->rec[x->prev].next = x->next;
	else
		r->head[slot_of_adj(x->adj)] = x->next;
	if (x->next != NIL)
		r->rec[x->next].prev = x->prev;
}

static void list_push(struct lmkd_registry *r, struct lmkd_record *x)
{
	int32_t i = (int32_t)lmkd_registry_index(r, x), *head = &r->head[slot_of_adj(x->adj)];

	r->gen++;
	x->prev = NIL;
	x->next = *head;
	if (*head != NIL)
		r->rec[*head].prev = i;
	*head = i;
}

int lmkd_registry_add(struct lmkd_registry *r, const struct lmkd_prio *p, pid_t owner, int pidfd, uint64_t start_time,
		      struct lmkd_record **out)
{
	struct lmkd_record *x;
	int32_t i;
	int e;

	if (lmkd_registry_find(r, p->pid))
		return -EEXIST;
	e = grow(r);
	if (e < 0)
		return e;
	i = r->free_head;
	x = &r->rec[i];
	r->free_head = x->next;
	*x = (struct lmkd_record){ .pid = p->pid, .uid = (uid_t)p->uid, .adj = (int16_t)p->adj,
				   .ptype = (int8_t)p->ptype, .used = true, .owner = owner, .pidfd = pidfd,
				   .start_time = start_time };
	list_push(r, x);
	r->hash[hash_probe(r, p->pid)] = i;
	r->n++;
	*out = x;
	return 0;
}

/* lmkd's claim: the owner, or anyone while nobody owns it (who then does) */
static bool claim(struct lmkd_record *x, pid_t who)
{
	if (x->owner == who)
		return true;
	if (x->owner != 0)
		return false;
	x->owner = who;
	return true;
}

int lmkd_registry_update(struct lmkd_registry *r, struct lmkd_record *rec, const struct lmkd_prio *p, pid_t owner)
{
	if (!claim(rec, owner))
		return -EPERM;
	list_unlink(r, rec);
	rec->adj = (int16_t)p->adj;
	rec->uid = (uid_t)p->uid;
	rec->ptype = (int8_t)p->ptype;
	list_push(r, rec);
	return 0;
}

void lmkd_registry_forget(struct lmkd_registry *r, struct lmkd_record *rec)
{
	int32_t i = (int32_t)lmkd_registry_index(r, rec);

	if (!rec->used)
		return;
	list_unlink(r, rec);
	hash_del(r, rec->pid);
	if (rec->pidfd >= 0)
		close(rec->pidfd);
	memset(rec, 0, sizeof(*rec));
	rec->pidfd = -1;
	rec->next = r->free_head;
	r->free_head = i;
	r->n--;
}

int lmkd_registry_remove(struct lmkd_registry *r, pid_t pid, pid_t requester)
{
	struct lmkd_record *x = lmkd_registry_find(r, pid);

	if (!x)
		return -ENOENT;
	if (x->owner != 0 && x->owner != requester)
		return -EPERM;
	lmkd_registry_forget(r, x);
	return 0;
}

size_t lmkd_registry_purge(struct lmkd_registry *r, pid_t requester)
{
	size_t i, n = 0;

	for (i = 0; i < r->cap; i++)
		if (r->rec[i].used && (r->rec[i].owner == 0 || r->rec[i].owner == requester)) {
			lmkd_registry_forget(r, &r->rec[i]);
			n++;
		}
	return n;
}

void lmkd_registry_disown(struct lmkd_registry *r, pid_t owner)
{
	size_t i;

	for (i = 0; i < r->cap; i++)
		if (r->rec[i].used && r->rec[i].owner == owner)
			r->rec[i].owner = 0;
}

void lmkd_registry_count_kill(struct lmkd_registry *r, int adj)
{
	if (adj < LMKD_ADJ_MIN || adj > LMKD_ADJ_MAX)
		return;
	r->kills[slot_of_adj(adj)]++;
	r->kills_total++;
}

uint64_t lmkd_registry_kill_count(const struct lmkd_registry *r, int32_t min_adj, int32_t max_adj)
{
	uint64_t n = 0;
	int32_t a;

	if (min_adj > LMKD_ADJ_MAX)
		return r->kills_total;
	if (min_adj < LMKD_ADJ_MIN)
		min_adj = LMKD_ADJ_MIN;
	if (max_adj > LMKD_ADJ_MAX)
		max_adj = LMKD_ADJ_MAX;
	for (a = min_adj; a <= max_adj; a++)
		n += r->kills[slot_of_adj(a)];
	return n;
}

/* One pass over the adj lists from 1000 down to the band's floor. */
static int choose_pass(const struct lmkd_registry *r, const struct victim_filter *f, bool whole, lmkd_read_fn read,
		       void *ctx, struct kill_pick *p, unsigned *reads)
{
	int adj, floor = f->min_adj < LMKD_ADJ_MIN ? LMKD_ADJ_MIN : f->min_adj, e;
	int32_t i;

	for (adj = LMKD_ADJ_MAX; adj >= floor; adj--) {
		for (i = r->head[slot_of_adj(adj)]; i != NIL; i = r->rec[i].next) {
			e = read(ctx, &r->rec[i], &p->scratch);
			(*reads)++;
			if (e == -ESRCH || e == -ENOENT)
				continue;
			if (e < 0)
				return e;
			p->scratch.oom_score_adj = adj; /* lmkd's view: the lmkd-only adj counts */
			victim_offer(f, &p->pick, &p->scratch);
		}
		if (p->pick.found && !whole)
			break;
	}
	return 0;
}

int lmkd_registry_choose(const struct lmkd_registry *r, const struct victim_filter *f, bool whole, lmkd_read_fn read,
			 void *ctx, struct kill_pick *p, unsigned *reads)
{
	struct victim_filter owner = *f;
	unsigned candidates;
	int e;

	memset(&p->pick, 0, sizeof(p->pick));
	p->owner_pass = false;
	*reads = 0;
	e = choose_pass(r, f, whole, read, ctx, p, reads);
	if (e < 0 || !p->pick.found || !p->pick.best.shield_ignored)
		return e;
	/* as pick.c: a shield the winner's owner could forge orders only that
	 * owner's processes */
	p->owner_pass = true;
	p->first = p->pick.best;
	candidates = p->pick.candidates;
	memset(&p->pick, 0, sizeof(p->pick));
	owner.all_shields = true;
	owner.owner_only = true;
	owner.owner = p->first.uid;
	e = choose_pass(r, &owner, true, read, ctx, p, reads);
	if (e < 0)
		return e;
	if (!p->pick.found) {
		p->pick.best = p->first;
		p->pick.found = true;
	}
	p->pick.candidates = candidates;
	return 0;
}
