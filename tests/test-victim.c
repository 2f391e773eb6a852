/* SPDX-License-Identifier: MIT */
/* test-victim: who may be killed and in which order; whose shields count
 * (pure, then through pick_choose on tests/fixtures/shield). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <regex.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include "cgroup.h"
#include "cunit-tap.h"
#include "domain.h"
#include "fixture-tree.h"
#include "fileio.h"
#include "fixture-tree.h"
#include "pick.h"
#include "victim.h"

static struct proc_info proc(pid_t pid, int adj, uint64_t rss_kb, const char *cgroup)
{
	struct proc_info pi;

	memset(&pi, 0, sizeof(pi));
	pi.pid = pid;
	pi.oom_score_adj = adj;
	pi.rss_kb = rss_kb;
	pi.state = 'S';
	pi.start_time = 1000 + (uint64_t)pid;
	pi.threads = 1;
	snprintf(pi.comm, sizeof(pi.comm), "p%d", (int)pid);
	if (cgroup) {
		pi.has_cgroup = true;
		snprintf(pi.cgroup, sizeof(pi.cgroup), "%s", cgroup);
	}
	return pi;
}

static void test_scope(void)
{
	CU_ASSERT_TRUE(victim_cgroup_in_scope("/a", "/"));
	CU_ASSERT_TRUE(victim_cgroup_in_scope("/", "/"));
	CU_ASSERT_TRUE(victim_cgroup_in_scope("/a", "/a"));
	CU_ASSERT_TRUE(victim_cgroup_in_scope("/a/b", "/a"));
	CU_ASSERT_FALSE(victim_cgroup_in_scope("/ab", "/a"));
	CU_ASSERT_FALSE(victim_cgroup_in_scope("/", "/a"));
	CU_ASSERT_FALSE(victim_cgroup_in_scope("/b/a", "/a"));
}

static void test_exclusions(void)
{
	struct proc_ident dying = { .pid = 70, .start_time = 1070 };
	struct victim_filter f = { .min_adj = 100, .self = 50, .scope = "/s", .exclude = &dying, .n_exclude = 1 };
	struct proc_info p;

	p = proc(10, 500, 10, "/s");
	CU_ASSERT_EQUAL(victim_check(&f, &p), VICTIM_OK);
	p = proc(1, 500, 10, "/s");
	CU_ASSERT_EQUAL(victim_check(&f, &p), VICTIM_INIT);
	p = proc(50, 500, 10, "/s");
	CU_ASSERT_EQUAL(victim_check(&f, &p), VICTIM_SELF);
	p = proc(11, 500, 0, "/s");
	p.kthread = true;
	CU_ASSERT_EQUAL(victim_check(&f, &p), VICTIM_KTHREAD);
	p = proc(12, -1000, 10, "/s");
	f.min_adj = -1000;
	CU_ASSERT_EQUAL(victim_check(&f, &p), VICTIM_UNKILLABLE);
	f.min_adj = 100;
	p = proc(13, 99, 10, "/s");
	CU_ASSERT_EQUAL(victim_check(&f, &p), VICTIM_BELOW_BAND);
	p = proc(14, 100, 10, "/s/deeper");
	CU_ASSERT_EQUAL(victim_check(&f, &p), VICTIM_OK);
	p = proc(15, 500, 10, "/other");
	CU_ASSERT_EQUAL(victim_check(&f, &p), VICTIM_OUT_OF_SCOPE);
	p = proc(16, 500, 10, NULL);
	CU_ASSERT_EQUAL(victim_check(&f, &p), VICTIM_OUT_OF_SCOPE);
	f.scope = "/";
	CU_ASSERT_EQUAL(victim_check(&f, &p), VICTIM_OK);
	p = proc(17, 500, 10, "/s");
	p.state = 'Z';
	CU_ASSERT_EQUAL(victim_check(&f, &p), VICTIM_DYING);
	/* C3: a leader that called pthread_exit() while its threads run is alive */
	p.threads = 2;
	CU_ASSERT_EQUAL(victim_check(&f, &p), VICTIM_OK);
	p.threads = 0; /* no Threads: line at all: an ordinary zombie */
	CU_ASSERT_EQUAL(victim_check(&f, &p), VICTIM_DYING);
	p.threads = 5;
	p.state = 'X';
	CU_ASSERT_EQUAL(victim_check(&f, &p), VICTIM_DYING);
	p = proc(70, 500, 10, "/s");
	CU_ASSERT_EQUAL(victim_check(&f, &p), VICTIM_DYING);
	/* the same pid reused by another process is a new candidate */
	p.start_time = 99999;
	CU_ASSERT_EQUAL(victim_check(&f, &p), VICTIM_OK);
	CU_ASSERT_STRING_EQUAL(victim_verdict_name(VICTIM_OUT_OF_SCOPE), "out-of-scope");
	CU_ASSERT_STRING_EQUAL(victim_verdict_name(VICTIM_OTHER_OWNER), "other-owner");
}

/* M8: a path too deep for the old 1 KiB field is still in scope, and a path
 * the kernel would not print (unknown) is inside every scope: hiding where one
 * is must never take a process out of the killer's reach. */
static void test_scope_unknown(void)
{
	struct victim_filter f = { .min_adj = 0, .self = 50, .scope = "/user.slice" };
	struct proc_info p = proc(10, 500, 10, NULL);
	size_t n;

	strcpy(p.cgroup, "/user.slice/user-1000.slice/user@1000.service");
	for (n = strlen(p.cgroup); n + 201 < 3000; n += 201)
		strcat(p.cgroup, "/dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd"
				 "ddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd"
				 "dddddddddddd");
	CU_ASSERT_TRUE_FATAL(strlen(p.cgroup) > 2000 && strlen(p.cgroup) < sizeof(p.cgroup));
	p.has_cgroup = true;
	CU_ASSERT_EQUAL(victim_check(&f, &p), VICTIM_OK);
	/* unknown: a candidate in any non-root scope */
	p.has_cgroup = false;
	p.cgroup[0] = '\0';
	p.cgroup_unknown = true;
	CU_ASSERT_EQUAL(victim_check(&f, &p), VICTIM_OK);
	f.scope = "/system.slice/other.service";
	CU_ASSERT_EQUAL(victim_check(&f, &p), VICTIM_OK);
	/* ... but not in a strict scope (a kill for one managed unit,
	 * daemon-moom.c): a user's deep tree must not be reached from another
	 * unit's kill; the root scope still holds it */
	f.strict_scope = true;
	CU_ASSERT_EQUAL(victim_check(&f, &p), VICTIM_OUT_OF_SCOPE);
	f.scope = "/";
	CU_ASSERT_EQUAL(victim_check(&f, &p), VICTIM_OK);
	p.has_cgroup = true;
	p.cgroup_unknown = false;
	strcpy(p.cgroup, "/system.slice/other.service/x");
	f.scope = "/system.slice/other.service";
	CU_ASSERT_EQUAL(victim_check(&f, &p), VICTIM_OK);
	strcpy(p.cgroup, "/system.slice/other.service2");
	CU_ASSERT_EQUAL(victim_check(&f, &p), VICTIM_OUT_OF_SCOPE);
	p.has_cgroup = false;
	p.cgroup[0] = '\0';
	p.cgroup_unknown = true;
	f.strict_scope = false;
	CU_ASSERT_EQUAL(victim_check(&f, &p), VICTIM_OK);
	/* no cgroup2 line at all is still only in "/" */
	p.cgroup_unknown = false;
	CU_ASSERT_EQUAL(victim_check(&f, &p), VICTIM_OUT_OF_SCOPE);
}

static void test_order(void)
{
	struct proc_info a = proc(10, 900, 100, "/"), b = proc(11, 800, 10000, "/");

	CU_ASSERT_TRUE(victim_better(&a, &b)); /* adj first */
	CU_ASSERT_FALSE(victim_better(&b, &a));
	b.oom_score_adj = 900;
	CU_ASSERT_TRUE(victim_better(&b, &a)); /* then RSS */
	b.rss_kb = 100;
	CU_ASSERT_TRUE(victim_better(&b, &a)); /* then the younger one */
	b.start_time = a.start_time;
	CU_ASSERT_TRUE(victim_better(&b, &a)); /* then the larger pid: total order */
	CU_ASSERT_FALSE(victim_better(&a, &a));
}

#define MIB_KB 1024ULL

/* mm/oom_kill.c's oom_badness in kB: RSS + swap + page tables, plus adj
 * thousandths of the domain */
static void test_badness_formula(void)
{
	struct proc_info p = proc(10, 0, 1000, "/");

	p.swap_kb = 200;
	p.pte_kb = 30;
	CU_ASSERT_EQUAL(victim_badness_kb(&p, 512 * MIB_KB), 1230);
	/* adj 300 weighs 30 % of a 512 MiB group: 153.6 MiB */
	p.oom_score_adj = 300;
	CU_ASSERT_EQUAL(victim_badness_kb(&p, 512 * MIB_KB), 1230 + 157286);
	CU_ASSERT_EQUAL(victim_badness_kb(&p, 1000), 1230 + 300);
	/* a negative adj takes away: a small process goes below zero */
	p.oom_score_adj = -500;
	CU_ASSERT_EQUAL(victim_badness_kb(&p, 512 * MIB_KB), 1230 - 262144);
	p.oom_score_adj = 1000;
	CU_ASSERT_EQUAL(victim_badness_kb(&p, 512 * MIB_KB), 1230 + 524288);
	/* whatever /proc and the domain say, no overflow: still positive and ordered */
	p.rss_kb = p.swap_kb = p.pte_kb = UINT64_MAX;
	CU_ASSERT_TRUE(victim_badness_kb(&p, UINT64_MAX) > 0);
	p.oom_score_adj = -999;
	CU_ASSERT_TRUE(victim_badness_kb(&p, UINT64_MAX) > 0);
	CU_ASSERT_TRUE(victim_badness_kb(&p, UINT64_MAX) < INT64_MAX);
}

/* Issue 27 item 4: 1 GiB of RAM and 1 GiB of swap; a renderer (adj 300)
 * idles at 300 MiB while a runaway (adj 0) grew from 100 to 350 MiB. By
 * badness alone the renderer (300 MiB + 30 % of 2 GiB) dies; the runaway
 * grew by more than culprit_kb, so it goes first. Two culprits: the larger
 * growth first; growth unknown (culprit_kb 0) or the adj order: as before. */
