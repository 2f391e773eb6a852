/* SPDX-License-Identifier: MIT */
/* daemon-moom: systemd_managed_oom = true. The units' ManagedOOM settings
 * come from PID 1 over varlink (moomlink.h, moom.h), as systemd-oomd takes
 * them, and psi-lmkd acts on them as systemd-oomd does:
 *  - ManagedOOMMemoryPressure=kill: every second, the "some avg10" of the
 *    unit's memory.pressure; above ManagedOOMMemoryPressureLimit= (60% by
 *    default) at every check for the duration (30 s; newer systemd sends
 *    ManagedOOMMemoryPressureDurationSec=), the killer chooses a victim
 *    inside the unit's group and nowhere else;
 *  - ManagedOOMSwap=kill: when available memory and free swap are both
 *    below 10% (SwapUsedLimit=90%), a kill inside the managed unit that
 *    uses the most swap.
 * The kills are decisions of one tier of a configuration of their own
 * (managed-oom: band -999, the daemon's shields and victim order, kill_cgroup,
 * systemd_oom_marks on, so that the unit's Result says oom-kill). The
 * timer runs only while some unit is managed or a reconnect is due: an
 * idle daemon without managed units never wakes for it. */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "daemon-private.h"
#include "event.h"
#include "fileio.h"
#include "memory.h"
#include "psi.h"

#define MOOM_TICK_US 1000000ULL
#define MOOM_RETRY_MIN_US 1000000ULL
#define MOOM_RETRY_MAX_US (60 * 1000000ULL)

static void moom_arm(struct daemon *d)
{
	struct daemon_moom *m = &d->moom;
	uint64_t now = event_now_us(), delay = 0;

	if (m->set.n)
		delay = MOOM_TICK_US;
	if (m->link.fd < 0) {
		uint64_t r = m->retry_at_us > now ? m->retry_at_us - now : 1;

		if (!delay || r < delay)
			delay = r;
	}
	event_timer_arm(m->timerfd, delay);
}

static void moom_retry_later(struct daemon *d, bool slow)
{
	struct daemon_moom *m = &d->moom;

	m->backoff_us = slow ? MOOM_RETRY_MAX_US
			: !m->backoff_us ? MOOM_RETRY_MIN_US
			: m->backoff_us * 2 > MOOM_RETRY_MAX_US ? MOOM_RETRY_MAX_US : m->backoff_us * 2;
	m->retry_at_us = event_now_us() + m->backoff_us;
}

/* The configuration of the managed kills: the daemon's, one tier. */
static void moom_build_cfg(struct daemon *d)
{
	struct config *c = d->moom.cfg;
	struct tier_config *t = &c->tiers[0];

	*c = d->cfg;
	c->n_tiers = 1;
	c->systemd_oom_marks = true;
	memset(t, 0, sizeof(*t));
	snprintf(t->name, sizeof(t->name), "managed-oom");
	t->min_oom_score_adj = -999;
	t->kill_signal = SIGKILL;
	t->term_timeout_us = CONFIG_DEFAULT_TERM_TIMEOUT_US;
	t->kill_cgroup = true;
	t->min_events = 1;
}

/* oomd.conf's drop-in directories, the first masking a name in the later ones */
static const char *const oomd_dropin_dirs[] = { "etc/systemd/oomd.conf.d", "run/systemd/oomd.conf.d",
						"usr/local/lib/systemd/oomd.conf.d", "usr/lib/systemd/oomd.conf.d",
						"lib/systemd/oomd.conf.d" };
#define OOMD_DROPINS_MAX 64
#define OOMD_CONF_MAX 16384

