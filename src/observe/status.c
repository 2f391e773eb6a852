/* SPDX-License-Identifier: MIT */
/* status: formats a status snapshot as text or JSON; see status.h. Pure:
 * it writes to the FILE it is given and reads nothing else. */
#include <inttypes.h>
#include <string.h>
#include <time.h>

#include "escape.h"
#include "status.h"
#include "victim.h"
#include "warn.h"

const char *status_format_time(char *buf, size_t size, uint64_t wall_ms)
{
	time_t t = (time_t)(wall_ms / 1000);
	struct tm tm;

	if (!gmtime_r(&t, &tm)) {
		snprintf(buf, size, "?");
		return buf;
	}
	snprintf(buf, size, "%04d-%02d-%02dT%02d:%02d:%02d.%03uZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
		 tm.tm_hour, tm.tm_min, tm.tm_sec, (unsigned)(wall_ms % 1000));
	return buf;
}

/* A path in the text form: one token, no control byte (a group's name is
 * whatever its creator chose). */
static const char *text_path(char *buf, size_t size, const char *path)
{
	escape_bytes(buf, size, path, strlen(path), ESCAPE_TOKEN, NULL);
	return buf;
}

/* A name in the text form: it comes as a display name (escape.h), which
 * this keeps as it is; anything else is made one line of UTF-8. */
static const char *text_name(char *buf, size_t size, const char *name)
{
	escape_bytes(buf, size, name, strlen(name), ESCAPE_CONTROL, NULL);
	return buf;
}

static const char *preference_name(int preference)
{
	return preference > 0 ? "prefer" : preference < 0 ? "avoid" : "none";
}

/* ------------------------------------------------------------------ text */

static void text_psi_line(FILE *f, const char *name, const struct psi_line *l)
{
	if (!l->present)
		return;
	fprintf(f, "  %s avg10=%u.%02u%% avg60=%u.%02u%% avg300=%u.%02u%% total=%" PRIu64 "us\n", name,
		l->avg10 / 100, l->avg10 % 100, l->avg60 / 100, l->avg60 % 100, l->avg300 / 100, l->avg300 % 100,
		l->total_us);
}

static void text_header(const struct status_snapshot *s, FILE *f)
{
	char comm[4 * PROC_COMM_MAX];

	fprintf(f, "psi-lmkd %s, pid %d, up %" PRIu64 "s, %" PRIu64 " kills%s%s\n", s->version, (int)s->pid,
		s->uptime_s, s->kills_total, s->dry_run ? ", DRY RUN" : "", s->armed ? "" : ", DISARMED (pressure file gone)");
	if (s->kill_in_flight)
		fprintf(f, "kill in flight: pid %d (%s)%s\n", (int)s->inflight_pid,
			text_name(comm, sizeof(comm), s->inflight_comm), s->inflight_pre ? ", waiting for pre_kill" : "");
	fprintf(f, "scope %s, victim_order %s\n", s->scope, s->victim_order);
	fprintf(f, "pressure %s:%s\n", s->pressure, s->psi_err ? " unreadable now" : "");
	if (!s->psi_err) {
		text_psi_line(f, "some", &s->psi.some);
		text_psi_line(f, "full", &s->psi.full);
	}
	if (s->mem_err)
		fprintf(f, "memory: cannot be read now\n");
	else
		fprintf(f, "memory%s%s: available %" PRIu64 " of %" PRIu64 " MiB; swap %" PRIu64 " of %" PRIu64
			" MiB free\n", *s->memory_cgroup ? " of " : " (system-wide)", s->memory_cgroup,
			s->mem.available_bytes >> 20, s->mem.total_bytes >> 20, s->mem.swap_free_bytes >> 20,
			s->mem.swap_total_bytes >> 20);
	fprintf(f, "kernel OOM kills since start: %" PRIu64 "%s\n", s->kernel_oom_kills,
		s->kernel_oom_kills ? " (the kernel's OOM killer acted before psi-lmkd)" : "");
	if (s->has_prekill)
		fprintf(f, "pre_kill hooks since start: %" PRIu64 " run, %" PRIu64 " exited, %" PRIu64 " timed out, %" PRIu64
			" victims gone meanwhile, %" PRIu64 " kills cancelled\n", s->prekill.runs, s->prekill.exited,
			s->prekill.timeouts, s->prekill.victim_gone, s->prekill.cancelled);
}

