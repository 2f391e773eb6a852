#!/bin/bash
# SPDX-License-Identifier: MIT
# test-bus-stall.sh - a stalled system bus never holds up the killer
# (M-1 of review-31676fe).
#
# A private dbus-daemon plays the system bus (DBUS_SYSTEM_BUS_ADDRESS, the
# policy of test-warn-dbus.sh) and is SIGSTOPped, as a thrashing
# dbus-daemon behaves: it accepts connections (the kernel queues them) but
# answers nothing and reads nothing. psi-lmkd kills memhogs of ours in a
# throwaway 64 MiB group (a tier that always fires, adj >= 900; each memhog
# starts at adj 0 and is given 900 when its clock starts). In each
# case a first victim is killed while the bus is stopped, a second one
# appears right after, and it must be dead within 5 s (a free loop kills it
# in well under a second; before the fix it waited for the bus, for ever);
# then SIGTERM must end the daemon within 5 s, the bus still stopped.
#   connect: the bus is stopped before the daemon first connects, which it
#            does at the first kill (no warn tier). The daemon gives the
#            connection up after 5 s and retries with backoff, not in a
#            tight loop (at most 4 attempts in 14 s), and it does not
#            spin meanwhile (under 1 s of CPU in 8 s).
#   startup: the same with a warn tier, which connects at startup: the
#            daemon must say "running" (within 10 s) and kill.
#   send:    the daemon is connected and owns the name (a first kill with
#            the bus running), then the bus is stopped and the daemon's
#            socket filled (through a copy of its fd, pidfd_getfd), so
#            that sd-bus can write nothing more: Killed signals must be
#            queued or dropped, never waited for (and the daemon does
#            not spin on the fd: under 1 s of CPU in 3 s).
# Exit: 0 pass, 1 fail, 77 skip (CI=true turns non-kernel skips into fails).

set -u

srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$srcdir/tests/kernel/lib.sh" || { echo "cannot source $srcdir/tests/kernel/lib.sh" >&2; exit 99; }
# shellcheck source-path=SCRIPTDIR source=e2e-body.sh
. "$srcdir/tests/kernel/e2e-body.sh" || { echo "cannot source $srcdir/tests/kernel/e2e-body.sh" >&2; exit 99; }

kt_require_root_and_psi
kt_install_traps
e2e_find_binaries
PY=/usr/bin/python3
$PY -c 'import os; os.pidfd_open' 2>/dev/null || kt_skip_or_fail "python3 (3.9 or later, for os.pidfd_open) is missing"
"$PSI_LMKD" --help >/dev/null
tmp=$(kt_tmpdir)
# the longest a second victim may live with a free loop (it takes < 1 s)
PROMPT_MS=5000

# copies fd FD of process PID (pidfd_getfd) and writes into it until the
# socket takes no more
cat >"$tmp/fill.py" <<'EOF'
import ctypes, os, socket, sys
libc = ctypes.CDLL(None, use_errno=True)
pidfd = os.pidfd_open(int(sys.argv[1]))
fd = libc.syscall(438, pidfd, int(sys.argv[2]), 0)  # SYS_pidfd_getfd
if fd < 0:
    print("pidfd_getfd:", os.strerror(ctypes.get_errno()), flush=True)
    sys.exit(2)
s = socket.socket(fileno=fd)
s.setblocking(False)
n = 0
try:
    while True:
        n += s.send(b"\0" * 4096)
except BlockingIOError:
    pass
print("filled", n, flush=True)
EOF

bus=
daemon=
# bus_start: a fresh private system bus (the previous one, if any, gone)
bus_start() {
	bus_stop
	kt_system_bus_start "$tmp"
	bus=$KT_BUS_PID
}

bus_stop() {
	[ -n "$bus" ] || return 0
	kill -KILL "$bus" 2>/dev/null
	kill -CONT "$bus" 2>/dev/null
	wait "$bus" 2>/dev/null
	bus=
}

# victim NAME: a memhog of ours in the test group, not a candidate yet
# (oom_score_adj 0: killed_within makes it one); its pid in KT_LAST_PID
victim() {
	kt_spawn_in_cgroup -o "$tmp/$1.out" "$KT_BINDIR/memhog" 8 0 >/dev/null
	kt_wait_ready "$tmp/$1.out" "$KT_LAST_PID" 10
}

# daemon_conf FILE [warn]: the tier that kills every memhog of ours, and
# with "warn" a warn tier that always fires too
daemon_conf() {
	kt_write_conf "$1" <<EOF
control_socket = off
settle_time = 100ms
[tier always]
low_available = 100%
hold_idle = false
low_swap = 100%
min_oom_score_adj = 900
EOF
	[ "${2:-}" = warn ] && printf '[tier warn]\naction = warn\nlow_available = 100%%\nlow_swap = 100%%\n' >>"$1"
	return 0
}

# killed_within VICTIM_PID LOG WHAT: the victim becomes a candidate (adj
# 900) now, and the daemon must kill it within PROMPT_MS; fails the test
# with the daemon's state if not
killed_within() {
	local pid=$1 log=$2 what=$3 t0 ms
	echo 900 >"/proc/$pid/oom_score_adj" || kt_fail "$what: cannot make victim $pid a candidate"
	t0=$(date +%s%N)
	kt_wait_for 15 kt_pid_dead "$pid"
	ms=$(( ($(date +%s%N) - t0) / 1000000 ))
	if kt_pid_alive "$pid"; then
		tail -n 20 "$log" >&2
		kt_fail "$what: victim $pid still alive after $ms ms (daemon in $(cat "/proc/$daemon/wchan" 2>/dev/null))"
	fi
	# (the kill line may still be on its way through the log's stamper)
	kt_wait_for 3 kt_file_has "$log" "kill pid=$pid " || kt_fail "$what: victim $pid died, but not by the daemon"
	[ "$ms" -lt "$PROMPT_MS" ] ||
		kt_fail "$what: victim $pid was killed after $ms ms, not within $PROMPT_MS ms: the bus held the loop"
	kt_log "$what: killed in $ms ms"
}

