/* SPDX-License-Identifier: MIT */
/* test-moom: systemd's ManagedOOM settings (issue 28 item 1). The JSON
 * reader on the messages systemd 252's PID 1 sent in a Debian 12 guest and
 * on malformed, huge and hostile ones; the set of managed units they keep
 * (settings changed at runtime, units stopped, a full list replacing the
 * set after a reconnect); the pressure clock and the swap condition; and
 * the varlink connection against a fake PID 1 on a socket in a temp dir;
 * the swap kill's choice of a group on fixture cgroup trees. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "cunit-tap.h"
#include "fileio.h"
#include "fixture-tree.h"
#include "moom.h"
#include "moomlink.h"
#include "swapwalk.h"

#define SEC 1000000ULL

/* a NULL here ends the case (the analyzer does not know CU_ASSERT_*_FATAL returns no more) */
#define NEED(p)                                 \
	do {                                    \
		CU_ASSERT_PTR_NOT_NULL(p);      \
		if (!(p))                       \
			return;                 \
	} while (0)

/* verbatim from systemd 252 (252.39-1~deb12u2) in the guest */
static const char initial[] =
	"{\"parameters\":{\"cgroups\":[{\"mode\":\"kill\",\"path\":\"\",\"property\":\"ManagedOOMSwap\"},{\"mode\":\"kill\","
	"\"path\":\"/system.slice/moom-c.service\",\"property\":\"ManagedOOMMemoryPressure\",\"limit\":0},{\"mode\":\"kill\","
	"\"path\":\"/system.slice/moom-b.service\",\"property\":\"ManagedOOMSwap\"},{\"mode\":\"kill\",\"path\":\"/system.slice/"
	"moom-a.service\",\"property\":\"ManagedOOMMemoryPressure\",\"limit\":2147483648}]},\"continues\":true}";
static const char set_limit[] =
	"{\"parameters\":{\"cgroups\":[{\"mode\":\"auto\",\"path\":\"/system.slice/moom-a.service\",\"property\":"
	"\"ManagedOOMSwap\"},{\"mode\":\"kill\",\"path\":\"/system.slice/moom-a.service\",\"property\":"
	"\"ManagedOOMMemoryPressure\",\"limit\":1431512599}]},\"continues\":true}";
static const char stop_b[] =
	"{\"parameters\":{\"cgroups\":[{\"mode\":\"auto\",\"path\":\"/system.slice/moom-b.service\",\"property\":"
	"\"ManagedOOMSwap\"},{\"mode\":\"auto\",\"path\":\"/system.slice/moom-b.service\",\"property\":"
	"\"ManagedOOMMemoryPressure\"}]},\"continues\":true}";
static const char denied[] = "{\"error\":\"org.varlink.service.PermissionDenied\",\"parameters\":{}}";

struct got {
	struct moom_entry e[16];
	size_t n;
};

static int collect(void *ctx, const struct moom_entry *e)
{
	struct got *g = ctx;

	if (g->n < 16)
		g->e[g->n++] = *e;
	return 0;
}

static int parse(const char *s, struct moom_reply *r, struct got *g)
{
	memset(g, 0, sizeof(*g));
	return moom_parse(s, strlen(s), r, collect, g);
}

static int apply(void *ctx, const struct moom_entry *e)
{
	int r = moom_set_apply(ctx, e);

	return r < 0 ? r : 0;
}

static int feed(struct moom_set *s, const char *msg, bool full)
{
	struct moom_reply r;
	int e;

	if (full)
		moom_set_begin(s);
	e = moom_parse(msg, strlen(msg), &r, apply, s);
	if (full)
		moom_set_end(s);
	return e;
}

static void test_systemd_252_messages(void)
{
	struct moom_reply r;
	struct got g;

	CU_ASSERT_EQUAL_FATAL(parse(initial, &r, &g), 0);
	CU_ASSERT_TRUE(r.continues);
	CU_ASSERT_FALSE(r.error);
	CU_ASSERT_EQUAL(r.rejected, 0);
	CU_ASSERT_EQUAL_FATAL(g.n, 4);
	CU_ASSERT_STRING_EQUAL(g.e[0].path, "/"); /* -.slice */
	CU_ASSERT_EQUAL(g.e[0].prop, MOOM_SWAP);
	CU_ASSERT_TRUE(g.e[0].kill);
	CU_ASSERT_EQUAL(g.e[1].limit_permyriad, 0); /* the default */
	CU_ASSERT_STRING_EQUAL(g.e[3].path, "/system.slice/moom-a.service");
	CU_ASSERT_EQUAL(g.e[3].prop, MOOM_PRESSURE);
	CU_ASSERT_EQUAL(g.e[3].limit_permyriad, 5000);
	CU_ASSERT_EQUAL(g.e[3].duration_us, 0);
	CU_ASSERT_EQUAL(parse(set_limit, &r, &g), 0);
	CU_ASSERT_EQUAL_FATAL(g.n, 2);
	CU_ASSERT_FALSE(g.e[0].kill);
	CU_ASSERT_EQUAL(g.e[1].limit_permyriad, 3333); /* set-property ...Limit=33.33% */
	/* without "more": one reply, no "continues" */
	CU_ASSERT_EQUAL(parse("{\"parameters\":{\"cgroups\":[]}}", &r, &g), 0);
	CU_ASSERT_FALSE(r.continues);
	CU_ASSERT_EQUAL(parse(denied, &r, &g), 0);
	CU_ASSERT_TRUE(r.error);
	CU_ASSERT_STRING_EQUAL(r.error_id, "org.varlink.service.PermissionDenied");
	CU_ASSERT_EQUAL(g.n, 0);
	/* newer systemd: a duration, UINT64_MAX for the default; whitespace, other keys */
	CU_ASSERT_EQUAL(parse(" { \"continues\" : true , \"x\":[1,2.5e3,{\"a\":null}],\"parameters\" : { \"cgroups\" : [ { "
			      "\"duration\" : 20000000 , \"path\":\"/a.slice\",\"property\":\"ManagedOOMMemoryPressure\","
			      "\"mode\":\"kill\",\"rules\":[\"x\"]}, {\"mode\":\"kill\",\"path\":\"/b\",\"property\":"
			      "\"ManagedOOMMemoryPressure\",\"duration\":18446744073709551615} ] } } ",
			      &r, &g), 0);
	CU_ASSERT_EQUAL_FATAL(g.n, 2);
	CU_ASSERT_EQUAL(g.e[0].duration_us, 20 * SEC);
	CU_ASSERT_EQUAL(g.e[1].duration_us, 0);
	CU_ASSERT_EQUAL(moom_limit_permyriad(UINT32_MAX), 10000);
	CU_ASSERT_EQUAL(moom_limit_permyriad(0xffffffffULL * 6 / 10), 6000);
}

