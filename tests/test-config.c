/* SPDX-License-Identifier: MIT */
/* test-config: the ini format, every error with its file:line, typed parsers. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <pwd.h>
#include <regex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "coldtext.h"
#include "config.h"
#include "cunit-tap.h"

/* a repeat count regcomp() takes: POSIX promises RE_DUP_MAX >= 255; glibc's
 * is 32767, musl's 255 (a{1000} is then a bad regular expression there) */
#if RE_DUP_MAX >= 1000
#define BIG_REPEAT "1000"
#else
#define BIG_REPEAT "255"
#endif

#define GOOD_TIER "[tier t]\ntrigger = some 100ms 2s\nmin_oom_score_adj = 0\n"
#define LOW_TIER GOOD_TIER "low_available = 5%\n" /* for the keys that act through low_available */

static struct config cfg;
static struct config_error err;

static int parse(const char *text)
{
	return config_parse_string(&cfg, text, "test.conf", &err);
}

/* config_print(&cfg) into buf, NUL-terminated. */
static void print_cfg(char *buf, size_t size)
{
	FILE *f = fmemopen(buf, size, "w");
	size_t n;

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	config_print(&cfg, f);
	n = (size_t)ftell(f);
	fclose(f);
	buf[n < size ? n : size - 1] = '\0';
}

/* The error must start with "test.conf:LINE: " and contain want. */
static void check_error(const char *text, unsigned line, const char *want)
{
	char prefix[64];
	int r = parse(text);

	CU_ASSERT_EQUAL(r, -EINVAL);
	snprintf(prefix, sizeof(prefix), "test.conf:%u: ", line);
	if (strncmp(err.msg, prefix, strlen(prefix)) != 0 || !strstr(err.msg, want)) {
		printf("# got \"%s\", wanted prefix \"%s\" and \"%s\"\n", err.msg, prefix, want);
		CU_FAIL("wrong error message");
	}
}

static void test_defaults_and_full_file(void)
{
	const char *text = "; comment\n"
			   "# another\n"
			   "[daemon]\n"
			   "pressure = /sys/fs/cgroup/unified/x/memory.pressure\n"
			   "scope = /x//y/\n"
			   "kill_timeout = 1.5s\n"
			   "dry_run = yes ; inline comment\n"
			   "\n"
			   "[tier medium]\n"
			   "trigger = some 70ms 1s\n"
			   "min_oom_score_adj = 800\n"
			   "[tier critical]\n"
			   "trigger = full 700000 1000000\n"
			   "min_oom_score_adj = -1000\n";

	CU_ASSERT_EQUAL_FATAL(parse(text), 0);
	CU_ASSERT_STRING_EQUAL(cfg.pressure, "/sys/fs/cgroup/unified/x/memory.pressure");
	CU_ASSERT_EQUAL(cfg.pressure_origin, CONFIG_ORIGIN(0, 4)); /* for "file:line: cannot read" at start */
	CU_ASSERT_STRING_EQUAL(cfg.scope, "/x/y");
	CU_ASSERT_EQUAL(cfg.kill_timeout_us, 1500000);
	CU_ASSERT_TRUE(cfg.dry_run);
	CU_ASSERT_EQUAL_FATAL(cfg.n_tiers, 2);
	CU_ASSERT_STRING_EQUAL(cfg.tiers[0].name, "medium");
	CU_ASSERT_EQUAL(cfg.tiers[0].state, PSI_SOME);
	CU_ASSERT_EQUAL(cfg.tiers[0].stall_us, 70000);
	CU_ASSERT_EQUAL(cfg.tiers[0].window_us, 1000000);
	CU_ASSERT_EQUAL(cfg.tiers[0].min_oom_score_adj, 800);
	CU_ASSERT_EQUAL(cfg.tiers[0].origin, CONFIG_ORIGIN(0, 9));
	CU_ASSERT_STRING_EQUAL(cfg.tiers[1].name, "critical");
	CU_ASSERT_EQUAL(cfg.tiers[1].state, PSI_FULL);
	CU_ASSERT_EQUAL(cfg.tiers[1].stall_us, 700000);
	CU_ASSERT_EQUAL(cfg.tiers[1].min_oom_score_adj, -1000);
}

static void test_defaults(void)
{
	CU_ASSERT_EQUAL_FATAL(parse(GOOD_TIER), 0);
	CU_ASSERT_STRING_EQUAL(cfg.pressure, "/proc/pressure/memory");
	CU_ASSERT_EQUAL(cfg.pressure_origin, 0);
	CU_ASSERT_STRING_EQUAL(cfg.scope, "/");
	CU_ASSERT_EQUAL(cfg.kill_timeout_us, 500000);
	CU_ASSERT_FALSE(cfg.dry_run);
	CU_ASSERT_EQUAL(cfg.idle_poll_us, 10000000);
	CU_ASSERT_EQUAL_FATAL(parse("[daemon]\nidle_poll_interval = off\n" GOOD_TIER), 0);
	CU_ASSERT_EQUAL(cfg.idle_poll_us, 0);
	CU_ASSERT_EQUAL_FATAL(parse("[daemon]\nidle_poll_interval = 500ms\n" GOOD_TIER), 0);
	CU_ASSERT_EQUAL(cfg.idle_poll_us, 500000);
}

static void test_trigger_forms(void)
{
	struct tier_config t;
	char why[256];

	CU_ASSERT_EQUAL(config_parse_trigger("some 7% 1s", &t, why, sizeof(why)), 0);
	CU_ASSERT_EQUAL(t.stall_us, 70000);
	CU_ASSERT_EQUAL(config_parse_trigger("full 12.5% 2s", &t, why, sizeof(why)), 0);
	CU_ASSERT_EQUAL(t.stall_us, 250000);
	CU_ASSERT_EQUAL(config_parse_trigger("  some   150000   2000000 ", &t, why, sizeof(why)), 0);
	CU_ASSERT_EQUAL(t.stall_us, 150000);
	CU_ASSERT_EQUAL(t.window_us, 2000000);
	CU_ASSERT_EQUAL(config_parse_trigger("some 500us 500ms", &t, why, sizeof(why)), 0);
	CU_ASSERT_EQUAL(t.window_us, 500000);
	CU_ASSERT_EQUAL(config_parse_trigger("some 10s 10s", &t, why, sizeof(why)), 0);

	CU_ASSERT_EQUAL(config_parse_trigger("some 0.5us 1s", &t, why, sizeof(why)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "finer than a microsecond"));
	CU_ASSERT_EQUAL(config_parse_trigger("some 0% 1s", &t, why, sizeof(why)), -EINVAL);
	CU_ASSERT_EQUAL(config_parse_trigger("some 101% 1s", &t, why, sizeof(why)), -EINVAL);
	CU_ASSERT_EQUAL(config_parse_trigger("some 1s 499999us", &t, why, sizeof(why)), -EINVAL);
	CU_ASSERT_EQUAL(config_parse_trigger("some 1s 10000001", &t, why, sizeof(why)), -EINVAL);
	CU_ASSERT_EQUAL(config_parse_trigger("some", &t, why, sizeof(why)), -EINVAL);
	CU_ASSERT_EQUAL(config_parse_trigger("", &t, why, sizeof(why)), -EINVAL);
	CU_ASSERT_EQUAL(config_parse_trigger("some -5ms 1s", &t, why, sizeof(why)), -EINVAL);
	CU_ASSERT_EQUAL(config_parse_trigger("some 99999999999999999999999 1s", &t, why, sizeof(why)), -EINVAL);
}

static void test_durations(void)
{
	char why[256];
	uint64_t us;

	CU_ASSERT_EQUAL(config_parse_duration("250ms", false, &us, why, sizeof(why)), 0);
	CU_ASSERT_EQUAL(us, 250000);
	CU_ASSERT_EQUAL(config_parse_duration("0.25s", false, &us, why, sizeof(why)), 0);
	CU_ASSERT_EQUAL(us, 250000);
	CU_ASSERT_EQUAL(config_parse_duration("1.000000s", false, &us, why, sizeof(why)), 0);
	CU_ASSERT_EQUAL(us, 1000000);
	CU_ASSERT_EQUAL(config_parse_duration("42", true, &us, why, sizeof(why)), 0);
	CU_ASSERT_EQUAL(us, 42);
	CU_ASSERT_EQUAL(config_parse_duration("42", false, &us, why, sizeof(why)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "no unit"));
	CU_ASSERT_EQUAL(config_parse_duration("5min", false, &us, why, sizeof(why)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "unknown unit"));
	CU_ASSERT_EQUAL(config_parse_duration("1..5s", false, &us, why, sizeof(why)), -EINVAL);
	CU_ASSERT_EQUAL(config_parse_duration(".s", false, &us, why, sizeof(why)), -EINVAL);
	CU_ASSERT_EQUAL(config_parse_duration("ms", false, &us, why, sizeof(why)), -EINVAL);
	CU_ASSERT_EQUAL(config_parse_duration("1e3ms", false, &us, why, sizeof(why)), -EINVAL);
	CU_ASSERT_EQUAL(config_parse_duration("18446744073709551616us", false, &us, why, sizeof(why)), -ERANGE);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "too large"));
	CU_ASSERT_EQUAL(config_parse_duration("2h", false, &us, why, sizeof(why)), -EINVAL);
}

