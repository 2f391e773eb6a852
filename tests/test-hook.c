/* SPDX-License-Identifier: MIT */
/* test-hook: hook_run() on the real kernel, without memory pressure: what
 * the on_kill program is (user, capabilities, signals, oom_score_adj, nice),
 * that a failed set-up runs nothing, and the refusals before the fork.
 * The daemon's state is imitated in a forked helper (SIG_IGN on SIGPIPE, a
 * blocked signal, oom_score_adj 500, nice 3) so the test's own process is
 * left alone. Switching users needs root; without it those cases skip. */
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "cunit-tap.h"
#include "fileio.h"
#include "fixture-tree.h"
#include "hook.h"
#include "trustpath.h"

static char dir[] = "/tmp/psi-lmkd-test-hook-XXXXXX";

/* The script records what it is into $1-less fixed paths under dir/out. */
static const char script[] = "#!/bin/sh\n"
			     "o=%s/out\n"
			     "{\n"
			     "\twhile IFS= read -r l; do\n"
			     "\t\tcase $l in Cap*|NoNewPrivs*|SigIgn*|SigBlk*|Uid*|Gid*|Groups*) echo \"$l\" ;; esac\n"
			     "\tdone </proc/self/status\n"
			     "\tread -r adj </proc/self/oom_score_adj\n"
			     "\techo \"adj $adj\"\n"
			     "\tread -r st </proc/self/stat\n"
			     "\tset -- ${st##*) }\n"
			     "\techo \"nice ${17}\"\n"
			     "\techo \"sid $4\"\n"
			     "\techo \"pid $$\"\n"
			     "\techo \"comm $PSI_LMKD_COMM\"\n"
			     "} >\"$o/record\"\n";

static int make_files(void)
{
	char path[256], text[2048];
	int fd, n;

	if (!mkdtemp(dir) || chmod(dir, 0755) < 0)
		return -errno;
	snprintf(path, sizeof(path), "%s/out", dir);
	if (mkdir(path, 0777) < 0 || chmod(path, 0777) < 0) /* whoever the hook runs as */
		return -errno;
	snprintf(path, sizeof(path), "%s/hook", dir);
	n = snprintf(text, sizeof(text), script, dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	if (fd < 0)
		return -errno;
	if (write(fd, text, (size_t)n) != n) {
		close(fd);
		return -EIO;
	}
	close(fd);
	return 0;
}

static void remove_files(void)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/out/record", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/out", dir);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/hook", dir);
	unlink(path);
	rmdir(dir);
}

/* nobody as root; ourselves otherwise (a switch to one's own ids needs no
 * capability) */
static int hook_user(struct config_user *u)
{
	const struct passwd *pw = geteuid() == 0 ? getpwnam("nobody") : getpwuid(geteuid());
	int n;

	memset(u, 0, sizeof(*u));
	if (!pw)
		return -ENOENT;
	snprintf(u->name, sizeof(u->name), "%s", pw->pw_name);
	u->uid = pw->pw_uid;
	u->gid = geteuid() == 0 ? pw->pw_gid : getegid();
	if (geteuid() == 0) {
		u->groups[0] = pw->pw_gid;
		u->n_groups = 1;
	} else {
		n = getgroups(CONFIG_GROUPS_MAX, u->groups);
		if (n < 0)
			return -errno;
		u->n_groups = (size_t)n;
	}
	return 0;
}

/* The program at dir/name as the daemon opens it (trustpath.h): its fd. */
static int open_hook(const char *name)
{
	char path[256], why[1024];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = trust_open(path, TRUST_PROGRAM, "on_kill", why, sizeof(why));
	if (fd < 0)
		printf("# %s\n", why);
	return fd;
}

/* In a helper process that looks like the daemon: run the hook progfd
 * (opened as dir/name) with procfd, wait for it; the helper exits with the
 * hook's exit status (or 200 + signal). */
