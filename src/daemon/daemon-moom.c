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
 *    below 10% (SwapUsedLimit=90%), a kill inside the leaf group below the
 *    ManagedOOMSwap=kill units that uses the most swap (memory.swap.current,
 *    more than 5% of the swap; a group with memory.oom.group set counts as
 *    a leaf), as systemd-oomd chooses it: where -.slice has the setting,
 *    any group of the system (swap_walk below).
 * User managers (systemd --user) report their units' settings to
 * systemd-oomd's own socket (MOOM_USER_SOCKET) rather than PID 1 taking
 * them: psi-lmkd takes that socket from systemd-oomd.socket (LISTEN_FDS)
 * or binds it, and keeps their units in a set of their own, each sender
 * limited to its own user@UID.service subtree.
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
#include <sys/stat.h>
#include <unistd.h>

#include "daemon-private.h"
#include "cgroup.h"
#include "event.h"
#include "fileio.h"
#include "memory.h"
#include "swapwalk.h"
#include "psi.h"

#define MOOM_TICK_US 1000000ULL
#define MOOM_RETRY_MIN_US 1000000ULL
#define MOOM_RETRY_MAX_US (60 * 1000000ULL)

static void moom_arm(struct daemon *d)
{
	struct daemon_moom *m = &d->moom;
	uint64_t now = event_now_us(), delay = 0;

	if (m->set.n || m->user.n)
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
	snprintf(t->name, sizeof(t->name), "%s", MOOM_TIER_NAME);
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

/* Where the entries of a message go: PID 1's set, or the user managers'
 * with the sender's uid. */
struct entry_ctx {
	struct daemon *d;
	struct moom_set *set;
	bool user;
	unsigned long uid;
	size_t foreign; /* paths outside the sender's subtree */
	size_t refused; /* over MOOM_USER_UNITS_MAX */
};

/* The first pass over a user manager's message: every path its own. */
static int check_user_entry(void *ctx, const struct moom_entry *e)
{
	struct entry_ctx *x = ctx;

	x->foreign += !moom_user_path_ok(x->uid, e->path);
	return 0;
}

static int on_entry(void *ctx, const struct moom_entry *e)
{
	struct entry_ctx *x = ctx;
	struct daemon *d = x->d;
	char name[4 * CONFIG_PATH_MAX + 1];
	int r;

	if (x->user && x->uid != 0 && e->kill && !moom_set_find(x->set, e->path) &&
	    moom_set_count_user(x->set, x->uid) >= MOOM_USER_UNITS_MAX) {
		x->refused++;
		return 0;
	}
	r = moom_set_apply(x->set, e);

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
		struct moom_unit *u = moom_set_find(x->set, e->path);

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
	r = moom_parse(msg, len, &rep, on_entry, &(struct entry_ctx){ .d = d, .set = &m->set });
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

/* ---- the user managers (MOOM_USER_SOCKET) */

struct client_ctx {
	struct daemon *d;
	size_t i;
};

static int on_user_message(void *ctx, const char *msg, size_t len, size_t index)
{
	struct client_ctx *c = ctx;
	struct daemon *d = c->d;
	struct daemon_moom *m = &d->moom;
	struct entry_ctx x = { .d = d, .set = &m->user, .user = true, .uid = m->client_uid[c->i] };
	struct moom_reply rep;
	int r;

	(void)index;
	m->user_messages++;
	r = moom_parse(msg, len, &rep, check_user_entry, &x); /* checked whole first: nothing half-applied */
	if (r < 0) {
		m->bad_messages++;
		log_warn(&d->log, "ManagedOOM: a malformed message of %zu bytes from the user manager of uid %lu: closing "
			 "its connection", len, x.uid);
		return r;
	}
	if (strcmp(rep.method, MOOM_USER_METHOD) != 0) {
		log_debug(&d->log, "ManagedOOM: the user manager of uid %lu called another method than %s: ignored", x.uid,
			  MOOM_USER_METHOD);
		return 0;
	}
	if (x.foreign) {
		m->user_refused++;
		log_warn(&d->log, "ManagedOOM: the user manager of uid %lu named %zu cgroups outside its own "
			 "user@%lu.service: its message is refused", x.uid, x.foreign, x.uid);
		return 0;
	}
	r = moom_parse(msg, len, &rep, on_entry, &x);
	if (rep.rejected)
		log_warn(&d->log, "ManagedOOM: %zu entries of uid %lu's message refused (a bad path, mode or property)",
			 rep.rejected, x.uid);
	if (x.refused) {
		m->user_refused += x.refused;
		log_warn(&d->log, "ManagedOOM: uid %lu has %d managed units: %zu more refused", x.uid, MOOM_USER_UNITS_MAX,
			 x.refused);
	}
	return r;
}

/* The socket of systemd-oomd.socket (passed at start), or one bound here. */
static void moom_listen_start(struct daemon *d)
{
	struct daemon_moom *m = &d->moom;
	char path[CONFIG_SOCKET_MAX];
	int n = moom_passed_fds(getenv("LISTEN_PID"), getenv("LISTEN_FDS"), (long)getpid()), r;

	r = sysroot_unix_path(d->rootfd, MOOM_USER_SOCKET, path, sizeof(path));
	if (r == 0 && !n) {
		if (mkdirat(d->rootfd, MOOM_USER_DIR, 0755) == 0)
			m->ldir_made = true;
		else if (errno != EEXIST)
			r = -errno;
	}
	if (r == 0)
		r = moom_user_listen(path, n, &m->lfd_passed);
	if (r >= 0) {
		m->lfd = r;
		snprintf(m->lpath, sizeof(m->lpath), "%s", path);
		r = event_add(d->epfd, m->lfd, EPOLLIN, TAG(TAG_MOOM, 2));
		if (r < 0)
			close_fd(&m->lfd);
	}
	if (r < 0) {
		log_warn(&d->log, "ManagedOOM: the user managers' units are not served: cannot listen at %s: %s%s",
			 MOOM_USER_SOCKET, strerror(-r), r == -EADDRINUSE ? " (systemd-oomd or another daemon has it)" : "");
		return;
	}
	log_info(&d->log, "ManagedOOM: listening for the user managers at %s (%s)", MOOM_USER_SOCKET,
		 m->lfd_passed ? "systemd-oomd.socket's" : "bound here");
}

/* uid 0, or a uid whose user manager's group exists: who may take a slot */
static bool user_manager_runs(struct daemon *d, unsigned long uid)
{
	char group[96];

	return uid == 0 || (moom_user_manager_group(uid, group, sizeof(group)) > 0 && *d->cg2_mount &&
			    cgroup_exists(d->rootfd, d->cg2_mount, group) == 0);
}

static void moom_accept_all(struct daemon *d)
{
	struct daemon_moom *m = &d->moom;

	for (;;) {
		unsigned long uid;
		size_t i, slot = MOOM_CLIENTS_MAX, same = 0;
		int fd = moom_user_accept(m->lfd, &uid);

		if (fd == -EAGAIN)
			return;
		if (fd < 0) {
			log_warn(&d->log, "ManagedOOM: cannot accept a user manager: %s", strerror(-fd));
			return;
		}
		if (!user_manager_runs(d, uid)) {
			/* a uid with no user manager (a user namespace's
			 * subordinate uid) would only hold a slot */
			m->clients_refused++;
			if (!m->managerless_refused++)
				log_warn(&d->log, "ManagedOOM: a connection of uid %lu refused: no user manager of that uid "
					 "runs (no user@%lu.service group)", uid, uid);
			close(fd);
			continue;
		}
		for (i = 0; i < MOOM_CLIENTS_MAX; i++) {
			if (m->clients[i].fd < 0 && slot == MOOM_CLIENTS_MAX)
				slot = i;
			same += m->clients[i].fd >= 0 && m->client_uid[i] == uid;
		}
		if (slot == MOOM_CLIENTS_MAX || same >= MOOM_CLIENTS_PER_UID) {
			if (m->clients_refused++ == m->managerless_refused)
				log_warn(&d->log, "ManagedOOM: a connection of uid %lu refused: %d user managers at once at most, "
					 "%d of one uid", uid, MOOM_CLIENTS_MAX, MOOM_CLIENTS_PER_UID);
			close(fd);
			continue;
		}
		moom_link_init(&m->clients[slot], "", false);
		m->clients[slot].fd = fd;
		m->clients[slot].msg_max = MOOM_USER_MSG_MAX;
		m->clients[slot].burst = 4;
		m->client_uid[slot] = uid;
		if (event_add(d->epfd, fd, EPOLLIN, TAG(TAG_MOOM, 3 + slot)) < 0) {
			moom_link_close(&m->clients[slot]);
			continue;
		}
		log_info(&d->log, "ManagedOOM: the user manager of uid %lu connected", uid);
	}
}

static void moom_client_event(struct daemon *d, size_t i)
{
	struct daemon_moom *m = &d->moom;
	struct moom_link *l = &m->clients[i];
	int fd = l->fd, r;

	if (fd < 0)
		return;
	r = moom_link_read(l, on_user_message, &(struct client_ctx){ .d = d, .i = i });
	if (r < 0) {
		event_del(d->epfd, fd); /* closed by the link already */
		if (r == -EMSGSIZE)
			log_warn(&d->log, "ManagedOOM: a message over %d bytes from the user manager of uid %lu: closing its "
				 "connection", MOOM_USER_MSG_MAX, m->client_uid[i]);
		else if (r != -ECONNRESET && r != -EBADMSG)
			log_warn(&d->log, "ManagedOOM: reading from the user manager of uid %lu: %s", m->client_uid[i],
				 strerror(-r));
		else
			log_info(&d->log, "ManagedOOM: the user manager of uid %lu disconnected; its units stay while their "
				 "groups exist", m->client_uid[i]);
	}
}

/* A user unit whose group is gone is dropped (its manager ended with it). */
static void moom_user_prune(struct daemon *d)
{
	struct daemon_moom *m = &d->moom;
	size_t i = 0;

	while (i < m->user.n) {
		struct moom_entry e = { .kill = false };
		char dir[2 * CONFIG_PATH_MAX], name[4 * CONFIG_PATH_MAX + 1];

		snprintf(dir, sizeof(dir), "%s%s", d->cg2_mount, m->user.u[i].path);
		if (strcmp(m->user.u[i].path, "/") == 0 || faccessat(d->rootfd, dir + 1, F_OK, 0) == 0 || errno != ENOENT) {
			i++;
			continue;
		}
		snprintf(e.path, sizeof(e.path), "%s", m->user.u[i].path);
		unit_name(name, sizeof(name), e.path);
		log_info(&d->log, "managed unit %s: its group is gone: dropped", name);
		e.prop = MOOM_PRESSURE;
		(void)moom_set_apply(&m->user, &e);
		e.prop = MOOM_SWAP;
		(void)moom_set_apply(&m->user, &e); /* the unit is gone now: the next one is at i */
	}
}

static size_t moom_clients(const struct daemon_moom *m)
{
	size_t i, n = 0;

	for (i = 0; i < MOOM_CLIENTS_MAX; i++)
		n += m->clients[i].fd >= 0;
	return n;
}

static void moom_listen_stop(struct daemon *d)
{
	struct daemon_moom *m = &d->moom;
	size_t i;

	for (i = 0; i < MOOM_CLIENTS_MAX; i++) {
		if (m->clients[i].fd >= 0)
			event_del(d->epfd, m->clients[i].fd);
		moom_link_close(&m->clients[i]);
	}
	if (m->lfd >= 0) {
		event_del(d->epfd, m->lfd);
		close_fd(&m->lfd);
		/* ours: gone with us, so that systemd-oomd.socket can bind it again */
		if (!m->lfd_passed)
			(void)unlink(m->lpath);
	}
	/* and the directory made for it, unless something else lives there now */
	if (m->ldir_made && unlinkat(d->rootfd, MOOM_USER_DIR, AT_REMOVEDIR) == 0)
		m->ldir_made = false;
}

int daemon_moom_start(struct daemon *d, const char *root)
{
	struct daemon_moom *m = &d->moom;
	char path[CONFIG_SOCKET_MAX];
	int r;

	(void)root;
	size_t i;

	m->timerfd = -1;
	m->lfd = -1;
	moom_set_init(&m->set);
	moom_set_init(&m->user);
	moom_link_init(&m->link, "", false);
	for (i = 0; i < MOOM_CLIENTS_MAX; i++)
		moom_link_init(&m->clients[i], "", false);
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
		moom_set_defaults(&m->user, &def);
	}
	moom_link_init(&m->link, path, strcmp(path, MOOM_SOCKET) == 0);
	r = m->timerfd = event_timerfd_new();
	if (r < 0 || (r = event_add(d->epfd, m->timerfd, EPOLLIN, TAG(TAG_MOOM, 1))) < 0) {
		log_err(&d->log, "ManagedOOM: cannot set up its timer: %s", strerror(-r));
		return r;
	}
	m->active = true;
	moom_listen_start(d);
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
	moom_listen_stop(d);
	if (m->timerfd >= 0) {
		event_del(d->epfd, m->timerfd);
		close_fd(&m->timerfd);
	}
	moom_set_free(&m->set);
	moom_set_free(&m->user);
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
		moom_set_defaults(&d->moom.user, &def);
	}
}

