#!/bin/bash
# SPDX-License-Identifier: MIT
# scenario.sh MODE - psi-lmkd system-wide, as installed, against a runaway
# (issue 26, item 4). Runs inside a test guest (tests/vm/guest/run.sh).
#
# The package from /vmwork/deb is installed with dpkg -i (once per boot):
# its unit starts the daemon on the shipped /etc/psi-lmkd.conf, untouched
# (/proc/pressure/memory, scope /). Then a desktop-like set runs, each a
# copy of tests/kernel/memhog named for its part: an editor (adj 0), a sound
# server (adj 200), a renderer (adj 300); and a runaway (anongrow, adj 0)
# grows its anonymous memory fast until something kills it. MODE is the
# swap: none, disk (the host's swap disk, LABEL=psivmswap) or zram (512 MiB,
# as zram-generator gives a 1 GiB machine).
#
# Pass: the runaway dies, killed by psi-lmkd (a "kill pid=" line naming it
# in the unit's journal); the editor, the sound server and the renderer
# live; the kernel's OOM killer killed nothing (/proc/vmstat oom_kill and
# dmesg). Prints "figure NAME VALUE" lines the host collects.
# Exit: 0 pass, 1 fail, 77 skip (a lack of the guest kernel only).
set -u
mode=${1:-none}
W=/vmwork
B=$W/build/tests/kernel
RATE=${SCENARIO_RATE:-48}
TIMEOUT=${SCENARIO_TIMEOUT:-240}
# not /run or /tmp: noexec or tmpfs
work=$(mktemp -d /var/tmp/psi-lmkd-scenario.XXXXXX) || exit 1
pids=()
zdev=''

log() { printf '[%s] scenario %s: %s\n' "$(date +%T.%N | cut -c1-12)" "$mode" "$*"; }
fail() { log "FAIL: $*"; exit 1; }
figure() { printf 'figure %s %s\n' "$1" "$2"; }
# shellcheck disable=SC2317 # trap
cleanup() {
	local p
	for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
	swapoff -a 2>/dev/null
	if [ -n "$zdev" ]; then
		echo 1 >"/sys/block/zram$zdev/reset" 2>/dev/null
		echo "$zdev" >/sys/class/zram-control/hot_remove 2>/dev/null
	fi
	rm -rf "$work"
}
trap cleanup EXIT

oom_kills() { awk '$1 == "oom_kill" { print $2 }' /proc/vmstat; }
dmesg_ooms() { dmesg | grep -cE 'invoked oom-killer|Out of memory|oom-kill:'; }
alive() { [ -d "/proc/$1" ] && ! grep -q '^State:.*[ZX]' "/proc/$1/status" 2>/dev/null; }

# ---- the package, as a user installs it (once per boot)
if ! dpkg-query -W -f='${Status}' psi-lmkd 2>/dev/null | grep -q 'install ok installed'; then
	deb=$(ls "$W"/deb/psi-lmkd_*.deb 2>/dev/null | head -n 1)
	[ -n "$deb" ] || fail "no psi-lmkd_*.deb in $W/deb"
	t0=$(date +%s.%N)
	DEBIAN_FRONTEND=noninteractive dpkg -i "$deb" >"$work/dpkg.log" 2>&1 || { cat "$work/dpkg.log"; fail "dpkg -i $deb failed"; }
	log "installed $(basename "$deb") in $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s"
fi
cmp -s /etc/psi-lmkd.conf "$W/src/conf/psi-lmkd.conf" || fail "/etc/psi-lmkd.conf is not the shipped conf/psi-lmkd.conf"

# ---- swap
swapoff -a 2>/dev/null
case $mode in
none) ;;
disk)
	dev=/dev/disk/by-label/psivmswap
	[ -e "$dev" ] || fail "no swap disk (LABEL=psivmswap): the host attaches it for scenario:disk"
	swapon "$dev" || fail "swapon $dev failed"
	;;
zram)
	# a device of our own (hot_add): an earlier test may have loaded the
	# module with num_devices=0
	modprobe zram 2>/dev/null
	if [ ! -e /sys/class/zram-control/hot_add ]; then
		log "SKIP: the kernel has no zram (no /sys/class/zram-control after modprobe zram)"
		exit 77
	fi
	zdev=$(cat /sys/class/zram-control/hot_add) || fail "cannot add a zram device"
	echo 512M >"/sys/block/zram$zdev/disksize" || fail "cannot size zram$zdev"
	for _ in $(seq 1 50); do [ -b "/dev/zram$zdev" ] && break; sleep 0.1; done
	mkswap "/dev/zram$zdev" >/dev/null || fail "mkswap /dev/zram$zdev failed"
	swapon -p 100 "/dev/zram$zdev" || fail "swapon /dev/zram$zdev failed"
	;;