static void test_errors(void)
{
	check_error("", 1, "no [tier NAME] section");
	check_error("[daemon]\nkill_timeout = 1s\n", 2, "no [tier NAME] section");
	check_error("[daemon]\nbogus = 1\n" GOOD_TIER, 2, "unknown key \"bogus\"");
	check_error(GOOD_TIER "[deamon]\n", 4, "unknown section [deamon]");
	check_error("[tier]\ntrigger = some 1s 2s\n", 1, "needs a name");
	check_error("[tier a b]\n", 1, "bad tier name");
	check_error(GOOD_TIER "[tier t]\n", 4, "duplicate tier \"t\" (first at line 1)");
	check_error("[daemon]\n[daemon]\n" GOOD_TIER, 2, "duplicate section [daemon]");
	check_error(GOOD_TIER "trigger = full 1s 2s\n", 4, "duplicate key \"trigger\" (first set at line 2)");
	check_error("kill_timeout = 1s\n" GOOD_TIER, 1, "outside any section");
	check_error("[daemon]\nkill_timeout = 5\n" GOOD_TIER, 2, "no unit");
	check_error("[daemon]\nkill_timeout = 5 ms\n" GOOD_TIER, 2, "unknown unit");
	check_error("[daemon]\nkill_timeout = 5ms\n" GOOD_TIER, 2, "between 10ms and 60s");
	check_error("[daemon]\nkill_timeout = 61s\n" GOOD_TIER, 2, "between 10ms and 60s");
	check_error("[daemon]\ndry_run = maybe\n" GOOD_TIER, 2, "dry_run must be true or false");
	check_error("[daemon]\nidle_poll_interval = 50ms\n" GOOD_TIER, 2, "off or between 100ms and 60s");
	check_error("[daemon]\nidle_poll_interval = never\n" GOOD_TIER, 2, "idle_poll_interval: ");
	/* the duration keys' range messages, whole (one helper writes all four) */
	CU_ASSERT_EQUAL(parse("[daemon]\nkill_timeout = 61s\n" GOOD_TIER), -EINVAL);
	CU_ASSERT_STRING_EQUAL(err.msg, "test.conf:2: kill_timeout must be between 10ms and 60s, not \"61s\"");
	CU_ASSERT_EQUAL(parse("[daemon]\nidle_poll_interval = 50ms\n" GOOD_TIER), -EINVAL);
	CU_ASSERT_STRING_EQUAL(err.msg, "test.conf:2: idle_poll_interval must be off or between 100ms and 60s, not \"50ms\"");
	CU_ASSERT_EQUAL(parse("[daemon]\nsettle_time = 61s\n" GOOD_TIER), -EINVAL);
	CU_ASSERT_STRING_EQUAL(err.msg, "test.conf:2: settle_time must be between 0 and 60s, not \"61s\"");
	CU_ASSERT_EQUAL(parse(GOOD_TIER "kill_signal = SIGTERM\nterm_timeout = 5ms\n"), -EINVAL);
	CU_ASSERT_STRING_EQUAL(err.msg, "test.conf:5: term_timeout must be between 10ms and 60s, not \"5ms\"");
	CU_ASSERT_EQUAL_FATAL(parse("[daemon]\nsettle_time = 0\n" GOOD_TIER), 0);
	CU_ASSERT_EQUAL(cfg.settle_us, 0);
	check_error("[daemon]\npressure = proc/pressure/memory\n" GOOD_TIER, 2, "absolute path");
	check_error("[daemon]\nscope = user.slice\n" GOOD_TIER, 2, "starting with '/'");
	check_error("[daemon]\nscope = /a/../b\n" GOOD_TIER, 2, "'.' or '..'");
	check_error("[tier t]\ntrigger = some 3s 2s\nmin_oom_score_adj = 0\n", 2, "longer than its window 2s");
	check_error("[tier t]\ntrigger = some 100ms 20s\nmin_oom_score_adj = 0\n", 2, "outside 500ms..10s");
	check_error("[tier t]\ntrigger = some 100ms 100ms\nmin_oom_score_adj = 0\n", 2, "outside 500ms..10s");
	check_error("[tier t]\ntrigger = partial 100ms 2s\nmin_oom_score_adj = 0\n", 2, "\"some\" or \"full\"");
	check_error("[tier t]\ntrigger = some 100ms 2s extra\nmin_oom_score_adj = 0\n", 2, "extra words");
	check_error("[tier t]\ntrigger = some 100xs 2s\nmin_oom_score_adj = 0\n", 2, "unknown unit");
	check_error("[tier t]\ntrigger = some 100ms 2s\nmin_oom_score_adj = 1001\n", 3, "between -1000 and 1000");
	check_error("[tier t]\ntrigger = some 100ms 2s\nmin_oom_score_adj = -1001\n", 3, "between -1000 and 1000");
	check_error("[tier t]\ntrigger = some 100ms 2s\nmin_oom_score_adj = 5x\n", 3, "integer");
	check_error("[tier t]\ntrigger = some 100ms 2s\nmin_oom_score_adj =\n", 3, "integer");
	check_error("[tier t]\nmin_oom_score_adj = 0\n", 1, "tier \"t\" has no trigger");
	check_error("[tier t]\ntrigger = some 100ms 2s\n", 1, "tier \"t\" has no min_oom_score_adj");
	check_error(GOOD_TIER "[tier empty]\n", 4, "tier \"empty\" has no trigger");
	check_error(GOOD_TIER "this line has no equals sign\n", 4, "syntax error");
	check_error(GOOD_TIER "[unterminated\n", 4, "syntax error");
	check_error("[daemon]\nscope = /\n  kill_timeout = 1s\n" GOOD_TIER, 3, "multi-line values are not supported");
	check_error("[tier t]\ntrigger = some 100ms 2s\nmin_oom_score_adj = 0\nmin_oom_score_adj = 5\n", 4,
		    "duplicate key");
	/* the first error wins */
	check_error("[daemon]\nbogus = 1\nother = 2\n", 2, "unknown key \"bogus\"");
	/* past an hour, or past 2^64: still the key's range, not "too large" or "not a number" */
	check_error("[daemon]\nkill_timeout = 3601s\n" GOOD_TIER, 2, "between 10ms and 60s, not \"3601s\"");
	check_error("[daemon]\nkill_timeout = 99999999999999999999s\n" GOOD_TIER, 2, "between 10ms and 60s");
	/* integers are digits, after a '-': no '+' (strtol would take it) */
	check_error("[tier t]\ntrigger = some 100ms 2s\nmin_oom_score_adj = +800\n", 3, "not \"+800\"");
	check_error("[daemon]\nmax_groups = +5\n" GOOD_TIER, 2, "not \"+5\"");
	check_error("[daemon]\nmax_groups = 0\n" GOOD_TIER, 2, "from 1 to 4096, not \"0\"");
	/* scope is one group; a pattern there would match nothing, silently */
	check_error("[daemon]\nscope = /user.slice/user-*.slice\n" GOOD_TIER, 2, "not a pattern");
	check_error("[daemon]\nscope = /user.slice/user-100?.slice\n" GOOD_TIER, 2, "not a pattern");
	check_error("[daemon]\nscope = /machine.slice/[ab]\n" GOOD_TIER, 2, "not a pattern");
}

/* What follows a section header, a stray carriage return, a key too long for
 * any: inih would drop, join or misname them; each is an error at its line. */
static void test_header_and_line_ends(void)
{
	check_error(GOOD_TIER "[daemon] dry_run = true\n", 4,
		    "text after the section header [daemon]: \"dry_run = true\"");
	check_error("[tier t] junk\ntrigger = some 100ms 2s\nmin_oom_score_adj = 0\n", 1, "text after the section header");
	CU_ASSERT_EQUAL(parse("[daemon] ; the daemon\ndry_run = true\n[tier t]\t# a tier\n"
			      "trigger = some 100ms 2s\nmin_oom_score_adj = 0\n"), 0);
	CU_ASSERT_TRUE(cfg.dry_run);
	/* classic Mac line ends: one line to inih, whose keys would vanish */
	check_error("[daemon]\rdry_run = true\r" GOOD_TIER, 1, "carriage return");
	check_error(GOOD_TIER "protect = a\rb\n", 4, "carriage return");
	CU_ASSERT_EQUAL(parse("[tier t]\r\ntrigger = some 100ms 2s\r\nmin_oom_score_adj = 5\r"), 0); /* CR LF, last CR */
	check_error(GOOD_TIER "kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk"
			      "kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk = 1\n",
		    4, "unknown key \"kkkk");
}

/* Settings that would be accepted and do nothing: zero amounts, keys whose
 * partner is missing. */
static void test_no_dead_settings(void)
{
	char buf[8192];

	check_error(GOOD_TIER "low_available = 0B\n", 4, "low_available must be more than 0");
	check_error(GOOD_TIER "low_available = 0\n", 4, "low_available must be more than 0");
	check_error(GOOD_TIER "min_available = 0.0%\n", 4, "min_available must be more than 0");
	check_error("[daemon]\nculprit_growth = 0M\nvictim_order = badness\n" GOOD_TIER, 2, "culprit_growth must be more than 0");
	check_error("[daemon]\nmemory_high_brake = 0\n" GOOD_TIER "low_available = 5%\n", 2,
		    "memory_high_brake must be more than 0");
	check_error("[daemon]\npre_kill_timeout = 3s\n" GOOD_TIER, 2, "pre_kill_timeout only applies with pre_kill");
	check_error("[daemon]\noom_killer = daemon\n" GOOD_TIER, 2, "oom_killer = daemon needs a kill tier with low_available");
	check_error("[daemon]\nmemory_high_brake = on\n" GOOD_TIER, 2, "memory_high_brake needs a kill tier with low_available");
	/* a warn tier's low_available kills nothing: no OOM decision, no brake through it */
	check_error("[daemon]\noom_killer = daemon\n" GOOD_TIER "[tier w]\nlow_available = 5%\naction = warn\n", 2,
		    "oom_killer = daemon needs a kill tier with low_available");
	check_error("[daemon]\nmemory_high_brake = 64M\n" GOOD_TIER "[tier w]\nlow_available = 5%\naction = warn\n", 2,
		    "memory_high_brake needs a kill tier with low_available");
	CU_ASSERT_EQUAL(parse("[daemon]\noom_killer = daemon\nmemory_high_brake = on\n" GOOD_TIER "low_available = 5%\n"), 0);
	CU_ASSERT_TRUE(cfg.oom_killer_daemon);
	/* zero where zero means something: min_rss (the default, written as the docs give it), low_swap */
	CU_ASSERT_EQUAL_FATAL(parse("[daemon]\nmin_rss = 0\n" GOOD_TIER "low_available = 5%\nlow_swap = 0.0%\n"), 0);
	CU_ASSERT_EQUAL(cfg.min_rss_kb, 0);
	CU_ASSERT_TRUE(cfg.tiers[0].low_swap.set);
	CU_ASSERT_EQUAL(cfg.tiers[0].low_swap.value, 0);
	print_cfg(buf, sizeof(buf));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\nmin_rss = 0\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\nnice = inherited\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\ncontrol_socket = /run/psi-lmkd/control\n"));
	/* min_rss in kB, rounded up: 1000 bytes is a floor of 1 kB, not none */
	CU_ASSERT_EQUAL_FATAL(parse("[daemon]\nmin_rss = 1000B\n" GOOD_TIER), 0);
	CU_ASSERT_EQUAL(cfg.min_rss_kb, 1);
	CU_ASSERT_EQUAL_FATAL(parse("[daemon]\nmin_rss = 1025B\n" GOOD_TIER), 0);
	CU_ASSERT_EQUAL(cfg.min_rss_kb, 2);
	CU_ASSERT_EQUAL_FATAL(parse("[daemon]\nmin_rss = 4M\n" GOOD_TIER), 0);
	CU_ASSERT_EQUAL(cfg.min_rss_kb, 4096);
}

