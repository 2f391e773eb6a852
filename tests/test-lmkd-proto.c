/* SPDX-License-Identifier: MIT */
/* test-lmkd-proto: the lmkd socket's packets: every command, every length
 * it may have and the lengths around them, every malformed form, and the
 * replies and kill reports byte by byte. */
#include <errno.h>
#include <stdarg.h>
#include <string.h>

#include "cunit-tap.h"
#include "lmkd-proto.h"

/* a packet of n big-endian words */
static size_t words(uint8_t *buf, unsigned n, ...)
{
	va_list ap;
	unsigned i;

	va_start(ap, n);
	for (i = 0; i < n; i++) {
		uint32_t v = (uint32_t)va_arg(ap, int);

		buf[4 * i] = (uint8_t)(v >> 24);
		buf[4 * i + 1] = (uint8_t)(v >> 16);
		buf[4 * i + 2] = (uint8_t)(v >> 8);
		buf[4 * i + 3] = (uint8_t)v;
	}
	va_end(ap);
	return 4 * n;
}

static int decode(const uint8_t *buf, size_t len, struct lmkd_request *req)
{
	const char *why = NULL;
	int r = lmkd_decode(buf, len, req, &why);

	CU_ASSERT_PTR_NOT_NULL(why);
	if (r < 0)
		CU_ASSERT(why && *why);
	return r;
}

/* a command word followed by n zero words */
static int decode_len(int cmd, unsigned n)
{
	uint8_t buf[LMKD_PACKET_MAX + 8] = { 0 };
	struct lmkd_request req;

	words(buf, 1, cmd);
	return decode(buf, 4 + 4 * (size_t)n, &req);
}

static void test_target(void)
{
	uint8_t buf[64];
	struct lmkd_request req;
	size_t len;

	len = words(buf, 13, 0, 18432, 0, 23040, 100, 27648, 200, 32256, 250, 55296, 900, 80640, 950);
	CU_ASSERT_EQUAL_FATAL(decode(buf, len, &req), 0);
	CU_ASSERT_EQUAL(req.cmd, LMKD_TARGET);
	CU_ASSERT_EQUAL(req.target.n, 6);
	CU_ASSERT_EQUAL(req.target.minfree[0], 18432);
	CU_ASSERT_EQUAL(req.target.adj[0], 0);
	CU_ASSERT_EQUAL(req.target.minfree[5], 80640);
	CU_ASSERT_EQUAL(req.target.adj[5], 950);
	/* 1 to 6 pairs, and none (ignored by the daemon, not an error) */
	for (unsigned n = 0; n <= 6; n++)
		CU_ASSERT_EQUAL(decode_len(LMKD_TARGET, 2 * n), 0);
	/* odd counts and 7 pairs */
	for (unsigned n = 1; n <= 13; n += 2)
		CU_ASSERT_EQUAL(decode_len(LMKD_TARGET, n), -EMSGSIZE);
	CU_ASSERT_EQUAL(decode_len(LMKD_TARGET, 14), -EMSGSIZE);
}