*) fail "unknown mode '$mode' (none, disk, zram)" ;;
esac
log "swap: $(awk 'NR > 1 { printf "%s %s KiB; ", $1, $3 }' /proc/swaps)MemTotal $(awk '/^MemTotal/ { print $2 }' /proc/meminfo) KiB"

# a fresh daemon per scenario: its journal from here on is this scenario's
since=$(date '+%Y-%m-%d %H:%M:%S')
sleep 1
systemctl restart psi-lmkd.service || fail "systemctl restart psi-lmkd failed"
systemctl is-active --quiet psi-lmkd.service || fail "psi-lmkd.service is not active"
daemon=$(systemctl show -p MainPID --value psi-lmkd.service)
log "psi-lmkd.service active, pid $daemon: $(systemctl show -p StatusText --value psi-lmkd.service)"

# ---- the desktop
for part in editor:120:0 soundserver:24:200 renderer:96:300; do
	IFS=: read -r name mib adj <<<"$part"
	cp "$B/memhog" "$work/$name"
	"$work/$name" "$mib" "$adj" >"$work/$name.out" 2>&1 </dev/null &
	pids+=($!)
	eval "pid_$name=$!"
done
for name in editor soundserver renderer; do
	eval "p=\$pid_$name"
	for _ in $(seq 1 300); do
		grep -qx "ready $p" "$work/$name.out" && break
		alive "$p" || break
		sleep 0.1
	done
	grep -qx "ready $p" "$work/$name.out" || fail "$name (pid $p) not ready: $(cat "$work/$name.out")"
done
# shellcheck disable=SC2154 # pid_* are set by eval above
log "desktop: editor $pid_editor (120 MiB, adj 0), soundserver $pid_soundserver (24 MiB, adj 200), renderer $pid_renderer (96 MiB, adj 300)"
sleep 2

oom0=$(oom_kills)
dm0=$(dmesg_ooms)
fill=sparse
[ "$mode" = zram ] && fill=half
cp "$B/anongrow" "$work/runaway"
t0=$(date +%s.%N)
"$work/runaway" "$RATE" 0 65536 "$fill" >"$work/runaway.out" 2>&1 </dev/null &
runaway=$!
pids+=("$runaway")
log "runaway $runaway: anongrow $RATE MiB/s, adj 0, fill $fill"

deadline=$(( $(date +%s) + TIMEOUT ))
while alive "$runaway"; do
	if [ "$(date +%s)" -ge "$deadline" ]; then
		fail "the runaway still lives after $TIMEOUT s ($(tail -n 1 "$work/runaway.out"))"
	fi
	sleep 0.1
done
t_dead=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
wait "$runaway" 2>/dev/null
grown=$(awk '$1 == "grown" { g = $2 } END { print g + 0 }' "$work/runaway.out")
sleep 2
journalctl -u psi-lmkd.service --since "$since" --no-pager -o short-monotonic >"$work/journal.txt" 2>&1
oom1=$(oom_kills)
dm1=$(dmesg_ooms)
log "runaway died $t_dead s after its start, at $grown MiB grown"
grep -E '(^|[^-[:alnum:]_])kill pid=|tier|swap' "$work/journal.txt" | sed 's/^/  journal| /'
figure time_to_kill_s "$t_dead"
figure runaway_mib "$grown"
figure oom_kills $((oom1 - oom0))
figure dmesg_oom_lines $((dm1 - dm0))
figure swap_used_kib "$(awk 'NR > 1 { s += $4 } END { print s + 0 }' /proc/swaps)"

rc=0
if ! grep -E "(^|[^-[:alnum:]_])kill pid=$runaway " "$work/journal.txt" >/dev/null; then
	log "FAIL: psi-lmkd did not kill the runaway (pid $runaway); its journal:"
	sed 's/^/  | /' "$work/journal.txt" | tail -n 40
	rc=1
fi
for name in editor soundserver renderer; do
	eval "p=\$pid_$name"
	alive "$p" || { log "FAIL: the $name (pid $p) died"; rc=1; }
done
kills=$(grep -cE '(^|[^-[:alnum:]_])kill pid=' "$work/journal.txt")
[ "$kills" -eq 1 ] || { log "FAIL: psi-lmkd killed $kills processes, not 1"; rc=1; }
if [ $((oom1 - oom0)) -ne 0 ] || [ $((dm1 - dm0)) -ne 0 ]; then
	log "FAIL: the kernel OOM killer ran ($((oom1 - oom0)) oom_kill, dmesg:)"
	dmesg | grep -E -A2 'invoked oom-killer|oom-kill:' | tail -n 20 | sed 's/^/  dmesg| /'
	rc=1
fi
systemctl is-active --quiet psi-lmkd.service || { log "FAIL: psi-lmkd.service is no longer active"; rc=1; }
[ $rc -eq 0 ] && log "PASS: only the runaway died, by psi-lmkd, no kernel OOM kill"
exit $rc
