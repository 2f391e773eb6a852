/* SPDX-License-Identifier: MIT */
/* psiagree - compare the kernel's PSI trigger with the userspace monitor.
 *
 * Usage: psiagree KFILE UFILE STATE STALL WINDOW DURATION
 *
 *   KFILE     pressure file on which a kernel trigger "STATE STALL WINDOW" is
 *             armed, or "-" for none
 *   UFILE     pressure file whose total= is sampled every WINDOW/10 and fed
 *             to a userspace monitor (kernel/psi-monitor) with the same
 *             parameters, or "-" for none
 *   STATE     some | full
 *   STALL, WINDOW, DURATION
 *             durations: a number with us, ms or s (bare numbers are us,
 *             like the kernel's own trigger syntax); DURATION is how long to
 *             run
 *
 * Output (stdout, line buffered): one line per event,
 *   kernel <t_ms>      the kernel trigger fired (POLLPRI)
 *   user <t_ms>        the userspace monitor fired
 * where t_ms is milliseconds since both monitors were armed, and comment
 * lines starting with '#' (parameters, a summary at the end).
 *
 * Why two files: an unprivileged kernel trigger (window a multiple of 2 s,
 * no CAP_SYS_RESOURCE) is starved by frequent reads of its own file, so the
 * userspace side should sample another file with the same totals, e.g. the
 * parent cgroup's memory.pressure when every task is in the leaf.
 *
 * SIGTERM or SIGINT end the run early, with the summary.
 *
 * Exit: 0 ran for DURATION (or was stopped); 2 usage; 3 the kernel refused the trigger
 * (message on stderr); 1 any other failure (file unreadable, cgroup gone).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "psi-monitor.h"
#include "psi.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static uint64_t mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static void usage(void)
{
	fprintf(stderr, "usage: psiagree KFILE|- UFILE|- some|full STALL WINDOW DURATION\n"
			"  durations: NUMBER[us|ms|s], bare numbers are microseconds\n");
	exit(2);
}

/* "100ms", "2s", "1.5s", "70000" (us) -> microseconds; false if malformed */
static bool parse_duration(const char *s, uint64_t *out)
{
	char *end;
	double v, mul;

	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || end == s || v < 0)
		return false;
	if (*end == '\0' || strcmp(end, "us") == 0)
		mul = 1;
	else if (strcmp(end, "ms") == 0)
		mul = 1e3;
	else if (strcmp(end, "s") == 0)
		mul = 1e6;
	else
		return false;
	v *= mul;
	if (v > 1e15)
		return false;
	*out = (uint64_t)(v + 0.5);
	return true;
}

/* Reads the whole pressure file through fd (from offset 0) and returns the
 * total= of state, or -errno. */
static int64_t read_total(int fd, enum psi_state state, const char *path)
{
	char buf[512];
	struct psi_stats st;
	ssize_t n;

	n = pread(fd, buf, sizeof(buf) - 1, 0);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	if (psi_parse(buf, &st) != 0) {
		fprintf(stderr, "psiagree: %s: cannot parse '%s'\n", path, buf);
		return -EINVAL;
	}
	if (state == PSI_FULL) {
		if (!st.full.present)
			return -EINVAL;
		return (int64_t)st.full.total_us;
	}
	return (int64_t)st.some.total_us;
}