/* A decision in the group path (unit u's, or a group below a unit: NULL)
 * for reason (FIRE_MANAGED_*), told in why. */
static void moom_kill(struct daemon *d, const char *path, struct moom_unit *u, enum fire_reason reason, const char *why)
{
	struct daemon_moom *m = &d->moom;
	char dir[2 * CONFIG_PATH_MAX], pressure[2 * CONFIG_PATH_MAX + 32], name[4 * CONFIG_PATH_MAX + 1];
	struct killer_env env;
	struct fired f = { .tier = 0, .why = reason };
	struct mem_info mi;
	uint64_t decisions = d->killer.decisions;
	bool root = strcmp(path, "/") == 0;
	int r;

	unit_name(name, sizeof(name), path);
	snprintf(dir, sizeof(dir), "%s%s", d->cg2_mount, root ? "" : path);
	if (root)
		snprintf(pressure, sizeof(pressure), "/proc/pressure/memory");
	else
		snprintf(pressure, sizeof(pressure), "%s/memory.pressure", dir);
	killer_env_of(d, &env);
	env.cfg = m->cfg;
	env.tiers = m->tiers;
	env.scope = path;
	env.strict_scope = true; /* a kill for this group happens in it, nowhere else */
	env.group = root ? "" : path;
	env.pressure = pressure;
	r = root ? -ENOENT : memory_read_cgroup(d->rootfd, dir, &mi);
	env.memory_cgroup = r == 0 || r == -ENODATA ? dir : ""; /* as a group's tiers (daemon-groups.c) */
	env.oom_group = NULL;
	env.source = NULL;
	m->tiers[0].events++;
	log_notice(&d->log, "%s %s: %s: choosing a victim inside it", u ? "managed unit" : "ManagedOOMSwap: group", name, why);
	killer_act(&d->killer, &env, &f, 1);
	if (d->killer.decisions != decisions) {
		m->kills++;
		if (reason == FIRE_MANAGED_SWAP)
			m->kills_swap++;
		else
			m->kills_pressure++;
		if (u)
			moom_unit_acted(u, event_now_us());
	}
}

