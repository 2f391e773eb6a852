/* cunit-tap: runs every registered CUnit suite and prints TAP, one line per
 * test case, so that automake's TAP driver counts test cases, not programs. */
#pragma once

#include <CUnit/CUnit.h>

/* Registers suites, runs them, prints TAP. Returns the process exit status. */
int cunit_tap_main(CU_SuiteInfo *suites);

/* Marks the running test case as skipped ("ok N - ... # SKIP reason") when
 * it finishes without failures; reason must stay valid until then. */
void cunit_tap_skip(const char *reason);
