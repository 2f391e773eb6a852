#!/bin/sh
# SPDX-License-Identifier: MIT
# test-lmkd-socket: psi-lmkd as Android's lmkd, driven by a client of the
# test's own (tests/lmkd-client.c) over the socket init would hand it.
#
# The daemon runs as init starts lmkd: tests/lmkd-client binds a SEQPACKET
# socket in a temp dir and executes psi-lmkd with the fd number in
# ANDROID_SOCKET_lmkd. It runs in the foreground as a DRY RUN (nothing is
# ever killed) on the real /proc; the only processes whose oom_score_adj
# changes are this test's own children (sleep processes), raised, never
# lowered. Its one tier fires on every memory check (low_available = 100%),
# so it keeps choosing a victim and logging "would-kill".
#  1. the framework's opening (PURGE, TARGET, SUBSCRIBE x2), then PROCPRIO
#     with 3, 4 and 5 words (the last lmkd-only), PROCS_PRIO with 4- and
#     5-field records (one record out of range), a bare PROCS_PRIO; the
#     oom_score_adj of each child is what was asked, or untouched;
#  2. victims come from the registry: "would-kill" names the child registered
#     at adj 1000, never an unregistered child set to adj 1000 by hand;
#  3. every malformed form -- empty, 1/3/5 bytes, unknown, negative and
#     little-endian commands, PROCKILL and KILL_OCCURRED from a client, wrong
#     lengths of the commands that have replies (no reply), out-of-range
#     values, a thread, a dead pid, an oversized datagram -- is ignored
#     without a reply and without closing the connection: GETKILLCNT still
#     answers on it, in order; each malformed packet is counted (SIGUSR1's
#     bad_packets), but logged at most once per kind and 10 s, plus a count;
#  4. ownership: another client may neither remove nor re-prioritise a
#     record a live client owns; PURGE;
#  5. a registered process that exits is forgotten;
#  6. a 4th client evicts the 3 connected ones;
#  7. UPDATE_PROPS through --reinit: 0, then -1 with a broken file (the
#     daemon keeps running its old configuration); lmkd's properties from a
#     file (lmkd_properties) read again on each one, in force or reported
#     as ignored, a bad value -1 with its name and value logged; BOOT_COMPLETED through
#     --boot-completed: handled, then already handled;
#  8. the daemon creates the socket itself from lmkd_socket: mode 0660,
#     removed at exit; started without -v, ro.lmk.debug gives its info lines.
# lmkd_kill_log is on throughout: a dry run must never write lmkd's
# "lowmemorykiller: Kill" line (tests/kernel/test-lmkd-socket.sh checks
# that a real kill does).
# Exit: 0 pass, 1 fail, 77 skipped (no pidfd_open), 99 hard error.
set -u
bin=${PSI_LMKD:-./psi-lmkd}
client=${LMKD_CLIENT:-./tests/lmkd-client}
tmp=$(mktemp -d) || exit 99
pid=
kids=
cleanup() {
	[ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null
	for k in $kids; do kill -KILL "$k" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT
fail() {
	echo "FAIL: $*" >&2
	[ -f "$tmp/log" ] && tail -n 40 "$tmp/log" >&2
	exit 1
}
note() { echo "# $*" >&2; }

[ -x "$bin" ] || { echo "test-lmkd-socket: $bin is not built" >&2; exit 99; }
[ -x "$client" ] || { echo "test-lmkd-socket: $client is not built" >&2; exit 99; }
if [ ! -r /proc/self/oom_score_adj ]; then
	echo "SKIP: no /proc/PID/oom_score_adj" >&2
	exit 77
fi

sock=$tmp/lmkd
conf=$tmp/lmkd.conf
props_line=
write_conf() {
	cat >"$conf" <<EOF
[daemon]
dry_run = true
settle_time = 0
victim_order = adj
lmkd_socket = $sock
lmkd_kill_log = true
$props_line
[tier all]
low_available = 100%
hold_idle = false
low_swap = 100%
min_oom_score_adj = 0
EOF
}
write_conf

# waits (10 s at most) for a pattern in the daemon's log
wait_log() {
	i=0
	while [ $i -lt 100 ]; do
		grep -q -- "$1" "$tmp/log" 2>/dev/null && return 0
		kill -0 "$pid" 2>/dev/null || return 1
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}
adj() { cat "/proc/$1/oom_score_adj"; }
# bad_packets of a fresh SIGUSR1 status line
bad_packets() {
	n=$(grep -c "status lmkd " "$tmp/log")
	kill -USR1 "$pid"
	i=0
	while [ "$(grep -c "status lmkd " "$tmp/log")" -le "$n" ] && [ $i -lt 50 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	grep "status lmkd " "$tmp/log" | tail -n 1 | sed -n 's/.* bad_packets=\([0-9]*\).*/\1/p'
}
talk() { "$client" talk "$sock"; }
kid() {
	sleep 1000 &
	kids="$kids $!"
	eval "$1=$!"
}

# ---------------------------------------------------------------- start as init does
env -u NOTIFY_SOCKET -u JOURNAL_STREAM "$client" spawn "$sock" "$bin" -f -v -v -c "$conf" >"$tmp/log" 2>&1 &
pid=$!
wait_log "serving the lmkd socket inherited from init" || fail "the daemon did not take the inherited socket"
note "daemon $pid serves the socket init would have made"

for k in c1 c2 c3 c4 c5 c6 c7 u1 o1; do kid $k; done
# shellcheck disable=SC2154 # set by kid through eval
echo 1000 >"/proc/$u1/oom_score_adj" || exit 99

# ---------------------------------------------------------------- 1. registration
talk <<EOF || fail "1: the framework's opening and the registrations"
connect 0
send 0 3
send 0 0 18432 0 23040 100 27648 200 32256 250 55296 900 80640 950
send 0 5 0
send 0 5 1
send 0 4 -1000 1000
expect 0 4 0
send 0 1 $c1 10061 900
send 0 1 $c2 10062 1000 0
send 0 1 $c3 10063 950 0 1
send 0 11 $c4 10064 901 0 $c5 10065 2000 0 $c6 10066 903 1
send 0 11 $c7 10067 904 0 0
send 0 11
send 0 4 -1000 1000
expect 0 4 0
EOF
for want in "$c1 900" "$c2 1000" "$c3 0" "$c4 901" "$c5 0" "$c6 903" "$c7 904" "$u1 1000"; do
	set -- $want
	[ "$(adj "$1")" = "$2" ] || fail "1: pid $1 has oom_score_adj $(adj "$1"), not $2"
done
grep -q "minfree levels 18432:0,23040:100" "$tmp/log" || fail "1: TARGET was not taken"
note "1: PROCPRIO with 3/4/5 words, PROCS_PRIO 4/5-field (a bad record skipped alone), bare PROCS_PRIO"

# ---------------------------------------------------------------- 2. victims from the registry
wait_log "would-kill pid=$c2 " || fail "2: no would-kill of the child registered at adj 1000"
grep -q "would-kill pid=$u1 " "$tmp/log" && fail "2: the unregistered child at adj 1000 was chosen"
grep "would-kill" "$tmp/log" | grep -v "would-kill pid=$c2 " | head -n 3 | grep -q . &&
	fail "2: a would-kill of another process than pid $c2"
note "2: the victim is the registered adj-1000 child; the unregistered one at adj 1000 is left alone"

# ---------------------------------------------------------------- 3. malformed input
"$client" thread >"$tmp/thread" &
kids="$kids $!"
i=0
while [ ! -s "$tmp/thread" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
read -r tpid tid <"$tmp/thread" || exit 99
sh -c 'exit 0' &
dead=$!
wait "$dead"
long=$(printf '%0600d' 0)
before=$(grep -c "ignored" "$tmp/log")
bad_before=$(bad_packets)
talk <<EOF || fail "3: malformed input"
connect 0
raw 0 -
raw 0 00
raw 0 000000
raw 0 0000000400
send 0 12
send 0 -1
send 0 0x01000000 $u1 0 900
send 0 6 $u1 0 100
send 0 8
send 0 4 0
quiet 0 300
send 0 4 0 0 0
quiet 0 300
send 0 7 1
quiet 0 300
send 0 10 0
quiet 0 300
send 0 1 $u1 0 1001
send 0 1 $u1 0 -1001
send 0 1 $u1 0 900 2
send 0 1 $u1 0 900 0 2
send 0 1 $u1 0 900 0 0 0
send 0 1 0 0 900
send 0 1 $tid 0 900
send 0 1 $dead 0 900
send 0 5 2
send 0 11 $u1 0 900 0 0 0
send 0 0 1000 900 1000
raw 0 $long
send 0 4 -1000 1000
expect 0 4 0
EOF
kill -0 "$pid" 2>/dev/null || fail "3: the daemon died of malformed input"
[ "$(adj "$u1")" = 1000 ] || fail "3: a malformed PROCPRIO changed pid $u1 to $(adj "$u1")"
[ "$(adj "$tpid")" = 0 ] || fail "3: PROCPRIO of a thread changed its process to $(adj "$tpid")"
after=$(grep -c "ignored" "$tmp/log")
bad_after=$(bad_packets)
[ $((bad_after - bad_before)) -ge 20 ] ||
	fail "3: only $((bad_after - bad_before)) malformed packets were counted as ignored"
# one line and one count at most per kind (packet, priority, thread, TARGET)
[ $((after - before)) -le 8 ] || fail "3: $((after - before)) lines about ignored input: not throttled"
grep -q "is a thread, not a thread-group leader" "$tmp/log" || fail "3: the thread was not refused as such"
grep -q "might have been killed" "$tmp/log" || fail "3: the dead pid was not noticed"
note "3: $((bad_after - bad_before)) malformed packets counted and ignored in $((after - before)) log lines, no reply, connection kept, GETKILLCNT in order"

# ---------------------------------------------------------------- 4. ownership
talk <<EOF || fail "4: ownership"
connect 0
send 0 1 $o1 10070 900
send 0 4 -1000 1000
expect 0 4 0
fork
connect 1
send 1 2 $o1
send 1 1 $o1 10070 905
send 1 4 -1000 1000
expect 1 4 0
endfork
send 0 3
send 0 4 -1000 1000
expect 0 4 0
EOF
grep -q "pid $o1 is registered by client pid [0-9]*: client pid [0-9]* may not remove it" "$tmp/log" ||
	fail "4: another client removed a live client's record"
grep -q "pid $o1 is registered by client pid [0-9]*: client pid [0-9]* may not change it" "$tmp/log" ||
	fail "4: another client re-prioritised a live client's record"
[ "$(adj "$o1")" = 905 ] || fail "4: the /proc write comes before the ownership check, as in lmkd"
grep -q "purged [1-9][0-9]* records" "$tmp/log" || fail "4: PURGE removed nothing"
note "4: ownership as lmkd: the other client's PROCREMOVE and PROCPRIO refused, PURGE by the owner"

# ---------------------------------------------------------------- 5. a registered process exits
talk <<EOF || fail "5: registration"
connect 0
send 0 1 $c1 10061 900
send 0 4 -1000 1000
expect 0 4 0
EOF
kill -KILL "$c1"
wait_log "registered pid $c1 exited" || fail "5: the exit of a registered process went unnoticed"
note "5: a registered process that died was forgotten (its pidfd reported it)"

# ---------------------------------------------------------------- 6. a 4th client evicts all
talk <<EOF || fail "6: eviction"
connect 0
connect 1
connect 2
send 2 4 -1000 1000
expect 2 4 0
connect 3
closed 0 3000
closed 1 3000
closed 2 3000
send 3 4 -1000 1000
expect 3 4 0
EOF
note "6: the 4th client closed the other three and was served"

# ---------------------------------------------------------------- 7. client modes
# the clients read the socket's path from a file of their own: the
# daemon's is broken on purpose below
cp "$conf" "$tmp/client.conf" || exit 99
"$bin" -c "$tmp/client.conf" --reinit >/dev/null || fail "7: --reinit failed"
echo "bogus line" >>"$conf"
"$bin" -c "$tmp/client.conf" --reinit >/dev/null 2>&1 && fail "7: --reinit succeeded with a broken file"
kill -0 "$pid" 2>/dev/null || fail "7: a failed UPDATE_PROPS stopped the daemon"
grep -q "reload failed" "$tmp/log" || fail "7: no reload failure logged"
write_conf
"$bin" -c "$tmp/client.conf" --reinit >/dev/null || fail "7: --reinit failed after the file was fixed"
# lmkd's properties (lmkd_properties = FILE), read again on each UPDATE_PROPS
printf 'ro.lmk.kill_timeout_ms=250\nro.lmk.swap_free_low_percentage=15\nro.lmk.thrashing_limit=30\n' >"$tmp/lmk.prop"
props_line="lmkd_properties = $tmp/lmk.prop"
write_conf
"$bin" -c "$tmp/client.conf" --reinit >/dev/null || fail "7: --reinit failed with lmkd_properties"
wait_log "lmkd property ro.lmk.kill_timeout_ms=250 in force" || fail "7: ro.lmk.kill_timeout_ms not in force"
wait_log "lmkd property ro.lmk.thrashing_limit=30 ignored" || fail "7: ro.lmk.thrashing_limit not reported as ignored"
printf 'ro.lmk.kill_timeout_ms=250\npersist.device_config.lmkd_native.kill_timeout_ms=400\n' >"$tmp/lmk.prop"
"$bin" -c "$tmp/client.conf" --reinit >/dev/null || fail "7: --reinit failed after a property changed"
wait_log "persist.device_config.lmkd_native.kill_timeout_ms=400 in force" || fail "7: the persist override not read again"
printf 'ro.lmk.swap_free_low_percentage=150\n' >"$tmp/lmk.prop"
"$bin" -c "$tmp/client.conf" --reinit >/dev/null 2>&1 && fail "7: --reinit succeeded with a bad property"
wait_log "ro.lmk.swap_free_low_percentage=150: not a percentage" || fail "7: the bad property's error not logged"
kill -0 "$pid" 2>/dev/null || fail "7: a bad property stopped the daemon"
props_line=
write_conf
"$bin" -c "$tmp/client.conf" --reinit >/dev/null || fail "7: --reinit failed without lmkd_properties"
[ "$("$bin" -c "$conf" --boot-completed)" = "boot completed: handled" ] || fail "7: first --boot-completed"
[ "$("$bin" -c "$conf" --boot_completed)" = "boot completed: already handled" ] || fail "7: second --boot_completed"
note "7: --reinit (0, then -1 with the old configuration kept, then 0; lmkd's properties read again on each), --boot-completed (handled, already)"

kill -TERM "$pid"
wait "$pid"
st=$?
pid=
[ "$st" -eq 0 ] || fail "the daemon exited with status $st"
# lmkd_kill_log is on, but lmkd's line says a process was killed: a dry
# run's choices never write it
grep -q "would-kill pid=" "$tmp/log" || fail "no would-kill line at all"
grep -q "lowmemorykiller: Kill" "$tmp/log" && fail "a dry run wrote lmkd's kill line: $(grep "lowmemorykiller:" "$tmp/log" | head -n 1)"
note "lmkd_kill_log: no lmkd kill line for a dry run's choices"

# ---------------------------------------------------------------- 8. a socket of its own
# without -v, but with ro.lmk.debug: the info and debug lines are logged
printf 'ro.lmk.debug=true\n' >"$tmp/lmk.prop"
props_line="lmkd_properties = $tmp/lmk.prop"
write_conf
env -u NOTIFY_SOCKET -u JOURNAL_STREAM -u ANDROID_SOCKET_lmkd "$bin" -f -c "$conf" >"$tmp/log" 2>&1 &
pid=$!
wait_log "serving the lmkd socket $sock" || fail "8: the daemon did not create its socket"
wait_log "lmkd property ro.lmk.debug=true in force" || fail "8: ro.lmk.debug did not raise the log level"
printf 'ro.lmk.debug=false\n' >"$tmp/lmk.prop"
"$bin" -c "$conf" --reinit >/dev/null || fail "8: --reinit with ro.lmk.debug=false"
wait_log "configuration reloaded" || fail "8: no reload"
grep -q "lmkd property ro.lmk.debug=false in force" "$tmp/log" && fail "8: ro.lmk.debug=false left the log level raised"
[ "$(stat -c '%a %F' "$sock")" = "660 socket" ] || fail "8: the socket is $(stat -c '%a %F' "$sock")"
[ "$("$bin" -c "$conf" --boot-completed)" = "boot completed: handled" ] || fail "8: --boot-completed"
kill -TERM "$pid"
wait "$pid"
st=$?
pid=
[ "$st" -eq 0 ] || fail "8: the daemon exited with status $st"
[ -e "$sock" ] && fail "8: the socket is still there after exit"
note "8: lmkd_socket: created 0660, served, removed at exit; ro.lmk.debug raised the log level, and lowered it again"
exit 0
