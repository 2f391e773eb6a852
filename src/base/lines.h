/* SPDX-License-Identifier: MIT */
/* lines: the one scanner of "KEY value" text (/proc/PID/status,
 * /proc/meminfo, memory.stat, memory.events, /proc/PID/cgroup). Pure. */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* The rest of the first line of text that starts with key (just past the
 * key), or NULL. The match is anchored at a line's start, never inside it. */
const char *lines_find(const char *text, const char *key);

/* The number on the first line that starts with key followed by ':', a
 * space or a tab ("VmRSS:  123 kB", "anon 4096"): 1 found, 0 absent,
 * -EINVAL if it is no number. */
int lines_value(const char *text, const char *key, uint64_t *out);

/* The number (from 1) of the line of text that holds the byte at, which
 * lies in text or just past it: the line of a file's first NUL byte. */
unsigned lines_number(const char *text, const char *at);

/* Whether the len bytes at line start with one of keys (NULL-terminated),
 * or, fewer than a key's, may yet: they agree with it as far as they go. A
 * complete line ends in '\n', which no key holds, so for it this is "starts
 * with"; for a line still being read, "cannot be ruled out". */
int lines_keyed(const char *line, size_t len, const char *const *keys);

/* Keeps, of text[0..len), the complete lines ('\n'-ended) that start with
 * one of keys, moved to the front in their order, and moves the unfinished
 * last line (no '\n' yet) right after them: returns the length of the kept
 * lines, *tail that of the unfinished one. For a reader that sees a file in
 * pieces (read_lines_at). */
size_t lines_filter(char *text, size_t len, const char *const *keys, size_t *tail);
