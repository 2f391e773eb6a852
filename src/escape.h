/* escape: the one escaper of bytes that users choose (process names, command
 * lines, cgroup paths) on their way into a log line or an environment. An
 * escaped byte becomes \xHH. Names are escaped once, where they are read
 * (ESCAPE_NAME, which also escapes the backslash, so that afterwards a
 * backslash always starts an escape); later stages escape what their output
 * needs on top and leave the backslash alone. */
#pragma once

#include <stddef.h>

enum escape_mode {
	ESCAPE_CONTROL, /* control bytes (< 0x20, 0x7f): one line, one value */
	ESCAPE_NAME,    /* control bytes and the backslash: a name read from /proc */
	ESCAPE_TOKEN,   /* control bytes, bytes >= 0x80, space, '=' and '"': one
			 * token of a key=value line */
};

/* Copies src[0..len) to dst (always NUL-terminated when size > 0), escaping
 * as mode says; an escape is never cut in half. *used, when not NULL, gets
 * the number of bytes of src that fitted. Returns the length the whole
 * escaped text needs (like snprintf: a result >= size means it was cut). */
size_t escape_bytes(char *dst, size_t size, const char *src, size_t len, enum escape_mode mode, size_t *used);
