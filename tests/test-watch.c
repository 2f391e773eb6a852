/* SPDX-License-Identifier: MIT */
/* test-watch: choosing kernel trigger vs userspace monitor per tier (with a
 * refusing kernel injected through the watch_ops seam), the sentinel, shadow
 * monitors and the sampler's timer, on a fixture pressure file. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "config.h"
#include "cunit-tap.h"
#include "fake-kernel.h"
#include "fileio.h"
#include "watch.h"

static char root[] = "/tmp/psi-lmkd-test-watch-XXXXXX";
static int rootfd = -1;


static void write_totals(uint64_t some, uint64_t full)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/proc/pressure/memory", root);
	f = fopen(path, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fprintf(f, "some avg10=0.00 avg60=0.00 avg300=0.00 total=%llu\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=%llu\n",
		(unsigned long long)some, (unsigned long long)full);
	fclose(f);
}

static int suite_init(void)
{
	char path[256];

	if (!mkdtemp(root))
		return -1;
	snprintf(path, sizeof(path), "%s/proc", root);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/proc/pressure", root);
	mkdir(path, 0755);
	rootfd = sysroot_open(root);
	return rootfd < 0 ? -1 : 0;
}

static int suite_cleanup(void)
{
	char cmd[300];

	close(rootfd);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd) == 0 ? 0 : -1;
}

static void load(struct config *c, const char *text)
{
	struct config_error err;

	CU_ASSERT_EQUAL_FATAL(config_parse_string(c, text, "watch.conf", &err), 0);
}

static const char *two_tiers = "[tier medium]\ntrigger = some 70ms 1s\nmin_oom_score_adj = 800\n"
			       "[tier slow]\ntrigger = full 300ms 2s\nmin_oom_score_adj = 0\n";

static void test_sources(void)
{
	struct config c;
	struct watch w;
	char err[256];

	write_totals(0, 0);
	load(&c, two_tiers);
	CU_ASSERT_EQUAL_FATAL(watch_open(&w, rootfd, &c, false, 2000000, &fake_kernel_unprivileged, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(w.tiers[0].source, TIER_SOURCE_USERSPACE);
	CU_ASSERT_EQUAL(w.tiers[0].refused, -EINVAL);
	CU_ASSERT_EQUAL(w.tiers[0].fd, -1);
	CU_ASSERT_EQUAL(w.tiers[1].source, TIER_SOURCE_KERNEL);
	CU_ASSERT_TRUE(w.tiers[1].fd >= 0);
	/* the sentinel: 'some', the smallest userspace stall, the window rounded up to 2 s */
	CU_ASSERT_TRUE(w.sentinel_fd >= 0);
	CU_ASSERT_STRING_EQUAL(w.sentinel, "some 70000 2000000");
	CU_ASSERT_TRUE(watch_needs_sampling(&w));
	CU_ASSERT_STRING_EQUAL(tier_source_name(w.tiers[0].source), "userspace");
	watch_close(&w);

	/* no trigger support at all: everything on the userspace monitor, no sentinel */
	CU_ASSERT_EQUAL_FATAL(watch_open(&w, rootfd, &c, false, 2000000, &fake_kernel_no_triggers, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(w.tiers[0].source, TIER_SOURCE_USERSPACE);
	CU_ASSERT_EQUAL(w.tiers[1].source, TIER_SOURCE_USERSPACE);
	CU_ASSERT_EQUAL(w.sentinel_fd, -1);
	watch_close(&w);
}

static void test_idle_cost(void)
{
	struct config c;
	struct watch w;
	char err[256];

	write_totals(0, 0);
	load(&c, "[tier a]\ntrigger = some 100ms 2s\nmin_oom_score_adj = 0\n");
	uint64_t t0;

	/* privileged kernel triggers only: no timer at all, not even the idle clock */
	CU_ASSERT_EQUAL_FATAL(watch_open(&w, rootfd, &c, true, 2000000, &fake_kernel_unprivileged, err, sizeof(err)), 0);
	CU_ASSERT_FALSE(watch_needs_sampling(&w));
	CU_ASSERT_EQUAL(watch_idle_limit_us(&w), UINT64_MAX);
	CU_ASSERT_EQUAL(watch_arm_timer(&w, 0), 0);
	CU_ASSERT_FALSE(watch_idle_due(&w, w.last_sample_us + 60000000, 10000000));
	watch_kernel_event(&w, 0, 5000000);
	CU_ASSERT_FALSE(w.poller.active);
	CU_ASSERT_EQUAL(watch_arm_timer(&w, 5000000), 0);
	watch_close(&w);
	/* unprivileged (starvable): the slow safety sample, on the idle clock,
	 * at least every idle_poll; the watch's own timer stays off */
	CU_ASSERT_EQUAL_FATAL(watch_open(&w, rootfd, &c, false, 2000000, &fake_kernel_unprivileged, err, sizeof(err)), 0);
	t0 = w.last_sample_us;
	CU_ASSERT_TRUE(watch_needs_sampling(&w));
	CU_ASSERT_EQUAL(watch_idle_limit_us(&w), 2000000);
	CU_ASSERT_EQUAL(watch_arm_timer(&w, t0), 0);
	/* a clock of 2 s (its idle_poll) samples it on every tick */
	CU_ASSERT_FALSE(watch_idle_due(&w, t0 + 1000000, 2000000));
	CU_ASSERT_TRUE(watch_idle_due(&w, t0 + 2000000, 2000000));
	CU_ASSERT_TRUE(watch_idle_due(&w, t0 + 1999500, 2000000)); /* the slack of a tick armed late */
	/* a faster clock (memory runs short) samples it more often */
	CU_ASSERT_FALSE(watch_idle_due(&w, t0 + 40000, 100000));
	CU_ASSERT_TRUE(watch_idle_due(&w, t0 + 100000, 100000));
	/* not while it samples fast anyway */
	watch_sentinel_event(&w, t0 + 3000000);
	CU_ASSERT_FALSE(watch_idle_due(&w, t0 + 3000000, 2000000));
	watch_close(&w);
	/* ... unless switched off */
	CU_ASSERT_EQUAL_FATAL(watch_open(&w, rootfd, &c, false, 0, &fake_kernel_unprivileged, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(watch_idle_limit_us(&w), UINT64_MAX);
	CU_ASSERT_FALSE(watch_idle_due(&w, w.last_sample_us + 60000000, 10000000));
	CU_ASSERT_EQUAL(watch_arm_timer(&w, 0), 0);
	watch_close(&w);
}

/* The idle clock's period: how long the headroom lasts at 1 GiB/s. */
static void test_idle_period(void)
{
	CU_ASSERT_EQUAL(watch_idle_period_us(UINT64_MAX), WATCH_IDLE_MAX_US);
	CU_ASSERT_EQUAL(watch_idle_period_us(20ULL << 30), 10000000);
	CU_ASSERT_EQUAL(watch_idle_period_us(10ULL << 30), 10000000);
	CU_ASSERT_EQUAL(watch_idle_period_us(2ULL << 30), 2000000);
	CU_ASSERT_EQUAL(watch_idle_period_us(512ULL << 20), 500000);
	CU_ASSERT_EQUAL(watch_idle_period_us(100ULL << 20), 97656);
	CU_ASSERT_EQUAL(watch_idle_period_us(1ULL << 20), WATCH_IDLE_MIN_US);
	CU_ASSERT_EQUAL(watch_idle_period_us(0), WATCH_IDLE_MIN_US);
	/* never shorter with more headroom */
	for (uint64_t h = 0, prev = 0; h < (12ULL << 30); h += 37ULL << 20) {
		uint64_t p = watch_idle_period_us(h);

		CU_ASSERT_TRUE(p >= prev);
		CU_ASSERT_TRUE(p >= WATCH_IDLE_MIN_US && p <= WATCH_IDLE_MAX_US);
		prev = p;
	}
}

/* A safety sample that finds the stall grown (a starved kernel trigger)
 * starts fast sampling; a trace of stall does not. */
static void test_idle_sample_wakes(void)
{
	struct config c;
	struct watch w;
	bool fired[CONFIG_TIERS_MAX];
	char err[256];
	uint64_t t0, some = 0;

	write_totals(some, 0);
	load(&c, "[tier a]\ntrigger = some 100ms 2s\nmin_oom_score_adj = 0\n");
	CU_ASSERT_EQUAL_FATAL(watch_open(&w, rootfd, &c, false, 2000000, &fake_kernel_unprivileged, err, sizeof(err)), 0);
	t0 = w.last_sample_us;
	/* 10 s later, 20 ms of stall (scaled to the window: 4 ms): stays idle */
	some += 20000;
	write_totals(some, 0);
	CU_ASSERT_EQUAL_FATAL(watch_sample(&w, t0 + 10000000, fired), 0);
	CU_ASSERT_FALSE(fired[0]);
	CU_ASSERT_FALSE(w.poller.active);
	CU_ASSERT_EQUAL(watch_arm_timer(&w, t0 + 10000000), 0);
	/* 10 s later again, 300 ms of stall (60 ms scaled): half the threshold, fast sampling */
	some += 300000;
	write_totals(some, 0);
	CU_ASSERT_EQUAL_FATAL(watch_sample(&w, t0 + 20000000, fired), 0);
	CU_ASSERT_FALSE(fired[0]);
	CU_ASSERT_TRUE(w.poller.active);
	CU_ASSERT_EQUAL(watch_arm_timer(&w, t0 + 20000000), 200000);
	CU_ASSERT_FALSE(watch_idle_due(&w, t0 + 30000000, 10000000));
	watch_close(&w);
	/* privileged kernel triggers: the kernel reports, no sampling */
	write_totals(some, 0);
	CU_ASSERT_EQUAL_FATAL(watch_open(&w, rootfd, &c, true, 2000000, &fake_kernel_unprivileged, err, sizeof(err)), 0);
	some += 2000000;
	write_totals(some, 0);
	CU_ASSERT_EQUAL_FATAL(watch_sample(&w, w.last_sample_us + 10000000, fired), 0);
	CU_ASSERT_FALSE(w.poller.active);
	watch_close(&w);
}

static void test_userspace_fires(void)
{
	struct config c;
	struct watch w;
	bool fired[CONFIG_TIERS_MAX];
	char err[256];
	uint64_t t0, t;
	uint64_t some = 1000;
	int events = 0;

	write_totals(some, 0);
	load(&c, two_tiers);
	CU_ASSERT_EQUAL_FATAL(watch_open(&w, rootfd, &c, false, 2000000, &fake_kernel_unprivileged, err, sizeof(err)), 0);
	t0 = w.last_sample_us;
	/* the sentinel wakes it: fast sampling at 100 ms (the smallest window / 10) */
	watch_sentinel_event(&w, t0 + 100000);
	CU_ASSERT_TRUE(w.poller.active);
	CU_ASSERT_EQUAL(watch_arm_timer(&w, t0 + 100000), 100000);
	/* 10% some stall: 10 ms per 100 ms sample; 70 ms within 1 s fires 'medium' */
	for (t = t0 + 100000; t <= t0 + 1000000; t += 100000) {
		some += 10000;
		write_totals(some, 0);
		CU_ASSERT_EQUAL_FATAL(watch_sample(&w, t, fired), 0);
		if (fired[0]) {
			events++;
			CU_ASSERT_EQUAL(t - t0, 700000);
		}
		CU_ASSERT_FALSE(fired[1]); /* no full stall */
	}
	CU_ASSERT_EQUAL(events, 1);
	CU_ASSERT_EQUAL(w.tiers[0].userspace_events, 1);
	/* stall stops: polling goes on for one smallest window, then the idle clock */
	for (; t <= t0 + 2100000; t += 100000)
		CU_ASSERT_EQUAL_FATAL(watch_sample(&w, t, fired), 0);
	CU_ASSERT_FALSE(w.poller.active);
	CU_ASSERT_EQUAL(watch_arm_timer(&w, t), 0);
	CU_ASSERT_FALSE(watch_idle_due(&w, t, 2000000));
	CU_ASSERT_TRUE(watch_idle_due(&w, t + 2000000, 2000000));
	watch_close(&w);
}

static void test_shadow_of_kernel_tier(void)
{
	struct config c;
	struct watch w;
	bool fired[CONFIG_TIERS_MAX];
	char err[256];
	uint64_t t0, full = 0;

	write_totals(0, full);
	load(&c, two_tiers);
	CU_ASSERT_EQUAL_FATAL(watch_open(&w, rootfd, &c, false, 2000000, &fake_kernel_unprivileged, err, sizeof(err)), 0);
	t0 = w.last_sample_us;
	/* the kernel trigger of 'slow' fired: its shadow must not fire again within the window */
	watch_kernel_event(&w, 1, t0 + 100000);
	CU_ASSERT_TRUE(w.poller.active); /* unprivileged: the watch samples */
	full += 400000;
	write_totals(full, full);
	CU_ASSERT_EQUAL_FATAL(watch_sample(&w, t0 + 200000, fired), 0);
	CU_ASSERT_FALSE(fired[1]);
	/* a starved kernel trigger: growth keeps coming, no kernel event; the shadow fires once the window passed */
	full += 400000;
	write_totals(full, full);
	CU_ASSERT_EQUAL_FATAL(watch_sample(&w, t0 + 2200000, fired), 0);
	CU_ASSERT_TRUE(fired[1]);
	watch_close(&w);
}

static void test_errors(void)
{
	struct config c;
	struct watch w;
	char err[256], path[256];

	load(&c, "[daemon]\npressure = /proc/pressure/nothing\n[tier a]\ntrigger = some 1s 2s\nmin_oom_score_adj = 0\n");
	CU_ASSERT_EQUAL(watch_open(&w, rootfd, &c, false, 0, &fake_kernel_unprivileged, err, sizeof(err)), -ENOENT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "cannot read /proc/pressure/nothing"));

	snprintf(path, sizeof(path), "%s/proc/pressure/garbage", root);
	FILE *f = fopen(path, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs("hello\n", f);
	fclose(f);
	load(&c, "[daemon]\npressure = /proc/pressure/garbage\n[tier a]\ntrigger = some 1s 2s\nmin_oom_score_adj = 0\n");
	CU_ASSERT_EQUAL(watch_open(&w, rootfd, &c, false, 0, &fake_kernel_unprivileged, err, sizeof(err)), -EBADMSG);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "not a PSI pressure file"));

	/* the file disappears while armed (its cgroup was removed) */
	write_totals(0, 0);
	load(&c, two_tiers);
	CU_ASSERT_EQUAL_FATAL(watch_open(&w, rootfd, &c, false, 0, &fake_kernel_unprivileged, err, sizeof(err)), 0);
	snprintf(path, sizeof(path), "%s/proc/pressure/memory", root);
	f = fopen(path, "w"); /* truncated: reads return nothing */
	fclose(f);
	bool fired[CONFIG_TIERS_MAX];
	CU_ASSERT_TRUE(watch_sample(&w, w.last_sample_us + 100000, fired) < 0);
	watch_close(&w);
}

int main(void)
{
	static CU_TestInfo tests[] = {
		{ "kernel or userspace per tier", test_sources },
		{ "idle cost", test_idle_cost },
		{ "idle period", test_idle_period },
		{ "idle sample wakes", test_idle_sample_wakes },
		{ "userspace tier fires", test_userspace_fires },
		{ "shadow of a starved kernel trigger", test_shadow_of_kernel_tier },
		{ "unreadable pressure file", test_errors },
		CU_TEST_INFO_NULL,
	};
	static CU_SuiteInfo suites[] = {
		{ "watch", suite_init, suite_cleanup, NULL, NULL, tests },
		CU_SUITE_INFO_NULL,
	};

	return cunit_tap_main(suites);
}
