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

#ifdef HAVE_SYSTEMD
#include <systemd/sd-journal.h>
#endif

#include "config.h"
#include "escape.h"
#include "history.h"
#include "log.h"
#include "procfs.h"
#include "victim.h"

static bool stderr_is_journal(void)
{
	const char *js = getenv("JOURNAL_STREAM");
	struct stat st;
	unsigned long dev, ino;

	if (!js || sscanf(js, "%lu:%lu", &dev, &ino) != 2)
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
 * a user chose. Every control byte left in the formatted line becomes \xHH,
 * so one call is one line whatever it prints. */
void log_vmsg(const struct log *l, int level, const char *fmt, va_list ap)
{
	char raw[2048], line[2048];

	if (level > l->max_level)
		return;
	vsnprintf(raw, sizeof(raw), fmt, ap);
	escape_bytes(line, sizeof(line), raw, strlen(raw), ESCAPE_CONTROL, NULL);
	if (l->use_syslog) {
		syslog(level, "%s", line);
		return;
	}
	if (l->journal)
		fprintf(stderr, "<%d>%s%s\n", level, level_word(level), line);
	else
		fprintf(stderr, "psi-lmkd: %s%s\n", level_word(level), line);
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

/* A path as one token, cut after LOG_CGROUP_MAX bytes ("..." then). */
static void escape_path(char *dst, size_t size, const char *path)
{
	size_t n = strlen(path), o;

	o = escape_bytes(dst, size, path, n > LOG_CGROUP_MAX ? LOG_CGROUP_MAX : n, ESCAPE_TOKEN, NULL);
	if (n > LOG_CGROUP_MAX && o + 4 <= size)
		memcpy(dst + o, "...", 4);
}

int log_format_kill(char *buf, size_t size, const char *verb, const struct proc_info *pi,
		    const struct tier_config *t, const char *reason, const char *group)
{
	char comm[4 * PROC_COMM_MAX + 1], badness[24], cg[4 * LOG_CGROUP_MAX + 4], grp[4 * LOG_CGROUP_MAX + 4];
	int n;

	log_escape_token(comm, sizeof(comm), pi->comm[0] ? pi->comm : "?");
	if (pi->badness_kb == VICTIM_BADNESS_UNKNOWN)
		snprintf(badness, sizeof(badness), "?");
	else
		snprintf(badness, sizeof(badness), "%" PRId64, pi->badness_kb);
	escape_path(cg, sizeof(cg), pi->has_cgroup && !pi->cgroup_unknown ? pi->cgroup : "?");
	escape_path(grp, sizeof(grp), group ? group : "");
	n = snprintf(buf, size,
		     "%s pid=%d comm=%s uid=%u oom_score_adj=%d rss_kb=%" PRIu64 " badness_kb=%s tier=%s stall_us=%" PRIu64
		     " window_us=%" PRIu64 " reason=%s cgroup=%s%s%s",
		     verb, (int)pi->pid, comm, (unsigned)pi->uid, pi->oom_score_adj, pi->rss_kb, badness, t->name,
		     t->stall_us, t->window_us, reason, cg, *grp ? " group=" : "", grp);
	if (n < 0)
		return 0;
	return (size_t)n >= size ? (int)size - 1 : n;
}

#ifdef HAVE_SYSTEMD
/* "12.34", or "" when the file could not be read */
static const char *avg10(char *buf, size_t size, bool has, uint32_t v)
{
	if (has)
		snprintf(buf, size, "%u.%02u", v / 100, v % 100);
	else
		buf[0] = '\0';
	return buf;
}

int log_journal_kill(const struct log *l, int level, const char *verb, const char *line, const struct kill_record *r)
{
	char cg[4 * HISTORY_CGROUP_MAX], grp[4 * HISTORY_CGROUP_MAX], some[16], full[16], bad[24], avail[24];
	int rc;

	if (!l->journal || l->use_syslog || level > l->max_level)
		return -ENOTSUP;
	escape_bytes(cg, sizeof(cg), r->cgroup, strlen(r->cgroup), ESCAPE_CONTROL, NULL);
	escape_bytes(grp, sizeof(grp), r->group, strlen(r->group), ESCAPE_CONTROL, NULL);
	if (r->badness_kb == VICTIM_BADNESS_UNKNOWN)
		bad[0] = '\0';
	else
		snprintf(bad, sizeof(bad), "%" PRId64, r->badness_kb);
	if (r->has_mem)
		snprintf(avail, sizeof(avail), "%" PRIu64, r->available_bytes >> 10);
	else
		avail[0] = '\0';
	rc = sd_journal_send("MESSAGE=%s", line, "MESSAGE_ID=" LOG_KILL_MESSAGE_ID, "PRIORITY=%d", level,
			     "SYSLOG_IDENTIFIER=psi-lmkd", "PSI_LMKD_ACTION=%s", verb, "PSI_LMKD_PID=%d", (int)r->pid,
			     "PSI_LMKD_COMM=%s", r->comm, "PSI_LMKD_UID=%u", (unsigned)r->uid,
			     "PSI_LMKD_OOM_SCORE_ADJ=%d", r->oom_score_adj, "PSI_LMKD_RSS_KB=%" PRIu64, r->rss_kb,
			     "PSI_LMKD_BADNESS_KB=%s", bad, "PSI_LMKD_TIER=%s", r->tier, "PSI_LMKD_REASON=%s", r->reason,
			     "PSI_LMKD_CGROUP=%s", cg, "PSI_LMKD_GROUP=%s", grp,
			     "PSI_LMKD_PRESSURE_SOME_AVG10=%s", avg10(some, sizeof(some), r->has_psi, r->psi.some.avg10),
			     "PSI_LMKD_PRESSURE_FULL_AVG10=%s", avg10(full, sizeof(full), r->has_psi && r->psi.full.present,
									r->psi.full.avg10),
			     "PSI_LMKD_AVAILABLE_KB=%s", avail, NULL);
	return rc < 0 ? rc : 0;
}
#else
int log_journal_kill(const struct log *l, int level, const char *verb, const char *line, const struct kill_record *r)
{
	(void)l;
	(void)level;
	(void)verb;
	(void)line;
	(void)r;
	return -ENOTSUP;
}
#endif
