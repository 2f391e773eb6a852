/* SPDX-License-Identifier: MIT */
/* config-print: the effective settings as --check-config prints them, then
 * where they come from: the files read, and the file:line of each key set. */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "coldtext.h"
#include "config-private.h"
#include "warnlevel.h"

static void print_regex(FILE *f, const char *key, const char *v)
{
	if (*v)
		fprintf(f, "%s = %s\n", key, v);
}

/* One line per tier: its trigger or memory gate, then what it does. */
static void print_tier(FILE *f, const struct tier_config *t)
{
	char a[32], b[32];

	fprintf(f, "tier %s:", t->name);
	if (t->has_trigger)
		fprintf(f, " trigger = %s %s %s (kernel form \"%s %" PRIu64 " %" PRIu64 "\"),", psi_state_name(t->state),
			config_format_duration(a, sizeof(a), t->stall_us),
			config_format_duration(b, sizeof(b), t->window_us), psi_state_name(t->state), t->stall_us,
			t->window_us);
	if (t->low_available.set)
		fprintf(f, " low_available = %s, low_swap = %s%s,", config_format_amount(a, sizeof(a), &t->low_available),
			config_format_amount(b, sizeof(b), t->low_swap.set ? &t->low_swap : &CONFIG_DEFAULT_LOW_SWAP),
			t->low_swap.set ? "" : " (default; of the swap, when there is swap)");
	if (t->low_available.set && !t->warn)
		fprintf(f, " hold_idle = %s,", t->hold_idle ? "true" : "false");
	if (t->warn)
		fprintf(f, " action = warn, warn_level = %s", warn_level_name(t->warn_level));
	else
		fprintf(f, " min_oom_score_adj = %d, kill_signal = %s", t->min_oom_score_adj,
			t->kill_signal == SIGTERM ? "SIGTERM" : "SIGKILL");
	if (t->kill_signal == SIGTERM)
		fprintf(f, ", term_timeout = %s", config_format_duration(a, sizeof(a), t->term_timeout_us));
	if (t->kill_cgroup)
		fprintf(f, ", kill_cgroup = true");
	if (t->min_available.set)
		fprintf(f, ", min_available = %s", config_format_amount(a, sizeof(a), &t->min_available));
	if (t->min_events > 1)
		fprintf(f, ", min_events = %u", t->min_events);
	if (*t->cgroup)
		fprintf(f, ", cgroup = %s (one instance per matching group)", t->cgroup);
	fprintf(f, "\n");
}

/* "SECTION KEY at FILE:LINE" for each key of the section set in a file. */
COLD_TEXT static void print_key_origins(const struct config *c, FILE *f, const char *section, const struct key_def *keys,
			      const unsigned *origin)
{
	char where[CONFIG_WHERE_MAX];
	size_t i;

	for (i = 0; keys[i].name; i++)
		if (origin[i])
			fprintf(f, "%s %s at %s\n", section, keys[i].name, config_where(c, origin[i], where, sizeof(where)));
}

/* The files read, in order, then where each section began and each key
 * was set: the value in force is the last file's. */
COLD_TEXT static void print_origins(const struct config *c, FILE *f)
{
	char name[CONFIG_WHERE_MAX], section[CONFIG_NAME_MAX + 8];
	size_t i;

	for (i = 0; i <= c->n_dropins; i++)
		fprintf(f, "file %zu = %s\n", i + 1, config_file_name(c, (unsigned)i, name, sizeof(name)));
	print_key_origins(c, f, "[daemon]", config_daemon_keys, c->origin[0]);
	for (i = 0; i < c->n_tiers; i++) {
		snprintf(section, sizeof(section), "[tier %s]", c->tiers[i].name);
		fprintf(f, "%s at %s\n", section, config_where(c, c->tiers[i].origin, name, sizeof(name)));
		print_key_origins(c, f, section, config_tier_keys, c->origin[1 + i]);
	}
}

