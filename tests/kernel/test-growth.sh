#!/bin/bash
# SPDX-License-Identifier: MIT
# test-growth.sh - the low_available last resort must see anonymous growth
# beside file thrash, and must leave idle anonymous memory beside the same
# thrash alone (issue 18, item 6).
#
# Each run is a fresh 128 MiB group without swap, with psi-lmkd scoped to it
# and one tier without a PSI trigger:
#
#   [tier last-resort]  low_available = 2%   min_oom_score_adj = 0
#
# (the shipped Android profile's last resort; 2% = 2.56 MiB), memory_cgroup =
# the group's memory-limit directory.
#
# Growth (KT_GROWTH_RUNS runs, default 3): filepressure reads a 300 MiB file
# over and over (adj 0; the group refaults file pages at hundreds of MiB/s),
# then anongrow grows anonymous memory at 8 MiB/s (adj 0) until it is
# killed. Near the limit the daemon's estimate of available memory still
# counts 1-3 MiB of file pages that reclaim cannot really get back, so a
# check of "available < 2.56 MiB" alone can come too late, and the kernel's
# OOM killer comes first (bench/README.md, the fileanon miss). Asserted in
# every run: psi-lmkd's first kill is the grower (reason=low_memory) and the
# group's kernel OOM kill counter stays 0 until the grower is dead.
# Reported: when, the predicted time-to-limit in the firing line, and the
# lead over the kernel's OOM kill in a control run (KT_GROWTH_CONTROL=0
# skips it): the same mix without the daemon, where the kernel must
# OOM-kill the grower.
#
# Benign (KT_GROWTH_BENIGN_S, default 20 s): the same reader beside memhog
# holding 96 MiB of idle anonymous memory (adj 0; allocated at ~60 MiB/s
# when it starts, 30 MiB from the limit: no emergency): deep thrash that
# the kernel survives. Asserted: the growth rule never fires (no "will fall
# below" line, mem_growth=0 in the SIGUSR1 status), no kernel OOM kill, the
# reader alive; and, so that the wait is not vacuous, the status shows that
# the daemon checked memory at least every 200 ms on average (mem_checks),
# the file thrash was real (>= KT_GROWTH_MIN_REFAULT_MIBS MiB/s of file
# refaults, default 50: the host's disk refaults hundreds; a slower disk
# cannot give that, and tests/vm/ passes a quarter of its throttled disk's
# rate, 10 MiB/s of its 40), and usage was
# within 24 MiB of the limit at the end. The plain rule (available below
# low_available), unchanged here, can still kill the idle process in this
# mix (a false kill the code before the growth rule made too, seen after
# 18 s in one of our runs): such a kill ends the window early, is reported
# as a FINDING and not asserted against.
#
# The daemon runs with oom_killer = daemon where the group has cgroup v1's
# memory.oom_control (the group's OOM killer is then psi-lmkd's: the kernel
# cannot come first, and a kill may say reason=oom instead of low_memory;
# the report says which rule killed), else with kernel.
# KT_GROWTH_OOM_KILLER=kernel|daemon chooses. With kernel the estimate must
# win the race on its own, and it lost 1 run in 5 here (2026-12-03, after
# 1 in 16 before): the kernel's OOM killer acted first, the test fails.
# With daemon the benign run must have no kill at all (the estimate then
# fires only while anonymous memory grows); with kernel a kill by the plain
# rule is reported as a FINDING, as below.
#
# Exit: 0 pass, 1 fail, 77 skip (CI=true turns non-kernel skips into fails).

set -u

srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$srcdir/tests/kernel/lib.sh" || { echo "cannot source $srcdir/tests/kernel/lib.sh" >&2; exit 99; }
# shellcheck source-path=SCRIPTDIR source=e2e-body.sh
. "$srcdir/tests/kernel/e2e-body.sh" || { echo "cannot source $srcdir/tests/kernel/e2e-body.sh" >&2; exit 99; }

