#!/bin/bash
# SPDX-License-Identifier: MIT
# test-unit-result.sh - a kill the service manager sees (issue 28 item 2):
# with systemd_oom_marks = true, a service whose process psi-lmkd killed
# ends with Result=oom-kill, as after systemd-oomd's kills; without it,
# Result=signal (the control: the unit and the kill work, the marks make
# the difference).
#
# Needs systemd as PID 1 on pure cgroup v2 (the service manager reads the
# marks only there): the VM matrix runs it (tests/vm/run-matrix); elsewhere
# it skips and is not part of make check. Each run: a transient service
# (systemd-run, MemoryMax=128M) running memhog 32 MiB; psi-lmkd scoped to
# the unit's group with one tier that fires at once (low_available = 100%,
# hold_idle = false); its kill line names memhog; then `systemctl show -p
# Result` of the unit.
# Exit: 0 pass, 1 fail, 77 skip.

set -u

srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$srcdir/tests/kernel/lib.sh" || { echo "cannot source $srcdir/tests/kernel/lib.sh" >&2; exit 99; }

kt_require_root_and_psi
[ "$(cat /proc/1/comm 2>/dev/null)" = systemd ] || kt_skip "PID 1 is not systemd (runs in the VM matrix)"
[ "$(stat -fc %T /sys/fs/cgroup 2>/dev/null)" = cgroup2fs ] ||
	kt_skip "not pure cgroup v2: systemd reads the oomd marks only there (runs in the VM matrix)"
command -v systemd-run >/dev/null || kt_skip "no systemd-run"
kt_install_traps
tmp=$(kt_tmpdir)
units=()
# shellcheck disable=SC2317 # trap
unit_cleanup() {
	local u
	for u in "${units[@]}"; do
		systemctl stop "$u" 2>/dev/null
		systemctl reset-failed "$u" 2>/dev/null
	done
}
trap 'unit_cleanup; kt_cleanup' EXIT

# run NAME MARKS: one service, one kill; sets result, line.
run() {
	local unit=psi-lmkd-ur-$1-$$ cg pid conf=$tmp/$1.conf log=$tmp/$1.log i
	units+=("$unit")
	systemd-run --quiet --unit="$unit" -p MemoryMax=128M -p OOMPolicy=stop \
		"$KT_BINDIR/memhog" 32 0 >/dev/null 2>&1 || kt_fail "$1: systemd-run failed"
	for i in $(seq 1 100); do
		pid=$(systemctl show -p MainPID --value "$unit")
		[ -n "$pid" ] && [ "$pid" != 0 ] && grep -q '^VmRSS:.*[0-9]\{5,\} kB' "/proc/$pid/status" 2>/dev/null && break
		sleep 0.1
	done
	[ -n "$pid" ] && [ "$pid" != 0 ] || kt_fail "$1: the unit $unit has no main pid"
	cg=$(systemctl show -p ControlGroup --value "$unit")
	cat >"$conf" <<EOF
[daemon]
pressure = /sys/fs/cgroup$cg/memory.pressure
scope = $cg
memory_cgroup = /sys/fs/cgroup$cg
control_socket = off
systemd_oom_marks = $2

[tier always]
low_available = 100%
hold_idle = false
min_oom_score_adj = 0
EOF
	kt_daemon_up "$conf" "$log" -v
	kt_wait_for 10 kt_pid_dead "$pid" ||
		kt_fail "$1: memhog $pid (unit $unit) lives 10 s after the daemon started: $(tail -n 12 "$log" | tr '\n' '|')"
	line=$(grep -m1 -E '(^|[^[:alnum:]_-])kill pid=' "$log")
	[ -n "$line" ] || kt_fail "$1: memhog died, but not by psi-lmkd: $(tail -n 5 "$log" | tr '\n' '|')"
	kill -TERM "$KT_DAEMON_PID" 2>/dev/null
	kt_wait_for 5 kt_pid_dead "$KT_DAEMON_PID" || kt_fail "$1: the daemon ignores SIGTERM"
	for i in $(seq 1 50); do
		result=$(systemctl show -p Result --value "$unit")
		[ "$(systemctl show -p ActiveState --value "$unit")" != active ] && break
		sleep 0.1
	done
	kt_log "$1 (systemd_oom_marks = $2): unit $unit, Result=$result"
}

run control false
[ "$result" = signal ] || kt_fail "control: Result=$result, not signal: the setup does not end the unit by the kill"
run marks true
[ "$result" = oom-kill ] || kt_fail "marks: Result=$result, not oom-kill (kill line: $line)"
journalctl --no-pager -u "${units[1]}" 2>/dev/null | grep -i 'killed' | tail -n 3
echo "PASS"
exit 0
