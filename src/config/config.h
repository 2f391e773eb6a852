/* SPDX-License-Identifier: MIT */
/* config: the daemon's settings, their defaults, and the ini parser that fills
 * them (inih underneath, typed value parsers on top). Pure: it never logs; every
 * error comes back as "file:line: reason" in a struct config_error. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "psi.h"
#include "victim.h"

#define CONFIG_TIERS_MAX 16
#define CONFIG_NAME_MAX 32
#define CONFIG_PATH_MAX 1024
#define CONFIG_FILE_MAX (1024 * 1024)
#define CONFIG_DROPINS_MAX 16 /* *.conf files read after the main one */
#define CONFIG_KEYS_MAX 48    /* keys of a section (the key tables in config-keys.c) */
#define CONFIG_SOCKET_MAX 108 /* sun_path */
#define CONFIG_PATTERN_MAX 512 /* a tier's cgroup pattern */

#define CONFIG_DEFAULT_PRESSURE "/proc/pressure/memory"
#define CONFIG_DEFAULT_SCOPE "/"
#define CONFIG_DEFAULT_KILL_TIMEOUT_US 500000ULL
#define CONFIG_KILL_TIMEOUT_MIN_US 10000ULL
#define CONFIG_KILL_TIMEOUT_MAX_US 60000000ULL
#define CONFIG_DEFAULT_IDLE_POLL_US 10000000ULL
#define CONFIG_IDLE_POLL_MIN_US 100000ULL
#define CONFIG_IDLE_POLL_MAX_US 60000000ULL

/* cgroups watched at once for the tiers with a cgroup pattern */
#define CONFIG_DEFAULT_MAX_GROUPS 256
#define CONFIG_MAX_GROUPS_MAX 4096

/* a regex value (protect = ...): room to add names to the shipped lists */
#define CONFIG_REGEX_MAX 1024
/* the longest line (inih's own buffer holds 198 characters: longer key lines
 * reach the handler through the line reader, config.c) */
#define CONFIG_LONG_LINE_MAX 4095
#define CONFIG_SOCKET_MAX 108 /* sun_path */
#define CONFIG_DEFAULT_CONTROL_SOCKET "/run/psi-lmkd/control"
#define CONFIG_USER_MAX 64    /* on_kill_user: a name or a uid */
#define CONFIG_GROUPS_MAX 256 /* supplementary groups of on_kill_user */
#define CONFIG_DEFAULT_HOOK_USER "nobody"
/* pre_kill: the kill waits for the hook at most this long */
#define CONFIG_DEFAULT_PRE_KILL_TIMEOUT_US 200000ULL
#define CONFIG_PRE_KILL_TIMEOUT_MIN_US 10000ULL
#define CONFIG_PRE_KILL_TIMEOUT_MAX_US 5000000ULL
#define CONFIG_DEFAULT_SETTLE_US 1000000ULL
#define CONFIG_SETTLE_MAX_US 60000000ULL
#define CONFIG_DEFAULT_TERM_TIMEOUT_US 2000000ULL
#define CONFIG_TERM_TIMEOUT_MIN_US 10000ULL
#define CONFIG_TERM_TIMEOUT_MAX_US 60000000ULL
/* Debian's SYS_UID_MAX: uids up to it belong to the system, not to users */
#define CONFIG_DEFAULT_TRUSTED_UID_MAX 999
/* the kernel OOM killer's order: what oom_score_adj values on a Linux
 * system are set for (README, "Victim order") */
#define CONFIG_DEFAULT_VICTIM_ORDER VICTIM_ORDER_BADNESS

/* Where a value was set: file 0 is the main file, 1.. the drop-ins in the
 * order read; 0 = not set (a default). The line is below 2^20 (a file
 * holds at most CONFIG_FILE_MAX bytes; more lines are refused). */
#define CONFIG_LINE_MAX ((1u << 20) - 1)
#define CONFIG_ORIGIN(file, line) ((((unsigned)(file) + 1) << 20) | (unsigned)(line))
#define CONFIG_ORIGIN_FILE(o) (((o) >> 20) - 1)
#define CONFIG_ORIGIN_LINE(o) ((o) & CONFIG_LINE_MAX)

/* Android lmkd's properties (lmkprops.h): read from nowhere, from
 * Android's property area (a build with it: the default there), or from a
 * key=value file (tests, and Linux hosts that stand in for Android) */
