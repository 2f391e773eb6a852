/* SPDX-License-Identifier: MIT */
/* test-kill: the kill path (struct killer) without an event loop: several
 * tiers and their gates, a reload in the same wakeup as a tier event, a
 * victim that may not be signalled, an owner that cannot watch the pidfd,
 * the no-candidate back-off, SIGTERM escalation and kill_cgroup's subtree
 * check, the pre_kill hook's phase. Victims that must really die are children of this test, described
 * to the killer by a fixture /proc whose stat is copied from the real one
 * (so the pidfd identity check holds); nothing else is ever signalled. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sys/xattr.h>

#include "config.h"
#include "cunit-tap.h"
#include "fixture-tree.h"
#include "daemon.h"
#include "event.h"
#include "fake-kernel.h"
#include "fileio.h"
#include "kill.h"
#include "policy.h"
#include "procfs.h"
#include "trustpath.h"

/* ------------------------------------------------------------------ fixtures */

static char root[] = "/tmp/psi-lmkd-test-kill-XXXXXX";
/* root names a directory made by mkdtemp (its first random letter may be an X) */
static bool root_made;



/* A process in the fixture /proc. real: copy the real /proc/PID/stat (its
 * start time), else make one up. */
static void put_proc(pid_t pid, bool real, const char *comm, unsigned uid, int adj, unsigned rss_kb,
		     const char *cgroup)
{
	char rel[256], text[1024];

	snprintf(rel, sizeof(rel), "proc/%d", (int)pid);
	fixture_mkdir(root, rel);
	if (real) {
		char path[64];
		int fd;
		ssize_t n;

		snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		CU_ASSERT_TRUE_FATAL(fd >= 0);
		n = read(fd, text, sizeof(text) - 1);
		close(fd);
		CU_ASSERT_TRUE_FATAL(n > 0);
		text[n] = '\0';
	} else {
		snprintf(text, sizeof(text),
			 "%d (%s) S 1 %d %d 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 %d 1000 100 0 0 0 0 0 0 0 0 0 0 0 0 0 0"
			 " 0 0 0 0 0 0 0 0 0 0 0 0\n",
			 (int)pid, comm, (int)pid, (int)pid, 1000 + (int)pid);
	}
	snprintf(rel, sizeof(rel), "proc/%d/stat", (int)pid);
	fixture_put(root, rel, text);
	snprintf(text, sizeof(text), "Name:\t%s\nState:\tS (sleeping)\nUid:\t%u\t%u\t%u\t%u\nVmRSS:\t%u kB\nThreads:\t1\n",
		 comm, uid, uid, uid, uid, rss_kb);
	snprintf(rel, sizeof(rel), "proc/%d/status", (int)pid);
	fixture_put(root, rel, text);
	snprintf(text, sizeof(text), "%d\n", adj);
	snprintf(rel, sizeof(rel), "proc/%d/oom_score_adj", (int)pid);
	fixture_put(root, rel, text);
	snprintf(text, sizeof(text), "0::%s\n", cgroup);
	snprintf(rel, sizeof(rel), "proc/%d/cgroup", (int)pid);
	fixture_put(root, rel, text);
}

static void fresh_root(void)
{
	char cmd[256];

	if (root_made) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
		CU_ASSERT_EQUAL(system(cmd), 0);
		snprintf(root, sizeof(root), "%s", "/tmp/psi-lmkd-test-kill-XXXXXX");
		root_made = false;
	}
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(root));
	root_made = true;
	chmod(root, 0755);
	fixture_mkdir(root, "proc");
	fixture_mkdir(root, "proc/pressure");
	fixture_put(root, "proc/pressure/memory", "some avg10=0.00 avg60=0.00 avg300=0.00 total=1000\n"
				    "full avg10=0.00 avg60=0.00 avg300=0.00 total=500\n");
	fixture_put(root, "proc/meminfo", "MemTotal:       1000000 kB\nMemAvailable:    500000 kB\n");
	fixture_put(root, "proc/loadavg", "0.00 0.00 0.00 1/100 100\n");
	fixture_mkdir(root, "sys");
	fixture_mkdir(root, "sys/fs");
	fixture_mkdir(root, "sys/fs/cgroup");
}

/* Every child spawn() made, so that a failing test leaves none behind. */
static pid_t spawned[64];
static size_t n_spawned;

/* A child of ours that waits to be killed; term_ignored: it ignores SIGTERM.
 * as_uid: it runs as that uid (-1: ours). Its output goes to /dev/null, so
 * that it never holds the test's output open. Returns once the child is
 * set up: a signal sent before it ignored SIGTERM or took its uid would
 * test the race, not the killer (test-kill 8 failed so under load). */
static pid_t spawn(bool term_ignored, int as_uid)
{
	int ready[2];
	char c;
	pid_t pid;

	CU_ASSERT_EQUAL_FATAL(pipe2(ready, O_CLOEXEC), 0);
	fflush(stdout); /* or the child's exit writes our buffered TAP lines again */
	pid = fork();
	if (pid < 0) {
		close(ready[0]);
		close(ready[1]);
	}
	CU_ASSERT_TRUE_FATAL(pid >= 0);
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY | O_CLOEXEC);

		close(ready[0]);
		if (null >= 0) {
			dup2(null, STDOUT_FILENO);
			dup2(null, STDERR_FILENO);
		}
		if (term_ignored)
			signal(SIGTERM, SIG_IGN);
		if (as_uid >= 0 && (setresgid((gid_t)as_uid, (gid_t)as_uid, (gid_t)as_uid) < 0 ||
				    setresuid((uid_t)as_uid, (uid_t)as_uid, (uid_t)as_uid) < 0))
			_exit(3);
		if (write(ready[1], "r", 1) != 1)
			_exit(4);
		close(ready[1]);
		for (;;)
			pause();
	}
	close(ready[1]);
	CU_ASSERT_EQUAL(read(ready[0], &c, 1), 1); /* 0: it exited before it was ready */
	close(ready[0]);
	if (n_spawned < sizeof(spawned) / sizeof(spawned[0]))
		spawned[n_spawned++] = pid;
	return pid;
}

/* How a child of ours ended: the signal that killed it, 0 if it is alive
 * (then it is killed here), -1 for anything else. Waits up to 2 s. */
