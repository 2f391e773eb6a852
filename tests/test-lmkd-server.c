/* SPDX-License-Identifier: MIT */
/* test-lmkd-server: the lmkd socket's server without the daemon: a real
 * socket in a temp dir, the event loop's part played by the test (fake ops),
 * a child process of the test's own registered. Checked: the replies'
 * bytes, UPDATE_PROPS's answer when the reload fails, BOOT_COMPLETED's two
 * answers, TARGET's rate limit, a client closed for a packet without
 * credentials, the kill path's source (the registered child
 * chosen; a kill reported as STAT, then PROCKILL in the configured size, and
 * counted; a failed kill forgets the record and reports nothing), a stale
 * event of an evicted client (m-1), bad input logged once per interval (m-4). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>

#include "cunit-tap.h"
#include "fileio.h"
#include "fixture-tree.h"
#include "lmkd-server.h"

struct fake {
	int reload_result;
	uint64_t now;
	unsigned watched, unwatched;
	size_t client_index; /* the index of the last client watched */
};

static int f_watch(void *ctx, int fd, enum lmkd_fd_kind kind, size_t index)
{
	struct fake *f = ctx;

	(void)fd;
	if (kind == LMKD_FD_CLIENT)
		f->client_index = index;
	f->watched++;
	return 0;
}

static void f_unwatch(void *ctx, int fd)
{
	struct fake *f = ctx;

	(void)fd;
	f->unwatched++;
}

static int f_reload(void *ctx)
{
	return ((struct fake *)ctx)->reload_result;
}

static uint64_t f_now(void *ctx)
{
	return ((struct fake *)ctx)->now;
}

static const struct lmkd_server_ops fake_ops = { f_watch, f_unwatch, f_reload, f_now };

struct rig {
	char dir[64], path[80];
	struct fake f;
	struct log log;
	struct lmkd_server s;
	int fd;     /* the test's client */
	size_t index; /* ... and its index in the event loop */
	int procfd;
};