enum config_props { CONFIG_PROPS_OFF, CONFIG_PROPS_SYSTEM, CONFIG_PROPS_FILE };
#ifdef HAVE_ANDROID_PROPERTIES
#define CONFIG_DEFAULT_PROPS CONFIG_PROPS_SYSTEM
#else
#define CONFIG_DEFAULT_PROPS CONFIG_PROPS_OFF
#endif
#define CONFIG_PROPS_MAX 32       /* lmkd's properties found */
#define CONFIG_PROP_NAME_MAX 96
#define CONFIG_PROP_VALUE_MAX 92  /* bionic's PROP_VALUE_MAX */
/* the "file" of a key a property set: CONFIG_ORIGIN(CONFIG_PROPS_ORIGIN_FILE, i + 1)
 * is c->props[i] */
#define CONFIG_PROPS_ORIGIN_FILE (CONFIG_DROPINS_MAX + 1)

/* One of lmkd's properties, as found; used = it set psi-lmkd's configuration
 * (else it has no psi-lmkd meaning and was only reported). */
struct config_prop {
	char name[CONFIG_PROP_NAME_MAX];
	char value[CONFIG_PROP_VALUE_MAX];
	bool used;
};

/* A drop-in file read after the main one: <path>.d/NAME or VENDOR_DIR/NAME. */
struct config_dropin {
	bool vendor;
	char name[256];
};

/* An amount of memory: bytes, or hundredths of a percent of the total
 * (MemTotal, or the limit of the watched memory cgroup). */
struct mem_amount {
	bool set;
	bool percent;
	uint64_t value;
};

/* A low_available tier with swap present fires only when free swap is at
 * or below this (low_swap unset): 10% of the domain's swap, as Android
 * lmkd's swap_free_low_percentage and earlyoom's -s default to. */
/* culprit_growth's default (1% of the OOM domain) and the least a
 * percentage comes to */
#define CONFIG_DEFAULT_CULPRIT_GROWTH ((const struct mem_amount){ .set = true, .percent = true, .value = 100 })
#define CONFIG_CULPRIT_MIN_BYTES (4ULL << 20)
#define CONFIG_DEFAULT_LOW_SWAP ((const struct mem_amount){ .set = true, .percent = true, .value = 1000 })

/* The user the on_kill hook runs as, resolved when the file is parsed (never
 * in the hook's child): ids and supplementary groups (getgrouplist). */
struct config_user {
	char name[CONFIG_USER_MAX]; /* the passwd name ("" = no on_kill) */
	uid_t uid;                  /* never 0 */
	gid_t gid;
	size_t n_groups;
	gid_t groups[CONFIG_GROUPS_MAX];
};

struct tier_config {
	char name[CONFIG_NAME_MAX + 1];
	bool has_trigger;
	enum psi_state state;
	uint64_t stall_us;
	uint64_t window_us;
	int min_oom_score_adj;
	int kill_signal;          /* SIGKILL (default) or SIGTERM */
	uint64_t term_timeout_us; /* SIGTERM: wait this long, then SIGKILL */
	bool kill_cgroup;         /* kill the victim's whole cgroup2 leaf */
	struct mem_amount min_available; /* gate: act only when available memory is below */
	unsigned min_events;      /* gate: act only on the Nth consecutive event */
	struct mem_amount low_available; /* last resort: fire when available memory is below */
	struct mem_amount low_swap;      /* ... and free swap is at or below (unset: 10% of the swap) */
	bool hold_idle;           /* ... unless nothing grows and nothing stalls (default true) */
	bool warn;                /* action = warn: a LowMemoryWarning on the system bus, no kill */
	unsigned warn_level;      /* 50 low, 100 medium, 255 critical (warn.h) */
	/* cgroup2 path pattern (cgpattern.h), "" = none: the tier runs once per
	 * matching group, on its memory.pressure, killing only inside it */
	char cgroup[CONFIG_PATTERN_MAX];
	unsigned origin; /* of its first [tier NAME] header (CONFIG_ORIGIN), for messages */
};