static void text_candidate(const struct status_tier *t, FILE *f)
{
	const struct status_candidate *c = &t->cand;
	const struct proc_info *v = &c->victim;
	char comm[4 * PROC_COMM_MAX];

	if (c->err) {
		fprintf(f, "  next victim: unknown (cannot scan /proc: %s)\n", strerror(-c->err));
		return;
	}
	if (!c->found) {
		fprintf(f, "  next victim: none (no process in the band)\n");
		return;
	}
	fprintf(f, "  next victim: pid %d (%s) uid %u oom_score_adj %d rss %" PRIu64 " kB size %" PRIu64 " kB",
		(int)v->pid, text_name(comm, sizeof(comm), v->comm), (unsigned)v->uid, v->oom_score_adj, v->rss_kb,
		procfs_size_kb(v));
	if (v->badness_kb != VICTIM_BADNESS_UNKNOWN)
		fprintf(f, " badness %" PRId64 " kB", v->badness_kb);
	fprintf(f, "\n    why: first of %u candidates with oom_score_adj >= %d, preference %s", c->candidates,
		t->cfg->min_oom_score_adj, preference_name(v->preference));
	if (c->owner_pass)
		fprintf(f, "; pid %d (%s) came first but is shielded by a rule its owner could forge, so the choice "
			"was made among its owner's processes", (int)c->first_pid,
			text_name(comm, sizeof(comm), c->first_comm));
	fprintf(f, "\n");
}

static void text_tier(const struct status_tier *t, FILE *f)
{
	const struct tier_config *c = t->cfg;
	const struct tier_state *n = &t->counters;
	char a[32], b[32], path[4 * CONFIG_PATH_MAX];

	fprintf(f, "tier %s%s%s: ", c->name, t->group ? " in " : "", t->group ? text_path(path, sizeof(path), t->group) : "");
	if (*c->cgroup && !t->group)
		fprintf(f, "%s %s %s, one instance per group matching %s", psi_state_name(c->state),
			config_format_duration(a, sizeof(a), c->stall_us), config_format_duration(b, sizeof(b), c->window_us),
			c->cgroup);
	else if (c->has_trigger)
		fprintf(f, "%s %s %s, %s%s", psi_state_name(c->state), config_format_duration(a, sizeof(a), c->stall_us),
			config_format_duration(b, sizeof(b), c->window_us), t->source,
			strcmp(t->source, "kernel") == 0 ? " trigger" : " monitor");
	else
		fprintf(f, "no PSI trigger");
	if (c->min_events > 1)
		fprintf(f, ", %u events in a row", c->min_events);
	if (c->low_available.set)
		fprintf(f, ", low_available %s", config_format_amount(a, sizeof(a), &c->low_available));
	if (c->warn)
		fprintf(f, "; warns (LowMemoryWarning %u, %s)\n", c->warn_level, warn_level_name(c->warn_level));
	else
		fprintf(f, "; kills oom_score_adj >= %d\n", c->min_oom_score_adj);
	fprintf(f, "  events=%" PRIu64 " deferred=%" PRIu64 " gated=%" PRIu64 " kills=%" PRIu64 " no_candidate=%" PRIu64
		" scans=%" PRIu64 " mem_checks=%" PRIu64 " swap_held=%" PRIu64 " idle_held=%" PRIu64 " recovery_held=%" PRIu64,
		n->events, n->deferred, n->gated, n->kills, n->no_candidate, n->scans, n->mem_checks, n->swap_held,
		n->idle_held, n->recovery_held);
	if (c->warn)
		fprintf(f, " warnings=%" PRIu64, n->warnings);
	if (n->last_kill_us)
		fprintf(f, " last_kill=%" PRIu64 "s-ago\n", t->last_kill_ago_s);
	else
		fprintf(f, " last_kill=never\n");
	if (t->has_candidate)
		text_candidate(t, f);
}

