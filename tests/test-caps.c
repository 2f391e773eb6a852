/* SPDX-License-Identifier: MIT */
/* test-caps: caps_drop_to_needed() in a child process, its capability sets
 * read back from the child's /proc/self/status. The expected sets follow from
 * what the child was permitted before and the list psi-lmkd keeps (written
 * out here again, on purpose, rather than taken from caps.c). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <linux/securebits.h>

#include "caps.h"
#include "cunit-tap.h"

#define BIT(c) (1ULL << (c))

/* the documented set: README, psi-lmkd(8), the unit and the rc */
static const struct {
	int cap;
	const char *name;
} kept_caps[] = {
	{ 1, "cap_dac_override" }, { 2, "cap_dac_read_search" }, { 5, "cap_kill" },
	{ 14, "cap_ipc_lock" },    { 19, "cap_sys_ptrace" },     { 23, "cap_sys_nice" },
	{ 24, "cap_sys_resource" },
};
#define N_KEPT (sizeof(kept_caps) / sizeof(kept_caps[0]))
#define CAP_SETPCAP_BIT 8

static uint64_t keep_mask(void)
{
	uint64_t m = 0;
	size_t i;

	for (i = 0; i < N_KEPT; i++)
		m |= BIT(kept_caps[i].cap);
	return m;
}

struct capsets {
	uint64_t inh, prm, eff, bnd, amb;
	int no_new_privs;
};

struct result {
	struct capsets before, after;
	int prepared; /* 0, or -errno if the child could not set up the case */
	int rc, rc2;
	int securebits;
	char err[512], err2[512];
	char desc[512];
};

static int read_status(struct capsets *s)
{
	static const struct {
		const char *key;
		size_t off;
	} keys[] = {
		{ "CapInh:", offsetof(struct capsets, inh) }, { "CapPrm:", offsetof(struct capsets, prm) },
		{ "CapEff:", offsetof(struct capsets, eff) }, { "CapBnd:", offsetof(struct capsets, bnd) },
		{ "CapAmb:", offsetof(struct capsets, amb) },
	};
	char line[256];
	unsigned found = 0;
	FILE *f = fopen("/proc/self/status", "re");
	size_t i;

	if (!f)
		return -errno;
	memset(s, 0, sizeof(*s));
	s->no_new_privs = -1;
	while (fgets(line, sizeof(line), f)) {
		for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
			size_t n = strlen(keys[i].key);

			if (strncmp(line, keys[i].key, n) == 0 &&
			    sscanf(line + n, "%" SCNx64, (uint64_t *)(void *)((char *)s + keys[i].off)) == 1)
				found++;
		}
		if (strncmp(line, "NoNewPrivs:", 11) == 0)
			s->no_new_privs = atoi(line + 11);
	}
	fclose(f);
	return found == 5 ? 0 : -EINVAL;
}

/* Leaves the child with prm & ~clear as permitted and effective set. */
static int restrict_to(uint64_t clear)
{
	cap_t c = cap_get_proc();
	cap_value_t v, max = cap_max_bits();
	int r = 0;

	if (!c)
		return -errno;
	for (v = 0; v < max && r == 0; v++)
		if (clear & BIT(v))
			if (cap_set_flag(c, CAP_PERMITTED, 1, &v, CAP_CLEAR) < 0 ||
			    cap_set_flag(c, CAP_EFFECTIVE, 1, &v, CAP_CLEAR) < 0)
				r = -errno;
	if (r == 0 && cap_set_proc(c) < 0)
		r = -errno;
	cap_free(c);
	return r;
}

enum scenario {
	AS_IS,
	WITHOUT_SOME,    /* KILL, SYS_NICE, SYS_RESOURCE not permitted */
	WITHOUT_SETPCAP, /* cannot touch the bounding set */
	NOTHING,         /* no capabilities at all */
	TWICE,
	EXTRA, /* caps_drop_keep(CAP_SETUID, CAP_SETGID, CAP_KILL again) */
	EXTRA_DROPPED, /* EXTRA, then caps_drop_permitted(CAP_SETUID, CAP_SETGID) */
};