struct config {
	char path[CONFIG_PATH_MAX];     /* the file it came from, for messages */
	char pressure[CONFIG_PATH_MAX]; /* absolute path of the pressure file */
	unsigned pressure_origin;       /* where it was set (CONFIG_ORIGIN), 0 = the default */
	char scope[CONFIG_PATH_MAX];    /* cgroup2 path, "/" = every process */
	uint64_t kill_timeout_us;
	uint64_t idle_poll_us; /* safety sample while idle; 0 = off */
	uint64_t settle_us;    /* after a victim died, no new kill decision for this long */
	/* after a victim died, PSI tiers kill again only on evidence that memory
	 * is still short, until the stall is over (recovery.h; default true) */
	bool hold_recovery;
	bool dry_run;
	/* POSIX extended regexes ("" = unset): on comm, and on the command line */
	char protect[CONFIG_REGEX_MAX], prefer[CONFIG_REGEX_MAX], avoid[CONFIG_REGEX_MAX];
	char protect_cmdline[CONFIG_REGEX_MAX], prefer_cmdline[CONFIG_REGEX_MAX], avoid_cmdline[CONFIG_REGEX_MAX];
	/* on the cgroup2 path; these count for everyone only on groups no user owns */
	char protect_cgroup[CONFIG_REGEX_MAX], avoid_cgroup[CONFIG_REGEX_MAX];
	/* name and command-line shields count for everyone only for processes
	 * whose four uids are all at most this; others' are owner-scoped */
	uid_t trusted_uid_max;
	enum victim_order victim_order; /* who of a tier's band dies first */
	/* victim_order = badness: a process that grew at least this much of the
	 * OOM domain (a percentage, at least CONFIG_CULPRIT_MIN_BYTES) while
	 * memory got short dies first (growth.h); unset = off */
	struct mem_amount culprit_growth;
	uint64_t min_rss_kb;
	char on_kill[CONFIG_PATH_MAX];      /* hook run after each kill, "" = none */
	struct config_user on_kill_user;    /* who runs it and pre_kill (default nobody) */
	/* hook run before the signal of a PSI kill, "" = none (kill.c, prekill.h) */
	char pre_kill[CONFIG_PATH_MAX];
	uint64_t pre_kill_timeout_us;       /* the signal waits for it at most this long */
	char memory_cgroup[CONFIG_PATH_MAX]; /* cgroup dir whose limit bounds "available"; "" = auto */
	bool has_nice;
	int nice;              /* -20..19, applied at start */
	int realtime_priority; /* SCHED_FIFO 1..99 at start; 0 = not real-time */
	/* honour systemd's ManagedOOMPreference= (user.oomd_omit/avoid on a
	 * process's cgroup), trusted like a cgroup rule (default true) */
	bool systemd_oom_preferences;
	/* after a kill in a systemd unit's group, raise the counters
	 * systemd-oomd raises (cgroup_unit_count): the unit's result says
	 * oom-kill (default false) */
	bool systemd_oom_marks;
	/* take the units' ManagedOOM settings from PID 1 (io.systemd.ManagedOOM)
	 * and act on them as systemd-oomd does (daemon-moom.c; default false) */
	bool systemd_managed_oom;
	/* oom_killer = daemon: turn off the kernel's OOM killer in the watched
	 * v1 memory cgroup and kill on its OOM notification (memevent.h) */
	bool oom_killer_daemon;
	/* memory_high_brake: on a cgroup2 memory cgroup, memory.high set this
	 * far below memory.max while psi-lmkd runs (brake.h); unset = off,
	 * set with value 0 = "on" (half the largest low_available) */
	struct mem_amount brake_margin;
	/* Android: serve lmkd's control socket here ("" = only when init hands
	 * one over in ANDROID_SOCKET_lmkd); PROCKILL in 12 bytes (Android 11-15
	 * frameworks) instead of 16 */
	char lmkd_socket[CONFIG_SOCKET_MAX];
	bool lmkd_prockill_short;
	/* lmkd's own log line for each kill of a registered process (lmkd-kill.h) */
	bool lmkd_kill_log;
	/* lmkd's properties: where from (lmkd_properties = off | system | PATH),
	 * those found, and ro.lmk.debug (the daemon logs at debug level) */
	enum config_props lmkd_properties;
	char lmkd_properties_file[CONFIG_PATH_MAX];
	size_t n_props;
	struct config_prop props[CONFIG_PROPS_MAX];
	bool lmk_debug;
	char control_socket[CONFIG_SOCKET_MAX]; /* --status talks to the daemon here; "" = off */
	char metrics_file[CONFIG_PATH_MAX];     /* Prometheus text file, "" = none */
	unsigned max_groups; /* groups watched at once by cgroup-pattern tiers */
	size_t n_tiers;
	struct tier_config tiers[CONFIG_TIERS_MAX];
	/* the files read after path, in order: <path>.d/ *.conf and, when
	 * vendor_dir is set, vendor_dir/ *.conf, sorted by name */
	char vendor_dir[CONFIG_PATH_MAX]; /* "" = none */
	size_t n_dropins;
	struct config_dropin dropins[CONFIG_DROPINS_MAX];
	/* where each key was set (CONFIG_ORIGIN), by its index in the key
	 * table: [0] = [daemon], [1 + i] = tiers[i] */
	unsigned origin[CONFIG_TIERS_MAX + 1][CONFIG_KEYS_MAX];
};

