#!/bin/bash
# SPDX-License-Identifier: MIT
# test-oomd-xattr.sh - systemd's ManagedOOMPreference marks on the real
# cgroupfs (issue 18, item 4): user.oomd_omit on a root-owned group protects
# its processes for everyone; the same mark set by a user on a group it owns
# counts only among that user's own processes.
#
# In a fresh 128 MiB test group, band 500 (one tier "some 100ms 2s"), with
# filepressure (root, adj 0) in the test group itself as the pressure maker:
#
# Phase 1, two root-owned child groups:
#   omit/   user.oomd_omit=1 (set by root), a KT_OOMD_BIG_MIB (40) MiB memhog
#           at adj 500;
#   plain/  no mark, a KT_OOMD_BIG_MIB/2 MiB memhog at adj 500.
#   Asserted: the first kill takes the plain one; the omitted one is never
#   killed (it is alive, and no kill line names it, 5 s after the first
#   kill under continued pressure). The old daemon killed the larger,
#   omitted one.
#
# Phase 2, a group delegated to uid 60001 (user/, chowned, with user/hog and
# user/shell below it) and a root-owned other/:
#   user/hog    uid 60001's KT_OOMD_BIG_MIB MiB memhog; uid 60001 itself
#               sets user.oomd_omit=1 on the group (setfattr under setpriv);
#   user/shell  uid 60001's 8 MiB memhog, no mark;
#   other/      uid 60002's KT_OOMD_BIG_MIB/2 MiB memhog, no mark.
#   Asserted: kill #1 is 60001's shell (60001's mark orders its own
#   processes), kill #2 is 60001's hog (its owner has nothing else left in
#   the band: the mark never moves a kill to 60002), and 60002's process
#   lives through both (a kill #3 of it, as the band's last process under
#   pressure that goes on, is the tier's job: on a slow guest it can come
#   before the test looks). The old daemon killed 60001's hog first; a
#   daemon that trusted any mark would have killed 60002's.
#
# Needs cgroupfs user.* xattrs (Linux 5.7+): probed with setfattr on a child
# of the test group, skipped (77) with the reason where the kernel refuses.
# Exit: 0 pass, 1 fail, 77 skip (CI=true turns non-kernel skips into fails).

set -u

srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$srcdir/tests/kernel/lib.sh" || { echo "cannot source $srcdir/tests/kernel/lib.sh" >&2; exit 99; }
# shellcheck source-path=SCRIPTDIR source=policy-body.sh
. "$srcdir/tests/kernel/policy-body.sh" || { echo "cannot source $srcdir/tests/kernel/policy-body.sh" >&2; exit 99; }

TIMEOUT=${KT_OOMD_TIMEOUT:-40}
BIG=${KT_OOMD_BIG_MIB:-40}
USER_A=60001
USER_B=60002

pol_init
command -v setpriv >/dev/null 2>&1 || kt_skip_or_fail "no setpriv(1) to run processes as other uids"
command -v setfattr >/dev/null 2>&1 || kt_skip_or_fail "no setfattr(1) (Debian package attr)"

# The helper must be reachable by the unprivileged uids.
chmod 711 "$tmp" || kt_fail "chmod $tmp"
bin=$tmp/bin
mkdir -m 755 "$bin" || kt_fail "mkdir $bin"
if ! cp "$KT_BINDIR/memhog" "$bin/memhog" || ! chmod 755 "$bin/memhog"; then
	kt_fail "cannot copy memhog into $bin"
fi

kt_cgroup_create psi-lmkd-test 128
top_dir=$KT_CG2_DIR
top_rel=$KT_CG2_REL

# group NAME [UID]: make the child group NAME (a path below the test group),
# owned by UID (default root) with its interface files, as systemd delegates.
group() {
	local d=$top_dir/$1
	mkdir "$d" || kt_fail "cannot create cgroup $d"
	KT_CG_DIRS+=("$d")
	if [ -n "${2:-}" ]; then
		chown "$2:$2" "$d" "$d/cgroup.procs" "$d/cgroup.subtree_control" "$d/cgroup.threads" ||
			kt_fail "cannot chown $d to uid $2"
	fi
}

# hog GROUP UID MIB: a memhog of MIB MiB at adj 500 run as UID in GROUP;
# pid in KT_LAST_PID.
hog() {
	local grp=$1 uid=$2 mib=$3 pid out saved_dir=$KT_CG2_DIR saved_rel=$KT_CG2_REL
	out=$tmp/hog-$(printf '%s' "$grp" | tr / -)-$uid.out
	KT_CG2_DIR=$top_dir/$grp
	KT_CG2_REL=$top_rel/$grp
	kt_spawn_in_cgroup -o "$out" setpriv --reuid="$uid" --regid="$uid" --clear-groups "$bin/memhog" "$mib" 500 \
		>/dev/null
	pid=$KT_LAST_PID
	KT_CG2_DIR=$saved_dir
	KT_CG2_REL=$saved_rel
	kt_wait_ready "$out" "$pid" 20
	[ "$(awk '$1 == "Uid:" { print $2 }' "/proc/$pid/status")" = "$uid" ] ||
		kt_fail "pid $pid does not run as uid $uid: $(grep '^Uid:' "/proc/$pid/status")"
	[ "$(cat "/proc/$pid/oom_score_adj")" = 500 ] || kt_fail "pid $pid: oom_score_adj is not 500"
	grep -qx "0::$top_rel/$grp" "/proc/$pid/cgroup" || kt_fail "pid $pid is not in $top_rel/$grp"
	KT_LAST_PID=$pid
}

