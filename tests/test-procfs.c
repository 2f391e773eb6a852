/* SPDX-License-Identifier: MIT */
/* test-procfs: /proc parsers on edge cases, and the scan on a fixture tree. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>

#include "cunit-tap.h"
#include "escape.h"
#include "fileio.h"
#include "fixture-tree.h"
#include "lines.h"
#include "procfs.h"
#include "victim.h"

static int open_proc_under(const char *sub)
{
	const char *fx = getenv("FIXTURES");
	char dir[4096];
	int root, proc;

	snprintf(dir, sizeof(dir), "%s%s", fx ? fx : "tests/fixtures", sub);
	root = sysroot_open(dir);
	if (root < 0)
		return root;
	proc = sysroot_openat(root, "/proc", O_RDONLY | O_DIRECTORY);
	close(root);
	return proc;
}

static int open_fixture_proc(void)
{
	return open_proc_under("");
}

static void test_parse_stat(void)
{
	struct proc_info pi;

	memset(&pi, 0, sizeof(pi));
	CU_ASSERT_EQUAL(procfs_parse_stat("42 (a) b) c) S 1 42 42 0 -1 4194560 1 0 0 0 5 3 0 0 20 -5 1 0 777 1 2 3\n",
					  &pi),
			0);
	CU_ASSERT_STRING_EQUAL(pi.comm, "a) b) c");
	CU_ASSERT_EQUAL(pi.state, 'S');
	CU_ASSERT_EQUAL(pi.start_time, 777);
	CU_ASSERT_FALSE(pi.kthread);

	CU_ASSERT_EQUAL(procfs_parse_stat("2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 0 0 0 0 20 0 1 0 6 0 0\n", &pi), 0);
	CU_ASSERT_TRUE(pi.kthread);

	CU_ASSERT_EQUAL(procfs_parse_stat("", &pi), -EINVAL);
	CU_ASSERT_EQUAL(procfs_parse_stat("42 (x S 1", &pi), -EINVAL);
	CU_ASSERT_EQUAL(procfs_parse_stat("42 (x) S 1 42 42 0 -1 4194560 1 0", &pi), -EINVAL);
	CU_ASSERT_EQUAL(procfs_parse_stat("42 (x) 5 1 42 42 0 -1 4194560 1 0 0 0 5 3 0 0 20 0 1 0 7 1\n", &pi), -EINVAL);
}

static void test_parse_status(void)
{
	struct proc_info pi;

	memset(&pi, 0, sizeof(pi));
	CU_ASSERT_EQUAL(procfs_parse_status("Name:\tx\nUid:\t1000\t0\t0\t0\nVmRSS:\t  4242 kB\nThreads:\t7\n", &pi), 0);
	CU_ASSERT_EQUAL(pi.uid, 1000);
	CU_ASSERT_EQUAL(pi.rss_kb, 4242);
	CU_ASSERT_EQUAL(pi.threads, 7);
	CU_ASSERT_EQUAL(pi.swap_kb, 0); /* no VmSwap line (CONFIG_SWAP=n) */
	CU_ASSERT_EQUAL(pi.pte_kb, 0);
	/* what the badness order adds to RSS, as the kernel prints it */
	CU_ASSERT_EQUAL(procfs_parse_status("Name:\tx\nUid:\t1\t1\t1\t1\nVmPeak:\t 9999 kB\nVmRSS:\t 4242 kB\n"
					    "VmData:\t 777 kB\nVmPTE:\t     120 kB\nVmSwap:\t   65536 kB\n", &pi), 0);
	CU_ASSERT_EQUAL(pi.rss_kb, 4242);
	CU_ASSERT_EQUAL(pi.swap_kb, 65536);
	CU_ASSERT_EQUAL(pi.pte_kb, 120);
	CU_ASSERT_EQUAL(pi.rss_file_kb, 0);
	CU_ASSERT_EQUAL(procfs_footprint_kb(&pi), 4242 + 65536 + 120);
	/* the mapped files' pages are not its footprint (what growth measures) */
	CU_ASSERT_EQUAL(procfs_parse_status("Name:\tx\nUid:\t1\t1\t1\t1\nVmRSS:\t 4242 kB\nRssAnon:\t 1000 kB\n"
					    "RssFile:\t 3000 kB\nRssShmem:\t 242 kB\nVmPTE:\t 8 kB\nVmSwap:\t 100 kB\n", &pi), 0);
	CU_ASSERT_EQUAL(pi.rss_file_kb, 3000);
	CU_ASSERT_EQUAL(procfs_size_kb(&pi), 4350);
	CU_ASSERT_EQUAL(procfs_footprint_kb(&pi), 1350);
	pi.rss_file_kb = 99999; /* never below 0 */
	CU_ASSERT_EQUAL(procfs_footprint_kb(&pi), 0);
	CU_ASSERT_EQUAL(procfs_parse_status("Uid:\t1\t1\t1\t1\nRssFile:\tx kB\n", &pi), -EINVAL);
	CU_ASSERT_EQUAL(procfs_parse_status("Uid:\t1\t1\t1\t1\nVmSwap:\t-5 kB\n", &pi), -EINVAL);
	CU_ASSERT_EQUAL(procfs_parse_status("Uid:\t1\t1\t1\t1\nVmPTE:\tkB\n", &pi), -EINVAL);
	CU_ASSERT_EQUAL(procfs_parse_status("Name:\tkworker\nUid:\t0\t0\t0\t0\n", &pi), 0);
	CU_ASSERT_EQUAL(pi.rss_kb, 0);
	CU_ASSERT_EQUAL(pi.swap_kb, 0);
	CU_ASSERT_EQUAL(pi.pte_kb, 0);
	CU_ASSERT_EQUAL(pi.threads, 0);
	CU_ASSERT_EQUAL(procfs_parse_status("Name:\tx\n", &pi), -EINVAL);
	CU_ASSERT_EQUAL(procfs_parse_status("Uid:\tabc\n", &pi), -EINVAL);
}

