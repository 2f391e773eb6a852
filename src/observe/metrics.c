/* SPDX-License-Identifier: MIT */
/* metrics: Prometheus text exposition of the daemon's counters; see metrics.h. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <time.h>
#include <sys/random.h>
#include <sys/stat.h>

#include "config.h"
#include "escape.h"
#include "metrics.h"
#include "moom.h"
#include "trustpath.h"

static void help(FILE *f, const char *name, const char *type, const char *text)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, text, name, type);
}

/* One per-tier metric: the value of each tier's counter at offset off. */
static void per_tier(FILE *f, const struct status_snapshot *s, const char *name, const char *text, size_t off)
{
	size_t i;

	help(f, name, "counter", text);
	for (i = 0; i < s->n_tiers; i++) {
		const uint64_t *v = (const uint64_t *)(const void *)((const char *)&s->tiers[i].counters + off);

		fprintf(f, "%s{tier=\"%s\"} %" PRIu64 "\n", name, s->tiers[i].cfg->name, *v);
	}
}

static void kills(FILE *f, const struct status_snapshot *s)
{
	size_t i;

	help(f, "psi_lmkd_kills_total", "counter", "Processes killed, by tier and by what fired the tier.");
	for (i = 0; i < s->n_tiers; i++) {
		const struct status_tier *t = &s->tiers[i];

		if (t->cfg->warn)
			continue; /* kills nobody */
		if (t->cfg->has_trigger)
			fprintf(f, "psi_lmkd_kills_total{tier=\"%s\",reason=\"%s\"} %" PRIu64 "\n", t->cfg->name,
				t->cfg->state == PSI_FULL ? "psi_full" : "psi_some",
				t->counters.kills - t->counters.kills_low_memory - t->counters.kills_oom);
		if (t->cfg->low_available.set)
			fprintf(f, "psi_lmkd_kills_total{tier=\"%s\",reason=\"low_memory\"} %" PRIu64 "\n", t->cfg->name,
				t->counters.kills_low_memory);
		/* a reload may have turned oom_killer = daemon off since its kills */
		if (t->cfg->low_available.set && (s->oom_killer_daemon || t->counters.kills_oom))
			fprintf(f, "psi_lmkd_kills_total{tier=\"%s\",reason=\"oom\"} %" PRIu64 "\n", t->cfg->name,
				t->counters.kills_oom);
	}
	if (s->has_moom) {
		fprintf(f, "psi_lmkd_kills_total{tier=\"%s\",reason=\"managed_oom_pressure\"} %" PRIu64 "\n", MOOM_TIER_NAME,
			s->moom_kills_pressure);
		fprintf(f, "psi_lmkd_kills_total{tier=\"%s\",reason=\"managed_oom_swap\"} %" PRIu64 "\n", MOOM_TIER_NAME,
			s->moom_kills_swap);
	}
}

/* A label value: backslash, double quote and newline escaped (the
 * exposition format's rule); a group's name is its creator's choice. It
 * comes as a display name; a byte that is not UTF-8 all the same shows as
 * \\xHH, as in one (the exposition must be UTF-8). */
static void label_value(FILE *f, const char *v)
{
	size_t len = strlen(v), i, n;

	for (i = 0; i < len; i += n ? n : 1) {
		n = escape_utf8_len(v + i, len - i);
		if (v[i] == '\\' || v[i] == '"')
			fprintf(f, "\\%c", v[i]);
		else if (v[i] == '\n')
			fputs("\\n", f);
		else if (n)
			fwrite(v + i, 1, n, f);
		else
			fprintf(f, "\\\\x%02x", (unsigned char)v[i]);
	}
}

/* The instances of the cgroup-pattern tiers: one series per group and tier. */
static void groups(FILE *f, const struct status_snapshot *s)
{
	static const struct {
		const char *name, *text;
		size_t off;
	} counters[] = {
		{ "psi_lmkd_group_tier_events_total", "Events of a cgroup-pattern tier in one watched group.",
		  offsetof(struct tier_state, events) },
		{ "psi_lmkd_group_kills_total", "Processes killed by a cgroup-pattern tier in one watched group.",
		  offsetof(struct tier_state, kills) },
	};
	size_t c, i;

	if (!s->has_groups)
		return;
	help(f, "psi_lmkd_groups_watched", "gauge", "Groups watched by the cgroup-pattern tiers.");
	fprintf(f, "psi_lmkd_groups_watched %zu\n", s->groups_watched);
	help(f, "psi_lmkd_groups_not_watched", "gauge", "Matching groups left unwatched: max_groups reached.");
	fprintf(f, "psi_lmkd_groups_not_watched %" PRIu64 "\n", s->groups_not_watched);
	for (c = 0; c < sizeof(counters) / sizeof(counters[0]); c++) {
		help(f, counters[c].name, "counter", counters[c].text);
		for (i = 0; i < s->n_instances; i++) {
			const struct status_tier *t = &s->instances[i];

			fprintf(f, "%s{tier=\"%s\",group=\"", counters[c].name, t->cfg->name);
			label_value(f, t->group);
			fprintf(f, "\"} %" PRIu64 "\n",
				*(const uint64_t *)(const void *)((const char *)&t->counters + counters[c].off));
		}
	}
}

