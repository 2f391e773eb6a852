#!/bin/bash
# SPDX-License-Identifier: MIT
# test-reload.sh - SIGHUP against the real daemon: a good config re-arms the
# tiers (one removed, a window changed), a bad one, a directory or a FIFO in its place
# is reported with file:line and the old tiers stay armed, the drop-ins of
# <config>.d are read again (a tier extended, one added; a bad one reported
# with its file:line), a storm of SIGHUPs leaves it running with no fd
# growth, SIGTERM ends it with status 0.
#
# The daemon watches a fresh, idle test cgroup's memory.pressure and its scope
# is that empty group (and it runs with --dry-run): nothing can be killed.
# Exit: 0 pass, 1 fail, 77 skip (CI=true turns non-kernel skips into fails).

set -u

srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$srcdir/tests/kernel/lib.sh" || { echo "cannot source $srcdir/tests/kernel/lib.sh" >&2; exit 99; }

kt_require_root_and_psi
kt_install_traps
kt_cgroup_create psi-lmkd-test-reload 64

dir=$(kt_tmpdir)
conf="$dir/psi-lmkd.conf"
log="$dir/daemon.log"

write_conf() { # $1: tier text; the [daemon] header is lines 1-3
	kt_write_conf "$conf.new" <<<"$1"
	mv -f "$conf.new" "$conf"
}
log_has() { grep -Eq -- "$1" "$log"; }
two_tiers='[tier a]
trigger = some 100ms 2s
min_oom_score_adj = 500
[tier b]
trigger = full 200ms 2s
min_oom_score_adj = 0
'
lines() { wc -l <"$log"; }
status_after() { kt_daemon_status "$log" "$KT_DAEMON_PID" "$1"; }

write_conf "$two_tiers"
kt_daemon_up "$conf" "$log" -v -n
log_has 'psi-lmkd .* running: 2 tiers' || { cat "$log" >&2; kt_fail "daemon did not start with 2 tiers"; }
kt_pid_alive "$KT_DAEMON_PID" || kt_fail "daemon died at start"
st=$(status_after "$(lines)")
grep -q 'status tier=a armed=yes' <<<"$st" && grep -q 'status tier=b armed=yes' <<<"$st" ||
	kt_fail "start: tiers a and b not both armed: $st"
fds_before=$(ls /proc/"$KT_DAEMON_PID"/fd | wc -l)

# 1. good: tier b removed, tier a's window changed
n=$(lines)
write_conf '[tier a]
trigger = some 100ms 4s
min_oom_score_adj = 500
'
kill -HUP "$KT_DAEMON_PID"
kt_wait_for 5 sh -c "tail -n +$((n + 1)) '$log' | grep -q 'configuration reloaded from .*: 1 tiers'" ||
	{ tail -n 20 "$log" >&2; kt_fail "good reload not reported"; }
tail -n +"$((n + 1))" "$log" | grep -q 'tier a armed: some 100ms 4s' || kt_fail "tier a not re-armed with its new window"
st=$(status_after "$(lines)")
grep -q 'status tier=a armed=yes' <<<"$st" || kt_fail "after reload: tier a not armed: $st"
! grep -q 'status tier=b' <<<"$st" || kt_fail "after reload: removed tier b is still there: $st"
kt_log "good reload: tier b gone, tier a on 4s"

# 2. bad: an unknown key on line 5 -> file:line, old config (tier a, 4s) kept
n=$(lines)
write_conf '[tier a]
trigger = some 100ms 2s
min_oom_score_adj = 500
bogus = 1
'
kill -HUP "$KT_DAEMON_PID"
kt_wait_for 5 sh -c "tail -n +$((n + 1)) '$log' | grep -q 'reload failed, keeping the current configuration: $conf:7: unknown key'" ||
	{ tail -n 20 "$log" >&2; kt_fail "bad reload not reported with file:line"; }
! tail -n +"$((n + 1))" "$log" | grep -q 'configuration reloaded' || kt_fail "the bad config was taken"
st=$(status_after "$(lines)")
grep -q 'status tier=a armed=yes' <<<"$st" || kt_fail "after a bad reload tier a is not armed: $st"
kt_pid_alive "$KT_DAEMON_PID" || kt_fail "daemon died on a bad reload"
kt_log "bad reload: reported with file:line, old tiers armed"

# 3. the config replaced by a directory
n=$(lines)
rm -f "$conf"
mkdir "$conf"
kill -HUP "$KT_DAEMON_PID"
kt_wait_for 5 sh -c "tail -n +$((n + 1)) '$log' | grep -q 'reload failed.*not a regular file'" ||
	{ tail -n 20 "$log" >&2; kt_fail "a directory as config not reported"; }
kt_pid_alive "$KT_DAEMON_PID" || kt_fail "daemon died when its config became a directory"
rmdir "$conf"