static int rig_up(struct rig *g)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	memset(g, 0, sizeof(*g));
	strcpy(g->dir, "/tmp/test-lmkd-server-XXXXXX");
	if (!mkdtemp(g->dir))
		return -errno;
	snprintf(g->path, sizeof(g->path), "%s/lmkd", g->dir);
	log_init(&g->log, LOG_EMERG, false);
	g->procfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (g->procfd < 0 || lmkd_server_open(&g->s, NULL, g->path, &fake_ops, &g->f, &g->log, -1, g->procfd) < 0)
		return -1;
	strcpy(sa.sun_path, g->path);
	g->fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (g->fd < 0 || connect(g->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return -errno;
	lmkd_server_event(&g->s, LMKD_FD_LISTEN, 0, EPOLLIN);
	g->index = g->f.client_index;
	return g->s.clients[0].fd >= 0 ? 0 : -1;
}

static void rig_down(struct rig *g)
{
	close(g->fd);
	lmkd_server_close(&g->s);
	CU_ASSERT_EQUAL(access(g->path, F_OK), -1); /* the socket it made is gone */
	rmdir(g->dir);
	close(g->procfd);
}

/* sends words, lets the server read them */
static void say(struct rig *g, unsigned n, const int32_t *w)
{
	uint8_t buf[LMKD_PACKET_MAX];
	unsigned i;

	for (i = 0; i < n; i++) {
		uint32_t v = (uint32_t)w[i];

		buf[4 * i] = (uint8_t)(v >> 24);
		buf[4 * i + 1] = (uint8_t)(v >> 16);
		buf[4 * i + 2] = (uint8_t)(v >> 8);
		buf[4 * i + 3] = (uint8_t)v;
	}
	CU_ASSERT_EQUAL(send(g->fd, buf, 4 * n, 0), (ssize_t)(4 * n));
	lmkd_server_event(&g->s, LMKD_FD_CLIENT, g->index, EPOLLIN);
}

/* the next packet for the client, or -1 when none is waiting */
static ssize_t hear(struct rig *g, uint8_t *buf, size_t size)
{
	struct pollfd p = { .fd = g->fd, .events = POLLIN };

	memset(buf, 0, size); /* nothing stale is read after a short packet */
	if (poll(&p, 1, 0) != 1)
		return -1;
	return recv(g->fd, buf, size, 0);
}

static void expect_reply(struct rig *g, enum lmkd_cmd cmd, int32_t want)
{
	uint8_t buf[LMKD_PACKET_MAX];
	int32_t v = 12345;
	ssize_t n = hear(g, buf, sizeof(buf));

	CU_ASSERT_EQUAL_FATAL(n, 8);
	CU_ASSERT_EQUAL(lmkd_decode_reply(buf, (size_t)n, cmd, &v), 0);
	CU_ASSERT_EQUAL(v, want);
}

static void test_replies(void)
{
	struct rig g;

	CU_ASSERT_EQUAL_FATAL(rig_up(&g), 0);
	say(&g, 3, (int32_t[]){ LMKD_GETKILLCNT, -1000, 1000 });
	expect_reply(&g, LMKD_GETKILLCNT, 0);
	g.f.reload_result = -EINVAL;
	say(&g, 1, (int32_t[]){ LMKD_UPDATE_PROPS });
	expect_reply(&g, LMKD_UPDATE_PROPS, -1);
	g.f.reload_result = 0;
	say(&g, 1, (int32_t[]){ LMKD_UPDATE_PROPS });
	expect_reply(&g, LMKD_UPDATE_PROPS, 0);
	say(&g, 1, (int32_t[]){ LMKD_BOOT_COMPLETED });
	expect_reply(&g, LMKD_BOOT_COMPLETED, LMKD_BOOT_HANDLED);
	say(&g, 1, (int32_t[]){ LMKD_BOOT_COMPLETED });
	expect_reply(&g, LMKD_BOOT_COMPLETED, LMKD_BOOT_ALREADY);
	/* wrong lengths: no reply at all */
	say(&g, 2, (int32_t[]){ LMKD_GETKILLCNT, 0 });
	say(&g, 2, (int32_t[]){ LMKD_BOOT_COMPLETED, 0 });
	CU_ASSERT_EQUAL(hear(&g, (uint8_t[16]){ 0 }, 16), -1);
	CU_ASSERT_EQUAL(g.s.bad_packets, 2);
	/* TARGET: one a second */
	g.f.now = 5000000;
	say(&g, 3, (int32_t[]){ LMKD_TARGET, 1000, 900 });
	CU_ASSERT_EQUAL(g.s.n_targets, 1);
	g.f.now += 500000;
	say(&g, 5, (int32_t[]){ LMKD_TARGET, 1000, 900, 2000, 950 });
	CU_ASSERT_EQUAL(g.s.n_targets, 1);
	g.f.now += 600000;
	say(&g, 5, (int32_t[]){ LMKD_TARGET, 1000, 900, 2000, 950 });
	CU_ASSERT_EQUAL(g.s.n_targets, 2);
	CU_ASSERT_EQUAL(g.s.target_minfree[1], 2000);
	CU_ASSERT_EQUAL(g.s.clients[0].pid, getpid());
	rig_down(&g);
}

static pid_t child(void)
{
	pid_t p = fork();

	if (p == 0) {
		for (;;)
			pause();
	}
	return p;
}

static int write_adj(pid_t p, int adj)
{
	char path[48];
	FILE *f;
	int r;

	snprintf(path, sizeof(path), "/proc/%d/oom_score_adj", (int)p);
	f = fopen(path, "w");
	if (!f)
		return -errno;
	r = fprintf(f, "%d", adj) > 0 ? 0 : -EIO;
	return fclose(f) == 0 ? r : -errno;
}

static void reap(pid_t p)
{
	kill(p, SIGKILL);
	waitpid(p, NULL, 0);
}

/* the choice context of the kill path: the real /proc, everything in scope, by adj */
static void pick_ctx_of(const struct rig *g, struct pick_ctx *c)
{
	memset(c, 0, sizeof(*c));
	c->procfd = g->procfd;
	c->rootfd = -1;
	c->cg2_mount = "";
	c->self = getpid();
	c->scope = "/";
	c->order = VICTIM_ORDER_ADJ;
}

/* the kill path's view: choose the registered child, report its kill */
static void run_source(bool short_form)
{
	static struct kill_pick p;
	struct rig g;
	struct pick_ctx c;
	struct procfs_scan_stats st;
	/* low_swap 0: "swap low" only when it is full, so LOW_MEM whatever this host's swap */
	struct tier_config t = { .name = "test", .min_oom_score_adj = 900,
				 .low_swap = { .set = true, .percent = false, .value = 0 } };
	uint8_t buf[LMKD_PACKET_MAX];
	pid_t kid = child(), other = child();
	ssize_t n;

	char mem[] = "/tmp/test-lmkd-mem-XXXXXX", cmd[64];

	CU_ASSERT_EQUAL_FATAL(rig_up(&g), 0);
	g.s.short_prockill = short_form;
	/* the owner's memory cgroup, 14 MiB available of 100, on a machine
	 * with 900 MB: the report tells the group's */
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(mem));
	fixture_mkdir(mem, "proc");
	fixture_put(mem, "proc/meminfo", "MemTotal: 1000000 kB\nMemAvailable: 900000 kB\n");
	fixture_memory_group(mem, "grp");
	g.s.rootfd = sysroot_open(mem);
	CU_ASSERT_FATAL(g.s.rootfd >= 0);
	g.s.memory_cgroup = "/grp";
	pick_ctx_of(&g, &c);
	say(&g, 2, (int32_t[]){ LMKD_SUBSCRIBE, LMKD_EVENT_STAT });
	say(&g, 2, (int32_t[]){ LMKD_SUBSCRIBE, LMKD_EVENT_KILL });
	say(&g, 4, (int32_t[]){ LMKD_PROCPRIO, kid, 10077, 1000 });
	say(&g, 4, (int32_t[]){ LMKD_PROCPRIO, other, 10078, 950 });
	CU_ASSERT_EQUAL_FATAL(g.s.reg.n, 2);
	CU_ASSERT_EQUAL(g.s.source.choose(g.s.source.ctx, &c, 900, &p, &st), 0);
	CU_ASSERT_TRUE_FATAL(p.pick.found);
	CU_ASSERT_EQUAL(p.pick.best.pid, kid);
	CU_ASSERT_EQUAL(p.pick.best.oom_score_adj, 1000);
	CU_ASSERT_EQUAL(st.read, 1); /* adj 950 was not even read */
	CU_ASSERT_EQUAL(g.s.chosen_pid, kid);
	g.s.source.done(g.s.source.ctx, &p.pick.best, &t, FIRE_LOW_MEMORY, 0);
	/* STAT first ... */
	n = hear(&g, buf, sizeof(buf));
	CU_ASSERT_EQUAL_FATAL(n, (ssize_t)(87 + strlen(g.s.chosen_task)));
	CU_ASSERT_EQUAL(buf[3], LMKD_KILL_OCCURRED);
	CU_ASSERT_EQUAL(buf[52 + 2], 10077 >> 8);
	CU_ASSERT_EQUAL(buf[52 + 3], 10077 & 0xff);
	CU_ASSERT_EQUAL(buf[75], LMKD_REASON_LOW_MEM);
	/* free_mem_kb: (104857600 - (94371840 - 4194304)) / 1024 */
	CU_ASSERT_EQUAL(buf[64] << 24 | buf[65] << 16 | buf[66] << 8 | buf[67], 14336);
	/* ... then PROCKILL, in the size asked for */
	n = hear(&g, buf, sizeof(buf));
	CU_ASSERT_EQUAL(n, short_form ? 12 : 16);
	CU_ASSERT_EQUAL(buf[3], LMKD_PROCKILL);
	CU_ASSERT_EQUAL(buf[4] << 24 | buf[5] << 16 | buf[6] << 8 | buf[7], kid);
	CU_ASSERT_EQUAL(g.s.reg.n, 1);
	say(&g, 3, (int32_t[]){ LMKD_GETKILLCNT, 1000, 1000 });
	expect_reply(&g, LMKD_GETKILLCNT, 1);
	say(&g, 3, (int32_t[]){ LMKD_GETKILLCNT, 1001, -5 });
	expect_reply(&g, LMKD_GETKILLCNT, 1);
	/* a kill that failed: forgotten, not counted, not reported */
	CU_ASSERT_EQUAL(g.s.source.choose(g.s.source.ctx, &c, 900, &p, &st), 0);
	CU_ASSERT_EQUAL(p.pick.best.pid, other);
	g.s.source.done(g.s.source.ctx, &p.pick.best, &t, FIRE_PSI, -EPERM);
	CU_ASSERT_EQUAL(g.s.reg.n, 0);
	CU_ASSERT_EQUAL(hear(&g, buf, sizeof(buf)), -1);
	say(&g, 3, (int32_t[]){ LMKD_GETKILLCNT, -1000, 1000 });
	expect_reply(&g, LMKD_GETKILLCNT, 1);
	close(g.s.rootfd);
	g.s.rootfd = -1;
	rig_down(&g);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", mem);
	CU_ASSERT_EQUAL(system(cmd), 0);
	reap(kid);
	reap(other);
}

