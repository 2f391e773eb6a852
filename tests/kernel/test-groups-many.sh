#!/bin/bash
# SPDX-License-Identifier: MIT
# test-groups-many.sh - many groups under one cgroup pattern: max_groups is
# a limit with a clear message, a reload raises it and arms the rest, 50
# groups removed at once are disarmed without an error, and the idle cost
# with 100 watched groups is printed (issue 14).
#
# A fresh 64 MiB test group P with 100 empty children; one tier "grp" on
# "some 100ms 2s" with cgroup = P/*, --dry-run, scope P.
#
# Asserted:
#  1. --check-config with max_groups = 60 warns that 100 groups match, and
#     that P, the wildcard level, would let its owner fill max_groups once
#     it is chowned to uid 65534.
#  2. The daemon arms 60 and logs "max_groups = 60 reached: 40 matching
#     groups are not watched"; it holds at least 2 fds per watched group.
#  3. SIGHUP with max_groups = 150: "100 groups watched (at most 150)".
#  4. 50 groups removed: 50 "is gone" lines, no error or warning line, and
#     SIGUSR1's status says groups=50.
# Printed: the daemon's context switches over 10 idle seconds with 100
# groups, its fds and RSS (figures, not asserted: bench/run --only groups
# measures them properly).
# Exit: 0 pass, 1 fail, 77 skip (CI=true turns non-kernel skips into fails).

set -u

srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$srcdir/tests/kernel/lib.sh" || { echo "cannot source $srcdir/tests/kernel/lib.sh" >&2; exit 99; }
# shellcheck source-path=SCRIPTDIR source=policy-body.sh
. "$srcdir/tests/kernel/policy-body.sh" || { echo "cannot source $srcdir/tests/kernel/policy-body.sh" >&2; exit 99; }

N=100
IDLE=${KT_GROUPS_IDLE:-10}

pol_init
kt_cgroup_create psi-lmkd-test 64
for i in $(seq 1 "$N"); do
	mkdir "$KT_CG2_DIR/g$i" || kt_fail "cannot create $KT_CG2_DIR/g$i"
	KT_CG_DIRS+=("$KT_CG2_DIR/g$i")
done

# grp_conf MAX: the config with max_groups = MAX
grp_conf() {
	pol_conf -p /proc/pressure/memory <<EOF
dry_run = true
control_socket = $tmp/control
max_groups = $1

[tier grp]
trigger = some 100ms 2s
min_oom_score_adj = 0
cgroup = $KT_CG2_REL/*
EOF
}

# 1. --check-config
grp_conf 60
out=$("$PSI_LMKD" --check-config -c "$conf" 2>&1) || e2e_fail "--check-config failed: $out"
printf '%s\n' "$out" | grep -qF "warning: $N groups match, max_groups = 60" ||
	e2e_fail "--check-config does not warn that $N groups match: $out"
printf '%s\n' "$out" | grep -qF "... and $((N - 16)) more" || e2e_fail "--check-config lists more than 16 by name: $out"
# a wildcard level that a user owns: its owner could fill max_groups
chown 65534 "$KT_CG2_DIR" || e2e_fail "cannot chown $KT_CG2_DIR"
out=$("$PSI_LMKD" --check-config -c "$conf" 2>&1)
chown 0 "$KT_CG2_DIR"
printf '%s\n' "$out" | grep -qF "warning: $KT_CG2_REL is owned by uid 65534 (above trusted_uid_max)" ||
	e2e_fail "--check-config does not warn about a user-owned wildcard level: $out"

# 2. the limit
pol_daemon_start -v
kt_wait_for 5 kt_file_has "$log" '60 groups watched \(at most 60\)' || e2e_fail "60 groups were not armed"
kt_file_has "$log" "max_groups = 60 reached: 40 matching groups are not watched \\(the first: $KT_CG2_REL/g" ||
	e2e_fail "no 'max_groups = 60 reached: 40 ...' line"
fds=$(ls "/proc/$daemon/fd" | wc -l)
[ "$fds" -ge 120 ] || e2e_fail "the daemon holds $fds fds for 60 groups (expected 2 or more each)"
kt_log "60 of $N groups armed; the daemon holds $fds fds"

# 3. a reload raises the limit
grp_conf 150
from=$(wc -l <"$log")
kill -HUP "$daemon"
kt_wait_for 10 sh -c "tail -n +$((from + 1)) '$log' | grep -q '$N groups watched (at most 150)'" ||
	e2e_fail "the reload did not arm all $N groups"
walk=$(tail -n +"$((from + 1))" "$log" | grep -m1 -o "$N groups watched (at most 150), found in [0-9]* us")
sleep 2 # start-up is not idle
read -r v0 < <(awk '$1 == "voluntary_ctxt_switches:" { print $2 }' "/proc/$daemon/status")
sleep "$IDLE"
read -r v1 < <(awk '$1 == "voluntary_ctxt_switches:" { print $2 }' "/proc/$daemon/status")
rss=$(awk '$1 == "VmRSS:" { print $2 }' "/proc/$daemon/status")
fds=$(ls "/proc/$daemon/fd" | wc -l)
kt_log "$walk; idle for ${IDLE}s: $((v1 - v0)) wakeups, RSS ${rss} kB, $fds fds"

# 4. half of them go at once
from=$(wc -l <"$log")
for i in $(seq 51 "$N"); do
	rmdir "$KT_CG2_DIR/g$i" || e2e_fail "cannot remove g$i"
done
kt_wait_for 10 sh -c "[ \$(tail -n +$((from + 1)) '$log' | grep -c 'is gone: its tiers are disarmed') -ge 50 ]" ||
	e2e_fail "not every removed group was disarmed"
gone=$(tail -n +"$((from + 1))" "$log" | grep -c 'is gone: its tiers are disarmed')
[ "$gone" -eq 50 ] || e2e_fail "$gone 'is gone' lines for 50 removed groups"
if tail -n +"$((from + 1))" "$log" | grep -E 'error|warning|cannot'; then
	e2e_fail "errors or warnings when 50 groups were removed"
fi
from=$(wc -l <"$log")
kill -USR1 "$daemon"
kt_wait_for 5 sh -c "tail -n +$((from + 1)) '$log' | grep -q 'status groups=50 '" ||
	e2e_fail "the status does not say groups=50: $(tail -n +"$((from + 1))" "$log" | grep -m1 'status groups=')"
pol_daemon_stop

printf '%s groups: 60 armed under max_groups = 60 (40 logged as not watched), %s after a reload; %s idle wakeups in %ss with %s groups, RSS %s kB; 50 removed, 50 disarmed\n' \
	"$N" "$N" "$((v1 - v0))" "$IDLE" "$N" "$rss"
echo "PASS"
exit 0
