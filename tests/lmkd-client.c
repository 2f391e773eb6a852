/* SPDX-License-Identifier: MIT */
/* lmkd-client: the test's side of the lmkd socket. Stand-alone (no project
 * headers): it speaks the protocol from its own reading of it, so that the
 * daemon is checked against an independent encoder.
 *
 *   lmkd-client spawn PATH PROGRAM [ARG]...
 *       as Android's init: creates a SOCK_SEQPACKET socket bound at PATH
 *       (mode 0660, SO_PASSCRED, not listening), passes its number in
 *       ANDROID_SOCKET_lmkd and executes PROGRAM.
 *   lmkd-client thread
 *       prints "PID TID" of itself and a second thread, then sleeps.
 *   lmkd-client talk PATH < SCRIPT
 *       runs a script, one command a line (words are decimal integers):
 *         connect C           connection C (0..7) to PATH
 *         send C W...         one packet of big-endian words
 *         raw C HEX           one packet of raw bytes ("-" = empty)
 *         expect C W...       the next packet on C is exactly these words (5 s)
 *         stat C UID NAME [R,...]  the next packet on C is KILL_OCCURRED for UID and NAME
 *                             (and a kill_reason among R, when given); prints
 *                             "stat uid UID reason R" on stdout
 *         prockill C PID UID LEN   the next is PROCKILL of PID, UID, LEN bytes
 *         await C MS          something arrives on C within MS ms (not read)
 *         quiet C MS          nothing arrives on C within MS ms
 *         closed C MS         the daemon closes C within MS ms
 *         close C
 *         fork / endfork      the lines between run in a child process (another
 *                             client pid), which the parent waits for
 *         sleep MS
 *       Exit 0 when every line held, 1 at the first that did not (said on
 *       stderr), 2 on bad usage. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>

#define CONNS 8
#define LINES 1024

static const char *sock_path;
static int conn[CONNS] = { -1, -1, -1, -1, -1, -1, -1, -1 };
static unsigned lineno;

__attribute__((format(printf, 1, 2))) static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "lmkd-client: line %u: ", lineno);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static int spawn(int argc, char **argv)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char num[16];
	int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0), one = 1;

	if (argc < 4 || strlen(argv[2]) >= sizeof(sa.sun_path))
		return 2;
	strcpy(sa.sun_path, argv[2]);
	unlink(argv[2]);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || chmod(argv[2], 0660) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) < 0) {
		perror("lmkd-client spawn");
		return 1;
	}
	snprintf(num, sizeof(num), "%d", fd);
	setenv("ANDROID_SOCKET_lmkd", num, 1);
	execv(argv[3], argv + 3);
	perror(argv[3]);
	return 127;
}

static void *idle(void *arg)
{
	(void)arg;
	printf("%d %ld\n", (int)getpid(), (long)syscall(SYS_gettid));
	fflush(stdout);
	for (;;)
		pause();
	return NULL;
}

static int thread_mode(void)
{
	pthread_t t;

	if (pthread_create(&t, NULL, idle, NULL) != 0)
		return 1;
	for (;;)
		pause();
}

static int conn_of(const char *s)
{
	int c = atoi(s);

	if (c < 0 || c >= CONNS)
		die("no connection %s", s);
	return c;
}

static size_t words_of(char **w, int n, uint8_t *buf)
{
	int i;

	for (i = 0; i < n; i++) {
		uint32_t v = (uint32_t)strtol(w[i], NULL, 0);

		buf[4 * i] = (uint8_t)(v >> 24);
		buf[4 * i + 1] = (uint8_t)(v >> 16);
		buf[4 * i + 2] = (uint8_t)(v >> 8);
		buf[4 * i + 3] = (uint8_t)v;
	}
	return 4 * (size_t)n;
}

static int32_t word(const uint8_t *p)
{
	return (int32_t)((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]);
}

/* the next packet on c within ms: its length, -1 on timeout, -2 at EOF */
static ssize_t next_packet(int c, uint8_t *buf, size_t size, int ms)
{
	struct pollfd p = { .fd = conn[c], .events = POLLIN };
	ssize_t n;

	if (poll(&p, 1, ms) <= 0)
		return -1;
	n = recv(conn[c], buf, size, 0);
	if (n == 0 && (p.revents & POLLHUP))
		return -2;
	return n < 0 ? -2 : n;
}

