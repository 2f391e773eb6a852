#!/bin/bash
# SPDX-License-Identifier: MIT
# test-managed-oom.sh - psi-lmkd in place of systemd-oomd (issue 28 item 1):
# with systemd_managed_oom = true, running as systemd-oomd.service through
# the shipped drop-in (init/systemd-oomd-psi-lmkd.conf.in; PID 1 hands the
# units' ManagedOOM settings only to that unit), it follows a unit's
# settings changed at runtime, kills in a unit with
# ManagedOOMMemoryPressure=kill whose memory.pressure stays above the limit
# for the duration (oomd.conf's: systemd 252 has no DurationSec), no sooner, with
# Result=oom-kill, and leaves alone a unit without the settings under the
# same workload. Then the same unit and workload with systemd-oomd itself,
# side by side: time from the limit crossed (avg10 of the unit's
# memory.pressure above it, read every 0.5 s here) to the kill.
#
# Needs systemd as PID 1 on pure cgroup v2 and systemd-oomd's unit file:
# the VM matrix runs it (tests/vm/run-matrix); elsewhere it skips and is
# not part of make check. Workload (the issue's setup): a unit with
# MemoryHigh=64M thrashing a 192 MiB file on disk while it grows.
# Exit: 0 pass, 1 fail, 77 skip.

set -u

srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$srcdir/tests/kernel/lib.sh" || { echo "cannot source $srcdir/tests/kernel/lib.sh" >&2; exit 99; }

kt_require_root_and_psi
[ "$(cat /proc/1/comm 2>/dev/null)" = systemd ] || kt_skip "PID 1 is not systemd (runs in the VM matrix)"
[ "$(stat -fc %T /sys/fs/cgroup 2>/dev/null)" = cgroup2fs ] || kt_skip "not pure cgroup v2 (runs in the VM matrix)"
command -v systemd-run >/dev/null || kt_skip "no systemd-run"
systemctl cat systemd-oomd.service >/dev/null 2>&1 ||
	[ -e /lib/systemd/system/systemd-oomd.service ] || kt_skip "no systemd-oomd.service unit file (Debian: systemd-oomd)"
kt_install_traps
tmp=$(kt_tmpdir)
kt_disk_tmpdir 450
run=/run/psi-lmkd-moom-test.$$ # readable from the service's sandbox (PrivateTmp hides /tmp)
dropdir=/run/systemd/system/systemd-oomd.service.d
units=()
masked=''
# shellcheck disable=SC2317 # trap
moom_cleanup() {
	local u
	for u in "${units[@]}"; do
		systemctl stop "$u" 2>/dev/null
		systemctl reset-failed "$u" 2>/dev/null
	done
	systemctl stop systemd-oomd.service systemd-oomd.socket 2>/dev/null
	rm -rf "$dropdir" "$run"
	systemctl daemon-reload
	[ -n "$masked" ] && systemctl mask systemd-oomd.service systemd-oomd.socket >/dev/null 2>&1
	systemctl reset-failed systemd-oomd.service 2>/dev/null
}
trap 'moom_cleanup; kt_cleanup' EXIT
mkdir -p "$run" "$dropdir"
if [ "$(systemctl is-enabled systemd-oomd.service 2>/dev/null)" = masked ]; then
	masked=1
	systemctl unmask systemd-oomd.service systemd-oomd.socket >/dev/null 2>&1
fi

# the workload's files, made once (filepressure writes them on first use)
for f in a b c; do
	"$KT_BINDIR/filepressure" "$KT_DISK_DIR/$f" 192 </dev/null >"$tmp/make-$f.out" 2>&1 &
	kt_wait_for 120 kt_file_has "$tmp/make-$f.out" ready || kt_fail "filepressure cannot make $KT_DISK_DIR/$f"
	kill "$!"
	wait "$!" 2>/dev/null
done

