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
# same workload. Then the same units and workloads with systemd-oomd itself,
# side by side: time from the limit crossed (avg10 of the unit's
# memory.pressure above it, read every 0.5 s here) to the kill; under
# either killer the managed unit must end Result=oom-kill and the unit
# without the settings must live (what else died).
#
# The swap part (ManagedOOMSwap=kill): a zram swap device of 256 MiB and
# oomd.conf's SwapUsedLimit=30% (a drop-in in /run/systemd/oomd.conf.d,
# read by both killers); a ballast unit holds 250 MiB resident (no swap)
# so that available memory is below 70% of the total, a bystander unit
# without the setting has 16 MiB in swap, and the managed unit grows
# 4 MiB/s over its MemoryHigh=48M into swap. Once available memory and free
# swap are both below 70% (systemd-oomd's test, read every 0.2 s here), the
# managed unit must die with Result=oom-kill, the ballast and the bystander
# must live, and the kill line must say reason=managed_oom_swap; then the
# same with systemd-oomd. Debian's systemd-oomd package sets
# ManagedOOMSwap=kill on -.slice too: both killers then choose the leaf
# group with the most swap below any such unit (the managed unit here; the
# bystander is a smaller candidate), never the biggest process (the ballast).
#
# The users part: user managers (systemd --user) report their units'
# settings to systemd-oomd's own socket, /run/systemd/oom/io.system.ManagedOOM
# (systemd-oomd.socket's, passed to psi-lmkd, or bound by it): a user
# manager started for a test user with a unit of /etc/systemd/user that has
# ManagedOOMMemoryPressure=kill and a limit must show in psi-lmkd's log under
# that user's user@UID.service, and be dropped once the manager stops.
# The runtime part: a unit's settings changed with systemctl set-property
# beyond the limit (ManagedOOMSwap=kill, ManagedOOMMemoryPressure=auto,
# ManagedOOMSwap=auto, ManagedOOMMemoryPressure=kill again) are each
# followed, in psi-lmkd's log and in its managed set (SIGUSR1's status
# lines): with both auto the unit leaves the set.
# The tiers part: psi-lmkd's shipped configuration (its own tiers on) with
# systemd_managed_oom, as the issue first tried it: a managed unit under the
# workload, with the marks off (as shipped) and on, then a unit without the
# settings; each must be killed, nothing else, its Result saying who killed.
# The userkill part (not in the default): the workload in a unit of the
# test user's manager, killed by psi-lmkd then by systemd-oomd, the user
# manager ending it Result=oom-kill under both.
# KT_MOOM_PARTS (default "pressure swap users runtime tiers") picks the parts.
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
parts=${KT_MOOM_PARTS:-pressure swap users runtime tiers}
case " $parts " in *" pressure "* | *" tiers "* | *" userkill "*) kt_disk_tmpdir 450 ;; esac
run=/run/psi-lmkd-moom-test.$$ # readable from the service's sandbox (PrivateTmp hides /tmp)
dropdir=/run/systemd/system/systemd-oomd.service.d
oomd_dropin=/run/systemd/oomd.conf.d/60-psi-lmkd-test-$$.conf
moom_user=''
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
	rm -rf "$dropdir" "$run" "$oomd_dropin"
	if [ -n "$moom_user" ]; then
		systemctl stop "user@$(id -u "$moom_user").service" 2>/dev/null
		rm -rf "/run/systemd/system/user@$(id -u "$moom_user").service.d"
		userdel -r "$moom_user" 2>/dev/null
		rm -f /etc/systemd/user/psi-lmkd-moom-u.service /etc/systemd/user/default.target.wants/psi-lmkd-moom-u.service \
			/etc/systemd/user/psi-lmkd-moom-uk.service
	fi
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
case " $parts " in *" pressure "* | *" tiers "*)
	for f in a b c; do
		"$KT_BINDIR/filepressure" "$KT_DISK_DIR/$f" 192 </dev/null >"$tmp/make-$f.out" 2>&1 &
		kt_wait_for 120 kt_file_has "$tmp/make-$f.out" ready || kt_fail "filepressure cannot make $KT_DISK_DIR/$f"
		kill "$!"
		wait "$!" 2>/dev/null
	done
esac

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

# ---- the killers
cat >"$run/psi-lmkd.conf" <<EOF2
[daemon]
systemd_managed_oom = true
control_socket = off
# the tiers of this test must not kill: only the managed units act
[tier never]
trigger = some 950000 1000000
min_oom_score_adj = 1000
EOF2
jlog() { journalctl -u systemd-oomd.service --since "$since" --no-pager -o cat 2>/dev/null; }
# shellcheck disable=SC2317 # called through kt_wait_for
has() { jlog | grep -q -- "$1"; }

