#!/bin/bash
# SPDX-License-Identifier: MIT
# test-spoof.sh - a user names a hog after a protected system process
# (review C2). Name shields count for everyone only for system uids, so the
# hog must die, never another user's process.
#
# In a fresh 128 MiB test group:
#   - "sshd": a copy of memhog named sshd (so its comm is "sshd"), run as
#     the unprivileged uid 60001 (setpriv), KT_SPOOF_MIB (32) MiB at
#     oom_score_adj 500;
#   - the neighbour: memhog run as uid 60002, 16 MiB at adj 500 (smaller);
#   - filepressure (root) at adj 0: the pressure maker.
# The config's shield lines (protect, protect_cgroup, trusted_uid_max) are
# taken from conf/psi-lmkd.conf, so the test tracks the shipped config; one
# tier "some 100ms 2s", min_oom_score_adj 500.
#
# Asserted: the shipped protect rule matches "sshd" (else the test would
# prove nothing); the first kill line names the spoofed sshd (pid, comm=sshd,
# uid=60001); the neighbour is alive then. The old daemon protected the
# spoofed sshd and killed the neighbour instead.
# Exit: 0 pass, 1 fail, 77 skip (CI=true turns non-kernel skips into fails).

set -u

srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$srcdir/tests/kernel/lib.sh" || { echo "cannot source $srcdir/tests/kernel/lib.sh" >&2; exit 99; }
# shellcheck source-path=SCRIPTDIR source=policy-body.sh
. "$srcdir/tests/kernel/policy-body.sh" || { echo "cannot source $srcdir/tests/kernel/policy-body.sh" >&2; exit 99; }

TIMEOUT=${KT_SPOOF_TIMEOUT:-40}
MIB=${KT_SPOOF_MIB:-32}
SPOOFER=60001
NEIGHBOUR=60002

pol_init

shipped=$srcdir/conf/psi-lmkd.conf
shields=$(grep -E '^(protect|protect_cgroup|trusted_uid_max) *=' "$shipped") ||
	kt_fail "no shield lines in $shipped"
protect_re=$(sed -n 's/^protect *= *//p' "$shipped")
[ -n "$protect_re" ] || kt_fail "no protect line in $shipped"
printf 'sshd\n' | grep -Eq -- "$protect_re" ||
	kt_fail "the shipped protect rule does not match sshd: this test would prove nothing ($protect_re)"

kt_cgroup_create psi-lmkd-test 128

pol_as "$SPOOFER" sshd "$MIB"
spoof=$KT_LAST_PID
pol_as "$NEIGHBOUR" memhog $((MIB / 2))
neighbour=$KT_LAST_PID
kt_log "spoofed sshd $spoof (uid $SPOOFER, $MIB MiB, adj 500); neighbour $neighbour (uid $NEIGHBOUR, $((MIB / 2)) MiB, adj 500)"

pol_conf <<EOF2
kill_timeout = 1s
; from $shipped:
$shields

[tier test]
trigger = some 100ms 2s
min_oom_score_adj = 500
EOF2
kt_log "shield lines from the shipped config: $(printf '%s' "$shields" | tr '\n' ' ')"
pol_daemon_start -v
pol_pressure 0

pol_kill 1 "$TIMEOUT"
[ "$(e2e_kv "$line" pid)" != "$neighbour" ] ||
	e2e_fail "the daemon killed the neighbour $neighbour (uid $NEIGHBOUR) instead of the spoofed sshd: $line"
[ "$(e2e_kv "$line" pid)" = "$spoof" ] || e2e_fail "kill #1 is not the spoofed sshd $spoof: $line"
[ "$(e2e_kv "$line" comm)" = sshd ] || e2e_fail "kill #1 comm is not sshd: $line"
[ "$(e2e_kv "$line" uid)" = "$SPOOFER" ] || e2e_fail "kill #1 uid is not $SPOOFER: $line"
kt_pid_alive "$neighbour" || e2e_fail "the neighbour $neighbour died at the first kill"
kt_wait_for 5 kt_pid_dead "$spoof" || e2e_fail "the spoofed sshd $spoof is alive after its kill"
kt_pid_alive "$reader" || e2e_fail "filepressure (adj 0) died"
pol_daemon_stop

echo "---- daemon log ----"
pol_strip <"$log" | sed 's/^/  /'
printf 'spoofed sshd %s (uid %s, %s MiB) killed %s s into pressure; neighbour %s (uid %s) alive\n' \
	"$spoof" "$SPOOFER" "$MIB" "$(pol_since)" "$neighbour" "$NEIGHBOUR"
echo "PASS"
exit 0