static void test_procprio(void)
{
	uint8_t buf[64];
	struct lmkd_request req;

	/* 3 words: Android 10; no type means app */
	CU_ASSERT_EQUAL_FATAL(decode(buf, words(buf, 4, 1, 1234, 10061, 900), &req), 0);
	CU_ASSERT_EQUAL(req.cmd, LMKD_PROCPRIO);
	CU_ASSERT_EQUAL(req.fields, 3);
	CU_ASSERT_EQUAL(req.prio.pid, 1234);
	CU_ASSERT_EQUAL(req.prio.uid, 10061);
	CU_ASSERT_EQUAL(req.prio.adj, 900);
	CU_ASSERT_EQUAL(req.prio.ptype, LMKD_PTYPE_APP);
	CU_ASSERT_EQUAL(req.prio.lmkd_only, 0);
	/* 4 words: init's services */
	CU_ASSERT_EQUAL_FATAL(decode(buf, words(buf, 5, 1, 77, 1000, -900, 1), &req), 0);
	CU_ASSERT_EQUAL(req.prio.adj, -900);
	CU_ASSERT_EQUAL(req.prio.ptype, LMKD_PTYPE_SERVICE);
	/* 5 words: the newest framework's lmkd-only flag */
	CU_ASSERT_EQUAL_FATAL(decode(buf, words(buf, 6, 1, 78, 10001, 1000, 0, 1), &req), 0);
	CU_ASSERT_EQUAL(req.prio.adj, 1000);
	CU_ASSERT_EQUAL(req.prio.lmkd_only, 1);
	CU_ASSERT_EQUAL(decode(buf, words(buf, 6, 1, 78, 10001, -1000, 0, 0), &req), 0);
	CU_ASSERT_EQUAL(req.prio.lmkd_only, 0);
	/* lengths */
	CU_ASSERT_EQUAL(decode_len(LMKD_PROCPRIO, 0), -EMSGSIZE);
	CU_ASSERT_EQUAL(decode_len(LMKD_PROCPRIO, 1), -EMSGSIZE);
	CU_ASSERT_EQUAL(decode_len(LMKD_PROCPRIO, 2), -EMSGSIZE);
	CU_ASSERT_EQUAL(decode_len(LMKD_PROCPRIO, 6), -EMSGSIZE);
	CU_ASSERT_EQUAL(decode_len(LMKD_PROCPRIO, 12), -EMSGSIZE);
	/* ranges */
	CU_ASSERT_EQUAL(decode(buf, words(buf, 4, 1, 1234, 0, 1001), &req), -ERANGE);
	CU_ASSERT_EQUAL(decode(buf, words(buf, 4, 1, 1234, 0, -1001), &req), -ERANGE);
	CU_ASSERT_EQUAL(decode(buf, words(buf, 4, 1, 1234, 0, INT32_MIN), &req), -ERANGE);
	CU_ASSERT_EQUAL(decode(buf, words(buf, 4, 1, 0, 0, 0), &req), -ERANGE);
	CU_ASSERT_EQUAL(decode(buf, words(buf, 4, 1, -1, 0, 0), &req), -ERANGE);
	CU_ASSERT_EQUAL(decode(buf, words(buf, 5, 1, 1234, 0, 0, 2), &req), -ERANGE);
	CU_ASSERT_EQUAL(decode(buf, words(buf, 5, 1, 1234, 0, 0, -1), &req), -ERANGE);
	CU_ASSERT_EQUAL(decode(buf, words(buf, 6, 1, 1234, 0, 0, 0, 2), &req), -ERANGE);
	CU_ASSERT_EQUAL(decode(buf, words(buf, 6, 1, 1234, 0, 0, 0, -1), &req), -ERANGE);
}

static void test_fixed_lengths(void)
{
	static const struct {
		int cmd;
		unsigned fields;
	} fixed[] = {
		{ LMKD_PROCREMOVE, 1 }, { LMKD_PROCPURGE, 0 },	     { LMKD_GETKILLCNT, 2 },     { LMKD_SUBSCRIBE, 1 },
		{ LMKD_UPDATE_PROPS, 0 }, { LMKD_START_MONITORING, 0 }, { LMKD_BOOT_COMPLETED, 0 },
	};
	size_t i;

	for (i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
		unsigned n;

		for (n = 0; n <= 13; n++)
			CU_ASSERT_EQUAL(decode_len(fixed[i].cmd, n), n == fixed[i].fields ? 0 : -EMSGSIZE);
	}
}

