/* SPDX-License-Identifier: MIT */
/* test-lmkprops: lmkd's properties mapped onto the configuration
 * (src/lmkprops.c): each mapped property, lmkd's lookup order, the ignored
 * ones, every bad value an error naming the property and its value, the
 * key=value file, and the whole path through config_load_file. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "config.h"
#include "cunit-tap.h"
#include "fileio.h"
#include "lmkprops.h"

static struct config cfg;
static struct config_error err;
static char profile[CONFIG_FILE_MAX / 16];

/* the shipped Android profile, parsed (tiers medium, thrashing, critical, last-resort) */
static void load_profile(void)
{
	const char *srcdir = getenv("top_srcdir");
	char path[1024], *text = NULL;
	size_t len = 0;

	snprintf(path, sizeof(path), "%s/conf/psi-lmkd-android.conf", srcdir ? srcdir : ".");
	CU_ASSERT_EQUAL_FATAL(read_regular_file(path, sizeof(profile) - 1, &text, &len), 0);
	snprintf(profile, sizeof(profile), "%s", text);
	free(text);
	CU_ASSERT_EQUAL_FATAL(config_parse_string(&cfg, profile, "android.conf", &err), 0);
	CU_ASSERT_EQUAL_FATAL(cfg.lmkd_properties, CONFIG_PROPS_OFF);
}

static const struct tier_config *tier(const char *name)
{
	static const struct tier_config none;
	size_t i;

	for (i = 0; i < cfg.n_tiers; i++)
		if (strcmp(cfg.tiers[i].name, name) == 0)
			return &cfg.tiers[i];
	CU_FAIL("no such tier");
	return &none;
}

/* the properties text applied to the profile: lmkprops_apply's result */
static int apply(const char *props)
{
	static struct lmkprops_file f;
	int r;

	load_profile();
	memset(&err, 0, sizeof(err));
	r = lmkprops_file_parse(&f, props, "test.prop", &err);
	CU_ASSERT_EQUAL_FATAL(r, 0);
	return lmkprops_apply(&cfg, lmkprops_file_get, &f, "test.prop", &err);
}

static void test_mapped(void)
{
	char where[CONFIG_WHERE_MAX];

	CU_ASSERT_EQUAL_FATAL(apply("ro.lmk.psi_partial_stall_ms=120\n"
				    "ro.lmk.psi_complete_stall_ms=500\n"
				    "ro.lmk.medium=700\n"
				    "ro.lmk.critical=100\n"
				    "ro.lmk.kill_timeout_ms=250\n"
				    "ro.lmk.swap_free_low_percentage=20\n"
				    "ro.lmk.debug=true\n"
				    "ro.lmk.use_psi=1\n"), 0);
	CU_ASSERT_EQUAL(tier("medium")->stall_us, 120000);
	CU_ASSERT_EQUAL(tier("medium")->window_us, 1000000); /* the file's: some, 1 s */
	CU_ASSERT_EQUAL(tier("medium")->state, PSI_SOME);
	CU_ASSERT_EQUAL(tier("critical")->stall_us, 500000);
	CU_ASSERT_EQUAL(tier("critical")->state, PSI_FULL);
	CU_ASSERT_EQUAL(tier("medium")->min_oom_score_adj, 700);
	CU_ASSERT_EQUAL(tier("critical")->min_oom_score_adj, 100);
	CU_ASSERT_EQUAL(tier("thrashing")->min_oom_score_adj, 201); /* untouched */
	CU_ASSERT_EQUAL(cfg.kill_timeout_us, 250000);
	CU_ASSERT(tier("last-resort")->low_swap.set && tier("last-resort")->low_swap.percent);
	CU_ASSERT_EQUAL(tier("last-resort")->low_swap.value, 2000); /* hundredths of a percent */
	CU_ASSERT_FALSE(tier("medium")->low_swap.set);              /* no low_available there */
	CU_ASSERT(cfg.lmk_debug);
	CU_ASSERT_EQUAL(cfg.n_props, 8);
	for (size_t i = 0; i < cfg.n_props; i++)
		CU_ASSERT(cfg.props[i].used);
	/* where each value comes from, as --check-config shows it */
	CU_ASSERT_STRING_EQUAL(config_where(&cfg, cfg.origin[1][0], where, sizeof(where)),
			       "property ro.lmk.psi_partial_stall_ms=120");
	CU_ASSERT_STRING_EQUAL(config_where(&cfg, cfg.origin[1][1], where, sizeof(where)), "property ro.lmk.medium=700");
}

