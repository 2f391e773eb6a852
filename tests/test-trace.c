/* SPDX-License-Identifier: MIT */
/* test-trace: the trace line parser and replay of traces through the
 * userspace monitor (what `psi-lmkd --replay` prints). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "cunit-tap.h"
#include "fileio.h"
#include "trace.h"

static void test_parse(void)
{
	struct trace_sample s;

	CU_ASSERT_EQUAL(trace_parse_line("100000 5 3\n", &s), 1);
	CU_ASSERT_EQUAL(s.t_us, 100000);
	CU_ASSERT_EQUAL(s.some_us, 5);
	CU_ASSERT_EQUAL(s.full_us, 3);
	CU_ASSERT_EQUAL(trace_parse_line("  1\t2  3 \r\n", &s), 1);
	CU_ASSERT_EQUAL(trace_parse_line("# comment\n", &s), 0);
	CU_ASSERT_EQUAL(trace_parse_line("\n", &s), 0);
	CU_ASSERT_EQUAL(trace_parse_line("", &s), 0);
	CU_ASSERT_EQUAL(trace_parse_line("1 2\n", &s), -EINVAL);
	CU_ASSERT_EQUAL(trace_parse_line("1 2 3 4\n", &s), -EINVAL);
	CU_ASSERT_EQUAL(trace_parse_line("-1 2 3\n", &s), -EINVAL);
	CU_ASSERT_EQUAL(trace_parse_line("1 2 x\n", &s), -EINVAL);
	CU_ASSERT_EQUAL(trace_parse_line("99999999999999999999 2 3\n", &s), -EINVAL);
}

static int replay_text(const char *conf, const char *trace, struct trace_replay_stats *st, unsigned long *bad,
		       char *out, size_t outlen)
{
	struct config c;
	struct config_error err;
	FILE *in, *o;
	int r;

	CU_ASSERT_EQUAL_FATAL(config_parse_string(&c, conf, "replay.conf", &err), 0);
	in = fmemopen((void *)trace, strlen(trace), "r");
	o = fmemopen(out, outlen, "w");
	CU_ASSERT_FATAL(in && o);
	r = trace_replay(&c, in, o, st, bad);
	fclose(in);
	fclose(o);
	return r;
}

static void test_replay_inline(void)
{
	struct trace_replay_stats st;
	unsigned long bad;
	char out[1024];

	/* 150 ms of 'some' stall within 500 ms of a 1 s window: fires once at 0.5 s */
	CU_ASSERT_EQUAL(replay_text("[tier t]\ntrigger = some 150ms 1s\nmin_oom_score_adj = 0\n",
				    "0 0 0\n100000 0 0\n300000 50000 0\n500000 150000 0\n600000 160000 0\n", &st, &bad,
				    out, sizeof(out)),
			0);
	CU_ASSERT_EQUAL(st.samples, 5);
	CU_ASSERT_EQUAL(st.events[0], 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "0.500 tier=t growth_us=150000 threshold_us=150000"));

	CU_ASSERT_EQUAL(replay_text("[tier t]\ntrigger = some 150ms 1s\nmin_oom_score_adj = 0\n",
				    "0 0 0\n100000 0 0\nbogus\n", &st, &bad, out, sizeof(out)),
			-EINVAL);
	CU_ASSERT_EQUAL(bad, 3);
	CU_ASSERT_EQUAL(replay_text("[tier t]\ntrigger = some 150ms 1s\nmin_oom_score_adj = 0\n",
				    "# x\n200000 0 0\n100000 0 0\n", &st, &bad, out, sizeof(out)),
			-EINVAL);
	CU_ASSERT_EQUAL(bad, 3);
}

/* A tier without a trigger (only low_available, like the shipped
 * last-resort) has no PSI threshold to replay: it is skipped, the output
 * says so, and it reports no events -- it used to report one on every
 * sample that grew. Repeated timestamps (review repro dup.trace) used to
 * divide by zero in its monitor (SIGFPE); the triggered tier still
 * counts the growth at the repeated time. */
