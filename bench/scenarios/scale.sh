#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/scenarios/scale.sh - sourced by bench/run: scale_bench, the scenario
# "scale" (bench/README.md, section scale); definitions only.

# ------------------------------------------------------------ 1b. scale --

# The kill decision at scale (issue 16, item 3; issue 30, item 4):
# pick_choose, read in full (the old path, --full) and with the kill path's
# early look, in the adj order and in the badness order with the system as
# the OOM domain (RAM + swap); min_adj 0, so every process of the scope is
# in the band. "shipped" is the shipped config's choice under pressure:
# badness, the system as the domain, growth measured from a size sample
# (culprit_growth 1 % of the domain, at least 4 MiB; the sample's floor a
# quarter of that). "sample" times that size sample itself (pick_sample, at
# most every 5 s while pressure builds) over every process of ROOT.
# - proc-*: the real /proc with N idle children of scan-bench in a test
#   cgroup (scope = that group; adj and RSS spread as in the fixture). A
#   child costs its group about 200 KiB (page tables, kernel stack, copied
#   pages), so 512 MiB holds about 2 500 of them: N = 100, 1 000, 2 000;
# - fixture-*: the generated tree of N fake processes on tmpfs (/dev/shm),
#   N = 100, 1 000, 10 000, scope /bench (half of them).
SCALE_VARIANTS=("full-adj:--full --order adj" "early-adj:--order adj"
	"full-badness:--full --order badness" "early-badness:--order badness"
	"shipped:--order badness --culprit CULPRIT")
scale_time() {	# KIND N ROOT SCOPE NOTE
	local kind=$1 n=$2 root=$3 scope=$4 note=$5 v name opts rep us seen read pruned domain culprit kept floor
	domain=$(awk '/^(MemTotal|SwapTotal):/ { s += $2 } END { print s }' /proc/meminfo)
	culprit=$((domain / 100 > 4096 ? domain / 100 : 4096))
	for v in "${SCALE_VARIANTS[@]}"; do
		name=$kind-${v%%:*}
		opts=${v#*:}
		opts=${opts/CULPRIT/$culprit}
		# shellcheck disable=SC2086
		"$TMP/scan-bench" $opts --domain "$domain" time "$root" 1 0 "$scope" >/dev/null
		rep=0
		# shellcheck disable=SC2086
		while read -r _ _ us seen read _ _ pruned cpu; do
			us=${us#us=}
			raw scale "$name" "$n" "$rep" decision_us "$us" us
			raw scale "$name" "$n" "$rep" decision_cpu_us "${cpu#cpu_us=}" us
			raw scale "$name" "$n" "$rep" us_per_proc \
				"$(awk -v a="$us" -v n="${seen#seen=}" 'BEGIN { printf "%.3f", a / n }')" us
			raw scale "$name" "$n" "$rep" read_in_full "${read#read=}" processes
			raw scale "$name" "$n" "$rep" ruled_out_early "${pruned#pruned=}" processes
			rep=$((rep + 1))
		done < <("$TMP/scan-bench" $opts --domain "$domain" time "$root" "$SCALE_REPS" 0 "$scope")
		summarize scale "$name" "$n" decision_us us "$note"
		summarize scale "$name" "$n" decision_cpu_us us "CPU time (user + system) of the choice"
		summarize scale "$name" "$n" us_per_proc us "per /proc entry"
		summarize scale "$name" "$n" read_in_full processes
		summarize scale "$name" "$n" ruled_out_early processes
	done
	name=$kind-sample
	"$TMP/scan-bench" sample "$root" 1 $((culprit / 4)) >/dev/null
	rep=0
	while read -r _ _ us kept floor cpu; do
		raw scale "$name" "$n" "$rep" sample_us "${us#us=}" us
		raw scale "$name" "$n" "$rep" sample_cpu_us "${cpu#cpu_us=}" us
		raw scale "$name" "$n" "$rep" kept "${kept#kept=}" processes
		raw scale "$name" "$n" "$rep" floor_kb "${floor#floor=}" kB
		rep=$((rep + 1))
	done < <("$TMP/scan-bench" sample "$root" "$SCALE_REPS" $((culprit / 4)))
	summarize scale "$name" "$n" sample_us us "growth sample of every process at floor $((culprit / 4)) kB"
	summarize scale "$name" "$n" sample_cpu_us us "CPU time (user + system) of the sample"
	summarize scale "$name" "$n" kept processes
	summarize scale "$name" "$n" floor_kb kB "the floor after the sample (it rises once 256 are kept)"
}
scale_bench() {
	local n got dir
	SCALE_REPS=7
	[ -n "$QUICK" ] && SCALE_REPS=3
	for n in 100 1000 2000; do
		kt_cgroup_create psi-lmkd-scale 512
		kt_spawn_in_cgroup -o "$TMP/spawn.out" "$TMP/scan-bench" spawn "$n" >/dev/null
		kt_wait_for 300 grep -q '^started' "$TMP/spawn.out" || kt_fail "scan-bench spawn $n did not start"
		got=$(($(wc -l <"$KT_CG2_DIR/cgroup.procs") - 1))
		kt_log "kill decision at scale: $got of $n children in $KT_CG2_REL (reps $SCALE_REPS)"
		scale_time proc "$n" /proc "$KT_CG2_REL" \
			"real /proc: $got children + $(($(find /proc -maxdepth 1 -name '[0-9]*' | wc -l) - got)) other processes"
		run_teardown
	done
	for n in 100 1000 10000; do
		dir=$(mktemp -d /dev/shm/psi-lmkd-scale.XXXXXX) || kt_fail "no tmpfs dir"
		KT_CLEAN_PATHS+=("$dir")
		"$TMP/scan-bench" gen "$dir/proc" "$n" || kt_fail "scan-bench gen $n"
		kt_log "kill decision at scale: fixture of $n on tmpfs (reps $SCALE_REPS)"
		scale_time fixture "$n" "$dir/proc" /bench "fixture on tmpfs (half of it in scope)"
		rm -rf -- "$dir"
	done
}
