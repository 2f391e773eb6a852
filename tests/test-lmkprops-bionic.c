/* SPDX-License-Identifier: MIT */
/* test-lmkprops-bionic: src/lmkprops-source.c as a --with-android-properties
 * build compiles it (HAVE_ANDROID_PROPERTIES, tests/android-shim's stand-in
 * for <sys/system_properties.h>), run against a property area of the
 * test's own: lmkd_properties = system reads lmkd's properties through
 * __system_property_get, persist before ro, and sys.lmk.reportkills=1 is
 * published through __system_property_set. What bionic itself does with
 * them is not tested here. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "android-shim/sys/system_properties.h"
#include "config.h"
#include "cunit-tap.h"
#include "lmkprops.h"

/* Makefile.am compiles src/lmkprops-source.c for this test with
 * -DHAVE_ANDROID_PROPERTIES; a build without it fails test_system. */

/* the property area */
static struct {
	char name[CONFIG_PROP_NAME_MAX];
	char value[PROP_VALUE_MAX];
} area[16];
static size_t n_area, n_get;
static bool broken;

static void setprop(const char *name, const char *value)
{
	size_t i;

	for (i = 0; i < n_area && strcmp(area[i].name, name) != 0; i++)
		;
	if (i == n_area)
		n_area++;
	snprintf(area[i].name, sizeof(area[i].name), "%s", name);
	snprintf(area[i].value, sizeof(area[i].value), "%s", value);
}

int __system_property_get(const char *name, char *value)
{
	size_t i;

	n_get++;
	value[0] = '\0';
	if (broken)
		return -1;
	for (i = 0; i < n_area; i++)
		if (strcmp(area[i].name, name) == 0) {
			snprintf(value, PROP_VALUE_MAX, "%s", area[i].value);
			return (int)strlen(value);
		}
	return 0;
}

int __system_property_set(const char *name, const char *value)
{
	if (broken)
		return -1;
	setprop(name, value);
	return 0;
}

static const char conf[] = "[daemon]\nkill_timeout = 500ms\n"
			   "[tier medium]\ntrigger = some 70ms 1s\nmin_oom_score_adj = 800\n"
			   "[tier critical]\ntrigger = full 700ms 1s\nmin_oom_score_adj = 0\n";

static void test_system(void)
{
	struct config cfg;
	struct config_error err;
	char v[PROP_VALUE_MAX];

	n_area = 0;
	broken = false;
	CU_ASSERT_EQUAL_FATAL(config_parse_string(&cfg, conf, "android.conf", &err), 0);
	setprop("ro.lmk.medium", "700");
	setprop("ro.lmk.critical", "100");
	setprop("persist.device_config.lmkd_native.critical", "200");
	setprop("ro.lmk.kill_timeout_ms", "100");
	setprop("ro.lmk.thrashing_limit", "30");
	setprop("ro.build.type", "userdebug");
	cfg.lmkd_properties = CONFIG_PROPS_SYSTEM;
	n_get = 0;
	CU_ASSERT_EQUAL(lmkprops_load(&cfg, &err), 0);
	CU_ASSERT(n_get > 0);
	CU_ASSERT_EQUAL(cfg.tiers[0].min_oom_score_adj, 700);
	CU_ASSERT_EQUAL(cfg.tiers[1].min_oom_score_adj, 200);
	CU_ASSERT_EQUAL(cfg.kill_timeout_us, 100000);
	CU_ASSERT_EQUAL(cfg.n_props, 4);

	setprop("ro.lmk.kill_timeout_ms", "soon");
	CU_ASSERT_EQUAL(lmkprops_load(&cfg, &err), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "property: ro.lmk.kill_timeout_ms=soon: not 0"));

	/* a property area that cannot be read is an error, not "unset" */
	broken = true;
	CU_ASSERT_EQUAL(lmkprops_load(&cfg, &err), -EIO);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "property: cannot read "));
	broken = false;

	CU_ASSERT_EQUAL(__system_property_get(LMKPROPS_REPORTKILLS, v), 0);
	CU_ASSERT_EQUAL(lmkprops_publish_reportkills(), 0);
	CU_ASSERT_EQUAL(__system_property_get(LMKPROPS_REPORTKILLS, v), 1);
	CU_ASSERT_STRING_EQUAL(v, "1");
	broken = true;
	CU_ASSERT_EQUAL(lmkprops_publish_reportkills(), -EIO);
	broken = false;
}

int main(void)
{
	static CU_TestInfo tests[] = {
		{ "lmkd_properties = system through bionic's calls", test_system },
		CU_TEST_INFO_NULL,
	};
	static CU_SuiteInfo suites[] = {
		{ "lmkprops-bionic", NULL, NULL, NULL, NULL, tests },
		CU_SUITE_INFO_NULL,
	};

	return cunit_tap_main(suites);
}
