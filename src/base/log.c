/* SPDX-License-Identifier: MIT */
/* log: formats and emits log lines. Owns nothing but the formatting rules:
 * stderr lines are "psi-lmkd: [level: ]message" (with a <N> priority prefix instead
 * when journald reads stderr, see JOURNAL_STREAM), or syslog(3) when daemonized. */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "escape.h"
#include "log.h"
#include "logsink.h"

static bool stderr_is_journal(void)
{
	const char *js = getenv("JOURNAL_STREAM");
	struct stat st;
	unsigned long long dev, ino; /* dev_t and ino_t are 64-bit, long is not on armhf */

	if (!js || sscanf(js, "%llu:%llu", &dev, &ino) != 2)
		return false;
	if (fstat(STDERR_FILENO, &st) < 0)
		return false;
	return st.st_dev == (dev_t)dev && st.st_ino == (ino_t)ino;
}

void log_init(struct log *l, int max_level, bool use_syslog)
{
	l->max_level = max_level;
	l->use_syslog = use_syslog;
	l->journal = !use_syslog && stderr_is_journal();
	l->sink = NULL;
	if (use_syslog)
		openlog("psi-lmkd", LOG_PID | LOG_NDELAY, LOG_DAEMON);
}

static const char *level_word(int level)
{
	switch (level) {
	case LOG_EMERG:
	case LOG_ALERT:
	case LOG_CRIT:
	case LOG_ERR:
		return "error: ";
	case LOG_WARNING:
		return "warning: ";
	case LOG_DEBUG:
		return "debug: ";
	default:
		return "";
	}
}

/* Defence in depth against forged log lines: names are escaped where they
 * are read (procfs), but a line may also carry a cgroup path or anything else
 * a user chose. Every control byte and every byte of invalid UTF-8 left in
 * the formatted line becomes \xHH, so one call is one line of UTF-8
 * whatever it prints. */
void log_vmsg(const struct log *l, int level, const char *fmt, va_list ap)
{
	char raw[2048], line[2048], out[sizeof(line) + 32];
	size_t len;
	int n;

	if (level > l->max_level)
		return;
	vsnprintf(raw, sizeof(raw), fmt, ap);
	escape_bytes(line, sizeof(line), raw, strlen(raw), ESCAPE_CONTROL, NULL);
	if (l->use_syslog) {
		syslog(level, "%s", line);
		return;
	}
	/* the longest prefix and level word are 19 bytes: a line is never cut */
	n = l->journal ? snprintf(out, sizeof(out), "<%d>%s%s\n", level, level_word(level), line)
		       : snprintf(out, sizeof(out), "psi-lmkd: %s%s\n", level_word(level), line);
	if (n <= 0)
		return;
	len = (size_t)n < sizeof(out) ? (size_t)n : sizeof(out) - 1;
	if (l->sink)
		logsink_put(l->sink, out, len, level <= LOG_NOTICE);
	else
		fwrite(out, 1, len, stderr);
}

void log_use_sink(struct log *l, struct logsink *sink)
{
	l->sink = l->use_syslog ? NULL : sink;
}

bool log_flush(const struct log *l)
{
	uint64_t n;

	if (!l->sink)
		return false;
	if (logsink_flush(l->sink))
		return true;
	if (!l->sink->dropped)
		return false;
	n = l->sink->dropped;
	l->sink->dropped = 0;
	log_msg(l, LOG_WARNING, "%" PRIu64 " log line%s dropped: the reader of stderr (journald, a pipe) did not keep up",
		n, n == 1 ? " was" : "s were");
	return l->sink->len > 0;
}

void log_msg(const struct log *l, int level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vmsg(l, level, fmt, ap);
	va_end(ap);
}

void log_escape_token(char *dst, size_t size, const char *src)
{
	escape_bytes(dst, size, src, strlen(src), ESCAPE_TOKEN, NULL);
}
