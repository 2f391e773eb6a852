/* SPDX-License-Identifier: MIT */
/* lines: the one scanner of "KEY value" text (/proc/PID/status,
 * /proc/meminfo, memory.stat, memory.events, /proc/PID/cgroup). Pure. */
#pragma once

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
