/* config: the daemon's settings, their defaults, and the ini parser that fills
 * them (inih underneath, typed value parsers on top). Pure: it never logs; every
 * error comes back as "file:line: reason" in a struct config_error. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "psi.h"

#define CONFIG_TIERS_MAX 16
#define CONFIG_NAME_MAX 32
#define CONFIG_PATH_MAX 1024
#define CONFIG_FILE_MAX (1024 * 1024)

#define CONFIG_DEFAULT_PRESSURE "/proc/pressure/memory"
#define CONFIG_DEFAULT_SCOPE "/"
#define CONFIG_DEFAULT_KILL_TIMEOUT_US 500000ULL
#define CONFIG_KILL_TIMEOUT_MIN_US 10000ULL
#define CONFIG_KILL_TIMEOUT_MAX_US 60000000ULL
#define CONFIG_DEFAULT_IDLE_POLL_US 2000000ULL
#define CONFIG_IDLE_POLL_MIN_US 100000ULL
#define CONFIG_IDLE_POLL_MAX_US 60000000ULL

struct tier_config {
	char name[CONFIG_NAME_MAX + 1];
	enum psi_state state;
	uint64_t stall_us;
	uint64_t window_us;
	int min_oom_score_adj;
	unsigned line; /* line of the [tier NAME] header, for messages */
};

struct config {
	char path[CONFIG_PATH_MAX];     /* the file it came from, for messages */
	char pressure[CONFIG_PATH_MAX]; /* absolute path of the pressure file */
	char scope[CONFIG_PATH_MAX];    /* cgroup2 path, "/" = every process */
	uint64_t kill_timeout_us;
	uint64_t idle_poll_us; /* safety sample while idle; 0 = off */
	bool dry_run;
	size_t n_tiers;
	struct tier_config tiers[CONFIG_TIERS_MAX];
};

struct config_error {
	char msg[512];
};

/* Fills c with the defaults (no tiers). */
void config_init(struct config *c);

/* Parses ini text; filename is used in messages only. Returns 0, or -EINVAL
 * (or -ENOMEM) with err->msg set to "filename:line: reason". */
int config_parse_string(struct config *c, const char *text, const char *filename, struct config_error *err);

/* Reads and parses a config file. Returns 0 or a negative errno with err set. */
int config_load_file(struct config *c, const char *path, struct config_error *err);

/* Prints the effective settings and tiers, one line each. */
void config_print(const struct config *c, FILE *f);

/* Formats a duration in microseconds as a short string ("70ms", "1s", "1500us"). */
const char *config_format_duration(char *buf, size_t size, uint64_t us);

/* Typed value parsers, exposed for the tests. Each returns 0 or -EINVAL/-ERANGE
 * and writes a reason into why. */
int config_parse_duration(const char *s, bool bare_is_us, uint64_t *out, char *why, size_t whylen);
int config_parse_trigger(const char *s, struct tier_config *t, char *why, size_t whylen);
