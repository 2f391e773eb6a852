#!/bin/bash
# SPDX-License-Identifier: MIT
# test-warn-agent.sh - the notify agent shows the warn tier's
# LowMemoryWarning to the desktop user whose process the kernel ranks
# first, and to no one else (issue 31, item 3).
#
# A private dbus-daemon plays the system bus (kt_system_bus_start, with the
# shipped init/psi-lmkd.dbus.conf). Two test users each get a private
# session bus with a stand-in org.freedesktop.Notifications server and the
# shipped tools/psi-lmkd-notify-agent, all running as that user: uid daemon
# (the owner) and uid nobody (the other). A memhog owned by uid daemon
# (32 MiB, oom_score_adj 1000) lives in a throwaway 128 MiB group, so that
# the kernel ranks it first by /proc/PID/oom_score. psi-lmkd runs a dry run
# whose only tier warns at level medium whenever available memory is below
# 100% (always), in an empty scope: nothing can be killed.
#
# Asserted: a LowMemoryWarning forged by uid nobody is ignored; the owner's
# agent (--once) shows "Memory is low" / "memhog uses the most (N MiB)"
# with urgency normal (1) and exits; the other user's agent hears the
# warnings (-v says why it stays silent) and shows nothing. Then, with
# warnings sent by root straight onto the bus: a second owner's agent
# (--warn-interval 60) shows one of three, and one with --warn-interval 0
# shows none.
# Exit: 0 pass, 1 fail, 77 skip (CI=true turns non-kernel skips into fails).

set -u

srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$srcdir/tests/kernel/lib.sh" || { echo "cannot source $srcdir/tests/kernel/lib.sh" >&2; exit 99; }
# shellcheck source-path=SCRIPTDIR source=e2e-body.sh
. "$srcdir/tests/kernel/e2e-body.sh" || { echo "cannot source $srcdir/tests/kernel/e2e-body.sh" >&2; exit 99; }

kt_require_root_and_psi
kt_install_traps
e2e_find_binaries
PY=/usr/bin/python3
$PY -c 'import gi; gi.require_version("Gio", "2.0"); from gi.repository import Gio' 2>/dev/null ||
	kt_skip_or_fail "python3-gi is missing (apt-get install python3-gi gir1.2-glib-2.0)"
command -v setpriv >/dev/null || kt_skip_or_fail "setpriv is missing (util-linux)"
OWNER=daemon OWNER_GROUP=daemon OTHER=nobody OTHER_GROUP=nogroup
if ! id -u "$OWNER" >/dev/null 2>&1 || ! id -u "$OTHER" >/dev/null 2>&1; then
	kt_skip_or_fail "no user $OWNER or $OTHER"
fi
owner_uid=$(id -u "$OWNER")
"$PSI_LMKD" --help >/dev/null
tmp=$(kt_tmpdir)
log=$tmp/daemon.log
chmod o+x "$tmp"

kt_system_bus_start "$tmp"
install -m 755 "$srcdir/tools/psi-lmkd-notify-agent" "$tmp/agent"
install -m 644 "$srcdir/tests/kernel/notifyd.py" "$tmp/notifyd.py"

# as_user USER GROUP CMD...: become CMD, run as USER in USER's session (its
# HOME and session bus are in $tmp/USER). Only in a subshell: in the
# background (then $! is CMD's own pid, which kt_track can end) or in $(...).
# The kernel-test lock stays with the test, not with what it starts.
as_user() {
	local user=$1 group=$2
	shift 2
	[ "$BASHPID" != "$$" ] || kt_fail "as_user: not in a subshell"
	[ -n "${KT_LOCK_FD:-}" ] && exec {KT_LOCK_FD}>&-
	exec env HOME="$tmp/$user" DBUS_SESSION_BUS_ADDRESS="unix:path=$tmp/$user/bus" \
		setpriv --reuid="$user" --regid="$group" --clear-groups "$@"
}

# session USER GROUP: a private session bus and a notification server of USER
session() {
	local user=$1 group=$2
	mkdir -m 700 "$tmp/$user"
	chown "$user:$group" "$tmp/$user"
	as_user "$user" "$group" dbus-daemon --session --address="unix:path=$tmp/$user/bus" --nofork --nopidfile \
		>"$tmp/$user/session.log" 2>&1 &
	kt_track $!
	kt_wait_for 5 test -S "$tmp/$user/bus" || kt_fail "the session bus of $user did not start: $(cat "$tmp/$user/session.log")"
	as_user "$user" "$group" $PY "$tmp/notifyd.py" >"$tmp/$user.notifyd.out" 2>&1 &
	kt_track $!
	kt_wait_for 10 kt_file_has "$tmp/$user.notifyd.out" '^ready' ||
		kt_fail "the notification server of $user did not start: $(cat "$tmp/$user.notifyd.out")"
}

