/* SPDX-License-Identifier: MIT */
/* lmkd-server: the lmkd socket's transport, its requests applied to the
 * registry and /proc, and the kill reports. See lmkd-server.h. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "lines.h"
#include "cgroup.h"
#include "escape.h"
#include "fileio.h"
#include "lmkd-kill.h"
#include "lmkd-server.h"
#include "memory.h"
#include "reaper.h"
#include "syscalls.h"

/* the victim filter of a choice in c's context, down to min_adj */
static struct victim_filter filter_of(const struct pick_ctx *c, int min_adj)
{
	struct victim_filter f = { .policy = c->policy, .min_adj = min_adj, .self = c->self, .scope = c->scope,
				   .exclude = c->exclude, .n_exclude = c->n_exclude,
				   .trusted_uid_max = c->trusted_uid_max, .order = c->order,
				   .domain_kb = c->domain_kb };

	return f;
}

static int source_choose(void *ctx, const struct pick_ctx *c, int min_adj, struct kill_pick *p,
			 struct procfs_scan_stats *st);
static void source_done(void *ctx, const struct proc_info *v, const struct tier_config *t, enum fire_reason why,
			int result);

/* ------------------------------------------------------------------ transport */

static int set_passcred(int fd)
{
	int one = 1;

	return setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) < 0 ? -errno : 0;
}

/* init's socket: a decimal fd number, open, a SEQPACKET socket */
static int inherited_fd(const char *env_fd, const struct log *log)
{
	char *end;
	long fd;
	int type = 0;
	socklen_t len = sizeof(type);

	errno = 0;
	fd = strtol(env_fd, &end, 10);
	if (errno || end == env_fd || *end || fd < 0 || fd > INT32_MAX || fcntl((int)fd, F_GETFD) < 0) {
		log_err(log, "%s=\"%s\" does not name an open file descriptor", LMKD_SOCKET_ENV, env_fd);
		return -EBADF;
	}
	if (getsockopt((int)fd, SOL_SOCKET, SO_TYPE, &type, &len) < 0 || type != SOCK_SEQPACKET) {
		log_err(log, "%s=%ld is not a SOCK_SEQPACKET socket", LMKD_SOCKET_ENV, fd);
		return -ENOTSOCK;
	}
	if (fcntl((int)fd, F_SETFD, FD_CLOEXEC) < 0 || fcntl((int)fd, F_SETFL, O_NONBLOCK) < 0)
		return -errno;
	return (int)fd;
}

/* a new socket at path, replacing a stale socket but nothing else */
static int bound_fd(const char *path, const struct log *log)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;
	mode_t old_mask;
	int fd, r;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		log_err(log, "lmkd_socket %s: the path is too long for a socket", path);
		return -ENAMETOOLONG;
	}
	strcpy(sa.sun_path, path);
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			log_err(log, "lmkd_socket %s exists and is not a socket: not replaced", path);
			return -EEXIST;
		}
		unlink(path);
	}
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	/* created 0660 under a umask that leaves no window in which others may
	 * connect; the chmod then undoes a stricter umask of the caller's */
	old_mask = umask(0117);
	r = bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ? -errno : 0;
	umask(old_mask);
	if (r == 0 && chmod(path, 0660) < 0)
		r = -errno;
	if (r < 0) {
		log_err(log, "lmkd_socket %s: %s", path, strerror(-r));
		close(fd);
		return r;
	}
	return fd;
}

int lmkd_server_open(struct lmkd_server *s, const char *env_fd, const char *path, const struct lmkd_server_ops *ops,
		     void *ctx, const struct log *log, int rootfd, int procfd)
{
	size_t i;
	int r;

	struct rlimit rl;

	memset(s, 0, sizeof(*s));
	s->ops = ops;
	s->ctx = ctx;
	s->log = log;
	s->rootfd = rootfd;
	s->procfd = procfd;
	lmkd_registry_init(&s->reg);
	s->source = (struct kill_source){ .choose = source_choose, .done = source_done, .ctx = s };
	for (i = 0; i < LMKD_CLIENTS_MAX; i++)
		s->clients[i].fd = -1;
	s->pidfd_limit = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < INT32_MAX
				 ? (int)rl.rlim_cur - LMKD_FD_RESERVE : INT32_MAX;
		s->inherited = env_fd != NULL;
	s->listen_fd = env_fd ? inherited_fd(env_fd, log) : bound_fd(path, log);
	if (s->listen_fd < 0)
		return s->listen_fd;
	if (!env_fd)
		snprintf(s->path, sizeof(s->path), "%s", path);
	r = set_passcred(s->listen_fd);
	if (r == 0 && listen(s->listen_fd, LMKD_LISTEN_BACKLOG) < 0)
		r = -errno;
	if (r == 0)
		r = ops->watch(ctx, s->listen_fd, LMKD_FD_LISTEN, 0);
	if (r < 0) {
		log_err(log, "cannot serve the lmkd socket: %s", strerror(-r));
		lmkd_server_close(s);
		return r;
	}
	log_notice(log, "serving the lmkd socket %s%s%s: victims come from the processes registered there",
		   env_fd ? "inherited from init (" LMKD_SOCKET_ENV "=" : s->path, env_fd ? env_fd : "", env_fd ? ")" : "");
	return 0;
}