/* All four uids (real, effective, saved, filesystem) are kept: trust needs all of them. */
/* /proc/PID/io: read_bytes in kB, rounded down; not rchar, which counts
 * reads served from the page cache too */
static void test_parse_io(void)
{
	uint64_t kb = 7;

	CU_ASSERT_EQUAL(procfs_parse_io_read_kb("rchar: 99999999\nwchar: 1\nsyscr: 3\nsyscw: 1\nread_bytes: 4097\n"
						"write_bytes: 0\ncancelled_write_bytes: 0\n", &kb), 0);
	CU_ASSERT_EQUAL(kb, 4);
	CU_ASSERT_EQUAL(procfs_parse_io_read_kb("read_bytes: 18446744073709551615\n", &kb), 0);
	CU_ASSERT_EQUAL(kb, 18446744073709551615ULL / 1024);
	CU_ASSERT_EQUAL(procfs_parse_io_read_kb("rchar: 5\n", &kb), -EINVAL);
	CU_ASSERT_EQUAL(procfs_parse_io_read_kb("read_bytes: x\n", &kb), -EINVAL);
	CU_ASSERT_EQUAL(procfs_parse_io_read_kb("xread_bytes: 5\n", &kb), -EINVAL);
}

static void test_parse_status_uids(void)
{
	struct proc_info pi;

	memset(&pi, 0, sizeof(pi));
	CU_ASSERT_EQUAL(procfs_parse_status("Uid:\t1000\t0\t60001\t4294967294\nThreads:\t1\n", &pi), 0);
	CU_ASSERT_EQUAL(pi.uid, 1000);
	CU_ASSERT_EQUAL(pi.uids[0], 1000);
	CU_ASSERT_EQUAL(pi.uids[1], 0);
	CU_ASSERT_EQUAL(pi.uids[2], 60001);
	CU_ASSERT_EQUAL(pi.uids[3], 4294967294u);
	/* fewer than four, or (uid_t)-1: not a status file the kernel writes */
	CU_ASSERT_EQUAL(procfs_parse_status("Uid:\t1000\t0\t0\n", &pi), -EINVAL);
	CU_ASSERT_EQUAL(procfs_parse_status("Uid:\t1000\n", &pi), -EINVAL);
	CU_ASSERT_EQUAL(procfs_parse_status("Uid:\t0\t0\t0\t4294967295\n", &pi), -EINVAL);
	CU_ASSERT_EQUAL(procfs_parse_status("Uid:\t0\t0\t0\t0\nThreads:\tx\n", &pi), -EINVAL);
}

/* M7: names are escaped where they are read, so no log line can carry a raw
 * control byte (a comm "x\nkill pid=1 x" would forge a whole log line). */
