/* SPDX-License-Identifier: MIT */
/* test-brake: the memory.high brake's decisions (brake.h) -- the margin and
 * the value written, the record kept on the group and when it restores,
 * parking and re-braking -- and its I/O (brakeio.h) on a fixture group where
 * the file system takes user xattrs. The kernel side is
 * tests/kernel/test-memory-high-brake.sh. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/xattr.h>

#include "brake.h"
#include "brakeio.h"
#include "cunit-tap.h"
#include "fileio.h"
#include "fixture-tree.h"

#define MiB (1ULL << 20)
#define MS 1000ULL

static void test_target(void)
{
	uint64_t high = 0;

	/* "on": twice the largest low_available */
	CU_ASSERT_EQUAL(brake_margin(0, 12 * MiB), 24 * MiB);
	CU_ASSERT_EQUAL(brake_margin(16 * MiB, 12 * MiB), 16 * MiB);
	CU_ASSERT_EQUAL(brake_target(256 * MiB, UINT64_MAX, 24 * MiB, &high), 0);
	CU_ASSERT_EQUAL(high, 232 * MiB);
	/* page aligned, down */
	CU_ASSERT_EQUAL(brake_target(256 * MiB + 100, UINT64_MAX, 24 * MiB, &high), 0);
	CU_ASSERT_EQUAL(high, 232 * MiB);
	/* memory.high lower already: left as it is */
	CU_ASSERT_EQUAL(brake_target(256 * MiB, 200 * MiB, 24 * MiB, &high), 1);
	CU_ASSERT_EQUAL(brake_target(256 * MiB, 232 * MiB, 24 * MiB, &high), 1);
	CU_ASSERT_EQUAL(brake_target(256 * MiB, 232 * MiB + 4096, 24 * MiB, &high), 0);
	/* why not */
	CU_ASSERT_EQUAL(brake_target(UINT64_MAX, UINT64_MAX, 24 * MiB, &high), -ENODATA);
	CU_ASSERT_EQUAL(brake_target(256 * MiB, UINT64_MAX, 0, &high), -EINVAL);
	CU_ASSERT_EQUAL(brake_target(256 * MiB, UINT64_MAX, 128 * MiB, &high), 0);
	CU_ASSERT_EQUAL(brake_target(256 * MiB, UINT64_MAX, 129 * MiB, &high), -ERANGE);
}

static void test_record(void)
{
	struct brake_record r = { UINT64_MAX, 243269632 }, p;
	char buf[64];
	uint64_t to = 0;

	CU_ASSERT_EQUAL(brake_format(buf, sizeof(buf), &r), 13);
	CU_ASSERT_STRING_EQUAL(buf, "max 243269632");
	CU_ASSERT_EQUAL(brake_parse(buf, strlen(buf), &p), 0);
	CU_ASSERT_EQUAL(p.orig, UINT64_MAX);
	CU_ASSERT_EQUAL(p.set, 243269632);
	CU_ASSERT_EQUAL(brake_parse("1048576 524288", 14, &p), 0);
	CU_ASSERT_EQUAL(p.orig, 1048576);
	CU_ASSERT_EQUAL(brake_format(buf, 8, &r), -ENOSPC);
	/* anything else is no record */
	CU_ASSERT_EQUAL(brake_parse("", 0, &p), -EINVAL);
	CU_ASSERT_EQUAL(brake_parse("max", 3, &p), -EINVAL);
	CU_ASSERT_EQUAL(brake_parse("max max", 7, &p), -EINVAL);
	CU_ASSERT_EQUAL(brake_parse("max 12 ", 7, &p), -EINVAL);
	CU_ASSERT_EQUAL(brake_parse("max  12", 7, &p), -EINVAL);
	CU_ASSERT_EQUAL(brake_parse("-1 12", 5, &p), -EINVAL);
	CU_ASSERT_EQUAL(brake_parse("99999999999999999999 12", 23, &p), -EINVAL);
	/* restored only while memory.high holds the brake */
	CU_ASSERT_TRUE(brake_restore(&r, 243269632, &to));
	CU_ASSERT_EQUAL(to, UINT64_MAX);
	CU_ASSERT_FALSE(brake_restore(&r, 100 * MiB, &to));
	/* parked when the daemon died: the original is there already */
	to = 0;
	CU_ASSERT_TRUE(brake_restore(&r, UINT64_MAX, &to));
	CU_ASSERT_EQUAL(to, UINT64_MAX);
	r.orig = 50 * MiB;
	CU_ASSERT_FALSE(brake_restore(&r, UINT64_MAX, &to));
}

