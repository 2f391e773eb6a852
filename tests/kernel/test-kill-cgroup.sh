#!/bin/bash
# SPDX-License-Identifier: MIT
# test-kill-cgroup.sh - kill_cgroup = true kills the victim's whole cgroup2
# group through cgroup.kill and nothing else, except when the group or any
# group below it (cgroup.kill is recursive) holds a process that may not be
# this tier's victim: then the victim dies alone.
#
# A fresh 128 MiB test group (the limit on the v1 memcg on a hybrid host, on
# the cgroup2 group on pure v2) with five cgroup2 groups, one nested; no
# process in the parent:
#   a: memhogs adj 900 (8 MiB), 900 (8 MiB), 900 (2 MiB)
#   e: memhog adj 700 (8 MiB); its child group e/sub: memhog adj 100 (below
#      the band: it may not die for this tier)
#   d: memhog adj 600 (8 MiB) and "protectme" (a copy of memhog, adj 600)
#   b: memhogs adj 300 (8 MiB) x 2
#   c: filepressure at adj 0 (the pressure maker)
# psi-lmkd watches the parent's memory.pressure, scope = the parent:
#
#   [daemon] protect = ^protectme$
#   [tier test] trigger = some 100ms 2s   min_oom_score_adj = 200
#               kill_cgroup = true
#
# Asserted, in order:
#  1. kill #1 names a process of leaf a; "killed cgroup .../a through
#     cgroup.kill (3 processes)"; all three die within 2 s and leaf a is
#     empty; every process of b, c, d and e is alive (or, for a later
#     kill's victim, taken by that later kill: on a slow guest the next kill
#     can come before the test looks -- each kill's own check below says
#     whether it took the right one).
#  2. kill #2 names e's adj 700 memhog; "kill_cgroup: the subtree of .../e
#     holds pid P (memhog, below-band, in .../e/sub): killing pid V alone";
#     no "killed cgroup .../e" line; the memhog dies, e/sub's lives on.
#  3. kill #3 names the adj 600 memhog of d; the daemon logs "kill_cgroup:
#     the subtree of .../d holds pid P (protectme, protected, in .../d):
#     killing pid V alone"; the memhog dies, protectme lives on.
#  4. kill #4 names a process of leaf b; "killed cgroup .../b through
#     cgroup.kill (2 processes in its subtree)"; both die.
#  5. afterwards (KT_KC_SETTLE, 4 s of pressure) no more kills: protectme,
#     e/sub's memhog and the pressure maker survive; exactly four kill lines.
# Exit: 0 pass, 1 fail, 77 skip (CI=true turns non-kernel skips into fails).

set -u

srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$srcdir/tests/kernel/lib.sh" || { echo "cannot source $srcdir/tests/kernel/lib.sh" >&2; exit 99; }
# shellcheck source-path=SCRIPTDIR source=policy-body.sh
. "$srcdir/tests/kernel/policy-body.sh" || { echo "cannot source $srcdir/tests/kernel/policy-body.sh" >&2; exit 99; }

TIMEOUT=${KT_KC_TIMEOUT:-20}	# seconds of pressure for each kill
SETTLE=${KT_KC_SETTLE:-4}

pol_init
kt_cgroup_create psi-lmkd-test 128
[ -e "$KT_CG2_DIR/cgroup.kill" ] || kt_skip "kernel lacks cgroup.kill (Linux < 5.14)"
parent_dir=$KT_CG2_DIR
parent_rel=$KT_CG2_REL
parent_pressure=$KT_PRESSURE

# The leaves: made here, registered for cleanup.
for leaf in a b c d e e/sub; do
	mkdir "$parent_dir/$leaf" || kt_skip_or_fail "cannot create cgroup $parent_dir/$leaf"
	KT_CG_DIRS+=("$parent_dir/$leaf")
done

# in_leaf LEAF CMD...: run CMD (a kt_spawn_in_cgroup user) with the test
# group set to LEAF (the v1 memcg, if any, stays the parent's).
in_leaf() {
	local leaf=$1 sd=$KT_CG2_DIR sr=$KT_CG2_REL
	shift
	KT_CG2_DIR=$parent_dir/$leaf
	KT_CG2_REL=$parent_rel/$leaf
	"$@"
	KT_CG2_DIR=$sd
	KT_CG2_REL=$sr
}