static void test_parse_stat_escapes(void)
{
	struct proc_info pi;
	char out[32];
	size_t used = 0;

	memset(&pi, 0, sizeof(pi));
	CU_ASSERT_EQUAL(procfs_parse_stat("42 (x\nkill pid=1 x) S 1 42 42 0 -1 4194560 1 0 0 0 5 3 0 0 20 0 1 0 7 1 2\n", &pi),
			0);
	CU_ASSERT_STRING_EQUAL(pi.comm, "x\\x0akill pid=1 x");
	CU_ASSERT_PTR_NULL(strchr(pi.comm, '\n'));
	CU_ASSERT_EQUAL(procfs_parse_stat("42 (a\\b\x7f\t\r) S 1 42 42 0 -1 4194560 1 0 0 0 5 3 0 0 20 0 1 0 7 1 2\n", &pi), 0);
	CU_ASSERT_STRING_EQUAL(pi.comm, "a\\x5cb\\x7f\\x09\\x0d");
	/* ordinary names, UTF-8 included, are left alone */
	CU_ASSERT_EQUAL(procfs_parse_stat("42 (Web Content \xc3\xa9) S 1 42 42 0 -1 4194560 1 0 0 0 5 3 0 0 20 0 1 0 7 1 2\n",
					  &pi),
			0);
	CU_ASSERT_STRING_EQUAL(pi.comm, "Web Content \xc3\xa9");
	/* an escape that does not fit is left out whole */
	CU_ASSERT_EQUAL(escape_bytes(out, 6, "ab\ncd", 5, ESCAPE_NAME, &used), 8);
	CU_ASSERT_EQUAL(used, 2);
	CU_ASSERT_STRING_EQUAL(out, "ab");
	CU_ASSERT_EQUAL(escape_bytes(out, 7, "ab\ncd", 5, ESCAPE_NAME, &used), 8);
	CU_ASSERT_EQUAL(used, 3);
	CU_ASSERT_STRING_EQUAL(out, "ab\\x0a");
}

static void test_parse_cmdline(void)
{
	static const char raw[] = "/bin/sh\0-c\0echo a\nkill pid=1\0\0";
	char out[64], tiny[8];

	procfs_parse_cmdline(raw, sizeof(raw) - 1, out, sizeof(out));
	CU_ASSERT_STRING_EQUAL(out, "/bin/sh -c echo a\\x0akill pid=1");
	procfs_parse_cmdline("a\\b\0\x1b[2J", 9, out, sizeof(out));
	CU_ASSERT_STRING_EQUAL(out, "a\\x5cb \\x1b[2J");
	procfs_parse_cmdline("a\0\0b", 4, out, sizeof(out));
	CU_ASSERT_STRING_EQUAL(out, "a  b");
	/* truncated, never in the middle of an escape */
	procfs_parse_cmdline("abcd\n", 5, tiny, sizeof(tiny));
	CU_ASSERT_STRING_EQUAL(tiny, "abcd");
	procfs_parse_cmdline("", 0, tiny, sizeof(tiny));
	CU_ASSERT_STRING_EQUAL(tiny, "");
}

static void test_parse_cgroup(void)
{
	char out[64];

	CU_ASSERT_EQUAL(procfs_parse_cgroup("0::/user.slice/a.scope\n", out, sizeof(out)), 0);
	CU_ASSERT_STRING_EQUAL(out, "/user.slice/a.scope");
	CU_ASSERT_EQUAL(procfs_parse_cgroup("12:memory:/x\n3:cpu:/y\n0::/z\n1:name=systemd:/w\n", out, sizeof(out)), 0);
	CU_ASSERT_STRING_EQUAL(out, "/z");
	CU_ASSERT_EQUAL(procfs_parse_cgroup("12:memory:/x\n", out, sizeof(out)), -ENOENT);
	CU_ASSERT_EQUAL(procfs_parse_cgroup("10::/not-v2\n", out, sizeof(out)), -ENOENT);
	CU_ASSERT_EQUAL(procfs_parse_cgroup("0::/a-path-that-is-much-too-long-for-the-small-buffer-given-here-by-far\n",
					    out, sizeof(out)),
			-ENAMETOOLONG);
	CU_ASSERT_EQUAL(procfs_parse_cgroup("0::\n", out, sizeof(out)), -EINVAL);
}

static void test_parse_adj(void)
{
	int adj;

	CU_ASSERT_EQUAL(procfs_parse_adj("-1000\n", &adj), 0);
	CU_ASSERT_EQUAL(adj, -1000);
	CU_ASSERT_EQUAL(procfs_parse_adj("950", &adj), 0);
	CU_ASSERT_EQUAL(adj, 950);
	CU_ASSERT_EQUAL(procfs_parse_adj("1001\n", &adj), -EINVAL);
	CU_ASSERT_EQUAL(procfs_parse_adj("x\n", &adj), -EINVAL);
	CU_ASSERT_EQUAL(procfs_parse_adj("", &adj), -EINVAL);
}