/* a runaway braked: never parked while it grows, however slowly or
 * jerkily (the kernel's delays come in steps of up to 2 s) */
static void test_runaway(void)
{
	struct brake b = { 0 };
	uint64_t t = 5000 * MS, f = 200 * MiB;
	int i;

	CU_ASSERT_EQUAL(brake_poll(&b, 0, 300 * MiB, f), BRAKE_NOTHING); /* off */
	brake_start(&b, 232 * MiB);
	CU_ASSERT_EQUAL(brake_poll(&b, 0, 100 * MiB, 90 * MiB), BRAKE_NOTHING);
	/* 0.5 MiB every 900 ms above the brake: 1 MiB within BRAKE_PARK_US */
	for (i = 0; i < 40; i++, t += 900 * MS, f += MiB / 2)
		CU_ASSERT_EQUAL(brake_poll(&b, t, 240 * MiB, f), BRAKE_NOTHING);
	CU_ASSERT_EQUAL(b.state, BRAKE_ON);
	CU_ASSERT_EQUAL(b.parks, 0);
	/* it stops growing: parked after BRAKE_PARK_US */
	CU_ASSERT_EQUAL(brake_poll(&b, t, 240 * MiB, f), BRAKE_NOTHING);
	CU_ASSERT_EQUAL(brake_poll(&b, t + BRAKE_PARK_US, 240 * MiB, f + MiB / 2), BRAKE_LIFT);
	/* and braked again as soon as it grows a step */
	CU_ASSERT_EQUAL(brake_poll(&b, t + BRAKE_PARK_US + 1, 241 * MiB, f + MiB), BRAKE_NOTHING);
	CU_ASSERT_EQUAL(brake_poll(&b, t + BRAKE_PARK_US + 2, 242 * MiB, f + 3 * MiB / 2), BRAKE_APPLY);
	CU_ASSERT_EQUAL(b.state, BRAKE_ON);
}

/* a benign group settled at the brake: parked, braked again when it
 * grows or falls below */
