/* SPDX-License-Identifier: MIT */
/* test-log: the kill line format, token escaping, that no log line can
 * carry a control byte, and that a slow reader of stderr never blocks the
 * logger (logsink): lines wait in order, debug lines give way to kill
 * lines, and what had to be dropped is said. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "config.h"
#include "cunit-tap.h"
#include "escape.h"
#include "hook.h"
#include "killline.h"
#include "log.h"
#include "logsink.h"
#include "procfs.h"
#include "victim.h"

static void test_kill_line(void)
{
	struct proc_info pi;
	struct tier_config t;
	char buf[512];

	memset(&pi, 0, sizeof(pi));
	memset(&t, 0, sizeof(t));
	pi.pid = 1234;
	strcpy(pi.comm, "chrome");
	pi.uid = 1000;
	pi.oom_score_adj = 900;
	pi.rss_kb = 812344;
	pi.swap_kb = 1000;
	pi.pte_kb = 24;
	pi.badness_kb = 15491256;
	strcpy(t.name, "critical");
	t.stall_us = 700000;
	t.window_us = 1000000;
	killline_format(buf, sizeof(buf), "kill", &pi, &t, "psi_full", NULL);
	CU_ASSERT_STRING_EQUAL(buf, "kill pid=1234 comm=chrome uid=1000 oom_score_adj=900 rss_kb=812344 "
				    "size_kb=813368 badness_kb=15491256 tier=critical stall_us=700000 window_us=1000000 reason=psi_full cgroup=?");
	/* a negative score (negative adj), and none when the domain was unknown */
	pi.badness_kb = -4200;
	killline_format(buf, sizeof(buf), "kill", &pi, &t, "psi_full", NULL);
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, " rss_kb=812344 size_kb=813368 badness_kb=-4200 tier=critical "));
	pi.badness_kb = VICTIM_BADNESS_UNKNOWN;
	killline_format(buf, sizeof(buf), "kill", &pi, &t, "psi_full", NULL);
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, " rss_kb=812344 size_kb=813368 badness_kb=? tier=critical "));
	strcpy(pi.comm, "Web Content");
	killline_format(buf, sizeof(buf), "would-kill", &pi, &t, "psi_some", NULL);
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "would-kill pid=1234 comm=Web\\x20Content uid="));
	/* the victim's cgroup and the watched group, as tokens: a name with
	 * spaces cannot add a field of its own */
	pi.has_cgroup = true;
	strcpy(pi.cgroup, "/user.slice/user-1000.slice/evil tier=x.scope");
	killline_format(buf, sizeof(buf), "kill", &pi, &t, "psi_some", "/user.slice/user-1000.slice");
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, " reason=psi_some cgroup=/user.slice/user-1000.slice/evil\\x20tier\\x3dx.scope "
					  "group=/user.slice/user-1000.slice"));
	CU_ASSERT_PTR_NULL(strstr(buf, " tier=x"));
	pi.cgroup_unknown = true;
	killline_format(buf, sizeof(buf), "kill", &pi, &t, "psi_some", "");
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, " cgroup=?"));
	CU_ASSERT_PTR_NULL(strstr(buf, " group="));
	/* never overflows */
	CU_ASSERT_EQUAL(killline_format(buf, 20, "kill", &pi, &t, "psi_some", NULL), 19);
	CU_ASSERT_EQUAL(strlen(buf), 19);
}

static void test_escape(void)
{
	char out[64];

	/* the backslash stays: names come escaped from procfs, where a literal
	 * one became \x5c, so a backslash here always starts an escape */
	log_escape_token(out, sizeof(out), "a=b \"c\"\\\n\xff");
	CU_ASSERT_STRING_EQUAL(out, "a\\x3db\\x20\\x22c\\x22\\\\x0a\\xff");
	log_escape_token(out, 6, "abc def");
	CU_ASSERT_STRING_EQUAL(out, "abc");
	log_escape_token(out, sizeof(out), "");
	CU_ASSERT_STRING_EQUAL(out, "");
	/* an escape is never cut in half */
	log_escape_token(out, 6, "ab\ncd");
	CU_ASSERT_STRING_EQUAL(out, "ab");
}

/* A value in the environment or a whole log line: control bytes only;
 * UTF-8, spaces, '=', '"' and the backslash stay. */
