#!/bin/bash
# SPDX-License-Identifier: MIT
# test-recovery-hold.sh - no kill while recovering (issue 27 item 3): after
# psi-lmkd killed the runaway, the survivor reads its evicted pages back in
# from a slow disk; PSI counts that as memory stall, but memory is no
# longer short, so nothing else may die.
#
# In a fresh 256 MiB test group (no swap): a reader (filepressure) whose
# 96 MiB mapped file fits in the group, read forever; once the file is in
# the page cache, the reader's reads from the file's disk are throttled to
# READ_BPS (4 MB/s: v1 blkio read_bps_device on a hybrid host, v2 io.max
# rbps on pure cgroup v2), as a slow disk or a busy one would be. Then a
# runaway (anongrow, 32 MiB/s, adj 300) evicts the reader's pages: thrash,
# and the tier
#
#   [tier critical]  trigger = some 300ms 1s   min_oom_score_adj = 0
#
# kills the runaway. The reader then refaults its 96 MiB at 4 MB/s, stalled
# for many seconds with most of the group free.
# Control (first; proves the setup makes a recovery stall): hold_recovery =
# false kills the reader too, after settle_time.
# Main: default hold_recovery. Asserted: the runaway is the one kill for
# WATCH_S (12) s after it; the reader lives; the log says "recovering from
# the last kill"; no kernel OOM kill.
# Exit: 0 pass, 1 fail, 77 skip (no blkio/io throttling: the kernel or
# the layout lacks it; CI=true turns other skips into fails).

set -u

srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$srcdir/tests/kernel/lib.sh" || { echo "cannot source $srcdir/tests/kernel/lib.sh" >&2; exit 99; }
# shellcheck source-path=SCRIPTDIR source=e2e-body.sh
. "$srcdir/tests/kernel/e2e-body.sh" || { echo "cannot source $srcdir/tests/kernel/e2e-body.sh" >&2; exit 99; }

LIMIT_MIB=256
FILE_MIB=96
RATE=32
READ_BPS=${KT_RH_READ_BPS:-4194304}
WATCH_S=${KT_RH_WATCH_S:-12}

kt_require_root_and_psi
kt_install_traps
e2e_find_binaries anongrow filepressure
tmp=$(kt_tmpdir)
kt_disk_tmpdir $((FILE_MIB + 16))
file=$KT_DISK_DIR/working-set
daemon=
devno=$(stat -c '%Hd:%Ld' "$KT_DISK_DIR") || kt_fail "cannot tell the device of $KT_DISK_DIR"
blkio_dir=

# throttle PID: the reader's reads from the file's device at READ_BPS.
throttle() {
	local v1 cg2
	if [ -n "${KT_V1_DIR:-}" ]; then
		v1=$(awk '$3 == "cgroup" && $4 ~ /(^|,)blkio(,|$)/ { print $2; exit }' /proc/mounts)
		[ -n "$v1" ] && [ -e "$v1/blkio.throttle.read_bps_device" ] ||
			kt_skip "no cgroup v1 blkio throttling on this hybrid host (the kernel lacks CONFIG_BLK_DEV_THROTTLING)"
		if [ -z "$blkio_dir" ]; then
			blkio_dir=$v1/psi-lmkd-rh-$$-$RANDOM
			mkdir "$blkio_dir" || kt_fail "cannot create $blkio_dir"
			KT_CG_DIRS+=("$blkio_dir")
			kt__write "$blkio_dir/blkio.throttle.read_bps_device" "$devno $READ_BPS"
		fi
		kt__write "$blkio_dir/cgroup.procs" "$1"
	else
		cg2=$(kt_cgroup2_mount)
		grep -qw io "$cg2/cgroup.controllers" ||
			kt_skip "no io controller on cgroup2 (the kernel lacks CONFIG_BLK_CGROUP)"
		grep -qw io "$cg2/cgroup.subtree_control" || printf '+io\n' >"$cg2/cgroup.subtree_control" ||
			kt_fail "cannot enable +io in $cg2/cgroup.subtree_control"
		[ -e "$KT_CG2_DIR/io.max" ] || kt_skip "no io.max in $KT_CG2_DIR (the kernel lacks CONFIG_BLK_DEV_THROTTLING)"
		kt__write "$KT_CG2_DIR/io.max" "$devno rbps=$READ_BPS"
	fi
}