static void moom_check_pressure(struct daemon *d, struct moom_set *set, uint64_t now)
{
	size_t i;

	for (i = 0; i < set->n; i++) {
		struct moom_unit *u = &set->u[i];
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
		moom_kill(d, u->path, u, FIRE_MANAGED_PRESSURE, why);
	}
}

static void moom_check_swap(struct daemon *d)
{
	struct daemon_moom *m = &d->moom;
	struct swapwalk w;
	struct mem_info mi;
	char why[320];
	size_t i;
	int r;

	if (!moom_set_count(&m->set, MOOM_SWAP) && !moom_set_count(&m->user, MOOM_SWAP))
		return;
	r = memory_read_system(d->rootfd, &mi);
	if (r < 0) {
		log_debug(&d->log, "ManagedOOMSwap: cannot read the system's memory: %s", strerror(-r));
		return;
	}
	if (!moom_swap_due(m->set.def.swap_used_permyriad, mi.total_bytes, mi.available_bytes, mi.swap_total_bytes,
			   mi.swap_free_bytes))
		return;
	swapwalk_init(&w, d->cfg.trusted_uid_max);
	for (i = 0; i < m->set.n + m->user.n; i++) {
		struct moom_unit *u = i < m->set.n ? &m->set.u[i] : &m->user.u[i - m->set.n];

		if (u->swap && (r = swapwalk_unit(d->rootfd, d->cg2_mount, u->path, &w)) < 0 && r != -ENOENT)
			log_debug(&d->log, "ManagedOOMSwap: cannot walk %s: %s", u->path, strerror(-r));
	}
	if (w.exhausted) {
		if (!m->swap_walk_logged)
			log_warn(&d->log, "ManagedOOMSwap: swap is short, but the groups below the managed units are too "
				 "many to read (%d files a check): no choice while they are", SWAPWALK_READS_MAX);
		m->swap_walk_logged = true;
		return;
	}
	m->swap_walk_logged = false;
	if (w.owner_whole)
		log_debug(&d->log, "ManagedOOMSwap: %zu group(s) where the walk entered a user's subtree counted whole, more than %d groups "
			  "read there", w.owner_whole, SWAPWALK_OWNER_READS_MAX);
	if (!w.best[0] || !moom_swap_candidate(w.best_swap, mi.swap_total_bytes)) {
		log_debug(&d->log, "ManagedOOMSwap: swap is short, but no group below the managed units uses more than %d%% "
			  "of it", MOOM_SWAP_CANDIDATE_PERCENT);
		return;
	}
	snprintf(why, sizeof(why), "available memory %" PRIu64 " MiB and free swap %" PRIu64 " MiB below %u%% "
		 "(SwapUsedLimit %u%%); the group uses %" PRIu64 " MiB of swap, the most of the groups below the units "
		 "with ManagedOOMSwap=kill", mi.available_bytes >> 20, mi.swap_free_bytes >> 20,
		 (10000 - m->set.def.swap_used_permyriad) / 100, m->set.def.swap_used_permyriad / 100, w.best_swap >> 20);
	moom_kill(d, w.best, NULL, FIRE_MANAGED_SWAP, why);
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
			moom_user_prune(d);
			moom_check_pressure(d, &m->set, now);
			moom_check_pressure(d, &m->user, now);
			moom_check_swap(d);
		}
		moom_arm(d);
		return;
	}
	if (index == 2) {
		moom_accept_all(d);
		return;
	}
	if (index >= 3) {
		if (index - 3 < MOOM_CLIENTS_MAX)
			moom_client_event(d, index - 3);
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
		   " bad_messages=%" PRIu64 " connects=%" PRIu64 " decisions=%" PRIu64 " kills_pressure=%" PRIu64
		   " kills_swap=%" PRIu64, m->link.fd >= 0 ? "yes" : "no", m->set.n, moom_set_count(&m->set, MOOM_PRESSURE),
		   moom_set_count(&m->set, MOOM_SWAP), m->messages, m->bad_messages, m->connects, m->kills, m->kills_pressure,
		   m->kills_swap);
	log_notice(&d->log, "status managed_oom_users listening=%s user_units=%zu connected=%zu messages=%" PRIu64
		   " refused=%" PRIu64 " connections_refused=%" PRIu64 " no_user_manager=%" PRIu64,
		   m->lfd < 0 ? "no" : m->lfd_passed ? "passed" : "bound", m->user.n, moom_clients(m), m->user_messages,
		   m->user_refused, m->clients_refused, m->managerless_refused);
	for (i = 0; i < m->set.n + m->user.n; i++) {
		const struct moom_unit *u = i < m->set.n ? &m->set.u[i] : &m->user.u[i - m->set.n];

		unit_name(name, sizeof(name), u->path);
		log_notice(&d->log, "status managed_unit=%s pressure=%s limit=%u.%02u%% duration=%" PRIu64 "s avg10=%u.%02u%% "
			   "swap=%s", name, u->pressure ? "kill" : "auto", u->limit_permyriad / 100, u->limit_permyriad % 100,
			   u->duration_us / 1000000, u->last_avg10 / 100, u->last_avg10 % 100, u->swap ? "kill" : "auto");
	}
}