# agent USER GROUP OUT ARGS...: start USER's agent; its pid in $agent
agent() {
	local user=$1 group=$2 out=$3
	shift 3
	as_user "$user" "$group" $PY "$tmp/agent" "$@" >"$out" 2>&1 &
	agent=$!
	kt_track "$agent"
	kt_wait_for 10 kt_file_has "$out" 'listening' || kt_fail "the agent of $user did not start: $(cat "$out")"
}

notes() { grep -c '^notify ' "$1" 2>/dev/null; }

session "$OWNER" "$OWNER_GROUP"
session "$OTHER" "$OTHER_GROUP"

# the memhog of the owner, ranked first by the kernel
kt_cgroup_create psi-lmkd-test 128
kt_spawn_in_cgroup -o "$tmp/hog.out" setpriv --reuid="$OWNER" --regid="$OWNER_GROUP" --clear-groups \
	"$KT_BINDIR/memhog" 32 1000 >/dev/null
memhog=$KT_LAST_PID
kt_wait_ready "$tmp/hog.out" "$memhog" 10
[ "$(awk '/^Uid:/ { print $2 }' "/proc/$memhog/status")" = "$owner_uid" ] || kt_fail "the memhog $memhog does not run as $OWNER"
cat >"$tmp/top.py" <<EOP
from importlib.machinery import SourceFileLoader
print(SourceFileLoader("agent", "$tmp/agent").load_module().top_process())
EOP
top=$(as_user "$OTHER" "$OTHER_GROUP" $PY "$tmp/top.py" 2>&1)
case $top in
"($memhog, 'memhog', $owner_uid, "*) ;;
*) kt_fail "the memhog $memhog (oom_score $(cat "/proc/$memhog/oom_score")) is not the kernel's first choice: $top" ;;
esac
kt_log "the kernel ranks the memhog first: $top (oom_score $(cat "/proc/$memhog/oom_score"))"

agent "$OWNER" "$OWNER_GROUP" "$tmp/owner-agent.out" --once -v
owner_agent=$agent
agent "$OTHER" "$OTHER_GROUP" "$tmp/other-agent.out" --once -v
other_agent=$agent

# a LowMemoryWarning forged by uid nobody: ignored. The forger stays
# connected until the agent has judged it, so that the bus can still say
# who sent it.
as_user "$OTHER" "$OTHER_GROUP" $PY -c '
import time
import gi
gi.require_version("Gio", "2.0")
from gi.repository import Gio, GLib
c = Gio.bus_get_sync(Gio.BusType.SYSTEM, None)
c.emit_signal(None, "/org/freedesktop/LowMemoryMonitor", "org.freedesktop.LowMemoryMonitor", "LowMemoryWarning",
              GLib.Variant("(y)", (255,)))
c.flush_sync(None)
print("sent", flush=True)
time.sleep(60)
' >"$tmp/forger.out" 2>&1 &
forger=$!
kt_track "$forger"
kt_wait_for 10 kt_file_has "$tmp/owner-agent.out" 'ignored a LowMemoryWarning signal from .* \(uid 65534\)' ||
	kt_fail "the agent did not refuse a LowMemoryWarning sent by uid nobody (forger: $(cat "$tmp/forger.out"); agent: $(cat "$tmp/owner-agent.out"))"
kill "$forger" 2>/dev/null
wait "$forger" 2>/dev/null
[ "$(notes "$tmp/$OWNER.notifyd.out")" = 0 ] || kt_fail "a forged warning was shown: $(cat "$tmp/$OWNER.notifyd.out")"

conf=$tmp/psi-lmkd.conf
cat >"$conf" <<EOC
[daemon]
scope = /psi-lmkd-test-empty-$$.slice
dry_run = true
control_socket = off

[tier always]
action = warn
warn_level = medium
low_available = 100%
low_swap = 100%
EOC
kt_daemon_up "$conf" "$log" -v
daemon=$KT_DAEMON_PID
kt_wait_for 25 kt_file_has "$tmp/$OWNER.notifyd.out" '^notify ' ||
	e2e_fail "the owner's agent showed no warning within 25 s (agent: $(cat "$tmp/owner-agent.out"))"