/* lmkd's order: the experiment's persist.device_config.lmkd_native.NAME
 * before the device's ro.lmk.NAME; unset or empty: the file's value */
static void test_order(void)
{
	CU_ASSERT_EQUAL_FATAL(apply("ro.lmk.medium=700\n"
				    "persist.device_config.lmkd_native.medium=900\n"
				    "persist.device_config.lmkd_native.critical=\n"
				    "ro.lmk.critical=50\n"), 0);
	CU_ASSERT_EQUAL(tier("medium")->min_oom_score_adj, 900);
	CU_ASSERT_STRING_EQUAL(cfg.props[0].name, "persist.device_config.lmkd_native.medium");
	CU_ASSERT_EQUAL(tier("critical")->min_oom_score_adj, 50);
	CU_ASSERT_EQUAL(cfg.n_props, 2);
	/* integers as lmkd reads them (strtol): a leading '+' is fine there */
	CU_ASSERT_EQUAL_FATAL(apply("ro.lmk.medium=+850\nro.lmk.kill_timeout_ms=+100\n"), 0);
	CU_ASSERT_EQUAL(tier("medium")->min_oom_score_adj, 850);
	CU_ASSERT_EQUAL(cfg.kill_timeout_us, 100000);
	/* nothing set: the profile as it is */
	CU_ASSERT_EQUAL_FATAL(apply("# nothing of lmkd's\nro.build.type=userdebug\n"), 0);
	CU_ASSERT_EQUAL(tier("medium")->min_oom_score_adj, 800);
	CU_ASSERT_EQUAL(tier("medium")->stall_us, 70000);
	CU_ASSERT_EQUAL(cfg.kill_timeout_us, 500000);
	CU_ASSERT_FALSE(cfg.lmk_debug);
	CU_ASSERT_EQUAL(cfg.n_props, 0);
}

/* ro.config.low_ram: lmkd's low-RAM partial stall (200 ms), unless the
 * stall property itself is set; kill_timeout_ms = 0: psi-lmkd's longest */
static void test_defaults_of_lmkd(void)
{
	CU_ASSERT_EQUAL_FATAL(apply("ro.config.low_ram=true\n"), 0);
	CU_ASSERT_EQUAL(tier("medium")->stall_us, LMKPROPS_LOW_RAM_STALL_MS * 1000);
	CU_ASSERT_EQUAL_FATAL(apply("ro.config.low_ram=true\npersist.device_config.lmkd_native.psi_partial_stall_ms=90\n"),
			      0);
	CU_ASSERT_EQUAL(tier("medium")->stall_us, 90000);
	CU_ASSERT_EQUAL_FATAL(apply("ro.config.low_ram=false\n"), 0);
	CU_ASSERT_EQUAL(tier("medium")->stall_us, 70000);
	CU_ASSERT_EQUAL_FATAL(apply("ro.lmk.kill_timeout_ms=0\n"), 0);
	CU_ASSERT_EQUAL(cfg.kill_timeout_us, CONFIG_KILL_TIMEOUT_MAX_US);
	CU_ASSERT_EQUAL_FATAL(apply("ro.lmk.swap_free_low_percentage=0\n"), 0);
	CU_ASSERT_EQUAL(tier("last-resort")->low_swap.value, 0);
}

/* read, reported, no effect */
static void test_ignored(void)
{
	CU_ASSERT_EQUAL_FATAL(apply("ro.lmk.thrashing_limit=30\n"
				    "ro.lmk.kill_heaviest_task=true\n"
				    "ro.lmk.use_minfree_levels=true\n"
				    "persist.device_config.lmkd_native.lowmem_min_oom_score=600\n"
				    "ro.lmk.low=1001\n"
				    "ro.config.per_app_memcg=true\n"), 0);
	CU_ASSERT_EQUAL(cfg.n_props, 6);
	for (size_t i = 0; i < cfg.n_props; i++)
		CU_ASSERT_FALSE(cfg.props[i].used);
	CU_ASSERT_EQUAL(tier("medium")->min_oom_score_adj, 800);
	CU_ASSERT_EQUAL(tier("last-resort")->min_oom_score_adj, 0);
}