static uint64_t last_kill_ms(const struct status_snapshot *s)
{
	const struct kill_record *r;
	size_t i;

	for (i = 0; s->history && (r = history_newest(s->history, i)); i++)
		if (!r->dry_run)
			return r->wall_ms;
	return 0;
}

void metrics_format(const struct status_snapshot *s, FILE *f)
{
	uint64_t last = last_kill_ms(s);
	size_t i;

	kills(f, s);
	per_tier(f, s, "psi_lmkd_tier_events_total", "Events of the tier (kernel trigger, userspace monitor or low "
		 "available memory).", offsetof(struct tier_state, events));
	per_tier(f, s, "psi_lmkd_tier_deferred_total", "Events while a victim was dying or settling: not acted on.",
		 offsetof(struct tier_state, deferred));
	per_tier(f, s, "psi_lmkd_tier_gated_total", "Events a gate (min_events, min_available) held back.",
		 offsetof(struct tier_state, gated));
	per_tier(f, s, "psi_lmkd_tier_no_candidate_total", "Events with no process to kill in the tier's band.",
		 offsetof(struct tier_state, no_candidate));
	per_tier(f, s, "psi_lmkd_tier_swap_held_total", "low_available checks held back while swap had room.",
		 offsetof(struct tier_state, swap_held));
	per_tier(f, s, "psi_lmkd_tier_idle_held_total", "low_available checks held back: memory low, but nothing grew or "
		 "stalled (hold_idle).", offsetof(struct tier_state, idle_held));
	per_tier(f, s, "psi_lmkd_tier_recovery_held_total", "PSI events held back as recovery from the last kill "
		 "(hold_recovery).", offsetof(struct tier_state, recovery_held));
	help(f, "psi_lmkd_warnings_total", "counter", "LowMemoryWarning signals sent by action = warn tiers.");
	for (i = 0; i < s->n_tiers; i++)
		if (s->tiers[i].cfg->warn)
			fprintf(f, "psi_lmkd_warnings_total{tier=\"%s\",level=\"%u\"} %" PRIu64 "\n", s->tiers[i].cfg->name,
				s->tiers[i].cfg->warn_level, s->tiers[i].counters.warnings);
	help(f, "psi_lmkd_tier_kernel_trigger", "gauge", "1 if the tier runs on a kernel PSI trigger, 0 otherwise.");
	for (i = 0; i < s->n_tiers; i++)
		fprintf(f, "psi_lmkd_tier_kernel_trigger{tier=\"%s\"} %d\n", s->tiers[i].cfg->name,
			strcmp(s->tiers[i].source, "kernel") == 0);
	groups(f, s);
	help(f, "psi_lmkd_kernel_oom_kills_total", "counter",
	     "Processes the kernel's OOM killer killed in the watched memory domain since start (psi-lmkd's misses).");
	fprintf(f, "psi_lmkd_kernel_oom_kills_total %" PRIu64 "\n", s->kernel_oom_kills);
	if (s->has_prekill) {
		help(f, "psi_lmkd_pre_kill_total", "counter",
		     "pre_kill hooks, by how they ended: exited (the signal followed), timeout (its process group killed "
		     "at pre_kill_timeout or for a last resort, then the signal), victim_gone (the victim exited "
		     "meanwhile: no signal); cancelled: of exited and timeout, the kills not signalled as the "
		     "decision's tier or group was gone.");
		fprintf(f, "psi_lmkd_pre_kill_total{outcome=\"exited\"} %" PRIu64 "\n", s->prekill.exited);
		fprintf(f, "psi_lmkd_pre_kill_total{outcome=\"timeout\"} %" PRIu64 "\n", s->prekill.timeouts);
		fprintf(f, "psi_lmkd_pre_kill_total{outcome=\"victim_gone\"} %" PRIu64 "\n", s->prekill.victim_gone);
		fprintf(f, "psi_lmkd_pre_kill_total{outcome=\"cancelled\"} %" PRIu64 "\n", s->prekill.cancelled);
	}
	help(f, "psi_lmkd_armed", "gauge", "1 while the tiers are armed, 0 while the pressure file is gone.");
	fprintf(f, "psi_lmkd_armed %d\n", s->armed);
	help(f, "psi_lmkd_dry_run", "gauge", "1 in a dry run (nothing is killed).");
	fprintf(f, "psi_lmkd_dry_run %d\n", s->dry_run);
	help(f, "psi_lmkd_last_kill_timestamp_seconds", "gauge", "Wall-clock time of the last kill (0: none since start).");
	fprintf(f, "psi_lmkd_last_kill_timestamp_seconds %" PRIu64 ".%03" PRIu64 "\n", last / 1000, last % 1000);
}

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
	return h;
}