note=$(grep -m1 '^notify ' "$tmp/$OWNER.notifyd.out")
grep -q "^notify app=psi-lmkd urgency=1 summary=Memory is low body=memhog uses the most (3[0-9] MiB)\. .*(warning level medium)\.\$" <<<"$note" ||
	e2e_fail "unexpected notification: $note"
kt_wait_for 5 kt_pid_dead "$owner_agent" || e2e_fail "the owner's agent did not exit after --once"
kt_log "owner ($OWNER): $note"
# the other user's agent hears the same warnings and stays silent
kt_wait_for 25 kt_file_has "$tmp/other-agent.out" "not shown: the process the kernel would kill first is another user's \(uid $owner_uid\)" ||
	e2e_fail "the other user's agent did not hear the warning (agent: $(cat "$tmp/other-agent.out"))"
kt_pid_alive "$other_agent" || e2e_fail "the other user's agent exited: $(cat "$tmp/other-agent.out")"
[ "$(notes "$tmp/$OTHER.notifyd.out")" = 0 ] ||
	e2e_fail "the other user ($OTHER) was shown a warning about $OWNER's memhog: $(cat "$tmp/$OTHER.notifyd.out")"
kt_log "other ($OTHER): nothing shown; $(grep -m1 'not shown' "$tmp/other-agent.out")"
kt_file_has "$log" 'warn tier=always level=100 \(medium\): LowMemoryWarning sent' || e2e_fail "no warn line in the log"
kill -TERM "$daemon"
kt_wait_for 5 kt_pid_dead "$daemon" || e2e_fail "the daemon ignores SIGTERM"

# rate limit: warnings straight from root, three in a row; the sender stays
# connected a while, so that the bus can still tell the agent it is root
warn3() {
	$PY -c '
import time
import gi
gi.require_version("Gio", "2.0")
from gi.repository import Gio, GLib
c = Gio.bus_get_sync(Gio.BusType.SYSTEM, None)
for level in (50, 255, 255):
    c.emit_signal(None, "/org/freedesktop/LowMemoryMonitor", "org.freedesktop.LowMemoryMonitor", "LowMemoryWarning",
                  GLib.Variant("(y)", (level,)))
c.flush_sync(None)
time.sleep(3)
'
}
agent "$OWNER" "$OWNER_GROUP" "$tmp/owner-agent2.out" --warn-interval 60 -v
warn3 || kt_fail "cannot send warnings on the private bus"
kt_wait_for 10 kt_file_has "$tmp/owner-agent2.out" 'level 255.* not shown: one was shown .* ago \(--warn-interval 60\)' ||
	kt_fail "the agent did not rate-limit: $(cat "$tmp/owner-agent2.out"); $(cat "$tmp/$OWNER.notifyd.out")"
sleep 1
n=$(notes "$tmp/$OWNER.notifyd.out")
[ "$n" = 2 ] || kt_fail "$((n - 1)) notifications of three warnings within 60 s, not 1: $(cat "$tmp/$OWNER.notifyd.out")"
grep '^notify ' "$tmp/$OWNER.notifyd.out" | tail -n 1 | grep -q '^notify app=psi-lmkd urgency=0 summary=Memory is low body=memhog .*(warning level low)\.$' ||
	kt_fail "the level-50 warning: $(tail -n 1 "$tmp/$OWNER.notifyd.out")"
kill "$agent"
agent "$OWNER" "$OWNER_GROUP" "$tmp/owner-agent3.out" --warn-interval 0 -v
warn3 || kt_fail "cannot send warnings on the private bus"
kt_wait_for 10 kt_file_has "$tmp/owner-agent3.out" 'not shown: --warn-interval 0' ||
	kt_fail "the agent with --warn-interval 0 heard no warning: $(cat "$tmp/owner-agent3.out")"
sleep 1
[ "$(notes "$tmp/$OWNER.notifyd.out")" = 2 ] || kt_fail "--warn-interval 0 showed a warning: $(cat "$tmp/$OWNER.notifyd.out")"
kill "$agent"
kt_log "rate limit: one of three warnings shown with --warn-interval 60, none with 0"
echo "---- owner's agent ----"
cat "$tmp/owner-agent.out" "$tmp/owner-agent2.out" "$tmp/owner-agent3.out"
echo "---- other's agent ----"
cat "$tmp/other-agent.out"
echo "---- notifications ($OWNER) ----"
cat "$tmp/$OWNER.notifyd.out"
echo PASS
exit 0
