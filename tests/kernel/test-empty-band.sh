#!/bin/bash
# SPDX-License-Identifier: MIT
# test-empty-band.sh - real pressure, but no process in the tier's band: the
# daemon must say so, kill nothing and keep running.
#
# In a fresh 128 MiB test group: memhogs at adj 100 and 499 (8 MiB) and
# filepressure at adj 0, so the group has real PSI stall; one tier
#
#   trigger = some 100ms 2s   min_oom_score_adj = 500
#
# so every process in scope is below the band.  Pressure goes on for
# KT_EMPTY_SECONDS (14) s.
#
# Asserted: the "tier test fired but no process has oom_score_adj >= 500 in
# SCOPE; nothing killed" line appears (the tier did fire), no more often than
# its 10 s rate limit allows; no kill or would-kill line at all; every
# process in the group survives; the daemon is alive throughout, its SIGUSR1
# status says kills=0 and no_candidate >= 1; on SIGTERM it logs that it
# exits and exits 0.
# Exit: 0 pass, 1 fail, 77 skip (CI=true turns non-kernel skips into fails).

set -u

srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$srcdir/tests/kernel/lib.sh" || { echo "cannot source $srcdir/tests/kernel/lib.sh" >&2; exit 99; }
# shellcheck source-path=SCRIPTDIR source=policy-body.sh
. "$srcdir/tests/kernel/policy-body.sh" || { echo "cannot source $srcdir/tests/kernel/policy-body.sh" >&2; exit 99; }

SECONDS_OF_PRESSURE=${KT_EMPTY_SECONDS:-14}
NOCAND_RE='tier test fired but no process has oom_score_adj >= 500 in [^ ]+(;| )'

pol_init
kt_cgroup_create psi-lmkd-test 128
pol_hog memhog-100 8 100
h100=$KT_LAST_PID
pol_hog memhog-499 8 499
h499=$KT_LAST_PID

pol_conf_one_tier 500 1s
pol_daemon_start -v
pol_pressure 0

first=
end=$(( $(date +%s) + SECONDS_OF_PRESSURE ))
while [ "$(date +%s)" -lt "$end" ]; do
	e2e_daemon_check "under pressure with an empty band"
	for p in "$h100" "$h499" "$reader"; do
		kt_pid_alive "$p" || e2e_fail "pid $p died (nothing is in the band)"
	done
	if [ -z "$first" ] && kt_file_has "$log" "$NOCAND_RE"; then
		first=$(pol_since)
		kt_log "no-candidate line after $first s of pressure: $(grep -m1 -E "$NOCAND_RE" "$log" | pol_strip)"
	fi
	n=$(grep -cE '(^|[^[:alnum:]_])(would-)?kill pid=' "$log")
	[ "$n" -eq 0 ] || e2e_fail "a kill or would-kill line: $(grep -m1 -E '(^|[^[:alnum:]_])(would-)?kill pid=' "$log")"
	sleep 0.2
done
[ -n "$first" ] || e2e_fail "no 'tier test fired but no process has oom_score_adj >= 500 ...' line in ${SECONDS_OF_PRESSURE}s of pressure (did the tier fire?)"
nlines=$(grep -cE "$NOCAND_RE" "$log")
# At most one line per 10 s: with the first at "first" s, the count is bounded.
maxlines=$(awk -v f="$first" -v d="$SECONDS_OF_PRESSURE" 'BEGIN { print int((d - f) / 10) + 1 }')
[ "$nlines" -le "$maxlines" ] ||
	e2e_fail "$nlines no-candidate lines in ${SECONDS_OF_PRESSURE}s; the 10 s rate limit allows $maxlines"

# The daemon's own account.
kill -USR1 "$daemon"
kt_wait_for 3 kt_file_has "$log" 'status tier=test ' || e2e_fail "no status line after SIGUSR1"
status=$(grep -m1 'status tier=test ' "$log" | pol_strip)
kills=$(e2e_kv "$status" kills)
nocand=$(e2e_kv "$status" no_candidate)
events=$(e2e_kv "$status" events)
[ "$kills" = 0 ] || e2e_fail "status says kills=$kills: $status"
e2e_is_uint "$nocand" && [ "$nocand" -ge 1 ] || e2e_fail "status says no_candidate=$nocand: $status"

pol_daemon_stop
for p in "$h100" "$h499" "$reader"; do
	kt_pid_alive "$p" || e2e_fail "pid $p died"
done

echo "---- daemon log ----"
pol_strip <"$log" | sed 's/^/  /'
printf 'empty band: %s s of pressure; tier events %s, no_candidate %s, no-candidate log lines %s (first after %s s); kills 0; daemon exited 0 on SIGTERM\n' \
	"$SECONDS_OF_PRESSURE" "$events" "$nocand" "$nlines" "$first"
printf 'group pressure at the end: %s\n' "$(tr '\n' ' ' <"$KT_PRESSURE")"
echo "PASS"
exit 0
