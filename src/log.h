/* log: leveled log lines to stderr (journald-aware) or syslog.
 * The logger is a plain value owned by the daemon context; nothing here is global. */
#pragma once

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <syslog.h>

struct log {
	int max_level;   /* syslog priority: LOG_ERR .. LOG_DEBUG */
	bool use_syslog; /* otherwise stderr */
	bool journal;    /* stderr is connected to journald: prefix lines with <N> */
};

void log_init(struct log *l, int max_level, bool use_syslog);
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

struct proc_info;
struct tier_config;

/* The kill line: "<verb> pid= comm= uid= oom_score_adj= rss_kb= badness_kb= tier= stall_us= window_us=
 * reason= cgroup=[ group=]". verb is "kill" or "would-kill"; badness_kb is pi->badness_kb, "?" when
 * unknown; cgroup is the victim's cgroup2 path ("?" when it was not read; cut after LOG_CGROUP_MAX
 * bytes, ending in "..."); group, for an instance of a cgroup-pattern tier, the group that instance
 * watches ("" or NULL: none, no field). Paths are escaped as tokens. Returns the length (truncated
 * at size-1). */
#define LOG_CGROUP_MAX 255
int log_format_kill(char *buf, size_t size, const char *verb, const struct proc_info *pi,
		    const struct tier_config *t, const char *reason, const char *group);

struct kill_record;

/* The MESSAGE_ID of every kill (and would-kill) entry in the journal:
 * journalctl MESSAGE_ID=3aad526eb9cf4728993578bee98844ab */
#define LOG_KILL_MESSAGE_ID "3aad526eb9cf4728993578bee98844ab"

/* Where stderr goes to journald (l->journal) and libsystemd is built in:
 * sends the kill line as one structured entry (MESSAGE = line, the
 * MESSAGE_ID above, PSI_LMKD_* fields from r) and returns 0; the caller
 * then writes no stderr line. -ENOTSUP elsewhere (write the line), or the
 * journal's -errno. */
int log_journal_kill(const struct log *l, int level, const char *verb, const char *line, const struct kill_record *r);