static void test_order_culprit(void)
{
	struct proc_info list[] = {
		proc(100, 300, 300 * MIB_KB, "/d"), /* renderer, idle */
		proc(101, 0, 350 * MIB_KB, "/d"),   /* runaway */
		proc(102, 0, 40 * MIB_KB, "/d"),    /* editor, grew a little */
		proc(103, 1000, 8 * MIB_KB, "/d"),  /* marked expendable, idle */
	};
	struct victim_filter f = { .min_adj = 0, .self = 1, .scope = "/", .domain_kb = 2048 * MIB_KB,
				   .order = VICTIM_ORDER_BADNESS };
	size_t n = sizeof(list) / sizeof(list[0]);

	list[1].growth_kb = 250 * MIB_KB;
	list[2].growth_kb = 10 * MIB_KB;
	CU_ASSERT_EQUAL(victim_choose(&f, list, n), 3); /* growth not known: adj 1000 weighs 2 GiB */
	CU_ASSERT_FALSE(list[1].culprit);
	f.culprit_kb = 20 * MIB_KB;
	CU_ASSERT_EQUAL(victim_choose(&f, list, n), 1);
	CU_ASSERT_TRUE(list[1].culprit);
	CU_ASSERT_FALSE(list[2].culprit); /* 10 MiB is not a real share */
	/* two culprits: the larger growth, not the larger badness */
	list[2].growth_kb = 30 * MIB_KB;
	list[0].growth_kb = 25 * MIB_KB;
	CU_ASSERT_EQUAL(victim_choose(&f, list, n), 1);
	list[1].growth_kb = 26 * MIB_KB;
	CU_ASSERT_EQUAL(victim_choose(&f, list, n), 2);
	/* the prefer/avoid class still comes first */
	list[3].preference = 0;
	f.domain_kb = 0; /* no domain: no badness, no culprits */
	CU_ASSERT_EQUAL(victim_choose(&f, list, n), 3);
	CU_ASSERT_FALSE(list[2].culprit);
	f.domain_kb = 2048 * MIB_KB;
	f.order = VICTIM_ORDER_ADJ; /* Android's order: adj ranks alone */
	CU_ASSERT_EQUAL(victim_choose(&f, list, n), 3);
	CU_ASSERT_FALSE(list[2].culprit);
}

/* Issue 27 item 4, on stall: a 256 MiB desktop group where a reader
 * thrashes a mapped file (adj 0, 2 MiB of its own, 900 MiB read since the
 * sample) beside an idle renderer (adj 300, 64 MiB) and an editor that read
 * 3 MiB. By badness the renderer dies; the reader read more than reader_kb,
 * so it goes first -- unless somebody grew by culprit_kb, and never without
 * reader_kb (a choice on low memory, or reads not sampled). */
static void test_order_reader(void)
{
	struct proc_info list[] = {
		proc(100, 300, 64 * MIB_KB, "/d"), /* renderer, idle */
		proc(101, 0, 2 * MIB_KB, "/d"),    /* reader */
		proc(102, 0, 16 * MIB_KB, "/d"),   /* editor */
	};
	struct victim_filter f = { .min_adj = 0, .self = 1, .scope = "/", .domain_kb = 256 * MIB_KB,
				   .order = VICTIM_ORDER_BADNESS, .culprit_kb = 4 * MIB_KB };
	size_t n = sizeof(list) / sizeof(list[0]);

	list[1].read_kb = 900 * MIB_KB;
	list[2].read_kb = 3 * MIB_KB;
	CU_ASSERT_EQUAL(victim_choose(&f, list, n), 0); /* reads not known */
	CU_ASSERT_FALSE(list[1].reader);
	f.reader_kb = 4 * MIB_KB;
	CU_ASSERT_EQUAL(victim_choose(&f, list, n), 1);
	CU_ASSERT_TRUE(list[1].reader);
	CU_ASSERT_FALSE(list[2].reader); /* 3 MiB is below the line */
	/* two readers: the larger reads, not the larger badness */
	list[2].read_kb = 901 * MIB_KB;
	CU_ASSERT_EQUAL(victim_choose(&f, list, n), 2);
	/* a culprit comes before any reader, and is no reader itself */
	list[0].growth_kb = 5 * MIB_KB;
	list[0].read_kb = 999 * MIB_KB;
	CU_ASSERT_EQUAL(victim_choose(&f, list, n), 0);
	CU_ASSERT_TRUE(list[0].culprit);
	CU_ASSERT_FALSE(list[0].reader);
	list[0].growth_kb = 0;
	list[0].read_kb = 0;
	/* no culprit line (culprit_growth off): reads do not rank either */
	f.culprit_kb = 0;
	CU_ASSERT_EQUAL(victim_choose(&f, list, n), 0);
	CU_ASSERT_FALSE(list[2].reader);
	/* Android's order: adj ranks alone */
	f.culprit_kb = 4 * MIB_KB;
	f.order = VICTIM_ORDER_ADJ;
	CU_ASSERT_EQUAL(victim_choose(&f, list, n), 0);
	CU_ASSERT_FALSE(list[2].reader);
}

/* Issue 18: a desktop group of 512 MiB with a sound server (adj 200, 24
 * MiB), a tab renderer (300, 64 MiB), an editor (0, 16 MiB) and a runaway
 * (0, 360 MiB). adj order kills the renderer, then the sound server; the
 * kernel's order kills the runaway alone. */
static void test_order_badness(void)
{
	struct proc_info list[] = {
		proc(100, 200, 24 * MIB_KB, "/d"), /* sound server */
		proc(101, 300, 64 * MIB_KB, "/d"), /* renderer */
		proc(102, 0, 16 * MIB_KB, "/d"),   /* editor */
		proc(103, 0, 360 * MIB_KB, "/d"),  /* runaway */
	};
	struct victim_filter f = { .min_adj = 0, .self = 1, .scope = "/", .domain_kb = 512 * MIB_KB };
	size_t n = sizeof(list) / sizeof(list[0]);

	f.order = VICTIM_ORDER_ADJ;
	CU_ASSERT_EQUAL(victim_choose(&f, list, n), 1);
	/* the scores are set in either order, for the kill line */
	CU_ASSERT_EQUAL(list[1].badness_kb, (int64_t)(64 * MIB_KB + 512 * MIB_KB * 300 / 1000));
	CU_ASSERT_EQUAL(list[3].badness_kb, (int64_t)(360 * MIB_KB));
	f.order = VICTIM_ORDER_BADNESS;
	CU_ASSERT_EQUAL(victim_choose(&f, list, n), 3);
	/* swap counts like RSS: an editor swapped out more than the runaway holds */
	list[2].swap_kb = 400 * MIB_KB;
	CU_ASSERT_EQUAL(victim_choose(&f, list, n), 2);
	list[2].swap_kb = 0;
	/* page tables too */
	list[2].pte_kb = 345 * MIB_KB;
	CU_ASSERT_EQUAL(victim_choose(&f, list, n), 2);
	list[2].pte_kb = 0;
	/* early, while the runaway is small, the renderer weighs more (the
	 * kernel would kill it too): adj still counts, as a share of memory */
	list[3].rss_kb = 200 * MIB_KB;
	CU_ASSERT_EQUAL(victim_choose(&f, list, n), 1);
	/* the same processes in the whole of a 16 GiB machine: adj dominates */
	list[3].rss_kb = 360 * MIB_KB;
	f.domain_kb = 16384 * MIB_KB;
	CU_ASSERT_EQUAL(victim_choose(&f, list, n), 1);
	/* no domain (unreadable): the adj order, and no score */
	f.domain_kb = 0;
	CU_ASSERT_EQUAL(victim_choose(&f, list, n), 1);
	CU_ASSERT_EQUAL(list[3].badness_kb, VICTIM_BADNESS_UNKNOWN);
	f.domain_kb = 512 * MIB_KB;

	/* the band still bounds it: a tier for adj >= 200 never takes the runaway */
	f.min_adj = 200;
	CU_ASSERT_EQUAL(victim_choose(&f, list, n), 1);
	CU_ASSERT_EQUAL(victim_check(&f, &list[3]), VICTIM_BELOW_BAND);
	f.min_adj = 0;
}

/* prefer > neutral > avoid comes before the score, as before adj */
static void test_order_badness_classes(void)
{
	regex_t prefer, avoid;
	struct victim_policy pol = { 0 };
	struct proc_info list[] = {
		proc(200, 0, 300 * MIB_KB, "/d"), /* p200: the largest score */
		proc(201, 0, 10 * MIB_KB, "/d"),  /* p201: small, preferred */
		proc(202, 0, 20 * MIB_KB, "/d"),  /* p202 */
	};
	struct victim_filter f = { .policy = &pol, .min_adj = 0, .self = 1, .scope = "/",
				   .order = VICTIM_ORDER_BADNESS, .domain_kb = 512 * MIB_KB };

	CU_ASSERT_EQUAL_FATAL(regcomp(&prefer, "^p201$", REG_EXTENDED | REG_NOSUB), 0);
	CU_ASSERT_EQUAL_FATAL(regcomp(&avoid, "^p200$", REG_EXTENDED | REG_NOSUB), 0);
	CU_ASSERT_EQUAL(victim_choose(&f, list, 3), 0);
	pol.prefer = &prefer;
	CU_ASSERT_EQUAL(victim_choose(&f, list, 3), 1);
	pol.prefer = NULL;
	pol.avoid = &avoid;
	CU_ASSERT_EQUAL(victim_choose(&f, list, 3), 2); /* all its uids are 0: the shield counts */
	/* equal scores: then adj, RSS, youth, pid, as in the adj order */
	list[0].badness_kb = list[2].badness_kb = 5;
	list[0].preference = list[2].preference = 0;
	CU_ASSERT_TRUE(victim_better_in(VICTIM_ORDER_BADNESS, &list[0], &list[2]));
	list[2].rss_kb = list[0].rss_kb + 1;
	CU_ASSERT_TRUE(victim_better_in(VICTIM_ORDER_BADNESS, &list[2], &list[0]));
	list[0].badness_kb = 6;
	CU_ASSERT_TRUE(victim_better_in(VICTIM_ORDER_BADNESS, &list[0], &list[2]));
	CU_ASSERT_FALSE(victim_better_in(VICTIM_ORDER_ADJ, &list[0], &list[2]));
	CU_ASSERT_FALSE(victim_better_in(VICTIM_ORDER_BADNESS, &list[0], &list[0]));
	regfree(&prefer);
	regfree(&avoid);
}

