/* SPDX-License-Identifier: MIT */
/* test-cgroup: the cgroup2 subtree walk that lists what cgroup.kill would
 * kill (cgroup_read_subtree_procs) and the leaf check (cgroup_has_children),
 * on a fixture tree made in a temporary directory:
 *
 *   ROOT/sys/fs/cgroup/                cgroup.procs 1
 *     app/                             10 11
 *       a/                             20
 *         deep/                        30 31
 *       b/                             (empty; a plain file "notes" beside it)
 *       gone/                          no cgroup.procs: removed mid-walk
 *         x/                           99 (never reached)
 *       link -> a                      a symlink: not a group, not followed
 *     leaf/                            5
 *     big/                             300 pids of 6 digits (2.1 KB: several reads)
 *     bad/                             "12x"
 *     nonl/                            "7" without a newline
 *     chain/                           (empty)
 *       0/1/.../39/                    40 nested groups, pid 4000+i in level i
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "cgroup.h"
#include "cunit-tap.h"
#include "fileio.h"

#define MNT "/sys/fs/cgroup"
#define CHAIN 40

/* Every malloc, calloc, realloc and strdup of the library goes through these
 * (linked with -Wl,--wrap=...): the walk must not make a single one. */
void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
char *__real_strdup(const char *s);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);
char *__wrap_strdup(const char *s);

static unsigned long heap_calls;

void *__wrap_malloc(size_t n)
{
	heap_calls++;
	return __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t size)
{
	heap_calls++;
	return __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t n)
{
	heap_calls++;
	return __real_realloc(p, n);
}

char *__wrap_strdup(const char *s)
{
	heap_calls++;
	return __real_strdup(s);
}

static char root[] = "/tmp/test-cgroup.XXXXXX";
static int rootfd = -1;

static int put_dir(const char *rel)
{
	char path[2048];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	return mkdir(path, 0755);
}

static int put_file(const char *rel, const char *text)
{
	char path[2048];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "w");
	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

static int suite_init(void)
{
	static const char *dirs[] = { "sys", "sys/fs", "sys/fs/cgroup", "sys/fs/cgroup/app", "sys/fs/cgroup/app/a",
				      "sys/fs/cgroup/app/a/deep", "sys/fs/cgroup/app/b", "sys/fs/cgroup/app/gone",
				      "sys/fs/cgroup/app/gone/x", "sys/fs/cgroup/leaf", "sys/fs/cgroup/big",
				      "sys/fs/cgroup/bad", "sys/fs/cgroup/nonl" };
	char rel[1024], text[8192], link[1024];
	size_t i, len = 0;
	int r = 0;

	if (!mkdtemp(root))
		return -1;
	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		r |= put_dir(dirs[i]);
	r |= put_file("sys/fs/cgroup/cgroup.procs", "1\n");
	r |= put_file("sys/fs/cgroup/app/cgroup.procs", "10\n11\n");
	r |= put_file("sys/fs/cgroup/app/a/cgroup.procs", "20\n");
	r |= put_file("sys/fs/cgroup/app/a/deep/cgroup.procs", "30\n31\n");
	r |= put_file("sys/fs/cgroup/app/b/cgroup.procs", "");
	r |= put_file("sys/fs/cgroup/app/b/notes", "not a group\n");
	r |= put_file("sys/fs/cgroup/app/gone/x/cgroup.procs", "99\n");
	r |= put_file("sys/fs/cgroup/leaf/cgroup.procs", "5\n");
	r |= put_file("sys/fs/cgroup/bad/cgroup.procs", "12x\n");
	r |= put_file("sys/fs/cgroup/nonl/cgroup.procs", "7");
	for (i = 0; i < 300; i++)
		len += (size_t)snprintf(text + len, sizeof(text) - len, "%zu\n", 100000 + i);
	r |= put_file("sys/fs/cgroup/big/cgroup.procs", text);
	snprintf(link, sizeof(link), "%s/sys/fs/cgroup/app/link", root);
	r |= symlink("a", link);
	len = (size_t)snprintf(rel, sizeof(rel), "sys/fs/cgroup/chain");
	r |= put_dir(rel);
	r |= put_file("sys/fs/cgroup/chain/cgroup.procs", "");
	for (i = 0; i < CHAIN; i++) {
		char file[1100], pid[16];

		len += (size_t)snprintf(rel + len, sizeof(rel) - len, "/%zu", i);
		r |= put_dir(rel);
		snprintf(file, sizeof(file), "%s/cgroup.procs", rel);
		snprintf(pid, sizeof(pid), "%zu\n", 4000 + i);
		r |= put_file(file, pid);
	}
	rootfd = sysroot_open(root);
	return r != 0 || rootfd < 0 ? -1 : 0;
}

static int suite_cleanup(void)
{
	char cmd[300];

	if (rootfd >= 0)
		close(rootfd);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd) == 0 ? 0 : -1;
}

static int open_fds(void)
{
	return count_entries_at(AT_FDCWD, "/proc/self/fd");
}

