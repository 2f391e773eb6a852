#!/bin/bash
# SPDX-License-Identifier: MIT
# test-dropin.sh - psi-lmkd --check-config -c X with drop-ins in X.d/ (a
# fixture pressure file under --root; no root, no kernel needed).
# Asserted: the merged result is printed with the files read, in name order,
# and the FILE:LINE of each value in force, exit 0; a bad drop-in, a *.conf
# that is a directory, and a X.d that is a file exit 1 with the path (and
# line) at fault; files that are not *.conf, or hidden, are not read.
# Exit: 0 pass, 1 fail.
set -u

srcdir=${srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
PSI_LMKD=${PSI_LMKD:-$srcdir/build/psi-lmkd}
fail() { echo "FAIL: $*" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test-dropin.XXXXXX") || fail "mktemp"
trap 'rm -rf "$tmp"' EXIT

mkdir -p "$tmp/root/proc/pressure" "$tmp/x.conf.d"
printf 'some avg10=0.00 avg60=0.00 avg300=0.00 total=0\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n' \
	>"$tmp/root/proc/pressure/memory"
conf=$tmp/x.conf
printf '[daemon]\nkill_timeout = 2s\n[tier a]\ntrigger = some 100ms 2s\nmin_oom_score_adj = 500\n' >"$conf"
printf '[daemon]\nkill_timeout = 3s\n' >"$tmp/x.conf.d/20-late.conf"
printf '; the tier of the main file, extended\n[tier a]\nkill_signal = SIGTERM\n[tier b]\nlow_available = 5%%\nmin_oom_score_adj = 900\nkill_timeout = 1s\n' \
	>"$tmp/x.conf.d/10-early.conf"
printf 'garbage\n' >"$tmp/x.conf.d/.hidden.conf"
printf 'garbage\n' >"$tmp/x.conf.d/10-early.conf.dpkg-old"
printf 'garbage\n' >"$tmp/x.conf.d/README"
check() { "$PSI_LMKD" --root "$tmp/root" --check-config -c "$conf" 2>&1; }

# 10-early.conf sets kill_timeout in a [tier]: an error at its line 7
out=$(check) && fail "an unknown tier key in a drop-in was accepted: $out"
grep -qF "$tmp/x.conf.d/10-early.conf:7: unknown key \"kill_timeout\" in a [tier] section" <<<"$out" ||
	fail "the error does not name 10-early.conf:7: $out"
sed -i '$d' "$tmp/x.conf.d/10-early.conf"

out=$(check) || fail "--check-config failed: $out"
for want in "kill_timeout = 3s" \
	"tier a: trigger = some 100ms 2s (kernel form \"some 100000 2000000\"), min_oom_score_adj = 500, kill_signal = SIGTERM, term_timeout = 2s" \
	"file 1 = $conf" "file 2 = $tmp/x.conf.d/10-early.conf" "file 3 = $tmp/x.conf.d/20-late.conf" \
	"[daemon] kill_timeout at $tmp/x.conf.d/20-late.conf:2" "[tier a] at $conf:3" \
	"[tier a] trigger at $conf:4" "[tier a] kill_signal at $tmp/x.conf.d/10-early.conf:3" \
	"[tier b] at $tmp/x.conf.d/10-early.conf:4" "[tier b] min_oom_score_adj at $tmp/x.conf.d/10-early.conf:6" \
	"$conf: OK"; do
	grep -qxF -- "$want" <<<"$out" || fail "no line '$want' in: $out"
done
! grep -q "file 4" <<<"$out" || fail "a file that is not a drop-in was read: $out"

# a cross-tier check that fails on a drop-in's value names the drop-in's line
printf '[tier a]\nterm_timeout = 5s\n[tier b]\nkill_signal = SIGKILL\nterm_timeout = 1s\n' >"$tmp/x.conf.d/30-bad.conf"
out=$(check) && fail "term_timeout with SIGKILL accepted: $out"
grep -qF "$tmp/x.conf.d/30-bad.conf:5: term_timeout only applies with kill_signal = SIGTERM" <<<"$out" ||
	fail "the error does not name 30-bad.conf:5: $out"
rm "$tmp/x.conf.d/30-bad.conf"

mkdir "$tmp/x.conf.d/40-dir.conf"
out=$(check) && fail "a directory named *.conf was accepted: $out"
grep -qF "$tmp/x.conf.d/40-dir.conf: cannot read config: not a regular file" <<<"$out" || fail "$out"
rmdir "$tmp/x.conf.d/40-dir.conf"

rm -r "$tmp/x.conf.d"
out=$(check) || fail "no drop-in directory: $out"
grep -qxF "kill_timeout = 2s" <<<"$out" || fail "without drop-ins kill_timeout is not the main file's: $out"
printf '[daemon]\n' >"$tmp/x.conf.d"
out=$(check) && fail "a file as the drop-in directory was accepted: $out"
grep -qF "$tmp/x.conf.d: cannot read the drop-in directory: Not a directory" <<<"$out" || fail "$out"
echo "PASS"
