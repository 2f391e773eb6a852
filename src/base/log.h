/* SPDX-License-Identifier: MIT */
/* log: leveled log lines to stderr (journald-aware) or syslog.
 * The logger is a plain value owned by the daemon context; nothing here is global. */
#pragma once

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <syslog.h>

struct logsink;

struct log {
	int max_level;   /* syslog priority: LOG_ERR .. LOG_DEBUG */
	bool use_syslog; /* otherwise stderr */
	bool journal;    /* stderr is connected to journald: prefix lines with <N> */
	struct logsink *sink; /* stderr lines go through it (never blocking); NULL: fprintf */
};

void log_init(struct log *l, int max_level, bool use_syslog);
/* stderr lines from now on through sink (logsink_init'ed on stderr), which
 * the daemon flushes on every wakeup (log_flush). */
void log_use_sink(struct log *l, struct logsink *sink);
/* Writes queued lines as far as stderr's reader takes them; once the queue
 * is empty, one warning of the lines it had to drop. Returns true while
 * lines stay queued: the caller should come back soon (LOG_RETRY_MS). */
bool log_flush(const struct log *l);
#define LOG_RETRY_MS 50
void log_msg(const struct log *l, int level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void log_vmsg(const struct log *l, int level, const char *fmt, va_list ap) __attribute__((format(printf, 3, 0)));

#define log_err(l, ...) log_msg((l), LOG_ERR, __VA_ARGS__)
#define log_warn(l, ...) log_msg((l), LOG_WARNING, __VA_ARGS__)
#define log_notice(l, ...) log_msg((l), LOG_NOTICE, __VA_ARGS__)
#define log_info(l, ...) log_msg((l), LOG_INFO, __VA_ARGS__)
#define log_debug(l, ...) log_msg((l), LOG_DEBUG, __VA_ARGS__)

/* One token of a key=value line (escape.h, ESCAPE_TOKEN): control bytes,
 * bytes >= 0x80, spaces, '=' and '"' become \xHH. */
void log_escape_token(char *dst, size_t size, const char *src);