static void test_escape_control(void)
{
	static const char in[] = "a=b \"c\"\\\n\t\x7f\x01\xc3\xa9";
	char out[64];

	CU_ASSERT_EQUAL(escape_bytes(out, sizeof(out), in, strlen(in), ESCAPE_CONTROL, NULL), 26);
	CU_ASSERT_STRING_EQUAL(out, "a=b \"c\"\\\\x0a\\x09\\x7f\\x01\xc3\xa9");
	CU_ASSERT_EQUAL(escape_bytes(out, sizeof(out), "mem\nhog", 7, ESCAPE_CONTROL, NULL), 10);
	CU_ASSERT_STRING_EQUAL(out, "mem\\x0ahog");
	/* cut: the length it needed comes back */
	CU_ASSERT_EQUAL(escape_bytes(out, 5, "mem\nhog", 7, ESCAPE_CONTROL, NULL), 10);
	CU_ASSERT_STRING_EQUAL(out, "mem");
	CU_ASSERT_EQUAL(escape_bytes(out, 0, "x", 1, ESCAPE_CONTROL, NULL), 1);
}

/* in escaped as a name; out must be what comes out, and a display name */
static void name_is(const char *in, const char *want)
{
	size_t len = strlen(in);
	char out[256];

	escape_bytes(out, sizeof(out), in, len, ESCAPE_NAME, NULL);
	CU_ASSERT_STRING_EQUAL(out, want);
	CU_ASSERT_TRUE(cunit_tap_utf8_ok(out, strlen(out), false));
	escape_bytes(out, sizeof(out), in, len, ESCAPE_CONTROL, NULL);
	CU_ASSERT_TRUE(cunit_tap_utf8_ok(out, strlen(out), false));
}

/* M-2: a name is made valid UTF-8 where it is read. Well-formed sequences
 * of every length stay; each byte of an ill-formed one is escaped. */
