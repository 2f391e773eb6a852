/* SPDX-License-Identifier: MIT */
/* test-cgpattern: the cgroup patterns of tiers (parsing, matching, scope),
 * the walk that finds their groups in a fixture cgroup tree, and the
 * inotify watch that hears groups come and go; and the config keys. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgpattern.h"
#include "config.h"
#include "cunit-tap.h"
#include "fileio.h"
#include "fixture-tree.h"
#include "groupset.h"

static int parse(const char *v, char *out, size_t size)
{
	char why[256];

	return cgpattern_parse(v, out, size, why, sizeof(why));
}

static void test_parse(void)
{
	char out[256], why[256];

	CU_ASSERT_EQUAL(parse("/user.slice/user-*.slice", out, sizeof(out)), 0);
	CU_ASSERT_STRING_EQUAL(out, "/user.slice/user-*.slice");
	CU_ASSERT_EQUAL(parse("//machine.slice///*/", out, sizeof(out)), 0);
	CU_ASSERT_STRING_EQUAL(out, "/machine.slice/*");
	CU_ASSERT_EQUAL(parse("/a/[!x]?/c[]]d", out, sizeof(out)), 0);
	CU_ASSERT_STRING_EQUAL(out, "/a/[!x]?/c[]]d");
	/* relative, the root alone, dot components, unclosed brackets, a lone backslash */
	CU_ASSERT_EQUAL(cgpattern_parse("user.slice", out, sizeof(out), why, sizeof(why)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "starting with '/'"));
	CU_ASSERT_EQUAL(cgpattern_parse("/", out, sizeof(out), why, sizeof(why)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "whole system"));
	CU_ASSERT_EQUAL(parse("/a/../b", out, sizeof(out)), -EINVAL);
	CU_ASSERT_EQUAL(parse("/a/./b", out, sizeof(out)), -EINVAL);
	CU_ASSERT_EQUAL(cgpattern_parse("/a/b[x", out, sizeof(out), why, sizeof(why)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "'[' without its ']'"));
	CU_ASSERT_EQUAL(parse("/a/[]", out, sizeof(out)), -EINVAL);
	CU_ASSERT_EQUAL(parse("/a/b\\", out, sizeof(out)), -EINVAL);
	/* too long for the buffer */
	CU_ASSERT_EQUAL(parse("/aaaaaaaa/bbbbbbbb", out, 10), -EINVAL);
}

static void test_match(void)
{
	const char *p = "/user.slice/user-*.slice", *c;
	size_t len = 0;

	CU_ASSERT_EQUAL(cgpattern_depth(p), 2);
	CU_ASSERT_EQUAL(cgpattern_depth("/"), 0);
	CU_ASSERT_TRUE(cgpattern_literal(p, 0));
	CU_ASSERT_FALSE(cgpattern_literal(p, 1));
	CU_ASSERT_FALSE(cgpattern_literal(p, 2));
	c = cgpattern_component(p, 1, &len); /* len is set by the call: not in the same expression */
	CU_ASSERT_PTR_NOT_NULL(c);
	if (!c)
		return;
	CU_ASSERT_EQUAL(len, strlen("user-*.slice"));
	CU_ASSERT_EQUAL(strncmp(c, "user-*.slice", len), 0);
	CU_ASSERT_TRUE(cgpattern_match(p, "/user.slice/user-1000.slice"));
	CU_ASSERT_FALSE(cgpattern_match(p, "/user.slice"));
	/* a '*' never crosses a '/' */
	CU_ASSERT_FALSE(cgpattern_match(p, "/user.slice/user-1000.slice/session-2.scope"));
	CU_ASSERT_FALSE(cgpattern_match("/a/*", "/a/b/c"));
	CU_ASSERT_FALSE(cgpattern_match(p, "/system.slice/user-1000.slice"));
	/* a leading dot hides nothing */
	CU_ASSERT_TRUE(cgpattern_match("/machine.slice/*", "/machine.slice/.hidden"));
	CU_ASSERT_TRUE(cgpattern_match("/m/[!x]?", "/m/ab"));
	CU_ASSERT_FALSE(cgpattern_match("/m/[!x]?", "/m/xb"));
	CU_ASSERT_TRUE(cgpattern_match_component("/m/c[]]d", 1, "c]d"));
	/* an escaped wildcard is literal */
	CU_ASSERT_TRUE(cgpattern_match("/a/\\*", "/a/*"));
	CU_ASSERT_FALSE(cgpattern_match("/a/\\*", "/a/b"));
}

