/* SPDX-License-Identifier: MIT */
/* lmkd-bench - the lmkd socket's costs (issue 13), linked against
 * build/libpsilmkd.a:
 *
 *   lmkd-bench choose N REPS
 *       forks N idle children, registers them in an lmkd registry and times
 *       one victim choice (band adj >= 900, by adj, the Android profile's
 *       order), REPS times each:
 *         spread: adj as Android spreads them (40 % cached at 900..999, the
 *                 rest 0..899): the choice reads only the highest adj's few;
 *         flat:   all N at adj 950: it reads all N (the worst case);
 *         procscan: the daemon without the socket: one /proc scan (pick.c)
 *                 of the whole machine with the same band, the children's
 *                 /proc adj set as in flat.
 *   lmkd-bench procprio N PACKETS
 *       the server's handling of PACKETS PROCPRIO packets for N registered
 *       children (decode, thread-group check, the /proc write, the registry),
 *       the same with the lmkd-only flag (no /proc write), and PACKETS bare
 *       writes of /proc/PID/oom_score_adj.
 *   lmkd-bench socket N PACKETS
 *       PROCPRIO through a real connection: the client's send, the server's
 *       receive with credentials and its handling, in bursts, one thread.
 * Prints one line per figure: "name N=... median_us=... min_us=... reads=...".
 * The children are this program's own, killed at the end; nothing else is
 * touched but their oom_score_adj (raised, never lowered). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>

#include "fileio.h"
#include "lmkd-registry.h"
#include "lmkd-server.h"
#include "procfs.h"

static pid_t *kids;
static long n_kids;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void spawn(long n)
{
	long i;

	kids = calloc((size_t)n, sizeof(*kids));
	if (!kids)
		exit(1);
	for (i = 0; i < n; i++) {
		pid_t p = fork();

		if (p < 0) {
			perror("fork");
			exit(1);
		}
		if (p == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			for (;;)
				pause();
		}
		kids[i] = p;
	}
	n_kids = n;
}

static void reap(void)
{
	long i;

	for (i = 0; i < n_kids; i++)
		kill(kids[i], SIGKILL);
	for (i = 0; i < n_kids; i++)
		waitpid(kids[i], NULL, 0);
	free(kids);
	n_kids = 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void report(const char *name, long n, uint64_t *us, int reps, unsigned reads)
{
	size_t mid = (size_t)reps / 2;

	qsort(us, (size_t)reps, sizeof(*us), cmp_u64);
	printf("%s N=%ld median_us=%.1f min_us=%.1f reads=%u\n", name, n, (double)us[mid] / 1000.0,
	       (double)us[0] / 1000.0, reads);
	fflush(stdout);
}

static int procfd;

static int reader(void *ctx, const struct lmkd_record *rec, struct proc_info *pi)
{
	int r = procfs_read_pid(procfd, rec->pid, pi);

	(void)ctx;
	if (r < 0 || pi->start_time != rec->start_time)
		return -ESRCH;
	return 0;
}

static void fill(struct lmkd_registry *r, bool flat)
{
	long i;

	lmkd_registry_free(r);
	for (i = 0; i < n_kids; i++) {
		struct lmkd_prio p = { .pid = kids[i], .uid = 10000 + (int32_t)i };
		struct lmkd_record *rec;
		uint64_t st = 0;

		p.adj = flat ? 950 : i % 10 < 4 ? 900 + (int32_t)(i % 100) : (int32_t)(i % 900);
		char path[40], val[16];

		/* /proc says the same, so that the scan sees the same band */
		snprintf(path, sizeof(path), "%d/oom_score_adj", (int)kids[i]);
		snprintf(val, sizeof(val), "%d", (int)p.adj);
		write_file_at(procfd, path, val);
		procfs_read_start_time(procfd, kids[i], &st);
		lmkd_registry_add(r, &p, 1, -1, st, &rec);
	}
}

