#!/bin/bash
# SPDX-License-Identifier: MIT
# test-unreadable.sh - the pressure file cannot be read: at start the daemon
# exits 1 with the path and the reason; at run time (its group removed and
# made again where the daemon may not look) it says why it cannot re-arm,
# keeps running and re-arms once the file is readable again.
#
# The daemon runs as an unprivileged user (nobody, no capabilities, with
# --dry-run) so that file permissions apply to it; it watches the child "w" of
# a fresh, idle 64 MiB test group T, scope w (nothing in it: no pressure is
# made and nothing can be killed). The kernel refuses it triggers (the file
# is root's), so its tiers run on the userspace monitor and a safety sample
# every 500 ms notices the loss.
#  1. T mode 0700: start -> exit 1, "CONF:2: cannot read .../memory.pressure:
#     Permission denied" and no "running" line; --check-config says the same.
#  2. T mode 0755: start -> running.
#  3. rmdir w -> "is gone"; T mode 0700, mkdir w -> "cannot re-arm yet: cannot
#     read ...: Permission denied"; the daemon lives.
#  4. T mode 0755 -> "is back", armed=yes; SIGTERM -> exit 0.
# Exit: 0 pass, 1 fail, 77 skip (CI=true turns non-kernel skips into fails).

set -u

srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$srcdir/tests/kernel/lib.sh" || { echo "cannot source $srcdir/tests/kernel/lib.sh" >&2; exit 99; }
# shellcheck source-path=SCRIPTDIR source=policy-body.sh
. "$srcdir/tests/kernel/policy-body.sh" || { echo "cannot source $srcdir/tests/kernel/policy-body.sh" >&2; exit 99; }

pol_init
command -v setpriv >/dev/null 2>&1 || kt_skip_or_fail "no setpriv(1): cannot run the daemon unprivileged"
kt_cgroup_create psi-lmkd-test-unreadable 64
kt_cgroup_add_leaf w
top=$KT_CG2_PARENT_DIR
w=$KT_CG2_DIR

# The unprivileged daemon must reach its binary and config: copy both into
# the (world-readable) temp dir. The wrapper drops to nobody with no caps.
chmod 755 "$tmp"
{ cp "$PSI_LMKD" "$tmp/psi-lmkd" && chmod 755 "$tmp/psi-lmkd"; } || kt_fail "cannot copy the daemon"
cat >"$tmp/as-nobody" <<EOF
#!/bin/sh
exec setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all "$tmp/psi-lmkd" "\$@"
EOF
chmod 755 "$tmp/as-nobody"
PSI_LMKD=$tmp/as-nobody
pol_conf <<EOF
idle_poll_interval = 500ms

[tier test]
trigger = some 100ms 2s
min_oom_score_adj = 500
EOF
chmod 644 "$conf"

lines() { wc -l <"$log"; }
since_has() { tail -n +"$(($1 + 1))" "$log" | grep -Eq -- "$2"; }

# 1. unreadable at start
chmod 700 "$top" || kt_fail "cannot chmod $top"
pol_start_fails "an unreadable pressure file" "$conf:2: cannot read $KT_PRESSURE: Permission denied" -v -n
rc=0
out=$("$PSI_LMKD" --check-config -c "$conf" 2>&1) || rc=$?
[ "$rc" -eq 1 ] || e2e_fail "--check-config exit status $rc with an unreadable pressure file, expected 1: $out"
grep -q "$conf:2: cannot read $KT_PRESSURE: Permission denied" <<<"$out" ||
	e2e_fail "--check-config does not say $conf:2 and why: $out"

# 2. readable: starts
chmod 755 "$top"
log=$tmp/daemon2.log
pol_daemon_start -v -n
kt_file_has "$log" 'tier test armed: .*userspace monitor' || e2e_fail "tier test is not on the userspace monitor"

# 3. removed, then back where the daemon may not look
n=$(lines)
rmdir "$w" || e2e_fail "cannot remove $w"
kt_wait_for 10 since_has "$n" "$KT_PRESSURE is gone" || e2e_fail "the removal of $w was not reported within 10 s"
chmod 700 "$top"
mkdir "$w" || e2e_fail "cannot create $w again"
kt_wait_for 10 since_has "$n" "cannot re-arm yet: cannot read $KT_PRESSURE: Permission denied" ||
	e2e_fail "no 'cannot re-arm yet: ... Permission denied' while $top is closed to the daemon"
# Deliberate: 3 s of retries on the unreadable file; the status answer
# after them proves the daemon went on (and is still disarmed).
sleep 3
e2e_daemon_check "while its pressure file was unreadable"
[ "$(pol_status_value test armed)" = no ] || e2e_fail "status does not say armed=no while the file is unreadable"
! since_has "$n" 'is back' || e2e_fail "re-armed although the file is unreadable"
kt_log "run time: $(tail -n +$((n + 1)) "$log" | grep -m1 'cannot re-arm yet' | pol_strip)"

# 4. readable again
n=$(lines)
chmod 755 "$top"
kt_wait_for 10 since_has "$n" "$KT_PRESSURE is back after [0-9]+ ms" ||
	e2e_fail "not re-armed within 10 s of the file becoming readable"
grep -q 'armed=yes' <<<"$(kt_daemon_status "$log" "$daemon" "$n" test)" ||
	e2e_fail "status does not say armed=yes after the re-arm"
kt_log "re-armed: $(tail -n +$((n + 1)) "$log" | grep -m1 'is back' | pol_strip)"
pol_daemon_stop
! grep -Eq '(^|[^-])kill pid=' "$tmp"/daemon*.log || e2e_fail "something was killed"
kt_log "PASS"
exit 0
