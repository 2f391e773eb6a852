/* SPDX-License-Identifier: MIT */
/* test-notify: the exact sd_notify messages, received on a datagram socket
 * this test owns and names in $NOTIFY_SOCKET: a path (also one under a root
 * other than "/") or an abstract name. Every build sends them: they are
 * written without libsystemd (sdsock.c). */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "cunit-tap.h"
#include "notify.h"

static char dir[64];
static char sock_path[128];
static int sock = -1;
static int rootfd = -1; /* "/" */

static int bind_dgram(const char *path, size_t pathlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || pathlen > sizeof(sa.sun_path))
		return -1;
	memcpy(sa.sun_path, path, pathlen);
	if (bind(fd, (struct sockaddr *)&sa, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + pathlen)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static int suite_init(void)
{
	strcpy(dir, "/tmp/psi-lmkd-notify.XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	snprintf(sock_path, sizeof(sock_path), "%s/notify", dir);
	sock = bind_dgram(sock_path, strlen(sock_path));
	rootfd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return sock < 0 || rootfd < 0 ? -1 : 0;
}

static int suite_clean(void)
{
	if (sock >= 0)
		close(sock);
	if (rootfd >= 0)
		close(rootfd);
	unlink(sock_path);
	rmdir(dir);
	unsetenv("NOTIFY_SOCKET");
	return 0;
}

/* The next queued message (NUL-terminated) or NULL if nothing was sent.
 * sendmsg() on an AF_UNIX datagram socket has queued it before it returns. */
static const char *next_msg(int fd)
{
	static char buf[2048];
	ssize_t n = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);

	if (n < 0)
		return NULL;
	buf[n] = '\0';
	return buf;
}

static void drain(int fd)
{
	while (next_msg(fd))
		;
}

/* Asserts that the last call sent exactly want. */
#define CHECK_MSG(fd, want)                                                                                           \
	do {                                                                                                          \
		const char *got_ = next_msg(fd);                                                                      \
		CU_ASSERT_PTR_NOT_NULL_FATAL(got_);                                                                   \
		CU_ASSERT_STRING_EQUAL(got_, (want));                                                                 \
		CU_ASSERT_PTR_NULL(next_msg(fd)); /* one message per call */                                          \
	} while (0)

static void use_socket(void)
{
	setenv("NOTIFY_SOCKET", sock_path, 1);
	drain(sock);
}

static uint64_t mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static void test_no_socket(void)
{
	unsetenv("NOTIFY_SOCKET");
	unsetenv("WATCHDOG_USEC");
	unsetenv("WATCHDOG_PID");
	CU_ASSERT_EQUAL(notify_ready(rootfd, "x"), 0);
	CU_ASSERT_EQUAL(notify_status(rootfd, "%d tiers", 2), 0);
	CU_ASSERT_EQUAL(notify_reloading(rootfd), 0);
	CU_ASSERT_EQUAL(notify_stopping(rootfd), 0);
	CU_ASSERT_EQUAL(notify_watchdog(rootfd), 0);
	CU_ASSERT_EQUAL(notify_watchdog_usec(), 0);
	CU_ASSERT_PTR_NULL(next_msg(sock));
}

static void test_ready(void)
{
	use_socket();
	CU_ASSERT_EQUAL(notify_ready(rootfd, "2 tiers armed (2 kernel, 0 userspace), 0 kills"), 0);
	CHECK_MSG(sock, "READY=1\nSTATUS=2 tiers armed (2 kernel, 0 userspace), 0 kills");
	CU_ASSERT_EQUAL(notify_ready(rootfd, NULL), 0);
	CHECK_MSG(sock, "READY=1");
	CU_ASSERT_EQUAL(notify_ready(rootfd, ""), 0);
	CHECK_MSG(sock, "READY=1");
}

static void test_status(void)
{
	use_socket();
	CU_ASSERT_EQUAL(notify_status(rootfd, "%zu tiers, %d kills, last %s", (size_t)2, 3, "firefox"), 0);
	CHECK_MSG(sock, "STATUS=2 tiers, 3 kills, last firefox");
	/* one line: a newline would start a new assignment */
	CU_ASSERT_EQUAL(notify_status(rootfd, "a\nRELOADING=1\tb\x7f"), 0);
	CHECK_MSG(sock, "STATUS=a RELOADING=1 b ");
	CU_ASSERT_EQUAL(notify_ready(rootfd, "x\ny"), 0);
	CHECK_MSG(sock, "READY=1\nSTATUS=x y");
}

static void test_status_cut_utf8(void)
{
	char in[1 + 2 * 300 + 1], want[sizeof("STATUS=") + NOTIFY_STATUS_MAX];
	size_t i;

	/* "x" then 300 two-byte characters: the cut at NOTIFY_STATUS_MAX (even)
	 * would split a character, so its first byte must go too */
	in[0] = 'x';
	for (i = 0; i < 300; i++)
		memcpy(in + 1 + 2 * i, "\xc3\xa9", 2);
	in[1 + 2 * 300] = '\0';
	strcpy(want, "STATUS=x");
	for (i = 0; i < (NOTIFY_STATUS_MAX - 2) / 2; i++)
		strcat(want, "\xc3\xa9");
	use_socket();
	CU_ASSERT_EQUAL(notify_status(rootfd, "%s", in), 0);
	CHECK_MSG(sock, want);
	CU_ASSERT_EQUAL(strlen(want), strlen("STATUS=") + NOTIFY_STATUS_MAX - 1);

	/* a three-byte character cut after its second byte */
	memset(in, 'a', NOTIFY_STATUS_MAX - 2);
	memcpy(in + NOTIFY_STATUS_MAX - 2, "\xe2\x82\xac", 4);
	strcpy(want, "STATUS=");
	memset(want + 7, 'a', NOTIFY_STATUS_MAX - 2);
	want[7 + NOTIFY_STATUS_MAX - 2] = '\0';
	CU_ASSERT_EQUAL(notify_status(rootfd, "%s", in), 0);
	CHECK_MSG(sock, want);

	/* exactly fitting: nothing is cut */
	memset(in, 'a', NOTIFY_STATUS_MAX - 3);
	memcpy(in + NOTIFY_STATUS_MAX - 3, "\xe2\x82\xac", 4);
	strcpy(want, "STATUS=");
	strcat(want, in);
	CU_ASSERT_EQUAL(notify_status(rootfd, "%s", in), 0);
	CHECK_MSG(sock, want);
}

static void test_reloading(void)
{
	unsigned long long t;
	uint64_t before, after;
	const char *got;
	int end = 0;

	use_socket();
	before = mono_us();
	CU_ASSERT_EQUAL(notify_reloading(rootfd), 0);
	after = mono_us();
	got = next_msg(sock);
	CU_ASSERT_PTR_NOT_NULL_FATAL(got);
	CU_ASSERT_EQUAL_FATAL(sscanf(got, "RELOADING=1\nMONOTONIC_USEC=%llu%n", &t, &end), 1);
	CU_ASSERT_EQUAL(got[end], '\0');
	CU_ASSERT_TRUE(t >= before && t <= after);
	CU_ASSERT_PTR_NULL(next_msg(sock));
}

static void test_stopping_watchdog(void)
{
	use_socket();
	CU_ASSERT_EQUAL(notify_stopping(rootfd), 0);
	CHECK_MSG(sock, "STOPPING=1");
	CU_ASSERT_EQUAL(notify_watchdog(rootfd), 0);
	CHECK_MSG(sock, "WATCHDOG=1");
}

static void test_watchdog_usec(void)
{
	char pid[32];

	setenv("WATCHDOG_USEC", "3000000", 1);
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	setenv("WATCHDOG_PID", pid, 1);
	CU_ASSERT_EQUAL(notify_watchdog_usec(), 3000000u);
	/* meant for another process (e.g. the parent before a fork) */
	snprintf(pid, sizeof(pid), "%d", (int)getppid());
	setenv("WATCHDOG_PID", pid, 1);
	CU_ASSERT_EQUAL(notify_watchdog_usec(), 0);
	unsetenv("WATCHDOG_PID");
	CU_ASSERT_EQUAL(notify_watchdog_usec(), 3000000u);
	setenv("WATCHDOG_USEC", "garbage", 1);
	CU_ASSERT_EQUAL(notify_watchdog_usec(), 0);
	unsetenv("WATCHDOG_USEC");
	CU_ASSERT_EQUAL(notify_watchdog_usec(), 0);
}

static void test_abstract_socket(void)
{
	char name[64], env[72];
	int fd;

	/* "@name" is an abstract socket: sun_path starts with a NUL byte */
	snprintf(name, sizeof(name), "%cpsi-lmkd-test-notify-%d", '\0', (int)getpid());
	fd = bind_dgram(name, 1 + strlen(name + 1));
	CU_ASSERT_FATAL(fd >= 0);
	snprintf(env, sizeof(env), "@%s", name + 1);
	setenv("NOTIFY_SOCKET", env, 1);
	CU_ASSERT_EQUAL(notify_ready(rootfd, "abstract"), 0);
	CHECK_MSG(fd, "READY=1\nSTATUS=abstract");
	close(fd);
}

static void test_socket_gone(void)
{
	char gone[160];
	int r;

	snprintf(gone, sizeof(gone), "%s/nobody-listens", dir);
	setenv("NOTIFY_SOCKET", gone, 1);
	r = notify_ready(rootfd, "x");
	CU_ASSERT_TRUE(r < 0 && r != -EINVAL);
	CU_ASSERT_EQUAL(notify_watchdog(rootfd), r);
	/* neither a path nor an abstract name (sd_notify(3) refuses it too) */
	setenv("NOTIFY_SOCKET", "relative/notify", 1);
	CU_ASSERT_EQUAL(notify_watchdog(rootfd), -EINVAL);
}

/* A path is looked up under the daemon's root: "/notify" under the test's
 * directory reaches the socket bound there. */
static void test_under_root(void)
{
	int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	CU_ASSERT_FATAL(dirfd >= 0);
	setenv("NOTIFY_SOCKET", "/notify", 1);
	drain(sock);
	CU_ASSERT_EQUAL(notify_ready(dirfd, "rooted"), 0);
	CHECK_MSG(sock, "READY=1\nSTATUS=rooted");
	/* the same path under "/" names nothing */
	CU_ASSERT_TRUE(notify_watchdog(rootfd) < 0);
	close(dirfd);
}

int main(void)
{
	static CU_TestInfo tests[] = {
		{ "no NOTIFY_SOCKET: every call is a successful no-op", test_no_socket },
		{ "READY=1 with and without STATUS=", test_ready },
		{ "STATUS= is formatted and kept on one line", test_status },
		{ "STATUS= is cut without splitting a UTF-8 character", test_status_cut_utf8 },
		{ "RELOADING=1 with MONOTONIC_USEC=", test_reloading },
		{ "STOPPING=1 and WATCHDOG=1", test_stopping_watchdog },
		{ "watchdog period from WATCHDOG_USEC/WATCHDOG_PID", test_watchdog_usec },
		{ "abstract NOTIFY_SOCKET (@name)", test_abstract_socket },
		{ "a socket nobody listens on, or a relative path, is an error", test_socket_gone },
		{ "a path is looked up under the daemon's root", test_under_root },
		CU_TEST_INFO_NULL,
	};
	static CU_SuiteInfo suites[] = {
		{ "notify", suite_init, suite_clean, NULL, NULL, tests },
		CU_SUITE_INFO_NULL,
	};

	return cunit_tap_main(suites);
}