static void test_path_check(void)
{
	static const char *bad[] = { "a", "/a/", "//", "/a//b", "/a/./b", "/a/../b", "/..", "/.", "/a/..", "/a\tb", "/a\nb",
				     "/a/b/", "/\x7f" };
	char out[64];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CU_ASSERT_EQUAL(moom_path_check(bad[i], out, sizeof(out)), -EINVAL);
	CU_ASSERT_EQUAL(moom_path_check("", out, sizeof(out)), 0);
	CU_ASSERT_STRING_EQUAL(out, "/");
	CU_ASSERT_EQUAL(moom_path_check("/", out, sizeof(out)), 0);
	CU_ASSERT_STRING_EQUAL(out, "/");
	CU_ASSERT_EQUAL(moom_path_check("/user.slice/user@1000.service/..x/.y", out, sizeof(out)), 0);
	CU_ASSERT_STRING_EQUAL(out, "/user.slice/user@1000.service/..x/.y");
	CU_ASSERT_EQUAL(moom_path_check("/0123456789012345678901234567890123456789012345678901234567890123", out,
					sizeof(out)), -EINVAL); /* too long */
}

/* A hostile or broken message delivers nothing, or skips its bad entries. */
static void test_malformed(void)
{
	static const char *broken[] = {
		"", "{", "}", "[]", "null", "\"x\"", "{\"parameters\":{\"cgroups\":[}", "{\"a\":1,}", "{\"a\" 1}",
		"{\"a\":1}x", "{\"a\":01}", "{\"a\":-}", "{\"a\":1.}", "{\"a\":1e}", "{\"a\":tru}", "{\"a\":\"\\x\"}",
		"{\"a\":\"\\u12\"}", "{\"a\":\"\\u0000\"}", "{\"a\":\"\\ud800\"}", "{\"a\":\"\\udc00\"}", "{\"a\":\"ab",
		"{\"a\":\"a\x01\"}",
		/* cut: the first entry must not be delivered */
		"{\"parameters\":{\"cgroups\":[{\"mode\":\"kill\",\"path\":\"/a\",\"property\":" // NOLINT(bugprone-suspicious-missing-comma): one string
		"\"ManagedOOMSwap\"}]}, \"continues\":true",
	};
	struct moom_reply r;
	struct got g;
	char deep[400];
	size_t i;

	for (i = 0; i < sizeof(broken) / sizeof(broken[0]); i++) {
		CU_ASSERT_EQUAL(parse(broken[i], &r, &g), -EBADMSG);
		CU_ASSERT_EQUAL(g.n, 0);
	}
	/* nesting beyond MOOM_DEPTH_MAX */
	memset(deep, 0, sizeof(deep));
	strcpy(deep, "{\"a\":");
	for (i = 0; i < 100; i++)
		strcat(deep, "[");
	for (i = 0; i < 100; i++)
		strcat(deep, "]");
	strcat(deep, "}");
	CU_ASSERT_EQUAL(parse(deep, &r, &g), -EBADMSG);
	/* an embedded NUL: never one message */
	CU_ASSERT_EQUAL(moom_parse("{}\0{}", 5, &r, collect, &g), -EBADMSG);
	/* bad entries are skipped, good ones kept */
	CU_ASSERT_EQUAL(parse("{\"parameters\":{\"cgroups\":["
			      "1, \"x\", [], {},"
			      "{\"mode\":\"kill\",\"path\":\"/a/../../etc\",\"property\":\"ManagedOOMSwap\"},"
			      "{\"mode\":\"kill\",\"path\":\"/a/\\u002e\\u002e\",\"property\":\"ManagedOOMSwap\"},"
			      "{\"mode\":\"kill\",\"path\":\"relative\",\"property\":\"ManagedOOMSwap\"},"
			      "{\"mode\":\"kill\",\"path\":\"/a\\nb\",\"property\":\"ManagedOOMSwap\"},"
			      "{\"mode\":\"stop\",\"path\":\"/a\",\"property\":\"ManagedOOMSwap\"},"
			      "{\"mode\":\"kill\",\"path\":\"/a\",\"property\":\"OOMRules\"},"
			      "{\"mode\":\"kill\",\"path\":\"/a\",\"property\":\"ManagedOOMMemoryPressure\",\"limit\":-1},"
			      "{\"mode\":\"kill\",\"path\":\"/a\",\"property\":\"ManagedOOMMemoryPressure\",\"limit\":0.5},"
			      "{\"mode\":\"kill\",\"path\":\"/a\",\"property\":\"ManagedOOMMemoryPressure\",\"limit\":4294967296},"
			      "{\"mode\":\"kill\",\"path\":\"/a\",\"property\":\"ManagedOOMMemoryPressure\",\"limit\":\"50%\"},"
			      "{\"mode\":\"kill\",\"path\":\"/a\",\"property\":\"ManagedOOMMemoryPressure\","
			      "\"limit\":99999999999999999999999},"
			      "{\"mode\":1,\"path\":\"/a\",\"property\":\"ManagedOOMSwap\"},"
			      "{\"mode\":\"kill\",\"path\":[\"/a\"],\"property\":\"ManagedOOMSwap\"},"
			      "{\"path\":\"/a\",\"property\":\"ManagedOOMSwap\"},"
			      "{\"mode\":\"kill\",\"path\":\"/ok\\u00e9.service\",\"property\":\"ManagedOOMSwap\"}"
			      "]},\"continues\":true}",
			      &r, &g), 0);
	CU_ASSERT_EQUAL(r.rejected, 18);
	CU_ASSERT_EQUAL_FATAL(g.n, 1);
	CU_ASSERT_STRING_EQUAL(g.e[0].path, "/ok\xc3\xa9.service");
	/* "parameters" or "cgroups" of another type: no entries, no error */
	CU_ASSERT_EQUAL(parse("{\"parameters\":[1],\"continues\":true}", &r, &g), 0);
	CU_ASSERT_EQUAL(parse("{\"parameters\":{\"cgroups\":{\"a\":1}}}", &r, &g), 0);
	CU_ASSERT_EQUAL(g.n, 0);
}

