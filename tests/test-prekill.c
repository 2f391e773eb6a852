/* SPDX-License-Identifier: MIT */
/* test-prekill: the pre_kill hook in flight (prekill.h) on its own: which
 * kills may wait, the reaped child told apart (the hook in flight, one
 * ended earlier, another), and prekill_stop's SIGKILL to the hook's whole
 * process group. The "hook" is a child of this test leading a session of
 * its own, with a grandchild in it; nothing else is signalled. The killer's
 * use of it is in test-kill. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "cunit-tap.h"
#include "prekill.h"

static void test_who_may_wait(void)
{
	CU_ASSERT_TRUE(prekill_may_wait(true));   /* a PSI decision */
	CU_ASSERT_FALSE(prekill_may_wait(false)); /* a last resort, an OOM decision */
}

static void test_reaped_told_apart(void)
{
	struct prekill pk;

	memset(&pk, 0, sizeof(pk));
	CU_ASSERT_EQUAL(prekill_reaped(&pk, 123), PREKILL_NOT_OURS);
	prekill_started(&pk, 123, 1000000, 0, "/user.slice");
	CU_ASSERT_EQUAL(pk.runs, 1);
	CU_ASSERT_STRING_EQUAL(pk.group, "/user.slice");
	CU_ASSERT_EQUAL(prekill_ms(&pk, 1250000), 250);
	CU_ASSERT_EQUAL(prekill_ms(&pk, 999999), 0);
	CU_ASSERT_EQUAL(prekill_reaped(&pk, 0), PREKILL_NOT_OURS);
	CU_ASSERT_EQUAL(prekill_reaped(&pk, 124), PREKILL_NOT_OURS); /* an on_kill hook */
	CU_ASSERT_EQUAL(prekill_reaped(&pk, 123), PREKILL_IN_FLIGHT);
	CU_ASSERT_EQUAL(pk.hook, 0);
	CU_ASSERT_EQUAL(prekill_reaped(&pk, 123), PREKILL_NOT_OURS); /* once */
	CU_ASSERT_EQUAL(prekill_stop(&pk), 0);                         /* nothing in flight */
}

/* A hook with a grandchild in its session: prekill_stop kills both, and
 * the hook, reaped later, is known as one ended here. */
static void test_stop_kills_the_group(void)
{
	struct prekill pk;
	int pipefd[2], status, i;
	pid_t hook, grandchild = 0;

	memset(&pk, 0, sizeof(pk));
	CU_ASSERT_EQUAL_FATAL(pipe(pipefd), 0);
	fflush(stdout);
	hook = fork();
	CU_ASSERT_TRUE_FATAL(hook >= 0);
	if (hook == 0) {
		pid_t g;

		close(pipefd[0]);
		if (setsid() < 0)
			_exit(2);
		g = fork();
		if (g == 0) {
			for (;;)
				pause();
		}
		if (g < 0 || write(pipefd[1], &g, sizeof(g)) != (ssize_t)sizeof(g))
			_exit(3);
		for (;;)
			pause();
	}
	close(pipefd[1]);
	CU_ASSERT_EQUAL(read(pipefd[0], &grandchild, sizeof(grandchild)), (ssize_t)sizeof(grandchild));
	close(pipefd[0]);
	CU_ASSERT_TRUE_FATAL(grandchild > 0);
	prekill_started(&pk, hook, 1, 0, "");
	CU_ASSERT_EQUAL(prekill_stop(&pk), hook);
	CU_ASSERT_EQUAL(pk.hook, 0);
	CU_ASSERT_EQUAL_FATAL(waitpid(hook, &status, 0), hook);
	CU_ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	CU_ASSERT_EQUAL(prekill_reaped(&pk, hook), PREKILL_ENDED);
	CU_ASSERT_EQUAL(prekill_reaped(&pk, hook), PREKILL_NOT_OURS);
	/* the grandchild was in the hook's group (reparented; init reaps it) */
	for (i = 0; i < 200 && kill(grandchild, 0) == 0; i++)
		usleep(10000);
	CU_ASSERT_EQUAL(kill(grandchild, 0), -1);
	if (kill(grandchild, 0) == 0)
		kill(grandchild, SIGKILL); /* ours: never left behind */
}

int main(void)
{
	static CU_TestInfo tests[] = {
		{ "only a PSI decision waits", test_who_may_wait },
		{ "the reaped child told apart", test_reaped_told_apart },
		{ "prekill_stop kills the hook's whole process group", test_stop_kills_the_group },
		CU_TEST_INFO_NULL,
	};
	static CU_SuiteInfo suites[] = {
		{ "prekill", NULL, NULL, NULL, NULL, tests },
		CU_SUITE_INFO_NULL,
	};

	return cunit_tap_main(suites);
}
