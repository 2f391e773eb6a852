/* test-victim: who may be killed and in which order. */
#include <stdio.h>
#include <regex.h>
#include <string.h>

#include "cunit-tap.h"
#include "victim.h"

static struct proc_info proc(pid_t pid, int adj, uint64_t rss_kb, const char *cgroup)
{
	struct proc_info pi;

	memset(&pi, 0, sizeof(pi));
	pi.pid = pid;
	pi.oom_score_adj = adj;
	pi.rss_kb = rss_kb;
	pi.state = 'S';
	pi.start_time = 1000 + (uint64_t)pid;
	snprintf(pi.comm, sizeof(pi.comm), "p%d", (int)pid);
	if (cgroup) {
		pi.has_cgroup = true;
		snprintf(pi.cgroup, sizeof(pi.cgroup), "%s", cgroup);
	}
	return pi;
}

static void test_scope(void)
{
	CU_ASSERT_TRUE(victim_cgroup_in_scope("/a", "/"));
	CU_ASSERT_TRUE(victim_cgroup_in_scope("/", "/"));
	CU_ASSERT_TRUE(victim_cgroup_in_scope("/a", "/a"));
	CU_ASSERT_TRUE(victim_cgroup_in_scope("/a/b", "/a"));
	CU_ASSERT_FALSE(victim_cgroup_in_scope("/ab", "/a"));
	CU_ASSERT_FALSE(victim_cgroup_in_scope("/", "/a"));
	CU_ASSERT_FALSE(victim_cgroup_in_scope("/b/a", "/a"));
}

static void test_exclusions(void)
{
	struct proc_ident dying = { .pid = 70, .start_time = 1070 };
	struct victim_filter f = { .min_adj = 100, .self = 50, .scope = "/s", .exclude = &dying, .n_exclude = 1 };
	struct proc_info p;

	p = proc(10, 500, 10, "/s");
	CU_ASSERT_EQUAL(victim_check(&f, &p), VICTIM_OK);
	p = proc(1, 500, 10, "/s");
	CU_ASSERT_EQUAL(victim_check(&f, &p), VICTIM_INIT);
	p = proc(50, 500, 10, "/s");
	CU_ASSERT_EQUAL(victim_check(&f, &p), VICTIM_SELF);
	p = proc(11, 500, 0, "/s");
	p.kthread = true;
	CU_ASSERT_EQUAL(victim_check(&f, &p), VICTIM_KTHREAD);
	p = proc(12, -1000, 10, "/s");
	f.min_adj = -1000;
	CU_ASSERT_EQUAL(victim_check(&f, &p), VICTIM_UNKILLABLE);
	f.min_adj = 100;
	p = proc(13, 99, 10, "/s");
	CU_ASSERT_EQUAL(victim_check(&f, &p), VICTIM_BELOW_BAND);
	p = proc(14, 100, 10, "/s/deeper");
	CU_ASSERT_EQUAL(victim_check(&f, &p), VICTIM_OK);
	p = proc(15, 500, 10, "/other");
	CU_ASSERT_EQUAL(victim_check(&f, &p), VICTIM_OUT_OF_SCOPE);
	p = proc(16, 500, 10, NULL);
	CU_ASSERT_EQUAL(victim_check(&f, &p), VICTIM_OUT_OF_SCOPE);
	f.scope = "/";
	CU_ASSERT_EQUAL(victim_check(&f, &p), VICTIM_OK);
	p = proc(17, 500, 10, "/s");
	p.state = 'Z';
	CU_ASSERT_EQUAL(victim_check(&f, &p), VICTIM_DYING);
	p = proc(70, 500, 10, "/s");
	CU_ASSERT_EQUAL(victim_check(&f, &p), VICTIM_DYING);
	/* the same pid reused by another process is a new candidate */
	p.start_time = 99999;
	CU_ASSERT_EQUAL(victim_check(&f, &p), VICTIM_OK);
	CU_ASSERT_STRING_EQUAL(victim_verdict_name(VICTIM_OUT_OF_SCOPE), "out-of-scope");
}

static void test_order(void)
{
	struct proc_info a = proc(10, 900, 100, "/"), b = proc(11, 800, 10000, "/");

	CU_ASSERT_TRUE(victim_better(&a, &b)); /* adj first */
	CU_ASSERT_FALSE(victim_better(&b, &a));
	b.oom_score_adj = 900;
	CU_ASSERT_TRUE(victim_better(&b, &a)); /* then RSS */
	b.rss_kb = 100;
	CU_ASSERT_TRUE(victim_better(&b, &a)); /* then the younger one */
	b.start_time = a.start_time;
	CU_ASSERT_TRUE(victim_better(&b, &a)); /* then the larger pid: total order */
	CU_ASSERT_FALSE(victim_better(&a, &a));
}

