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
# stranger, sets adj 1000 itself and is never registered. One tier (some
# 100ms 2s, adj >= 500).
#
# 1. Without pressure: the tier never fires, so a kill can only be the
#    watchdog's. After 3 s of a healthy loop (all four alive),
#    tests/kernel/stall-thread stops the daemon's main thread (the event
#    loop) by ptrace for 3 s while it handles a packet, its other threads
#    running on.
# 2. Under pressure (lmkd's case: the loop stuck while memory is short):
#    the loop is stopped again, for 4 s, and filepressure (adj 0, not
#    registered) then thrashes a 300 MiB file in the group, real PSI stall
#    that the tier's trigger catches while nobody reads it. The file is
#    written before the daemon starts, so that the reader is thrashing
#    within a fraction of a second of the stop.
#
# Asserted: nothing dies while the loop is healthy; during the first stall
# the victim (registered, the highest adj) is SIGKILLed and the daemon logs
# "lmkd watchdog: ... killed pid <victim>", once; keeper, low (below the
# band) and stranger (not registered) live; afterwards the loop runs again
# (GETKILLCNT answers; the watchdog's kill is not counted, as lmkd does not
# count its watchdog's). During the second stall the group accrues at least
# the trigger's 100 ms of "some" stall, keeper (now the highest registered
# adj in the band) is SIGKILLed by the watchdog, once; low, stranger and the
# reader (outside the band, or not registered) live, the kernel OOM killer
# kills nothing; once the loop runs again, the tier reports that it fired
# (it finds no one left in its band) and kills nothing. The daemon stops
# cleanly.
# Exit: 0 pass, 1 fail, 77 skip (CI=true turns non-kernel skips into fails).

set -u

srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$srcdir/tests/kernel/lib.sh" || { echo "cannot source $srcdir/tests/kernel/lib.sh" >&2; exit 99; }
# shellcheck source-path=SCRIPTDIR source=policy-body.sh
. "$srcdir/tests/kernel/policy-body.sh" || { echo "cannot source $srcdir/tests/kernel/policy-body.sh" >&2; exit 99; }

HEALTHY=${KT_LW_HEALTHY:-3}
STALL_MS=${KT_LW_STALL_MS:-3000}
STALL2_MS=${KT_LW_STALL2_MS:-4000}
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

# the pressure case's file, written now (filepressure makes it, then reads
# it: stopped at once; the daemon is not running yet)
pol_pressure 0
kill -KILL "$reader" 2>/dev/null
kt_wait_for 5 kt_pid_dead "$reader" || e2e_fail "filepressure $reader does not die"
reader=

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

# 2. the loop stopped again, now under real pressure in the group; the
# loop's GETKILLCNT above handed the watchdog its choices again (victim's
# record gone: keeper first)
"$stall" "$daemon" "$STALL2_MS" >"$tmp/stall2.out" 2>&1 &
staller=$!
kt_track "$staller"
kt_wait_for 5 kt_file_has "$tmp/stall2.out" tracing || e2e_fail "cannot trace the loop: $(cat "$tmp/stall2.out")"
"$client" talk "$sock" >"$tmp/client3.out" 2>&1 <<TALK || e2e_fail "cannot wake the loop: $(cat "$tmp/client3.out")"
connect 0
send 0 5 0
TALK
kt_wait_for 5 kt_file_has "$tmp/stall2.out" stalled || e2e_fail "cannot stall the loop: $(cat "$tmp/stall2.out")"
stalled_at=$(date +%s%N)
kt_log "event loop (thread $daemon) stopped for $STALL2_MS ms; now the pressure"
some0=$(sed -n 's/^some .*total=\([0-9]*\)$/\1/p' "$KT_PRESSURE")
pol_pressure 0
kt_log "filepressure reading from $(( (t0 - stalled_at) / 1000000 )) ms into the stall"
kt_wait_for 10 kt_pid_dead "$keeper" || e2e_fail "the highest registered process in the band (keeper) lives through a stuck loop under pressure"
t1=$(date +%s%N)
kt_log "keeper dead $(( (t1 - stalled_at) / 1000000 )) ms into the stall"
wait "$staller" || e2e_fail "stall-thread failed: $(cat "$tmp/stall2.out")"
some1=$(sed -n 's/^some .*total=\([0-9]*\)$/\1/p' "$KT_PRESSURE")
stall_us=$((some1 - some0))
kt_log "the group's PSI some stall while the loop was stopped: $((stall_us / 1000)) ms"
[ "$stall_us" -ge 100000 ] || e2e_fail "only $stall_us us of some stall while the loop was stopped: no pressure the tier (100 ms) would act on"
line=$(grep "lmkd watchdog" "$log")
[ "$(printf '%s\n' "$line" | grep -c "killed pid $keeper ")" = 1 ] || e2e_fail "not one watchdog kill of pid $keeper: $line"
[ "$(printf '%s\n' "$line" | grep -c killed)" = 2 ] || e2e_fail "a watchdog kill besides victim's and keeper's: $line"
kt_log "daemon: $(printf '%s\n' "$line" | grep "killed pid $keeper " | sed 's/.*psi-lmkd: //')"
e2e_alive "$low" low "$stranger" stranger "$reader" "filepressure"
e2e_oom_check "while the loop was stopped under pressure"

# the loop runs again, the pressure still on: the tier fires and finds no
# one left in its band
kt_wait_for 10 kt_file_has "$log" "tier test fired" ||
	e2e_fail "the tier did not fire after the stall, under pressure: $(tail -n 5 "$log")"
kt_log "daemon: $(grep -m1 "tier test fired" "$log" | sed 's/.*psi-lmkd: //')"
[ "$(e2e_kill_count)" = 0 ] || e2e_fail "the daemon killed: $(e2e_kill_lines | tr '\n' '|')"
e2e_alive "$low" low "$stranger" stranger "$reader" "filepressure"
e2e_oom_check "after the stall under pressure"
kill -KILL "$reader" 2>/dev/null
reader=
pol_daemon_stop
echo "PASS"
exit 0