# start_psi_lmkd [CONF]: psi-lmkd as systemd-oomd.service (the shipped
# drop-in, then the test's configuration, or CONF, and -v, as an admin
# would); since= its start
start_psi_lmkd() {
	sed -e "s|@sbindir@|$(dirname "$PSI_LMKD")|g" -e "s|@pkgdatadir@|/usr/share/psi-lmkd|g" -e "s|@sysconfdir@|/etc|g" \
		"$srcdir/init/systemd-oomd-psi-lmkd.conf.in" >"$dropdir/50-psi-lmkd.conf"
	printf '[Service]\nExecStart=\nExecStart=%s -f -v -c %s\n' "$PSI_LMKD" "${1:-$run/psi-lmkd.conf}" >"$dropdir/60-test.conf"
	systemctl daemon-reload
	since=$(date '+%Y-%m-%d %H:%M:%S')
	systemctl start systemd-oomd.service ||
		kt_fail "psi-lmkd as systemd-oomd.service did not start: $(journalctl -u systemd-oomd --since "$since" --no-pager | tail -n 5 | tr '\n' '|')"
	kt_wait_for 20 has "ManagedOOM: subscribed" || kt_fail "no subscription: $(jlog | tail -n 8 | tr '\n' '|')"
	jlog | grep -E "ManagedOOM|managed unit" | head -n 5
}

