/* SPDX-License-Identifier: MIT */
/* vmpressure - listen to cgroup v1 memory pressure notifications.
 *
 * Usage: vmpressure V1_MEMCG_DIR [TIMEOUT_S]
 *
 * Registers one eventfd per level of V1_MEMCG_DIR/memory.pressure_level
 * ("low", "medium", "critical", default mode) and one on memory.oom_control
 * (the memcg entered OOM), through V1_MEMCG_DIR/cgroup.event_control.
 * Prints "armed <epoch_us>", then one line per wakeup and level:
 *
 *     <epoch_us> <level> <count>
 *
 * where level is low, medium, critical or oom and count the number of
 * notifications since the previous line of that level (an eventfd adds
 * them up while nobody reads).  A listener for a level is told about that
 * level and every more severe one: a "critical" notification also counts
 * in "medium" and "low".  At TIMEOUT_S (default: none), SIGTERM or SIGINT
 * it prints "total low N medium N critical N oom N" and exits 0; 1 on
 * error (with a message).  Never reads or writes anything but these files.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/time.h>
#include <unistd.h>

#define NLEVELS 4

static const char *const level_name[NLEVELS] = { "low", "medium", "critical", "oom" };

static long long epoch_us(void)
{
	struct timeval tv;

	gettimeofday(&tv, NULL);
	return (long long)tv.tv_sec * 1000000LL + tv.tv_usec;
}

static void die(const char *what, const char *path)
{
	fprintf(stderr, "vmpressure: %s%s%s: %s\n", what, path ? " " : "", path ? path : "", strerror(errno));
	exit(1);
}

/* Registers eventfd EFD for the file FILE of DIR (with ARGS after the fds,
 * e.g. the level).  Returns 0, or -1 if FILE does not exist. */
static int arm(int ctl, const char *dir, const char *file, const char *args, int efd)
{
	char path[4096], line[128];
	int fd, n;

	n = snprintf(path, sizeof(path), "%s/%s", dir, file);
	if (n < 0 || (size_t)n >= sizeof(path)) {
		errno = ENAMETOOLONG;
		die("path", dir);
	}
	/* The kernel keeps its own reference; this fd may stay open. */
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			return -1;
		die("open", path);
	}
	n = snprintf(line, sizeof(line), "%d %d%s%s", efd, fd, args ? " " : "", args ? args : "");
	if (write(ctl, line, (size_t)n) != n)
		die("cgroup.event_control: register", path);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long long total[NLEVELS] = { 0 };
	struct epoll_event ev;
	long long deadline = 0;
	char path[4096];
	int efd[NLEVELS], ep, sfd, ctl, i;
	sigset_t mask;

	if (argc != 2 && argc != 3) {
		fprintf(stderr, "usage: vmpressure V1_MEMCG_DIR [TIMEOUT_S]\n");
		return 2;
	}
	if (argc == 3)
		deadline = epoch_us() + atoll(argv[2]) * 1000000LL;
	setvbuf(stdout, NULL, _IOLBF, 0);

	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	if (sigprocmask(SIG_BLOCK, &mask, NULL) != 0)
		die("sigprocmask", NULL);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (sfd < 0 || ep < 0)
		die("signalfd/epoll", NULL);
	ev.events = EPOLLIN;
	ev.data.u32 = NLEVELS;
	if (epoll_ctl(ep, EPOLL_CTL_ADD, sfd, &ev) != 0)
		die("epoll_ctl", NULL);

	snprintf(path, sizeof(path), "%s/cgroup.event_control", argv[1]);
	ctl = open(path, O_WRONLY | O_CLOEXEC);
	if (ctl < 0)
		die("open", path);
	for (i = 0; i < NLEVELS; i++) {
		efd[i] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (efd[i] < 0)
			die("eventfd", NULL);
		if (i < 3) {
			if (arm(ctl, argv[1], "memory.pressure_level", level_name[i], efd[i]) < 0) {
				errno = ENOENT;
				die("no memory.pressure_level in", argv[1]);
			}
		} else if (arm(ctl, argv[1], "memory.oom_control", NULL, efd[i]) < 0) {
			fprintf(stderr, "vmpressure: no memory.oom_control: no oom lines\n");
			continue;
		}
		ev.events = EPOLLIN;
		ev.data.u32 = (uint32_t)i;
		if (epoll_ctl(ep, EPOLL_CTL_ADD, efd[i], &ev) != 0)
			die("epoll_ctl", NULL);
	}
	printf("armed %lld\n", epoch_us());

	for (;;) {
		int timeout = -1, r;

		if (deadline) {
			long long left = deadline - epoch_us();

			if (left <= 0)
				break;
			timeout = (int)(left / 1000) + 1;
		}
		r = epoll_wait(ep, &ev, 1, timeout);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			die("epoll_wait", NULL);
		if (r == 0)
			continue;
		if (ev.data.u32 == NLEVELS)
			break;	/* SIGTERM / SIGINT */
		{
			uint64_t n;

			i = (int)ev.data.u32;
			if (read(efd[i], &n, sizeof(n)) != (ssize_t)sizeof(n)) {
				if (errno == EAGAIN || errno == EINTR)
					continue;
				die("read eventfd", NULL);
			}
			total[i] += n;
			printf("%lld %s %llu\n", epoch_us(), level_name[i], (unsigned long long)n);
		}
	}
	printf("total low %llu medium %llu critical %llu oom %llu\n", total[0], total[1], total[2], total[3]);
	return 0;
}