# 3b. the config replaced by a FIFO nobody writes to: refused at once, not waited on
n=$(lines)
mkfifo "$conf" || kt_fail "cannot make a FIFO at $conf"
kill -HUP "$KT_DAEMON_PID"
kt_wait_for 5 sh -c "tail -n +$((n + 1)) '$log' | grep -q 'reload failed.*not a regular file'" ||
	{ tail -n 20 "$log" >&2; kt_fail "a FIFO as config not reported (blocked on it?)"; }
st=$(status_after "$(lines)")
grep -q 'status tier=a armed=yes' <<<"$st" || kt_fail "after a FIFO reload tier a is not armed: $st"
rm -f "$conf"
kt_log "config as a directory, then as a FIFO: refused, old tiers armed"

# 3c. drop-ins, read again at each reload: one changes tier a's window and
# adds tier c; then a bad one is reported at its file:line, the old tiers kept
write_conf '[tier a]
trigger = some 100ms 2s
min_oom_score_adj = 500
'
mkdir "$conf.d" || kt_fail "cannot make $conf.d"
printf '[tier a]\ntrigger = some 100ms 3s\n[tier c]\ntrigger = full 150ms 2s\nmin_oom_score_adj = 800\n' \
	>"$conf.d/50-extra.conf"
n=$(lines)
kill -HUP "$KT_DAEMON_PID"
kt_wait_for 5 sh -c "tail -n +$((n + 1)) '$log' | grep -q 'configuration reloaded from .*: 2 tiers'" ||
	{ tail -n 20 "$log" >&2; kt_fail "reload with a drop-in not reported"; }
tail -n +"$((n + 1))" "$log" | grep -qF "1 drop-in file read after it, in order: $conf.d/50-extra.conf" ||
	kt_fail "the drop-in read is not logged"
tail -n +"$((n + 1))" "$log" | grep -q 'tier a armed: some 100ms 3s' || kt_fail "tier a not re-armed with the drop-in's window"
st=$(status_after "$(lines)")
grep -q 'status tier=a armed=yes' <<<"$st" && grep -q 'status tier=c armed=yes' <<<"$st" ||
	kt_fail "with the drop-in: tiers a and c not both armed: $st"
n=$(lines)
printf '[tier c]\nmin_oom_score_adj = 2000\n' >"$conf.d/60-bad.conf"
kill -HUP "$KT_DAEMON_PID"
kt_wait_for 5 sh -c "tail -n +$((n + 1)) '$log' | grep -qF 'reload failed, keeping the current configuration: $conf.d/60-bad.conf:2: min_oom_score_adj'" ||
	{ tail -n 20 "$log" >&2; kt_fail "a bad drop-in not reported with its file:line"; }
st=$(status_after "$(lines)")
grep -q 'status tier=c armed=yes' <<<"$st" || kt_fail "after a bad drop-in tier c is not armed: $st"
rm -r "$conf.d"
kt_log "drop-ins: re-read at reload, a bad one reported at its file:line, old tiers armed"

# 4. a storm of SIGHUPs with a good config: still running, no fd growth
write_conf "$two_tiers"
n=$(lines)
for _ in $(seq 50); do kill -HUP "$KT_DAEMON_PID"; done
kt_wait_for 10 sh -c "[ \$(tail -n +$((n + 1)) '$log' | grep -c 'configuration reloaded') -ge 1 ]" ||
	kt_fail "no reload after the SIGHUP storm"
kt_pid_alive "$KT_DAEMON_PID" || kt_fail "daemon died in a SIGHUP storm"
# The status answer is the proof that the storm is over: the daemon takes
# pending signals lowest number first, so any SIGHUP still pending is
# handled before this SIGUSR1.
st=$(status_after "$(lines)")
kt_pid_alive "$KT_DAEMON_PID" || kt_fail "daemon died in a SIGHUP storm"
grep -q 'status tier=b armed=yes' <<<"$st" || kt_fail "after the storm tier b is not armed: $st"
fds_after=$(ls /proc/"$KT_DAEMON_PID"/fd | wc -l)
[ "$fds_after" -le "$fds_before" ] || kt_fail "fds grew from $fds_before to $fds_after over the reloads"
kt_log "SIGHUP storm: $(tail -n +$((n + 1)) "$log" | grep -c 'configuration reloaded') reloads, fds $fds_before -> $fds_after"

# 5. SIGTERM: exit status 0
kill -TERM "$KT_DAEMON_PID"
status=0
wait "$KT_DAEMON_PID" || status=$?
[ "$status" -eq 0 ] || kt_fail "daemon exited with status $status on SIGTERM"
log_has 'signal Terminated: exiting' || kt_fail "no exit line on SIGTERM"
! log_has '(^|[^-])kill pid=' || kt_fail "something was killed"
kt_log "PASS"
exit 0