COLD_TEXT void config_print(const struct config *c, FILE *f)
{
	char a[32];
	size_t i;

	fprintf(f, "config = %s\n", c->path);
	fprintf(f, "pressure = %s\n", c->pressure);
	fprintf(f, "scope = %s\n", c->scope);
	fprintf(f, "kill_timeout = %s\n", config_format_duration(a, sizeof(a), c->kill_timeout_us));
	fprintf(f, "settle_time = %s\n", config_format_duration(a, sizeof(a), c->settle_us));
	fprintf(f, "idle_poll_interval = %s\n",
		c->idle_poll_us ? config_format_duration(a, sizeof(a), c->idle_poll_us) : "off");
	fprintf(f, "dry_run = %s\n", c->dry_run ? "true" : "false");
	fprintf(f, "hold_recovery = %s\n", c->hold_recovery ? "true" : "false");
	fprintf(f, "max_groups = %u\n", c->max_groups);
	print_regex(f, "protect", c->protect);
	print_regex(f, "prefer", c->prefer);
	print_regex(f, "avoid", c->avoid);
	print_regex(f, "protect_cmdline", c->protect_cmdline);
	print_regex(f, "prefer_cmdline", c->prefer_cmdline);
	print_regex(f, "avoid_cmdline", c->avoid_cmdline);
	print_regex(f, "protect_cgroup", c->protect_cgroup);
	print_regex(f, "avoid_cgroup", c->avoid_cgroup);
	fprintf(f, "systemd_oom_preferences = %s\n", c->systemd_oom_preferences ? "true" : "false");
	fprintf(f, "systemd_oom_marks = %s\n", c->systemd_oom_marks ? "true" : "false");
	fprintf(f, "systemd_managed_oom = %s\n", c->systemd_managed_oom ? "true" : "false");
	fprintf(f, "trusted_uid_max = %u\n", (unsigned)c->trusted_uid_max);
	fprintf(f, "victim_order = %s\n", victim_order_name(c->victim_order));
	fprintf(f, "culprit_growth = %s\n", c->victim_order == VICTIM_ORDER_BADNESS && c->culprit_growth.set
		? config_format_amount(a, sizeof(a), &c->culprit_growth) : "off");
	fprintf(f, "oom_killer = %s\n", c->oom_killer_daemon ? "daemon" : "kernel");
	fprintf(f, "memory_high_brake = %s\n", !c->brake_margin.set ? "off" : !c->brake_margin.value ? "on"
		: config_format_amount(a, sizeof(a), &c->brake_margin));
	if (c->min_rss_kb)
		fprintf(f, "min_rss = %" PRIu64 "K\n", c->min_rss_kb);
	else
		fprintf(f, "min_rss = 0\n");
	if (*c->on_kill)
		fprintf(f, "on_kill = %s\n", c->on_kill);
	if (*c->pre_kill)
		fprintf(f, "pre_kill = %s\npre_kill_timeout = %s\n", c->pre_kill,
			config_format_duration(a, sizeof(a), c->pre_kill_timeout_us));
	if (config_has_hook(c))
		fprintf(f, "on_kill_user = %s (uid %u, gid %u, %zu groups)\n", c->on_kill_user.name,
			(unsigned)c->on_kill_user.uid, (unsigned)c->on_kill_user.gid, c->on_kill_user.n_groups);
	if (*c->memory_cgroup)
		fprintf(f, "memory_cgroup = %s\n", c->memory_cgroup);
	if (c->has_nice)
		fprintf(f, "nice = %d\n", c->nice);
	else
		fprintf(f, "nice = inherited\n");
	if (c->realtime_priority)
		fprintf(f, "realtime_priority = %d\n", c->realtime_priority);
	if (*c->lmkd_socket)
		fprintf(f, "lmkd_socket = %s\n", c->lmkd_socket);
	if (c->lmkd_prockill_short)
		fprintf(f, "lmkd_prockill_size = 12\n");
	if (c->lmkd_kill_log)
		fprintf(f, "lmkd_kill_log = true\n");
	if (c->lmkd_properties != CONFIG_DEFAULT_PROPS || c->lmkd_properties != CONFIG_PROPS_OFF)
		fprintf(f, "lmkd_properties = %s\n", c->lmkd_properties == CONFIG_PROPS_FILE ? c->lmkd_properties_file
			: c->lmkd_properties == CONFIG_PROPS_SYSTEM ? "system" : "off");
	for (i = 0; i < c->n_props; i++)
		fprintf(f, "lmkd property %s = %s (%s)\n", c->props[i].name, c->props[i].value,
			c->props[i].used ? "in force" : "ignored: no psi-lmkd meaning");
	if (c->lmk_debug)
		fprintf(f, "debug log = true (ro.lmk.debug)\n");
	fprintf(f, "control_socket = %s\n", *c->control_socket ? c->control_socket : "off");
	if (*c->metrics_file)
		fprintf(f, "metrics_file = %s\n", c->metrics_file);
	for (i = 0; i < c->n_tiers; i++)
		print_tier(f, &c->tiers[i]);
	print_origins(c, f);
}
