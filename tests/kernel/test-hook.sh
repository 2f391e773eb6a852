#!/bin/bash
# test-hook.sh - the on_kill hook: run after each kill with the victim's
# fields in PSI_LMKD_* variables, never blocking the daemon, killed by
# SIGALRM after 10 s.
#
# In a fresh 128 MiB test group: memhogs at adj 900 and 800 (8 MiB) and
# filepressure at adj 0; one tier "some 100ms 2s", min_oom_score_adj 500, and
#
#   on_kill = a temporary script that writes its environment to
#             $tmp/hook.PID (PID = its PSI_LMKD_PID), its own pid to
#             $tmp/hookpid.PID, then execs "sleep 30" (same pid, so the
#             alarm the daemon set before exec is the sleep's).
#
# Asserted:
#  - after kill #1 (the adj 900 memhog): the hook's file has
#    PSI_LMKD_PID=<victim pid>, PSI_LMKD_COMM=memhog, PSI_LMKD_UID=<our
#    uid>, PSI_LMKD_OOM_SCORE_ADJ=900, PSI_LMKD_RSS_KB=<the kill line's
#    rss_kb>, PSI_LMKD_CGROUP=<the group>, PSI_LMKD_TIER=test,
#    PSI_LMKD_REASON=<the kill line's reason>, and PATH; nothing else of ours
#    (the daemon's environment does not leak: a marker variable we export
#    must be absent);
#  - kill #2 (adj 800) happens while hook #1 still sleeps (the daemon does
#    not wait for it) and runs hook #2 as well;
#  - hook #1 dies of SIGALRM: "on_kill hook (pid N) was killed by Alarm
#    clock (timeout)" about 10 s (9.5..12) after kill #1, for both hooks.
# Exit: 0 pass, 1 fail, 77 skip (CI=true turns non-kernel skips into fails).

set -u

srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$srcdir/tests/kernel/lib.sh" || { echo "cannot source $srcdir/tests/kernel/lib.sh" >&2; exit 99; }
# shellcheck source-path=SCRIPTDIR source=policy-body.sh
. "$srcdir/tests/kernel/policy-body.sh" || { echo "cannot source $srcdir/tests/kernel/policy-body.sh" >&2; exit 99; }

TIMEOUT=${KT_HOOK_TIMEOUT:-20}

pol_init
kt_cgroup_create psi-lmkd-test 128

hook=$tmp/on-kill.sh
cat >"$hook" <<EOF
#!/bin/sh
env >"$tmp/hook.\$PSI_LMKD_PID.tmp"
mv "$tmp/hook.\$PSI_LMKD_PID.tmp" "$tmp/hook.\$PSI_LMKD_PID"
echo \$\$ >"$tmp/hookpid.\$PSI_LMKD_PID"
exec sleep 30
EOF
chmod 755 "$hook"
# Must not reach the hook: the daemon gives it a clean environment.
export PSI_LMKD_TEST_LEAK=1

pol_hog memhog-900 8 900
h900=$KT_LAST_PID
pol_hog memhog-800 8 800
h800=$KT_LAST_PID

pol_conf <<EOF
[daemon]
pressure = $KT_PRESSURE
scope = $KT_CG2_REL
kill_timeout = 1s
on_kill = $hook

[tier test]
trigger = some 100ms 2s
min_oom_score_adj = 500
EOF
pol_daemon_start -v
pol_pressure 0

# hook_wait VICTIM: wait for its env file; track the hook (it is outside
# the test group: kt_cleanup must end it if the test fails).
hook_wait() {
	kt_wait_for 5 test -s "$tmp/hookpid.$1" ||
		e2e_fail "the on_kill hook for pid $1 did not run within 5 s (no $tmp/hookpid.$1)"
	kt_wait_for 2 test -e "$tmp/hook.$1" || e2e_fail "no environment file from the hook for pid $1"
	kt_track "$(cat "$tmp/hookpid.$1")"
}

# ------------------------------------------------ kill #1: the environment --

pol_wait_kills 1 "$TIMEOUT"
line1=$(pol_kill_line 1)
k1=$(kt_log_time "$line1")
kt_log "kill #1 after $(pol_since) s of pressure: $line1"
[ "$(e2e_kv "$line1" pid)" = "$h900" ] || e2e_fail "kill #1 is not the adj 900 memhog $h900: $line1"
hook_wait "$h900"
hp1=$(cat "$tmp/hookpid.$h900")
env1=$tmp/hook.$h900
kt_log "hook #1 pid $hp1 wrote: $(grep '^PSI_LMKD_' "$env1" | tr '\n' ' ')"