static void text_record(const struct kill_record *r, FILE *f)
{
	char when[40], path[4 * HISTORY_CGROUP_MAX], comm[4 * PROC_COMM_MAX];

	fprintf(f, "  %s %s pid=%d comm=%s uid=%u oom_score_adj=%d rss_kb=%" PRIu64 " size_kb=%" PRIu64,
		status_format_time(when, sizeof(when), r->wall_ms), r->dry_run ? "would-kill" : "kill", (int)r->pid,
		text_name(comm, sizeof(comm), r->comm), (unsigned)r->uid, r->oom_score_adj, r->rss_kb, r->size_kb);
	if (r->badness_kb != VICTIM_BADNESS_UNKNOWN)
		fprintf(f, " badness_kb=%" PRId64, r->badness_kb);
	fprintf(f, " tier=%s reason=%s cgroup=%s", r->tier, r->reason,
		r->cgroup[0] ? text_path(path, sizeof(path), r->cgroup) : "?");
	if (r->group[0])
		fprintf(f, " group=%s", text_path(path, sizeof(path), r->group));
	if (r->has_psi)
		fprintf(f, " some_avg10=%u.%02u full_avg10=%u.%02u", r->psi.some.avg10 / 100, r->psi.some.avg10 % 100,
			r->psi.full.avg10 / 100, r->psi.full.avg10 % 100);
	if (r->has_mem)
		fprintf(f, " available_kb=%" PRIu64, r->available_bytes >> 10);
	fprintf(f, "\n");
}

void status_format_text(const struct status_snapshot *s, FILE *f)
{
	const struct kill_record *r;
	size_t i;

	text_header(s, f);
	for (i = 0; i < s->n_tiers; i++)
		text_tier(&s->tiers[i], f);
	if (s->has_groups)
		fprintf(f, "groups: %zu watched (at most %u)%s\n", s->groups_watched, s->max_groups,
			s->groups_not_watched ? "; max_groups reached: some matching groups are not watched" : "");
	for (i = 0; i < s->n_instances; i++)
		text_tier(&s->instances[i], f);
	if (!s->history || !s->history->count) {
		fprintf(f, "last kills: none\n");
		return;
	}
	fprintf(f, "last kills (newest first, at most %d kept):\n", HISTORY_MAX);
	for (i = 0; (r = history_newest(s->history, i)); i++)
		text_record(r, f);
}

/* ------------------------------------------------------------------ JSON */

void status_json_string(FILE *f, const char *s)
{
	size_t len = strlen(s), i, n;

	fputc('"', f);
	for (i = 0; i < len; i += n ? n : 1) {
		unsigned char c = (unsigned char)s[i];

		n = escape_utf8_len(s + i, len - i);
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			fprintf(f, "\\u%04x", c);
		else if (n)
			fwrite(s + i, 1, n, f);
		else /* not UTF-8 (names come as display names; this is the last guard) */
			fprintf(f, "\\\\x%02x", c);
	}
	fputc('"', f);
}

static void json_key_str(FILE *f, const char *key, const char *val, bool comma)
{
	fprintf(f, "\"%s\":", key);
	status_json_string(f, val);
	if (comma)
		fputc(',', f);
}

static void json_psi_line(FILE *f, const char *name, const struct psi_line *l)
{
	if (!l->present) {
		fprintf(f, "\"%s\":null", name);
		return;
	}
	fprintf(f, "\"%s\":{\"avg10\":%u.%02u,\"avg60\":%u.%02u,\"avg300\":%u.%02u,\"total_us\":%" PRIu64 "}", name,
		l->avg10 / 100, l->avg10 % 100, l->avg60 / 100, l->avg60 % 100, l->avg300 / 100, l->avg300 % 100,
		l->total_us);
}