static int fate(pid_t pid)
{
	int i, status;

	for (i = 0; i < 200; i++) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		if (r == pid)
			return WIFSIGNALED(status) ? WTERMSIG(status) : -1;
		usleep(10000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return 0;
}

/* ------------------------------------------------------------------ a killer with fake ops */

struct fake {
	int watch_ret, arm_ret; /* what watch and arm_timer return */
	int watched;            /* fds being watched */
	uint64_t armed_us;      /* the last arm_timer value */
	uint64_t now;           /* 0: the real clock */
	unsigned changed;
	int env_ret;            /* what env returns (pre_kill: the decision's group gone) */
};

static int fake_watch(void *ctx, int fd)
{
	struct fake *f = ctx;

	(void)fd;
	if (f->watch_ret == 0)
		f->watched++;
	return f->watch_ret;
}

static void fake_unwatch(void *ctx, int fd)
{
	struct fake *f = ctx;

	(void)fd;
	if (f->watched > 0)
		f->watched--;
}

static int fake_arm(void *ctx, uint64_t us)
{
	struct fake *f = ctx;

	if (us == 0 || f->arm_ret == 0)
		f->armed_us = us;
	return us ? f->arm_ret : 0;
}

static void fake_changed(void *ctx)
{
	((struct fake *)ctx)->changed++;
}

static uint64_t fake_now(void *ctx)
{
	struct fake *f = ctx;
	struct timespec ts;

	if (f->now)
		return f->now;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static int fake_env(void *ctx, const char *group, struct killer_env *env, char *buf, size_t size);

static const struct killer_ops fake_ops = { fake_watch, fake_unwatch, fake_arm, fake_changed, fake_now, fake_env };

struct rig {
	struct fake fake;
	struct config cfg;
	struct policy pol;
	struct log log;
	struct tier_state tiers[CONFIG_TIERS_MAX];
	struct killer k;
	struct killer_env env;
	int rootfd, procfd;
};

static struct rig rig;

/* pre_kill's signal: the env of the decision, as the owner has it now */
static int fake_env(void *ctx, const char *group, struct killer_env *env, char *buf, size_t size)
{
	struct fake *f = ctx;

	(void)buf, (void)size;
	CU_ASSERT_STRING_EQUAL(group, "");
	if (f->env_ret < 0)
		return f->env_ret;
	*env = rig.env;
	return 0;
}

/* A killer on the fixture root with this configuration. */
static void rig_up(const char *conf, bool dry_run)
{
	struct config_error err;
	char perr[256];
	struct rig *r = &rig;

	memset(r, 0, sizeof(*r));
	CU_ASSERT_EQUAL_FATAL(config_parse_string(&r->cfg, conf, "test.conf", &err), 0);
	CU_ASSERT_EQUAL_FATAL(policy_init(&r->pol, &r->cfg, perr, sizeof(perr)), 0);
	log_init(&r->log, LOG_DEBUG, false);
	r->rootfd = sysroot_open(root);
	CU_ASSERT_TRUE_FATAL(r->rootfd >= 0);
	r->procfd = sysroot_openat(r->rootfd, "/proc", O_RDONLY | O_DIRECTORY);
	CU_ASSERT_TRUE_FATAL(r->procfd >= 0);
	killer_init(&r->k, &fake_ops, &r->fake, &r->log, r->procfd, r->rootfd, "/sys/fs/cgroup", getpid());
	killer_env_init(&r->env, &r->cfg, &r->pol.vp, r->tiers);
	r->env.dry_run = dry_run;
}

static void rig_down(void)
{
	killer_deinit(&rig.k);
	policy_deinit(&rig.pol);
	close(rig.procfd);
	close(rig.rootfd);
}

static void act1(size_t tier, enum fire_reason why)
{
	const struct fired f = { tier, why };

	killer_act(&rig.k, &rig.env, &f, 1);
}

/* ------------------------------------------------------------------ gates */

/* The most severe tier is held by its gate: the next one that fired acts,
 * and both advance their min_events streaks. */
static void test_gated_tier_does_not_silence(void)
{
	const struct fired both[] = { { 0, FIRE_LOW_MEMORY }, { 1, FIRE_LOW_MEMORY } };
	const struct fired psi[] = { { 2, FIRE_PSI }, { 3, FIRE_PSI } };

	fresh_root();
	put_proc(201, false, "tab", 1000, 950, 50000, "/user.slice/app");
	rig_up("[tier severe]\nlow_available = 100%\nmin_available = 1%\nmin_oom_score_adj = 0\n"
	       "[tier mild]\nlow_available = 100%\nmin_oom_score_adj = 900\n"
	       "[tier psi-severe]\ntrigger = some 100ms 2s\nmin_events = 3\nmin_oom_score_adj = 0\n"
	       "[tier psi-mild]\ntrigger = some 150ms 2s\nmin_oom_score_adj = 900\n",
	       true);
	killer_act(&rig.k, &rig.env, both, 2);
	CU_ASSERT_EQUAL(rig.k.decisions, 1);
	CU_ASSERT_STRING_EQUAL(rig.k.last_tier, "mild");
	CU_ASSERT_EQUAL(rig.tiers[0].gated, 1);
	CU_ASSERT_EQUAL(rig.tiers[0].streak, 1);
	CU_ASSERT_EQUAL(rig.tiers[1].streak, 1);

	/* min_events: psi-severe counts 1, 2 while psi-mild acts each time */
	killer_act(&rig.k, &rig.env, psi, 2);
	killer_act(&rig.k, &rig.env, psi, 2);
	CU_ASSERT_EQUAL(rig.k.decisions, 3);
	CU_ASSERT_STRING_EQUAL(rig.k.last_tier, "psi-mild");
	CU_ASSERT_EQUAL(rig.tiers[2].streak, 2);
	CU_ASSERT_EQUAL(rig.tiers[2].gated, 2);
	/* the third event in a row opens psi-severe's gate: it acts, not psi-mild */
	killer_act(&rig.k, &rig.env, psi, 2);
	CU_ASSERT_EQUAL(rig.k.decisions, 4);
	CU_ASSERT_STRING_EQUAL(rig.k.last_tier, "psi-severe");
	rig_down();
}

/* ------------------------------------------------------------------ culprit */

/* Issue 27 item 4: a renderer (adj 300) idles at 300 MB of a 1 GB machine
 * while a runaway grows from 100 to 400 MB. Without a sample the badness
 * order picks the renderer (300 MB + 30 % of 1 GB); with one taken while
 * pressure built (killer_observe), the runaway grew by more than 1 % of the
 * domain and dies first, its growth on the kill line's record. */
static void culprit_scene(void)
{
	fresh_root();
	put_proc(301, false, "renderer", 1000, 300, 300000, "/user.slice/app");
	put_proc(302, false, "runaway", 1000, 0, 100000, "/user.slice/app");
}

/* The last decision's record; a zeroed one (pid 0) if there was none. */
static struct kill_record last_record(void)
{
	const struct kill_record *r = history_newest(&rig.k.history, 0);
	struct kill_record none;

	if (r)
		return *r;
	CU_FAIL("no decision recorded");
	memset(&none, 0, sizeof(none));
	return none;
}

static void test_culprit_first(void)
{
	static const char conf[] = "[tier t]\ntrigger = some 100ms 1s\nmin_oom_score_adj = 0\n";
	struct kill_record r;

	culprit_scene();
	rig_up(conf, true);
	rig.fake.now = 1000000;
	put_proc(302, false, "runaway", 1000, 0, 400000, "/user.slice/app");
	act1(0, FIRE_PSI);
	r = last_record();
	CU_ASSERT_EQUAL(r.pid, 301); /* no sample: the biggest badness */
	CU_ASSERT_EQUAL(r.grew_kb, 0);
	rig_down();

	culprit_scene();
	rig_up(conf, true);
	rig.fake.now = 1000000;
	killer_observe(&rig.k, &rig.env);
	put_proc(302, false, "runaway", 1000, 0, 400000, "/user.slice/app");
	rig.fake.now += 2000000;
	killer_observe(&rig.k, &rig.env); /* not due again: the base stays */
	act1(0, FIRE_PSI);
	r = last_record();
	CU_ASSERT_EQUAL(r.pid, 302);
	CU_ASSERT_EQUAL(r.grew_kb, 300000);
	rig_down();

	/* no sample: a runaway started 10 s ago (start time 5000 ticks,
	 * uptime 60 s) holds 400 MB, but what a process allocated at start is
	 * no culprit's growth: badness decides */
	fresh_root();
	put_proc(3, false, "renderer", 1000, 300, 300000, "/user.slice/app");
	put_proc(4000, false, "runaway", 1000, 0, 400000, "/user.slice/app");
	fixture_put(root, "proc/uptime", "60.00 100.00\n");
	rig_up(conf, true);
	rig.fake.now = 1000000;
	act1(0, FIRE_PSI);
	r = last_record();
	CU_ASSERT_EQUAL(r.pid, 3);
	CU_ASSERT_EQUAL(r.grew_kb, 0);
	rig_down();

	/* culprit_growth = off: no sample is taken, badness decides */
	culprit_scene();
	rig_up("[daemon]\nculprit_growth = off\n[tier t]\ntrigger = some 100ms 1s\nmin_oom_score_adj = 0\n", true);
	rig.fake.now = 1000000;
	killer_observe(&rig.k, &rig.env);
	CU_ASSERT_FALSE(rig.k.growth.s[0].valid || rig.k.growth.s[1].valid);
	put_proc(302, false, "runaway", 1000, 0, 400000, "/user.slice/app");
	rig.fake.now += 2000000;
	act1(0, FIRE_PSI);
	r = last_record();
	CU_ASSERT_EQUAL(r.pid, 301);
	rig_down();
}

static const char reader_conf[] = "[tier t]\ntrigger = some 100ms 1s\nmin_oom_score_adj = 0\n"
				  "[tier last]\nlow_available = 100%\nmin_oom_score_adj = 0\n";

/* The renderer and the reader (80 MB read so far; the renderer 1 MB), with
 * /proc/vmstat VMSTAT if not NULL, and a sample of them taken. */
static void reader_scene(const char *vmstat)
{
	fresh_root();
	put_proc(301, false, "renderer", 1000, 300, 300000, "/user.slice/app");
	put_proc(303, false, "reader", 1000, 0, 5000, "/user.slice/app");
	fixture_put(root, "proc/303/io", "rchar: 1\nwchar: 0\nread_bytes: 81920000\nwrite_bytes: 0\n");
	fixture_put(root, "proc/301/io", "rchar: 1\nwchar: 0\nread_bytes: 1024000\nwrite_bytes: 0\n");
	if (vmstat)
		fixture_put(root, "proc/vmstat", vmstat);
	rig_up(reader_conf, true);
	rig.fake.now = 1000000;
	killer_observe(&rig.k, &rig.env);
	CU_ASSERT_EQUAL(rig.k.growth.s[rig.k.growth.newer].nr, 2);
}

/* 2 s later the reader's io says IO (and /proc/vmstat VMSTAT if not
 * NULL); tier TIER fires for WHY: the decision's record */
static struct kill_record reader_choice(const char *io, const char *vmstat, size_t tier, enum fire_reason why)
{
	fixture_put(root, "proc/303/io", io);
	if (vmstat)
		fixture_put(root, "proc/vmstat", vmstat);
	rig.fake.now += 2000000;
	act1(tier, why);
	return last_record();
}

/* Issue 27 item 4, on stall: beside the idle renderer (adj 300, 300 MB)
 * a reader of 5 MB thrashes a mapped file: it read 80 MB before the sample
 * and 2 GB by the choice. A stall tier's choice kills the reader, its
 * reads on the record; a low-memory choice weighs memory (badness): the
 * renderer; an io file that cannot be read counts as no reads. */
static void test_reader_first(void)
{
	static const char read_2gb[] = "rchar: 1\nwchar: 0\nread_bytes: 2048000000\nwrite_bytes: 0\n";
	struct kill_record r;
	enum fire_reason why;

	for (why = FIRE_PSI; why <= FIRE_LOW_MEMORY; why++) {
		reader_scene(NULL);
		r = reader_choice(read_2gb, NULL, why == FIRE_PSI ? 0 : 1, why);
		CU_ASSERT_EQUAL(r.pid, why == FIRE_PSI ? 303 : 301);
		CU_ASSERT_EQUAL(r.read_kb, why == FIRE_PSI ? 2000000 - 80000 : 0);
		CU_ASSERT_EQUAL(r.grew_kb, 0);
		rig_down();
	}

	/* swap leads: more anonymous pages than file pages read back in since
	 * the sample (/proc/vmstat), so the processes that read most are
	 * those whose pages come back from swap: readers do not rank, badness
	 * decides; file refaults leading, the reader dies */
	for (why = 0; why < 2; why++) {
		reader_scene("nr_free_pages 5\nworkingset_refault_anon 100\nworkingset_refault_file 100\n");
		CU_ASSERT_TRUE(rig.k.growth.s[rig.k.growth.newer].refault_known);
		r = reader_choice(read_2gb,
				  why ? "workingset_refault_anon 5100\nworkingset_refault_file 5200\n"
				      : "workingset_refault_anon 5200\nworkingset_refault_file 5100\n",
				  0, FIRE_PSI);
		CU_ASSERT_EQUAL(r.pid, why ? 303 : 301);
		CU_ASSERT_EQUAL(r.read_kb, why ? 2000000 - 80000 : 0);
		rig_down();
	}

	/* the reader's io unreadable at the choice: no reads, badness */
	reader_scene(NULL);
	r = reader_choice("rchar: 1\nno reads here\n", NULL, 0, FIRE_PSI);
	CU_ASSERT_EQUAL(r.pid, 301);
	CU_ASSERT_EQUAL(r.read_kb, 0);
	rig_down();
}

/* ------------------------------------------------------------------ no candidate */

static void test_no_candidate_backs_off(void)
{
	unsigned i;
	uint64_t scans;

	fresh_root();
	put_proc(201, false, "editor", 1000, 0, 50000, "/user.slice/app");
	rig_up("[tier last]\nlow_available = 100%\nmin_oom_score_adj = 900\n", true);
	rig.fake.now = 1000000;
	/* the review's case: the low_available check every 50 ms for 2 s */
	for (i = 0; i < 40; i++) {
		act1(0, FIRE_LOW_MEMORY);
		rig.fake.now += 50000;
	}
	printf("# 40 events in 2 s with no candidate: %llu scans\n", (unsigned long long)rig.tiers[0].scans);
	CU_ASSERT_EQUAL(rig.tiers[0].no_candidate, 40);
	CU_ASSERT_TRUE(rig.tiers[0].scans >= 3 && rig.tiers[0].scans <= 6);
	CU_ASSERT_EQUAL(rig.k.decisions, 0);

	/* a new process: scanned at once, and it is the victim */
	scans = rig.tiers[0].scans;
	put_proc(202, false, "tab", 1000, 950, 50000, "/user.slice/app");
	fixture_put(root, "proc/loadavg", "0.00 0.00 0.00 1/101 202\n");
	act1(0, FIRE_LOW_MEMORY);
	printf("# after the low-memory event: scans %" PRIu64 " -> %" PRIu64 ", no_candidate %" PRIu64 ", kills %" PRIu64 "\n", scans,
	       rig.tiers[0].scans, rig.tiers[0].no_candidate, rig.k.kills_total);
	CU_ASSERT_TRUE(rig.tiers[0].scans > scans); /* the dead victim still in the fixture: retried */
	CU_ASSERT_EQUAL(rig.k.decisions, 1);
	rig_down();
}

/* ------------------------------------------------------------------ recovery */

/* A PSI fire of tier 0 kills v (a child of ours), which dies; it is gone
 * from the fixture /proc too. */
static void psi_kill_gone(pid_t v)
{
	struct pollfd p;
	char cmd[300];

	act1(0, FIRE_PSI);
	CU_ASSERT_TRUE_FATAL(rig.k.kill.active);
	p.fd = rig.k.kill.pidfd;
	p.events = POLLIN;
	CU_ASSERT_EQUAL(poll(&p, 1, 2000), 1);
	killer_exited(&rig.k);
	CU_ASSERT_EQUAL(fate(v), SIGKILL);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s/proc/%d'", root, (int)v);
	CU_ASSERT_EQUAL(system(cmd), 0);
}

/* hold_recovery (issue 27 item 3): after the victim died, the stall goes on
 * while the survivors read their pages back in; a PSI fire then kills only
 * on evidence that memory is still short -- here a footprint that grew
 * 30 MB. hold: false kills on the stall alone (Android lmkd's way). */
static void recovery_case(bool hold)
{
	pid_t v, w;

	if (cunit_tap_skip_without_pidfd())
		return;
	v = spawn(false, -1);
	w = spawn(false, -1);
	fresh_root();
	fixture_put(root, "proc/meminfo", "MemTotal: 1000000 kB\nMemFree: 400000 kB\nMemAvailable: 500000 kB\n"
					 "AnonPages: 100000 kB\n");
	put_proc(v, true, "culprit", 0, 0, 90000, "/test");
	rig_up(hold ? "[daemon]\nsettle_time = 0\n[tier t]\ntrigger = full 700ms 1s\nmin_oom_score_adj = 0\n"
		    : "[daemon]\nsettle_time = 0\nhold_recovery = false\n[tier t]\ntrigger = full 700ms 1s\n"
		      "min_oom_score_adj = 0\n", false);
	psi_kill_gone(v);
	put_proc(w, true, "editor", 0, 0, 50000, "/test");
	/* the stall goes on; half the memory available, no swap, nothing grows */
	act1(0, FIRE_PSI);
	act1(0, FIRE_PSI);
	if (!hold) {
		CU_ASSERT_EQUAL(rig.k.kills_total, 2);
		CU_ASSERT_EQUAL(rig.tiers[0].recovery_held, 0);
		CU_ASSERT_EQUAL(fate(w), SIGKILL);
		rig_down();
		return;
	}
	CU_ASSERT_EQUAL(rig.k.kills_total, 1);
	CU_ASSERT_EQUAL(rig.tiers[0].recovery_held, 2);
	/* something allocates again: 30 MB more, evidence */
	fixture_put(root, "proc/meminfo", "MemTotal: 1000000 kB\nMemFree: 370000 kB\nMemAvailable: 470000 kB\n"
					 "AnonPages: 130000 kB\n");
	act1(0, FIRE_PSI);
	CU_ASSERT_EQUAL(rig.k.kills_total, 2);
	CU_ASSERT_EQUAL(rig.tiers[0].recovery_held, 2);
	CU_ASSERT_EQUAL(fate(w), SIGKILL);
	rig_down();
}

static void test_recovery_holds_the_stall(void)
{
	recovery_case(true);
}

/* The start of the dying-victim cases: 5 % available (short, by itself),
 * v killed by a PSI tier and gone; then the fixture process dying (400 MB
 * resident) marked as finish() marks a victim still alive at kill_timeout,
 * counted until until_us. */
static void dying_setup(pid_t v, pid_t dying, uint64_t until_us)
{
	fresh_root();
	fixture_put(root, "proc/meminfo", "MemTotal: 1000000 kB\nMemFree: 30000 kB\nMemAvailable: 50000 kB\n"
					 "AnonPages: 800000 kB\n");
	fixture_put(root, "proc/vmstat", "pgsteal_kswapd 1000\npgsteal_direct 0\n");
	put_proc(v, true, "culprit", 0, 0, 90000, "/test");
	rig_up("[daemon]\nsettle_time = 0\n[tier t]\ntrigger = full 700ms 1s\nmin_oom_score_adj = 0\n", false);
	psi_kill_gone(v);
	put_proc(dying, false, "runaway", 0, 0, 400000, "/test");
	rig.k.dying.pid = dying;
	CU_ASSERT_EQUAL_FATAL(procfs_read_start_time(rig.procfd, dying, &rig.k.dying.start_time), 0);
	rig.k.exclude[rig.k.n_exclude++] = rig.k.dying; /* as finish() does */
	rig.k.dying_until_us = until_us;
}

/* A victim still alive at kill_timeout (in D state under SIGKILL, swapping
 * in: seen in a guest with a slow swap disk) frees its memory as it exits:
 * what it still holds counts as available memory while it lives, for at
 * most KILLER_DYING_HOLD_US, so the stall of its dying kills nobody else.
 * (A real child cannot be kept from dying of SIGKILL: the dying one is a
 * fixture process.) */
static void test_recovery_counts_a_dying_victim(void)
{
	pid_t v, w, dying = 4242;
	char rel[64], text[512];

	if (cunit_tap_skip_without_pidfd())
		return;
	v = spawn(false, -1);
	w = spawn(false, -1);
	dying_setup(v, dying, UINT64_MAX);
	put_proc(w, true, "editor", 0, 0, 50000, "/test");
	act1(0, FIRE_PSI);
	CU_ASSERT_EQUAL(rig.k.kills_total, 1);
	CU_ASSERT_EQUAL(rig.tiers[0].recovery_held, 1);
	CU_ASSERT_EQUAL(rig.k.dying.pid, dying);
	/* the kernel reclaims 100 MB meanwhile: memory stays short until the
	 * victim's comes back, no evidence while it holds it */
	fixture_put(root, "proc/vmstat", "pgsteal_kswapd 26600\npgsteal_direct 0\n");
	act1(0, FIRE_PSI);
	CU_ASSERT_EQUAL(rig.k.kills_total, 1);
	CU_ASSERT_EQUAL(rig.tiers[0].recovery_held, 2);
	/* another process with its pid (a later start time, small) is not it */
	put_proc(dying, false, "runaway", 0, 0, 1000, "/test");
	snprintf(text, sizeof(text),
		 "%d (runaway) S 1 %d %d 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 %d 1000 100 0 0 0 0 0 0 0 0 0 0 0 0 0 0"
		 " 0 0 0 0 0 0 0 0 0 0 0 0\n", (int)dying, (int)dying, (int)dying, 90000 + (int)dying);
	snprintf(rel, sizeof(rel), "proc/%d/stat", (int)dying);
	fixture_put(root, rel, text);
	act1(0, FIRE_PSI);
	CU_ASSERT_EQUAL(rig.k.kills_total, 2);
	CU_ASSERT_EQUAL(rig.k.dying.pid, 0);
	CU_ASSERT_EQUAL(fate(w), SIGKILL);
	rig_down();
}

/* The same, the hold's bound passed: 5 % available is short again. */
static void test_recovery_dying_bound(void)
{
	pid_t v, w;

	if (cunit_tap_skip_without_pidfd())
		return;
	v = spawn(false, -1);
	w = spawn(false, -1);
	dying_setup(v, 4243, 1); /* long past */
	put_proc(w, true, "editor", 0, 0, 50000, "/test");
	act1(0, FIRE_PSI);
	CU_ASSERT_EQUAL(rig.k.kills_total, 2);
	CU_ASSERT_EQUAL(rig.tiers[0].recovery_held, 0);
	CU_ASSERT_EQUAL(fate(w), SIGKILL);
	rig_down();
}

static void test_recovery_off(void)
{
	recovery_case(false);
}

/* ------------------------------------------------------------------ the kill itself */

static const char one_tier[] = "[daemon]\nkill_timeout = 1s\n[tier t]\nlow_available = 100%\nmin_oom_score_adj = 500\n";

/* The owner cannot watch the pidfd (or arm the timer): the killer waits for
 * the victim itself and is free again afterwards. */
static void kill_with_failing_ops(int watch_ret, int arm_ret)
{
	pid_t v = spawn(false, -1);

	fresh_root();
	put_proc(v, true, "victim", 0, 900, 50000, "/test");
	rig_up(one_tier, false);
	rig.fake.watch_ret = watch_ret;
	rig.fake.arm_ret = arm_ret;
	act1(0, FIRE_LOW_MEMORY);
	CU_ASSERT_EQUAL(rig.k.kills_total, 1);
	CU_ASSERT_FALSE(rig.k.kill.active);
	CU_ASSERT_EQUAL(rig.k.kill.pidfd, -1);
	CU_ASSERT_EQUAL(rig.fake.watched, 0);
	CU_ASSERT_TRUE(rig.k.settle_until_us > 0); /* it died: settling, not excluded */
	CU_ASSERT_EQUAL(rig.k.n_exclude, 0);
	CU_ASSERT_EQUAL(fate(v), SIGKILL);
	rig_down();
}

static void test_cannot_watch(void)
{
	if (cunit_tap_skip_without_pidfd())
		return;
	kill_with_failing_ops(-ENOMEM, 0);
	kill_with_failing_ops(0, -EINVAL);
}

/* SIGTERM first; the timer escalates to SIGKILL; the exit ends the kill. */
static void test_sigterm_escalation(void)
{
	struct pollfd p;
	uint64_t scans;
	pid_t v;

	if (cunit_tap_skip_without_pidfd())
		return;
	v = spawn(true, -1);
	fresh_root();
	put_proc(v, true, "stubborn", 0, 900, 50000, "/test");
	rig_up("[daemon]\nkill_timeout = 1s\nsettle_time = 2s\n[tier t]\nlow_available = 100%\n"
	       "min_oom_score_adj = 500\nkill_signal = SIGTERM\nterm_timeout = 100ms\n",
	       false);
	act1(0, FIRE_LOW_MEMORY);
	CU_ASSERT_TRUE_FATAL(rig.k.kill.active);
	CU_ASSERT_TRUE(rig.k.kill.term_phase);
	CU_ASSERT_EQUAL(rig.fake.armed_us, 100000);
	CU_ASSERT_EQUAL(rig.fake.watched, 1);
	usleep(50000);
	CU_ASSERT_EQUAL(kill(v, 0), 0); /* SIGTERM is ignored */
	/* a tier event meanwhile is deferred, not acted on */
	act1(0, FIRE_LOW_MEMORY);
	CU_ASSERT_EQUAL(rig.tiers[0].deferred, 1);
	killer_timer(&rig.k); /* term_timeout */
	CU_ASSERT_FALSE(rig.k.kill.term_phase);
	CU_ASSERT_EQUAL(rig.fake.armed_us, 1000000);
	p.fd = rig.k.kill.pidfd;
	p.events = POLLIN;
	CU_ASSERT_EQUAL(poll(&p, 1, 2000), 1);
	killer_exited(&rig.k);
	CU_ASSERT_FALSE(rig.k.kill.active);
	CU_ASSERT_EQUAL(rig.fake.armed_us, 0);
	CU_ASSERT_EQUAL(rig.fake.watched, 0);
	CU_ASSERT_EQUAL(fate(v), SIGKILL);
	/* settling: the next PSI event is deferred (its window still holds the
	 * stall from before the kill) ... */
	act1(0, FIRE_PSI);
	CU_ASSERT_EQUAL(rig.tiers[0].deferred, 2);
	CU_ASSERT_EQUAL(rig.k.kills_total, 1);
	/* ... but a memory reading is fresh: a low-memory event acts at once
	 * (it scans) */
	scans = rig.tiers[0].scans;
	act1(0, FIRE_LOW_MEMORY);
	CU_ASSERT_EQUAL(rig.tiers[0].deferred, 2);
	printf("# after the low-memory event: scans %" PRIu64 " -> %" PRIu64 ", no_candidate %" PRIu64 ", kills %" PRIu64 "\n", scans,
	       rig.tiers[0].scans, rig.tiers[0].no_candidate, rig.k.kills_total);
	CU_ASSERT_TRUE(rig.tiers[0].scans > scans); /* the dead victim still in the fixture: retried */
	rig_down();
}

/* A victim the daemon may not signal (EPERM) is excluded and the next one
 * dies. The killer runs in a child that gives up root; the refused victim is
 * a child of ours running as root, the next one runs as that uid. */
static void test_eperm_victim_is_skipped(void)
{
	const int uid = 65534;
	pid_t vroot, vuser, k;
	int status;

	if (cunit_tap_skip_without_pidfd())
		return;
	if (geteuid() != 0) {
		cunit_tap_skip("needs root to run processes as two uids");
		return;
	}
	vroot = spawn(false, -1);
	vuser = spawn(false, uid);
	fresh_root();
	put_proc(vroot, true, "rootproc", 0, 950, 90000, "/test");
	put_proc(vuser, true, "userproc", (unsigned)uid, 900, 10000, "/test");
	fflush(stdout);
	k = fork();
	CU_ASSERT_TRUE_FATAL(k >= 0);
	if (k == 0) {
		/* the verdict is the exit status: a failed assertion here must
		 * not print into the test's TAP stream */
		if (!freopen("/dev/null", "w", stdout))
			_exit(9);
		if (setresgid(uid, uid, uid) < 0 || setresuid(uid, uid, uid) < 0)
			_exit(10);
		rig_up(one_tier, false);
		act1(0, FIRE_LOW_MEMORY);
		if (rig.k.kills_total != 1)
			_exit(11);
		if (rig.k.n_exclude != 1 || rig.k.exclude[0].pid != vroot)
			_exit(12);
		if (!rig.k.kill.active || rig.k.kill.victim.pid != vuser)
			_exit(13);
		/* the next event keeps away from the refused one */
		_exit(0);
	}
	CU_ASSERT_EQUAL(waitpid(k, &status, 0), k);
	CU_ASSERT_TRUE(WIFEXITED(status));
	printf("# killer child exit status %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	CU_ASSERT_EQUAL(WEXITSTATUS(status), 0);
	CU_ASSERT_EQUAL(fate(vuser), SIGKILL);
	CU_ASSERT_EQUAL(fate(vroot), 0); /* alive until fate() ended it */
}

/* ------------------------------------------------------------------ kill_cgroup */

/* A fresh root with group /grp holding victim v (adj 900) and its child
 * group /grp/sub holding m at adj m_adj; a killer with kill_cgroup. */
static void group_fixture(pid_t v, pid_t m, int m_adj)
{
	static const char conf[] = "[daemon]\nkill_timeout = 1s\n[tier t]\nlow_available = 100%\n"
				   "min_oom_score_adj = 500\nkill_cgroup = true\n";
	char text[64];

	fresh_root();
	fixture_mkdir(root, "sys/fs/cgroup/grp");
	fixture_mkdir(root, "sys/fs/cgroup/grp/sub");
	snprintf(text, sizeof(text), "%d\n", (int)v);
	fixture_put(root, "sys/fs/cgroup/grp/cgroup.procs", text);
	snprintf(text, sizeof(text), "%d\n", (int)m);
	fixture_put(root, "sys/fs/cgroup/grp/sub/cgroup.procs", text);
	fixture_put(root, "sys/fs/cgroup/grp/cgroup.kill", "");
	put_proc(v, true, "victim", 0, 900, 90000, "/grp");
	put_proc(m, true, "member", 0, m_adj, 1000, "/grp/sub");
	rig_up(conf, false);
}

/* After act1: one kill, of v alone -- cgroup.kill untouched, member m alive. */
static void check_died_alone(pid_t v, pid_t m)
{
	char buf[16];

	CU_ASSERT_EQUAL(rig.k.kills_total, 1);
	CU_ASSERT_EQUAL(rig.k.kill.victim.pid, v);
	CU_ASSERT_EQUAL(read_file_at(rig.rootfd, "sys/fs/cgroup/grp/cgroup.kill", buf, sizeof(buf)), 0);
	CU_ASSERT_EQUAL(fate(v), SIGKILL);
	CU_ASSERT_EQUAL(kill(m, 0), 0);
}

/* cgroup.kill kills the subtree: a member of a child group below the band
 * keeps the group alive (the victim dies alone); when every member of the
 * subtree may die, cgroup.kill is written and the victim is signalled too. */
static void test_kill_cgroup_subtree(void)
{
	char buf[16];
	pid_t v, m;

	if (cunit_tap_skip_without_pidfd())
		return;
	v = spawn(false, -1);
	m = spawn(false, -1);
	group_fixture(v, m, 0); /* m below the band */
	act1(0, FIRE_LOW_MEMORY);
	check_died_alone(v, m);
	rig_down();

	/* every member in the band: the group dies whole, the victim is signalled too */
	v = spawn(false, -1);
	group_fixture(v, m, 800);
	act1(0, FIRE_LOW_MEMORY);
	CU_ASSERT_EQUAL(rig.k.kills_total, 1);
	CU_ASSERT_TRUE(read_file_at(rig.rootfd, "sys/fs/cgroup/grp/cgroup.kill", buf, sizeof(buf)) > 0 &&
		       buf[0] == '1');
	CU_ASSERT_EQUAL(fate(v), SIGKILL); /* the fixture's cgroup.kill kills nobody: the pidfd did */
	rig_down();

	CU_ASSERT_EQUAL(fate(m), 0); /* our member: alive until fate() ended it */
}

/* A systemd omit mark on a group below the victim's keeps the group alive:
 * its member is shielded, so cgroup.kill is not written and the victim dies
 * alone. Turned off (systemd_oom_preferences = false), the group dies whole. */
static void test_kill_cgroup_oomd_omit(void)
{
	static const char conf_off[] = "[daemon]\nkill_timeout = 1s\nsystemd_oom_preferences = false\n[tier t]\n"
				       "low_available = 100%\nmin_oom_score_adj = 500\nkill_cgroup = true\n";
	char path[1200], buf[16];
	pid_t v, m;

	if (cunit_tap_skip_without_pidfd())
		return;
	v = spawn(false, -1);
	m = spawn(false, -1);
	group_fixture(v, m, 800); /* every member in the band */
	snprintf(path, sizeof(path), "%s/sys/fs/cgroup/grp/sub", root);
	if (setxattr(path, "user.oomd_omit", "1", 1, 0) < 0) {
		rig_down();
		fate(v);
		fate(m);
		cunit_tap_skip("the temp dir's file system has no user.* extended attributes");
		return;
	}
	act1(0, FIRE_LOW_MEMORY);
	check_died_alone(v, m);
	rig_down();

	/* the same tree with the marks ignored: the group dies whole */
	v = spawn(false, -1);
	group_fixture(v, m, 800);
	snprintf(path, sizeof(path), "%s/sys/fs/cgroup/grp/sub", root); /* a fresh root */
	CU_ASSERT_EQUAL_FATAL(setxattr(path, "user.oomd_omit", "1", 1, 0), 0);
	rig_down();
	rig_up(conf_off, false);
	act1(0, FIRE_LOW_MEMORY);
	CU_ASSERT_EQUAL(rig.k.kills_total, 1);
	CU_ASSERT_TRUE(read_file_at(rig.rootfd, "sys/fs/cgroup/grp/cgroup.kill", buf, sizeof(buf)) > 0 &&
		       buf[0] == '1');
	CU_ASSERT_EQUAL(fate(v), SIGKILL);
	rig_down();
	CU_ASSERT_EQUAL(fate(m), 0);
}

/* A member of the subtree that cannot be read for another reason than
 * being gone (here its stat is a directory: EISDIR, standing for EACCES,
 * EMFILE, ENOMEM...) was not vetted: cgroup.kill must not take it, so the
 * victim dies alone. */
static void test_kill_cgroup_unreadable_member(void)
{
	char rel[64];
	pid_t v, m;

	if (cunit_tap_skip_without_pidfd())
		return;
	v = spawn(false, -1);
	m = spawn(false, -1);
	group_fixture(v, m, 800); /* in the band: readable, the group would die whole */
	snprintf(rel, sizeof(rel), "%s/proc/%d/stat", root, (int)m);
	CU_ASSERT_EQUAL_FATAL(unlink(rel), 0);
	CU_ASSERT_EQUAL_FATAL(mkdir(rel, 0755), 0);
	act1(0, FIRE_LOW_MEMORY);
	check_died_alone(v, m);
	rig_down();
	CU_ASSERT_EQUAL(fate(m), 0); /* our member: alive until fate() ended it */
}

/* ------------------------------------------------------------------ reload in the same wakeup */

/* In a child of in_child: a daemon on the fixture root with conf written to
 * root/test.conf, unprivileged fake kernel triggers, no service manager.
 * 0 or -1. */
static int child_daemon(struct daemon *d, const char *conf)
{
	struct daemon_options opt = { .root = root, .log_level = LOG_DEBUG, .ops = &fake_kernel_unprivileged };
	struct config cfg;
	struct config_error err;
	char path[1024];

	unsetenv("NOTIFY_SOCKET");
	unsetenv("WATCHDOG_USEC");
	snprintf(path, sizeof(path), "%s/test.conf", root);
	fixture_put(root, "test.conf", conf);
	return config_load_file(&cfg, path, NULL, &err) < 0 || daemon_init(d, &cfg, &opt) < 0 ? -1 : 0;
}

/* Runs child() in a forked process (daemon_init blocks signals and locks
 * memory) and checks that it exits 0; the status is printed as a TAP
 * comment (the child's return codes say which check failed). */
static void in_child(const char *what, int (*child)(void))
{
	pid_t pid;
	int status;

	fflush(stdout);
	pid = fork();
	CU_ASSERT_TRUE_FATAL(pid >= 0);
	if (pid == 0) {
		int r = child();

		fflush(stdout);
		_exit(r);
	}
	CU_ASSERT_EQUAL(waitpid(pid, &status, 0), pid);
	CU_ASSERT_TRUE(WIFEXITED(status));
	printf("# %s child exit status %d\n", what, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	CU_ASSERT_EQUAL(WEXITSTATUS(status), 0);
}

/* A low_available tier fires and SIGHUP arrives in the same epoll batch; the
 * new configuration has the same tiers in another order. No decision may run
 * on the old index (it names tier x now, another band; with fewer tiers it
 * would name an all-zero slot). The next wakeup acts with the new
 * configuration. The daemon runs in a child: daemon_init blocks signals. */
static int reload_child(void)
{
	static const char conf1[] = "[daemon]\ndry_run = true\n"
				    "[tier x]\ntrigger = some 100ms 2s\nmin_oom_score_adj = 900\n"
				    "[tier y]\nlow_available = 100%\nhold_idle = false\nmin_oom_score_adj = 0\n";
	static const char conf2[] = "[daemon]\ndry_run = true\n"
				    "[tier y]\nlow_available = 100%\nhold_idle = false\nmin_oom_score_adj = 0\n"
				    "[tier x]\ntrigger = some 100ms 2s\nmin_oom_score_adj = 900\n";
	static struct daemon d;

	if (child_daemon(&d, conf1) < 0)
		return 10;
	usleep(20000); /* the low_available check (armed at 1 us) is due first */
	fixture_put(root, "test.conf", conf2);
	raise(SIGHUP);
	if (daemon_step(&d, 1000) < 0)
		return 11;
	printf("# after the wakeup with the reload: %llu decisions, last tier \"%s\", %zu tiers\n",
	       (unsigned long long)d.killer.decisions, d.killer.last_tier, d.cfg.n_tiers);
	if (d.cfg.n_tiers != 2)
		return 12;
	/* The low_available check is due before SIGHUP is raised, so it comes
	 * first in the batch and must be dropped. On a slow run (valgrind) it
	 * may come after the reload instead: then it is an event of the new
	 * configuration and tier y acts. Tier x (the old index) never may. */
	if (d.killer.decisions > 1 || (d.killer.decisions == 1 && strcmp(d.killer.last_tier, "y") != 0))
		return 13; /* acted on an index of the old configuration */
	if (daemon_step(&d, 1000) < 0 || d.killer.decisions < 1 || strcmp(d.killer.last_tier, "y") != 0)
		return 14;
	daemon_deinit(&d);
	return 0;
}

static void test_reload_in_same_wakeup(void)
{
	fresh_root();
	put_proc(201, false, "tab", 1000, 950, 50000, "/user.slice/app");
	in_child("reload", reload_child);
}

/* ------------------------------------------------------------------ ManagedOOM (systemd_managed_oom) */

/* A fake PID 1 on the fixture root's /run/systemd/io.system.ManagedOOM: the
 * daemon subscribes, gets a.service with ManagedOOMMemoryPressure=kill
 * (limit 50%, duration 2 s: newer systemd's duration field) and a hostile
 * path; a.service's avg10 is 80%. The decision (a dry run) comes no sooner
 * than 2 s and chooses in a.service only, though b.service holds a process
 * with a higher adj. A runtime change is followed; PID 1 going away brings a
 * reconnect whose list replaces the set. */
static int moom_send(int fd, const char *msg)
{
	size_t n = strlen(msg) + 1;

	return send(fd, msg, n, MSG_NOSIGNAL) == (ssize_t)n ? 0 : -1;
}

static int moom_accept(int lfd, int *cfd)
{
	char req[512];
	ssize_t n;
	int i;

	for (i = 0; i < 100; i++) {
		*cfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (*cfd >= 0)
			break;
		usleep(10000);
	}
	if (*cfd < 0)
		return -1;
	for (i = 0; i < 100; i++) {
		n = recv(*cfd, req, sizeof(req) - 1, 0);
		if (n > 0)
			break;
		usleep(10000);
	}
	if (n <= 0 || req[n - 1] != '\0' || !strstr(req, "\"method\":\"io.systemd.ManagedOOM.SubscribeManagedOOMCGroups\"") ||
	    !strstr(req, "\"more\":true"))
		return -1;
	return 0;
}

/* The fake PID 1's listening socket under the fixture root; -1 on failure. */
static int moom_listen(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int lfd;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/run/systemd/io.system.ManagedOOM", root);
	lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (lfd >= 0 && (bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(lfd, 4) < 0)) {
		close(lfd);
		lfd = -1;
	}
	return lfd;
}

/* A fresh fixture root for the ManagedOOM cases: a cgroup2 mount, the
 * socket's directory, and two units, a.service holding pid 301 and
 * b.service pid 302 (put_proc them). */
static void moom_root(void)
{
	fresh_root();
	fixture_mkdir(root, "proc/self");
	fixture_put(root, "proc/self/mounts", "cgroup2 /sys/fs/cgroup cgroup2 rw,nosuid,nodev,noexec 0 0\n");
	fixture_mkdir(root, "run");
	fixture_mkdir(root, "run/systemd");
	fixture_mkdir(root, "sys/fs/cgroup/system.slice");
	fixture_mkdir(root, "sys/fs/cgroup/system.slice/a.service");
	fixture_mkdir(root, "sys/fs/cgroup/system.slice/b.service");
	fixture_put(root, "sys/fs/cgroup/system.slice/a.service/cgroup.procs", "301\n");
	fixture_put(root, "sys/fs/cgroup/system.slice/b.service/cgroup.procs", "302\n");
}

static int moom_child(void)
{
	static const char conf[] = "[daemon]\ndry_run = true\nsystemd_managed_oom = true\n"
				   "[tier never]\ntrigger = some 100ms 2s\nmin_oom_score_adj = 1000\n";
	static struct daemon d;
	uint64_t t0, t1;
	int lfd, cfd, i;

	lfd = moom_listen();
	if (lfd < 0)
		return 10;
	if (child_daemon(&d, conf) < 0 || !d.moom.active)
		return 11;
	/* oomd.conf: the main file's limit, the /etc drop-in masking /usr/lib's */
	printf("# oomd.conf read: limit %u, duration %" PRIu64 " us, swap %u\n", d.moom.set.def.limit_permyriad,
	       d.moom.set.def.duration_us, d.moom.set.def.swap_used_permyriad);
	if (d.moom.set.def.limit_permyriad != 7000 || d.moom.set.def.duration_us != 25000000 ||
	    d.moom.set.def.swap_used_permyriad != 8500)
		return 31;
	if (moom_accept(lfd, &cfd) < 0)
		return 12;
	if (moom_send(cfd, "{\"parameters\":{\"cgroups\":[{\"mode\":\"kill\",\"path\":\"/system.slice/a.service\","
			   "\"property\":\"ManagedOOMMemoryPressure\",\"limit\":2147483648,\"duration\":2000000},"
			   "{\"mode\":\"kill\",\"path\":\"/system.slice/a.service/../b.service\",\"property\":"
			   "\"ManagedOOMMemoryPressure\",\"limit\":1}]},\"continues\":true}") < 0)
		return 13;
	t0 = event_now_us();
	while (event_now_us() - t0 < 10000000 && !d.killer.decisions)
		if (daemon_step(&d, 1000) < 0)
			return 14;
	t1 = event_now_us();
	printf("# ManagedOOM: %zu units, decision after %" PRIu64 " ms, victim pid %d\n", d.moom.set.n,
	       (t1 - t0) / 1000, (int)d.killer.pick.pick.best.pid);
	if (d.moom.set.n != 1 || d.moom.kills != 1 || d.killer.decisions != 1)
		return 15;
	if (t1 - t0 < 2000000)
		return 16; /* sooner than the duration */
	if (!d.killer.pick.pick.found || d.killer.pick.pick.best.pid != 301)
		return 17; /* outside the unit */
	if (strcmp(d.killer.last_tier, "managed-oom") != 0)
		return 18;
	/* a reason of its own in the kill line, the history and the counters */
	if (!history_newest(&d.killer.history, 0) ||
	    strcmp(history_newest(&d.killer.history, 0)->reason, "managed_oom_pressure") != 0 ||
	    d.moom.kills_pressure != 1 || d.moom.kills_swap != 0)
		return 32;
	/* systemctl set-property a ManagedOOMMemoryPressureLimit=90% (and a
	 * duration of 1 s, which alone would bring a decision within 3 s):
	 * avg10 80% is below it, no decision */
	if (moom_send(cfd, "{\"parameters\":{\"cgroups\":[{\"mode\":\"kill\",\"path\":\"/system.slice/a.service\","
			   "\"property\":\"ManagedOOMMemoryPressure\",\"limit\":3865470566,\"duration\":1000000}]},"
			   "\"continues\":true}") < 0)
		return 19;
	for (t0 = event_now_us(); event_now_us() - t0 < 3000000;)
		if (daemon_step(&d, 1000) < 0)
			return 20;
	if (d.moom.set.n != 1 || d.moom.set.u[0].limit_permyriad != 9000 || d.killer.decisions != 1)
		return 21;
	/* PID 1 re-executes: the connection ends; the reconnect's list is empty */
	close(cfd);
	for (i = 0; i < 5 && d.moom.link.fd >= 0; i++)
		if (daemon_step(&d, 1000) < 0)
			return 22;
	if (d.moom.link.fd >= 0 || d.moom.set.n != 1)
		return 23; /* the units keep their settings while disconnected */
	for (i = 0; i < 5 && d.moom.connects < 2; i++)
		if (daemon_step(&d, 1000) < 0)
			return 24;
	if (d.moom.connects != 2 || moom_accept(lfd, &cfd) < 0 ||
	    moom_send(cfd, "{\"parameters\":{\"cgroups\":[]},\"continues\":true}") < 0)
		return 25;
	for (i = 0; i < 5 && d.moom.set.n; i++)
		if (daemon_step(&d, 1000) < 0)
			return 26;
	if (d.moom.set.n != 0)
		return 27;
	/* a malformed message closes the connection, nothing applied */
	if (moom_send(cfd, "{\"parameters\":{\"cgroups\":[{\"mode\":\"kill\",\"path\":\"/x\",\"property\":"
			   "\"ManagedOOMSwap\"}]},\"continues\":tru}") < 0)
		return 28;
	for (i = 0; i < 5 && d.moom.link.fd >= 0; i++)
		if (daemon_step(&d, 1000) < 0)
			return 29;
	if (d.moom.link.fd >= 0 || d.moom.set.n != 0 || d.moom.bad_messages != 1)
		return 30;
	close(cfd);
	close(lfd);
	daemon_deinit(&d);
	return 0;
}

/* ManagedOOMSwap=kill on a.service and on -.slice (as Debian's
 * systemd-oomd package sets it): nothing while memory or swap has room;
 * with both below 10% the decision is in the leaf group below them that
 * uses the most swap, b.service, as systemd-oomd chooses -- not among all
 * of -.slice's processes, where a.service's has the higher adj and more
 * resident memory (the guest's ballast died so before). */
static int moom_swap_child(void)
{
	static const char conf[] = "[daemon]\ndry_run = true\nsystemd_managed_oom = true\n"
				   "[tier never]\ntrigger = some 100ms 2s\nmin_oom_score_adj = 1000\n";
	static struct daemon d;
	uint64_t t0;
	int lfd, cfd;

	lfd = moom_listen();
	if (lfd < 0)
		return 10;
	if (child_daemon(&d, conf) < 0 || moom_accept(lfd, &cfd) < 0)
		return 11;
	if (moom_send(cfd, "{\"parameters\":{\"cgroups\":[{\"mode\":\"kill\",\"path\":\"/system.slice/a.service\","
			   "\"property\":\"ManagedOOMSwap\"},{\"mode\":\"kill\",\"path\":\"\","
			   "\"property\":\"ManagedOOMSwap\"}]},\"continues\":true}") < 0)
		return 12;
	/* swap half free: nothing, for 3 s (the idle clock wakes the loop often:
	 * time, not wakeups, counts the ticks) */
	for (t0 = event_now_us(); event_now_us() - t0 < 3000000;)
		if (daemon_step(&d, 1100) < 0)
			return 13;
	if (d.moom.set.n != 2 || d.killer.decisions != 0)
		return 14;
	fixture_put(root, "proc/meminfo", "MemTotal: 1000000 kB\nMemAvailable: 50000 kB\nSwapTotal: 1048576 kB\n"
					 "SwapFree: 52429 kB\n");
	fixture_put(root, "proc/swaps", "Filename Type Size Used Priority\n/dev/vda9 partition 1048576 996147 -2\n");
	for (t0 = event_now_us(); event_now_us() - t0 < 5000000 && !d.killer.decisions;)
		if (daemon_step(&d, 1100) < 0)
			return 15;
	printf("# ManagedOOMSwap: %llu decisions, victim pid %d\n", (unsigned long long)d.killer.decisions,
	       (int)d.killer.pick.pick.best.pid);
	if (d.killer.decisions != 1 || d.killer.pick.pick.best.pid != 302)
		return 16;
	if (!history_newest(&d.killer.history, 0) ||
	    strcmp(history_newest(&d.killer.history, 0)->reason, "managed_oom_swap") != 0 || d.moom.kills_swap != 1 ||
	    d.moom.kills_pressure != 0)
		return 17;
	close(cfd);
	close(lfd);
	daemon_deinit(&d);
	return 0;
}

static void test_managed_oom_swap(void)
{
	moom_root();
	fixture_put(root, "proc/meminfo", "MemTotal: 1000000 kB\nMemAvailable: 50000 kB\nSwapTotal: 1048576 kB\n"
					 "SwapFree: 524288 kB\n");
	fixture_put(root, "proc/swaps", "Filename Type Size Used Priority\n/dev/vda9 partition 1048576 524288 -2\n");
	/* a group's counter holds its children's swap, as the kernel's does */
	fixture_put(root, "sys/fs/cgroup/system.slice/memory.swap.current", "419430400\n");
	fixture_put(root, "sys/fs/cgroup/system.slice/a.service/memory.swap.current", "104857600\n");
	fixture_put(root, "sys/fs/cgroup/system.slice/b.service/memory.swap.current", "314572800\n");
	put_proc(301, false, "small", 1000, 900, 90000, "/system.slice/a.service");
	put_proc(302, false, "swapper", 1000, 0, 60000, "/system.slice/b.service");
	in_child("managed-oom swap", moom_swap_child);
}

/* A kernel OOM kill ends the evidence gathered before it. A fill too
 * fast for any check, then the kernel's OOM killer (vmstat oom_kill + 1):
 * memory is still below the line while its victim gives it back, and the
 * jump that the fill left in the growth samples was the victim's. No
 * decision then (test-fast.sh, CI of b85da89: the last resort took
 * stress-ng's 6.6 MiB parent 8 ms after the kernel's kill). Memory that
 * grows again after the kill is a runaway as before: a decision. */
static int kernel_victim_child(void)
{
	static const char conf[] = "[daemon]\ndry_run = true\n"
				   "[tier last]\nlow_available = 10%\nmin_oom_score_adj = 0\n";
	static struct daemon d;
	uint64_t t0;

	if (child_daemon(&d, conf) < 0)
		return 10;
	for (t0 = event_now_us(); event_now_us() - t0 < 300000;)
		if (daemon_step(&d, 100) < 0)
			return 11;
	if (d.killer.decisions != 0)
		return 12;
	/* the fill: 450 MB more anon at one check, 5 % available */
	fixture_put(root, "proc/meminfo", "MemTotal: 1000000 kB\nMemAvailable: 60000 kB\nAnonPages: 500000 kB\n");
	for (t0 = event_now_us(); event_now_us() - t0 < 20000;)
		if (daemon_step(&d, 5) < 0)
			return 13;
	/* the kernel's kill, before the check that would see the memory low */
	fixture_put(root, "proc/vmstat", "oom_kill 1\n");
	fixture_put(root, "proc/meminfo", "MemTotal: 1000000 kB\nMemAvailable: 50000 kB\nAnonPages: 900000 kB\n");
	for (t0 = event_now_us(); event_now_us() - t0 < 150000;)
		if (daemon_step(&d, 10) < 0)
			return 14;
	printf("# after the kernel's kill: %llu decisions, %llu kernel kills seen\n",
	       (unsigned long long)d.killer.decisions, (unsigned long long)d.oomk.missed);
	if (d.oomk.missed != 1)
		return 15;
	if (d.killer.decisions != 0)
		return 16; /* a kill on the victim's own growth */
	/* growth after the kill: a runaway, and a decision */
	for (t0 = event_now_us(); event_now_us() - t0 < 2000000 && !d.killer.decisions;) {
		static unsigned anon = 900000;
		char text[160];

		anon += 5000;
		snprintf(text, sizeof(text), "MemTotal: 1000000 kB\nMemAvailable: %u kB\nAnonPages: %u kB\n",
			 anon < 940000 ? 940000 - anon + 10000 : 10000, anon);
		fixture_put(root, "proc/meminfo", text);
		if (daemon_step(&d, 10) < 0)
			return 17;
	}
	printf("# growth after it: %llu decisions in %llu ms\n", (unsigned long long)d.killer.decisions,
	       (unsigned long long)(event_now_us() - t0) / 1000);
	if (d.killer.decisions != 1 || d.killer.pick.pick.best.pid != 402)
		return 18;
	daemon_deinit(&d);
	return 0;
}

static void test_kernel_victim_exiting(void)
{
	fresh_root();
	fixture_put(root, "proc/meminfo", "MemTotal: 1000000 kB\nMemAvailable: 500000 kB\nAnonPages: 50000 kB\n");
	fixture_put(root, "proc/vmstat", "oom_kill 0\n");
	put_proc(401, false, "parent", 1000, 0, 6600, "/");
	put_proc(402, false, "hog", 1000, 0, 300000, "/");
	in_child("kernel victim", kernel_victim_child);
}

/* The user managers: the daemon listens at the fixture's
 * /run/systemd/oom/io.system.ManagedOOM (bound itself: nothing is passed);
 * a fake user manager reports a unit of its user@.service with a limit and
 * a duration of 2 s, whose avg10 is 80%: a decision in that unit, no sooner
 * than 2 s. A call of another method changes nothing; PID 1's full list
 * (a reconnect) leaves the user managers' units alone; a group that goes
 * away is dropped; a malformed message closes that connection. */
static int moom_user_child(void)
{
	static const char conf[] = "[daemon]\ndry_run = true\nsystemd_managed_oom = true\n"
				   "[tier never]\ntrigger = some 100ms 2s\nmin_oom_score_adj = 1000\n";
	static const char unit[] = "/user.slice/user-1000.slice/user@1000.service/app.slice/u.service";
	static struct daemon d;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	uint64_t t0, t1;
	char call[1024];
	int lfd, pfd, ufd, i;

	lfd = moom_listen();
	if (lfd < 0)
		return 10;
	if (child_daemon(&d, conf) < 0 || !d.moom.active || d.moom.lfd < 0 || d.moom.lfd_passed)
		return 11;
	if (moom_accept(lfd, &pfd) < 0 || moom_send(pfd, "{\"parameters\":{\"cgroups\":[]},\"continues\":true}") < 0)
		return 12;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/run/systemd/oom/io.system.ManagedOOM", root);
	ufd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (ufd < 0 || connect(ufd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return 13;
	/* another method: nothing */
	snprintf(call, sizeof(call), "{\"method\":\"io.systemd.oom.Other\",\"parameters\":{\"cgroups\":[{\"mode\":\"kill\","
		 "\"path\":\"%s\",\"property\":\"ManagedOOMMemoryPressure\"}]},\"oneway\":true}", unit);
	if (moom_send(ufd, call) < 0)
		return 14;
	snprintf(call, sizeof(call), "{\"method\":\"io.systemd.oom.ReportManagedOOMCGroups\",\"parameters\":{\"cgroups\":["
		 "{\"mode\":\"kill\",\"path\":\"%s\",\"property\":\"ManagedOOMMemoryPressure\",\"limit\":2147483648,"
		 "\"duration\":2000000}]},\"oneway\":true}", unit);
	if (moom_send(ufd, call) < 0)
		return 15;
	t0 = event_now_us();
	while (event_now_us() - t0 < 10000000 && !d.killer.decisions)
		if (daemon_step(&d, 1000) < 0)
			return 16;
	t1 = event_now_us();
	printf("# user manager: %zu units, %" PRIu64 " messages, decision after %" PRIu64 " ms, victim pid %d\n",
	       d.moom.user.n, d.moom.user_messages, (t1 - t0) / 1000, (int)d.killer.pick.pick.best.pid);
	if (d.moom.user.n != 1 || d.moom.user_messages != 2 || d.killer.decisions != 1 || t1 - t0 < 2000000 ||
	    d.killer.pick.pick.best.pid != 303 || d.moom.kills_pressure != 1)
		return 17;
	/* PID 1 re-executes: its new full list leaves the user units */
	close(pfd);
	for (i = 0; i < 5 && d.moom.connects < 2; i++)
		if (daemon_step(&d, 1100) < 0)
			return 18;
	if (moom_accept(lfd, &pfd) < 0 || moom_send(pfd, "{\"parameters\":{\"cgroups\":[]},\"continues\":true}") < 0)
		return 19;
	for (i = 0; i < 3; i++)
		if (daemon_step(&d, 300) < 0)
			return 20;
	if (d.moom.user.n != 1)
		return 21;
	/* its group goes away: dropped at the next check */
	{
		char from[512], to[512];

		snprintf(from, sizeof(from), "%s/sys/fs/cgroup%s", root, unit);
		snprintf(to, sizeof(to), "%s/sys/fs/cgroup.gone", root);
		if (rename(from, to) < 0)
			return 27;
	}
	for (t0 = event_now_us(); event_now_us() - t0 < 3000000 && d.moom.user.n;)
		if (daemon_step(&d, 1100) < 0)
			return 22;
	if (d.moom.user.n != 0)
		return 23;
	/* a malformed message: the connection ends */
	if (moom_send(ufd, "{\"method\":") < 0)
		return 24;
	for (i = 0; i < 5; i++)
		if (daemon_step(&d, 300) < 0)
			return 25;
	if (recv(ufd, call, sizeof(call), MSG_DONTWAIT) != 0)
		return 26; /* closed: end of file */
	close(ufd);
	close(pfd);
	close(lfd);
	daemon_deinit(&d);
	return 0;
}

/* A process of uid connects to the user managers' socket and reports
 * whether the daemon closed the connection within 1.5 s, as one byte on
 * the pipe whose read end is returned: '0' closed, '1' open, '2' cannot.
 * (A byte, not an exit status: the daemon reaps every child.) */
static int connect_as(unsigned uid)
{
	int p[2];

	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	fflush(stdout);
	if (fork() == 0) {
		struct sockaddr_un sa = { .sun_family = AF_UNIX };
		struct timeval tv = { .tv_sec = 1, .tv_usec = 500000 };
		char c = '2';
		int fd;

		snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/run/systemd/oom/io.system.ManagedOOM", root);
		if (setresgid(uid, uid, uid) == 0 && setresuid(uid, uid, uid) == 0 &&
		    (fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) >= 0 &&
		    connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
		    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) == 0)
			c = recv(fd, &c, 1, 0) == 0 ? '0' : '1';
		_exit(write(p[1], &c, 1) == 1 ? 0 : 1);
	}
	close(p[1]);
	return p[0];
}

/* the daemon steps until connect_as's byte comes on rfd (closed): the
 * byte, or -1 */
static int step_until_report(struct daemon *d, int rfd)
{
	uint64_t t0 = event_now_us();
	int r = -1;

	while (rfd >= 0 && r < 0 && event_now_us() - t0 < 5000000) {
		struct pollfd pf = { .fd = rfd, .events = POLLIN };
		char c;

		if (poll(&pf, 1, 0) == 1 && read(rfd, &c, 1) == 1)
			r = (unsigned char)c;
		else if (daemon_step(d, 50) < 0)
			break;
	}
	if (rfd >= 0)
		close(rfd);
	return r;
}

/* review F4: a user with a subgid range may connect as each of their
 * subordinate uids, up to MOOM_CLIENTS_PER_UID each, and fill every slot;
 * a uid with no user manager (no user@UID.service group) is refused. */
static int moom_subuid_child(void)
{
	static const char conf[] = "[daemon]\ndry_run = true\nsystemd_managed_oom = true\n"
				   "[tier never]\ntrigger = some 100ms 2s\nmin_oom_score_adj = 1000\n";
	static struct daemon d;
	int lfd, pfd, r;

	lfd = moom_listen();
	if (lfd < 0)
		return 10;
	if (child_daemon(&d, conf) < 0 || d.moom.lfd < 0)
		return 11;
	if (moom_accept(lfd, &pfd) < 0 || moom_send(pfd, "{\"parameters\":{\"cgroups\":[]},\"continues\":true}") < 0)
		return 12;
	if (chmod(root, 0711) < 0)
		return 13;
	r = step_until_report(&d, connect_as(60001));
	printf("# a uid without a user manager: %c (0 closed), %" PRIu64 " refused\n", r, d.moom.clients_refused);
	if (r != '0' || d.moom.clients_refused != 1 || d.moom.managerless_refused != 1)
		return 14;
	fixture_mkdir(root, "sys/fs/cgroup/user.slice/user-60001.slice");
	fixture_mkdir(root, "sys/fs/cgroup/user.slice/user-60001.slice/user@60001.service");
	r = step_until_report(&d, connect_as(60001));
	printf("# a uid with a user manager: %c (1 kept open)\n", r);
	if (r != '1' || d.moom.clients_refused != 1)
		return 15;
	close(pfd);
	close(lfd);
	daemon_deinit(&d);
	return 0;
}

static void test_managed_oom_subuid(void)
{
	if (geteuid() != 0) {
		printf("# not root: no other uid to connect as\n");
		return;
	}
	moom_root();
	fixture_mkdir(root, "sys/fs/cgroup/user.slice");
	in_child("managed-oom subordinate uid", moom_subuid_child);
}

static void test_managed_oom_user(void)
{
	moom_root();
	fixture_mkdir(root, "sys/fs/cgroup/user.slice");
	fixture_mkdir(root, "sys/fs/cgroup/user.slice/user-1000.slice");
	fixture_mkdir(root, "sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service");
	fixture_mkdir(root, "sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/app.slice");
	fixture_mkdir(root, "sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/app.slice/u.service");
	fixture_put(root, "sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/app.slice/u.service/cgroup.procs",
		    "303\n");
	fixture_put(root, "sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/app.slice/u.service/memory.pressure",
		    "some avg10=80.00 avg60=40.00 avg300=10.00 total=90000000\n"
		    "full avg10=70.00 avg60=30.00 avg300=5.00 total=80000000\n");
	put_proc(301, false, "big", 1000, 900, 90000, "/system.slice/a.service");
	put_proc(303, false, "userapp", 1000, 0, 30000, "/user.slice/user-1000.slice/user@1000.service/app.slice/u.service");
	in_child("managed-oom user managers", moom_user_child);
}

static void test_managed_oom(void)
{
	moom_root();
	fixture_put(root, "sys/fs/cgroup/system.slice/a.service/memory.pressure",
		    "some avg10=80.00 avg60=40.00 avg300=10.00 total=90000000\n"
		    "full avg10=70.00 avg60=30.00 avg300=5.00 total=80000000\n");
	fixture_put(root, "sys/fs/cgroup/system.slice/b.service/memory.pressure",
		    "some avg10=99.00 avg60=40.00 avg300=10.00 total=90000000\n"
		    "full avg10=90.00 avg60=30.00 avg300=5.00 total=80000000\n");
	fixture_mkdir(root, "etc");
	fixture_mkdir(root, "etc/systemd");
	fixture_mkdir(root, "etc/systemd/oomd.conf.d");
	fixture_mkdir(root, "usr");
	fixture_mkdir(root, "usr/lib");
	fixture_mkdir(root, "usr/lib/systemd");
	fixture_mkdir(root, "usr/lib/systemd/oomd.conf.d");
	fixture_put(root, "etc/systemd/oomd.conf", "[OOM]\n#SwapUsedLimit=90%\nDefaultMemoryPressureLimit=70%\n");
	fixture_put(root, "usr/lib/systemd/oomd.conf.d/10-oomd-defaults.conf", "[OOM]\nDefaultMemoryPressureDurationSec=20s\n");
	fixture_put(root, "usr/lib/systemd/oomd.conf.d/20-swap.conf", "[OOM]\nSwapUsedLimit=85%\n");
	fixture_put(root, "etc/systemd/oomd.conf.d/10-oomd-defaults.conf", "[OOM]\nDefaultMemoryPressureDurationSec=25s\n");
	put_proc(301, false, "thrasher", 1000, 0, 60000, "/system.slice/a.service");
	put_proc(302, false, "other", 1000, 900, 90000, "/system.slice/b.service");
	in_child("managed-oom", moom_child);
}

/* ------------------------------------------------------------------ low_available and swap */

/* A low_available tier (100%: RAM is always "low") with 1 GiB of swap:
 * while swap has room the daemon checks, holds back and counts; once free
 * swap is at or below low_swap (default 10%) it fires; and a zram device
 * whose mem_limit leaves it no RAM counts as full however much swap space
 * it has free. hold_idle = false: the swap condition alone is tested here
 * (test_hold_idle has the hold). Runs in a child: daemon_init blocks signals. */
static int swap_child(void)
{
	static const char conf[] = "[daemon]\ndry_run = true\n"
				   "[tier last]\nlow_available = 100%\nhold_idle = false\nmin_oom_score_adj = 0\n";
	static struct daemon d;
	int i;

	if (child_daemon(&d, conf) < 0)
		return 10;
	/* swap 80% free: checks run, nothing fires */
	for (i = 0; i < 3; i++)
		if (daemon_step(&d, 1000) < 0)
			return 11;
	printf("# swap 80%% free: %llu checks, %llu held back, %llu events, %llu decisions\n",
	       (unsigned long long)d.tiers[0].mem_checks, (unsigned long long)d.tiers[0].swap_held,
	       (unsigned long long)d.tiers[0].events, (unsigned long long)d.killer.decisions);
	if (d.tiers[0].mem_checks < 1 || d.tiers[0].swap_held != d.tiers[0].mem_checks)
		return 12;
	if (d.tiers[0].events != 0 || d.killer.decisions != 0)
		return 13;
	/* the zram device (all the swap) took its mem_limit: full for our purposes */
	fixture_put(root, "sys/block/zram0/mm_stat", "209715200 50000000 67108864 67108864 67108864 0 0 0 0\n");
	for (i = 0; i < 50 && !d.killer.decisions; i++)
		if (daemon_step(&d, 1000) < 0)
			return 14;
	printf("# zram at its mem_limit: %llu decisions after %d wakeups\n", (unsigned long long)d.killer.decisions, i);
	if (d.killer.decisions != 1)
		return 15;
	/* room under mem_limit again, then SwapFree at 5%: fires on swap alone */
	fixture_put(root, "sys/block/zram0/mm_stat", "0 0 0 0 0 0 0 0 0\n");
	fixture_put(root, "proc/swaps", "Filename Type Size Used Priority\n/dev/vda9 partition 1048576 996147 -2\n");
	fixture_put(root, "proc/meminfo", "MemTotal: 1000000 kB\nMemAvailable: 500000 kB\nSwapTotal: 1048576 kB\n"
					 "SwapFree: 52429 kB\n");
	for (i = 0; i < 50 && d.killer.decisions < 2; i++)
		if (daemon_step(&d, 1000) < 0)
			return 16;
	printf("# swap 5%% free: %llu decisions\n", (unsigned long long)d.killer.decisions);
	if (d.killer.decisions < 2)
		return 17;
	daemon_deinit(&d);
	return 0;
}

static void test_swap_holds_back_last_resort(void)
{
	fresh_root();
	put_proc(201, false, "tab", 1000, 950, 50000, "/user.slice/app");
	fixture_put(root, "proc/meminfo", "MemTotal: 1000000 kB\nMemAvailable: 500000 kB\nSwapTotal: 1048576 kB\n"
					 "SwapFree: 838861 kB\n");
	fixture_put(root, "proc/swaps", "Filename Type Size Used Priority\n/dev/zram0 partition 1048576 209715 100\n");
	fixture_mkdir(root, "sys/block");
	fixture_mkdir(root, "sys/block/zram0");
	/* 200 MiB stored in 64 MiB (3:1), mem_limit 512 MiB: room to spare */
	fixture_put(root, "sys/block/zram0/mm_stat", "209715200 50000000 67108864 536870912 67108864 0 0 0 0\n");
	in_child("swap", swap_child);
}

/* The fixture's pressure file with a "some" total of total us. */
static void put_stall(uint64_t total)
{
	char text[256];

	snprintf(text, sizeof(text), "some avg10=0.00 avg60=0.00 avg300=0.00 total=%llu\n"
		 "full avg10=0.00 avg60=0.00 avg300=0.00 total=500\n", (unsigned long long)total);
	fixture_put(root, "proc/pressure/memory", text);
}

/* The fixture's meminfo: 1 GB, avail_kb available, anon_kb of anonymous memory. */
static void put_meminfo(uint64_t avail_kb, uint64_t anon_kb)
{
	char text[256];

	snprintf(text, sizeof(text), "MemTotal: 1000000 kB\nMemAvailable: %llu kB\nAnonPages: %llu kB\n",
		 (unsigned long long)avail_kb, (unsigned long long)anon_kb);
	fixture_put(root, "proc/meminfo", text);
}

/* The hold tests' fixture: an idle 500 MB "db" at adj 0, 1 GB of memory,
 * avail_kb available, 100 MB anonymous. */
static void hold_root(uint64_t avail_kb)
{
	fresh_root();
	put_proc(201, false, "db", 1000, 0, 500000, "/user.slice/app");
	put_meminfo(avail_kb, 100000);
}

/* hold_idle (issue 27 item 2): below low_available, a tier with nothing
 * growing and nothing stalling holds back and counts; growth of the
 * footprint (1 % of the domain since the hold began) or a stall share of
 * 10 % fires it. Runs in a child: daemon_init blocks signals. */
static int hold_child(void)
{
	static const char conf[] = "[daemon]\ndry_run = true\n"
				   "[tier last]\nlow_available = 100%\nmin_oom_score_adj = 0\n";
	static struct daemon d;
	uint64_t total = 1000;
	int i;

	if (child_daemon(&d, conf) < 0)
		return 10;
	/* idle: 1 s of checks, no growth, no stall */
	for (i = 0; i < 40; i++)
		if (daemon_step(&d, 50) < 0)
			return 11;
	printf("# idle: %llu checks, %llu held, %llu decisions\n", (unsigned long long)d.tiers[0].mem_checks,
	       (unsigned long long)d.tiers[0].idle_held, (unsigned long long)d.killer.decisions);
	if (d.tiers[0].mem_checks < 3 || d.tiers[0].idle_held != d.tiers[0].mem_checks || d.killer.decisions)
		return 12;
	/* a creep of 2 MB every half second (too slow for the rate, one step
	 * at a time under the noise of "growth now"): 12 MB, less its largest
	 * step, is the 1 % of 1 GB since it went below the floor -- it fires at the
	 * sixth step, not before */
	for (i = 0; i < 100 && !d.killer.decisions; i++) {
		if (i % 10 == 0)
			put_meminfo(500000 - 2000 * (i / 10 + 1), 100000 + 2000 * (i / 10 + 1));
		if (daemon_step(&d, 50) < 0)
			return 13;
	}
	printf("# a creep of 2 MB a half second: %llu decisions after %d checks\n", (unsigned long long)d.killer.decisions,
	       i);
	if (d.killer.decisions != 1 || i != 51)
		return 14;
	/* idle again (a new hold) -- then tasks stall 30 % of the time */
	for (i = 0; i < 20; i++)
		if (daemon_step(&d, 50) < 0)
			return 15;
	if (d.killer.decisions != 1)
		return 16;
	for (i = 0; i < 60 && d.killer.decisions < 2; i++) {
		total += 15000; /* 15 ms per 50 ms step */
		put_stall(total);
		usleep(50000);
		if (daemon_step(&d, 0) < 0)
			return 17;
	}
	printf("# with the stall: %llu decisions\n", (unsigned long long)d.killer.decisions);
	if (d.killer.decisions != 2)
		return 18;
	daemon_deinit(&d);
	return 0;
}

/* n memory checks 50 ms apart: available memory avail_kb, the footprint
 * step_kb more at each. -1 if a step failed. */
static int checks(struct daemon *d, int n, uint64_t avail_kb, uint64_t step_kb, uint64_t *anon_kb)
{
	for (int i = 0; i < n; i++) {
		*anon_kb += step_kb;
		put_meminfo(avail_kb, *anon_kb);
		if (daemon_step(d, 50) < 0)
			return -1;
	}
	return 0;
}

/* One stretch of checks(): n checks at avail_kb, the footprint step_kb more at each. */
struct stretch {
	int n;
	uint64_t avail_kb, step_kb;
};

/* The stretches in turn, then "# WHAT: N decisions": 0 if none was made,
 * 1 if one was, -1 if a step failed. */
static int held(struct daemon *d, const char *what, const struct stretch *s, size_t n, uint64_t *anon_kb)
{
	for (size_t i = 0; i < n; i++)
		if (checks(d, s[i].n, s[i].avail_kb, s[i].step_kb, anon_kb) < 0)
			return -1;
	printf("# %s: %llu decisions\n", what, (unsigned long long)d->killer.decisions);
	return d->killer.decisions ? 1 : 0;
}

/* What a system at rest does below the floor is no evidence (seen in the
 * idle3 guest, where it killed the idle hog): a footprint that creeps by
 * pages (0.1 MiB/s there), a blip of stall as a fill ends, available
 * memory that falls after a fill with nothing growing. Growth fast
 * enough to use up what is available within 10 s, and a stall that lasts
 * two spans, still fire. */
static int noise_child(void)
{
	static const char conf[] = "[daemon]\ndry_run = true\n"
				   "[tier last]\nlow_available = 100%\nmin_oom_score_adj = 0\n";
	static struct daemon d;
	uint64_t anon = 100000, total = 1000;
	int i;

	if (child_daemon(&d, conf) < 0)
		return 10;
	/* 400 MB available: below the floor (500 MB); 8 kB more every 50 ms
	 * (160 kB/s, 2500 s to the edge) for 3 s: held */
	if (checks(&d, 60, 400000, 8, &anon) < 0)
		return 11;
	printf("# trickle: %llu checks, %llu held, %llu decisions\n", (unsigned long long)d.tiers[0].mem_checks,
	       (unsigned long long)d.tiers[0].idle_held, (unsigned long long)d.killer.decisions);
	if (d.tiers[0].mem_checks < 10 || d.killer.decisions)
		return 12;
	/* a blip: tasks stall 75 ms in all (15 ms in each of 5 steps), then
	 * nothing: held. Two spans of at least 500 ms each at 10 % need 100 ms
	 * of stall, so no timing of the checks can fire on it (150 ms could,
	 * where a busy host's checks cut it in two halves) */
	for (i = 0; i < 40; i++) {
		if (i < 5)
			total += 15000;
		put_stall(total);
		usleep(50000);
		if (daemon_step(&d, 0) < 0)
			return 13;
	}
	printf("# blip: %llu decisions\n", (unsigned long long)d.killer.decisions);
	if (d.killer.decisions)
		return 14;
	/* a fill of 8 MB/s above the floor (600 MB available), then it stops
	 * as available memory drops below it (40 MB): the rate of the last
	 * second still says 8 MB/s (5 s to the edge), but nothing grows */
	if (held(&d, "a fill that stopped below the floor", (const struct stretch[]){ { 20, 600000, 400 }, { 20, 40000, 0 } },
		 2, &anon))
		return 17;
	/* idle3 after runaways: a fill of 200 MB/s stops above the floor,
	 * then available memory falls under it with nothing growing (the
	 * kernel's compaction holds free pages) and the footprint moving 60 kB
	 * a check as pages come back to the LRU lists. The rate of the last
	 * second still holds the fill, and each check is a little above the
	 * last -- fired on every check before memory_growth_now */
	if (held(&d, "a fill that stopped, then available memory fell under the floor",
		 (const struct stretch[]){ { 10, 600000, 10000 }, { 5, 600000, 60 }, { 25, 40000, 60 } }, 3, &anon))
		return 20;
	/* a buffer pool allocated at once, between two checks (memory at
	 * GB/s): 300 MB more and available memory under the floor at the next
	 * check, then nothing */
	if (held(&d, "one allocation between two checks, under the floor",
		 (const struct stretch[]){ { 30, 600000, 0 }, { 1, 300000, 300000 }, { 20, 300000, 0 } }, 3, &anon))
		return 23;
	/* a fill of 200 MB/s whose last step crosses the floor, then nothing
	 * (a buffer pool that ends just under it): the first check below the
	 * floor cannot tell it from a runaway, the next tick sees it stopped */
	if (held(&d, "a fill that stopped a check after the floor",
		 (const struct stretch[]){ { 10, 600000, 10000 }, { 1, 480000, 10000 }, { 20, 480000, 60 } }, 3, &anon))
		return 25;
	/* 40 MB available and 8 MB/s more (5 s to the edge; 8 MB in a second,
	 * under the 10 MB step): fires on the rate */
	for (i = 0; i < 40 && !d.killer.decisions; i++)
		if (checks(&d, 1, 40000, 400, &anon) < 0)
			return 15;
	printf("# 8 MB/s with 40 MB available: %llu decisions after %d steps\n", (unsigned long long)d.killer.decisions, i);
	if (d.killer.decisions != 1)
		return 16;
	daemon_deinit(&d);
	return 0;
}

/* In a small domain the floor is no deeper than 8 MiB from the edge (a
 * memory cgroup's kernel OOM killer strikes with a couple of MiB of page
 * cache still counted available): with a 12 MiB line, growth of 8 MB/s
 * is held at 11 MiB available (above the floor) and fires at 7 MiB --
 * below 8 MiB, above half the line, where a floor of half the line held
 * it; with a 5 MiB line the floor is the line itself. */
static int small_floor_child(const char *conf, uint64_t held_kb, uint64_t fire_kb)
{
	static struct daemon d;
	uint64_t anon = 100000;

	if (child_daemon(&d, conf) < 0)
		return 10;
	if (held_kb && held(&d, "8 MB/s above the floor", (const struct stretch[]){ { 20, held_kb, 400 } }, 1, &anon))
		return 11;
	if (held(&d, "8 MB/s under the floor", (const struct stretch[]){ { 10, fire_kb, 400 } }, 1, &anon) != 1)
		return 12;
	daemon_deinit(&d);
	return 0;
}

static int small_floor_12m(void)
{
	return small_floor_child("[daemon]\ndry_run = true\n[tier last]\nlow_available = 12M\nmin_oom_score_adj = 0\n",
				 11 * 1024, 7 * 1024);
}

static int small_floor_5m(void)
{
	return small_floor_child("[daemon]\ndry_run = true\n[tier last]\nlow_available = 5M\nmin_oom_score_adj = 0\n",
				 0, 4 * 1024);
}

static void test_hold_idle_small_floor(void)
{
	hold_root(400000);
	in_child("small floor, 12M line", small_floor_12m);
	hold_root(400000);
	in_child("small floor, 5M line", small_floor_5m);
}

static void test_hold_idle_noise(void)
{
	hold_root(400000);
	in_child("noise", noise_child);
}

static void test_hold_idle(void)
{
	hold_root(500000);
	in_child("hold", hold_child);
}

/* A scope below the root: its processes come from its cgroup.procs (and
 * its child groups'), so a process outside it is not even read; without the
 * group (or a cgroup2 mount) /proc is scanned and filtered as before. */
/* the scope test's config: scope /grp, uids up to trusted trusted */
static void scope_conf(char *conf, size_t size, unsigned trusted)
{
	snprintf(conf, size, "[daemon]\nscope = /grp\ntrusted_uid_max = %u\n[tier t]\nlow_available = 100%%\n"
		 "min_oom_score_adj = 0\n", trusted);
}

/* a fresh root with /grp listing 301, /grp/sub listing sub_procs */
static void scope_groups(const char *sub_procs)
{
	fresh_root();
	fixture_mkdir(root, "sys/fs/cgroup/grp");
	fixture_mkdir(root, "sys/fs/cgroup/grp/sub");
	fixture_put(root, "sys/fs/cgroup/grp/cgroup.procs", "301\n");
	fixture_put(root, "sys/fs/cgroup/grp/sub/cgroup.procs", sub_procs);
	put_proc(301, false, "inside", 1000, 300, 50000, "/grp");
}

static void test_scope_from_cgroup_procs(void)
{
	/* the fixture's groups belong to whoever runs the test: trusted */
	unsigned me = (unsigned)geteuid();
	char conf[256];

	scope_conf(conf, sizeof(conf), me > 999 ? me : 999);
	scope_groups("303\n");
	put_proc(302, false, "outside", 1000, 1000, 90000, "/other");
	/* read after 301 and better than it, so the early look cannot rule it
	 * out: both of the group's processes are candidates, 302 is not */
	put_proc(303, false, "below", 1000, 400, 60000, "/grp/sub");
	rig_up(conf, true);
	act1(0, FIRE_LOW_MEMORY);
	CU_ASSERT_TRUE(rig.k.pick.scope_listed);
	CU_ASSERT_EQUAL(rig.k.pick.n_scope_pids, 2);
	CU_ASSERT_EQUAL(rig.k.pick.pick.candidates, 2);
	CU_ASSERT_TRUE(rig.k.pick.pick.found && rig.k.pick.pick.best.pid == 303);
	CU_ASSERT_EQUAL(rig.k.decisions, 1);
	rig_down();

	/* the group is gone: /proc, filtered by each process's cgroup */
	fresh_root();
	put_proc(301, false, "inside", 1000, 300, 50000, "/grp");
	put_proc(302, false, "outside", 1000, 1000, 90000, "/other");
	rig_up(conf, true);
	act1(0, FIRE_LOW_MEMORY);
	CU_ASSERT_FALSE(rig.k.pick.scope_listed);
	CU_ASSERT_TRUE(rig.k.pick.pick.found && rig.k.pick.pick.best.pid == 301);
	rig_down();

	/* review F3: a group of the scope that a user owns (delegated), who
	 * may move a process from a group not yet read into one already read:
	 * the listing cannot be trusted to be whole, /proc is scanned. Here
	 * 303 moved to /grp after /grp's cgroup.procs was read, and is listed
	 * nowhere: it must still be the victim. */
	scope_groups("");
	put_proc(303, false, "moved", 60001, 400, 60000, "/grp");
	if (me == 0) {
		char sub[4096];

		snprintf(sub, sizeof(sub), "%s/sys/fs/cgroup/grp/sub", root);
		CU_ASSERT_EQUAL_FATAL(chown(sub, 60001, 60001), 0);
	} else {
		scope_conf(conf, sizeof(conf), me - 1); /* every group is the runner's, above this limit */
	}
	rig_up(conf, true);
	act1(0, FIRE_LOW_MEMORY);
	CU_ASSERT_FALSE(rig.k.pick.scope_listed);
	CU_ASSERT_EQUAL(rig.k.pick.pick.candidates, 2);
	CU_ASSERT_TRUE(rig.k.pick.pick.found && rig.k.pick.pick.best.pid == 303);
	rig_down();
}

/* An OOM decision (oom_killer = daemon) chooses among the group's members
 * only: a bigger process outside the group at OOM frees nothing there.
 * (The scope's listing once cleared the members' list, and the decision
 * chose from all of /proc.) */
static void test_oom_members(void)
{
	unsigned me = (unsigned)geteuid();
	char conf[256];

	snprintf(conf, sizeof(conf), "[daemon]\ntrusted_uid_max = %u\noom_killer = daemon\n[tier t]\nlow_available = 5%%\n"
		 "min_oom_score_adj = 0\n", me > 999 ? me : 999);
	scope_groups("303\n");
	put_proc(302, false, "outside", 1000, 1000, 90000, "/other");
	put_proc(303, false, "below", 60001, 400, 60000, "/grp/sub");
	rig_up(conf, true);
	rig.env.oom_group = "/sys/fs/cgroup/grp";
	act1(0, FIRE_OOM);
	CU_ASSERT_TRUE(rig.k.pick.scope_listed);
	CU_ASSERT_EQUAL(rig.k.pick.n_scope_pids, 2);
	CU_ASSERT_EQUAL(rig.k.pick.pick.candidates, 2);
	CU_ASSERT_TRUE(rig.k.pick.pick.found && rig.k.pick.pick.best.pid == 303);
	rig_down();
}

static int suite_cleanup(void)
{
	char cmd[256];
	size_t i;

	for (i = 0; i < n_spawned; i++)
		if (kill(spawned[i], SIGKILL) == 0)
			waitpid(spawned[i], NULL, 0);

	if (root_made) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
		return system(cmd) == 0 ? 0 : -1;
	}
	return 0;
}

/* After the warm-up, the kill path -- the choice, the pidfd, the signal --
 * takes no page fault: the warm-up touched its code, stack and data (in the
 * daemon, mlockall then keeps them). Counted by the killer itself
 * (getrusage around the decision), not timed. */
static void test_warm_up_covers_the_kill_path(void)
{
	pid_t v;
	bool locked;

	if (cunit_tap_skip_without_pidfd())
		return;
	v = spawn(false, -1);
	fresh_root();
	put_proc(v, true, "victim", 0, 900, 50000, "/test");
	rig_up("[daemon]\nkill_timeout = 1s\n[tier t]\nlow_available = 100%\nmin_oom_score_adj = 500\n", false);
	killer_warm_up(&rig.k, &rig.env);
	/* as the daemon does after its warm-up (daemon.c): what is mapped now
	 * stays, so a busy host's reclaim cannot turn a warmed page into a major
	 * fault (seen once in a distcheck beside cross-builds); a page the
	 * warm-up missed still faults. Without the privilege, unlocked. */
	locked = mlockall(MCL_CURRENT | MCL_ONFAULT) == 0;
	act1(0, FIRE_LOW_MEMORY);
	CU_ASSERT_TRUE_FATAL(rig.k.kill.active);
	printf("# kill path after the warm-up%s: %" PRIu64 " minor, %" PRIu64 " major faults\n",
	       locked ? " (locked)" : " (not locked)", rig.k.path.minflt, rig.k.path.majflt);
	if (locked)
		munlockall();
	CU_ASSERT_EQUAL(rig.k.path.majflt, 0);
	CU_ASSERT_EQUAL(rig.k.path.minflt, 0);
	CU_ASSERT_EQUAL(fate(v), SIGKILL);
	rig_down();
}

/* ------------------------------------------------------------------ pre_kill */

/* The hooks of the pre_kill cases, in the fixture root (trusted: ours,
 * 0755, under the sticky /tmp): "saves" writes the victim's pid it was
 * given into out/saved and exits; "hangs" starts a sleeper in its process
 * group, writes its pid into out/sleeper and waits. out is writable by the
 * hook's user (nobody when the test runs as root, else the test's own). */
static char prekill_conf[4096];

static void prekill_files(const char *hook, const char *body, const char *timeout)
{
	char path[512], user[64];
	FILE *f;

	snprintf(path, sizeof(path), "%s/out", root);
	CU_ASSERT_EQUAL_FATAL(mkdir(path, 0777), 0);
	CU_ASSERT_EQUAL_FATAL(chmod(path, 0777), 0);
	snprintf(path, sizeof(path), "%s/%s", root, hook);
	f = fopen(path, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	/* $0 is /dev/fd/N (the daemon runs the opened file): OUT stands for root/out */
	fprintf(f, "#!/bin/sh\nOUT='%s/out'\n%s", root, body);
	fclose(f);
	CU_ASSERT_EQUAL_FATAL(chmod(path, 0755), 0);
	/* the hook's child reaches /dev/null and its own oom_score_adj through
	 * the daemon's root and /proc: here the fixture's */
	fixture_mkdir(root, "dev");
	snprintf(path, sizeof(path), "%s/dev/null", root);
	CU_ASSERT_EQUAL_FATAL(symlink("/dev/null", path), 0);
	snprintf(path, sizeof(path), "%s/proc/self", root);
	CU_ASSERT_EQUAL_FATAL(symlink("/proc/self", path), 0);
	if (geteuid() == 0)
		snprintf(user, sizeof(user), "nobody");
	else
		snprintf(user, sizeof(user), "%u", (unsigned)geteuid());
	snprintf(prekill_conf, sizeof(prekill_conf),
		 "[daemon]\nkill_timeout = 1s\nsettle_time = 0\npre_kill = %s/%s\npre_kill_timeout = %s\n"
		 "on_kill_user = %s\n[tier t]\ntrigger = some 100ms 1s\nmin_oom_score_adj = 500\n"
		 "[tier last]\nlow_available = 100%%\nmin_oom_score_adj = 500\n",
		 root, hook, timeout, user);
}

/* A rig whose env runs pre_kill (opened as the daemon opens it). */
static void prekill_rig(const char *hook)
{
	char path[512], why[512];

	rig_up(prekill_conf, false);
	snprintf(path, sizeof(path), "%s/%s", root, hook);
	rig.env.prekill_fd = trust_open(path, TRUST_PROGRAM, "pre_kill", why, sizeof(why));
	CU_ASSERT_TRUE_FATAL(rig.env.prekill_fd >= 0);
	rig.env.hook_ok = true;
}

static void prekill_rig_down(void)
{
	rig_down();
	close(rig.env.prekill_fd);
}

/* Waits up to 2 s for the file root/out/name and reads the number in it; -1 if none. */
static long out_number(const char *name)
{
	char path[512], buf[64];
	int i;

	snprintf(path, sizeof(path), "%s/out/%s", root, name);
	for (i = 0; i < 200; i++) {
		ssize_t n = read_file_at(AT_FDCWD, path, buf, sizeof(buf));

		if (n > 0 && buf[n - 1] == '\n')
			return strtol(buf, NULL, 10);
		usleep(10000);
	}
	return -1;
}

/* A victim of ours chosen by a PSI fire of tier t, its kill waiting for
 * the pre_kill hook NAME (BODY; pre_kill_timeout TIMEOUT), whose pid goes
 * into *hook. Returns the victim's pid. */
static pid_t prekill_case(const char *name, const char *body, const char *timeout, pid_t *hook)
{
	pid_t v = spawn(false, -1);

	fresh_root();
	put_proc(v, true, "victim", 0, 900, 50000, "/test");
	prekill_files(name, body, timeout);
	prekill_rig(name);
	act1(0, FIRE_PSI);
	CU_ASSERT_TRUE_FATAL(rig.k.kill.active);
	CU_ASSERT_TRUE_FATAL(rig.k.kill.pre);
	CU_ASSERT_EQUAL(rig.k.prekill.runs, 1);
	CU_ASSERT_EQUAL(rig.k.kills_total, 0);
	*hook = rig.k.prekill.hook;
	CU_ASSERT_TRUE_FATAL(*hook > 0);
	return v;
}

/* The hook the killer ended (its process group's SIGKILL): the daemon
 * reaps it and tells the killer, which knows it. */
static void reap_killed_hook(pid_t hook)
{
	int status;

	CU_ASSERT_EQUAL_FATAL(waitpid(hook, &status, 0), hook);
	CU_ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	CU_ASSERT_TRUE(killer_child_exited(&rig.k, hook, status));
}

/* The hook exits before the timeout: the victim is signalled right then
 * (in the same call), the hook got the victim's pid; a tier firing while
 * it ran started no other kill. */
static void test_prekill_hook_exits(void)
{
	uint64_t t0, t1;
	pid_t v, hook;
	int status;

	if (cunit_tap_skip_without_pidfd())
		return;
	v = prekill_case("saves", "echo \"$PSI_LMKD_PID\" >\"$OUT/saved.tmp\" && mv \"$OUT/saved.tmp\" \"$OUT/saved\"\n",
			 "2s", &hook);
	CU_ASSERT_EQUAL(rig.fake.armed_us, 2000000); /* never longer than pre_kill_timeout */
	CU_ASSERT_EQUAL(rig.fake.watched, 1);        /* the victim's pidfd: it may die meanwhile */
	/* another tier fires meanwhile: deferred, no second hook, no kill */
	act1(0, FIRE_PSI);
	act1(1, FIRE_PSI);
	CU_ASSERT_EQUAL(rig.tiers[0].deferred + rig.tiers[1].deferred, 2);
	CU_ASSERT_EQUAL(rig.k.prekill.runs, 1);
	CU_ASSERT_EQUAL(kill(v, 0), 0);
	/* the daemon reaps the hook and tells the killer */
	CU_ASSERT_EQUAL_FATAL(waitpid(hook, &status, 0), hook);
	CU_ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CU_ASSERT_EQUAL(out_number("saved"), (long)v);
	t0 = fake_now(&rig.fake);
	CU_ASSERT_TRUE(killer_child_exited(&rig.k, hook, status));
	t1 = fake_now(&rig.fake);
	CU_ASSERT_EQUAL(rig.k.kills_total, 1);
	CU_ASSERT_TRUE(rig.k.kill.active);
	CU_ASSERT_FALSE(rig.k.kill.pre);
	CU_ASSERT_TRUE(rig.k.kill.sent_us >= t0 && rig.k.kill.sent_us <= t1);
	CU_ASSERT_EQUAL(rig.k.prekill.exited, 1);
	CU_ASSERT_EQUAL(rig.k.prekill.timeouts, 0);
	CU_ASSERT_EQUAL(rig.fake.armed_us, 1000000); /* now kill_timeout */
	CU_ASSERT_EQUAL(rig.fake.watched, 1);
	CU_ASSERT_EQUAL(fate(v), SIGKILL);
	CU_ASSERT_FALSE(killer_child_exited(&rig.k, hook, status)); /* reaped once */
	prekill_rig_down();
}

/* The hook hangs: at pre_kill_timeout its whole process group dies (its
 * sleeper too) and the victim is signalled. */
static void test_prekill_hook_hangs(void)
{
	pid_t v, hook;
	long sleeper;
	int i;

	if (cunit_tap_skip_without_pidfd())
		return;
	v = prekill_case("hangs", "sleep 30 &\necho $! >\"$OUT/sleeper.tmp\"\nmv \"$OUT/sleeper.tmp\" \"$OUT/sleeper\"\nwait\n",
			 "100ms", &hook);
	CU_ASSERT_EQUAL(rig.fake.armed_us, 100000);
	sleeper = out_number("sleeper");
	CU_ASSERT_TRUE_FATAL(sleeper > 0);
	CU_ASSERT_EQUAL(kill(v, 0), 0);
	killer_timer(&rig.k); /* pre_kill_timeout */
	CU_ASSERT_EQUAL(rig.k.prekill.timeouts, 1);
	CU_ASSERT_EQUAL(rig.k.kills_total, 1);
	CU_ASSERT_FALSE(rig.k.kill.pre);
	CU_ASSERT_EQUAL(fate(v), SIGKILL);
	reap_killed_hook(hook); /* ours, already dealt with */
	CU_ASSERT_EQUAL(rig.k.kills_total, 1);
	/* the sleeper was in the hook's group: gone too (reparented, reaped by init) */
	for (i = 0; i < 200 && kill((pid_t)sleeper, 0) == 0; i++)
		usleep(10000);
	CU_ASSERT_NOT_EQUAL(kill((pid_t)sleeper, 0), 0);
	prekill_rig_down();
}

/* The victim exits while the hook runs: no signal, the hook's group killed,
 * settling as after a death. */
static void test_prekill_victim_exits(void)
{
	struct pollfd p;
	pid_t v, hook;

	if (cunit_tap_skip_without_pidfd())
		return;
	v = prekill_case("hangs", "exec sleep 30\n", "2s", &hook);
	CU_ASSERT_EQUAL(kill(v, SIGUSR1), 0); /* it exits on its own account */
	p.fd = rig.k.kill.pidfd;
	p.events = POLLIN;
	CU_ASSERT_EQUAL(poll(&p, 1, 2000), 1);
	killer_exited(&rig.k);
	CU_ASSERT_FALSE(rig.k.kill.active);
	CU_ASSERT_EQUAL(rig.k.kill.pidfd, -1);
	CU_ASSERT_EQUAL(rig.k.kills_total, 0);
	CU_ASSERT_EQUAL(rig.k.prekill.victim_gone, 1);
	CU_ASSERT_EQUAL(rig.fake.watched, 0);
	CU_ASSERT_EQUAL(rig.fake.armed_us, 0);
	CU_ASSERT_TRUE(rig.k.settle_until_us > 0);
	CU_ASSERT_EQUAL(fate(v), SIGUSR1);
	reap_killed_hook(hook);
	CU_ASSERT_EQUAL(rig.k.kills_total, 0);
	prekill_rig_down();
}

/* A PSI kill's hook is cut short by a last resort (reason=low_memory)
 * firing meanwhile; a last resort itself never waits, nor does an OOM
 * decision: no hook, the signal at once. */
static void test_prekill_not_for_last_resort(void)
{
	char cmd[600];
	pid_t v, w, hook;

	if (cunit_tap_skip_without_pidfd())
		return;
	v = prekill_case("hangs", "exec sleep 30\n", "2s", &hook);
	act1(1, FIRE_LOW_MEMORY); /* memory ran low meanwhile */
	CU_ASSERT_FALSE(rig.k.kill.pre);
	CU_ASSERT_TRUE(rig.k.kill.active);
	CU_ASSERT_EQUAL(rig.k.kills_total, 1);
	CU_ASSERT_EQUAL(rig.k.prekill.timeouts, 1);
	CU_ASSERT_EQUAL(fate(v), SIGKILL);
	reap_killed_hook(hook);
	killer_exited(&rig.k);
	CU_ASSERT_FALSE(rig.k.kill.active);

	w = spawn(false, -1);
	put_proc(w, true, "second", 0, 900, 50000, "/test");
	snprintf(cmd, sizeof(cmd), "rm -rf '%s/proc/%d'", root, (int)v);
	CU_ASSERT_EQUAL(system(cmd), 0);
	act1(1, FIRE_LOW_MEMORY);
	CU_ASSERT_EQUAL(rig.k.prekill.runs, 1);
	CU_ASSERT_EQUAL(rig.k.kills_total, 2);
	CU_ASSERT_TRUE(rig.k.kill.active);
	CU_ASSERT_FALSE(rig.k.kill.pre);
	CU_ASSERT_EQUAL(fate(w), SIGKILL);
	killer_exited(&rig.k);

	/* nor an OOM decision (oom_killer = daemon), on a PSI tier */
	w = spawn(false, -1);
	put_proc(w, true, "third", 0, 900, 50000, "/test");
	act1(0, FIRE_OOM);
	CU_ASSERT_EQUAL(rig.k.prekill.runs, 1);
	CU_ASSERT_EQUAL(rig.k.kills_total, 3);
	CU_ASSERT_FALSE(rig.k.kill.pre);
	CU_ASSERT_EQUAL(fate(w), SIGKILL);
	prekill_rig_down();
}

/* The decision's configuration is gone when the hook exits (a reload
 * without the tier, a group no longer watched): no signal. */
static void test_prekill_decision_gone(void)
{
	pid_t v, hook;
	int status;

	if (cunit_tap_skip_without_pidfd())
		return;
	v = prekill_case("saves", "exit 0\n", "2s", &hook);
	rig.fake.env_ret = -ENOENT;
	CU_ASSERT_EQUAL_FATAL(waitpid(hook, &status, 0), hook);
	CU_ASSERT_TRUE(killer_child_exited(&rig.k, hook, status));
	CU_ASSERT_FALSE(rig.k.kill.active);
	CU_ASSERT_EQUAL(rig.k.kills_total, 0);
	CU_ASSERT_EQUAL(rig.k.prekill.cancelled, 1);
	CU_ASSERT_EQUAL(rig.fake.watched, 0);
	CU_ASSERT_EQUAL(kill(v, 0), 0);
	CU_ASSERT_EQUAL(fate(v), 0); /* alive: killed here */
	prekill_rig_down();
}

int main(void)
{
	static CU_TestInfo tests[] = {
		{ "the warm-up covers the kill path", test_warm_up_covers_the_kill_path },
		{ "a gated tier does not silence the others", test_gated_tier_does_not_silence },
		{ "the culprit that grew dies first, not the biggest", test_culprit_first },
		{ "on stall the reader dies first, not the biggest", test_reader_first },
		{ "no candidate: rescans back off until a process is created", test_no_candidate_backs_off },
		{ "the owner cannot watch the pidfd: wait here", test_cannot_watch },
		{ "SIGTERM, then SIGKILL at term_timeout", test_sigterm_escalation },
		{ "a victim that refuses the signal is skipped", test_eperm_victim_is_skipped },
		{ "kill_cgroup checks the whole subtree", test_kill_cgroup_subtree },
		{ "kill_cgroup: a systemd omit mark below the victim keeps the group", test_kill_cgroup_oomd_omit },
		{ "kill_cgroup: a member that cannot be read keeps the group", test_kill_cgroup_unreadable_member },
		{ "a reload in the same wakeup drops the old tier events", test_reload_in_same_wakeup },
		{ "ManagedOOM: a fake PID 1, a kill in the unit only", test_managed_oom },
		{ "ManagedOOMSwap: the unit with the most swap", test_managed_oom_swap },
		{ "a kernel OOM kill: no decision on the growth before it, one on growth after", test_kernel_victim_exiting },
		{ "ManagedOOM: the user managers' units", test_managed_oom_user },
		{ "ManagedOOM: a uid without a user manager takes no slot", test_managed_oom_subuid },
		{ "an OOM decision chooses among the group's members only", test_oom_members },
		{ "low_available waits while swap has room", test_swap_holds_back_last_resort },
		{ "low_available holds while nothing grows or stalls", test_hold_idle },
		{ "low_available: a trickle or a blip of stall below the floor is no evidence", test_hold_idle_noise },
		{ "low_available: the floor is at most 8 MiB deep in a small domain", test_hold_idle_small_floor },
		{ "after a kill, the stall alone is recovery: held until evidence", test_recovery_holds_the_stall },
		{ "hold_recovery = false: the stall alone kills again", test_recovery_off },
		{ "a victim alive at kill_timeout: what it still holds is recovery", test_recovery_counts_a_dying_victim },
		{ "a victim alive at kill_timeout: counted no longer than the bound", test_recovery_dying_bound },
		{ "a scope's processes are read from its cgroup.procs", test_scope_from_cgroup_procs },
		{ "pre_kill: the hook exits, the signal follows at once", test_prekill_hook_exits },
		{ "pre_kill: the hook hangs, its group dies at the timeout, then the signal", test_prekill_hook_hangs },
		{ "pre_kill: the victim exits meanwhile, no signal", test_prekill_victim_exits },
		{ "pre_kill: never for a last resort, which cuts a hook short", test_prekill_not_for_last_resort },
		{ "pre_kill: the decision's tier gone at the signal, no signal", test_prekill_decision_gone },
		CU_TEST_INFO_NULL,
	};
	static CU_SuiteInfo suites[] = {
		{ "kill", NULL, suite_cleanup, NULL, NULL, tests },
		CU_SUITE_INFO_NULL,
	};

	signal(SIGCHLD, SIG_DFL);
	return cunit_tap_main(suites);
}
