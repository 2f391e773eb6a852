/* SPDX-License-Identifier: MIT */
/* event: thin helpers over epoll, signalfd and timerfd for the daemon loop. */
#pragma once

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

int event_epoll_new(void);
/* Adds fd with events; data.u64 = tag comes back with each event. */
int event_add(int epfd, int fd, uint32_t events, uint64_t tag);
/* Changes fd's events and tag. */
int event_mod(int epfd, int fd, uint32_t events, uint64_t tag);
int event_del(int epfd, int fd);
/* Blocks the given signals and returns a signalfd for them. */
int event_signalfd_new(const int *sigs, int n);
int event_timerfd_new(void);
/* Arms a one-shot relative timer; 0 disarms. */
int event_timer_arm(int tfd, uint64_t usec);
/* Reads a timerfd's expiry count: false if it had not expired (a stale
 * event, or one a re-arm in the same wakeup took back). */
bool event_timer_expired(int tfd);
/* Monotonic clock in microseconds. */
uint64_t event_now_us(void);
