/* SPDX-License-Identifier: MIT */
/* lmkd-watchdog: the thread that kills when the event loop is stuck (see
 * lmkd-watchdog.h). It reads only its own copy of the loop's candidates and
 * /proc; it signals through pidfds proven to name the chosen processes. */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/eventfd.h>

#include "caps.h"
#include "fileio.h"
#include "lmkd-watchdog.h"
#include "reaper.h"

/* the thread's stack, and how much of it is touched at start */
#define LMKD_WATCHDOG_STACK (256 * 1024)
#define LMKD_WATCHDOG_PREFAULT (64 * 1024)

static uint64_t mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000ULL + (uint64_t)ts.tv_nsec / 1000;
}

bool lmkd_watchdog_due(uint64_t busy_since, uint64_t last_bite, uint64_t now, uint64_t timeout)
{
	if (!busy_since || now < busy_since || now - busy_since < timeout)
		return false;
	return !last_bite || now < last_bite || now - last_bite >= timeout;
}

void lmkd_watchdog_busy(struct lmkd_watchdog *w, uint64_t now_us)
{
	atomic_store(&w->busy_since_us, now_us ? now_us : 1);
}

void lmkd_watchdog_idle(struct lmkd_watchdog *w)
{
	atomic_store(&w->busy_since_us, 0);
}

void lmkd_watchdog_publish(struct lmkd_watchdog *w, const struct lmkd_watchdog_cand *c, size_t n)
{
	if (n > LMKD_WATCHDOG_CANDIDATES)
		n = LMKD_WATCHDOG_CANDIDATES;
	pthread_mutex_lock(&w->lock);
	memcpy(w->cand, c, n * sizeof(*c));
	w->n = n;
	pthread_mutex_unlock(&w->lock);
}

/* the oom_score_adj /proc shows for pid now; 0 or -errno */
static int current_adj(int procfd, pid_t pid, int *adj)
{
	char path[32], buf[16];
	ssize_t n;

	snprintf(path, sizeof(path), "%d/oom_score_adj", (int)pid);
	n = read_file_at(procfd, path, buf, sizeof(buf));
	if (n <= 0)
		return n < 0 ? (int)n : -EIO;
	return sscanf(buf, "%d", adj) == 1 ? 0 : -EIO;
}

/* 0: signalled (or, dry, would be); -ESRCH: not that process any more, or
 * no longer at its adj */
static int bite_one(struct lmkd_watchdog *w, const struct lmkd_watchdog_cand *c, uint64_t busy_us)
{
	int fd = reaper_open_verified(w->procfd, c->pid, c->start_time), adj, r;

	if (fd < 0)
		return -ESRCH;
	if (current_adj(w->procfd, c->pid, &adj) < 0 || adj != c->adj) {
		close(fd);
		return -ESRCH;
	}
	if (atomic_load(&w->dry_run)) {
		log_warn(w->log, "lmkd watchdog: the event loop has been busy for %" PRIu64 " ms: would kill pid %d (%s), "
			 "oom_score_adj %d (dry run)", busy_us / 1000, (int)c->pid, c->comm, c->adj);
		close(fd);
		return 0;
	}
	r = reaper_signal(fd, SIGKILL);
	if (r == 0) {
		(void)reaper_mrelease(fd);
		atomic_fetch_add(&w->kills, 1);
		log_warn(w->log, "lmkd watchdog: the event loop has been busy for %" PRIu64 " ms: killed pid %d (%s), uid %u, "
			 "oom_score_adj %d", busy_us / 1000, (int)c->pid, c->comm, (unsigned)c->uid, c->adj);
	}
	close(fd);
	return r == 0 ? 0 : -ESRCH;
}