/* A path longer than CONFIG_PATH_MAX, a message over MOOM_MSG_MAX. */
static void test_huge(void)
{
	size_t n = MOOM_MSG_MAX + 16, i, o;
	char *big = malloc(n + 1);
	struct moom_reply r;
	struct got g;

	NEED(big);
	o = (size_t)sprintf(big, "{\"parameters\":{\"cgroups\":[{\"mode\":\"kill\",\"property\":\"ManagedOOMSwap\",\"path\":\"");
	for (i = 0; i < 3 * CONFIG_PATH_MAX; i++)
		big[o++] = i % 10 ? 'a' : '/';
	sprintf(big + o, "\"},{\"mode\":\"kill\",\"property\":\"ManagedOOMSwap\",\"path\":\"/b\"}]}}");
	CU_ASSERT_EQUAL(parse(big, &r, &g), 0);
	CU_ASSERT_EQUAL(r.rejected, 1);
	CU_ASSERT_EQUAL_FATAL(g.n, 1);
	CU_ASSERT_STRING_EQUAL(g.e[0].path, "/b");
	memset(big, ' ', n);
	big[0] = '{';
	big[n - 1] = '}';
	big[n] = '\0';
	CU_ASSERT_EQUAL(moom_parse(big, n, &r, collect, &g), -EBADMSG);
	free(big);
}

/* Random bytes and random cuts of real messages: never a crash (ASan,
 * valgrind), never an entry from a message that is not whole. */
static void test_fuzz(void)
{
	char buf[sizeof(initial) + 16];
	struct moom_reply r;
	struct got g;
	unsigned seed = 12345;
	size_t i, j, len;

	for (i = 0; i < 20000; i++) {
		memcpy(buf, initial, sizeof(initial));
		len = sizeof(initial) - 1;
		for (j = 0; j < 1 + i % 4; j++) {
			seed = seed * 1103515245u + 12345u;
			buf[(seed >> 8) % len] = (char)(seed >> 24);
		}
		if (i % 3 == 0)
			len = (seed >> 4) % len;
		memset(&g, 0, sizeof(g));
		if (moom_parse(buf, len, &r, collect, &g) < 0)
			CU_ASSERT_EQUAL(g.n, 0);
	}
}

static void test_unit_set(void)
{
	struct moom_set s;
	struct moom_unit *u;

	moom_set_init(&s);
	CU_ASSERT_EQUAL(feed(&s, initial, true), 0);
	CU_ASSERT_EQUAL(s.n, 4);
	CU_ASSERT_EQUAL(moom_set_count(&s, MOOM_PRESSURE), 2);
	CU_ASSERT_EQUAL(moom_set_count(&s, MOOM_SWAP), 2);
	u = moom_set_find(&s, "/system.slice/moom-c.service");
	NEED(u);
	CU_ASSERT_EQUAL(u->limit_permyriad, MOOM_DEFAULT_LIMIT_PERMYRIAD);
	CU_ASSERT_EQUAL(u->duration_us, MOOM_DEFAULT_DURATION_US);
	/* systemctl set-property moom-a ManagedOOMMemoryPressureLimit=33.33% */
	CU_ASSERT_EQUAL(feed(&s, set_limit, false), 0);
	u = moom_set_find(&s, "/system.slice/moom-a.service");
	NEED(u);
	CU_ASSERT_EQUAL(u->limit_permyriad, 3333);
	CU_ASSERT_TRUE(u->pressure);
	CU_ASSERT_FALSE(u->swap);
	/* systemctl stop moom-b: both auto, the unit is dropped */
	CU_ASSERT_EQUAL(feed(&s, stop_b, false), 0);
	CU_ASSERT_PTR_NULL(moom_set_find(&s, "/system.slice/moom-b.service"));
	CU_ASSERT_EQUAL(s.n, 3);
	/* a reconnect (PID 1 re-executed): the full list replaces the set,
	 * the pressure clock of a unit it keeps goes on */
	u = moom_set_find(&s, "/system.slice/moom-a.service");
	CU_ASSERT_FALSE(moom_pressure_due(u, 9000, 100 * SEC));
	CU_ASSERT_EQUAL(feed(&s, "{\"parameters\":{\"cgroups\":[{\"mode\":\"kill\",\"path\":\"/system.slice/moom-a.service\","
			      "\"property\":\"ManagedOOMMemoryPressure\",\"limit\":1431512599}]},\"continues\":true}", true), 0);
	CU_ASSERT_EQUAL(s.n, 1);
	u = moom_set_find(&s, "/system.slice/moom-a.service");
	NEED(u);
	CU_ASSERT_TRUE(u->above);
	CU_ASSERT_EQUAL(u->above_since_us, 100 * SEC);
	CU_ASSERT_PTR_NULL(moom_set_find(&s, "/"));
	/* an empty full list drops everything */
	CU_ASSERT_EQUAL(feed(&s, "{\"parameters\":{\"cgroups\":[]},\"continues\":true}", true), 0);
	CU_ASSERT_EQUAL(s.n, 0);
	/* "auto" for a unit not managed: nothing */
	CU_ASSERT_EQUAL(feed(&s, stop_b, false), 0);
	CU_ASSERT_EQUAL(s.n, 0);
	moom_set_free(&s);
}

static void test_unit_cap(void)
{
	struct moom_set s;
	struct moom_entry e = { .prop = MOOM_SWAP, .kill = true };
	size_t i;

	moom_set_init(&s);
	for (i = 0; i < MOOM_UNITS_MAX; i++) {
		snprintf(e.path, sizeof(e.path), "/u%zu.service", i);
		CU_ASSERT_EQUAL(moom_set_apply(&s, &e), 1);
	}
	snprintf(e.path, sizeof(e.path), "/one-more.service");
	CU_ASSERT_EQUAL(moom_set_apply(&s, &e), -ENOSPC);
	CU_ASSERT_EQUAL(s.refused, 1);
	CU_ASSERT_EQUAL(s.n, MOOM_UNITS_MAX);
	snprintf(e.path, sizeof(e.path), "/u7.service");
	CU_ASSERT_EQUAL(moom_set_apply(&s, &e), 0); /* known: no change */
	e.kill = false;
	CU_ASSERT_EQUAL(moom_set_apply(&s, &e), 1);
	CU_ASSERT_EQUAL(s.n, MOOM_UNITS_MAX - 1);
	moom_set_free(&s);
}

