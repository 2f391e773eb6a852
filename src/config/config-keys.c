/* SPDX-License-Identifier: MIT */
/* config-keys: the keys of [daemon] and [tier NAME]: one handler per key
 * (value parser, range, message), the two key tables, and the checks after
 * the file that look at several keys together. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coldtext.h"
#include "cgpattern.h"
#include "config-private.h"
#include "warnlevel.h"

COLD_TEXT static int key_pressure(struct parser *p, const char *v, char *why, size_t whylen)
{
	if (v[0] != '/') {
		snprintf(why, whylen, "pressure must be an absolute path, e.g. /proc/pressure/memory");
		return -EINVAL;
	}
	if (strlen(v) >= sizeof(p->c->pressure)) {
		snprintf(why, whylen, "pressure path is too long");
		return -EINVAL;
	}
	strcpy(p->c->pressure, v);
	p->c->pressure_origin = config_here(p);
	return 0;
}

COLD_TEXT static int key_scope(struct parser *p, const char *v, char *why, size_t whylen)
{
	if (strpbrk(v, "*?[")) {
		snprintf(why, whylen, "scope is one cgroup2 path, not a pattern (a tier's cgroup takes patterns), not \"%s\"",
			 v);
		return -EINVAL;
	}
	return cgpattern_normalize(v, "scope", false, p->c->scope, sizeof(p->c->scope), why, whylen);
}


/* A duration key with a range: parses v, checks lo..hi and says so in the key's
 * words. off_word (NULL: none) is a value that means 0 ("off"); when 0 is out of
 * range the message offers it. */
static int key_duration(const char *name, const char *off_word, uint64_t lo, uint64_t hi, const char *v,
			uint64_t *out, char *why, size_t whylen)
{
	char lbuf[32], hbuf[32];
	uint64_t us;
	int r;

	if (off_word && strcmp(v, off_word) == 0) {
		*out = 0;
		return 0;
	}
	r = config_parse_duration(v, false, &us, why, whylen);
	if (r == -ERANGE) /* past any key's range: said as the range */
		us = UINT64_MAX;
	else if (r < 0)
		return -EINVAL;
	if (us < lo || us > hi) {
		snprintf(why, whylen, "%s must be %s%sbetween %s and %s, not \"%s\"", name, off_word && lo ? off_word : "",
			 off_word && lo ? " or " : "", lo ? config_format_duration(lbuf, sizeof(lbuf), lo) : "0",
			 config_format_duration(hbuf, sizeof(hbuf), hi), v);
		return -EINVAL;
	}
	*out = us;
	return 0;
}

/* A boolean key: true/yes/on/1 or false/no/off/0. */
static int key_bool(const char *name, const char *v, bool *out, char *why, size_t whylen)
{
	if (config_parse_bool(v, out) < 0) {
		snprintf(why, whylen, "%s must be true or false, not \"%s\"", name, v);
		return -EINVAL;
	}
	return 0;
}

COLD_TEXT int config_key_parse(struct parser *p, const struct key_def *k, const char *v, char *why, size_t whylen)
{
	char *base = p->sec == SEC_TIER ? (char *)p->tier : (char *)p->c;

	switch (k->type) {
	case KEY_DURATION:
		return key_duration(k->name, k->off_word, k->lo, k->hi, v, (uint64_t *)(void *)(base + k->offset), why,
				    whylen);
	case KEY_BOOL:
		return key_bool(k->name, v, (bool *)(void *)(base + k->offset), why, whylen);
	case KEY_CUSTOM:
		break;
	}
	return k->parse(p, v, why, whylen);
}

/* A key of two words: *is_second tells which one v is. */
static int key_either(const char *name, const char *first, const char *second, const char *v, bool *is_second,
		      char *why, size_t whylen)
{
	if (strcmp(v, first) != 0 && strcmp(v, second) != 0) {
		snprintf(why, whylen, "%s must be %s or %s, not \"%s\"", name, first, second, v);
		return -EINVAL;
	}
	*is_second = strcmp(v, second) == 0;
	return 0;
}

COLD_TEXT static int key_trigger(struct parser *p, const char *v, char *why, size_t whylen)
{
	int r = config_parse_trigger(v, p->tier, why, whylen);

	if (r == 0)
		p->tier->has_trigger = true;
	return r;
}

