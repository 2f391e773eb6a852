#!/bin/bash
# SPDX-License-Identifier: MIT
# test-groups.sh - a tier with `cgroup = PATTERN` runs once per matching
# group, kills only inside the group whose pressure fired, arms groups made
# after start, and disarms and re-arms a group that is removed and made
# again (issue 14).
#
# In a fresh 128 MiB test group P (the memory limit is P's, so the children
# share it): children a and b. In b (quiet) a memhog at adj 900; in a a
# memhog at adj 300. The daemon's scope is P, with one tier "grp" on
# "some 100ms 2s" for adj >= 200 with cgroup = P/*; there is no tier on the
# daemon's own pressure file.
#
# Asserted:
#  1. --check-config lists P/a and P/b as matching now.
#  2. Both groups are armed at start. filepressure (adj 0) in a: the first
#     kill takes a's memhog (adj 300) with group=P/a, although b holds a
#     higher adj (900): b's memhog and the pressure maker live.
#  3. A group c made after start is armed (its arming latency is printed);
#     pressure in c kills c's memhog with group=P/c; b's memhog still lives.
#  4. c removed: "is gone" and no error storm (at most a few lines about
#     it); c made again: armed again, and SIGUSR1's status names it.
#  5. After SIGHUP, the status still counts a's kill (counters carry over).
# Exit: 0 pass, 1 fail, 77 skip (CI=true turns non-kernel skips into fails).

set -u

srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$srcdir/tests/kernel/lib.sh" || { echo "cannot source $srcdir/tests/kernel/lib.sh" >&2; exit 99; }
# shellcheck source-path=SCRIPTDIR source=policy-body.sh
. "$srcdir/tests/kernel/policy-body.sh" || { echo "cannot source $srcdir/tests/kernel/policy-body.sh" >&2; exit 99; }

TIMEOUT=${KT_GROUPS_TIMEOUT:-60}

pol_init
kt_cgroup_create psi-lmkd-test 128
P_DIR=$KT_CG2_DIR
P_REL=$KT_CG2_REL

# grp_make NAME: a child group of P (removed by kt_cleanup, children first)
grp_make() {
	mkdir "$P_DIR/$1" || kt_fail "cannot create $P_DIR/$1"
	KT_CG_DIRS+=("$P_DIR/$1")
}

# grp_use NAME: kt_spawn_in_cgroup and pol_* start processes in child NAME
# (the v1 memory group of a hybrid host stays P's)
grp_use() {
	KT_CG2_DIR=$P_DIR/$1
	KT_CG2_REL=$P_REL/$1
	KT_PRESSURE=$KT_CG2_DIR/memory.pressure
}

# grp_kill_in N GROUP VICTIM: kill line N must take VICTIM, watched as GROUP
grp_kill_in() {
	local line
	pol_wait_kills "$1" "$TIMEOUT"
	line=$(pol_kill_line "$1")
	kt_log "kill #$1 after $(pol_since) s of pressure: $line"
	[ "$(e2e_kv "$line" pid)" = "$3" ] || e2e_fail "kill #$1 is not pid $3: $line"
	[ "$(e2e_kv "$line" group)" = "$2" ] || e2e_fail "kill #$1 does not name group=$2: $line"
}

# grp_now_ms: milliseconds on the daemon log's time base (kt_log_time)
grp_now_ms() {
	echo $(( ($(kt__us "$EPOCHREALTIME") - $(kt__us "$KT_T0")) / 1000 ))
}

# grp_armed_ms GROUP SINCE_MS: wait for "cgroup GROUP watched" after line
# FROM of the log; echo the ms from SINCE_MS to its stamp
grp_armed_ms() {
	local group=$1 since=$2 from=$3 line t
	kt_wait_for 10 sh -c "tail -n +$((from + 1)) '$log' | grep -qF 'cgroup $group watched'" ||
		e2e_fail "$group was not armed within 10 s"
	line=$(tail -n +"$((from + 1))" "$log" | grep -F -m1 "cgroup $group watched")
	t=$(kt_log_time "$line")
	echo $(( $(kt__us "$t") / 1000 - since ))
}

# grp_status ERE: SIGUSR1, then a "status tier=grp" line matching ERE after
# line $from of the log within 5 s (one line per group and tier)
grp_status() {
	kill -USR1 "$daemon" 2>/dev/null || e2e_fail "cannot send SIGUSR1 to the daemon"
	kt_wait_for 5 sh -c "tail -n +$((from + 1)) '$log' | grep -qE 'status tier=grp $1'" ||
		e2e_fail "no status line 'status tier=grp $1' within 5 s of SIGUSR1"
}

