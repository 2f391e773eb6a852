/* SPDX-License-Identifier: MIT */
/* lmkd-registry: the processes the Android framework (and init) registered
 * through the lmkd socket: pid, uid, adj, type, the connection that owns the
 * record, and the pidfd and start time that pin its identity. Records sit in
 * one list per adj, so a victim choice walks them from adj 1000 down without
 * scanning /proc; a hash finds them by pid. It also keeps lmkd's kill counts
 * per adj for GETKILLCNT. The ownership rules are lmkd's: a record belongs to
 * the client (by its pid) that registered it, until that client disconnects
 * and leaves it unowned; only its owner, or anyone while unowned, may change
 * or remove it. No I/O, except that the registry closes the pidfds it owns. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lmkd-proto.h"
#include "pick.h"
#include "victim.h"

#define LMKD_ADJ_SLOTS (LMKD_ADJ_MAX - LMKD_ADJ_MIN + 1)

struct lmkd_record {
	pid_t pid;
	uid_t uid;
	int16_t adj;
	int8_t ptype;
	bool used;
	pid_t owner;         /* the registering client's pid; 0 = unowned */
	int pidfd;           /* -1: none (pidfd_open failed or not wanted) */
	uint64_t start_time; /* /proc/PID/stat start time at registration */
	int32_t prev, next;  /* this adj's list; in the free list, next only */
};

struct lmkd_registry {
	struct lmkd_record *rec;
	size_t cap, n;
	int32_t free_head;
	int32_t *hash; /* slot index or -1; linear probing */
	size_t hash_cap;
	int32_t head[LMKD_ADJ_SLOTS];
	uint64_t kills[LMKD_ADJ_SLOTS];
	uint64_t kills_total;
	uint64_t gen; /* changes with every record added, moved to another adj or forgotten */
};

void lmkd_registry_init(struct lmkd_registry *r);
/* Forgets every record, closing their pidfds. */
void lmkd_registry_free(struct lmkd_registry *r);

struct lmkd_record *lmkd_registry_find(const struct lmkd_registry *r, pid_t pid);
/* Index of a record, for epoll tags; lmkd_registry_at(r, i) gives it back
 * (NULL if that slot is empty). */
size_t lmkd_registry_index(const struct lmkd_registry *r, const struct lmkd_record *rec);
struct lmkd_record *lmkd_registry_at(const struct lmkd_registry *r, size_t i);

/* A new record (p->pid unknown), owned by owner, taking over pidfd. 0,
 * -EEXIST, or -ENOMEM (pidfd not taken). *out: the record. */
int lmkd_registry_add(struct lmkd_registry *r, const struct lmkd_prio *p, pid_t owner, int pidfd, uint64_t start_time,
		      struct lmkd_record **out);
/* An update from client owner: claims an unowned record, moves it to p's
 * adj. -EPERM when another client owns it (nothing changes). */
int lmkd_registry_update(struct lmkd_registry *r, struct lmkd_record *rec, const struct lmkd_prio *p, pid_t owner);
/* PROCREMOVE from requester: 0, -ENOENT (unknown pid), -EPERM (another
 * client's record, kept). */
int lmkd_registry_remove(struct lmkd_registry *r, pid_t pid, pid_t requester);
/* PROCPURGE: removes requester's records and the unowned ones; returns how
 * many. */
size_t lmkd_registry_purge(struct lmkd_registry *r, pid_t requester);
/* A client went away: its records stay, unowned. */
void lmkd_registry_disown(struct lmkd_registry *r, pid_t owner);
/* Forgets a record whatever its owner (the process died, or was killed). */
void lmkd_registry_forget(struct lmkd_registry *r, struct lmkd_record *rec);

/* A kill of a process registered at adj. */
void lmkd_registry_count_kill(struct lmkd_registry *r, int adj);
/* GETKILLCNT: the kills with adj in [min_adj, max_adj] (clamped to the adj
 * range); min_adj > 1000 asks for the total; an empty range counts 0. */
uint64_t lmkd_registry_kill_count(const struct lmkd_registry *r, int32_t min_adj, int32_t max_adj);

/* Reads the process behind rec into pi (its RSS, state, cgroup, ...); the
 * choice then takes the adj from the record. 0, or -errno: -ESRCH when it
 * is gone or the pid names another process now (the choice skips it), any
 * other error fails the choice. */
typedef int (*lmkd_read_fn)(void *ctx, const struct lmkd_record *rec, struct proc_info *pi);

/* The victim choice among registered processes, with f's rules (band,
 * self, exclusions, shields, min_rss, order): adj lists from 1000 down to
 * f->min_adj. When f orders by adj and no prefer/avoid rule can reorder
 * (whole false), the first list that yields a candidate ends the walk:
 * lower adj cannot win. Leaves the winner in p->pick, and in p->owner_pass /
 * p->first what pick.h says of a shield its owner could forge. *reads
 * counts the processes read. 0 or the reader's -errno. */
int lmkd_registry_choose(const struct lmkd_registry *r, const struct victim_filter *f, bool whole, lmkd_read_fn read,
			 void *ctx, struct kill_pick *p, unsigned *reads);