LIMIT_MIB=128
FILE_MIB=300
RATE=8			# MiB/s of anonymous growth
IDLE_MIB=96
RUNS=${KT_GROWTH_RUNS:-3}
BENIGN_S=${KT_GROWTH_BENIGN_S:-20}
MIN_REFAULT_MIBS=${KT_GROWTH_MIN_REFAULT_MIBS:-50}
THRASH_S=3		# the reader thrashes this long before the grower starts
GROW_TIMEOUT=$(( LIMIT_MIB / RATE + 15 ))

kt_require_root_and_psi
kt_install_traps
E2E_HELPERS=(anongrow)
e2e_find_binaries
tmp=$(kt_tmpdir)
kt_disk_tmpdir "$FILE_MIB"
data=$KT_DISK_DIR/data
daemon=
log=

# refaults: how many file pages the memory-limit group refaulted so far
# (memory.stat counts pages: v2 workingset_refault_file, v1
# total_workingset_refault_file, or the older names without _file).
refaults() {
	awk '$1 == "workingset_refault_file" || $1 == "total_workingset_refault_file" ||
	     $1 == "workingset_refault" || $1 == "total_workingset_refault" { v = $2 }
	     END { print v + 0 }' "$(kt_mem_dir)/memory.stat" 2>/dev/null
}

# benign_growth_check: the growth rule must not have fired.
benign_growth_check() {
	if grep -q 'will fall below low_available' "$log"; then
		e2e_fail "benign: the growth rule fired: $(grep -m1 'will fall below low_available' "$log")"
	fi
}

# start_run NAME: a fresh group, the reader thrashing in it, and the daemon
# on it; sets reader, daemon, log.
start_run() {
	local conf=$tmp/$1.conf
	kt_cgroup_create psi-lmkd-growth "$LIMIT_MIB"
	[ "$(kt_oom_kills)" = 0 ] || kt_fail "$1: a fresh group has OOM kill counter '$(kt_oom_kills)', not 0"
	kt_spawn_in_cgroup -o "$tmp/fp.$1.out" "$KT_BINDIR/filepressure" "$data" "$FILE_MIB" 0 >/dev/null
	reader=$KT_LAST_PID
	kt_wait_ready "$tmp/fp.$1.out" "$reader" 180
	log=$tmp/daemon.$1.log
	oom_killer=${KT_GROWTH_OOM_KILLER:-auto}
	if [ "$oom_killer" = auto ]; then
		oom_killer=kernel
		[ -e "$(kt_mem_dir)/memory.oom_control" ] && oom_killer=daemon
	fi
	kt_write_conf -m "$conf" <<EOF
kill_timeout = 1s

oom_killer = $oom_killer

[tier last-resort]
low_available = 2%
min_oom_score_adj = 0
EOF
	kt_daemon_up "$conf" "$log" -vv
	daemon=$KT_DAEMON_PID
	kt_file_has "$log" "available memory is measured in the memory cgroup $(kt_mem_dir)" ||
		e2e_fail "$1: the daemon does not measure available memory in $(kt_mem_dir)"
}

# end_run: stop the daemon and everything in the group (kt_cleanup removes it).
end_run() {
	local p
	kill -TERM "$daemon" 2>/dev/null
	kt_wait_for 5 kt_pid_dead "$daemon" || e2e_fail "the daemon $daemon does not stop on SIGTERM"
	wait "$daemon" 2>/dev/null
	for p in $(kt_cgroup_pids); do kill -KILL "$p" 2>/dev/null; done
	kt_wait_for 5 kt_pid_dead "$reader" || kt_fail "the reader $reader does not die"
}

# ----------------------------------------------------------- control run --
# The same mix without the daemon: the kernel must OOM-kill the grower (or
# the setup does not test what it claims); reported: when.