static void test_read_pid_fixture(void)
{
	struct proc_info pi;
	int proc = open_fixture_proc();

	CU_ASSERT_FATAL(proc >= 0);
	CU_ASSERT_EQUAL_FATAL(procfs_read_pid(proc, 201, &pi), 0);
	CU_ASSERT_EQUAL(pi.pid, 201);
	CU_ASSERT_STRING_EQUAL(pi.comm, "Web Content (1)");
	CU_ASSERT_EQUAL(pi.uid, 1000);
	CU_ASSERT_EQUAL(pi.oom_score_adj, 900);
	CU_ASSERT_EQUAL(pi.rss_kb, 200000);
	CU_ASSERT_EQUAL(pi.start_time, 2500);
	CU_ASSERT_TRUE(pi.has_cgroup);
	CU_ASSERT_STRING_EQUAL(pi.cgroup, "/user.slice/app/tab");

	CU_ASSERT_EQUAL(procfs_read_pid(proc, 500, &pi), 0);
	CU_ASSERT_FALSE(pi.has_cgroup);
	CU_ASSERT_EQUAL(procfs_read_pid(proc, 2, &pi), 0);
	CU_ASSERT_TRUE(pi.kthread);
	CU_ASSERT_EQUAL(pi.rss_kb, 0);
	/* 600 lost its files mid-way: it has exited */
	CU_ASSERT_EQUAL(procfs_read_pid(proc, 600, &pi), -ESRCH);
	CU_ASSERT_EQUAL(procfs_read_pid(proc, 12345, &pi), -ESRCH);
	close(proc);
}

/* tests/fixtures/shield: the processes that hid from, or forged, the old reader */
static void test_read_pid_shield_fixture(void)
{
	struct proc_info pi;
	int proc = open_proc_under("/shield");

	CU_ASSERT_FATAL(proc >= 0);
	/* C3: a leader that called pthread_exit(): Z, 3 threads, no VmRSS of its
	 * own; the RSS comes from thread 52 (51 has no files: it just exited) */
	CU_ASSERT_EQUAL_FATAL(procfs_read_pid(proc, 50, &pi), 0);
	CU_ASSERT_EQUAL(pi.state, 'Z');
	CU_ASSERT_EQUAL(pi.threads, 3);
	CU_ASSERT_EQUAL(pi.rss_kb, 40000);
	CU_ASSERT_EQUAL(pi.swap_kb, 1200); /* its swap and page tables too: they are the process's */
	CU_ASSERT_EQUAL(pi.pte_kb, 96);
	CU_ASSERT_EQUAL(pi.uid, 60003);
	/* M8: a 3000-byte path is read in full (the old field held 1023) */
	CU_ASSERT_EQUAL_FATAL(procfs_read_pid(proc, 70, &pi), 0);
	CU_ASSERT_TRUE(pi.has_cgroup);
	CU_ASSERT_FALSE(pi.cgroup_unknown);
	CU_ASSERT_EQUAL(strlen(pi.cgroup), 3000);
	CU_ASSERT_EQUAL(strncmp(pi.cgroup, "/user.slice/user-60004.slice/", 29), 0);
	/* a path of PATH_MAX - 1 bytes, where Linux 6.18 cuts longer ones: unknown */
	CU_ASSERT_EQUAL_FATAL(procfs_read_pid(proc, 72, &pi), 0);
	CU_ASSERT_FALSE(pi.has_cgroup);
	CU_ASSERT_TRUE(pi.cgroup_unknown);
	CU_ASSERT_STRING_EQUAL(pi.cgroup, "");
	/* a file too large to hold a printable path: where it is is unknown */
	CU_ASSERT_EQUAL_FATAL(procfs_read_pid(proc, 71, &pi), 0);
	CU_ASSERT_FALSE(pi.has_cgroup);
	CU_ASSERT_TRUE(pi.cgroup_unknown);
	CU_ASSERT_EQUAL(pi.rss_kb, 50000);
	/* M7: a raw newline in comm comes back escaped */
	CU_ASSERT_EQUAL_FATAL(procfs_read_pid(proc, 90, &pi), 0);
	CU_ASSERT_STRING_EQUAL(pi.comm, "x\\x0akill pid=1 x");
	/* an ordinary process */
	CU_ASSERT_EQUAL_FATAL(procfs_read_pid(proc, 10, &pi), 0);
	CU_ASSERT_EQUAL(pi.threads, 1);
	CU_ASSERT_EQUAL(pi.uids[3], 60001);
	close(proc);
}