static void test_source_long(void)
{
	if (cunit_tap_skip_without_pidfd())
		return;
	run_source(false);
}

/* the watchdog's candidates: the kill path's choices in order, registered
 * and in the band only; republished when the registry changed, at most
 * once per LMKD_WATCHDOG_REFRESH_US */
static void test_watchdog_candidates(void)
{
	struct rig g;
	struct pick_ctx c;
	pid_t a = child(), b = child(), d = child(), low = child(), stranger = child();

	CU_ASSERT_EQUAL_FATAL(rig_up(&g), 0);
	/* a watchdog that never bites here: the test only reads what it was given */
	CU_ASSERT_EQUAL_FATAL(lmkd_server_watchdog_start(&g.s, 3600ULL * 1000000), 0);
	pick_ctx_of(&g, &c);
	CU_ASSERT_EQUAL(write_adj(stranger, 1000), 0);
	say(&g, 4, (int32_t[]){ LMKD_PROCPRIO, b, 10002, 950 });
	say(&g, 4, (int32_t[]){ LMKD_PROCPRIO, a, 10001, 1000 });
	say(&g, 4, (int32_t[]){ LMKD_PROCPRIO, low, 10004, 100 });
	say(&g, 4, (int32_t[]){ LMKD_PROCPRIO, d, 10003, 900 });
	g.f.now = 5000000;
	lmkd_server_loop_busy(&g.s);
	CU_ASSERT_EQUAL(atomic_load(&g.s.wd.busy_since_us), 5000000);
	lmkd_server_loop_idle(&g.s, &c, 200, false);
	CU_ASSERT_EQUAL(atomic_load(&g.s.wd.busy_since_us), 0);
	CU_ASSERT_EQUAL_FATAL(g.s.wd.n, 3); /* not adj 100 (below 200), not the stranger */
	CU_ASSERT_EQUAL(g.s.wd.cand[0].pid, a);
	CU_ASSERT_EQUAL(g.s.wd.cand[0].adj, 1000);
	CU_ASSERT_EQUAL(g.s.wd.cand[0].uid, 10001);
	CU_ASSERT_EQUAL(g.s.wd.cand[1].pid, b);
	CU_ASSERT_EQUAL(g.s.wd.cand[2].pid, d);
	/* a change within the refresh interval waits; after it, it counts */
	say(&g, 2, (int32_t[]){ LMKD_PROCREMOVE, a });
	g.f.now += LMKD_WATCHDOG_REFRESH_US / 2;
	lmkd_server_loop_idle(&g.s, &c, 200, false);
	CU_ASSERT_EQUAL(g.s.wd.n, 3);
	g.f.now += LMKD_WATCHDOG_REFRESH_US;
	lmkd_server_loop_idle(&g.s, &c, 200, true);
	CU_ASSERT_EQUAL_FATAL(g.s.wd.n, 2);
	CU_ASSERT_EQUAL(g.s.wd.cand[0].pid, b);
	CU_ASSERT_TRUE(atomic_load(&g.s.wd.dry_run));
	/* the floor is never below 0, as lmkd's watchdog */
	g.f.now += LMKD_WATCHDOG_REFRESH_US;
	say(&g, 4, (int32_t[]){ LMKD_PROCPRIO, low, 10004, -100 });
	lmkd_server_loop_idle(&g.s, &c, -1000, false);
	CU_ASSERT_EQUAL(g.s.wd.n, 2);
	rig_down(&g);
	CU_ASSERT_FALSE(g.s.wd_on);
	reap(a);
	reap(b);
	reap(d);
	reap(low);
	reap(stranger);
}

