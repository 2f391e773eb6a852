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
#
# Then OOMPolicy= (issue 28 item 2: "OOMPolicy= applies"), with a service
# of two processes in one group, its main process (sleep) and a memhog
# beside it. The kernel's OOM killer first, as the control: with
# OOMPolicy=stop systemd stops the main process at once (Result=oom-kill),
# with OOMPolicy=continue it lives. Then psi-lmkd's marked kill of the
# memhog: systemd 252 reads the marks only when the unit's group has
# emptied, so the main process lives under either policy and systemd tells
# of the kill ("systemd-oomd killed 1 process(es)") when the unit stops,
# ending it Result=oom-kill under stop, success under continue.
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

# unit_active UNIT: true while the unit is active
unit_active() { [ "$(systemctl show -p ActiveState --value "$1")" = active ]; }

# unit_pids_comm CG COMM: the pids of group CG whose comm is COMM
unit_pids_comm() {
	local p
	while read -r p; do
		[ "$(cat "/proc/$p/comm" 2>/dev/null)" = "$2" ] && echo "$p"
	done <"/sys/fs/cgroup$1/cgroup.procs"
}

# pair NAME POLICY KILLER: a service of two processes in its one group, its
# main process (sleep) and a memhog of 32 MiB beside it (started 2 s
# later, once the main process is known), with
# OOMPolicy=POLICY; KILLER psi-lmkd (systemd_oom_marks = true, min_rss = 8M
# so that memhog is the only candidate) or kernel (MemoryMax=24M: the
# kernel's OOM killer in the unit's group) kills memhog. Sets main_lives
# (yes if the main process lives 10 s after the kill, no if it was
# stopped), result (the unit's Result once it ended or was stopped) and
# said (systemd's journal line about the kill, empty if none).
pair() {
	local name=$1 policy=$2 killer=$3 unit=psi-lmkd-ur-$1-$$ cg main='' hog='' conf=$tmp/$1.conf log=$tmp/$1.log i max=128M
	units+=("$unit")
	[ "$killer" = kernel ] && max=24M
	systemd-run --quiet --unit="$unit" -p MemoryMax="$max" -p MemorySwapMax=0 -p OOMPolicy="$policy" /bin/sh -c \
		"(sleep 2; exec \"$KT_BINDIR/memhog\" 32 0 >/dev/null 2>&1) & exec sleep infinity" || kt_fail "$name: systemd-run failed"
	cg=$(systemctl show -p ControlGroup --value "$unit")
	for i in $(seq 1 100); do
		main=$(systemctl show -p MainPID --value "$unit")
		if [ -n "$main" ] && [ "$main" != 0 ] && [ "$(cat "/proc/$main/comm" 2>/dev/null)" = sleep ]; then
			[ "$killer" = kernel ] && break
			hog=$(unit_pids_comm "$cg" memhog | head -n 1)
			[ -n "$hog" ] && grep -q '^VmRSS:.*[0-9]\{5,\} kB' "/proc/$hog/status" 2>/dev/null && break
		fi
		sleep 0.1
	done
	[ "$(cat "/proc/$main/comm" 2>/dev/null)" = sleep ] || kt_fail "$name: the unit's main process is not sleep (pid '$main')"
	if [ "$killer" = psi-lmkd ]; then
		[ -n "$hog" ] || kt_fail "$name: no memhog of 10 MiB or more in $cg"
		cat >"$conf" <<EOF
[daemon]
pressure = /sys/fs/cgroup$cg/memory.pressure
scope = $cg
memory_cgroup = /sys/fs/cgroup$cg
control_socket = off
systemd_oom_marks = true
min_rss = 8M

[tier always]
low_available = 100%
hold_idle = false
min_oom_score_adj = 0
EOF
		kt_daemon_up "$conf" "$log" -v
		kt_wait_for 10 kt_pid_dead "$hog" ||
			kt_fail "$name: memhog $hog lives 10 s after the daemon started: $(tail -n 12 "$log" | tr '\n' '|')"
		grep -q -E "(^|[^[:alnum:]_-])kill pid=$hog " "$log" ||
			kt_fail "$name: memhog died, but not by psi-lmkd: $(grep 'kill pid=' "$log" | tail -n 2 | tr '\n' '|')"
		kill -TERM "$KT_DAEMON_PID" 2>/dev/null
		kt_wait_for 5 kt_pid_dead "$KT_DAEMON_PID" || kt_fail "$name: the daemon ignores SIGTERM"
		grep -q "kill pid=$main " "$log" && kt_fail "$name: psi-lmkd killed the main process too"
	else
		# the kill, or the unit already stopped by OOMPolicy=stop (its group gone)
		# shellcheck disable=SC2016 # sh's own $1
		kt_wait_for 20 sh -c 'grep -q "^oom_kill [1-9]" "$1" 2>/dev/null || [ ! -e "$1" ]' _ "/sys/fs/cgroup$cg/memory.events" ||
			kt_fail "$name: no kernel OOM kill in $cg: $(tr '\n' ' ' <"/sys/fs/cgroup$cg/memory.events")"
	fi
	main_lives=yes
	kt_wait_for 10 kt_pid_dead "$main" && main_lives=no
	unit_active "$unit" && systemctl stop "$unit"
	for i in $(seq 1 50); do
		unit_active "$unit" || break
		sleep 0.1
	done
	result=$(systemctl show -p Result --value "$unit")
	for i in $(seq 1 10); do # journald may lag
		said=$(journalctl --no-pager -o cat -u "$unit" 2>/dev/null | grep -E 'systemd-oomd killed|killed by the OOM killer' | head -n 1)
		[ -n "$said" ] && break
		sleep 0.5
	done
	kt_log "$name (OOMPolicy=$policy, killed by $killer): main process lives 10 s after: $main_lives; Result=$result; systemd: ${said:-nothing about the kill}"
}