struct collect {
	struct proc_info list[32];
	size_t n;
};

static void collect_visit(const struct proc_info *pi, void *userdata)
{
	struct collect *c = userdata;

	if (c->n < 32)
		c->list[c->n++] = *pi;
}

static bool has_pid(const struct collect *c, pid_t pid)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		if (c->list[i].pid == pid)
			return true;
	return false;
}

static void test_scan_fixture(void)
{
	struct procfs_scan_stats st;
	struct collect *c = calloc(1, sizeof(*c));
	int proc = open_fixture_proc();

	CU_ASSERT_FATAL(proc >= 0 && c);
	CU_ASSERT_EQUAL(procfs_scan(proc, -1000, collect_visit, c, &st), 0);
	CU_ASSERT_EQUAL(st.seen, 10);
	CU_ASSERT_EQUAL(st.read, 9);
	CU_ASSERT_EQUAL(st.vanished, 1);
	CU_ASSERT_EQUAL(c->n, 9);

	/* the band pre-filter: only adj >= 900 are read in full */
	c->n = 0;
	CU_ASSERT_EQUAL(procfs_scan(proc, 900, collect_visit, c, &st), 0);
	CU_ASSERT_EQUAL(c->n, 5);
	CU_ASSERT_TRUE(has_pid(c, 201) && has_pid(c, 202) && has_pid(c, 300) && has_pid(c, 400) && has_pid(c, 500));
	CU_ASSERT_FALSE(has_pid(c, 200));
	close(proc);
	free(c);
}

static void test_scan_and_choose_fixture(void)
{
	struct collect *c = calloc(1, sizeof(*c));
	struct victim_filter f = { .min_adj = 0, .self = 202, .scope = "/user.slice" };
	struct procfs_scan_stats st;
	int proc = open_fixture_proc();
	ssize_t i;

	CU_ASSERT_FATAL(proc >= 0 && c);
	CU_ASSERT_EQUAL(procfs_scan(proc, 0, collect_visit, c, &st), 0);
	/* in /user.slice: 200 (300), 201 (900), 202 (900, but self), 300 (zombie) */
	i = victim_choose(&f, c->list, c->n);
	CU_ASSERT_FATAL(i >= 0);
	CU_ASSERT_EQUAL(c->list[i].pid, 201);
	/* everywhere: 400 has the same adj as 201 but more RSS; 500 has adj 950 */
	f.scope = "/";
	i = victim_choose(&f, c->list, c->n);
	CU_ASSERT_FATAL(i >= 0);
	CU_ASSERT_EQUAL(c->list[i].pid, 500);
	close(proc);
	free(c);
}

static void test_scan_missing_proc(void)
{
	struct procfs_scan_stats st;
	struct collect c;
	int fd = open("/", O_RDONLY | O_DIRECTORY);
	int empty;
	char dir[] = "/tmp/psi-lmkd-test-proc-XXXXXX";

	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	empty = open(dir, O_RDONLY | O_DIRECTORY);
	c.n = 0;
	CU_ASSERT_EQUAL(procfs_scan(empty, 0, collect_visit, &c, &st), 0);
	CU_ASSERT_EQUAL(st.seen, 0);
	close(empty);
	rmdir(dir);
	close(fd);
}

/* Out of file descriptors mid-scan: the scan must fail, not return the
 * processes it happened to read (choosing from those could kill the wrong one). */
static void test_scan_out_of_fds(void)
{
	struct collect *c = calloc(1, sizeof(*c));
	struct procfs_scan_stats st;
	struct rlimit saved, low;
	int proc = open_fixture_proc();
	int lowest;

	CU_ASSERT_FATAL(proc >= 0 && c);
	CU_ASSERT_FATAL(getrlimit(RLIMIT_NOFILE, &saved) == 0);
	lowest = dup(0);
	CU_ASSERT_FATAL(lowest >= 0);
	close(lowest);
	/* room for the scan's directory fd and nothing more */
	low = saved;
	low.rlim_cur = (rlim_t)lowest + 1;
	CU_ASSERT_FATAL(setrlimit(RLIMIT_NOFILE, &low) == 0);
	CU_ASSERT_EQUAL(procfs_scan(proc, -1000, collect_visit, c, &st), -EMFILE);
	CU_ASSERT_FATAL(setrlimit(RLIMIT_NOFILE, &saved) == 0);
	/* and with the limit back, the same scan works */
	c->n = 0;
	CU_ASSERT_EQUAL(procfs_scan(proc, -1000, collect_visit, c, &st), 0);
	CU_ASSERT_EQUAL(c->n, 9);
	close(proc);
	free(c);
}

