/* SPDX-License-Identifier: MIT */
/* test-sdsock: journald's native protocol as psi-lmkd writes it, byte for
 * byte: a receiver bound at run/systemd/journal/socket under a temporary
 * root gets each entry, one field per line, a value with a newline in the
 * length-prefixed binary form; an entry too large for its buffer is refused
 * whole. Also the kill's entry (killline_journal) and socket addresses. */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "cunit-tap.h"
#include "history.h"
#include "killline.h"
#include "sdsock.h"

static char dir[64];
static char sock_path[160];
static int sock = -1;
static int rootfd = -1; /* dir: the daemon's root in these tests */
/* the journal socket's directories under dir, parents first */
static const char *const subdirs[] = { "/run", "/run/systemd", "/run/systemd/journal" };
#define N_SUBDIRS (sizeof(subdirs) / sizeof(subdirs[0]))

static int suite_init(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char p[160];
	size_t i;

	strcpy(dir, "/tmp/psi-lmkd-sdsock.XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	for (i = 0; i < N_SUBDIRS; i++) {
		snprintf(p, sizeof(p), "%s%s", dir, subdirs[i]);
		if (mkdir(p, 0700) < 0)
			return -1;
	}
	snprintf(sock_path, sizeof(sock_path), "%s%s", dir, SDSOCK_JOURNAL);
	if (strlen(sock_path) >= sizeof(sa.sun_path))
		return -1;
	strcpy(sa.sun_path, sock_path);
	sock = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (sock < 0 || bind(sock, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return -1;
	rootfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return rootfd < 0 ? -1 : 0;
}

static int suite_clean(void)
{
	char p[160];
	size_t i;

	if (sock >= 0)
		close(sock);
	if (rootfd >= 0)
		close(rootfd);
	unlink(sock_path);
	for (i = N_SUBDIRS; i-- > 0;) {
		snprintf(p, sizeof(p), "%s%s", dir, subdirs[i]);
		rmdir(p);
	}
	rmdir(dir);
	return 0;
}

/* The next datagram's length (-1: none); its bytes in buf. */
static ssize_t next_entry(char *buf, size_t size)
{
	return recv(sock, buf, size, MSG_DONTWAIT);
}

/* e holds exactly the n bytes of want, and the journal gets them as one datagram. */
static void check_sent(const struct sdsock_entry *e, const char *want, size_t n)
{
	char got[256];

	CU_ASSERT_EQUAL(e->err, 0);
	CU_ASSERT_EQUAL(e->len, n);
	CU_ASSERT_EQUAL(memcmp(e->buf, want, n), 0);
	CU_ASSERT_EQUAL(sdsock_journal(rootfd, e), 0);
	CU_ASSERT_EQUAL(next_entry(got, sizeof(got)), (ssize_t)n);
	CU_ASSERT_EQUAL(memcmp(got, want, n), 0);
	CU_ASSERT_EQUAL(next_entry(got, sizeof(got)), -1);
}

static void test_plain_fields(void)
{
	static const char want[] = "MESSAGE=hello world\nPRIORITY=5\nEMPTY=\n";
	struct sdsock_entry e;

	sdsock_entry_init(&e);
	sdsock_entry_add(&e, "MESSAGE", "hello world");
	sdsock_entry_addf(&e, "PRIORITY", "%d", 5);
	sdsock_entry_add(&e, "EMPTY", "");
	check_sent(&e, want, sizeof(want) - 1);
}

static void test_binary_field(void)
{
	/* "NAME\n", length 8 as 64-bit little endian, the value, "\n" */
	static const char want[] = "A=1\nMESSAGE\n\x08\0\0\0\0\0\0\0line 1\n2\nB=2\n";
	struct sdsock_entry e;

	sdsock_entry_init(&e);
	sdsock_entry_add(&e, "A", "1");
	sdsock_entry_add(&e, "MESSAGE", "line 1\n2");
	sdsock_entry_add(&e, "B", "2");
	check_sent(&e, want, sizeof(want) - 1);
}

static void test_too_large(void)
{
	static char big[SDSOCK_ENTRY_MAX];
	struct sdsock_entry e;
	char got[64];

	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	sdsock_entry_init(&e);
	sdsock_entry_add(&e, "A", "1");
	sdsock_entry_add(&e, "BIG", big);
	CU_ASSERT_EQUAL(e.err, -EMSGSIZE);
	CU_ASSERT_EQUAL(e.len, 4); /* no half field */
	sdsock_entry_add(&e, "C", "3"); /* nothing after the field that did not fit */
	CU_ASSERT_EQUAL(e.len, 4);
	CU_ASSERT_EQUAL(sdsock_journal(rootfd, &e), -EMSGSIZE);
	CU_ASSERT_EQUAL(next_entry(got, sizeof(got)), -1);
}

static void test_addresses(void)
{
	char longer[sizeof(((struct sockaddr_un *)0)->sun_path) + 2];
	struct sockaddr_un sa;
	socklen_t len;

	CU_ASSERT_EQUAL(sdsock_addr(rootfd, "@abc", &sa, &len), 0);
	CU_ASSERT_EQUAL(len, offsetof(struct sockaddr_un, sun_path) + 4);
	CU_ASSERT_EQUAL(memcmp(sa.sun_path, "\0abc", 4), 0);
	CU_ASSERT_EQUAL(sdsock_addr(-1, "/run/x", &sa, &len), 0);
	CU_ASSERT_STRING_EQUAL(sa.sun_path, "/run/x");
	CU_ASSERT_EQUAL(sdsock_addr(-1, "run/x", &sa, &len), -EINVAL);
	CU_ASSERT_EQUAL(sdsock_addr(-1, "", &sa, &len), -EINVAL);
	memset(longer, 'a', sizeof(longer) - 1);
	longer[0] = '/';
	longer[sizeof(longer) - 1] = '\0';
	CU_ASSERT_EQUAL(sdsock_addr(-1, longer, &sa, &len), -ENAMETOOLONG);
	longer[0] = '@';
	CU_ASSERT_EQUAL(sdsock_addr(-1, longer, &sa, &len), -ENAMETOOLONG);
	/* no journal under this root: the caller writes its line instead */
	CU_ASSERT_EQUAL(sdsock_send(rootfd, "/run/systemd/nothing", "A=1\n", 4), -ENOENT);
}

/* A receiver that reads nothing: sends fail at once with -EAGAIN when its
 * queue is full, never wait. */
static void test_full_queue(void)
{
	struct sdsock_entry e;
	char got[64];
	int i, r = 0;

	sdsock_entry_init(&e);
	sdsock_entry_add(&e, "MESSAGE", "x");
	for (i = 0; i < 100000 && (r = sdsock_journal(rootfd, &e)) == 0; i++)
		;
	CU_ASSERT_EQUAL(r, -EAGAIN);
	CU_ASSERT(i > 0);
	while (next_entry(got, sizeof(got)) >= 0)
		;
	CU_ASSERT_EQUAL(sdsock_journal(rootfd, &e), 0);
	CU_ASSERT(next_entry(got, sizeof(got)) > 0);
}

/* Whether the entry got[0..n) holds the field line "NAME=value\n". */
static bool has_field(const char *got, size_t n, const char *field)
{
	size_t f = strlen(field), i;

	for (i = 0; i + f <= n; i++)
		if ((i == 0 || got[i - 1] == '\n') && memcmp(got + i, field, f) == 0)
			return true;
	return false;
}

static void test_kill_entry(void)
{
	struct log l = { .max_level = LOG_INFO, .journal = true };
	struct kill_record r;
	char got[SDSOCK_ENTRY_MAX];
	ssize_t n;

	memset(&r, 0, sizeof(r));
	r.pid = 42;
	r.uid = 1000;
	r.oom_score_adj = 300;
	r.rss_kb = 1234;
	r.size_kb = 2345;
	r.badness_kb = 99;
	strcpy(r.comm, "eater");
	strcpy(r.tier, "critical");
	strcpy(r.reason, "psi_full");
	strcpy(r.cgroup, "/a\nb"); /* a control byte becomes \x0a */
	r.has_psi = true;
	r.psi.some.avg10 = 1234;
	CU_ASSERT_EQUAL(killline_journal(&l, rootfd, LOG_NOTICE, "kill", "kill pid=42 comm=eater", &r), 0);
	n = next_entry(got, sizeof(got));
	CU_ASSERT_FATAL(n > 0);
	CU_ASSERT_TRUE(has_field(got, (size_t)n, "MESSAGE=kill pid=42 comm=eater\n"));
	CU_ASSERT_TRUE(has_field(got, (size_t)n, "MESSAGE_ID=" KILLLINE_MESSAGE_ID "\n"));
	CU_ASSERT_TRUE(has_field(got, (size_t)n, "PRIORITY=5\n"));
	CU_ASSERT_TRUE(has_field(got, (size_t)n, "SYSLOG_IDENTIFIER=psi-lmkd\n"));
	CU_ASSERT_TRUE(has_field(got, (size_t)n, "PSI_LMKD_ACTION=kill\n"));
	CU_ASSERT_TRUE(has_field(got, (size_t)n, "PSI_LMKD_PID=42\n"));
	CU_ASSERT_TRUE(has_field(got, (size_t)n, "PSI_LMKD_UID=1000\n"));
	CU_ASSERT_TRUE(has_field(got, (size_t)n, "PSI_LMKD_OOM_SCORE_ADJ=300\n"));
	CU_ASSERT_TRUE(has_field(got, (size_t)n, "PSI_LMKD_RSS_KB=1234\n"));
	CU_ASSERT_TRUE(has_field(got, (size_t)n, "PSI_LMKD_SIZE_KB=2345\n"));
	CU_ASSERT_TRUE(has_field(got, (size_t)n, "PSI_LMKD_BADNESS_KB=99\n"));
	CU_ASSERT_TRUE(has_field(got, (size_t)n, "PSI_LMKD_COMM=eater\n"));
	CU_ASSERT_TRUE(has_field(got, (size_t)n, "PSI_LMKD_TIER=critical\n"));
	CU_ASSERT_TRUE(has_field(got, (size_t)n, "PSI_LMKD_REASON=psi_full\n"));
	CU_ASSERT_TRUE(has_field(got, (size_t)n, "PSI_LMKD_CGROUP=/a\\x0ab\n"));
	CU_ASSERT_TRUE(has_field(got, (size_t)n, "PSI_LMKD_GROUP=\n"));
	CU_ASSERT_TRUE(has_field(got, (size_t)n, "PSI_LMKD_PRESSURE_SOME_AVG10=12.34\n"));
	CU_ASSERT_TRUE(has_field(got, (size_t)n, "PSI_LMKD_PRESSURE_FULL_AVG10=\n"));
	CU_ASSERT_TRUE(has_field(got, (size_t)n, "PSI_LMKD_AVAILABLE_KB=\n"));
	/* stderr not read by journald, or a level below the threshold: no entry */
	l.journal = false;
	CU_ASSERT_EQUAL(killline_journal(&l, rootfd, LOG_NOTICE, "kill", "x", &r), -ENOTSUP);
	l.journal = true;
	CU_ASSERT_EQUAL(killline_journal(&l, rootfd, LOG_DEBUG, "kill", "x", &r), -ENOTSUP);
	CU_ASSERT_EQUAL(next_entry(got, sizeof(got)), -1);
}

int main(void)
{
	static CU_TestInfo tests[] = {
		{ "fields without a newline: NAME=value lines", test_plain_fields },
		{ "a value with a newline: the length-prefixed form", test_binary_field },
		{ "an entry too large is refused whole", test_too_large },
		{ "socket addresses: abstract, path, invalid, too long", test_addresses },
		{ "a full receiver: -EAGAIN at once, never a wait", test_full_queue },
		{ "the kill's entry: MESSAGE_ID and the PSI_LMKD_ fields", test_kill_entry },
		CU_TEST_INFO_NULL,
	};
	static CU_SuiteInfo suites[] = {
		{ "sdsock", suite_init, suite_clean, NULL, NULL, tests },
		CU_SUITE_INFO_NULL,
	};

	return cunit_tap_main(suites);
}