/* The OOM domain: RAM + swap, or a group's limit plus the swap it may use */
static void test_domain(void)
{
	char root[] = "/tmp/test-domain.XXXXXX", cmd[600];
	uint64_t mem, swap, kb = 0;
	int rootfd;

	CU_ASSERT_EQUAL(domain_parse_meminfo("MemTotal:  24000 kB\nMemFree: 1 kB\nSwapTotal:  8000 kB\n", &mem, &swap), 0);
	CU_ASSERT_EQUAL(mem, 24000);
	CU_ASSERT_EQUAL(swap, 8000);
	CU_ASSERT_EQUAL(domain_parse_meminfo("MemTotal: 24000 kB\n", &mem, &swap), 0);
	CU_ASSERT_EQUAL(swap, 0);
	CU_ASSERT_EQUAL(domain_parse_meminfo("MemFree: 1 kB\n", &mem, &swap), -EINVAL);
	CU_ASSERT_EQUAL(domain_parse_meminfo("MemTotal: x kB\n", &mem, &swap), -EINVAL);
	CU_ASSERT_EQUAL(domain_parse_meminfo("MemTotal: 1 kB\nSwapTotal: y\n", &mem, &swap), -EINVAL);
	/* the swap a group may use is at most what there is */
	CU_ASSERT_EQUAL(domain_cgroup_kb(512 << 20, 0, 8000), 512 * 1024);
	CU_ASSERT_EQUAL(domain_cgroup_kb(512 << 20, 1 << 20, 8000), 512 * 1024 + 1024);
	CU_ASSERT_EQUAL(domain_cgroup_kb(512 << 20, UINT64_MAX, 8000), 512 * 1024 + 8000);

	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(root));
	rootfd = sysroot_open(root);
	CU_ASSERT_FATAL(rootfd >= 0);
	fixture_mkdir(root, "proc");
	fixture_put(root, "proc/meminfo", "MemTotal: 1000000 kB\nMemAvailable: 600 kB\nSwapTotal: 4096 kB\n");
	fixture_mkdir(root, "v2");
	fixture_put(root, "v2/memory.max", "536870912\n");
	fixture_put(root, "v2/memory.swap.max", "0\n");
	fixture_mkdir(root, "v2swap");
	fixture_put(root, "v2swap/memory.max", "536870912\n");
	fixture_put(root, "v2swap/memory.swap.max", "max\n");
	fixture_mkdir(root, "v1");
	fixture_put(root, "v1/memory.limit_in_bytes", "134217728\n");
	fixture_put(root, "v1/memory.memsw.limit_in_bytes", "136314880\n");
	fixture_mkdir(root, "v1nosw");
	fixture_put(root, "v1nosw/memory.limit_in_bytes", "134217728\n");
	fixture_put(root, "v1nosw/memory.memsw.limit_in_bytes", "9223372036854771712\n");
	fixture_put(root, "v1nosw/memory.swappiness", "0\n");
	fixture_mkdir(root, "nolimit");
	fixture_put(root, "nolimit/memory.max", "max\n");
	fixture_mkdir(root, "v1nolimit");
	fixture_put(root, "v1nolimit/memory.limit_in_bytes", "9223372036854771712\n");

	CU_ASSERT_EQUAL(domain_read(rootfd, "", &kb), 0);
	CU_ASSERT_EQUAL(kb, 1000000 + 4096);
	CU_ASSERT_EQUAL(domain_read(rootfd, "/v2", &kb), 0);
	CU_ASSERT_EQUAL(kb, 512 * 1024);
	CU_ASSERT_EQUAL(domain_read(rootfd, "/v2swap", &kb), 0);
	CU_ASSERT_EQUAL(kb, 512 * 1024 + 4096);
	CU_ASSERT_EQUAL(domain_read(rootfd, "/v1", &kb), 0);
	CU_ASSERT_EQUAL(kb, 128 * 1024 + 2048);
	CU_ASSERT_EQUAL(domain_read(rootfd, "/v1nosw", &kb), 0);
	CU_ASSERT_EQUAL(kb, 128 * 1024);
	/* no limit: the group's OOM is the system's */
	CU_ASSERT_EQUAL(domain_read(rootfd, "/nolimit", &kb), 0);
	CU_ASSERT_EQUAL(kb, 1000000 + 4096);
	CU_ASSERT_EQUAL(domain_read(rootfd, "/v1nolimit", &kb), 0);
	CU_ASSERT_EQUAL(kb, 1000000 + 4096);
	CU_ASSERT_EQUAL(domain_read(rootfd, "/missing", &kb), -ENOENT);
	fixture_put(root, "proc/meminfo", "MemFree: 1 kB\n");
	CU_ASSERT_EQUAL(domain_read(rootfd, "", &kb), -EINVAL);
	close(rootfd);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	CU_ASSERT_EQUAL(system(cmd), 0);
}

static void test_choose_bands(void)
{
	struct proc_info list[] = {
		proc(100, 0, 5000, "/t"),   proc(101, 300, 4000, "/t"), proc(102, 700, 3000, "/t"),
		proc(103, 950, 1000, "/t"), proc(104, 100, 90000, "/t"), proc(105, 999, 1, "/elsewhere"),
	};
	struct victim_filter f = { .min_adj = 200, .self = 1, .scope = "/t" };
	size_t n = sizeof(list) / sizeof(list[0]);
	ssize_t i;

	i = victim_choose(&f, list, n);
	CU_ASSERT_EQUAL_FATAL(i, 3);
	list[3].state = 'Z';
	i = victim_choose(&f, list, n);
	CU_ASSERT_EQUAL_FATAL(i, 2);
	list[2].state = 'Z';
	i = victim_choose(&f, list, n);
	CU_ASSERT_EQUAL_FATAL(i, 1);
	list[1].state = 'Z';
	CU_ASSERT_EQUAL(victim_choose(&f, list, n), -1);
	f.min_adj = 0;
	CU_ASSERT_EQUAL(victim_choose(&f, list, n), 4); /* adj 100 beats adj 0 whatever the RSS */
	CU_ASSERT_EQUAL(victim_choose(&f, list, 0), -1);
}

static void test_policy(void)
{
	regex_t protect, prefer, avoid, prefer_cmd;
	struct victim_policy pol = { 0 };
	struct victim_filter f = { .policy = &pol, .min_adj = 0, .self = 1, .scope = "/" };
	struct proc_info list[4];
	ssize_t i;

	CU_ASSERT_EQUAL_FATAL(regcomp(&protect, "^(sshd|Xorg)$", REG_EXTENDED | REG_NOSUB), 0);
	CU_ASSERT_EQUAL_FATAL(regcomp(&prefer, "^chrom", REG_EXTENDED | REG_NOSUB), 0);
	CU_ASSERT_EQUAL_FATAL(regcomp(&avoid, "^(editor|chromium-keep)$", REG_EXTENDED | REG_NOSUB), 0);
	CU_ASSERT_EQUAL_FATAL(regcomp(&prefer_cmd, "--type=renderer", REG_EXTENDED | REG_NOSUB), 0);
	pol.protect = &protect;

	/* protect beats everything, even the highest adj */
	list[0] = proc(10, 1000, 9000, "/");
	strcpy(list[0].comm, "sshd");
	list[1] = proc(11, 100, 10, "/");
	CU_ASSERT_EQUAL(victim_check(&f, &list[0]), VICTIM_PROTECTED);
	CU_ASSERT_EQUAL(victim_choose(&f, list, 2), 1);

	/* min_rss: small processes are skipped, whatever their adj */
	pol.min_rss_kb = 4096;
	list[0] = proc(10, 1000, 4095, "/");
	list[1] = proc(11, 0, 4096, "/");
	CU_ASSERT_EQUAL(victim_check(&f, &list[0]), VICTIM_SMALL);
	CU_ASSERT_EQUAL(victim_choose(&f, list, 2), 1);
	pol.min_rss_kb = 0;

	/* prefer: before every neutral candidate of the band, even with a lower adj */
	pol.prefer = &prefer;
	pol.avoid = &avoid;
	list[0] = proc(10, 900, 9000, "/");
	strcpy(list[0].comm, "make");
	list[1] = proc(11, 300, 10, "/");
	strcpy(list[1].comm, "chrome");
	list[2] = proc(12, 950, 10, "/");
	strcpy(list[2].comm, "editor");
	i = victim_choose(&f, list, 3);
	CU_ASSERT_EQUAL(i, 1);
	CU_ASSERT_EQUAL(list[1].preference, 1);
	CU_ASSERT_EQUAL(list[2].preference, -1);
	/* avoid: only when nothing else is left */
	list[1].state = 'Z';
	CU_ASSERT_EQUAL(victim_choose(&f, list, 3), 0);
	list[0].state = 'Z';
	CU_ASSERT_EQUAL(victim_choose(&f, list, 3), 2);
	/* avoid wins over prefer when both match */
	list[3] = proc(13, 500, 10, "/");
	strcpy(list[3].comm, "chromium-keep");
	CU_ASSERT_EQUAL(victim_preference(&f, &list[3]), -1);
	/* the band still applies to preferred processes */
	f.min_adj = 600;
	list[1].state = 'S';
	CU_ASSERT_EQUAL(victim_check(&f, &list[1]), VICTIM_BELOW_BAND);
	f.min_adj = 0;

	/* command-line rules read the cmdline only when set */
	CU_ASSERT_FALSE(victim_needs_cmdline(&f));
	pol.prefer_cmdline = &prefer_cmd;
	CU_ASSERT_TRUE(victim_needs_cmdline(&f));
	list[0] = proc(10, 100, 10, "/");
	list[0].has_cmdline = true;
	strcpy(list[0].cmdline, "/opt/app --type=renderer --lang=en");
	CU_ASSERT_EQUAL(victim_preference(&f, &list[0]), 1);
	list[0].has_cmdline = false;
	CU_ASSERT_EQUAL(victim_preference(&f, &list[0]), 0);

	regfree(&protect);
	regfree(&prefer);
	regfree(&avoid);
	regfree(&prefer_cmd);
}


static void set_uids(struct proc_info *p, uid_t r, uid_t e, uid_t s, uid_t fs)
{
	p->uid = r;
	p->uids[0] = r;
	p->uids[1] = e;
	p->uids[2] = s;
	p->uids[3] = fs;
}