/* /proc/uptime and /proc/loadavg: the clock start times are measured
 * in, and the last pid */
/* lines_filter: the wanted complete lines to the front, the unfinished one after them */
static void test_lines_filter(void)
{
	static const char *const keys[] = { "Uid:", "VmRSS:", NULL };
	char t[128];
	size_t kept, tail;

	snprintf(t, sizeof(t), "Name:\tx\nUid:\t1\t1\t1\t1\nGroups:\t1 2 3\nVmRSS:\t5 kB\nVmR");
	kept = lines_filter(t, strlen(t), keys, &tail);
	CU_ASSERT_EQUAL(kept, strlen("Uid:\t1\t1\t1\t1\nVmRSS:\t5 kB\n"));
	CU_ASSERT_EQUAL(tail, 3);
	CU_ASSERT_EQUAL(memcmp(t, "Uid:\t1\t1\t1\t1\nVmRSS:\t5 kB\nVmR", kept + tail), 0);
	/* nothing complete: all of it is the tail */
	snprintf(t, sizeof(t), "Uid:\t1");
	CU_ASSERT_EQUAL(lines_filter(t, strlen(t), keys, &tail), 0);
	CU_ASSERT_EQUAL(tail, 6);
	CU_ASSERT_EQUAL(lines_filter(t, 0, keys, &tail), 0);
	CU_ASSERT_EQUAL(tail, 0);
	CU_ASSERT_TRUE(lines_keyed("VmRSS:\t1", 8, keys));
	CU_ASSERT_TRUE(lines_keyed("VmRS", 4, keys)); /* too short to tell: may be */
	CU_ASSERT_TRUE(lines_keyed("", 0, keys));
	CU_ASSERT_FALSE(lines_keyed("VmRS\n", 5, keys));
	CU_ASSERT_FALSE(lines_keyed("VmSwap:\t1", 9, keys));
}

/* A status file of size bytes with a Groups line of n entries in the
 * middle and a Cpus_allowed line of 1024 CPUs after it. */
static char *long_status(int n, const char *state, bool rss)
{
	size_t size = (size_t)n * 8 + 4096, o = 0;
	char *t = malloc(size);
	int i;

	CU_ASSERT_PTR_NOT_NULL_FATAL(t);
	o += (size_t)snprintf(t + o, size - o, "Name:\thog\nState:\t%s\nTgid:\t300\nPid:\t300\nPPid:\t1\n"
				 "Uid:\t60010\t60010\t60010\t60010\nGid:\t60010\t60010\t60010\t60010\nGroups:\t", state);
	for (i = 0; i < n; i++)
		o += (size_t)snprintf(t + o, size - o, "%d ", 100000 + i);
	o += (size_t)snprintf(t + o, size - o, "\n%s", rss ? "VmRSS:\t400000 kB\nRssFile:\t1000 kB\n" : "");
	o += (size_t)snprintf(t + o, size - o, "Threads:\t%d\n%s", rss ? 1 : 2, rss ? "VmSwap:\t2000 kB\nVmPTE:\t800 kB\n" : "");
	o += (size_t)snprintf(t + o, size - o, "Cpus_allowed:\t");
	for (i = 0; i < 1024 / 32; i++)
		o += (size_t)snprintf(t + o, size - o, "ffffffff,");
	snprintf(t + o, size - o, "\nvoluntary_ctxt_switches:\t1");
	return t;
}

/* read_lines_at keeps the keyed lines of a file of any length, whatever
 * the buffer, as long as one wanted line fits */