static void test_small_commands(void)
{
	uint8_t buf[16];
	struct lmkd_request req;

	CU_ASSERT_EQUAL_FATAL(decode(buf, words(buf, 2, 2, 4321), &req), 0);
	CU_ASSERT_EQUAL(req.cmd, LMKD_PROCREMOVE);
	CU_ASSERT_EQUAL(req.pid, 4321);
	CU_ASSERT_EQUAL_FATAL(decode(buf, words(buf, 1, 3), &req), 0);
	CU_ASSERT_EQUAL(req.cmd, LMKD_PROCPURGE);
	CU_ASSERT_EQUAL_FATAL(decode(buf, words(buf, 3, 4, -1000, 1000), &req), 0);
	CU_ASSERT_EQUAL(req.cmd, LMKD_GETKILLCNT);
	CU_ASSERT_EQUAL(req.killcnt.min_adj, -1000);
	CU_ASSERT_EQUAL(req.killcnt.max_adj, 1000);
	/* any range decodes: the count sorts out the odd ones */
	CU_ASSERT_EQUAL(decode(buf, words(buf, 3, 4, 1001, -5000), &req), 0);
	CU_ASSERT_EQUAL_FATAL(decode(buf, words(buf, 2, 5, 0), &req), 0);
	CU_ASSERT_EQUAL(req.cmd, LMKD_SUBSCRIBE);
	CU_ASSERT_EQUAL(req.event, LMKD_EVENT_KILL);
	CU_ASSERT_EQUAL(decode(buf, words(buf, 2, 5, 1), &req), 0);
	CU_ASSERT_EQUAL(req.event, LMKD_EVENT_STAT);
	CU_ASSERT_EQUAL(decode(buf, words(buf, 2, 5, 2), &req), -ERANGE);
	CU_ASSERT_EQUAL(decode(buf, words(buf, 2, 5, -1), &req), -ERANGE);
	CU_ASSERT_EQUAL(decode(buf, words(buf, 1, 7), &req), 0);
	CU_ASSERT_EQUAL(req.cmd, LMKD_UPDATE_PROPS);
	CU_ASSERT_EQUAL(decode(buf, words(buf, 1, 9), &req), 0);
	CU_ASSERT_EQUAL(req.cmd, LMKD_START_MONITORING);
	CU_ASSERT_EQUAL(decode(buf, words(buf, 1, 10), &req), 0);
	CU_ASSERT_EQUAL(req.cmd, LMKD_BOOT_COMPLETED);
}

static void test_procs_prio(void)
{
	uint8_t buf[LMKD_PACKET_MAX + 8];
	struct lmkd_request req;
	const char *why;
	unsigned n;

	/* three 4-field records, the middle one bad: decoded, judged one by one */
	CU_ASSERT_EQUAL_FATAL(decode(buf, words(buf, 13, 11, 10, 10010, 900, 0, 11, 10011, 2000, 0, 12, 10012, 905, 1),
				     &req), 0);
	CU_ASSERT_EQUAL(req.cmd, LMKD_PROCS_PRIO);
	CU_ASSERT_EQUAL(req.procs.n, 3);
	CU_ASSERT_EQUAL(req.procs.width, 4);
	CU_ASSERT_EQUAL(req.procs.rec[0].pid, 10);
	CU_ASSERT_EQUAL(req.procs.rec[2].adj, 905);
	CU_ASSERT_EQUAL(req.procs.rec[2].ptype, LMKD_PTYPE_SERVICE);
	CU_ASSERT_EQUAL(lmkd_prio_check(&req.procs.rec[0], &why), 0);
	CU_ASSERT_EQUAL(lmkd_prio_check(&req.procs.rec[1], &why), -ERANGE);
	CU_ASSERT_EQUAL(lmkd_prio_check(&req.procs.rec[2], &why), 0);
	/* 5-field records: 1, 2, 3 */
	CU_ASSERT_EQUAL_FATAL(decode(buf, words(buf, 6, 11, 20, 10020, 950, 0, 1), &req), 0);
	CU_ASSERT_EQUAL(req.procs.n, 1);
	CU_ASSERT_EQUAL(req.procs.width, 5);
	CU_ASSERT_EQUAL(req.procs.rec[0].lmkd_only, 1);
	CU_ASSERT_EQUAL_FATAL(decode(buf, words(buf, 16, 11, 1, 2, 3, 0, 0, 4, 5, 6, 0, 0, 7, 8, 9, 0, 7), &req), 0);
	CU_ASSERT_EQUAL(req.procs.n, 3);
	CU_ASSERT_EQUAL(req.procs.width, 5);
	CU_ASSERT_EQUAL(req.procs.rec[1].pid, 4);
	CU_ASSERT_EQUAL(req.procs.rec[2].lmkd_only, 7);
	CU_ASSERT_EQUAL(lmkd_prio_check(&req.procs.rec[2], &why), -ERANGE);
	CU_ASSERT_EQUAL(decode_len(LMKD_PROCS_PRIO, 10), 0);
	/* a bare [11] is what a batch with nothing in it sends */
	CU_ASSERT_EQUAL_FATAL(decode(buf, words(buf, 1, 11), &req), 0);
	CU_ASSERT_EQUAL(req.procs.n, 0);
	/* every other field count up to 20 is malformed, so is 16 (4 records) */
	for (n = 1; n <= 20; n++) {
		bool ok = n == 4 || n == 8 || n == 12 || n == 5 || n == 10 || n == 15;

		CU_ASSERT_EQUAL(decode_len(LMKD_PROCS_PRIO, n), ok ? 0 : -EMSGSIZE);
	}
}

