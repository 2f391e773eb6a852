#!/bin/bash
# SPDX-License-Identifier: MIT
# test-oom-handover.sh - oom_killer = daemon never leaves the group hung
# (C-1 of review-31676fe).
#
# cgroup v1 only (memory.oom_control; cgroup v2 has no oom_kill_disable, so
# there this test skips, saying so). In a fresh 128 MiB test group:
#   - a decoy: memhog 48 MiB at adj 1000, in the cgroup2 scope but NOT in the
#     v1 memory group, which exits 1 s after SIGTERM (a graceful shutdown);
#   - then the hog: memhog 200 MiB at adj 0 in both, which runs the group
#     out of memory.
# One tier: low_available = 5%, kill_signal = SIGTERM, oom_killer = daemon,
# culprit_growth = off (the hog grows: as a culprit it would die before the
# OOM, and the hand-over under test would never run).
#
# Asserted: the hog is dead within HANG_S (15) s, by a psi-lmkd kill with
# reason=oom; no kill for the OOM names the decoy (killing outside the
# group frees nothing in it); the group is not under_oom at the end and the
# kernel OOM-killed nothing in it. Before the fix the decoy was chosen for
# the OOM, its kill in flight counted as "handled", and the hog waited at
# OOM (state D, under_oom 1) for as long as one watched.
# Exit: 0 pass, 1 fail, 77 skip (CI=true turns non-kernel skips into fails).

set -u

srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$srcdir/tests/kernel/lib.sh" || { echo "cannot source $srcdir/tests/kernel/lib.sh" >&2; exit 99; }
# shellcheck source-path=SCRIPTDIR source=e2e-body.sh
. "$srcdir/tests/kernel/e2e-body.sh" || { echo "cannot source $srcdir/tests/kernel/e2e-body.sh" >&2; exit 99; }

HANG_S=${KT_OOM_HANG_S:-15}

kt_require_root_and_psi
kt_install_traps
e2e_find_binaries memhog
tmp=$(kt_tmpdir)
kt_cgroup_create psi-lmkd-test 128
[ -n "${KT_V1_DIR:-}" ] ||
	kt_skip "oom_killer = daemon needs cgroup v1's memory.oom_control; this host's memory controller is on cgroup2"

# the decoy: in the scope (cgroup2), not in the v1 memory group
(
	[ -n "${KT_LOCK_FD:-}" ] && exec {KT_LOCK_FD}>&-
	echo "$BASHPID" >"$KT_CG2_DIR/cgroup.procs" || exit 125
	exec "$KT_BINDIR/memhog" 48 1000 term=1000
) </dev/null >"$tmp/decoy.out" 2>&1 &
decoy=$!
disown "$decoy" 2>/dev/null
KT_SPAWNED+=("$decoy")
kt_wait_ready "$tmp/decoy.out" "$decoy" 20
grep -q "^[0-9]*:memory:.*/${KT_V1_DIR##*/}\$" "/proc/$decoy/cgroup" &&
	kt_fail "the decoy is in the test's v1 memory group: $(grep memory "/proc/$decoy/cgroup")"

kt_write_conf -m "$tmp/c.conf" <<CONF
oom_killer = daemon
control_socket = off
kill_timeout = 2s
; the decoy must be the last resort's choice, by badness (adj 1000), for the
; OOM to come while its kill is in flight: the culprit rule would kill the
; growing hog first and the hand-over would never be tried
culprit_growth = off

[tier last-resort]
low_available = 5%
min_oom_score_adj = 0
kill_signal = SIGTERM
term_timeout = 2s
CONF
log=$tmp/daemon.log
kt_daemon_up "$tmp/c.conf" "$log" -vv
daemon=$KT_DAEMON_PID
kt_wait_for 5 kt_file_has "$log" "the kernel's OOM killer is off" ||
	e2e_fail "the daemon did not take the group's OOM decisions"
o0=$(kt_oom_kills)

kt_spawn_in_cgroup -o "$tmp/hog.out" "$KT_BINDIR/memhog" 200 0 >/dev/null
hog=$KT_LAST_PID
t0=$(date +%s%N)
kt_log "decoy $decoy (adj 1000, outside the v1 group), hog $hog (adj 0, 200 MiB in a 128 MiB group)"
if ! kt_wait_for "$HANG_S" kt_pid_dead "$hog"; then
	state=$(awk '$1 == "State:" { print $2 }' "/proc/$hog/status" 2>/dev/null)
	e2e_fail "the hog $hog is alive ${HANG_S}s after it started (state ${state:-?}; $(tr '\n' ' ' <"$KT_V1_DIR/memory.oom_control")): the group is left hung"
fi
dead_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
# the log's timestamper may lag the kill on a loaded machine
kt_wait_for 5 e2e_has_kill "$hog"
line=$(e2e_kill_lines | grep -E "(^|[[:space:]])pid=$hog([[:space:]]|\$)" | head -n 1)
[ -n "$line" ] || e2e_fail "the hog died, but not by a psi-lmkd kill (kill lines: $(e2e_kill_lines | tr '\n' '|'))"
kt_log "hog's kill: $line"
[ "$(e2e_kv "$line" reason)" = oom ] || e2e_fail "the hog's kill is not reason=oom: $line"
e2e_kill_lines | grep -E "(^|[[:space:]])pid=$decoy([[:space:]]).*reason=oom" &&
	e2e_fail "the decoy outside the group was killed for the group's OOM"
under=$(awk '$1 == "under_oom" { print $2 }' "$KT_V1_DIR/memory.oom_control")
[ "$under" = 0 ] || e2e_fail "the group is still under_oom ($under)"
[ "$(kt_oom_kills)" = "$o0" ] || e2e_fail "the kernel OOM-killed in the group"
e2e_daemon_check "after the OOM"
decoy_fate=$(kt_pid_alive "$decoy" && echo alive || echo "killed before the OOM (low_available, not reason=oom)")
kill -TERM "$daemon" 2>/dev/null
echo "---- the daemon's account ----"
grep -E 'kill pid=|out of memory|exited|waiting for pid|still dying' "$log" | sed 's/^/  /'
printf 'oom hand-over: the hog died %s ms after it started, by a psi-lmkd kill (reason=oom); decoy outside the group: %s; under_oom 0, no kernel OOM kill\n' \
	"$dead_ms" "$decoy_fate"
echo "PASS"
exit 0
