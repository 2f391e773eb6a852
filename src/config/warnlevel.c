/* SPDX-License-Identifier: MIT */
/* warnlevel: warn_level's words and values (pure; warnlevel.h). */
#include <errno.h>
#include <string.h>

#include "warnlevel.h"

int warn_parse_level(const char *s, unsigned *level)
{
	if (strcmp(s, "low") == 0 || strcmp(s, "50") == 0)
		*level = WARN_LEVEL_LOW;
	else if (strcmp(s, "medium") == 0 || strcmp(s, "100") == 0)
		*level = WARN_LEVEL_MEDIUM;
	else if (strcmp(s, "critical") == 0 || strcmp(s, "255") == 0)
		*level = WARN_LEVEL_CRITICAL;
	else
		return -EINVAL;
	return 0;
}

const char *warn_level_name(unsigned level)
{
	return level == WARN_LEVEL_CRITICAL ? "critical" : level == WARN_LEVEL_MEDIUM ? "medium" : "low";
}
