#!/bin/bash
# SPDX-License-Identifier: MIT
# bench/plot-example.sh - the README's example of tools/psi-lmkd-plot, from
# a real run (as root, about 40 s; takes the kernel-test lock): a 128 MiB
# test group with three 8 MiB memhogs at oom_score_adj 300, 700 and 950 and
# a reader thrashing a 300 MiB file (adj 100); psi-lmkd scoped to the group
# with two tiers, while `psi-lmkd --record` samples the group's
# memory.pressure every 200 ms for 30 s. Then `--status --json` and the plot.
# Writes bench/results/plot-example.svg (and its trace, status and log
# beside it); OUT=path.png for a PNG.
set -u

srcdir=${srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
PSI_LMKD=${PSI_LMKD:-$srcdir/build/psi-lmkd}
KT_BINDIR=${KT_BINDIR:-$srcdir/build/tests/kernel}
OUT=${OUT:-$srcdir/bench/results/plot-example.svg}
export PSI_LMKD KT_BINDIR
# shellcheck source-path=SCRIPTDIR source=../tests/kernel/lib.sh
. "$srcdir/tests/kernel/lib.sh" || exit 99

kt_require_root_and_psi
kt_install_traps
tmp=$(kt_tmpdir)
kt_cgroup_create psi-lmkd-plot 128
kt_disk_tmpdir 300
for adj in 300 700 950; do
	kt_spawn_in_cgroup -o "$tmp/hog-$adj.out" "$KT_BINDIR/memhog" 8 "$adj" >/dev/null
	kt_wait_ready "$tmp/hog-$adj.out" "$KT_LAST_PID" 20
done
kt_write_conf "$tmp/c.conf" <<EOF
control_socket = $tmp/control
[tier expendable]
trigger = some 100ms 2s
min_oom_score_adj = 800
[tier thrash]
trigger = some 400ms 2s
min_oom_score_adj = 200
EOF
kt_daemon_up "$tmp/c.conf" "$tmp/daemon.log"
"$PSI_LMKD" -c "$tmp/c.conf" --record "$tmp/trace" --interval 200ms --duration 30s &
rec=$!
kt_track "$rec"
sleep 2
kt_spawn_in_cgroup -o "$tmp/reader.out" "$KT_BINDIR/filepressure" "$KT_DISK_DIR/data" 300 100 >/dev/null
wait "$rec" || kt_fail "--record failed"
"$PSI_LMKD" -c "$tmp/c.conf" --status --json >"$tmp/status.json" || kt_fail "--status failed"
"$PSI_LMKD" -c "$tmp/c.conf" --status
mkdir -p "$(dirname "$OUT")"
"$srcdir/tools/psi-lmkd-plot" --psi-lmkd "$PSI_LMKD" -c "$tmp/c.conf" -t "$tmp/trace" -k "$tmp/status.json" \
	-o "$OUT" --title "psi-lmkd: 128 MiB group, a reader thrashing a 300 MiB file, memhogs at adj 300/700/950" ||
	kt_fail "psi-lmkd-plot failed"
base=${OUT%.*}
cp "$tmp/trace" "$base.trace"
cp "$tmp/status.json" "$base.status.json"
sed 's/^\[[^]]*\] //' "$tmp/daemon.log" >"$base.log"
kt_log "wrote $OUT (trace, status and log beside it)"