static int run_hook_as_daemon(const struct config_user *u, int procfd, int progfd, const char *name)
{
	struct proc_info v;
	char path[256];
	int status;
	pid_t helper, hook;

	memset(&v, 0, sizeof(v));
	v.pid = 4242;
	snprintf(v.comm, sizeof(v.comm), "a\nb");
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fflush(stdout);
	helper = fork();
	if (helper < 0)
		return -errno;
	if (helper == 0) {
		sigset_t usr1;
		int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);

		signal(SIGPIPE, SIG_IGN);
		signal(SIGINT, SIG_IGN);
		sigemptyset(&usr1);
		sigaddset(&usr1, SIGUSR1);
		sigprocmask(SIG_BLOCK, &usr1, NULL);
		if (write_file_at(AT_FDCWD, "/proc/self/oom_score_adj", "500") < 0 || setpriority(PRIO_PROCESS, 0, 3) < 0)
			_exit(98);
		hook = hook_run(progfd, path, u, procfd, devnull, &v, "t", "psi_some");
		if (hook < 0)
			_exit(99);
		if (waitpid(hook, &status, 0) != hook)
			_exit(97);
		_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 200 + WTERMSIG(status));
	}
	if (waitpid(helper, &status, 0) != helper || !WIFEXITED(status))
		return -ECHILD;
	return WEXITSTATUS(status);
}

static int read_record(char *buf, size_t size)
{
	char path[256];
	ssize_t n;

	snprintf(path, sizeof(path), "%s/out/record", dir);
	n = read_file_at(AT_FDCWD, path, buf, size);
	return n < 0 ? (int)n : 0;
}

static void want_line(const char *record, const char *line)
{
	const char *p = record;
	size_t n = strlen(line);

	for (;;) {
		if (strncmp(p, line, n) == 0 && (p[n] == '\n' || p[n] == '\0'))
			return;
		p = strchr(p, '\n');
		if (!p++)
			break;
	}
	printf("# no line \"%s\" in:\n%s", line, record);
	CU_FAIL("the hook's record lacks a line");
}

static void test_refusals(void)
{
	struct config_user root;
	struct proc_info v;

	memset(&root, 0, sizeof(root));
	memset(&v, 0, sizeof(v));
	/* uid 0 never, even if a config got past config.c */
	CU_ASSERT_EQUAL(hook_run(0, "/bin/true", &root, 0, 0, &v, "t", "r"), -EPERM);
	root.uid = 65534;
	CU_ASSERT_EQUAL(hook_run(0, "/bin/true", &root, -1, 0, &v, "t", "r"), -EBADF);
	CU_ASSERT_EQUAL(hook_run(0, "/bin/true", &root, 0, -1, &v, "t", "r"), -EBADF);
	CU_ASSERT_EQUAL(hook_run(-1, "/bin/true", &root, 0, 0, &v, "t", "r"), -EBADF);
}

static void test_confined(void)
{
	struct config_user u;
	char record[4096], want[64];
	int procfd, progfd, r;

	if (geteuid() != 0) {
		cunit_tap_skip("switching to nobody needs root");
		return;
	}
	CU_ASSERT_EQUAL_FATAL(hook_user(&u), 0);
	procfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CU_ASSERT_FATAL(procfd >= 0);
	progfd = open_hook("hook"); /* a #! script, run through its fd */
	CU_ASSERT_FATAL(progfd >= 0);
	r = run_hook_as_daemon(&u, procfd, progfd, "hook");
	close(progfd);
	close(procfd);
	if (r == HOOK_EXIT_SETUP) {
		/* valgrind refuses some signal dispositions: nothing ran, as it should */
		cunit_tap_skip("the hook's set-up failed here (under valgrind?)");
		return;
	}
	CU_ASSERT_EQUAL_FATAL(r, 0);
	CU_ASSERT_EQUAL_FATAL(read_record(record, sizeof(record)), 0);
	snprintf(want, sizeof(want), "Uid:\t%u\t%u\t%u\t%u", (unsigned)u.uid, (unsigned)u.uid, (unsigned)u.uid,
		 (unsigned)u.uid);
	want_line(record, want);
	snprintf(want, sizeof(want), "Gid:\t%u\t%u\t%u\t%u", (unsigned)u.gid, (unsigned)u.gid, (unsigned)u.gid,
		 (unsigned)u.gid);
	want_line(record, want);
	snprintf(want, sizeof(want), "Groups:\t%u ", (unsigned)u.groups[0]);
	want_line(record, want);
	want_line(record, "CapInh:\t0000000000000000");
	want_line(record, "CapPrm:\t0000000000000000");
	want_line(record, "CapEff:\t0000000000000000");
	want_line(record, "CapAmb:\t0000000000000000");
	want_line(record, "NoNewPrivs:\t1");
	want_line(record, "SigIgn:\t0000000000000000"); /* SIGPIPE, SIGINT were ignored */
	want_line(record, "SigBlk:\t0000000000000000"); /* SIGUSR1 was blocked */
	want_line(record, "adj 0");                     /* the helper's was 500 */
	want_line(record, "nice 0");                    /* the helper's was 3 */
	want_line(record, "comm a\\x0ab");
	/* its own session: sid == pid */
	{
		const char *sid = strstr(record, "\nsid "), *pid = strstr(record, "\npid ");

		CU_ASSERT_FATAL(sid && pid);
		CU_ASSERT_EQUAL(atoi(sid + 5), atoi(pid + 5));
	}
}

