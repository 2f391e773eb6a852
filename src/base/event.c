/* SPDX-License-Identifier: MIT */
/* event: epoll/signalfd/timerfd wrappers returning fds or -errno. */
#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>

#include "event.h"

int event_epoll_new(void)
{
	int fd = epoll_create1(EPOLL_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

static int event_ctl(int epfd, int op, int fd, uint32_t events, uint64_t tag)
{
	struct epoll_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.events = events;
	ev.data.u64 = tag;
	return epoll_ctl(epfd, op, fd, &ev) < 0 ? -errno : 0;
}

int event_add(int epfd, int fd, uint32_t events, uint64_t tag)
{
	return event_ctl(epfd, EPOLL_CTL_ADD, fd, events, tag);
}

int event_mod(int epfd, int fd, uint32_t events, uint64_t tag)
{
	return event_ctl(epfd, EPOLL_CTL_MOD, fd, events, tag);
}

int event_del(int epfd, int fd)
{
	return epoll_ctl(epfd, EPOLL_CTL_DEL, fd, NULL) < 0 ? -errno : 0;
}

int event_signalfd_new(const int *sigs, int n)
{
	sigset_t set;
	int i, fd;

	sigemptyset(&set);
	for (i = 0; i < n; i++)
		sigaddset(&set, sigs[i]);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
		return -errno;
	fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	return fd < 0 ? -errno : fd;
}

int event_timerfd_new(void)
{
	int fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);

	return fd < 0 ? -errno : fd;
}

int event_timer_arm(int tfd, uint64_t usec)
{
	struct itimerspec its;

	memset(&its, 0, sizeof(its));
	its.it_value.tv_sec = (time_t)(usec / 1000000);
	its.it_value.tv_nsec = (long)(usec % 1000000) * 1000;
	return timerfd_settime(tfd, 0, &its, NULL) < 0 ? -errno : 0;
}

uint64_t event_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

bool event_timer_expired(int tfd)
{
	uint64_t ticks;

	return read(tfd, &ticks, sizeof(ticks)) == (ssize_t)sizeof(ticks);
}
