#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/scenarios/peers.sh - sourced by bench/run: peers_bench, the scenario
# "peers" (bench/README.md, section peers); definitions only.

# Peers on the latency workload: they watch system-wide MemAvailable, not a
# cgroup; run them (dry-run / no privileges) during the latency workload
# (no psi-lmkd) and count whether they would act at all.
peers_bench() {
	local p log acts dur=$LAT_TIMEOUT
	[ -n "$QUICK" ] && dur=15
	kt_disk_tmpdir "$LAT_FILE_MIB"
	kt_cgroup_create psi-lmkd-bench-peers "$LAT_LIMIT_MIB"
	kt_spawn_in_cgroup -o "$TMP/hog.out" "$KT_BINDIR/memhog" 8 900 >/dev/null
	kt_wait_ready "$TMP/hog.out" "$KT_LAST_PID" 20
	for p in earlyoom nohang; do
		peer_start "$p" "$TMP/peer-$p.log" 1
	done
	sleep 1
	kt_spawn_in_cgroup -o "$TMP/fp.out" "$KT_BINDIR/filepressure" "$KT_DISK_DIR/data" "$LAT_FILE_MIB" 100 >/dev/null
	kt_log "peers: ${dur}s of the latency workload with earlyoom --dryrun and nohang (no privileges)"
	sleep "$dur"
	for p in earlyoom nohang; do
		log=$TMP/peer-$p.log
		[ -s "$log" ] || continue
		acts=$(peer_actions "$log")
		raw peers "$p" "workload ${dur}s" 0 action_lines "${acts:-0}" count
		summarize peers "$p" "workload ${dur}s" action_lines count \
			"lines saying it acted / would act while the test cgroup thrashed"
		cp "$log" "$RESULTS/last-peer-$p.log"
	done
	run_teardown
}
