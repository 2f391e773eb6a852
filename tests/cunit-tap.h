/* cunit-tap: runs every registered CUnit suite and prints TAP, one line per
 * test case, so that automake's TAP driver counts test cases, not programs. */
#pragma once

#include <CUnit/CUnit.h>

/* Registers suites, runs them, prints TAP. Returns the process exit status. */
int cunit_tap_main(CU_SuiteInfo *suites);
