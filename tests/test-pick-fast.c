/* SPDX-License-Identifier: MIT */
/* test-pick-fast: the early look of a victim choice (pick_ctx.early_look,
 * victim_may_beat) never changes who is chosen. Random fixture /proc trees
 * are chosen from twice, reading everything and with the early look, under
 * random policies, orders, bands, scopes, exclusions and growth samples;
 * both must name the same process, the same first-pass winner, the same
 * pass and the same culprit, reader, growth and reads. And the size sample
 * (pick_sample, which reads status first and no cgroup) keeps what a full
 * read of every process would. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <regex.h>
#include <string.h>
#include <unistd.h>

#include "cunit-tap.h"
#include "fixture-tree.h"
#include "pick.h"
#include "victim.h"

/* A small deterministic generator, so that a failure can be replayed. */
static unsigned long long rng_state;

static unsigned rnd(unsigned n)
{
	rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
	return (unsigned)((rng_state >> 33) % n);
}

static const char *pick_str(const char *const *v, unsigned n)
{
	return v[rnd(n)];
}

#define N_PROCS 48

/* what each fake process's io said (read_kb), and whether a sample notes
 * it (an io file, and memory or threads in its status) */
static uint64_t io_kb[2 + 2 * N_PROCS];
static bool io_noted[2 + 2 * N_PROCS];

/* One fake process. Few distinct values, so that ties in adj, RSS and start
 * time are common: the tie-breaks must agree too. */
static void gen_proc(const char *root, int pid)
{
	static const char *const comms[] = { "sshd", "worker", "chrome", "editor", "bash" };
	static const char *const groups[] = { "/a", "/a/x.scope", "/b", "/a/y/z", "" };
	static const int adjs[] = { -1000, -500, 0, 100, 300, 900, 950, 1000 };
	static const unsigned uids[] = { 0, 100, 1000, 1001 };
	char rel[64], text[1024];
	unsigned rss = 1000 * (1 + rnd(6)), threads = 1 + rnd(3) / 2, flags = rnd(12) == 0 ? 0x00200000u : 0;
	unsigned u0 = uids[rnd(4)], u1 = rnd(5) == 0 ? uids[rnd(4)] : u0;
	char state = "SSSRDZ"[rnd(6)];
	const char *comm = pick_str(comms, 5), *cg = pick_str(groups, 5);
	bool leader_gone = state == 'Z' && threads > 1;

	snprintf(rel, sizeof(rel), "%d", pid);
	fixture_mkdir(root, rel);
	snprintf(rel, sizeof(rel), "%d/stat", pid);
	snprintf(text, sizeof(text), "%d (%s) %c 1 %d %d 0 -1 %u 0 0 0 0 0 0 0 0 20 0 %u 0 %u 1000 %u 0 0\n", pid, comm,
		 state, pid, pid, flags, threads, 100 + rnd(4), rss / 4);
	fixture_put(root, rel, text);
	snprintf(rel, sizeof(rel), "%d/status", pid);
	if (leader_gone)
		snprintf(text, sizeof(text), "Name:\t%s\nState:\tZ (zombie)\nUid:\t%u\t%u\t%u\t%u\nThreads:\t%u\n", comm,
			 u0, u1, u0, u0, threads);
	else
		snprintf(text, sizeof(text),
			 "Name:\t%s\nUid:\t%u\t%u\t%u\t%u\nVmRSS:\t%u kB\nRssFile:\t%u kB\nVmSwap:\t%u kB\nVmPTE:\t%u kB\n"
			 "Threads:\t%u\n",
			 comm, u0, u1, u0, u0, rss, rss / 4 * rnd(4), 500 * rnd(3), 4 * rnd(3), threads);
	fixture_put(root, rel, text);
	if (leader_gone) {
		/* the live thread holds the process's memory */
		snprintf(rel, sizeof(rel), "%d/task", pid);
		fixture_mkdir(root, rel);
		snprintf(rel, sizeof(rel), "%d/task/%d", pid, pid + 1);
		fixture_mkdir(root, rel);
		snprintf(rel, sizeof(rel), "%d/task/%d/status", pid, pid + 1);
		snprintf(text, sizeof(text), "Name:\t%s\nUid:\t%u\t%u\t%u\t%u\nVmRSS:\t%u kB\nRssFile:\t%u kB\nThreads:\t%u\n",
			 comm, u0, u1, u0, u0, 1000 * (1 + rnd(8)), 500 * rnd(3), threads);
		fixture_put(root, rel, text);
	}
	snprintf(rel, sizeof(rel), "%d/oom_score_adj", pid);
	snprintf(text, sizeof(text), "%d\n", adjs[rnd(8)]);
	fixture_put(root, rel, text);
	snprintf(rel, sizeof(rel), "%d/cgroup", pid);
	if (*cg)
		snprintf(text, sizeof(text), "0::%s\n", cg);
	else
		snprintf(text, sizeof(text), "1:name=systemd:/\n");
	fixture_put(root, rel, text);
	io_kb[pid] = 1000 * (uint64_t)rnd(8);
	io_noted[pid] = rnd(6) != 0;
	if (io_noted[pid]) {
		snprintf(rel, sizeof(rel), "%d/io", pid);
		snprintf(text, sizeof(text), "rchar: 5\nwchar: 0\nsyscr: 1\nsyscw: 0\nread_bytes: %llu\nwrite_bytes: 0\n",
			 (unsigned long long)io_kb[pid] * 1024 + rnd(1024));
		fixture_put(root, rel, text);
	}
	snprintf(rel, sizeof(rel), "%d/cmdline", pid);
	snprintf(text, sizeof(text), "/usr/bin/%s%c--%s", comm, '\0', rnd(2) ? "keep" : "bg");
	fixture_put(root, rel, text);
}