static void test_choose_bands(void)
{
	struct proc_info list[] = {
		proc(100, 0, 5000, "/t"),   proc(101, 300, 4000, "/t"), proc(102, 700, 3000, "/t"),
		proc(103, 950, 1000, "/t"), proc(104, 100, 90000, "/t"), proc(105, 999, 1, "/elsewhere"),
	};
	struct victim_filter f = { .min_adj = 200, .self = 1, .scope = "/t" };
	size_t n = sizeof(list) / sizeof(list[0]);
	ssize_t i;

	i = victim_choose(&f, list, n);
	CU_ASSERT_EQUAL_FATAL(i, 3);
	list[3].state = 'Z';
	i = victim_choose(&f, list, n);
	CU_ASSERT_EQUAL_FATAL(i, 2);
	list[2].state = 'Z';
	i = victim_choose(&f, list, n);
	CU_ASSERT_EQUAL_FATAL(i, 1);
	list[1].state = 'Z';
	CU_ASSERT_EQUAL(victim_choose(&f, list, n), -1);
	f.min_adj = 0;
	CU_ASSERT_EQUAL(victim_choose(&f, list, n), 4); /* adj 100 beats adj 0 whatever the RSS */
	CU_ASSERT_EQUAL(victim_choose(&f, list, 0), -1);
}

static void test_policy(void)
{
	regex_t protect, prefer, avoid, prefer_cmd;
	struct victim_policy pol = { 0 };
	struct victim_filter f = { .policy = &pol, .min_adj = 0, .self = 1, .scope = "/" };
	struct proc_info list[4];
	ssize_t i;

	CU_ASSERT_EQUAL_FATAL(regcomp(&protect, "^(sshd|Xorg)$", REG_EXTENDED | REG_NOSUB), 0);
	CU_ASSERT_EQUAL_FATAL(regcomp(&prefer, "^chrom", REG_EXTENDED | REG_NOSUB), 0);
	CU_ASSERT_EQUAL_FATAL(regcomp(&avoid, "^(editor|chromium-keep)$", REG_EXTENDED | REG_NOSUB), 0);
	CU_ASSERT_EQUAL_FATAL(regcomp(&prefer_cmd, "--type=renderer", REG_EXTENDED | REG_NOSUB), 0);
	pol.protect = &protect;

	/* protect beats everything, even the highest adj */
	list[0] = proc(10, 1000, 9000, "/");
	strcpy(list[0].comm, "sshd");
	list[1] = proc(11, 100, 10, "/");
	CU_ASSERT_EQUAL(victim_check(&f, &list[0]), VICTIM_PROTECTED);
	CU_ASSERT_EQUAL(victim_choose(&f, list, 2), 1);

	/* min_rss: small processes are skipped, whatever their adj */
	pol.min_rss_kb = 4096;
	list[0] = proc(10, 1000, 4095, "/");
	list[1] = proc(11, 0, 4096, "/");
	CU_ASSERT_EQUAL(victim_check(&f, &list[0]), VICTIM_SMALL);
	CU_ASSERT_EQUAL(victim_choose(&f, list, 2), 1);
	pol.min_rss_kb = 0;

	/* prefer: before every neutral candidate of the band, even with a lower adj */
	pol.prefer = &prefer;
	pol.avoid = &avoid;
	list[0] = proc(10, 900, 9000, "/");
	strcpy(list[0].comm, "make");
	list[1] = proc(11, 300, 10, "/");
	strcpy(list[1].comm, "chrome");
	list[2] = proc(12, 950, 10, "/");
	strcpy(list[2].comm, "editor");
	i = victim_choose(&f, list, 3);
	CU_ASSERT_EQUAL(i, 1);
	CU_ASSERT_EQUAL(list[1].preference, 1);
	CU_ASSERT_EQUAL(list[2].preference, -1);
	/* avoid: only when nothing else is left */
	list[1].state = 'Z';
	CU_ASSERT_EQUAL(victim_choose(&f, list, 3), 0);
	list[0].state = 'Z';
	CU_ASSERT_EQUAL(victim_choose(&f, list, 3), 2);
	/* avoid wins over prefer when both match */
	list[3] = proc(13, 500, 10, "/");
	strcpy(list[3].comm, "chromium-keep");
	CU_ASSERT_EQUAL(victim_preference(&f, &list[3]), -1);
	/* the band still applies to preferred processes */
	f.min_adj = 600;
	list[1].state = 'S';
	CU_ASSERT_EQUAL(victim_check(&f, &list[1]), VICTIM_BELOW_BAND);
	f.min_adj = 0;

	/* command-line rules read the cmdline only when set */
	CU_ASSERT_FALSE(victim_needs_cmdline(&f));
	pol.prefer_cmdline = &prefer_cmd;
	CU_ASSERT_TRUE(victim_needs_cmdline(&f));
	list[0] = proc(10, 100, 10, "/");
	list[0].has_cmdline = true;
	strcpy(list[0].cmdline, "/opt/app --type=renderer --lang=en");
	CU_ASSERT_EQUAL(victim_preference(&f, &list[0]), 1);
	list[0].has_cmdline = false;
	CU_ASSERT_EQUAL(victim_preference(&f, &list[0]), 0);

	regfree(&protect);
	regfree(&prefer);
	regfree(&avoid);
	regfree(&prefer_cmd);
}

int main(void)
{
	static CU_TestInfo tests[] = {
		{ "scope matching", test_scope },
		{ "exclusions", test_exclusions },
		{ "order", test_order },
		{ "bands, down in order", test_choose_bands },
		{ "protect, min_rss, prefer, avoid: precedence", test_policy },
		CU_TEST_INFO_NULL,
	};
	static CU_SuiteInfo suites[] = {
		{ "victim", NULL, NULL, NULL, NULL, tests },
		CU_SUITE_INFO_NULL,
	};

	return cunit_tap_main(suites);
}
