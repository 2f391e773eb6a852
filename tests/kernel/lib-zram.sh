# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# lib-zram.sh - a zram swap device for psi-lmkd's real-kernel tests (test-zram.sh),
# hot-added and always removed (kt_cleanup calls kt_zram_remove).
# Sourced by lib.sh (source lib.sh, not this file); uses its kt_log/kt_fail and KT_ZDEV.

# kt_zram_add DISKSIZE MEM_LIMIT: hot-add a zram device, make it swap with a
# high priority (32000) and set KT_ZDEV (its number), KT_ZDIR (its sysfs
# dir) and KT_ZDEVNODE (/dev/zramN).  MEM_LIMIT is the most RAM it may take.
# kt_cleanup removes it (kt_zram_remove), also on failure and INT/TERM/HUP.
# Skips when the kernel has no zram (also under CI=true); missing
# mkswap/swapon/swapoff skip, or fail under CI=true.
kt_zram_add() {
	local size=$1 mem=$2 v tool
	if [ ! -e /sys/class/zram-control/hot_add ]; then
		command -v modprobe >/dev/null 2>&1 && modprobe zram num_devices=0 2>/dev/null
		if [ ! -e /sys/class/zram-control/hot_add ]; then
			[ -d /sys/module/zram ] &&
				kt_skip_or_fail "zram is loaded but /sys/class/zram-control/hot_add is missing"
			kt_skip "kernel lacks zram (no /sys/class/zram-control, no zram module)"
		fi
	fi
	for tool in mkswap swapon swapoff; do
		command -v "$tool" >/dev/null 2>&1 || kt_skip_or_fail "tool '$tool' not found"
	done
	[ -z "$KT_ZDEV" ] || kt_fail "kt_zram_add: zram$KT_ZDEV is already ours"
	KT_ZDEV=$(cat /sys/class/zram-control/hot_add) || kt_fail "cannot add a zram device (hot_add)"
	case $KT_ZDEV in ''|*[!0-9]*) v=$KT_ZDEV; KT_ZDEV=; kt_fail "hot_add gave '$v', not a device number" ;; esac
	KT_ZDIR=/sys/block/zram$KT_ZDEV
	KT_ZDEVNODE=/dev/zram$KT_ZDEV
	kt__write "$KT_ZDIR/mem_limit" "$mem"
	kt__write "$KT_ZDIR/disksize" "$size"
	kt_wait_for 5 test -b "$KT_ZDEVNODE" || kt_fail "$KT_ZDEVNODE did not appear"
	mkswap "$KT_ZDEVNODE" >/dev/null 2>&1 || kt_fail "mkswap $KT_ZDEVNODE failed"
	swapon -p 32000 "$KT_ZDEVNODE" || kt_fail "swapon $KT_ZDEVNODE failed"
	grep -q "^${KT_ZDEVNODE}[[:space:]]" /proc/swaps || kt_fail "$KT_ZDEVNODE is not in /proc/swaps after swapon"
}

# kt_zram_remove: swapoff, reset and hot_remove the device of kt_zram_add.
# Idempotent; returns 1 if it is still there.  Kill the processes whose
# pages it holds first (kt_cleanup does).
kt_zram_remove() {
	local n=$KT_ZDEV i
	[ -n "$n" ] || return 0
	if grep -q "^/dev/zram${n}[[:space:]]" /proc/swaps 2>/dev/null; then
		swapoff "/dev/zram$n" 2>/dev/null || kt_log "cleanup: swapoff /dev/zram$n failed"
	fi
	for i in 1 2 3 4 5 6 7 8 9 10; do
		[ -e "/sys/block/zram$n" ] || break
		echo 1 2>/dev/null >"/sys/block/zram$n/reset"
		echo "$n" 2>/dev/null >/sys/class/zram-control/hot_remove && break
		sleep 0.3
	done
	if [ -e "/sys/block/zram$n" ]; then
		kt_log "cleanup: COULD NOT REMOVE zram$n (check /proc/swaps and /sys/class/zram-control)"
		return 1
	fi
	KT_ZDEV=
	return 0
}