/* The count of the bad-input lines of kind k held back since the last one logged. */
static void bad_flush(struct lmkd_server *s, enum lmkd_bad_kind k, uint64_t now)
{
	static const char *const what[LMKD_BAD_KINDS] = {
		[LMKD_BAD_PACKET] = "malformed packets", [LMKD_BAD_PRIORITY] = "refused priorities",
		[LMKD_BAD_THREAD] = "priorities of threads", [LMKD_BAD_TARGET] = "early TARGETs",
	};
	struct lmkd_bad_log *b = &s->bad[k];

	if (!b->unlogged)
		return;
	log_warn(s->log, "lmkd socket: %" PRIu64 " more %s ignored in the last %" PRIu64 " s, not logged one by one "
		 "(the last from client pid %d)", b->unlogged, what[k], (now - b->logged_us + 999999) / 1000000,
		 (int)b->unlogged_pid);
	b->unlogged = 0;
}

/* A line about bad input of kind k from client pid: logged if none of
 * that kind was in the last LMKD_BAD_LOG_INTERVAL_US (after the count of
 * those held back), else counted. A client can send thousands a second. */
static void __attribute__((format(printf, 4, 5)))
bad_input(struct lmkd_server *s, enum lmkd_bad_kind k, pid_t pid, const char *fmt, ...)
{
	struct lmkd_bad_log *b = &s->bad[k];
	uint64_t now = s->ops->now_us(s->ctx);
	va_list ap;

	if (b->logged && now - b->logged_us < LMKD_BAD_LOG_INTERVAL_US) {
		b->unlogged++;
		b->unlogged_pid = pid;
		return;
	}
	bad_flush(s, k, now);
	b->logged = true;
	b->logged_us = now;
	va_start(ap, fmt);
	log_vmsg(s->log, LOG_WARNING, fmt, ap);
	va_end(ap);
}

static void client_close(struct lmkd_server *s, struct lmkd_client *c, const char *why)
{
	if (c->fd < 0)
		return;
	log_info(s->log, "lmkd socket: client pid %d closed (%s) after %" PRIu64 " packets; its records stay, unowned",
		 (int)c->pid, why, c->packets);
	s->ops->unwatch(s->ctx, c->fd);
	close(c->fd);
	if (c->pid)
		lmkd_registry_disown(&s->reg, c->pid);
	memset(c, 0, sizeof(*c));
	c->fd = -1;
}

void lmkd_server_close(struct lmkd_server *s)
{
	size_t i;

	if (s->wd_on)
		lmkd_watchdog_stop(&s->wd);
	s->wd_on = false;
	for (i = 0; i < LMKD_CLIENTS_MAX; i++)
		client_close(s, &s->clients[i], "the daemon stops");
	for (i = 0; i < LMKD_BAD_KINDS; i++)
		if (s->bad[i].unlogged)
			bad_flush(s, (enum lmkd_bad_kind)i, s->ops->now_us(s->ctx));
	if (s->listen_fd >= 0) {
		s->ops->unwatch(s->ctx, s->listen_fd);
		close(s->listen_fd);
		if (s->path[0])
			unlink(s->path);
	}
	s->listen_fd = -1;
	lmkd_registry_free(&s->reg);
}

/* A new client; with every slot taken, lmkd drops them all (the framework
 * reconnects at once) and gives the newcomer the first. */
