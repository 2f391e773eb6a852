#!/bin/bash
# SPDX-License-Identifier: MIT
# test-zombie-leader.sh - a process whose thread-group leader called
# pthread_exit() while another thread lives on (review C3): /proc/PID/stat
# says Z and its status has no VmRSS, yet it is alive and holds memory. The
# daemon must see it and kill it.
#
# In a fresh 128 MiB test group: zleader (KT_ZL_MIB = 32 MiB in its second
# thread, oom_score_adj 900), a memhog keeper at adj 300 (8 MiB) and
# filepressure at adj 0; one tier "some 100ms 2s", min_oom_score_adj 500,
# so the zombie leader is the only process in the band.
#
# Asserted: before the pressure, /proc/PID/stat of zleader says Z and its
# status has more than one thread (the helper is what C3 describes); the
# first kill line names zleader's pid, with comm=zleader, oom_score_adj=900
# and rss_kb within [0.95 x, x + 8 MiB] of KT_ZL_MIB MiB (its RSS came from
# the live thread); the whole process is gone afterwards; the keeper and
# the pressure maker live. The old daemon took the process for a dying
# zombie: it killed nothing here (no candidate in the band).
# Exit: 0 pass, 1 fail, 77 skip (CI=true turns non-kernel skips into fails).

set -u

srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$srcdir/tests/kernel/lib.sh" || { echo "cannot source $srcdir/tests/kernel/lib.sh" >&2; exit 99; }
# shellcheck source-path=SCRIPTDIR source=policy-body.sh
. "$srcdir/tests/kernel/policy-body.sh" || { echo "cannot source $srcdir/tests/kernel/policy-body.sh" >&2; exit 99; }

TIMEOUT=${KT_ZL_TIMEOUT:-40}
MIB=${KT_ZL_MIB:-32}

E2E_HELPERS=(zleader)
pol_init
kt_cgroup_create psi-lmkd-test 128

# threads PID: the Threads: count of PID's status (0 once it is gone).
threads() {
	awk '$1 == "Threads:" { print $2; found = 1 } END { if (!found) print 0 }' "/proc/$1/status" 2>/dev/null || echo 0
}
# state PID: the state letter of /proc/PID/stat ("" once it is gone).
state() {
	local s
	s=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
	s=${s##*) }
	printf '%s\n' "${s%% *}"
}
# gone PID: no thread of PID is left (kt_pid_dead cannot tell: to it, a
# zombie leader is dead already).
gone() {
	[ ! -d "/proc/$1" ] || [ "$(threads "$1")" -le 1 ]
}

kt_spawn_in_cgroup -o "$tmp/zleader.out" "$KT_BINDIR/zleader" "$MIB" 900 >/dev/null
zl=$KT_LAST_PID
kill -USR1 "$zl" || kt_fail "cannot signal zleader $zl"
# kt_wait_ready would take the zombie leader for dead: wait by hand
kt_wait_for 20 grep -qx "ready $zl" "$tmp/zleader.out" ||
	{ sed 's/^/    | /' "$tmp/zleader.out" >&2; kt_fail "zleader $zl did not get ready within 20 s"; }
[ "$(state "$zl")" = Z ] || kt_fail "zleader $zl: leader state is '$(state "$zl")', not Z"
[ "$(threads "$zl")" -ge 2 ] || kt_fail "zleader $zl: $(threads "$zl") thread(s), expected a live second one"
! grep -q '^VmRSS:' "/proc/$zl/status" || kt_fail "zleader $zl: the leader's status has a VmRSS line"
[ "$(cat "/proc/$zl/oom_score_adj")" = 900 ] || kt_fail "zleader $zl: oom_score_adj is not 900"
task_rss=$(awk '$1 == "VmRSS:" { print $2; exit }' /proc/"$zl"/task/*/status 2>/dev/null)
kt_log "zleader $zl: state Z, $(threads "$zl") threads, no VmRSS of its own; a live thread has VmRSS $task_rss kB"
pol_hog keeper-300 8 300
keeper=$KT_LAST_PID

pol_conf_one_tier 500 1s
pol_daemon_start -v
pol_pressure 0

pol_first_kill_is "$zl" "$TIMEOUT"
line=$kline
[ "$(e2e_kv "$line" comm)" = zleader ] || e2e_fail "kill #1 comm is not zleader: $line"
[ "$(e2e_kv "$line" oom_score_adj)" = 900 ] || e2e_fail "kill #1 oom_score_adj is not 900: $line"
rss=$(e2e_kv "$line" rss_kb)
lo=$((MIB * 1024 * 95 / 100))
hi=$((MIB * 1024 + 8192))
e2e_is_uint "$rss" && [ "$rss" -ge "$lo" ] && [ "$rss" -le "$hi" ] ||
	e2e_fail "kill #1 rss_kb=$rss, expected $lo..$hi (about $MIB MiB, from the live thread)"
kt_wait_for 5 gone "$zl" || e2e_fail "the zombie leader $zl still has $(threads "$zl") threads 5 s after its kill"
pol_daemon_stop

echo "---- daemon log ----"
pol_strip <"$log" | sed 's/^/  /'
pol_report_figures
printf 'zombie leader %s (state Z, %s MiB in a live thread, VmRSS %s kB there) killed %s s into pressure with rss_kb=%s\n' \
	"$zl" "$MIB" "$task_rss" "$(pol_since)" "$rss"
echo "PASS"
exit 0