static void test_malformed(void)
{
	uint8_t buf[LMKD_PACKET_MAX + 8] = { 0 };
	struct lmkd_request req;
	size_t len;

	CU_ASSERT_EQUAL(decode(buf, 0, &req), -ENODATA);
	/* 1 to 3 bytes, and words with bytes left over */
	words(buf, 2, LMKD_PROCREMOVE, 5);
	for (len = 1; len <= 7; len++)
		if (len != 4)
			CU_ASSERT_EQUAL(decode(buf, len, &req), -EMSGSIZE);
	/* unknown: past the end, negative, a little-endian PROCPRIO */
	CU_ASSERT_EQUAL(decode(buf, words(buf, 1, 12), &req), -EBADMSG);
	CU_ASSERT_EQUAL(decode(buf, words(buf, 1, 0x7fffffff), &req), -EBADMSG);
	CU_ASSERT_EQUAL(decode(buf, words(buf, 1, -1), &req), -EBADMSG);
	CU_ASSERT_EQUAL(decode(buf, words(buf, 4, 0x01000000, 1234, 0, 900), &req), -EBADMSG);
	/* what only the daemon sends */
	CU_ASSERT_EQUAL(decode(buf, words(buf, 3, 6, 1, 2), &req), -EPROTO);
	CU_ASSERT_EQUAL(decode(buf, words(buf, 4, 6, 1, 2, 3), &req), -EPROTO);
	CU_ASSERT_EQUAL(decode(buf, words(buf, 1, 8), &req), -EPROTO);
	/* longer than the receive buffer could tell */
	words(buf, 1, LMKD_TARGET);
	CU_ASSERT_EQUAL(decode(buf, LMKD_PACKET_MAX + 4, &req), -EMSGSIZE);
	CU_ASSERT_EQUAL(decode(buf, LMKD_PACKET_MAX, &req), -EMSGSIZE);
}

static void test_replies(void)
{
	uint8_t buf[LMKD_PACKET_MAX];
	static const uint8_t killcnt[] = { 0, 0, 0, 4, 0, 0, 1, 2 };
	static const uint8_t props_fail[] = { 0, 0, 0, 7, 0xff, 0xff, 0xff, 0xff };
	static const uint8_t boot_already[] = { 0, 0, 0, 10, 0, 0, 0, 1 };
	int32_t v;

	CU_ASSERT_EQUAL(lmkd_encode_reply(buf, LMKD_GETKILLCNT, 258), 8);
	CU_ASSERT_EQUAL(memcmp(buf, killcnt, 8), 0);
	CU_ASSERT_EQUAL(lmkd_encode_reply(buf, LMKD_UPDATE_PROPS, -1), 8);
	CU_ASSERT_EQUAL(memcmp(buf, props_fail, 8), 0);
	CU_ASSERT_EQUAL(lmkd_encode_reply(buf, LMKD_BOOT_COMPLETED, LMKD_BOOT_ALREADY), 8);
	CU_ASSERT_EQUAL(memcmp(buf, boot_already, 8), 0);
	/* the client's side */
	CU_ASSERT_EQUAL(lmkd_decode_reply(props_fail, 8, LMKD_UPDATE_PROPS, &v), 0);
	CU_ASSERT_EQUAL(v, -1);
	CU_ASSERT_EQUAL(lmkd_decode_reply(killcnt, 8, LMKD_GETKILLCNT, &v), 0);
	CU_ASSERT_EQUAL(v, 258);
	CU_ASSERT_EQUAL(lmkd_decode_reply(killcnt, 8, LMKD_UPDATE_PROPS, &v), -EBADMSG);
	CU_ASSERT_EQUAL(lmkd_decode_reply(killcnt, 7, LMKD_GETKILLCNT, &v), -EBADMSG);
	CU_ASSERT_EQUAL(lmkd_decode_reply(buf, 12, LMKD_BOOT_COMPLETED, &v), -EBADMSG);
}