ctl_s=
ctl_report="control run skipped (KT_GROWTH_CONTROL=0)"
if [ "${KT_GROWTH_CONTROL:-1}" != 0 ]; then
	kt_cgroup_create psi-lmkd-growth "$LIMIT_MIB"
	kt_spawn_in_cgroup -o "$tmp/fp.control.out" "$KT_BINDIR/filepressure" "$data" "$FILE_MIB" 0 >/dev/null
	reader=$KT_LAST_PID
	kt_wait_ready "$tmp/fp.control.out" "$reader" 180
	sleep "$THRASH_S"	# deliberate: the file thrash settles, as in the runs
	e2e_grower "$tmp/grow.control.out" "$RATE" 0
	kt_wait_for "$GROW_TIMEOUT" kt_pid_dead "$grower" ||
		kt_fail "control: the grower is alive after ${GROW_TIMEOUT}s; the kernel did not OOM-kill it"
	ctl_s=$(awk -v a="$start" -v b="$(kt_elapsed)" 'BEGIN { printf "%.2f", b - a }')
	o=$(kt_oom_kills)
	case $o in ''|*[!0-9]*|0) kt_fail "control: the grower died but the OOM kill counter is '$o'" ;; esac
	ctl_report="control (no daemon): the kernel OOM-killed the grower ${ctl_s} s after it started (oom_kill=$o)"
	kt_log "$ctl_report"
	for p in $(kt_cgroup_pids); do kill -KILL "$p" 2>/dev/null; done
	kt_wait_for 5 kt_pid_dead "$reader" || kt_fail "control: the reader $reader does not die"
fi

# ----------------------------------------------------------- growth runs --

reports=()
for run in $(seq 1 "$RUNS"); do
	start_run "grow$run"
	# Deliberate: THRASH_S of plain file thrash in which nothing may be killed.
	sleep "$THRASH_S"
	e2e_daemon_check "grow$run: while the reader thrashed"
	[ "$(e2e_kill_count)" = 0 ] || e2e_fail "grow$run: a kill during plain file thrash: $(e2e_kill_lines | head -n 1)"
	e2e_grower "$tmp/grow.$run.out" "$RATE" 0
	kt_log "grow$run: anongrow $grower grows ${RATE} MiB/s beside the reader $reader"
	e2e_wait_first_kill "$grower" "grow$run: the grower" "$GROW_TIMEOUT"
	line=$(e2e_kill_lines | head -n 1)
	kt_log "grow$run: kill line: $line"
	[ "$(e2e_kv "$line" pid)" = "$grower" ] || e2e_fail "grow$run: the first kill is not the grower ($grower): $line"
	case $(e2e_kv "$line" reason) in
	low_memory) ;;
	oom) [ "$oom_killer" = daemon ] || e2e_fail "grow$run: reason=oom without oom_killer = daemon: $line" ;;
	*) e2e_fail "grow$run: the kill's reason is not low_memory: $line" ;;
	esac
	kt_wait_for 5 kt_pid_dead "$grower" || e2e_fail "grow$run: the grower $grower is alive 5 s after its kill line"
	sleep 0.5	# deliberate: a second kill or an OOM kill right after it would show by now
	e2e_oom_check "around psi-lmkd's kill (grow$run)"
	[ "$(e2e_kill_count)" = 1 ] || e2e_fail "grow$run: more than one kill: $(e2e_kill_lines | tr '\n' '|')"
	kt_pid_alive "$reader" || e2e_fail "grow$run: the reader $reader died"
	fire=$(grep -m1 'tier last-resort: available memory.*firing' "$log" | sed 's/^\[[^]]*\] //')
	kill_t=$(kt_log_time "$line")
	reports+=("$(awk -v s="$start" -v k="$kill_t" -v c="$ctl_s" -v why="$(e2e_kv "$line" reason)" -v ok="$oom_killer" 'BEGIN {
		printf "killed (reason=%s, oom_killer = %s) %.2f s after the grower started", why, ok, k - s
		if (c != "") printf " (%.2f s before the control run'"'"'s OOM kill)", c - (k - s) }')
  firing line: $fire")
	kt_log "grow$run: ${reports[-1]}"
	end_run
