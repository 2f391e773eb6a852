/* SPDX-License-Identifier: MIT */
/* warnlevel: the levels of a LowMemoryWarning (warn_level = low, medium,
 * critical), their names and values (pure). Below the config, which reads
 * them, and the system bus (warn.h), which sends them. */
#pragma once

enum warn_level {
	WARN_LEVEL_LOW = 50,
	WARN_LEVEL_MEDIUM = 100,
	WARN_LEVEL_CRITICAL = 255,
};

/* "low", "medium", "critical" (or 50, 100, 255). 0 or -EINVAL. */
int warn_parse_level(const char *s, unsigned *level);
const char *warn_level_name(unsigned level);
