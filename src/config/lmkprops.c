/* SPDX-License-Identifier: MIT */
/* lmkprops: which of Android lmkd's properties mean something to psi-lmkd,
 * and what: the table, the lookup in lmkd's order (the experiment's
 * persist.device_config.lmkd_native.NAME before the device's ro.lmk.NAME),
 * the value checks and the changes to a struct config; and the parser of
 * the key=value files that stand in for the property area. Pure: no I/O. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "coldtext.h"
#include "config-private.h"
#include "lmkprops.h"

enum prop_kind {
	PK_IGNORED,      /* read and reported, no psi-lmkd meaning */
	PK_USE_PSI,      /* must be true: psi-lmkd has no vmpressure */
	PK_STALL,        /* the stall of a tier's trigger, ms */
	PK_ADJ,          /* a tier's min_oom_score_adj */
	PK_KILL_TIMEOUT, /* [daemon] kill_timeout, ms; 0 = as long as psi-lmkd waits */
	PK_SWAP_LOW,     /* low_swap of the low_available tiers, % of the swap */
	PK_DEBUG,        /* the daemon logs at debug level */
	PK_LOW_RAM,      /* ro.config.low_ram: lmkd's low-RAM default stall */
};

struct lmk_prop {
	const char *name; /* after ro.lmk. / the persist prefix, or a whole name */
	enum prop_kind kind;
	const char *tier; /* PK_STALL, PK_ADJ */
	bool whole;       /* name is a whole property name (ro.config.*) */
};

/* ro.config.low_ram comes first: psi_partial_stall_ms overrides its default */
static const struct lmk_prop lmk_props[] = {
	{ LMKPROPS_LOW_RAM, PK_LOW_RAM, LMKPROPS_TIER_MEDIUM, true },
	{ "use_psi", PK_USE_PSI, NULL, false },
	{ "psi_partial_stall_ms", PK_STALL, LMKPROPS_TIER_MEDIUM, false },
	{ "psi_complete_stall_ms", PK_STALL, LMKPROPS_TIER_CRITICAL, false },
	{ "medium", PK_ADJ, LMKPROPS_TIER_MEDIUM, false },
	{ "critical", PK_ADJ, LMKPROPS_TIER_CRITICAL, false },
	{ "kill_timeout_ms", PK_KILL_TIMEOUT, NULL, false },
	{ "swap_free_low_percentage", PK_SWAP_LOW, NULL, false },
	{ "debug", PK_DEBUG, NULL, false },
	/* no psi-lmkd meaning (README, Android; psi-lmkd(8)) */
	{ "low", PK_IGNORED, NULL, false },
	{ "critical_upgrade", PK_IGNORED, NULL, false },
	{ "upgrade_pressure", PK_IGNORED, NULL, false },
	{ "downgrade_pressure", PK_IGNORED, NULL, false },
	{ "kill_heaviest_task", PK_IGNORED, NULL, false },
	{ "pressure_after_kill_min_score", PK_IGNORED, NULL, false },
	{ "use_minfree_levels", PK_IGNORED, NULL, false },
	{ "use_new_strategy", PK_IGNORED, NULL, false },
	{ "thrashing_limit", PK_IGNORED, NULL, false },
	{ "thrashing_limit_decay", PK_IGNORED, NULL, false },
	{ "thrashing_limit_critical", PK_IGNORED, NULL, false },
	{ "swap_util_max", PK_IGNORED, NULL, false },
	{ "filecache_min_kb", PK_IGNORED, NULL, false },
	{ "stall_limit_critical", PK_IGNORED, NULL, false },
	{ "delay_monitors_until_boot", PK_IGNORED, NULL, false },
	{ "direct_reclaim_threshold_ms", PK_IGNORED, NULL, false },
	{ "swap_compression_ratio", PK_IGNORED, NULL, false },
	{ "lowmem_min_oom_score", PK_IGNORED, NULL, false },
	{ "log_stats", PK_IGNORED, NULL, false },
	{ "ro.config.per_app_memcg", PK_IGNORED, NULL, true },
};
#define N_PROPS (sizeof(lmk_props) / sizeof(lmk_props[0]))
_Static_assert(N_PROPS <= CONFIG_PROPS_MAX, "every property found fits in struct config");

struct applier {
	struct config *c;
	lmkprops_get_fn get;
	void *ctx;
	const char *source;
	struct config_error *err;
};