static void test_source_short(void)
{
	if (cunit_tap_skip_without_pidfd())
		return;
	run_source(true);
}

/* lmkd's one reason to close a client: a packet without credentials */
static void test_no_credentials(void)
{
	struct rig g;
	int off = 0;

	CU_ASSERT_EQUAL_FATAL(rig_up(&g), 0);
	say(&g, 3, (int32_t[]){ LMKD_GETKILLCNT, -1000, 1000 });
	expect_reply(&g, LMKD_GETKILLCNT, 0);
	/* the kernel attaches them only for a receiver that asked */
	CU_ASSERT_EQUAL(setsockopt(g.s.clients[0].fd, SOL_SOCKET, SO_PASSCRED, &off, sizeof(off)), 0);
	say(&g, 3, (int32_t[]){ LMKD_GETKILLCNT, -1000, 1000 });
	CU_ASSERT_EQUAL(g.s.clients[0].fd, -1);
	CU_ASSERT_EQUAL(recv(g.fd, (uint8_t[16]){ 0 }, 16, MSG_DONTWAIT), 0); /* closed, unanswered */
	rig_down(&g);
}

/* a connection to the rig's socket, accepted by the server; its index in *index */
static int connect_one(struct rig *g, size_t *index)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	strcpy(sa.sun_path, g->path);
	CU_ASSERT_FATAL(fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	lmkd_server_event(&g->s, LMKD_FD_LISTEN, 0, EPOLLIN);
	*index = g->f.client_index;
	return fd;
}