static void test_pressure_clock(void)
{
	struct moom_unit u = { .pressure = true, .limit_permyriad = 5000, .duration_us = 30 * SEC };

	CU_ASSERT_FALSE(moom_pressure_due(&u, 5000, 0)); /* at the limit: not above */
	CU_ASSERT_FALSE(moom_pressure_due(&u, 5001, 1 * SEC));
	CU_ASSERT_FALSE(moom_pressure_due(&u, 9000, 30 * SEC));
	CU_ASSERT_TRUE(moom_pressure_due(&u, 9000, 31 * SEC)); /* 30 s above */
	moom_unit_acted(&u, 31 * SEC);
	CU_ASSERT_FALSE(moom_pressure_due(&u, 9000, 32 * SEC)); /* the duration starts over */
	CU_ASSERT_FALSE(moom_pressure_due(&u, 1000, 50 * SEC)); /* a dip ... */
	CU_ASSERT_FALSE(moom_pressure_due(&u, 9000, 61 * SEC)); /* ... restarts it */
	CU_ASSERT_FALSE(moom_pressure_due(&u, 9000, 90 * SEC));
	CU_ASSERT_TRUE(moom_pressure_due(&u, 9000, 91 * SEC));
	u.pressure = false;
	CU_ASSERT_FALSE(moom_pressure_due(&u, 9000, 200 * SEC));
}

static void test_swap_condition(void)
{
	/* a candidate group uses more than 5% of the swap */
	CU_ASSERT_FALSE(moom_swap_candidate(0, 0));
	CU_ASSERT_FALSE(moom_swap_candidate(50ULL << 20, 1000ULL << 20));
	CU_ASSERT_TRUE(moom_swap_candidate(51ULL << 20, 1000ULL << 20));
	CU_ASSERT_TRUE(moom_swap_candidate(1, 0)); /* swap used where none is counted: anything */

	const uint64_t G = 1ULL << 30;

	CU_ASSERT_FALSE(moom_swap_due(9000, 4 * G, 0, 0, 0)); /* no swap */
	CU_ASSERT_FALSE(moom_swap_due(9000, 4 * G, G, 2 * G, 0)); /* memory available */
	CU_ASSERT_FALSE(moom_swap_due(9000, 4 * G, G / 20, 2 * G, G)); /* swap free */
	CU_ASSERT_TRUE(moom_swap_due(9000, 4 * G, G / 20, 2 * G, G / 20));
	CU_ASSERT_FALSE(moom_swap_due(9000, 10000, 1000, 10000, 999)); /* exactly 10 %: not below */
	CU_ASSERT_TRUE(moom_swap_due(9000, UINT64_MAX, 1, UINT64_MAX, 1));
}

/* oomd.conf's [OOM] keys, in systemd's syntax; refused values skipped */
/* a group below the fixture's cgroup2 mount with its memory.swap.current
 * (mib, -1: none) and memory.oom.group */
static void cg(const char *root, const char *rel, int mib, bool oom_group)
{
	char path[4096], v[32];

	snprintf(path, sizeof(path), "sys/fs/cgroup%s", rel);
	fixture_mkdir(root, path);
	if (mib >= 0) {
		snprintf(path, sizeof(path), "sys/fs/cgroup%s/memory.swap.current", rel);
		snprintf(v, sizeof(v), "%llu\n", (unsigned long long)mib << 20);
		fixture_put(root, path, v);
	}
	snprintf(path, sizeof(path), "sys/fs/cgroup%s/memory.oom.group", rel);
	fixture_put(root, path, oom_group ? "1\n" : "0\n");
}

/* the fixture's cgroup2 mount, the root group without a counter */
static void cg_mount(const char *root)
{
	fixture_mkdir(root, "sys");
	fixture_mkdir(root, "sys/fs");
	cg(root, "", -1, false);
}

static void walk_units(int rootfd, const char *const *units, struct swapwalk *w)
{
	swapwalk_init(w, 4294967294U); /* every owner trusted: no cap on children */
	for (; *units; units++)
		CU_ASSERT_EQUAL(swapwalk_unit(rootfd, "/sys/fs/cgroup", *units, w), 0);
}

/* ManagedOOMSwap's group: the leaf with the most swap, as systemd-oomd
 * picks it; and what a group's owner may build below it (review F2: names
 * starting with '.', paths over 1 kB, thousands of empty groups ahead in
 * the directory) hides nothing: the hog's own subtree is chosen, never
 * another user's smaller leaf. */