struct policies {
	regex_t protect, prefer, avoid, avoid_cmdline, protect_cgroup;
};

static void compile(struct policies *r)
{
	CU_ASSERT_EQUAL_FATAL(regcomp(&r->protect, "^sshd$", REG_EXTENDED | REG_NOSUB), 0);
	CU_ASSERT_EQUAL_FATAL(regcomp(&r->prefer, "^chrome$", REG_EXTENDED | REG_NOSUB), 0);
	CU_ASSERT_EQUAL_FATAL(regcomp(&r->avoid, "^editor$", REG_EXTENDED | REG_NOSUB), 0);
	CU_ASSERT_EQUAL_FATAL(regcomp(&r->avoid_cmdline, "--keep", REG_EXTENDED | REG_NOSUB), 0);
	CU_ASSERT_EQUAL_FATAL(regcomp(&r->protect_cgroup, "^/a/y", REG_EXTENDED | REG_NOSUB), 0);
}

static void random_policy(const struct policies *r, struct victim_policy *pol)
{
	memset(pol, 0, sizeof(*pol));
	pol->protect = rnd(2) ? &r->protect : NULL;
	pol->prefer = rnd(3) == 0 ? &r->prefer : NULL;
	pol->avoid = rnd(2) ? &r->avoid : NULL;
	pol->avoid_cmdline = rnd(3) == 0 ? &r->avoid_cmdline : NULL;
	pol->protect_cgroup = rnd(3) == 0 ? &r->protect_cgroup : NULL;
	pol->min_rss_kb = rnd(3) == 0 ? 2500 : 0;
}

static int choose(struct pick_ctx *c, int min_adj, bool early, struct kill_pick *p, struct procfs_scan_stats *st)
{
	c->early_look = early;
	return pick_choose(c, min_adj, p, st);
}

static unsigned total_pruned, total_compared, total_owner_passes, total_culprits, total_readers, total_kept, total_samples,
	total_reads_kept;

