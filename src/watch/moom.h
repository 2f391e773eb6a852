/* SPDX-License-Identifier: MIT */
/* moom: systemd's ManagedOOM settings of units, as PID 1 sends them over
 * varlink (io.systemd.ManagedOOM.SubscribeManagedOOMCGroups), and the
 * decision systemd-oomd takes on them. Pure: a reader of exactly the JSON
 * messages needed (bounded, never trusting the input), the set of managed
 * units the messages keep up to date, and the per-unit pressure clock. The
 * varlink connection is moomlink.h; the daemon's use of both is
 * daemon-moom.c.
 *
 * The messages (systemd 252, PID 1 at /run/systemd/io.system.ManagedOOM):
 *   {"parameters":{"cgroups":[{"mode":"kill","path":"/system.slice/a.service",
 *    "property":"ManagedOOMMemoryPressure","limit":2147483648}, ...]},
 *    "continues":true}
 * mode "kill" or "auto" (off; a stopped unit is sent as "auto"); path the
 * unit's cgroup relative to the cgroup2 mount ("" = the root, -.slice);
 * property ManagedOOMMemoryPressure or ManagedOOMSwap; limit a fraction of
 * UINT32_MAX (0 = DefaultMemoryPressureLimit); newer systemd adds duration
 * (microseconds, UINT64_MAX = DefaultMemoryPressureDurationSec). The first
 * message of a subscription lists every unit with some setting on; later
 * ones carry the changed unit, both properties. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"

#define MOOM_SOCKET "/run/systemd/io.system.ManagedOOM"
#define MOOM_METHOD "io.systemd.ManagedOOM.SubscribeManagedOOMCGroups"
/* systemd-oomd's own socket, where the user managers (systemd --user)
 * report their units' settings: {"method":MOOM_USER_METHOD,"parameters":
 * {"cgroups":[...]},"oneway":true}, the same elements as PID 1's; the
 * first call lists every unit with a setting on, later ones the changed
 * units. A sender whose uid is not 0 may name only its own user@UID.service
 * subtree (moom_user_path_ok). systemd-oomd.socket listens there (0666). */
#define MOOM_USER_SOCKET "/run/systemd/oom/io.system.ManagedOOM"
#define MOOM_USER_DIR "run/systemd/oom" /* its directory, relative to the root */
#define MOOM_USER_METHOD "io.systemd.oom.ReportManagedOOMCGroups"
/* units a user (by uid) may have managed at once; more are refused */
#define MOOM_USER_UNITS_MAX 256
/* user managers connected at once, in all and of one uid; a user
 * manager's message at most (its units' list; ~150 bytes a unit) */
#define MOOM_CLIENTS_MAX 32
#define MOOM_CLIENTS_PER_UID 4
#define MOOM_USER_MSG_MAX (64 * 1024)
/* the tier of the managed kills, in the kill line, history and metrics */
#define MOOM_TIER_NAME "managed-oom"
/* one message at most (PID 1's list of units is ~150 bytes a unit) */
#define MOOM_MSG_MAX (1024 * 1024)
/* units managed at once; more are refused (logged) */
#define MOOM_UNITS_MAX 4096
/* JSON nesting: the messages need 4 levels */
#define MOOM_DEPTH_MAX 16
/* oomd.conf's defaults: DefaultMemoryPressureLimit=60%,
 * DefaultMemoryPressureDurationSec=30s, SwapUsedLimit=90% */
#define MOOM_DEFAULT_LIMIT_PERMYRIAD 6000u
#define MOOM_DEFAULT_DURATION_US (30 * 1000000ULL)
#define MOOM_SWAP_USED_PERMYRIAD 9000u

/* systemd-oomd's oomd.conf [OOM] settings, the defaults of the units'. */
struct moom_defaults {
	uint32_t limit_permyriad;     /* DefaultMemoryPressureLimit= */
	uint64_t duration_us;         /* DefaultMemoryPressureDurationSec= */
	uint32_t swap_used_permyriad; /* SwapUsedLimit= */
};

/* systemd's compiled-in values (60%, 30 s, 90%). */
void moom_defaults_init(struct moom_defaults *d);
/* One oomd.conf text (the main file or a drop-in, applied in order):
 * its [OOM] keys over d. A value systemd-oomd would refuse is skipped,
 * as it does; returns how many were (0: all taken). */
int moom_defaults_parse(struct moom_defaults *d, const char *text);

enum moom_prop {
	MOOM_PRESSURE, /* ManagedOOMMemoryPressure */
	MOOM_SWAP,     /* ManagedOOMSwap */
};

/* One element of "cgroups", checked: path normalized ("/" for the root). */
struct moom_entry {
	char path[CONFIG_PATH_MAX];
	enum moom_prop prop;
	bool kill;                /* mode "kill"; false: "auto" */
	uint32_t limit_permyriad; /* 0: the default */
	uint64_t duration_us;     /* 0: the default */
};

