/* SPDX-License-Identifier: MIT */
/* test-status: the kill history ring, the control protocol and socket (a
 * real socket in a temp dir, a forked client), the --status text and JSON
 * formatters, and the metrics file's format, signature and atomic write. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>

#include "config.h"
#include "control.h"
#include "cunit-tap.h"
#include "escape.h"
#include "fileio.h"
#include "fixture-tree.h"
#include "history.h"
#include "metrics.h"
#include "status.h"
#include "victim.h"
#include "warn.h"

static void victim_at(struct proc_info *pi, pid_t pid, const char *comm)
{
	memset(pi, 0, sizeof(*pi));
	pi->pid = pid;
	pi->uid = 1000;
	pi->oom_score_adj = 900;
	pi->rss_kb = 4096;
	pi->badness_kb = 123456;
	snprintf(pi->comm, sizeof(pi->comm), "%s", comm);
	pi->has_cgroup = true;
	strcpy(pi->cgroup, "/user.slice/app.scope");
}

static void test_history_ring(void)
{
	static struct kill_history h;
	struct kill_record r;
	struct proc_info pi;
	int i;

	memset(&h, 0, sizeof(h));
	CU_ASSERT_PTR_NULL(history_newest(&h, 0));
	for (i = 1; i <= HISTORY_MAX + 5; i++) {
		victim_at(&pi, i, "hog");
		history_record_init(&r, 1000u * (uint64_t)i, false, &pi, "critical", "psi_full");
		history_push(&h, &r);
	}
	CU_ASSERT_EQUAL(h.count, HISTORY_MAX);
	CU_ASSERT_EQUAL(history_newest(&h, 0)->pid, HISTORY_MAX + 5);
	CU_ASSERT_EQUAL(history_newest(&h, HISTORY_MAX - 1)->pid, 6); /* the 5 oldest made room */
	CU_ASSERT_PTR_NULL(history_newest(&h, HISTORY_MAX));
	CU_ASSERT_STRING_EQUAL(history_newest(&h, 0)->cgroup, "/user.slice/app.scope");
	CU_ASSERT_STRING_EQUAL(history_newest(&h, 0)->reason, "psi_full");
}

static void test_history_long_cgroup(void)
{
	struct kill_record r;
	static struct proc_info pi;

	victim_at(&pi, 7, "x");
	memset(pi.cgroup, 'a', 1000);
	pi.cgroup[0] = '/';
	pi.cgroup[1000] = '\0';
	history_record_init(&r, 0, true, &pi, "t", "low_memory");
	CU_ASSERT_EQUAL(strlen(r.cgroup), HISTORY_CGROUP_MAX - 1);
	CU_ASSERT_STRING_EQUAL(r.cgroup + HISTORY_CGROUP_MAX - 4, "...");
	pi.cgroup_unknown = true;
	history_record_init(&r, 0, true, &pi, "t", "low_memory");
	CU_ASSERT_STRING_EQUAL(r.cgroup, "");
	CU_ASSERT_TRUE(r.dry_run);
}

static void test_request(void)
{
	struct control_request q;
	char line[CONTROL_REQUEST_MAX];

	CU_ASSERT_EQUAL(control_parse_request("status\n", &q), 0);
	CU_ASSERT_FALSE(q.candidates || q.json);
	CU_ASSERT_EQUAL(control_parse_request("status json candidates\n", &q), 0);
	CU_ASSERT_TRUE(q.candidates && q.json);
	CU_ASSERT_EQUAL(control_parse_request("status bogus\n", &q), -EINVAL);
	CU_ASSERT_EQUAL(control_parse_request("kill 1\n", &q), -EINVAL);
	CU_ASSERT_EQUAL(control_parse_request("", &q), -EINVAL);
	q.candidates = true;
	q.json = false;
	control_format_request(line, sizeof(line), &q);
	CU_ASSERT_STRING_EQUAL(line, "status candidates\n");
	CU_ASSERT_EQUAL(control_parse_request(line, &q), 0);
	CU_ASSERT_TRUE(q.candidates && !q.json);
}

/* A snapshot with two tiers and one kill, times fixed. */
static struct status_snapshot *snapshot(struct kill_history *h, struct config *c)
{
	static struct status_snapshot s;
	struct config_error err;
	struct kill_record r;
	struct proc_info pi;