static void test_escape_utf8(void)
{
	size_t used = 99;
	char out[16];

	/* kept: 2, 3 and 4 bytes, the edges of each range, U+00A0 after the C1 block */
	name_is("\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
	name_is("\xc2\xa0\xdf\xbf\xe0\xa0\x80\xed\x9f\xbf\xee\x80\x80\xf0\x90\x80\x80\xf4\x8f\xbf\xbf",
		"\xc2\xa0\xdf\xbf\xe0\xa0\x80\xed\x9f\xbf\xee\x80\x80\xf0\x90\x80\x80\xf4\x8f\xbf\xbf");
	/* the review's name, and stray continuation bytes */
	name_is("\xff\xfe-hog", "\\xff\\xfe-hog");
	name_is("a\x80\xbf", "a\\x80\\xbf");
	/* overlong forms */
	name_is("\xc0\xaf\xc1\xbf", "\\xc0\\xaf\\xc1\\xbf");
	name_is("\xe0\x80\xaf", "\\xe0\\x80\\xaf");
	name_is("\xf0\x8f\xbf\xbf", "\\xf0\\x8f\\xbf\\xbf");
	/* surrogates, beyond U+10FFFF */
	name_is("\xed\xa0\x80\xed\xbf\xbf", "\\xed\\xa0\\x80\\xed\\xbf\\xbf");
	name_is("\xf4\x90\x80\x80\xf5\x80\x80\x80", "\\xf4\\x90\\x80\\x80\\xf5\\x80\\x80\\x80");
	/* cut short: at the end, and before an ASCII byte (the kernel cuts comm at 15 bytes) */
	name_is("ab\xe2\x82", "ab\\xe2\\x82");
	name_is("\xf0\x9f\x98z\xc3", "\\xf0\\x9f\\x98z\\xc3");
	/* C1 controls (CSI U+009B) like C0 ones; the backslash */
	name_is("\xc2\x9b[2J\\", "\\xc2\\x9b[2J\\x5c");
	/* a sequence is never cut in half: "ab€" needs 5 bytes and a NUL */
	CU_ASSERT_EQUAL(escape_bytes(out, 5, "ab\xe2\x82\xac", 5, ESCAPE_NAME, &used), 5);
	CU_ASSERT_STRING_EQUAL(out, "ab");
	CU_ASSERT_EQUAL(used, 2);
	CU_ASSERT_EQUAL(escape_bytes(out, 6, "ab\xe2\x82\xac", 5, ESCAPE_NAME, &used), 5);
	CU_ASSERT_STRING_EQUAL(out, "ab\xe2\x82\xac");
	CU_ASSERT_EQUAL(used, 5);
	/* the length of one character */
	CU_ASSERT_EQUAL(escape_utf8_len("a", 1), 1);
	CU_ASSERT_EQUAL(escape_utf8_len("\xf0\x9f\x98\x80", 4), 4);
	CU_ASSERT_EQUAL(escape_utf8_len("\xf0\x9f\x98\x80", 3), 0);
	CU_ASSERT_EQUAL(escape_utf8_len("\xed\xa0\x80", 3), 0);
	CU_ASSERT_EQUAL(escape_utf8_len("", 0), 0);
	/* tokens stay ASCII */
	escape_bytes(out, sizeof(out), "\xc3\xa9", 2, ESCAPE_TOKEN, NULL);
	CU_ASSERT_STRING_EQUAL(out, "\\xc3\\xa9");
}

/* Every PSI_LMKD_* value of the hook is escaped; one line per variable. */
static void test_hook_env(void)
{
	struct proc_info pi;
	char buf[8192], *envp[HOOK_ENV_N + 1];
	size_t i;

	memset(&pi, 0, sizeof(pi));
	pi.pid = 42;
	pi.uid = 1000;
	pi.oom_score_adj = -5;
	pi.rss_kb = 123;
	/* a comm comes escaped from procfs; a raw one here shows the hook
	 * escapes control bytes whatever reaches it */
	snprintf(pi.comm, sizeof(pi.comm), "mem\nhog\\");
	snprintf(pi.cgroup, sizeof(pi.cgroup), "/user.slice/a\nPSI_LMKD_PID=1\x1b[2J");
	pi.has_cgroup = true;
	CU_ASSERT_EQUAL(hook_env(buf, sizeof(buf), envp, &pi, "t\r", "psi_some"), 0);
	CU_ASSERT_STRING_EQUAL(envp[0], "PSI_LMKD_PID=42");
	CU_ASSERT_STRING_EQUAL(envp[1], "PSI_LMKD_COMM=mem\\x0ahog\\");
	CU_ASSERT_STRING_EQUAL(envp[2], "PSI_LMKD_UID=1000");
	CU_ASSERT_STRING_EQUAL(envp[3], "PSI_LMKD_OOM_SCORE_ADJ=-5");
	CU_ASSERT_STRING_EQUAL(envp[4], "PSI_LMKD_RSS_KB=123");
	CU_ASSERT_STRING_EQUAL(envp[5], "PSI_LMKD_CGROUP=/user.slice/a\\x0aPSI_LMKD_PID=1\\x1b[2J");
	/* the cgroup path becomes a display name: a backslash and bytes that are not UTF-8 escaped */
	snprintf(pi.cgroup, sizeof(pi.cgroup), "/rv/g-\xff\xfe\\\xc3\xa9");
	CU_ASSERT_EQUAL(hook_env(buf, sizeof(buf), envp, &pi, "t", "psi_some"), 0);
	CU_ASSERT_STRING_EQUAL(envp[5], "PSI_LMKD_CGROUP=/rv/g-\\xff\\xfe\\x5c\xc3\xa9");
	snprintf(pi.cgroup, sizeof(pi.cgroup), "/user.slice/a\nPSI_LMKD_PID=1\x1b[2J");
	CU_ASSERT_EQUAL(hook_env(buf, sizeof(buf), envp, &pi, "t\r", "psi_some"), 0);
	CU_ASSERT_STRING_EQUAL(envp[6], "PSI_LMKD_TIER=t\\x0d");
	CU_ASSERT_STRING_EQUAL(envp[7], "PSI_LMKD_REASON=psi_some");
	CU_ASSERT_STRING_EQUAL(envp[8], "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
	CU_ASSERT_PTR_NULL(envp[9]);
	for (i = 0; i < HOOK_ENV_N; i++)
		CU_ASSERT_PTR_NULL(strpbrk(envp[i], "\n\r\x1b"));
	/* a buffer too small: cut, said so, still a valid environment */
	CU_ASSERT_EQUAL(hook_env(buf, 64, envp, &pi, "t", "psi_some"), -ENOSPC);
	CU_ASSERT_PTR_NULL(envp[HOOK_ENV_N]);
	for (i = 0; i < HOOK_ENV_N; i++)
		CU_ASSERT_PTR_NOT_NULL(envp[i]);
}

/* Runs log_msg with stderr sent to a temporary file; returns what it wrote. */
static void logged(char *out, size_t size, const char *comm, const char *cgroup)
{
	struct log l;
	FILE *tmp = tmpfile();
	int saved;
	size_t n;

	out[0] = '\0';
	CU_ASSERT_PTR_NOT_NULL_FATAL(tmp);
	unsetenv("JOURNAL_STREAM");
	log_init(&l, LOG_INFO, false);
	fflush(stderr);
	saved = dup(STDERR_FILENO);
	CU_ASSERT_FATAL(saved >= 0 && dup2(fileno(tmp), STDERR_FILENO) >= 0);
	log_msg(&l, LOG_NOTICE, "pid 42 (%s) did not exit after SIGTERM in %s; sent SIGKILL", comm, cgroup);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	rewind(tmp);
	n = fread(out, 1, size - 1, tmp);
	out[n] = '\0';
	fclose(tmp);
}

static size_t count_char(const char *s, char c)
{
	size_t n = 0;

	for (; *s; s++)
		n += *s == c;
	return n;
}

/* M7: a comm "x\nkill pid=1 x" (and a cgroup path with control bytes) must
 * give one line, never a forged "kill pid=1" line of its own. */
static void test_one_line(void)
{
	char out[4096];
	struct proc_info pi;

	logged(out, sizeof(out), "x\nkill pid=1 x", "/user.slice/a\rb\x1b[2J");
	CU_ASSERT_EQUAL(count_char(out, '\n'), 1);
	CU_ASSERT_EQUAL(count_char(out, '\r'), 0);
	CU_ASSERT_EQUAL(count_char(out, '\x1b'), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "pid 42 (x\\x0akill pid=1 x) did not exit"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "/user.slice/a\\x0db\\x1b[2J; sent SIGKILL\n"));
	/* the same name as the daemon reads it: escaped once, at the source */
	memset(&pi, 0, sizeof(pi));
	CU_ASSERT_EQUAL_FATAL(procfs_parse_stat("42 (x\nkill pid=1 x) S 1 42 42 0 -1 4194560 1 0 0 0 5 3 0 0 20 0 1 0 7 1 2\n", &pi),
			      0);
	logged(out, sizeof(out), pi.comm, "/");
	CU_ASSERT_EQUAL(count_char(out, '\n'), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "pid 42 (x\\x0akill pid=1 x) did not exit"));
	/* ordinary text, tabs aside, is unchanged */
	logged(out, sizeof(out), "memhog", "/a b");
	CU_ASSERT_STRING_EQUAL(out, "psi-lmkd: pid 42 (memhog) did not exit after SIGTERM in /a b; sent SIGKILL\n");
}