static void accept_client(struct lmkd_server *s)
{
	struct lmkd_client *c = NULL;
	struct ucred cred;
	socklen_t len = sizeof(cred);
	size_t i;
	int fd = accept4(s->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK), r;

	if (fd < 0) {
		if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
			log_warn(s->log, "lmkd socket: accept: %s", strerror(errno));
		return;
	}
	for (i = 0; i < LMKD_CLIENTS_MAX && !c; i++)
		if (s->clients[i].fd < 0)
			c = &s->clients[i];
	if (!c) {
		log_warn(s->log, "lmkd socket: a %s client: dropping all %d, as lmkd does", "4th", LMKD_CLIENTS_MAX);
		for (i = 0; i < LMKD_CLIENTS_MAX; i++)
			client_close(s, &s->clients[i], "evicted by a new client");
		c = &s->clients[0];
	}
	s->client_serial = (s->client_serial + 1) & LMKD_CLIENT_SERIAL_MASK;
	if (!s->client_serial)
		s->client_serial = 1;
	r = set_passcred(fd);
	if (r == 0)
		r = s->ops->watch(s->ctx, fd, LMKD_FD_CLIENT, LMKD_CLIENT_INDEX(s->client_serial, c - s->clients));
	if (r < 0) {
		log_err(s->log, "lmkd socket: cannot take a client: %s", strerror(-r));
		close(fd);
		return;
	}
	c->fd = fd;
	c->serial = s->client_serial;
	/* for the log until its first packet says who sent it */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0)
		c->pid = cred.pid;
	log_info(s->log, "lmkd socket: client pid %d connected (slot %zu)", (int)c->pid, (size_t)(c - s->clients));
}

/* One datagram with its sender's credentials. Returns its real length (it
 * may exceed size: MSG_TRUNC), 0 at EOF or for an empty datagram, -EAGAIN
 * when none is waiting, -ENOMSG without credentials, or -errno. */
static ssize_t recv_packet(int fd, uint8_t *buf, size_t size, struct ucred *cred)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(struct ucred))];
	} ctl;
	struct iovec iov = { .iov_base = buf, .iov_len = size };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = &ctl, .msg_controllen = sizeof(ctl) };
	struct cmsghdr *h;
	ssize_t n;

	do
		n = recvmsg(fd, &m, MSG_TRUNC | MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	for (h = CMSG_FIRSTHDR(&m); h; h = CMSG_NXTHDR(&m, h))
		if (h->cmsg_level == SOL_SOCKET && h->cmsg_type == SCM_CREDENTIALS &&
		    h->cmsg_len >= CMSG_LEN(sizeof(*cred))) {
			memcpy(cred, CMSG_DATA(h), sizeof(*cred));
			return n;
		}
	return n == 0 ? 0 : -ENOMSG;
}

/* A 0-byte receive is the end of the stream or an empty datagram: the
 * peer's close shows as a hang-up at once. */
static bool peer_gone(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLRDHUP };

	return poll(&p, 1, 0) == 1 && (p.revents & (POLLHUP | POLLRDHUP | POLLERR));
}

static void client_readable(struct lmkd_server *s, struct lmkd_client *c, uint32_t events)
{
	uint8_t buf[LMKD_PACKET_MAX];
	struct ucred cred = { 0 };
	unsigned i;
	ssize_t n;

	for (i = 0; i < LMKD_BATCH_MAX && c->fd >= 0; i++) {
		n = recv_packet(c->fd, buf, sizeof(buf), &cred);
		if (n == -EAGAIN)
			break;
		if (n == 0 && ((events & (EPOLLHUP | EPOLLRDHUP)) || peer_gone(c->fd))) {
			client_close(s, c, "hang-up");
			return;
		}
		if (n == -ENOMSG) {
			client_close(s, c, "a packet without the sender's credentials");
			return;
		}
		if (n < 0) {
			log_warn(s->log, "lmkd socket: client pid %d: receive: %s", (int)c->pid, strerror((int)-n));
			client_close(s, c, "receive error");
			return;
		}
		if (n > 0) {
			c->pid = cred.pid;
			c->uid = cred.uid;
		}
		lmkd_server_handle(s, c, buf, (size_t)n);
	}
	if ((events & (EPOLLHUP | EPOLLRDHUP)) && c->fd >= 0 && i < LMKD_BATCH_MAX)
		client_close(s, c, "hang-up");
}

/* ------------------------------------------------------------------ PROCPRIO */

/* -EINVAL when /proc/PID/status is readable and names another leader */
static int check_leader(struct lmkd_server *s, pid_t pid)
{
	static const char *const keys[] = { "Tgid:", NULL };
	char path[32], text[4096];
	uint64_t tgid;

	snprintf(path, sizeof(path), "%d/status", (int)pid);
	if (read_lines_at(s->procfd, path, text, sizeof(text), keys) < 0)
		return 0; /* unreadable: lmkd lets the write decide */
	if (lines_value(text, "Tgid", &tgid) != 1)
		return 0;
	return tgid == (uint64_t)pid ? 0 : -EINVAL;
}

static int write_adj(struct lmkd_server *s, pid_t pid, int adj)
{
	char path[40], val[16];

	snprintf(path, sizeof(path), "%d/oom_score_adj", (int)pid);
	snprintf(val, sizeof(val), "%d", adj);
	return write_file_at(s->procfd, path, val);
}

