/* SPDX-License-Identifier: MIT */
/* fuzz-trigger: the typed value parsers of the config: trigger strings through
 * config_parse_trigger(), durations through config_parse_duration() (bare
 * numbers allowed or not), memory amounts through config_parse_amount() (and
 * back through config_format_amount(): the printed form parses to the same
 * amount), with reason buffers both roomy and tiny. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "fuzz.h"

#define FUZZ_TRIGGER_MAX 1024 /* a config line is at most 198 characters */

static void check_why(const char *why, size_t size, int r)
{
	FUZZ_CHECK(memchr(why, '\0', size) != NULL);
	if (r < 0 && size > 1)
		FUZZ_CHECK(why[0] != '\0');
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tier_config t;
	char why[256], tiny[4];
	uint64_t us;
	char *text;
	int r;

	if (size > FUZZ_TRIGGER_MAX)
		return 0;
	text = fuzz_text(data, size);

	memset(&t, 0, sizeof(t));
	why[0] = '\0';
	r = config_parse_trigger(text, &t, why, sizeof(why));
	FUZZ_CHECK(r == 0 || r == -EINVAL);
	check_why(why, sizeof(why), r);
	if (r == 0) {
		FUZZ_CHECK(t.state == PSI_SOME || t.state == PSI_FULL);
		FUZZ_CHECK(t.window_us >= PSI_WINDOW_MIN_US && t.window_us <= PSI_WINDOW_MAX_US);
		FUZZ_CHECK(t.stall_us > 0 && t.stall_us <= t.window_us);
	}
	tiny[0] = '\0';
	FUZZ_CHECK(config_parse_trigger(text, &t, tiny, sizeof(tiny)) == r);
	check_why(tiny, sizeof(tiny), r);

	for (int bare = 0; bare <= 1; bare++) {
		why[0] = '\0';
		r = config_parse_duration(text, bare, &us, why, sizeof(why));
		FUZZ_CHECK(r == 0 || r == -EINVAL || r == -ERANGE);
		check_why(why, sizeof(why), r);
		if (r == 0)
			FUZZ_CHECK(us <= 3600ULL * 1000000ULL);
	}

	for (int pct = 0; pct <= 1; pct++) {
		struct mem_amount a, back;
		char shown[64];

		why[0] = '\0';
		r = config_parse_amount(text, pct, &a, why, sizeof(why));
		FUZZ_CHECK(r == 0 || r == -EINVAL || r == -ERANGE);
		check_why(why, sizeof(why), r);
		if (r < 0)
			continue;
		FUZZ_CHECK(a.set && (pct || !a.percent));
		if (a.percent)
			FUZZ_CHECK(a.value >= 1 && a.value <= 10000);
		config_format_amount(shown, sizeof(shown), &a);
		FUZZ_CHECK(config_parse_amount(shown, pct, &back, why, sizeof(why)) == 0);
		FUZZ_CHECK(back.percent == a.percent && back.value == a.value);
	}
	free(text);
	return 0;
}