# workload UNIT FILE [PROPS...]: a unit that thrashes a file while it
# grows: filepressure reads 192 MiB through 64 MiB (MemoryHigh), anongrow
# adds 2 MiB/s of anonymous memory up to 120 MiB, which without swap the
# kernel cannot reclaim: over MemoryHigh it throttles the unit, a stall
# PSI counts. MemoryMax=200M keeps the kernel's OOM killer out of it.
workload() {
	local unit=$1 file=$2
	shift 2
	units+=("$unit")
	systemd-run --quiet --unit="$unit" -p MemoryHigh=64M -p MemoryMax=200M "$@" /bin/sh -c \
		"\"$KT_BINDIR/filepressure\" \"$file\" 192 0 >/dev/null & exec \"$KT_BINDIR/anongrow\" 2 0 120 >/dev/null" ||
		kt_fail "systemd-run $unit failed"
}

# measure UNIT LIMIT: waits for the unit's group to empty (at most 240 s);
# sets crossed (s since start when its avg10 first went above LIMIT %),
# ended (when its group emptied, "" if it did not), result. Reads files
# only: systemctl is slow under TCG.
measure() {
	local unit=$1 limit=$2 cg t0 now avg _
	cg=/sys/fs/cgroup$(systemctl show -p ControlGroup --value "$unit")
	t0=$(date +%s.%N)
	crossed='' ended=''
	while :; do
		now=$(date +%s.%N)
		if ! grep -q '^populated 1' "$cg/cgroup.events" 2>/dev/null; then
			ended=$(awk -v a="$now" -v b="$t0" 'BEGIN { print a - b }')
			break
		fi
		avg=$(sed -n 's/^some avg10=\([0-9.]*\).*/\1/p' "$cg/memory.pressure" 2>/dev/null)
		if [ -z "$crossed" ] && [ -n "$avg" ] && awk -v a="$avg" -v l="$limit" 'BEGIN { exit !(a > l) }'; then
			crossed=$(awk -v a="$now" -v b="$t0" 'BEGIN { print a - b }')
			kt_log "$unit: avg10 $avg% above $limit% at +${crossed}s"
		fi
		awk -v a="$now" -v b="$t0" 'BEGIN { exit !(a - b > 240) }' && break
		sleep 0.5
	done
	for _ in $(seq 1 20); do
		[ "$(systemctl show -p ActiveState --value "$unit")" != active ] && break
		sleep 0.5
	done
	result=$(systemctl show -p Result --value "$unit")
}

# ---- psi-lmkd as systemd-oomd.service
cat >"$run/psi-lmkd.conf" <<EOF2
[daemon]
systemd_managed_oom = true
control_socket = off
# the tiers of this test must not kill: only the managed units act
[tier never]
trigger = some 950000 1000000
min_oom_score_adj = 1000
EOF2
sed -e "s|@sbindir@|$(dirname "$PSI_LMKD")|g" -e "s|@pkgdatadir@|/usr/share/psi-lmkd|g" -e "s|@sysconfdir@|/etc|g" \
	"$srcdir/init/systemd-oomd-psi-lmkd.conf.in" >"$dropdir/50-psi-lmkd.conf"
# the test's configuration and -v: a second drop-in, as an admin would
printf '[Service]\nExecStart=\nExecStart=%s -f -v -c %s\n' "$PSI_LMKD" "$run/psi-lmkd.conf" >"$dropdir/60-test.conf"
systemctl daemon-reload
since=$(date '+%Y-%m-%d %H:%M:%S')
systemctl start systemd-oomd.service || kt_fail "psi-lmkd as systemd-oomd.service did not start: $(journalctl -u systemd-oomd --since "$since" --no-pager | tail -n 5 | tr '\n' '|')"
jlog() { journalctl -u systemd-oomd.service --since "$since" --no-pager -o cat 2>/dev/null; }
has() { jlog | grep -q -- "$1"; }
kt_wait_for 20 has "ManagedOOM: subscribed" || kt_fail "no subscription: $(jlog | tail -n 8 | tr '\n' '|')"
jlog | grep -E "ManagedOOM|managed unit" | head -n 5

a=psi-lmkd-moom-a-$$ b=psi-lmkd-moom-b-$$
workload "$a" "$KT_DISK_DIR/a" -p ManagedOOMMemoryPressure=kill -p ManagedOOMMemoryPressureLimit=90%
kt_wait_for 20 has "managed unit /system.slice/$a.service: ManagedOOMMemoryPressure=kill, limit 90.00%" ||
	kt_fail "the unit's settings did not arrive: $(jlog | tail -n 5 | tr '\n' '|')"