static void test_swap_walk(void)
{
	static const char *const users[] = { "/user.slice", NULL };
	static const char *const all[] = { "/", NULL };
	char dir[] = "/tmp/psi-lmkd-test-swapwalk-XXXXXX", rel[4096], name[300];
	int rootfd = fixture_root_open(dir), i;
	struct swapwalk w;
	size_t o;

	cg_mount(dir);
	cg(dir, "/user.slice", 700, false);
	cg(dir, "/user.slice/user-1001.slice", 150, false);
	cg(dir, "/user.slice/user-1001.slice/app.scope", 150, false);
	cg(dir, "/user.slice/user-1000.slice", 550, false);
	cg(dir, "/user.slice/user-1000.slice/a.scope", 100, false);
	cg(dir, "/user.slice/user-1000.slice/b.scope", 120, false);
	/* a group with memory.oom.group is a leaf, whatever lies below */
	cg(dir, "/user.slice/user-1000.slice/svc", 330, true);
	cg(dir, "/user.slice/user-1000.slice/svc/x", 200, false);
	cg(dir, "/user.slice/user-1000.slice/svc/y", 130, false);
	cg(dir, "/system.slice", 10, false);
	cg(dir, "/system.slice/small.service", 10, false);
	walk_units(rootfd, users, &w);
	CU_ASSERT_STRING_EQUAL(w.best, "/user.slice/user-1000.slice/svc");
	CU_ASSERT_EQUAL(w.best_swap, 330ULL << 20);
	CU_ASSERT_FALSE(w.exhausted);
	walk_units(rootfd, all, &w);
	CU_ASSERT_STRING_EQUAL(w.best, "/user.slice/user-1000.slice/svc");
	/* a unit that is a leaf is its own candidate */
	{
		static const char *const leaf[] = { "/system.slice/small.service", NULL };

		walk_units(rootfd, leaf, &w);
		CU_ASSERT_STRING_EQUAL(w.best, "/system.slice/small.service");
	}

	/* user 1002 hides a 400 MiB hog in a group named ".h", beside an
	 * empty sibling */
	cg(dir, "/user.slice/user-1002.slice", 400, false);
	cg(dir, "/user.slice/user-1002.slice/.h", 400, false);
	cg(dir, "/user.slice/user-1002.slice/e", 0, false);
	walk_units(rootfd, users, &w);
	CU_ASSERT_STRING_EQUAL(w.best, "/user.slice/user-1002.slice/.h");
	/* a path longer than a kept path may be: the deepest group that can be
	 * named counts whole */
	memset(name, 'd', 250);
	name[250] = '\0';
	o = (size_t)snprintf(rel, sizeof(rel), "/user.slice/user-1003.slice");
	cg(dir, rel, 900, false);
	for (i = 0; i < 5; i++) {
		o += (size_t)snprintf(rel + o, sizeof(rel) - o, "/%s", name);
		cg(dir, rel, 900, false);
	}
	walk_units(rootfd, users, &w);
	CU_ASSERT_EQUAL(w.best_swap, 900ULL << 20);
	CU_ASSERT_EQUAL(strncmp(w.best, "/user.slice/user-1003.slice/ddd", 31), 0);
	CU_ASSERT_TRUE(strlen(w.best) < CONFIG_PATH_MAX && strlen(w.best) > 700);

	/* deeper than SWAPWALK_DEPTH: the group at that depth counts whole */
	o = (size_t)snprintf(rel, sizeof(rel), "/user.slice/user-1004.slice");
	cg(dir, rel, 1000, false);
	for (i = 0; i < SWAPWALK_DEPTH + 5; i++) {
		o += (size_t)snprintf(rel + o, sizeof(rel) - o, "/%c", 'a' + i % 26);
		cg(dir, rel, 1000, false);
	}
	walk_units(rootfd, users, &w);
	CU_ASSERT_EQUAL(w.best_swap, 1000ULL << 20);
	CU_ASSERT_EQUAL(strncmp(w.best, "/user.slice/user-1004.slice/a/b/", 32), 0);

	/* children without a counter of their own (no memory controller
	 * below): the swap is the group's, which counts whole */
	cg(dir, "/user.slice/user-1005.slice", 1100, false);
	cg(dir, "/user.slice/user-1005.slice/nomem", -1, false);
	walk_units(rootfd, users, &w);
	CU_ASSERT_STRING_EQUAL(w.best, "/user.slice/user-1005.slice");

	/* more children than SWAPWALK_CHILDREN_MAX, the hog among them: in a
	 * group an administrator owns every one is read, and the hog is the
	 * leaf; in a group a user owns, the group counts whole (or the hog, if
	 * read first), never dropped */
	cg(dir, "/user.slice/user-1006.slice", 1200, false);
	cg(dir, "/user.slice/user-1006.slice/many", 1200, false);
	for (i = 0; i < SWAPWALK_CHILDREN_MAX + 400; i++) {
		snprintf(rel, sizeof(rel), "/user.slice/user-1006.slice/many/e%04d", i);
		cg(dir, rel, 0, false);
	}
	cg(dir, "/user.slice/user-1006.slice/many/zz-hog", 1200, false);
	walk_units(rootfd, users, &w);
	CU_ASSERT_STRING_EQUAL(w.best, "/user.slice/user-1006.slice/many/zz-hog");
	CU_ASSERT_TRUE(w.reads > SWAPWALK_CHILDREN_MAX + 401); /* every child of many read */
	printf("# reads: %zu with every owner trusted\n", w.reads);
	if (geteuid() == 0) {
		snprintf(rel, sizeof(rel), "%s/sys/fs/cgroup/user.slice/user-1006.slice/many", dir);
		CU_ASSERT_EQUAL_FATAL(chown(rel, 1006, 1006), 0);
		swapwalk_init(&w, 999);
	} else {
		swapwalk_init(&w, geteuid() - 1); /* every group is the runner's: above the limit */
	}
	CU_ASSERT_EQUAL(swapwalk_unit(rootfd, "/sys/fs/cgroup", "/user.slice", &w), 0);
	CU_ASSERT_EQUAL(w.best_swap, 1200ULL << 20);
	CU_ASSERT_EQUAL(strncmp(w.best, "/user.slice/user-1006.slice/many", 32), 0);
	CU_ASSERT_TRUE(w.reads < SWAPWALK_CHILDREN_MAX + 401);
	printf("# reads: %zu with many a user's\n", w.reads);
	CU_ASSERT_FALSE(w.exhausted);
	fixture_root_close(rootfd, dir);
}

/* n empty sibling groups c0000.. below rel (a path below the fixture's
 * cgroup2 mount), each with a counter saying no swap: made at the fd, the
 * fixture's helpers being too slow for thousands */
