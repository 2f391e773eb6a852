#!/bin/bash
# SPDX-License-Identifier: MIT
# test-lmkd-watchdog.sh - lmkd's watchdog that kills, on the real kernel
# (issue 29, item 4): when the daemon's event loop is stuck, its watchdog
# thread SIGKILLs the most expendable registered process, and nothing else;
# while the loop is healthy it kills nothing.
#
# In a fresh 128 MiB test group: four 4 MiB memhogs. The "framework" (a
# client of the test's own, tests/lmkd-client) registers three through the
# lmkd socket: victim at adj 1000, keeper at 900, low at 100; the fourth,
# stranger, sets adj 1000 itself and is never registered. The one tier
# (some 100ms 2s, adj >= 500) never fires: there is no pressure, so every
# kill is the watchdog's. After 3 s of a healthy loop (all four alive),
# tests/kernel/stall-thread stops the daemon's main thread (the event loop)
# by ptrace for 3 s while it handles a packet, its other threads running on.
#
# Asserted: nothing dies while the loop is healthy; during the stall the
# victim (registered, the highest adj) is SIGKILLed and the daemon logs
# "lmkd watchdog: ... killed pid <victim>", once; keeper, low (below the
# band) and stranger (not registered) live; afterwards the loop runs again
# (GETKILLCNT answers; the watchdog's kill is not counted, as lmkd does not
# count its watchdog's) and the daemon stops cleanly.
# Exit: 0 pass, 1 fail, 77 skip (CI=true turns non-kernel skips into fails).

set -u

srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$srcdir/tests/kernel/lib.sh" || { echo "cannot source $srcdir/tests/kernel/lib.sh" >&2; exit 99; }
# shellcheck source-path=SCRIPTDIR source=policy-body.sh
. "$srcdir/tests/kernel/policy-body.sh" || { echo "cannot source $srcdir/tests/kernel/policy-body.sh" >&2; exit 99; }

HEALTHY=${KT_LW_HEALTHY:-3}
STALL_MS=${KT_LW_STALL_MS:-3000}
UID_APP=10099

pol_init
client=${LMKD_CLIENT:-$(dirname "$KT_BINDIR")/lmkd-client}
stall=$KT_BINDIR/stall-thread
[ -x "$client" ] || kt_skip_or_fail "tests/lmkd-client not built (set LMKD_CLIENT; got '$client')"
[ -x "$stall" ] || kt_skip_or_fail "tests/kernel/stall-thread not built"

kt_cgroup_create psi-lmkd-test 128
sock=$tmp/lmkd
pol_conf <<CONF
victim_order = adj
lmkd_socket = $sock

[tier test]
trigger = some 100ms 2s
min_oom_score_adj = 500
CONF

pol_daemon_start -v
kt_wait_for 5 kt_file_has "$log" "serving the lmkd socket $sock" || e2e_fail "the daemon does not serve $sock"
kt_file_has "$log" "lmkd socket: watchdog on" || e2e_fail "no watchdog started"
grep -qx lmkd_watchdog /proc/"$daemon"/task/*/comm || e2e_fail "no lmkd_watchdog thread in the daemon"

pol_hog victim 4 0
victim=$KT_LAST_PID
pol_hog keeper 4 0
keeper=$KT_LAST_PID
pol_hog low 4 0
low=$KT_LAST_PID
pol_hog stranger 4 1000
stranger=$KT_LAST_PID

# registered, then (after the watchdog's refresh interval) a barrier that
# wakes the loop, which hands the watchdog its candidates
"$client" talk "$sock" >"$tmp/client.out" 2>&1 <<TALK || e2e_fail "registration: $(cat "$tmp/client.out")"
connect 0
send 0 3
send 0 1 $victim $UID_APP 1000 0
send 0 1 $keeper $UID_APP 900 0
send 0 1 $low $UID_APP 100 0
send 0 4 -1000 1000
expect 0 4 0
sleep 1500
send 0 4 -1000 1000
expect 0 4 0
TALK
kt_log "registered: victim $victim (adj 1000), keeper $keeper (900), low $low (100); stranger $stranger (adj 1000, not registered)"

e2e_watch "$HEALTHY" "with a healthy loop" e2e_alive "$victim" victim "$keeper" keeper "$low" low "$stranger" stranger
kt_file_has "$log" "lmkd watchdog" && e2e_fail "the watchdog acted on a healthy loop: $(grep "lmkd watchdog" "$log")"
kt_log "healthy loop: all four alive after ${HEALTHY} s, no watchdog line"

# stopped while it handles a packet (a loop stopped in epoll_wait is idle,
# not stuck: the watchdog rightly leaves that alone)
"$stall" "$daemon" "$STALL_MS" >"$tmp/stall.out" 2>&1 &
staller=$!
kt_track "$staller"
kt_wait_for 5 kt_file_has "$tmp/stall.out" tracing || e2e_fail "cannot trace the loop: $(cat "$tmp/stall.out")"
"$client" talk "$sock" >"$tmp/client1.out" 2>&1 <<TALK || e2e_fail "cannot wake the loop: $(cat "$tmp/client1.out")"
connect 0
send 0 5 0
TALK
kt_wait_for 5 kt_file_has "$tmp/stall.out" stalled || e2e_fail "cannot stall the loop: $(cat "$tmp/stall.out")"
t0=$(date +%s%N)
kt_log "event loop (thread $daemon) stopped for $STALL_MS ms"
kt_wait_for 10 kt_pid_dead "$victim" || e2e_fail "the registered adj-1000 process lives through a stuck loop"
t1=$(date +%s%N)
kt_log "victim dead $(( (t1 - t0) / 1000000 )) ms into the stall"
wait "$staller" || e2e_fail "stall-thread failed: $(cat "$tmp/stall.out")"
line=$(grep "lmkd watchdog" "$log")
[ "$(printf '%s\n' "$line" | grep -c "killed pid $victim ")" = 1 ] || e2e_fail "not one watchdog kill of pid $victim: $line"
[ "$(printf '%s\n' "$line" | grep -c killed)" = 1 ] || e2e_fail "more than one watchdog kill: $line"
kt_log "daemon: ${line#*psi-lmkd: }"
e2e_alive "$keeper" keeper "$low" low "$stranger" stranger

"$client" talk "$sock" >"$tmp/client2.out" 2>&1 <<TALK || e2e_fail "the loop does not answer after the stall: $(cat "$tmp/client2.out")"
connect 0
send 0 4 -1000 1000
expect 0 4 0
TALK
kt_log "after the stall the loop answers GETKILLCNT (0: the watchdog's kill is not counted, as lmkd's is not)"
pol_daemon_stop
echo "PASS"
exit 0
