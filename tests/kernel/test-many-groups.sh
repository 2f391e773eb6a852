#!/bin/bash
# SPDX-License-Identifier: MIT
# test-many-groups.sh - a user makes their hog's /proc/PID/status longer than
# any fixed buffer, by giving it thousands of supplementary groups (a user
# with a subgid range can do so in a user namespace of their own: each gid
# adds an entry to the Groups line). The daemon once read status whole into
# 4 kB, failed on the longer file and skipped the process in every scan
# (review F1): the hog hid from the killer, and the next process died
# instead. Here the hog must die, never the neighbour.
#
# In a fresh 128 MiB test group:
#   - the hog: a memhog named hog as uid 60005 with KT_GROUPS_N (3000) supplementary
#     groups (setpriv --groups), KT_GROUPS_MIB (32) MiB at oom_score_adj 500;
#   - the neighbour: memhog as uid 60006 with no groups, half as much, adj 500;
#   - filepressure (root) at adj 0: the pressure maker.
# One tier "some 100ms 2s", min_oom_score_adj 500.
#
# Asserted: the hog's status file is longer than 4160 bytes (else the test
# would prove nothing); the first kill line names the hog (pid, uid); the
# neighbour is alive then.
# Exit: 0 pass, 1 fail, 77 skip (CI=true turns non-kernel skips into fails).

set -u

srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$srcdir/tests/kernel/lib.sh" || { echo "cannot source $srcdir/tests/kernel/lib.sh" >&2; exit 99; }
# shellcheck source-path=SCRIPTDIR source=policy-body.sh
. "$srcdir/tests/kernel/policy-body.sh" || { echo "cannot source $srcdir/tests/kernel/policy-body.sh" >&2; exit 99; }

TIMEOUT=${KT_GROUPS_TIMEOUT:-40}
MIB=${KT_GROUPS_MIB:-32}
NGROUPS=${KT_GROUPS_N:-3000}
HOG=60005
NEIGHBOUR=60006

pol_init

kt_cgroup_create psi-lmkd-test 128

pol_as "$HOG" hog "$MIB" --groups="$(seq -s, 200000 $((200000 + NGROUPS - 1)))"
hogpid=$KT_LAST_PID
pol_as "$NEIGHBOUR" memhog $((MIB / 2))
neighbour=$KT_LAST_PID
size=$(wc -c <"/proc/$hogpid/status")
[ "$size" -gt 4160 ] || kt_fail "the hog's status is only $size bytes: this test would prove nothing"
kt_log "hog $hogpid (uid $HOG, $NGROUPS groups, status $size bytes, $MIB MiB, adj 500); neighbour $neighbour (uid $NEIGHBOUR, $((MIB / 2)) MiB, adj 500)"

pol_conf <<EOF2
kill_timeout = 1s

[tier test]
trigger = some 100ms 2s
min_oom_score_adj = 500
EOF2
pol_daemon_start -v
pol_pressure 0

pol_kill 1 "$TIMEOUT"
[ "$(e2e_kv "$line" pid)" != "$neighbour" ] ||
	e2e_fail "the daemon killed the neighbour $neighbour (uid $NEIGHBOUR) instead of the hog $hogpid: $line"
[ "$(e2e_kv "$line" pid)" = "$hogpid" ] || e2e_fail "kill #1 is not the hog $hogpid: $line"
[ "$(e2e_kv "$line" uid)" = "$HOG" ] || e2e_fail "kill #1 uid is not $HOG: $line"
kt_pid_alive "$neighbour" || e2e_fail "the neighbour $neighbour died at the first kill"
kt_wait_for 5 kt_pid_dead "$hogpid" || e2e_fail "the hog $hogpid is alive after its kill"
kt_pid_alive "$reader" || e2e_fail "filepressure (adj 0) died"
pol_daemon_stop

echo "---- daemon log ----"
pol_strip <"$log" | sed 's/^/  /'
printf 'hog %s (uid %s, %s groups, status %s bytes) killed %s s into pressure; neighbour %s (uid %s) alive\n' \
	"$hogpid" "$HOG" "$NGROUPS" "$size" "$(pol_since)" "$neighbour" "$NEIGHBOUR"
echo "PASS"
exit 0
