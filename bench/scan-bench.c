/* scan-bench - time one /proc scan plus victim choice, the way the daemon's
 * kill path does it: pick_choose(), the daemon's own streaming choice.
 *
 * Usage:
 *   scan-bench gen DIR N          make a fixture tree DIR/PID/{stat,status,
 *                                 oom_score_adj,cgroup} for N fake processes
 *   scan-bench time ROOT REPS MIN_ADJ SCOPE
 *                                 scan ROOT (a fixture dir or /proc) REPS
 *                                 times; print one line per repetition:
 *                                 "rep I us=T seen=S read=R candidates=C best=PID"
 *   scan-bench time ROOT REPS MIN_ADJ SCOPE SYSROOT MOUNT
 *                                 the same with systemd's marks read
 *                                 (pick_ctx.oomd_prefs) from the cgroup2
 *                                 tree MOUNT under SYSROOT ("/" and
 *                                 /sys/fs/cgroup for the real one); adds
 *                                 "lookups=L" (directory walks done)
 *   scan-bench gencg DIR          make the fixture's groups under DIR
 *                                 (bench/app.scope, system.slice/other.service)
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
#include <sys/stat.h>
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

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
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

static int timeit(const char *root, int reps, int min_adj, const char *scope, const char *sysroot, const char *mount)
{
	int procfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int rootfd = sysroot ? open(sysroot, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	int i;

	if (procfd < 0 || (sysroot && rootfd < 0)) {
		fprintf(stderr, "scan-bench: %s: %s\n", procfd < 0 ? root : sysroot, strerror(errno));
		return 1;
	}
	for (i = 0; i < reps; i++) {
		struct pick_ctx c = { .procfd = procfd, .rootfd = rootfd, .cg2_mount = mount ? mount : "", .policy = NULL,
				      .self = getpid(), .scope = scope, .oomd_prefs = sysroot != NULL };
		struct procfs_scan_stats st;
		static struct kill_pick p;
		long long t0, t1;
		int r;

		t0 = now_ns();
		r = pick_choose(&c, min_adj, &p, &st);
		t1 = now_ns();
		if (r < 0) {
			fprintf(stderr, "scan-bench: scan %s: %s\n", root, strerror(-r));
			return 1;
		}
		printf("rep %d us=%.1f seen=%u read=%u candidates=%u best=%d", i, (t1 - t0) / 1000.0, st.seen, st.read,
		       p.pick.candidates, p.pick.found ? (int)p.pick.best.pid : -1);
		if (sysroot)
			printf(" lookups=%u", p.oomd_lookups);
		printf("\n");
	}
	close(procfd);
	if (rootfd >= 0)
		close(rootfd);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "gen") == 0)
		return gen(argv[2], atol(argv[3]));
	if (argc == 3 && strcmp(argv[1], "gencg") == 0)
		return gencg(argv[2]);
	if (argc == 6 && strcmp(argv[1], "time") == 0)
		return timeit(argv[2], atoi(argv[3]), atoi(argv[4]), argv[5], NULL, NULL);
	if (argc == 8 && strcmp(argv[1], "time") == 0)
		return timeit(argv[2], atoi(argv[3]), atoi(argv[4]), argv[5], argv[6], argv[7]);
	fprintf(stderr, "usage: scan-bench gen DIR N | scan-bench gencg DIR |\n"
			"       scan-bench time ROOT REPS MIN_ADJ SCOPE [SYSROOT MOUNT]\n");
	return 2;
}