static void json_header(const struct status_snapshot *s, FILE *f)
{
	fprintf(f, "{");
	json_key_str(f, "version", s->version, true);
	fprintf(f, "\"pid\":%d,\"uptime_s\":%" PRIu64 ",\"dry_run\":%s,\"armed\":%s,\"kills_total\":%" PRIu64 ",",
		(int)s->pid, s->uptime_s, s->dry_run ? "true" : "false", s->armed ? "true" : "false", s->kills_total);
	if (s->kill_in_flight) {
		fprintf(f, "\"kill_in_flight\":{\"pid\":%d,\"pre_kill\":%s,", (int)s->inflight_pid,
			s->inflight_pre ? "true" : "false");
		json_key_str(f, "comm", s->inflight_comm, false);
		fprintf(f, "},");
	} else {
		fprintf(f, "\"kill_in_flight\":null,");
	}
	json_key_str(f, "scope", s->scope, true);
	json_key_str(f, "victim_order", s->victim_order, true);
	fprintf(f, "\"pressure\":{");
	json_key_str(f, "path", s->pressure, true);
	if (s->psi_err) {
		json_key_str(f, "error", strerror(-s->psi_err), false);
	} else {
		json_psi_line(f, "some", &s->psi.some);
		fputc(',', f);
		json_psi_line(f, "full", &s->psi.full);
	}
	fprintf(f, "},\"memory\":{");
	json_key_str(f, "cgroup", s->memory_cgroup, true);
	if (s->mem_err)
		json_key_str(f, "error", strerror(-s->mem_err), false);
	else
		fprintf(f, "\"available_bytes\":%" PRIu64 ",\"total_bytes\":%" PRIu64 ",\"swap_free_bytes\":%" PRIu64
			",\"swap_total_bytes\":%" PRIu64, s->mem.available_bytes, s->mem.total_bytes, s->mem.swap_free_bytes,
			s->mem.swap_total_bytes);
	fprintf(f, "},\"kernel_oom_kills\":%" PRIu64 ",", s->kernel_oom_kills);
	if (s->has_prekill)
		fprintf(f, "\"pre_kill\":{\"runs\":%" PRIu64 ",\"exited\":%" PRIu64 ",\"timeouts\":%" PRIu64
			",\"victim_gone\":%" PRIu64 ",\"cancelled\":%" PRIu64 "},", s->prekill.runs, s->prekill.exited,
			s->prekill.timeouts, s->prekill.victim_gone, s->prekill.cancelled);
	else
		fprintf(f, "\"pre_kill\":null,");
}

static void json_victim(FILE *f, const struct proc_info *v)
{
	fprintf(f, "\"pid\":%d,", (int)v->pid);
	json_key_str(f, "comm", v->comm, true);
	fprintf(f, "\"uid\":%u,\"oom_score_adj\":%d,\"rss_kb\":%" PRIu64 ",\"size_kb\":%" PRIu64 ",", (unsigned)v->uid,
		v->oom_score_adj, v->rss_kb, procfs_size_kb(v));
	if (v->badness_kb == VICTIM_BADNESS_UNKNOWN)
		fprintf(f, "\"badness_kb\":null");
	else
		fprintf(f, "\"badness_kb\":%" PRId64, v->badness_kb);
}

static void json_candidate(FILE *f, const struct status_tier *t)
{
	const struct status_candidate *c = &t->cand;

	fprintf(f, ",\"candidate\":");
	if (c->err) {
		fprintf(f, "{");
		json_key_str(f, "error", strerror(-c->err), false);
		fprintf(f, "}");
		return;
	}
	if (!c->found) {
		fprintf(f, "null");
		return;
	}
	fprintf(f, "{");
	json_victim(f, &c->victim);
	fprintf(f, ",\"candidates\":%u,", c->candidates);
	json_key_str(f, "preference", preference_name(c->victim.preference), true);
	json_key_str(f, "cgroup", c->cgroup, true);
	if (c->owner_pass)
		fprintf(f, "\"owner_pass\":{\"first_pid\":%d}", (int)c->first_pid);
	else
		fprintf(f, "\"owner_pass\":null");
	fprintf(f, "}");
}