static int choose(long n, int reps)
{
	static struct kill_pick p;
	struct lmkd_registry r;
	struct victim_filter f = { .min_adj = 900, .self = getpid(), .scope = "/", .order = VICTIM_ORDER_ADJ };
	struct pick_ctx c = { .self = getpid(), .scope = "/", .order = VICTIM_ORDER_ADJ, .cg2_mount = "" };
	struct procfs_scan_stats st = { 0 };
	uint64_t *us = calloc((size_t)reps, sizeof(*us)), t;
	unsigned reads = 0;
	int i, k;

	spawn(n);
	lmkd_registry_init(&r);
	for (k = 0; k < 2; k++) {
		fill(&r, k == 1);
		for (i = 0; i < reps; i++) {
			t = now_ns();
			lmkd_registry_choose(&r, &f, false, reader, NULL, &p, &reads);
			us[i] = now_ns() - t;
		}
		report(k == 0 ? "choose-spread" : "choose-flat", n, us, reps, reads);
	}
	c.procfd = procfd;
	c.rootfd = -1;
	for (i = 0; i < reps; i++) {
		t = now_ns();
		pick_choose(&c, 900, &p, &st);
		us[i] = now_ns() - t;
	}
	report("choose-procscan", n, us, reps, st.read);
	lmkd_registry_free(&r);
	free(us);
	reap();
	return 0;
}

static int nop_watch(void *ctx, int fd, enum lmkd_fd_kind kind, size_t index)
{
	(void)ctx, (void)fd, (void)kind, (void)index;
	return 0;
}

static void nop_unwatch(void *ctx, int fd)
{
	(void)ctx, (void)fd;
}

static int nop_reload(void *ctx)
{
	(void)ctx;
	return 0;
}

static uint64_t ops_now(void *ctx)
{
	(void)ctx;
	return now_ns() / 1000;
}

static const struct lmkd_server_ops ops = { nop_watch, nop_unwatch, nop_reload, ops_now };

/* A bench server on a fresh socket path under /tmp (in SOCK, which must hold
 * "/tmp/lmkd-bench-XXXXXX/s"), with N idle children spawned: the setup of
 * procprio and socket_rate. 0, or -1 with nothing left behind. */
static int server_start(struct lmkd_server *s, struct log *log, char *sock, long n)
{
	strcpy(sock, "/tmp/lmkd-bench-XXXXXX");
	if (!mkdtemp(sock))
		return -1;
	strcat(sock, "/s");
	spawn(n);
	log_init(log, LOG_ERR, false);
	if (lmkd_server_open(s, NULL, sock, &ops, NULL, log, -1, procfd) < 0) {
		*strrchr(sock, '/') = '\0';
		rmdir(sock);
		reap();
		return -1;
	}
	return 0;
}

/* Undo server_start: close the server, remove its directory, kill the
 * children. */
static void server_stop(struct lmkd_server *s, char *sock)
{
	lmkd_server_close(s);
	*strrchr(sock, '/') = '\0';
	rmdir(sock);
	reap();
}

static int procprio(long n, long packets)
{
	struct lmkd_server s;
	struct lmkd_client c = { .fd = -1, .pid = getpid() };
	struct lmkd_request q = { .cmd = LMKD_PROCPRIO, .fields = 4 };
	struct log log;
	uint8_t buf[LMKD_PACKET_MAX];
	char path[64], sock[sizeof("/tmp/lmkd-bench-XXXXXX/s")];
	uint64_t t;
	double a, b, o;
	long i;

	if (server_start(&s, &log, sock, n) < 0)
		return 1;
	for (i = 0; i < n; i++) { /* registration, not timed */
		q.prio = (struct lmkd_prio){ .pid = kids[i], .uid = 10000, .adj = 900 };
		lmkd_server_handle(&s, &c, buf, lmkd_encode_request(buf, &q));
	}
	t = now_ns();
	for (i = 0; i < packets; i++) {
		q.prio = (struct lmkd_prio){ .pid = kids[i % n], .uid = 10000, .adj = 900 + (int32_t)(i & 1) };
		lmkd_server_handle(&s, &c, buf, lmkd_encode_request(buf, &q));
	}
	a = (double)(now_ns() - t) / (double)packets;
	q.fields = 5; /* the lmkd-only flag: everything but the /proc write */
	t = now_ns();
	for (i = 0; i < packets; i++) {
		q.prio = (struct lmkd_prio){ .pid = kids[i % n], .uid = 10000, .adj = 900 + (int32_t)(i & 1),
					     .lmkd_only = 1 };
		lmkd_server_handle(&s, &c, buf, lmkd_encode_request(buf, &q));
	}
	o = (double)(now_ns() - t) / (double)packets;
	t = now_ns();
	for (i = 0; i < packets; i++) {
		snprintf(path, sizeof(path), "%d/oom_score_adj", (int)kids[i % n]);
		write_file_at(procfd, path, i & 1 ? "901" : "900");
	}
	b = (double)(now_ns() - t) / (double)packets;
	printf("procprio N=%ld packets=%ld us_per_packet=%.2f packets_per_s=%.0f registered=%zu\n", n, packets,
	       a / 1000.0, 1e9 / a, s.reg.n);
	printf("procprio-lmkd-only N=%ld packets=%ld us_per_packet=%.2f packets_per_s=%.0f\n", n, packets, o / 1000.0,
	       1e9 / o);
	printf("procwrite N=%ld writes=%ld us_per_write=%.2f writes_per_s=%.0f share_of_procprio=%.0f%%\n", n, packets,
	       b / 1000.0, 1e9 / b, 100.0 * b / a);
	server_stop(&s, sock);
	return 0;
}