/* A step that fails before execve (here: no self/oom_score_adj under the
 * /proc fd) means the program never runs. */
static void test_setup_failure_runs_nothing(void)
{
	char record[64], path[256];
	struct config_user u;
	int emptyfd, progfd, r;

	CU_ASSERT_EQUAL_FATAL(hook_user(&u), 0);
	snprintf(path, sizeof(path), "%s/out/record", dir);
	unlink(path);
	emptyfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC); /* no self/ in it */
	CU_ASSERT_FATAL(emptyfd >= 0);
	progfd = open_hook("hook");
	CU_ASSERT_FATAL(progfd >= 0);
	r = run_hook_as_daemon(&u, emptyfd, progfd, "hook");
	close(progfd);
	close(emptyfd);
	CU_ASSERT_EQUAL(r, HOOK_EXIT_SETUP);
	CU_ASSERT_EQUAL(read_record(record, sizeof(record)), -ENOENT);
}

/* The daemon runs what it checked: dir/link, a symlink to the hook when it
 * was opened, re-pointed since at another program (as the owner of a
 * directory on the path could) -- the hook still runs, not the other. */
static void test_repointed_link_runs_checked_program(void)
{
	char record[4096], link[256], evil[256], next[256];
	struct config_user u;
	int procfd, progfd, r;

	CU_ASSERT_EQUAL_FATAL(hook_user(&u), 0);
	snprintf(link, sizeof(link), "%s/link", dir);
	snprintf(evil, sizeof(evil), "%s/evil", dir);
	snprintf(next, sizeof(next), "%s/link.next", dir);
	snprintf(record, sizeof(record), "#!/bin/sh\necho evil >%s/out/record\n", dir);
	fixture_put(dir, "evil", record);
	CU_ASSERT_EQUAL_FATAL(chmod(evil, 0755), 0);
	CU_ASSERT_EQUAL_FATAL(symlink("hook", link), 0);
	progfd = open_hook("link");
	CU_ASSERT_FATAL(progfd >= 0);
	/* ln -sfn evil link, after the check */
	CU_ASSERT_EQUAL(symlink("evil", next), 0);
	CU_ASSERT_EQUAL(rename(next, link), 0);
	snprintf(record, sizeof(record), "%s/out/record", dir);
	unlink(record);
	procfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CU_ASSERT_FATAL(procfd >= 0);
	r = run_hook_as_daemon(&u, procfd, progfd, "link");
	close(procfd);
	close(progfd);
	unlink(link);
	unlink(evil);
	if (r == HOOK_EXIT_SETUP) {
		cunit_tap_skip("the hook's set-up failed here (under valgrind?)");
		return;
	}
	CU_ASSERT_EQUAL(r, 0);
	CU_ASSERT_EQUAL_FATAL(read_record(record, sizeof(record)), 0);
	CU_ASSERT_PTR_NULL(strstr(record, "evil"));
	want_line(record, "comm a\\x0ab"); /* the checked hook's record */
}

static int suite_init(void)
{
	return make_files() < 0;
}

static int suite_clean(void)
{
	remove_files();
	return 0;
}

int main(void)
{
	static CU_TestInfo tests[] = {
		{ "refused before the fork: uid 0, closed fds", test_refusals },
		{ "the program runs as nobody, without capabilities, signals and priority reset", test_confined },
		{ "a failed set-up runs nothing (exit 126)", test_setup_failure_runs_nothing },
		{ "a link re-pointed after the check runs the checked program", test_repointed_link_runs_checked_program },
		CU_TEST_INFO_NULL,
	};
	static CU_SuiteInfo suites[] = {
		{ "hook", suite_init, suite_clean, NULL, NULL, tests },
		CU_SUITE_INFO_NULL,
	};

	return cunit_tap_main(suites);
}
