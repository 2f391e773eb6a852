/* SPDX-License-Identifier: MIT */
/* config-private: what the config files share and nobody else sees: the
 * parser's state while the files are read, the key tables' shape, and the
 * helpers each part offers the others. Not installed, not for other modules. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"

enum section_kind {
	SEC_NONE,
	SEC_DAEMON,
	SEC_TIER,
	SEC_INVALID, /* an error was already reported for this section */
};

struct parser;

typedef int (*value_parser)(struct parser *p, const char *value, char *why, size_t whylen);

/* How a key's value is read: by its own parser, or by a typed one into the
 * field at offset of the section's struct (struct config for [daemon],
 * struct tier_config for [tier NAME]). */
enum key_type {
	KEY_CUSTOM,   /* parse */
	KEY_DURATION, /* uint64_t microseconds in lo..hi; off_word (if any) means 0 */
	KEY_BOOL,     /* bool: true/yes/on/1, false/no/off/0 */
};

struct key_def {
	const char *name;
	value_parser parse;
	enum key_type type;
	size_t offset;
	uint64_t lo, hi;
	const char *off_word;
};

#define KEY(key, fn) { .name = (key), .parse = (fn), .type = KEY_CUSTOM }
#define KEY_DURATION_AT(key, type_, field, lo_, hi_, off)                                                          \
	{ .name = (key), .type = KEY_DURATION, .offset = offsetof(type_, field), .lo = (lo_), .hi = (hi_), .off_word = (off) }
#define KEY_BOOL_AT(key, type_, field) { .name = (key), .type = KEY_BOOL, .offset = offsetof(type_, field) }

/* config-keys.c: reads v into key k of the section being parsed (its typed
 * parser, or its own). 0, or -EINVAL/-ENOMEM with the reason in why. */
int config_key_parse(struct parser *p, const struct key_def *k, const char *v, char *why, size_t whylen);

/* The main file is read first, then each drop-in, into the same config c:
 * c->origin says where each key was set (CONFIG_ORIGIN), which tells a
 * duplicate in one file (an error) from an override by a later file. */
struct parser {
	struct config *c;
	struct config_error *err;
	unsigned err_line;
	bool err_nomem; /* the error at err_line is running out of memory: -ENOMEM, not -EINVAL */

	/* line reader, of file number file (0 = c->path, 1.. c->dropins) */
	unsigned file;
	const char *pos;
	unsigned line;
	bool mid_line; /* the last chunk returned did not end the line */
	char line_key[128];
	bool line_key_long;  /* the line's key did not fit in line_key */
	size_t line_key_len; /* its length, then (as far as the first 255 bytes of the line tell) */
	/* a key line longer than inih's buffer: inih is given "KEY=" and the
	 * handler takes the value, trimmed as inih trims one, from here */
	unsigned long_line; /* its number (0: none) */
	char long_value[CONFIG_LONG_LINE_MAX + 1];

	/* current section; the header lines are this file's (0 = not in it) */
	enum section_kind sec;
	struct tier_config *tier;
	unsigned daemon_line;
	unsigned tier_line[CONFIG_TIERS_MAX];
	unsigned on_kill_line, on_kill_user_line, pre_kill_line; /* origins */
	char on_kill_user[CONFIG_USER_MAX]; /* as written */
};

/* The origin (CONFIG_ORIGIN) of the line being read. */
static inline unsigned config_here(const struct parser *p)
{
	return CONFIG_ORIGIN(p->file, p->line);
}

/* The tier keys the cross-checks after the file look up by index. */
enum { TIER_KEY_TRIGGER, TIER_KEY_MIN_ADJ, TIER_KEY_LOW_AVAILABLE, TIER_KEY_KILL_SIGNAL, TIER_KEY_TERM_TIMEOUT };

extern const struct key_def config_daemon_keys[]; /* NULL-terminated */
extern const struct key_def config_tier_keys[];
/* The index of key name in keys (one of the two tables); the name must be there. */
int config_key_index(const struct key_def *keys, const char *name);

/* config-error.c: records the first error as "file:line: ..." (later ones are
 * dropped); line is a line of the file being read, or an origin (CONFIG_ORIGIN) */
__attribute__((format(printf, 3, 4))) void config_fail(struct parser *p, unsigned line, const char *fmt, ...);

/* config-dropin.c: lists c's drop-ins (c->path's ".d" directory, then
 * c->vendor_dir) into c->dropins, sorted by name. 0, or -errno with err set. */
int config_list_dropins(struct config *c, struct config_error *err);

/* config-values.c: the pure building blocks of the value parsers */
const char *config_skip_ws(const char *s);
/* The first byte of s..end that is not a blank, or end. */
const char *config_skip_ws_n(const char *s, const char *end);
/* s is zero as a memory amount: "0", "0B", "0M", "0.0%" (with allow_percent), ... */
bool config_amount_is_zero(const char *s, bool allow_percent);
int config_parse_fixed(const char **sp, unsigned scale_digits, uint64_t *out);
int config_parse_int_range(const char *s, long lo, long hi, long *out);
int config_parse_bool(const char *s, bool *out);

/* config-regex.c: checks a regex key (length, complexity guard, regcomp) and copies it to dst */
int config_set_regex(char *dst, const char *name, const char *v, char *why, size_t whylen);

/* config-keys.c: after all the files, what no single key can check: on_kill's
 * user, and the keys of each tier taken together */
void config_resolve_hook_user(struct parser *p);
void config_check_tiers(struct parser *p);
