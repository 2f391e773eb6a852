#!/bin/bash
# SPDX-License-Identifier: MIT
# test-plot.sh - tools/psi-lmkd-plot draws the fixture trace
# (tests/fixtures/traces/steady-15pct.trace: 10 s of 15% some / 5% full
# stall) with three tiers, the events psi-lmkd --replay finds, and one kill
# from a --status --json answer (a would-kill in it must not be drawn).
# Asserted: an SVG comes out with each tier's stall line, threshold and
# event count (10, 10 and none for the 200 ms tier, as test-trace.c finds),
# and the kill's label; a trace without start_unix_ms with -k is refused;
# and a PNG comes out too.
# Exit: 0 pass, 1 fail, 77 skip (gnuplot or jq missing; a failure with CI=true).
set -u

srcdir=${srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
PSI_LMKD=${PSI_LMKD:-$srcdir/build/psi-lmkd}
plot=$srcdir/tools/psi-lmkd-plot
fail() { echo "FAIL: $*" >&2; exit 1; }
for c in gnuplot jq; do
	if ! command -v "$c" >/dev/null; then
		[ "${CI:-}" = true ] && fail "$c is missing (CI=true)"
		echo "SKIP: $c is missing (Debian: gnuplot-nox, jq)"
		exit 77
	fi
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test-plot.XXXXXX") || fail "mktemp"
trap 'rm -rf "$tmp"' EXIT

# --check-config reads the pressure file: a fixture one under --root
mkdir -p "$tmp/root/proc/pressure"
printf 'some avg10=0.00 avg60=0.00 avg300=0.00 total=0\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n' \
	>"$tmp/root/proc/pressure/memory"
cat >"$tmp/c.conf" <<EOF
[tier low]
trigger = some 100ms 1s
min_oom_score_adj = 0
[tier full]
trigger = full 40ms 1s
min_oom_score_adj = 0
[tier high]
trigger = some 200ms 1s
min_oom_score_adj = 0
[tier last]
low_available = 5%
min_oom_score_adj = 0
EOF
fixture=$srcdir/tests/fixtures/traces/steady-15pct.trace
{ head -n 2 "$fixture"; echo "# start_unix_ms=1796325600000"; tail -n +3 "$fixture"; } >"$tmp/t.trace"
cat >"$tmp/k.json" <<EOF
{"kills":[{"time_unix_ms":1796325605500,"dry_run":false,"pid":4242,"comm":"chrome","tier":"low"},
{"time_unix_ms":1796325609000,"dry_run":true,"pid":77,"comm":"dryrun","tier":"low"}]}
EOF
run() { "$plot" --psi-lmkd "$PSI_LMKD" --root "$tmp/root" -c "$tmp/c.conf" "$@"; }

out=$(run -t "$tmp/t.trace" -k "$tmp/k.json" -o "$tmp/p.svg") || fail "psi-lmkd-plot failed: $out"
echo "$out"
grep -q '<svg' "$tmp/p.svg" || fail "no SVG"
for s in 'low: some stall per 1000 ms window' 'low threshold 100 ms' 'low events (10)' \
	'full: full stall per 1000 ms window' 'full events (10)' 'high threshold 200 ms' \
	'kills (1)' 'chrome(4242)/low'; do
	grep -qF -- "$s" "$tmp/p.svg" || fail "the SVG lacks '$s'"
done
! grep -q 'high events' "$tmp/p.svg" || fail "events drawn for the 200 ms tier, which never fires"
! grep -q 'dryrun' "$tmp/p.svg" || fail "a would-kill was drawn as a kill"
! grep -q 'last' "$tmp/p.svg" || fail "the tier without a trigger was drawn"
if out=$(run -t "$fixture" -k "$tmp/k.json" -o "$tmp/q.svg" 2>&1); then
	fail "kills placed on a trace without start_unix_ms"
fi
grep -q "no '# start_unix_ms=' line" <<<"$out" || fail "unexpected refusal: $out"
run -t "$fixture" -o "$tmp/p.png" >/dev/null || fail "no PNG"
[ "$(head -c 8 "$tmp/p.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "p.png is not a PNG"
echo PASS