static void test_replay_trigger_less_tier(void)
{
	static const char conf[] = "[tier medium]\ntrigger = some 100ms 1s\nmin_oom_score_adj = 800\n"
				   "[tier last]\nlow_available = 2%\nmin_oom_score_adj = 0\n";
	struct trace_replay_stats st;
	unsigned long bad;
	char out[1024];

	CU_ASSERT_EQUAL(replay_text(conf, "0 100 0\n0 200 0\n", &st, &bad, out, sizeof(out)), 0);
	CU_ASSERT_EQUAL(st.samples, 2);
	CU_ASSERT_EQUAL(st.events[0], 0);
	CU_ASSERT_EQUAL(st.events[1], 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "# tier last: no trigger, not replayed"));
	CU_ASSERT_PTR_NULL(strstr(out, "tier=last"));

	/* the review's dup.trace, then more growth at the repeated time: the
	 * triggered tier fires on it (20 ms + 80 ms at 0.1 s, elapsed 0) */
	CU_ASSERT_EQUAL(replay_text(conf, "0 100 0\n100000 20100 0\n100000 100100 0\n100000 200100 0\n", &st,
				    &bad, out, sizeof(out)),
			0);
	CU_ASSERT_EQUAL(st.samples, 4);
	CU_ASSERT_EQUAL(st.events[0], 1);
	CU_ASSERT_EQUAL(st.events[1], 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "0.100 tier=medium growth_us=100000 threshold_us=100000"));
	CU_ASSERT_PTR_NULL(strstr(out, "tier=last"));
}

/* --record into a pipe nobody reads (`psi-lmkd --record - | head`): with
 * SIGPIPE survived (as the daemon's main does), the write fails with EPIPE
 * and recording must stop with that error, not sample on into the void
 * until --duration (or for ever without one). */
static void test_record_broken_pipe(void)
{
	char dir[] = "/tmp/test-trace.XXXXXX", path[64];
	struct sigaction sa, old;
	FILE *f, *out;
	int p[2], rootfd, r;

	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/memory", dir);
	f = fopen(path, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs("some avg10=0.00 avg60=0.00 avg300=0.00 total=1000\n"
	      "full avg10=0.00 avg60=0.00 avg300=0.00 total=500\n",
	      f);
	fclose(f);
	rootfd = sysroot_open(dir);
	CU_ASSERT_FATAL(rootfd >= 0);
	CU_ASSERT_EQUAL_FATAL(pipe(p), 0);
	close(p[0]);
	out = fdopen(p[1], "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(out);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, &old);
	/* 10 ms samples for at most 1 s: the first write already fails */
	r = trace_record(rootfd, "memory", 10000, 1000000, out);
	sigaction(SIGPIPE, &old, NULL);
	CU_ASSERT_EQUAL(r, -EPIPE);
	fclose(out);
	close(rootfd);
	unlink(path);
	rmdir(dir);
}

static void replay_fixture(const char *conf, const char *name, struct trace_replay_stats *st)
{
	const char *fx = getenv("FIXTURES");
	struct config c;
	struct config_error err;
	char path[1024];
	unsigned long bad;
	FILE *in, *o;

	CU_ASSERT_EQUAL_FATAL(config_parse_string(&c, conf, "replay.conf", &err), 0);
	snprintf(path, sizeof(path), "%s/traces/%s", fx ? fx : "tests/fixtures", name);
	in = fopen(path, "r");
	o = fopen("/dev/null", "w");
	CU_ASSERT_FATAL(in && o);
	CU_ASSERT_EQUAL(trace_replay(&c, in, o, st, &bad), 0);
	fclose(in);
	fclose(o);
}

static void test_replay_steady(void)
{
	struct trace_replay_stats st;

	/* 10 s of 15% some / 5% full stall, sampled every 100 ms */
	replay_fixture("[tier low]\ntrigger = some 100ms 1s\nmin_oom_score_adj = 0\n"
		       "[tier high]\ntrigger = some 200ms 1s\nmin_oom_score_adj = 0\n"
		       "[tier full]\ntrigger = full 40ms 1s\nmin_oom_score_adj = 0\n"
		       "[tier full2s]\ntrigger = full 120ms 2s\nmin_oom_score_adj = 0\n",
		       "steady-15pct.trace", &st);
	CU_ASSERT_EQUAL(st.samples, 151);
	/* about once per window while it lasts, never faster */
	CU_ASSERT_TRUE(st.events[0] >= 9 && st.events[0] <= 10);
	CU_ASSERT_EQUAL(st.events[1], 0);
	CU_ASSERT_TRUE(st.events[2] >= 9 && st.events[2] <= 10);
	CU_ASSERT_EQUAL(st.events[3], 0);
}

int main(void)
{
	static CU_TestInfo tests[] = {
		{ "line parser", test_parse },
		{ "replay inline traces", test_replay_inline },
		{ "replay a steady-stall trace", test_replay_steady },
		{ "replay skips a tier without trigger", test_replay_trigger_less_tier },
		{ "record stops on a broken pipe", test_record_broken_pipe },
		CU_TEST_INFO_NULL,
	};
	static CU_SuiteInfo suites[] = {
		{ "trace", NULL, NULL, NULL, NULL, tests },
		CU_SUITE_INFO_NULL,
	};

	return cunit_tap_main(suites);
}