# start_oomd: systemd-oomd itself in its place
start_oomd() {
	systemctl stop systemd-oomd.service
	rm -f "$dropdir"/*.conf
	systemctl daemon-reload
	since=$(date '+%Y-%m-%d %H:%M:%S')
	systemctl start systemd-oomd.socket systemd-oomd.service || kt_fail "systemd-oomd did not start"
}

# ---- ManagedOOMMemoryPressure=kill: psi-lmkd, then systemd-oomd, the same unit and workload
pressure_part() {
	local a b c dur
	start_psi_lmkd
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
	jlog | grep -q "kill pid=.* tier=managed-oom .* reason=managed_oom_pressure cgroup=/system.slice/$a.service" ||
		kt_fail "no kill line with reason=managed_oom_pressure: $(jlog | grep "kill pid=" | tail -n 2 | tr '\n' '|')"
	[ -n "$crossed" ] || kt_fail "psi-lmkd: avg10 of $a was never seen above 50%"
	# 2 s of slack: this script and psi-lmkd read avg10 at different moments
	awk -v e="$ended" -v c="$crossed" -v d="$dur" 'BEGIN { exit !(e - c >= d - 2) }' ||
		kt_fail "psi-lmkd killed $(awk -v e="$ended" -v c="$crossed" 'BEGIN { print e - c }') s after the limit was crossed: sooner than the $dur s duration"
	[ "$(systemctl show -p ActiveState --value "$b")" = active ] || kt_fail "$b, without the settings, did not survive"
	jlog | grep -q "$b" && kt_fail "psi-lmkd acted on $b: $(jlog | grep "$b" | head -n 2)"
	jlog | grep "kill pid=" | grep -qv "cgroup=/system.slice/$a.service" &&
		kt_fail "psi-lmkd killed outside $a: $(jlog | grep "kill pid=" | grep -v "cgroup=/system.slice/$a.service" | head -n 2)"
	kt_log "psi-lmkd: $b (no ManagedOOM settings) left alone under the same workload; no kill outside $a"
	psi_secs=$(awk -v e="$ended" -v c="$crossed" 'BEGIN { printf "%.1f", e - c }')
	systemctl stop "$b"

	# systemd-oomd itself, the same managed unit and bystander beside it
	start_oomd
	c=psi-lmkd-moom-c-$$ b=psi-lmkd-moom-b2-$$
	workload "$c" "$KT_DISK_DIR/c" -p ManagedOOMMemoryPressure=kill -p ManagedOOMMemoryPressureLimit=50%
	workload "$b" "$KT_DISK_DIR/b"
	measure "$c" 50
	[ -n "$ended" ] || kt_skip_or_fail "systemd-oomd: $c still runs after 240 s (psi-lmkd passed: ${psi_secs} s)"
	kt_log "systemd-oomd: $c crossed at +${crossed:-?}s, ended at +${ended}s, Result=$result"
	jlog | grep -i "kill" | tail -n 3
	[ "$result" = oom-kill ] || kt_fail "systemd-oomd: $c Result=$result, not oom-kill: the comparison's reference is not what it should be"
	jlog | grep -q "^Killed /system.slice/$c.service due to memory pressure" ||
		kt_fail "systemd-oomd: $c ended, but systemd-oomd did not say it killed it: $(jlog | tail -n 4 | tr '\n' '|')"
	[ "$(systemctl show -p ActiveState --value "$b")" = active ] || kt_fail "systemd-oomd: $b, without the settings, did not survive"
	jlog | grep "^Killed " | grep -qv "^Killed /system.slice/$c.service " &&
		kt_fail "systemd-oomd killed outside $c: $(jlog | grep "^Killed " | grep -v "$c" | head -n 2)"
	kt_log "systemd-oomd: $b (no ManagedOOM settings) left alone under the same workload; no kill outside $c"
	systemctl stop "$b"
	oomd_secs=$(awk -v e="$ended" -v c="${crossed:-$ended}" 'BEGIN { printf "%.1f", e - c }')
	kt_log "limit crossed -> kill: psi-lmkd ${psi_secs} s, systemd-oomd ${oomd_secs} s; both Result=oom-kill, the bystander alive under both"
}

# swap_seen_by_daemon UNIT MEMTOTAL_KB SWAPTOTAL_KB: psi-lmkd's line that
# chose inside UNIT for its swap must give available memory and free swap
# below 70 % of these totals (SwapUsedLimit=30 %); fails otherwise.
swap_seen_by_daemon() {
	local line
	line=$(jlog | grep -m1 "ManagedOOMSwap: group [^ ]*$1[^ ]*: available memory")
	[ -n "$line" ] || kt_fail "psi-lmkd: $1 ended before the swap limit was seen crossed, and psi-lmkd's log has no swap choice for it"
	# shellcheck disable=SC2016 # awk's fields
	awk -v mt="$2" -v st="$3" '{
		for (i = 1; i < NF; i++) {
			if ($i == "memory" && $(i - 1) == "available") a = $(i + 1)
			if ($i == "swap" && $(i - 1) == "free") f = $(i + 1)
		}
		exit !(a != "" && f != "" && a * 1024 * 100 < mt * 70 && f * 1024 * 100 < st * 70)
	}' <<<"$line" || kt_fail "psi-lmkd: $1 ended before the swap limit was seen crossed, and psi-lmkd's own figures do not cross it either: $line"
	kt_log "psi-lmkd: $1 ended between two polls; its own reading crossed the limit: ${line#*: ManagedOOMSwap: }"
}

# ---- ManagedOOMSwap=kill
# swap_run KILLER UNIT: the ballast, the bystander and the managed unit
# UNIT under KILLER (psi-lmkd or systemd-oomd, already running); sets
# swap_secs (the limit crossed -> the unit's group empty). Fails when the
# unit outlives 120 s, ends other than Result=oom-kill, or something else died.
swap_run() {
	local killer=$1 unit=$2 ballast=psi-lmkd-moom-ballast-$$ by=psi-lmkd-moom-by-$$ cg t0 now crossed='' ended='' mt ma st sf
	local last=0
	units+=("$ballast" "$by" "$unit")
	systemd-run --quiet --unit="$ballast" -p MemoryMax=300M "$KT_BINDIR/memhog" 250 0 ||
		kt_fail "systemd-run $ballast failed"
	systemd-run --quiet --unit="$by" -p MemoryMax=100M "$KT_BINDIR/memhog" 16 0 pageout ||
		kt_fail "systemd-run $by failed"
	# shellcheck disable=SC2016 # awk's fields
	kt_wait_for 30 awk '$1 == "SwapFree:" { f = $2 } $1 == "SwapTotal:" { t = $2 } END { exit !(t - f > 12 * 1024) }' /proc/meminfo ||
		kt_fail "the bystander's 16 MiB did not go to swap: $(grep -E 'Swap(Total|Free)' /proc/meminfo | tr '\n' ' ')"
	systemd-run --quiet --unit="$unit" -p ManagedOOMSwap=kill -p MemoryHigh=48M -p MemoryMax=250M \
		"$KT_BINDIR/anongrow" 4 0 200 half || kt_fail "systemd-run $unit failed"
	cg=/sys/fs/cgroup$(systemctl show -p ControlGroup --value "$unit")
	t0=$(date +%s.%N)
	while :; do
		now=$(date +%s.%N)
		if ! grep -q '^populated 1' "$cg/cgroup.events" 2>/dev/null; then
			ended=$(awk -v a="$now" -v b="$t0" 'BEGIN { print a - b }')
			break
		fi
		read -r mt ma st sf < <(awk '$1 == "MemTotal:" { mt = $2 } $1 == "MemAvailable:" { ma = $2 }
			$1 == "SwapTotal:" { st = $2 } $1 == "SwapFree:" { sf = $2 } END { print mt, ma, st, sf }' /proc/meminfo)
		if [ -z "$crossed" ] && [ $((ma * 100 < mt * 70 && sf * 100 < st * 70)) = 1 ]; then
			crossed=$(awk -v a="$now" -v b="$t0" 'BEGIN { print a - b }')
			kt_log "$killer: available $((ma / 1024)) of $((mt / 1024)) MiB, swap free $((sf / 1024)) of $((st / 1024)) MiB: both below 70% at +${crossed}s"
		fi
		[ -z "$crossed" ] && last=$(awk -v a="$now" -v b="$t0" 'BEGIN { print a - b }')
		awk -v a="$now" -v b="$t0" 'BEGIN { exit !(a - b > 120) }' && break
		sleep 0.2
	done
	[ -n "$ended" ] || kt_fail "$killer: $unit still runs after 120 s (crossed: ${crossed:-never}): $(jlog | tail -n 6 | tr '\n' '|')"
	# a poll here takes ~0.5 s under TCG: a killer that checks more often
	# may act between two; the last poll that saw the limit not crossed then
	# bounds the time from above. psi-lmkd checks once a second, so it too
	# can act between two polls; it says in its log what it saw, and those
	# figures must show the limit crossed.
	if [ -z "$crossed" ]; then
		[ "$killer" = psi-lmkd ] && swap_seen_by_daemon "$unit" "$mt" "$st"
		crossed=$last
		kt_log "$killer: $unit ended at +${ended}s, between two polls: the limit was not crossed yet at +${last}s"
	fi
	for _ in $(seq 1 20); do
		[ "$(systemctl show -p ActiveState --value "$unit")" != active ] && break
		sleep 0.5
	done
	result=$(systemctl show -p Result --value "$unit")
	swap_secs=$(awk -v e="$ended" -v c="$crossed" 'BEGIN { printf "%.1f", e - c }')
	kt_log "$killer: $unit crossed at +${crossed}s, ended at +${ended}s (${swap_secs} s), Result=$result"
	[ "$result" = oom-kill ] || kt_fail "$killer: $unit Result=$result, not oom-kill"
	for u in "$ballast" "$by"; do
		[ "$(systemctl show -p ActiveState --value "$u")" = active ] || kt_fail "$killer: $u, without ManagedOOMSwap=kill, died"
	done
	kt_log "$killer: the ballast (250 MiB resident) and the bystander (16 MiB in swap), without ManagedOOMSwap=kill, live"
	systemctl stop "$ballast" "$by" "$unit" 2>/dev/null
	systemctl reset-failed "$unit" 2>/dev/null
}

swap_part() {
	local d e
	kt_zram_add 256M 256M
	kt_log "zram$KT_ZDEV: 256 MiB swap; other swap: $(awk 'NR > 1 && $1 != "'"$KT_ZDEVNODE"'" { print $1 }' /proc/swaps | tr '\n' ' ')"
	mkdir -p "${oomd_dropin%/*}"
	printf '[OOM]\nSwapUsedLimit=30%%\n' >"$oomd_dropin"
	start_psi_lmkd
	kt_wait_for 10 has "SwapUsedLimit=30.00%" || kt_fail "psi-lmkd did not read SwapUsedLimit=30%: $(jlog | grep oomd.conf | tail -n 1)"
	d=psi-lmkd-moom-d-$$
	swap_run psi-lmkd "$d"
	jlog | grep -E "managed unit|kill pid=" | tail -n 3
	jlog | grep -q "kill pid=.* tier=managed-oom .* reason=managed_oom_swap cgroup=/system.slice/$d.service" ||
		kt_fail "no kill line with reason=managed_oom_swap in $d: $(jlog | grep "kill pid=" | tail -n 2 | tr '\n' '|')"
	psi_swap=$swap_secs
	start_oomd
	e=psi-lmkd-moom-e-$$
	swap_run systemd-oomd "$e"
	journalctl -u systemd-oomd.service --since "$since" --no-pager -o cat | grep -i "kill" | tail -n 2
	kt_log "swap limit crossed -> kill: psi-lmkd ${psi_swap} s (Result=oom-kill), systemd-oomd ${swap_secs} s (Result=$result)"
	systemctl stop systemd-oomd.service systemd-oomd.socket
	rm -f "$oomd_dropin"
	# the pressure part needs no swap: with it, the unit's growth goes to zram and nothing stalls
	kt_zram_remove || kt_fail "the zram device could not be removed"
}

# ---- the user managers' units
users_part() {
	local uid prefix
	command -v useradd >/dev/null || kt_skip_or_fail "no useradd"
	moom_user=psilmkdmoom$$
	useradd -m "$moom_user" || kt_fail "useradd $moom_user failed"
	uid=$(id -u "$moom_user")
	mkdir -p /etc/systemd/user/default.target.wants
	printf '[Service]\nExecStart=/bin/sleep infinity\nManagedOOMMemoryPressure=kill\nManagedOOMMemoryPressureLimit=42%%\n' \
		>/etc/systemd/user/psi-lmkd-moom-u.service
	ln -sf ../psi-lmkd-moom-u.service /etc/systemd/user/default.target.wants/psi-lmkd-moom-u.service
	# what pam_systemd would set (the VM image has no libpam-systemd)
	if [ ! -e /lib/security/pam_systemd.so ] && [ ! -e /lib/x86_64-linux-gnu/security/pam_systemd.so ]; then
		mkdir -p "/run/systemd/system/user@$uid.service.d"
		printf '[Service]\nEnvironment=XDG_RUNTIME_DIR=/run/user/%s\n' "$uid" \
			>"/run/systemd/system/user@$uid.service.d/50-psi-lmkd-test.conf"
		systemctl daemon-reload
	fi
	start_psi_lmkd
	kt_wait_for 10 has "ManagedOOM: listening for the user managers" ||
		kt_fail "psi-lmkd does not listen for the user managers: $(jlog | grep -i "user managers" | tail -n 2)"
	jlog | grep "listening for the user managers"
	systemctl start "user@$uid.service" || kt_fail "user@$uid.service did not start"
	prefix=/user.slice/user-$uid.slice/user@$uid.service/
	kt_wait_for 30 has "managed unit $prefix.*psi-lmkd-moom-u.service: ManagedOOMMemoryPressure=kill, limit 42.00%" ||
		kt_fail "the user manager's unit did not arrive: $(jlog | tail -n 6 | tr '\n' '|')"
	jlog | grep -E "user manager|managed unit $prefix" | head -n 4
	kt_log "users: the user manager of uid $uid reported psi-lmkd-moom-u.service (ManagedOOMMemoryPressureLimit=42%)"
	systemctl stop "user@$uid.service"
	kt_wait_for 15 has "managed unit $prefix.*psi-lmkd-moom-u.service: \(ManagedOOMMemoryPressure=auto\|its group is gone\)" ||
		kt_fail "the stopped user manager's unit was not dropped: $(jlog | tail -n 6 | tr '\n' '|')"
	kt_log "users: dropped when the user manager stopped"
	systemctl stop systemd-oomd.service
}

# ---- settings changed at runtime beyond the limit: ManagedOOMSwap toggled,
# ManagedOOMMemoryPressure=auto, each followed in psi-lmkd's log and in its
# managed set (the status lines SIGUSR1 logs)

# status_of UNIT: psi-lmkd's status line for UNIT (empty if it is not
# managed) from a fresh SIGUSR1 status
status_of() {
	local n
	n=$(jlog | grep -c "^status managed_oom connected=")
	systemctl kill -s USR1 --kill-who=main systemd-oomd.service || kt_fail "cannot send SIGUSR1 to psi-lmkd"
	# shellcheck disable=SC2016 # awk's fields
	kt_wait_for 10 sh -c '[ "$(journalctl -u systemd-oomd.service --since "$1" --no-pager -o cat | grep -c "^status managed_oom connected=")" -gt "$2" ]' \
		_ "$since" "$n" || kt_fail "psi-lmkd logged no status after SIGUSR1"
	# the last status, once its unit lines (as many as its summary counts) are in
	kt_wait_for 10 status_complete || kt_fail "psi-lmkd's status lacks unit lines: $(last_status | tr '\n' '|')"
	last_status | grep "^status managed_unit=/system.slice/$1.service "
}
last_status() {
	jlog | awk '/^status managed_oom connected=/ { n++ } { l[NR] = $0; c[NR] = n } END { for (i = 1; i <= NR; i++) if (c[i] == n) print l[i] }'
}
# shellcheck disable=SC2317 # called through kt_wait_for
status_complete() {
	last_status | awk '/^status managed_oom connected=/ { for (i = 1; i <= NF; i++) if ($i ~ /^units=/) want += substr($i, 7) }
		/^status managed_oom_users / { for (i = 1; i <= NF; i++) if ($i ~ /^user_units=/) want += substr($i, 12); users = 1 }
		/^status managed_unit=/ { have++ }
		END { exit !(users && have >= want) }'
}

# follow UNIT PROP=VALUE LOGLINE: set-property, then psi-lmkd's log line
follow() {
	systemctl set-property --runtime "$1" "$2" || kt_fail "set-property $1 $2 failed"
	kt_wait_for 20 has "managed unit /system.slice/$1.service: $3" ||
		kt_fail "set-property $2 was not followed: $(jlog | tail -n 5 | tr '\n' '|')"
}

runtime_part() {
	local r=psi-lmkd-moom-r-$$ st
	start_psi_lmkd
	units+=("$r")
	systemd-run --quiet --unit="$r" -p ManagedOOMMemoryPressure=kill -p ManagedOOMMemoryPressureLimit=70% /bin/sleep infinity ||
		kt_fail "systemd-run $r failed"
	kt_wait_for 20 has "managed unit /system.slice/$r.service: ManagedOOMMemoryPressure=kill, limit 70.00%" ||
		kt_fail "the unit's settings did not arrive: $(jlog | tail -n 5 | tr '\n' '|')"
	st=$(status_of "$r")
	case $st in *" pressure=kill limit=70.00% "*" swap=auto") ;; *) kt_fail "status after start: '$st'" ;; esac
	follow "$r" ManagedOOMSwap=kill "ManagedOOMSwap=kill"
	st=$(status_of "$r")
	case $st in *" pressure=kill limit=70.00% "*" swap=kill") ;; *) kt_fail "status after ManagedOOMSwap=kill: '$st'" ;; esac
	follow "$r" ManagedOOMMemoryPressure=auto "ManagedOOMMemoryPressure=auto"
	st=$(status_of "$r")
	case $st in *" pressure=auto "*" swap=kill") ;; *) kt_fail "status after ManagedOOMMemoryPressure=auto: '$st'" ;; esac
	follow "$r" ManagedOOMSwap=auto "ManagedOOMSwap=auto"
	st=$(status_of "$r")
	[ -z "$st" ] || kt_fail "with both settings auto, $r is still managed: '$st'"
	kt_log "runtime: ManagedOOMSwap=kill, ManagedOOMMemoryPressure=auto, ManagedOOMSwap=auto followed; with both auto the unit left the managed set"
	follow "$r" ManagedOOMMemoryPressure=kill "ManagedOOMMemoryPressure=kill, limit 70.00%"
	st=$(status_of "$r")
	case $st in *" pressure=kill limit=70.00% "*" swap=auto") ;; *) kt_fail "status after ManagedOOMMemoryPressure=kill again: '$st'" ;; esac
	kt_log "runtime: ManagedOOMMemoryPressure=kill again: managed again, limit 70%"
	systemctl stop "$r"
	kt_wait_for 15 has "managed unit /system.slice/$r.service: \(ManagedOOMMemoryPressure=auto\|its group is gone\)" ||
		kt_fail "the stopped unit was not dropped: $(jlog | tail -n 4 | tr '\n' '|')"
	systemctl stop systemd-oomd.service
}

# ---- psi-lmkd's shipped tiers on (the issue's first try): its own tiers
# and the managed units side by side. A managed unit under the workload,
# with systemd_oom_marks as shipped (false) and then true; then a unit
# without the settings under the same workload. Whoever kills first, the
# unit must end, nothing outside it may die, and its Result must say who
# killed: oom-kill after the managed-oom tier (marks always on there) or
# after an own tier with the marks on, signal after an own tier without them.

# tiers_run UNIT FILE MARKS [PROPS...]: the unit under psi-lmkd with the
# shipped configuration plus systemd_managed_oom (and MARKS); sets tier
# (the tier of the first kill in the unit), result
tiers_run() {
	local unit=$1 file=$2 marks=$3 line outside
	shift 3
	sed -e "/^\[daemon\]$/a systemd_managed_oom = true\ncontrol_socket = off\nsystemd_oom_marks = $marks" \
		"$srcdir/conf/psi-lmkd.conf" >"$run/shipped.conf"
	start_psi_lmkd "$run/shipped.conf"
	kt_wait_for 10 has "tier critical" || kt_fail "psi-lmkd did not set up the shipped tiers: $(jlog | head -n 12 | tr '\n' '|')"
	workload "$unit" "$file" "$@"
	measure "$unit" 50
	[ -n "$ended" ] || kt_fail "tiers on: $unit still runs after 240 s: $(jlog | tail -n 8 | tr '\n' '|')"
	line=$(jlog | grep -m1 "kill pid=.* cgroup=/system.slice/$unit.service")
	[ -n "$line" ] || kt_fail "tiers on: $unit ended, but psi-lmkd did not kill in it: $(jlog | tail -n 6 | tr '\n' '|')"
	tier=$(sed -n 's/.* tier=\([^ ]*\) .*/\1/p' <<<"$line")
	outside=$(jlog | grep "kill pid=" | grep -v "cgroup=/system.slice/$unit.service")
	[ -z "$outside" ] || kt_fail "tiers on: psi-lmkd killed outside $unit: $(head -n 2 <<<"$outside")"
	kt_log "tiers on (systemd_oom_marks = $marks): $unit ${crossed:+crossed 50% at +${crossed}s, }ended at +${ended}s after its start, first kill by tier $tier, $(jlog | grep -c "kill pid=") kill(s), Result=$result"
	jlog | grep -E "managed unit /system.slice/$unit|kill pid=|fired|firing" | head -n 6
	systemctl stop systemd-oomd.service
	systemctl reset-failed "$unit" 2>/dev/null
}