run control false
[ "$result" = signal ] || kt_fail "control: Result=$result, not signal: the setup does not end the unit by the kill"
run marks true
[ "$result" = oom-kill ] || kt_fail "marks: Result=$result, not oom-kill (kill line: $line)"
journalctl --no-pager -u "${units[1]}" 2>/dev/null | grep -i 'killed' | tail -n 3

# OOMPolicy= with two processes. The kernel's OOM kill first: PID 1 reads
# memory.events at once, so OOMPolicy=stop stops the main process and
# OOMPolicy=continue leaves it (the setup tells the policies apart).
pair kstop stop kernel
if [ "$main_lives" != no ] || [ "$result" != oom-kill ]; then
	kt_fail "kernel, OOMPolicy=stop: main process lives=$main_lives, Result=$result (want: stopped, oom-kill)"
fi
case $said in *"killed by the OOM killer"*) ;; *) kt_fail "kernel, OOMPolicy=stop: systemd did not log the kernel's OOM kill" ;; esac
pair kcont continue kernel
[ "$main_lives" = yes ] || kt_fail "kernel, OOMPolicy=continue: the main process was stopped (Result=$result)"
# psi-lmkd's marked kill of the memhog beside the main process. systemd 252
# reads the marks only once the unit's group is empty (unit_check_oomd_kill
# runs from on_cgroup_empty_event): the main process lives under either
# policy, and the kill is told of when the unit stops (Result=oom-kill
# under stop, success under continue).
pair mstop stop psi-lmkd
[ "$main_lives" = yes ] ||
	kt_fail "marks, OOMPolicy=stop: the main process was stopped after psi-lmkd's kill (Result=$result): systemd applied OOMPolicy= at once"
[ -n "$said" ] || kt_fail "marks, OOMPolicy=stop: systemd never told of the kill, not even when the unit stopped"
[ "$result" = oom-kill ] || kt_fail "marks, OOMPolicy=stop: Result=$result once stopped, not oom-kill"
pair mcont continue psi-lmkd
[ "$main_lives" = yes ] || kt_fail "marks, OOMPolicy=continue: the main process was stopped (Result=$result)"
[ "$result" = success ] || kt_fail "marks, OOMPolicy=continue: Result=$result once stopped, not success"
echo "PASS"
exit 0
