/* SPDX-License-Identifier: MIT */
/* test-warn: the system bus connection never waits for the bus. A unix
 * socket this test listens on and never accepts from plays a stalled bus
 * (the kernel completes the connection, nobody answers): opening, sending
 * and closing must return at once, the queue is bounded, and a connection
 * not up in time is reported. Built without libsystemd, opening says why
 * and fails. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "cunit-tap.h"
#include "event.h"
#include "history.h"
#include "warn.h"

/* any call here that takes longer waited for the bus */
#define PROMPT_US (500 * 1000ULL)

static char dir[64];
static char sock_path[80];
static int listener = -1;

static int suite_init(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char address[160];

	strcpy(dir, "/tmp/psi-lmkd-warn.XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	snprintf(sock_path, sizeof(sock_path), "%s/bus", dir);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock_path);
	listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (listener < 0 || bind(listener, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(listener, 16) < 0)
		return -1;
	snprintf(address, sizeof(address), "unix:path=%s", sock_path);
	return setenv("DBUS_SYSTEM_BUS_ADDRESS", address, 1);
}

static int suite_clean(void)
{
	if (listener >= 0)
		close(listener);
	unlink(sock_path);
	rmdir(dir);
	unsetenv("DBUS_SYSTEM_BUS_ADDRESS");
	return 0;
}

#ifdef HAVE_SYSTEMD
/* Opens against the silent socket; CU_FAIL and false if it did not at once. */
static bool open_stalled(struct warn_bus *w, uint64_t *t0)
{
	char why[256] = "";
	int r;

	memset(w, 0, sizeof(*w));
	*t0 = event_now_us();
	r = warn_bus_open(w, *t0, why, sizeof(why));
	CU_ASSERT_EQUAL(r, 0);
	CU_ASSERT(event_now_us() - *t0 < PROMPT_US);
	if (r < 0) {
		fprintf(stderr, "# %s\n", why);
		return false;
	}
	return true;
}

/* Connecting to a bus that never answers: no wait, a deadline, given up. */
static void test_connect_stalled(void)
{
	struct warn_bus w;
	uint64_t t0, t, when = 0;
	uint32_t events = 0;

	if (!open_stalled(&w, &t0))
		return;
	CU_ASSERT(warn_bus_fd(&w) >= 0);
	CU_ASSERT_FALSE(w.ready);
	CU_ASSERT_EQUAL(warn_bus_process(&w, event_now_us()), 0);
	CU_ASSERT_FALSE(w.ready);
	CU_ASSERT_EQUAL(warn_bus_wants(&w, &events, &when), 0);
	CU_ASSERT(events != 0);
	CU_ASSERT(when <= t0 + WARN_BUS_CONNECT_US);
	t = event_now_us();
	CU_ASSERT_EQUAL(warn_bus_process(&w, t0 + WARN_BUS_CONNECT_US), -ETIMEDOUT);
	CU_ASSERT(event_now_us() - t < PROMPT_US);
	t = event_now_us();
	warn_bus_close(&w);
	CU_ASSERT(event_now_us() - t < PROMPT_US);
	CU_ASSERT_EQUAL(warn_bus_fd(&w), -1);
}

/* Signals queue while nobody reads, up to the bound; the rest, and what is
 * still queued at the close, are dropped and counted, never waited for. */
static void test_send_bounded(void)
{
	struct kill_record rec;
	struct warn_bus w;
	uint64_t t0;
	int i, queued = 0, r = 0;

	if (!open_stalled(&w, &t0))
		return;
	memset(&rec, 0, sizeof(rec));
	rec.pid = 4242;
	strcpy(rec.comm, "hog");
	strcpy(rec.tier, "medium");
	strcpy(rec.reason, "psi_some");
	for (i = 0; i < 4 * WARN_BUS_QUEUE_MAX; i++) {
		r = i % 2 ? warn_bus_send(&w, WARN_LEVEL_LOW) : warn_bus_send_kill(&w, &rec);
		if (r < 0)
			break;
		queued++;
	}
	CU_ASSERT_EQUAL(r, -ENOBUFS);
	CU_ASSERT(queued > 0 && queued < WARN_BUS_QUEUE_MAX);
	CU_ASSERT_EQUAL(w.dropped, 1);
	CU_ASSERT_EQUAL(warn_bus_send(&w, WARN_LEVEL_CRITICAL), -ENOBUFS);
	CU_ASSERT_EQUAL(w.dropped, 2);
	CU_ASSERT(event_now_us() - t0 < 2 * PROMPT_US);
	warn_bus_close(&w);
	CU_ASSERT_EQUAL(w.dropped, 2 + (uint64_t)queued);
	CU_ASSERT_EQUAL(w.drop_err, -ECONNABORTED);
	CU_ASSERT_EQUAL(warn_bus_send(&w, WARN_LEVEL_LOW), -ENOTCONN);
	CU_ASSERT_EQUAL(w.dropped, 2 + (uint64_t)queued); /* no connection: not a drop the daemon reports */
}

/* No bus at all: an error at once, and why. */
static void test_no_bus(void)
{
	char why[256] = "", address[160];
	struct warn_bus w;

	memset(&w, 0, sizeof(w));
	snprintf(address, sizeof(address), "unix:path=%s/none", dir);
	setenv("DBUS_SYSTEM_BUS_ADDRESS", address, 1);
	CU_ASSERT_EQUAL(warn_bus_open(&w, event_now_us(), why, sizeof(why)), -ENOENT);
	CU_ASSERT_PTR_NULL(w.bus);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "cannot connect to the system bus"));
	snprintf(address, sizeof(address), "unix:path=%s", sock_path);
	setenv("DBUS_SYSTEM_BUS_ADDRESS", address, 1);
}

static CU_TestInfo tests[] = {
	{ "a connection to a silent bus: no wait, given up at its deadline", test_connect_stalled },
	{ "signals to a silent bus: a bounded queue, drops counted, closed without a flush", test_send_bounded },
	{ "no bus: an error at once", test_no_bus },
	CU_TEST_INFO_NULL,
};
#else
static void test_no_sdbus(void)
{
	char why[256] = "";
	struct warn_bus w;

	memset(&w, 0, sizeof(w));
	CU_ASSERT_EQUAL(warn_bus_open(&w, event_now_us(), why, sizeof(why)), -ENOTSUP);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "without libsystemd"));
	CU_ASSERT_EQUAL(warn_bus_send(&w, WARN_LEVEL_LOW), -ENOTSUP);
	CU_ASSERT_EQUAL(w.dropped, 0);
}

static CU_TestInfo tests[] = {
	{ "without sd-bus: no connection, and why", test_no_sdbus },
	CU_TEST_INFO_NULL,
};
#endif

int main(void)
{
	CU_SuiteInfo suites[] = {
		{ "warn", suite_init, suite_clean, NULL, NULL, tests },
		CU_SUITE_INFO_NULL,
	};

	return cunit_tap_main(suites);
}
