#!/bin/bash
# SPDX-License-Identifier: MIT
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
pol_start_fails "ulimit -n 16" 'file descriptor limit \(RLIMIT_NOFILE\) is 16: psi-lmkd holds [0-9]+ and needs [0-9]+'

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
kt_log "soft limit 16: the daemon raised it to $soft"
pol_band_kill
pol_daemon_stop
kt_log "PASS"
exit 0
