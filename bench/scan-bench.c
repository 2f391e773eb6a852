/* SPDX-License-Identifier: MIT */
/* scan-bench - time one /proc scan plus victim choice, the way the daemon's
 * kill path does it: pick_choose(), the daemon's own streaming choice.
 *
 * Usage:
 *   scan-bench gen DIR N          make a fixture tree DIR/PID/{stat,status,
 *                                 oom_score_adj,cgroup} for N fake processes
 *   scan-bench time ROOT REPS MIN_ADJ SCOPE
 *                                 scan ROOT (a fixture dir or /proc) REPS
 *                                 times; print one line per repetition:
 *                                 "rep I us=T seen=S read=R candidates=C best=PID
 *                                 pruned=P cpu_us=U" (U: CPU time, user +
 *                                 system, of the choice alone)
 *   scan-bench time ROOT REPS MIN_ADJ SCOPE SYSROOT MOUNT
 *                                 the same with systemd's marks read
 *                                 (pick_ctx.oomd_prefs) from the cgroup2
 *                                 tree MOUNT under SYSROOT ("/" and
 *                                 /sys/fs/cgroup for the real one); adds
 *                                 "lookups=L" (directory walks done)
 *   scan-bench gencg DIR          make the fixture's groups under DIR
 *                                 (bench/app.scope, system.slice/other.service)
 *   scan-bench sample ROOT REPS FLOOR_KB
 *                                 take the growth sample of ROOT (pick_sample,
 *                                 growth.h) REPS times with processes of at
 *                                 least FLOOR_KB kept; one line per
 *                                 repetition: "rep I us=T kept=K floor=F cpu_us=U"
 *   scan-bench spawn N            fork N idle children (adj and RSS spread as
 *                                 in the fixture), print "started N", and end
 *                                 them all on SIGTERM or SIGINT (they also die
 *                                 with it: PR_SET_PDEATHSIG)
 *
 * Options before "time": --full reads every process of the band in full
 * (pick_ctx.early_look off: the choice before the early look; the daemon's
 * status preview), default the kill path's early look; --order adj|badness
 * (default adj), --domain KB (the OOM domain for badness, default 0 =
 * unknown) and --culprit KB (culprit_growth: growth is measured from a
 * sample taken just before, with the daemon's floor of KB / 4, as under
 * pressure; default 0 = no growth). "pruned=P": ruled out by the early look.
 *
 * Fixture processes: adj cycles 0,100,...,900 so about 30 % are at or above
 * MIN_ADJ 700 (they cost a full read); half are in SCOPE, half elsewhere.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pick.h"

static void put(const char *dir, const char *name, const char *text)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
		fprintf(stderr, "scan-bench: %s: %s\n", path, strerror(errno));
		exit(1);
	}
}

static int gen(const char *root, long n)
{
	char dir[4096], buf[2048];
	long i;

	if (mkdir(root, 0755) != 0 && errno != EEXIST) {
		fprintf(stderr, "scan-bench: %s: %s\n", root, strerror(errno));
		return 1;
	}
	for (i = 0; i < n; i++) {
		long pid = 1000 + i, adj = (i % 10) * 100, rss = 1000 + (i * 37) % 50000;
		const char *comm = i % 3 ? "worker" : "sleeper";

		snprintf(dir, sizeof(dir), "%s/%ld", root, pid);
		if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
			fprintf(stderr, "scan-bench: %s: %s\n", dir, strerror(errno));
			return 1;
		}
		snprintf(buf, sizeof(buf),
			 "%ld (%s) S 1 %ld %ld 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 1 0 %ld 123456789 %ld"
			 " 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n",
			 pid, comm, pid, pid, 100 + i, rss / 4);
		put(dir, "stat", buf);
		snprintf(buf, sizeof(buf),
			 "Name:\t%s\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t%ld\nPid:\t%ld\nPPid:\t1\n"
			 "Uid:\t1000\t1000\t1000\t1000\nGid:\t1000\t1000\t1000\t1000\n"
			 "VmPeak:\t%ld kB\nVmSize:\t%ld kB\nVmHWM:\t%ld kB\nVmRSS:\t%ld kB\nRssAnon:\t%ld kB\nThreads:\t1\n",
			 comm, pid, pid, rss * 2, rss * 2, rss, rss, rss);
		put(dir, "status", buf);
		snprintf(buf, sizeof(buf), "%ld\n", adj);
		put(dir, "oom_score_adj", buf);
		snprintf(buf, sizeof(buf), "0::%s\n", i % 2 ? "/bench/app.scope" : "/system.slice/other.service");
		put(dir, "cgroup", buf);
		put(dir, "cmdline", comm);
	}
	return 0;
}

static long long clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static long long now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

/* CPU time (user + system) of this process: steadier than the wall clock
 * on a loaded machine */