/* m-1: a 4th client evicts the three and takes slot 0; a hang-up of the
 * old slot-0 client still queued in the same batch is not the newcomer's */
static void test_stale_event_after_eviction(void)
{
	size_t old0, i2, i3, inew;
	struct rig g;
	int fd2, fd3, fdnew;

	CU_ASSERT_EQUAL_FATAL(rig_up(&g), 0);
	old0 = g.index;
	fd2 = connect_one(&g, &i2);
	fd3 = connect_one(&g, &i3);
	CU_ASSERT_TRUE(g.s.clients[1].fd >= 0 && g.s.clients[2].fd >= 0);
	fdnew = connect_one(&g, &inew);
	CU_ASSERT_NOT_EQUAL(g.s.clients[0].fd, -1);
	CU_ASSERT_EQUAL(g.s.clients[1].fd, -1);
	CU_ASSERT_EQUAL(g.s.clients[2].fd, -1);
	/* the batch goes on with the evicted clients' events */
	lmkd_server_event(&g.s, LMKD_FD_CLIENT, old0, EPOLLIN | EPOLLHUP | EPOLLRDHUP);
	lmkd_server_event(&g.s, LMKD_FD_CLIENT, i2, EPOLLHUP);
	CU_ASSERT_NOT_EQUAL(g.s.clients[0].fd, -1);
	/* the newcomer is served under its own index */
	close(g.fd);
	g.fd = fdnew;
	g.index = inew;
	say(&g, 3, (int32_t[]){ LMKD_GETKILLCNT, -1000, 1000 });
	expect_reply(&g, LMKD_GETKILLCNT, 0);
	close(fd2);
	close(fd3);
	rig_down(&g);
}