/* C2: a name or command-line shield counts for everyone only when all four
 * uids of the process are system uids. */
static void test_trust_by_uid(void)
{
	regex_t protect, avoid, protect_cmd;
	struct victim_policy pol = { 0 };
	struct victim_filter f = { .policy = &pol, .min_adj = 0, .self = 1, .scope = "/", .trusted_uid_max = 999 };
	struct proc_info p;
	struct victim_pick pk;
	int i;

	CU_ASSERT_EQUAL_FATAL(regcomp(&protect, "^sshd$", REG_EXTENDED | REG_NOSUB), 0);
	CU_ASSERT_EQUAL_FATAL(regcomp(&avoid, "^editor$", REG_EXTENDED | REG_NOSUB), 0);
	CU_ASSERT_EQUAL_FATAL(regcomp(&protect_cmd, "^/usr/sbin/sshd", REG_EXTENDED | REG_NOSUB), 0);
	pol.protect = &protect;
	pol.avoid = &avoid;
	pol.protect_cmdline = &protect_cmd;

	p = proc(10, 500, 1000, "/");
	strcpy(p.comm, "sshd");
	set_uids(&p, 0, 0, 0, 0);
	CU_ASSERT_TRUE(victim_identity_trusted(&p, 999));
	CU_ASSERT_EQUAL(victim_check(&f, &p), VICTIM_PROTECTED);
	set_uids(&p, 999, 999, 999, 999);
	CU_ASSERT_EQUAL(victim_check(&f, &p), VICTIM_PROTECTED);
	/* a user's process named sshd: the shield does not count here... */
	set_uids(&p, 1000, 1000, 1000, 1000);
	CU_ASSERT_FALSE(victim_identity_trusted(&p, 999));
	CU_ASSERT_EQUAL(victim_check(&f, &p), VICTIM_OK);
	memset(&pk, 0, sizeof(pk));
	CU_ASSERT_TRUE(victim_offer(&f, &pk, &p));
	CU_ASSERT_TRUE(p.shield_ignored);
	/* ...but it does where every shield counts (the owner's own choice) */
	f.all_shields = true;
	CU_ASSERT_EQUAL(victim_check(&f, &p), VICTIM_PROTECTED);
	f.all_shields = false;
	/* every one of the four uids counts: real, effective, saved, fs */
	for (i = 0; i < 4; i++) {
		set_uids(&p, 0, 0, 0, 0);
		p.uids[i] = 60001;
		if (i == 0)
			p.uid = 60001;
		CU_ASSERT_FALSE(victim_identity_trusted(&p, 999));
		CU_ASSERT_EQUAL(victim_check(&f, &p), VICTIM_OK);
	}
	/* trusted_uid_max moves the line */
	set_uids(&p, 1000, 1000, 1000, 1000);
	f.trusted_uid_max = 1000;
	CU_ASSERT_EQUAL(victim_check(&f, &p), VICTIM_PROTECTED);
	f.trusted_uid_max = 999;
	/* the command line is no identity either */
	p = proc(11, 500, 1000, "/");
	set_uids(&p, 1000, 1000, 1000, 1000);
	p.has_cmdline = true;
	strcpy(p.cmdline, "/usr/sbin/sshd -D");
	CU_ASSERT_EQUAL(victim_check(&f, &p), VICTIM_OK);
	set_uids(&p, 0, 0, 0, 0);
	CU_ASSERT_EQUAL(victim_check(&f, &p), VICTIM_PROTECTED);

	/* avoid: the same rule */
	p = proc(12, 500, 1000, "/");
	strcpy(p.comm, "editor");
	set_uids(&p, 0, 0, 0, 0);
	CU_ASSERT_EQUAL(victim_preference(&f, &p), -1);
	set_uids(&p, 1000, 1000, 1000, 1000);
	CU_ASSERT_EQUAL(victim_preference(&f, &p), 0);
	memset(&pk, 0, sizeof(pk));
	CU_ASSERT_TRUE(victim_offer(&f, &pk, &p));
	CU_ASSERT_TRUE(p.shield_ignored);
	CU_ASSERT_EQUAL(p.preference, 0);
	f.all_shields = true;
	CU_ASSERT_EQUAL(victim_preference(&f, &p), -1);
	f.all_shields = false;
	/* no shield matched: nothing ignored */
	strcpy(p.comm, "make");
	memset(&pk, 0, sizeof(pk));
	CU_ASSERT_TRUE(victim_offer(&f, &pk, &p));
	CU_ASSERT_FALSE(p.shield_ignored);
	/* a zero filter trusts root only */
	f.trusted_uid_max = 0;
	p = proc(13, 500, 1000, "/");
	strcpy(p.comm, "sshd");
	set_uids(&p, 1, 1, 1, 1);
	CU_ASSERT_EQUAL(victim_check(&f, &p), VICTIM_OK);

	regfree(&protect);
	regfree(&avoid);
	regfree(&protect_cmd);
}

/* cgroup shields count for everyone only on groups no user owns
 * (pi->cgroup_trusted, found by the pick); elsewhere they are owner-scoped. */
static void test_trust_by_cgroup(void)
{
	regex_t protect_cg, avoid_cg;
	struct victim_policy pol = { 0 };
	struct victim_filter f = { .policy = &pol, .min_adj = 0, .self = 1, .scope = "/", .trusted_uid_max = 999 };
	struct proc_info p;

	CU_ASSERT_EQUAL_FATAL(regcomp(&protect_cg, "^/system\\.slice/ssh\\.service$", REG_EXTENDED | REG_NOSUB), 0);
	CU_ASSERT_EQUAL_FATAL(regcomp(&avoid_cg, "/keep\\.scope$", REG_EXTENDED | REG_NOSUB), 0);
	p = proc(10, 500, 1000, "/system.slice/ssh.service");
	set_uids(&p, 1000, 1000, 1000, 1000);
	CU_ASSERT_FALSE(victim_cgroup_rule_matches(&f, &p)); /* no rule yet */
	pol.protect_cgroup = &protect_cg;
	pol.avoid_cgroup = &avoid_cg;
	CU_ASSERT_TRUE(victim_cgroup_rule_matches(&f, &p));
	/* a user's session process left in ssh.service: the group is root's */
	p.cgroup_trusted = true;
	CU_ASSERT_EQUAL(victim_check(&f, &p), VICTIM_PROTECTED);
	p.cgroup_trusted = false;
	CU_ASSERT_EQUAL(victim_check(&f, &p), VICTIM_OK);
	f.all_shields = true;
	CU_ASSERT_EQUAL(victim_check(&f, &p), VICTIM_PROTECTED);
	f.all_shields = false;
	/* the path must match: a trusted but unmatched group shields nothing */
	p = proc(11, 500, 1000, "/system.slice/ssh.service/x");
	p.cgroup_trusted = true;
	CU_ASSERT_FALSE(victim_cgroup_rule_matches(&f, &p));
	CU_ASSERT_EQUAL(victim_check(&f, &p), VICTIM_OK);
	/* avoid_cgroup */
	p = proc(12, 500, 1000, "/user.slice/u/keep.scope");
	set_uids(&p, 1000, 1000, 1000, 1000);
	CU_ASSERT_TRUE(victim_cgroup_rule_matches(&f, &p));
	CU_ASSERT_EQUAL(victim_preference(&f, &p), 0);
	p.cgroup_trusted = true;
	CU_ASSERT_EQUAL(victim_preference(&f, &p), -1);
	/* no known path: no cgroup rule can match */
	p.has_cgroup = false;
	p.cgroup_unknown = true;
	CU_ASSERT_FALSE(victim_cgroup_rule_matches(&f, &p));
	regfree(&protect_cg);
	regfree(&avoid_cg);
}

/* systemd's marks (pi->oomd_pref, found by the pick): omit shields like
 * protect, avoid like avoid; each counts for everyone only when the marked
 * group and its ancestors are owned by trusted uids (pi->oomd_trusted), else
 * only where every shield counts (the owner's pass). No policy needed. */
static void test_oomd_marks(void)
{
	struct victim_filter f = { .min_adj = 100, .self = 1, .scope = "/", .trusted_uid_max = 999 };
	struct victim_pick pk = { .found = false };
	struct proc_info p;

	p = proc(10, 500, 1000, "/user.slice/user-1000.slice/session-2.scope");
	set_uids(&p, 1000, 1000, 1000, 1000);
	CU_ASSERT_EQUAL(victim_check(&f, &p), VICTIM_OK);
	p.oomd_pref = OOMD_PREF_OMIT;
	p.oomd_trusted = true;
	CU_ASSERT_EQUAL(victim_check(&f, &p), VICTIM_PROTECTED);
	CU_ASSERT_FALSE(victim_offer(&f, &pk, &p));
	/* a user's own mark: ignored here, and said so... */
	p.oomd_trusted = false;
	CU_ASSERT_EQUAL(victim_check(&f, &p), VICTIM_OK);
	CU_ASSERT_TRUE(victim_offer(&f, &pk, &p));
	CU_ASSERT_TRUE(p.shield_ignored);
	/* ...and counted among the owner's processes */
	f.all_shields = true;
	CU_ASSERT_EQUAL(victim_check(&f, &p), VICTIM_PROTECTED);
	f.all_shields = false;

	/* avoid: last in the band when it counts */
	p = proc(11, 500, 1000, "/system.slice/foo.service");
	p.oomd_pref = OOMD_PREF_AVOID;
	p.oomd_trusted = true;
	CU_ASSERT_EQUAL(victim_check(&f, &p), VICTIM_OK);
	CU_ASSERT_EQUAL(victim_preference(&f, &p), -1);
	p.oomd_trusted = false;
	CU_ASSERT_EQUAL(victim_preference(&f, &p), 0);
	pk.found = false;
	CU_ASSERT_TRUE(victim_offer(&f, &pk, &p));
	CU_ASSERT_TRUE(p.shield_ignored);
	f.all_shields = true;
	CU_ASSERT_EQUAL(victim_preference(&f, &p), -1);
	f.all_shields = false;
	/* an avoid mark does not protect, an omit mark is no avoid */
	p.oomd_trusted = true;
	CU_ASSERT_EQUAL(victim_check(&f, &p), VICTIM_OK);
	p.oomd_pref = OOMD_PREF_OMIT;
	CU_ASSERT_EQUAL(victim_preference(&f, &p), 0);

	/* a trusted avoid loses to an unmarked process of lower adj */
	{
		struct proc_info list[2];

		list[0] = proc(20, 900, 5000, "/a");
		list[0].oomd_pref = OOMD_PREF_AVOID;
		list[0].oomd_trusted = true;
		list[1] = proc(21, 200, 10, "/b");
		CU_ASSERT_EQUAL(victim_choose(&f, list, 2), 1);
		list[0].oomd_trusted = false; /* untrusted: ordered by adj */
		CU_ASSERT_EQUAL(victim_choose(&f, list, 2), 0);
	}
}

