/* SPDX-License-Identifier: MIT */
/* procfs: reads what the daemon needs to know about processes from /proc,
 * always through a directory fd for "/proc" under the injectable root.
 * The parsers are pure and take file text; procfs_read_pid/procfs_scan do the I/O. */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PROC_COMM_MAX 64     /* the kernel's comm is 16 bytes, 60 once escaped (\xHH) */
/* A cgroup path is kept if it is shorter than PATH_MAX - 1 bytes. Deeper
 * ones exist only in delegated subtrees; some kernels refuse to print them
 * (the read of /proc/PID/cgroup fails with ENAMETOOLONG), Linux 6.18 here
 * prints them cut at PATH_MAX - 1 bytes: either way the path is unknown. */
#define PROC_CGROUP_MAX PATH_MAX
/* /proc/PID/cgroup is read into this much: the cgroup2 line of the deepest
 * printable path, plus the short v1 lines of a hybrid host. */
#define PROC_CGROUP_FILE_MAX (PATH_MAX + 64)
#define PROC_CMDLINE_MAX 512

/* systemd's ManagedOOMPreference= on a process's cgroup (the xattrs
 * user.oomd_avoid / user.oomd_omit), found by the pick (cgroup.h). */
enum oomd_pref {
	OOMD_PREF_NONE = 0,
	OOMD_PREF_AVOID, /* user.oomd_avoid=1: kill last in the band, like avoid */
	OOMD_PREF_OMIT,  /* user.oomd_omit=1: never kill, like protect */
};

struct proc_info {
	pid_t pid;
	uid_t uid;           /* the real uid: the owner */
	uid_t uids[4];       /* real, effective, saved set and filesystem uids (status "Uid:") */
	unsigned threads;    /* status "Threads:" (0 when the line is absent) */
	int oom_score_adj;
	uint64_t rss_kb;
	uint64_t swap_kb;    /* status "VmSwap:": swapped-out anonymous memory */
	uint64_t pte_kb;     /* status "VmPTE:": page tables */
	uint64_t rss_file_kb; /* status "RssFile:": the resident pages of mapped files, of rss_kb */
	uint64_t start_time; /* clock ticks since boot: with pid, the identity of a process */
	char state;          /* R, S, D, Z, ... from /proc/PID/stat */
	bool kthread;        /* PF_KTHREAD */
	bool has_cgroup;     /* a cgroup2 ("0::") line was found */
	bool cgroup_unknown; /* the kernel would not print the path (too long), cut it,
			      * or it did not fit: the process may be anywhere, so it counts as
			      * inside every scope (only delegated subtrees nest so deep) */
	bool cgroup_trusted; /* set by the pick only when a cgroup rule matches: the group
			      * and all its ancestors are owned by trusted uids */
	char comm[PROC_COMM_MAX];     /* a display name (escape.h, ESCAPE_NAME) */
	char cgroup[PROC_CGROUP_MAX]; /* cgroup2 path, e.g. /user.slice/foo.scope: raw, to open;
				       * shown as a display name (history_display_path) */
	bool has_cmdline;             /* read only when a *_cmdline rule needs it */
	char cmdline[PROC_CMDLINE_MAX]; /* arguments joined by spaces, escaped like comm */
	int preference;               /* +1 prefer, 0, -1 avoid (set by victim choice) */
	bool shield_ignored;          /* set by victim choice: protect/avoid matched but was
				       * not trusted, so it did not count (see victim.h) */
	enum oomd_pref oomd_pref;     /* set by the pick when systemd_oom_preferences is on,
				       * for processes that passed the cheap exclusions: the
				       * mark of the nearest marked group, or none */
	bool oomd_trusted;            /* that group and its ancestors below the mount are
				       * owned by trusted uids: the mark counts for everyone */
	uint64_t growth_kb;           /* set by the pick when it measures growth (growth.h):
				       * how much the process grew since the sample */
	uint64_t read_kb;             /* set by the pick when it measures reads (growth.h):
				       * how much the process read from storage since the
				       * sample (/proc/PID/io read_bytes) */
	bool culprit;                 /* set by victim choice: growth_kb reached the
				       * filter's culprit_kb */
	bool reader;                  /* set by victim choice: not a culprit, but read_kb
				       * reached the filter's reader_kb */
	int64_t badness_kb;           /* set by victim choice: the kernel OOM killer's points
				       * (victim_badness_kb), VICTIM_BADNESS_UNKNOWN without a domain */
};

/* /proc/PID/io: "read_bytes", what the process caused to be read from
 * storage since it started (its page faults' and swap-ins' reads included),
 * in kB rounded down. -EINVAL without the line. */
int procfs_parse_io_read_kb(const char *text, uint64_t *kb);
/* ... of process pid: 0, -ESRCH when it is gone, -errno (-EACCES without
 * the right to trace it). */
int procfs_read_io_kb(int procfd, pid_t pid, uint64_t *kb);
/* /proc/PID/stat: comm (escaped), state, flags (kernel thread), start time. */
int procfs_parse_stat(const char *text, struct proc_info *pi);
/* /proc/PID/status: the four uids of "Uid:" (all required; uid = the real
 * one), VmRSS, VmSwap and VmPTE (each 0 when absent: kernel threads,
 * zombies, an exited thread-group leader; VmSwap also without CONFIG_SWAP)
 * and Threads (0 when absent). */
