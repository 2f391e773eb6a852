#!/bin/bash
# SPDX-License-Identifier: MIT
# test-culprit.sh - the culprit, not the biggest (issue 27 item 4): when a
# runaway grows beside a bigger idle process that its owner marked as more
# expendable (a tab renderer at adj 300), psi-lmkd kills the runaway, which
# caused the shortage, and the idle process lives.
#
# In a fresh 256 MiB test group (no swap): an idle memhog of IDLE_MIB (110)
# MiB at adj 300, then anongrow growing RATE (16) MiB/s at adj 0. psi-lmkd,
# scoped to the group, victim_order badness (the default), one tier:
#
#   [tier last-resort]  low_available = 5%   min_oom_score_adj = 0
#
# By the kernel's badness the idle memhog weighs 110 MiB + 30 % of 256 MiB
# = 187 MiB; the runaway, when the line is crossed, about 125 MiB.
# Control (first; proves the setup discriminates): culprit_growth = off:
# the first kill is the idle memhog.
# Main: the default culprit_growth (1 % of the domain, at least 4 MiB): the
# first kill is the runaway, its kill line carries grew_kb= of at least 4
# MiB, the idle memhog lives, exactly one kill, the group's kernel OOM kill
# counter stays 0.
# Exit: 0 pass, 1 fail, 77 skip (CI=true turns non-kernel skips into fails).

set -u

srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$srcdir/tests/kernel/lib.sh" || { echo "cannot source $srcdir/tests/kernel/lib.sh" >&2; exit 99; }
# shellcheck source-path=SCRIPTDIR source=e2e-body.sh
. "$srcdir/tests/kernel/e2e-body.sh" || { echo "cannot source $srcdir/tests/kernel/e2e-body.sh" >&2; exit 99; }

LIMIT_MIB=256
IDLE_MIB=${KT_CU_IDLE_MIB:-110}
RATE=16

kt_require_root_and_psi
kt_install_traps
e2e_find_binaries anongrow
tmp=$(kt_tmpdir)
daemon=

# run NAME CULPRIT_GROWTH_LINE: a fresh group with the idle memhog, the
# daemon, then the runaway; waits for the first kill; sets idle, line.
run() {
	e2e_idle_group psi-lmkd-culprit "$LIMIT_MIB" "$IDLE_MIB" 300 "$1"
	conf=$tmp/$1.conf
	log=$tmp/$1.log
	kt_write_conf -m "$conf" <<EOF
kill_timeout = 1s
victim_order = badness
$2

[tier last-resort]
low_available = 5%
min_oom_score_adj = 0
EOF
	kt_daemon_up "$conf" "$log" -vv
	daemon=$KT_DAEMON_PID
	e2e_daemon_check "during startup ($1)"
	e2e_grower "$tmp/grow.$1.out" "$RATE" 0
	kt_log "$1: idle memhog $idle ($IDLE_MIB MiB, adj 300), runaway $grower (${RATE} MiB/s, adj 0)"
	e2e_wait_first_kill "$grower" "the runaway" 30
	line=$(e2e_kill_lines | head -n 1)
	kt_log "$1: $line"
}

# ------------------------------------------------------------ control run --

run control "culprit_growth = off"
[ "$(e2e_kv "$line" pid)" = "$idle" ] ||
	e2e_fail "control: by badness alone the idle memhog (pid $idle) should go first; the setup does not discriminate: $line"
ctl_line=$line
e2e_stop_daemon
for p in $(kt_cgroup_pids); do kill -KILL "$p" 2>/dev/null; done

# --------------------------------------------------------------- main run --

run main ""
[ "$(e2e_kv "$line" pid)" = "$grower" ] || e2e_fail "the first kill is not the runaway (pid $grower): $line"
grew=$(e2e_kv "$line" grew_kb)
if ! { e2e_is_uint "$grew" && [ "$grew" -ge 4096 ]; }; then
	e2e_fail "the kill line has no grew_kb of at least 4 MiB: $line"
fi
kt_wait_for 5 kt_pid_dead "$grower" || e2e_fail "the runaway $grower is alive 5 s after its kill line"
e2e_watch 2 "after the kill" e2e_alive "$idle" "the idle memhog"
[ "$(e2e_kill_count)" -eq 1 ] || e2e_fail "expected exactly one kill, got: $(e2e_kill_lines | tr '\n' '|')"
e2e_oom_check "after psi-lmkd's kill"
sampled=$(grep -c 'sampled the sizes of' "$log")
e2e_stop_daemon

echo "---- daemon log (main, kill and samples) ----"
grep -E 'sampled the sizes|kill pid=|firing' "$log"
echo "---------------------------"
echo "control (culprit_growth = off): $ctl_line"
echo "main: $line"
echo "main: $sampled size samples before and after the kill; the idle memhog lives; kernel OOM kills 0"
echo "PASS"
exit 0
