/* SPDX-License-Identifier: MIT */
/* test-lmkd-watchdog: the watchdog that kills, on children of the test's
 * own: when it is due (the loop busy for the timeout, once per timeout),
 * a bite kills the first candidate that is still the process it was and
 * still at its adj and no other one (a recycled start time or a changed
 * adj is skipped), a dry run kills nothing, and the thread bites a loop
 * that stays busy but never one that keeps coming back. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#include "cunit-tap.h"
#include "lmkd-watchdog.h"

/* Every child made, so that a failing case (a FATAL assertion returns at
 * once) leaves none behind: an orphan at adj 1000 would outrank other
 * tests' victims machine-wide. */
static pid_t kids[16];
static size_t n_kids;

static pid_t child(int adj)
{
	pid_t p;

	fflush(stdout); /* or the child's exit writes our buffered TAP lines again */
	p = fork();
	if (p > 0 && n_kids < sizeof(kids) / sizeof(kids[0]))
		kids[n_kids++] = p;

	if (p == 0) {
		FILE *f = fopen("/proc/self/oom_score_adj", "w");

		if (f) {
			fprintf(f, "%d", adj);
			fclose(f);
		}
		for (;;)
			pause();
	}
	return p;
}

/* waits (1 s at most) until the child's oom_score_adj is adj */
static int settled(pid_t p, int adj)
{
	char path[48], buf[16];
	int i, v;

	snprintf(path, sizeof(path), "/proc/%d/oom_score_adj", (int)p);
	for (i = 0; i < 100; i++) {
		FILE *f = fopen(path, "r");

		if (f) {
			v = fgets(buf, sizeof(buf), f) ? atoi(buf) : -2000;
			fclose(f);
			if (v == adj)
				return 0;
		}
		usleep(10000);
	}
	return -ETIMEDOUT;
}

static struct lmkd_watchdog_cand cand_of(int procfd, pid_t p, int adj)
{
	struct lmkd_watchdog_cand c = { .pid = p, .adj = adj, .uid = 10000 };
	struct proc_info pi;

	if (procfs_read_pid(procfd, p, &pi) == 0)
		c.start_time = pi.start_time;
	snprintf(c.comm, sizeof(c.comm), "child");
	return c;
}

/* true when p died of SIGKILL; false when it is still alive (then it is
 * left alone) */
static bool killed(pid_t p, int wait_ms)
{
	int st, i;

	for (i = 0; i <= wait_ms; i += 10) {
		if (waitpid(p, &st, WNOHANG) == p)
			return WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL;
		usleep(10000);
	}
	return false;
}

static void reap(pid_t p)
{
	kill(p, SIGKILL);
	waitpid(p, NULL, 0);
}

/* suite cleanup: whatever children a case left. Only a pid that is still
 * our own unreaped, living child is signalled (waitpid WNOHANG says 0): a
 * reaped one's pid may name someone else's process by now. */
static int kill_kids(void)
{
	size_t i;

	for (i = 0; i < n_kids; i++)
		if (waitpid(kids[i], NULL, WNOHANG) == 0) {
			kill(kids[i], SIGKILL);
			waitpid(kids[i], NULL, 0);
		}
	n_kids = 0;
	return 0;
}

static void test_due(void)
{
	const uint64_t t = 2000000;

	CU_ASSERT_FALSE(lmkd_watchdog_due(0, 0, 10 * t, t));          /* waiting for events */
	CU_ASSERT_FALSE(lmkd_watchdog_due(5 * t, 0, 5 * t + t - 1, t)); /* busy, not long enough */
	CU_ASSERT_TRUE(lmkd_watchdog_due(5 * t, 0, 6 * t, t));
	CU_ASSERT_FALSE(lmkd_watchdog_due(5 * t, 6 * t, 6 * t + 1, t)); /* bitten just now */
	CU_ASSERT_TRUE(lmkd_watchdog_due(5 * t, 6 * t, 7 * t, t));      /* still stuck: again */
	CU_ASSERT_FALSE(lmkd_watchdog_due(9 * t, 0, 8 * t, t));         /* a clock that went back */
}