static void test_policy_keys(void)
{
	char a[32];

	CU_ASSERT_EQUAL_FATAL(parse("[daemon]\nprotect = ^(sshd|systemd)$\nprefer = ^chrom\navoid = x\n"
				    "prefer_cmdline = --type=renderer\nmin_rss = 4M\nsettle_time = 2s\n"
				    "memory_cgroup = /sys/fs/cgroup/user.slice\n"
				    "[tier t]\ntrigger = some 100ms 2s\nmin_oom_score_adj = 0\nkill_signal = SIGTERM\n"
				    "term_timeout = 3s\nmin_available = 10%\nmin_events = 2\n"
				    "[tier c]\ntrigger = some 100ms 2s\nmin_oom_score_adj = 0\nkill_cgroup = true\n"
				    "[tier last]\nlow_available = 256M\nmin_oom_score_adj = 0\n"),
			      0);
	CU_ASSERT_STRING_EQUAL(cfg.protect, "^(sshd|systemd)$");
	CU_ASSERT_STRING_EQUAL(cfg.prefer_cmdline, "--type=renderer");
	CU_ASSERT_EQUAL(cfg.min_rss_kb, 4096);
	CU_ASSERT_EQUAL(cfg.settle_us, 2000000);
	CU_ASSERT_STRING_EQUAL(cfg.memory_cgroup, "/sys/fs/cgroup/user.slice");
	CU_ASSERT_EQUAL(cfg.tiers[0].kill_signal, SIGTERM);
	CU_ASSERT_EQUAL(cfg.tiers[0].term_timeout_us, 3000000);
	CU_ASSERT_TRUE(cfg.tiers[1].kill_cgroup);
	CU_ASSERT_TRUE(cfg.tiers[0].min_available.percent);
	CU_ASSERT_EQUAL(cfg.tiers[0].min_available.value, 1000);
	CU_ASSERT_EQUAL(cfg.tiers[0].min_events, 2);
	CU_ASSERT_FALSE(cfg.tiers[2].has_trigger);
	CU_ASSERT_FALSE(cfg.tiers[2].low_available.percent);
	CU_ASSERT_EQUAL(cfg.tiers[2].low_available.value, 256ULL << 20);
	CU_ASSERT_STRING_EQUAL(config_format_amount(a, sizeof(a), &cfg.tiers[2].low_available), "256M");
	CU_ASSERT_STRING_EQUAL(config_format_amount(a, sizeof(a), &cfg.tiers[0].min_available), "10.00%");
	/* defaults */
	CU_ASSERT_EQUAL_FATAL(parse(GOOD_TIER), 0);
	CU_ASSERT_EQUAL(cfg.tiers[0].kill_signal, SIGKILL);
	CU_ASSERT_EQUAL(cfg.tiers[0].min_events, 1);
	CU_ASSERT_FALSE(cfg.tiers[0].kill_cgroup);
	CU_ASSERT_FALSE(cfg.tiers[0].min_available.set);
	CU_ASSERT_EQUAL(cfg.settle_us, 1000000);

	check_error("[daemon]\nprotect = ^(sshd\n" GOOD_TIER, 2, "bad regular expression");
	check_error("[daemon]\nmin_rss = 4\n" GOOD_TIER, 2, "needs a unit");
	check_error("[daemon]\nmin_rss = 4%\n" GOOD_TIER, 2, "needs a unit");
	check_error("[daemon]\nsettle_time = 2m\n" GOOD_TIER, 2, "unknown unit");
	check_error("[daemon]\non_kill = relative.sh\n" GOOD_TIER, 2, "absolute path");
	check_error("[daemon]\non_kill = /nonexistent/hook\n" GOOD_TIER, 2, "not an executable");
	check_error("[daemon]\non_kill = /dev/null\n" GOOD_TIER, 2, "not an executable");
	{
		char text[512], path[] = "/tmp/psi-lmkd-test-hook-XXXXXX";
		int fd = mkstemp(path);

		CU_ASSERT_FATAL(fd >= 0);
		close(fd); /* mode 0600: not executable */
		snprintf(text, sizeof(text), "[daemon]\non_kill = %s\n" GOOD_TIER, path);
		check_error(text, 2, "not an executable");
		chmod(path, 0700);
		CU_ASSERT_EQUAL(parse(text), 0);
		CU_ASSERT_STRING_EQUAL(cfg.on_kill, path);
		unlink(path);
	}
	check_error("[daemon]\nmemory_cgroup = user.slice\n" GOOD_TIER, 2, "absolute path");
	check_error("[daemon]\nnice = -21\n" GOOD_TIER, 2, "between -20 and 19");
	check_error("[daemon]\nnice = low\n" GOOD_TIER, 2, "between -20 and 19");
	check_error("[daemon]\nrealtime_priority = 100\n" GOOD_TIER, 2, "1..99");
	CU_ASSERT_EQUAL_FATAL(parse("[daemon]\nnice = -5\nrealtime_priority = 2\n" GOOD_TIER), 0);
	CU_ASSERT_TRUE(cfg.has_nice);
	CU_ASSERT_EQUAL(cfg.nice, -5);
	CU_ASSERT_EQUAL(cfg.realtime_priority, 2);
	check_error(GOOD_TIER "kill_signal = SIGHUP\n", 4, "SIGKILL or SIGTERM");
	check_error(GOOD_TIER "term_timeout = 1s\n", 4, "only applies with kill_signal = SIGTERM");
	check_error(GOOD_TIER "kill_cgroup = sometimes\n", 4, "true or false");
	check_error(GOOD_TIER "kill_signal = SIGTERM\nkill_cgroup = true\n", 4, "cannot be combined");
	check_error(GOOD_TIER "min_available = 0%\n", 4, "min_available must be more than 0");
	check_error(GOOD_TIER "min_available = 101%\n", 4, "percentage");
	check_error(GOOD_TIER "min_available = lots\n", 4, "memory size");
	check_error(GOOD_TIER "min_events = 0\n", 4, "between 1 and 100");
	check_error(GOOD_TIER "low_available = 99999999999999999999G\n", 4, "low_available");
	check_error("[tier t]\nmin_oom_score_adj = 0\n", 1, "no trigger (e.g. trigger = some 70ms 1s) and no low_available");
}

/* low_swap: the swap condition of a low_available tier */
/* hold_idle (a low_available tier's hold while nothing grows or stalls) and
 * hold_recovery (PSI tiers after a kill): on unless turned off, booleans,
 * printed, and hold_idle only where there is a low_available kill to hold */
static void test_holds(void)
{
	char buf[4096];

	CU_ASSERT_EQUAL_FATAL(parse("[tier a]\nlow_available = 5%\nmin_oom_score_adj = 0\n"
				    "[tier b]\nlow_available = 64M\nhold_idle = false\nmin_oom_score_adj = 0\n"),
			      0);
	CU_ASSERT_TRUE(cfg.hold_recovery);
	CU_ASSERT_TRUE(cfg.tiers[0].hold_idle);
	CU_ASSERT_FALSE(cfg.tiers[1].hold_idle);
	print_cfg(buf, sizeof(buf));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\nhold_recovery = true\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "tier a: low_available = 5.00%, low_swap = 10.00% (default; of the swap, when "
					   "there is swap), hold_idle = true, min_oom_score_adj = 0"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "hold_idle = false, min_oom_score_adj = 0"));
	CU_ASSERT_EQUAL_FATAL(parse("[daemon]\nhold_recovery = false\n" GOOD_TIER), 0);
	CU_ASSERT_FALSE(cfg.hold_recovery);
	print_cfg(buf, sizeof(buf));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\nhold_recovery = false\n"));
	check_error("[daemon]\nhold_recovery = sometimes\n" GOOD_TIER, 2, "true");
	/* systemd_oom_marks: off unless turned on */
	CU_ASSERT_FALSE(cfg.systemd_oom_marks);
	CU_ASSERT_EQUAL_FATAL(parse("[daemon]\nsystemd_oom_marks = true\n" GOOD_TIER), 0);
	CU_ASSERT_TRUE(cfg.systemd_oom_marks);
	print_cfg(buf, sizeof(buf));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\nsystemd_oom_marks = true\n"));
	check_error("[tier t]\ntrigger = some 70ms 1s\nhold_idle = false\nmin_oom_score_adj = 0\n", 3,
		    "only applies with low_available");
	check_error("[tier t]\naction = warn\nlow_available = 5%\nhold_idle = true\n", 4, "kills nothing");
}

/* culprit_growth: 1% by default with victim_order = badness, an amount or
 * a percentage, off; an error with the adj order, where it would do nothing */
static void test_culprit_growth(void)
{
	char buf[4096];

	CU_ASSERT_EQUAL_FATAL(parse("[daemon]\nvictim_order = badness\n" GOOD_TIER), 0);
	CU_ASSERT_TRUE(cfg.culprit_growth.set && cfg.culprit_growth.percent && cfg.culprit_growth.value == 100);
	print_cfg(buf, sizeof(buf));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\nculprit_growth = 1.00%\n"));
	CU_ASSERT_EQUAL_FATAL(parse("[daemon]\nvictim_order = badness\nculprit_growth = 64M\n" GOOD_TIER), 0);
	CU_ASSERT_TRUE(cfg.culprit_growth.set && !cfg.culprit_growth.percent && cfg.culprit_growth.value == 64 << 20);
	CU_ASSERT_EQUAL_FATAL(parse("[daemon]\nvictim_order = badness\nculprit_growth = off\n" GOOD_TIER), 0);
	CU_ASSERT_FALSE(cfg.culprit_growth.set);
	print_cfg(buf, sizeof(buf));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\nculprit_growth = off\n"));
	CU_ASSERT_EQUAL_FATAL(parse("[daemon]\nvictim_order = adj\n" GOOD_TIER), 0);
	print_cfg(buf, sizeof(buf));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\nculprit_growth = off\n"));
	check_error("[daemon]\nvictim_order = badness\nculprit_growth = 0M\n" GOOD_TIER, 3, "more than 0");
	check_error("[daemon]\nvictim_order = badness\nculprit_growth = 120%\n" GOOD_TIER, 3, "percentage");
	check_error("[daemon]\nvictim_order = badness\nculprit_growth = lots\n" GOOD_TIER, 3, "memory size");
	check_error("[daemon]\nvictim_order = adj\nculprit_growth = 2%\n" GOOD_TIER, 3, "only applies with victim_order");
}

static void test_low_swap(void)
{
	char buf[4096], a[32];

	CU_ASSERT_EQUAL_FATAL(parse("[tier a]\nlow_available = 5%\nlow_swap = 20%\nmin_oom_score_adj = 0\n"
				    "[tier b]\nlow_available = 64M\nmin_oom_score_adj = 0\n"
				    "[tier c]\nlow_available = 64M\nlow_swap = 128M\nmin_oom_score_adj = 0\n"
				    "[tier d]\nlow_available = 64M\nlow_swap = 0\nmin_oom_score_adj = 0\n"),
			      0);
	CU_ASSERT_TRUE(cfg.tiers[0].low_swap.set);
	CU_ASSERT_TRUE(cfg.tiers[0].low_swap.percent);
	CU_ASSERT_EQUAL(cfg.tiers[0].low_swap.value, 2000);
	CU_ASSERT_FALSE(cfg.tiers[1].low_swap.set);
	CU_ASSERT_EQUAL(cfg.tiers[2].low_swap.value, 128ULL << 20);
	CU_ASSERT_TRUE(cfg.tiers[3].low_swap.set);
	CU_ASSERT_FALSE(cfg.tiers[3].low_swap.percent);
	CU_ASSERT_EQUAL(cfg.tiers[3].low_swap.value, 0);
	CU_ASSERT_STRING_EQUAL(config_format_amount(a, sizeof(a), &cfg.tiers[3].low_swap), "0B");
	print_cfg(buf, sizeof(buf));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "tier a: low_available = 5.00%, low_swap = 20.00%, "));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "tier b: low_available = 64M, low_swap = 10.00% (default; of the swap, when "
					   "there is swap), "));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "tier c: low_available = 64M, low_swap = 128M, "));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "tier d: low_available = 64M, low_swap = 0B, "));

	check_error("[tier t]\nlow_available = 5%\nlow_swap = 101%\nmin_oom_score_adj = 0\n", 3, "percentage");
	check_error("[tier t]\nlow_available = 5%\nlow_swap = plenty\nmin_oom_score_adj = 0\n", 3, "memory size");
	check_error("[tier t]\nlow_available = 5%\nlow_swap = 12\nmin_oom_score_adj = 0\n", 3, "needs a unit");
	check_error("[tier t]\nlow_available = 5%\nlow_swap = 1%\nlow_swap = 2%\nmin_oom_score_adj = 0\n", 4,
		    "duplicate key");
	/* without low_available it would mean nothing: an error at its line */
	check_error("[tier t]\ntrigger = some 100ms 2s\nlow_swap = 10%\nmin_oom_score_adj = 0\n", 3,
		    "low_swap only applies with low_available");
}