static void do_connect(int c)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	strcpy(sa.sun_path, sock_path);
	conn[c] = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (conn[c] < 0 || connect(conn[c], (struct sockaddr *)&sa, sizeof(sa)) < 0)
		die("cannot connect to %s", sock_path);
}

static void do_send(int c, const uint8_t *buf, size_t len)
{
	if (send(conn[c], buf, len, MSG_NOSIGNAL) != (ssize_t)len)
		die("send: %s", strerror(errno));
}

static void do_expect(int c, char **w, int n)
{
	uint8_t want[256] = { 0 }, got[512] = { 0 };
	size_t len = words_of(w, n, want);
	ssize_t r = next_packet(c, got, sizeof(got), 5000);
	char msg[64];

	if (r < 0)
		die("expected a packet: %s", r == -1 ? "none came in 5 s" : "the connection closed");
	if ((size_t)r != len || memcmp(got, want, len) != 0) {
		snprintf(msg, sizeof(msg), "%zd bytes, first word %d, second %d", r, r >= 4 ? word(got) : -1,
			 r >= 8 ? word(got + 4) : -1);
		die("unexpected packet: %s", msg);
	}
}

/* reasons: the kill_reason codes accepted, comma-separated; NULL: any */
static void do_stat(int c, int32_t uid, const char *name, const char *reasons)
{
	uint8_t got[512] = { 0 };
	ssize_t r = next_packet(c, got, sizeof(got), 5000);
	size_t l = strlen(name);

	if (r < 0)
		die("expected KILL_OCCURRED: %s", r == -1 ? "none came" : "closed");
	if (r < 87 || word(got) != 8)
		die("%s", "not a KILL_OCCURRED packet");
	if (word(got + 52) != uid)
		die("%s", "KILL_OCCURRED: wrong uid");
	if ((size_t)r != 87 + l || got[84] != (l >> 8) || got[85] != (l & 0xff) || memcmp(got + 86, name, l + 1) != 0)
		die("KILL_OCCURRED: the task name is not %s", name);
	if (reasons) {
		char want[64], code[16];

		snprintf(want, sizeof(want), ",%s,", reasons);
		snprintf(code, sizeof(code), ",%d,", (int)word(got + 72));
		if (!strstr(want, code))
			die("KILL_OCCURRED: kill_reason %d is not one of %s", (int)word(got + 72), reasons);
	}
	printf("stat uid %d reason %d\n", (int)uid, (int)word(got + 72));
	fflush(stdout);
}

static void do_prockill(int c, int32_t pid, int32_t uid, size_t len)
{
	uint8_t got[512] = { 0 };
	ssize_t r = next_packet(c, got, sizeof(got), 5000);

	if (r < 0)
		die("expected PROCKILL: %s", r == -1 ? "none came" : "closed");
	if ((size_t)r != len || word(got) != 6 || word(got + 4) != pid || word(got + 8) != uid)
		die("%s", "not the expected PROCKILL");
	if (len == 16 && word(got + 12) <= 0)
		die("%s", "PROCKILL: rss_kb is not positive");
}

static void do_raw(int c, const char *hex)
{
	uint8_t buf[512];
	size_t n = 0;

	if (strcmp(hex, "-") != 0)
		for (; hex[0] && hex[1] && n < sizeof(buf); hex += 2) {
			unsigned v;

			if (sscanf(hex, "%2x", &v) != 1)
				die("bad hex %s", hex);
			buf[n++] = (uint8_t)v;
		}
	do_send(c, buf, n);
}