# leaf_pids LEAF: the pids in a leaf, sorted.
leaf_pids() {
	sort -n "$parent_dir/$1/cgroup.procs"
}

cp "$KT_BINDIR/memhog" "$tmp/protectme" || kt_fail "cannot copy memhog to $tmp/protectme"
chmod 755 "$tmp/protectme"

in_leaf a pol_hog a1 8 900; a1=$KT_LAST_PID
in_leaf a pol_hog a2 8 900; a2=$KT_LAST_PID
in_leaf a pol_hog a3 2 900; a3=$KT_LAST_PID
in_leaf e pol_hog e1 8 700; e1=$KT_LAST_PID
in_leaf e/sub pol_hog es 2 100; es=$KT_LAST_PID
in_leaf d pol_hog d1 8 600; d1=$KT_LAST_PID
# protectme: the same program under another name (comm comes from the file name).
in_leaf d kt_spawn_in_cgroup -o "$tmp/protectme.out" "$tmp/protectme" 8 600 >/dev/null
prot=$KT_LAST_PID
kt_wait_ready "$tmp/protectme.out" "$prot" 20
[ "$(cat "/proc/$prot/comm")" = protectme ] || kt_fail "pid $prot has comm '$(cat "/proc/$prot/comm")', not protectme"
in_leaf b pol_hog b1 8 300; b1=$KT_LAST_PID
in_leaf b pol_hog b2 8 300; b2=$KT_LAST_PID
kt_log "leaf a: $a1 $a2 $a3 (adj 900); e: $e1 (adj 700), e/sub: $es (adj 100); d: $d1 (adj 600) + protectme $prot (adj 600); b: $b1 $b2 (adj 300)"
[ "$(leaf_pids a | tr '\n' ' ')" = "$(printf '%s\n' "$a1" "$a2" "$a3" | sort -n | tr '\n' ' ')" ] ||
	kt_fail "leaf a holds $(leaf_pids a | tr '\n' ' '), expected $a1 $a2 $a3"

pol_conf -p "$parent_pressure" -s "$parent_rel" <<EOF
kill_timeout = 1s
protect = ^protectme\$

[tier test]
trigger = some 100ms 2s
min_oom_score_adj = 200
kill_cgroup = true
EOF
pol_daemon_start -v
in_leaf c pol_pressure 0

# all_alive PID...: fail unless every PID is alive.
all_alive() {
	local p
	for p in "$@"; do
		kt_pid_alive "$p" || e2e_fail "pid $p died ($1 ... should all be alive now)"
	done
}
# killed_after N PID: a kill after the Nth names PID, or (a process of leaf
# b, which dies whole) the other process of b.
# shellcheck disable=SC2317 # run by kt_wait_for
killed_after() {
	case " $b1 $b2 " in
	*" $2 "*) e2e_killed_after "$1" "$b1" || e2e_killed_after "$1" "$b2" ;;
	*) e2e_killed_after "$1" "$2" ;;
	esac
}
# later_victims N PID...: after kill #N, each PID (a later kill's victim) is
# alive, or a later kill took it: on a slow guest the daemon's next kill can
# come before the test looks; its own check says whether it took the right
# one. A death no later kill explains fails.
later_victims() {
	local n=$1 p
	shift
	for p in "$@"; do
		kt_pid_alive "$p" || kt_wait_for 2 killed_after "$n" "$p" ||
			e2e_fail "pid $p died, and no kill after #$n explains it (kill lines: $(e2e_kill_lines | tr '\n' '|'))"
	done
}
all_dead() {
	local p
	for p in "$@"; do
		kt_pid_alive "$p" && return 1
	done
	return 0
}

# -------------------------------------------------- 1: leaf a, as a whole --

pol_kill 1 "$TIMEOUT"
v=$(e2e_kv "$line" pid)
case " $a1 $a2 " in
*" $v "*) ;;
*) e2e_fail "kill #1 should name one of leaf a's 8 MiB memhogs ($a1 $a2): $line" ;;
esac
kt_wait_for 2 all_dead "$a1" "$a2" "$a3" || e2e_fail "leaf a's processes are not all dead 2 s after kill #1: $(leaf_pids a | tr '\n' ' ')"
gone_a=$(kt_elapsed)
all_alive "$es" "$prot" "$reader"
later_victims 1 "$e1" "$d1" "$b1" "$b2"
[ -z "$(leaf_pids a)" ] || e2e_fail "leaf a still lists $(leaf_pids a | tr '\n' ' ')"
kt_wait_for 2 kt_file_has "$log" "killed cgroup $parent_rel/a through cgroup.kill \\(3 processes in its subtree\\)" ||
	e2e_fail "no 'killed cgroup $parent_rel/a through cgroup.kill (3 processes in its subtree)' line"
