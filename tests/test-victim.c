/* test-victim: who may be killed and in which order. */
#include <stdio.h>
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

int main(void)
{
	static CU_TestInfo tests[] = {
		{ "scope matching", test_scope },
		{ "exclusions", test_exclusions },
		{ "order", test_order },
		{ "bands, down in order", test_choose_bands },
		CU_TEST_INFO_NULL,
	};
	static CU_SuiteInfo suites[] = {
		{ "victim", NULL, NULL, NULL, NULL, tests },
		CU_SUITE_INFO_NULL,
	};

	return cunit_tap_main(suites);
}
