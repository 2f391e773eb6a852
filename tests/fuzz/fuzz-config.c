/* SPDX-License-Identifier: MIT */
/* fuzz-config: whole configuration files through config_parse_string(), and
 * config_print() of every accepted one. Checks what config.h promises: an
 * error is "filename:line: reason" and leaves the config alone; an accepted
 * file has 1..16 distinct tiers whose triggers and bands are within their
 * limits. */
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "fuzz.h"

#define FUZZ_CONFIG_MAX (64 * 1024) /* far above any real file; keeps execs fast */

static void check_config(const struct config *c)
{
	size_t i, j;

	FUZZ_CHECK(c->n_tiers >= 1 && c->n_tiers <= CONFIG_TIERS_MAX);
	FUZZ_CHECK(strcmp(c->path, "fuzz.conf") == 0);
	FUZZ_CHECK(c->pressure[0] == '/' && memchr(c->pressure, '\0', sizeof(c->pressure)));
	FUZZ_CHECK(c->scope[0] == '/' && memchr(c->scope, '\0', sizeof(c->scope)));
	FUZZ_CHECK(c->kill_timeout_us >= CONFIG_KILL_TIMEOUT_MIN_US && c->kill_timeout_us <= CONFIG_KILL_TIMEOUT_MAX_US);
	FUZZ_CHECK(c->idle_poll_us == 0 ||
		   (c->idle_poll_us >= CONFIG_IDLE_POLL_MIN_US && c->idle_poll_us <= CONFIG_IDLE_POLL_MAX_US));
	for (i = 0; i < c->n_tiers; i++) {
		const struct tier_config *t = &c->tiers[i];
		size_t len = strnlen(t->name, sizeof(t->name));

		FUZZ_CHECK(len >= 1 && len <= CONFIG_NAME_MAX);
		FUZZ_CHECK(t->state == PSI_SOME || t->state == PSI_FULL);
		if (t->window_us != 0 || t->stall_us != 0) { /* a tier with a trigger */
			FUZZ_CHECK(t->window_us >= PSI_WINDOW_MIN_US && t->window_us <= PSI_WINDOW_MAX_US);
			FUZZ_CHECK(t->stall_us > 0 && t->stall_us <= t->window_us);
		}
		FUZZ_CHECK(t->min_oom_score_adj >= -1000 && t->min_oom_score_adj <= 1000);
		FUZZ_CHECK(CONFIG_ORIGIN_FILE(t->origin) == 0 && CONFIG_ORIGIN_LINE(t->origin) >= 1);
		for (j = 0; j < i; j++)
			FUZZ_CHECK(strcmp(c->tiers[j].name, t->name) != 0);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct config c, before;
	struct config_error err;
	char *text;

	if (size > FUZZ_CONFIG_MAX)
		return 0;
	text = fuzz_text(data, size);
	config_init(&c);
	c.dry_run = true; /* a marker: a failed parse must leave c as it was */
	memcpy(&before, &c, sizeof(c)); /* bytes, padding included, for memcmp */
	if (config_parse_string(&c, text, "fuzz.conf", &err) == 0) {
		check_config(&c);
		config_print(&c, fuzz_devnull());
	} else {
		FUZZ_CHECK(strncmp(err.msg, "fuzz.conf:", 10) == 0);
		FUZZ_CHECK(memchr(err.msg, '\0', sizeof(err.msg)) != NULL);
		/* byte copies of each other (memcpy above), so padding compares equal too:
		 * NOLINTNEXTLINE(bugprone-suspicious-memory-comparison) */
		FUZZ_CHECK(memcmp(&c, &before, sizeof(c)) == 0);
	}
	free(text);
	return 0;
}