static void json_tier(FILE *f, const struct status_tier *t)
{
	const struct tier_config *c = t->cfg;
	const struct tier_state *n = &t->counters;
	char a[32], b[32];

	fprintf(f, "{");
	json_key_str(f, "name", c->name, true);
	if (t->group)
		json_key_str(f, "group", t->group, true);
	else if (*c->cgroup)
		json_key_str(f, "cgroup", c->cgroup, true);
	json_key_str(f, "source", t->source, true);
	if (c->has_trigger)
		fprintf(f, "\"trigger\":\"%s %s %s\",", psi_state_name(c->state),
			config_format_duration(a, sizeof(a), c->stall_us), config_format_duration(b, sizeof(b), c->window_us));
	else
		fprintf(f, "\"trigger\":null,");
	fprintf(f, "\"action\":\"%s\",\"warnings\":%" PRIu64 ",", c->warn ? "warn" : "kill", n->warnings);
	if (c->warn)
		fprintf(f, "\"warn_level\":%u,", c->warn_level);
	fprintf(f, "\"min_events\":%u,\"min_oom_score_adj\":%d,", c->min_events, c->min_oom_score_adj);
	if (c->low_available.set)
		json_key_str(f, "low_available", config_format_amount(a, sizeof(a), &c->low_available), true);
	else
		fprintf(f, "\"low_available\":null,");
	fprintf(f, "\"events\":%" PRIu64 ",\"deferred\":%" PRIu64 ",\"gated\":%" PRIu64 ",\"kills\":%" PRIu64
		",\"no_candidate\":%" PRIu64 ",\"scans\":%" PRIu64 ",\"mem_checks\":%" PRIu64 ",\"swap_held\":%" PRIu64
		",\"idle_held\":%" PRIu64 ",\"recovery_held\":%" PRIu64,
		n->events, n->deferred, n->gated, n->kills, n->no_candidate, n->scans, n->mem_checks, n->swap_held,
		n->idle_held, n->recovery_held);
	if (n->last_kill_us)
		fprintf(f, ",\"last_kill_ago_s\":%" PRIu64, t->last_kill_ago_s);
	else
		fprintf(f, ",\"last_kill_ago_s\":null");
	if (t->has_candidate)
		json_candidate(f, t);
	fprintf(f, "}");
}

static void json_record(FILE *f, const struct kill_record *r)
{
	char when[40];
	struct proc_info v;

	memset(&v, 0, sizeof(v));
	v.pid = r->pid;
	snprintf(v.comm, sizeof(v.comm), "%s", r->comm);
	v.uid = r->uid;
	v.oom_score_adj = r->oom_score_adj;
	v.rss_kb = r->rss_kb;
	v.swap_kb = r->size_kb - r->rss_kb; /* so that procfs_size_kb(&v) is r->size_kb */
	v.badness_kb = r->badness_kb;
	fprintf(f, "{");
	json_key_str(f, "time", status_format_time(when, sizeof(when), r->wall_ms), true);
	fprintf(f, "\"time_unix_ms\":%" PRIu64 ",\"dry_run\":%s,", r->wall_ms, r->dry_run ? "true" : "false");
	json_victim(f, &v);
	fputc(',', f);
	json_key_str(f, "tier", r->tier, true);
	json_key_str(f, "reason", r->reason, true);
	json_key_str(f, "cgroup", r->cgroup, false);
	if (r->group[0]) {
		fputc(',', f);
		json_key_str(f, "group", r->group, false);
	}
	if (r->has_psi)
		fprintf(f, ",\"some_avg10\":%u.%02u,\"full_avg10\":%u.%02u", r->psi.some.avg10 / 100,
			r->psi.some.avg10 % 100, r->psi.full.avg10 / 100, r->psi.full.avg10 % 100);
	if (r->has_mem)
		fprintf(f, ",\"available_bytes\":%" PRIu64 ",\"total_bytes\":%" PRIu64, r->available_bytes, r->total_bytes);
	fprintf(f, "}");
}

void status_format_json(const struct status_snapshot *s, FILE *f)
{
	const struct kill_record *r;
	size_t i;

	json_header(s, f);
	fprintf(f, "\"tiers\":[");
	for (i = 0; i < s->n_tiers; i++) {
		if (i)
			fputc(',', f);
		json_tier(f, &s->tiers[i]);
	}
	fprintf(f, "],\"groups\":");
	if (s->has_groups) {
		fprintf(f, "{\"watched\":%zu,\"max_groups\":%u,\"not_watched\":%" PRIu64 ",\"instances\":[",
			s->groups_watched, s->max_groups, s->groups_not_watched);
		for (i = 0; i < s->n_instances; i++) {
			if (i)
				fputc(',', f);
			json_tier(f, &s->instances[i]);
		}
		fprintf(f, "]}");
	} else {
		fprintf(f, "null");
	}
	fprintf(f, ",\"kills\":[");
	for (i = 0; s->history && (r = history_newest(s->history, i)); i++) {
		if (i)
			fputc(',', f);
		json_record(f, r);
	}
	fprintf(f, "]}\n");
}