static void test_pipe_room(void)
{
	/* an empty pipe takes any line of a page; one that holds bytes needs
	 * three free pages for the next */
	CU_ASSERT_TRUE(logsink_pipe_has_room(65536, 0, 4096));
	CU_ASSERT_TRUE(logsink_pipe_has_room(4096, 0, 200));
	CU_ASSERT_FALSE(logsink_pipe_has_room(4096, 1, 200));
	CU_ASSERT_FALSE(logsink_pipe_has_room(65536, 0, 4097));
	CU_ASSERT_TRUE(logsink_pipe_has_room(65536, 65536 - 3 * 4096, 300));
	CU_ASSERT_FALSE(logsink_pipe_has_room(65536, 65536 - 3 * 4096 + 1, 300));
	CU_ASSERT_FALSE(logsink_pipe_has_room(16384, 5000, 100));
}

/* Reads what the pipe or socket rfd holds now into out (appended at *len). */
static void drain_fd(int rfd, char *out, size_t size, size_t *len)
{
	ssize_t n;

	while (*len < size - 1 && (n = read(rfd, out + *len, size - 1 - *len)) > 0)
		*len += (size_t)n;
	out[*len] = '\0';
}

/* Lines "<kind> <n>\n" put into a sink on wfd whose reader (rfd) is away:
 * never a blocked write (the alarm would end the test), each kill line
 * kept in order, debug lines dropped once the queue is half full. */
static void sink_keeps_order(int wfd, int rfd)
{
	static struct logsink sink;
	static char out[4 * LOGSINK_SIZE];
	char line[256];
	size_t len = 0, kills = 0, debugs = 0;
	unsigned i, next_kill = 0;
	char *p;

	logsink_init(&sink, wfd);
	alarm(10);
	for (i = 0; i < 2000; i++) {
		bool kill = i % 8 == 0;
		int n = snprintf(line, sizeof(line), "%s %u %0100u\n", kill ? "kill" : "debug", i, 0u);

		logsink_put(&sink, line, (size_t)n, kill);
	}
	alarm(0);
	CU_ASSERT_TRUE(sink.dropped > 0);
	CU_ASSERT_TRUE(sink.len > LOGSINK_SIZE / 2);
	/* the reader comes back: what it reads and what the queue still holds
	 * go out in the order they were put */
	do {
		drain_fd(rfd, out, sizeof(out), &len);
	} while (logsink_flush(&sink));
	drain_fd(rfd, out, sizeof(out), &len);
	CU_ASSERT_EQUAL(sink.len, 0);
	for (p = out; *p; p = strchr(p, '\n') + 1) {
		unsigned n;

		if (sscanf(p, "kill %u", &n) == 1) {
			/* kill lines: none lost, none out of order */
			CU_ASSERT_EQUAL(n, next_kill);
			next_kill = n + 8;
			kills++;
		} else {
			CU_ASSERT_EQUAL(strncmp(p, "debug ", 6), 0);
			debugs++;
		}
		if (!strchr(p, '\n'))
			break;
	}
	CU_ASSERT_EQUAL(kills, 250);
	CU_ASSERT_EQUAL(kills + debugs + sink.dropped, 2000);
}

