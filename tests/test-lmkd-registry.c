/* SPDX-License-Identifier: MIT */
/* test-lmkd-registry: the registry of the lmkd socket's processes: records
 * by pid through growth and removal, lmkd's ownership rules, the kill counts
 * GETKILLCNT answers, and the victim choice from the adj lists with a fake
 * process reader. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cunit-tap.h"
#include "lmkd-registry.h"

static struct lmkd_record *add(struct lmkd_registry *r, pid_t pid, int adj, pid_t owner)
{
	struct lmkd_prio p = { .pid = pid, .uid = 10000 + pid, .adj = adj };
	struct lmkd_record *x = NULL;

	CU_ASSERT_EQUAL(lmkd_registry_add(r, &p, owner, -1, 1000 + (uint64_t)pid, &x), 0);
	return x;
}

static void test_add_find(void)
{
	struct lmkd_registry r;
	struct lmkd_prio p = { .pid = 5, .adj = 0 };
	struct lmkd_record *x;
	pid_t pid;

	lmkd_registry_init(&r);
	CU_ASSERT_PTR_NULL(lmkd_registry_find(&r, 5));
	/* enough to grow several times, pids that collide in the hash */
	for (pid = 1; pid <= 5000; pid++)
		add(&r, pid * 1024, (int)(pid % 2001) - 1000, 1);
	CU_ASSERT_EQUAL(r.n, 5000);
	for (pid = 1; pid <= 5000; pid++) {
		x = lmkd_registry_find(&r, pid * 1024);
		CU_ASSERT_PTR_NOT_NULL_FATAL(x);
		CU_ASSERT_EQUAL(x->adj, (int)(pid % 2001) - 1000);
		CU_ASSERT_PTR_EQUAL(lmkd_registry_at(&r, lmkd_registry_index(&r, x)), x);
	}
	CU_ASSERT_EQUAL(lmkd_registry_add(&r, &(struct lmkd_prio){ .pid = 1024 }, 1, -1, 0, &x), -EEXIST);
	/* every other one goes; the rest are still found */
	for (pid = 1; pid <= 5000; pid += 2)
		CU_ASSERT_EQUAL(lmkd_registry_remove(&r, pid * 1024, 1), 0);
	CU_ASSERT_EQUAL(r.n, 2500);
	for (pid = 1; pid <= 5000; pid++)
		CU_ASSERT_EQUAL(lmkd_registry_find(&r, pid * 1024) != NULL, pid % 2 == 0);
	CU_ASSERT_EQUAL(lmkd_registry_remove(&r, 1024, 1), -ENOENT);
	/* freed slots are used again */
	CU_ASSERT_EQUAL(lmkd_registry_add(&r, &p, 1, -1, 0, &x), 0);
	CU_ASSERT_PTR_NULL(lmkd_registry_at(&r, r.cap));
	lmkd_registry_free(&r);
	CU_ASSERT_EQUAL(r.n, 0);
	CU_ASSERT_PTR_NULL(lmkd_registry_find(&r, 5));
}

