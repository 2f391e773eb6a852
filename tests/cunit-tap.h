/* SPDX-License-Identifier: MIT */
/* cunit-tap: runs every registered CUnit suite and prints TAP, one line per
 * test case, so that automake's TAP driver counts test cases, not programs. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include <CUnit/CUnit.h>

/* Registers suites, runs them, prints TAP. Returns the process exit status. */
int cunit_tap_main(CU_SuiteInfo *suites);

/* Marks the running test case as skipped ("ok N - ... # SKIP reason") when
 * it finishes without failures; reason must stay valid until then. */
void cunit_tap_skip(const char *reason);

/* pidfd_open is missing before Linux 5.3, and valgrind 3.19 does not know it
 * (make check-valgrind): a test case that kills through pidfds calls this
 * first and returns when it is true (the case is then marked skipped). */
bool cunit_tap_skip_without_pidfd(void);

/* true if s[0..len) is well-formed UTF-8 (RFC 3629) and, unless controls,
 * holds no control character (C0, DEL, C1): a display name (escape.h).
 * Decodes code points on its own, apart from escape.c, to check it. */
bool cunit_tap_utf8_ok(const char *s, size_t len, bool controls);
