/* SPDX-License-Identifier: MIT */
/* psi-floor - the kernel floor: arm one PSI trigger on a pressure file and
 * print the wall-clock time of each event, nothing else (no /proc scan, no
 * kill).  Never reads the pressure file (reads starve unprivileged triggers).
 *
 * Usage: psi-floor FILE "some 100000 2000000" MAX_EVENTS TIMEOUT_S
 * Output: "armed <epoch_us>", then "event <epoch_us>" per POLLPRI.
 * Exit: 0 after MAX_EVENTS events, 3 on timeout, 1 on error (message). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

static long long epoch_us(void)
{
	struct timeval tv;

	gettimeofday(&tv, NULL);
	return (long long)tv.tv_sec * 1000000LL + tv.tv_usec;
}

int main(int argc, char **argv)
{
	struct pollfd pfd;
	long long deadline;
	int fd, n = 0, max;

	if (argc != 5) {
		fprintf(stderr, "usage: psi-floor FILE TRIGGER MAX_EVENTS TIMEOUT_S\n");
		return 2;
	}
	max = atoi(argv[3]);
	deadline = epoch_us() + atoll(argv[4]) * 1000000LL;
	fd = open(argv[1], O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 || write(fd, argv[2], strlen(argv[2]) + 1) < 0) {
		fprintf(stderr, "psi-floor: %s: '%s': %s\n", argv[1], argv[2], strerror(errno));
		return 1;
	}
	printf("armed %lld\n", epoch_us());
	fflush(stdout);
	pfd.fd = fd;
	pfd.events = POLLPRI;
	while (n < max) {
		long long left = deadline - epoch_us();
		int r;

		if (left <= 0)
			return 3;
		r = poll(&pfd, 1, (int)(left / 1000) + 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			fprintf(stderr, "psi-floor: poll: %s\n", strerror(errno));
			return 1;
		}
		if (r == 0)
			continue;
		if (pfd.revents & POLLERR) {
			fprintf(stderr, "psi-floor: POLLERR (group gone?)\n");
			return 1;
		}
		if (pfd.revents & POLLPRI) {
			printf("event %lld\n", epoch_us());
			fflush(stdout);
			n++;
		}
	}
	return 0;
}
