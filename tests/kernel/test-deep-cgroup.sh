#!/bin/bash
# SPDX-License-Identifier: MIT
# test-deep-cgroup.sh - a process hides in a cgroup nested deeper than
# PATH_MAX inside the test group (review M8: anyone with a delegated
# subtree can do this). Its path is then unknown to psi-lmkd, and an unknown
# path must count as inside every scope, never as outside.
#
# In a fresh 128 MiB test group: a memhog at adj 900 (8 MiB), moved into
# KT_DEEP_LEVELS (17) nested groups of 250-byte names below the test group
# (over 4 KiB of path); a keeper memhog at adj 300 and filepressure at adj 0
# in the test group. The daemon's scope is the test group (not "/"); one
# tier "some 100ms 2s", min_oom_score_adj 500.
#
# Asserted: the deep memhog's /proc/PID/cgroup line is longer than 4096
# bytes or cannot be read (else the test would prove nothing); the first
# kill line names the deep memhog (adj 900); keeper and pressure maker
# live. The old daemon read no cgroup for it, took it for out of scope and
# killed nothing ("no process has oom_score_adj >= 500").
# Exit: 0 pass, 1 fail, 77 skip (CI=true turns non-kernel skips into fails).

set -u

srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$srcdir/tests/kernel/lib.sh" || { echo "cannot source $srcdir/tests/kernel/lib.sh" >&2; exit 99; }
# shellcheck source-path=SCRIPTDIR source=policy-body.sh
. "$srcdir/tests/kernel/policy-body.sh" || { echo "cannot source $srcdir/tests/kernel/policy-body.sh" >&2; exit 99; }

TIMEOUT=${KT_DEEP_TIMEOUT:-40}
LEVELS=${KT_DEEP_LEVELS:-17}
NAME=$(printf 'd%.0s' $(seq 1 250))

pol_init
kt_cgroup_create psi-lmkd-test 128

# The deep groups have absolute paths longer than PATH_MAX: they are made,
# entered and removed with relative paths from inside, and removed before
# kt_cleanup removes the test group.
deep_made=0
deep=
deep_cleanup() {
	[ "$deep_made" -gt 0 ] || return 0
	[ -n "$deep" ] && kill -KILL "$deep" 2>/dev/null
	(
		cd "$KT_CG2_DIR" || exit 1
		for _ in $(seq 1 "$deep_made"); do cd "$NAME" || exit 1; done
		for _ in $(seq 1 50); do
			[ -z "$(cat cgroup.procs 2>/dev/null)" ] && break
			sleep 0.1
		done
		for _ in $(seq 1 "$deep_made"); do cd .. && rmdir "$NAME"; done
	) || kt_log "cleanup: could not remove the deep groups below $KT_CG2_DIR"
	deep_made=0
}
trap 'deep_cleanup; kt_cleanup' EXIT
trap 'deep_cleanup; kt_cleanup INT' INT
trap 'deep_cleanup; kt_cleanup TERM' TERM
trap 'deep_cleanup; kt_cleanup HUP' HUP

pol_hog memhog-900 8 900
deep=$KT_LAST_PID
made=$(
	cd "$KT_CG2_DIR" || exit 1
	n=0
	for _ in $(seq 1 "$LEVELS"); do
		mkdir "$NAME" && cd "$NAME" || break
		n=$((n + 1))
	done
	echo "$n"
	[ "$n" -eq "$LEVELS" ] && echo "$deep" >cgroup.procs
)
deep_made=${made%%$'\n'*}
[ "$deep_made" = "$LEVELS" ] || kt_fail "could make only ${deep_made:-0} of $LEVELS nested groups"
line=$(grep '^0::' "/proc/$deep/cgroup" 2>/dev/null)
if [ -n "$line" ] && [ "${#line}" -le 4096 ]; then
	kt_fail "the deep memhog's cgroup line is only ${#line} bytes: the test would prove nothing (${line:0:80}...)"
fi
kt_log "memhog $deep (adj 900) moved $LEVELS groups deep: its 0:: line is ${#line} bytes${line:+ (readable)}"
pol_hog keeper-300 8 300
keeper=$KT_LAST_PID

pol_conf_one_tier 500 1s
pol_daemon_start -v
pol_pressure 0

pol_first_kill_is "$deep" "$TIMEOUT"
kt_wait_for 5 kt_pid_dead "$deep" || e2e_fail "the deep memhog $deep is alive after its kill"
pol_daemon_stop

echo "---- daemon log ----"
pol_strip <"$log" | sed 's/^/  /' | cut -c1-300
printf 'memhog %s hidden %s groups deep (0:: line of %s bytes) killed %s s into pressure in scope %s\n' \
	"$deep" "$LEVELS" "${#line}" "$(pol_since)" "$KT_CG2_REL"
echo "PASS"
exit 0
