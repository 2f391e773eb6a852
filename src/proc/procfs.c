/* SPDX-License-Identifier: MIT */
/* procfs: /proc parsers and the streaming scan used for victim choice.
 * Everything is read relative to a /proc directory fd, so a fixture tree can
 * stand in for the real /proc. A process may exit at any point; that is never
 * an error, only a skipped entry. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lines.h"
#include "escape.h"
#include "fileio.h"
#include "procfs.h"

#define PF_KTHREAD_FLAG 0x00200000u

int procfs_parse_stat(const char *text, struct proc_info *pi)
{
	const char *open = strchr(text, '(');
	const char *close = strrchr(text, ')');
	const char *s;
	size_t n;
	int field;

	if (!open || !close || close < open || close[1] != ' ')
		return -EINVAL;
	n = (size_t)(close - open - 1);
	escape_bytes(pi->comm, sizeof(pi->comm), open + 1, n, ESCAPE_NAME, NULL);

	/* fields after comm: 3 state, 4 ppid, ... 9 flags, ... 22 starttime */
	s = close + 2;
	for (field = 3; field <= 22; field++) {
		char *end;
		unsigned long long v;

		if (field == 3) {
			if (!isalpha((unsigned char)*s) || s[1] != ' ')
				return -EINVAL;
			pi->state = *s;
			s += 2;
			continue;
		}
		/* signed fields (priority, nice) parse too; only flags and starttime are kept */
		errno = 0;
		v = strtoull(s, &end, 10);
		if (end == s || errno)
			return -EINVAL;
		if (field == 9)
			pi->kthread = (v & PF_KTHREAD_FLAG) != 0;
		if (field == 22)
			pi->start_time = (uint64_t)v;
		s = end;
		if (field < 22) {
			if (*s != ' ')
				return -EINVAL;
			s++;
		}
	}
	return 0;
}

/* One unsigned decimal field after optional blanks; *s moves past it. */
static int parse_u64_field(const char **s, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	while (**s == ' ' || **s == '\t')
		(*s)++;
	if (!isdigit((unsigned char)**s))
		return -EINVAL;
	errno = 0;
	v = strtoull(*s, &end, 10);
	if (errno || v > max)
		return -EINVAL;
	*s = end;
	*out = v;
	return 0;
}

static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

uint64_t procfs_size_kb(const struct proc_info *pi)
{
	return add_sat(add_sat(pi->rss_kb, pi->swap_kb), pi->pte_kb);
}

uint64_t procfs_footprint_kb(const struct proc_info *pi)
{
	uint64_t size = procfs_size_kb(pi);

	return size > pi->rss_file_kb ? size - pi->rss_file_kb : 0;
}

int procfs_parse_status(const char *text, struct proc_info *pi)
{
	const char *u = lines_find(text, "Uid:");
	const char *r = lines_find(text, "VmRSS:");
	const char *t = lines_find(text, "Threads:");
	const char *sw = lines_find(text, "VmSwap:");
	const char *pt = lines_find(text, "VmPTE:");
	const char *rf = lines_find(text, "RssFile:");
	uint64_t v;
	int i;

	if (!u)
		return -EINVAL;
	/* real, effective, saved set, filesystem: a process is only as trusted
	 * as the least trusted of them, so all four must be there */
	for (i = 0; i < 4; i++) {
		if (parse_u64_field(&u, UINT32_MAX - 1, &v) < 0)
			return -EINVAL;
		pi->uids[i] = (uid_t)v;
	}
	pi->uid = pi->uids[0];
	pi->rss_kb = 0;
	if (r) {
		if (parse_u64_field(&r, UINT64_MAX, &v) < 0)
			return -EINVAL;
		pi->rss_kb = v;
	}
	pi->swap_kb = 0;
	if (sw) {
		if (parse_u64_field(&sw, UINT64_MAX, &v) < 0)
			return -EINVAL;
		pi->swap_kb = v;
	}
	pi->pte_kb = 0;
	if (pt) {
		if (parse_u64_field(&pt, UINT64_MAX, &v) < 0)
			return -EINVAL;
		pi->pte_kb = v;
	}
	pi->rss_file_kb = 0;
	if (rf) {
		if (parse_u64_field(&rf, UINT64_MAX, &v) < 0)
			return -EINVAL;
		pi->rss_file_kb = v;
	}
	pi->threads = 0;
	if (t) {
		if (parse_u64_field(&t, UINT32_MAX, &v) < 0)
			return -EINVAL;
		pi->threads = (unsigned)v;
	}
	return 0;
}

