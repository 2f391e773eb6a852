/* SPDX-License-Identifier: MIT */
/* policy: the user's victim rules (protect, prefer, avoid, their _cmdline
 * variants, protect_cgroup, avoid_cgroup, min_rss) compiled from the config
 * into a struct victim_policy. */
#pragma once

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>

#include "config.h"
#include "victim.h"

enum {
	POLICY_PROTECT,
	POLICY_PREFER,
	POLICY_AVOID,
	POLICY_PROTECT_CMD,
	POLICY_PREFER_CMD,
	POLICY_AVOID_CMD,
	POLICY_PROTECT_CG,
	POLICY_AVOID_CG,
	POLICY_N
};

struct policy {
	regex_t re[POLICY_N];
	bool compiled[POLICY_N];
	struct victim_policy vp; /* points into re[]: never copy a struct policy */
};

/* Compiles the rules of c. Returns 0, or -ENOMEM (out of memory) or -EINVAL
 * with err set. */
int policy_init(struct policy *p, const struct config *c, char *err, size_t errlen);
void policy_deinit(struct policy *p);
