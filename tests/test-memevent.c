/* SPDX-License-Identifier: MIT */
/* test-memevent: the memory cgroup's notifications and the v1 OOM handover
 * on a fixture tree (the kernel side, eventfds signalled by the kernel, is
 * tests/kernel/test-fast.sh). */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cunit-tap.h"
#include "fileio.h"
#include "fixture-tree.h"
#include "memevent.h"

static char root[] = "/tmp/psi-lmkd-test-memevent-XXXXXX";

static int readable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 0);
}

static void test_parse(void)
{
	bool off, under;

	CU_ASSERT_EQUAL(memevent_parse_oom_control("oom_kill_disable 1\nunder_oom 0\noom_kill 7\n", &off, &under), 0);
	CU_ASSERT_TRUE(off);
	CU_ASSERT_FALSE(under);
	CU_ASSERT_EQUAL(memevent_parse_oom_control("oom_kill_disable 0\nunder_oom 1\n", &off, &under), 0);
	CU_ASSERT_FALSE(off);
	CU_ASSERT_TRUE(under);
	CU_ASSERT_EQUAL(memevent_parse_oom_control("under_oom 1\n", &off, &under), -EINVAL);
	CU_ASSERT_EQUAL(memevent_parse_oom_control("oom_kill_disable x\nunder_oom 1\n", &off, &under), -EINVAL);
}

/* v1: taken (oom_kill_disable 0 -> 1), given back (-> 0); adopted when it
 * was 1 already, with a notification made up for tasks already waiting;
 * the wake-up registers its thresholds through cgroup.event_control. */
static void test_v1(void)
{
	static const uint64_t at[] = { 100, 200, 300 };
	struct memevent m;
	char buf[256];
	int rootfd;

	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(root));
	rootfd = sysroot_open(root);
	CU_ASSERT_FATAL(rootfd >= 0);
	fixture_mkdir(root, "v1");
	fixture_put(root, "v1/memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 0\n");
	fixture_put(root, "v1/memory.usage_in_bytes", "0\n");
	fixture_put(root, "v1/cgroup.event_control", "");

	memevent_init(&m);
	CU_ASSERT_EQUAL(memevent_open_wake(&m, rootfd, "/v1", at, 3), 0);
	CU_ASSERT_FALSE(m.v2);
	CU_ASSERT_TRUE(m.wake_fd >= 0);
	CU_ASSERT_TRUE(read_file_at(rootfd, "v1/cgroup.event_control", buf, sizeof(buf)) > 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, " 300")); /* the last of three registrations */
	CU_ASSERT_EQUAL(memevent_take_oom(&m, rootfd, "/v1"), 0);
	CU_ASSERT_TRUE(m.oom_taken && m.oom_fd >= 0);
	CU_ASSERT_TRUE(read_file_at(rootfd, "v1/memory.oom_control", buf, sizeof(buf)) > 0);
	CU_ASSERT_EQUAL(buf[0], '1'); /* written over the start: no O_TRUNC, as on cgroupfs */
	CU_ASSERT_EQUAL(readable(m.oom_fd), 0);
	CU_ASSERT_EQUAL(memevent_release(&m, rootfd), 0);
	CU_ASSERT_FALSE(m.oom_taken);
	CU_ASSERT_EQUAL(m.oom_fd, -1);
	CU_ASSERT_TRUE(read_file_at(rootfd, "v1/memory.oom_control", buf, sizeof(buf)) > 0);
	CU_ASSERT_EQUAL(buf[0], '0');
	memevent_close(&m, rootfd);
	CU_ASSERT_EQUAL(m.wake_fd, -1);

	/* left off by a daemon that was SIGKILLed, tasks waiting at OOM */
	fixture_put(root, "v1/memory.oom_control", "oom_kill_disable 1\nunder_oom 1\noom_kill 0\n");
	memevent_init(&m);
	CU_ASSERT_EQUAL(memevent_under_oom(rootfd, "/v1"), 1);
	CU_ASSERT_EQUAL(memevent_take_oom(&m, rootfd, "/v1"), 1);
	CU_ASSERT_EQUAL(readable(m.oom_fd), 1); /* the made-up notification */
	CU_ASSERT_EQUAL(memevent_drain(&m, m.oom_fd), 0);
	CU_ASSERT_EQUAL(readable(m.oom_fd), 0);
	memevent_close(&m, rootfd); /* gives it back */
	CU_ASSERT_TRUE(read_file_at(rootfd, "v1/memory.oom_control", buf, sizeof(buf)) > 0);
	CU_ASSERT_EQUAL(buf[0], '0');

	/* the group is gone: nothing to give back, no error */
	fixture_put(root, "v1/memory.oom_control", "oom_kill_disable 0\nunder_oom 0\n");
	memevent_init(&m);
	CU_ASSERT_EQUAL(memevent_take_oom(&m, rootfd, "/v1"), 0);
	CU_ASSERT_EQUAL(unlinkat(rootfd, "v1/memory.oom_control", 0), 0);
	CU_ASSERT_EQUAL(memevent_release(&m, rootfd), 0);
	CU_ASSERT_EQUAL(memevent_under_oom(rootfd, "/v1"), -ENOENT);
	memevent_close(&m, rootfd);
	close(rootfd);
}

