/* SPDX-License-Identifier: MIT */
/* lmkd-proto: the packets of Android's lmkd control socket (/dev/socket/lmkd),
 * as values. Decoding a request checks its length exactly and its values'
 * ranges; encoding builds the replies and the unsolicited kill reports. Every
 * word is a 32-bit big-endian integer; the first is the command. Pure: no I/O,
 * no allocation. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* the commands, by their number on the wire */
enum lmkd_cmd {
	LMKD_TARGET = 0,
	LMKD_PROCPRIO = 1,
	LMKD_PROCREMOVE = 2,
	LMKD_PROCPURGE = 3,
	LMKD_GETKILLCNT = 4,
	LMKD_SUBSCRIBE = 5,
	LMKD_PROCKILL = 6,        /* daemon -> client only */
	LMKD_UPDATE_PROPS = 7,
	LMKD_KILL_OCCURRED = 8,   /* daemon -> client only (the STAT packet) */
	LMKD_START_MONITORING = 9,
	LMKD_BOOT_COMPLETED = 10,
	LMKD_PROCS_PRIO = 11,
	LMKD_CMD_COUNT
};

enum lmkd_ptype { LMKD_PTYPE_APP = 0, LMKD_PTYPE_SERVICE = 1 };
enum lmkd_event { LMKD_EVENT_KILL = 0, LMKD_EVENT_STAT = 1, LMKD_EVENT_COUNT };

#define LMKD_ADJ_MIN (-1000)
#define LMKD_ADJ_MAX 1000
#define LMKD_TARGETS_MAX 6
#define LMKD_RECORDS_MAX 3   /* PROCS_PRIO records per packet */
/* a receive buffer this large sees every valid packet whole, and a longer
 * one as longer than any valid packet */
#define LMKD_PACKET_MAX 256
#define LMKD_REPLY_SIZE 8
#define LMKD_PROCKILL_SIZE_SHORT 12 /* [6, pid, uid]: Android 11-15 frameworks */
#define LMKD_PROCKILL_SIZE 16       /* [6, pid, uid, rss_kb]: Android 16 */
#define LMKD_TASKNAME_MAX 127
#define LMKD_STAT_HEADER 86         /* KILL_OCCURRED before the task name */
#define LMKD_STAT_SIZE_MAX (LMKD_STAT_HEADER + LMKD_TASKNAME_MAX + 1)

/* BOOT_COMPLETED's reply values */
enum { LMKD_BOOT_NOT_YET = -1, LMKD_BOOT_HANDLED = 0, LMKD_BOOT_ALREADY = 1 };

/* kill_reason of KILL_OCCURRED (lmkd's statslog.h numbering; which
 * psi-lmkd cause gives which: lmkd-kill.h) */
enum {
	LMKD_REASON_NONE = -1,
	LMKD_REASON_PRESSURE_AFTER_KILL = 0,
	LMKD_REASON_NOT_RESPONDING = 1,
	LMKD_REASON_LOW_SWAP_AND_THRASHING = 2,
	LMKD_REASON_LOW_MEM_AND_SWAP = 3,
	LMKD_REASON_LOW_MEM_AND_THRASHING = 4,
	LMKD_REASON_DIRECT_RECL_AND_THRASHING = 5,
	LMKD_REASON_LOW_MEM_AND_SWAP_UTIL = 6,
	LMKD_REASON_LOW_FILECACHE_AFTER_THRASHING = 7,
	LMKD_REASON_LOW_MEM = 8,
	LMKD_REASON_DIRECT_RECL_STUCK = 9,
};

/* One process's priority: PROCPRIO, or one record of PROCS_PRIO. */
struct lmkd_prio {
	int32_t pid;
	int32_t uid;
	int32_t adj;
	int32_t ptype;      /* LMKD_PTYPE_APP when the packet has no such field */
	int32_t lmkd_only;  /* the newest frameworks' 5th field (0 or 1; 0 when absent):
			     * 1 = lmkd's record only, no /proc write */
};