static void empty_groups(int rootfd, const char *rel, int n)
{
	char path[4200], name[32];
	int dfd, i;

	snprintf(path, sizeof(path), "sys/fs/cgroup%s", rel);
	dfd = openat(rootfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CU_ASSERT_TRUE_FATAL(dfd >= 0);
	for (i = 0; i < n; i++) {
		int fd;

		snprintf(name, sizeof(name), "c%04d", i);
		CU_ASSERT_EQUAL_FATAL(mkdirat(dfd, name, 0755), 0);
		snprintf(name, sizeof(name), "c%04d/memory.swap.current", i);
		fd = openat(dfd, name, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
		CU_ASSERT_TRUE_FATAL(fd >= 0);
		CU_ASSERT_EQUAL(write(fd, "0\n", 2), 2);
		close(fd);
	}
	close(dfd);
}

/* A user floods the subtree delegated to them with nested groups, more
 * than one walk may read, around their swap hog: the walk reads at most
 * SWAPWALK_OWNER_READS_MAX of them, then counts the subtree whole. So the
 * flood neither turns the swap kills off (the walk chose nothing before)
 * nor moves a kill: another user's bigger leaf is still the choice. Needs
 * root, to give the subtree to a user as systemd's delegation does. */
static void test_swap_walk_flood(void)
{
	static const char *const users[] = { "/user.slice", NULL };
	static const char *const units[] = { "/user.slice/user-1007.slice/user@1007.service/app.slice/a.service",
					     "/user.slice/user-1007.slice/user@1007.service/app.slice/b.service", NULL };
	const char *top = "/user.slice/user-1007.slice/user@1007.service";
	char dir[] = "/tmp/psi-lmkd-test-swapflood-XXXXXX", rel[4096];
	int rootfd = fixture_root_open(dir), level;
	struct swapwalk w;
	size_t o, i;

	if (geteuid() != 0) {
		printf("# skipped: needs root to give groups to a user\n");
		fixture_root_close(rootfd, dir);
		return;
	}
	cg_mount(dir);
	cg(dir, "/user.slice", 1900, false);
	cg(dir, "/user.slice/user-1008.slice", 600, false);
	cg(dir, "/user.slice/user-1008.slice/app.scope", 600, false);
	cg(dir, "/user.slice/user-1007.slice", 1300, false);
	cg(dir, top, 1300, false);
	snprintf(rel, sizeof(rel), "%s/app.slice", top);
	cg(dir, rel, 100, false);
	cg(dir, units[0], 60, false);
	snprintf(rel, sizeof(rel), "%s/x", units[0]);
	cg(dir, rel, 50, false);
	cg(dir, units[1], 40, false);
	/* 17 levels of 1000 groups, the hog at the bottom: 17000 reads */
	o = (size_t)snprintf(rel, sizeof(rel), "%s", top);
	for (level = 0; level < 17; level++) {
		empty_groups(rootfd, rel, 1000);
		o += (size_t)snprintf(rel + o, sizeof(rel) - o, "/z%02d", level);
		cg(dir, rel, 1200, false);
	}
	CU_ASSERT_TRUE(17 * 1000 > SWAPWALK_READS_MAX);
	snprintf(rel, sizeof(rel), "%s/sys/fs/cgroup%s", dir, top);
	CU_ASSERT_EQUAL_FATAL(chown(rel, 1007, 1007), 0);

	swapwalk_init(&w, 999);
	CU_ASSERT_EQUAL(swapwalk_unit(rootfd, "/sys/fs/cgroup", users[0], &w), 0);
	CU_ASSERT_FALSE(w.exhausted);
	CU_ASSERT_STRING_EQUAL(w.best, top);
	CU_ASSERT_EQUAL(w.best_swap, 1300ULL << 20);
	CU_ASSERT_EQUAL(w.owner_whole, 1);
	CU_ASSERT_TRUE(w.reads <= SWAPWALK_OWNER_READS_MAX + 20);
	printf("# reads: %zu, the flooded subtree whole\n", w.reads);

	/* another user's bigger leaf: the choice, flood or not */
	cg(dir, "/user.slice/user-1008.slice/app.scope", 2000, false);
	swapwalk_init(&w, 999);
	CU_ASSERT_EQUAL(swapwalk_unit(rootfd, "/sys/fs/cgroup", users[0], &w), 0);
	CU_ASSERT_STRING_EQUAL(w.best, "/user.slice/user-1008.slice/app.scope");
	CU_ASSERT_FALSE(w.exhausted);

	/* the user's own units share the subtree's reads: the flood spent
	 * them, so a unit with groups below counts whole (a leaf is its own
	 * candidate anyway), and every unit is still weighed */
	cg(dir, "/user.slice/user-1008.slice/app.scope", 600, false);
	swapwalk_init(&w, 999);
	CU_ASSERT_EQUAL(swapwalk_unit(rootfd, "/sys/fs/cgroup", users[0], &w), 0);
	for (i = 0; units[i]; i++)
		CU_ASSERT_EQUAL(swapwalk_unit(rootfd, "/sys/fs/cgroup", units[i], &w), 0);
	CU_ASSERT_STRING_EQUAL(w.best, top);
	CU_ASSERT_EQUAL(w.owner_whole, 2);
	CU_ASSERT_FALSE(w.exhausted);
	swapwalk_init(&w, 999);
	for (i = 0; units[i]; i++)
		CU_ASSERT_EQUAL(swapwalk_unit(rootfd, "/sys/fs/cgroup", units[i], &w), 0);
	snprintf(rel, sizeof(rel), "%s/x", units[0]);
	CU_ASSERT_STRING_EQUAL(w.best, rel); /* nothing flooded below them: the leaf */
	CU_ASSERT_EQUAL(w.owner_whole, 0);
	swapwalk_init(&w, 999);
	CU_ASSERT_EQUAL(swapwalk_unit(rootfd, "/sys/fs/cgroup", top, &w), 0);
	CU_ASSERT_EQUAL(swapwalk_unit(rootfd, "/sys/fs/cgroup", units[0], &w), 0);
	CU_ASSERT_STRING_EQUAL(w.best, top);
	CU_ASSERT_EQUAL(w.owner_whole, 2);
	fixture_root_close(rootfd, dir);
}

static void test_oomd_conf(void)
{
	struct moom_defaults d;
	struct moom_set s;
	struct moom_entry e = { .path = "/a.service", .prop = MOOM_PRESSURE, .kill = true };
	struct moom_unit *u;

	moom_defaults_init(&d);
	CU_ASSERT_EQUAL(d.limit_permyriad, 6000);
	CU_ASSERT_EQUAL(d.duration_us, 30 * SEC);
	CU_ASSERT_EQUAL(d.swap_used_permyriad, 9000);
	CU_ASSERT_EQUAL(moom_defaults_parse(&d, "[OOM]\n#SwapUsedLimit=10%\nDefaultMemoryPressureDurationSec=20s\n"), 0);
	CU_ASSERT_EQUAL(d.duration_us, 20 * SEC);
	CU_ASSERT_EQUAL(d.swap_used_permyriad, 9000);
	CU_ASSERT_EQUAL(moom_defaults_parse(&d, " [OOM] \r\n SwapUsedLimit = 80.5% \r\nDefaultMemoryPressureLimit=555\xe2\x80\xb0\n"
						"DefaultMemoryPressureDurationSec=1min 30s\n[Other]\nSwapUsedLimit=1%\n"), 0);
	CU_ASSERT_EQUAL(d.swap_used_permyriad, 8050);
	CU_ASSERT_EQUAL(d.limit_permyriad, 5550);
	CU_ASSERT_EQUAL(d.duration_us, 90 * SEC);
	CU_ASSERT_EQUAL(moom_defaults_parse(&d, "[OOM]\nSwapUsedLimit=101%\nDefaultMemoryPressureLimit=x\n"
						"DefaultMemoryPressureDurationSec=500ms\nDefaultMemoryPressureDurationSec=5y\n"), 4);
	CU_ASSERT_EQUAL(d.swap_used_permyriad, 8050);
	CU_ASSERT_EQUAL(d.limit_permyriad, 5550);
	CU_ASSERT_EQUAL(d.duration_us, 90 * SEC);
	/* a unit without a limit or duration of its own takes the defaults,
	 * now and after a reload; one with its own keeps them */
	moom_set_init(&s);
	moom_set_defaults(&s, &d);
	CU_ASSERT_EQUAL(moom_set_apply(&s, &e), 1);
	e.limit_permyriad = 4000;
	snprintf(e.path, sizeof(e.path), "/b.service");
	CU_ASSERT_EQUAL(moom_set_apply(&s, &e), 1);
	d.limit_permyriad = 7000;
	d.duration_us = 20 * SEC;
	moom_set_defaults(&s, &d);
	u = moom_set_find(&s, "/a.service");
	NEED(u);
	CU_ASSERT_EQUAL(u->limit_permyriad, 7000);
	CU_ASSERT_EQUAL(u->duration_us, 20 * SEC);
	u = moom_set_find(&s, "/b.service");
	NEED(u);
	CU_ASSERT_EQUAL(u->limit_permyriad, 4000);
	CU_ASSERT_EQUAL(u->duration_us, 20 * SEC);
	moom_set_free(&s);
}

/* ---- the connection, against a fake PID 1 */

struct msgs {
	char m[8][256];
	size_t n;
	size_t idx[8];
};

static int on_msg(void *ctx, const char *msg, size_t len, size_t index)
{
	struct msgs *g = ctx;

	if (g->n < 8 && len < 256) {
		memcpy(g->m[g->n], msg, len);
		g->m[g->n][len] = '\0';
		g->idx[g->n++] = index;
	}
	return 0;
}

static int listen_at(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 4) < 0)
		return -1;
	return fd;
}