/* A regex of n characters as a user would extend protect: ^(nm001|nm002|...|xx...)$ */
static void long_regex(char *buf, size_t n)
{
	size_t len = 2, i = 0;

	buf[0] = '^';
	buf[1] = '(';
	while (len + 6 + 1 + 2 < n)
		len += (size_t)snprintf(buf + len, n + 1 - len, "nm%03zu|", ++i % 1000);
	while (len < n - 2)
		buf[len++] = 'x';
	memcpy(buf + len, ")$", 3);
}

/* Longer lines than inih's 198 characters: a key line reaches its key
 * whole, trimmed as a short line is (so users can add names to the shipped
 * protect list); a comment is ignored; an indented line, a section header,
 * and any line over CONFIG_LONG_LINE_MAX stay errors, with their line. */
static void test_long_line(void)
{
	static char text[CONFIG_LONG_LINE_MAX + 1024], re[CONFIG_REGEX_MAX - 1 + 1];
	static char comment[600], path[CONFIG_LONG_LINE_MAX + 2];

	long_regex(re, sizeof(re) - 1);
	memset(comment, 'c', sizeof(comment) - 1);
	snprintf(text, sizeof(text), "; %s\n[daemon]\nprotect =\t%s   ; why\t\navoid = x\n" GOOD_TIER, comment, re);
	CU_ASSERT_EQUAL_FATAL(parse(text), 0);
	CU_ASSERT_EQUAL(strlen(cfg.protect), CONFIG_REGEX_MAX - 1);
	CU_ASSERT_STRING_EQUAL(cfg.protect, re);
	CU_ASSERT_STRING_EQUAL(cfg.avoid, "x"); /* the next line is its own */

	/* as inih trims a short value: ';' with no blank before it stays */
	snprintf(text, sizeof(text), "[daemon]\nprotect = %.300s;b ; c\n" GOOD_TIER, re + 2);
	CU_ASSERT_EQUAL_FATAL(parse(text), 0);
	CU_ASSERT_EQUAL(strlen(cfg.protect), 302);
	CU_ASSERT_STRING_EQUAL(cfg.protect + 300, ";b");

	/* one character over the field: the key's own limit */
	snprintf(text, sizeof(text), "[daemon]\nprotect = a%s\n" GOOD_TIER, re);
	check_error(text, 2, "protect is longer than 1023 characters");
	snprintf(text, sizeof(text), "[daemon]\n  protect = %s\n" GOOD_TIER, re);
	check_error(text, 2, "longer than 198 characters, which only a key = value line");
	snprintf(text, sizeof(text), "[tier %s]\n" GOOD_TIER, comment);
	check_error(text, 1, "longer than 198 characters");
	/* comments (indented too) and blank lines may be of any length */
	snprintf(text, sizeof(text), "  \t; %s\n%*s\n# %s%s\n" GOOD_TIER, comment, 300, "", comment, re);
	CU_ASSERT_EQUAL(parse(text), 0);

	memset(path, 'a', sizeof(path) - 1);
	path[0] = '/';
	snprintf(text, sizeof(text), "[daemon]\npressure = %s\n" GOOD_TIER, path);
	check_error(text, 2, "line is longer than 4095 characters");
}

static void test_crlf_and_bom(void)
{
	CU_ASSERT_EQUAL(parse("\xEF\xBB\xBF[tier t]\r\ntrigger = some 100ms 2s\r\nmin_oom_score_adj = 5\r\n"), 0);
	CU_ASSERT_EQUAL(cfg.tiers[0].min_oom_score_adj, 5);
}

static void test_failed_parse_keeps_old_config(void)
{
	CU_ASSERT_EQUAL_FATAL(parse(GOOD_TIER), 0);
	CU_ASSERT_EQUAL(parse("[tier x]\ntrigger = some 100ms 2s\nmin_oom_score_adj = 7\n[bad]\n"), -EINVAL);
	CU_ASSERT_STRING_EQUAL(cfg.tiers[0].name, "t");
}

static void test_files(void)
{
	char dir[] = "/tmp/psi-lmkd-test-config-XXXXXX";
	char path[256];
	FILE *f;

	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));

	CU_ASSERT_EQUAL(config_load_file(&cfg, "/nonexistent/psi-lmkd.conf", NULL, &err), -ENOENT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "/nonexistent/psi-lmkd.conf: cannot read config: "));

	CU_ASSERT_EQUAL(config_load_file(&cfg, dir, NULL, &err), -EISDIR);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "not a regular file"));

	snprintf(path, sizeof(path), "%s/fifo", dir);
	CU_ASSERT_EQUAL_FATAL(mkfifo(path, 0600), 0);
	CU_ASSERT_EQUAL(config_load_file(&cfg, path, NULL, &err), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "not a regular file"));
	unlink(path);

	snprintf(path, sizeof(path), "%s/nul.conf", dir);
	f = fopen(path, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fwrite("[tier t]\ntrig\0ger = x\n", 1, 22, f);
	fclose(f);
	CU_ASSERT_EQUAL(config_load_file(&cfg, path, NULL, &err), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "nul.conf:2: the file contains a NUL byte"));
	unlink(path);

	snprintf(path, sizeof(path), "%s/good.conf", dir);
	f = fopen(path, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs("[daemon]\nkill_timeout = 2s\n" GOOD_TIER, f);
	fclose(f);
	CU_ASSERT_EQUAL(config_load_file(&cfg, path, NULL, &err), 0);
	CU_ASSERT_STRING_EQUAL(cfg.path, path);
	CU_ASSERT_EQUAL(cfg.kill_timeout_us, 2000000);
	unlink(path);
	rmdir(dir);
}

/* systemd_oom_preferences: on unless turned off, a boolean, a mistake at its
 * file:line, printed either way. */
static void test_systemd_oom_preferences(void)
{
	char buf[4096];

	CU_ASSERT_EQUAL_FATAL(parse(GOOD_TIER), 0);
	CU_ASSERT_TRUE(cfg.systemd_oom_preferences);
	CU_ASSERT_EQUAL_FATAL(parse("[daemon]\nsystemd_oom_preferences = false\n" GOOD_TIER), 0);
	CU_ASSERT_FALSE(cfg.systemd_oom_preferences);
	print_cfg(buf, sizeof(buf));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\nsystemd_oom_preferences = false\n"));
	CU_ASSERT_EQUAL_FATAL(parse("[daemon]\nsystemd_oom_preferences = true\n" GOOD_TIER), 0);
	CU_ASSERT_TRUE(cfg.systemd_oom_preferences);
	check_error("[daemon]\ndry_run = no\nsystemd_oom_preferences = maybe\n" GOOD_TIER, 3,
		    "systemd_oom_preferences must be true or false");
	check_error("[daemon]\nsystemd_oom_preferences =\n" GOOD_TIER, 2, "systemd_oom_preferences must be true or false");
	check_error("[daemon]\nsystemd_oom_preferences = no\nsystemd_oom_preferences = yes\n" GOOD_TIER, 3,
		    "duplicate");
}

/* The shield keys: cgroup regexes validated like the others, trusted_uid_max
 * an integer uid, every mistake at its file:line, and all of it printed. */
static void test_shield_keys(void)
{
	char buf[4096];

	CU_ASSERT_EQUAL_FATAL(parse(GOOD_TIER), 0);
	CU_ASSERT_EQUAL(cfg.trusted_uid_max, 999);
	CU_ASSERT_STRING_EQUAL(cfg.protect_cgroup, "");
	CU_ASSERT_STRING_EQUAL(cfg.avoid_cgroup, "");
	CU_ASSERT_EQUAL_FATAL(parse("[daemon]\nprotect_cgroup = ^/system\\.slice/ssh\\.service(/|$)\n"
				    "avoid_cgroup = /keep\\.scope$\ntrusted_uid_max = 0\n" GOOD_TIER),
			      0);
	CU_ASSERT_STRING_EQUAL(cfg.protect_cgroup, "^/system\\.slice/ssh\\.service(/|$)");
	CU_ASSERT_STRING_EQUAL(cfg.avoid_cgroup, "/keep\\.scope$");
	CU_ASSERT_EQUAL(cfg.trusted_uid_max, 0);
	CU_ASSERT_EQUAL_FATAL(parse("[daemon]\ntrusted_uid_max = 4294967294\n" GOOD_TIER), 0);
	CU_ASSERT_EQUAL(cfg.trusted_uid_max, 4294967294u);
	CU_ASSERT_EQUAL_FATAL(parse("[daemon]\ntrusted_uid_max = 60000\nprotect_cgroup = a\navoid_cgroup = b\n" GOOD_TIER),
			      0);
	print_cfg(buf, sizeof(buf));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\nprotect_cgroup = a\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\navoid_cgroup = b\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\ntrusted_uid_max = 60000\n"));

	check_error("[daemon]\nprotect_cgroup = ^(/system\n" GOOD_TIER, 2, "protect_cgroup: bad regular expression");
	check_error("[daemon]\ndry_run = no\navoid_cgroup = a+*\n" GOOD_TIER, 3, "avoid_cgroup: regular expression too complex");
	check_error("[daemon]\navoid_cgroup = (a)\\1\n" GOOD_TIER, 2, "too complex");
	check_error("[daemon]\ntrusted_uid_max = -1\n" GOOD_TIER, 2, "trusted_uid_max must be a uid");
	check_error("[daemon]\ntrusted_uid_max = 4294967295\n" GOOD_TIER, 2, "trusted_uid_max must be a uid");
	check_error("[daemon]\ntrusted_uid_max = 99999999999999999999999\n" GOOD_TIER, 2, "trusted_uid_max must be a uid");
	check_error("[daemon]\ntrusted_uid_max = 999 users\n" GOOD_TIER, 2, "trusted_uid_max must be a uid");
	check_error("[daemon]\ntrusted_uid_max =\n" GOOD_TIER, 2, "trusted_uid_max must be a uid");
	check_error("[daemon]\ntrusted_uid_max = 1\ntrusted_uid_max = 2\n" GOOD_TIER, 3, "duplicate key");
}

static void load_shipped(const char *name)
{
	const char *srcdir = getenv("top_srcdir");
	char path[1024];

	snprintf(path, sizeof(path), "%s/conf/%s", srcdir ? srcdir : ".", name);
	CU_ASSERT_EQUAL(config_load_file(&cfg, path, NULL, &err), 0);
	if (err.msg[0])
		printf("# %s\n", err.msg);
}

/* the lowest band floor of any tier */
static int lowest_floor(void)
{
	int lo = 1001;
	size_t i;

	for (i = 0; i < cfg.n_tiers; i++)
		if (cfg.tiers[i].min_oom_score_adj < lo)
			lo = cfg.tiers[i].min_oom_score_adj;
	return lo;
}