/* Each bad value: an error naming the source, the property and the value. */
static void expect_error(const char *props, const char *msg)
{
	CU_ASSERT_EQUAL(apply(props), -EINVAL);
	if (!strstr(err.msg, msg))
		printf("# expected \"%s\", got \"%s\"\n", msg, err.msg);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, msg));
}

static void test_errors(void)
{
	expect_error("ro.lmk.medium=abc\n", "test.prop:1: ro.lmk.medium=abc: not an oom_score_adj of -1000..1000");
	expect_error("ro.lmk.critical=1001\n", "test.prop:1: ro.lmk.critical=1001: not an oom_score_adj");
	/* the line of the property at fault, as the file's own errors give it */
	expect_error("# lmkd\nro.lmk.medium=700\n\nro.lmk.critical=x\n", "test.prop:4: ro.lmk.critical=x: not an oom_score_adj");
	expect_error("ro.lmk.medium=80O\n", "ro.lmk.medium=80O: not an oom_score_adj");
	expect_error("ro.lmk.psi_partial_stall_ms=0\n", "ro.lmk.psi_partial_stall_ms=0: not a stall of 1..10000 ms");
	expect_error("ro.lmk.psi_partial_stall_ms=70ms\n", "ro.lmk.psi_partial_stall_ms=70ms: not a stall");
	expect_error("ro.lmk.psi_complete_stall_ms=1500\n",
		     "ro.lmk.psi_complete_stall_ms=1500: the stall exceeds [tier critical]'s window of 1000ms");
	expect_error("ro.lmk.kill_timeout_ms=5\n", "ro.lmk.kill_timeout_ms=5: not 0");
	expect_error("ro.lmk.kill_timeout_ms=-1\n", "ro.lmk.kill_timeout_ms=-1: not 0");
	expect_error("ro.lmk.swap_free_low_percentage=101\n", "ro.lmk.swap_free_low_percentage=101: not a percentage");
	expect_error("ro.lmk.use_psi=false\n", "ro.lmk.use_psi=false: psi-lmkd has PSI monitors only");
	expect_error("persist.device_config.lmkd_native.debug=maybe\n",
		     "persist.device_config.lmkd_native.debug=maybe: not a boolean");
	expect_error("ro.config.low_ram=2\n", "ro.config.low_ram=2: not a boolean");
	/* the persist value is the one judged, even with a good ro.lmk. one */
	expect_error("ro.lmk.medium=700\npersist.device_config.lmkd_native.medium=x\n",
		     "persist.device_config.lmkd_native.medium=x");
}

/* a property for a tier the configuration lacks is an error, not a no-op */
static void test_missing_tier(void)
{
	static struct lmkprops_file f;

	CU_ASSERT_EQUAL_FATAL(config_parse_string(&cfg, "[tier only]\ntrigger = some 10% 1s\nmin_oom_score_adj = 0\n",
						  "one.conf", &err), 0);
	CU_ASSERT_EQUAL_FATAL(lmkprops_file_parse(&f, "ro.lmk.medium=700\n", "test.prop", &err), 0);
	CU_ASSERT_EQUAL(lmkprops_apply(&cfg, lmkprops_file_get, &f, "test.prop", &err), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "ro.lmk.medium=700: it sets [tier medium]"));
	CU_ASSERT_EQUAL_FATAL(lmkprops_file_parse(&f, "ro.lmk.swap_free_low_percentage=5\n", "test.prop", &err), 0);
	CU_ASSERT_EQUAL(lmkprops_apply(&cfg, lmkprops_file_get, &f, "test.prop", &err), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "no tier has low_available"));
	/* ignored ones need no tier */
	CU_ASSERT_EQUAL_FATAL(lmkprops_file_parse(&f, "ro.lmk.thrashing_limit=5\n", "test.prop", &err), 0);
	CU_ASSERT_EQUAL(lmkprops_apply(&cfg, lmkprops_file_get, &f, "test.prop", &err), 0);
}

