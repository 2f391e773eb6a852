#!/bin/bash
# test-fd-limit.sh - a low file descriptor limit (ulimit -n).
#  1. hard and soft limit 16: the daemon cannot hold its triggers and still
#     have room to kill, scan /proc and reload, so it exits 1 at start with a
#     message naming RLIMIT_NOFILE, before saying "running".
#  2. soft limit 16, hard limit unchanged: the daemon raises its soft limit
#     (to 1024 at most), starts, and under real pressure in a fresh 128 MiB
#     test group kills the adj 900 memhog, not the adj 300 keeper nor
#     filepressure (adj 0).
# Exit: 0 pass, 1 fail, 77 skip (CI=true turns non-kernel skips into fails).

set -u

srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$srcdir/tests/kernel/lib.sh" || { echo "cannot source $srcdir/tests/kernel/lib.sh" >&2; exit 99; }
# shellcheck source-path=SCRIPTDIR source=policy-body.sh
. "$srcdir/tests/kernel/policy-body.sh" || { echo "cannot source $srcdir/tests/kernel/policy-body.sh" >&2; exit 99; }

pol_init
kt_cgroup_create psi-lmkd-test-fdlimit 128
real=$PSI_LMKD
# limited LIMIT_ARGS...: a wrapper that runs the daemon under "ulimit LIMIT_ARGS"
limited() {
	printf '#!/bin/bash\nulimit %s || exit 99\nexec "%s" "$@"\n' "$*" "$real" >"$tmp/limited"
	chmod 755 "$tmp/limited"
	PSI_LMKD=$tmp/limited
}
pol_conf <<EOF
[daemon]
pressure = $KT_PRESSURE
scope = $KT_CG2_REL
kill_timeout = 2s

[tier test]
trigger = some 100ms 2s
min_oom_score_adj = 500

[tier all]
trigger = full 500ms 2s
min_oom_score_adj = 0
EOF

# 1. hard limit 16
limited -n 16
kt_daemon_start "$conf" "$log" -v
daemon=$KT_DAEMON_PID
kt_wait_for 5 kt_pid_dead "$daemon" || e2e_fail "the daemon still runs 5 s after a start with ulimit -n 16"
rc=0
wait "$daemon" || rc=$?
[ "$rc" -eq 1 ] || e2e_fail "exit status $rc under ulimit -n 16, expected 1"
kt_wait_for 2 kt_file_has "$log" 'file descriptor limit \(RLIMIT_NOFILE\) is 16: psi-lmkd holds [0-9]+ and needs [0-9]+' ||
	e2e_fail "no message naming RLIMIT_NOFILE under ulimit -n 16"
! kt_file_has "$log" 'running: ' || e2e_fail "the daemon said 'running' under ulimit -n 16"
kt_log "hard limit 16: $(grep -m1 'RLIMIT_NOFILE' "$log" | pol_strip) (exit 1)"

# 2. soft limit 16 only: raised, and the daemon does its job
hard=$(ulimit -Hn)
[ "$hard" = unlimited ] || [ "$hard" -gt 64 ] || kt_skip_or_fail "hard fd limit $hard is too low for part 2"
limited -Sn 16
log=$tmp/daemon2.log
pol_daemon_start -v
soft=$(awk '/^Max open files/ { print $4 }' "/proc/$daemon/limits")
want=1024
[ "$hard" != unlimited ] && [ "$hard" -lt 1024 ] && want=$hard
[ "$soft" = "$want" ] || e2e_fail "the daemon's soft fd limit is $soft, expected it raised from 16 to $want"
pol_hog memhog-900 8 900
victim=$KT_LAST_PID
pol_hog keeper-300 8 300
keeper=$KT_LAST_PID
pol_pressure 0
pol_wait_kills 1 60
line=$(pol_kill_line 1)
[ "$(e2e_kv "$line" pid)" = "$victim" ] || e2e_fail "killed the wrong process: $line"
kt_wait_for 5 kt_pid_dead "$victim" || e2e_fail "the adj 900 memhog $victim is alive after its kill"
kt_pid_alive "$keeper" || e2e_fail "the keeper (adj 300) died"
kt_log "soft limit 16: raised to $soft; killed pid $victim $(pol_since) s after the pressure started; keeper alive"
pol_daemon_stop
kt_log "PASS"
exit 0