/* The reference sample: every process read in full (procfs_scan), as
 * pick_sample's scan did before it read status first. */
static void sample_visit_all(const struct proc_info *pi, void *userdata)
{
	if (!pi->kthread)
		growth_sample_add(userdata, pi->pid, pi->start_time, procfs_footprint_kb(pi));
}

/* pick_sample against the reference, at a random floor. */
static void compare_sample(int procfd)
{
	static struct growth_sample want, got; /* big: not on the stack */
	static const uint64_t floors[] = { 0, 1, 1000, 2500, 3000, 5000, 7000 };
	struct pick_ctx c = { .procfd = procfd, .rootfd = -1, .cg2_mount = "", .scope = "/" };
	struct procfs_scan_stats st;
	uint64_t floor_kb = floors[rnd(7)];
	uint64_t ticks;
	bool reads = rnd(2);
	size_t i;
	int pid;

	growth_sample_begin(&want, floor_kb, 7, procfs_read_uptime_ticks(procfd, &ticks) == 0 ? ticks : 0, reads);
	CU_ASSERT_EQUAL_FATAL(procfs_scan(procfd, OOM_SCORE_ADJ_MIN + 1, sample_visit_all, &want, &st), 0);
	/* every process's reads, whatever its adj and size */
	for (pid = 2; pid < 2 + 2 * N_PROCS; pid += 2)
		if (io_noted[pid])
			growth_sample_add_reads(&want, pid, io_kb[pid]);
	growth_sample_end(&want);
	CU_ASSERT_EQUAL(pick_sample(&c, &got, floor_kb, 7, reads), 0);
	CU_ASSERT_TRUE(got.valid);
	CU_ASSERT_EQUAL(got.at_us, 7);
	CU_ASSERT_EQUAL(got.floor_kb, want.floor_kb);
	CU_ASSERT_EQUAL(got.ticks, want.ticks);
	CU_ASSERT_EQUAL_FATAL(got.n, want.n);
	for (i = 0; i < got.n; i++) {
		CU_ASSERT_EQUAL(got.e[i].pid, want.e[i].pid);
		CU_ASSERT_EQUAL(got.e[i].start_time, want.e[i].start_time);
		CU_ASSERT_EQUAL(got.e[i].kb, want.e[i].kb);
	}
	CU_ASSERT_EQUAL(got.read_floor_kb, want.read_floor_kb);
	CU_ASSERT_EQUAL_FATAL(got.nr, want.nr);
	for (i = 0; i < got.nr; i++) {
		CU_ASSERT_EQUAL(got.r[i].pid, want.r[i].pid);
		CU_ASSERT_EQUAL(got.r[i].kb, want.r[i].kb);
	}
	total_kept += (unsigned)got.n;
	total_reads_kept += (unsigned)got.nr;
	total_samples++;
}

/* A random size sample of the tree's pids (growth.h): some kept with a
 * size then, the rest below a random floor. */
static void random_sample(struct growth_sample *s)
{
	int pid;

	growth_sample_begin(s, 1000 + 1000 * rnd(3), 1, rnd(3) ? 101 + rnd(2) : 0, rnd(3) != 0);
	for (pid = 2; pid < 2 + 2 * N_PROCS; pid += 2) {
		if (rnd(3))
			growth_sample_add(s, pid, 100 + rnd(4), 1000 * rnd(8));
		if (rnd(3))
			growth_sample_add_reads(s, pid, 1000 * rnd(3));
	}
	growth_sample_end(s);
}