struct lmkd_request {
	enum lmkd_cmd cmd;
	unsigned fields; /* words after the command, for log lines */
	union {
		struct {
			unsigned n; /* 0..LMKD_TARGETS_MAX pairs */
			int32_t minfree[LMKD_TARGETS_MAX];
			int32_t adj[LMKD_TARGETS_MAX];
		} target;
		struct lmkd_prio prio; /* PROCPRIO */
		int32_t pid;           /* PROCREMOVE */
		struct {
			int32_t min_adj, max_adj;
		} killcnt;
		enum lmkd_event event; /* SUBSCRIBE */
		struct {
			unsigned n; /* 0..LMKD_RECORDS_MAX; 0 is a bare [11], tolerated */
			unsigned width; /* 4 or 5 fields a record (0 when n == 0) */
			struct lmkd_prio rec[LMKD_RECORDS_MAX];
		} procs;
	};
};

/* Decodes one datagram of len bytes. Returns 0, or
 *  -ENODATA  empty datagram;
 *  -EMSGSIZE not a whole number of words, or a length the command does not
 *            have (including anything longer than the longest valid packet);
 *  -EBADMSG  unknown command (negative, too large, little-endian);
 *  -EPROTO   a command only the daemon sends (PROCKILL, KILL_OCCURRED);
 *  -ERANGE   a value out of range: PROCPRIO's (lmkd_prio_check), SUBSCRIBE's
 *            event.
 * PROCS_PRIO records are not range-checked here: each one is judged on its
 * own (lmkd_prio_check) and a bad one does not spoil the others. *why is set
 * to a short reason on failure. */
int lmkd_decode(const void *buf, size_t len, struct lmkd_request *req, const char **why);

/* A priority's values: pid > 0, adj in [-1000, 1000], ptype APP or SERVICE,
 * lmkd_only 0 or 1.
 * 0 or -ERANGE with *why set. */
int lmkd_prio_check(const struct lmkd_prio *p, const char **why);

const char *lmkd_cmd_name(int cmd);

/* Encoders: each writes into buf (at least the size it returns, which the
 * caller's buffer must hold: LMKD_PACKET_MAX always does) and returns the
 * packet's length. */

/* A reply [cmd, value]: GETKILLCNT, UPDATE_PROPS, BOOT_COMPLETED. */
size_t lmkd_encode_reply(uint8_t *buf, enum lmkd_cmd cmd, int32_t value);
/* PROCKILL, 16 bytes with rss_kb, or 12 with short. */
size_t lmkd_encode_prockill(uint8_t *buf, int32_t pid, int32_t uid, int32_t rss_kb, bool short_form);

/* What KILL_OCCURRED reports about one kill. -1 = unknown for the 64-bit
 * memory figures. */
struct lmkd_kill_stat {
	int64_t pgfault, pgmajfault, rss_bytes, cache_bytes, swap_bytes, start_time_ns;
	int32_t uid, oom_score, min_oom_score, free_mem_kb, free_swap_kb, kill_reason, thrashing, max_thrashing;
	const char *taskname; /* cut at LMKD_TASKNAME_MAX bytes */
};

/* KILL_OCCURRED (the STAT packet): 87 + name length bytes, at most
 * LMKD_STAT_SIZE_MAX. */
size_t lmkd_encode_kill_occurred(uint8_t *buf, const struct lmkd_kill_stat *s);

/* The task name KILL_OCCURRED carries, as lmkd takes it: argv[0] of a raw
 * /proc/PID/cmdline (up to the first NUL), cut at the first space and at
 * LMKD_TASKNAME_MAX bytes. Empty when raw is. */
void lmkd_taskname(const char *raw, size_t len, char *out, size_t size);

/* Client side (the --reinit / --boot-completed modes, tests, bench). */

/* Encodes a request as the clients do (PROCPRIO with req->fields 3, 4 or 5
 * words, PROCS_PRIO with req->procs.width-field records). Returns the
 * length, or 0 for a request that cannot be encoded. */
size_t lmkd_encode_request(uint8_t *buf, const struct lmkd_request *req);
/* A reply to cmd: exactly 8 bytes, first word cmd. 0 and *value, or -EBADMSG. */
int lmkd_decode_reply(const void *buf, size_t len, enum lmkd_cmd cmd, int32_t *value);
