#!/bin/bash
# SPDX-License-Identifier: MIT
# test-zram.sh - the low_available last resort with a zram swap device: it
# must leave alone a process that over-committed once and then idles while
# swap has room, and still kill a runaway before the kernel OOM killer when
# RAM and swap are both nearly gone (issue 18, items 3 and 5).
#
# Setup, for the whole run under the kernel-test lock: a zram device of
# KT_ZRAM_SIZE (1G) disk size with a mem_limit of KT_ZRAM_MEM_LIMIT (192M:
# the most real RAM it may take), made swap with a high priority (32000).
# It is ALWAYS removed afterwards (swapoff, reset, hot_remove: lib.sh's
# kt_zram_add/kt_zram_remove) by kt_cleanup on EXIT/INT/TERM/HUP, after it
# has killed our processes; the test also removes it itself at the end and
# checks /proc/swaps.
#
# The test group: 256 MiB (KT_ZRAM_LIMIT_MIB).  What allows it to swap on
# this machine (hybrid: v1 memcg at /sys/fs/cgroup/memory holds the limit,
# cgroup2 holds memory.pressure and the processes too): swap accounting is
# on, so the v1 group has memory.swappiness and memory.memsw.*.
# kt_cgroup_create turns swap off for test groups (swappiness 0 -- memcg
# reclaim then never swaps -- and memsw.limit_in_bytes = the memory limit),
# so this test sets swappiness 60 and memsw.limit_in_bytes = limit + 1 GiB
# (the whole device; kt_cgroup_allow_swap).  On a pure cgroup2 host it sets
# memory.swap.max to 1 GiB instead.  zram's own RAM is not charged to the group: it is the
# device's mem_limit and the system's RAM that bound it, which is what
# psi-lmkd's zram accounting (/proc/swaps, /sys/block/zramN/mm_stat)
# measures.  The processes write pages half pseudo-random, half zero
# (anongrow ... half), which zram compresses about 2:1, so the device's RAM
# is the limit that counts.
#
# psi-lmkd: memory_cgroup = the group's memory-limit dir, scope = the group,
#   [tier last-resort]  low_available = 10%  min_oom_score_adj = 0
# (low_swap unset: 10% of the group's swap).
#
# (a) benign over-commit: anongrow allocates 400 MiB once at 200 MiB/s
#     (adj 500) and then sleeps.  About 150 MiB of it go to zram.  For
#     KT_ZRAM_WATCH (15) s: no kill, no kernel OOM kill, it stays alive.
#     Positive markers that the situation is the one of the issue and that
#     the checks ran: its VmSwap is >= 64 MiB; the daemon logged that
#     available memory is below low_available but swap has room; SIGUSR1
#     status lines before and after the window show mem_checks and
#     swap_held growing; and a second daemon in dry-run with the rule
#     without swap (low_swap = 100%: fires whatever swap is left) logs a
#     would-kill of it with reason=low_memory -- what the old rule did.
# (b) runaway: anongrow grows at KT_ZRAM_RATE (64) MiB/s (adj 900) with no
#     end.  psi-lmkd must kill it (kill line, reason=low_memory, its firing
#     line says free swap is at or below low_swap) while the group's kernel
#     OOM kill counter (memory.oom_control / memory.events oom_kill) stays
#     0; the benign process survives; exactly one kill in KT_ZRAM_SETTLE (3)
#     s more.  Reported: time to the kill, the device's mm_stat and swap use
#     then, and the check counts.
# The no-swap path (the same tier with no swap for the group) is
# test-last-resort.sh's: its groups have swap turned off as above.
#
# Exit: 0 pass, 1 fail, 77 skip: only when the kernel has no zram (no
# /sys/class/zram-control and no zram module to load), which is allowed
# under CI=true too; missing mkswap/swapon skip, or fail under CI=true.

set -u

srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$srcdir/tests/kernel/lib.sh" || { echo "cannot source $srcdir/tests/kernel/lib.sh" >&2; exit 99; }
# shellcheck source-path=SCRIPTDIR source=e2e-body.sh
. "$srcdir/tests/kernel/e2e-body.sh" || { echo "cannot source $srcdir/tests/kernel/e2e-body.sh" >&2; exit 99; }