static bool has_pid(const pid_t *pids, int n, pid_t p)
{
	int i;

	for (i = 0; i < n; i++)
		if (pids[i] == p)
			return true;
	return false;
}

/* The walk under the fd count and the heap-call counter: nothing may stay
 * open, nothing may be allocated, on any path. */
static int walk(const char *cg, pid_t *pids, size_t max, unsigned depth)
{
	int fds = open_fds(), r;
	unsigned long calls = heap_calls;

	r = cgroup_read_subtree_procs(rootfd, MNT, cg, pids, max, depth);
	CU_ASSERT_EQUAL(heap_calls, calls);
	CU_ASSERT_EQUAL(open_fds(), fds);
	return r;
}

/* the wrapper really sees the library's allocations: the old one-level
 * reader allocates its 64 KiB buffer */
static void test_heap_counter_works(void)
{
	pid_t pids[16];
	unsigned long calls = heap_calls;

	CU_ASSERT_EQUAL(cgroup_read_procs(rootfd, MNT, "/app", pids, 16), 2);
	CU_ASSERT_TRUE(heap_calls > calls);
}

/* group first, then the child groups; the group without cgroup.procs (gone
 * between listing and reading) is skipped with everything below it; a plain
 * file and a symlink are not groups */
static void test_subtree(void)
{
	pid_t pids[16];
	int n;

	n = walk("/app", pids, 16, 8);
	CU_ASSERT_EQUAL_FATAL(n, 5);
	CU_ASSERT_EQUAL(pids[0], 10);
	CU_ASSERT_EQUAL(pids[1], 11);
	CU_ASSERT_TRUE(has_pid(pids, n, 20));
	CU_ASSERT_TRUE(has_pid(pids, n, 30));
	CU_ASSERT_TRUE(has_pid(pids, n, 31));
	CU_ASSERT_FALSE(has_pid(pids, n, 99));
	/* a subgroup on its own; leaves; a last pid without a newline */
	CU_ASSERT_EQUAL(walk("/app/a", pids, 16, 8), 3);
	CU_ASSERT_EQUAL(pids[0], 20);
	CU_ASSERT_EQUAL(walk("/leaf", pids, 16, 0), 1);
	CU_ASSERT_EQUAL(pids[0], 5);
	CU_ASSERT_EQUAL(walk("/app/b", pids, 16, 0), 0);
	CU_ASSERT_EQUAL(walk("/nonl", pids, 16, 0), 1);
	CU_ASSERT_EQUAL(pids[0], 7);
}

/* the owned walk: every group of the subtree must belong to a uid up to
 * the limit, else -EPERM (a delegated group's owner can move processes
 * past the walk); nothing left open or allocated either way */
static void test_owned(void)
{
	uid_t me = geteuid();
	pid_t pids[16];
	int fds = open_fds();
	char path[4096];

	CU_ASSERT_EQUAL(cgroup_read_owned_procs(rootfd, MNT, "/app", pids, 16, 8, me), 5);
	if (me == 0) {
		/* a group two levels down handed to a user */
		snprintf(path, sizeof(path), "%s/sys/fs/cgroup/app/a", root);
		CU_ASSERT_EQUAL_FATAL(chown(path, 60001, 60001), 0);
		CU_ASSERT_EQUAL(cgroup_read_owned_procs(rootfd, MNT, "/app", pids, 16, 8, 999), -EPERM);
		CU_ASSERT_EQUAL(cgroup_read_owned_procs(rootfd, MNT, "/app", pids, 16, 8, 60001), 5);
		CU_ASSERT_EQUAL(cgroup_read_owned_procs(rootfd, MNT, "/app/b", pids, 16, 8, 999), 0);
		CU_ASSERT_EQUAL(chown(path, 0, 0), 0);
		/* only its cgroup.procs handed over (cgcreate -a), or writable by all */
		snprintf(path, sizeof(path), "%s/sys/fs/cgroup/app/a/cgroup.procs", root);
		CU_ASSERT_EQUAL_FATAL(chown(path, 60001, 60001), 0);
		CU_ASSERT_EQUAL(cgroup_read_owned_procs(rootfd, MNT, "/app", pids, 16, 8, 999), -EPERM);
		CU_ASSERT_EQUAL(chown(path, 0, 0), 0);
		CU_ASSERT_EQUAL(cgroup_read_owned_procs(rootfd, MNT, "/app", pids, 16, 8, 999), 5);
		CU_ASSERT_EQUAL_FATAL(chmod(path, 0666), 0);
		CU_ASSERT_EQUAL(cgroup_read_owned_procs(rootfd, MNT, "/app", pids, 16, 8, 999), -EPERM);
		CU_ASSERT_EQUAL(chmod(path, 0644), 0);
	} else {
		CU_ASSERT_EQUAL(cgroup_read_owned_procs(rootfd, MNT, "/app", pids, 16, 8, me - 1), -EPERM);
	}
	CU_ASSERT_EQUAL(open_fds(), fds);
}