static void test_within(void)
{
	CU_ASSERT_TRUE(cgpattern_within("/user.slice/user-*.slice", "/"));
	CU_ASSERT_TRUE(cgpattern_within("/user.slice/user-*.slice", "/user.slice"));
	CU_ASSERT_TRUE(cgpattern_within("/user.slice/user-*.slice", "/user.slice/user-1000.slice"));
	CU_ASSERT_TRUE(cgpattern_within("/*/x", "/machine.slice"));
	CU_ASSERT_FALSE(cgpattern_within("/user.slice/user-*.slice", "/system.slice"));
	CU_ASSERT_FALSE(cgpattern_within("/user.slice/*", "/user.slice/a/b"));
}

static char root[] = "/tmp/psi-lmkd-test-cgpattern-XXXXXX";

static void mk(const char *rel)
{
	char path[512];

	snprintf(path, sizeof(path), "sys/fs/cgroup%s", rel);
	fixture_mkdir(root, path);
}

struct seen {
	size_t n;
	char path[16][256];
};

static int record(void *ctx, const char *path)
{
	struct seen *s = ctx;

	if (s->n < 16)
		snprintf(s->path[s->n++], sizeof(s->path[0]), "%s", path);
	return 0;
}

static bool has(const struct seen *s, const char *path)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (strcmp(s->path[i], path) == 0)
			return true;
	return false;
}

static int suite_init(void)
{
	return mkdtemp(root) ? 0 : -1;
}

static int suite_clean(void)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd) == 0 ? 0 : -1;
}

static void test_walk(void)
{
	struct groupset gs;
	struct seen s = { 0 };
	int rootfd = sysroot_open(root);

	CU_ASSERT_TRUE_FATAL(rootfd >= 0);
	fixture_mkdir(root, "sys");
	fixture_mkdir(root, "sys/fs");
	mk("");
	mk("/user.slice");
	mk("/user.slice/user-1000.slice");
	mk("/user.slice/user-1001.slice");
	mk("/user.slice/user-1001.slice/session-1.scope");
	mk("/user.slice/.user-1002.slice");
	mk("/user.slice/other.slice");
	mk("/system.slice");
	/* a file with a matching name is no group */
	fixture_put(root, "sys/fs/cgroup/user.slice/user-9.slice", "");
	CU_ASSERT_EQUAL_FATAL(groupset_init(&gs, rootfd, "/sys/fs/cgroup", false), 0);
	CU_ASSERT_EQUAL(groupset_walk(&gs, "/user.slice/user-*.slice", record, &s), 2);
	CU_ASSERT_TRUE(has(&s, "/user.slice/user-1000.slice"));
	CU_ASSERT_TRUE(has(&s, "/user.slice/user-1001.slice"));
	/* the literal first level is looked up, not listed: one listing */
	CU_ASSERT_EQUAL(gs.dirs_read, 1);
	s.n = 0;
	CU_ASSERT_EQUAL(groupset_walk(&gs, "/user.slice/*", record, &s), 4);
	CU_ASSERT_TRUE(has(&s, "/user.slice/.user-1002.slice"));
	s.n = 0;
	CU_ASSERT_EQUAL(groupset_walk(&gs, "/*/*/session-*.scope", record, &s), 1);
	CU_ASSERT_TRUE(has(&s, "/user.slice/user-1001.slice/session-1.scope"));
	/* a missing literal level: no group, no error */
	s.n = 0;
	CU_ASSERT_EQUAL(groupset_walk(&gs, "/machine.slice/*", record, &s), 0);
	CU_ASSERT_EQUAL(groupset_walk(&gs, "/user.slice/user-9.slice", record, &s), 0);
	groupset_deinit(&gs);
	close(rootfd);
}

static int stop_at_first(void *ctx, const char *path)
{
	(void)ctx;
	(void)path;
	return -ECANCELED;
}

