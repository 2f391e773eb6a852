/* SPDX-License-Identifier: MIT */
/* test-oomhand: the OOM hand-over's state machine (oom_killer = daemon),
 * pure: what C-1 of review-31676fe needs -- an OOM is answered only by a
 * kill of a member of the group, re-checked after that kill, and given back
 * to the kernel when nothing frees memory in time. The kernel side is
 * tests/kernel/test-oom-handover.sh. */
#include "cunit-tap.h"
#include "oomhand.h"

#define MS 1000ULL
#define BOUND (3000 * MS)

static const struct proc_ident member = { 42, 4242 };

/* notice -> kill of a member -> it dies -> the group is fine: over */
static void test_answered(void)
{
	struct oomhand o;

	oomhand_init(&o, BOUND);
	CU_ASSERT_FALSE(oomhand_active(&o));
	CU_ASSERT_EQUAL(oomhand_poll(&o, 0, 1, false), OOMHAND_NOTHING); /* idle: nothing read */
	oomhand_notified(&o, 1000 * MS);
	CU_ASSERT_EQUAL(o.state, OOMHAND_DECIDING);
	CU_ASSERT_TRUE(oomhand_active(&o));
	CU_ASSERT_EQUAL(oomhand_decided(&o, 1001 * MS, true, &member, true), OOMHAND_NOTHING);
	CU_ASSERT_EQUAL(o.state, OOMHAND_WAITING);
	CU_ASSERT_EQUAL(o.victim.pid, 42);
	CU_ASSERT_EQUAL(o.kills, 1);
	/* the victim still dying, the group still at OOM: wait */
	CU_ASSERT_EQUAL(oomhand_poll(&o, 1500 * MS, 1, true), OOMHAND_NOTHING);
	/* dead, and the group recovered */
	CU_ASSERT_EQUAL(oomhand_poll(&o, 1600 * MS, 0, false), OOMHAND_OVER);
	CU_ASSERT_EQUAL(o.state, OOMHAND_IDLE);
	CU_ASSERT_FALSE(oomhand_active(&o));
}

/* the review's case 1: the decision killed nobody in the group (the victim
 * was outside it, or nobody): given back at once, never left hung */
static void test_nothing_killed(void)
{
	struct oomhand o;

	oomhand_init(&o, BOUND);
	oomhand_notified(&o, 0);
	CU_ASSERT_EQUAL(oomhand_decided(&o, 1 * MS, false, &member, false), OOMHAND_RELEASE);
	CU_ASSERT_EQUAL(o.state, OOMHAND_RELEASED);
	CU_ASSERT_FALSE(oomhand_active(&o));
	/* released for good: a later notice changes nothing */
	oomhand_notified(&o, 10 * MS);
	CU_ASSERT_EQUAL(o.state, OOMHAND_RELEASED);
}

/* the review's case 2: another tier's kill in flight when the OOM comes: the
 * decision waits for it to end, then decides; it never counts as an answer */
static void test_busy(void)
{
	struct oomhand o;

	oomhand_init(&o, BOUND);
	oomhand_notified(&o, 0);
	CU_ASSERT_EQUAL(oomhand_decided(&o, 1 * MS, false, &member, true), OOMHAND_NOTHING);
	CU_ASSERT_EQUAL(o.state, OOMHAND_DECIDING);
	CU_ASSERT_EQUAL(oomhand_poll(&o, 500 * MS, 1, true), OOMHAND_NOTHING);
	/* that kill ended (its victim outside the group): still at OOM, decide */
	CU_ASSERT_EQUAL(oomhand_poll(&o, 1000 * MS, 1, false), OOMHAND_DECIDE);
	CU_ASSERT_EQUAL(oomhand_decided(&o, 1001 * MS, true, &member, true), OOMHAND_NOTHING);
	CU_ASSERT_EQUAL(o.state, OOMHAND_WAITING);
	/* busy past the bound: released, even from a decision */
	oomhand_init(&o, BOUND);
	oomhand_notified(&o, 0);
	CU_ASSERT_EQUAL(oomhand_decided(&o, BOUND, false, &member, true), OOMHAND_RELEASE);
}

/* after our kill the group is still at OOM: a grace for the waiting tasks
 * to take the freed memory, then a new decision; progress restarts the bound */
static void test_recheck(void)
{
	struct oomhand o;

	oomhand_init(&o, BOUND);
	oomhand_notified(&o, 0);
	(void)oomhand_decided(&o, 0, true, &member, true);
	CU_ASSERT_EQUAL(oomhand_poll(&o, 2500 * MS, 1, false), OOMHAND_NOTHING); /* ended: the grace starts */
	CU_ASSERT_EQUAL(o.since_us, 2500 * MS);
	CU_ASSERT_EQUAL(oomhand_poll(&o, 2500 * MS + OOMHAND_RECHECK_US - 1, 1, false), OOMHAND_NOTHING);
	CU_ASSERT_EQUAL(oomhand_poll(&o, 2500 * MS + OOMHAND_RECHECK_US, 1, false), OOMHAND_DECIDE);
	CU_ASSERT_EQUAL(o.state, OOMHAND_DECIDING);
	/* a notice while our kill is in flight does not start a second decision */
	(void)oomhand_decided(&o, 2800 * MS, true, &member, true);
	oomhand_notified(&o, 2900 * MS);
	CU_ASSERT_EQUAL(o.state, OOMHAND_WAITING);
	CU_ASSERT_EQUAL(o.kills, 2);
}

/* a kill of ours that never ends (a victim stuck in D) or a group that stays
 * at OOM whatever is killed: the bound gives it back */
static void test_bound(void)
{
	struct oomhand o;

	oomhand_init(&o, BOUND);
	oomhand_notified(&o, 0);
	(void)oomhand_decided(&o, 0, true, &member, true);
	CU_ASSERT_EQUAL(oomhand_poll(&o, BOUND - 1, 1, true), OOMHAND_NOTHING);
	CU_ASSERT_EQUAL(oomhand_poll(&o, BOUND, 1, true), OOMHAND_RELEASE);
	CU_ASSERT_EQUAL(o.state, OOMHAND_RELEASED);
	/* the group gone (-ENOENT) ends the hand-over */
	oomhand_init(&o, BOUND);
	oomhand_notified(&o, 0);
	(void)oomhand_decided(&o, 0, false, &member, true);
	CU_ASSERT_EQUAL(oomhand_poll(&o, 1 * MS, -2, false), OOMHAND_OVER);
	CU_ASSERT_STRING_EQUAL(oomhand_state_name(OOMHAND_WAITING), "waiting");
}

int main(void)
{
	static CU_TestInfo tests[] = {
		{ "an OOM answered by a member's kill", test_answered },
		{ "nothing killed in the group: released at once", test_nothing_killed },
		{ "another kill in flight: wait for it, then decide", test_busy },
		{ "still at OOM after our kill: a grace, then a new decision", test_recheck },
		{ "the bound gives the group back whatever happened", test_bound },
		CU_TEST_INFO_NULL,
	};
	static CU_SuiteInfo suites[] = {
		{ "oomhand", NULL, NULL, NULL, NULL, tests },
		CU_SUITE_INFO_NULL,
	};

	return cunit_tap_main(suites);
}
