/* SPDX-License-Identifier: MIT */
/* trace: record and replay of pressure-file totals (see trace.h for the format). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>

#include "event.h"
#include "fileio.h"
#include "psi-monitor.h"
#include "psi.h"
#include "trace.h"
#include "watch.h"

static int parse_u64_field(const char **sp, uint64_t *out)
{
	const char *s = *sp;
	uint64_t v = 0;

	while (*s == ' ' || *s == '\t')
		s++;
	if (*s < '0' || *s > '9')
		return -EINVAL;
	while (*s >= '0' && *s <= '9') {
		uint64_t d = (uint64_t)(*s++ - '0');

		if (v > (UINT64_MAX - d) / 10)
			return -EINVAL;
		v = v * 10 + d;
	}
	*out = v;
	*sp = s;
	return 0;
}

int trace_parse_line(const char *line, struct trace_sample *out)
{
	const char *s = line;

	while (*s == ' ' || *s == '\t')
		s++;
	if (*s == '#' || *s == '\0' || *s == '\n' || (*s == '\r' && s[1] == '\n'))
		return 0;
	if (parse_u64_field(&s, &out->t_us) < 0 || parse_u64_field(&s, &out->some_us) < 0 ||
	    parse_u64_field(&s, &out->full_us) < 0)
		return -EINVAL;
	while (*s == ' ' || *s == '\t' || *s == '\r')
		s++;
	if (*s != '\n' && *s != '\0')
		return -EINVAL;
	return 1;
}

/* Flushes a trace line. A reader that went away (EPIPE: SIGPIPE no longer
 * kills the process) or a full disk ends the recording with that error. */
static int flush_out(FILE *out)
{
	errno = 0;
	if (fflush(out) == 0 && !ferror(out))
		return 0;
	return errno ? -errno : -EIO;
}

static uint64_t wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* The recorder's fds: the pressure file, a periodic timer, SIGINT/SIGTERM. */
struct recorder {
	int fd, tfd, sfd, ep;
};

static void recorder_close(struct recorder *rec)
{
	close_fd(&rec->ep);
	close_fd(&rec->sfd);
	close_fd(&rec->tfd);
	close_fd(&rec->fd);
}

/* Opens path and the loop's fds, the timer ticking every interval_us from
 * now. 0 or -errno (what was opened is closed by recorder_close). */
static int recorder_open(struct recorder *rec, int rootfd, const char *path, uint64_t interval_us)
{
	static const int sigs[] = { SIGINT, SIGTERM };
	struct psi_stats st = { 0 };
	struct itimerspec its;
	int r;

	rec->tfd = rec->sfd = rec->ep = -1;
	if ((r = rec->fd = sysroot_openat(rootfd, path, O_RDONLY)) < 0 || (r = watch_read_totals(rec->fd, &st)) < 0 ||
	    (r = rec->tfd = event_timerfd_new()) < 0 || (r = rec->sfd = event_signalfd_new(sigs, 2)) < 0 ||
	    (r = rec->ep = event_epoll_new()) < 0 || (r = event_add(rec->ep, rec->tfd, EPOLLIN, 1)) < 0 ||
	    (r = event_add(rec->ep, rec->sfd, EPOLLIN, 2)) < 0)
		return r;
	memset(&its, 0, sizeof(its));
	its.it_value.tv_nsec = 1;
	its.it_interval.tv_sec = (time_t)(interval_us / 1000000);
	its.it_interval.tv_nsec = (long)(interval_us % 1000000) * 1000;
	return timerfd_settime(rec->tfd, 0, &its, NULL) < 0 ? -errno : 0;
}

/* Samples at each tick until a signal, duration_us (0: none) or an error. */
static int recorder_loop(struct recorder *rec, uint64_t duration_us, FILE *out)
{
	struct psi_stats st = { 0 }; /* set by watch_read_totals() unless it fails (the analyzer cannot tell) */
	uint64_t start = event_now_us(), now;
	struct epoll_event ev;
	int r;

	for (;;) {
		if (epoll_wait(rec->ep, &ev, 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (ev.data.u64 == 2)
			return 0;
		if (!event_timer_expired(rec->tfd))
			continue;
		now = event_now_us();
		r = watch_read_totals(rec->fd, &st);
		if (r < 0)
			return r;
		fprintf(out, "%" PRIu64 " %" PRIu64 " %" PRIu64 "\n", now - start, st.some.total_us, st.full.total_us);
		r = flush_out(out);
		if (r < 0)
			return r;
		if (duration_us && now - start >= duration_us)
			return 0;
	}
}

int trace_record(int rootfd, const char *path, uint64_t interval_us, uint64_t duration_us, FILE *out)
{
	struct recorder rec;
	int r = recorder_open(&rec, rootfd, path, interval_us);

	if (r == 0) {
		fprintf(out, "# psi-lmkd trace v1 pressure=%s interval_us=%" PRIu64 "\n", path, interval_us);
		fprintf(out, "# time_us some_total_us full_total_us\n");
		/* the wall clock at time_us 0: places kills (--status --json) on the
		 * trace's time axis (tools/psi-lmkd-plot) */
		fprintf(out, "# start_unix_ms=%" PRIu64 "\n", wall_ms());
		r = flush_out(out);
	}
	if (r == 0)
		r = recorder_loop(&rec, duration_us, out);
	recorder_close(&rec);
	return r;
}

int trace_replay(const struct config *cfg, FILE *in, FILE *out, struct trace_replay_stats *st,
		 unsigned long *bad_line)
{
	struct psi_mon mon[CONFIG_TIERS_MAX];
	struct trace_sample prev = { 0 };
	bool have_prev = false;
	char line[256];
	size_t i;

	memset(st, 0, sizeof(*st));
	*bad_line = 0;
	for (i = 0; i < cfg->n_tiers; i++) {
		/* a tier with only low_available has no stall threshold to
		 * replay (its monitor would have a zero window); say so once */
		st->skipped[i] = !cfg->tiers[i].has_trigger;
		if (st->skipped[i])
			fprintf(out, "# tier %s: no trigger, not replayed (low_available needs live memory readings)\n",
				cfg->tiers[i].name);
		psi_mon_init(&mon[i], cfg->tiers[i].stall_us, cfg->tiers[i].window_us);
	}
	while (fgets(line, sizeof(line), in)) {
		struct trace_sample s;
		int r;

		st->lines++;
		if (!strchr(line, '\n') && !feof(in)) {
			*bad_line = st->lines;
			return -EINVAL;
		}
		r = trace_parse_line(line, &s);
		if (r < 0 || (r > 0 && have_prev && s.t_us < prev.t_us)) {
			*bad_line = st->lines;
			return -EINVAL;
		}
		if (r == 0)
			continue;
		st->samples++;
		for (i = 0; i < cfg->n_tiers; i++) {
			const struct tier_config *t = &cfg->tiers[i];
			uint64_t total = t->state == PSI_FULL ? s.full_us : s.some_us;
			uint64_t growth;
			bool new_stall;

			if (st->skipped[i])
				continue;
			growth = psi_mon_growth(&mon[i], s.t_us, total);
			if (psi_mon_update(&mon[i], s.t_us, total, &new_stall)) {
				st->events[i]++;
				fprintf(out, "%" PRIu64 ".%03" PRIu64 " tier=%s growth_us=%" PRIu64 " threshold_us=%" PRIu64 "\n",
					s.t_us / 1000000, s.t_us / 1000 % 1000, t->name, growth, t->stall_us);
			}
		}
		prev = s;
		have_prev = true;
	}
	return 0;
}