int lmkd_watchdog_bite(struct lmkd_watchdog *w, uint64_t busy_us, pid_t *killed)
{
	struct lmkd_watchdog_cand cand[LMKD_WATCHDOG_CANDIDATES];
	size_t n, i;

	pthread_mutex_lock(&w->lock);
	n = w->n;
	memcpy(cand, w->cand, n * sizeof(cand[0]));
	pthread_mutex_unlock(&w->lock);
	for (i = 0; i < n; i++)
		if (bite_one(w, &cand[i], busy_us) == 0) {
			*killed = cand[i].pid;
			return 0;
		}
	log_warn(w->log, "lmkd watchdog: the event loop has been busy for %" PRIu64 " ms, but none of the %zu registered "
		 "processes it chose last is still there at its adj: nothing killed", busy_us / 1000, n);
	return -ESRCH;
}

/* Touches the stack the bite will use, so that mlockall(MCL_ONFAULT)
 * locks it now rather than the bite faulting it in under pressure. */
static void prefault_stack(void)
{
	volatile char buf[LMKD_WATCHDOG_PREFAULT];
	size_t i;

	for (i = 0; i < sizeof(buf); i += 512)
		buf[i] = 0;
}

static void *watchdog_main(void *arg)
{
	struct lmkd_watchdog *w = arg;
	struct pollfd p = { .fd = w->stop_fd, .events = POLLIN };
	/* capabilities are per thread: the on_kill hook's CAP_SETUID and
	 * CAP_SETGID, which the loop may keep permitted, are not this thread's */
	static const cap_value_t hook_only[] = { CAP_SETUID, CAP_SETGID };
	int period_ms = (int)(w->timeout_us / 4000);

	(void)caps_drop_permitted(hook_only, sizeof(hook_only) / sizeof(hook_only[0]));
	prefault_stack();

	if (period_ms < 1)
		period_ms = 1;
	for (;;) {
		uint64_t busy, now;
		pid_t killed;
		int r = poll(&p, 1, period_ms);

		if (r > 0 || (r < 0 && errno != EINTR))
			break;
		busy = atomic_load(&w->busy_since_us);
		now = mono_us();
		if (!lmkd_watchdog_due(busy, w->last_bite_us, now, w->timeout_us))
			continue;
		w->last_bite_us = now;
		(void)lmkd_watchdog_bite(w, now - busy, &killed);
	}
	return NULL;
}

int lmkd_watchdog_start(struct lmkd_watchdog *w, int procfd, const struct log *log, uint64_t timeout_us)
{
	pthread_attr_t attr;
	sigset_t all, old;
	int r;

	memset(w, 0, sizeof(*w));
	w->procfd = procfd;
	w->log = log;
	w->timeout_us = timeout_us;
	atomic_init(&w->busy_since_us, 0);
	atomic_init(&w->dry_run, false);
	atomic_init(&w->kills, 0);
	w->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (w->stop_fd < 0)
		return -errno;
	r = -pthread_mutex_init(&w->lock, NULL);
	if (r < 0)
		goto fail_fd;
	/* the thread takes no signal: the loop's signalfd gets them all */
	r = -pthread_attr_init(&attr);
	if (r < 0)
		goto fail_lock;
	(void)pthread_attr_setstacksize(&attr, LMKD_WATCHDOG_STACK);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = -pthread_create(&w->thread, &attr, watchdog_main, w);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (r < 0)
		goto fail_lock;
	(void)pthread_setname_np(w->thread, "lmkd_watchdog");
	w->running = true;
	return 0;
fail_lock:
	pthread_mutex_destroy(&w->lock);
fail_fd:
	close(w->stop_fd);
	w->stop_fd = -1;
	return r;
}

void lmkd_watchdog_stop(struct lmkd_watchdog *w)
{
	uint64_t one = 1;

	if (!w->running)
		return;
	if (write(w->stop_fd, &one, sizeof(one)) != sizeof(one))
		pthread_cancel(w->thread);
	pthread_join(w->thread, NULL);
	pthread_mutex_destroy(&w->lock);
	close(w->stop_fd);
	w->stop_fd = -1;
	w->running = false;
}