static void test_parked(void)
{
	struct brake b;
	uint64_t f = 150 * MiB;

	brake_start(&b, 232 * MiB);
	CU_ASSERT_EQUAL(brake_poll(&b, 1000 * MS, 240 * MiB, f), BRAKE_NOTHING);
	/* below the brake for a moment: the clock starts anew */
	CU_ASSERT_EQUAL(brake_poll(&b, 2000 * MS, 231 * MiB, f), BRAKE_NOTHING);
	CU_ASSERT_EQUAL(brake_poll(&b, 2500 * MS, 240 * MiB, f), BRAKE_NOTHING);
	/* noise below a step, memory freed, and usage held just under the
	 * brake by the kernel's reclaim, keep it parkable */
	CU_ASSERT_EQUAL(brake_poll(&b, 2500 * MS + BRAKE_PARK_US / 4, 240 * MiB, f + MiB / 2), BRAKE_NOTHING);
	CU_ASSERT_EQUAL(brake_poll(&b, 2500 * MS + BRAKE_PARK_US / 3, 232 * MiB - MiB / 2, f), BRAKE_NOTHING);
	CU_ASSERT_EQUAL(brake_poll(&b, 2500 * MS + BRAKE_PARK_US / 2, 240 * MiB, f - MiB / 2), BRAKE_NOTHING);
	CU_ASSERT_EQUAL(brake_poll(&b, 2500 * MS + BRAKE_PARK_US - 1, 240 * MiB, f), BRAKE_NOTHING);
	CU_ASSERT_EQUAL(brake_poll(&b, 2500 * MS + BRAKE_PARK_US, 240 * MiB, f), BRAKE_LIFT);
	CU_ASSERT_EQUAL(b.state, BRAKE_PARKED);
	CU_ASSERT_EQUAL(b.parks, 1);
	CU_ASSERT_EQUAL(brake_poll(&b, 9000 * MS, 250 * MiB, f), BRAKE_NOTHING);
	/* file cache alone grows usage, not the footprint: still parked */
	CU_ASSERT_EQUAL(brake_poll(&b, 9050 * MS, 255 * MiB, f - MiB), BRAKE_NOTHING);
	CU_ASSERT_EQUAL(brake_poll(&b, 9100 * MS, 255 * MiB, f), BRAKE_APPLY);
	CU_ASSERT_EQUAL(b.state, BRAKE_ON);
	CU_ASSERT_EQUAL(brake_poll(&b, 9200 * MS, 251 * MiB, f), BRAKE_NOTHING);
	CU_ASSERT_EQUAL(brake_poll(&b, 9200 * MS + BRAKE_PARK_US, 251 * MiB, f), BRAKE_LIFT);
	/* usage dips below the brake and comes back: still parked */
	CU_ASSERT_EQUAL(brake_poll(&b, 20000 * MS, 100 * MiB, f), BRAKE_NOTHING);
	CU_ASSERT_EQUAL(brake_poll(&b, 20100 * MS, 240 * MiB, f), BRAKE_NOTHING);
	CU_ASSERT_EQUAL(b.state, BRAKE_PARKED);
	/* growth from the dip brakes again */
	CU_ASSERT_EQUAL(brake_poll(&b, 20200 * MS, 241 * MiB, f + MiB), BRAKE_APPLY);
	CU_ASSERT_EQUAL(b.parks, 2);
}

static char root[] = "/tmp/test-brake-XXXXXX";