/* Which processes are worth a look at their marks: only those the cheap
 * exclusions let through. */
static void test_needs_oomd(void)
{
	struct proc_ident dying = { .pid = 70, .start_time = 1070 };
	struct victim_policy pol = { .min_rss_kb = 100 };
	struct victim_filter f = { .policy = &pol, .min_adj = 100, .self = 50, .scope = "/s", .exclude = &dying,
				   .n_exclude = 1 };
	struct proc_info p;

	p = proc(10, 500, 1000, "/s/a");
	CU_ASSERT_TRUE(victim_needs_oomd(&f, &p));
	p = proc(11, 99, 1000, "/s/a");
	CU_ASSERT_FALSE(victim_needs_oomd(&f, &p)); /* below the band */
	p = proc(50, 500, 1000, "/s/a");
	CU_ASSERT_FALSE(victim_needs_oomd(&f, &p)); /* self */
	p = proc(1, 500, 1000, "/s/a");
	CU_ASSERT_FALSE(victim_needs_oomd(&f, &p));
	p = proc(12, 500, 1000, "/t");
	CU_ASSERT_FALSE(victim_needs_oomd(&f, &p)); /* out of scope */
	p = proc(13, 500, 1000, NULL);
	CU_ASSERT_FALSE(victim_needs_oomd(&f, &p)); /* no path to look at */
	p = proc(14, 500, 99, "/s/a");
	CU_ASSERT_FALSE(victim_needs_oomd(&f, &p)); /* below min_rss */
	p = proc(70, 500, 1000, "/s/a");
	CU_ASSERT_FALSE(victim_needs_oomd(&f, &p)); /* already signalled */
	p = proc(15, 500, 1000, "/s/a");
	p.state = 'Z';
	CU_ASSERT_FALSE(victim_needs_oomd(&f, &p));
	p = proc(16, 500, 1000, "/s/a");
	p.kthread = true;
	CU_ASSERT_FALSE(victim_needs_oomd(&f, &p));
	p = proc(17, 500, 1000, "/s/a");
	set_uids(&p, 1001, 1001, 1001, 1001);
	f.owner_only = true;
	f.owner = 1000;
	CU_ASSERT_FALSE(victim_needs_oomd(&f, &p)); /* another owner in the owner pass */
	f.owner = 1001;
	CU_ASSERT_TRUE(victim_needs_oomd(&f, &p));
}

/* Owner-only filtering, the second pass's rule. */
static void test_owner_only(void)
{
	struct victim_filter f = { .min_adj = 0, .self = 1, .scope = "/", .owner_only = true, .owner = 1000 };
	struct proc_info p = proc(10, 500, 1000, "/");

	set_uids(&p, 1000, 0, 0, 0);
	CU_ASSERT_EQUAL(victim_check(&f, &p), VICTIM_OK);
	set_uids(&p, 1001, 1000, 1000, 1000); /* the real uid is the owner */
	CU_ASSERT_EQUAL(victim_check(&f, &p), VICTIM_OTHER_OWNER);
	f.owner_only = false;
	CU_ASSERT_EQUAL(victim_check(&f, &p), VICTIM_OK);
}

/* ------------------------------------------------ through pick_choose */

static int open_shield_proc(void)
{
	const char *fx = getenv("FIXTURES");
	char dir[4096];

	snprintf(dir, sizeof(dir), "%s/shield/proc", fx ? fx : "tests/fixtures");
	return sysroot_open(dir);
}

/* C2 on the fixture tree, with the shipped kind of name rule: pid 10 is a
 * 300 MB hog of uid 60001 named "sshd", 11 its 8 MB shell, 20 a 100 MB
 * process of uid 60002, 30 the real sshd (root), all at adj 950. The old
 * rules protected 10 and killed 20, the neighbour. */
static void test_pick_spoofed_name(void)
{
	regex_t protect;
	struct victim_policy pol = { 0 };
	static struct kill_pick pk; /* big: not on the stack */
	struct kill_pick *p = &pk;
	struct pick_ctx c = { .rootfd = -1, .cg2_mount = "", .policy = &pol, .self = 99999, .scope = "/",
			      .trusted_uid_max = 999 };
	/* 80-83 (adj 1000) belong to test_pick_cgroup_shield: out of the way */
	static const struct proc_ident others[] = { { 80, 1080 }, { 81, 1081 }, { 82, 1082 }, { 83, 1083 },
						    { 11, 1011 } };
	struct procfs_scan_stats st;

	CU_ASSERT_EQUAL_FATAL(regcomp(&protect, "^(systemd|sshd)$", REG_EXTENDED | REG_NOSUB), 0);
	pol.protect = &protect;
	c.procfd = open_shield_proc();
	CU_ASSERT_FATAL(c.procfd >= 0);
	c.exclude = others;
	c.n_exclude = 4;

	CU_ASSERT_EQUAL(pick_choose(&c, 950, p, &st), 0);
	CU_ASSERT_TRUE_FATAL(p->pick.found);
	/* the first pass ignored 10's claim and chose it; the owner pass then
	 * honoured it among uid 60001's processes: the shell dies */
	CU_ASSERT_EQUAL(p->pick.best.pid, 11);
	CU_ASSERT_NOT_EQUAL(p->pick.best.pid, 20);
	CU_ASSERT_TRUE(p->owner_pass);
	CU_ASSERT_EQUAL(p->first.pid, 10);
	CU_ASSERT_EQUAL(p->pick.candidates, 3); /* 10, 11, 20; not 30 */

	/* with the shell gone, the owner has nothing else: the hog itself dies */
	c.n_exclude = 5;
	CU_ASSERT_EQUAL(pick_choose(&c, 950, p, &st), 0);
	CU_ASSERT_TRUE_FATAL(p->pick.found);
	CU_ASSERT_EQUAL(p->pick.best.pid, 10);
	CU_ASSERT_TRUE(p->owner_pass);

	/* were uid 60001 a system uid, its "sshd" would be protected: then the
	 * neighbour is the largest left, and no second pass runs */
	c.n_exclude = 4;
	c.trusted_uid_max = 60001;
	CU_ASSERT_EQUAL(pick_choose(&c, 950, p, &st), 0);
	CU_ASSERT_EQUAL(p->pick.best.pid, 20);
	CU_ASSERT_FALSE(p->owner_pass);

	/* C3 on the same tree: the zombie leader 50 (adj 900, RSS only in its
	 * thread 52) is the victim, not the keeper 60 (adj 800) */
	c.trusted_uid_max = 999;
	c.scope = "/zl.slice";
	CU_ASSERT_EQUAL(pick_choose(&c, 800, p, &st), 0);
	CU_ASSERT_TRUE_FATAL(p->pick.found);
	CU_ASSERT_EQUAL(p->pick.best.pid, 50);
	CU_ASSERT_EQUAL(p->pick.best.rss_kb, 40000);

	close(c.procfd);
	regfree(&protect);
}

static int mkdirs(const char *root, const char *rel)
{
	char path[4096];
	size_t i, n;

	n = (size_t)snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (i = strlen(root) + 1; i <= n; i++) {
		if (path[i] != '/' && path[i] != '\0')
			continue;
		path[i] = '\0';
		if (mkdir(path, 0755) < 0 && errno != EEXIST)
			return -errno;
		if (i < n)
			path[i] = '/';
	}
	return 0;
}

static void rm_tree(const char *root)
{
	char cmd[4200];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd) != 0)
		fprintf(stderr, "# could not remove %s\n", root);
}

#define USER_APP "user.slice/user-60001.slice/user@60001.service/app.slice"

/* A cgroup tree: /system.slice/ssh.service (ours: root when run as root),
 * and uid 60001's delegated user@60001.service (chowned to 60001 as root). */
static int make_cgroup_tree(char *root)
{
	char path[4200];

	if (!mkdtemp(root))
		return -errno;
	if (mkdirs(root, "cg/system.slice/ssh.service") < 0 || mkdirs(root, "cg/" USER_APP "/ssh.service") < 0 ||
	    mkdirs(root, "cg/" USER_APP "/term.scope") < 0)
		return -EIO;
	if (geteuid() != 0)
		return 0;
	snprintf(path, sizeof(path), "%s/cg/user.slice/user-60001.slice/user@60001.service", root);
	if (chown(path, 60001, 60001) < 0)
		return -errno;
	snprintf(path, sizeof(path), "%s/cg/" USER_APP, root);
	if (chown(path, 60001, 60001) < 0)
		return -errno;
	snprintf(path, sizeof(path), "%s/cg/" USER_APP "/ssh.service", root);
	return chown(path, 60001, 60001) < 0 ? -errno : 0;
}