struct config_error {
	char msg[512];
};

/* Fills c with the defaults (no tiers). */
void config_init(struct config *c);

/* Parses ini text; filename is used in messages only. Returns 0, or -EINVAL
 * (or -ENOMEM) with err->msg set to "filename:line: reason". */
int config_parse_string(struct config *c, const char *text, const char *filename, struct config_error *err);

/* Reads and parses a config file, then its drop-ins: the *.conf files of
 * <path>.d/ and (vendor_dir not NULL) of vendor_dir/, a name in the first
 * masking the same name in the second, all sorted by name. A later file's
 * key overrides an earlier one; a [tier NAME] of a drop-in extends the tier
 * of that name or adds one. Returns 0 or a negative errno with err set
 * ("file:line: reason", or "path: reason"). */
int config_load_file(struct config *c, const char *path, const char *vendor_dir, struct config_error *err);

/* room for what config_file_name() and config_where() write: <path>.d/NAME:LINE */
#define CONFIG_WHERE_MAX (CONFIG_PATH_MAX + 256 + 16)
/* The path of file number file of c (0 = c->path, 1.. its drop-ins) into buf. */
const char *config_file_name(const struct config *c, unsigned file, char *buf, size_t size);
/* "FILE:LINE" of an origin (CONFIG_ORIGIN) of c into buf; "property NAME=VALUE"
 * for a key one of lmkd's properties set (CONFIG_PROPS_ORIGIN_FILE). */
const char *config_where(const struct config *c, unsigned origin, char *buf, size_t size);

/* The tiers of c whose cgroup pattern is pat ("" = the tiers without
 * one), as a mask: bit i = c->tiers[i]. */
uint32_t config_cgroup_tiers(const struct config *c, const char *pat);
/* How many tiers of c have a cgroup pattern. */
size_t config_cgroup_tier_count(const struct config *c);
/* true if tier i has a cgroup pattern and is the first tier with it (each
 * pattern is walked, reported and armed once). */
bool config_cgroup_first(const struct config *c, size_t i);

/* Prints the effective settings and tiers, one line each, then where they
 * come from: the files read, in order, and the file:line of each key set. */
void config_print(const struct config *c, FILE *f);

/* Formats a duration in microseconds as a short string ("70ms", "1s", "1500us"). */
const char *config_format_duration(char *buf, size_t size, uint64_t us);

/* Typed value parsers, exposed for the tests. Each returns 0 or -EINVAL/-ERANGE
 * and writes a reason into why. */
int config_parse_duration(const char *s, bool bare_is_us, uint64_t *out, char *why, size_t whylen);
int config_parse_trigger(const char *s, struct tier_config *t, char *why, size_t whylen);
/* "512M", "2G", "4096K", "100B" (binary units), or with allow_percent "5%". */
int config_parse_amount(const char *s, bool allow_percent, struct mem_amount *out, char *why, size_t whylen);
/* Resolves on_kill_user (a name or a uid) into u: uid, primary gid and
 * supplementary groups. Refuses uid 0 and unknown users. 0, -EINVAL or -ENOMEM
 * with a reason in why. */
int config_resolve_user(const char *spec, struct config_user *u, char *why, size_t whylen);
/* A hook program's trust check (trustpath.h, TRUST_PROGRAM; key names the
 * setting, "on_kill" or "pre_kill", in why): an executable regular file
 * owned by root or the euid and not writable by group or others, reached
 * only through directories and symlinks of root or the euid, the directories
 * not writable by others unless sticky. 0 or -EINVAL with why. */
int config_check_program(const char *key, const char *path, char *why, size_t whylen);
/* Whether c runs a hook program (on_kill or pre_kill), as on_kill_user. */
static inline bool config_has_hook(const struct config *c)
{
	return c->on_kill[0] || c->pre_kill[0];
}
/* metrics_file's directory at load (trustpath.h, TRUST_DIR): root's or the
 * euid's, not writable by group or others (sticky or not), reached the same
 * way. One that does not exist yet passes: it is checked at each write.
 * 0 or -EINVAL with why. */
int config_check_metrics_dir(const char *file, char *why, size_t whylen);
/* Formats an amount ("5%", "512MiB", "100B"). */
const char *config_format_amount(char *buf, size_t size, const struct mem_amount *a);
