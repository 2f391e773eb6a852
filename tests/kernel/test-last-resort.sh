#!/bin/bash
# SPDX-License-Identifier: MIT
# test-last-resort.sh - the low_available last resort must kill a process
# that grows anonymous memory before the kernel OOM killer has to act.
#
# Without swap, anonymous growth leaves the kernel nothing to reclaim, so PSI
# sees (almost) no stall before the OOM killer strikes (issue 5, item 7).
# Here, in a fresh 192 MiB test group: two idle memhogs (8 MiB, adj 0 and
# 500) and anongrow growing at 16 MiB/s with adj 900.  psi-lmkd, scoped to
# the group, has one tier and no PSI trigger at all:
#
#   [tier last-resort]  low_available = 10%   min_oom_score_adj = 0
#
# with memory_cgroup = the group's memory-limit directory (the v1 memcg on a
# hybrid host, the cgroup2 group on a pure v2 host).
#
# Asserted: the grower is killed by psi-lmkd (its kill line, reason=low_memory)
# and dies; the group's kernel OOM kill counter stays 0 for the whole run;
# exactly one kill; both memhogs and the daemon survive, and nothing else
# is killed for KT_LR_SETTLE (3) s afterwards.  Reported: time from the
# grower's start to the kill, the group's peak usage against its limit (the
# headroom left, also in seconds of growth), the grower's size when killed,
# the daemon's "exited N ms" and process_mrelease figures.
#
# Control (before the main run; KT_LR_CONTROL=0 skips it): the same group
# without the daemon; the kernel OOM-kills the grower; reported: when, and
# the OOM counter (must be >= 1, or the setup would not test what it claims).
# Exit: 0 pass, 1 fail, 77 skip (CI=true turns non-kernel skips into fails).

set -u

srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$srcdir/tests/kernel/lib.sh" || { echo "cannot source $srcdir/tests/kernel/lib.sh" >&2; exit 99; }
# shellcheck source-path=SCRIPTDIR source=e2e-body.sh
. "$srcdir/tests/kernel/e2e-body.sh" || { echo "cannot source $srcdir/tests/kernel/e2e-body.sh" >&2; exit 99; }

LIMIT_MIB=${KT_LR_LIMIT_MIB:-192}
RATE=${KT_LR_RATE:-16}		# MiB/s of anonymous growth
HOG_MIB=8
SETTLE=${KT_LR_SETTLE:-3}
CONTROL=${KT_LR_CONTROL:-1}
GROW_TIMEOUT=$(( LIMIT_MIB / RATE + 8 ))	# seconds: well past the OOM point

kt_require_root_and_psi
kt_install_traps
e2e_find_binaries anongrow
tmp=$(kt_tmpdir)
log=$tmp/daemon.log
daemon=

# grown_last OUTFILE: "MiB ms" of anongrow's last "grown" line.
grown_last() {
	awk '$1 == "grown" { m = $2; t = $3 } END { if (m != "") print m, t; else print "0 0" }' "$1" 2>/dev/null
}

# setup_group: a fresh group with the two idle memhogs; sets hog0, hog500.
setup_group() {
	kt_cgroup_create psi-lmkd-test "$LIMIT_MIB"
	kt_spawn_in_cgroup -o "$tmp/memhog-0.$1.out" "$KT_BINDIR/memhog" "$HOG_MIB" 0 >/dev/null
	hog0=$KT_LAST_PID
	kt_wait_ready "$tmp/memhog-0.$1.out" "$hog0" 10
	kt_spawn_in_cgroup -o "$tmp/memhog-500.$1.out" "$KT_BINDIR/memhog" "$HOG_MIB" 500 >/dev/null
	hog500=$KT_LAST_PID
	kt_wait_ready "$tmp/memhog-500.$1.out" "$hog500" 10
	[ "$(kt_oom_kills)" = 0 ] || kt_fail "a fresh group has OOM kill counter '$(kt_oom_kills)', not 0"
}

# ------------------------------------------------------------ control run --

ctl_report="control run skipped (KT_LR_CONTROL=0)"
if [ "$CONTROL" != 0 ]; then
	setup_group control
	e2e_grower "$tmp/grow.control.out" "$RATE" 900
	kt_log "control: no daemon; anongrow $grower grows ${RATE} MiB/s in ${LIMIT_MIB} MiB"
	kt_wait_for "$GROW_TIMEOUT" kt_pid_dead "$grower" ||
		kt_fail "control: the grower is alive after ${GROW_TIMEOUT}s; the kernel did not OOM-kill it (no limit?)"
	died=$(kt_elapsed)
	ooms=$(kt_oom_kills)
	read -r cmib _ < <(grown_last "$tmp/grow.control.out")
	ctl_report=$(awk -v a="$start" -v b="$died" -v m="$cmib" -v o="$ooms" -v p="$(kt_mem_stat peak)" \
		'BEGIN { printf "control (no daemon): kernel OOM-killed the grower %.1f s in at %d MiB grown (oom_kill=%s, peak %.1f MiB)", b - a, m, o, p / 1048576 }')
	kt_log "$ctl_report"
	case $ooms in
	''|*[!0-9]*|0) kt_fail "control: the grower died but the OOM kill counter is '$ooms'" ;;
	esac
	# Done with this group: end its processes now (kt_cleanup removes it).
	for p in $(kt_cgroup_pids); do kill -KILL "$p" 2>/dev/null; done
	kt_wait_for 5 kt_pid_dead "$hog500" || kt_fail "control: memhog $hog500 does not die"