static void test_cgroup_path_trusted(void)
{
	char root[] = "/tmp/psi-lmkd-test-cg-XXXXXX";
	uid_t me = geteuid();
	int rootfd;

	CU_ASSERT_EQUAL_FATAL(make_cgroup_tree(root), 0);
	rootfd = sysroot_open(root);
	CU_ASSERT_FATAL(rootfd >= 0);
	/* every directory is ours: trusted exactly when our uid is */
	CU_ASSERT_EQUAL(cgroup_path_trusted(rootfd, "/cg", "/system.slice/ssh.service", me), 1);
	if (me > 0)
		CU_ASSERT_EQUAL(cgroup_path_trusted(rootfd, "/cg", "/system.slice/ssh.service", me - 1), 0);
	CU_ASSERT_EQUAL(cgroup_path_trusted(rootfd, "/cg", "/", me), 1);
	CU_ASSERT_EQUAL(cgroup_path_trusted(rootfd, "/cg", "/no/such/group", me), -ENOENT);
	CU_ASSERT_EQUAL(cgroup_path_trusted(rootfd, "/cg", "/system.slice/../user.slice", me), -EINVAL);
	CU_ASSERT_EQUAL(cgroup_path_trusted(rootfd, "", "/system.slice", me), -EINVAL);
	if (me == 0) {
		/* the delegated directory and everything below it is 60001's */
		CU_ASSERT_EQUAL(cgroup_path_trusted(rootfd, "/cg", "/" USER_APP "/ssh.service", 999), 0);
		CU_ASSERT_EQUAL(cgroup_path_trusted(rootfd, "/cg", "/" USER_APP "/term.scope", 999), 0);
		CU_ASSERT_EQUAL(cgroup_path_trusted(rootfd, "/cg", "/user.slice/user-60001.slice", 999), 1);
		CU_ASSERT_EQUAL(cgroup_path_trusted(rootfd, "/cg", "/" USER_APP "/ssh.service", 60001), 1);
		{
			/* the topmost of 60001's directories: user@60001.service */
			struct stat top, want;
			char path[4200];

			snprintf(path, sizeof(path), "%s/cg/user.slice/user-60001.slice/user@60001.service", root);
			CU_ASSERT_EQUAL_FATAL(stat(path, &want), 0);
			CU_ASSERT_EQUAL(cgroup_path_untrusted(rootfd, "/cg", "/" USER_APP "/ssh.service", 999, &top), 1);
			CU_ASSERT_EQUAL(top.st_ino, want.st_ino);
			CU_ASSERT_EQUAL(top.st_uid, 60001);
			CU_ASSERT_EQUAL(cgroup_path_untrusted(rootfd, "/cg", "/system.slice/ssh.service", 999, &top), 0);
		}
	} else {
		printf("# not root: the delegated-subtree half of the test needs chown\n");
	}
	close(rootfd);
	rm_tree(root);
}

/* C2 with a cgroup rule: 81 (root) in the real /system.slice/ssh.service is
 * protected; 80 (uid 60001) put its hog in a group of the same name inside
 * its own delegated subtree: that shield counts only among 60001's own
 * processes, so its other process 83 dies, never 82 (uid 60002). */
static void test_pick_cgroup_shield(void)
{
	char root[] = "/tmp/psi-lmkd-test-cg-XXXXXX";
	regex_t protect_cg;
	struct victim_policy pol = { 0 };
	static struct kill_pick pk;
	struct kill_pick *p = &pk;
	struct pick_ctx c = { .cg2_mount = "/cg", .policy = &pol, .self = 99999, .scope = "/", .trusted_uid_max = 999 };
	struct procfs_scan_stats st;

	if (geteuid() != 0) {
		printf("# not root: cannot make a directory owned by another uid; skipped\n");
		return;
	}
	CU_ASSERT_EQUAL_FATAL(make_cgroup_tree(root), 0);
	CU_ASSERT_EQUAL_FATAL(regcomp(&protect_cg, "/ssh\\.service$", REG_EXTENDED | REG_NOSUB), 0);
	pol.protect_cgroup = &protect_cg;
	c.procfd = open_shield_proc();
	c.rootfd = sysroot_open(root);
	CU_ASSERT_FATAL(c.procfd >= 0 && c.rootfd >= 0);

	CU_ASSERT_EQUAL(pick_choose(&c, 1000, p, &st), 0);
	CU_ASSERT_TRUE_FATAL(p->pick.found);
	CU_ASSERT_EQUAL(p->pick.best.pid, 83);
	CU_ASSERT_TRUE(p->owner_pass);
	CU_ASSERT_EQUAL(p->first.pid, 80);
	CU_ASSERT_EQUAL(p->pick.candidates, 3); /* 80, 82, 83; 81 is protected */

	/* without a cgroup2 mount nothing can be trusted: 81's shield is then
	 * root's own business, and root's other processes are out of the band */
	c.cg2_mount = "";
	CU_ASSERT_EQUAL(pick_choose(&c, 1000, p, &st), 0);
	CU_ASSERT_EQUAL(p->pick.best.pid, 81);
	CU_ASSERT_TRUE(p->owner_pass);

	close(c.procfd);
	close(c.rootfd);
	regfree(&protect_cg);
	rm_tree(root);
}

/* ------------------------------------------------ systemd's marks on a tree */

/* Sets xattr name=value on ROOT/cg/rel; -errno. */
static int set_mark(const char *root, const char *rel, const char *name, const char *value)
{
	char path[4200];

	snprintf(path, sizeof(path), "%s/cg/%s", root, rel);
	return setxattr(path, name, value, strlen(value), 0) < 0 ? -errno : 0;
}

/* The tree of make_cgroup_tree, plus 60002's session; false (and the case
 * skipped with a note) when the temp dir's file system has no user xattrs. */
static bool make_marked_tree(char *root)
{
	CU_ASSERT_EQUAL_FATAL(make_cgroup_tree(root), 0);
	CU_ASSERT_EQUAL_FATAL(mkdirs(root, "cg/user.slice/user-60002.slice/session-2.scope"), 0);
	if (set_mark(root, "system.slice", "user.probe", "1") < 0) {
		cunit_tap_skip("the temp dir's file system has no user.* extended attributes");
		rm_tree(root);
		return false;
	}
	{
		char path[4200];

		snprintf(path, sizeof(path), "%s/cg/system.slice", root);
		CU_ASSERT_EQUAL(removexattr(path, "user.probe"), 0);
	}
	return true;
}

/* The value of attribute name on root/cg/rel, or "" when absent. */
static void get_mark(const char *root, const char *rel, const char *name, char *v, size_t size)
{
	char path[4200];
	ssize_t n;

	snprintf(path, sizeof(path), "%s/cg/%s", root, rel);
	n = getxattr(path, name, v, size - 1);
	v[n > 0 ? n : 0] = '\0';
}

/* systemd_oom_marks: systemd-oomd's counters, raised on the deepest unit
 * group (.service, .scope) of a path, never on a slice or a sub-group; an
 * unreadable value counts from 0; no unit group: nothing written */
static void test_cgroup_unit_count(void)
{
	char root[] = "/tmp/psi-lmkd-test-cg-XXXXXX", v[32];
	int rootfd;

	if (!make_marked_tree(root))
		return;
	CU_ASSERT_EQUAL_FATAL(mkdirs(root, "cg/system.slice/db.service/worker"), 0);
	rootfd = sysroot_open(root);
	CU_ASSERT_FATAL(rootfd >= 0);
	CU_ASSERT_EQUAL(cgroup_unit_count(rootfd, "/cg", "/system.slice/db.service/worker", CGROUP_OOMD_OOMS, 1), 1);
	CU_ASSERT_EQUAL(cgroup_unit_count(rootfd, "/cg", "/system.slice/db.service/worker", CGROUP_OOMD_KILL, 3), 1);
	CU_ASSERT_EQUAL(cgroup_unit_count(rootfd, "/cg", "/system.slice/db.service", CGROUP_OOMD_OOMS, 1), 1);
	get_mark(root, "system.slice/db.service", CGROUP_OOMD_OOMS, v, sizeof(v));
	CU_ASSERT_STRING_EQUAL(v, "2");
	get_mark(root, "system.slice/db.service", CGROUP_OOMD_KILL, v, sizeof(v));
	CU_ASSERT_STRING_EQUAL(v, "3");
	get_mark(root, "system.slice/db.service/worker", CGROUP_OOMD_OOMS, v, sizeof(v));
	CU_ASSERT_STRING_EQUAL(v, "");
	get_mark(root, "system.slice", CGROUP_OOMD_OOMS, v, sizeof(v));
	CU_ASSERT_STRING_EQUAL(v, "");
	/* the deepest unit: a user's scope inside user@UID.service */
	CU_ASSERT_EQUAL(cgroup_unit_count(rootfd, "/cg", "/" USER_APP "/term.scope", CGROUP_OOMD_OOMS, 1), 1);
	get_mark(root, USER_APP "/term.scope", CGROUP_OOMD_OOMS, v, sizeof(v));
	CU_ASSERT_STRING_EQUAL(v, "1");
	/* garbage counts from 0 */
	CU_ASSERT_EQUAL_FATAL(set_mark(root, "system.slice/ssh.service", CGROUP_OOMD_OOMS, "lots"), 0);
	CU_ASSERT_EQUAL(cgroup_unit_count(rootfd, "/cg", "/system.slice/ssh.service", CGROUP_OOMD_OOMS, 1), 1);
	get_mark(root, "system.slice/ssh.service", CGROUP_OOMD_OOMS, v, sizeof(v));
	CU_ASSERT_STRING_EQUAL(v, "1");
	/* no unit on the path; a path that is not there */
	CU_ASSERT_EQUAL(cgroup_unit_count(rootfd, "/cg", "/system.slice", CGROUP_OOMD_OOMS, 1), 0);
	CU_ASSERT_EQUAL(cgroup_unit_count(rootfd, "/cg", "/system.slice/gone.service", CGROUP_OOMD_OOMS, 1), -ENOENT);
	CU_ASSERT_EQUAL(cgroup_unit_count(rootfd, "/cg", "relative.service", CGROUP_OOMD_OOMS, 1), -EINVAL);
	close(rootfd);
	rm_tree(root);
}

