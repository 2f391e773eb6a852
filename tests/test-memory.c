/* test-memory: available memory (system and cgroup v1/v2 fixtures), amounts,
 * the adaptive check period, and cgroup2 mount lookup. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "cgroup.h"
#include "cunit-tap.h"
#include "fixture-tree.h"
#include "fileio.h"
#include "memory.h"

static void test_meminfo(void)
{
	uint64_t t, a;

	CU_ASSERT_EQUAL(memory_parse_meminfo("MemTotal:       24000000 kB\nMemFree: 1 kB\nMemAvailable:   20000000 kB\n",
					     &t, &a),
			0);
	CU_ASSERT_EQUAL(t, 24000000ULL * 1024);
	CU_ASSERT_EQUAL(a, 20000000ULL * 1024);
	CU_ASSERT_EQUAL(memory_parse_meminfo("MemTotal: 1 kB\n", &t, &a), -EINVAL);
	CU_ASSERT_EQUAL(memory_parse_meminfo("MemTotal: x kB\nMemAvailable: 1 kB\n", &t, &a), -EINVAL);
	CU_ASSERT_EQUAL(memory_stat_value("anon 5\ninactive_file 42\nactive_file 7\n", "inactive_file"), 42);
	CU_ASSERT_EQUAL(memory_stat_value("total_inactive_file 9\n", "inactive_file"), 0);
	/* reclaimable: all inactive file pages, active ones that are not mapped, dirty or under writeback */
	CU_ASSERT_EQUAL(memory_reclaimable("inactive_file 100\nactive_file 50\nfile_mapped 20\nfile_dirty 5\n"
					   "file_writeback 5\n", true), 120);
	CU_ASSERT_EQUAL(memory_reclaimable("total_inactive_file 100\ntotal_active_file 50\ntotal_mapped_file 80\n"
					   "inactive_file 999\n", false), 100);
	CU_ASSERT_EQUAL(memory_reclaimable("total_inactive_file 7\ntotal_active_file 10\ntotal_dirty 20\n", false), 7);
	CU_ASSERT_EQUAL(memory_reclaimable("anon 5\n", true), 0);
}

static void test_amounts(void)
{
	struct mem_amount pct = { .set = true, .percent = true, .value = 1000 }; /* 10% */
	struct mem_amount abs = { .set = true, .percent = false, .value = 1 << 20 };

	CU_ASSERT_EQUAL(memory_amount_bytes(&pct, 1000000), 100000);
	CU_ASSERT_EQUAL(memory_amount_bytes(&pct, UINT64_MAX / 2), UINT64_MAX / 2 / 10000 * 1000 + (UINT64_MAX / 2) % 10000 * 1000 / 10000);
	CU_ASSERT_EQUAL(memory_amount_bytes(&abs, 5), 1 << 20);
	/* the check period shrinks with the headroom: 1 GiB/s assumed, 50 ms..5 s */
	CU_ASSERT_EQUAL(memory_check_period_us(20ULL << 30, 1ULL << 30), 5000000);
	CU_ASSERT_EQUAL(memory_check_period_us((1ULL << 30) + (512ULL << 20), 1ULL << 30), 500000);
	CU_ASSERT_EQUAL(memory_check_period_us(100, 1ULL << 30), 50000);
}

static char root[] = "/tmp/psi-lmkd-test-memory-XXXXXX";



static void test_cgroups(void)
{
	struct mem_info mi;
	int rootfd;
	char cmd[600];

	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(root));
	rootfd = sysroot_open(root);
	CU_ASSERT_FATAL(rootfd >= 0);
	fixture_mkdir(root, "proc");
	fixture_put(root, "proc/meminfo", "MemTotal: 1000 kB\nMemAvailable: 600 kB\n");
	fixture_mkdir(root, "v2");
	fixture_put(root, "v2/memory.max", "104857600\n");
	fixture_put(root, "v2/memory.current", "94371840\n");
	fixture_put(root, "v2/memory.stat", "anon 80000000\ninactive_file 4194304\n");
	fixture_mkdir(root, "v1");
	fixture_put(root, "v1/memory.limit_in_bytes", "134217728\n");
	fixture_put(root, "v1/memory.usage_in_bytes", "134217728\n");
	fixture_put(root, "v1/memory.stat", "cache 1\ntotal_inactive_file 33554432\n");
	fixture_mkdir(root, "nolimit");
	fixture_put(root, "nolimit/memory.max", "max\n");
	fixture_put(root, "nolimit/memory.current", "5\n");

	CU_ASSERT_EQUAL(memory_read_cgroup(rootfd, "/v2", &mi), 0);
	CU_ASSERT_TRUE(mi.cgroup);
	CU_ASSERT_EQUAL(mi.total_bytes, 104857600);
	CU_ASSERT_EQUAL(mi.available_bytes, 104857600 - (94371840 - 4194304));
	CU_ASSERT_EQUAL(memory_read_cgroup(rootfd, "/v1", &mi), 0);
	CU_ASSERT_EQUAL(mi.available_bytes, 33554432);
	CU_ASSERT_EQUAL(memory_read_cgroup(rootfd, "/nolimit", &mi), -ENODATA);
	/* no limit: falls back to the system */
	CU_ASSERT_EQUAL(memory_read(rootfd, "/nolimit", &mi), 0);
	CU_ASSERT_FALSE(mi.cgroup);
	CU_ASSERT_EQUAL(mi.available_bytes, 600 * 1024);
	CU_ASSERT_EQUAL(memory_read(rootfd, "", &mi), 0);
	CU_ASSERT_EQUAL(memory_read_cgroup(rootfd, "/missing", &mi), -ENOENT);
	close(rootfd);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	CU_ASSERT_EQUAL(system(cmd), 0);
}

static void test_cgroup_mount(void)
{
	char out[64];

	CU_ASSERT_EQUAL(cgroup_find_mount("proc /proc proc rw 0 0\ncgroup2 /sys/fs/cgroup/unified cgroup2 rw 0 0\n", out,
					  sizeof(out)),
			0);
	CU_ASSERT_STRING_EQUAL(out, "/sys/fs/cgroup/unified");
	CU_ASSERT_EQUAL(cgroup_find_mount("cgroup /sys/fs/cgroup/memory cgroup rw,memory 0 0\n", out, sizeof(out)),
			-ENOENT);
	CU_ASSERT_EQUAL(cgroup_find_mount("none /a/very/long/path/that/does/not/fit/in/the/buffer/given cgroup2 rw 0 0\n",
					  out, 16),
			-ENAMETOOLONG);
}

int main(void)
{
	static CU_TestInfo tests[] = {
		{ "meminfo and memory.stat", test_meminfo },
		{ "amounts and check period", test_amounts },
		{ "cgroup v1 and v2 fixtures", test_cgroups },
		{ "cgroup2 mount", test_cgroup_mount },
		CU_TEST_INFO_NULL,
	};
	static CU_SuiteInfo suites[] = {
		{ "memory", NULL, NULL, NULL, NULL, tests },
		CU_SUITE_INFO_NULL,
	};

	return cunit_tap_main(suites);
}
