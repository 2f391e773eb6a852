/* SPDX-License-Identifier: MIT */
/* test-growth: the size samples a victim choice measures growth from
 * (growth.h): the largest processes are kept, the floor describes the
 * rest, a process not kept never grows more than it did, and two samples
 * rotate so that growth is measured over several seconds (issue 27 item 4).
 * Pure; the choice that uses them is in test-victim and test-pick-fast. */
#include <string.h>

#include "cunit-tap.h"
#include "growth.h"

#define SEC 1000000ULL

/* kept processes measure from their size then; others from the floor;
 * a new process with a reused pid measures from the floor too */
static void test_lookup(void)
{
	static struct growth_sample s;

	growth_sample_begin(&s, 1000, 5 * SEC, 500, false);
	growth_sample_add(&s, 30, 7, 5000);
	growth_sample_add(&s, 10, 7, 2000);
	growth_sample_add(&s, 20, 7, 999); /* below the floor */
	growth_sample_add(&s, 40, 7, 1000);
	CU_ASSERT_FALSE(s.valid);
	growth_sample_end(&s);
	CU_ASSERT_TRUE(s.valid);
	CU_ASSERT_EQUAL(s.n, 3);
	CU_ASSERT_EQUAL(growth_kb(&s, 30, 7, 9000), 4000);
	CU_ASSERT_EQUAL(growth_kb(&s, 10, 7, 2500), 500);
	CU_ASSERT_EQUAL(growth_kb(&s, 10, 7, 1500), 0); /* shrank */
	CU_ASSERT_EQUAL(growth_kb(&s, 20, 7, 3000), 2000);
	CU_ASSERT_EQUAL(growth_kb(&s, 40, 7, 1000), 0);
	CU_ASSERT_EQUAL(growth_kb(&s, 30, 8, 9000), 8000); /* pid reused, before the sample */
	CU_ASSERT_EQUAL(growth_kb(&s, 30, 501, 9000), 9000); /* pid reused, since */
	CU_ASSERT_EQUAL(growth_kb(&s, 99, 1, 900), 0);
	CU_ASSERT_EQUAL(growth_kb(&s, 99, 501, 900), 900); /* started since: all of it */
	s.ticks = 0; /* when the sample was taken is unknown: from the floor */
	CU_ASSERT_EQUAL(growth_kb(&s, 99, 501, 900), 0);
}

/* more processes than entries: the largest stay, and the floor rises above
 * every one that was not kept, so none of them grows more than it did */
static void test_full(void)
{
	static struct growth_sample s;
	uint64_t size[3 * GROWTH_ENTRIES];
	size_t i, kept_big = 0;

	growth_sample_begin(&s, 10, 0, 0, false);
	for (i = 0; i < 3 * GROWTH_ENTRIES; i++) {
		size[i] = 10 + (i * 7919) % 5000; /* a scrambled order, with ties */
		growth_sample_add(&s, (pid_t)(i + 1), 1, size[i]);
	}
	growth_sample_end(&s);
	CU_ASSERT(s.n <= GROWTH_ENTRIES);
	CU_ASSERT(s.n >= GROWTH_ENTRIES - 8); /* only the ties at the floor drop out */
	for (i = 1; i < s.n; i++)
		CU_ASSERT(s.e[i - 1].pid < s.e[i].pid);
	for (i = 0; i < 3 * GROWTH_ENTRIES; i++) {
		/* grown by 100 kB: a kept one says 100, any other at most 100 */
		uint64_t g = growth_kb(&s, (pid_t)(i + 1), 1, size[i] + 100);

		CU_ASSERT(g <= 100);
		if (size[i] >= s.floor_kb) {
			CU_ASSERT_EQUAL(g, 100);
			kept_big++;
		}
	}
	CU_ASSERT_EQUAL(kept_big, s.n);
}

/* reads (a count since the start) are kept by pid alone, the largest in
 * GROWTH_READERS places: a kept process measures from its count then, any
 * other (a pid reused since, one started since) from the floor, never more
 * than its own count; none without reads sampled */