grp_make a
grp_make b
grp_use b
pol_hog quiet-900 8 900
quiet=$KT_LAST_PID
grp_use a
pol_hog victim-300 8 300
victim=$KT_LAST_PID

pol_conf -p /proc/pressure/memory -s "$P_REL" <<EOF
kill_timeout = 1s

[tier grp]
trigger = some 100ms 2s
min_oom_score_adj = 200
cgroup = $P_REL/*
EOF

# 1. --check-config lists the groups
out=$("$PSI_LMKD" --check-config -c "$conf" 2>&1) || e2e_fail "--check-config failed: $out"
printf '%s\n' "$out" | grep -qx "  $P_REL/a" || e2e_fail "--check-config does not list $P_REL/a: $out"
printf '%s\n' "$out" | grep -qx "  $P_REL/b" || e2e_fail "--check-config does not list $P_REL/b: $out"
printf '%s\n' "$out" | grep -qx "  2 groups" || e2e_fail "--check-config does not count 2 groups: $out"

# 2. pressure in a kills in a only
pol_daemon_start -v
kt_wait_for 5 kt_file_has "$log" '2 groups watched' || e2e_fail "the daemon did not arm 2 groups"
pol_pressure 0
grp_kill_in 1 "$P_REL/a" "$victim"
kt_wait_for 5 kt_pid_dead "$victim" || e2e_fail "a's memhog $victim is alive after its kill"
kt_pid_alive "$quiet" || e2e_fail "b's memhog $quiet (adj 900, quiet group) died"
kt_pid_alive "$reader" || e2e_fail "filepressure (adj 0) died"
kill -KILL "$reader" 2>/dev/null
kt_wait_for 5 kt_pid_dead "$reader" || e2e_fail "filepressure $reader did not exit"

# 3. a group made after start is watched and killed in
from=$(wc -l <"$log")
t_mk=$(grp_now_ms)
grp_make c
arm_ms=$(grp_armed_ms "$P_REL/c" "$t_mk" "$from")
kt_log "group c armed ${arm_ms} ms after its mkdir"
grp_use c
pol_hog late-300 8 300
late=$KT_LAST_PID
pol_pressure 0
grp_kill_in 2 "$P_REL/c" "$late"
kt_pid_alive "$quiet" || e2e_fail "b's memhog $quiet (adj 900, quiet group) died"
kill -KILL "$reader" 2>/dev/null
kt_wait_for 5 kt_pid_dead "$reader" || e2e_fail "filepressure $reader did not exit"
kt_wait_for 5 sh -c "[ -z \"\$(cat '$P_DIR/c/cgroup.procs')\" ]" || e2e_fail "group c still has processes"

# 4. removed, then made again
from=$(wc -l <"$log")
rmdir "$P_DIR/c" || e2e_fail "cannot remove $P_DIR/c"
kt_wait_for 5 sh -c "tail -n +$((from + 1)) '$log' | grep -qF 'cgroup $P_REL/c is gone'" ||
	e2e_fail "no 'is gone' line for $P_REL/c"
t_mk=$(grp_now_ms)
mkdir "$P_DIR/c" || e2e_fail "cannot make $P_DIR/c again"
rearm_ms=$(grp_armed_ms "$P_REL/c" "$t_mk" "$from")
lines=$(tail -n +"$((from + 1))" "$log" | grep -cF "$P_REL/c")
[ "$lines" -le 6 ] || e2e_fail "$lines log lines about $P_REL/c for one removal and return (an error storm?)"
from=$(wc -l <"$log")
grp_status "group=$P_REL/c armed=yes"
grp_status "group=$P_REL/a armed=yes"
# 5. a reload keeps the counters of a group and tier it keeps
from=$(wc -l <"$log")
kill -HUP "$daemon"
kt_wait_for 5 sh -c "tail -n +$((from + 1)) '$log' | grep -q 'configuration reloaded'" || e2e_fail "no reload"
from=$(wc -l <"$log")
grp_status "group=$P_REL/a armed=yes source=[a-z]+ events=[1-9][0-9]* deferred=[0-9]+ kills=1 "
pol_daemon_stop

echo "---- daemon log ----"
pol_strip <"$log" | sed 's/^/  /' | cut -c1-300
printf 'groups: a kill in a only (b, adj 900, lived); c armed %s ms after mkdir, killed in; removed and re-armed in %s ms\n' \
	"$arm_ms" "$rearm_ms"
echo "PASS"
exit 0