/* What one message said besides its entries. */
struct moom_reply {
	bool continues;  /* more replies follow on this call */
	bool error;      /* an error reply: error_id names it */
	char error_id[128];
	char method[128]; /* a call's "method" ("" in a reply; cut names are refused as unknown) */
	size_t entries;  /* valid entries delivered */
	size_t rejected; /* elements of "cgroups" skipped: malformed, bad path, unknown mode or property */
};

typedef int (*moom_entry_fn)(void *ctx, const struct moom_entry *e);

/* Parses one message (len bytes, its NUL terminator not included). The whole
 * text is checked first, so a malformed message delivers nothing: then
 * -EBADMSG. Otherwise each valid element of parameters.cgroups goes to fn
 * (may be NULL) in order, and 0 (or fn's first negative return). */
int moom_parse(const char *msg, size_t len, struct moom_reply *r, moom_entry_fn fn, void *ctx);

/* A unit cgroup path from PID 1, checked and normalized into out: "" is
 * the root "/"; otherwise absolute, no empty, "." or ".." component, no
 * trailing slash, no control character, shorter than size. 0 or -EINVAL. */
int moom_path_check(const char *in, char *out, size_t size);

/* Whether a user manager of uid may report path (normalized): uid 0 any,
 * others only their own user manager's subtree,
 * /user.slice/user-UID.slice/user@UID.service and below. */
bool moom_user_path_ok(unsigned long uid, const char *path);
/* The group of uid's user manager, /user.slice/user-UID.slice/user@UID.service,
 * into buf: its length, or -ENAMETOOLONG. */
int moom_user_manager_group(unsigned long uid, char *buf, size_t size);

/* The limit PID 1 sends (a fraction of UINT32_MAX) in hundredths of a percent. */
uint32_t moom_limit_permyriad(uint64_t raw);

struct moom_unit {
	char *path;
	bool pressure, swap;      /* ManagedOOMMemoryPressure=kill, ManagedOOMSwap=kill */
	uint32_t limit_permyriad; /* effective (the default applied) */
	uint64_t duration_us;     /* effective */
	bool limit_default, duration_default; /* PID 1 sent none: oomd.conf's */
	bool seen_pressure, seen_swap; /* listed by the full message being applied */
	/* the pressure clock: avg10 above the limit since above_since_us */
	bool above;
	uint64_t above_since_us;
	uint32_t last_avg10; /* permyriad, for the log line */
	int read_err;        /* the last failure to read its pressure, logged once */
};

struct moom_set {
	struct moom_unit *u;
	size_t n, cap;
	bool full; /* between moom_set_begin and moom_set_end */
	struct moom_defaults def; /* what a unit without a limit or duration gets */
	size_t refused; /* entries refused: MOOM_UNITS_MAX reached */
};

void moom_set_init(struct moom_set *s);
void moom_set_free(struct moom_set *s);
/* A full list follows (the first message of a subscription): units and
 * properties it does not list are dropped at moom_set_end. */
void moom_set_begin(struct moom_set *s);
void moom_set_end(struct moom_set *s);
/* Applies one entry. 1 changed, 0 no change, -ENOSPC (MOOM_UNITS_MAX),
 * -ENOMEM. A unit with neither property on is removed. */
int moom_set_apply(struct moom_set *s, const struct moom_entry *e);
/* New defaults (a reload read oomd.conf again): units without a limit or
 * duration of their own take them. */
void moom_set_defaults(struct moom_set *s, const struct moom_defaults *def);
/* The unit of path, or NULL. */
struct moom_unit *moom_set_find(struct moom_set *s, const char *path);
/* How many units have a pressure, a swap setting on. */
size_t moom_set_count(const struct moom_set *s, enum moom_prop p);
/* How many units of s a user manager of uid reported (paths in its subtree). */
size_t moom_set_count_user(const struct moom_set *s, unsigned long uid);

/* The pressure clock of u at now_us, its "some avg10" (permyriad) just
 * read: true when avg10 has been above the limit for the unit's duration
 * (as systemd-oomd: above at every check, 1 s apart). */
bool moom_pressure_due(struct moom_unit *u, uint32_t avg10, uint64_t now_us);
/* A kill was decided in u at now_us: the duration starts over (avg10 lags
 * the kill by seconds; systemd-oomd waits 15 s for the same reason). */
void moom_unit_acted(struct moom_unit *u, uint64_t now_us);
/* A group below the ManagedOOMSwap=kill units is a candidate for the swap
 * kill when it uses more than this share of the swap (systemd-oomd's). */
#define MOOM_SWAP_CANDIDATE_PERCENT 5
bool moom_swap_candidate(uint64_t swap_bytes, uint64_t swap_total);
/* systemd-oomd's swap condition: available memory and free swap both below
 * 100% - SwapUsedLimit (swap_used_permyriad) of their totals (no swap: never). */
bool moom_swap_due(uint32_t swap_used_permyriad, uint64_t mem_total, uint64_t mem_available, uint64_t swap_total,
		   uint64_t swap_free);
