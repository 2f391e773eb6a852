/* SPDX-License-Identifier: MIT */
/* cunit-tap: a CUnit runner that speaks TAP (ok / not ok per test, plan last). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include <CUnit/TestRun.h>

#include "cunit-tap.h"
#include "syscalls.h"

struct tap_state {
	unsigned n;
	unsigned failed;
	const char *skip; /* reason the running test case skipped itself, or NULL */
};

static struct tap_state *tap(void)
{
	/* the CUnit handlers take no user pointer; this is test-only state */
	static struct tap_state s;

	return &s;
}

static void on_complete(const CU_pTest test, const CU_pSuite suite, const CU_pFailureRecord fail)
{
	struct tap_state *s = tap();
	const CU_FailureRecord *f;

	s->n++;
	if (!fail) {
		if (s->skip)
			printf("ok %u - %s: %s # SKIP %s\n", s->n, suite->pName, test->pName, s->skip);
		else
			printf("ok %u - %s: %s\n", s->n, suite->pName, test->pName);
		s->skip = NULL;
		return;
	}
	s->skip = NULL;
	s->failed++;
	printf("not ok %u - %s: %s\n", s->n, suite->pName, test->pName);
	for (f = fail; f; f = f->pNext)
		printf("# %s:%u: %s\n", f->strFileName ? f->strFileName : "?", f->uiLineNumber,
		       f->strCondition ? f->strCondition : "");
	fflush(stdout);
}

void cunit_tap_skip(const char *reason)
{
	tap()->skip = reason;
}

static void on_suite_init_failure(const CU_pSuite suite)
{
	struct tap_state *s = tap();

	s->n++;
	s->failed++;
	printf("not ok %u - %s: suite setup failed\n", s->n, suite->pName);
}

int cunit_tap_main(CU_SuiteInfo *suites)
{
	unsigned n;

	if (CU_initialize_registry() != CUE_SUCCESS || CU_register_suites(suites) != CUE_SUCCESS) {
		printf("Bail out! cannot set up CUnit: %s\n", CU_get_error_msg());
		return 1;
	}
	CU_set_test_complete_handler(on_complete);
	CU_set_suite_init_failure_handler(on_suite_init_failure);
	CU_run_all_tests();
	n = tap()->n;
	printf("1..%u\n", n);
	CU_cleanup_registry();
	return tap()->failed ? 1 : 0;
}

bool cunit_tap_skip_without_pidfd(void)
{
	int fd = sys_pidfd_open(getpid(), 0);

	if (fd >= 0) {
		close(fd);
		return false;
	}
	if (errno != ENOSYS)
		return false;
	cunit_tap_skip("pidfd_open is not available (kernel before 5.3, or valgrind)");
	return true;
}

bool cunit_tap_utf8_ok(const char *s, size_t len, bool controls)
{
	static const uint32_t least[5] = { 0, 0, 0x80, 0x800, 0x10000 }; /* below: an overlong form */
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, n, k;

	while (i < len) {
		uint32_t cp = p[i];

		n = cp < 0x80 ? 1 : (cp & 0xe0) == 0xc0 ? 2 : (cp & 0xf0) == 0xe0 ? 3 : (cp & 0xf8) == 0xf0 ? 4 : 0;
		if (!n || n > len - i)
			return false;
		if (n > 1)
			cp &= 0x7fu >> n;
		for (k = 1; k < n; k++) {
			if ((p[i + k] & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (p[i + k] & 0x3fu);
		}
		if (cp < least[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		if (!controls && (cp < 0x20 || (cp >= 0x7f && cp < 0xa0)))
			return false;
		i += n;
	}
	return true;
}