/* A new record pinned by a pidfd, watched so that it is forgotten when the
 * process dies. Without a pidfd (none left), the start time still tells a
 * recycled pid at the choice. */
static void register_new(struct lmkd_server *s, const struct lmkd_prio *p, pid_t owner)
{
	struct lmkd_record *rec = NULL;
	uint64_t start;
	int fd = sys_pidfd_open(p->pid, 0), r;

	if (fd < 0 && errno == ESRCH) {
		log_info(s->log, "lmkd socket: pid %d exited before it could be registered", (int)p->pid);
		return;
	}
	if (fd >= s->pidfd_limit) {
		close(fd);
		fd = -1;
		errno = EMFILE;
	}
	if (fd < 0 && !s->pidfd_warned) {
		log_warn(s->log, "lmkd socket: pidfd_open(%d): %s; registered processes are told apart by start time",
			 (int)p->pid, strerror(errno));
		s->pidfd_warned = true;
	}
	r = procfs_read_start_time(s->procfd, p->pid, &start);
	if (r == 0)
		r = lmkd_registry_add(&s->reg, p, owner, fd, start, &rec);
	if (r < 0) {
		if (fd >= 0)
			close(fd);
		log_info(s->log, "lmkd socket: pid %d not registered: %s", (int)p->pid, strerror(-r));
		return;
	}
	if (fd >= 0 && s->ops->watch(s->ctx, fd, LMKD_FD_PROC, lmkd_registry_index(&s->reg, rec)) < 0)
		log_warn(s->log, "lmkd socket: cannot watch pid %d; it is forgotten when a choice finds it gone",
			 (int)p->pid);
}

/* The registered process still lives (so its pid still names it). */
static bool record_alive(struct lmkd_server *s, const struct lmkd_record *rec)
{
	uint64_t start;

	if (rec->pidfd >= 0)
		return reaper_exited(rec->pidfd) == 0;
	return procfs_read_start_time(s->procfd, rec->pid, &start) == 0 && start == rec->start_time;
}

static void forget(struct lmkd_server *s, struct lmkd_record *rec)
{
	if (rec->pidfd >= 0)
		s->ops->unwatch(s->ctx, rec->pidfd);
	lmkd_registry_forget(&s->reg, rec);
}

/* lmkd's order: values, the thread-group leader, the /proc write (a dead
 * pid stops here), then the record. */
static void apply_prio(struct lmkd_server *s, struct lmkd_client *c, const struct lmkd_prio *p)
{
	struct lmkd_record *rec;
	const char *why;
	int r;

	if (lmkd_prio_check(p, &why) < 0) {
		bad_input(s, LMKD_BAD_PRIORITY, c->pid, "lmkd socket: client pid %d: priority of pid %d ignored: %s",
			  (int)c->pid, (int)p->pid, why);
		return;
	}
	rec = lmkd_registry_find(&s->reg, p->pid);
	if (rec && !record_alive(s, rec)) {
		forget(s, rec); /* its exit is still queued: the pid may name another process now */
		rec = NULL;
	}
	/* a live registered process was a leader when it came, and stays one */
	if (!rec && check_leader(s, p->pid) < 0) {
		bad_input(s, LMKD_BAD_THREAD, c->pid,
			  "lmkd socket: client pid %d: pid %d is a thread, not a thread-group leader: ignored", (int)c->pid,
			  (int)p->pid);
		return;
	}
	if (!p->lmkd_only) {
		r = write_adj(s, p->pid, p->adj);
		if (r < 0) {
			log_info(s->log, "lmkd socket: cannot set oom_score_adj %d of pid %d (%s); it might have been "
				 "killed", (int)p->adj, (int)p->pid, strerror(-r));
			return;
		}
	}
	if (!rec)
		register_new(s, p, c->pid);
	else if (lmkd_registry_update(&s->reg, rec, p, c->pid) < 0)
		log_err(s->log, "lmkd socket: pid %d is registered by client pid %d: client pid %d may not change it",
			(int)p->pid, (int)rec->owner, (int)c->pid);
	log_debug(s->log, "lmkd socket: pid %d uid %d adj %d type %d%s", (int)p->pid, (int)p->uid, (int)p->adj,
		  (int)p->ptype, p->lmkd_only ? " (lmkd only)" : "");
}

/* ------------------------------------------------------------------ requests */