/* Lines containing "ignored" that stderr got while f ran on g. */
static unsigned ignored_lines(struct rig *g, void (*f)(struct rig *))
{
	FILE *tmp = tmpfile();
	char line[1024];
	unsigned n = 0;
	int saved;

	CU_ASSERT_PTR_NOT_NULL_FATAL(tmp);
	fflush(stderr);
	saved = dup(STDERR_FILENO);
	CU_ASSERT_FATAL(saved >= 0 && dup2(fileno(tmp), STDERR_FILENO) >= 0);
	f(g);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	rewind(tmp);
	while (fgets(line, sizeof(line), tmp))
		n += strstr(line, "ignored") != NULL;
	fclose(tmp);
	return n;
}

static void bad_burst(struct rig *g)
{
	unsigned i;

	for (i = 0; i < 50; i++)
		say(g, 2, (int32_t[]){ LMKD_GETKILLCNT, 0 });
	say(g, 4, (int32_t[]){ LMKD_PROCPRIO, 1, 1000, 5000 }); /* adj out of range */
}

static void one_bad(struct rig *g)
{
	say(g, 2, (int32_t[]){ LMKD_BOOT_COMPLETED, 0 });
}

static void close_server(struct rig *g)
{
	lmkd_server_close(&g->s);
}

/* m-4: bad input is logged once per interval, the rest counted in one line */
static void test_bad_input_throttled(void)
{
	struct rig g;

	CU_ASSERT_EQUAL_FATAL(rig_up(&g), 0);
	unsetenv("JOURNAL_STREAM");
	g.log.max_level = LOG_WARNING;
	g.f.now = 1000000;
	CU_ASSERT_EQUAL(ignored_lines(&g, bad_burst), 1);
	CU_ASSERT_EQUAL(g.s.bad_packets, 51);
	g.f.now += LMKD_BAD_LOG_INTERVAL_US - 1;
	CU_ASSERT_EQUAL(ignored_lines(&g, one_bad), 0);
	/* the next interval: the count of the 51 held back, then the line */
	g.f.now += 1;
	CU_ASSERT_EQUAL(ignored_lines(&g, one_bad), 2);
	CU_ASSERT_EQUAL(g.s.bad[LMKD_BAD_PACKET].unlogged, 0);
	CU_ASSERT_EQUAL(ignored_lines(&g, bad_burst), 0);
	CU_ASSERT_EQUAL(g.s.bad[LMKD_BAD_PACKET].unlogged, 51);
	/* held-back lines are counted at close */
	CU_ASSERT_EQUAL(ignored_lines(&g, close_server), 1);
	CU_ASSERT_EQUAL(g.s.bad_packets, 104);
	g.log.max_level = LOG_EMERG;
	rig_down(&g);
}

static void test_client_call(void)
{
	struct rig g;
	int32_t v = 99;

	/* nobody listening */
	CU_ASSERT_EQUAL(lmkd_client_call("/nonexistent/lmkd", LMKD_UPDATE_PROPS, 100, &v), -ENOENT);
	CU_ASSERT_EQUAL_FATAL(rig_up(&g), 0);
	/* a server that does not answer in time */
	CU_ASSERT_EQUAL(lmkd_client_call(g.path, LMKD_BOOT_COMPLETED, 50, &v), -ETIMEDOUT);
	rig_down(&g);
}

int main(void)
{
	static CU_TestInfo tests[] = {
		{ "replies, failed reload, BOOT_COMPLETED twice, TARGET a second", test_replies },
		{ "kill source: registered victim, STAT then 16-byte PROCKILL, count", test_source_long },
		{ "kill source: 12-byte PROCKILL; failed kill forgotten, not reported", test_source_short },
		{ "watchdog: the kill path's choices, republished on change", test_watchdog_candidates },
		{ "a packet without credentials closes its client", test_no_credentials },
		{ "client call: no socket, no answer", test_client_call },
		{ "a stale event of an evicted client leaves the newcomer alone", test_stale_event_after_eviction },
		{ "bad input: one line per interval, then a count", test_bad_input_throttled },
		CU_TEST_INFO_NULL,
	};
	static CU_SuiteInfo suites[] = {
		{ "lmkd-server", NULL, NULL, NULL, NULL, tests },
		CU_SUITE_INFO_NULL,
	};

	return cunit_tap_main(suites);
}