static void test_ownership(void)
{
	struct lmkd_registry r;
	struct lmkd_prio p = { .pid = 10, .uid = 1, .adj = 900 };
	struct lmkd_record *a, *b, *c;

	lmkd_registry_init(&r);
	a = add(&r, 10, 900, 100); /* the framework's (client pid 100) */
	b = add(&r, 11, -900, 200); /* init's service (client pid 200) */
	c = add(&r, 12, 905, 100);
	/* another client may not move or remove a record it does not own */
	p.adj = 950;
	CU_ASSERT_EQUAL(lmkd_registry_update(&r, a, &p, 200), -EPERM);
	CU_ASSERT_EQUAL(a->adj, 900);
	CU_ASSERT_EQUAL(lmkd_registry_update(&r, a, &p, 100), 0);
	CU_ASSERT_EQUAL(a->adj, 950);
	CU_ASSERT_EQUAL(lmkd_registry_remove(&r, 11, 100), -EPERM);
	CU_ASSERT_PTR_NOT_NULL(lmkd_registry_find(&r, 11));
	/* the framework reconnects: its old records are unowned until claimed */
	lmkd_registry_disown(&r, 100);
	CU_ASSERT_EQUAL(a->owner, 0);
	CU_ASSERT_EQUAL(b->owner, 200);
	p.pid = 12;
	p.adj = 999;
	CU_ASSERT_EQUAL(lmkd_registry_update(&r, c, &p, 300), 0);
	CU_ASSERT_EQUAL(c->owner, 300);
	CU_ASSERT_EQUAL(c->adj, 999);
	/* PURGE by 300: its record and the unowned one; init's stays */
	add(&r, 13, 0, 400);
	CU_ASSERT_EQUAL(lmkd_registry_purge(&r, 300), 2);
	CU_ASSERT_PTR_NULL(lmkd_registry_find(&r, 10));
	CU_ASSERT_PTR_NULL(lmkd_registry_find(&r, 12));
	CU_ASSERT_PTR_NOT_NULL(lmkd_registry_find(&r, 11));
	CU_ASSERT_PTR_NOT_NULL(lmkd_registry_find(&r, 13));
	/* an unowned record may be removed by anyone */
	lmkd_registry_disown(&r, 400);
	CU_ASSERT_EQUAL(lmkd_registry_remove(&r, 13, 999), 0);
	CU_ASSERT_EQUAL(lmkd_registry_remove(&r, 11, 200), 0);
	CU_ASSERT_EQUAL(r.n, 0);
	lmkd_registry_free(&r);
}

static void test_kill_count(void)
{
	struct lmkd_registry r;

	lmkd_registry_init(&r);
	CU_ASSERT_EQUAL(lmkd_registry_kill_count(&r, -1000, 1000), 0);
	lmkd_registry_count_kill(&r, 1000);
	lmkd_registry_count_kill(&r, 900);
	lmkd_registry_count_kill(&r, 900);
	lmkd_registry_count_kill(&r, -1000);
	lmkd_registry_count_kill(&r, 1001); /* outside: not counted */
	CU_ASSERT_EQUAL(lmkd_registry_kill_count(&r, -1000, 1000), 4);
	CU_ASSERT_EQUAL(lmkd_registry_kill_count(&r, 900, 900), 2);
	CU_ASSERT_EQUAL(lmkd_registry_kill_count(&r, 901, 999), 0);
	CU_ASSERT_EQUAL(lmkd_registry_kill_count(&r, 900, 1000), 3);
	/* min > 1000: the total, whatever max */
	CU_ASSERT_EQUAL(lmkd_registry_kill_count(&r, 1001, 0), 4);
	CU_ASSERT_EQUAL(lmkd_registry_kill_count(&r, INT32_MAX, INT32_MIN), 4);
	/* empty range, and clamped ends */
	CU_ASSERT_EQUAL(lmkd_registry_kill_count(&r, 1000, 900), 0);
	CU_ASSERT_EQUAL(lmkd_registry_kill_count(&r, INT32_MIN, INT32_MAX), 4);
	CU_ASSERT_EQUAL(lmkd_registry_kill_count(&r, -5000, -1000), 1);
	lmkd_registry_free(&r);
}

/* the fake /proc: pid -> rss; pids in gone[] have exited */
struct fake {
	uint64_t rss[64];
	bool gone[64];
	unsigned reads;
	int fail_pid;
};