LIMIT_MIB=${KT_ZRAM_LIMIT_MIB:-256}
ZRAM_SIZE=${KT_ZRAM_SIZE:-1G}
ZRAM_MEM_LIMIT=${KT_ZRAM_MEM_LIMIT:-192M}
BENIGN_MIB=400
WATCH=${KT_ZRAM_WATCH:-15}
# a bound on the benign allocation, not a speed check: 400 MiB with ~150
# MiB compressed into zram took ~3 s on the host and more than 30 s in a
# 6.1 TCG guest
ALLOC_TIMEOUT=${KT_ZRAM_ALLOC_TIMEOUT:-120}
RATE=${KT_ZRAM_RATE:-64}
SETTLE=${KT_ZRAM_SETTLE:-3}
SWAP_ALLOWANCE=$((1024 * 1024 * 1024))

# ------------------------------------------------------- zram and traps --

# kt_cleanup (lib.sh) kills our processes first, then removes the device
# kt_zram_add made (swapoff, reset, hot_remove), on exit and on INT/TERM/HUP.
kt_require_root_and_psi
kt_install_traps
e2e_find_binaries anongrow
tmp=$(kt_tmpdir)

kt_zram_add "$ZRAM_SIZE" "$ZRAM_MEM_LIMIT"
zdir=$KT_ZDIR
zdev=$KT_ZDEVNODE
others=$(awk -v d="$zdev" 'NR > 1 && $1 != d { print $1 }' /proc/swaps | tr '\n' ' ')
kt_log "zram$KT_ZDEV: disksize $ZRAM_SIZE, mem_limit $ZRAM_MEM_LIMIT, $(tr -d '\n' <"$zdir/comp_algorithm"); other swap: ${others:-none}"

# ------------------------------------------------------------ the group --

kt_cgroup_create psi-lmkd-test "$LIMIT_MIB"
memdir=$(kt_mem_dir)
kt_cgroup_allow_swap "$SWAP_ALLOWANCE"

# status_value LINES KEY: KEY= of the last status line in LINES.
status_value() {
	e2e_kv "$(printf '%s\n' "$1" | tail -n 1)" "$2"
}

zram_figures() {
	local mm
	read -r -a mm <"$zdir/mm_stat"
	awk -v o="${mm[0]}" -v c="${mm[1]}" -v u="${mm[2]}" -v l="${mm[3]}" -v d="$zdev" \
		'BEGIN { printf "stored %.0f MiB in %.0f MiB of RAM (%.2f:1), mem_limit %.0f MiB; ", o / 1048576, u / 1048576, u ? o / u : 0, l / 1048576 }'
	awk -v d="$zdev" '$1 == d { printf "swap used %.0f of %.0f MiB", $4 / 1024, $3 / 1024 }' /proc/swaps
}

kt_write_conf -m "$tmp/main.conf" <<EOF
kill_timeout = 1s

[tier last-resort]
low_available = 10%
min_oom_score_adj = 0
EOF
# The rule without swap, for comparison: free swap at or below 100% of it
# always holds.  Dry run: it never kills.
sed 's/^min_oom_score_adj = 0$/low_swap = 100%\nmin_oom_score_adj = 0/' "$tmp/main.conf" >"$tmp/noswap.conf"
grep -q '^low_swap = 100%' "$tmp/noswap.conf" || kt_fail "could not write the comparison config"

log=$tmp/daemon.log
kt_daemon_up "$tmp/main.conf" "$log" -v
daemon=$KT_DAEMON_PID
e2e_daemon_check "during startup"
start_line=$(grep -m1 'available memory is measured' "$log" | sed 's/^\[[^]]*\] //')
kt_log "daemon $daemon: $start_line"
[[ $start_line == *"in the memory cgroup $memdir"* ]] || e2e_fail "the daemon does not measure in $memdir"
[[ $start_line =~ swap:\ [0-9]+\ of\ ([0-9]+)\ MiB\ free ]] || e2e_fail "no swap figures in: $start_line"
[ "${BASH_REMATCH[1]}" -ge 900 ] || e2e_fail "the daemon sees ${BASH_REMATCH[1]} MiB of swap for the group, not ~1024"