static void test_walk_stops(void)
{
	struct groupset gs;
	int rootfd = sysroot_open(root);

	CU_ASSERT_TRUE_FATAL(rootfd >= 0);
	CU_ASSERT_EQUAL_FATAL(groupset_init(&gs, rootfd, "/sys/fs/cgroup", false), 0);
	CU_ASSERT_EQUAL(groupset_walk(&gs, "/user.slice/*", stop_at_first, NULL), -ECANCELED);
	groupset_deinit(&gs);
	close(rootfd);
}

/* inotify hears a group made or removed below a watched level, and nothing
 * while the tree is quiet */
static void test_watch(void)
{
	struct groupset gs;
	struct seen s = { 0 };
	int rootfd = sysroot_open(root);
	char path[512];

	CU_ASSERT_TRUE_FATAL(rootfd >= 0);
	CU_ASSERT_EQUAL_FATAL(groupset_init(&gs, rootfd, "/sys/fs/cgroup", true), 0);
	CU_ASSERT_TRUE_FATAL(gs.inotify_fd >= 0);
	CU_ASSERT_EQUAL(groupset_walk(&gs, "/machine.slice/*", record, &s), 0);
	/* the mount root is watched: the missing literal level may come */
	CU_ASSERT_EQUAL(gs.dirs_watched, 1);
	CU_ASSERT_FALSE(groupset_drain(&gs));
	mk("/machine.slice");
	CU_ASSERT_TRUE(groupset_drain(&gs));
	CU_ASSERT_FALSE(groupset_drain(&gs));
	gs.dirs_watched = 0;
	CU_ASSERT_EQUAL(groupset_walk(&gs, "/machine.slice/*", record, &s), 0);
	CU_ASSERT_EQUAL(gs.dirs_watched, 2);
	mk("/machine.slice/vm1");
	CU_ASSERT_TRUE(groupset_drain(&gs));
	CU_ASSERT_EQUAL(groupset_walk(&gs, "/machine.slice/*", record, &s), 1);
	CU_ASSERT_TRUE(has(&s, "/machine.slice/vm1"));
	/* the group itself is not watched: what happens inside it is its own */
	mk("/machine.slice/vm1/inner");
	CU_ASSERT_FALSE(groupset_drain(&gs));
	snprintf(path, sizeof(path), "%s/sys/fs/cgroup/machine.slice/vm1/inner", root);
	CU_ASSERT_EQUAL(rmdir(path), 0);
	snprintf(path, sizeof(path), "%s/sys/fs/cgroup/machine.slice/vm1", root);
	CU_ASSERT_EQUAL(rmdir(path), 0);
	CU_ASSERT_TRUE(groupset_drain(&gs));
	s.n = 0;
	CU_ASSERT_EQUAL(groupset_walk(&gs, "/machine.slice/*", record, &s), 0);
	groupset_deinit(&gs);
	close(rootfd);
}

static struct config *parse_config(const char *text, struct config_error *err)
{
	static struct config c;

	config_init(&c);
	return config_parse_string(&c, text, "t.conf", err) == 0 ? &c : NULL;
}