kt_log "leaf a gone $(awk -v a="$(kt_log_time "$line")" -v b="$gone_a" 'BEGIN { printf "%.3f", b - a }') s after the kill line; b, c, d alive"

# --------------------- 2: a group below e holds a process below the band --

pol_kill 2 "$TIMEOUT"
[ "$(e2e_kv "$line" pid)" = "$e1" ] || e2e_fail "kill #2 should be e's adj 700 memhog $e1: $line"
kt_wait_for 2 kt_pid_dead "$e1" || e2e_fail "memhog $e1 is alive 2 s after kill #2"
kt_wait_for 2 kt_file_has "$log" "kill_cgroup: the subtree of $parent_rel/e holds pid $es \\(memhog, below-band, in $parent_rel/e/sub\\): killing pid $e1 alone" ||
	e2e_fail "no 'kill_cgroup: the subtree of $parent_rel/e holds pid $es (memhog, below-band, in $parent_rel/e/sub): killing pid $e1 alone' line"
! grep -q "killed cgroup $parent_rel/e " "$log" || e2e_fail "the daemon killed e's subtree as a whole: $(grep "killed cgroup $parent_rel/e " "$log")"
all_alive "$es" "$prot" "$reader"
later_victims 2 "$d1" "$b1" "$b2"

# ----------------------------------- 3: leaf d holds a protected process --

pol_kill 3 "$TIMEOUT"
[ "$(e2e_kv "$line" pid)" = "$d1" ] || e2e_fail "kill #3 should be leaf d's adj 600 memhog $d1: $line"
kt_wait_for 2 kt_pid_dead "$d1" || e2e_fail "memhog $d1 is alive 2 s after kill #3"
kt_wait_for 2 kt_file_has "$log" "kill_cgroup: the subtree of $parent_rel/d holds pid $prot \\(protectme, protected, in $parent_rel/d\\): killing pid $d1 alone" ||
	e2e_fail "no 'kill_cgroup: the subtree of $parent_rel/d holds pid $prot (protectme, protected, in $parent_rel/d): killing pid $d1 alone' line"
! grep -q "killed cgroup $parent_rel/d " "$log" || e2e_fail "the daemon killed leaf d as a whole: $(grep "killed cgroup $parent_rel/d " "$log")"
all_alive "$es" "$prot" "$reader"
later_victims 3 "$b1" "$b2"

# ------------------------------------------------------- 4: leaf b, whole --

pol_kill 4 "$TIMEOUT"
v=$(e2e_kv "$line" pid)
case " $b1 $b2 " in
*" $v "*) ;;
*) e2e_fail "kill #4 should name one of leaf b's memhogs ($b1 $b2): $line" ;;
esac
kt_wait_for 2 all_dead "$b1" "$b2" || e2e_fail "leaf b's processes are not all dead 2 s after kill #4"
kt_wait_for 2 kt_file_has "$log" "killed cgroup $parent_rel/b through cgroup.kill \\(2 processes in its subtree\\)" ||
	e2e_fail "no 'killed cgroup $parent_rel/b through cgroup.kill (2 processes in its subtree)' line"
all_alive "$es" "$prot" "$reader"

# ------------------------------------------------- 5: nothing else dies --

kt_log "band empty but for protectme; ${SETTLE}s more pressure"
e2e_watch "$SETTLE" "after the band became empty" all_alive "$es" "$prot" "$reader"
n=$(e2e_kill_count)
[ "$n" -eq 4 ] || e2e_fail "expected exactly 4 kill lines, got $n"
[ "$(grep -c 'killed cgroup ' "$log")" -eq 2 ] || e2e_fail "expected 2 'killed cgroup' lines: $(grep 'killed cgroup ' "$log")"
pol_daemon_stop

echo "---- daemon log ----"
pol_strip <"$log" | sed 's/^/  /'
pol_report_figures
echo "PASS"
exit 0