/* PACKETS PROCPRIO packets through a real SOCK_SEQPACKET connection: sent
 * in bursts of BURST, each burst then received and handled by the server
 * (lmkd_server_event), in one thread; one GETKILLCNT round trip at the end. */
#define BURST 128
static int socket_rate(long n, long packets)
{
	struct lmkd_server s;
	struct lmkd_request q = { .cmd = LMKD_PROCPRIO, .fields = 4 };
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct log log;
	uint8_t buf[LMKD_PACKET_MAX];
	char sock[sizeof("/tmp/lmkd-bench-XXXXXX/s")];
	uint64_t t;
	long i, sent = 0;
	int fd;

	if (server_start(&s, &log, sock, n) < 0)
		return 1;
	strcpy(sa.sun_path, sock);
	fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return 1;
	lmkd_server_event(&s, LMKD_FD_LISTEN, 0, 0);
	t = now_ns();
	while (sent < packets + n) {
		long end = sent < n ? n : packets + n; /* the registrations first, not timed */

		for (i = 0; i < BURST && sent < end; i++, sent++) {
			q.prio = (struct lmkd_prio){ .pid = kids[sent % n], .uid = 10000, .adj = 900 + (int32_t)(sent & 1) };
			if (send(fd, buf, lmkd_encode_request(buf, &q), 0) < 0)
				return 1;
		}
		for (i = 0; i < BURST / LMKD_BATCH_MAX + 1; i++)
			lmkd_server_event(&s, LMKD_FD_CLIENT, LMKD_CLIENT_INDEX(s.clients[0].serial, 0), EPOLLIN);
		if (sent == n)
			t = now_ns();
	}
	q.cmd = LMKD_GETKILLCNT;
	send(fd, buf, lmkd_encode_request(buf, &q), 0);
	lmkd_server_event(&s, LMKD_FD_CLIENT, LMKD_CLIENT_INDEX(s.clients[0].serial, 0), EPOLLIN);
	if (recv(fd, buf, sizeof(buf), 0) != LMKD_REPLY_SIZE)
		return 1;
	printf("socket N=%ld packets=%ld us_per_packet=%.2f packets_per_s=%.0f handled=%lu\n", n, packets,
	       (double)(now_ns() - t) / (double)packets / 1000.0, 1e9 * (double)packets / (double)(now_ns() - t),
	       (unsigned long)s.packets);
	close(fd);
	server_stop(&s, sock);
	return 0;
}

int main(int argc, char **argv)
{
	procfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (procfd < 0)
		return 1;
	if (argc == 4 && !strcmp(argv[1], "choose"))
		return choose(atol(argv[2]), atoi(argv[3]));
	if (argc == 4 && !strcmp(argv[1], "socket"))
		return socket_rate(atol(argv[2]), atol(argv[3]));
	if (argc == 4 && !strcmp(argv[1], "procprio"))
		return procprio(atol(argv[2]), atol(argv[3]));
	fprintf(stderr, "usage: lmkd-bench choose N REPS | procprio N PACKETS | socket N PACKETS\n");
	return 2;
}