static void test_reads(void)
{
	static struct growth_sample s;
	size_t i;

	growth_sample_begin(&s, 1000, 5 * SEC, 500, true);
	growth_sample_add_reads(&s, 30, 70000);
	growth_sample_add_reads(&s, 10, 0);
	growth_sample_end(&s);
	CU_ASSERT_EQUAL(s.nr, 2);
	CU_ASSERT_EQUAL(growth_read_kb(&s, 30, 90000), 20000);
	CU_ASSERT_EQUAL(growth_read_kb(&s, 10, 4000), 4000);
	CU_ASSERT_EQUAL(growth_read_kb(&s, 30, 75000), 5000); /* a pid reused: from its predecessor's */
	CU_ASSERT_EQUAL(growth_read_kb(&s, 30, 5000), 0);
	CU_ASSERT_EQUAL(growth_read_kb(&s, 99, 900), 900); /* not kept and the sample not full: the floor is 0 */

	growth_sample_begin(&s, 1000, 5 * SEC, 500, true);
	for (i = 0; i < 3 * GROWTH_READERS; i++)
		growth_sample_add_reads(&s, (pid_t)(i + 1), 10 + (i * 7919) % 5000);
	growth_sample_end(&s);
	CU_ASSERT(s.nr <= GROWTH_READERS);
	CU_ASSERT(s.read_floor_kb > 10);
	for (i = 0; i < 3 * GROWTH_READERS; i++) {
		uint64_t then = 10 + (i * 7919) % 5000, g = growth_read_kb(&s, (pid_t)(i + 1), then + 100);

		CU_ASSERT(g <= 100);
		if (then >= s.read_floor_kb)
			CU_ASSERT_EQUAL(g, 100);
	}

	growth_sample_begin(&s, 1000, 5 * SEC, 500, false);
	growth_sample_add_reads(&s, 30, 70000);
	growth_sample_end(&s);
	CU_ASSERT_EQUAL(s.nr, 0);
	CU_ASSERT_EQUAL(growth_read_kb(&s, 30, 90000), 0);
}

/* the newer sample is refreshed every GROWTH_REFRESH_US; a choice measures
 * from the older one while it is young enough */
static void test_rotation(void)
{
	static struct growth_track t;
	struct growth_sample *s;

	memset(&t, 0, sizeof(t));
	CU_ASSERT_PTR_NULL(growth_base(&t, 10 * SEC));
	s = growth_due(&t, 10 * SEC);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	growth_sample_begin(s, 1, 10 * SEC, 0, false);
	growth_sample_end(s);
	growth_commit(&t, s);
	CU_ASSERT_PTR_NULL(growth_base(&t, 10 * SEC)); /* taken just now: no growth to see */
	CU_ASSERT_PTR_EQUAL(growth_base(&t, 11 * SEC), s);
	CU_ASSERT_PTR_NULL(growth_due(&t, 10 * SEC + GROWTH_REFRESH_US - 1));
	s = growth_due(&t, 10 * SEC + GROWTH_REFRESH_US);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_PTR_NOT_EQUAL(s, &t.s[t.newer]);
	growth_sample_begin(s, 1, 15 * SEC, 0, false);
	growth_sample_end(s);
	growth_commit(&t, s);
	CU_ASSERT_PTR_EQUAL(&t.s[t.newer], s);
	/* the older (10 s) one is the base, until it is too old */
	CU_ASSERT_EQUAL(growth_base(&t, 16 * SEC)->at_us, 10 * SEC);
	CU_ASSERT_EQUAL(growth_base(&t, 10 * SEC + GROWTH_MAX_AGE_US + 1)->at_us, 15 * SEC);
	CU_ASSERT_PTR_NULL(growth_base(&t, 15 * SEC + GROWTH_MAX_AGE_US + 1));
	/* a sample that failed half-way is no base */
	s = growth_due(&t, 21 * SEC);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	growth_sample_begin(s, 1, 21 * SEC, 0, false);
	growth_commit(&t, s);
	CU_ASSERT_EQUAL(growth_base(&t, 22 * SEC)->at_us, 15 * SEC);
}

int main(void)
{
	static CU_TestInfo tests[] = {
		{ "growth is measured from the size then, or the floor", test_lookup },
		{ "a full sample keeps the largest, the floor the rest", test_full },
		{ "reads are measured from the count then, or the floor", test_reads },
		{ "two samples rotate", test_rotation },
		CU_TEST_INFO_NULL,
	};
	static CU_SuiteInfo suites[] = {
		{ "growth", NULL, NULL, NULL, NULL, tests },
		CU_SUITE_INFO_NULL,
	};

	return cunit_tap_main(suites);
}
