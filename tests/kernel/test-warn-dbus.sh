#!/bin/bash
# test-warn-dbus.sh - a tier with action = warn sends LowMemoryWarning on
# the system bus as org.freedesktop.LowMemoryMonitor does, and a GLib
# application's GMemoryMonitor hears it (issue 15, item 4).
#
# A private dbus-daemon plays the system bus (its own socket in the test's
# temp dir, DBUS_SYSTEM_BUS_ADDRESS) with the default system policy's
# shape: nobody may own a name unless a policy allows it, and the shipped
# init/psi-lmkd.dbus.conf is what allows root to own the name. A Python
# GLib client (python3-gi) waits on Gio.MemoryMonitor's
# "low-memory-warning". psi-lmkd runs a dry run whose only tier warns at
# level critical whenever available memory is below 100% (always), so no
# pressure is needed and nothing can be killed.
#
# Asserted: the daemon owns org.freedesktop.LowMemoryMonitor; the client
# receives a warning of level 255 within 25 s; the daemon logged
# "warn tier=always level=255" and counts it in --status --json; no kill
# or would-kill line. Then a second daemon with the same config finds the
# name taken and says so (a warning, it keeps running).
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
command -v dbus-daemon >/dev/null || kt_skip_or_fail "dbus-daemon is missing (apt-get install dbus-daemon)"
PY=/usr/bin/python3
$PY -c 'import gi; gi.require_version("Gio", "2.0"); from gi.repository import Gio; Gio.MemoryMonitor' 2>/dev/null ||
	kt_skip_or_fail "python3-gi with Gio.MemoryMonitor is missing (apt-get install python3-gi gir1.2-glib-2.0)"
"$PSI_LMKD" --help >/dev/null
tmp=$(kt_tmpdir)
log=$tmp/daemon.log
daemon=

cat >"$tmp/bus.conf" <<EOF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path=$tmp/system_bus_socket</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <deny own="*"/>
    <deny send_type="method_call"/>
    <allow send_type="signal"/>
    <allow send_requested_reply="true" send_type="method_return"/>
    <allow send_requested_reply="true" send_type="error"/>
    <allow receive_type="method_call"/>
    <allow receive_type="method_return"/>
    <allow receive_type="error"/>
    <allow receive_type="signal"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Introspectable"/>
  </policy>
  <include>$srcdir/init/psi-lmkd.dbus.conf</include>
</busconfig>
EOF
dbus-daemon --config-file="$tmp/bus.conf" --nofork --nopidfile >"$tmp/bus.log" 2>&1 &
bus=$!
kt_track "$bus"
kt_wait_for 5 test -S "$tmp/system_bus_socket" || kt_fail "the private bus did not start: $(cat "$tmp/bus.log")"
export DBUS_SYSTEM_BUS_ADDRESS=unix:path=$tmp/system_bus_socket

cat >"$tmp/client.py" <<'EOF'
import sys
import gi
gi.require_version("Gio", "2.0")
from gi.repository import Gio, GLib

loop = GLib.MainLoop()
mon = Gio.MemoryMonitor.dup_default()
print("monitor", type(mon).__name__, flush=True)

def on_warning(monitor, level):
    print("warning", int(level), flush=True)
    loop.quit()

mon.connect("low-memory-warning", on_warning)
GLib.timeout_add_seconds(int(sys.argv[1]), loop.quit)
print("ready", flush=True)
loop.run()
EOF
GIO_USE_MEMORY_MONITOR=dbus $PY "$tmp/client.py" 25 >"$tmp/client.out" 2>&1 &
client=$!
kt_track "$client"
kt_wait_for 10 kt_file_has "$tmp/client.out" '^ready' || kt_fail "the GLib client did not start: $(cat "$tmp/client.out")"
kt_log "client: $(head -n 1 "$tmp/client.out")"

conf=$tmp/psi-lmkd.conf
cat >"$conf" <<EOF
[daemon]
scope = /psi-lmkd-test-empty-$$.slice
dry_run = true
control_socket = $tmp/control

[tier always]
action = warn
warn_level = critical
low_available = 100%
low_swap = 100%
EOF
kt_daemon_start "$conf" "$log" -v
daemon=$KT_DAEMON_PID
kt_wait_for 5 kt_file_has "$log" 'running: ' || e2e_fail "the daemon did not start"
kt_file_has "$log" 'warn tiers: org.freedesktop.LowMemoryMonitor owned on the system bus' ||
	e2e_fail "the daemon does not own org.freedesktop.LowMemoryMonitor"
kt_wait_for 25 kt_file_has "$tmp/client.out" '^warning ' ||
	e2e_fail "the GLib client heard no LowMemoryWarning within 25 s: $(cat "$tmp/client.out")"
got=$(grep -m1 '^warning ' "$tmp/client.out")
[ "$got" = "warning 255" ] || e2e_fail "the client heard '$got', not 'warning 255'"
kt_file_has "$log" 'warn tier=always level=255 \(critical\): LowMemoryWarning sent' || e2e_fail "no warn line in the log"
json=$("$PSI_LMKD" -c "$conf" --status --json) || e2e_fail "--status --json failed"
jq -e '.tiers[0].action == "warn" and .tiers[0].warnings >= 1 and .tiers[0].warn_level == 255 and .kills == []' \
	<<<"$json" >/dev/null || e2e_fail "--status --json: $json"
! kt_file_has "$log" 'kill pid=' || e2e_fail "a warn tier killed or would have killed"
kt_log "client: $got; daemon: $(grep -m1 'warn tier=' "$log" | sed 's/^\[[^]]*\] //')"

# a second daemon: the name is taken; it warns and runs on
sed -i "s|^control_socket = .*|control_socket = off|" "$conf"
kt_daemon_start "$conf" "$tmp/second.log" -v
second=$KT_DAEMON_PID
kt_wait_for 5 kt_file_has "$tmp/second.log" 'running: ' || kt_fail "the second daemon did not start: $(cat "$tmp/second.log")"
kt_file_has "$tmp/second.log" 'warn tiers: cannot own org.freedesktop.LowMemoryMonitor on the system bus: File exists' ||
	kt_fail "the second daemon does not say the name is taken: $(cat "$tmp/second.log")"
kill -TERM "$second" "$daemon"
kt_wait_for 5 kt_pid_dead "$daemon" || e2e_fail "the daemon ignores SIGTERM"
echo "---- client ----"
cat "$tmp/client.out"
echo "---- daemon log ----"
cat "$log"
echo PASS
exit 0