static void test_config(void)
{
	struct config_error err;
	struct config *c;

	c = parse_config("[daemon]\nmax_groups = 100\n[tier users]\ntrigger = some 100ms 1s\nmin_oom_score_adj = 0\n"
			 "cgroup = /user.slice/user-*.slice/\n",
			 &err);
	CU_ASSERT_PTR_NOT_NULL(c);
	if (!c)
		return;
	CU_ASSERT_EQUAL(c->max_groups, 100);
	CU_ASSERT_STRING_EQUAL(c->tiers[0].cgroup, "/user.slice/user-*.slice");
	c = parse_config("[tier t]\ntrigger = some 100ms 1s\nmin_oom_score_adj = 0\n", &err);
	CU_ASSERT_PTR_NOT_NULL(c);
	if (!c)
		return;
	CU_ASSERT_EQUAL(c->max_groups, CONFIG_DEFAULT_MAX_GROUPS);
	CU_ASSERT_STRING_EQUAL(c->tiers[0].cgroup, "");
	/* each error names its line */
	CU_ASSERT_PTR_NULL(parse_config("[tier t]\ntrigger = some 100ms 1s\nmin_oom_score_adj = 0\ncgroup = a/*\n", &err));
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "t.conf:4: "));
	CU_ASSERT_PTR_NULL(parse_config("[tier t]\ntrigger = some 100ms 1s\nmin_oom_score_adj = 0\ncgroup = /a[\n", &err));
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "t.conf:4: "));
	CU_ASSERT_PTR_NULL(parse_config("[daemon]\nmax_groups = 0\n", &err));
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "t.conf:2: max_groups must be a number from 1 to 4096"));
	CU_ASSERT_PTR_NULL(parse_config("[daemon]\nmax_groups = 5000\n", &err));
	/* a group tier needs a trigger, takes no low_available, no warn */
	CU_ASSERT_PTR_NULL(parse_config("[tier t]\nlow_available = 5%\nmin_oom_score_adj = 0\ncgroup = /a/*\n", &err));
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "t.conf:4: "));
	CU_ASSERT_PTR_NULL(parse_config("[tier t]\ntrigger = some 100ms 1s\nlow_available = 5%\nmin_oom_score_adj = 0\n"
					"cgroup = /a/*\n",
					&err));
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "t.conf:3: low_available cannot be combined with cgroup"));
	CU_ASSERT_PTR_NULL(parse_config("[tier t]\ntrigger = some 100ms 1s\naction = warn\ncgroup = /a/*\n", &err));
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "t.conf:4: action = warn cannot be combined with cgroup"));
	/* its groups must be able to lie in the daemon's scope */
	CU_ASSERT_PTR_NULL(parse_config("[daemon]\nscope = /system.slice\n[tier t]\ntrigger = some 100ms 1s\n"
					"min_oom_score_adj = 0\ncgroup = /user.slice/*\n",
					&err));
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "t.conf:6: no group matching /user.slice/* can lie inside scope"));
	/* which tiers share a pattern, and which one stands for it */
	c = parse_config("[tier a]\ntrigger = some 100ms 1s\nmin_oom_score_adj = 0\ncgroup = /x/*\n"
			 "[tier b]\ntrigger = some 100ms 1s\nmin_oom_score_adj = 0\n"
			 "[tier c]\ntrigger = some 100ms 1s\nmin_oom_score_adj = 0\ncgroup = /x/*/\n"
			 "[tier d]\ntrigger = some 100ms 1s\nmin_oom_score_adj = 0\ncgroup = /y/*\n",
			 &err);
	CU_ASSERT_PTR_NOT_NULL(c);
	if (!c)
		return;
	CU_ASSERT_EQUAL(config_cgroup_tiers(c, "/x/*"), 0x5);
	CU_ASSERT_EQUAL(config_cgroup_tiers(c, ""), 0x2);
	CU_ASSERT_EQUAL(config_cgroup_tier_count(c), 3);
	CU_ASSERT_TRUE(config_cgroup_first(c, 0));
	CU_ASSERT_FALSE(config_cgroup_first(c, 1));
	CU_ASSERT_FALSE(config_cgroup_first(c, 2));
	CU_ASSERT_TRUE(config_cgroup_first(c, 3));
	CU_ASSERT_PTR_NOT_NULL(parse_config("[daemon]\nscope = /user.slice\n[tier t]\ntrigger = some 100ms 1s\n"
					    "min_oom_score_adj = 0\ncgroup = /user.slice/*\n",
					    &err));
}

int main(void)
{
	static CU_TestInfo pure[] = {
		{ "parse", test_parse },
		{ "match", test_match },
		{ "within a scope", test_within },
		{ "config keys", test_config },
		CU_TEST_INFO_NULL,
	};
	static CU_TestInfo tree[] = {
		{ "walk", test_walk },
		{ "a walk stops at an error", test_walk_stops },
		{ "inotify: groups come and go", test_watch },
		CU_TEST_INFO_NULL,
	};
	static CU_SuiteInfo suites[] = {
		{ "cgpattern", NULL, NULL, NULL, NULL, pure },
		{ "groupset", suite_init, suite_clean, NULL, NULL, tree },
		CU_SUITE_INFO_NULL,
	};

	return cunit_tap_main(suites);
}