/* One random tree, many random choices from it. */
static void compare_tree(const struct policies *res, unsigned seed)
{
	static const int bands[] = { -999, 0, 300, 900, 1000 };
	static const char *const scopes[] = { "/", "/a", "/b" };
	static struct kill_pick full, fast; /* big: not on the stack */
	static struct growth_sample sample;
	char root[] = "/tmp/test-pick-fast.XXXXXX";
	struct proc_ident exclude[4];
	int pid, k;

	rng_state = seed;
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(root));
	for (pid = 2; pid < 2 + 2 * N_PROCS; pid += 2)
		gen_proc(root, pid);
	if (rnd(2))
		fixture_put(root, "uptime", "1.02 0.50\n"); /* the sample knows who started since */
	for (k = 0; k < 40; k++) {
		struct victim_policy pol;
		struct pick_ctx c = { .rootfd = -1, .cg2_mount = "", .policy = &pol, .self = 2 + 2 * (int)rnd(N_PROCS),
				      .trusted_uid_max = 999 };
		struct procfs_scan_stats st1, st2;
		int min_adj = bands[rnd(5)], r1, r2;
		size_t i;

		random_policy(res, &pol);
		c.policy = rnd(5) == 0 ? NULL : &pol;
		c.scope = pick_str(scopes, 3);
		c.order = rnd(2) ? VICTIM_ORDER_BADNESS : VICTIM_ORDER_ADJ;
		c.domain_kb = rnd(3) == 0 ? 0 : 100000u * (1 + rnd(3));
		if (rnd(2)) {
			random_sample(&sample);
			c.growth = &sample;
			c.culprit_kb = 1000 * (1 + rnd(3));
			c.readers = rnd(2);
		}
		for (i = 0; i < 4; i++)
			exclude[i] = (struct proc_ident){ 2 + 2 * (int)rnd(N_PROCS), 100 + rnd(4) };
		c.exclude = exclude;
		c.n_exclude = rnd(5);
		c.procfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		CU_ASSERT_FATAL(c.procfd >= 0);
		r1 = choose(&c, min_adj, false, &full, &st1);
		r2 = choose(&c, min_adj, true, &fast, &st2);
		compare_sample(c.procfd);
		close(c.procfd);
		CU_ASSERT_EQUAL(r1, 0);
		CU_ASSERT_EQUAL(r2, 0);
		CU_ASSERT_EQUAL(full.pick.found, fast.pick.found);
		CU_ASSERT_EQUAL(full.pick.best.pid, fast.pick.best.pid);
		CU_ASSERT_EQUAL(full.owner_pass, fast.owner_pass);
		CU_ASSERT_EQUAL(full.first.pid, fast.first.pid);
		CU_ASSERT_EQUAL(full.pick.best.culprit, fast.pick.best.culprit);
		CU_ASSERT_EQUAL(full.pick.best.growth_kb, fast.pick.best.growth_kb);
		CU_ASSERT_EQUAL(full.pick.best.reader, fast.pick.best.reader);
		CU_ASSERT_EQUAL(full.pick.best.read_kb, fast.pick.best.read_kb);
		CU_ASSERT_EQUAL(full.pick.best.badness_kb, fast.pick.best.badness_kb);
		CU_ASSERT_EQUAL(st1.seen, st2.seen);
		CU_ASSERT_EQUAL(st1.pruned, 0);
		CU_ASSERT(st2.read + st2.pruned + st2.errors == st1.read + st1.errors);
		if (full.pick.best.pid != fast.pick.best.pid)
			fprintf(stderr, "# seed %u choice %d: full chose %d, early look %d\n", seed, k,
				(int)full.pick.best.pid, (int)fast.pick.best.pid);
		total_pruned += st2.pruned;
		total_owner_passes += full.owner_pass;
		total_culprits += full.pick.found && full.pick.best.culprit;
		total_readers += full.pick.found && full.pick.best.reader;
		total_compared++;
	}
	{
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
		CU_ASSERT_EQUAL(system(cmd), 0);
	}
}