COLD_TEXT static int key_kill_signal(struct parser *p, const char *v, char *why, size_t whylen)
{
	if (strcmp(v, "SIGKILL") == 0 || strcmp(v, "KILL") == 0)
		p->tier->kill_signal = SIGKILL;
	else if (strcmp(v, "SIGTERM") == 0 || strcmp(v, "TERM") == 0)
		p->tier->kill_signal = SIGTERM;
	else {
		snprintf(why, whylen, "kill_signal must be SIGKILL or SIGTERM, not \"%s\"", v);
		return -EINVAL;
	}
	return 0;
}

COLD_TEXT static int key_action(struct parser *p, const char *v, char *why, size_t whylen)
{
	return key_either("action", "kill", "warn", v, &p->tier->warn, why, whylen);
}

COLD_TEXT static int key_warn_level(struct parser *p, const char *v, char *why, size_t whylen)
{
	if (warn_parse_level(v, &p->tier->warn_level) < 0) {
		snprintf(why, whylen, "warn_level must be low, medium or critical (50, 100, 255), not \"%s\"", v);
		return -EINVAL;
	}
	return 0;
}

COLD_TEXT static int key_cgroup(struct parser *p, const char *v, char *why, size_t whylen)
{
	return cgpattern_parse(v, p->tier->cgroup, sizeof(p->tier->cgroup), why, whylen);
}

/* An amount or a percentage above zero into out; a zero, in any of its
 * forms, is refused with what turns the key off (off_hint, or nothing). */
static int amount_above_zero(const char *name, const char *off_hint, const char *v, struct mem_amount *out, char *why,
			     size_t whylen)
{
	if (config_amount_is_zero(v, true)) {
		snprintf(why, whylen, "%s must be more than 0%s", name, off_hint ? off_hint : "");
		return -EINVAL;
	}
	return config_parse_amount(v, true, out, why, whylen) < 0 ? -EINVAL : 0;
}

COLD_TEXT static int key_min_available(struct parser *p, const char *v, char *why, size_t whylen)
{
	return amount_above_zero("min_available", " (leave it out for no gate)", v, &p->tier->min_available, why, whylen);
}

COLD_TEXT static int key_low_available(struct parser *p, const char *v, char *why, size_t whylen)
{
	return amount_above_zero("low_available", " (a tier with 0 would never fire; leave it out)", v,
				 &p->tier->low_available, why, whylen);
}

/* low_swap: an amount or a percentage of the swap; also 0 (swap full) */
COLD_TEXT static int key_low_swap(struct parser *p, const char *v, char *why, size_t whylen)
{
	if (config_amount_is_zero(v, true)) {
		p->tier->low_swap = (struct mem_amount){ .set = true, .percent = false, .value = 0 };
		return 0;
	}
	return config_parse_amount(v, true, &p->tier->low_swap, why, whylen);
}

COLD_TEXT static int key_min_events(struct parser *p, const char *v, char *why, size_t whylen)
{
	long n;

	if (config_parse_int_range(v, 1, 100, &n) < 0) {
		snprintf(why, whylen, "min_events must be an integer between 1 and 100, not \"%s\"", v);
		return -EINVAL;
	}
	p->tier->min_events = (unsigned)n;
	return 0;
}

COLD_TEXT static int key_min_adj(struct parser *p, const char *v, char *why, size_t whylen)
{
	long adj;
	int r = config_parse_int_range(v, -1000, 1000, &adj);

	if (r < 0) {
		snprintf(why, whylen, "min_oom_score_adj must be an integer between -1000 and 1000, not \"%s\"", v);
		return r;
	}
	p->tier->min_oom_score_adj = (int)adj;
	return 0;
}