tiers_part() {
	local m=psi-lmkd-moom-m-$$ k=psi-lmkd-moom-k-$$ n=psi-lmkd-moom-n-$$
	tiers_run "$m" "$KT_DISK_DIR/a" false -p ManagedOOMMemoryPressure=kill -p ManagedOOMMemoryPressureLimit=50%
	case $tier in
	managed-oom) [ "$result" = oom-kill ] || kt_fail "tiers on: $m killed by the managed-oom tier, Result=$result" ;;
	*) [ "$result" = signal ] || kt_fail "tiers on, no marks: $m killed by tier $tier, Result=$result (want signal)" ;;
	esac
	tiers_run "$k" "$KT_DISK_DIR/b" true -p ManagedOOMMemoryPressure=kill -p ManagedOOMMemoryPressureLimit=50%
	[ "$result" = oom-kill ] || kt_fail "tiers on, marks on: $k killed by tier $tier, Result=$result (want oom-kill)"
	tiers_run "$n" "$KT_DISK_DIR/c" false
	[ "$tier" != managed-oom ] || kt_fail "tiers on: $n, without the settings, was killed by the managed-oom tier"
	[ "$result" = signal ] || kt_fail "tiers on: $n killed by tier $tier, Result=$result (want signal)"
	kt_log "tiers on: the unit without settings was killed by psi-lmkd's own tier $tier"
}