static void test_bite(void)
{
	struct lmkd_watchdog w;
	struct lmkd_watchdog_cand c[4];
	struct log log;
	int procfd;
	pid_t recycled, moved, victim, next, who = 0;

	if (cunit_tap_skip_without_pidfd()) /* valgrind has no pidfd_open */
		return;
	procfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	recycled = child(1000);
	moved = child(950);
	victim = child(900);
	next = child(800);
	log_init(&log, LOG_EMERG, false);
	CU_ASSERT_TRUE_FATAL(procfd >= 0);
	CU_ASSERT_EQUAL_FATAL(settled(recycled, 1000) + settled(moved, 950) + settled(victim, 900) + settled(next, 800), 0);
	/* a thread that never bites by itself: the test bites */
	CU_ASSERT_EQUAL_FATAL(lmkd_watchdog_start(&w, procfd, &log, 3600ULL * 1000000), 0);
	c[0] = cand_of(procfd, recycled, 1000);
	c[0].start_time++;                   /* the pid names another process now */
	c[1] = cand_of(procfd, moved, 1000); /* chosen at 1000, at 950 now */
	c[2] = cand_of(procfd, victim, 900);
	c[3] = cand_of(procfd, next, 800);
	lmkd_watchdog_publish(&w, c, 4);
	atomic_store(&w.dry_run, true);
	CU_ASSERT_EQUAL(lmkd_watchdog_bite(&w, 2500000, &who), 0);
	CU_ASSERT_EQUAL(who, victim);
	CU_ASSERT_FALSE(killed(victim, 50)); /* dry: alive */
	CU_ASSERT_EQUAL(atomic_load(&w.kills), 0);
	atomic_store(&w.dry_run, false);
	CU_ASSERT_EQUAL(lmkd_watchdog_bite(&w, 2500000, &who), 0);
	CU_ASSERT_EQUAL(who, victim);
	CU_ASSERT_TRUE(killed(victim, 1000));
	CU_ASSERT_EQUAL(atomic_load(&w.kills), 1);
	CU_ASSERT_FALSE(killed(recycled, 0));
	CU_ASSERT_FALSE(killed(moved, 0));
	CU_ASSERT_FALSE(killed(next, 0));
	/* nothing left that qualifies: nothing killed */
	lmkd_watchdog_publish(&w, c, 3);
	CU_ASSERT_EQUAL(lmkd_watchdog_bite(&w, 2500000, &who), -ESRCH);
	CU_ASSERT_EQUAL(atomic_load(&w.kills), 1);
	lmkd_watchdog_stop(&w);
	reap(recycled);
	reap(moved);
	reap(next);
	close(procfd);
}

static uint64_t mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000ULL + (uint64_t)ts.tv_nsec / 1000;
}

/* the thread: a loop that keeps coming back within the timeout is never
 * bitten; one that stays busy is */
static void test_thread(void)
{
	const uint64_t timeout = 200000;
	struct lmkd_watchdog w;
	struct lmkd_watchdog_cand c;
	struct log log;
	int procfd, i;
	pid_t victim;

	if (cunit_tap_skip_without_pidfd()) /* valgrind has no pidfd_open */
		return;
	procfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	victim = child(1000);
	log_init(&log, LOG_EMERG, false);
	CU_ASSERT_EQUAL_FATAL(settled(victim, 1000), 0);
	CU_ASSERT_EQUAL_FATAL(lmkd_watchdog_start(&w, procfd, &log, timeout), 0);
	c = cand_of(procfd, victim, 1000);
	lmkd_watchdog_publish(&w, &c, 1);
	/* healthy: busy for a tenth of the timeout at a time, for 5 timeouts */
	for (i = 0; i < 50; i++) {
		lmkd_watchdog_busy(&w, mono_us());
		usleep((useconds_t)(timeout / 10));
		lmkd_watchdog_idle(&w);
	}
	CU_ASSERT_FALSE(killed(victim, 0));
	CU_ASSERT_EQUAL(atomic_load(&w.kills), 0);
	/* stuck */
	lmkd_watchdog_busy(&w, mono_us());
	CU_ASSERT_TRUE(killed(victim, 2000));
	/* the thread counts a kill after its signal and process_mrelease: the
	 * victim can be reaped here first (seen once under load) */
	for (i = 0; i < 200 && atomic_load(&w.kills) == 0; i++)
		usleep(10000);
	CU_ASSERT_EQUAL(atomic_load(&w.kills), 1);
	lmkd_watchdog_idle(&w);
	lmkd_watchdog_stop(&w);
	lmkd_watchdog_stop(&w); /* twice: harmless */
	close(procfd);
}

int main(void)
{
	static CU_TestInfo tests[] = {
		{ "due: busy for the timeout, once per timeout", test_due },
		{ "bite: the first candidate still itself and at its adj; dry run", test_bite },
		{ "thread: a healthy loop is never bitten, a stuck one is", test_thread },
		CU_TEST_INFO_NULL,
	};
	static CU_SuiteInfo suites[] = {
		{ "lmkd-watchdog", NULL, kill_kids, NULL, NULL, tests },
		CU_SUITE_INFO_NULL,
	};

	return cunit_tap_main(suites);
}
