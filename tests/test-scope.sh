#!/bin/sh
# SPDX-License-Identifier: MIT
# test-scope: a scope that names no cgroup kills nothing, so the daemon says
# so at start and on a reload (it keeps running: a user's slice may appear
# later); a scope that exists gets no such line.
# The daemon runs in the foreground, dry run, on a throwaway root made from
# tests/fixtures, with a cgroup2 mount at /sys/fs/cgroup holding one group,
# /present (nothing fires: MemAvailable far above the one low_available
# tier). Needs no privilege.
# Exit: 0 pass, 1 fail, 99 hard error.
set -u
test_name=test-scope
# shellcheck source-path=SCRIPTDIR source=lib-fixroot.sh
. "${srcdir:-.}/tests/lib-fixroot.sh" || exit 99
mkdir -p "$root/sys/fs/cgroup/present" || exit 99
printf 'proc /proc proc rw,nosuid,nodev,noexec 0 0\ncgroup2 /sys/fs/cgroup cgroup2 rw,nosuid,nodev,noexec 0 0\n' \
	>"$root/proc/self/mounts"
conf() {
	printf '[daemon]\ndry_run = true\nscope = %s\ncontrol_socket = off\n[tier last]\nlow_available = 1%%\nmin_oom_score_adj = 0\n' \
		"$1" >"$tmp/c.conf"
}
# waits (10 s at most) until the log has its Nth line matching a pattern
wait_log() {
	i=0
	until [ "$(grep -c "$2" "$tmp/log" 2>/dev/null)" -ge "$1" ]; do
		i=$((i + 1))
		if [ $i -gt 100 ] || ! kill -0 "$pid" 2>/dev/null; then
			fail "no line $1 matching '$2' after 10 s"
		fi
		sleep 0.1
	done
}
missing='scope /absent: no such cgroup under /sys/fs/cgroup: nothing can be killed until it exists'

conf /present
"$bin" -f -c "$tmp/c.conf" --root "$root" >"$tmp/log" 2>&1 &
pid=$!
wait_log 1 'running:'
grep -q 'nothing can be killed until it exists' "$tmp/log" && fail "a warning for a scope that exists"
echo "ok: an existing scope, no warning"

conf /absent
kill -HUP "$pid"
wait_log 1 'reload'
wait_log 1 "$missing"
echo "ok: a reload to a scope that does not exist says so"
kill -TERM "$pid"
wait "$pid" || fail "the daemon exited $? on SIGTERM"
pid=

"$bin" -f -c "$tmp/c.conf" --root "$root" >"$tmp/log" 2>&1 &
pid=$!
wait_log 1 'running:'
grep -q "$missing" "$tmp/log" || fail "no warning at start for a scope that does not exist"
echo "ok: a scope that does not exist, said at start"
echo PASS