# ---- a real kill in a user manager's unit: the workload in a unit of the
# test user's manager (user@UID.service) with ManagedOOMMemoryPressure=kill,
# under psi-lmkd, then under systemd-oomd: each must kill it, no sooner than
# the duration for psi-lmkd, and the user manager must end it Result=oom-kill.

# uctl ARGS...: systemctl --user of the test user's manager (its private socket)
uctl() { runuser -u "$moom_user" -- env XDG_RUNTIME_DIR="/run/user/$(id -u "$moom_user")" systemctl --user "$@"; }

# user_setup: the test user (once), pam_systemd's XDG_RUNTIME_DIR, sets uid
user_setup() {
	command -v useradd >/dev/null || kt_skip_or_fail "no useradd"
	command -v runuser >/dev/null || kt_skip_or_fail "no runuser"
	if [ -z "$moom_user" ]; then
		moom_user=psilmkdmoom$$
		useradd -m "$moom_user" || kt_fail "useradd $moom_user failed"
	fi
	uid=$(id -u "$moom_user")
	# what pam_systemd would set (the VM image has no libpam-systemd)
	if [ ! -e /lib/security/pam_systemd.so ] && [ ! -e /lib/x86_64-linux-gnu/security/pam_systemd.so ]; then
		mkdir -p "/run/systemd/system/user@$uid.service.d"
		printf '[Service]\nEnvironment=XDG_RUNTIME_DIR=/run/user/%s\n' "$uid" \
			>"/run/systemd/system/user@$uid.service.d/50-psi-lmkd-test.conf"
		systemctl daemon-reload
	fi
}

