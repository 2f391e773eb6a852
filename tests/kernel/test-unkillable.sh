#!/bin/bash
# SPDX-License-Identifier: MIT
# test-unkillable.sh - a victim the daemon may not signal must not stop the
# killer: it is skipped for good and the next candidate dies.
#
# The daemon runs as nobody with no capabilities (as in a container or a
# user's own instance), so it may signal only nobody's processes. In a fresh
# 128 MiB test group:
#   root-hog   memhog as root,   adj 950, 8 MiB  (first choice, refuses: EPERM)
#   user-hog   memhog as nobody, adj 900, 8 MiB  (the one it can kill)
#   user-hog2  memhog as nobody, adj 800, 8 MiB
#   filepressure as root at adj 0 (the pressure maker)
#   [tier test] trigger = some 100ms 2s, min_oom_score_adj 500
#
# Asserted:
#  1. "cannot kill pid <root-hog> (memhog): Operation not permitted; it will
#     not be chosen again", and in the same decision user-hog is killed;
#  2. the next kill is user-hog2, and no second "cannot kill" line: the
#     refused process is not tried again;
#  3. root-hog is alive at the end; the daemon exits 0 on SIGTERM.
# Before the fix the refused root-hog was chosen again on every event and
# nothing else was ever killed.
# Exit: 0 pass, 1 fail, 77 skip (CI=true turns non-kernel skips into fails).

set -u

srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$srcdir/tests/kernel/lib.sh" || { echo "cannot source $srcdir/tests/kernel/lib.sh" >&2; exit 99; }
# shellcheck source-path=SCRIPTDIR source=policy-body.sh
. "$srcdir/tests/kernel/policy-body.sh" || { echo "cannot source $srcdir/tests/kernel/policy-body.sh" >&2; exit 99; }

TIMEOUT=${KT_UNKILLABLE_TIMEOUT:-30}

pol_init
command -v setpriv >/dev/null 2>&1 || kt_skip_or_fail "no setpriv(1): cannot run the daemon unprivileged"
kt_cgroup_create psi-lmkd-test-unkillable 128

# The unprivileged daemon must reach its binary and config: copy both into
# the (world-readable) temp dir.
chmod 755 "$tmp"
{ cp "$PSI_LMKD" "$tmp/psi-lmkd" && chmod 755 "$tmp/psi-lmkd"; } || kt_fail "cannot copy the daemon"
{ cp "$KT_BINDIR/memhog" "$tmp/memhog" && chmod 755 "$tmp/memhog"; } || kt_fail "cannot copy memhog"
as_nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all)
cat >"$tmp/as-nobody" <<EOF
#!/bin/sh
exec ${as_nobody[*]} "$tmp/psi-lmkd" "\$@"
EOF
chmod 755 "$tmp/as-nobody"
PSI_LMKD=$tmp/as-nobody

KT_BINDIR_SAVED=$KT_BINDIR
KT_BINDIR=$tmp
pol_hog root-hog 8 950
hroot=$KT_LAST_PID
pol_hog user-hog 8 900 "${as_nobody[@]}"
huser=$KT_LAST_PID
pol_hog user-hog2 8 800 "${as_nobody[@]}"
huser2=$KT_LAST_PID
KT_BINDIR=$KT_BINDIR_SAVED
[ "$(stat -c %u "/proc/$hroot")" = 0 ] || kt_fail "root-hog $hroot does not run as root"
[ "$(stat -c %u "/proc/$huser")" = 65534 ] || kt_fail "user-hog $huser does not run as nobody"
kt_log "root-hog $hroot (adj 950), user-hog $huser (adj 900), user-hog2 $huser2 (adj 800)"

pol_conf <<EOF
kill_timeout = 1s
idle_poll_interval = 500ms

[tier test]
trigger = some 100ms 2s
min_oom_score_adj = 500
EOF
chmod 644 "$conf"
pol_daemon_start -v
pol_pressure 0

refused="cannot kill pid $hroot \\(memhog\\): Operation not permitted; it will not be chosen again"

# 1. the refusal, then user-hog in the same decision
pol_kill 1 "$TIMEOUT"
[ "$(e2e_kv "$line" pid)" = "$huser" ] || e2e_fail "kill #1 should be nobody's adj 900 memhog $huser: $line"
kt_file_has "$log" "$refused" || e2e_fail "no '$(printf '%s' "$refused" | tr -d '\\')' line before kill #1"
kt_wait_for 3 kt_pid_dead "$huser" || e2e_fail "user-hog $huser is alive 3 s after kill #1"

# 2. the next kill goes to user-hog2; root-hog is not tried again
pol_kill 2 "$TIMEOUT"
[ "$(e2e_kv "$line" pid)" = "$huser2" ] || e2e_fail "kill #2 should be nobody's adj 800 memhog $huser2: $line"
kt_wait_for 3 kt_pid_dead "$huser2" || e2e_fail "user-hog2 $huser2 is alive 3 s after kill #2"
n=$(grep -cE "cannot kill pid $hroot " "$log")
[ "$n" -eq 1 ] || e2e_fail "root-hog $hroot was tried $n times, expected once"

# 3. root-hog lives; clean exit
kt_pid_alive "$hroot" || e2e_fail "root-hog $hroot died"
pol_daemon_stop

echo "---- daemon log ----"
pol_strip <"$log" | sed 's/^/  /'
echo "PASS"
exit 0