static void test_random_trees(void)
{
	struct policies res;
	unsigned seed;

	compile(&res);
	for (seed = 1; seed <= 30; seed++)
		compare_tree(&res, seed);
	/* the comparison means something only if the early look did rule
	 * processes out, and the owner pass was reached now and then */
	CU_ASSERT(total_compared == 30 * 40);
	CU_ASSERT(total_pruned > total_compared);
	CU_ASSERT(total_owner_passes > 0);
	CU_ASSERT(total_culprits > 0);
	CU_ASSERT(total_readers > 0);
	printf("# %u culprits, %u readers chosen in %u choices; samples kept the reads of %u\n", total_culprits,
	       total_readers, total_compared, total_reads_kept);
	CU_ASSERT(total_reads_kept > 0);
	/* samples kept some processes, not all */
	CU_ASSERT(total_samples == total_compared);
	printf("# samples kept %u of %u processes\n", total_kept, total_samples * N_PROCS);
	CU_ASSERT(total_kept > total_samples * N_PROCS / 4);
	CU_ASSERT(total_kept < total_samples * N_PROCS * 3 / 4);
	regfree(&res.protect);
	regfree(&res.prefer);
	regfree(&res.avoid);
	regfree(&res.avoid_cmdline);
	regfree(&res.protect_cgroup);
}

static struct proc_info head(pid_t pid, int adj, uint64_t rss_kb, unsigned threads)
{
	struct proc_info pi;

	memset(&pi, 0, sizeof(pi));
	pi.pid = pid;
	pi.oom_score_adj = adj;
	pi.rss_kb = rss_kb;
	pi.threads = threads;
	pi.uid = 1000;
	return pi;
}

