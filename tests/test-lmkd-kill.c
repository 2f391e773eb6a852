/* SPDX-License-Identifier: MIT */
/* test-lmkd-kill: psi-lmkd's kill causes as lmkd's kill_reason codes (the
 * numbers of lmkd's statslog.h, checked in the KILL_OCCURRED packet byte
 * by byte), their descriptions, and lmkd's kill line as lmkd writes it. */
#include <stdio.h>
#include <string.h>

#include "cunit-tap.h"
#include "lmkd-kill.h"
#include "lmkd-proto.h"
#include "memory.h"

#define MiB (1024ULL * 1024)

static struct tier_config tier(const char *name, enum psi_state st, uint64_t stall_ms, uint64_t window_ms)
{
	struct tier_config t = { .state = st, .stall_us = stall_ms * 1000, .window_us = window_ms * 1000 };

	snprintf(t.name, sizeof(t.name), "%s", name);
	return t;
}

/* lmkd's numbering, from its statslog.h */
static void test_codes(void)
{
	CU_ASSERT_EQUAL(LMKD_REASON_NONE, -1);
	CU_ASSERT_EQUAL(LMKD_REASON_PRESSURE_AFTER_KILL, 0);
	CU_ASSERT_EQUAL(LMKD_REASON_NOT_RESPONDING, 1);
	CU_ASSERT_EQUAL(LMKD_REASON_LOW_SWAP_AND_THRASHING, 2);
	CU_ASSERT_EQUAL(LMKD_REASON_LOW_MEM_AND_SWAP, 3);
	CU_ASSERT_EQUAL(LMKD_REASON_LOW_MEM_AND_THRASHING, 4);
	CU_ASSERT_EQUAL(LMKD_REASON_DIRECT_RECL_AND_THRASHING, 5);
	CU_ASSERT_EQUAL(LMKD_REASON_LOW_MEM_AND_SWAP_UTIL, 6);
	CU_ASSERT_EQUAL(LMKD_REASON_LOW_FILECACHE_AFTER_THRASHING, 7);
	CU_ASSERT_EQUAL(LMKD_REASON_LOW_MEM, 8);
	CU_ASSERT_EQUAL(LMKD_REASON_DIRECT_RECL_STUCK, 9);
}

/* the reason as the STAT packet carries it: big-endian at offset 72 */
static void assert_wire(int32_t reason, const uint8_t want[4])
{
	uint8_t buf[LMKD_PACKET_MAX];
	struct lmkd_kill_stat s = { .pgfault = -1, .pgmajfault = -1, .rss_bytes = -1, .cache_bytes = -1,
				    .swap_bytes = -1, .start_time_ns = -1, .uid = 10061, .oom_score = 900,
				    .min_oom_score = 800, .free_mem_kb = 1, .free_swap_kb = 2, .kill_reason = reason,
				    .taskname = "app" };

	CU_ASSERT_EQUAL_FATAL(lmkd_encode_kill_occurred(buf, &s), 90);
	CU_ASSERT_EQUAL(memcmp(buf + 72, want, 4), 0);
	/* its neighbours untouched: free_swap_kb before, thrashing after */
	CU_ASSERT_EQUAL(memcmp(buf + 68, "\0\0\0\2", 4), 0);
	CU_ASSERT_EQUAL(memcmp(buf + 76, "\0\0\0\0", 4), 0);
}

