#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/scenarios/scan.sh - sourced by bench/run: scan_bench, the scenario
# "scan" (bench/README.md, section scan); definitions only.

# ------------------------------------------------------------- 1. scan --

scan_bench() {
	local n reps=7 dir adj rep us cnt seen
	[ -n "$QUICK" ] && reps=3
	kt_log "scan cost: fixture trees (reps $reps)"
	for n in 100 1000 5000 10000; do
		dir=$TMP/fixture-$n
		"$TMP/scan-bench" gen "$dir" "$n" || kt_fail "scan-bench gen $n"
		for adj in 0 700; do
			rep=0
			# one warm-up scan (dentry cache), then the timed ones
			"$TMP/scan-bench" time "$dir" 1 "$adj" /bench >/dev/null
			while read -r _ _ us _; do
				us=${us#us=}
				raw scan "fixture-minadj$adj" "$n" "$rep" scan_us "$us" us
				raw scan "fixture-minadj$adj" "$n" "$rep" us_per_proc \
					"$(awk -v a="$us" -v n="$n" 'BEGIN { printf "%.3f", a / n }')" us
				rep=$((rep + 1))
			done < <("$TMP/scan-bench" time "$dir" "$reps" "$adj" /bench)
			summarize scan "fixture-minadj$adj" "$n" scan_us us
			summarize scan "fixture-minadj$adj" "$n" us_per_proc us
		done
		rm -rf -- "$dir"
	done

	# The real /proc with N sleepers in a test cgroup (scope = that group).
	kt_log "scan cost: real /proc with sleepers in a test cgroup"
	for n in 100 1000; do
		[ -n "$QUICK" ] && [ "$n" -gt 100 ] && continue
		kt_cgroup_create psi-lmkd-bench 512
		kt_spawn_in_cgroup -o "$TMP/sleepers.out" bash -c '
			for ((i = 0; i < '"$n"'; i++)); do sleep 3600 & done
			echo started; wait' >/dev/null
		kt_wait_for 60 sh -c "[ \$(wc -l <'$KT_CG2_DIR/cgroup.procs') -ge $((n + 1)) ]" ||
			kt_log "only $(wc -l <"$KT_CG2_DIR/cgroup.procs") of $n sleepers arrived"
		cnt=$(ls /proc | grep -c '^[0-9]')
		for adj in 0; do
			rep=0
			"$TMP/scan-bench" time /proc 1 "$adj" "$KT_CG2_REL" >/dev/null
			while read -r _ _ us seen _; do
				us=${us#us=}
				seen=${seen#seen=}
				raw scan "proc-minadj$adj" "$n" "$rep" scan_us "$us" us
				raw scan "proc-minadj$adj" "$n" "$rep" us_per_proc \
					"$(awk -v a="$us" -v n="$seen" 'BEGIN { printf "%.3f", a / n }')" us
				rep=$((rep + 1))
			done < <("$TMP/scan-bench" time /proc "$reps" "$adj" "$KT_CG2_REL")
			summarize scan "proc-minadj$adj" "$n" scan_us us "real /proc: $n sleepers + $((cnt - n)) other processes"
			summarize scan "proc-minadj$adj" "$n" us_per_proc us "per /proc entry ($cnt entries)"
		done
		run_teardown
	done
}