static void child(enum scenario sc, int fd)
{
	struct result res;

	memset(&res, 0, sizeof(res));
	switch (sc) {
	case WITHOUT_SOME:
		res.prepared = restrict_to(BIT(5) | BIT(23) | BIT(24));
		break;
	case WITHOUT_SETPCAP:
		res.prepared = restrict_to(BIT(CAP_SETPCAP_BIT));
		break;
	case NOTHING:
		res.prepared = restrict_to(~0ULL);
		break;
	default:
		break;
	}
	if (res.prepared == 0)
		res.prepared = read_status(&res.before);
	if (res.prepared == 0) {
		if (sc == EXTRA || sc == EXTRA_DROPPED) {
			static const cap_value_t extra[] = { CAP_SETUID, CAP_SETGID, CAP_KILL };

			res.rc = caps_drop_keep(extra, 3, res.err, sizeof(res.err));
			if (sc == EXTRA_DROPPED)
				res.rc2 = caps_drop_permitted(extra, 2);
		} else {
			res.rc = caps_drop_to_needed(res.err, sizeof(res.err));
		}
		if (sc == TWICE)
			res.rc2 = caps_drop_to_needed(res.err2, sizeof(res.err2));
		res.securebits = prctl(PR_GET_SECUREBITS);
		caps_describe(res.desc, sizeof(res.desc));
		res.prepared = read_status(&res.after);
	}
	if (write(fd, &res, sizeof(res)) != (ssize_t)sizeof(res))
		_exit(1);
	_exit(0);
}

static int run(enum scenario sc, struct result *res)
{
	int p[2], status;
	size_t got = 0;
	pid_t pid;

	memset(res, 0, sizeof(*res));
	if (pipe(p) < 0)
		return -errno;
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		close(p[0]);
		child(sc, p[1]);
	}
	close(p[1]);
	while (got < sizeof(*res)) {
		ssize_t n = read(p[0], (char *)res + got, sizeof(*res) - got);

		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(p[0]);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0 || got != sizeof(*res))
		return -ECHILD;
	return res->prepared;
}

static void expected_desc(uint64_t mask, char *buf, size_t len)
{
	size_t i;

	buf[0] = '\0';
	for (i = 0; i < N_KEPT; i++) /* kept_caps is in capability order */
		if (mask & BIT(kept_caps[i].cap)) {
			if (buf[0])
				strncat(buf, ",", len - strlen(buf) - 1);
			strncat(buf, kept_caps[i].name, len - strlen(buf) - 1);
		}
	if (!buf[0])
		snprintf(buf, len, "none");
}

/* The checks common to every scenario; extra: capabilities kept besides the
 * list, in the permitted set only (never effective). */
static void check_extra(const struct result *r, uint64_t extra)
{
	uint64_t kept = r->before.prm & (keep_mask() | extra);
	bool setpcap = r->before.prm & BIT(CAP_SETPCAP_BIT);
	char want[512];

	CU_ASSERT_EQUAL(r->rc, 0);
	CU_ASSERT_EQUAL(r->after.eff, r->before.prm & keep_mask());
	CU_ASSERT_EQUAL(r->after.prm, kept);
	CU_ASSERT_EQUAL(r->after.inh, 0);
	CU_ASSERT_EQUAL(r->after.amb, 0);
	CU_ASSERT_EQUAL(r->after.no_new_privs, 1);
	if (setpcap) {
		unsigned want_bits = SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED |
				     SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;

		CU_ASSERT_EQUAL(r->after.bnd, r->before.bnd & kept);
		CU_ASSERT_EQUAL(r->securebits & (int)want_bits, (int)want_bits);
		CU_ASSERT_STRING_EQUAL(r->err, "");
	} else {
		CU_ASSERT_EQUAL(r->after.bnd, r->before.bnd);
		if (r->before.bnd & ~kept)
			CU_ASSERT_PTR_NOT_NULL(strstr(r->err, "bounding set not reduced"));
	}
	if (!extra) {
		expected_desc(kept, want, sizeof(want));
		CU_ASSERT_STRING_EQUAL(r->desc, want);
	}
	printf("# before: prm=%016" PRIx64 " bnd=%016" PRIx64 "; after: eff=%016" PRIx64 " bnd=%016" PRIx64
	       " (%s)%s%s\n",
	       r->before.prm, r->before.bnd, r->after.eff, r->after.bnd, r->desc, r->err[0] ? "; " : "", r->err);
}

static void check(const struct result *r)
{
	check_extra(r, 0);
}

static void test_as_is(void)
{
	struct result r;

	CU_ASSERT_EQUAL_FATAL(run(AS_IS, &r), 0);
	check(&r);
}

static void test_without_some(void)
{
	struct result r;

	CU_ASSERT_EQUAL_FATAL(run(WITHOUT_SOME, &r), 0);
	CU_ASSERT_EQUAL(r.before.prm & (BIT(5) | BIT(23) | BIT(24)), 0);
	check(&r);
	CU_ASSERT_EQUAL(r.after.eff & (BIT(5) | BIT(23) | BIT(24)), 0);
}

