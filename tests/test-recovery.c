/* SPDX-License-Identifier: MIT */
/* test-recovery: after a kill, the stall of recovery (pages read back in)
 * is held back, and a shortage -- low available memory or swap, a footprint
 * that grows again, the kernel reclaiming again, a v1 group at its limit --
 * is evidence for another kill (issue 27 item 3). Pure; the killer's use of
 * it is in test-kill. */
#include <string.h>

#include "cunit-tap.h"
#include "recovery.h"

#define MIB (1ULL << 20)
#define SEC 1000000ULL

/* 1 GiB of RAM, 600 MiB available after the kill, a 1 GiB swap disk half
 * used by the survivors' pages, reclaim counters known */
static struct mem_info after_kill(void)
{
	return (struct mem_info){ .total_bytes = 1024 * MIB, .available_bytes = 600 * MIB,
				  .swap_total_bytes = 1024 * MIB, .swap_free_bytes = 512 * MIB,
				  .anon_bytes = 300 * MIB, .anon_known = true, .footprint_bytes = 812 * MIB,
				  .unused_bytes = 550 * MIB, .reclaimed_bytes = 5000 * MIB, .reclaim_known = true };
}

static int judge(struct recovery *r, const struct mem_info *mi, char *why)
{
	return recovery_short(r, mi, recovery_floor(mi->total_bytes, 51 * MIB), why, 256);
}

/* the scenario: the survivors read 200 MiB back from swap, the
 * stall is high, but nothing is short: held, again and again */
static void test_swap_in_is_recovery(void)
{
	struct recovery r;
	struct mem_info mi = after_kill();
	char why[256];

	recovery_start(&r, 100 * SEC);
	CU_ASSERT_TRUE(recovery_fire(&r, 101 * SEC));
	CU_ASSERT_EQUAL(judge(&r, &mi, why), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "swap has room"));
	/* 200 MiB swapped in: anon up, swap still allocated, now swap cache */
	mi.anon_bytes += 200 * MIB;
	mi.available_bytes -= 200 * MIB;
	mi.unused_bytes -= 200 * MIB;
	CU_ASSERT_TRUE(recovery_fire(&r, 102 * SEC));
	CU_ASSERT_EQUAL(judge(&r, &mi, why), 0);
	CU_ASSERT_TRUE(recovery_fire(&r, 106 * SEC)); /* 4 s since the last fire: still on */
	CU_ASSERT_EQUAL(judge(&r, &mi, why), 0);
}

/* a second culprit: the footprint grows 2 % of the domain above its least */
static void test_growth_is_evidence(void)
{
	struct recovery r;
	struct mem_info mi = after_kill();
	char why[256];

	recovery_start(&r, 0);
	CU_ASSERT_EQUAL(judge(&r, &mi, why), 0);
	mi.footprint_bytes -= 30 * MIB; /* the rest of the victim freed: a lower base */
	CU_ASSERT_EQUAL(judge(&r, &mi, why), 0);
	mi.footprint_bytes += 20 * MIB; /* 20 MiB over the least: 2 % is 20.48 */
	CU_ASSERT_EQUAL(judge(&r, &mi, why), 0);
	mi.footprint_bytes += MIB;
	CU_ASSERT_EQUAL(judge(&r, &mi, why), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "footprint grew 21.0 MiB"));
}

/* file thrash goes on after the kill: the kernel keeps evicting */
static void test_reclaim_is_evidence(void)
{
	struct recovery r;
	struct mem_info mi = after_kill();
	char why[256];

	recovery_start(&r, 0);
	CU_ASSERT_EQUAL(judge(&r, &mi, why), 0);
	mi.reclaimed_bytes += 20 * MIB;
	CU_ASSERT_EQUAL(judge(&r, &mi, why), 0);
	mi.reclaimed_bytes += 2 * MIB;
	CU_ASSERT_EQUAL(judge(&r, &mi, why), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "reclaimed 22.0 MiB"));
}