int procfs_parse_cgroup(const char *text, char *out, size_t size)
{
	const char *p = lines_find(text, "0::");
	size_t n;

	if (!p)
		return -ENOENT;
	n = strcspn(p, "\n");
	if (n == 0)
		return -EINVAL;
	if (n >= size)
		return -ENAMETOOLONG;
	memcpy(out, p, n);
	out[n] = '\0';
	return 0;
}

int procfs_parse_adj(const char *text, int *adj)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(text, &end, 10);
	if (end == text || errno || (*end != '\n' && *end != '\0') || v < -1000 || v > 1000)
		return -EINVAL;
	*adj = (int)v;
	return 0;
}

void procfs_parse_cmdline(const char *raw, size_t len, char *out, size_t size)
{
	size_t i, o = 0;


	if (size == 0)
		return;
	while (len > 0 && raw[len - 1] == '\0')
		len--;
	out[0] = '\0';
	/* each argument escaped, the NULs between them become spaces */
	for (i = 0; i < len && o + 1 < size;) {
		const char *arg = raw + i;
		size_t n = strnlen(arg, len - i), w;

		if (i > 0)
			out[o++] = ' ';
		escape_bytes(out + o, size - o, arg, n, ESCAPE_NAME, &w);
		o += strlen(out + o);
		if (w < n)
			break; /* out is full */
		i += n + 1;
	}
	out[o] = '\0';
}

static ssize_t read_pid_file(int procfd, pid_t pid, const char *name, char *buf, size_t size)
{
	char path[64];
	ssize_t r;

	snprintf(path, sizeof(path), "%d/%s", (int)pid, name);
	r = read_record_at(procfd, path, buf, size);
	/* a process that exited: its directory is gone, or its files read empty / ESRCH */
	if (r == -ENOENT || r == -ESRCH || r == 0)
		return -ESRCH;
	return r;
}

/* The lines of status that procfs_parse_status reads: only they are kept,
 * so a Groups line of any length (a user namespace's owner may set
 * hundreds of groups) neither hides the process nor shortens its memory. */
static const char *const status_keys[] = { "Uid:", "VmRSS:", "Threads:", "VmSwap:", "VmPTE:", "RssFile:", NULL };

/* status (of a process, or "task/TID/status" of a thread) as
 * read_pid_file reads files; its kept lines only */
static ssize_t read_status(int procfd, const char *path, char *buf, size_t size)
{
	ssize_t r = read_lines_at(procfd, path, buf, size, status_keys);

	return r == -ENOENT || r == -ESRCH || r == 0 ? -ESRCH : r;
}