/* The rules of victim_may_beat, one by one. */
static void test_may_beat(void)
{
	regex_t prefer;
	struct victim_policy pol = { .min_rss_kb = 100 };
	struct victim_filter f = { .policy = &pol, .scope = "/", .order = VICTIM_ORDER_ADJ };
	struct victim_pick p = { .found = false };
	struct proc_info h;

	h = head(10, 500, 1000, 1);
	CU_ASSERT_TRUE(victim_may_beat(&f, &p, &h, true)); /* nothing chosen yet */
	h.rss_kb = 50;
	CU_ASSERT_FALSE(victim_may_beat(&f, &p, &h, true)); /* below min_rss: never a candidate */
	h = head(10, 500, 1000, 1);
	f.owner_only = true;
	f.owner = 1001;
	CU_ASSERT_FALSE(victim_may_beat(&f, &p, &h, true)); /* another owner */
	f.owner_only = false;

	p.found = true;
	p.best = head(20, 500, 1000, 1);
	CU_ASSERT_TRUE(victim_may_beat(&f, &p, &h, true)); /* a tie: the start time decides */
	h.rss_kb = 999;
	CU_ASSERT_FALSE(victim_may_beat(&f, &p, &h, true));
	h.oom_score_adj = 501;
	CU_ASSERT_TRUE(victim_may_beat(&f, &p, &h, true));
	h = head(10, 400, 1000, 3);
	h.rss_kb = 0;
	pol.min_rss_kb = 0;
	CU_ASSERT_TRUE(victim_may_beat(&f, &p, &h, true)); /* an exited leader: memory unknown */
	h.threads = 1;
	CU_ASSERT_FALSE(victim_may_beat(&f, &p, &h, true));

	/* the best avoided: anyone may still be neutral; the best preferred:
	 * nobody beats it unless a prefer rule could match */
	p.best.preference = -1;
	CU_ASSERT_TRUE(victim_may_beat(&f, &p, &h, true));
	p.best.preference = 1;
	h.oom_score_adj = 1000;
	CU_ASSERT_FALSE(victim_may_beat(&f, &p, &h, true));
	CU_ASSERT_EQUAL_FATAL(regcomp(&prefer, "^x$", REG_EXTENDED | REG_NOSUB), 0);
	pol.prefer = &prefer;
	CU_ASSERT_TRUE(victim_may_beat(&f, &p, &h, true));
	pol.prefer = NULL;

	/* badness: a big low-adj process outranks a small high-adj one */
	f.order = VICTIM_ORDER_BADNESS;
	f.domain_kb = 1000000;
	p.best = head(20, 900, 1000, 1);
	p.best.badness_kb = victim_badness_kb(&p.best, f.domain_kb);
	h = head(10, 0, 950000, 1);
	CU_ASSERT_TRUE(victim_may_beat(&f, &p, &h, true)); /* 950 000 > 1 000 + 900 000 */
	h.oom_score_adj = -100; /* 850 000 */
	CU_ASSERT_FALSE(victim_may_beat(&f, &p, &h, true));
	h.swap_kb = 200000; /* 1 050 000: swap and page tables count as in the kernel */
	CU_ASSERT_TRUE(victim_may_beat(&f, &p, &h, true));
	/* on stall, a small head that read reader_kb beats a best that is no
	 * reader, or a reader that read less; never a culprit */
	h = head(10, 0, 500, 1);
	f.culprit_kb = 4000;
	CU_ASSERT_FALSE(victim_may_beat_reads(&f, &p, &h, true, 9000)); /* reads not ranked */
	f.reader_kb = 4000;
	CU_ASSERT_FALSE(victim_may_beat_reads(&f, &p, &h, true, 3999));
	CU_ASSERT_TRUE(victim_may_beat_reads(&f, &p, &h, true, 4000));
	p.best.reader = true;
	p.best.read_kb = 5000;
	CU_ASSERT_FALSE(victim_may_beat_reads(&f, &p, &h, true, 4999));
	CU_ASSERT_TRUE(victim_may_beat_reads(&f, &p, &h, true, 5001));
	CU_ASSERT_FALSE(victim_may_beat_reads(&f, &p, &h, true, 5000)); /* a tie: badness, and it is smaller */
	h.rss_kb = 950000;
	CU_ASSERT_TRUE(victim_may_beat_reads(&f, &p, &h, true, 0)); /* large enough to have grown */
	h.rss_kb = 500;
	p.best.reader = false;
	p.best.culprit = true;
	CU_ASSERT_FALSE(victim_may_beat_reads(&f, &p, &h, true, 9000));
	p.best.culprit = false;
	f.culprit_kb = f.reader_kb = 0;
	regfree(&prefer);

	/* before status: only the adj, and only where it decides */
	f.order = VICTIM_ORDER_ADJ;
	p.best = head(20, 500, 1000, 1);
	p.best.preference = 0;
	h = head(10, 499, 0, 0);
	CU_ASSERT_FALSE(victim_may_beat(&f, &p, &h, false));
	h.oom_score_adj = 500;
	CU_ASSERT_TRUE(victim_may_beat(&f, &p, &h, false)); /* the RSS decides */
	h.oom_score_adj = 499;
	f.order = VICTIM_ORDER_BADNESS;
	CU_ASSERT_TRUE(victim_may_beat(&f, &p, &h, false)); /* its memory may outweigh */
	f.domain_kb = 0;
	p.best.badness_kb = VICTIM_BADNESS_UNKNOWN;
	CU_ASSERT_FALSE(victim_may_beat(&f, &p, &h, false)); /* no domain: the adj order */
	pol.min_rss_kb = 1;
	CU_ASSERT_FALSE(victim_may_beat(&f, &p, &h, false));
	h.oom_score_adj = 600;
	CU_ASSERT_TRUE(victim_may_beat(&f, &p, &h, false)); /* min_rss needs the status */
}

int main(void)
{
	static CU_TestInfo tests[] = {
		{ "victim_may_beat: what rules a process out early", test_may_beat },
		{ "random trees: the early look chooses, the sample keeps, as a full read", test_random_trees },
		CU_TEST_INFO_NULL,
	};
	static CU_SuiteInfo suites[] = {
		{ "pick-fast", NULL, NULL, NULL, NULL, tests },
		CU_SUITE_INFO_NULL,
	};

	return cunit_tap_main(suites);
}