ctl_log=$tmp/noswap.log
kt_daemon_up "$tmp/noswap.conf" "$ctl_log" -n -v
ctl=$KT_DAEMON_PID

# --------------------------------------------------- (a) benign over-commit --

kt_spawn_in_cgroup -o "$tmp/benign.out" "$KT_BINDIR/anongrow" 200 500 "$BENIGN_MIB" half >/dev/null
benign=$KT_LAST_PID
kt_wait_ready "$tmp/benign.out" "$benign" 10
# benign_done: it has allocated all, or died (a kill while it allocates
# fails at once, below)
benign_done() {
	kt_file_has "$tmp/benign.out" "^grown $BENIGN_MIB " || ! kt_pid_alive "$benign"
}
t_alloc=$(date +%s)
kt_wait_for "$ALLOC_TIMEOUT" benign_done ||
	e2e_fail "the benign process did not reach $BENIGN_MIB MiB in $ALLOC_TIMEOUT s (at: $(tail -n 1 "$tmp/benign.out"))"
kt_pid_alive "$benign" ||
	e2e_fail "the benign process $benign died while it allocated (kill lines: $(e2e_kill_lines | tr '\n' '|'))"
kt_log "benign pid $benign allocated $BENIGN_MIB MiB in a $LIMIT_MIB MiB group in $(($(date +%s) - t_alloc)) s and idles; watching ${WATCH}s"
e2e_oom_check "while the benign process allocated"
from=$(wc -l <"$log")
st0=$(kt_daemon_status "$log" "$daemon" "$from" last-resort)
end=$(( $(date +%s) + WATCH ))
while [ "$(date +%s)" -lt "$end" ]; do
	e2e_daemon_check "while the benign process idled"
	kt_pid_alive "$benign" || e2e_fail "the benign process $benign died (kill lines: $(e2e_kill_lines | tr '\n' '|'))"
	[ "$(e2e_kill_count)" -eq 0 ] || e2e_fail "psi-lmkd killed while swap had room: $(e2e_kill_lines | head -n 1)"
	e2e_oom_check "while the benign process idled"
	sleep 0.5
done
from=$(wc -l <"$log")
st1=$(kt_daemon_status "$log" "$daemon" "$from" last-resort)
vmswap=$(awk '$1 == "VmSwap:" { print int($2 / 1024) }' "/proc/$benign/status")
benign_rss=$(awk '$1 == "VmRSS:" { print int($2 / 1024) }' "/proc/$benign/status")
c0=$(status_value "$st0" mem_checks) h0=$(status_value "$st0" swap_held)
c1=$(status_value "$st1" mem_checks) h1=$(status_value "$st1" swap_held)
kt_log "after ${WATCH}s: benign VmRSS $benign_rss MiB, VmSwap $vmswap MiB; $(zram_figures)"
kt_log "status: mem_checks $c0 -> $c1, swap_held $h0 -> $h1"
{ e2e_is_uint "$c1" && e2e_is_uint "$h1"; } || e2e_fail "no mem_checks/swap_held in the status line: $st1"
[ "${vmswap:-0}" -ge 64 ] || e2e_fail "the benign process has only ${vmswap:-?} MiB in swap: the setup does not swap"
[ "$c1" -gt "$c0" ] || e2e_fail "no low_available check ran during the ${WATCH}s window (mem_checks $c0 -> $c1)"
[ "$h1" -gt "$h0" ] || e2e_fail "no check held back for swap during the window (swap_held $h0 -> $h1)"
held=$(grep -m1 'not firing while the kernel can still swap' "$log" | sed 's/^\[[^]]*\] //')
[ -n "$held" ] || e2e_fail "no 'not firing while the kernel can still swap' line"
kt_log "hold-back line: $held"
would=$(grep -E -m1 "would-kill pid=$benign .*reason=low_memory" "$ctl_log" | sed 's/^\[[^]]*\] //')
[ -n "$would" ] || e2e_fail "the comparison daemon (low_swap = 100%) never chose the benign process: the test does not reproduce the issue"
kt_log "the rule without swap would have: $would"
kill -TERM "$ctl" 2>/dev/null
kt_wait_for 5 kt_pid_dead "$ctl" || e2e_fail "the comparison daemon does not exit on SIGTERM"

