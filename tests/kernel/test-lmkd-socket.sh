#!/bin/bash
# SPDX-License-Identifier: MIT
# test-lmkd-socket.sh - psi-lmkd as Android's lmkd on the real kernel: a
# process the "framework" registered at adj 1000 through the lmkd socket is
# killed under real memory pressure and reported to the framework, while an
# unregistered process that uses more memory, also at adj 1000, is left
# alone (issue 13).
#
# In a fresh 128 MiB test group: registered (memhog, 8 MiB, started at adj
# 0) and unregistered (memhog, 24 MiB, adj 1000 set by itself). The daemon
# serves lmkd_socket in the test's temp dir, with one tier (some 100ms 2s,
# adj >= 800) on the group's pressure file and scoped to the group. A client
# of the test's own (tests/lmkd-client) does what ActivityManager does on
# connect (PURGE, SUBSCRIBE kill and stat), registers the 8 MiB process at
# adj 1000 with PROCPRIO and waits; then filepressure reads a 300 MiB file
# through the group (DESIGN.md's recipe).
#
# Asserted: the first kill line is the registered process's; the client
# receives KILL_OCCURRED (uid 10099, the task name lmkd would give: argv[0],
# kill_reason 5 DIRECT_RECL_AND_THRASHING, or 2 LOW_SWAP_AND_THRASHING with swap low)
# and then PROCKILL (16 bytes: pid, uid, rss_kb > 0), in that order;
# GETKILLCNT answers 1 for [1000, 1000], 1 for the total (min 1001) and 0
# for [-1000, 999]; the unregistered process is alive KT_LS_SETTLE (5) s
# after the kill with the pressure still on (nothing else is registered, so
# nothing else may die); the kernel OOM killer never acts; with
# lmkd_kill_log, lmkd's own line "lowmemorykiller: Kill '<task>' (<pid>),
# uid 10099, oom_score_adj 1000 to free ...kB rss, ...kB swap; reason: ..."
# is logged.
# Exit: 0 pass, 1 fail, 77 skip (CI=true turns non-kernel skips into fails).

set -u

srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$srcdir/tests/kernel/lib.sh" || { echo "cannot source $srcdir/tests/kernel/lib.sh" >&2; exit 99; }
# shellcheck source-path=SCRIPTDIR source=policy-body.sh
. "$srcdir/tests/kernel/policy-body.sh" || { echo "cannot source $srcdir/tests/kernel/policy-body.sh" >&2; exit 99; }

TIMEOUT=${KT_LS_TIMEOUT:-120}
SETTLE=${KT_LS_SETTLE:-5}
UID_APP=10099

pol_init
client=${LMKD_CLIENT:-$(dirname "$KT_BINDIR")/lmkd-client}
[ -x "$client" ] || kt_skip_or_fail "tests/lmkd-client not built (set LMKD_CLIENT; got '$client')"

kt_cgroup_create psi-lmkd-test 128
sock=$tmp/lmkd
pol_conf <<EOF
kill_timeout = 2s
victim_order = adj
lmkd_socket = $sock
lmkd_kill_log = true

[tier test]
trigger = some 100ms 2s
min_oom_score_adj = 800
EOF

pol_daemon_start -v
kt_wait_for 5 kt_file_has "$log" "serving the lmkd socket $sock" || e2e_fail "the daemon does not serve $sock"

pol_hog registered 8 0
victim=$KT_LAST_PID
pol_hog unregistered 24 1000
bystander=$KT_LAST_PID
# lmkd's task name: argv[0], cut at the first space
task=$(tr '\0' '\n' <"/proc/$victim/cmdline" | head -n 1 | cut -d ' ' -f 1 | cut -c 1-127)
kt_log "registered-to-be: pid $victim ($task, 8 MiB, adj 0); unregistered: pid $bystander (24 MiB, adj 1000)"

"$client" talk "$sock" >"$tmp/client.out" 2>&1 <<EOF &
connect 0
send 0 3
send 0 5 0
send 0 5 1
send 0 1 $victim $UID_APP 1000 0
send 0 4 -1000 1000
expect 0 4 0
await 0 $((TIMEOUT * 1000))
stat 0 $UID_APP $task 5,2
prockill 0 $victim $UID_APP 16
send 0 4 1000 1000
expect 0 4 1
send 0 4 1001 0
expect 0 4 1
send 0 4 -1000 999
expect 0 4 0
EOF
talker=$!
kt_track "$talker"
kt_wait_for 10 sh -c "[ \"\$(cat /proc/$victim/oom_score_adj)\" = 1000 ]" ||
	e2e_fail "PROCPRIO did not set pid $victim to adj 1000 ($(cat "$tmp/client.out"))"
kt_log "the client registered pid $victim at adj 1000 (uid $UID_APP) and subscribed to kill and stat reports"

pol_pressure 0
pol_wait_kills 1 "$TIMEOUT"
kline=$(pol_kill_line 1)
kt_log "kill #1 after $(pol_since) s of pressure: $kline"
[ "$(e2e_kv "$kline" pid)" = "$victim" ] || e2e_fail "kill #1 is not the registered pid $victim: $kline"
kt_wait_for 5 kt_pid_dead "$victim" || e2e_fail "the registered process is alive 5 s after its kill"
kt_wait_for 10 kt_pid_dead "$talker" || e2e_fail "the client still waits for the reports: $(cat "$tmp/client.out")"
wait "$talker" || e2e_fail "the client's checks failed: $(cat "$tmp/client.out")"
kt_log "the client got KILL_OCCURRED ($task, uid $UID_APP, kill_reason 5 or 2), then PROCKILL (16 bytes); GETKILLCNT 1 / 1 / 0"
# lmkd's own line (lmkd_kill_log), as lmkd_test's LMKD_KILL_MARKER_TEMPLATE finds it; a some-stall
# tier is "direct reclaim and thrashing", or "low on swap" when the swap is short too
lline=$(grep -F "lowmemorykiller: Kill '$task' ($victim), uid $UID_APP, oom_score_adj 1000 to free " "$log" | head -n 1)
[ -n "$lline" ] || e2e_fail "no lmkd kill line for pid $victim: $(grep lowmemorykiller "$log" | head -n 3)"
printf '%s\n' "$lline" | grep -Eq "kB rss, [0-9]+kB swap; reason: device is (in direct reclaim and|low on swap \([0-9]+kB <= [0-9]+kB\) and) thrashing \(tier test: some stall 100ms in 2000ms\)\$" ||
	e2e_fail "lmkd's kill line is not in lmkd's form: $lline"
kt_log "lmkd's line: ${lline#*lowmemorykiller: }"

e2e_watch "$SETTLE" "after the kill" e2e_alive "$bystander" "the unregistered process"
[ "$(e2e_kill_count)" = 1 ] || e2e_fail "more than one kill: $(e2e_kill_lines | tr '\n' '|')"
e2e_oom_check "around the kill"
kill -KILL "$reader" 2>/dev/null
pol_daemon_stop
kt_log "the unregistered 24 MiB process at adj 1000 lived ${SETTLE} s of pressure after the kill"
echo "PASS"
exit 0