# stop_phase PID...: stop the daemon, then the pressure maker and PIDs (all
# started by this test).
stop_phase() {
	local pid
	pol_daemon_stop
	for pid in "$reader" "$@"; do
		kill -KILL "$pid" 2>/dev/null
	done
	for pid in "$reader" "$@"; do
		kt_wait_for 5 kt_pid_dead "$pid" || kt_fail "pid $pid is alive 5 s after SIGKILL"
	done
	reader=
}

# never_killed PID WHAT: no kill line so far names PID.
never_killed() {
	local line
	while IFS= read -r line; do
		[ "$(e2e_kv "$line" pid)" != "$1" ] || e2e_fail "$2 $1 was killed: $line"
	done < <(e2e_kill_lines)
}

pol_conf_one_tier 500 1s
kt_log "config: band 500, scope $top_rel, systemd_oom_preferences at its default"

# ---- phase 1: a root-owned omit mark protects
group omit
if ! err=$(setfattr -n user.oomd_omit -v 1 "$top_dir/omit" 2>&1); then
	kt_skip "this kernel's cgroupfs refuses user.* xattrs (Linux 5.7+ has them): $err"
fi
[ "$(getfattr --only-values -n user.oomd_omit "$top_dir/omit" 2>/dev/null)" = 1 ] ||
	kt_fail "user.oomd_omit on $top_dir/omit does not read back as 1"
group plain
hog omit 0 "$BIG"
omitted=$KT_LAST_PID
hog plain 0 $((BIG / 2))
plain=$KT_LAST_PID
kt_log "phase 1: omitted $omitted (root, $BIG MiB, omit/ has user.oomd_omit=1); plain $plain ($((BIG / 2)) MiB)"

log=$tmp/daemon-1.log
pol_daemon_start -v
pol_pressure 0
pol_kill 1 "$TIMEOUT" "phase 1"
[ "$(e2e_kv "$line" pid)" != "$omitted" ] ||
	e2e_fail "the daemon killed $omitted in a group marked user.oomd_omit=1 (root's): $line"
[ "$(e2e_kv "$line" pid)" = "$plain" ] || e2e_fail "phase 1 kill #1 is not the unmarked $plain: $line"
kt_wait_for 5 kt_pid_dead "$plain" || e2e_fail "the unmarked $plain is alive after its kill"
# the pressure goes on; nothing in the band is left but the omitted one,
# and the tier goes on firing
pol_quiet 5
never_killed "$omitted" "the omitted"
kt_pid_alive "$omitted" || e2e_fail "the omitted $omitted died"
kt_pid_alive "$reader" || e2e_fail "filepressure (adj 0) died"
kt_log "phase 1: $(e2e_kill_count) kill(s); the omitted $omitted alive 5 s later"
stop_phase "$omitted"
log1=$log

# ---- phase 2: a user's own mark is owner-scoped
group user "$USER_A"
group user/hog "$USER_A"
group user/shell "$USER_A"
group other
if ! err=$(setpriv --reuid="$USER_A" --regid="$USER_A" --clear-groups \
	setfattr -n user.oomd_omit -v 1 "$top_dir/user/hog" 2>&1); then
	kt_fail "uid $USER_A cannot set user.oomd_omit on its own group $top_dir/user/hog: $err"
fi
hog user/hog "$USER_A" "$BIG"
a_hog=$KT_LAST_PID
hog user/shell "$USER_A" 8
a_shell=$KT_LAST_PID
hog other "$USER_B" $((BIG / 2))
b_hog=$KT_LAST_PID
kt_log "phase 2: uid $USER_A's hog $a_hog ($BIG MiB, user/hog marked omit by uid $USER_A), its shell $a_shell (8 MiB); uid $USER_B's $b_hog ($((BIG / 2)) MiB)"

log=$tmp/daemon-2.log
pol_daemon_start -v
pol_pressure 0
pol_kill 1 "$TIMEOUT" "phase 2"
[ "$(e2e_kv "$line" pid)" != "$b_hog" ] ||
	e2e_fail "uid $USER_A's own mark moved the kill to uid $USER_B's $b_hog: $line"
[ "$(e2e_kv "$line" pid)" = "$a_shell" ] ||
	e2e_fail "phase 2 kill #1 is not uid $USER_A's unmarked $a_shell (its mark orders its own processes): $line"
e2e_alive_unless_later 2 "$b_hog" "uid $USER_B's memhog (after kill #1)"
pol_kill 2 "$TIMEOUT" "phase 2"
[ "$(e2e_kv "$line" pid)" = "$a_hog" ] ||
	e2e_fail "phase 2 kill #2 is not uid $USER_A's marked $a_hog (its mark cannot shield it from uid $USER_B): $line"
[ "$(e2e_kv "$line" uid)" = "$USER_A" ] || e2e_fail "phase 2 kill #2 uid is not $USER_A: $line"
kt_wait_for 5 kt_pid_dead "$a_hog" || e2e_fail "uid $USER_A's $a_hog is alive after its kill"
e2e_alive_unless_later 2 "$b_hog" "uid $USER_B's memhog (after kill #2)"
stop_phase "$b_hog"

for l in "$log1" "$log"; do
	echo "---- daemon log ($(basename "$l")) ----"
	pol_strip <"$l" | sed 's/^/  /'
done
printf 'root-owned omit: %s spared, %s killed; uid %s'"'"'s own omit: shell %s then hog %s killed, uid %s'"'"'s %s alive\n' \
	"$omitted" "$plain" "$USER_A" "$a_shell" "$a_hog" "$USER_B" "$b_hog"
echo "PASS"
exit 0