done

# ------------------------------------------------------------ benign run --

start_run benign
kt_spawn_in_cgroup -o "$tmp/idle.out" "$KT_BINDIR/memhog" "$IDLE_MIB" 0 >/dev/null
idle=$KT_LAST_PID
kt_wait_ready "$tmp/idle.out" "$idle" 30
before=$(kt_daemon_status "$log" "$daemon" 0 last-resort)
checks0=$(e2e_kv "$before" mem_checks)
ref0=$(refaults)
kt_log "benign: memhog $idle holds ${IDLE_MIB} MiB idle beside the reader $reader for ${BENIGN_S}s"
end=$(( $(date +%s) + BENIGN_S ))
plain=
while [ "$(date +%s)" -lt "$end" ]; do
	e2e_daemon_check "benign: during the thrash"
	benign_growth_check
	e2e_oom_check "in the benign run: the setup is not benign"
	kt_pid_alive "$reader" || e2e_fail "benign: the reader $reader died"
	if [ "$(e2e_kill_count)" != 0 ]; then
		# With oom_killer = daemon the estimate fires only while anonymous
		# memory grows, and nothing grows here: any kill is a false one.
		[ "$oom_killer" = daemon ] &&
			e2e_fail "benign: a kill with oom_killer = daemon: $(e2e_kill_lines | head -n 1)"
		# Only the plain rule (available below low_available) can have
		# fired here; benign_growth_check says so. Recorded, see above.
		plain=$(e2e_kill_lines | head -n 1)
		kt_log "benign: the plain low_available rule killed (a false kill it also makes without this change): $plain"
		break
	fi
	kt_pid_alive "$idle" || e2e_fail "benign: the idle memhog $idle died without a psi-lmkd kill line"
	sleep 0.2
done
benign_s=$(( BENIGN_S - (end - $(date +%s)) ))
usage=$(kt_mem_stat usage)
ref1=$(refaults)
after=$(kt_daemon_status "$log" "$daemon" "$(wc -l <"$log")" last-resort)
checks1=$(e2e_kv "$after" mem_checks)
{ e2e_is_uint "$checks0" && e2e_is_uint "$checks1"; } || e2e_fail "benign: no mem_checks in the status lines: $before / $after"
benign_growth_check
[ "$(e2e_kv "$after" mem_growth)" = 0 ] || e2e_fail "benign: mem_growth is not 0: $after"
checks=$(( checks1 - checks0 ))
[ "$checks" -ge $(( benign_s * 5 )) ] ||
	e2e_fail "benign: only $checks memory checks in ${benign_s}s (expected >= $(( benign_s * 5 )): near the edge they run every 50 ms)"
refmib=$(( (ref1 - ref0) * 4096 >> 20 ))
[ "$refmib" -ge $(( benign_s * MIN_REFAULT_MIBS )) ] ||
	e2e_fail "benign: only $refmib MiB of file refaults in ${benign_s}s (expected >= $MIN_REFAULT_MIBS MiB/s): no real thrash"
if [ -z "$plain" ]; then
	limit=$(kt_mem_stat limit)
	[ $(( (limit - usage) >> 20 )) -lt 24 ] ||
		e2e_fail "benign: usage $((usage >> 20)) MiB is not near the $((limit >> 20)) MiB limit: the test would be vacuous"
fi
end_run

# ----------------------------------------------------------------- report --

echo "$ctl_report"
for i in "${!reports[@]}"; do
	echo "growth run $((i + 1)) of $RUNS: ${reports[i]}"
done
echo "benign: ${benign_s}s of file thrash ($refmib MiB refaulted) beside ${IDLE_MIB} MiB of idle anonymous memory: the growth rule never fired, no OOM kill, $checks memory checks ($after)"
[ -z "$plain" ] || echo "benign: FINDING: the plain rule (available below low_available, no growth) killed after ${benign_s}s: $plain"
echo "PASS"
exit 0