static void reply(struct lmkd_server *s, struct lmkd_client *c, enum lmkd_cmd cmd, int32_t value)
{
	uint8_t buf[LMKD_REPLY_SIZE];
	size_t len = lmkd_encode_reply(buf, cmd, value);

	if (send(c->fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t)len)
		log_warn(s->log, "lmkd socket: cannot answer %s to client pid %d: %s", lmkd_cmd_name(cmd), (int)c->pid,
			 strerror(errno));
}

static void handle_target(struct lmkd_server *s, const struct lmkd_client *c, const struct lmkd_request *q)
{
	uint64_t now = s->ops->now_us(s->ctx);
	char levels[160] = "";
	size_t off = 0;
	unsigned i;

	if (q->target.n == 0)
		return;
	if (s->last_target_us && now - s->last_target_us < LMKD_TARGET_INTERVAL_US) {
		bad_input(s, LMKD_BAD_TARGET, c->pid,
			  "lmkd socket: client pid %d: TARGET less than a second after the last one: ignored", (int)c->pid);
		return;
	}
	s->last_target_us = now;
	s->n_targets = q->target.n;
	for (i = 0; i < q->target.n; i++) {
		s->target_minfree[i] = q->target.minfree[i];
		s->target_adj[i] = q->target.adj[i];
		off += (size_t)snprintf(levels + off, sizeof(levels) - off, "%s%d:%d", i ? "," : "",
					(int)q->target.minfree[i], (int)q->target.adj[i]);
		if (off >= sizeof(levels))
			break;
	}
	log_info(s->log, "lmkd socket: minfree levels %s (pages:adj) noted; the PSI tiers decide when to kill", levels);
}

static void handle_remove(struct lmkd_server *s, struct lmkd_client *c, pid_t pid)
{
	struct lmkd_record *rec = lmkd_registry_find(&s->reg, pid);
	pid_t owner = rec ? rec->owner : 0;

	if (lmkd_registry_remove(&s->reg, pid, c->pid) == -EPERM)
		log_err(s->log, "lmkd socket: pid %d is registered by client pid %d: client pid %d may not remove it",
			(int)pid, (int)owner, (int)c->pid);
}

static void handle_request(struct lmkd_server *s, struct lmkd_client *c, const struct lmkd_request *q)
{
	unsigned i;

	switch (q->cmd) {
	case LMKD_TARGET:
		handle_target(s, c, q);
		break;
	case LMKD_PROCPRIO:
		apply_prio(s, c, &q->prio);
		break;
	case LMKD_PROCS_PRIO:
		for (i = 0; i < q->procs.n; i++)
			apply_prio(s, c, &q->procs.rec[i]);
		break;
	case LMKD_PROCREMOVE:
		handle_remove(s, c, q->pid);
		break;
	case LMKD_PROCPURGE:
		log_info(s->log, "lmkd socket: client pid %d purged %zu records", (int)c->pid,
			 lmkd_registry_purge(&s->reg, c->pid));
		break;
	case LMKD_GETKILLCNT: {
		uint64_t n = lmkd_registry_kill_count(&s->reg, q->killcnt.min_adj, q->killcnt.max_adj);

		reply(s, c, LMKD_GETKILLCNT, n > INT32_MAX ? INT32_MAX : (int32_t)n);
		break;
	}
	case LMKD_SUBSCRIBE:
		c->events |= 1u << q->event;
		break;
	case LMKD_UPDATE_PROPS:
		reply(s, c, LMKD_UPDATE_PROPS, s->ops->reload(s->ctx) < 0 ? -1 : 0);
		break;
	case LMKD_START_MONITORING:
		log_info(s->log, "lmkd socket: START_MONITORING: the PSI tiers are armed from the start");
		break;
	case LMKD_BOOT_COMPLETED:
		reply(s, c, LMKD_BOOT_COMPLETED, s->boot_completed ? LMKD_BOOT_ALREADY : LMKD_BOOT_HANDLED);
		s->boot_completed = true;
		break;
	default:
		break;
	}
}

void lmkd_server_handle(struct lmkd_server *s, struct lmkd_client *c, const uint8_t *buf, size_t len)
{
	struct lmkd_request q;
	const char *why;
	int r = lmkd_decode(buf, len, &q, &why);

	s->packets++;
	c->packets++;
	if (r < 0) {
		int32_t cmd = len >= 4 ? (int32_t)((uint32_t)buf[0] << 24 | (uint32_t)buf[1] << 16 |
						   (uint32_t)buf[2] << 8 | buf[3]) : -1;

		s->bad_packets++;
		bad_input(s, LMKD_BAD_PACKET, c->pid, "lmkd socket: client pid %d: %zu-byte packet (command %d, %s) ignored: %s",
			  (int)c->pid, len, (int)cmd, lmkd_cmd_name(cmd), why);
		return;
	}
	handle_request(s, c, &q);
}