fi

# --------------------------------------------------------------- main run --

setup_group main
memdir=$(kt_mem_dir)
conf=$tmp/psi-lmkd.conf
kt_write_conf -m "$conf" <<EOF
kill_timeout = 1s

[tier last-resort]
low_available = 10%
min_oom_score_adj = 0
EOF

kt_daemon_up "$conf" "$log" -v
daemon=$KT_DAEMON_PID
e2e_daemon_check "during startup"
kt_file_has "$log" "available memory is measured in the memory cgroup $memdir" ||
	e2e_fail "the daemon does not measure available memory in $memdir"
kt_log "daemon $daemon: $(grep -m1 'available memory is measured' "$log" | sed 's/^\[[^]]*\] //')"

sys_oom0=$(awk '$1 == "oom_kill" { print $2 }' /proc/vmstat)
e2e_grower "$tmp/grow.main.out" "$RATE" 900
kt_log "anongrow $grower grows ${RATE} MiB/s (adj 900); memhogs adj0=$hog0 adj500=$hog500"

# Until the kill line, the grower's death, or the time is up; the OOM
# counter is checked on every round.
e2e_wait_first_kill "$grower" "the grower" "$GROW_TIMEOUT"
line=$(e2e_kill_lines | head -n 1)
kt_log "kill line: $line"
[ "$(e2e_kv "$line" pid)" = "$grower" ] || e2e_fail "the first kill is not the grower (pid $grower): $line"
[ "$(e2e_kv "$line" reason)" = low_memory ] || e2e_fail "the kill's reason is not low_memory: $line"
[ "$(e2e_kv "$line" tier)" = last-resort ] || e2e_fail "the kill's tier is not last-resort: $line"
[ "$(e2e_kv "$line" oom_score_adj)" = 900 ] || e2e_fail "the kill's oom_score_adj is not 900: $line"
kt_wait_for 5 kt_pid_dead "$grower" || e2e_fail "the grower $grower is alive 5 s after its kill line"
e2e_oom_check "around psi-lmkd's kill"
peak=$(kt_mem_stat peak)
limit=$(kt_mem_stat limit)
kill_t=$(kt_log_time "$line")
read -r gmib gms < <(grown_last "$tmp/grow.main.out")
# Not too early either: the tier is for the last 10 %; with anonymous
# memory only, the group must have been close to that when it fired.
awk -v p="$peak" -v l="$limit" 'BEGIN { exit !(p >= 0.85 * l) }' ||
	e2e_fail "killed too early: peak usage $((peak >> 20)) MiB is below 85% of the $((limit >> 20)) MiB limit (low_available = 10%)"

# ------------------------------------------- afterwards: nothing else dies --

kt_log "grower killed; watching ${SETTLE}s more"
e2e_watch "$SETTLE" "after the kill" e2e_alive "$hog500" "memhog adj 500" "$hog0" "memhog adj 0"
n=$(e2e_kill_count)
[ "$n" -eq 1 ] || e2e_fail "expected exactly one kill, got $n: $(e2e_kill_lines | tr '\n' '|')"
e2e_oom_check "after psi-lmkd's kill"

# ----------------------------------------------------------------- report --

exited=$(grep -m1 -E "pid $grower \([^)]*\) exited [0-9]+ ms" "$log" | sed 's/^\[[^]]*\] //')
released=$(grep -m1 -E "process_mrelease\(pid $grower\)" "$log" | sed 's/^\[[^]]*\] //')
[ -n "$exited" ] || e2e_fail "no 'pid $grower ... exited N ms' line"
echo "---- daemon log ----"
cat "$log"
echo "--------------------"
echo "$ctl_report"
awk -v s="$start" -v k="$kill_t" -v p="$peak" -v l="$limit" -v r="$RATE" -v gm="$gmib" -v gt="$gms" 'BEGIN {
	printf "main run: psi-lmkd killed the grower %.2f s after it started (grower: %d MiB grown at %.2f s)\n", k - s, gm, gt / 1000
	printf "peak usage %.1f MiB of a %.0f MiB limit: %.1f MiB (%.1f%%) headroom left, %.2f s of growth at %d MiB/s\n",
		p / 1048576, l / 1048576, (l - p) / 1048576, 100 * (l - p) / l, (l - p) / 1048576 / r, r
}'
echo "OOM kill counter of the group: $(kt_oom_kills); system-wide (/proc/vmstat oom_kill) during the main run: +$(( $(awk '$1 == "oom_kill" { print $2 }' /proc/vmstat) - sys_oom0 ))"
echo "$exited"
echo "${released:-no process_mrelease line for pid $grower}"
echo "PASS"
exit 0