/* exactly max pids fit; one more is -E2BIG, wherever in the tree it is */
static void test_too_many(void)
{
	pid_t pids[400];
	int i, n;

	CU_ASSERT_EQUAL(walk("/app", pids, 5, 8), 5);
	CU_ASSERT_EQUAL(walk("/app", pids, 4, 8), -E2BIG);
	CU_ASSERT_EQUAL(walk("/app", pids, 2, 8), -E2BIG);
	CU_ASSERT_EQUAL(walk("/app", pids, 0, 8), -E2BIG);
	CU_ASSERT_EQUAL(walk("/app/b", pids, 0, 8), 0);
	/* 300 pids over several reads of a 512-byte chunk: none split or lost */
	n = walk("/big", pids, 400, 0);
	CU_ASSERT_EQUAL_FATAL(n, 300);
	for (i = 0; i < n; i++)
		if (pids[i] != 100000 + i)
			break;
	CU_ASSERT_EQUAL(i, 300);
	CU_ASSERT_EQUAL(walk("/big", pids, 299, 0), -E2BIG);
}

/* max_depth counts the levels of groups allowed below cg */
static void test_depth(void)
{
	pid_t pids[64];
	int i, n;

	CU_ASSERT_EQUAL(walk("/app", pids, 16, 2), 5);
	CU_ASSERT_EQUAL(walk("/app", pids, 16, 1), -ELOOP);
	CU_ASSERT_EQUAL(walk("/app", pids, 16, 0), -ELOOP);
	CU_ASSERT_EQUAL(walk("/app/a", pids, 16, 1), 3);
	CU_ASSERT_EQUAL(walk("/app/a", pids, 16, 0), -ELOOP);
	/* 40 nested levels: one fd per level, all closed again */
	n = walk("/chain", pids, 64, CHAIN);
	CU_ASSERT_EQUAL_FATAL(n, CHAIN);
	for (i = 0; i < n; i++)
		if (pids[i] != 4000 + i)
			break;
	CU_ASSERT_EQUAL(i, CHAIN);
	CU_ASSERT_EQUAL(walk("/chain", pids, 64, CHAIN - 1), -ELOOP);
	CU_ASSERT_EQUAL(walk("/chain", pids, 10, CHAIN), -E2BIG);
}

static void test_errors(void)
{
	pid_t pids[16];
	int n;

	CU_ASSERT_EQUAL(walk("/nope", pids, 16, 8), -ENOENT);
	CU_ASSERT_EQUAL(walk("app", pids, 16, 8), -EINVAL);
	CU_ASSERT_EQUAL(walk("/bad", pids, 16, 8), -EINVAL);
	/* a file is not a group; a symlink is not followed */
	CU_ASSERT_EQUAL(walk("/app/b/notes", pids, 16, 8), -ENOTDIR);
	n = walk("/app/link", pids, 16, 8);
	CU_ASSERT_TRUE(n == -ENOTDIR || n == -ELOOP); /* O_DIRECTORY|O_NOFOLLOW: Linux says ENOTDIR */
	/* the top group itself without cgroup.procs: it is gone */
	CU_ASSERT_EQUAL(walk("/app/gone", pids, 16, 8), -ENOENT);
}

static void test_has_children(void)
{
	int fds = open_fds();
	unsigned long calls = heap_calls;

	CU_ASSERT_EQUAL(cgroup_has_children(rootfd, MNT, "/app"), 1);
	CU_ASSERT_EQUAL(cgroup_has_children(rootfd, MNT, "/app/a"), 1);
	CU_ASSERT_EQUAL(cgroup_has_children(rootfd, MNT, "/app/a/deep"), 0);
	/* a plain file beside it is no child group */
	CU_ASSERT_EQUAL(cgroup_has_children(rootfd, MNT, "/app/b"), 0);
	CU_ASSERT_EQUAL(cgroup_has_children(rootfd, MNT, "/leaf"), 0);
	CU_ASSERT_EQUAL(cgroup_has_children(rootfd, MNT, "/"), 1);
	CU_ASSERT_EQUAL(cgroup_has_children(rootfd, MNT, "/nope"), -ENOENT);
	CU_ASSERT_EQUAL(cgroup_has_children(rootfd, MNT, "leaf"), -EINVAL);
	CU_ASSERT_EQUAL(heap_calls, calls);
	CU_ASSERT_EQUAL(open_fds(), fds);
}

int main(void)
{
	static CU_TestInfo tests[] = {
		{ "heap counter works", test_heap_counter_works },
		{ "subtree walk", test_subtree },
		{ "owned subtree walk", test_owned },
		{ "more pids than max", test_too_many },
		{ "deeper than max_depth", test_depth },
		{ "errors", test_errors },
		{ "has children", test_has_children },
		CU_TEST_INFO_NULL,
	};
	static CU_SuiteInfo suites[] = {
		{ "cgroup-subtree", suite_init, suite_cleanup, NULL, NULL, tests },
		CU_SUITE_INFO_NULL,
	};

	return cunit_tap_main(suites);
}