static void test_without_setpcap(void)
{
	struct result r;

	CU_ASSERT_EQUAL_FATAL(run(WITHOUT_SETPCAP, &r), 0);
	check(&r);
}

static void test_nothing(void)
{
	struct result r;

	CU_ASSERT_EQUAL_FATAL(run(NOTHING, &r), 0);
	CU_ASSERT_EQUAL(r.before.prm, 0);
	check(&r);
	CU_ASSERT_STRING_EQUAL(r.desc, "none");
}

static void test_twice(void)
{
	struct result r;

	CU_ASSERT_EQUAL_FATAL(run(TWICE, &r), 0);
	check(&r);
	/* the second drop finds nothing left to do and nothing to warn about
	 * when the first one could shrink the bounding set */
	CU_ASSERT_EQUAL(r.rc2, 0);
	if (r.before.prm & BIT(CAP_SETPCAP_BIT))
		CU_ASSERT_STRING_EQUAL(r.err2, "");
}

static void test_extra(void)
{
	static const cap_value_t too_many[CAPS_EXTRA_MAX + 1];
	struct result r;
	char err[64];

	CU_ASSERT_EQUAL_FATAL(run(EXTRA, &r), 0);
	check_extra(&r, BIT(6) | BIT(7)); /* CAP_SETGID, CAP_SETUID */
	/* permitted, for the on_kill child to raise; never effective in the daemon */
	CU_ASSERT_EQUAL(r.after.prm & (BIT(6) | BIT(7)), r.before.prm & (BIT(6) | BIT(7)));
	CU_ASSERT_EQUAL(r.after.eff & (BIT(6) | BIT(7)), 0);
	CU_ASSERT_PTR_NULL(strstr(r.desc, "cap_setuid"));
	CU_ASSERT_PTR_NULL(strstr(r.desc, "cap_setgid"));
	/* CAP_KILL is on the list anyway: still effective */
	CU_ASSERT_EQUAL(r.after.eff & BIT(5), r.before.prm & BIT(5));
	/* refused before anything changes */
	CU_ASSERT_EQUAL(caps_drop_keep(too_many, CAPS_EXTRA_MAX + 1, err, sizeof(err)), -EINVAL);
}

static void test_extra_dropped(void)
{
	struct result r;

	CU_ASSERT_EQUAL_FATAL(run(EXTRA_DROPPED, &r), 0);
	CU_ASSERT_EQUAL(r.rc, 0);
	CU_ASSERT_EQUAL(r.rc2, 0);
	/* the list alone, effective and permitted: CAP_SETUID/CAP_SETGID cannot come back */
	CU_ASSERT_EQUAL(r.after.prm, r.before.prm & keep_mask());
	CU_ASSERT_EQUAL(r.after.eff, r.before.prm & keep_mask());
	CU_ASSERT_EQUAL(r.after.prm & (BIT(6) | BIT(7)), 0);
	CU_ASSERT_EQUAL(r.after.inh, 0);
	CU_ASSERT_EQUAL(r.after.amb, 0);
}

static void test_describe_small_buffer(void)
{
	char buf[4];
	int r = caps_describe(buf, sizeof(buf));

	/* "none" needs 5 bytes, any capability name more */
	CU_ASSERT_EQUAL(r, -ENOSPC);
	CU_ASSERT_EQUAL(strlen(buf), sizeof(buf) - 1);
	CU_ASSERT_EQUAL(caps_describe(buf, 0), -ENOSPC);
}

int main(void)
{
	static CU_TestInfo tests[] = {
		{ "drop from this test's own set", test_as_is },
		{ "capabilities that were not permitted are not kept, no error", test_without_some },
		{ "without CAP_SETPCAP: bounding set kept, a warning, success", test_without_setpcap },
		{ "no capabilities at all: nothing kept, success", test_nothing },
		{ "a second drop changes nothing", test_twice },
		{ "caps_drop_keep keeps the extra capabilities permitted, not effective", test_extra },
		{ "caps_drop_permitted drops the extra capabilities for good", test_extra_dropped },
		{ "caps_describe reports a buffer too small", test_describe_small_buffer },
		CU_TEST_INFO_NULL,
	};
	static CU_SuiteInfo suites[] = {
		{ "caps", NULL, NULL, NULL, NULL, tests },
		CU_SUITE_INFO_NULL,
	};

	return cunit_tap_main(suites);
}