/* ------------------------------------------------------------------ the kill path's source */

struct reader {
	struct lmkd_server *s;
	const struct pick_ctx *c;
	const struct victim_filter *f;
	struct kill_pick *p;
};

/* One registered process, as the /proc scan would have offered it; a pid
 * that names another process now counts as gone. */
static int read_registered(void *ctx, const struct lmkd_record *rec, struct proc_info *pi)
{
	struct reader *x = ctx;
	int r = procfs_read_pid(x->c->procfd, rec->pid, pi);

	if (r == -EMFILE || r == -ENFILE || r == -ENOMEM)
		return r;
	if (r < 0 || pi->start_time != rec->start_time)
		return -ESRCH;
	if (victim_needs_cmdline(x->f))
		pi->has_cmdline = procfs_read_cmdline(x->c->procfd, pi->pid, pi->cmdline, sizeof(pi->cmdline)) == 0;
	if (!x->f->all_shields && x->c->cg2_mount && *x->c->cg2_mount && victim_cgroup_rule_matches(x->f, pi))
		pi->cgroup_trusted =
			cgroup_path_trusted(x->c->rootfd, x->c->cg2_mount, pi->cgroup, x->f->trusted_uid_max) == 1;
	return 0;
}

/* lmkd's task name of pid (argv[0]), read while it is alive, as a display
 * name (escape.h): its owner chose the bytes */
static void read_taskname(struct lmkd_server *s, const struct proc_info *v)
{
	char path[32], raw[LMKD_TASKNAME_MAX + 1], name[LMKD_TASKNAME_MAX + 1];
	ssize_t n = -1;
	int fd;

	snprintf(path, sizeof(path), "%d/cmdline", (int)v->pid);
	fd = openat(s->procfd, path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, raw, sizeof(raw));
		close(fd);
	}
	s->chosen_pid = v->pid;
	lmkd_taskname(raw, n > 0 ? (size_t)n : 0, name, sizeof(name));
	escape_bytes(s->chosen_task, sizeof(s->chosen_task), name, strlen(name), ESCAPE_NAME, NULL);
	if (!s->chosen_task[0])
		snprintf(s->chosen_task, sizeof(s->chosen_task), "%s", v->comm);
}

/* prefer/avoid rules, and the badness order, can put a lower adj first:
 * then every list of the band is read */
static bool whole_band(const struct pick_ctx *c)
{
	const struct victim_policy *v = c->policy;

	return c->order != VICTIM_ORDER_ADJ ||
	       (v && (v->prefer || v->prefer_cmdline || v->avoid || v->avoid_cmdline || v->avoid_cgroup));
}

static int source_choose(void *ctx, const struct pick_ctx *c, int min_adj, struct kill_pick *p,
			 struct procfs_scan_stats *st)
{
	struct lmkd_server *s = ctx;
	struct victim_filter f = filter_of(c, min_adj);
	struct reader x = { .s = s, .c = c, .f = &f, .p = p };
	unsigned reads = 0;
	int r;

	memset(st, 0, sizeof(*st));
	r = lmkd_registry_choose(&s->reg, &f, whole_band(c), read_registered, &x, p, &reads);
	st->seen = st->read = reads;
	if (r == 0 && p->pick.found)
		read_taskname(s, &p->pick.best);
	return r;
}

static void send_all(struct lmkd_server *s, enum lmkd_event ev, const uint8_t *buf, size_t len)
{
	size_t i;

	for (i = 0; i < LMKD_CLIENTS_MAX; i++) {
		struct lmkd_client *c = &s->clients[i];

		if (c->fd < 0 || !(c->events & (1u << ev)))
			continue;
		if (send(c->fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t)len) {
			s->reports_lost++;
			log_warn(s->log, "lmkd socket: cannot send the %s report to client pid %d: %s",
				 ev == LMKD_EVENT_STAT ? "stat" : "kill", (int)c->pid, strerror(errno));
		}
	}
}

/* lmkd's own line for the kill, under its tag (kill_log) */
static void log_lmkd_line(const struct lmkd_server *s, const struct proc_info *v, const struct lmkd_record *rec,
			  const struct lmkd_cause *cause, const char *task)
{
	char desc[256], line[512];
	struct lmkd_kill_line l = { .task = task, .pid = (int32_t)v->pid, .uid = (int32_t)rec->uid, .adj = rec->adj,
				    .rss_kb = (int64_t)v->rss_kb, .swap_kb = (int64_t)v->swap_kb, .desc = desc };

	lmkd_kill_desc(desc, sizeof(desc), cause);
	lmkd_kill_line_format(line, sizeof(line), &l);
	log_notice(s->log, LMKD_LOG_TAG ": %s", line);
}