int main(int argc, char **argv)
{
	const char *kfile, *ufile;
	enum psi_state state;
	uint64_t stall, window, duration, period, t0, end, last_total = 0, first_total = 0;
	uint64_t samples = 0, kernel_events = 0, user_events = 0, late_ticks = 0;
	struct psi_mon mon;
	sigset_t waitmask;
	char trig[64];
	int kfd = -1, ufd = -1, tfd = -1, len;

	if (argc != 7)
		usage();
	kfile = strcmp(argv[1], "-") == 0 ? NULL : argv[1];
	ufile = strcmp(argv[2], "-") == 0 ? NULL : argv[2];
	if (strcmp(argv[3], "some") == 0)
		state = PSI_SOME;
	else if (strcmp(argv[3], "full") == 0)
		state = PSI_FULL;
	else
		usage();
	if (!parse_duration(argv[4], &stall) || !parse_duration(argv[5], &window) ||
	    !parse_duration(argv[6], &duration))
		usage();
	if (window < PSI_MON_WINDOW_MIN_US || window > PSI_MON_WINDOW_MAX_US || stall == 0 || stall > window) {
		fprintf(stderr, "psiagree: need 0 < STALL <= WINDOW and WINDOW within 500ms..10s\n");
		return 2;
	}
	if (!kfile && !ufile)
		usage();
	period = window / PSI_MON_UPDATES_PER_WINDOW;
	setvbuf(stdout, NULL, _IOLBF, 0);
	{
		/* blocked except inside ppoll(): no lost wakeup between the
		 * check of stop and the wait */
		struct sigaction sa = { .sa_handler = on_signal };
		sigset_t block;

		sigemptyset(&sa.sa_mask);
		sigaction(SIGTERM, &sa, NULL);
		sigaction(SIGINT, &sa, NULL);
		sigemptyset(&block);
		sigaddset(&block, SIGTERM);
		sigaddset(&block, SIGINT);
		sigprocmask(SIG_BLOCK, &block, &waitmask);
		sigdelset(&waitmask, SIGTERM);
		sigdelset(&waitmask, SIGINT);
	}

	len = psi_format_trigger(trig, sizeof(trig), state, stall, window);
	if (len < 0) {
		fprintf(stderr, "psiagree: cannot format the trigger\n");
		return 2;
	}
	if (ufile) {
		int64_t t;

		ufd = open(ufile, O_RDONLY | O_CLOEXEC);
		if (ufd < 0) {
			fprintf(stderr, "psiagree: open %s: %s\n", ufile, strerror(errno));
			return 1;
		}
		tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
		if (tfd < 0) {
			perror("psiagree: timerfd_create");
			return 1;
		}
		psi_mon_init(&mon, stall, window);
		t = read_total(ufd, state, ufile);
		if (t < 0) {
			fprintf(stderr, "psiagree: read %s: %s\n", ufile, strerror((int)-t));
			return 1;
		}
		first_total = last_total = (uint64_t)t;
	}
	if (kfile) {
		kfd = open(kfile, O_RDWR | O_NONBLOCK | O_CLOEXEC);
		if (kfd < 0) {
			fprintf(stderr, "psiagree: open %s: %s\n", kfile, strerror(errno));
			return 1;
		}
		if (write(kfd, trig, (size_t)len + 1) < 0) {
			fprintf(stderr, "psiagree: trigger \"%s\" refused on %s: %s\n", trig, kfile, strerror(errno));
			return 3;
		}
	}
	/* Both armed: the userspace monitor starts its window now too. */
	t0 = mono_us();
	end = t0 + duration;
	if (ufd >= 0) {
		bool dummy;
		struct itimerspec its = {
			.it_interval = { .tv_sec = (time_t)(period / 1000000u), .tv_nsec = (long)(period % 1000000u) * 1000 },
		};

		psi_mon_update(&mon, t0, last_total, &dummy);
		its.it_value = its.it_interval;
		if (timerfd_settime(tfd, 0, &its, NULL) != 0) {
			perror("psiagree: timerfd_settime");
			return 1;
		}
	}
	printf("# psiagree pid=%d trigger=\"%s\" kfile=%s ufile=%s period_us=%" PRIu64 " duration_us=%" PRIu64
	       " start_total=%" PRIu64 "\n",
	       (int)getpid(), trig, kfile ? kfile : "-", ufile ? ufile : "-", period, duration, first_total);

	for (;;) {
		struct pollfd pfd[2];
		uint64_t now = mono_us();
		struct timespec timeout;
		int n = 0, ki = -1, ti = -1, r;

		if (now >= end || stop)
			break;
		timeout.tv_sec = (time_t)((end - now) / 1000000u);
		timeout.tv_nsec = (long)((end - now) % 1000000u) * 1000;
		if (kfd >= 0) {
			pfd[n] = (struct pollfd){ .fd = kfd, .events = POLLPRI };
			ki = n++;
		}
		if (tfd >= 0) {
			pfd[n] = (struct pollfd){ .fd = tfd, .events = POLLIN };
			ti = n++;
		}
		r = ppoll(pfd, (nfds_t)n, &timeout, &waitmask);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			perror("psiagree: ppoll");
			return 1;
		}
		if (ki >= 0 && pfd[ki].revents) {
			if (pfd[ki].revents & (POLLERR | POLLHUP | POLLNVAL)) {
				fprintf(stderr, "psiagree: %s: trigger gone (revents 0x%x)\n", kfile,
					(unsigned)pfd[ki].revents);
				return 1;
			}
			if (pfd[ki].revents & POLLPRI) {
				kernel_events++;
				printf("kernel %" PRIu64 "\n", (mono_us() - t0) / 1000u);
			}
		}
		if (ti >= 0 && (pfd[ti].revents & POLLIN)) {
			uint64_t ticks, ts;
			int64_t t;
			bool new_stall;

			if (read(tfd, &ticks, sizeof(ticks)) == (ssize_t)sizeof(ticks) && ticks > 1)
				late_ticks += ticks - 1;
			t = read_total(ufd, state, ufile);
			if (t < 0) {
				fprintf(stderr, "psiagree: read %s: %s\n", ufile, strerror((int)-t));
				return 1;
			}
			ts = mono_us();
			samples++;
			last_total = (uint64_t)t;
			if (psi_mon_update(&mon, ts, last_total, &new_stall)) {
				user_events++;
				printf("user %" PRIu64 "\n", (ts - t0) / 1000u);
			}
		}
	}
	printf("# end t_ms=%" PRIu64 " kernel_events=%" PRIu64 " user_events=%" PRIu64 " samples=%" PRIu64
	       " missed_ticks=%" PRIu64 " stall_us=%" PRIu64 "\n",
	       (mono_us() - t0) / 1000u, kernel_events, user_events, samples, late_ticks, last_total - first_total);
	return 0;
}