int procfs_read_cmdline(int procfd, pid_t pid, char *out, size_t size)
{
	char raw[PROC_CMDLINE_MAX], path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%d/cmdline", (int)pid);
	fd = openat(procfd, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	n = read(fd, raw, sizeof(raw));
	close(fd);
	if (n < 0)
		return errno == ESRCH ? -ESRCH : -errno;
	procfs_parse_cmdline(raw, (size_t)n, out, size);
	return 0;
}

int procfs_parse_io_read_kb(const char *text, uint64_t *kb)
{
	uint64_t v;

	if (lines_value(text, "read_bytes", &v) != 1)
		return -EINVAL;
	*kb = v / 1024;
	return 0;
}

int procfs_read_io_kb(int procfd, pid_t pid, uint64_t *kb)
{
	char buf[256];
	ssize_t r = read_pid_file(procfd, pid, "io", buf, sizeof(buf));

	if (r < 0)
		return (int)r;
	return procfs_parse_io_read_kb(buf, kb);
}

int procfs_read_adj(int procfd, pid_t pid, int *adj)
{
	char buf[32];
	ssize_t r = read_pid_file(procfd, pid, "oom_score_adj", buf, sizeof(buf));

	if (r < 0)
		return (int)r;
	return procfs_parse_adj(buf, adj);
}

int procfs_read_start_time(int procfd, pid_t pid, uint64_t *start_time)
{
	struct proc_info pi;
	char buf[1024];
	ssize_t r = read_pid_file(procfd, pid, "stat", buf, sizeof(buf));

	if (r < 0)
		return (int)r;
	r = procfs_parse_stat(buf, &pi);
	if (r < 0)
		return (int)r;
	*start_time = pi.start_time;
	return 0;
}

static bool parse_pid_name(const char *name, pid_t *pid)
{
	long v = 0;

	if (!*name)
		return false;
	for (; *name; name++) {
		if (*name < '0' || *name > '9')
			return false;
		v = v * 10 + (*name - '0');
		if (v > INT32_MAX)
			return false;
	}
	*pid = (pid_t)v;
	return v > 0;
}

/* An exited thread-group leader whose other threads live on: its own status
 * has no VmRSS (the leader has no mm any more), so the memory of the process
 * (VmRSS, VmSwap, VmPTE) is read from one of its live threads. task/ is
 * listed with getdents64 into a stack buffer (no allocation). Returns 0 with
 * rss_kb, swap_kb and pte_kb of pi set, -ESRCH when no thread is left, or
 * -errno. */
__attribute__((noinline)) static int read_live_thread_memory(int procfd, pid_t pid, struct proc_info *pi)
{
	char dents[2048] __attribute__((aligned(8)));
	char path[64], buf[4096];
	ssize_t n;
	int fd, r = -ESRCH;

	snprintf(path, sizeof(path), "%d/task", (int)pid);
	fd = openat(procfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	while (r == -ESRCH && (n = getdents64(fd, (void *)dents, sizeof(dents))) > 0) {
		ssize_t off = 0;

		while (r == -ESRCH && off < n) {
			const struct dirent64 *de = (const struct dirent64 *)(const void *)(dents + off);
			struct proc_info t;
			ssize_t len;
			pid_t tid;

			off += de->d_reclen;
			if (!parse_pid_name(de->d_name, &tid) || tid == pid)
				continue;
			snprintf(path, sizeof(path), "%d/task/%d/status", (int)pid, (int)tid);
			len = read_status(procfd, path, buf, sizeof(buf));
			if (len == -ESRCH)
				continue; /* that thread has just exited */
			if (len < 0)
				r = (int)len;
			else if (procfs_parse_status(buf, &t) == 0 && procfs_size_kb(&t) > 0) {
				pi->rss_kb = t.rss_kb;
				pi->swap_kb = t.swap_kb;
				pi->pte_kb = t.pte_kb;
				pi->rss_file_kb = t.rss_file_kb;
				r = 0;
			}
		}
	}
	close(fd);
	return r;
}

/* The first look at a process: pid, oom_score_adj and status (uids,
 * threads, memory). Enough for the pick to tell whether it can still win. */
static int read_head(int procfd, pid_t pid, int adj, struct proc_info *pi)
{
	char buf[PROC_CGROUP_FILE_MAX], path[32];
	ssize_t r;

	memset(pi, 0, sizeof(*pi));
	pi->pid = pid;
	pi->oom_score_adj = adj;
	snprintf(path, sizeof(path), "%d/status", (int)pid);
	r = read_status(procfd, path, buf, sizeof(buf));
	if (r < 0 || (r = procfs_parse_status(buf, pi)) < 0)
		return (int)r;
	return 0;
}

/* After read_head: stat (name, state, kernel thread, start time) and a
 * zombie leader's memory from a live thread. */
/* read_stat's reading of stat: a frame of its own, off the stack before
 * read_live_thread_memory's (also not inlined into read_stat), so that the
 * two are never on the stack together (the kill path's depth:
 * KILLER_STACK_PREFAULT). */
__attribute__((noinline)) static int read_stat_file(int procfd, pid_t pid, struct proc_info *pi)
{
	char buf[PROC_CGROUP_FILE_MAX];
	ssize_t r;

	r = read_pid_file(procfd, pid, "stat", buf, sizeof(buf));
	if (r < 0 || (r = procfs_parse_stat(buf, pi)) < 0)
		return (int)r;
	return 0;
}

static int read_stat(int procfd, pid_t pid, struct proc_info *pi)
{
	int r = read_stat_file(procfd, pid, pi);

	if (r < 0)
		return r;
	if (pi->state == 'Z' && pi->threads > 1) {
		r = read_live_thread_memory(procfd, pid, pi);
		if (r == -EMFILE || r == -ENFILE || r == -ENOMEM)
			return r;
		/* else: all its threads are exiting too, or unreadable; no memory */
	}
	return 0;
}

/* The rest of a process after read_head: read_stat, then cgroup. */
static int read_rest(int procfd, pid_t pid, struct proc_info *pi)
{
	char buf[PROC_CGROUP_FILE_MAX];
	ssize_t r;

	r = read_stat(procfd, pid, pi);
	if (r < 0)
		return (int)r;
	r = read_pid_file(procfd, pid, "cgroup", buf, sizeof(buf));
	if (r == -ESRCH || r == -EMFILE || r == -ENFILE || r == -ENOMEM)
		return (int)r;
	if (r == -ENAMETOOLONG || r == -EFBIG) {
		/* a path deeper than PATH_MAX, refused by the kernel or too long
		 * to keep: the process hides where it is, so it counts as inside
		 * every scope */
		pi->cgroup_unknown = true;
		return 0;
	}
	/* no cgroup2 line (or an unreadable file): in no cgroup, so only in scope "/" */
	if (r > 0) {
		int c = procfs_parse_cgroup(buf, pi->cgroup, sizeof(pi->cgroup));

		/* PATH_MAX - 1 bytes: the kernel may have cut a longer path there */
		if (c == 0 && strlen(pi->cgroup) >= PATH_MAX - 1)
			c = -ENAMETOOLONG;
		pi->has_cgroup = c == 0;
		pi->cgroup_unknown = c == -ENAMETOOLONG;
		if (!pi->has_cgroup)
			pi->cgroup[0] = '\0';
	}
	return 0;
}

int procfs_read_pid(int procfd, pid_t pid, struct proc_info *pi)
{
	int adj, r;

	r = procfs_read_adj(procfd, pid, &adj);
	if (r < 0)
		return r;
	r = read_head(procfd, pid, adj, pi);
	if (r < 0)
		return r;
	return read_rest(procfd, pid, pi);
}

/* What one scan does with each process: the band floor, the visitor and,
 * optionally, the early look that skips the rest of a process. */
struct scan_job {
	int min_adj;
	procfs_prune_fn prune; /* NULL: every process of the band is read in full */
	procfs_visit_fn visit;
	void *userdata;
	/* reads one process (scan_one or size_one) */
	int (*one)(int procfd, pid_t pid, const struct scan_job *j, struct procfs_scan_stats *st);
};

/* The end of one process of a scan, read with result r: counted, and
 * visited if read. Returns 0, or -errno when the scan must stop (see
 * procfs_scan). */
static int scan_done(int r, const struct proc_info *pi, const struct scan_job *j, struct procfs_scan_stats *st)
{
	if (r == -ESRCH) {
		st->vanished++;
		return 0;
	}
	if (r == -EMFILE || r == -ENFILE || r == -ENOMEM)
		return r; /* a scan missing processes could choose the wrong one */
	if (r < 0) {
		st->errors++;
		return 0;
	}
	st->read++;
	j->visit(pi, j->userdata);
	return 0;
}

/* One process of a scan: read it (the adj first, then status) and visit it
 * if it is in the band and prune does not rule it out. */
static int scan_one(int procfd, pid_t pid, const struct scan_job *j, struct procfs_scan_stats *st)
{
	struct proc_info pi;
	int adj, r;

	st->seen++;
	r = procfs_read_adj(procfd, pid, &adj);
	if (r == 0 && adj < j->min_adj)
		return 0;
	if (r == 0 && j->prune) {
		memset(&pi, 0, sizeof(pi));
		pi.pid = pid;
		pi.oom_score_adj = adj;
		if (j->prune(&pi, false, j->userdata)) {
			st->pruned++;
			return 0;
		}
	}
	if (r == 0)
		r = read_head(procfd, pid, adj, &pi);
	if (r == 0 && j->prune && j->prune(&pi, true, j->userdata)) {
		st->pruned++;
		return 0;
	}
	if (r == 0)
		r = read_rest(procfd, pid, &pi);
	return scan_done(r, &pi, j, st);
}

/* One process of procfs_scan_sizes: status first, then, if prune keeps it,
 * the adj and stat. */
static int size_one(int procfd, pid_t pid, const struct scan_job *j, struct procfs_scan_stats *st)
{
	struct proc_info pi;
	int r;

	st->seen++;
	r = read_head(procfd, pid, 0, &pi);
	if (r == 0 && j->prune(&pi, true, j->userdata)) {
		st->pruned++;
		return 0;
	}
	if (r == 0)
		r = procfs_read_adj(procfd, pid, &pi.oom_score_adj);
	if (r == 0 && pi.oom_score_adj < j->min_adj)
		return 0;
	if (r == 0)
		r = read_stat(procfd, pid, &pi);
	return scan_done(r, &pi, j, st);
}

/* The directory is listed with getdents64 into a buffer on the stack, not
 * with opendir: a scan runs when memory is short and allocates nothing. */
static int scan_dir(int procfd, const struct scan_job *j, struct procfs_scan_stats *st)
{
	char buf[4096] __attribute__((aligned(8)));
	int fd, r = 0;
	ssize_t n;

	memset(st, 0, sizeof(*st));
	fd = openat(procfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (r == 0 && (n = getdents64(fd, (void *)buf, sizeof(buf))) > 0) {
		ssize_t off = 0;

		while (r == 0 && off < n) {
			const struct dirent64 *de = (const struct dirent64 *)(const void *)(buf + off);
			pid_t pid;

			off += de->d_reclen;
			if (parse_pid_name(de->d_name, &pid))
				r = j->one(procfd, pid, j, st);
		}
	}
	if (r == 0 && n < 0)
		r = -errno;
	close(fd);
	return r;
}

int procfs_scan(int procfd, int min_adj, procfs_visit_fn visit, void *userdata, struct procfs_scan_stats *st)
{
	return procfs_scan_pruned(procfd, min_adj, NULL, visit, userdata, st);
}

int procfs_scan_pruned(int procfd, int min_adj, procfs_prune_fn prune, procfs_visit_fn visit, void *userdata,
		       struct procfs_scan_stats *st)
{
	const struct scan_job j = { min_adj, prune, visit, userdata, scan_one };

	return scan_dir(procfd, &j, st);
}

int procfs_scan_sizes(int procfd, int min_adj, procfs_prune_fn prune, procfs_visit_fn visit, void *userdata,
		      struct procfs_scan_stats *st)
{
	const struct scan_job j = { min_adj, prune, visit, userdata, size_one };

	return scan_dir(procfd, &j, st);
}

int procfs_scan_pids(int procfd, const pid_t *pids, size_t n, int min_adj, procfs_prune_fn prune,
		     procfs_visit_fn visit, void *userdata, struct procfs_scan_stats *st)
{
	const struct scan_job j = { min_adj, prune, visit, userdata, scan_one };
	size_t i;
	int r = 0;

	memset(st, 0, sizeof(*st));
	for (i = 0; i < n && r == 0; i++)
		r = scan_one(procfd, pids[i], &j, st);
	return r;
}

int procfs_parse_uptime_ticks(const char *text, long tck, uint64_t *ticks)
{
	uint64_t sec = 0, cs = 0;
	const char *s = text;
	int digits = 0;

	if (tck <= 0 || *s < '0' || *s > '9')
		return -EINVAL;
	for (; *s >= '0' && *s <= '9'; s++) {
		if (sec > UINT64_MAX / 1000 / (uint64_t)tck)
			return -ERANGE;
		sec = sec * 10 + (uint64_t)(*s - '0');
	}
	if (*s == '.')
		for (s++; *s >= '0' && *s <= '9'; s++)
			if (digits < 2) {
				cs = cs * 10 + (uint64_t)(*s - '0');
				digits++;
			}
	if (*s != ' ' && *s != '\n' && *s != '\0')
		return -EINVAL;
	for (; digits < 2; digits++)
		cs *= 10;
	*ticks = sec * (uint64_t)tck + cs * (uint64_t)tck / 100;
	return 0;
}

int procfs_read_uptime_ticks(int procfd, uint64_t *ticks)
{
	char buf[128];
	ssize_t n = read_file_at(procfd, "uptime", buf, sizeof(buf));

	if (n < 0)
		return (int)n;
	return procfs_parse_uptime_ticks(buf, sysconf(_SC_CLK_TCK), ticks);
}

int procfs_parse_loadavg_last_pid(const char *text, long *pid)
{
	const char *s = text;
	char *end;
	long v;
	int field;

	/* "0.00 0.01 0.05 1/123 4567": the fifth field */
	for (field = 1; field < 5; field++) {
		s = strchr(s, ' ');
		if (!s)
			return -EINVAL;
		s++;
	}
	errno = 0;
	v = strtol(s, &end, 10);
	if (end == s || errno || v < 0 || (*end != '\n' && *end != '\0'))
		return -EINVAL;
	*pid = v;
	return 0;
}