/* one line; returns the number of words */
static int split(char *line, char **w, int max)
{
	int n = 0;
	char *save = NULL, *t;

	for (t = strtok_r(line, " \t\n", &save); t && n < max; t = strtok_r(NULL, " \t\n", &save))
		w[n++] = t;
	return n;
}

static void run_line(char **w, int n)
{
	uint8_t buf[512];
	ssize_t r;

	if (!strcmp(w[0], "connect") && n == 2)
		do_connect(conn_of(w[1]));
	else if (!strcmp(w[0], "send") && n >= 3)
		do_send(conn_of(w[1]), buf, words_of(w + 2, n - 2, buf));
	else if (!strcmp(w[0], "raw") && n == 3)
		do_raw(conn_of(w[1]), w[2]);
	else if (!strcmp(w[0], "expect") && n >= 3)
		do_expect(conn_of(w[1]), w + 2, n - 2);
	else if (!strcmp(w[0], "stat") && (n == 4 || n == 5))
		do_stat(conn_of(w[1]), atoi(w[2]), w[3], n == 5 ? w[4] : NULL);
	else if (!strcmp(w[0], "prockill") && n == 5)
		do_prockill(conn_of(w[1]), atoi(w[2]), atoi(w[3]), (size_t)atoi(w[4]));
	else if (!strcmp(w[0], "quiet") && n == 3) {
		r = next_packet(conn_of(w[1]), buf, sizeof(buf), atoi(w[2]));
		if (r != -1)
			die("%s", r == -2 ? "the connection closed" : "a packet came where none should");
	} else if (!strcmp(w[0], "await") && n == 3) {
		struct pollfd p = { .fd = conn[conn_of(w[1])], .events = POLLIN };

		if (poll(&p, 1, atoi(w[2])) != 1)
			die("nothing came within %s ms", w[2]);
	} else if (!strcmp(w[0], "closed") && n == 3) {
		r = next_packet(conn_of(w[1]), buf, sizeof(buf), atoi(w[2]));
		if (r != -2)
			die("%s", r == -1 ? "still open" : "a packet came instead of the end");
	} else if (!strcmp(w[0], "close") && n == 2) {
		close(conn[conn_of(w[1])]);
		conn[conn_of(w[1])] = -1;
	} else if (!strcmp(w[0], "sleep") && n == 2)
		usleep((useconds_t)atoi(w[1]) * 1000);
	else
		die("bad line starting %s", w[0]);
}

static int talk(void)
{
	static char lines[LINES][1024];
	unsigned n = 0, pc;
	char *w[80], copy[1024];
	int nw, st;
	pid_t child;

	while (n < LINES && fgets(lines[n], sizeof(lines[n]), stdin))
		n++;
	for (pc = 0; pc < n; pc++) {
		lineno = pc + 1;
		strcpy(copy, lines[pc]);
		nw = split(copy, w, 80);
		if (nw == 0 || w[0][0] == '#')
			continue;
		if (!strcmp(w[0], "endfork"))
			exit(0); /* the child's end */
		if (strcmp(w[0], "fork") != 0) {
			run_line(w, nw);
			continue;
		}
		child = fork();
		if (child == 0)
			continue;
		while (pc < n && strncmp(lines[pc], "endfork", 7) != 0)
			pc++;
		if (child < 0 || waitpid(child, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			exit(1);
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "spawn"))
		return spawn(argc, argv);
	if (argc == 2 && !strcmp(argv[1], "thread"))
		return thread_mode();
	if (argc == 3 && !strcmp(argv[1], "talk")) {
		sock_path = argv[2];
		return talk();
	}
	fprintf(stderr, "usage: lmkd-client spawn PATH PROGRAM [ARG]... | thread | talk PATH < SCRIPT\n");
	return 2;
}