# userkill_run KILLER: sets user_secs (limit crossed -> group empty),
# user_result (the user manager's "Failed with result" line)
userkill_run() {
	local killer=$1 u=psi-lmkd-moom-uk.service cg t0 now avg crossed='' ended='' dur=20 _
	systemctl start "user@$uid.service" || kt_fail "user@$uid.service did not start"
	uctl start "$u" || kt_fail "$killer: systemctl --user start $u failed"
	sleep 1
	[ "$(uctl show -p ActiveState --value "$u")" = active ] ||
		kt_fail "$killer: the user's $u did not start: $(journalctl --no-pager -o cat USER_UNIT="$u" --since "$since" | tail -n 3 | tr '\n' '|')"
	cg=/sys/fs/cgroup$(uctl show -p ControlGroup --value "$u")
	[ -d "$cg" ] || kt_fail "$killer: no group for the user's $u ($cg)"
	grep -qw memory "${cg%/*}/cgroup.subtree_control" || kt_skip_or_fail "the user manager has no memory controller for $u"
	if [ "$killer" = psi-lmkd ]; then
		kt_wait_for 30 has "managed unit ${cg#/sys/fs/cgroup}: ManagedOOMMemoryPressure=kill, limit 50.00%" ||
			kt_fail "psi-lmkd: the user's unit did not arrive: $(jlog | tail -n 5 | tr '\n' '|')"
		dur=$(jlog | sed -n "s|^managed unit ${cg#/sys/fs/cgroup}: ManagedOOMMemoryPressure=kill, limit 50.00%, for \([0-9]*\) s.*|\1|p" | tail -n 1)
	fi
	t0=$(date +%s.%N)
	while :; do
		now=$(date +%s.%N)
		if ! grep -q '^populated 1' "$cg/cgroup.events" 2>/dev/null; then
			ended=$(awk -v a="$now" -v b="$t0" 'BEGIN { print a - b }')
			break
		fi
		avg=$(sed -n 's/^some avg10=\([0-9.]*\).*/\1/p' "$cg/memory.pressure" 2>/dev/null)
		if [ -z "$crossed" ] && [ -n "$avg" ] && awk -v a="$avg" 'BEGIN { exit !(a > 50) }'; then
			crossed=$(awk -v a="$now" -v b="$t0" 'BEGIN { print a - b }')
			kt_log "$killer: the user's $u: avg10 $avg% above 50% at +${crossed}s"
		fi
		awk -v a="$now" -v b="$t0" 'BEGIN { exit !(a - b > 240) }' && break
		sleep 0.5
	done
	[ -n "$ended" ] || kt_fail "$killer: the user's $u still runs after 240 s: $(jlog | tail -n 6 | tr '\n' '|')"
	# from the journal: without a session the user manager may exit as soon as its unit ended
	user_result=''
	for _ in $(seq 1 20); do
		user_result=$(journalctl --no-pager -o cat USER_UNIT="$u" --since "$since" 2>/dev/null |
			sed -n "s/^$u: Failed with result '\([^']*\)'.*/\1/p" | tail -n 1)
		[ -n "$user_result" ] && break
		sleep 0.5
	done
	user_secs=$(awk -v e="$ended" -v c="${crossed:-$ended}" 'BEGIN { printf "%.1f", e - c }')
	kt_log "$killer: the user's $u crossed at +${crossed:-?}s, ended at +${ended}s (${user_secs} s), Result=$user_result"
	journalctl --no-pager -o cat USER_UNIT="$u" --since "$since" 2>/dev/null | grep -i "killed" | tail -n 2
	[ "$user_result" = oom-kill ] || kt_fail "$killer: the user's $u Result=$user_result, not oom-kill"
	[ -n "$crossed" ] || kt_fail "$killer: avg10 of the user's $u was never seen above 50%"
	if [ "$killer" = psi-lmkd ]; then
		jlog | grep -q "kill pid=.* tier=managed-oom .* reason=managed_oom_pressure cgroup=${cg#/sys/fs/cgroup}" ||
			kt_fail "psi-lmkd: no managed kill line in the user's $u: $(jlog | grep "kill pid=" | tail -n 2 | tr '\n' '|')"
		awk -v e="$ended" -v c="$crossed" -v d="$dur" 'BEGIN { exit !(e - c >= d - 2) }' ||
			kt_fail "psi-lmkd killed the user's $u ${user_secs} s after the limit was crossed: sooner than the $dur s duration"
	else
		jlog | grep -q "^Killed ${cg#/sys/fs/cgroup} due to memory pressure" ||
			kt_fail "systemd-oomd: it did not say it killed the user's $u: $(jlog | grep -i kill | tail -n 2 | tr '\n' '|')"
	fi
	systemctl stop "user@$uid.service"
}