static long long cpu_ns(void)
{
	return clock_ns(CLOCK_PROCESS_CPUTIME_ID);
}

static int gencg(const char *dir)
{
	static const char *const groups[] = { "bench", "bench/app.scope", "system.slice", "system.slice/other.service" };
	char path[4096];
	size_t i;

	for (i = 0; i < sizeof(groups) / sizeof(groups[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, groups[i]);
		if (mkdir(path, 0755) != 0 && errno != EEXIST) {
			fprintf(stderr, "scan-bench: %s: %s\n", path, strerror(errno));
			return 1;
		}
	}
	return 0;
}

struct opts {
	bool full;
	enum victim_order order;
	uint64_t domain_kb;
	uint64_t culprit_kb;
};

static struct opts opt;

/* A child of spawn: its adj and RSS as the fixture's i-th process, then
 * idle until killed. */
static void child(long i)
{
	static char mem[8 * 4096];
	long pages = (i * 37) % 8, k; /* 0..28 KiB of its own */
	char adj[16];
	int fd;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() == 1)
		_exit(0);

	snprintf(adj, sizeof(adj), "%ld\n", (i % 10) * 100);
	fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (write(fd, adj, strlen(adj)) < 0)
			_exit(1);
		close(fd);
	}
	for (k = 0; k < pages; k++)
		((volatile char *)mem)[k * 4096] = 1;
	for (;;)
		pause();
}

static pid_t *kids;
static long n_kids;

/* SIGTERM/SIGINT: the children die, and are reaped, before we exit (kill()
 * and waitpid() are async-signal-safe; signal()'s SA_RESTART restarts an
 * interrupted waitpid, so errno is never needed here) */
static void on_term(int sig)
{
	long i;

	(void)sig;
	for (i = 0; i < n_kids; i++)
		kill(kids[i], SIGKILL);
	for (i = 0; i < n_kids; i++)
		(void)waitpid(kids[i], NULL, 0);
	_exit(0);
}

static int spawn(long n)
{
	long i;

	kids = calloc((size_t)n, sizeof(*kids));
	if (!kids)
		return 1;
	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	for (i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid == 0)
			child(i);
		if (pid < 0) {
			fprintf(stderr, "scan-bench: fork %ld: %s\n", i, strerror(errno));
			break;
		}
		kids[n_kids++] = pid;
	}
	printf("started %ld\n", n_kids);
	fflush(stdout);
	for (;;)
		pause();
}