static void test_file(void)
{
	static struct lmkprops_file f;
	char v[CONFIG_PROP_VALUE_MAX];

	CU_ASSERT_EQUAL(lmkprops_file_parse(&f, "# build.prop\n\n ro.lmk.medium = 700 \nro.product.name=x\n"
						"ro.lmk.debug=\nro.config.low_ram=true", "a.prop", &err), 0);
	CU_ASSERT_EQUAL(f.n, 3);
	lmkprops_file_get(&f, "ro.lmk.medium", v, sizeof(v));
	CU_ASSERT_STRING_EQUAL(v, "700");
	lmkprops_file_get(&f, "ro.product.name", v, sizeof(v));
	CU_ASSERT_STRING_EQUAL(v, ""); /* not lmkd's: not kept */
	lmkprops_file_get(&f, "ro.config.low_ram", v, sizeof(v));
	CU_ASSERT_STRING_EQUAL(v, "true");

	CU_ASSERT_EQUAL(lmkprops_file_parse(&f, "ro.lmk.medium=700\n\nro.lmk.medum=1\n", "a.prop", &err), -EINVAL);
	CU_ASSERT_STRING_EQUAL(err.msg, "a.prop:3: ro.lmk.medum: not one of lmkd's properties that psi-lmkd knows");
	CU_ASSERT_EQUAL(lmkprops_file_parse(&f, "ro.lmk.medium=700\nro.lmk.medium=800\n", "a.prop", &err), -EINVAL);
	CU_ASSERT_STRING_EQUAL(err.msg, "a.prop:2: ro.lmk.medium is set twice");
	CU_ASSERT_EQUAL(lmkprops_file_parse(&f, "ro.lmk.medium 700\n", "a.prop", &err), -EINVAL);
	CU_ASSERT_STRING_EQUAL(err.msg, "a.prop:1: not NAME=VALUE: \"ro.lmk.medium 700\"");
	CU_ASSERT_TRUE(lmkprops_known("persist.device_config.lmkd_native.thrashing_limit"));
	CU_ASSERT_FALSE(lmkprops_known("ro.lmk.nonsense"));
	CU_ASSERT_FALSE(lmkprops_known("ro.config.nonsense"));
}

/* The whole path: lmkd_properties = PATH in a drop-in; the properties win
 * over the files; a bad one fails the load (a reload keeps the old
 * configuration, daemon.c); a changed file is read again on the next load,
 * as UPDATE_PROPS and SIGHUP load. */
