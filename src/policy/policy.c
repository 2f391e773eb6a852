/* SPDX-License-Identifier: MIT */
/* policy: compiles the config's regexes (validated by the config parser
 * already) and exposes them as a victim_policy. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "policy.h"

int policy_init(struct policy *p, const struct config *c, char *err, size_t errlen)
{
	const char *src[POLICY_N] = { c->protect,	  c->prefer,	    c->avoid,	    c->protect_cmdline,
				      c->prefer_cmdline, c->avoid_cmdline, c->protect_cgroup, c->avoid_cgroup };
	const regex_t **dst[POLICY_N] = { &p->vp.protect,	  &p->vp.prefer,	  &p->vp.avoid,
					  &p->vp.protect_cmdline, &p->vp.prefer_cmdline, &p->vp.avoid_cmdline,
					  &p->vp.protect_cgroup,  &p->vp.avoid_cgroup };
	int i, r;

	memset(p, 0, sizeof(*p));
	p->vp.min_rss_kb = c->min_rss_kb;
	for (i = 0; i < POLICY_N; i++) {
		if (!*src[i])
			continue;
		r = regcomp(&p->re[i], src[i], REG_EXTENDED | REG_NOSUB);
		if (r != 0) {
			snprintf(err, errlen, "%s regular expression \"%s\"",
				 r == REG_ESPACE ? "out of memory compiling the" : "cannot compile", src[i]);
			policy_deinit(p);
			return r == REG_ESPACE ? -ENOMEM : -EINVAL;
		}
		p->compiled[i] = true;
		*dst[i] = &p->re[i];
	}
	return 0;
}

void policy_deinit(struct policy *p)
{
	int i;

	for (i = 0; i < POLICY_N; i++)
		if (p->compiled[i])
			regfree(&p->re[i]);
	memset(p, 0, sizeof(*p));
}