systemctl set-property --runtime "$a" ManagedOOMMemoryPressureLimit=50%
kt_wait_for 20 has "managed unit /system.slice/$a.service: ManagedOOMMemoryPressure=kill, limit 50.00%" ||
	kt_fail "set-property was not followed: $(jlog | tail -n 5 | tr '\n' '|')"
kt_log "set-property followed: limit 90% -> 50%"
# the duration: oomd.conf's DefaultMemoryPressureDurationSec (systemd 252
# sends none; Debian's systemd-oomd package sets 20 s, systemd's default 30 s)
dur=$(jlog | sed -n "s|^managed unit /system.slice/$a.service: ManagedOOMMemoryPressure=kill, limit 50.00%, for \([0-9]*\) s.*|\1|p" | tail -n 1)
[ -n "$dur" ] || kt_fail "no duration in the unit's line"
kt_log "duration (oomd.conf): $dur s"
workload "$b" "$KT_DISK_DIR/b"
measure "$a" 50
[ -n "$ended" ] || kt_fail "psi-lmkd: $a still runs after 240 s: $(jlog | tail -n 8 | tr '\n' '|')"
kt_log "psi-lmkd: $a crossed at +${crossed:-?}s, ended at +${ended}s, Result=$result"
jlog | grep -E "managed unit|kill pid=|killed" | tail -n 4
jlog | grep -q "managed unit /system.slice/$a.service: memory pressure avg10 .* above ManagedOOMMemoryPressureLimit 50.00% for $dur s" ||
	kt_fail "$a ended, but not by a managed kill: $(jlog | tail -n 6 | tr '\n' '|')"
[ "$result" = oom-kill ] || kt_fail "psi-lmkd: $a Result=$result, not oom-kill"
[ -n "$crossed" ] || kt_fail "psi-lmkd: avg10 of $a was never seen above 50%"
# 2 s of slack: this script and psi-lmkd read avg10 at different moments
awk -v e="$ended" -v c="$crossed" -v d="$dur" 'BEGIN { exit !(e - c >= d - 2) }' ||
	kt_fail "psi-lmkd killed $(awk -v e="$ended" -v c="$crossed" 'BEGIN { print e - c }') s after the limit was crossed: sooner than the $dur s duration"
[ "$(systemctl show -p ActiveState --value "$b")" = active ] || kt_fail "$b, without the settings, did not survive"
jlog | grep -q "$b" && kt_fail "psi-lmkd acted on $b: $(jlog | grep "$b" | head -n 2)"
kt_log "psi-lmkd: $b (no ManagedOOM settings) left alone under the same workload"
psi_secs=$(awk -v e="$ended" -v c="$crossed" 'BEGIN { printf "%.1f", e - c }')
systemctl stop "$b"

# ---- systemd-oomd itself, the same unit and workload
systemctl stop systemd-oomd.service
rm -f "$dropdir"/*.conf
systemctl daemon-reload
systemctl start systemd-oomd.socket systemd-oomd.service || kt_fail "systemd-oomd did not start"
c=psi-lmkd-moom-c-$$
workload "$c" "$KT_DISK_DIR/c" -p ManagedOOMMemoryPressure=kill -p ManagedOOMMemoryPressureLimit=50%
measure "$c" 50
[ -n "$ended" ] || kt_skip_or_fail "systemd-oomd: $c still runs after 240 s (psi-lmkd passed: ${psi_secs} s)"
kt_log "systemd-oomd: $c crossed at +${crossed:-?}s, ended at +${ended}s, Result=$result"
journalctl -u systemd-oomd.service --since "$since" --no-pager -o cat | grep -i "kill" | tail -n 3
oomd_secs=$(awk -v e="$ended" -v c="${crossed:-$ended}" 'BEGIN { printf "%.1f", e - c }')
kt_log "limit crossed -> kill: psi-lmkd ${psi_secs} s (Result=oom-kill), systemd-oomd ${oomd_secs} s (Result=$result)"
echo "PASS"
exit 0