uint64_t metrics_signature(const struct status_snapshot *s)
{
	uint64_t h = mix(0, s->n_tiers);
	size_t i;

	h = mix(h, s->armed);
	h = mix(h, s->oom_killer_daemon);
	h = mix(h, s->dry_run);
	h = mix(h, s->kernel_oom_kills);
	h = mix(h, s->prekill.runs);
	h = mix(h, s->prekill.exited + s->prekill.timeouts + s->prekill.victim_gone + s->prekill.cancelled);
	h = mix(h, last_kill_ms(s));
	for (i = 0; i < s->n_tiers; i++) {
		const struct tier_state *c = &s->tiers[i].counters;
		const char *n;

		for (n = s->tiers[i].cfg->name; *n; n++)
			h = mix(h, (unsigned char)*n);
		h = mix(h, s->tiers[i].source[0]);
		h = mix(h, c->events);
		h = mix(h, c->deferred);
		h = mix(h, c->gated);
		h = mix(h, c->kills);
		h = mix(h, c->kills_low_memory);
		h = mix(h, c->kills_oom);
		h = mix(h, c->no_candidate);
		h = mix(h, c->swap_held);
		h = mix(h, c->idle_held);
		h = mix(h, c->recovery_held);
		h = mix(h, c->warnings);
	}
	h = mix(h, s->has_moom);
	h = mix(h, s->moom_kills_pressure);
	h = mix(h, s->moom_kills_swap);
	h = mix(h, s->groups_watched);
	h = mix(h, s->groups_not_watched);
	for (i = 0; i < s->n_instances; i++) {
		const char *n;

		for (n = s->instances[i].group; *n; n++)
			h = mix(h, (unsigned char)*n);
		h = mix(h, s->instances[i].counters.events);
		h = mix(h, s->instances[i].counters.kills);
	}
	return h;
}

/* A new file in dirfd, ".BASE.XXXXXXXX" (hidden: no textfile collector reads
 * it), made by us now: O_EXCL, so nothing planted there (a FIFO, a link) is
 * opened; its name into name. The fd, or -errno. */
static int create_temp(int dirfd, const char *base, char *name, size_t size)
{
	static const char digits[] = "0123456789abcdefghijklmnopqrstuvwxyz";
	unsigned char rnd[8];
	int tries, fd = -EEXIST;
	size_t i, n;

	for (tries = 0; tries < 16 && fd == -EEXIST; tries++) {
		if (getrandom(rnd, sizeof(rnd), GRND_NONBLOCK) != (ssize_t)sizeof(rnd)) {
			uint64_t t = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 20) ^ (uint64_t)tries << 40;

			memcpy(rnd, &t, sizeof(rnd)); /* no entropy yet at boot: unique enough with O_EXCL */
		}
		n = (size_t)snprintf(name, size, ".%s.", base);
		if (n + sizeof(rnd) >= size || n + sizeof(rnd) > NAME_MAX)
			return -ENAMETOOLONG;
		for (i = 0; i < sizeof(rnd); i++)
			name[n + i] = digits[rnd[i] % (sizeof(digits) - 1)];
		name[n + i] = '\0';
		fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
		if (fd < 0)
			fd = -errno;
	}
	return fd;
}

static int write_all(int fd, const char *text, size_t len)
{
	struct stat st;
	size_t off = 0;
	ssize_t n;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	(void)fchmod(fd, 0644); /* readable by the exporter whatever the umask */
	while (off < len) {
		n = write(fd, text + off, len - off);
		if (n < 0 && errno != EINTR)
			return -errno;
		if (n > 0)
			off += (size_t)n;
	}
	return 0;
}

int metrics_write_file(const char *path, const char *text, size_t len, char *why, size_t whylen)
{
	char tmp[NAME_MAX + 1];
	const char *base;
	int dirfd, fd, r;

	dirfd = trust_open_parent(path, "metrics_file", &base, why, whylen);
	if (dirfd < 0)
		return dirfd;
	fd = create_temp(dirfd, base, tmp, sizeof(tmp));
	if (fd < 0) {
		close(dirfd);
		snprintf(why, whylen, "cannot create a file in the directory of %s: %s", path, strerror(-fd));
		return fd;
	}
	r = write_all(fd, text, len);
	if (close(fd) < 0 && r == 0)
		r = -errno;
	if (r == 0 && renameat(dirfd, tmp, dirfd, base) < 0)
		r = -errno;
	if (r < 0) {
		unlinkat(dirfd, tmp, 0);
		snprintf(why, whylen, "cannot write %s: %s", path, strerror(-r));
	}
	close(dirfd);
	return r;
}