static void test_prockill(void)
{
	uint8_t buf[LMKD_PACKET_MAX];
	static const uint8_t full[] = { 0, 0, 0, 6, 0, 0, 0x30, 0x39, 0, 0, 0x27, 0x4d, 0, 1, 0, 0 };

	CU_ASSERT_EQUAL(lmkd_encode_prockill(buf, 12345, 10061, 65536, false), 16);
	CU_ASSERT_EQUAL(memcmp(buf, full, 16), 0);
	memset(buf, 0xaa, sizeof(buf));
	CU_ASSERT_EQUAL(lmkd_encode_prockill(buf, 12345, 10061, 65536, true), 12);
	CU_ASSERT_EQUAL(memcmp(buf, full, 12), 0);
	CU_ASSERT_EQUAL(buf[12], 0xaa);
}

static int64_t be64(const uint8_t *p)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return (int64_t)v;
}

static int32_t be32(const uint8_t *p)
{
	return (int32_t)((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]);
}

static void test_kill_occurred(void)
{
	uint8_t buf[LMKD_PACKET_MAX];
	char longname[300];
	struct lmkd_kill_stat s = { .pgfault = -1, .pgmajfault = -1, .rss_bytes = 5368709120LL, .cache_bytes = -1,
				    .swap_bytes = 4096, .start_time_ns = 123456789012345LL, .uid = 10061,
				    .oom_score = 1000, .min_oom_score = 800, .free_mem_kb = 2048, .free_swap_kb = 0,
				    .kill_reason = LMKD_REASON_LOW_MEM, .thrashing = 0, .max_thrashing = 0,
				    .taskname = "com.example.app" };
	size_t len = lmkd_encode_kill_occurred(buf, &s);

	CU_ASSERT_EQUAL_FATAL(len, 87 + strlen("com.example.app"));
	CU_ASSERT_EQUAL(be32(buf), 8);
	CU_ASSERT_EQUAL(be64(buf + 4), -1);
	CU_ASSERT_EQUAL(be64(buf + 4 + 16), 5368709120LL);
	CU_ASSERT_EQUAL(be64(buf + 4 + 24), -1);
	CU_ASSERT_EQUAL(be64(buf + 4 + 32), 4096);
	CU_ASSERT_EQUAL(be64(buf + 4 + 40), 123456789012345LL);
	CU_ASSERT_EQUAL(be32(buf + 52), 10061);
	CU_ASSERT_EQUAL(be32(buf + 56), 1000);
	CU_ASSERT_EQUAL(be32(buf + 60), 800);
	CU_ASSERT_EQUAL(be32(buf + 64), 2048);
	CU_ASSERT_EQUAL(be32(buf + 72), LMKD_REASON_LOW_MEM);
	CU_ASSERT_EQUAL(buf[84], 0);
	CU_ASSERT_EQUAL(buf[85], strlen("com.example.app"));
	CU_ASSERT_EQUAL(memcmp(buf + 86, "com.example.app", 16), 0); /* with its NUL */
	/* the name is cut at 127 bytes: 214 bytes in all, below the framework's 222 */
	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	s.taskname = longname;
	CU_ASSERT_EQUAL(lmkd_encode_kill_occurred(buf, &s), LMKD_STAT_SIZE_MAX);
	CU_ASSERT_EQUAL(LMKD_STAT_SIZE_MAX, 214);
	CU_ASSERT_EQUAL(buf[85], 127);
	CU_ASSERT_EQUAL(buf[86 + 127], 0);
	s.taskname = NULL;
	CU_ASSERT_EQUAL(lmkd_encode_kill_occurred(buf, &s), 87);
}

static void test_taskname(void)
{
	char out[LMKD_TASKNAME_MAX + 8];
	char longname[200];

	lmkd_taskname("/usr/bin/foo\0--bar\0", 19, out, sizeof(out));
	CU_ASSERT_STRING_EQUAL(out, "/usr/bin/foo");
	/* a process that rewrote its argv into one string */
	lmkd_taskname("com.android.phone worker\0", 25, out, sizeof(out));
	CU_ASSERT_STRING_EQUAL(out, "com.android.phone");
	lmkd_taskname("", 0, out, sizeof(out));
	CU_ASSERT_STRING_EQUAL(out, "");
	/* no NUL in the buffer: bounded by len */
	lmkd_taskname("abcdef", 3, out, sizeof(out));
	CU_ASSERT_STRING_EQUAL(out, "abc");
	memset(longname, 'y', sizeof(longname));
	lmkd_taskname(longname, sizeof(longname), out, sizeof(out));
	CU_ASSERT_EQUAL(strlen(out), LMKD_TASKNAME_MAX);
	lmkd_taskname(longname, sizeof(longname), out, 5);
	CU_ASSERT_STRING_EQUAL(out, "yyyy");
}

