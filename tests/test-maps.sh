#!/bin/sh
# SPDX-License-Identifier: MIT
# test-maps: what the idle daemon maps (issue 30). Without a warn tier and
# before any kill, no libsystemd and none of what it drags in (libgcrypt,
# libgpg-error, liblzma, libzstd, liblz4) may be in /proc/PID/maps: the
# notifications and the journal need no library, and sd-bus is loaded only
# while a bus connection is open. Built with sd-bus, a warn tier on a private
# bus (a dbus-daemon of this test, when installed) maps libsystemd while its
# connection is up; a reload to a configuration without one closes the
# connection and unmaps it again. And the idle daemon's written memory (the
# sum of smaps' Anonymous: heap, stack, relocated data; it does not depend on
# who else maps the same files, nor on whether the binary's page cache is
# still dirty from the build) stays under ANON_MAX_KB: measured 304-332 kB
# on this test's configuration (host, glibc, 2026-12-05), 308 since issue
# 30's third pass, so a regression of some 100 kB fails. bench/README.md, "rss", says what each part is.
#
# The daemon runs in the foreground, dry run, on a throwaway root made from
# tests/fixtures (tests/lib-fixroot.sh); it needs no privilege.
# Exit: 0 pass, 1 fail, 77 skip (not Linux /proc), 99 hard error.
set -u
[ -r /proc/self/maps ] || exit 77
test_name=test-maps
# shellcheck source-path=SCRIPTDIR source=lib-fixroot.sh
. "${srcdir:-.}/tests/lib-fixroot.sh" || exit 99
# the daemon's stderr, not lib-fixroot's log
fail() {
	echo "FAIL: $*" >&2
	[ -f "$tmp/stderr" ] && sed 's/^/# daemon: /' "$tmp/stderr" >&2
	exit 1
}
note() { echo "# $*" >&2; }
plain=$tmp/plain.conf
printf '[daemon]\ndry_run = true\n[tier last]\nlow_available = 1%%\nmin_oom_score_adj = 0\n' >"$plain"
warn=$tmp/warn.conf
printf '[daemon]\ndry_run = true\n[tier warn]\naction = warn\nwarn_level = low\nlow_available = 1%%\n[tier last]\nlow_available = 1%%\nmin_oom_score_adj = 0\n' >"$warn"

UNWANTED='libsystemd|libgcrypt|libgpg-error|liblzma|libzstd|liblz4'
ANON_MAX_KB=400
# the daemon's anonymous memory in kB (smaps' Anonymous: summed)
anonymous_kb() { awk '/^Anonymous:/ { a += $2 } END { print a + 0 }' "/proc/$pid/smaps"; }
# the unwanted libraries the daemon maps now, on one line (none: empty)
unwanted() { grep -oE "/[^ ]*($UNWANTED)[^ /]*$" "/proc/$pid/maps" | sed 's|.*/||' | sort -u | tr '\n' ' '; }
# waits (10 s at most) until "$1" is on the daemon's stderr
wait_log() {
	i=0
	while [ $i -lt 100 ]; do
		grep -q "$1" "$tmp/stderr" 2>/dev/null && return 0
		kill -0 "$pid" 2>/dev/null || return 1
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}
# waits (10 s at most) until unwanted() prints something (or, with "none", nothing)
wait_maps() {
	i=0
	while [ $i -lt 100 ]; do
		m=$(unwanted)
		if [ "$1" = none ]; then [ -z "$m" ] && return 0; else [ -n "$m" ] && return 0; fi
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}
stop() {
	kill -TERM "$pid" 2>/dev/null
	wait "$pid"
	pid=
}

# ---------------------------------------------------------------- 1. no warn tier
env -u JOURNAL_STREAM -u NOTIFY_SOCKET "$bin" -f -v -c "$plain" --root "$root" 2>"$tmp/stderr" >/dev/null &
pid=$!
wait_log 'tier last armed' || fail "1: the daemon did not start"
m=$(unwanted)
[ -z "$m" ] || fail "1: no warn tier, yet mapped: $m"
note "1: no warn tier: none of libsystemd, libgcrypt, libgpg-error, liblzma, libzstd, liblz4 mapped"
if grep -q '__asan_init' "$bin"; then
	note "1: built with AddressSanitizer: its shadow and quarantine are no measure of the daemon; no bound on memory"
else
	wait_log ' running: ' || fail "1: the daemon did not say it runs"
	a=$(anonymous_kb)
	[ "$a" -le "$ANON_MAX_KB" ] || fail "1: the idle daemon holds $a kB of anonymous memory, more than $ANON_MAX_KB kB"
	note "1: idle anonymous memory $a kB (at most $ANON_MAX_KB)"
fi
stop

# ---------------------------------------------------------------- 2. a warn tier on a bus
if ! grep -q 'libsystemd\.so\.0' "$bin"; then
	note "2: built without sd-bus (--with-systemd=no): no bus, nothing more to check"
	exit 0
fi
if ! command -v dbus-daemon >/dev/null; then
	note "2: skipped: no dbus-daemon (apt-get install dbus-daemon)"
	exit 0
fi
cat >"$tmp/bus.conf" <<EOB
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path=$tmp/bus</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_type="signal"/>
    <allow send_requested_reply="true" send_type="method_return"/>
    <allow send_requested_reply="true" send_type="error"/>
    <allow receive_type="method_return"/>
    <allow receive_type="error"/>
    <allow receive_type="signal"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus"/>
  </policy>
</busconfig>
EOB
dbus-daemon --config-file="$tmp/bus.conf" --nofork --nopidfile >"$tmp/bus.log" 2>&1 &
bus=$!
i=0
while [ ! -S "$tmp/bus" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
[ -S "$tmp/bus" ] || { echo "test-maps: the private bus did not start: $(cat "$tmp/bus.log")" >&2; exit 99; }
cp "$warn" "$tmp/live.conf"
DBUS_SYSTEM_BUS_ADDRESS=unix:path=$tmp/bus env -u JOURNAL_STREAM -u NOTIFY_SOCKET \
	"$bin" -f -v -v -c "$tmp/live.conf" --root "$root" 2>"$tmp/stderr" >/dev/null &
pid=$!
wait_log 'owned on the system bus' || fail "2: the warn tier did not get its name on the private bus"
wait_maps some || fail "2: a warn tier's connection is up, yet libsystemd is not mapped"
unwanted | grep -q libsystemd || fail "2: mapped, but not libsystemd: $(unwanted)"
note "2: a warn tier's connection up: libsystemd mapped ($(unwanted))"
cp "$plain" "$tmp/live.conf"
kill -HUP "$pid"
wait_log 'configuration reloaded' || fail "2: the reload to no warn tier did not happen"
wait_maps none || fail "2: the reload dropped the warn tier, yet still mapped: $(unwanted)"
note "2: reloaded without a warn tier: the connection closed, nothing of it mapped"
stop
exit 0
