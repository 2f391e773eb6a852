# SPDX-License-Identifier: MIT
# shellcheck shell=sh
# lib-fixroot: sourced by the daemon tests that run psi-lmkd in the
# foreground on a throwaway root made from tests/fixtures (test-sigpipe.sh,
# test-moom-dir.sh, test-maps.sh, test-scope.sh). Set test_name first. Gives: fx (the
# fixture tree), bin (the daemon), tmp (a temporary directory, removed at
# exit with the daemon in $pid killed, and a private bus daemon in $bus),
# fail (message, the log in $tmp/log if any, exit 1), and root=$tmp/root: the fixtures' /proc, a pressure file whose totals never
# move, /proc/self/mounts with /proc only, and empty /dev. Nothing there
# makes a tier fire. Exits 99 when the daemon or the fixtures are missing.
: "${test_name:=a test}"
fx=${FIXTURES:-${srcdir:-.}/tests/fixtures}
bin=${PSI_LMKD:-./psi-lmkd}
tmp=$(mktemp -d) || exit 99
pid='' bus=''
# shellcheck disable=SC2317 # run by the trap
cleanup() {
	[ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null
	[ -n "$bus" ] && kill "$bus" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; [ -f "$tmp/log" ] && sed 's/^/    | /' "$tmp/log" >&2; exit 1; }

[ -x "$bin" ] || { echo "$test_name: $bin is not built" >&2; exit 99; }
[ -d "$fx/proc" ] || { echo "$test_name: no fixture tree $fx/proc" >&2; exit 99; }
root=$tmp/root
mkdir -p "$root" && cp -R "$fx/proc" "$root/proc" || exit 99
mkdir -p "$root/proc/pressure" "$root/proc/self" "$root/dev" || exit 99
printf 'some avg10=0.00 avg60=0.00 avg300=0.00 total=1000\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=500\n' \
	>"$root/proc/pressure/memory"
printf 'proc /proc proc rw,nosuid,nodev,noexec 0 0\n' >"$root/proc/self/mounts"
