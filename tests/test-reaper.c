/* SPDX-License-Identifier: MIT */
/* test-reaper: the kill path against real child processes of this test. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <stdbool.h>
#include <unistd.h>
#include <sys/wait.h>

#include "cunit-tap.h"
#include "procfs.h"
#include "reaper.h"

static pid_t spawn_sleeper(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		for (;;)
			pause();
	}
	return pid;
}

static int proc_dir(void)
{
	return open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

static void test_kill_verified(void)
{
	int proc;
	pid_t pid;
	uint64_t start;
	struct pollfd pfd;
	int fd, status;

	if (cunit_tap_skip_without_pidfd())
		return;
	proc = proc_dir();
	pid = spawn_sleeper();
	CU_ASSERT_FATAL(pid > 0 && proc >= 0);
	CU_ASSERT_EQUAL_FATAL(procfs_read_start_time(proc, pid, &start), 0);
	fd = reaper_open_verified(proc, pid, start);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(reaper_exited(fd), 0);
	/* a live, not yet killed task cannot be reaped */
	CU_ASSERT_EQUAL(reaper_mrelease(fd), -EINVAL);
	CU_ASSERT_EQUAL(reaper_signal(fd, SIGKILL), 0);
	pfd.fd = fd;
	pfd.events = POLLIN;
	CU_ASSERT_EQUAL(poll(&pfd, 1, 5000), 1);
	CU_ASSERT_EQUAL(reaper_exited(fd), 1);
	CU_ASSERT_EQUAL(waitpid(pid, &status, 0), pid);
	CU_ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	/* the process is gone: signalling through its pidfd reaches nobody */
	CU_ASSERT_EQUAL(reaper_signal(fd, SIGKILL), -ESRCH);
	close(fd);
	close(proc);
}

static void test_identity_mismatch(void)
{
	int proc;
	pid_t pid;
	uint64_t start;
	int status;

	if (cunit_tap_skip_without_pidfd())
		return;
	proc = proc_dir();
	pid = spawn_sleeper();
	CU_ASSERT_FATAL(pid > 0 && proc >= 0);
	CU_ASSERT_EQUAL_FATAL(procfs_read_start_time(proc, pid, &start), 0);
	/* the pid now names a process with another start time: never signalled */
	CU_ASSERT_EQUAL(reaper_open_verified(proc, pid, start + 1), -ESRCH);
	CU_ASSERT_EQUAL(waitpid(pid, &status, WNOHANG), 0);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	/* reaped: the pid names nothing */
	CU_ASSERT_EQUAL(reaper_open_verified(proc, pid, start), -ESRCH);
	close(proc);
}

static void test_mrelease_after_kill(void)
{
	int proc;
	pid_t pid;
	uint64_t start;
	int fd, r, status;

	if (cunit_tap_skip_without_pidfd())
		return;
	proc = proc_dir();
	pid = spawn_sleeper();
	CU_ASSERT_FATAL(pid > 0 && proc >= 0);
	CU_ASSERT_EQUAL_FATAL(procfs_read_start_time(proc, pid, &start), 0);
	fd = reaper_open_verified(proc, pid, start);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(reaper_signal(fd, SIGKILL), 0);
	r = reaper_mrelease(fd);
	/* 0 when the kernel reaped it, -EINVAL/-ESRCH when the exit won the race */
	CU_ASSERT_TRUE(r == 0 || r == -EINVAL || r == -ESRCH);
	waitpid(pid, &status, 0);
	close(fd);
	close(proc);
}

int main(void)
{
	static CU_TestInfo tests[] = {
		{ "identity-checked kill", test_kill_verified },
		{ "pid reuse is never signalled", test_identity_mismatch },
		{ "process_mrelease after SIGKILL", test_mrelease_after_kill },
		CU_TEST_INFO_NULL,
	};
	static CU_SuiteInfo suites[] = {
		{ "reaper", NULL, NULL, NULL, NULL, tests },
		CU_SUITE_INFO_NULL,
	};

	return cunit_tap_main(suites);
}