/* lmkd's line (kill_log), STAT to the stat subscribers, then PROCKILL to
 * the kill subscribers */
static void report_kill(struct lmkd_server *s, const struct proc_info *v, const struct lmkd_record *rec,
			const struct tier_config *t, enum fire_reason why)
{
	uint8_t buf[LMKD_PACKET_MAX];
	struct lmkd_kill_stat st = { .pgfault = -1, .pgmajfault = -1, .cache_bytes = -1,
				     .rss_bytes = (int64_t)(v->rss_kb * 1024), .swap_bytes = (int64_t)(v->swap_kb * 1024),
				     .uid = (int32_t)rec->uid, .oom_score = rec->adj, .min_oom_score = t->min_oom_score_adj,
				     .free_mem_kb = -1, .free_swap_kb = -1,
				     .taskname = s->chosen_pid == v->pid ? s->chosen_task : v->comm };
	long tck = sysconf(_SC_CLK_TCK);
	struct lmkd_cause cause;
	struct mem_info mi;
	bool mem = memory_read(s->rootfd, s->memory_cgroup ? s->memory_cgroup : "", &mi) == 0;
	size_t len;

	if (tck > 0)
		st.start_time_ns = (int64_t)(v->start_time * (1000000000ULL / (uint64_t)tck));
	if (mem) {
		st.free_mem_kb = (int32_t)(mi.available_bytes >> 10 > INT32_MAX ? INT32_MAX : mi.available_bytes >> 10);
		st.free_swap_kb = (int32_t)(mi.swap_free_bytes >> 10 > INT32_MAX ? INT32_MAX : mi.swap_free_bytes >> 10);
	}
	lmkd_cause_init(&cause, why, t, mem ? &mi : NULL);
	st.kill_reason = lmkd_kill_reason(&cause);
	if (s->kill_log)
		log_lmkd_line(s, v, rec, &cause, st.taskname);
	len = lmkd_encode_kill_occurred(buf, &st);
	send_all(s, LMKD_EVENT_STAT, buf, len);
	len = lmkd_encode_prockill(buf, (int32_t)v->pid, (int32_t)rec->uid,
				   (int32_t)(v->rss_kb > INT32_MAX ? INT32_MAX : v->rss_kb), s->short_prockill);
	send_all(s, LMKD_EVENT_KILL, buf, len);
}

/* As lmkd: the record goes whether the kill worked or not; a kill counts
 * at the adj the process was registered with, and is reported. */
static void source_done(void *ctx, const struct proc_info *v, const struct tier_config *t, enum fire_reason why,
			int result)
{
	struct lmkd_server *s = ctx;
	struct lmkd_record *rec = lmkd_registry_find(&s->reg, v->pid);

	if (!rec || rec->start_time != v->start_time)
		return;
	if (result == 0) {
		lmkd_registry_count_kill(&s->reg, rec->adj);
		report_kill(s, v, rec, t, why);
	}
	forget(s, rec);
}

/* ------------------------------------------------------------------ the watchdog's candidates */

int lmkd_server_watchdog_start(struct lmkd_server *s, uint64_t timeout_us)
{
	int r = lmkd_watchdog_start(&s->wd, s->procfd, s->log, timeout_us);

	s->wd_on = r == 0;
	s->wd_published = false;
	return r;
}

void lmkd_server_loop_busy(struct lmkd_server *s)
{
	if (s->wd_on)
		lmkd_watchdog_busy(&s->wd, s->ops->now_us(s->ctx));
}

/* The kill path's choice, made again with each choice so far excluded:
 * the most expendable registered processes, in order. */
static size_t choose_candidates(struct lmkd_server *s, const struct pick_ctx *c, int min_adj,
				struct lmkd_watchdog_cand *out)
{
	static const size_t max = LMKD_WATCHDOG_CANDIDATES;
	struct proc_ident ex[KILLER_EXCLUDE_MAX + LMKD_WATCHDOG_CANDIDATES];
	struct pick_ctx cc = *c;
	struct kill_pick *p = &s->wd_pick;
	size_t n = 0, base = c->n_exclude > KILLER_EXCLUDE_MAX ? KILLER_EXCLUDE_MAX : c->n_exclude;