# term_within LOG WHAT: SIGTERM ends the daemon within 5 s, the bus stopped
term_within() {
	local t0 ms
	t0=$(date +%s%N)
	kill -TERM "$daemon"
	kt_wait_for 5 kt_pid_dead "$daemon"
	ms=$(( ($(date +%s%N) - t0) / 1000000 ))
	kt_pid_dead "$daemon" || kt_fail "$2: the daemon ignores SIGTERM for $ms ms with the bus stopped ($(cat "/proc/$daemon/wchan" 2>/dev/null))"
	wait "$daemon" 2>/dev/null
	kt_log "$2: SIGTERM took $ms ms"
}

# cpu_ms PID: the CPU time PID has used, in ms
cpu_ms() {
	local stat
	stat=$(cat "/proc/$1/stat") || kt_fail "cannot read /proc/$1/stat"
	stat=${stat##*) }
	# utime and stime: fields 14 and 15, the 12th and 13th after ") "
	awk -v hz="$(getconf CLK_TCK)" '{ printf "%d\n", ($12 + $13) * 1000 / hz }' <<<"$stat"
}

# idle_for S WHAT: with the bus stalled the daemon waits, it does not spin:
# under 1 s of CPU in S s
idle_for() {
	local c0 ms
	c0=$(cpu_ms "$daemon")
	sleep "$1"
	ms=$(( $(cpu_ms "$daemon") - c0 ))
	[ "$ms" -lt 1000 ] || kt_fail "$2: the daemon used $ms ms of CPU in $1 s with the bus stalled: it spins"
	kt_log "$2: $ms ms of CPU in $1 s"
}

# stalled_kills LOG WHAT: a first victim and, right after its kill, a
# second one, both killed promptly with the bus stopped
stalled_kills() {
	victim "$2-first"
	killed_within "$KT_LAST_PID" "$1" "$2: first victim"
	victim "$2-second"
	killed_within "$KT_LAST_PID" "$1" "$2: second victim"
}

case_connect() {
	local log=$tmp/connect.log n
	bus_start
	kill -STOP "$bus"
	daemon_conf "$tmp/connect.conf"
	kt_daemon_up "$tmp/connect.conf" "$log" -vv
	daemon=$KT_DAEMON_PID
	stalled_kills "$log" connect
	kt_wait_for 10 kt_file_has "$log" 'system bus: no answer within 5 s' ||
		kt_fail "connect: no word of the unanswered connection: $(grep 'bus' "$log")"
	idle_for 8 connect
	n=$(grep -c 'system bus: connecting' "$log")
	[ "$n" -le 4 ] || kt_fail "connect: $n connection attempts in about 14 s: a tight loop, not a backoff"
	kt_log "connect: $n connection attempts with the bus stopped"
	stalled_kills "$log" connect-again
	term_within "$log" connect
}

case_startup() {
	local log=$tmp/startup.log
	bus_start
	kill -STOP "$bus"
	daemon_conf "$tmp/startup.conf" warn
	kt_daemon_up "$tmp/startup.conf" "$log" -vv
	daemon=$KT_DAEMON_PID
	stalled_kills "$log" startup
	term_within "$log" startup
}

# fill_bus_socket: the daemon's only socket (the bus) takes no more bytes
fill_bus_socket() {
	local f out sockets=()
	for f in /proc/"$daemon"/fd/*; do
		[[ $(readlink "$f") == socket:* ]] && sockets+=("${f##*/}")
	done
	[ "${#sockets[@]}" -eq 1 ] || kt_fail "send: the daemon holds ${#sockets[@]} sockets (${sockets[*]}), not just the bus"
	out=$($PY "$tmp/fill.py" "$daemon" "${sockets[0]}" 2>&1)
	case $out in
	filled*) kt_log "send: the daemon's bus socket $out bytes, it takes no more" ;;
	*Operation\ not\ permitted* | *Function\ not\ implemented*) kt_skip "send: cannot copy the daemon's fd: $out" ;;
	*) kt_fail "send: cannot fill the daemon's bus socket: $out" ;;
	esac
}

case_send() {
	local log=$tmp/send.log
	bus_start
	daemon_conf "$tmp/send.conf"
	kt_daemon_up "$tmp/send.conf" "$log" -vv
	daemon=$KT_DAEMON_PID
	victim send-warmup
	killed_within "$KT_LAST_PID" "$log" "send: a kill with the bus running"
	kt_wait_for 10 kt_file_has "$log" 'warn tiers: org.freedesktop.LowMemoryMonitor owned on the system bus' ||
		kt_fail "send: the daemon did not connect to the running bus: $(grep 'bus' "$log")"
	kill -STOP "$bus"
	fill_bus_socket
	stalled_kills "$log" send
	idle_for 3 send
	term_within "$log" send
}

kt_cgroup_create psi-lmkd-test 64
# BUS_STALL_CASES picks some (to show each one failing on an older build)
for c in ${BUS_STALL_CASES:-connect startup send}; do
	case $c in
	connect) case_connect ;;
	startup) case_startup ;;
	send) case_send ;;
	*) kt_fail "unknown case '$c' in BUS_STALL_CASES (connect, startup, send)" ;;
	esac
done
bus_stop

echo "---- daemon logs (bus lines) ----"
for f in "$tmp"/connect.log "$tmp"/startup.log "$tmp"/send.log; do
	[ -e "$f" ] && grep -h -E 'bus|Killed|kill pid=' "$f"
done
echo PASS
exit 0
