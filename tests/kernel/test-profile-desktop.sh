#!/bin/bash
# SPDX-License-Identifier: MIT
# test-profile-desktop.sh - the shipped desktop/server profile
# (conf/psi-lmkd.conf) kills the process whose memory runs away, and
# nothing else, before the kernel OOM killer acts (issue 18).
#
# In a fresh 512 MiB test group without swap, a desktop session's process
# set, each a copy of a test helper named after what it stands for:
#   pipewire   the sound server, a user service: adj 200, 24 MiB (memhog)
#   renderer   a browser tab renderer:           adj 300, 64 MiB (memhog)
#   editor     an editor:                        adj 0,   16 MiB (memhog)
#   runaway    adj 0, anonymous memory growing KT_PD_RATE (32) MiB/s until
#              the group runs out (anongrow)
# The daemon runs on conf/psi-lmkd.conf as shipped -- its tiers, shields and
# victim_order -- with only pressure and scope pointed at the test group and
# memory_cgroup at its memory-limit directory (pol_conf_from_shipped).
#
# Asserted: the first kill line names the runaway; it dies; the group's
# kernel OOM kill counter (memory.events / v1 memory.oom_control) is 0 the
# whole time; pipewire, renderer and editor are alive until KT_PD_SETTLE (3)
# s after the kill, and that kill is the only one. Reported: which tier
# killed, when, the runaway's size and score against the renderer's, the
# group's peak usage and headroom left.
#
# The old order (oom_score_adj first, RSS only a tie-break) killed the
# renderer, then the sound server, then the runaway: run with
# KT_PROFILE_ORDER=adj to see this test fail that way. The old code cannot
# read the profile at all (no victim_order key).
# Exit: 0 pass, 1 fail, 77 skip (CI=true turns non-kernel skips into fails).

set -u

srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$srcdir/tests/kernel/lib.sh" || { echo "cannot source $srcdir/tests/kernel/lib.sh" >&2; exit 99; }
# shellcheck source-path=SCRIPTDIR source=policy-body.sh
. "$srcdir/tests/kernel/policy-body.sh" || { echo "cannot source $srcdir/tests/kernel/policy-body.sh" >&2; exit 99; }

LIMIT_MIB=512
RATE=${KT_PD_RATE:-32}
SETTLE=${KT_PD_SETTLE:-3}
GROW_TIMEOUT=$(( LIMIT_MIB / RATE + 15 ))	# seconds: well past the point the group runs out

pol_init anongrow

kt_cgroup_create psi-lmkd-test "$LIMIT_MIB"
pol_conf_from_shipped "$srcdir/conf/psi-lmkd.conf"
[ "$(kt_oom_kills)" = 0 ] || kt_fail "a fresh group has OOM kill counter '$(kt_oom_kills)', not 0"

# copies of the helpers under the names they stand for (comm = the name)
pol_desktop_set
sound=${pd_pid[pipewire]} renderer=${pd_pid[renderer]} editor=${pd_pid[editor]}

pol_daemon_start -v
kt_file_has "$log" "available memory is measured in the memory cgroup $(kt_mem_dir)" ||
	e2e_fail "the daemon does not measure available memory in $(kt_mem_dir)"

# the survivors: fail at once if any of them dies
survivors_alive() {
	kt_pid_alive "$sound" || e2e_fail "the sound server (pipewire, adj 200, pid $sound) died: $(e2e_kill_lines | tr '\n' '|')"
	kt_pid_alive "$renderer" || e2e_fail "the renderer (adj 300, pid $renderer) died: $(e2e_kill_lines | tr '\n' '|')"
	kt_pid_alive "$editor" || e2e_fail "the editor (adj 0, pid $editor) died: $(e2e_kill_lines | tr '\n' '|')"
}

pol_desktop_runaway "$RATE"
t0=$(date +%s%N)
start=$(kt_elapsed)
kt_log "runaway $runaway grows ${RATE} MiB/s (adj 0) in ${LIMIT_MIB} MiB; pipewire $sound, renderer $renderer, editor $editor"

e2e_wait_first_kill "$runaway" "the runaway" "$GROW_TIMEOUT" survivors_alive
line=$(pol_kill_line 1)
kt_log "kill #1: $line"
[ "$(e2e_kv "$line" pid)" = "$runaway" ] || e2e_fail "kill #1 is not the runaway (pid $runaway): $line"
[ "$(e2e_kv "$line" comm)" = runaway ] || e2e_fail "kill #1: comm is not runaway: $line"
kt_wait_for 5 kt_pid_dead "$runaway" || e2e_fail "the runaway $runaway is alive 5 s after its kill line"
e2e_oom_check "around psi-lmkd's kill"

kt_log "runaway killed; watching ${SETTLE}s more"
e2e_watch "$SETTLE" "after the kill" survivors_alive
n=$(e2e_kill_count)
[ "$n" -eq 1 ] || e2e_fail "expected exactly one kill, got $n: $(e2e_kill_lines | tr '\n' '|')"
e2e_oom_check "after psi-lmkd's kill"
pol_daemon_stop

# ----------------------------------------------------------------- report --
peak=$(kt_mem_stat peak)
limit=$(kt_mem_stat limit)
grown=$(awk '$1 == "grown" { m = $2 } END { print m + 0 }' "$tmp/runaway.out")
rss=$(e2e_kv "$line" rss_kb)
badness=$(e2e_kv "$line" badness_kb)
echo "---- daemon log ----"
pol_strip <"$log" | sed 's/^/  /'
echo "--------------------"
awk -v s="$start" -v k="$(kt_log_time "$line")" -v t="$(e2e_kv "$line" tier)" -v g="$grown" -v r="$rss" \
	-v b="$badness" -v p="$peak" -v l="$limit" -v rate="$RATE" 'BEGIN {
	printf "tier %s killed the runaway %.2f s after it started, at %d MiB grown (rss_kb=%d, badness_kb=%d)\n", t, k - s, g, r, b
	printf "the renderer scored about %d kB (64 MiB + 300/1000 of %d MiB); the sound server about %d kB\n",
		64 * 1024 + 300 * l / 1024 / 1000, l / 1048576, 24 * 1024 + 200 * l / 1024 / 1000
	printf "peak usage %.1f MiB of %.0f MiB: %.1f MiB headroom left, %.2f s of growth at %d MiB/s\n",
		p / 1048576, l / 1048576, (l - p) / 1048576, (l - p) / 1048576 / rate, rate
}'
echo "group OOM kill counter: $(kt_oom_kills); pipewire, renderer, editor alive"
echo "PASS"
exit 0