	if (base)
		memcpy(ex, c->exclude, base * sizeof(ex[0]));
	cc.exclude = ex;
	while (n < max) {
		struct victim_filter f;
		struct reader x = { .s = s, .c = &cc, .f = &f, .p = p };
		const struct proc_info *b = &p->pick.best;
		const struct lmkd_record *rec;
		unsigned reads = 0;

		cc.n_exclude = base + n;
		f = filter_of(&cc, min_adj);
		if (lmkd_registry_choose(&s->reg, &f, whole_band(&cc), read_registered, &x, p, &reads) < 0 ||
		    !p->pick.found)
			break;
		rec = lmkd_registry_find(&s->reg, b->pid);
		/* the uid the framework registered, as lmkd names it */
		out[n] = (struct lmkd_watchdog_cand){ .pid = b->pid, .start_time = b->start_time, .adj = b->oom_score_adj,
						      .uid = rec ? rec->uid : b->uid };
		snprintf(out[n].comm, sizeof(out[n].comm), "%s", b->comm);
		ex[base + n] = (struct proc_ident){ .pid = b->pid, .start_time = b->start_time };
		n++;
	}
	return n;
}

void lmkd_server_loop_idle(struct lmkd_server *s, const struct pick_ctx *c, int min_adj, bool dry_run)
{
	struct lmkd_watchdog_cand cand[LMKD_WATCHDOG_CANDIDATES];
	uint64_t now;
	size_t n;

	if (!s->wd_on)
		return;
	lmkd_watchdog_idle(&s->wd);
	atomic_store(&s->wd.dry_run, dry_run);
	now = s->ops->now_us(s->ctx);
	if (s->wd_published && (s->reg.gen == s->wd_gen || now - s->wd_refresh_us < LMKD_WATCHDOG_REFRESH_US))
		return;
	n = choose_candidates(s, c, min_adj < 0 ? 0 : min_adj, cand);
	lmkd_watchdog_publish(&s->wd, cand, n);
	s->wd_gen = s->reg.gen;
	s->wd_refresh_us = now;
	s->wd_published = true;
}

/* ------------------------------------------------------------------ events */

/* A registered process's pidfd became readable: it died. (An event of a
 * slot freed and taken again in the same wakeup finds a live process.) */
static void proc_event(struct lmkd_server *s, size_t index)
{
	struct lmkd_record *rec = lmkd_registry_at(&s->reg, index);

	if (!rec || rec->pidfd < 0 || reaper_exited(rec->pidfd) != 1)
		return;
	log_debug(s->log, "lmkd socket: registered pid %d exited", (int)rec->pid);
	forget(s, rec);
}

void lmkd_server_event(struct lmkd_server *s, enum lmkd_fd_kind kind, size_t index, uint32_t events)
{
	switch (kind) {
	case LMKD_FD_LISTEN:
		accept_client(s);
		break;
	case LMKD_FD_CLIENT: {
		size_t slot = index & ((1u << LMKD_CLIENT_SLOT_BITS) - 1);

		if (slot < LMKD_CLIENTS_MAX && s->clients[slot].fd >= 0 &&
		    s->clients[slot].serial == index >> LMKD_CLIENT_SLOT_BITS)
			client_readable(s, &s->clients[slot], events);
		break;
	}
	case LMKD_FD_PROC:
		proc_event(s, index);
		break;
	}
}

void lmkd_server_log_status(const struct lmkd_server *s)
{
	unsigned clients = 0, i;

	for (i = 0; i < LMKD_CLIENTS_MAX; i++)
		clients += s->clients[i].fd >= 0;
	log_notice(s->log, "status lmkd clients=%u registered=%zu packets=%" PRIu64 " bad_packets=%" PRIu64
		   " kills=%" PRIu64 " reports_lost=%" PRIu64, clients, s->reg.n, s->packets, s->bad_packets,
		   s->reg.kills_total, s->reports_lost);
}

/* ------------------------------------------------------------------ client side */

int lmkd_client_call(const char *path, enum lmkd_cmd cmd, int timeout_ms, int32_t *value)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	uint8_t buf[LMKD_PACKET_MAX];
	struct lmkd_request q = { .cmd = cmd };
	struct pollfd p;
	size_t len = lmkd_encode_request(buf, &q);
	ssize_t n;
	int fd, r;

	if (strlen(path) >= sizeof(sa.sun_path) || !len)
		return -EINVAL;
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || send(fd, buf, len, MSG_NOSIGNAL) != (ssize_t)len) {
		r = -errno;
		goto out;
	}
	p = (struct pollfd){ .fd = fd, .events = POLLIN };
	r = poll(&p, 1, timeout_ms);
	if (r <= 0) {
		r = r == 0 ? -ETIMEDOUT : -errno;
		goto out;
	}
	n = recv(fd, buf, sizeof(buf), 0);
	r = n < 0 ? -errno : lmkd_decode_reply(buf, (size_t)n, cmd, value);
out:
	close(fd);
	return r;
}
