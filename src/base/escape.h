/* SPDX-License-Identifier: MIT */
/* escape: the one escaper of bytes that users choose (process names, command
 * lines, cgroup paths) on their way into a log line, an environment, JSON,
 * the metrics file or the system bus. An escaped byte becomes \xHH.
 *
 * Every mode's output is a display name: valid UTF-8 (RFC 3629) with no
 * control character. A well-formed multi-byte sequence is kept as it is;
 * a byte that is not part of one (a stray continuation byte, an overlong
 * form, a surrogate, a code point above U+10FFFF, a sequence cut short) is
 * escaped, as are the C0 and C1 control characters and DEL. Names are
 * escaped once, where they are read (ESCAPE_NAME, which also escapes the
 * backslash, so that afterwards a backslash always starts an escape and two
 * names never look alike); later stages escape what their output needs on
 * top and leave the backslash alone. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

enum escape_mode {
	ESCAPE_CONTROL, /* control characters and invalid UTF-8: one line, one value */
	ESCAPE_NAME,    /* ... and the backslash: a name read from /proc or cgroupfs */
	ESCAPE_TOKEN,   /* control bytes, bytes >= 0x80, space, '=' and '"': one
			 * token of a key=value line (ASCII only) */
};

/* Copies src[0..len) to dst (always NUL-terminated when size > 0), escaping
 * as mode says; an escape or a UTF-8 sequence is never cut in half. *used,
 * when not NULL, gets the number of bytes of src that fitted. Returns the
 * length the whole escaped text needs (like snprintf: a result >= size
 * means it was cut). */
size_t escape_bytes(char *dst, size_t size, const char *src, size_t len, enum escape_mode mode, size_t *used);

/* The length of the character at s[0..len): 1 for an ASCII byte, 2 to 4
 * for a well-formed UTF-8 sequence, 0 when s[0] does not start one (len 0
 * included). For writers that must emit valid UTF-8 whatever they get. */
size_t escape_utf8_len(const char *s, size_t len);