static void test_mapping(void)
{
	struct mem_info swap_low = { .total_bytes = 4096 * MiB, .available_bytes = 64 * MiB,
				     .swap_total_bytes = 1024 * MiB, .swap_free_bytes = 50 * MiB };
	struct mem_info swap_room = swap_low, no_swap = swap_low;
	struct tier_config some = tier("medium", PSI_SOME, 70, 1000), full = tier("critical", PSI_FULL, 700, 1000);
	struct tier_config last = tier("last-resort", PSI_SOME, 0, 0);
	struct lmkd_cause c;

	swap_room.swap_free_bytes = 900 * MiB;
	no_swap.swap_total_bytes = no_swap.swap_free_bytes = 0;

	lmkd_cause_init(&c, FIRE_PSI, &full, &swap_room);
	CU_ASSERT_EQUAL(lmkd_kill_reason(&c), LMKD_REASON_NOT_RESPONDING);
	assert_wire(lmkd_kill_reason(&c), (const uint8_t *)"\0\0\0\1");
	lmkd_cause_init(&c, FIRE_PSI, &full, &swap_low); /* full stall: whatever the swap */
	CU_ASSERT_EQUAL(lmkd_kill_reason(&c), LMKD_REASON_NOT_RESPONDING);

	lmkd_cause_init(&c, FIRE_PSI, &some, &swap_room);
	CU_ASSERT_EQUAL(lmkd_kill_reason(&c), LMKD_REASON_DIRECT_RECL_AND_THRASHING);
	assert_wire(lmkd_kill_reason(&c), (const uint8_t *)"\0\0\0\5");
	lmkd_cause_init(&c, FIRE_PSI, &some, &no_swap); /* no swap is not "low on swap" */
	CU_ASSERT_EQUAL(lmkd_kill_reason(&c), LMKD_REASON_DIRECT_RECL_AND_THRASHING);
	lmkd_cause_init(&c, FIRE_PSI, &some, NULL);
	CU_ASSERT_EQUAL(lmkd_kill_reason(&c), LMKD_REASON_DIRECT_RECL_AND_THRASHING);
	/* 50 MiB free of 1 GiB: at or below the default low_swap (10%) */
	lmkd_cause_init(&c, FIRE_PSI, &some, &swap_low);
	CU_ASSERT_EQUAL(lmkd_kill_reason(&c), LMKD_REASON_LOW_SWAP_AND_THRASHING);
	assert_wire(lmkd_kill_reason(&c), (const uint8_t *)"\0\0\0\2");

	lmkd_cause_init(&c, FIRE_LOW_MEMORY, &last, &swap_low);
	CU_ASSERT_EQUAL(lmkd_kill_reason(&c), LMKD_REASON_LOW_MEM_AND_SWAP);
	assert_wire(lmkd_kill_reason(&c), (const uint8_t *)"\0\0\0\3");
	lmkd_cause_init(&c, FIRE_LOW_MEMORY, &last, &no_swap);
	CU_ASSERT_EQUAL(lmkd_kill_reason(&c), LMKD_REASON_LOW_MEM);
	assert_wire(lmkd_kill_reason(&c), (const uint8_t *)"\0\0\0\x08");
	lmkd_cause_init(&c, FIRE_LOW_MEMORY, &last, NULL);
	CU_ASSERT_EQUAL(lmkd_kill_reason(&c), LMKD_REASON_LOW_MEM);
	/* a tier's own low_swap decides what "low" is */
	last.low_swap = (struct mem_amount){ .set = true, .percent = false, .value = 10 * MiB };
	lmkd_cause_init(&c, FIRE_LOW_MEMORY, &last, &swap_low);
	CU_ASSERT_EQUAL(lmkd_kill_reason(&c), LMKD_REASON_LOW_MEM);

	lmkd_cause_init(&c, FIRE_OOM, &last, &swap_low);
	CU_ASSERT_EQUAL(lmkd_kill_reason(&c), LMKD_REASON_LOW_MEM);
	/* a unit's ManagedOOM setting, whatever the swap */
	lmkd_cause_init(&c, FIRE_MANAGED_PRESSURE, &last, &swap_low);
	CU_ASSERT_EQUAL(lmkd_kill_reason(&c), LMKD_REASON_DIRECT_RECL_AND_THRASHING);
	lmkd_cause_init(&c, FIRE_MANAGED_SWAP, &last, &no_swap);
	CU_ASSERT_EQUAL(lmkd_kill_reason(&c), LMKD_REASON_LOW_MEM_AND_SWAP);
	assert_wire(LMKD_REASON_NONE, (const uint8_t *)"\xff\xff\xff\xff");
}