static void test_cgroup_oomd_pref(void)
{
	char root[] = "/tmp/psi-lmkd-test-cg-XXXXXX";
	enum oomd_pref pref;
	bool trusted;
	uid_t me = geteuid();
	int rootfd;

	if (!make_marked_tree(root))
		return;
	rootfd = sysroot_open(root);
	CU_ASSERT_FATAL(rootfd >= 0);
	/* nothing marked */
	CU_ASSERT_EQUAL(cgroup_oomd_pref(rootfd, "/cg", "/system.slice/ssh.service", me, &pref, &trusted), 0);
	CU_ASSERT_EQUAL(pref, OOMD_PREF_NONE);
	/* a mark on an ancestor covers the groups below it; trusted exactly
	 * when the owner (us) is */
	CU_ASSERT_EQUAL_FATAL(set_mark(root, "system.slice", "user.oomd_omit", "1"), 0);
	CU_ASSERT_EQUAL(cgroup_oomd_pref(rootfd, "/cg", "/system.slice/ssh.service", me, &pref, &trusted), 0);
	CU_ASSERT_EQUAL(pref, OOMD_PREF_OMIT);
	CU_ASSERT_TRUE(trusted);
	if (me > 0) {
		CU_ASSERT_EQUAL(cgroup_oomd_pref(rootfd, "/cg", "/system.slice/ssh.service", me - 1, &pref, &trusted), 0);
		CU_ASSERT_EQUAL(pref, OOMD_PREF_OMIT);
		CU_ASSERT_FALSE(trusted);
	}
	/* the nearest marked group wins */
	CU_ASSERT_EQUAL_FATAL(set_mark(root, "system.slice/ssh.service", "user.oomd_avoid", "1"), 0);
	CU_ASSERT_EQUAL(cgroup_oomd_pref(rootfd, "/cg", "/system.slice/ssh.service", me, &pref, &trusted), 0);
	CU_ASSERT_EQUAL(pref, OOMD_PREF_AVOID);
	CU_ASSERT_EQUAL(cgroup_oomd_pref(rootfd, "/cg", "/system.slice", me, &pref, &trusted), 0);
	CU_ASSERT_EQUAL(pref, OOMD_PREF_OMIT);
	/* omit over avoid on one group */
	CU_ASSERT_EQUAL_FATAL(set_mark(root, "system.slice/ssh.service", "user.oomd_omit", "1"), 0);
	CU_ASSERT_EQUAL(cgroup_oomd_pref(rootfd, "/cg", "/system.slice/ssh.service", me, &pref, &trusted), 0);
	CU_ASSERT_EQUAL(pref, OOMD_PREF_OMIT);
	/* only "1" is a mark: "0", "true", "10" are as if absent */
	CU_ASSERT_EQUAL_FATAL(set_mark(root, "system.slice/ssh.service", "user.oomd_omit", "0"), 0);
	CU_ASSERT_EQUAL_FATAL(set_mark(root, "system.slice/ssh.service", "user.oomd_avoid", "true"), 0);
	CU_ASSERT_EQUAL_FATAL(set_mark(root, "system.slice", "user.oomd_omit", "10"), 0);
	CU_ASSERT_EQUAL(cgroup_oomd_pref(rootfd, "/cg", "/system.slice/ssh.service", me, &pref, &trusted), 0);
	CU_ASSERT_EQUAL(pref, OOMD_PREF_NONE);
	if (me != 0) {
		printf("# not root: the delegated-subtree half of the test needs chown\n");
		close(rootfd);
		rm_tree(root);
		return;
	}
	/* a mark in uid 60001's delegated subtree is its own: not trusted, nor
	 * is a mark above it made so by a user's group below */
	CU_ASSERT_EQUAL_FATAL(set_mark(root, USER_APP "/ssh.service", "user.oomd_omit", "1"), 0);
	CU_ASSERT_EQUAL(cgroup_oomd_pref(rootfd, "/cg", "/" USER_APP "/ssh.service", 999, &pref, &trusted), 0);
	CU_ASSERT_EQUAL(pref, OOMD_PREF_OMIT);
	CU_ASSERT_FALSE(trusted);
	CU_ASSERT_EQUAL(cgroup_oomd_pref(rootfd, "/cg", "/" USER_APP "/ssh.service", 60001, &pref, &trusted), 0);
	CU_ASSERT_TRUE(trusted);
	CU_ASSERT_EQUAL_FATAL(set_mark(root, "user.slice/user-60001.slice", "user.oomd_avoid", "1"), 0);
	CU_ASSERT_EQUAL(cgroup_oomd_pref(rootfd, "/cg", "/" USER_APP "/term.scope", 999, &pref, &trusted), 0);
	CU_ASSERT_EQUAL(pref, OOMD_PREF_AVOID);
	CU_ASSERT_TRUE(trusted); /* user-60001.slice and user.slice are root's */
	/* a group gone: what the groups above said, and the error */
	CU_ASSERT_EQUAL(cgroup_oomd_pref(rootfd, "/cg", "/user.slice/user-60001.slice/gone", 999, &pref, &trusted),
			-ENOENT);
	CU_ASSERT_EQUAL(pref, OOMD_PREF_AVOID);
	CU_ASSERT_EQUAL(cgroup_oomd_pref(rootfd, "/cg", "/system.slice/../user.slice", 999, &pref, &trusted), -EINVAL);
	CU_ASSERT_EQUAL(cgroup_oomd_pref(rootfd, "", "/system.slice", 999, &pref, &trusted), -EINVAL);
	CU_ASSERT_EQUAL(cgroup_oomd_pref(rootfd, "/cg", "/", 999, &pref, &trusted), 0);
	CU_ASSERT_EQUAL(pref, OOMD_PREF_NONE);
	close(rootfd);
	rm_tree(root);
}

/* Through pick_choose, band 1000 of tests/fixtures/shield: 81 (root, 400 MB)
 * in /system.slice/ssh.service, 80 (uid 60001, 300 MB) in its delegated
 * app.slice/ssh.service, 82 (uid 60002, 100 MB) in session-2.scope, 83
 * (60001's 8 MB shell) in app.slice/term.scope. No regex anywhere. */
static void test_pick_oomd_marks(void)
{
	char root[] = "/tmp/psi-lmkd-test-cg-XXXXXX";
	static struct kill_pick pk;
	struct kill_pick *p = &pk;
	struct pick_ctx c = { .cg2_mount = "/cg", .policy = NULL, .self = 99999, .scope = "/", .trusted_uid_max = 999,
			      .oomd_prefs = true };
	static const struct proc_ident others[] = { { 80, 1080 }, { 82, 1082 }, { 83, 1083 } };
	struct procfs_scan_stats st;

	if (geteuid() != 0) {
		cunit_tap_skip("not root: cannot make a directory owned by another uid");
		return;
	}
	if (!make_marked_tree(root))
		return;
	c.procfd = open_shield_proc();
	c.rootfd = sysroot_open(root);
	CU_ASSERT_FATAL(c.procfd >= 0 && c.rootfd >= 0);

	/* unmarked: the largest dies */
	CU_ASSERT_EQUAL(pick_choose(&c, 1000, p, &st), 0);
	CU_ASSERT_EQUAL(p->pick.best.pid, 81);

	/* root's unit marked omit (on its slice: the nearest mark above counts) */
	CU_ASSERT_EQUAL_FATAL(set_mark(root, "system.slice", "user.oomd_omit", "1"), 0);
	CU_ASSERT_EQUAL(pick_choose(&c, 1000, p, &st), 0);
	CU_ASSERT_TRUE_FATAL(p->pick.found);
	CU_ASSERT_EQUAL(p->pick.best.pid, 80);
	CU_ASSERT_FALSE(p->owner_pass);
	CU_ASSERT_EQUAL(p->pick.candidates, 3);
	/* 80, 82, 83 are in three groups, 81 in a fourth: one walk each */
	CU_ASSERT_EQUAL(p->oomd_lookups, 4);
	/* turned off: the mark is ignored */
	c.oomd_prefs = false;
	CU_ASSERT_EQUAL(pick_choose(&c, 1000, p, &st), 0);
	CU_ASSERT_EQUAL(p->pick.best.pid, 81);
	CU_ASSERT_EQUAL(p->oomd_lookups, 0);
	c.oomd_prefs = true;

	/* 60001 marks its hog's group omit in its own subtree: that counts only
	 * among 60001's processes, so its shell dies, never 82 */
	CU_ASSERT_EQUAL_FATAL(set_mark(root, USER_APP "/ssh.service", "user.oomd_omit", "1"), 0);
	CU_ASSERT_EQUAL(pick_choose(&c, 1000, p, &st), 0);
	CU_ASSERT_TRUE_FATAL(p->pick.found);
	CU_ASSERT_EQUAL(p->pick.best.pid, 83);
	CU_ASSERT_TRUE(p->owner_pass);
	CU_ASSERT_EQUAL(p->first.pid, 80);
	/* with the shell gone, the hog is its owner's only one: it dies */
	c.exclude = &others[2];
	c.n_exclude = 1;
	CU_ASSERT_EQUAL(pick_choose(&c, 1000, p, &st), 0);
	CU_ASSERT_EQUAL(p->pick.best.pid, 80);
	c.n_exclude = 0;

	/* avoid orders: root's unit avoided instead of omitted is the last one
	 * left, and still killable */
	CU_ASSERT_EQUAL_FATAL(set_mark(root, "system.slice", "user.oomd_omit", "0"), 0);
	CU_ASSERT_EQUAL_FATAL(set_mark(root, "system.slice", "user.oomd_avoid", "1"), 0);
	CU_ASSERT_EQUAL_FATAL(set_mark(root, USER_APP "/ssh.service", "user.oomd_omit", "0"), 0);
	CU_ASSERT_EQUAL(pick_choose(&c, 1000, p, &st), 0);
	CU_ASSERT_EQUAL(p->pick.best.pid, 80);
	c.exclude = others;
	c.n_exclude = 3;
	CU_ASSERT_EQUAL(pick_choose(&c, 1000, p, &st), 0);
	CU_ASSERT_TRUE_FATAL(p->pick.found);
	CU_ASSERT_EQUAL(p->pick.best.pid, 81);
	CU_ASSERT_EQUAL(p->pick.best.preference, -1);
	/* nearest wins: omit on the unit under the avoided slice protects */
	CU_ASSERT_EQUAL_FATAL(set_mark(root, "system.slice/ssh.service", "user.oomd_omit", "1"), 0);
	CU_ASSERT_EQUAL(pick_choose(&c, 1000, p, &st), 0);
	CU_ASSERT_FALSE(p->pick.found);
	/* and the other way round: avoid on the unit under an omitted slice */
	CU_ASSERT_EQUAL_FATAL(set_mark(root, "system.slice/ssh.service", "user.oomd_omit", "0"), 0);
	CU_ASSERT_EQUAL_FATAL(set_mark(root, "system.slice/ssh.service", "user.oomd_avoid", "1"), 0);
	CU_ASSERT_EQUAL_FATAL(set_mark(root, "system.slice", "user.oomd_avoid", "0"), 0);
	CU_ASSERT_EQUAL_FATAL(set_mark(root, "system.slice", "user.oomd_omit", "1"), 0);
	CU_ASSERT_EQUAL(pick_choose(&c, 1000, p, &st), 0);
	CU_ASSERT_TRUE(p->pick.found);
	CU_ASSERT_EQUAL(p->pick.best.pid, 81);

	close(c.procfd);
	close(c.rootfd);
	rm_tree(root);
}