# want KEY VALUE: the env file has exactly KEY=VALUE.
want() {
	grep -qxF -- "$1=$2" "$env1" || e2e_fail "hook environment lacks $1=$2: $(grep "^$1=" "$env1" || echo "(no $1)")"
}
want PSI_LMKD_PID "$h900"
want PSI_LMKD_COMM memhog
want PSI_LMKD_UID "$(id -u)"
want PSI_LMKD_OOM_SCORE_ADJ 900
want PSI_LMKD_RSS_KB "$(e2e_kv "$line1" rss_kb)"
want PSI_LMKD_CGROUP "$KT_CG2_REL"
want PSI_LMKD_TIER test
want PSI_LMKD_REASON "$(e2e_kv "$line1" reason)"
grep -q '^PATH=' "$env1" || e2e_fail "hook environment has no PATH"
! grep -q '^PSI_LMKD_TEST_LEAK=' "$env1" || e2e_fail "the daemon's environment leaked into the hook (PSI_LMKD_TEST_LEAK)"
[ "$(grep -c '^PSI_LMKD_' "$env1")" -eq 8 ] ||
	e2e_fail "expected 8 PSI_LMKD_ variables, got: $(grep '^PSI_LMKD_' "$env1" | tr '\n' ' ')"
kt_pid_alive "$hp1" || e2e_fail "hook #1 ($hp1) is not sleeping"
[ "$(cat "/proc/$hp1/comm" 2>/dev/null)" = sleep ] || e2e_fail "hook #1 ($hp1) is not the sleep: $(cat "/proc/$hp1/comm" 2>/dev/null)"

# ----------------------------- kill #2 while hook #1 sleeps: not blocked --

pol_wait_kills 2 "$TIMEOUT"
line2=$(pol_kill_line 2)
k2=$(kt_log_time "$line2")
kt_log "kill #2 after $(pol_since) s of pressure: $line2"
[ "$(e2e_kv "$line2" pid)" = "$h800" ] || e2e_fail "kill #2 is not the adj 800 memhog $h800: $line2"
kt_pid_alive "$hp1" || grep -q "on_kill hook (pid $hp1) was killed" "$log" ||
	e2e_fail "hook #1 ($hp1) ended before kill #2 without the daemon reporting it"
awk -v a="$k1" -v b="$k2" 'BEGIN { exit !(b - a < 9.5) }' ||
	e2e_fail "kill #2 came $(awk -v a="$k1" -v b="$k2" 'BEGIN { print b - a }') s after kill #1, not while hook #1 slept"
hook_wait "$h800"
hp2=$(cat "$tmp/hookpid.$h800")
grep -qxF "PSI_LMKD_PID=$h800" "$tmp/hook.$h800" || e2e_fail "hook #2 environment: $(cat "$tmp/hook.$h800")"
grep -qxF "PSI_LMKD_OOM_SCORE_ADJ=800" "$tmp/hook.$h800" || e2e_fail "hook #2 environment: $(cat "$tmp/hook.$h800")"

# ------------------------------------------------ SIGALRM after 10 s each --

for hp in "$hp1" "$hp2"; do
	kt_wait_for 14 kt_file_has "$log" "on_kill hook \\(pid $hp\\) was killed by Alarm clock \\(timeout\\)" ||
		e2e_fail "no 'on_kill hook (pid $hp) was killed by Alarm clock (timeout)' line"
	kt_pid_dead "$hp" || e2e_fail "hook $hp is alive after its timeout line"
done
a1=$(kt_log_time "$(grep -m1 "on_kill hook (pid $hp1) was killed" "$log")")
a2=$(kt_log_time "$(grep -m1 "on_kill hook (pid $hp2) was killed" "$log")")
d1=$(awk -v a="$k1" -v b="$a1" 'BEGIN { printf "%.3f", b - a }')
d2=$(awk -v a="$k2" -v b="$a2" 'BEGIN { printf "%.3f", b - a }')
for d in "$d1" "$d2"; do
	awk -v d="$d" 'BEGIN { exit !(d >= 9.5 && d <= 12) }' ||
		e2e_fail "a hook was killed $d s after its kill, expected ~10 s"
done
e2e_daemon_check "at the end"
pol_daemon_stop

echo "---- daemon log ----"
pol_strip <"$log" | sed 's/^/  /'
echo "---- hook #1 environment (PSI_LMKD_*, PATH) ----"
grep -E '^(PSI_LMKD_|PATH=)' "$env1" | sed 's/^/  /'
printf 'kill #2 came %.3f s after kill #1 while hook #1 slept; hooks killed by SIGALRM %s s and %s s after their kills\n' \
	"$(awk -v a="$k1" -v b="$k2" 'BEGIN { print b - a }')" "$d1" "$d2"
echo "PASS"
exit 0