static void test_link(void)
{
	char dir[] = "/tmp/test-moom.XXXXXX", path[128], req[256];
	struct moom_link l;
	struct msgs g;
	int lfd, cfd;
	ssize_t n;
	char *big;

	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/io.system.ManagedOOM", dir);
	moom_link_init(&l, path, false);
	CU_ASSERT_EQUAL(moom_link_connect(&l), -ENOENT); /* nobody listens yet */
	lfd = listen_at(path);
	CU_ASSERT_FATAL(lfd >= 0);
	CU_ASSERT_EQUAL_FATAL(moom_link_connect(&l), 0);
	cfd = accept(lfd, NULL, NULL);
	CU_ASSERT_FATAL(cfd >= 0);
	n = recv(cfd, req, sizeof(req), 0);
	CU_ASSERT_EQUAL_FATAL(n, (ssize_t)sizeof("{\"method\":\"" MOOM_METHOD "\",\"more\":true}"));
	CU_ASSERT_STRING_EQUAL(req, "{\"method\":\"io.systemd.ManagedOOM.SubscribeManagedOOMCGroups\",\"more\":true}");
	/* nothing yet */
	memset(&g, 0, sizeof(g));
	CU_ASSERT_EQUAL(moom_link_read(&l, on_msg, &g), 0);
	CU_ASSERT_EQUAL(g.n, 0);
	/* two messages in one write, a third cut in two */
	CU_ASSERT_EQUAL(send(cfd, "{\"a\":1}\0{\"b\":2}\0{\"c\"", 20, 0), 20);
	CU_ASSERT_EQUAL(moom_link_read(&l, on_msg, &g), 0);
	CU_ASSERT_EQUAL_FATAL(g.n, 2);
	CU_ASSERT_STRING_EQUAL(g.m[1], "{\"b\":2}");
	CU_ASSERT_EQUAL(send(cfd, ":3}\0", 4, 0), 4);
	CU_ASSERT_EQUAL(moom_link_read(&l, on_msg, &g), 0);
	CU_ASSERT_EQUAL_FATAL(g.n, 3);
	CU_ASSERT_STRING_EQUAL(g.m[2], "{\"c\":3}");
	CU_ASSERT_EQUAL(g.idx[2], 2);
	/* PID 1 goes away (daemon-reexec) */
	close(cfd);
	CU_ASSERT_EQUAL(moom_link_read(&l, on_msg, &g), -ECONNRESET);
	CU_ASSERT_EQUAL(l.fd, -1);
	/* back: a message without its end, over MOOM_MSG_MAX */
	CU_ASSERT_EQUAL_FATAL(moom_link_connect(&l), 0);
	cfd = accept(lfd, NULL, NULL);
	CU_ASSERT_FATAL(cfd >= 0);
	big = malloc(MOOM_MSG_MAX + 65536);
	NEED(big);
	memset(big, 'x', MOOM_MSG_MAX + 65536);
	{
		size_t sent = 0;
		int r = 0;

		while (sent < MOOM_MSG_MAX + 65536 && r == 0) {
			ssize_t w = send(cfd, big + sent, MOOM_MSG_MAX + 65536 - sent, MSG_DONTWAIT);

			if (w > 0)
				sent += (size_t)w;
			r = moom_link_read(&l, on_msg, &g);
		}
		CU_ASSERT_EQUAL(r, -EMSGSIZE);
	}
	CU_ASSERT_EQUAL(l.fd, -1);
	free(big);
	close(cfd);
	close(lfd);
	unlink(path);
	rmdir(dir);
	moom_link_close(&l);
}

/* A peer that must be PID 1 and is not: refused before a byte is sent. */
static void test_link_not_pid1(void)
{
	char dir[] = "/tmp/test-moom.XXXXXX", path[128];
	struct moom_link l;
	int lfd;

	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/io.system.ManagedOOM", dir);
	lfd = listen_at(path);
	CU_ASSERT_FATAL(lfd >= 0);
	moom_link_init(&l, path, true);
	CU_ASSERT_EQUAL(moom_link_connect(&l), -EPERM);
	CU_ASSERT_EQUAL(l.fd, -1);
	close(lfd);
	unlink(path);
	rmdir(dir);
}

/* The user managers' side: what a sender may name, the method of a call,
 * the user's cap counted, LISTEN_FDS, and the listening socket: bound here,
 * a stale socket file replaced, a live one left alone, a passed one taken. */
