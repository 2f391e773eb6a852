/* SPDX-License-Identifier: MIT */
/* test-psi: the pressure file parser and the trigger string. */
#include <errno.h>
#include <string.h>

#include "cunit-tap.h"
#include "psi.h"

static void test_parse_memory(void)
{
	struct psi_stats st;

	CU_ASSERT_EQUAL_FATAL(psi_parse("some avg10=1.50 avg60=0.25 avg300=100.00 total=123456789\n"
					"full avg10=0.00 avg60=0.00 avg300=0.00 total=42\n",
					&st),
			      0);
	CU_ASSERT_TRUE(st.some.present);
	CU_ASSERT_EQUAL(st.some.avg10, 150);
	CU_ASSERT_EQUAL(st.some.avg60, 25);
	CU_ASSERT_EQUAL(st.some.avg300, 10000);
	CU_ASSERT_EQUAL(st.some.total_us, 123456789ULL);
	CU_ASSERT_TRUE(st.full.present);
	CU_ASSERT_EQUAL(st.full.total_us, 42);
}

static void test_parse_some_only(void)
{
	struct psi_stats st;

	CU_ASSERT_EQUAL(psi_parse("some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n", &st), 0);
	CU_ASSERT_FALSE(st.full.present);
	/* no trailing newline, huge total */
	CU_ASSERT_EQUAL(psi_parse("some avg10=0.00 avg60=0.00 avg300=0.00 total=18446744073709551615", &st), 0);
	CU_ASSERT_EQUAL(st.some.total_us, UINT64_MAX);
}

static void test_parse_malformed(void)
{
	struct psi_stats st;

	CU_ASSERT_EQUAL(psi_parse("", &st), -EINVAL);
	CU_ASSERT_EQUAL(psi_parse("full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n", &st), -EINVAL);
	CU_ASSERT_EQUAL(psi_parse("some avg10=0.00 avg60=0.00 total=0\n", &st), -EINVAL);
	CU_ASSERT_EQUAL(psi_parse("some avg10=abc avg60=0.00 avg300=0.00 total=0\n", &st), -EINVAL);
	CU_ASSERT_EQUAL(psi_parse("some avg10=100.01 avg60=0.00 avg300=0.00 total=0\n", &st), -EINVAL);
	CU_ASSERT_EQUAL(psi_parse("some avg10=0.00 avg60=0.00 avg300=0.00 total=\n", &st), -EINVAL);
	CU_ASSERT_EQUAL(psi_parse("some avg10=0.00 avg60=0.00 avg300=0.00 total=18446744073709551616\n", &st),
			-EINVAL);
	CU_ASSERT_EQUAL(psi_parse("some avg10=0.00 avg60=0.00 avg300=0.00 total=1 junk\n", &st), -EINVAL);
	CU_ASSERT_EQUAL(psi_parse("some avg10=0.00 avg60=0.00 avg300=0.00 total=1\n"
				  "some avg10=0.00 avg60=0.00 avg300=0.00 total=1\n",
				  &st),
			-EINVAL);
}

static void test_format_trigger(void)
{
	char buf[64];

	CU_ASSERT_EQUAL(psi_format_trigger(buf, sizeof(buf), PSI_SOME, 150000, 2000000), 19);
	CU_ASSERT_STRING_EQUAL(buf, "some 150000 2000000");
	CU_ASSERT_EQUAL(psi_format_trigger(buf, sizeof(buf), PSI_FULL, 700000, 1000000), 19);
	CU_ASSERT_STRING_EQUAL(buf, "full 700000 1000000");
	CU_ASSERT_EQUAL(psi_format_trigger(buf, 10, PSI_FULL, 700000, 1000000), -ENOSPC);
}

/* min_events: events of a 1 s tier 2.0008 s apart (an unprivileged kernel,
 * or the sentinel waking the userspace monitor) are still in a row. */
static void test_streak(void)
{
	const uint64_t s = 1000000;

	CU_ASSERT_EQUAL(psi_streak_next(0, 0, 5 * s, s), 1);
	CU_ASSERT_EQUAL(psi_streak_next(1, 5 * s, 6 * s, s), 2);
	CU_ASSERT_EQUAL(psi_streak_next(2, 6 * s, 8 * s + 800, s), 3);
	CU_ASSERT_EQUAL(psi_streak_next(3, 8 * s, 12 * s, s), 4); /* 2 windows + 2 s: the edge */
	CU_ASSERT_EQUAL(psi_streak_next(4, 12 * s, 16 * s + 1, s), 1);
	CU_ASSERT_EQUAL(psi_streak_next(4, 10 * s, 20 * s, 4 * s), 5);
	CU_ASSERT_EQUAL(psi_streak_next(4, 10 * s, 9 * s, s), 1); /* a clock that went back */
}

int main(void)
{
	static CU_TestInfo tests[] = {
		{ "memory file", test_parse_memory },
		{ "events in a row (min_events)", test_streak },
		{ "some only", test_parse_some_only },
		{ "malformed", test_parse_malformed },
		{ "trigger string", test_format_trigger },
		CU_TEST_INFO_NULL,
	};
	static CU_SuiteInfo suites[] = {
		{ "psi", NULL, NULL, NULL, NULL, tests },
		CU_SUITE_INFO_NULL,
	};

	return cunit_tap_main(suites);
}