# setup_group NAME: a fresh group with the reader, its file in the page
# cache (charged to the group), then throttled; sets reader.
setup_group() {
	local u
	kt_cgroup_create psi-lmkd-rh "$LIMIT_MIB"
	kt_spawn_in_cgroup -o "$tmp/reader.$1.out" "$KT_BINDIR/filepressure" "$file" "$FILE_MIB" 0 >/dev/null
	reader=$KT_LAST_PID
	kt_wait_ready "$tmp/reader.$1.out" "$reader" 120
	# its first pass, unthrottled: the whole file in the group's page cache
	kt_wait_for 60 sh -c "[ \$(( \$(cat '$(kt_mem_dir)/$( [ -n "${KT_V1_DIR:-}" ] && echo memory.usage_in_bytes || echo memory.current)') >> 20 )) -ge $((FILE_MIB - 4)) ]" ||
		kt_fail "$1: the reader's file did not come into the group's page cache in 60 s"
	sleep 1
	throttle "$reader"
	u=$(( $(kt_mem_stat usage) >> 20 ))
	kt_log "$1: reader $reader, its $FILE_MIB MiB file cached ($u MiB used), reads from $devno throttled to $((READ_BPS >> 10)) KiB/s"
}

start_daemon() {
	conf=$tmp/$1.conf
	log=$tmp/$1.log
	kt_write_conf -m "$conf" <<EOF
kill_timeout = 1s
settle_time = 1s
control_socket = off
hold_recovery = $2

[tier critical]
trigger = some 300ms 1s
min_oom_score_adj = 0
EOF
	kt_daemon_up "$conf" "$log" -v
	daemon=$KT_DAEMON_PID
	e2e_daemon_check "during startup ($1)"
}

stop_daemon() {
	kill -TERM "$daemon" 2>/dev/null
	kt_wait_for 5 kt_pid_dead "$daemon" || e2e_fail "the daemon $daemon ignores SIGTERM"
}

# run NAME HOLD: the runaway beside the reader until psi-lmkd kills it; then
# WATCH_S s more. Sets first (its kill line), kills (all kill lines).
run() {
	setup_group "$1"
	start_daemon "$1" "$2"
	e2e_grower "$tmp/grow.$1.out" "$RATE" 300
	kt_log "$1: anongrow $grower grows ${RATE} MiB/s (adj 300), hold_recovery = $2"
	e2e_wait_first_kill "$grower" "the runaway" 40
	first=$(e2e_kill_lines | head -n 1)
	kt_log "$1: first kill: $first"
	[ "$(e2e_kv "$first" pid)" = "$grower" ] || e2e_fail "$1: the first kill is not the runaway (pid $grower): $first"
	e2e_oom_check "$1: around the first kill"
	kt_wait_for 5 kt_pid_dead "$grower" || e2e_fail "$1: the runaway $grower lives 5 s after its kill line"
	kt_wait_for "$WATCH_S" sh -c "[ \$(grep -cE '(^|[^[:alnum:]_-])kill pid=' '$log') -ge 2 ]"
	kills=$(e2e_kill_lines)
	e2e_oom_check "$1: after the first kill"
}

# ------------------------------------------------------------ control run --

run control false
[ "$(printf '%s\n' "$kills" | grep -c .)" -ge 2 ] ||
	e2e_fail "control: hold_recovery = false killed nothing after the runaway in ${WATCH_S}s: the setup makes no recovery stall (log: $(tail -n 8 "$log" | tr '\n' '|'))"
ctl_second=$(printf '%s\n' "$kills" | sed -n 2p)
kt_log "control: a second kill while the reader recovered: $ctl_second"
stop_daemon
for p in $(kt_cgroup_pids); do kill -KILL "$p" 2>/dev/null; done
sleep 0.5

# --------------------------------------------------------------- main run --

run main true
n=$(printf '%s\n' "$kills" | grep -c .)
[ "$n" -eq 1 ] || e2e_fail "main: $n kills, not just the runaway: $(printf '%s\n' "$kills" | tr '\n' '|')"
kt_pid_alive "$reader" || e2e_fail "main: the reader $reader died"
kt_file_has "$log" 'recovering from the last kill' ||
	e2e_fail "main: no 'recovering from the last kill' line: was there a recovery stall? (log: $(tail -n 8 "$log" | tr '\n' '|'))"
held=$(grep -m1 'recovering from the last kill' "$log" | sed 's/^\[[^]]*\] //')
stop_daemon

echo "---- daemon log (main) ----"
cat "$log"
echo "---------------------------"
echo "control (hold_recovery = false): first $first"
echo "control: then $ctl_second"
echo "main: $held"
echo "main: the runaway was the only kill in ${WATCH_S}s after it; the reader lives; kernel OOM kills 0"
echo "PASS"
exit 0