static void test_shipped_config(void)
{
	load_shipped("psi-lmkd.conf");
	CU_ASSERT_TRUE(cfg.n_tiers >= 1);
	/* the session and the way in stay protected against their owners' own
	 * hogs (by name) and, for the root-placed pieces, for everyone (cgroup) */
	CU_ASSERT_STRING_NOT_EQUAL(cfg.protect, "");
	CU_ASSERT_STRING_NOT_EQUAL(cfg.protect_cgroup, "");
	CU_ASSERT_EQUAL(cfg.trusted_uid_max, 999);
	/* desktops and servers: the kernel's order, down to adj 0 */
	CU_ASSERT_EQUAL(cfg.victim_order, VICTIM_ORDER_BADNESS);
	CU_ASSERT_EQUAL(lowest_floor(), 0);
	/* lmkd's kill line is the Android profile's */
	CU_ASSERT_FALSE(cfg.lmkd_kill_log);
}

/* conf/psi-lmkd-android.conf, what init/psi-lmkd.rc runs with */
static void test_shipped_android_config(void)
{
	size_t i;

	load_shipped("psi-lmkd-android.conf");
	CU_ASSERT_EQUAL(cfg.victim_order, VICTIM_ORDER_ADJ);
	/* lmkd's own kill line, for Android's tools and lmkd_test */
	CU_ASSERT_TRUE(cfg.lmkd_kill_log);
	/* apps run as uids from 10000 (AID_APP_START) */
	CU_ASSERT_EQUAL(cfg.trusted_uid_max, 9999);
	CU_ASSERT_EQUAL_FATAL(cfg.n_tiers, 4);
	/* lmkd's levels: medium kills cached apps (800), thrashing stops above
	 * perceptible (201), critical and the last resort reach foreground (0) */
	CU_ASSERT_STRING_EQUAL(cfg.tiers[0].name, "medium");
	CU_ASSERT_EQUAL(cfg.tiers[0].min_oom_score_adj, 800);
	CU_ASSERT_EQUAL(cfg.tiers[0].stall_us, 70000);
	CU_ASSERT_EQUAL(cfg.tiers[0].window_us, 1000000);
	CU_ASSERT_EQUAL(cfg.tiers[1].min_oom_score_adj, 201);
	CU_ASSERT_EQUAL(cfg.tiers[2].state, PSI_FULL);
	CU_ASSERT_EQUAL(cfg.tiers[2].stall_us, 700000);
	CU_ASSERT_EQUAL(cfg.tiers[2].min_oom_score_adj, 0);
	CU_ASSERT_TRUE(cfg.tiers[3].low_available.set);
	CU_ASSERT_EQUAL(lowest_floor(), 0);
	for (i = 0; i < cfg.n_tiers; i++)
		CU_ASSERT_TRUE(cfg.tiers[i].min_oom_score_adj >= 0);
}

static void test_victim_order_key(void)
{
	char buf[4096];

	CU_ASSERT_EQUAL_FATAL(parse(GOOD_TIER), 0);
	CU_ASSERT_EQUAL(cfg.victim_order, VICTIM_ORDER_BADNESS); /* the built-in default */
	CU_ASSERT_FALSE(cfg.lmkd_kill_log);
	CU_ASSERT_EQUAL_FATAL(parse("[daemon]\nlmkd_kill_log = yes\n" GOOD_TIER), 0);
	CU_ASSERT_TRUE(cfg.lmkd_kill_log);
	print_cfg(buf, sizeof(buf));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\nlmkd_kill_log = true\n"));
	CU_ASSERT_EQUAL_FATAL(parse("[daemon]\nvictim_order = adj\n" GOOD_TIER), 0);
	CU_ASSERT_EQUAL(cfg.victim_order, VICTIM_ORDER_ADJ);
	print_cfg(buf, sizeof(buf));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\nvictim_order = adj\n"));
	CU_ASSERT_EQUAL_FATAL(parse("[daemon]\nvictim_order = badness\n" GOOD_TIER), 0);
	CU_ASSERT_EQUAL(cfg.victim_order, VICTIM_ORDER_BADNESS);
	print_cfg(buf, sizeof(buf));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\nvictim_order = badness\n"));
	check_error("[daemon]\nvictim_order = rss\n" GOOD_TIER, 2, "victim_order must be adj or badness, not \"rss\"");
	check_error("[daemon]\nvictim_order = Badness\n" GOOD_TIER, 2, "victim_order must be adj or badness");
	check_error("[daemon]\nvictim_order =\n" GOOD_TIER, 2, "victim_order must be adj or badness");
	check_error("[daemon]\nscope = /\nvictim_order = adj\nvictim_order = badness\n" GOOD_TIER, 4,
		    "duplicate key \"victim_order\" (first set at line 3)");
	check_error(GOOD_TIER "victim_order = adj\n", 4, "unknown key \"victim_order\" in a [tier] section");

	/* oom_killer: kernel (default) or daemon */
	CU_ASSERT_EQUAL_FATAL(parse(GOOD_TIER), 0);
	CU_ASSERT_FALSE(cfg.oom_killer_daemon);
	print_cfg(buf, sizeof(buf));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\noom_killer = kernel\n"));
	CU_ASSERT_EQUAL_FATAL(parse("[daemon]\noom_killer = daemon\n" LOW_TIER), 0);
	CU_ASSERT_TRUE(cfg.oom_killer_daemon);
	print_cfg(buf, sizeof(buf));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\noom_killer = daemon\n"));
	check_error("[daemon]\noom_killer = userspace\n" GOOD_TIER, 2,
		    "oom_killer must be kernel or daemon, not \"userspace\"");
	check_error(GOOD_TIER "oom_killer = daemon\n", 4, "unknown key \"oom_killer\" in a [tier] section");

	/* memory_high_brake: off (default), on, or a margin */
	CU_ASSERT_EQUAL_FATAL(parse(GOOD_TIER), 0);
	CU_ASSERT_FALSE(cfg.brake_margin.set);
	print_cfg(buf, sizeof(buf));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\nmemory_high_brake = off\n"));
	CU_ASSERT_EQUAL_FATAL(parse("[daemon]\nmemory_high_brake = on\n" LOW_TIER), 0);
	CU_ASSERT_TRUE(cfg.brake_margin.set);
	CU_ASSERT_EQUAL(cfg.brake_margin.value, 0);
	print_cfg(buf, sizeof(buf));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\nmemory_high_brake = on\n"));
	CU_ASSERT_EQUAL_FATAL(parse("[daemon]\nmemory_high_brake = 16M\n" LOW_TIER), 0);
	CU_ASSERT_EQUAL(cfg.brake_margin.value, 16ULL << 20);
	CU_ASSERT_FALSE(cfg.brake_margin.percent);
	print_cfg(buf, sizeof(buf));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\nmemory_high_brake = 16M\n"));
	CU_ASSERT_EQUAL_FATAL(parse("[daemon]\nmemory_high_brake = 2.5%\n" LOW_TIER), 0);
	CU_ASSERT_TRUE(cfg.brake_margin.percent);
	CU_ASSERT_EQUAL(cfg.brake_margin.value, 250);
	CU_ASSERT_EQUAL_FATAL(parse("[daemon]\nmemory_high_brake = on\nmemory_high_brake = off\n" GOOD_TIER), -EINVAL);
	CU_ASSERT_EQUAL_FATAL(parse("[daemon]\nmemory_high_brake = off\n" GOOD_TIER), 0);
	CU_ASSERT_FALSE(cfg.brake_margin.set);
	check_error("[daemon]\nmemory_high_brake = yes\n" GOOD_TIER, 2, "\"yes\" is not a memory size");
	check_error("[daemon]\nmemory_high_brake = 16\n" GOOD_TIER, 2, "\"16\" needs a unit");
	check_error("[daemon]\nmemory_high_brake = 0M\n" GOOD_TIER, 2, "memory_high_brake must be more than 0");
	check_error("[daemon]\nmemory_high_brake = 60%\n" GOOD_TIER, 2, "at most 50% of memory.max");
	check_error(GOOD_TIER "memory_high_brake = on\n", 4, "unknown key \"memory_high_brake\" in a [tier] section");
}

/* Found by tests/fuzz/fuzz-config: glibc's regcomp() takes 700 MB for "a"
 * and 20 '+', over a minute for "0", 36 '?' and 5 '+'. Such patterns (and
 * back-references, slow in regexec()) are refused before regcomp() sees
 * them; ordinary ones still pass. */
static void test_regex_complexity(void)
{
	check_error("[daemon]\nprotect = d\navoid = n]rpi+++++++++++++++++++++++++++++++e\n" GOOD_TIER, 3,
		    "avoid: regular expression too complex");
	check_error("[daemon]\nprefer = 0????????????????????????????????????+++++\n" GOOD_TIER, 2, "too complex");
	check_error("[daemon]\nprefer = a+*\n" GOOD_TIER, 2, "too complex");
	check_error("[daemon]\nprefer = a{2}{3}\n" GOOD_TIER, 2, "too complex");
	check_error("[daemon]\nprefer = ^(a{255}){255}$\n" GOOD_TIER, 2, "too complex");
	check_error("[daemon]\nprefer = (0?){600}\n" GOOD_TIER, 2, "too complex");
	check_error("[daemon]\nprotect_cmdline = (((((((((a)))))))))\n" GOOD_TIER, 2, "too complex");
	check_error("[daemon]\navoid_cmdline = a{1025}\n" GOOD_TIER, 2, "too complex");
	check_error("[daemon]\navoid_cmdline = x(){5337}\n" GOOD_TIER, 2, "too complex");
	/* back-references make regexec() backtrack: minutes on a long command line */
	check_error("[daemon]\nprefer_cmdline = (.*)(.*)(.*)\\3\\2\\1c\n" GOOD_TIER, 2, "too complex");
	/* regcomp() compiles what comes before a bad bracket before it fails */
	check_error("[daemon]\nprefer = a{1000}b{100}[unterminated\n" GOOD_TIER, 2, "too complex");
	CU_ASSERT_EQUAL(parse("[daemon]\nprotect = ^(systemd|systemd-.*|sshd|[[:alpha:]]{1,15}|a\\+\\+)$\n"
			      "prefer = a{" BIG_REPEAT "}\navoid = (((a+)+)+)+\nprotect_cmdline = [+*?]+x?\n" GOOD_TIER),
			0);
	if (err.msg[0])
		printf("# %s\n", err.msg);
}

static void test_format_duration(void)
{
	char b[32];

	CU_ASSERT_STRING_EQUAL(config_format_duration(b, sizeof(b), 2000000), "2s");
	CU_ASSERT_STRING_EQUAL(config_format_duration(b, sizeof(b), 70000), "70ms");
	CU_ASSERT_STRING_EQUAL(config_format_duration(b, sizeof(b), 1500), "1500us");
	CU_ASSERT_STRING_EQUAL(config_format_duration(b, sizeof(b), 0), "0us");
}

/* ------------------------------------------------------------------ on_kill */

/* A hook script at dir/name with mode; returns its path in a static buffer. */
static const char *make_hook(const char *dir, const char *name, mode_t mode)
{
	static char path[512];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0700);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT(write(fd, "#!/bin/sh\n", 10) == 10);
	close(fd);
	CU_ASSERT_FATAL(chmod(path, mode) == 0);
	return path;
}

static int parse_hook(const char *path, const char *user)
{
	char text[2048];

	snprintf(text, sizeof(text), "[daemon]\non_kill = %s\n%s%s%s" GOOD_TIER, path, user ? "on_kill_user = " : "",
		 user ? user : "", user ? "\n" : "");
	return parse(text);
}

