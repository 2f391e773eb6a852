/* SPDX-License-Identifier: MIT */
/* fuzz-trace: the replay-trace reader. Each line goes through
 * trace_parse_line(); the whole input through trace_replay() (read with
 * fmemopen, as a file would be) with a fixed config: three triggered tiers
 * and one with only low_available (never replayed, never an event). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "fuzz.h"
#include "trace.h"

#define FUZZ_TRACE_MAX (256 * 1024)

static const char fuzz_trace_conf[] = "[tier medium]\n"
				      "trigger = some 70ms 1s\n"
				      "min_oom_score_adj = 800\n"
				      "[tier critical]\n"
				      "trigger = full 700ms 1s\n"
				      "min_oom_score_adj = 0\n"
				      "[tier slow]\n"
				      "trigger = some 5% 10s\n"
				      "min_oom_score_adj = 500\n"
				      "[tier last-resort]\n"
				      "low_available = 2%\n"
				      "min_oom_score_adj = 0\n";

static const struct config *trace_config(void)
{
	static struct config c;
	static int ready;
	struct config_error err;

	if (!ready) {
		if (config_parse_string(&c, fuzz_trace_conf, "fuzz-trace.conf", &err) < 0) {
			fprintf(stderr, "%s\n", err.msg);
			abort();
		}
		ready = 1;
	}
	return &c;
}

static void parse_lines(const char *text)
{
	const char *s = text;

	while (*s) {
		size_t n = strcspn(s, "\n");
		size_t len = n + (s[n] == '\n');
		char *line = malloc(len + 1);
		struct trace_sample smp;
		int r;

		if (!line)
			abort();
		memcpy(line, s, len);
		line[len] = '\0';
		r = trace_parse_line(line, &smp);
		FUZZ_CHECK(r == 0 || r == 1 || r == -EINVAL);
		free(line);
		s += len;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct config *c = trace_config();
	struct trace_replay_stats st;
	unsigned long bad = 0, ev;
	char *text;
	FILE *in;
	size_t i;
	int r;

	if (size > FUZZ_TRACE_MAX)
		return 0;
	text = fuzz_text(data, size);
	parse_lines(text);
	free(text);

	if (size == 0)
		return 0;
	/* the raw bytes, NULs and all, as trace_replay() would read a file */
	in = fmemopen((void *)data, size, "r");
	if (!in)
		abort();
	r = trace_replay(c, in, fuzz_devnull(), &st, &bad);
	fclose(in);
	FUZZ_CHECK(r == 0 || r == -EINVAL);
	FUZZ_CHECK(r == 0 ? bad == 0 : (bad >= 1 && bad == st.lines));
	FUZZ_CHECK(st.samples <= st.lines);
	for (i = 0; i < c->n_tiers; i++) {
		ev = st.events[i];
		FUZZ_CHECK(ev <= st.samples);
		FUZZ_CHECK(st.skipped[i] == !c->tiers[i].has_trigger);
		FUZZ_CHECK(!st.skipped[i] || ev == 0);
	}
	return 0;
}