	CU_ASSERT_FATAL(config_parse_string(c, "[tier medium]\ntrigger = some 130ms 1s\nmin_oom_score_adj = 800\n"
					       "min_events = 5\n[tier last]\nlow_available = 5%\nmin_oom_score_adj = 0\n",
					    "t.conf", &err) == 0);
	memset(&s, 0, sizeof(s));
	memset(h, 0, sizeof(*h));
	victim_at(&pi, 4242, "Web \"Content\"");
	history_record_init(&r, 1796325629493ULL, false, &pi, "last", "low_memory");
	r.has_mem = true;
	r.available_bytes = 10 << 20;
	history_push(h, &r);
	s.version = "9.9";
	s.pid = 77;
	s.pressure = "/proc/pressure/memory";
	s.scope = "/";
	s.victim_order = "badness";
	s.memory_cgroup = "";
	s.armed = true;
	s.psi.some.present = true;
	s.psi.some.avg10 = 1234;
	s.mem.available_bytes = 512ULL << 20;
	s.mem.total_bytes = 1024ULL << 20;
	s.kills_total = 1;
	s.n_tiers = 2;
	s.tiers[0].cfg = &c->tiers[0];
	s.tiers[0].source = "kernel";
	s.tiers[0].counters.events = 12;
	s.tiers[1].cfg = &c->tiers[1];
	s.tiers[1].source = "none";
	s.tiers[1].counters.events = 3;
	s.tiers[1].counters.kills = 1;
	s.tiers[1].counters.kills_low_memory = 1;
	s.tiers[1].counters.last_kill_us = 1;
	s.tiers[1].last_kill_ago_s = 42;
	s.history = h;
	return &s;
}

static char *format(const struct status_snapshot *s, void (*fn)(const struct status_snapshot *, FILE *))
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fn(s, f);
	fclose(f);
	return buf;
}