static void check_hook_error(const char *path, const char *want)
{
	char text[2048];

	snprintf(text, sizeof(text), "[daemon]\non_kill = %s\n" GOOD_TIER, path);
	check_error(text, 2, want);
}

/* The program and every directory above it: root's or ours, writable by
 * nobody else unless the directory is sticky. */
static void test_hook_ownership(void)
{
	char dir[] = "/tmp/psi-lmkd-test-owner-XXXXXX", sub[600], link[700];
	const char *hook;

	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir)); /* 0700, ours, under the sticky /tmp */

	/* a good one */
	hook = make_hook(dir, "good", 0755);
	CU_ASSERT_EQUAL(parse_hook(hook, NULL), 0);
	CU_ASSERT_STRING_EQUAL(cfg.on_kill, hook);

	/* group-writable, world-writable program */
	hook = make_hook(dir, "group-writable", 0775);
	check_hook_error(hook, "is writable by its group or others (mode 0775)");
	hook = make_hook(dir, "world-writable", 0757);
	check_hook_error(hook, "is writable by its group or others");

	/* under a world-writable directory without the sticky bit */
	snprintf(sub, sizeof(sub), "%s/open", dir);
	CU_ASSERT_FATAL(mkdir(sub, 0755) == 0 && chmod(sub, 0777) == 0);
	hook = make_hook(sub, "hook", 0755);
	check_hook_error(hook, "and not sticky");
	/* the same reached through a symlink from a good directory */
	snprintf(link, sizeof(link), "%s/link", dir);
	CU_ASSERT_FATAL(symlink(hook, link) == 0);
	check_hook_error(link, "/open above");
	unlink(link);
	unlink(hook);
	/* ... and a group-writable one */
	CU_ASSERT_FATAL(chmod(sub, 0775) == 0);
	hook = make_hook(sub, "hook", 0755);
	check_hook_error(hook, "(mode 0775) and not sticky");
	/* sticky and world-writable, like /tmp: fine, the entry is ours */
	CU_ASSERT_FATAL(chmod(sub, 01777) == 0);
	CU_ASSERT_EQUAL(parse_hook(hook, NULL), 0);
	unlink(hook);
	rmdir(sub);

	/* owned by another uid: the program, a directory above it */
	if (geteuid() == 0) {
		hook = make_hook(dir, "foreign", 0755);
		CU_ASSERT_FATAL(chown(hook, 12345, 12345) == 0);
		check_hook_error(hook, "is owned by uid 12345");
		unlink(hook);
		snprintf(sub, sizeof(sub), "%s/foreign-dir", dir);
		CU_ASSERT_FATAL(mkdir(sub, 0755) == 0);
		hook = make_hook(sub, "hook", 0755);
		CU_ASSERT_FATAL(chown(sub, 12345, 12345) == 0);
		check_hook_error(hook, "foreign-dir above");
		check_hook_error(hook, "is owned by uid 12345");
		unlink(hook);
		/* a symlink to a good program, in a directory of another uid, who
		 * could re-point it later: the path as written counts (review M-3) */
		CU_ASSERT_FATAL(chown(sub, 0, 0) == 0);
		hook = make_hook(dir, "good", 0755);
		snprintf(link, sizeof(link), "%s/hook", sub);
		CU_ASSERT_FATAL(symlink(hook, link) == 0);
		CU_ASSERT_EQUAL(parse_hook(link, NULL), 0);
		CU_ASSERT_FATAL(chown(sub, 12345, 12345) == 0);
		check_hook_error(link, "the directory ");
		check_hook_error(link, "foreign-dir above");
		check_hook_error(link, "is owned by uid 12345");
		/* ... or the symlink itself owned by another uid */
		CU_ASSERT_FATAL(chown(sub, 0, 0) == 0 && lchown(link, 12345, 12345) == 0);
		check_hook_error(link, "the symlink ");
		check_hook_error(link, "foreign-dir/hook above");
		unlink(link);
		rmdir(sub);
	} else {
		printf("# not root: the cases of files owned by another uid are not run\n");
	}
	unlink(make_hook(dir, "good", 0755));
	unlink(make_hook(dir, "group-writable", 0755));
	unlink(make_hook(dir, "world-writable", 0755));
	CU_ASSERT(rmdir(dir) == 0);
}

/* on_kill_user: resolved at load, never root, never unknown; default nobody */
static void test_hook_user(void)
{
	/* pre_kill's own refusals, on line 3 */
	static const struct {
		const char *keys, *want;
	} pre_refused[] = {
		{ "pre_kill_timeout = 6s\n", "pre_kill_timeout" }, /* a few seconds at most */
		{ "pre_kill_timeout = 1ms\n", "pre_kill_timeout" },
		{ "on_kill_user = root\n", "is uid 0; the hook must not run as root" },
	};
	char dir[] = "/tmp/psi-lmkd-test-user-XXXXXX", text[2048], uid[32];
	size_t i;
	const struct passwd *pw = getpwnam("nobody");
	struct passwd nobody_ids;
	const struct passwd *nobody = &nobody_ids;
	const char *hook;

	if (!pw) {
		CU_FAIL_FATAL("no user nobody on this system");
		return;
	}
	nobody_ids = *pw; /* the ids only: getpwnam's buffer is not ours to keep */
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	hook = make_hook(dir, "hook", 0755);

	CU_ASSERT_EQUAL_FATAL(parse_hook(hook, NULL), 0);
	CU_ASSERT_STRING_EQUAL(cfg.on_kill_user.name, "nobody");
	CU_ASSERT_EQUAL(cfg.on_kill_user.uid, nobody->pw_uid);
	CU_ASSERT_EQUAL(cfg.on_kill_user.gid, nobody->pw_gid);
	CU_ASSERT(cfg.on_kill_user.n_groups >= 1);
	CU_ASSERT_EQUAL(cfg.on_kill_user.groups[0], nobody->pw_gid);

	snprintf(uid, sizeof(uid), "%u", (unsigned)nobody->pw_uid);
	CU_ASSERT_EQUAL_FATAL(parse_hook(hook, uid), 0);
	CU_ASSERT_STRING_EQUAL(cfg.on_kill_user.name, "nobody");
	CU_ASSERT_EQUAL(cfg.on_kill_user.uid, nobody->pw_uid);

	snprintf(text, sizeof(text), "[daemon]\non_kill = %s\non_kill_user = root\n" GOOD_TIER, hook);
	check_error(text, 3, "is uid 0; the hook must not run as root");
	snprintf(text, sizeof(text), "[daemon]\non_kill_user = 0\non_kill = %s\n" GOOD_TIER, hook);
	check_error(text, 2, "is uid 0");
	snprintf(text, sizeof(text), "[daemon]\non_kill = %s\non_kill_user = psi-lmkd-no-such-user\n" GOOD_TIER, hook);
	check_error(text, 3, "no such user \"psi-lmkd-no-such-user\"");
	snprintf(text, sizeof(text), "[daemon]\non_kill = %s\non_kill_user = 4000000000\n" GOOD_TIER, hook);
	check_error(text, 3, "no such user");
	snprintf(text, sizeof(text), "[daemon]\non_kill = %s\non_kill_user =\n" GOOD_TIER, hook);
	check_error(text, 3, "a user name or a uid");
	check_error("[daemon]\non_kill_user = nobody\n" GOOD_TIER, 2, "there is no on_kill program");

	/* pre_kill: the same checks, the same user; its timeout short by default, a few seconds at most */
	snprintf(text, sizeof(text), "[daemon]\npre_kill = %s\n" GOOD_TIER, hook);
	CU_ASSERT_EQUAL_FATAL(parse(text), 0);
	CU_ASSERT_STRING_EQUAL(cfg.pre_kill, hook);
	CU_ASSERT_STRING_EQUAL(cfg.on_kill, "");
	CU_ASSERT_EQUAL(cfg.pre_kill_timeout_us, CONFIG_DEFAULT_PRE_KILL_TIMEOUT_US);
	CU_ASSERT_STRING_EQUAL(cfg.on_kill_user.name, "nobody");
	snprintf(text, sizeof(text), "[daemon]\npre_kill = %s\npre_kill_timeout = 5s\non_kill_user = %u\n" GOOD_TIER, hook,
		 (unsigned)nobody->pw_uid);
	CU_ASSERT_EQUAL_FATAL(parse(text), 0);
	CU_ASSERT_EQUAL(cfg.pre_kill_timeout_us, 5000000);
	CU_ASSERT_EQUAL(cfg.on_kill_user.uid, nobody->pw_uid);
	for (i = 0; i < sizeof(pre_refused) / sizeof(pre_refused[0]); i++) {
		snprintf(text, sizeof(text), "[daemon]\npre_kill = %s\n%s" GOOD_TIER, hook, pre_refused[i].keys);
		check_error(text, 3, pre_refused[i].want);
	}
	check_error("[daemon]\npre_kill = relative.sh\n" GOOD_TIER, 2, "pre_kill must be an absolute path");
	check_error("[daemon]\npre_kill = /dev/null\n" GOOD_TIER, 2, "not an executable");
	chmod(hook, 0777); /* anybody could change it */
	snprintf(text, sizeof(text), "[daemon]\npre_kill = %s\n" GOOD_TIER, hook);
	check_error(text, 2, "pre_kill");
	unlink(hook);
	rmdir(dir);
}

/* ------------------------------------------------------------------ drop-ins */

/* A temporary tree: dir/x.conf (the main file), dir/x.conf.d/ and dir/vendor/. */
struct tree {
	char dir[64], main[128], dropins[128], vendor[128];
};

static void tree_put(const char *dir, const char *name, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs(text, f);
	fclose(f);
}

/* A main file of text, and its drop-in and vendor directories, empty. */
static void tree_new(struct tree *t, const char *text)
{
	*t = (struct tree){ .dir = "/tmp/psi-lmkd-test-dropin-XXXXXX" };
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(t->dir));
	snprintf(t->main, sizeof(t->main), "%s/x.conf", t->dir);
	snprintf(t->dropins, sizeof(t->dropins), "%s/x.conf.d", t->dir);
	snprintf(t->vendor, sizeof(t->vendor), "%s/vendor", t->dir);
	tree_put(t->dir, "x.conf", text);
	CU_ASSERT_EQUAL_FATAL(mkdir(t->dropins, 0755), 0);
	CU_ASSERT_EQUAL_FATAL(mkdir(t->vendor, 0755), 0);
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void tree_free(const struct tree *t)
{
	CU_ASSERT_EQUAL(nftw(t->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS), 0);
}

static int tree_load(const struct tree *t, bool vendor)
{
	int r = config_load_file(&cfg, t->main, vendor ? t->vendor : NULL, &err);

	if (r < 0)
		printf("# %s\n", err.msg);
	return r;
}

/* The load fails and its error starts with dir/file:line (line 0: no line) and contains want. */
static void tree_error(const struct tree *t, bool vendor, const char *file, unsigned line, const char *want)
{
	char prefix[256];

	CU_ASSERT_TRUE(tree_load(t, vendor) < 0);
	if (line)
		snprintf(prefix, sizeof(prefix), "%s/%s:%u: ", t->dir, file, line);
	else
		snprintf(prefix, sizeof(prefix), "%s/%s: ", t->dir, file);
	if (strncmp(err.msg, prefix, strlen(prefix)) != 0 || !strstr(err.msg, want)) {
		printf("# got \"%s\", wanted prefix \"%s\" and \"%s\"\n", err.msg, prefix, want);
		CU_FAIL("wrong error message");
	}
}