/* v2: memory.events is the wake-up; there is no OOM switch to take. */
static void test_v2(void)
{
	static const uint64_t at[] = { 100 };
	struct memevent m;
	int rootfd = sysroot_open(root);

	CU_ASSERT_FATAL(rootfd >= 0);
	fixture_mkdir(root, "v2");
	fixture_put(root, "v2/memory.events", "low 0\nhigh 0\nmax 3\noom 0\noom_kill 0\n");
	memevent_init(&m);
	CU_ASSERT_EQUAL(memevent_open_wake(&m, rootfd, "/v2", NULL, 0), 0);
	CU_ASSERT_TRUE(m.v2 && m.wake_fd >= 0);
	CU_ASSERT_EQUAL(memevent_drain(&m, m.wake_fd), 0);
	CU_ASSERT_EQUAL(memevent_take_oom(&m, rootfd, "/v2"), -EOPNOTSUPP);
	CU_ASSERT_FALSE(m.oom_taken);
	memevent_close(&m, rootfd);
	memevent_init(&m);
	CU_ASSERT_EQUAL(memevent_open_wake(&m, rootfd, "/none", at, 1), -ENOENT);
	memevent_close(&m, rootfd);
	close(rootfd);
}

static int cleanup(void)
{
	char cmd[128];

	if (strstr(root, "XXXXXX"))
		return 0;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd) == 0 ? 0 : -1;
}

/* The kernel's OOM kill counter, read where psi-lmkd watches: v2
 * memory.events, v1 memory.oom_control, /proc/vmstat system-wide (runs after
 * test_v1, whose fixture root it reuses). */
static void test_oom_kills(void)
{
	uint64_t n = 0;
	int rootfd = sysroot_open(root);

	CU_ASSERT_FATAL(rootfd >= 0);
	fixture_mkdir(root, "ev2");
	fixture_put(root, "ev2/memory.events", "low 0\nhigh 0\nmax 3\noom 2\noom_kill 2\noom_group_kill 0\n");
	CU_ASSERT_EQUAL(memevent_read_oom_kills(rootfd, "/ev2", &n), 0);
	CU_ASSERT_EQUAL(n, 2);
	fixture_mkdir(root, "ev1");
	fixture_put(root, "ev1/memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 7\n");
	CU_ASSERT_EQUAL(memevent_read_oom_kills(rootfd, "/ev1", &n), 0);
	CU_ASSERT_EQUAL(n, 7);
	fixture_mkdir(root, "proc");
	fixture_put(root, "proc/vmstat", "nr_free_pages 1\noom_kill_x 9\noom_kill 4\n");
	CU_ASSERT_EQUAL(memevent_read_oom_kills(rootfd, "", &n), 0);
	CU_ASSERT_EQUAL(n, 4);
	/* a kernel before the counter (4.13), and a group that is gone */
	fixture_put(root, "proc/vmstat", "nr_free_pages 1\n");
	CU_ASSERT_EQUAL(memevent_read_oom_kills(rootfd, "", &n), -ENODATA);
	CU_ASSERT_EQUAL(memevent_read_oom_kills(rootfd, "/gone", &n), -ENOENT);
	close(rootfd);
}

int main(void)
{
	static CU_TestInfo tests[] = {
		{ "memory.oom_control", test_parse },
		{ "v1: thresholds, OOM taken, given back, adopted", test_v1 },
		{ "v2: memory.events, no OOM switch", test_v2 },
		{ "the kernel's OOM kill counters", test_oom_kills },
		CU_TEST_INFO_NULL,
	};
	static CU_SuiteInfo suites[] = {
		{ "memevent", NULL, cleanup, NULL, NULL, tests },
		CU_SUITE_INFO_NULL,
	};

	return cunit_tap_main(suites);
}