/* low available memory, or low free swap, is evidence at once */
static void test_low_is_evidence(void)
{
	struct recovery r;
	struct mem_info mi = after_kill();
	char why[256];

	recovery_start(&r, 0);
	mi.available_bytes = 100 * MIB; /* floor: 10 % of 1 GiB = 102.4 MiB */
	CU_ASSERT_EQUAL(judge(&r, &mi, why), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "available memory 100.0 MiB is below 102.4 MiB"));
	CU_ASSERT_EQUAL(recovery_floor(1024 * MIB, 200 * MIB), 200 * MIB); /* a higher low_available counts */
	mi = after_kill();
	mi.swap_free_bytes = 100 * MIB; /* default low_swap: 10 % */
	CU_ASSERT_EQUAL(judge(&r, &mi, why), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "free swap"));
	/* no swap is no evidence by itself */
	mi = after_kill();
	mi.swap_total_bytes = mi.swap_free_bytes = 0;
	CU_ASSERT_EQUAL(judge(&r, &mi, why), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "no swap"));
}

/* a v1 group has no reclaim counter: at its limit is evidence */
static void test_v1_group(void)
{
	struct recovery r;
	struct mem_info mi = after_kill();
	char why[256];

	mi.cgroup = true;
	mi.reclaim_known = false;
	mi.reclaimed_bytes = 0;
	recovery_start(&r, 0);
	CU_ASSERT_EQUAL(judge(&r, &mi, why), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "the group has room"));
	mi.unused_bytes = 10 * MIB; /* < 1 % of 1 GiB */
	CU_ASSERT_EQUAL(judge(&r, &mi, why), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "at its limit"));
}

/* recovery ends when the tiers were quiet for RECOVERY_QUIET_US, and a new
 * death starts it again with a new base */
static void test_quiet_ends_it(void)
{
	struct recovery r;
	struct mem_info mi = after_kill();
	char why[256];

	memset(&r, 0, sizeof(r));
	CU_ASSERT_FALSE(recovery_fire(&r, 5 * SEC)); /* no kill yet */
	recovery_start(&r, 10 * SEC);
	CU_ASSERT_TRUE(recovery_fire(&r, 10 * SEC + RECOVERY_QUIET_US));
	CU_ASSERT_FALSE(recovery_fire(&r, 10 * SEC + 2 * RECOVERY_QUIET_US + 1));
	CU_ASSERT_FALSE(recovery_fire(&r, 30 * SEC));
	CU_ASSERT_EQUAL(judge(&r, &mi, why), 0);
	recovery_start(&r, 40 * SEC);
	CU_ASSERT_FALSE(r.based);
	CU_ASSERT_TRUE(recovery_fire(&r, 41 * SEC));
}

/* the footprint unknown (no AnonPages): growth is no evidence, the rest is */
static void test_unknown_footprint(void)
{
	struct recovery r;
	struct mem_info mi = after_kill();
	char why[256];

	mi.anon_known = false;
	recovery_start(&r, 0);
	CU_ASSERT_EQUAL(judge(&r, &mi, why), 0);
	mi.footprint_bytes += 500 * MIB;
	CU_ASSERT_EQUAL(judge(&r, &mi, why), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "unknown"));
	mi.reclaimed_bytes += 100 * MIB;
	CU_ASSERT_EQUAL(judge(&r, &mi, why), 1);
}

int main(void)
{
	static CU_TestInfo tests[] = {
		{ "swap-in after the kill is recovery", test_swap_in_is_recovery },
		{ "a growing footprint is evidence", test_growth_is_evidence },
		{ "reclaim after the kill is evidence", test_reclaim_is_evidence },
		{ "low available memory or swap is evidence", test_low_is_evidence },
		{ "a v1 group at its limit is evidence", test_v1_group },
		{ "quiet tiers end the recovery", test_quiet_ends_it },
		{ "an unknown footprint is no evidence", test_unknown_footprint },
		CU_TEST_INFO_NULL,
	};
	static CU_SuiteInfo suites[] = {
		{ "recovery", NULL, NULL, NULL, NULL, tests },
		CU_SUITE_INFO_NULL,
	};

	return cunit_tap_main(suites);
}