static void test_desc(void)
{
	struct mem_info swap_low = { .total_bytes = 4096 * MiB, .available_bytes = 64 * MiB,
				     .swap_total_bytes = 1024 * MiB, .swap_free_bytes = 50 * MiB };
	struct mem_info no_swap = swap_low;
	struct tier_config some = tier("medium", PSI_SOME, 70, 1000), full = tier("critical", PSI_FULL, 700, 1000);
	struct tier_config last = tier("last-resort", PSI_SOME, 0, 0);
	struct lmkd_cause c;
	char buf[256];

	no_swap.swap_total_bytes = no_swap.swap_free_bytes = 0;
	lmkd_cause_init(&c, FIRE_PSI, &full, &no_swap);
	lmkd_kill_desc(buf, sizeof(buf), &c);
	CU_ASSERT_STRING_EQUAL(buf, "device is not responding (tier critical: full stall 700ms in 1000ms)");
	lmkd_cause_init(&c, FIRE_PSI, &some, &no_swap);
	lmkd_kill_desc(buf, sizeof(buf), &c);
	CU_ASSERT_STRING_EQUAL(buf, "device is in direct reclaim and thrashing (tier medium: some stall 70ms in 1000ms)");
	lmkd_cause_init(&c, FIRE_PSI, &some, &swap_low);
	lmkd_kill_desc(buf, sizeof(buf), &c);
	CU_ASSERT_STRING_EQUAL(buf, "device is low on swap (51200kB <= 104857kB) and thrashing (tier medium: some stall "
				    "70ms in 1000ms)");
	lmkd_cause_init(&c, FIRE_LOW_MEMORY, &last, &swap_low);
	lmkd_kill_desc(buf, sizeof(buf), &c);
	CU_ASSERT_STRING_EQUAL(buf, "available memory is low (65536kB) and swap is low (51200kB <= 104857kB) "
				    "(tier last-resort)");
	lmkd_cause_init(&c, FIRE_LOW_MEMORY, &last, &no_swap);
	lmkd_kill_desc(buf, sizeof(buf), &c);
	CU_ASSERT_STRING_EQUAL(buf, "available memory is low (65536kB) (tier last-resort)");
	lmkd_cause_init(&c, FIRE_LOW_MEMORY, &last, NULL);
	lmkd_kill_desc(buf, sizeof(buf), &c);
	CU_ASSERT_STRING_EQUAL(buf, "available memory is low (tier last-resort)");
	lmkd_cause_init(&c, FIRE_OOM, &last, &no_swap);
	lmkd_kill_desc(buf, sizeof(buf), &c);
	CU_ASSERT_STRING_EQUAL(buf, "out of memory, the kernel's OOM handed over (tier last-resort)");
	lmkd_cause_init(&c, FIRE_MANAGED_PRESSURE, &last, &swap_low);
	lmkd_kill_desc(buf, sizeof(buf), &c);
	CU_ASSERT_STRING_EQUAL(buf, "device is in direct reclaim and thrashing (tier last-resort: a unit's "
				    "ManagedOOMMemoryPressureLimit held)");
	lmkd_cause_init(&c, FIRE_MANAGED_SWAP, &last, &swap_low);
	lmkd_kill_desc(buf, sizeof(buf), &c);
	CU_ASSERT_STRING_EQUAL(buf, "available memory is low and swap is low (tier last-resort: SwapUsedLimit passed)");
	lmkd_cause_init(&c, FIRE_OOM, &last, &no_swap);
	/* truncated, terminated */
	CU_ASSERT_EQUAL(lmkd_kill_desc(buf, 10, &c), 9);
	CU_ASSERT_STRING_EQUAL(buf, "out of me");
}

/* lmkd's line, as lmkd.cpp's kill_one_process prints it */
static void test_line(void)
{
	struct lmkd_kill_line l = { .task = "/data/local/tmp/lmkd_unit_test", .pid = 4242, .uid = 0, .adj = 1000,
				    .rss_kb = 102400, .swap_kb = 0, .desc = "device is not responding" };
	char buf[512], marker[128];

	CU_ASSERT_EQUAL(lmkd_kill_line_format(buf, sizeof(buf), &l), (int)strlen(buf));
	CU_ASSERT_STRING_EQUAL(buf, "Kill '/data/local/tmp/lmkd_unit_test' (4242), uid 0, oom_score_adj 1000 to free "
				    "102400kB rss, 0kB swap; reason: device is not responding");
	/* what lmkd_test looks for in logcat: LMKD_KILL_MARKER_TEMPLATE */
	snprintf(marker, sizeof(marker), LMKD_LOG_TAG ": Kill '%s'", l.task);
	CU_ASSERT_STRING_EQUAL(marker, "lowmemorykiller: Kill '/data/local/tmp/lmkd_unit_test'");
	/* negative numbers as lmkd's %d */
	l.uid = 10061;
	l.adj = -800;
	l.task = "com.example.app";
	l.desc = NULL; /* no reason: lmkd's other form, its "kb" kept */
	lmkd_kill_line_format(buf, sizeof(buf), &l);
	CU_ASSERT_STRING_EQUAL(buf, "Kill 'com.example.app' (4242), uid 10061, oom_score_adj -800 to free 102400kB rss, "
				    "0kb swap");
	CU_ASSERT_EQUAL(lmkd_kill_line_format(buf, 8, &l), 7);
	CU_ASSERT_STRING_EQUAL(buf, "Kill 'c");
}

int main(void)
{
	static CU_TestInfo tests[] = {
		{ "kill_reason codes: lmkd's numbering", test_codes },
		{ "causes to kill_reason, in the STAT packet", test_mapping },
		{ "reason descriptions", test_desc },
		{ "lmkd's kill line", test_line },
		CU_TEST_INFO_NULL,
	};
	static CU_SuiteInfo suites[] = {
		{ "lmkd-kill", NULL, NULL, NULL, NULL, tests },
		CU_SUITE_INFO_NULL,
	};

	return cunit_tap_main(suites);
}