static void test_read_lines(void)
{
	static const char *const keys[] = { "Uid:", "VmRSS:", "RssFile:", "Threads:", "VmSwap:", "VmPTE:", NULL };
	static const char *const tgid[] = { "Tgid:", NULL };
	static const char *const none[] = { "Nope:", NULL };
	const char *want = "Uid:\t60010\t60010\t60010\t60010\nVmRSS:\t400000 kB\nRssFile:\t1000 kB\n"
			   "Threads:\t1\nVmSwap:\t2000 kB\nVmPTE:\t800 kB\n";
	char dir[] = "/tmp/psi-lmkd-test-lines-XXXXXX", buf[4096];
	int rootfd = fixture_root_open(dir);
	char *t = long_status(3000, "S (sleeping)", true);
	size_t size;

	fixture_put(dir, "status", t);
	free(t);
	/* the whole file is 24 kB: read_record_at cannot hold it */
	CU_ASSERT_EQUAL(read_record_at(rootfd, "status", buf, sizeof(buf)), -EFBIG);
	CU_ASSERT_EQUAL(read_lines_at(rootfd, "status", buf, sizeof(buf), keys), (ssize_t)strlen(want));
	CU_ASSERT_STRING_EQUAL(buf, want);
	/* any piece size: the longest wanted line is 30 bytes */
	for (size = 32; size <= 300; size++) {
		ssize_t r = read_lines_at(rootfd, "status", buf, size, tgid);

		CU_ASSERT_EQUAL(r, 10);
		CU_ASSERT_STRING_EQUAL(buf, "Tgid:\t300\n");
	}
	/* the kept lines fill it (with the NUL and one byte to look at the next
	 * line): never a wanted line dropped */
	for (size = 20; size < strlen(want) + 2; size++)
		CU_ASSERT_EQUAL(read_lines_at(rootfd, "status", buf, size, keys), -EFBIG);
	CU_ASSERT_EQUAL(read_lines_at(rootfd, "status", buf, size, keys), (ssize_t)strlen(want));
	CU_ASSERT_EQUAL(read_lines_at(rootfd, "status", buf, 20, keys), -EFBIG);  /* the Uid line does not fit */
	CU_ASSERT_EQUAL(read_lines_at(rootfd, "status", buf, sizeof(buf), none), -ENODATA);
	/* the last line without its newline, and an empty file */
	fixture_put(dir, "short", "Name:\tx\nTgid:\t7");
	CU_ASSERT_EQUAL(read_lines_at(rootfd, "short", buf, sizeof(buf), tgid), 7);
	CU_ASSERT_STRING_EQUAL(buf, "Tgid:\t7");
	fixture_put(dir, "empty", "");
	CU_ASSERT_EQUAL(read_lines_at(rootfd, "empty", buf, sizeof(buf), tgid), 0);
	CU_ASSERT_EQUAL(read_lines_at(rootfd, "missing", buf, sizeof(buf), tgid), -ENOENT);
	fixture_root_close(rootfd, dir);
}

/* process pid of uid 60010 at adj 0 under fixture root dir, its status
 * 24 kB long; a zombie leader ('Z') has its memory in a thread */
static void put_long(const char *dir, int pid, const char *comm, char state)
{
	char rel[64], text[256], *t = long_status(3000, state == 'Z' ? "Z (zombie)" : "S (sleeping)", state != 'Z');

	snprintf(rel, sizeof(rel), "proc/%d/status", pid);
	fixture_put(dir, rel, t);
	free(t);
	snprintf(rel, sizeof(rel), "proc/%d/stat", pid);
	snprintf(text, sizeof(text), "%d (%s) %c 1 %d %d 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 %d 0 %d0 1 1 0 0 0 0 0 0 0 "
		 "0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n", pid, comm, state, pid, pid, state == 'Z' ? 2 : 1, pid);
	fixture_put(dir, rel, text);
	snprintf(rel, sizeof(rel), "proc/%d/oom_score_adj", pid);
	fixture_put(dir, rel, "0\n");
	snprintf(rel, sizeof(rel), "proc/%d/cgroup", pid);
	fixture_put(dir, rel, "0::/user.slice/user-60010.slice\n");
}

/* review F1: a user who sets hundreds of supplementary groups (possible in
 * a user namespace of their own, with a subgid range) makes the status file
 * of their process longer than any fixed buffer; it must still be read and
 * scanned, and a zombie leader's memory still read from its thread */