static void test_text(void)
{
	static struct config c;
	static struct kill_history h;
	struct status_snapshot *s = snapshot(&h, &c);
	char *t;

	s->tiers[1].has_candidate = true;
	s->tiers[1].cand.found = true;
	victim_at(&s->tiers[1].cand.victim, 99, "chrome");
	s->tiers[1].cand.victim.preference = 1;
	s->tiers[1].cand.candidates = 7;
	t = format(s, status_format_text);
	CU_ASSERT_PTR_NOT_NULL(strstr(t, "psi-lmkd 9.9, pid 77, up 0s, 1 kills\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(t, "  some avg10=12.34% avg60=0.00% avg300=0.00% total=0us\n"));
	CU_ASSERT_PTR_NULL(strstr(t, "  full avg10")); /* absent: not printed */
	CU_ASSERT_PTR_NOT_NULL(strstr(t, "memory (system-wide): available 512 of 1024 MiB; swap 0 of 0 MiB free\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(t, "tier medium: some 130ms 1s, kernel trigger, 5 events in a row; kills "
					 "oom_score_adj >= 800\n  events=12 deferred=0"));
	CU_ASSERT_PTR_NOT_NULL(strstr(t, "tier last: no PSI trigger, low_available 5"));
	CU_ASSERT_PTR_NOT_NULL(strstr(t, " kills=1 no_candidate=0 scans=0 mem_checks=0 swap_held=0 idle_held=0 recovery_held=0 "
					  "last_kill=42s-ago\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(t, "  next victim: pid 99 (chrome) uid 1000 oom_score_adj 900 rss 4096 kB size 4096 kB badness "
					 "123456 kB\n    why: first of 7 candidates with oom_score_adj >= 0, preference prefer\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(t, "last kills (newest first, at most 32 kept):\n  2026-12-03T19:20:29.493Z kill "
					 "pid=4242 comm=Web \"Content\" uid=1000 oom_score_adj=900 rss_kb=4096 size_kb=4096 "
					 "badness_kb=123456 tier=last reason=low_memory cgroup=/user.slice/app.scope "
					 "available_kb=10240\n"));
	free(t);
	h.count = 0;
	t = format(s, status_format_text);
	CU_ASSERT_PTR_NOT_NULL(strstr(t, "last kills: none\n"));
	free(t);
}

static void test_json(void)
{
	static struct config c;
	static struct kill_history h;
	struct status_snapshot *s = snapshot(&h, &c);
	char *t;

	t = format(s, status_format_json);
	CU_ASSERT_PTR_NOT_NULL(strstr(t, "{\"version\":\"9.9\",\"pid\":77,\"uptime_s\":0,\"dry_run\":false,\"armed\":true,"
					 "\"kills_total\":1,\"kill_in_flight\":null,"));
	CU_ASSERT_PTR_NOT_NULL(strstr(t, "\"some\":{\"avg10\":12.34,\"avg60\":0.00,\"avg300\":0.00,\"total_us\":0},"
					 "\"full\":null"));
	CU_ASSERT_PTR_NOT_NULL(strstr(t, "{\"name\":\"medium\",\"source\":\"kernel\",\"trigger\":\"some 130ms 1s\","
					 "\"action\":\"kill\",\"warnings\":0,\"min_events\":5,\"min_oom_score_adj\":800,\"low_available\":null,\"events\":12,"));
	CU_ASSERT_PTR_NOT_NULL(strstr(t, "\"trigger\":null,"));
	CU_ASSERT_PTR_NOT_NULL(strstr(t, "\"last_kill_ago_s\":42}"));
	/* the quotes of a comm are escaped */
	CU_ASSERT_PTR_NOT_NULL(strstr(t, "\"kills\":[{\"time\":\"2026-12-03T19:20:29.493Z\",\"time_unix_ms\":1796325629493,"
					 "\"dry_run\":false,\"pid\":4242,\"comm\":\"Web \\\"Content\\\"\",\"uid\":1000,"));
	CU_ASSERT_PTR_NOT_NULL(strstr(t, "\"reason\":\"low_memory\",\"cgroup\":\"/user.slice/app.scope\","
					 "\"available_bytes\":10485760,\"total_bytes\":0}]}\n"));
	free(t);
}

static void test_json_string(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	status_json_string(f, "a\"b\\c\n\x01\x7f" "d");
	fclose(f);
	CU_ASSERT_STRING_EQUAL(buf, "\"a\\\"b\\\\c\\u000a\\u0001\\u007fd\"");
	free(buf);
}

static void test_metrics(void)
{
	static struct config c;
	static struct kill_history h;
	struct status_snapshot *s = snapshot(&h, &c);
	uint64_t sig = metrics_signature(s);
	char *t = format(s, metrics_format);

	CU_ASSERT_PTR_NOT_NULL(strstr(t, "# TYPE psi_lmkd_kills_total counter\n"
					 "psi_lmkd_kills_total{tier=\"medium\",reason=\"psi_some\"} 0\n"
					 "psi_lmkd_kills_total{tier=\"last\",reason=\"low_memory\"} 1\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(t, "psi_lmkd_tier_events_total{tier=\"medium\"} 12\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(t, "psi_lmkd_tier_kernel_trigger{tier=\"medium\"} 1\n"
					 "psi_lmkd_tier_kernel_trigger{tier=\"last\"} 0\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(t, "\npsi_lmkd_last_kill_timestamp_seconds 1796325629.493\n"));
	free(t);
	/* the uptime and memory checks are no change; an event is */
	s->uptime_s = 100;
	s->tiers[1].counters.mem_checks = 50;
	CU_ASSERT_EQUAL(metrics_signature(s), sig);
	s->tiers[0].counters.events++;
	CU_ASSERT_NOT_EQUAL(metrics_signature(s), sig);
	/* a dry run's would-kill is no kill */
	h.rec[0].dry_run = true;
	t = format(s, metrics_format);
	CU_ASSERT_PTR_NOT_NULL(strstr(t, "\npsi_lmkd_last_kill_timestamp_seconds 0.000\n"));
	CU_ASSERT_PTR_NULL(strstr(t, "managed_oom"));
	free(t);
	/* systemd_managed_oom: the units' kills by reason, after the tiers' */
	sig = metrics_signature(s);
	s->has_moom = true;
	CU_ASSERT_NOT_EQUAL(metrics_signature(s), sig);
	sig = metrics_signature(s);
	s->moom_kills_swap = 2;
	CU_ASSERT_NOT_EQUAL(metrics_signature(s), sig);
	t = format(s, metrics_format);
	CU_ASSERT_PTR_NOT_NULL(strstr(t, "psi_lmkd_kills_total{tier=\"last\",reason=\"low_memory\"} 1\n"
					 "psi_lmkd_kills_total{tier=\"managed-oom\",reason=\"managed_oom_pressure\"} 0\n"
					 "psi_lmkd_kills_total{tier=\"managed-oom\",reason=\"managed_oom_swap\"} 2\n"));
	free(t);
}

/* s with one tier: the first of text, parsed into c */
static void one_tier(struct status_snapshot *s, struct config *c, const char *text)
{
	struct config_error err;

	CU_ASSERT_FATAL(config_parse_string(c, text, "t.conf", &err) == 0);
	s->n_tiers = 1;
	s->tiers[0].cfg = &c->tiers[0];
}

/* oom_killer = daemon: a tier's OOM kills are neither its trigger's nor
 * low_memory's, and the series is there before the first one. */
static void test_metrics_oom(void)
{
	static struct config c, oc;
	static struct kill_history h;
	struct status_snapshot *s = snapshot(&h, &c);
	uint64_t sig;
	char *t;

	one_tier(s, &oc, "[daemon]\noom_killer = daemon\n[tier medium]\n"
			 "trigger = some 130ms 1s\nlow_available = 5%\nmin_oom_score_adj = 0\n");
	t = format(s, metrics_format);
	CU_ASSERT_PTR_NULL(strstr(t, "reason=\"oom\""));
	free(t);
	sig = metrics_signature(s);
	s->oom_killer_daemon = true;
	CU_ASSERT_NOT_EQUAL(metrics_signature(s), sig);
	t = format(s, metrics_format);
	CU_ASSERT_PTR_NOT_NULL(strstr(t, "psi_lmkd_kills_total{tier=\"medium\",reason=\"psi_some\"} 0\n"
					 "psi_lmkd_kills_total{tier=\"medium\",reason=\"low_memory\"} 0\n"
					 "psi_lmkd_kills_total{tier=\"medium\",reason=\"oom\"} 0\n"));
	free(t);
	/* two OOM kills, one last resort, one on the trigger */
	s->tiers[0].counters.kills = 4;
	s->tiers[0].counters.kills_oom = 2;
	s->tiers[0].counters.kills_low_memory = 1;
	sig = metrics_signature(s);
	t = format(s, metrics_format);
	CU_ASSERT_PTR_NOT_NULL(strstr(t, "psi_lmkd_kills_total{tier=\"medium\",reason=\"psi_some\"} 1\n"
					 "psi_lmkd_kills_total{tier=\"medium\",reason=\"low_memory\"} 1\n"
					 "psi_lmkd_kills_total{tier=\"medium\",reason=\"oom\"} 2\n"));
	free(t);
	/* reloaded without it: the kills made stay */
	s->oom_killer_daemon = false;
	CU_ASSERT_NOT_EQUAL(metrics_signature(s), sig);
	t = format(s, metrics_format);
	CU_ASSERT_PTR_NOT_NULL(strstr(t, "psi_lmkd_kills_total{tier=\"medium\",reason=\"oom\"} 2\n"));
	free(t);
}

/* path's first line into buf ("" if it cannot be read) */
static void first_line(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");

	buf[0] = '\0';
	if (f && !fgets(buf, (int)size, f))
		buf[0] = '\0';
	if (f)
		fclose(f);
}

/* metrics_write_file in a child that SIGALRM ends after 5 s: a write that
 * blocks fails the test instead of hanging it. Its result, or -EINTR. */
static int write_bounded(const char *path, const char *text)
{
	char why[512];
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	CU_ASSERT_FATAL(pid >= 0);
	if (pid == 0) {
		alarm(5);
		_exit(-metrics_write_file(path, text, strlen(text), why, sizeof(why)));
	}
	CU_ASSERT_EQUAL_FATAL(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? -WEXITSTATUS(status) : -EINTR;
}

/* M-2: a name its owner made of bytes that are not UTF-8 (prctl, mkdir in a
 * delegated subtree) leaves every output valid UTF-8: the JSON status, the
 * text status and the metrics file. Both ways in: a name read as the
 * daemon reads it (procfs, history), and raw bytes handed to the writers. */
static void test_not_utf8(void)
{
	static struct config c;
	static struct kill_history h;
	struct status_snapshot *s = snapshot(&h, &c);
	static const char raw_group[] = "/rv-u8/g-\xff\xfe";
	char group[4 * sizeof(raw_group)], *t;
	struct status_tier inst[2];
	struct kill_record r;
	struct proc_info pi;

	victim_at(&pi, 4243, "");
	CU_ASSERT_EQUAL_FATAL(procfs_parse_stat("4243 (\xff\xfe-hog) S 1 1 1 0 -1 4194560 1 0 0 0 5 3 0 0 20 0 1 0 7 1 2\n",
						&pi), 0);
	strcpy(pi.cgroup, raw_group);
	history_record_init(&r, 1796325629493ULL, false, &pi, "last", "low_memory");
	history_display_path(r.group, sizeof(r.group), raw_group);
	history_push(&h, &r);
	strcpy(r.comm, "\xff\xfe"); /* not through procfs: the writer's own guard */
	strcpy(r.cgroup, raw_group);
	history_push(&h, &r);
	escape_bytes(group, sizeof(group), raw_group, strlen(raw_group), ESCAPE_NAME, NULL);
	memset(inst, 0, sizeof(inst));
	inst[0].cfg = inst[1].cfg = &c.tiers[0];
	inst[0].source = inst[1].source = "kernel";
	inst[0].group = group;
	inst[1].group = raw_group;
	s->has_groups = true;
	s->n_instances = 2;
	s->instances = inst;
	t = format(s, status_format_json);
	CU_ASSERT_TRUE(cunit_tap_utf8_ok(t, strlen(t), true));
	CU_ASSERT_PTR_NOT_NULL(strstr(t, "\"comm\":\"\\\\xff\\\\xfe-hog\""));
	CU_ASSERT_PTR_NOT_NULL(strstr(t, "\"cgroup\":\"/rv-u8/g-\\\\xff\\\\xfe\",\"group\":\"/rv-u8/g-\\\\xff\\\\xfe\""));
	CU_ASSERT_PTR_NOT_NULL(strstr(t, "\"comm\":\"\\\\xff\\\\xfe\""));
	free(t);
	t = format(s, status_format_text);
	CU_ASSERT_TRUE(cunit_tap_utf8_ok(t, strlen(t), true));
	free(t);
	t = format(s, metrics_format);
	CU_ASSERT_TRUE(cunit_tap_utf8_ok(t, strlen(t), true));
	CU_ASSERT_PTR_NOT_NULL(strstr(t, "psi_lmkd_group_kills_total{tier=\"medium\",group=\"/rv-u8/g-\\\\xff\\\\xfe\"} 0\n"));
	free(t);
	s->n_instances = 0;
	s->instances = NULL; /* inst is on this stack */
	s->has_groups = false;
}

/* The file is replaced whole, through a temporary file the writer creates
 * itself (O_EXCL, a random name): what others planted at the old temporary
 * name PATH.tmp -- a FIFO, a symlink -- neither blocks the write nor is
 * followed, nor is a symlink at PATH; nothing is left behind; a directory
 * others may write is refused, sticky or not. */
static void test_metrics_write(void)
{
	char dir[] = "/tmp/test-status.XXXXXX", path[64], tmp[80], target[80], buf[64], why[512];
	struct stat st;

	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/m.prom", dir);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	snprintf(target, sizeof(target), "%s/target", dir);
	CU_ASSERT_EQUAL(metrics_write_file(path, "a 1\n", 4, why, sizeof(why)), 0);
	CU_ASSERT_EQUAL(metrics_write_file(path, "b 2\n", 4, why, sizeof(why)), 0);
	first_line(path, buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "b 2\n");
	CU_ASSERT_EQUAL(stat(path, &st), 0);
	CU_ASSERT_EQUAL(st.st_mode & 0777, 0644);
	CU_ASSERT_EQUAL(count_entries_at(AT_FDCWD, dir), 1);

	/* a FIFO at the old temporary name: not opened, not waited on */
	CU_ASSERT_EQUAL_FATAL(mkfifo(tmp, 0666), 0);
	CU_ASSERT_EQUAL(write_bounded(path, "c 3\n"), 0);
	first_line(path, buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "c 3\n");
	CU_ASSERT_TRUE(lstat(tmp, &st) == 0 && S_ISFIFO(st.st_mode));
	CU_ASSERT_EQUAL(count_entries_at(AT_FDCWD, dir), 2);
	unlink(tmp);

	/* symlinks at the old temporary name and at the file: not followed */
	fixture_put(dir, "target", "t\n");
	CU_ASSERT_EQUAL(symlink(target, tmp), 0);
	CU_ASSERT_EQUAL(unlink(path), 0);
	CU_ASSERT_EQUAL(symlink(target, path), 0);
	CU_ASSERT_EQUAL(write_bounded(path, "d 4\n"), 0);
	first_line(target, buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "t\n");
	CU_ASSERT_TRUE(lstat(path, &st) == 0 && S_ISREG(st.st_mode));
	first_line(path, buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "d 4\n");
	unlink(tmp);
	unlink(target);

	/* a directory others may write: refused, sticky or not; nothing written */
	CU_ASSERT_EQUAL(chmod(dir, 0777), 0);
	CU_ASSERT_EQUAL(metrics_write_file(path, "e 5\n", 4, why, sizeof(why)), -EPERM);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "metrics_file: the directory /tmp/test-status."));
	CU_ASSERT_PTR_NOT_NULL(strstr(why, " is writable by its group or others (mode 0777)"));
	CU_ASSERT_EQUAL(chmod(dir, 01777), 0);
	CU_ASSERT_EQUAL(metrics_write_file(path, "e 5\n", 4, why, sizeof(why)), -EPERM);
	CU_ASSERT_EQUAL(chmod(dir, 0700), 0);
	first_line(path, buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "d 4\n");
	CU_ASSERT_EQUAL(count_entries_at(AT_FDCWD, dir), 1);

	CU_ASSERT_EQUAL(metrics_write_file("/nonexistent-dir/m.prom", "x", 1, why, sizeof(why)), -ENOENT);
	unlink(path);
	rmdir(dir);
}

/* One client in a child; the parent serves it with the answer given. */
static int serve_one(int lfd, const char *sockpath, const char *reply, char *out, size_t outlen)
{
	struct control_request q = { .json = true }, got;
	struct control_peer peer;
	FILE *o = tmpfile();
	int fd, status;
	pid_t pid;
	size_t n;

	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	pid = fork();
	if (pid == 0) {
		int r = control_query(sockpath, &q, o, o);

		fflush(o);
		_exit(r == 0 ? 0 : r == -EPROTO ? 3 : 4);
	}
	do
		fd = control_accept(lfd, getuid(), &peer);
	while (fd == -EAGAIN && usleep(10000) == 0);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(peer.pid, pid);
	CU_ASSERT_EQUAL(control_read_request(fd, &got, control_now_us() + 5000000), 0);
	CU_ASSERT_TRUE(got.json && !got.candidates);
	CU_ASSERT_EQUAL(control_send(fd, reply, strlen(reply), control_now_us() + 5000000), 0);
	close(fd);
	waitpid(pid, &status, 0);
	rewind(o);
	n = fread(out, 1, outlen - 1, o);
	out[n] = '\0';
	fclose(o);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* A status client that trickles its request a byte at a time, or never
 * reads its answer, holds the daemon's loop until the deadline at most (it
 * is shared by every connection of a wakeup), never per byte. */
static void test_socket_deadline(void)
{
	int sv[2], i;
	pid_t pid;
	uint64_t t0, deadline;
	struct control_request got;
	static char big[1 << 20];

	CU_ASSERT_EQUAL_FATAL(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	pid = fork();
	CU_ASSERT_FATAL(pid >= 0);
	if (pid == 0) {
		close(sv[0]);
		for (i = 0; i < 60; i++) { /* "status" forever, never a newline */
			if (write(sv[1], "s", 1) != 1)
				_exit(1);
			usleep(50000);
		}
		_exit(0);
	}
	close(sv[1]);
	(void)fcntl(sv[0], F_SETFL, O_NONBLOCK);
	t0 = control_now_us();
	deadline = t0 + 300000;
	CU_ASSERT_EQUAL(control_read_request(sv[0], &got, deadline), -ETIMEDOUT);
	/* the deadline, not 63 bytes times a per-read timeout */
	CU_ASSERT(control_now_us() >= deadline);
	CU_ASSERT(control_now_us() - t0 < 2000000);
	/* a peer that does not read: the send stops at the deadline too */
	memset(big, 'x', sizeof(big));
	t0 = control_now_us();
	CU_ASSERT_EQUAL(control_send(sv[0], big, sizeof(big), t0 + 200000), -ETIMEDOUT);
	CU_ASSERT(control_now_us() - t0 < 2000000);
	close(sv[0]);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static void test_socket(void)
{
	char dir[] = "/tmp/test-status.XXXXXX", sock[96], why[256], out[128];
	struct control_request q = { .json = false };
	struct stat st;
	int lfd, again;

	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	snprintf(sock, sizeof(sock), "%s/run/control", dir);
	CU_ASSERT_EQUAL(control_query(sock, &q, stdout, stderr), -ENOENT);
	lfd = control_listen(sock, why, sizeof(why));
	CU_ASSERT_FATAL(lfd >= 0);
	CU_ASSERT_EQUAL(lstat(sock, &st), 0);
	CU_ASSERT_EQUAL(st.st_mode & 0777, 0600);
	snprintf(why, sizeof(why), "%s/run", dir);
	CU_ASSERT_EQUAL(stat(why, &st), 0);
	CU_ASSERT_EQUAL(st.st_mode & 0777, 0700);
	/* a second daemon does not steal a live socket */
	again = control_listen(sock, why, sizeof(why));
	CU_ASSERT_EQUAL(again, -EADDRINUSE);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "another psi-lmkd answers"));
	/* its probe was a connection, closed at once: nothing else is pending */
	again = control_accept(lfd, getuid(), &(struct control_peer){ 0 });
	CU_ASSERT(again >= 0);
	if (again >= 0)
		close(again);
	CU_ASSERT_EQUAL(control_accept(lfd, getuid(), &(struct control_peer){ 0 }), -EAGAIN);
	CU_ASSERT_EQUAL(serve_one(lfd, sock, "OK\n{\"x\":1}\n", out, sizeof(out)), 0);
	CU_ASSERT_STRING_EQUAL(out, "{\"x\":1}\n");
	CU_ASSERT_EQUAL(serve_one(lfd, sock, "ERR busy\n", out, sizeof(out)), 3);
	CU_ASSERT_STRING_EQUAL(out, "psi-lmkd: error: busy\n");
	close(lfd);
	/* a dead daemon's socket file is replaced; unlink spares another's */
	CU_ASSERT_EQUAL(control_query(sock, &q, stdout, stderr), -ECONNREFUSED);
	lfd = control_listen(sock, why, sizeof(why));
	CU_ASSERT_FATAL(lfd >= 0);
	CU_ASSERT_EQUAL(lstat(sock, &st), 0);
	control_unlink(sock, st.st_ino + 1);
	CU_ASSERT_EQUAL(access(sock, F_OK), 0);
	control_unlink(sock, st.st_ino);
	CU_ASSERT_EQUAL(access(sock, F_OK), -1);
	close(lfd);
	/* not a socket: left alone */
	close(creat(sock, 0600));
	CU_ASSERT_EQUAL(control_listen(sock, why, sizeof(why)), -EEXIST);
	unlink(sock);
	snprintf(why, sizeof(why), "%s/run", dir);
	rmdir(why);
	rmdir(dir);
}

static int parse(const char *text, char *msg, size_t size)
{
	static struct config c;
	struct config_error err;
	int r = config_parse_string(&c, text, "w.conf", &err);

	snprintf(msg, size, "%s", err.msg);
	return r;
}

/* metrics_file's directory at load: one others may write is refused, with
 * its file:line; one that does not exist yet passes (checked at each write). */
static void test_metrics_dir_config(void)
{
	char dir[] = "/tmp/test-status.XXXXXX", text[256], msg[1024];

	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	snprintf(text, sizeof(text), "[daemon]\nmetrics_file = %s/m.prom\n[tier k]\ntrigger = some 70ms 1s\n"
		 "min_oom_score_adj = 0\n", dir);
	CU_ASSERT_EQUAL(parse(text, msg, sizeof(msg)), 0);
	CU_ASSERT_EQUAL(chmod(dir, 0777), 0);
	CU_ASSERT_EQUAL(parse(text, msg, sizeof(msg)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(msg, "w.conf:2: metrics_file: the directory /tmp/test-status."));
	CU_ASSERT_PTR_NOT_NULL(strstr(msg, " is writable by its group or others (mode 0777)"));
	CU_ASSERT_EQUAL(chmod(dir, 0700), 0);
	CU_ASSERT_EQUAL(rmdir(dir), 0);
	CU_ASSERT_EQUAL(parse(text, msg, sizeof(msg)), 0);
}

static void test_warn_config(void)
{
	static struct config c;
	struct config_error err;
	char msg[512];

	CU_ASSERT_EQUAL_FATAL(config_parse_string(&c, "[tier w]\naction = warn\ntrigger = some 70ms 1s\n", "w.conf",
						  &err), 0);
	CU_ASSERT_TRUE(c.tiers[0].warn);
	CU_ASSERT_EQUAL(c.tiers[0].warn_level, WARN_LEVEL_LOW);
	CU_ASSERT_EQUAL(config_parse_string(&c, "[tier w]\naction = warn\nwarn_level = critical\nlow_available = 5%\n",
					    "w.conf", &err), 0);
	CU_ASSERT_EQUAL(c.tiers[0].warn_level, 255);
	CU_ASSERT_EQUAL(config_parse_string(&c, "[tier k]\naction = kill\ntrigger = some 70ms 1s\nmin_oom_score_adj = 0\n",
					    "w.conf", &err), 0);
	CU_ASSERT_FALSE(c.tiers[0].warn);
	CU_ASSERT_EQUAL(parse("[tier w]\naction = warn\ntrigger = some 70ms 1s\nmin_oom_score_adj = 0\n", msg,
			      sizeof(msg)), -EINVAL);
	CU_ASSERT_STRING_EQUAL(msg, "w.conf:4: tier \"w\" has action = warn: it kills nothing, so min_oom_score_adj "
				    "does not apply");
	CU_ASSERT_EQUAL(parse("[tier w]\naction = warn\ntrigger = some 70ms 1s\nkill_cgroup = true\n", msg,
			      sizeof(msg)), -EINVAL);
	CU_ASSERT_EQUAL(parse("[tier w]\nwarn_level = low\ntrigger = some 70ms 1s\nmin_oom_score_adj = 0\n", msg,
			      sizeof(msg)), -EINVAL);
	CU_ASSERT_STRING_EQUAL(msg, "w.conf:2: warn_level only applies with action = warn");
	CU_ASSERT_EQUAL(parse("[tier w]\naction = shout\n", msg, sizeof(msg)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(msg, "w.conf:2: action must be kill or warn"));
	CU_ASSERT_EQUAL(parse("[tier w]\naction = warn\nwarn_level = 7\ntrigger = some 70ms 1s\n", msg, sizeof(msg)),
			-EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(msg, "w.conf:3: warn_level must be low, medium or critical"));
	/* the control socket and the metrics file */
	CU_ASSERT_EQUAL(config_parse_string(&c, "[daemon]\ncontrol_socket = off\nmetrics_file = /var/m.prom\n"
					    "[tier k]\ntrigger = some 70ms 1s\nmin_oom_score_adj = 0\n", "w.conf", &err), 0);
	CU_ASSERT_STRING_EQUAL(c.control_socket, "");
	CU_ASSERT_STRING_EQUAL(c.metrics_file, "/var/m.prom");
	CU_ASSERT_EQUAL(config_parse_string(&c, "[tier k]\ntrigger = some 70ms 1s\nmin_oom_score_adj = 0\n", "w.conf",
					    &err), 0);
	CU_ASSERT_STRING_EQUAL(c.control_socket, CONFIG_DEFAULT_CONTROL_SOCKET);
	CU_ASSERT_EQUAL(parse("[daemon]\ncontrol_socket = run/x\n[tier k]\ntrigger = some 70ms 1s\n"
			      "min_oom_score_adj = 0\n", msg, sizeof(msg)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(msg, "w.conf:2: control_socket must be off or an absolute path"));
	CU_ASSERT_EQUAL(parse("[daemon]\nmetrics_file = /var/\n[tier k]\ntrigger = some 70ms 1s\n"
			      "min_oom_score_adj = 0\n", msg, sizeof(msg)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(msg, "w.conf:2: metrics_file must be an absolute path"));
	test_metrics_dir_config();
}

/* The instances of a cgroup-pattern tier: in text, JSON and metrics, each
 * named by its group; a group's name cannot break a line or a label. */
static void test_groups(void)
{
	static struct config c;
	static struct kill_history h;
	static struct config gc;
	struct status_snapshot *s = snapshot(&h, &c);
	struct status_tier inst[2];
	uint64_t sig;
	char *t;

	one_tier(s, &gc, "[tier users]\ntrigger = some 100ms 2s\nmin_oom_score_adj = 0\ncgroup = /user.slice/user-*.slice\n");
	memset(inst, 0, sizeof(inst));
	s->tiers[0].source = "off";
	s->has_groups = true;
	s->groups_watched = 2;
	s->max_groups = 256;
	inst[0].cfg = inst[1].cfg = &gc.tiers[0];
	inst[0].source = inst[1].source = "kernel";
	inst[0].group = "/user.slice/user-1000.slice";
	inst[0].counters.events = 4;
	inst[0].counters.kills = 1;
	inst[1].group = "/user.slice/user-\"x\n\\.slice";
	s->n_instances = 2;
	s->instances = inst;
	t = format(s, status_format_text);
	CU_ASSERT_PTR_NOT_NULL(strstr(t, "tier users: some 100ms 2s, one instance per group matching "
					 "/user.slice/user-*.slice; kills oom_score_adj >= 0\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(t, "groups: 2 watched (at most 256)\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(t, "tier users in /user.slice/user-1000.slice: some 100ms 2s, kernel trigger; "
					 "kills oom_score_adj >= 0\n  events=4 deferred=0 gated=0 kills=1 "));
	/* a group's name cannot start a line of its own in the text form */
	CU_ASSERT_PTR_NOT_NULL(strstr(t, "tier users in /user.slice/user-\\x22x\\x0a\\.slice: some"));
	free(t);
	t = format(s, status_format_json);
	CU_ASSERT_PTR_NOT_NULL(strstr(t, "{\"name\":\"users\",\"cgroup\":\"/user.slice/user-*.slice\",\"source\":\"off\""));
	CU_ASSERT_PTR_NOT_NULL(strstr(t, "\"groups\":{\"watched\":2,\"max_groups\":256,\"not_watched\":0,\"instances\":"
					 "[{\"name\":\"users\",\"group\":\"/user.slice/user-1000.slice\",\"source\":\"kernel\""));
	CU_ASSERT_PTR_NOT_NULL(strstr(t, "\"group\":\"/user.slice/user-\\\"x\\u000a\\\\.slice\""));
	free(t);
	t = format(s, metrics_format);
	CU_ASSERT_PTR_NOT_NULL(strstr(t, "psi_lmkd_groups_watched 2\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(t, "psi_lmkd_group_kills_total{tier=\"users\",group=\"/user.slice/user-1000.slice\"} 1\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(t, "psi_lmkd_group_tier_events_total{tier=\"users\",group=\"/user.slice/"
					 "user-\\\"x\\n\\\\.slice\"} 0\n"));
	free(t);
	sig = metrics_signature(s);
	inst[1].counters.events++;
	CU_ASSERT_NOT_EQUAL(metrics_signature(s), sig);
	s->n_instances = 0;
	s->instances = NULL;
	s->has_groups = false;
	t = format(s, status_format_json);
	CU_ASSERT_PTR_NOT_NULL(strstr(t, "\"groups\":null"));
	free(t);
}

int main(void)
{
	static CU_TestInfo tests[] = {
		{ "history ring", test_history_ring },
		{ "history cuts long cgroups", test_history_long_cgroup },
		{ "request line", test_request },
		{ "status text", test_text },
		{ "status JSON", test_json },
		{ "cgroup-pattern tier instances", test_groups },
		{ "JSON strings", test_json_string },
		{ "metrics format and signature", test_metrics },
		{ "metrics: kills for the group's OOM", test_metrics_oom },
		{ "metrics file written atomically", test_metrics_write },
		{ "names that are not UTF-8: JSON, text and metrics stay UTF-8", test_not_utf8 },
		{ "control socket", test_socket },
		{ "control socket: a slow client is bounded by the deadline", test_socket_deadline },
		{ "warn tiers, control_socket and metrics_file in the config", test_warn_config },
		CU_TEST_INFO_NULL,
	};
	static CU_SuiteInfo suites[] = {
		{ "status", NULL, NULL, NULL, NULL, tests },
		CU_SUITE_INFO_NULL,
	};

	return cunit_tap_main(suites);
}