/* The xattr of ROOT/grp, or "" */
static const char *xattr_of(char *buf, size_t size)
{
	char path[128];
	ssize_t n;

	snprintf(path, sizeof(path), "%s/grp", root);
	n = getxattr(path, BRAKE_XATTR, buf, size - 1);
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

/* memory.high of ROOT/grp as written last: the write is not O_TRUNC (a
 * cgroup file takes the value whole), so on the fixture's regular file a
 * shorter value leaves the tail of a longer one behind: cut at the length
 * of the expected value when that is followed by digits only */
static const char *high_of(char *buf, size_t size, const char *expect)
{
	char path[128];
	int fd = open(root, O_RDONLY | O_DIRECTORY);
	ssize_t n;

	snprintf(path, sizeof(path), "grp/memory.high");
	n = read_file_at(fd, path, buf, size);
	close(fd);
	if (n > 0 && buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	if (n > 0 && strlen(buf) > strlen(expect) && strspn(buf + strlen(expect), "0123456789") ==
	    strlen(buf + strlen(expect)))
		buf[strlen(expect)] = '\0';
	return n < 0 ? "" : buf;
}

/* apply, a SIGKILLed daemon's leftover adopted, release, and a memory.high
 * changed by someone else left alone -- on a fixture group */
static void test_io(void)
{
	struct brakeio_result res;
	char path[128], buf[64];
	uint64_t to = 0;
	int fd;

	fixture_memory_group(root, "grp"); /* memory.max 100 MiB */
	fixture_put(root, "grp/memory.high", "max\n");
	snprintf(path, sizeof(path), "%s/grp", root);
	if (setxattr(path, "user.probe", "1", 1, 0) < 0) {
		printf("# no user xattrs on %s (%s): brakeio not tested here\n", root, strerror(errno));
		return;
	}
	fd = open(root, O_RDONLY | O_DIRECTORY);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(brakeio_release(fd, "/grp", &to), 0); /* nothing to release */
	CU_ASSERT_EQUAL(brakeio_apply(fd, "/grp", 8 * MiB, &res), 0);
	CU_ASSERT_EQUAL(res.target, 0);
	CU_ASSERT_FALSE(res.adopted);
	CU_ASSERT_STRING_EQUAL(high_of(buf, sizeof(buf), "96468992"), "96468992");
	CU_ASSERT_STRING_EQUAL(xattr_of(buf, sizeof(buf)), "max 96468992");
	/* the daemon SIGKILLed; the next one adopts: the original is kept */
	CU_ASSERT_EQUAL(brakeio_apply(fd, "/grp", 4 * MiB, &res), 0);
	CU_ASSERT_TRUE(res.adopted);
	CU_ASSERT_EQUAL(res.rec.orig, UINT64_MAX);
	CU_ASSERT_STRING_EQUAL(high_of(buf, sizeof(buf), "100663296"), "100663296");
	CU_ASSERT_STRING_EQUAL(xattr_of(buf, sizeof(buf)), "max 100663296");
	/* released: memory.high as it was, the record gone */
	CU_ASSERT_EQUAL(brakeio_release(fd, "/grp", &to), 1);
	CU_ASSERT_EQUAL(to, UINT64_MAX);
	CU_ASSERT_STRING_EQUAL(high_of(buf, sizeof(buf), "max"), "max");
	CU_ASSERT_STRING_EQUAL(xattr_of(buf, sizeof(buf)), "");
	/* someone else set memory.high after the brake: left as it is */
	CU_ASSERT_EQUAL(brakeio_apply(fd, "/grp", 8 * MiB, &res), 0);
	fixture_put(root, "grp/memory.high", "50000000\n");
	CU_ASSERT_EQUAL(brakeio_release(fd, "/grp", &to), 2);
	CU_ASSERT_STRING_EQUAL(high_of(buf, sizeof(buf), "50000000"), "50000000");
	CU_ASSERT_STRING_EQUAL(xattr_of(buf, sizeof(buf)), "");
	/* lower already: nothing written, no record */
	CU_ASSERT_EQUAL(brakeio_apply(fd, "/grp", 8 * MiB, &res), 0);
	CU_ASSERT_EQUAL(res.target, 1);
	CU_ASSERT_STRING_EQUAL(xattr_of(buf, sizeof(buf)), "");
	/* a leftover that no longer fits (margin refused): memory.high back as it was */
	fixture_put(root, "grp/memory.high", "max\n");
	CU_ASSERT_EQUAL(brakeio_apply(fd, "/grp", 8 * MiB, &res), 0);
	CU_ASSERT_EQUAL(brakeio_apply(fd, "/grp", 60 * MiB, &res), 0);
	CU_ASSERT_EQUAL(res.target, -ERANGE);
	CU_ASSERT_STRING_EQUAL(high_of(buf, sizeof(buf), "max"), "max");
	CU_ASSERT_STRING_EQUAL(xattr_of(buf, sizeof(buf)), "");
	/* no memory.max: not a cgroup2 memory group */
	fixture_mkdir(root, "v1");
	CU_ASSERT_EQUAL(brakeio_apply(fd, "/v1", 8 * MiB, &res), -ENOENT);
	close(fd);
}

static int setup(void)
{
	return mkdtemp(root) ? 0 : -1;
}

static int teardown(void)
{
	char cmd[64];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	static CU_TestInfo tests[] = {
		{ "the margin and memory.high's value", test_target },
		{ "the record on the group", test_record },
		{ "a runaway stays braked", test_runaway },
		{ "a group settled at the brake is parked", test_parked },
		{ "apply, adopt, release on a fixture group", test_io },
		CU_TEST_INFO_NULL,
	};
	static CU_SuiteInfo suites[] = {
		{ "brake", setup, teardown, NULL, NULL, tests },
		CU_SUITE_INFO_NULL,
	};

	return cunit_tap_main(suites);
}