static void test_sink_pipe(void)
{
	int fds[2];

	CU_ASSERT_FATAL(pipe2(fds, O_CLOEXEC) == 0);
	CU_ASSERT_FATAL(fcntl(fds[1], F_SETPIPE_SZ, 16384) >= 16384);
	CU_ASSERT_FATAL(fcntl(fds[0], F_SETFL, O_NONBLOCK) == 0);
	sink_keeps_order(fds[1], fds[0]);
	close(fds[0]);
	close(fds[1]);
}

static void test_sink_socket(void)
{
	int fds[2], small = 4096;

	CU_ASSERT_FATAL(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) == 0);
	CU_ASSERT_FATAL(setsockopt(fds[1], SOL_SOCKET, SO_SNDBUF, &small, sizeof(small)) == 0);
	CU_ASSERT_FATAL(setsockopt(fds[0], SOL_SOCKET, SO_RCVBUF, &small, sizeof(small)) == 0);
	CU_ASSERT_FATAL(fcntl(fds[0], F_SETFL, O_NONBLOCK) == 0);
	sink_keeps_order(fds[1], fds[0]);
	close(fds[0]);
	close(fds[1]);
}

/* Through log_msg: a full pipe queues the line; log_flush writes it once
 * there is room and then says how many lines it had to drop. */
static void test_log_dropped(void)
{
	static struct logsink sink;
	static char out[4 * LOGSINK_SIZE];
	struct log l;
	int fds[2], saved, i;
	size_t len = 0;

	CU_ASSERT_FATAL(pipe2(fds, O_CLOEXEC) == 0);
	CU_ASSERT_FATAL(fcntl(fds[1], F_SETPIPE_SZ, 16384) >= 16384);
	CU_ASSERT_FATAL(fcntl(fds[0], F_SETFL, O_NONBLOCK) == 0);
	unsetenv("JOURNAL_STREAM");
	fflush(stderr);
	saved = dup(STDERR_FILENO);
	CU_ASSERT_FATAL(saved >= 0 && dup2(fds[1], STDERR_FILENO) >= 0);
	log_init(&l, LOG_DEBUG, false);
	logsink_init(&sink, STDERR_FILENO);
	log_use_sink(&l, &sink);
	alarm(10);
	for (i = 0; i < 3000; i++)
		log_debug(&l, "debug line %d of a reader that is away", i);
	log_notice(&l, "kill pid=%d", 4242);
	alarm(0);
	CU_ASSERT_TRUE(sink.dropped > 0);
	CU_ASSERT_TRUE(log_flush(&l)); /* nobody read: still queued */
	do
		drain_fd(fds[0], out, sizeof(out), &len);
	while (log_flush(&l));
	drain_fd(fds[0], out, sizeof(out), &len);
	dup2(saved, STDERR_FILENO);
	close(saved);
	CU_ASSERT_EQUAL(sink.dropped, 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "psi-lmkd: debug: debug line 0 of"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "psi-lmkd: kill pid=4242\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, " log lines were dropped: the reader of stderr"));
	/* the report comes after the kill line, the last thing put */
	CU_ASSERT_TRUE(strstr(out, "lines were dropped") > strstr(out, "kill pid=4242"));
	close(fds[0]);
	close(fds[1]);
}

int main(void)
{
	static CU_TestInfo tests[] = {
		{ "kill line", test_kill_line },
		{ "escaping", test_escape },
		{ "escaping control bytes only", test_escape_control },
		{ "names become valid UTF-8", test_escape_utf8 },
		{ "hook environment", test_hook_env },
		{ "one call, one line", test_one_line },
		{ "logsink: when a pipe has room", test_pipe_room },
		{ "logsink: a pipe's reader away: no block, kill lines kept in order", test_sink_pipe },
		{ "logsink: a socket's reader away: no block, kill lines kept in order", test_sink_socket },
		{ "logsink: dropped lines said once the queue is empty", test_log_dropped },
		CU_TEST_INFO_NULL,
	};
	static CU_SuiteInfo suites[] = {
		{ "log", NULL, NULL, NULL, NULL, tests },
		CU_SUITE_INFO_NULL,
	};

	return cunit_tap_main(suites);
}