static int timeit(const char *root, int reps, int min_adj, const char *scope, const char *sysroot, const char *mount)
{
	int procfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int rootfd = sysroot ? open(sysroot, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	int i;

	if (procfd < 0 || (sysroot && rootfd < 0)) {
		fprintf(stderr, "scan-bench: %s: %s\n", procfd < 0 ? root : sysroot, strerror(errno));
		return 1;
	}
	static struct growth_sample sample; /* big: not on the stack */

	if (opt.culprit_kb) {
		/* the sample a choice under pressure measures growth from, with
		 * the daemon's floor (killer_observe) */
		struct pick_ctx c = { .procfd = procfd, .rootfd = -1, .cg2_mount = "", .self = getpid(), .scope = "/" };
		int r = pick_sample(&c, &sample, opt.culprit_kb / 4, 1, true);

		if (r < 0) {
			fprintf(stderr, "scan-bench: sample %s: %s\n", root, strerror(-r));
			return 1;
		}
	}
	for (i = 0; i < reps; i++) {
		struct pick_ctx c = { .procfd = procfd, .rootfd = rootfd, .cg2_mount = mount ? mount : "", .policy = NULL,
				      .self = getpid(), .scope = scope, .oomd_prefs = sysroot != NULL,
				      .order = opt.order, .domain_kb = opt.domain_kb, .early_look = !opt.full,
				      .growth = opt.culprit_kb ? &sample : NULL, .culprit_kb = opt.culprit_kb,
				      .readers = opt.culprit_kb != 0 };
		struct procfs_scan_stats st;
		static struct kill_pick p;
		long long t0, t1, c0, c1;
		int r;

		c0 = cpu_ns();
		t0 = now_ns();
		r = pick_choose(&c, min_adj, &p, &st);
		t1 = now_ns();
		c1 = cpu_ns();
		if (r < 0) {
			fprintf(stderr, "scan-bench: scan %s: %s\n", root, strerror(-r));
			return 1;
		}
		printf("rep %d us=%.1f seen=%u read=%u candidates=%u best=%d pruned=%u", i, (t1 - t0) / 1000.0, st.seen,
		       st.read, p.pick.candidates, p.pick.found ? (int)p.pick.best.pid : -1, st.pruned);
		if (sysroot)
			printf(" lookups=%u", p.oomd_lookups);
		printf(" cpu_us=%.1f\n", (c1 - c0) / 1000.0);
	}
	close(procfd);
	if (rootfd >= 0)
		close(rootfd);
	return 0;
}

/* The growth sample the daemon takes while pressure builds (killer_observe). */
static int sampleit(const char *root, int reps, uint64_t floor_kb)
{
	int procfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	static struct growth_sample s; /* big: not on the stack */
	int i;

	if (procfd < 0) {
		fprintf(stderr, "scan-bench: %s: %s\n", root, strerror(errno));
		return 1;
	}
	for (i = 0; i < reps; i++) {
		struct pick_ctx c = { .procfd = procfd, .rootfd = -1, .cg2_mount = "", .self = getpid(), .scope = "/" };
		long long t0, t1, c0, c1;
		int r;

		c0 = cpu_ns();
		t0 = now_ns();
		r = pick_sample(&c, &s, floor_kb, (uint64_t)(t0 / 1000), true);
		t1 = now_ns();
		c1 = cpu_ns();
		if (r < 0) {
			fprintf(stderr, "scan-bench: sample %s: %s\n", root, strerror(-r));
			return 1;
		}
		printf("rep %d us=%.1f kept=%zu floor=%llu cpu_us=%.1f\n", i, (t1 - t0) / 1000.0, s.n,
		       (unsigned long long)s.floor_kb, (c1 - c0) / 1000.0);
	}
	close(procfd);
	return 0;
}

int main(int argc, char **argv)
{
	while (argc > 1 && strncmp(argv[1], "--", 2) == 0) {
		if (strcmp(argv[1], "--full") == 0) {
			opt.full = true;
			argv++, argc--;
		} else if (argc > 2 && strcmp(argv[1], "--order") == 0) {
			opt.order = strcmp(argv[2], "badness") == 0 ? VICTIM_ORDER_BADNESS : VICTIM_ORDER_ADJ;
			argv += 2, argc -= 2;
		} else if (argc > 2 && strcmp(argv[1], "--culprit") == 0) {
			opt.culprit_kb = strtoull(argv[2], NULL, 10);
			argv += 2, argc -= 2;
		} else if (argc > 2 && strcmp(argv[1], "--domain") == 0) {
			opt.domain_kb = strtoull(argv[2], NULL, 10);
			argv += 2, argc -= 2;
		} else {
			break;
		}
	}
	if (argc == 3 && strcmp(argv[1], "spawn") == 0)
		return spawn(atol(argv[2]));
	if (argc == 4 && strcmp(argv[1], "gen") == 0)
		return gen(argv[2], atol(argv[3]));
	if (argc == 5 && strcmp(argv[1], "sample") == 0)
		return sampleit(argv[2], atoi(argv[3]), strtoull(argv[4], NULL, 10));
	if (argc == 3 && strcmp(argv[1], "gencg") == 0)
		return gencg(argv[2]);
	if (argc == 6 && strcmp(argv[1], "time") == 0)
		return timeit(argv[2], atoi(argv[3]), atoi(argv[4]), argv[5], NULL, NULL);
	if (argc == 8 && strcmp(argv[1], "time") == 0)
		return timeit(argv[2], atoi(argv[3]), atoi(argv[4]), argv[5], argv[6], argv[7]);
	fprintf(stderr, "usage: scan-bench gen DIR N | scan-bench gencg DIR | scan-bench spawn N |\n"
			"       scan-bench sample ROOT REPS FLOOR_KB |\n"
			"       scan-bench [--full] [--order adj|badness] [--domain KB] [--culprit KB] time ROOT REPS MIN_ADJ SCOPE "
			"[SYSROOT MOUNT]\n");
	return 2;
}