static int by_name(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* Reads one file under the root into def; true if it was read. */
static bool oomd_conf_file(struct daemon *d, const char *rel, struct moom_defaults *def)
{
	char text[OOMD_CONF_MAX];
	ssize_t n = read_file_at(d->rootfd, rel, text, sizeof(text));

	if (n < 0) {
		if (n != -ENOENT)
			log_warn(&d->log, "ManagedOOM: cannot read /%s: %s", rel, strerror((int)-n));
		return false;
	}
	if (moom_defaults_parse(def, text) > 0)
		log_warn(&d->log, "ManagedOOM: /%s: a value systemd-oomd would refuse is ignored", rel);
	return true;
}

/* systemd-oomd's defaults as its oomd.conf sets them: /etc/systemd/oomd.conf,
 * then the *.conf drop-ins of oomd_dropin_dirs, a name in an earlier
 * directory masking it in the later ones, in the order of their names. */
static void oomd_conf_read(struct daemon *d, struct moom_defaults *def)
{
	char names[OOMD_DROPINS_MAX][NAME_MAX + 1], from[OOMD_DROPINS_MAX];
	char rel[CONFIG_PATH_MAX];
	size_t n = 0, i, k, files = 0;

	moom_defaults_init(def);
	files += oomd_conf_file(d, "etc/systemd/oomd.conf", def);
	for (k = 0; k < sizeof(oomd_dropin_dirs) / sizeof(oomd_dropin_dirs[0]); k++) {
		int fd = openat(d->rootfd, oomd_dropin_dirs[k], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		struct dirent *e;
		DIR *dir;

		if (fd < 0)
			continue;
		dir = fdopendir(fd);
		if (!dir) {
			close(fd);
			continue;
		}
		while ((e = readdir(dir))) {
			size_t len = strlen(e->d_name);
			bool seen = false;

			if (e->d_name[0] == '.' || len < 6 || strcmp(e->d_name + len - 5, ".conf") != 0)
				continue;
			for (i = 0; i < n && !seen; i++)
				seen = strcmp(names[i], e->d_name) == 0;
			if (seen)
				continue;
			if (n == OOMD_DROPINS_MAX) {
				log_warn(&d->log, "ManagedOOM: more than %d oomd.conf drop-ins: the rest are ignored",
					 OOMD_DROPINS_MAX);
				break;
			}
			memcpy(names[n], e->d_name, len + 1);
			from[n++] = (char)k;
		}
		closedir(dir);
	}
	/* sort the names, keeping each one's directory */
	for (i = 1; i < n; i++)
		for (k = i; k > 0 && by_name(names[k - 1], names[k]) > 0; k--) {
			char t[NAME_MAX + 1], f = from[k];

			memcpy(t, names[k], sizeof(t));
			memcpy(names[k], names[k - 1], sizeof(t));
			memcpy(names[k - 1], t, sizeof(t));
			from[k] = from[k - 1];
			from[k - 1] = f;
		}
	for (i = 0; i < n; i++) {
		/* a name is at most NAME_MAX bytes: the precision tells the compiler */
		int w = snprintf(rel, sizeof(rel), "%s/%.*s", oomd_dropin_dirs[(size_t)from[i]], NAME_MAX, names[i]);

		if (w < 0 || (size_t)w >= sizeof(rel))
			continue;
		files += oomd_conf_file(d, rel, def);
	}
	log_info(&d->log, "ManagedOOM: oomd.conf (%zu files): DefaultMemoryPressureLimit=%u.%02u%%, "
		 "DefaultMemoryPressureDurationSec=%" PRIu64 "s, SwapUsedLimit=%u.%02u%%", files,
		 def->limit_permyriad / 100, def->limit_permyriad % 100, def->duration_us / 1000000,
		 def->swap_used_permyriad / 100, def->swap_used_permyriad % 100);
}

static void unit_name(char *buf, size_t size, const char *path)
{
	log_escape_token(buf, size, path); /* names come from units, groups may be a user's */
}

static int on_entry(void *ctx, const struct moom_entry *e)
{
	struct daemon *d = ctx;
	char name[4 * CONFIG_PATH_MAX + 1];
	int r = moom_set_apply(&d->moom.set, e);

	if (r == -ENOSPC) {
		if (!d->moom.full_logged)
			log_err(&d->log, "ManagedOOM: more than %d managed units: the others are not watched", MOOM_UNITS_MAX);
		d->moom.full_logged = true;
		return 0;
	}
	if (r < 0)
		return r;
	if (r == 0)
		return 0;
	unit_name(name, sizeof(name), e->path);
	if (e->prop == MOOM_SWAP)
		log_info(&d->log, "managed unit %s: ManagedOOMSwap=%s", name, e->kill ? "kill" : "auto");
	else if (!e->kill)
		log_info(&d->log, "managed unit %s: ManagedOOMMemoryPressure=auto", name);
	else {
		struct moom_unit *u = moom_set_find(&d->moom.set, e->path);

		if (u)
			log_info(&d->log, "managed unit %s: ManagedOOMMemoryPressure=kill, limit %u.%02u%%%s, for %" PRIu64
				 " s%s", name, u->limit_permyriad / 100, u->limit_permyriad % 100,
				 e->limit_permyriad ? "" : " (the default)", u->duration_us / 1000000,
				 e->duration_us ? "" : " (the default)");
	}
	return 0;
}

static int on_message(void *ctx, const char *msg, size_t len, size_t index)
{
	struct daemon *d = ctx;
	struct daemon_moom *m = &d->moom;
	struct moom_reply rep;
	int r;

	m->messages++;
	r = moom_parse(msg, len, &rep, NULL, NULL); /* checked whole first: nothing half-applied */
	if (r < 0) {
		m->bad_messages++;
		log_err(&d->log, "ManagedOOM: a malformed message of %zu bytes from PID 1: closing the connection", len);
		return r;
	}
	if (rep.error) {
		char id[4 * sizeof(rep.error_id) + 1];

		log_escape_token(id, sizeof(id), rep.error_id);
		if (strcmp(rep.error_id, "org.varlink.service.PermissionDenied") == 0)
			log_err(&d->log, "ManagedOOM: PID 1 refused the subscription (%s): it serves only a process of the unit "
				"named systemd-oomd.service (see systemd_managed_oom in psi-lmkd.conf(5)); retrying every %llu s",
				id, MOOM_RETRY_MAX_US / 1000000);
		else
			log_err(&d->log, "ManagedOOM: PID 1 answered with the error %s", id);
		m->denied = true;
		return -EPROTO;
	}
	if (index == 0)
		moom_set_begin(&m->set);
	r = moom_parse(msg, len, &rep, on_entry, d);
	if (index == 0) {
		moom_set_end(&m->set);
		log_notice(&d->log, "ManagedOOM: subscribed to PID 1's units: %zu managed for memory pressure, %zu for swap",
			   moom_set_count(&m->set, MOOM_PRESSURE), moom_set_count(&m->set, MOOM_SWAP));
		m->backoff_us = 0;
		m->denied = false;
	}
	if (rep.rejected)
		log_warn(&d->log, "ManagedOOM: %zu entries of PID 1's message refused (a bad path, mode or property)",
			 rep.rejected);
	if (r < 0)
		return r;
	if (!rep.continues) {
		log_warn(&d->log, "ManagedOOM: PID 1 ended the subscription");
		return -ECONNRESET;
	}
	return 0;
}

static void moom_connect(struct daemon *d)
{
	struct daemon_moom *m = &d->moom;
	int r = moom_link_connect(&m->link);

	if (r < 0) {
		if (r != m->last_err)
			log_warn(&d->log, "ManagedOOM: cannot subscribe at %s: %s%s; retrying", m->link.path, strerror(-r),
				 r == -EPERM ? " (the socket is not PID 1's)" : "");
		m->last_err = r;
		moom_retry_later(d, false);
		return;
	}
	m->last_err = 0;
	r = event_add(d->epfd, m->link.fd, EPOLLIN, TAG(TAG_MOOM, 0));
	if (r < 0) {
		log_err(&d->log, "ManagedOOM: cannot watch the connection: %s", strerror(-r));
		moom_link_close(&m->link);
		moom_retry_later(d, false);
		return;
	}
	m->connects++;
	log_info(&d->log, "ManagedOOM: connected to %s", m->link.path);
}

int daemon_moom_start(struct daemon *d, const char *root)
{
	struct daemon_moom *m = &d->moom;
	char path[CONFIG_SOCKET_MAX];
	int r;

	(void)root;
	m->timerfd = -1;
	moom_set_init(&m->set);
	moom_link_init(&m->link, "", false);
	if (!d->cfg.systemd_managed_oom)
		return 0;
	r = sysroot_unix_path(d->rootfd, MOOM_SOCKET, path, sizeof(path));
	if (r < 0) {
		log_err(&d->log, "ManagedOOM: the socket path does not fit: %s", strerror(-r));
		return r;
	}
	m->cfg = malloc(sizeof(*m->cfg));
	if (!m->cfg)
		return -ENOMEM;
	moom_build_cfg(d);
	{
		struct moom_defaults def;

		oomd_conf_read(d, &def);
		moom_set_defaults(&m->set, &def);
	}
	moom_link_init(&m->link, path, strcmp(path, MOOM_SOCKET) == 0);
	r = m->timerfd = event_timerfd_new();
	if (r < 0 || (r = event_add(d->epfd, m->timerfd, EPOLLIN, TAG(TAG_MOOM, 1))) < 0) {
		log_err(&d->log, "ManagedOOM: cannot set up its timer: %s", strerror(-r));
		return r;
	}
	m->active = true;
	moom_connect(d);
	moom_arm(d);
	return 0;
}

void daemon_moom_stop(struct daemon *d)
{
	struct daemon_moom *m = &d->moom;

	if (m->link.fd >= 0)
		event_del(d->epfd, m->link.fd);
	moom_link_close(&m->link);
	if (m->timerfd >= 0) {
		event_del(d->epfd, m->timerfd);
		close_fd(&m->timerfd);
	}
	moom_set_free(&m->set);
	free(m->cfg);
	m->cfg = NULL;
	m->active = false;
}

void daemon_moom_reload(struct daemon *d)
{
	if (d->moom.active && !d->cfg.systemd_managed_oom) {
		log_notice(&d->log, "ManagedOOM: systemd_managed_oom is off now: the units' settings are dropped");
		daemon_moom_stop(d);
	} else if (!d->moom.active && d->cfg.systemd_managed_oom) {
		(void)daemon_moom_start(d, NULL);
	} else if (d->moom.active) {
		struct moom_defaults def;

		moom_build_cfg(d);
		oomd_conf_read(d, &def); /* a reload reads oomd.conf again, as systemctl reload systemd-oomd would */
		moom_set_defaults(&d->moom.set, &def);
	}
}

/* A decision in unit u, its reason in why. */
static void moom_kill(struct daemon *d, struct moom_unit *u, const char *why)
{
	struct daemon_moom *m = &d->moom;
	char dir[2 * CONFIG_PATH_MAX], pressure[2 * CONFIG_PATH_MAX + 32], name[4 * CONFIG_PATH_MAX + 1];
	struct killer_env env;
	struct fired f = { .tier = 0, .why = FIRE_PSI };
	struct mem_info mi;
	uint64_t decisions = d->killer.decisions;
	bool root = strcmp(u->path, "/") == 0;
	int r;

	unit_name(name, sizeof(name), u->path);
	snprintf(dir, sizeof(dir), "%s%s", d->cg2_mount, root ? "" : u->path);
	if (root)
		snprintf(pressure, sizeof(pressure), "/proc/pressure/memory");
	else
		snprintf(pressure, sizeof(pressure), "%s/memory.pressure", dir);
	killer_env_of(d, &env);
	env.cfg = m->cfg;
	env.tiers = m->tiers;
	env.scope = u->path;
	env.strict_scope = true; /* a kill for this unit happens in this unit, nowhere else */
	env.group = root ? "" : u->path;
	env.pressure = pressure;
	r = root ? -ENOENT : memory_read_cgroup(d->rootfd, dir, &mi);
	env.memory_cgroup = r == 0 || r == -ENODATA ? dir : ""; /* as a group's tiers (daemon-groups.c) */
	env.oom_group = NULL;
	env.source = NULL;
	m->tiers[0].events++;
	log_notice(&d->log, "managed unit %s: %s: choosing a victim inside it", name, why);
	killer_act(&d->killer, &env, &f, 1);
	if (d->killer.decisions != decisions) {
		m->kills++;
		moom_unit_acted(u, event_now_us());
	}
}

static void moom_check_pressure(struct daemon *d, uint64_t now)
{
	struct daemon_moom *m = &d->moom;
	size_t i;

	for (i = 0; i < m->set.n; i++) {
		struct moom_unit *u = &m->set.u[i];
		char file[2 * CONFIG_PATH_MAX], text[512], why[256], name[4 * CONFIG_PATH_MAX + 1];
		struct psi_stats st;
		ssize_t n;

		if (!u->pressure)
			continue;
		if (strcmp(u->path, "/") == 0)
			snprintf(file, sizeof(file), "/proc/pressure/memory");
		else
			snprintf(file, sizeof(file), "%s%s/memory.pressure", d->cg2_mount, u->path);
		n = read_file_at(d->rootfd, file + (file[0] == '/'), text, sizeof(text)); /* under the root */
		if (n < 0 || psi_parse(text, &st) < 0) {
			int e = n < 0 ? (int)n : -EBADMSG;

			log_debug(&d->log, "managed unit: cannot read %s: %s", file, strerror(-e));
			if (e != u->read_err && e != -ENOENT) {
				unit_name(name, sizeof(name), u->path);
				log_warn(&d->log, "managed unit %s: cannot read its memory pressure: %s", name, strerror(-e));
			}
			u->read_err = e;
			u->above = false;
			continue;
		}
		u->read_err = 0;
		if (!moom_pressure_due(u, st.some.avg10, now))
			continue;
		snprintf(why, sizeof(why), "memory pressure avg10 %u.%02u%% above ManagedOOMMemoryPressureLimit %u.%02u%% for %"
			 PRIu64 " s", u->last_avg10 / 100, u->last_avg10 % 100, u->limit_permyriad / 100,
			 u->limit_permyriad % 100, u->duration_us / 1000000);
		moom_kill(d, u, why);
	}
}

static void moom_check_swap(struct daemon *d)
{
	struct daemon_moom *m = &d->moom;
	struct moom_unit *best = NULL;
	uint64_t best_swap = 0;
	struct mem_info mi;
	char why[256];
	size_t i;

	int r;

	if (!moom_set_count(&m->set, MOOM_SWAP))
		return;
	r = memory_read_system(d->rootfd, &mi);
	if (r < 0) {
		log_debug(&d->log, "ManagedOOMSwap: cannot read the system's memory: %s", strerror(-r));
		return;
	}
	if (!moom_swap_due(m->set.def.swap_used_permyriad, mi.total_bytes, mi.available_bytes, mi.swap_total_bytes,
			   mi.swap_free_bytes))
		return;
	for (i = 0; i < m->set.n; i++) {
		struct moom_unit *u = &m->set.u[i];
		char dir[2 * CONFIG_PATH_MAX];
		uint64_t v;

		if (!u->swap)
			continue;
		if (strcmp(u->path, "/") == 0) {
			v = mi.swap_total_bytes - mi.swap_free_bytes;
		} else {
			snprintf(dir, sizeof(dir), "%s%s", d->cg2_mount, u->path);
			if (memory_read_value(d->rootfd, dir, "memory.swap.current", false, &v) < 0)
				continue;
		}
		if (v > best_swap) {
			best_swap = v;
			best = u;
		}
	}
	if (!best)
		return;
	snprintf(why, sizeof(why), "available memory %" PRIu64 " MiB and free swap %" PRIu64 " MiB below %u%% "
		 "(SwapUsedLimit %u%%), the unit uses %" PRIu64 " MiB of swap, the most of the units with ManagedOOMSwap=kill",
		 mi.available_bytes >> 20, mi.swap_free_bytes >> 20, (10000 - m->set.def.swap_used_permyriad) / 100,
		 m->set.def.swap_used_permyriad / 100, best_swap >> 20);
	moom_kill(d, best, why);
}

void daemon_moom_event(struct daemon *d, size_t index, uint32_t events)
{
	struct daemon_moom *m = &d->moom;
	int r;

	(void)events;
	if (!m->active)
		return;
	if (index == 1) {
		uint64_t now = event_now_us();

		if (!event_timer_expired(m->timerfd))
			return;
		if (m->link.fd < 0 && now >= m->retry_at_us)
			moom_connect(d);
		if (!d->quit) {
			moom_check_pressure(d, now);
			moom_check_swap(d);
		}
		moom_arm(d);
		return;
	}
	if (m->link.fd < 0)
		return;
	{
		int fd = m->link.fd;

		r = moom_link_read(&m->link, on_message, d);
		if (r < 0) {
			event_del(d->epfd, fd); /* closed by the link already */
			if (r == -ECONNRESET && !m->denied)
				log_warn(&d->log, "ManagedOOM: the connection to PID 1 ended (a daemon-reexec?): reconnecting; the "
					 "units keep their last settings until then");
			else if (r == -EMSGSIZE)
				log_err(&d->log, "ManagedOOM: a message over %d bytes from PID 1: closing the connection", MOOM_MSG_MAX);
			else if (r != -ECONNRESET && r != -EPROTO && r != -EBADMSG)
				log_err(&d->log, "ManagedOOM: reading from PID 1: %s", strerror(-r));
			moom_retry_later(d, m->denied);
		}
	}
	moom_arm(d);
}

void daemon_moom_log_status(struct daemon *d)
{
	struct daemon_moom *m = &d->moom;
	char name[4 * CONFIG_PATH_MAX + 1];
	size_t i;

	if (!m->active)
		return;
	log_notice(&d->log, "status managed_oom connected=%s units=%zu pressure=%zu swap=%zu messages=%" PRIu64
		   " bad_messages=%" PRIu64 " connects=%" PRIu64 " decisions=%" PRIu64, m->link.fd >= 0 ? "yes" : "no",
		   m->set.n, moom_set_count(&m->set, MOOM_PRESSURE), moom_set_count(&m->set, MOOM_SWAP), m->messages,
		   m->bad_messages, m->connects, m->kills);
	for (i = 0; i < m->set.n; i++) {
		const struct moom_unit *u = &m->set.u[i];

		unit_name(name, sizeof(name), u->path);
		log_notice(&d->log, "status managed_unit=%s pressure=%s limit=%u.%02u%% duration=%" PRIu64 "s avg10=%u.%02u%% "
			   "swap=%s", name, u->pressure ? "kill" : "auto", u->limit_permyriad / 100, u->limit_permyriad % 100,
			   u->duration_us / 1000000, u->last_avg10 / 100, u->last_avg10 % 100, u->swap ? "kill" : "auto");
	}
}
