#!/bin/bash
# SPDX-License-Identifier: MIT
# test-stuck-victim.sh - a victim that does not die after SIGKILL (frozen by
# the cgroup v1 freezer, which shows as state D and keeps a fatal signal
# pending until thawed): the daemon must log that it outlived kill_timeout,
# move on to the next victim, and never signal the stuck one again.
#
# A fresh 128 MiB test group: memhogs at adj 900 (then frozen) and 800 (8 MiB),
# a keeper at adj 300 and filepressure at adj 0; one tier "some 100ms 2s" for
# adj >= 500, kill_timeout 1s.
#  1. kill #1 is the adj 900 memhog; 1 s later "pid N (memhog) is still alive
#     ... moving on, it will not be chosen again".
#  2. kill #2 is the adj 800 memhog; the frozen one has exactly one kill line.
#  3. more pressure events come and find nothing more in the band: no third
#     kill line, the keeper and filepressure live.
#  4. a reload (SIGHUP) keeps the tier's counters (status: kills=2).
#  5. thawed, the frozen memhog dies of its pending SIGKILL.
# Needs the cgroup v1 freezer (skipped, even in CI, without it: the cgroup2
# freezer lets SIGKILL through, so there is no stuck process to make).
# Exit: 0 pass, 1 fail, 77 skip (CI=true turns non-kernel skips into fails).

set -u

srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$srcdir/tests/kernel/lib.sh" || { echo "cannot source $srcdir/tests/kernel/lib.sh" >&2; exit 99; }
# shellcheck source-path=SCRIPTDIR source=policy-body.sh
. "$srcdir/tests/kernel/policy-body.sh" || { echo "cannot source $srcdir/tests/kernel/policy-body.sh" >&2; exit 99; }

pol_init
fz_mount=$(awk '$3 == "cgroup" && $4 ~ /(^|,)freezer(,|$)/ { print $2; exit }' /proc/self/mounts)
[ -n "$fz_mount" ] || kt_skip "kernel has no cgroup v1 freezer mounted: no way to make a process survive SIGKILL"
kt_cgroup_create psi-lmkd-test-stuck 128

fz=
thaw() {
	[ -n "$fz" ] && [ -d "$fz" ] && echo THAWED 2>/dev/null >"$fz/freezer.state"
}
# thaw before kt_cleanup kills what is left, then remove the freezer group
fz_cleanup() {
	thaw
	kt_cleanup "$@"
	local rc=$?
	[ -n "$fz" ] && [ -d "$fz" ] && rmdir "$fz" 2>/dev/null
	return "$rc"
}
trap fz_cleanup EXIT
trap 'fz_cleanup INT' INT
trap 'fz_cleanup TERM' TERM
trap 'fz_cleanup HUP' HUP

pol_hog memhog-900 8 900
stuck=$KT_LAST_PID
pol_hog memhog-800 8 800
next=$KT_LAST_PID
pol_hog keeper-300 8 300
keeper=$KT_LAST_PID
fz=$fz_mount/psi-lmkd-test-stuck-$$-$RANDOM
mkdir "$fz" || kt_skip_or_fail "cannot create a freezer group $fz"
echo "$stuck" >"$fz/cgroup.procs" || kt_fail "cannot move $stuck into $fz"
echo FROZEN >"$fz/freezer.state" || kt_fail "cannot freeze $fz"
kt_wait_for 5 grep -qx FROZEN "$fz/freezer.state" || kt_fail "$fz did not freeze"
kt_log "memhog-900 $stuck frozen ($(awk '/^State:/ { print $2 }' "/proc/$stuck/status")), memhog-800 $next, keeper $keeper"

pol_conf_one_tier 500 1s
pol_daemon_start -v
pol_pressure 0

# 1. the frozen one first, then "still alive"
pol_wait_kills 1 60
[ "$(e2e_kv "$(pol_kill_line 1)" pid)" = "$stuck" ] || e2e_fail "kill #1 is not the adj 900 memhog: $(pol_kill_line 1)"
kt_wait_for 5 kt_file_has "$log" "pid $stuck \\(memhog\\) is still alive [0-9]+ ms after SIGKILL .*moving on" ||
	e2e_fail "no 'still alive ... moving on' line for the stuck pid $stuck"
kt_pid_alive "$stuck" || e2e_fail "the frozen memhog died while frozen: the test made no stuck process"
kt_log "$(grep -m1 'is still alive' "$log" | pol_strip)"

# 2. the next one
pol_wait_kills 2 60
[ "$(e2e_kv "$(pol_kill_line 2)" pid)" = "$next" ] || e2e_fail "kill #2 is not the adj 800 memhog: $(pol_kill_line 2)"
kt_wait_for 5 kt_pid_dead "$next" || e2e_fail "the adj 800 memhog $next is alive after its kill"

# 3. more events, nothing left in the band: no third kill, never the stuck one again
kt_wait_for 30 kt_file_has "$log" 'no process has oom_score_adj >= 500' ||
	e2e_fail "no 'no process has oom_score_adj >= 500' line after both memhogs were handled"
[ "$(e2e_kill_count)" -eq 2 ] || e2e_fail "$(e2e_kill_count) kill lines, expected 2: $(e2e_kill_lines)"
[ "$(grep -Ec "(^|[^-])kill pid=$stuck " "$log")" -eq 1 ] || e2e_fail "the stuck pid $stuck was signalled more than once"
kt_pid_alive "$keeper" || e2e_fail "the keeper (adj 300) died"
kt_pid_alive "$reader" || e2e_fail "filepressure (adj 0) died"

# a reload keeps the counters of a tier it keeps
n=$(wc -l <"$log")
kill -HUP "$daemon"
kt_wait_for 5 sh -c "tail -n +$((n + 1)) '$log' | grep -q 'configuration reloaded'" || e2e_fail "no reload after SIGHUP"
st=$(kt_daemon_status "$log" "$daemon" "$n" test)
grep -q ' kills=2 ' <<<"$st" || e2e_fail "after a reload the tier's counters restarted: $st"

# 4. thawed, it dies of the pending SIGKILL
thaw
kt_wait_for 5 kt_pid_dead "$stuck" || e2e_fail "the memhog $stuck survives after being thawed"
kt_log "thawed: $stuck died of its pending SIGKILL"
pol_daemon_stop
kt_log "PASS"
exit 0