static void test_user_managers(void)
{
	static const char call[] =
		"{\"method\":\"io.systemd.oom.ReportManagedOOMCGroups\",\"parameters\":{\"cgroups\":[{\"mode\":\"kill\","
		"\"path\":\"/user.slice/user-1000.slice/user@1000.service/app.slice/a.service\",\"property\":"
		"\"ManagedOOMMemoryPressure\",\"limit\":2147483648}]},\"oneway\":true}";
	char dir[] = "/tmp/test-moom.XXXXXX", path[128], other[160];
	struct moom_set s;
	struct moom_reply r;
	struct got g;
	unsigned long uid = 99;
	bool passed = true;
	int lfd, lfd2, cfd, afd;

	CU_ASSERT_TRUE(moom_user_path_ok(1000, "/user.slice/user-1000.slice/user@1000.service"));
	CU_ASSERT_TRUE(moom_user_path_ok(1000, "/user.slice/user-1000.slice/user@1000.service/app.slice/a.service"));
	CU_ASSERT_FALSE(moom_user_path_ok(1000, "/user.slice/user-1000.slice/user@1000.services"));
	CU_ASSERT_FALSE(moom_user_path_ok(1000, "/user.slice/user-1000.slice/session-2.scope"));
	CU_ASSERT_FALSE(moom_user_path_ok(1000, "/user.slice/user-1001.slice/user@1001.service/a.service"));
	CU_ASSERT_FALSE(moom_user_path_ok(100, "/user.slice/user-1000.slice/user@1000.service/a.service"));
	CU_ASSERT_FALSE(moom_user_path_ok(1000, "/system.slice/ssh.service"));
	CU_ASSERT_FALSE(moom_user_path_ok(1000, "/"));
	CU_ASSERT_TRUE(moom_user_path_ok(0, "/system.slice/ssh.service"));

	CU_ASSERT_EQUAL(parse(call, &r, &g), 0);
	CU_ASSERT_STRING_EQUAL(r.method, MOOM_USER_METHOD);
	CU_ASSERT_FALSE(r.continues);
	CU_ASSERT_EQUAL_FATAL(g.n, 1);
	CU_ASSERT_EQUAL(g.e[0].limit_permyriad, 5000);
	CU_ASSERT_EQUAL(parse(initial, &r, &g), 0);
	CU_ASSERT_STRING_EQUAL(r.method, ""); /* a reply has none */
	moom_set_init(&s);
	CU_ASSERT_EQUAL(feed(&s, call, false), 0);
	CU_ASSERT_EQUAL(feed(&s, initial, false), 0);
	CU_ASSERT_EQUAL(moom_set_count_user(&s, 1000), 1);
	CU_ASSERT_EQUAL(moom_set_count_user(&s, 100), 0);
	moom_set_free(&s);

	CU_ASSERT_EQUAL(moom_passed_fds("1234", "1", 1234), 1);
	CU_ASSERT_EQUAL(moom_passed_fds("1234", "2", 1234), 2);
	CU_ASSERT_EQUAL(moom_passed_fds("1235", "1", 1234), 0); /* another process's */
	CU_ASSERT_EQUAL(moom_passed_fds(NULL, "1", 1234), 0);
	CU_ASSERT_EQUAL(moom_passed_fds("1234", NULL, 1234), 0);
	CU_ASSERT_EQUAL(moom_passed_fds("1234", "0", 1234), 0);
	CU_ASSERT_EQUAL(moom_passed_fds("1234", "-1", 1234), 0);
	CU_ASSERT_EQUAL(moom_passed_fds("1234", "1x", 1234), 0);
	CU_ASSERT_EQUAL(moom_passed_fds(" 1234", "1", 1234), 0);
	CU_ASSERT_EQUAL(moom_passed_fds("1234", "99999999999999999999", 1234), 0);

	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/io.system.ManagedOOM", dir);
	lfd = moom_user_listen(path, 0, &passed);
	CU_ASSERT_FATAL(lfd >= 0);
	CU_ASSERT_FALSE(passed);
	CU_ASSERT_EQUAL(moom_user_accept(lfd, &uid), -EAGAIN);
	/* somebody answers there: left alone */
	CU_ASSERT_EQUAL(moom_user_listen(path, 0, &passed), -EADDRINUSE);
	{
		struct moom_link c;

		moom_link_init(&c, path, false);
		CU_ASSERT_EQUAL(moom_link_connect(&c), 0);
		afd = moom_user_accept(lfd, &uid);
		CU_ASSERT(afd >= 0);
		CU_ASSERT_EQUAL(uid, (unsigned long)geteuid());
		if (afd >= 0)
			close(afd);
		moom_link_close(&c);
	}
	close(lfd);
	/* a socket file nobody answers on: replaced */
	lfd = moom_user_listen(path, 0, &passed);
	CU_ASSERT(lfd >= 0);
	/* a socket passed at fd 3 (as systemd-oomd.socket's): taken, whatever else is passed */
	snprintf(other, sizeof(other), "%s/other", dir);
	lfd2 = listen_at(other);
	CU_ASSERT_FATAL(lfd2 >= 0);
	/* the passed ones from fd 3 on, whatever else the harness holds there */
	cfd = fcntl(lfd2, F_DUPFD, 3);
	afd = lfd >= 0 ? fcntl(lfd, F_DUPFD, cfd + 1) : -1;
	CU_ASSERT(cfd >= 3 && afd > cfd);
	/* the copies alone listen now */
	close(lfd2);
	if (lfd >= 0)
		close(lfd);
	if (cfd >= 3 && afd > cfd) {
		CU_ASSERT_EQUAL(moom_user_listen(path, afd - 3 + 1, &passed), afd);
		CU_ASSERT_TRUE(passed);
		CU_ASSERT_EQUAL(moom_user_listen(other, afd - 3 + 1, &passed), cfd);
		CU_ASSERT_TRUE(passed);
		/* not among the first n: bound here, though a listener holds the path */
		CU_ASSERT_EQUAL(moom_user_listen(path, cfd - 3 + 1, &passed), -EADDRINUSE);
	}
	if (cfd >= 0)
		close(cfd);
	if (afd >= 0)
		close(afd);
	unlink(path);
	unlink(other);
	rmdir(dir);
}

int main(void)
{
	static CU_TestInfo tests[] = {
		{ "systemd 252's messages", test_systemd_252_messages },
		{ "unit paths are checked", test_path_check },
		{ "malformed and hostile messages", test_malformed },
		{ "huge paths and messages", test_huge },
		{ "random damage never crashes", test_fuzz },
		{ "the set follows the messages", test_unit_set },
		{ "at most MOOM_UNITS_MAX units", test_unit_cap },
		{ "the pressure clock", test_pressure_clock },
		{ "the swap condition", test_swap_condition },
		{ "oomd.conf's defaults", test_oomd_conf },
		{ "the swap kill's group, and what cannot hide there", test_swap_walk },
		{ "a flood of a user's groups costs their own subtree only", test_swap_walk_flood },
		{ "the connection to a fake PID 1", test_link },
		{ "a peer that is not PID 1", test_link_not_pid1 },
		{ "the user managers' socket", test_user_managers },
		CU_TEST_INFO_NULL,
	};
	static CU_SuiteInfo suites[] = {
		{ "moom", NULL, NULL, NULL, NULL, tests },
		CU_SUITE_INFO_NULL,
	};

	return cunit_tap_main(suites);
}