static void test_read_pid_long_status(void)
{
	char dir[] = "/tmp/psi-lmkd-test-status-XXXXXX";
	int rootfd = fixture_root_open(dir), proc;
	struct procfs_scan_stats st;
	struct collect *c = calloc(1, sizeof(*c));
	struct proc_info pi;
	char *t;

	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	fixture_mkdir(dir, "proc/300");
	fixture_mkdir(dir, "proc/301");
	fixture_mkdir(dir, "proc/301/task");
	fixture_mkdir(dir, "proc/301/task/302");
	put_long(dir, 300, "hog", 'S');
	/* 301: its leader exited, its thread 302 holds the memory */
	put_long(dir, 301, "zhog", 'Z');
	t = long_status(3000, "S (sleeping)", true);
	fixture_put(dir, "proc/301/task/302/status", t);
	free(t);
	proc = sysroot_openat(rootfd, "/proc", O_RDONLY | O_DIRECTORY);
	CU_ASSERT_FATAL(proc >= 0);
	CU_ASSERT_EQUAL_FATAL(procfs_read_pid(proc, 300, &pi), 0);
	CU_ASSERT_EQUAL(pi.uids[3], 60010);
	CU_ASSERT_EQUAL(pi.rss_kb, 400000);
	CU_ASSERT_EQUAL(pi.swap_kb, 2000);
	CU_ASSERT_EQUAL(pi.pte_kb, 800);
	CU_ASSERT_EQUAL(pi.rss_file_kb, 1000);
	CU_ASSERT_EQUAL(pi.threads, 1);
	CU_ASSERT_EQUAL_FATAL(procfs_read_pid(proc, 301, &pi), 0);
	CU_ASSERT_EQUAL(pi.state, 'Z');
	CU_ASSERT_EQUAL(pi.rss_kb, 400000);
	CU_ASSERT_EQUAL(procfs_scan(proc, 0, collect_visit, c, &st), 0);
	CU_ASSERT_EQUAL(st.read, 2);
	CU_ASSERT_EQUAL(st.errors, 0);
	CU_ASSERT_TRUE(has_pid(c, 300) && has_pid(c, 301));
	close(proc);
	free(c);
	fixture_root_close(rootfd, dir);
}

static void test_parse_uptime_loadavg(void)
{
	uint64_t t = 0;
	long pid = 0;

	CU_ASSERT_EQUAL(procfs_parse_uptime_ticks("350735.47 684712.12\n", 100, &t), 0);
	CU_ASSERT_EQUAL(t, 35073547);
	CU_ASSERT_EQUAL(procfs_parse_uptime_ticks("12.5 1.0\n", 250, &t), 0);
	CU_ASSERT_EQUAL(t, 3125);
	CU_ASSERT_EQUAL(procfs_parse_uptime_ticks("7\n", 100, &t), 0);
	CU_ASSERT_EQUAL(t, 700);
	CU_ASSERT_EQUAL(procfs_parse_uptime_ticks("", 100, &t), -EINVAL);
	CU_ASSERT_EQUAL(procfs_parse_uptime_ticks("x 1\n", 100, &t), -EINVAL);
	CU_ASSERT_EQUAL(procfs_parse_uptime_ticks("12.34x 1\n", 100, &t), -EINVAL);
	CU_ASSERT_EQUAL(procfs_parse_uptime_ticks("12.34 1\n", 0, &t), -EINVAL);
	CU_ASSERT_EQUAL(procfs_parse_uptime_ticks("99999999999999999999999 1\n", 100, &t), -ERANGE);
	CU_ASSERT_EQUAL(procfs_parse_loadavg_last_pid("0.00 0.01 0.05 1/123 4567\n", &pid), 0);
	CU_ASSERT_EQUAL(pid, 4567);
	CU_ASSERT_EQUAL(procfs_parse_loadavg_last_pid("0.00 0.01\n", &pid), -EINVAL);
}

int main(void)
{
	static CU_TestInfo tests[] = {
		{ "stat", test_parse_stat },
		{ "uptime and loadavg", test_parse_uptime_loadavg },
		{ "status", test_parse_status },
		{ "status: all four uids", test_parse_status_uids },
		{ "io: read_bytes", test_parse_io },
		{ "stat: comm escaped", test_parse_stat_escapes },
		{ "cmdline: joined and escaped", test_parse_cmdline },
		{ "cgroup", test_parse_cgroup },
		{ "oom_score_adj", test_parse_adj },
		{ "read one pid from a fixture", test_read_pid_fixture },
		{ "zombie leader, deep and hidden cgroups, a newline in comm", test_read_pid_shield_fixture },
		{ "scan a fixture", test_scan_fixture },
		{ "scan and choose on a fixture", test_scan_and_choose_fixture },
		{ "scan an empty /proc", test_scan_missing_proc },
		{ "scan out of file descriptors", test_scan_out_of_fds },
		{ "lines_filter", test_lines_filter },
		{ "read_lines_at: keyed lines of a file of any length", test_read_lines },
		{ "a status file longer than any buffer (many groups)", test_read_pid_long_status },
		CU_TEST_INFO_NULL,
	};
	static CU_SuiteInfo suites[] = {
		{ "procfs", NULL, NULL, NULL, NULL, tests },
		CU_SUITE_INFO_NULL,
	};

	return cunit_tap_main(suites);
}