static void test_load(void)
{
	char dir[] = "/tmp/psi-lmkd-test-lmkprops-XXXXXX";
	char main_conf[256], dropdir[300], dropin[320], props[256], where[CONFIG_WHERE_MAX];
	FILE *f;

	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	load_profile();
	snprintf(main_conf, sizeof(main_conf), "%s/main.conf", dir);
	snprintf(dropdir, sizeof(dropdir), "%s.d", main_conf);
	snprintf(dropin, sizeof(dropin), "%s/props.conf", dropdir);
	snprintf(props, sizeof(props), "%s/lmk.prop", dir);
	CU_ASSERT_PTR_NOT_NULL_FATAL(f = fopen(main_conf, "w"));
	fputs(profile, f);
	fclose(f);
	CU_ASSERT_EQUAL_FATAL(mkdir(dropdir, 0700), 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(f = fopen(dropin, "w"));
	fprintf(f, "[daemon]\nlmkd_properties = %s\nkill_timeout = 300ms\n[tier medium]\nmin_oom_score_adj = 850\n", props);
	fclose(f);
	CU_ASSERT_PTR_NOT_NULL_FATAL(f = fopen(props, "w"));
	fputs("ro.lmk.medium=700\nro.lmk.thrashing_limit=30\n", f);
	fclose(f);

	CU_ASSERT_EQUAL(config_load_file(&cfg, main_conf, NULL, &err), 0);
	CU_ASSERT_EQUAL(tier("medium")->min_oom_score_adj, 700); /* the property beats the drop-in */
	CU_ASSERT_EQUAL(cfg.kill_timeout_us, 300000);             /* the drop-in's: no property */
	CU_ASSERT_EQUAL(cfg.n_props, 2);
	CU_ASSERT_STRING_EQUAL(config_where(&cfg, cfg.origin[1][1], where, sizeof(where)), "property ro.lmk.medium=700");

	/* read again on each load */
	CU_ASSERT_PTR_NOT_NULL_FATAL(f = fopen(props, "w"));
	fputs("persist.device_config.lmkd_native.medium=950\n", f);
	fclose(f);
	CU_ASSERT_EQUAL(config_load_file(&cfg, main_conf, NULL, &err), 0);
	CU_ASSERT_EQUAL(tier("medium")->min_oom_score_adj, 950);

	/* a bad value fails the load, naming the file, the property, the value */
	CU_ASSERT_PTR_NOT_NULL_FATAL(f = fopen(props, "w"));
	fputs("ro.lmk.kill_timeout_ms=fast\n", f);
	fclose(f);
	CU_ASSERT_EQUAL(config_load_file(&cfg, main_conf, NULL, &err), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "/lmk.prop:1: ro.lmk.kill_timeout_ms=fast: not 0"));
	CU_ASSERT_EQUAL(cfg.kill_timeout_us, 300000); /* cfg as the last good load left it */

	/* a NUL byte: the file and its line */
	CU_ASSERT_PTR_NOT_NULL_FATAL(f = fopen(props, "w"));
	fwrite("# lmkd\nro.lmk.medium=700\nro.lmk.\0x=1\n", 1, 36, f);
	fclose(f);
	CU_ASSERT_EQUAL(config_load_file(&cfg, main_conf, NULL, &err), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "/lmk.prop:3: the file contains a NUL byte"));

	/* a missing file is an error too */
	CU_ASSERT_EQUAL(unlink(props), 0);
	CU_ASSERT_EQUAL(config_load_file(&cfg, main_conf, NULL, &err), -ENOENT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "cannot read lmkd's properties"));
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, ".conf:2: lmkd_properties = ")); /* where the config names the file */
	if (!strstr(err.msg, ".conf:2: lmkd_properties = "))
		printf("# got \"%s\"\n", err.msg);

	/* system: only where bionic's property area is */
	CU_ASSERT_PTR_NOT_NULL_FATAL(f = fopen(dropin, "w"));
	fputs("[daemon]\nlmkd_properties = system\n", f);
	fclose(f);
#ifdef HAVE_ANDROID_PROPERTIES
	CU_ASSERT_EQUAL(config_load_file(&cfg, main_conf, NULL, &err), 0);
#else
	CU_ASSERT_EQUAL(config_load_file(&cfg, main_conf, NULL, &err), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "props.conf:2: lmkd_properties = system needs Android's property area"));
	CU_ASSERT_EQUAL(lmkprops_publish_reportkills(), -ENOTSUP);
#endif
	unlink(dropin);
	rmdir(dropdir);
	unlink(main_conf);
	CU_ASSERT_EQUAL(rmdir(dir), 0);
}

int main(void)
{
	static CU_TestInfo tests[] = {
		{ "mapped properties set the configuration", test_mapped },
		{ "persist.device_config before ro.lmk, unset keeps the file", test_order },
		{ "lmkd's defaults: low_ram, kill_timeout 0, swap 0", test_defaults_of_lmkd },
		{ "ignored properties: reported, no effect", test_ignored },
		{ "bad values: property and value named", test_errors },
		{ "a property for a missing tier is an error", test_missing_tier },
		{ "key=value files", test_file },
		{ "config_load_file: properties win, re-read, errors", test_load },
		CU_TEST_INFO_NULL,
	};
	static CU_SuiteInfo suites[] = {
		{ "lmkprops", NULL, NULL, NULL, NULL, tests },
		CU_SUITE_INFO_NULL,
	};

	return cunit_tap_main(suites);
}