userkill_part() {
	local uid psi_user
	user_setup
	mkdir -p /etc/systemd/user
	chmod 711 "$KT_DISK_DIR"
	install -d -o "$moom_user" -m 700 "$KT_DISK_DIR/u"
	runuser -u "$moom_user" -- "$KT_BINDIR/filepressure" "$KT_DISK_DIR/u/f" 192 </dev/null >"$tmp/make-u.out" 2>&1 &
	kt_wait_for 120 kt_file_has "$tmp/make-u.out" ready || kt_fail "filepressure cannot make $KT_DISK_DIR/u/f as $moom_user"
	kill "$!"
	wait "$!" 2>/dev/null
	# oom_score_adj 200: a user may not lower the 100 its manager's services start with
	printf '[Service]\nExecStart=/bin/sh -c %s\nMemoryHigh=64M\nMemoryMax=200M\nManagedOOMMemoryPressure=kill\nManagedOOMMemoryPressureLimit=50%%\n' \
		"'\"$KT_BINDIR/filepressure\" \"$KT_DISK_DIR/u/f\" 192 200 >/dev/null & exec \"$KT_BINDIR/anongrow\" 2 200 120 >/dev/null'" \
		>/etc/systemd/user/psi-lmkd-moom-uk.service
	start_psi_lmkd
	userkill_run psi-lmkd
	psi_user=$user_secs
	systemctl stop systemd-oomd.service
	start_oomd
	userkill_run systemd-oomd
	kt_log "the user's unit, limit crossed -> kill: psi-lmkd ${psi_user} s, systemd-oomd ${user_secs} s; both Result=oom-kill"
	rm -f /etc/systemd/user/psi-lmkd-moom-uk.service
	systemctl stop systemd-oomd.service systemd-oomd.socket
}

for part in $parts; do
	case $part in
	pressure) pressure_part ;;
	swap) swap_part ;;
	users) users_part ;;
	runtime) runtime_part ;;
	tiers) tiers_part ;;
	userkill) userkill_part ;;
	*) kt_fail "unknown part '$part' in KT_MOOM_PARTS" ;;
	esac
	systemctl stop systemd-oomd.service 2>/dev/null
done
echo "PASS"
exit 0