# --------------------------------------------------------- (b) the runaway --

sys_oom0=$(awk '$1 == "oom_kill" { print $2 }' /proc/vmstat)
e2e_grower "$tmp/runaway.out" "$RATE" 900 65536 half
runaway=$grower
kt_log "runaway pid $runaway grows ${RATE} MiB/s (adj 900)"
timeout_s=$(( (LIMIT_MIB + 1024) / RATE + 20 ))
e2e_wait_first_kill "$runaway" "the runaway" "$timeout_s"
at_kill=$(zram_figures)
line=$(e2e_kill_lines | head -n 1)
kt_log "kill line: $line"
[ "$(e2e_kv "$line" pid)" = "$runaway" ] || e2e_fail "the first kill is not the runaway (pid $runaway): $line"
[ "$(e2e_kv "$line" reason)" = low_memory ] || e2e_fail "the kill's reason is not low_memory: $line"
[ "$(e2e_kv "$line" tier)" = last-resort ] || e2e_fail "the kill's tier is not last-resort: $line"
kt_wait_for 5 kt_pid_dead "$runaway" || e2e_fail "the runaway $runaway is alive 5 s after its kill line"
e2e_oom_check "around psi-lmkd's kill"
firing=$(grep 'firing$' "$log" | grep -v 'not firing' | tail -n 1 | sed 's/^\[[^]]*\] //')
[[ $firing == *"at or below low_swap"* ]] ||
	e2e_fail "the firing line does not say that free swap was at or below low_swap: ${firing:-none}"
kill_t=$(kt_log_time "$line")
read -r gmib _ < <(awk '$1 == "grown" { m = $2; t = $3 } END { print m + 0, t + 0 }' "$tmp/runaway.out")

e2e_watch "$SETTLE" "after the kill" e2e_alive "$benign" "the benign process (after the runaway's kill)"
n=$(e2e_kill_count)
[ "$n" -eq 1 ] || e2e_fail "expected exactly one kill, got $n: $(e2e_kill_lines | tr '\n' '|')"
e2e_oom_check "after psi-lmkd's kill"
from=$(wc -l <"$log")
st2=$(kt_daemon_status "$log" "$daemon" "$from" last-resort)

# ----------------------------------------------------------------- report --

echo "---- daemon log (without the per-status lines) ----"
grep -v 'status tier=' "$log"
echo "---------------------------------------------------"
echo "swap device: $zdev, disksize $ZRAM_SIZE, mem_limit $ZRAM_MEM_LIMIT; group ${LIMIT_MIB} MiB ($KT_CG_LAYOUT)"
echo "(a) benign: $BENIGN_MIB MiB allocated once, idle ${WATCH}s: not killed; VmRSS $benign_rss MiB, VmSwap $vmswap MiB;"
echo "    checks during the window: $((c1 - c0)), all held back for swap: $((h1 - h0)); the rule without swap: $would"
awk -v s="$start" -v k="$kill_t" -v g="$gmib" -v r="$RATE" 'BEGIN {
	printf "(b) runaway killed %.2f s after it started, %d MiB grown (%d MiB/s)\n", k - s, g, r }'
echo "    at the kill: $at_kill"
echo "    $firing"
echo "    status after: $(printf '%s\n' "$st2" | tail -n 1 | sed 's/^\[[^]]*\] //')"
echo "OOM kill counter of the group: $(kt_oom_kills); system-wide during (b): +$(( $(awk '$1 == "oom_kill" { print $2 }' /proc/vmstat) - sys_oom0 ))"

# The device goes now (the traps would do it too); check it is gone.
# shellcheck disable=SC2119 # no signal: it returns
kt_cleanup
kt_zram_remove || kt_fail "the zram device could not be removed"
! grep -q "^${zdev}[[:space:]]" /proc/swaps || kt_fail "$zdev is still in /proc/swaps"
echo "zram device removed; /proc/swaps: $(awk 'NR > 1 { print $1 }' /proc/swaps | tr '\n' ' ')"
echo "PASS"
exit 0