#define REGEX_KEY(field)                                                                        \
	COLD_TEXT static int key_##field(struct parser *p, const char *v, char *why, size_t whylen) \
	{                                                                                       \
		return config_set_regex(p->c->field, #field, v, why, whylen);                         \
	}
REGEX_KEY(protect)
REGEX_KEY(prefer)
REGEX_KEY(avoid)
REGEX_KEY(protect_cmdline)
REGEX_KEY(prefer_cmdline)
REGEX_KEY(avoid_cmdline)
REGEX_KEY(protect_cgroup)
REGEX_KEY(avoid_cgroup)

COLD_TEXT static int key_trusted_uid_max(struct parser *p, const char *v, char *why, size_t whylen)
{
	unsigned long long n;
	char *end;

	/* a uid: 0 .. 2^32 - 2 ((uid_t)-1 is no uid) */
	errno = 0;
	n = strtoull(v, &end, 10);
	if (!isdigit((unsigned char)v[0]) || *end != '\0' || errno == ERANGE || n > UINT32_MAX - 1) {
		snprintf(why, whylen, "trusted_uid_max must be a uid (an integer between 0 and %u), not \"%s\"",
			 (unsigned)(UINT32_MAX - 1), v);
		return -EINVAL;
	}
	p->c->trusted_uid_max = (uid_t)n;
	return 0;
}

COLD_TEXT static int key_min_rss(struct parser *p, const char *v, char *why, size_t whylen)
{
	struct mem_amount a;

	if (config_amount_is_zero(v, false)) {
		p->c->min_rss_kb = 0;
		return 0;
	}
	if (config_parse_amount(v, false, &a, why, whylen) < 0)
		return -EINVAL;
	p->c->min_rss_kb = a.value / 1024 + (a.value % 1024 != 0); /* kB, rounded up: never below what was asked */
	return 0;
}

/* on_kill and pre_kill: an absolute path to a program trusted as
 * trustpath.h says (config_check_program), into dst. */
static int key_program(struct parser *p, const char *key, char *dst, size_t size, unsigned *line, const char *v,
		       char *why, size_t whylen)
{
	if (v[0] != '/') {
		snprintf(why, whylen, "%s must be an absolute path to an executable", key);
		return -EINVAL;
	}
	if (strlen(v) >= size) {
		snprintf(why, whylen, "%s path is too long", key);
		return -EINVAL;
	}
	if (config_check_program(key, v, why, whylen) < 0)
		return -EINVAL;
	strcpy(dst, v);
	*line = config_here(p);
	return 0;
}

COLD_TEXT static int key_on_kill(struct parser *p, const char *v, char *why, size_t whylen)
{
	return key_program(p, "on_kill", p->c->on_kill, sizeof(p->c->on_kill), &p->on_kill_line, v, why, whylen);
}

COLD_TEXT static int key_pre_kill(struct parser *p, const char *v, char *why, size_t whylen)
{
	return key_program(p, "pre_kill", p->c->pre_kill, sizeof(p->c->pre_kill), &p->pre_kill_line, v, why, whylen);
}

COLD_TEXT static int key_on_kill_user(struct parser *p, const char *v, char *why, size_t whylen)
{
	if (!*v || strlen(v) >= sizeof(p->on_kill_user)) {
		snprintf(why, whylen, "on_kill_user must be a user name or a uid (at most %d characters)",
			 CONFIG_USER_MAX - 1);
		return -EINVAL;
	}
	strcpy(p->on_kill_user, v);
	p->on_kill_user_line = config_here(p);
	return 0;
}

/* After all the files: the hooks (on_kill, pre_kill) get their user
 * (on_kill_user, or nobody). */
COLD_TEXT void config_resolve_hook_user(struct parser *p)
{
	char why[256];
	unsigned line;
	int r;

	if (!config_has_hook(p->c)) {
		if (p->on_kill_user_line)
			config_fail(p, p->on_kill_user_line, "on_kill_user is set but there is no on_kill program (nor pre_kill)");
		return;
	}
	line = p->on_kill_user_line ? p->on_kill_user_line : p->on_kill_line ? p->on_kill_line : p->pre_kill_line;
	r = config_resolve_user(p->on_kill_user_line ? p->on_kill_user : CONFIG_DEFAULT_HOOK_USER, &p->c->on_kill_user,
				why, sizeof(why));
	if (r < 0) {
		config_fail(p, line, "%s%s", why, p->on_kill_user_line ? "" : " (the default on_kill_user; set another)");
		p->err_nomem = r == -ENOMEM;
	}
}

COLD_TEXT static int key_victim_order(struct parser *p, const char *v, char *why, size_t whylen)
{
	bool badness;

	if (key_either("victim_order", "adj", "badness", v, &badness, why, whylen) < 0)
		return -EINVAL;
	p->c->victim_order = badness ? VICTIM_ORDER_BADNESS : VICTIM_ORDER_ADJ;
	return 0;
}

/* culprit_growth: an amount, or a percentage of the OOM domain; "off" */
COLD_TEXT static int key_culprit_growth(struct parser *p, const char *v, char *why, size_t whylen)
{
	if (strcmp(v, "off") == 0) {
		p->c->culprit_growth = (struct mem_amount){ .set = false };
		return 0;
	}
	return amount_above_zero("culprit_growth", " (\"off\" turns it off)", v, &p->c->culprit_growth, why, whylen);
}

COLD_TEXT static int key_oom_killer(struct parser *p, const char *v, char *why, size_t whylen)
{
	return key_either("oom_killer", "kernel", "daemon", v, &p->c->oom_killer_daemon, why, whylen);
}

/* memory_high_brake: off, on (twice the largest low_available), or the
 * margin below memory.max as an amount or a percentage of memory.max */
COLD_TEXT static int key_memory_high_brake(struct parser *p, const char *v, char *why, size_t whylen)
{
	struct mem_amount a;

	if (strcmp(v, "off") == 0 || strcmp(v, "on") == 0) {
		p->c->brake_margin = (struct mem_amount){ .set = v[1] == 'n' };
		return 0;
	}
	if (amount_above_zero("memory_high_brake", " (\"off\" turns it off)", v, &a, why, whylen) < 0)
		return -EINVAL;
	if (a.percent && a.value > 5000) {
		snprintf(why, whylen, "memory_high_brake must be more than 0 and at most 50%% of memory.max (\"off\" turns "
			 "it off)");
		return -EINVAL;
	}
	p->c->brake_margin = a;
	return 0;
}

COLD_TEXT static int key_memory_cgroup(struct parser *p, const char *v, char *why, size_t whylen)
{
	if (v[0] != '/' || strlen(v) >= sizeof(p->c->memory_cgroup)) {
		snprintf(why, whylen, "memory_cgroup must be an absolute path of a cgroup directory, "
			 "e.g. /sys/fs/cgroup/user.slice");
		return -EINVAL;
	}
	strcpy(p->c->memory_cgroup, v);
	return 0;
}

COLD_TEXT static int key_max_groups(struct parser *p, const char *v, char *why, size_t whylen)
{
	long n;

	if (config_parse_int_range(v, 1, CONFIG_MAX_GROUPS_MAX, &n) < 0) {
		snprintf(why, whylen, "max_groups must be a number from 1 to %d, not \"%s\"", CONFIG_MAX_GROUPS_MAX, v);
		return -EINVAL;
	}
	p->c->max_groups = (unsigned)n;
	return 0;
}

COLD_TEXT static int key_control_socket(struct parser *p, const char *v, char *why, size_t whylen)
{
	if (strcmp(v, "off") == 0) {
		p->c->control_socket[0] = '\0';
		return 0;
	}
	if (v[0] != '/' || strlen(v) >= sizeof(p->c->control_socket) || v[strlen(v) - 1] == '/') {
		snprintf(why, whylen, "control_socket must be off or an absolute path of a socket file, shorter "
			 "than %zu bytes", sizeof(p->c->control_socket));
		return -EINVAL;
	}
	strcpy(p->c->control_socket, v);
	return 0;
}

COLD_TEXT static int key_metrics_file(struct parser *p, const char *v, char *why, size_t whylen)
{
	if (v[0] != '/' || strlen(v) + 4 >= sizeof(p->c->metrics_file) || v[strlen(v) - 1] == '/') {
		snprintf(why, whylen, "metrics_file must be an absolute path of a file, e.g. "
			 "/var/lib/prometheus/node-exporter/psi-lmkd.prom");
		return -EINVAL;
	}
	if (config_check_metrics_dir(v, why, whylen) < 0)
		return -EINVAL;
	strcpy(p->c->metrics_file, v);
	return 0;
}

COLD_TEXT static int key_nice(struct parser *p, const char *v, char *why, size_t whylen)
{
	long n;

	if (config_parse_int_range(v, -20, 19, &n) < 0) {
		snprintf(why, whylen, "nice must be an integer between -20 and 19, not \"%s\"", v);
		return -EINVAL;
	}
	p->c->has_nice = true;
	p->c->nice = (int)n;
	return 0;
}

COLD_TEXT static int key_realtime_priority(struct parser *p, const char *v, char *why, size_t whylen)
{
	long n;

	if (config_parse_int_range(v, 0, 99, &n) < 0) {
		snprintf(why, whylen, "realtime_priority must be 0 (off) or a SCHED_FIFO priority 1..99, not \"%s\"", v);
		return -EINVAL;
	}
	p->c->realtime_priority = (int)n;
	return 0;
}

COLD_TEXT static int key_lmkd_socket(struct parser *p, const char *v, char *why, size_t whylen)
{
	if (v[0] != '/' || strlen(v) >= sizeof(p->c->lmkd_socket)) {
		snprintf(why, whylen, "lmkd_socket must be an absolute path of at most %d bytes, e.g. /dev/socket/lmkd",
			 CONFIG_SOCKET_MAX - 1);
		return -EINVAL;
	}
	strcpy(p->c->lmkd_socket, v);
	return 0;
}

/* lmkd_properties: off, system (a build with Android's property area) or
 * the absolute path of a key=value file */
COLD_TEXT static int key_lmkd_properties(struct parser *p, const char *v, char *why, size_t whylen)
{
	if (strcmp(v, "off") == 0) {
		p->c->lmkd_properties = CONFIG_PROPS_OFF;
		return 0;
	}
	if (strcmp(v, "system") == 0) {
#ifdef HAVE_ANDROID_PROPERTIES
		p->c->lmkd_properties = CONFIG_PROPS_SYSTEM;
		return 0;
#else
		snprintf(why, whylen, "lmkd_properties = system needs Android's property area: this build has none "
			 "(configure --with-android-properties, on bionic); give off or the path of a key=value file");
		return -EINVAL;
#endif
	}
	if (v[0] != '/' || strlen(v) >= sizeof(p->c->lmkd_properties_file)) {
		snprintf(why, whylen, "lmkd_properties must be off, system or an absolute path of at most %d bytes, "
			 "not \"%s\"", CONFIG_PATH_MAX - 1, v);
		return -EINVAL;
	}
	p->c->lmkd_properties = CONFIG_PROPS_FILE;
	strcpy(p->c->lmkd_properties_file, v);
	return 0;
}

COLD_TEXT static int key_lmkd_prockill_size(struct parser *p, const char *v, char *why, size_t whylen)
{
	if (strcmp(v, "12") != 0 && strcmp(v, "16") != 0) {
		snprintf(why, whylen, "lmkd_prockill_size must be 16 (Android 16 frameworks) or 12 (Android 11 to 15), "
			 "not \"%s\"", v);
		return -EINVAL;
	}
	p->c->lmkd_prockill_short = v[0] == '1' && v[1] == '2';
	return 0;
}

const struct key_def config_daemon_keys[] = {
	KEY("pressure", key_pressure),
	KEY("scope", key_scope),
	KEY_DURATION_AT("kill_timeout", struct config, kill_timeout_us, CONFIG_KILL_TIMEOUT_MIN_US,
			CONFIG_KILL_TIMEOUT_MAX_US, NULL),
	KEY_DURATION_AT("idle_poll_interval", struct config, idle_poll_us, CONFIG_IDLE_POLL_MIN_US,
			CONFIG_IDLE_POLL_MAX_US, "off"),
	KEY_DURATION_AT("settle_time", struct config, settle_us, 0, CONFIG_SETTLE_MAX_US, "0"),
	KEY_BOOL_AT("dry_run", struct config, dry_run),
	KEY_BOOL_AT("hold_recovery", struct config, hold_recovery),
	KEY("protect", key_protect),
	KEY("prefer", key_prefer),
	KEY("avoid", key_avoid),
	KEY("protect_cmdline", key_protect_cmdline),
	KEY("prefer_cmdline", key_prefer_cmdline),
	KEY("avoid_cmdline", key_avoid_cmdline),
	KEY("protect_cgroup", key_protect_cgroup),
	KEY("avoid_cgroup", key_avoid_cgroup),
	KEY_BOOL_AT("systemd_oom_preferences", struct config, systemd_oom_preferences),
	KEY_BOOL_AT("systemd_oom_marks", struct config, systemd_oom_marks),
	KEY_BOOL_AT("systemd_managed_oom", struct config, systemd_managed_oom),
	KEY("trusted_uid_max", key_trusted_uid_max),
	KEY("victim_order", key_victim_order),
	KEY("culprit_growth", key_culprit_growth),
	KEY("oom_killer", key_oom_killer),
	KEY("memory_high_brake", key_memory_high_brake),
	KEY("min_rss", key_min_rss),
	KEY("on_kill", key_on_kill),
	KEY("on_kill_user", key_on_kill_user),
	KEY("pre_kill", key_pre_kill),
	KEY_DURATION_AT("pre_kill_timeout", struct config, pre_kill_timeout_us, CONFIG_PRE_KILL_TIMEOUT_MIN_US,
			CONFIG_PRE_KILL_TIMEOUT_MAX_US, NULL),
	KEY("memory_cgroup", key_memory_cgroup),
	KEY("nice", key_nice),
	KEY("realtime_priority", key_realtime_priority),
	KEY("lmkd_socket", key_lmkd_socket),
	KEY("lmkd_prockill_size", key_lmkd_prockill_size),
	KEY_BOOL_AT("lmkd_kill_log", struct config, lmkd_kill_log),
	KEY("lmkd_properties", key_lmkd_properties),
	KEY("control_socket", key_control_socket),
	KEY("metrics_file", key_metrics_file),
	KEY("max_groups", key_max_groups),
	{ .name = NULL },
};

const struct key_def config_tier_keys[] = {
	[TIER_KEY_TRIGGER] = KEY("trigger", key_trigger),
	[TIER_KEY_MIN_ADJ] = KEY("min_oom_score_adj", key_min_adj),
	[TIER_KEY_LOW_AVAILABLE] = KEY("low_available", key_low_available),
	[TIER_KEY_KILL_SIGNAL] = KEY("kill_signal", key_kill_signal),
	[TIER_KEY_TERM_TIMEOUT] = KEY_DURATION_AT("term_timeout", struct tier_config, term_timeout_us,
						  CONFIG_TERM_TIMEOUT_MIN_US, CONFIG_TERM_TIMEOUT_MAX_US, NULL),
	KEY_BOOL_AT("kill_cgroup", struct tier_config, kill_cgroup),
	KEY("min_available", key_min_available),
	KEY("low_swap", key_low_swap),
	KEY_BOOL_AT("hold_idle", struct tier_config, hold_idle),
	KEY("min_events", key_min_events),
	KEY("action", key_action),
	KEY("warn_level", key_warn_level),
	KEY("cgroup", key_cgroup),
	{ .name = NULL },
};

_Static_assert(sizeof(config_daemon_keys) / sizeof(config_daemon_keys[0]) <= CONFIG_KEYS_MAX + 1,
	       "struct config's origins hold every [daemon] key");
_Static_assert(sizeof(config_tier_keys) / sizeof(config_tier_keys[0]) <= CONFIG_KEYS_MAX + 1,
	       "struct config's origins hold every tier key");

int config_key_index(const struct key_def *keys, const char *name)
{
	int i;

	for (i = 0; keys[i].name; i++)
		if (strcmp(keys[i].name, name) == 0)
			return i;
	return -1;
}

/* Where a tier key was set (CONFIG_ORIGIN; 0: not set). */
static unsigned tier_key_line(const unsigned *seen, const char *name)
{
	size_t i;

	for (i = 0; config_tier_keys[i].name; i++)
		if (strcmp(config_tier_keys[i].name, name) == 0)
			return seen[i];
	return 0;
}

/* A warn tier kills nothing: the keys of a kill have no place in it. */
static void check_warn_tier(struct parser *p, const struct tier_config *t, const unsigned *seen)
{
	static const char *const kill_keys[] = { "min_oom_score_adj", "kill_signal", "term_timeout", "kill_cgroup",
						 "min_available", "hold_idle" };
	size_t i;

	for (i = 0; i < sizeof(kill_keys) / sizeof(kill_keys[0]); i++)
		if (tier_key_line(seen, kill_keys[i])) {
			config_fail(p, tier_key_line(seen, kill_keys[i]), "tier \"%s\" has action = warn: it kills nothing, "
			     "so %s does not apply", t->name, kill_keys[i]);
			return;
		}
}

/* A tier with a cgroup pattern runs on each matching group's pressure and
 * kills inside it: it needs a trigger, and its groups must be able to lie
 * inside the daemon's scope. */
static void check_group_tier(struct parser *p, const struct tier_config *t, const unsigned *seen)
{
	unsigned line = tier_key_line(seen, "cgroup");

	if (!t->has_trigger)
		config_fail(p, line, "tier \"%s\" has a cgroup pattern but no trigger: a group's tier runs on the "
			    "group's memory.pressure (low_available is measured for [daemon]'s memory domain only)", t->name);
	else if (t->low_available.set)
		config_fail(p, tier_key_line(seen, "low_available"), "low_available cannot be combined with cgroup: it is "
			    "measured for [daemon]'s memory domain only; a group's tier can gate on min_available, which "
			    "uses the group's memory.max");
	else if (t->warn)
		config_fail(p, line, "action = warn cannot be combined with cgroup: LowMemoryWarning names no group");
	else if (!cgpattern_within(t->cgroup, p->c->scope))
		config_fail(p, line, "no group matching %s can lie inside scope = %s", t->cgroup, p->c->scope);
}

/* After all the files: each tier's keys together (a trigger or low_available,
 * a kill tier's min_oom_score_adj, no kill keys in a warn tier, ...). */
static unsigned daemon_key_line(const struct parser *p, const char *name)
{
	size_t i;

	for (i = 0; config_daemon_keys[i].name; i++)
		if (strcmp(config_daemon_keys[i].name, name) == 0)
			return p->c->origin[0][i];
	return 0;
}

/* [daemon] keys that act only beside another: set without it, they would be
 * accepted and do nothing. */
static void check_daemon_keys(struct parser *p)
{
	const struct config *c = p->c;
	bool low = false;
	size_t i;

	for (i = 0; i < c->n_tiers; i++) /* a warn tier kills nothing */
		low = low || (c->tiers[i].low_available.set && !c->tiers[i].warn);
	if (c->victim_order != VICTIM_ORDER_BADNESS && c->culprit_growth.set && daemon_key_line(p, "culprit_growth"))
		config_fail(p, daemon_key_line(p, "culprit_growth"), "culprit_growth only applies with victim_order = "
			    "badness (with adj, the oom_score_adj ranks alone)");
	else if (!*c->pre_kill && daemon_key_line(p, "pre_kill_timeout"))
		config_fail(p, daemon_key_line(p, "pre_kill_timeout"), "pre_kill_timeout only applies with pre_kill");
	else if (c->oom_killer_daemon && !low)
		config_fail(p, daemon_key_line(p, "oom_killer"), "oom_killer = daemon needs a kill tier with low_available "
			    "(it kills on the memory cgroup's OOM notification through such a tier)");
	else if (c->brake_margin.set && !low)
		config_fail(p, daemon_key_line(p, "memory_high_brake"), "memory_high_brake needs a kill tier with "
			    "low_available (the brake is set from it, and it is what kills under the brake)");
}

COLD_TEXT void config_check_tiers(struct parser *p)
{
	size_t i;

	check_daemon_keys(p);

	for (i = 0; !p->err_line && i < p->c->n_tiers; i++) {
		const struct tier_config *t = &p->c->tiers[i];
		const unsigned *seen = p->c->origin[1 + i];

		if (!seen[TIER_KEY_TRIGGER] && !seen[TIER_KEY_LOW_AVAILABLE])
			config_fail(p, t->origin, "tier \"%s\" has no trigger (e.g. trigger = some 70ms 1s) and no low_available",
			     t->name);
		else if (t->warn)
			check_warn_tier(p, t, seen);
		else if (tier_key_line(seen, "warn_level"))
			config_fail(p, tier_key_line(seen, "warn_level"), "warn_level only applies with action = warn");
		else if (!seen[TIER_KEY_MIN_ADJ])
			config_fail(p, t->origin, "tier \"%s\" has no min_oom_score_adj (e.g. min_oom_score_adj = 800)", t->name);
		else if (seen[TIER_KEY_TERM_TIMEOUT] && t->kill_signal != SIGTERM)
			config_fail(p, seen[TIER_KEY_TERM_TIMEOUT], "term_timeout only applies with kill_signal = SIGTERM");
		else if (t->kill_cgroup && t->kill_signal != SIGKILL)
			config_fail(p, seen[TIER_KEY_KILL_SIGNAL], "kill_cgroup = true kills with cgroup.kill (SIGKILL): "
			     "it cannot be combined with kill_signal = SIGTERM");
		else if (t->low_swap.set && !t->low_available.set)
			config_fail(p, tier_key_line(seen, "low_swap"), "low_swap only applies with low_available (the last "
			     "resort fires when available memory is below low_available and free swap is at or below low_swap)");
		else if (tier_key_line(seen, "hold_idle") && !t->low_available.set)
			config_fail(p, tier_key_line(seen, "hold_idle"), "hold_idle only applies with low_available (the last "
			     "resort holds back while available memory is low but nothing grows and nothing stalls)");
		if (!p->err_line && *t->cgroup)
			check_group_tier(p, t, seen);
	}
}