/* what the clients encode, the daemon decodes back */
static void test_round_trip(void)
{
	uint8_t buf[LMKD_PACKET_MAX];
	struct lmkd_request in, out;
	unsigned f;

	memset(&in, 0, sizeof(in));
	in.cmd = LMKD_PROCPRIO;
	in.prio = (struct lmkd_prio){ .pid = 99, .uid = 10099, .adj = 905, .ptype = 1, .lmkd_only = 1 };
	for (f = 3; f <= 5; f++) {
		in.fields = f;
		CU_ASSERT_EQUAL_FATAL(decode(buf, lmkd_encode_request(buf, &in), &out), 0);
		CU_ASSERT_EQUAL(out.prio.pid, 99);
		CU_ASSERT_EQUAL(out.prio.adj, 905);
		CU_ASSERT_EQUAL(out.prio.ptype, f >= 4 ? 1 : 0);
		CU_ASSERT_EQUAL(out.prio.lmkd_only, f == 5 ? 1 : 0);
	}
	in.fields = 6;
	CU_ASSERT_EQUAL(lmkd_encode_request(buf, &in), 0);
	memset(&in, 0, sizeof(in));
	in.cmd = LMKD_PROCS_PRIO;
	in.procs.n = 2;
	in.procs.width = 5;
	in.procs.rec[1] = (struct lmkd_prio){ .pid = 7, .uid = 8, .adj = 9 };
	CU_ASSERT_EQUAL(lmkd_encode_request(buf, &in), 44);
	CU_ASSERT_EQUAL_FATAL(decode(buf, 44, &out), 0);
	CU_ASSERT_EQUAL(out.procs.n, 2);
	CU_ASSERT_EQUAL(out.procs.rec[1].adj, 9);
	in.procs.width = 3;
	CU_ASSERT_EQUAL(lmkd_encode_request(buf, &in), 0);
	memset(&in, 0, sizeof(in));
	in.cmd = LMKD_GETKILLCNT;
	in.killcnt.min_adj = 900;
	in.killcnt.max_adj = 906;
	CU_ASSERT_EQUAL_FATAL(decode(buf, lmkd_encode_request(buf, &in), &out), 0);
	CU_ASSERT_EQUAL(out.killcnt.max_adj, 906);
	in.cmd = LMKD_PROCKILL;
	CU_ASSERT_EQUAL(lmkd_encode_request(buf, &in), 0);
	CU_ASSERT_STRING_EQUAL(lmkd_cmd_name(LMKD_PROCS_PRIO), "PROCS_PRIO");
	CU_ASSERT_STRING_EQUAL(lmkd_cmd_name(-3), "unknown");
	CU_ASSERT_STRING_EQUAL(lmkd_cmd_name(12), "unknown");
}

int main(void)
{
	static CU_TestInfo tests[] = {
		{ "TARGET: 0 to 6 pairs, odd and too many", test_target },
		{ "PROCPRIO: 3, 4 and 5 words, ranges", test_procprio },
		{ "fixed-length commands: only their length", test_fixed_lengths },
		{ "PROCREMOVE, PURGE, GETKILLCNT, SUBSCRIBE, UPDATE_PROPS, START_MONITORING, BOOT_COMPLETED",
		  test_small_commands },
		{ "PROCS_PRIO: 4- and 5-field records, bare, malformed", test_procs_prio },
		{ "malformed datagrams", test_malformed },
		{ "8-byte replies", test_replies },
		{ "PROCKILL: 16 and 12 bytes", test_prockill },
		{ "KILL_OCCURRED layout", test_kill_occurred },
		{ "task name from cmdline", test_taskname },
		{ "client encoding round trip", test_round_trip },
		CU_TEST_INFO_NULL,
	};
	static CU_SuiteInfo suites[] = {
		{ "lmkd-proto", NULL, NULL, NULL, NULL, tests },
		CU_SUITE_INFO_NULL,
	};

	return cunit_tap_main(suites);
}
