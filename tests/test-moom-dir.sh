#!/bin/sh
# SPDX-License-Identifier: MIT
# test-moom-dir: with systemd_managed_oom and no socket passed by
# systemd-oomd.socket, the daemon binds the user managers' socket
# /run/systemd/oom/io.system.ManagedOOM itself, making its directory when
# there is none; at exit it removes the socket and the directory it made
# (an empty /run/systemd/oom left behind looks like systemd-oomd's), and
# leaves a directory that was there before.
# The daemon runs in the foreground, dry run, on a throwaway root made from
# tests/fixtures (nothing fires: MemAvailable far above the one
# low_available tier); PID 1's socket is absent, so its subscription only
# retries. Needs no privilege.
# Exit: 0 pass, 1 fail, 99 hard error.
set -u
test_name=test-moom-dir
# shellcheck source-path=SCRIPTDIR source=lib-fixroot.sh
. "${srcdir:-.}/tests/lib-fixroot.sh" || exit 99
mkdir -p "$root/run/systemd" || exit 99
printf '[daemon]\ndry_run = true\nsystemd_managed_oom = true\ncontrol_socket = %s/ctl\n[tier last]\nlow_available = 1%%\nmin_oom_score_adj = 0\n' \
	"$tmp" >"$tmp/c.conf"
sock=$root/run/systemd/oom/io.system.ManagedOOM

# run WHAT: the daemon until its socket is bound, then SIGTERM; it must exit 0
run() {
	env -u LISTEN_PID -u LISTEN_FDS "$bin" -f -v -c "$tmp/c.conf" --root "$root" >"$tmp/log" 2>&1 &
	pid=$!
	i=0
	until [ -S "$sock" ]; do
		i=$((i + 1))
		if [ $i -gt 100 ] || ! kill -0 "$pid" 2>/dev/null; then
			fail "$1: no socket at $sock after 10 s"
		fi
		sleep 0.1
	done
	kill -TERM "$pid"
	wait "$pid"
	rc=$?
	pid=
	[ "$rc" = 0 ] || fail "$1: the daemon exited $rc on SIGTERM"
	[ ! -e "$sock" ] || fail "$1: the socket is still there after exit"
}

run "no directory before"
[ ! -e "$root/run/systemd/oom" ] || fail "the directory the daemon made is still there after exit"
echo "ok: socket and its directory made, both gone at exit"

mkdir "$root/run/systemd/oom" && : >"$root/run/systemd/oom/other" || exit 99
run "a directory before"
[ -f "$root/run/systemd/oom/other" ] || fail "the directory that was there before (and its file) is gone"
echo "ok: a directory that was there before stays"
echo PASS