COLD_TEXT __attribute__((format(printf, 3, 4))) static int fail(struct applier *a, const struct config_prop *p,
						       const char *fmt, ...)
{
	const struct lmkprops_file *f = a->get == lmkprops_file_get ? a->ctx : NULL;
	unsigned line = 0;
	va_list ap;
	int n;

	for (size_t i = 0; f && i < f->n && !line; i++) /* a file's line, as its own errors give it */
		if (strcmp(f->e[i].name, p->name) == 0)
			line = f->e[i].line;
	if (line)
		n = snprintf(a->err->msg, sizeof(a->err->msg), "%s:%u: %s=%s: ", a->source, line, p->name, p->value);
	else
		n = snprintf(a->err->msg, sizeof(a->err->msg), "%s: %s=%s: ", a->source, p->name, p->value);

	if (n > 0 && (size_t)n < sizeof(a->err->msg)) {
		va_start(ap, fmt);
		vsnprintf(a->err->msg + n, sizeof(a->err->msg) - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* The value of lp as lmkd reads it: the persist name first, then ro.lmk.;
 * recorded in c->props. *out = NULL when neither is set. */
static int lookup(struct applier *a, const struct lmk_prop *lp, struct config_prop **out)
{
	static const char *const prefixes[] = { LMKPROPS_PERSIST, LMKPROPS_RO };
	char name[CONFIG_PROP_NAME_MAX], value[CONFIG_PROP_VALUE_MAX];
	size_t i;
	int r;

	*out = NULL;
	for (i = 0; i < (lp->whole ? 1 : 2); i++) {
		snprintf(name, sizeof(name), "%s%s", lp->whole ? "" : prefixes[i], lp->name);
		value[0] = '\0';
		r = a->get(a->ctx, name, value, sizeof(value));
		if (r < 0) {
			snprintf(a->err->msg, sizeof(a->err->msg), "%s: cannot read %s: %s", a->source, name, strerror(-r));
			return r;
		}
		if (value[0]) {
			struct config_prop *p = &a->c->props[a->c->n_props++];

			snprintf(p->name, sizeof(p->name), "%s", name);
			snprintf(p->value, sizeof(p->value), "%s", value);
			p->used = false;
			*out = p;
			return 0;
		}
	}
	return 0;
}

/* An integer as lmkd reads one (strtol: a '+' may lead), in lo..hi. */
static int prop_int(const char *s, long lo, long hi, long *out)
{
	return config_parse_int_range(s[0] == '+' && s[1] != '-' ? s + 1 : s, lo, hi, out);
}

/* libcutils' words for a boolean property, and psi-lmkd's */
COLD_TEXT static int parse_bool(const char *s, bool *out)
{
	if (strcasecmp(s, "y") == 0 || strcasecmp(s, "n") == 0) {
		*out = tolower((unsigned char)s[0]) == 'y';
		return 0;
	}
	return config_parse_bool(s, out);
}

/* The origin (CONFIG_ORIGIN) of a key p set. */
static unsigned prop_origin(const struct config *c, const struct config_prop *p)
{
	return CONFIG_ORIGIN(CONFIG_PROPS_ORIGIN_FILE, (unsigned)(p - c->props) + 1);
}

static struct tier_config *tier_named(struct applier *a, const struct config_prop *p, const char *name, size_t *idx)
{
	size_t i;

	for (i = 0; i < a->c->n_tiers; i++)
		if (strcmp(a->c->tiers[i].name, name) == 0) {
			*idx = i;
			return &a->c->tiers[i];
		}
	fail(a, p, "it sets [tier %s] (lmkd's %s level, as in the Android profile), which the configuration does not have",
	     name, name);
	return NULL;
}

COLD_TEXT static int set_stall(struct applier *a, struct config_prop *p, const char *tier, long ms)
{
	struct tier_config *t;
	size_t i;

	if (!(t = tier_named(a, p, tier, &i)))
		return -EINVAL;
	if (!t->has_trigger)
		return fail(a, p, "[tier %s] has no trigger whose stall it could set", tier);
	if ((uint64_t)ms * 1000 > t->window_us)
		return fail(a, p, "the stall exceeds [tier %s]'s window of %" PRIu64 "ms", tier, t->window_us / 1000);
	t->stall_us = (uint64_t)ms * 1000;
	a->c->origin[1 + i][TIER_KEY_TRIGGER] = prop_origin(a->c, p);
	p->used = true;
	return 0;
}

static int apply_one(struct applier *a, const struct lmk_prop *lp, struct config_prop *p)
{
	struct config *c = a->c;
	struct tier_config *t;
	bool b = false, any = false;
	long v;
	size_t i;

	switch (lp->kind) {
	case PK_IGNORED:
		return 0;
	case PK_LOW_RAM:
		if (parse_bool(p->value, &b) < 0)
			return fail(a, p, "not a boolean (true/false, 1/0, y/n, yes/no, on/off)");
		if (!b) {
			p->used = true;
			return 0;
		}
		/* lmkd's low-RAM default, unless the property itself is set */
		for (i = 0; i < 2; i++) {
			char name[CONFIG_PROP_NAME_MAX], value[CONFIG_PROP_VALUE_MAX] = "";
			int r;

			snprintf(name, sizeof(name), "%spsi_partial_stall_ms", i ? LMKPROPS_RO : LMKPROPS_PERSIST);
			r = a->get(a->ctx, name, value, sizeof(value));
			if (r < 0)
				return fail(a, p, "cannot read %s: %s", name, strerror(-r));
			if (value[0]) {
				p->used = true; /* overridden by the property itself */
				return 0;
			}
		}
		return set_stall(a, p, lp->tier, LMKPROPS_LOW_RAM_STALL_MS);
	case PK_USE_PSI:
		if (parse_bool(p->value, &b) < 0)
			return fail(a, p, "not a boolean (true/false, 1/0, y/n, yes/no, on/off)");
		if (!b)
			return fail(a, p, "psi-lmkd has PSI monitors only, not lmkd's vmpressure ones");
		p->used = true;
		return 0;
	case PK_STALL:
		if (prop_int(p->value, 1, 10000, &v) < 0)
			return fail(a, p, "not a stall of 1..10000 ms (the stall of [tier %s]'s trigger)", lp->tier);
		return set_stall(a, p, lp->tier, v);
	case PK_ADJ:
		if (prop_int(p->value, -1000, 1000, &v) < 0)
			return fail(a, p, "not an oom_score_adj of -1000..1000 ([tier %s] min_oom_score_adj)", lp->tier);
		if (!(t = tier_named(a, p, lp->tier, &i)))
			return -EINVAL;
		if (t->warn)
			return fail(a, p, "[tier %s] is a warn tier, which kills nothing", lp->tier);
		t->min_oom_score_adj = (int)v;
		c->origin[1 + i][TIER_KEY_MIN_ADJ] = prop_origin(c, p);
		p->used = true;
		return 0;
	case PK_KILL_TIMEOUT:
		if (prop_int(p->value, 0, (long)(CONFIG_KILL_TIMEOUT_MAX_US / 1000), &v) < 0 ||
		    (v > 0 && (uint64_t)v * 1000 < CONFIG_KILL_TIMEOUT_MIN_US))
			return fail(a, p, "not 0 (wait for the victim's death: psi-lmkd's longest, %llums) or %llu..%llu ms "
				    "(kill_timeout)", CONFIG_KILL_TIMEOUT_MAX_US / 1000, CONFIG_KILL_TIMEOUT_MIN_US / 1000,
				    CONFIG_KILL_TIMEOUT_MAX_US / 1000);
		c->kill_timeout_us = v ? (uint64_t)v * 1000 : CONFIG_KILL_TIMEOUT_MAX_US;
		c->origin[0][config_key_index(config_daemon_keys, "kill_timeout")] = prop_origin(c, p);
		p->used = true;
		return 0;
	case PK_SWAP_LOW:
		if (prop_int(p->value, 0, 100, &v) < 0)
			return fail(a, p, "not a percentage of 0..100 (low_swap of the low_available tiers)");
		for (i = 0; i < c->n_tiers; i++) {
			if (!c->tiers[i].low_available.set)
				continue;
			c->tiers[i].low_swap = (struct mem_amount){ .set = true, .percent = true, .value = (uint64_t)v * 100 };
			c->origin[1 + i][config_key_index(config_tier_keys, "low_swap")] = prop_origin(c, p);
			any = true;
		}
		if (!any)
			return fail(a, p, "no tier has low_available, whose low_swap it would set");
		p->used = true;
		return 0;
	case PK_DEBUG:
		if (parse_bool(p->value, &b) < 0)
			return fail(a, p, "not a boolean (true/false, 1/0, y/n, yes/no, on/off)");
		c->lmk_debug = b;
		p->used = true;
		return 0;
	}
	return 0;
}

COLD_TEXT int lmkprops_apply(struct config *c, lmkprops_get_fn get, void *ctx, const char *source, struct config_error *err)
{
	struct applier a = { .c = c, .get = get, .ctx = ctx, .source = source, .err = err };
	struct config_prop *p;
	size_t i;
	int r;

	c->n_props = 0;
	c->lmk_debug = false;
	for (i = 0; i < N_PROPS; i++) {
		r = lookup(&a, &lmk_props[i], &p);
		if (r < 0)
			return r;
		if (p && (r = apply_one(&a, &lmk_props[i], p)) < 0)
			return r;
	}
	return 0;
}

COLD_TEXT bool lmkprops_in_namespace(const char *name)
{
	return strncmp(name, LMKPROPS_RO, strlen(LMKPROPS_RO)) == 0 ||
	       strncmp(name, LMKPROPS_PERSIST, strlen(LMKPROPS_PERSIST)) == 0;
}

COLD_TEXT bool lmkprops_known(const char *name)
{
	const char *suffix = NULL;
	size_t i;

	if (strncmp(name, LMKPROPS_RO, strlen(LMKPROPS_RO)) == 0)
		suffix = name + strlen(LMKPROPS_RO);
	else if (strncmp(name, LMKPROPS_PERSIST, strlen(LMKPROPS_PERSIST)) == 0)
		suffix = name + strlen(LMKPROPS_PERSIST);
	for (i = 0; i < N_PROPS; i++)
		if (lmk_props[i].whole ? strcmp(name, lmk_props[i].name) == 0
				       : suffix && strcmp(suffix, lmk_props[i].name) == 0)
			return true;
	return false;
}

/* ------------------------------------------------------------------ key=value files */

COLD_TEXT static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

COLD_TEXT int lmkprops_file_parse(struct lmkprops_file *f, const char *text, const char *path, struct config_error *err)
{
	char line[512];
	unsigned no = 0;
	size_t i;

	f->n = 0;
	while (*text) {
		size_t len = strcspn(text, "\n");
		char *s, *eq, *name, *value;

		no++;
		if (len >= sizeof(line)) {
			snprintf(err->msg, sizeof(err->msg), "%s:%u: line longer than %zu characters", path, no,
				 sizeof(line) - 1);
			return -EINVAL;
		}
		memcpy(line, text, len);
		line[len] = '\0';
		text += len + (text[len] == '\n');
		s = trim(line);
		if (!*s || *s == '#')
			continue;
		if (!(eq = strchr(s, '='))) {
			snprintf(err->msg, sizeof(err->msg), "%s:%u: not NAME=VALUE: \"%s\"", path, no, s);
			return -EINVAL;
		}
		*eq = '\0';
		name = trim(s);
		value = trim(eq + 1);
		if (!lmkprops_known(name)) {
			if (!lmkprops_in_namespace(name))
				continue; /* another program's property, as a build.prop holds */
			snprintf(err->msg, sizeof(err->msg), "%s:%u: %s: not one of lmkd's properties that psi-lmkd knows",
				 path, no, name);
			return -EINVAL;
		}
		if (strlen(value) >= CONFIG_PROP_VALUE_MAX) {
			snprintf(err->msg, sizeof(err->msg), "%s:%u: %s: the value is longer than %d bytes", path, no, name,
				 CONFIG_PROP_VALUE_MAX - 1);
			return -EINVAL;
		}
		for (i = 0; i < f->n; i++)
			if (strcmp(f->e[i].name, name) == 0) {
				snprintf(err->msg, sizeof(err->msg), "%s:%u: %s is set twice", path, no, name);
				return -EINVAL;
			}
		if (f->n == LMKPROPS_FILE_MAX) {
			snprintf(err->msg, sizeof(err->msg), "%s:%u: more than %d of lmkd's properties", path, no,
				 LMKPROPS_FILE_MAX);
			return -EINVAL;
		}
		snprintf(f->e[f->n].name, sizeof(f->e[0].name), "%s", name);
		snprintf(f->e[f->n].value, sizeof(f->e[0].value), "%s", value);
		f->e[f->n].line = no;
		f->n++;
	}
	return 0;
}

COLD_TEXT int lmkprops_file_get(void *ctx, const char *name, char *buf, size_t size)
{
	const struct lmkprops_file *f = ctx;
	size_t i;

	buf[0] = '\0';
	for (i = 0; i < f->n; i++)
		if (strcmp(f->e[i].name, name) == 0) {
			snprintf(buf, size, "%s", f->e[i].value);
			break;
		}
	return 0;
}