/* The long value of one file's line N is not the value of a drop-in's line N. */
static void test_long_line_dropin(void)
{
	static char text[CONFIG_REGEX_MAX + 256], re[600];
	struct tree t;

	long_regex(re, sizeof(re) - 1);
	snprintf(text, sizeof(text), "[daemon]\nprotect = %s\n" GOOD_TIER, re);
	tree_new(&t, text);
	tree_put(t.dropins, "10-a.conf", "[daemon]\navoid = y\n");
	CU_ASSERT_EQUAL_FATAL(tree_load(&t, false), 0);
	CU_ASSERT_STRING_EQUAL(cfg.protect, re);
	CU_ASSERT_STRING_EQUAL(cfg.avoid, "y");
	tree_free(&t);
}

/* A [daemon] key of a drop-in overrides the main file's; the others stay. */
static void test_dropin_daemon_override(void)
{
	struct tree t;

	tree_new(&t, "[daemon]\nkill_timeout = 2s\ndry_run = no\n" GOOD_TIER);
	CU_ASSERT_EQUAL(tree_load(&t, false), 0); /* an empty directory */
	CU_ASSERT_EQUAL(cfg.n_dropins, 0);
	tree_put(t.dropins, "10-a.conf", "; local\n[daemon]\ndry_run = yes\n");
	CU_ASSERT_EQUAL_FATAL(tree_load(&t, false), 0);
	CU_ASSERT_TRUE(cfg.dry_run);
	CU_ASSERT_EQUAL(cfg.kill_timeout_us, 2000000);
	CU_ASSERT_EQUAL_FATAL(cfg.n_dropins, 1);
	CU_ASSERT_STRING_EQUAL(cfg.dropins[0].name, "10-a.conf");
	CU_ASSERT_FALSE(cfg.dropins[0].vendor);
	CU_ASSERT_EQUAL(cfg.n_tiers, 1);
	tree_free(&t);
}

/* [tier NAME] of a drop-in extends that tier, or adds one. */
static void test_dropin_tiers(void)
{
	struct tree t;

	tree_new(&t, GOOD_TIER);
	tree_put(t.dropins, "50-tiers.conf", "[tier t]\nmin_oom_score_adj = 500\nkill_cgroup = yes\n"
					      "[tier late]\nlow_available = 5%\nmin_oom_score_adj = 900\n");
	CU_ASSERT_EQUAL_FATAL(tree_load(&t, false), 0);
	CU_ASSERT_EQUAL_FATAL(cfg.n_tiers, 2);
	CU_ASSERT_STRING_EQUAL(cfg.tiers[0].name, "t");
	CU_ASSERT_EQUAL(cfg.tiers[0].min_oom_score_adj, 500);
	CU_ASSERT_TRUE(cfg.tiers[0].kill_cgroup);
	CU_ASSERT_EQUAL(cfg.tiers[0].stall_us, 100000); /* the main file's trigger */
	CU_ASSERT_EQUAL(cfg.tiers[0].origin, CONFIG_ORIGIN(0, 1));
	CU_ASSERT_STRING_EQUAL(cfg.tiers[1].name, "late");
	CU_ASSERT_EQUAL(cfg.tiers[1].origin, CONFIG_ORIGIN(1, 4));
	CU_ASSERT_EQUAL(cfg.tiers[1].min_oom_score_adj, 900);
	CU_ASSERT_TRUE(cfg.tiers[1].low_available.set);
	tree_free(&t);
}

/* The checks of keys together run on the merged files: a partner in another
 * file counts, and the error names the line of the key that needs it. */
static void test_dropin_partners(void)
{
	char want[CONFIG_PATH_MAX + 64];
	struct tree t;

	tree_new(&t, "[daemon]\noom_killer = daemon\nmemory_high_brake = on\n" GOOD_TIER);
	tree_put(t.dropins, "10-last.conf", "[tier last]\nlow_available = 5%\nmin_oom_score_adj = 0\n");
	CU_ASSERT_EQUAL(tree_load(&t, false), 0);
	CU_ASSERT_TRUE(cfg.oom_killer_daemon);
	tree_put(t.dropins, "10-last.conf", "[tier last]\nlow_available = 5%\naction = warn\n");
	CU_ASSERT_EQUAL(tree_load(&t, false), -EINVAL);
	snprintf(want, sizeof(want), "%s:2: oom_killer = daemon needs a kill tier", t.main);
	if (strncmp(err.msg, want, strlen(want)) != 0)
		printf("# got \"%s\", wanted \"%s...\"\n", err.msg, want);
	CU_ASSERT_EQUAL(strncmp(err.msg, want, strlen(want)), 0);
	tree_free(&t);

	tree_new(&t, "[daemon]\npre_kill_timeout = 1s\n" GOOD_TIER);
	tree_put(t.dropins, "10-x.conf", "[daemon]\nsettle_time = 0\n");
	CU_ASSERT_EQUAL(tree_load(&t, false), -EINVAL);
	snprintf(want, sizeof(want), "%s:2: pre_kill_timeout only applies with pre_kill", t.main);
	CU_ASSERT_EQUAL(strncmp(err.msg, want, strlen(want)), 0);
	tree_free(&t);
}

/* Drop-ins are read in the order of their names, whatever the directory's. */
static void test_dropin_order(void)
{
	char buf[CONFIG_PATH_MAX + 300], want[256];
	struct tree t;

	tree_new(&t, GOOD_TIER);
	tree_put(t.dropins, "20-x.conf", "[daemon]\n\nkill_timeout = 3s\n");
	tree_put(t.dropins, "10-x.conf", "[daemon]\nkill_timeout = 1s\nsettle_time = 0\n");
	tree_put(t.dropins, "15-x.conf", "[daemon]\nsettle_time = 2s\n");
	CU_ASSERT_EQUAL_FATAL(tree_load(&t, false), 0);
	CU_ASSERT_EQUAL(cfg.kill_timeout_us, 3000000);
	CU_ASSERT_EQUAL(cfg.settle_us, 2000000);
	CU_ASSERT_EQUAL_FATAL(cfg.n_dropins, 3);
	CU_ASSERT_STRING_EQUAL(cfg.dropins[0].name, "10-x.conf");
	CU_ASSERT_STRING_EQUAL(cfg.dropins[1].name, "15-x.conf");
	CU_ASSERT_STRING_EQUAL(cfg.dropins[2].name, "20-x.conf");
	CU_ASSERT_STRING_EQUAL(config_file_name(&cfg, 0, buf, sizeof(buf)), t.main);
	snprintf(want, sizeof(want), "%s/20-x.conf:3", t.dropins);
	CU_ASSERT_STRING_EQUAL(config_where(&cfg, CONFIG_ORIGIN(3, 3), buf, sizeof(buf)), want);
	tree_free(&t);
}

/* A drop-in written, and the error it makes (its file:line, a part of the
 * message; file NULL: none, the next case builds on it). */
struct dropin_case {
	const char *name, *text;
	const char *file; /* under the tree's directory */
	unsigned line;
	const char *want;
};

static void dropin_cases(const struct tree *t, const struct dropin_case *cases, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		tree_put(t->dropins, cases[i].name, cases[i].text);
		if (cases[i].file)
			tree_error(t, false, cases[i].file, cases[i].line, cases[i].want);
	}
}

/* What a drop-in breaks is reported at the line at fault, in whichever file
 * it is: the checks after all the files as much as the parser's. A key, a
 * tier or [daemon] twice in one file is an error; across files, an override. */
static void test_dropin_errors(void)
{
	static const struct dropin_case cases[] = {
		{ "20-b.conf", "[daemon]\ndry_run = no\n\ndry_run = yes\n", "x.conf.d/20-b.conf", 4,
		  "duplicate key \"dry_run\" (first set at line 2)" },
		{ "20-b.conf", "[tier t]\nmin_oom_score_adj = 2\n[tier t]\n", "x.conf.d/20-b.conf", 3,
		  "duplicate tier \"t\" (first at line 1)" },
		{ "20-b.conf", "[daemon]\n[daemon]\n", "x.conf.d/20-b.conf", 2, "duplicate section [daemon] (first at line 1)" },
		{ "20-b.conf", "[daemon]\nkill_timeout = forever\n", "x.conf.d/20-b.conf", 2, "kill_timeout" },
		{ "20-b.conf", "[tier t]\n\nterm_timeout = 5s\n", "x.conf.d/20-b.conf", 3,
		  "term_timeout only applies with kill_signal = SIGTERM" },
		/* the main file's line (10-a.conf's kill_cgroup is checked after it) */
		{ "20-b.conf", "[tier t]\naction = warn\n", "x.conf", 5, "so min_oom_score_adj does not apply" },
		{ "20-b.conf", "[tier t]\nkill_signal = SIGTERM\n", NULL, 0, NULL }, /* fine: kept for the next */
		{ "30-c.conf", "; c\n[tier new]\ntrigger = some 10ms 1s\n", "x.conf.d/30-c.conf", 2,
		  "tier \"new\" has no min_oom_score_adj" },
		{ "30-c.conf", "[daemon]\non_kill_user = nobody\n", "x.conf.d/30-c.conf", 2,
		  "on_kill_user is set but there is no on_kill program" },
		{ "30-c.conf", "[tier t]\nbogus\n", "x.conf.d/30-c.conf", 2, "syntax error" },
	};
	struct tree t;

	tree_new(&t, "[daemon]\ndry_run = no\n" GOOD_TIER);
	tree_put(t.dropins, "10-a.conf", "[daemon]\ndry_run = yes\n[tier t]\nkill_cgroup = no\n");
	dropin_cases(&t, cases, sizeof(cases) / sizeof(cases[0]));
	tree_put(t.dropins, "30-c.conf", "[tier t]\nmin_oom_score_adj = 2\n");
	CU_ASSERT_EQUAL_FATAL(tree_load(&t, false), 0);
	CU_ASSERT_EQUAL(cfg.tiers[0].min_oom_score_adj, 2);
	CU_ASSERT_EQUAL(cfg.tiers[0].kill_signal, SIGTERM);
	CU_ASSERT_EQUAL(cfg.origin[1][1], CONFIG_ORIGIN(3, 2)); /* min_oom_score_adj is tier key 1 */
	tree_free(&t);
}

/* The vendor directory: read with the drop-ins, sorted among them by name,
 * its file masked by one of the same name in <path>.d; not read without it. */
