# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# lib-dbus.sh - a private system bus for psi-lmkd's real-kernel tests.
# Sourced by lib.sh (source lib.sh, not this file); uses its kt_fail,
# kt_track, kt_wait_for, and $srcdir.

# kt__bus_listens PATH: a connection to the unix socket PATH succeeds
kt__bus_listens() {
	python3 -c 'import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])' "$1" 2>/dev/null
}

# kt_system_bus_start DIR [INCLUDE...]: start a dbus-daemon of ours as the system bus,
# listening on DIR/system_bus_socket, with the default system policy's
# shape (nobody may own a name unless a policy allows it) and the shipped
# init/psi-lmkd.dbus.conf, which lets root own the name of the warn tiers,
# then each INCLUDE file (a local policy of the test's).
# Exports DBUS_SYSTEM_BUS_ADDRESS; the bus's pid is in KT_BUS_PID (tracked:
# kt_cleanup ends it). Its log is DIR/bus.log. Call it in the main shell.
kt_system_bus_start() {
	local dir=$1 inc includes=
	shift
	for inc in "$@"; do
		includes="$includes  <include>$inc</include>
"
	done
	command -v dbus-daemon >/dev/null || kt_skip_or_fail "dbus-daemon is missing (apt-get install dbus-daemon)"
	cat >"$dir/bus.conf" <<EOB
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path=$dir/system_bus_socket</listen>
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
  <include>${srcdir:?}/init/psi-lmkd.dbus.conf</include>
$includes</busconfig>
EOB
	rm -f "$dir/system_bus_socket"
	dbus-daemon --config-file="$dir/bus.conf" --nofork --nopidfile >"$dir/bus.log" 2>&1 &
	KT_BUS_PID=$!
	kt_track "$KT_BUS_PID"
	# listening, not only bound: a bus stopped between its bind() and its
	# listen() refuses connections (ECONNREFUSED) instead of leaving them
	# unanswered, which test-bus-stall's connect case tells apart
	kt_wait_for 5 kt__bus_listens "$dir/system_bus_socket" || kt_fail "the private bus did not start: $(cat "$dir/bus.log")"
	export DBUS_SYSTEM_BUS_ADDRESS=unix:path=$dir/system_bus_socket
}