int procfs_parse_status(const char *text, struct proc_info *pi);
/* The one measure of a process's size, in kB, used by every rule that weighs
 * a process (min_rss, the orders, the early look of a scan, the kill line):
 * what killing it frees, as the kernel's OOM badness counts it -- resident
 * memory, swapped-out memory and page tables. RSS alone would let a process
 * whose memory sits in swap (an old leak the kernel swapped out, or
 * MADV_PAGEOUT) look small. Saturates instead of overflowing. */
uint64_t procfs_size_kb(const struct proc_info *pi);
/* procfs_size_kb less the mapped files' resident pages (RssFile): the
 * memory only the process holds -- anonymous, shared memory, swap, page
 * tables -- which grows when it allocates. Its mapped file pages are page
 * cache that comes and goes with reclaim and refaults (a reader thrashing a
 * mapped file gains and loses megabytes a second): not growth (growth.h). */
uint64_t procfs_footprint_kb(const struct proc_info *pi);

/* /proc/PID/cgroup: the cgroup2 ("0::") path. -ENOENT if there is none. */
int procfs_parse_cgroup(const char *text, char *out, size_t size);
/* /proc/PID/oom_score_adj */
int procfs_parse_adj(const char *text, int *adj);

/* /proc/PID/cmdline: NUL-separated arguments, joined with spaces into out,
 * escaped like comm. */
void procfs_parse_cmdline(const char *raw, size_t len, char *out, size_t size);
/* Reads and joins /proc/PID/cmdline. */
int procfs_read_cmdline(int procfd, pid_t pid, char *out, size_t size);

/* Reads pid's oom_score_adj only (the cheap first look in a scan). */
int procfs_read_adj(int procfd, pid_t pid, int *adj);
/* Reads one process. -ENOENT/-ESRCH when it has gone. A thread-group leader
 * that has exited while other threads live (state Z, Threads > 1) has no
 * memory of its own: its RSS, swap and page tables are taken from a live
 * thread's task/TID/status. */
int procfs_read_pid(int procfd, pid_t pid, struct proc_info *pi);
/* Reads the start time of pid (identity check before a kill). */
int procfs_read_start_time(int procfd, pid_t pid, uint64_t *start_time);

struct procfs_scan_stats {
	unsigned seen;    /* numeric entries in /proc */
	unsigned read;    /* processes read in full */
	unsigned vanished; /* exited while being read */
	unsigned errors;  /* unreadable for another reason */
	unsigned pruned;  /* in the band, but ruled out after the first look
			   * (procfs_scan_pruned): not read further */
};

/* Calls visit() for every process whose oom_score_adj is >= min_adj (the adj is
 * read first, so processes below the band cost one small read). Processes that
 * exit mid-scan are skipped, as are processes unreadable for other reasons
 * (hidepid). Returns 0, or -errno if /proc cannot be listed or a process could
 * not be read for want of resources (EMFILE, ENFILE, ENOMEM): the scan would be
 * missing processes, so the caller must not choose from it. */
typedef void (*procfs_visit_fn)(const struct proc_info *pi, void *userdata);
int procfs_scan(int procfd, int min_adj, procfs_visit_fn visit, void *userdata, struct procfs_scan_stats *st);

/* procfs_scan with an early look, in two steps: every process of the band
 * is offered to prune() first with only pid and oom_score_adj set
 * (status_read false), then, after its status is read, with uids, threads,
 * RSS, swap and page tables too (status_read true); nothing else of head is
 * set. prune returning true skips the process without reading anything
 * more (st->pruned). Otherwise stat, cgroup and the rest are read and
 * visit() sees the same proc_info procfs_scan would give. prune NULL:
 * procfs_scan. */
typedef bool (*procfs_prune_fn)(const struct proc_info *head, bool status_read, void *userdata);
int procfs_scan_pruned(int procfd, int min_adj, procfs_prune_fn prune, procfs_visit_fn visit, void *userdata,
		       struct procfs_scan_stats *st);
/* The scan of a size sample (pick_sample): status first, so that a process
 * prune rules out on its status alone (head has pid, uids, threads, RSS,
 * swap and page tables; status_read true; its oom_score_adj is not read
 * yet) costs one read; then oom_score_adj (the band) and stat (with an
 * exited leader's memory from a live thread, as procfs_scan). cgroup and
 * cmdline are not read: visit sees has_cgroup false. prune must not be
 * NULL. */
int procfs_scan_sizes(int procfd, int min_adj, procfs_prune_fn prune, procfs_visit_fn visit, void *userdata,
		      struct procfs_scan_stats *st);
/* procfs_scan_pruned for the given pids only (a scope's cgroup.procs, say)
 * instead of every directory of /proc; a pid that is gone counts as
 * vanished. */
int procfs_scan_pids(int procfd, const pid_t *pids, size_t n, int min_adj, procfs_prune_fn prune,
		     procfs_visit_fn visit, void *userdata, struct procfs_scan_stats *st);

/* /proc/uptime ("12345.67 ..."): the time since boot in clock ticks of
 * tck per second, the unit of proc_info.start_time. */
int procfs_parse_uptime_ticks(const char *text, long tck, uint64_t *ticks);
/* Reads it; -errno. */
int procfs_read_uptime_ticks(int procfd, uint64_t *ticks);
/* /proc/loadavg: the last pid handed out (the fifth field). */
int procfs_parse_loadavg_last_pid(const char *text, long *pid);