static void test_dropin_vendor(void)
{
	struct tree t;

	tree_new(&t, "[daemon]\nkill_timeout = 2s\n" GOOD_TIER);
	tree_put(t.vendor, "10-a.conf", "[daemon]\ndry_run = yes\n");
	tree_put(t.vendor, "05-v.conf", "[daemon]\nkill_timeout = 4s\nsettle_time = 3s\n");
	tree_put(t.dropins, "10-a.conf", "[daemon]\nsettle_time = 5s\n");
	CU_ASSERT_EQUAL_FATAL(tree_load(&t, true), 0);
	CU_ASSERT_FALSE(cfg.dry_run); /* the vendor's 10-a.conf is masked */
	CU_ASSERT_EQUAL(cfg.kill_timeout_us, 4000000);
	CU_ASSERT_EQUAL(cfg.settle_us, 5000000); /* 10-a.conf comes after 05-v.conf */
	CU_ASSERT_EQUAL_FATAL(cfg.n_dropins, 2);
	CU_ASSERT_STRING_EQUAL(cfg.dropins[0].name, "05-v.conf");
	CU_ASSERT_TRUE(cfg.dropins[0].vendor);
	CU_ASSERT_STRING_EQUAL(cfg.dropins[1].name, "10-a.conf");
	CU_ASSERT_FALSE(cfg.dropins[1].vendor);
	CU_ASSERT_STRING_EQUAL(cfg.vendor_dir, t.vendor);
	tree_put(t.vendor, "07-bad.conf", "[daemon]\nnice = 99\n");
	tree_error(&t, true, "vendor/07-bad.conf", 2, "nice must be");
	CU_ASSERT_EQUAL_FATAL(tree_load(&t, false), 0); /* no vendor directory asked for */
	CU_ASSERT_EQUAL(cfg.n_dropins, 1);
	CU_ASSERT_EQUAL(cfg.kill_timeout_us, 2000000);
	CU_ASSERT_STRING_EQUAL(cfg.vendor_dir, "");
	tree_free(&t);
}

/* Only *.conf, not hidden: the rest of the directory is not read. */
static void test_dropin_names(void)
{
	struct tree t;

	tree_new(&t, GOOD_TIER);
	tree_put(t.dropins, ".hidden.conf", "garbage\n");
	tree_put(t.dropins, ".conf", "garbage\n");
	tree_put(t.dropins, "10-a.conf.dpkg-old", "garbage\n");
	tree_put(t.dropins, "10-a.conf~", "garbage\n");
	tree_put(t.dropins, "README", "garbage\n");
	tree_put(t.dropins, "conf", "garbage\n");
	CU_ASSERT_EQUAL_FATAL(tree_load(&t, true), 0);
	CU_ASSERT_EQUAL(cfg.n_dropins, 0);
	tree_free(&t);
}

/* What cannot be read is an error naming it: a *.conf that is not a file, a
 * drop-in directory that is not one, one file too many. None is fine. */
static void test_dropin_refused(void)
{
	char path[256], name[32];
	struct tree t;
	int i;

	tree_new(&t, GOOD_TIER);
	snprintf(path, sizeof(path), "%s/10-d.conf", t.dropins);
	CU_ASSERT_EQUAL_FATAL(mkdir(path, 0755), 0);
	tree_error(&t, false, "x.conf.d/10-d.conf", 0, "cannot read config: not a regular file");
	CU_ASSERT_EQUAL(rmdir(path), 0);
	for (i = 0; i < CONFIG_DROPINS_MAX; i++) {
		snprintf(name, sizeof(name), "%02d.conf", i);
		tree_put(t.dropins, name, "[daemon]\n");
		tree_put(t.vendor, name, "garbage\n"); /* masked: not counted */
	}
	CU_ASSERT_EQUAL_FATAL(tree_load(&t, true), 0);
	CU_ASSERT_EQUAL(cfg.n_dropins, CONFIG_DROPINS_MAX);
	tree_put(t.vendor, "99.conf", "[daemon]\n");
	tree_error(&t, true, "vendor", 0, "too many drop-in files: more than 16 with those of the config's own .d");
	CU_ASSERT_EQUAL_FATAL(tree_load(&t, false), 0);
	tree_put(t.dropins, "98.conf", "[daemon]\n");
	tree_error(&t, false, "x.conf.d", 0, "too many drop-in files: more than 16");
	tree_free(&t);

	tree_new(&t, GOOD_TIER);
	CU_ASSERT_EQUAL(rmdir(t.dropins), 0);
	CU_ASSERT_EQUAL(tree_load(&t, true), 0); /* neither directory there */
	CU_ASSERT_EQUAL(rmdir(t.vendor), 0);
	CU_ASSERT_EQUAL(tree_load(&t, true), 0);
	tree_put(t.dir, "x.conf.d", "[daemon]\n");
	tree_error(&t, false, "x.conf.d", 0, "cannot read the drop-in directory: Not a directory");
	tree_free(&t);
}

/* A path that struct config cannot hold with ".d" is refused, not cut short. */
static void test_path_too_long(void)
{
	char path[CONFIG_PATH_MAX];
	size_t i;

	for (i = 0; i < sizeof(path); i++)
		path[i] = i % 2 ? 'n' : '/'; /* /n/n/n...: no such file */
	path[sizeof(path) - 3] = '\0'; /* 1021 bytes: "<path>.d" fits */
	CU_ASSERT_EQUAL(config_load_file(&cfg, path, NULL, &err), -ENOENT);
	CU_ASSERT_EQUAL(config_load_file(&cfg, "/nonexistent.conf", path, &err), -ENOENT);
	path[sizeof(path) - 3] = 'n';
	path[sizeof(path) - 2] = '\0';
	CU_ASSERT_EQUAL(config_load_file(&cfg, path, NULL, &err), -ENAMETOOLONG);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "/n/n...: cannot read config: a path of 1022 bytes is too long (at most 1021)"));
	CU_ASSERT_EQUAL(config_load_file(&cfg, "/nonexistent.conf", path, &err), -ENAMETOOLONG);
}

/* --check-config's account: the files in the order read, then each key set
 * and the file:line of the value in force. */
static void test_dropin_print(void)
{
	char buf[8192], want[1024];
	struct tree t;

	tree_new(&t, "[daemon]\ndry_run = no\n" GOOD_TIER);
	tree_put(t.dropins, "10-a.conf", "[daemon]\ndry_run = yes\n[tier t]\nmin_oom_score_adj = 5\n");
	CU_ASSERT_EQUAL_FATAL(tree_load(&t, false), 0);
	print_cfg(buf, sizeof(buf));
	snprintf(want, sizeof(want), "\nfile 1 = %s\nfile 2 = %s/10-a.conf\n[daemon] dry_run at %s/10-a.conf:2\n"
		 "[tier t] at %s:3\n[tier t] trigger at %s:4\n[tier t] min_oom_score_adj at %s/10-a.conf:4\n",
		 t.main, t.dropins, t.dropins, t.main, t.main, t.dropins);
	if (!strstr(buf, want)) {
		printf("# got:\n%s# wanted:%s", buf, want);
		CU_FAIL("origins not printed");
	}
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\ndry_run = true\n"));
	tree_free(&t);

	CU_ASSERT_EQUAL_FATAL(parse("[daemon]\nkill_timeout = 1s\n" GOOD_TIER), 0); /* one file */
	print_cfg(buf, sizeof(buf));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\nfile 1 = test.conf\n[daemon] kill_timeout at test.conf:2\n[tier t] at "
					   "test.conf:3\n[tier t] trigger at test.conf:4\n[tier t] min_oom_score_adj at "
					   "test.conf:5\n"));
	CU_ASSERT_PTR_NULL(strstr(buf, "file 2"));
}

/* A file has at most CONFIG_LINE_MAX lines: the origins hold the line in 20 bits. */
static void test_line_max(void)
{
	size_t n = CONFIG_LINE_MAX - 3;
	char *text = malloc(CONFIG_LINE_MAX + sizeof(GOOD_TIER) + 1);

	if (!text) {
		CU_FAIL("out of memory");
		return;
	}
	memset(text, '\n', n);
	strcpy(text + n, GOOD_TIER); /* 3 lines: CONFIG_LINE_MAX in all */
	CU_ASSERT_EQUAL(parse(text), 0);
	CU_ASSERT_EQUAL(cfg.tiers[0].origin, CONFIG_ORIGIN(0, CONFIG_LINE_MAX - 2));
	memset(text, '\n', n + 1);
	strcpy(text + n + 1, GOOD_TIER);
	check_error(text, CONFIG_LINE_MAX, "the file has more than 1048575 lines");
	free(text);
}

/* The daemon drops the parser's pages before it locks itself (coldtext.h):
 * there is something to drop, and a reload's parse runs again after the
 * drop (its pages come back from the page cache). */
static void test_cold_text_dropped(void)
{
	long dropped = coldtext_drop();

	CU_ASSERT_TRUE(dropped > 0);
	CU_ASSERT_EQUAL(dropped % sysconf(_SC_PAGESIZE), 0);
	CU_ASSERT_EQUAL(parse(GOOD_TIER), 0);
	CU_ASSERT_EQUAL(cfg.n_tiers, 1);
	CU_ASSERT_TRUE(coldtext_drop() > 0); /* a second drop (after a reload ran the parser) */
	CU_ASSERT_EQUAL(parse(GOOD_TIER), 0);
}

int main(void)
{
	static CU_TestInfo tests[] = {
		{ "culprit_growth", test_culprit_growth },
		{ "a full file", test_defaults_and_full_file },
		{ "defaults", test_defaults },
		{ "trigger forms", test_trigger_forms },
		{ "durations", test_durations },
		{ "errors carry file:line", test_errors },
		{ "policy, kill and gate keys", test_policy_keys },
		{ "over-long line", test_long_line },
		{ "over-long line, then a drop-in's line of the same number", test_long_line_dropin },
		{ "CRLF and BOM", test_crlf_and_bom },
		{ "text after a section header, a stray CR, a key too long", test_header_and_line_ends },
		{ "no setting accepted that does nothing", test_no_dead_settings },
		{ "drop-ins: keys that need a partner find it in another file", test_dropin_partners },
		{ "failed parse leaves config alone", test_failed_parse_keeps_old_config },
		{ "files", test_files },
		{ "shipped conf/psi-lmkd.conf", test_shipped_config },
		{ "shipped conf/psi-lmkd-android.conf", test_shipped_android_config },
		{ "victim_order", test_victim_order_key },
		{ "format duration", test_format_duration },
		{ "regex too complex to compile", test_regex_complexity },
		{ "on_kill: who owns the program and its directories", test_hook_ownership },
		{ "on_kill_user: resolved, never root, never unknown", test_hook_user },
		{ "shield keys: protect_cgroup, avoid_cgroup, trusted_uid_max", test_shield_keys },
		{ "systemd_oom_preferences", test_systemd_oom_preferences },
		{ "low_swap", test_low_swap },
		{ "hold_idle and hold_recovery", test_holds },
		{ "drop-ins: a [daemon] key overridden", test_dropin_daemon_override },
		{ "drop-ins: a tier extended, a tier added", test_dropin_tiers },
		{ "drop-ins: read in the order of their names", test_dropin_order },
		{ "drop-ins: errors at the file and line at fault, duplicates in one file", test_dropin_errors },
		{ "drop-ins: the vendor directory, masked by name", test_dropin_vendor },
		{ "drop-ins: only *.conf, not hidden", test_dropin_names },
		{ "drop-ins: not a file, not a directory, too many, none", test_dropin_refused },
		{ "drop-ins: where each value comes from, printed", test_dropin_print },
		{ "a path too long for the config and its .d", test_path_too_long },
		{ "a file of more than 2^20 - 1 lines", test_line_max },
		{ "the parser runs again after its pages were dropped", test_cold_text_dropped },
		CU_TEST_INFO_NULL,
	};
	static CU_SuiteInfo suites[] = {
		{ "config", NULL, NULL, NULL, NULL, tests },
		CU_SUITE_INFO_NULL,
	};

	return cunit_tap_main(suites);
}
