/* test-log: the kill line format and token escaping. */
#include <string.h>

#include "config.h"
#include "cunit-tap.h"
#include "log.h"
#include "procfs.h"

static void test_kill_line(void)
{
	struct proc_info pi;
	struct tier_config t;
	char buf[512];

	memset(&pi, 0, sizeof(pi));
	memset(&t, 0, sizeof(t));
	pi.pid = 1234;
	strcpy(pi.comm, "chrome");
	pi.uid = 1000;
	pi.oom_score_adj = 900;
	pi.rss_kb = 812344;
	strcpy(t.name, "critical");
	t.stall_us = 700000;
	t.window_us = 1000000;
	log_format_kill(buf, sizeof(buf), "kill", &pi, &t, "psi_full");
	CU_ASSERT_STRING_EQUAL(buf, "kill pid=1234 comm=chrome uid=1000 oom_score_adj=900 rss_kb=812344 tier=critical "
				    "stall_us=700000 window_us=1000000 reason=psi_full");
	strcpy(pi.comm, "Web Content");
	log_format_kill(buf, sizeof(buf), "would-kill", &pi, &t, "psi_some");
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "would-kill pid=1234 comm=Web\\x20Content uid="));
	/* never overflows */
	CU_ASSERT_EQUAL(log_format_kill(buf, 20, "kill", &pi, &t, "psi_some"), 19);
	CU_ASSERT_EQUAL(strlen(buf), 19);
}

static void test_escape(void)
{
	char out[64];

	log_escape_token(out, sizeof(out), "a=b \"c\"\\\n\xff");
	CU_ASSERT_STRING_EQUAL(out, "a\\x3db\\x20\\x22c\\x22\\x5c\\x0a\\xff");
	log_escape_token(out, 6, "abc def");
	CU_ASSERT_STRING_EQUAL(out, "abc");
	log_escape_token(out, sizeof(out), "");
	CU_ASSERT_STRING_EQUAL(out, "");
}

int main(void)
{
	static CU_TestInfo tests[] = {
		{ "kill line", test_kill_line },
		{ "escaping", test_escape },
		CU_TEST_INFO_NULL,
	};
	static CU_SuiteInfo suites[] = {
		{ "log", NULL, NULL, NULL, NULL, tests },
		CU_SUITE_INFO_NULL,
	};

	return cunit_tap_main(suites);
}
