#!/bin/sh
# SPDX-License-Identifier: MIT
# test-usage: a command line that asks for two things, or for an option
# without the mode it belongs to, is bad usage (exit 2, a message naming the
# options), never a silent choice -- in particular never the daemon started
# and detached where the user asked for a one-shot mode ("psi-lmkd
# --interval 1s" once started it). Every case must exit 2 before reading a
# configuration: none is given, so a case that went on would fail with 1.
# Needs no privilege; reads nothing of /proc.
# Exit: 0 pass, 1 fail, 99 hard error.
set -u
bin=${PSI_LMKD:-./psi-lmkd}
[ -x "$bin" ] || { echo "test-usage: $bin is not built" >&2; exit 99; }
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
failed=0

# usage WANT ARGS...: psi-lmkd ARGS exits 2 and says WANT on stderr
usage() {
	want=$1
	shift
	timeout 10 "$bin" -c "$tmp/none.conf" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" -ne 2 ] || ! grep -qF -- "$want" "$tmp/err"; then
		echo "FAIL: psi-lmkd $*: exit $rc, wanted 2 and \"$want\"; stderr: $(head -c 300 "$tmp/err")" >&2
		failed=1
	else
		echo "ok: psi-lmkd $*: $(head -n 1 "$tmp/err")"
	fi
}

usage "--interval goes with --record" --interval 1s
usage "--duration goes with --record" -f --duration 5s
usage "--interval goes with --record" --replay "$tmp/trace" --interval 1s
usage "--probe and --status cannot be used together" --probe --status
usage "--check-config and --probe cannot be used together" --check-config --probe
usage "--record and --replay cannot be used together" --record - --replay "$tmp/trace"
usage "--reinit and --boot-completed cannot be used together" --reinit --boot-completed
usage "--status and --release-brake cannot be used together" --status --release-brake
usage "--candidates and --json go with --status" --candidates
usage "unexpected argument" --check-config extra
usage "unrecognized option" --no-such-option
usage "--interval" --record - --interval 0
# an empty argument is no path: never the current directory or a default
usage "-c: the argument is empty" --check-config -c ''
usage "--config=: the argument is empty" --check-config --config=
usage "--root: the argument is empty" --check-config --root ''
# --duration: 1ms..1h, the bound said (0s once meant "until Ctrl-C")
usage '--duration: must be 1ms..1h, not "0s"' --record - --duration 0s
usage '--duration: must be 1ms..1h, not "7200s"' --record - --duration 7200s
usage '--duration: must be 1ms..1h' --record - --duration 99999999999999999999s

# the same mode twice is one mode: it goes on to read the (absent) config
timeout 10 "$bin" -c "$tmp/none.conf" --check-config --check-config >/dev/null 2>"$tmp/err"
rc=$?
if [ "$rc" -ne 1 ] || ! grep -q "none.conf: cannot read config" "$tmp/err"; then
	echo "FAIL: --check-config twice: exit $rc, wanted 1 (the missing config); stderr: $(cat "$tmp/err")" >&2
	failed=1
fi
[ "$failed" = 0 ] && echo "PASS"
exit "$failed"