/* Writes a fake /proc/PID of uid 1000 under ROOT/proc, with VmSwap. */
static void put_proc_mem(const char *root, int pid, int adj, unsigned rss_kb, unsigned swap_kb, const char *cgroup)
{
	char rel[64], text[512];

	snprintf(rel, sizeof(rel), "proc/%d", pid);
	fixture_mkdir(root, rel);
	snprintf(rel, sizeof(rel), "proc/%d/stat", pid);
	snprintf(text, sizeof(text),
		 "%d (p%d) S 1 %d %d 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 1 0 %d 123456789 100 0 0 0 0 0 0 0 0 0 0 0 0 0 "
		 "0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n",
		 pid, pid, pid, pid, 1000 + pid);
	fixture_put(root, rel, text);
	snprintf(rel, sizeof(rel), "proc/%d/status", pid);
	snprintf(text, sizeof(text),
		 "Name:\tp%d\nUid:\t1000\t1000\t1000\t1000\nVmRSS:\t%u kB\nVmSwap:\t%u kB\nThreads:\t1\n", pid, rss_kb,
		 swap_kb);
	fixture_put(root, rel, text);
	snprintf(rel, sizeof(rel), "proc/%d/oom_score_adj", pid);
	snprintf(text, sizeof(text), "%d\n", adj);
	fixture_put(root, rel, text);
	snprintf(rel, sizeof(rel), "proc/%d/cgroup", pid);
	snprintf(text, sizeof(text), "0::%s\n", cgroup);
	fixture_put(root, rel, text);
}

static void put_proc(const char *root, int pid, int adj, unsigned rss_kb, const char *cgroup)
{
	put_proc_mem(root, pid, adj, rss_kb, 0, cgroup);
}

/* The cost rules: the marks of a group are read once for the processes of
 * one group in a row, and never for a process below the band. */
static void test_pick_oomd_cache(void)
{
	char root[] = "/tmp/psi-lmkd-test-cg-XXXXXX";
	char path[4200];
	static struct kill_pick pk;
	struct kill_pick *p = &pk;
	struct pick_ctx c = { .cg2_mount = "/cg", .self = 99999, .scope = "/", .trusted_uid_max = 999,
			      .oomd_prefs = true };
	struct procfs_scan_stats st;

	CU_ASSERT_FATAL(mkdtemp(root) != NULL);
	CU_ASSERT_EQUAL_FATAL(mkdirs(root, "proc"), 0);
	CU_ASSERT_EQUAL_FATAL(mkdirs(root, "cg/a.slice/u.service"), 0);
	CU_ASSERT_EQUAL_FATAL(mkdirs(root, "cg/c.slice"), 0);
	put_proc(root, 200, 500, 1000, "/a.slice/u.service");
	put_proc(root, 201, 500, 3000, "/a.slice/u.service");
	put_proc(root, 202, 500, 2000, "/a.slice/u.service");
	put_proc(root, 203, 0, 9000, "/c.slice");
	snprintf(path, sizeof(path), "%s/cg/a.slice/u.service", root);
	if (setxattr(path, "user.oomd_avoid", "1", 1, 0) < 0) {
		cunit_tap_skip("the temp dir's file system has no user.* extended attributes");
		rm_tree(root);
		return;
	}
	snprintf(path, sizeof(path), "%s/proc", root);
	c.procfd = sysroot_open(path);
	c.rootfd = sysroot_open(root);
	CU_ASSERT_FATAL(c.procfd >= 0 && c.rootfd >= 0);
	CU_ASSERT_EQUAL(pick_choose(&c, 100, p, &st), 0);
	CU_ASSERT_TRUE_FATAL(p->pick.found);
	CU_ASSERT_EQUAL(p->pick.best.pid, 201);
	CU_ASSERT_EQUAL(p->pick.best.preference, -1);
	CU_ASSERT_EQUAL(p->pick.candidates, 3);
	CU_ASSERT_EQUAL(p->oomd_lookups, 1);
	close(c.procfd);
	close(c.rootfd);
	rm_tree(root);
}


/* C-2 of review-31676fe: one size (RSS + swap + page tables) for every rule.
 * A hog whose memory sits in swap is as big as it is: min_rss, the adj
 * order's tie-break and the early look of a scan all see it. */
static void test_size_counts_swap(void)
{
	struct victim_policy pol = { .min_rss_kb = 4096 };
	struct victim_filter f = { .policy = &pol, .min_adj = 0, .self = 99999, .scope = "/" };
	struct victim_pick pk = { .found = false };
	struct proc_info hog = proc(10, 0, 1400, "/"), other = proc(11, 0, 26000, "/");

	hog.swap_kb = 196608;
	hog.pte_kb = 400;
	CU_ASSERT_EQUAL(procfs_size_kb(&hog), 1400 + 196608 + 400);
	CU_ASSERT_EQUAL(victim_check(&f, &hog), VICTIM_OK);
	/* the adj order: same adj, the bigger one by size goes first */
	CU_ASSERT_TRUE(victim_better(&hog, &other));
	CU_ASSERT_FALSE(victim_better(&other, &hog));
	/* the early look (status read) must not drop it as small... */
	CU_ASSERT_TRUE(victim_may_beat(&f, &pk, &hog, true));
	/* ... nor as smaller than a best that is bigger by RSS alone */
	CU_ASSERT_TRUE(victim_offer(&f, &pk, &other));
	CU_ASSERT_TRUE(victim_may_beat(&f, &pk, &hog, true));
	CU_ASSERT_TRUE(victim_offer(&f, &pk, &hog));
	CU_ASSERT_EQUAL(pk.best.pid, 10);
	/* systemd marks are looked up for it */
	CU_ASSERT_TRUE(victim_needs_oomd(&f, &hog));
	/* page tables alone count too; a process small in all three stays small */
	hog.rss_kb = 0;
	hog.swap_kb = 0;
	hog.pte_kb = 4096;
	CU_ASSERT_EQUAL(victim_check(&f, &hog), VICTIM_OK);
	hog.pte_kb = 4095;
	CU_ASSERT_EQUAL(victim_check(&f, &hog), VICTIM_SMALL);
	CU_ASSERT_FALSE(victim_may_beat(&f, &pk, &hog, true));
	/* saturates */
	hog.rss_kb = hog.swap_kb = hog.pte_kb = UINT64_MAX;
	CU_ASSERT_EQUAL(procfs_size_kb(&hog), UINT64_MAX);
}

/* The same through a /proc fixture and the pruned scan: the swapped-out hog
 * of uid 1000 dies, not another process that is bigger by RSS. */
static void test_pick_swapped_hog(void)
{
	char root[] = "/tmp/psi-lmkd-test-sw-XXXXXX";
	char path[4200];
	static struct kill_pick pk;
	struct kill_pick *p = &pk;
	struct victim_policy pol = { .min_rss_kb = 4096 };
	struct pick_ctx c = { .cg2_mount = "/cg", .policy = &pol, .self = 99999, .scope = "/", .trusted_uid_max = 999 };
	struct procfs_scan_stats st;

	CU_ASSERT_FATAL(mkdtemp(root) != NULL);
	CU_ASSERT_EQUAL_FATAL(mkdirs(root, "proc"), 0);
	CU_ASSERT_EQUAL_FATAL(mkdirs(root, "cg/u.slice"), 0);
	put_proc_mem(root, 300, 0, 1400, 196608, "/u.slice");
	put_proc(root, 301, 0, 26256, "/u.slice");
	snprintf(path, sizeof(path), "%s/proc", root);
	c.procfd = sysroot_open(path);
	c.rootfd = sysroot_open(root);
	CU_ASSERT_FATAL(c.procfd >= 0 && c.rootfd >= 0);
	CU_ASSERT_EQUAL(pick_choose(&c, 0, p, &st), 0);
	CU_ASSERT_TRUE_FATAL(p->pick.found);
	CU_ASSERT_EQUAL(p->pick.best.pid, 300);
	CU_ASSERT_EQUAL(p->pick.best.swap_kb, 196608);
	CU_ASSERT_EQUAL(p->pick.candidates, 2);
	/* badness order too */
	c.order = VICTIM_ORDER_BADNESS;
	c.domain_kb = 1024 * 1024;
	CU_ASSERT_EQUAL(pick_choose(&c, 0, p, &st), 0);
	CU_ASSERT_EQUAL(p->pick.best.pid, 300);
	close(c.procfd);
	close(c.rootfd);
	rm_tree(root);
}

int main(void)
{
	static CU_TestInfo tests[] = {
		{ "scope matching", test_scope },
		{ "exclusions", test_exclusions },
		{ "scope: deep and unknown cgroup paths", test_scope_unknown },
		{ "order", test_order },
		{ "bands, down in order", test_choose_bands },
		{ "badness: the kernel OOM killer's points", test_badness_formula },
		{ "badness order: the runaway, not the renderer", test_order_badness },
		{ "badness order: the culprit that grew, not the biggest", test_order_culprit },
		{ "badness order on stall: the reader, not the biggest", test_order_reader },
		{ "badness order: prefer and avoid first, then ties", test_order_badness_classes },
		{ "OOM domain: RAM + swap, a group's limit + swap", test_domain },
		{ "protect, min_rss, prefer, avoid: precedence", test_policy },
		{ "one size: swap and page tables count for min_rss and the orders", test_size_counts_swap },
		{ "fixture: a hog in swap is a candidate", test_pick_swapped_hog },
		{ "name shields count for system uids only", test_trust_by_uid },
		{ "cgroup shields count on system-owned groups only", test_trust_by_cgroup },
		{ "systemd marks: omit protects, avoid orders, trusted or owner-scoped", test_oomd_marks },
		{ "systemd marks are looked up only past the cheap exclusions", test_needs_oomd },
		{ "owner-only pass", test_owner_only },
		{ "fixture: a spoofed sshd, a zombie leader", test_pick_spoofed_name },
		{ "cgroup_path_trusted", test_cgroup_path_trusted },
		{ "fixture: a cgroup shield in a delegated subtree", test_pick_cgroup_shield },
		{ "cgroup_oomd_pref: nearest mark, value \"1\", owners", test_cgroup_oomd_pref },
		{ "cgroup_unit_count: systemd-oomd's counters on the unit group", test_cgroup_unit_count },
		{ "fixture: systemd marks through pick_choose", test_pick_oomd_marks },
		{ "fixture: systemd marks read once per group, only in the band", test_pick_oomd_cache },
		CU_TEST_INFO_NULL,
	};
	static CU_SuiteInfo suites[] = {
		{ "victim", NULL, NULL, NULL, NULL, tests },
		CU_SUITE_INFO_NULL,
	};

	return cunit_tap_main(suites);
}