static int fake_read(void *ctx, const struct lmkd_record *rec, struct proc_info *pi)
{
	struct fake *f = ctx;

	f->reads++;
	if (rec->pid == f->fail_pid)
		return -EMFILE;
	if (f->gone[rec->pid])
		return -ESRCH;
	memset(pi, 0, sizeof(*pi));
	pi->pid = rec->pid;
	pi->uid = rec->uid;
	pi->uids[0] = pi->uids[1] = pi->uids[2] = pi->uids[3] = rec->uid;
	pi->rss_kb = f->rss[rec->pid];
	pi->start_time = rec->start_time;
	pi->state = 'S';
	pi->oom_score_adj = -42; /* the record's adj wins */
	snprintf(pi->comm, sizeof(pi->comm), "p%d", (int)rec->pid);
	return 0;
}

static void test_choose(void)
{
	static struct kill_pick p;
	struct lmkd_registry r;
	struct victim_filter f = { .min_adj = 800, .self = 1, .scope = "/", .trusted_uid_max = 9999 };
	struct fake fk = { .fail_pid = -1 };
	unsigned reads;

	lmkd_registry_init(&r);
	add(&r, 2, 0, 1);
	add(&r, 3, 900, 1);
	add(&r, 4, 900, 1);
	add(&r, 5, 999, 1);
	add(&r, 6, 700, 1);
	fk.rss[2] = 900000;
	fk.rss[3] = 100;
	fk.rss[4] = 200;
	fk.rss[5] = 10;
	fk.rss[6] = 800000;
	/* the highest adj wins however small; lower lists are not read */
	CU_ASSERT_EQUAL(lmkd_registry_choose(&r, &f, false, fake_read, &fk, &p, &reads), 0);
	CU_ASSERT_TRUE_FATAL(p.pick.found);
	CU_ASSERT_EQUAL(p.pick.best.pid, 5);
	CU_ASSERT_EQUAL(p.pick.best.oom_score_adj, 999);
	CU_ASSERT_EQUAL(reads, 1);
	/* that one exits: within one adj, the largest */
	fk.gone[5] = true;
	CU_ASSERT_EQUAL(lmkd_registry_choose(&r, &f, false, fake_read, &fk, &p, &reads), 0);
	CU_ASSERT_EQUAL(p.pick.best.pid, 4);
	CU_ASSERT_EQUAL(reads, 3);
	/* a whole walk reads the band and finds the same */
	CU_ASSERT_EQUAL(lmkd_registry_choose(&r, &f, true, fake_read, &fk, &p, &reads), 0);
	CU_ASSERT_EQUAL(p.pick.best.pid, 4);
	CU_ASSERT_EQUAL(reads, 3);
	CU_ASSERT_EQUAL(p.pick.candidates, 2);
	/* nothing in the band */
	f.min_adj = 1000;
	CU_ASSERT_EQUAL(lmkd_registry_choose(&r, &f, false, fake_read, &fk, &p, &reads), 0);
	CU_ASSERT_FALSE(p.pick.found);
	/* the exclusions of victim.c apply: the daemon itself, min_rss */
	f.min_adj = 0;
	f.self = 4;
	CU_ASSERT_EQUAL(lmkd_registry_choose(&r, &f, false, fake_read, &fk, &p, &reads), 0);
	CU_ASSERT_EQUAL(p.pick.best.pid, 3);
	/* a reader that runs out of fds fails the choice */
	fk.fail_pid = 3;
	CU_ASSERT_EQUAL(lmkd_registry_choose(&r, &f, false, fake_read, &fk, &p, &reads), -EMFILE);
	lmkd_registry_free(&r);
}

int main(void)
{
	static CU_TestInfo tests[] = {
		{ "records by pid through growth and removal", test_add_find },
		{ "lmkd's ownership rules: update, remove, purge, disconnect", test_ownership },
		{ "kill counts for GETKILLCNT, special ranges", test_kill_count },
		{ "victim choice: highest adj, then size, without /proc scan", test_choose },
		CU_TEST_INFO_NULL,
	};
	static CU_SuiteInfo suites[] = {
		{ "lmkd-registry", NULL, NULL, NULL, NULL, tests },
		CU_SUITE_INFO_NULL,
	};

	return cunit_tap_main(suites);
}
