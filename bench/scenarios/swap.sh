#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/scenarios/swap.sh - sourced by bench/run: swap_bench, the scenario
# "swap" (bench/README.md, section swap); definitions only.

# ------------------------------------------------------ 8. swap and zram --

# The last resort with and without swap, in a fresh 256 MiB group, with
# psi-lmkd on the shipped conf/psi-lmkd.conf (pol_conf_from_shipped: its
# last-resort tier low_available = 5%, low_swap unset = 10 % of the
# group's swap) or with no daemon (the kernel's own outcome):
#   benign   anongrow allocates 400 MiB once at 200 MiB/s and idles
#            SWAP_WATCH s (adj 0)
#   runaway  anongrow grows 64 MiB/s without end (adj 0)
# both writing pages half random, half zero (about 2:1 in zram), each
#   noswap   swap off for the group (kt_cgroup_create), no device
#   zram     a zram swap device of 1 GiB disk size, 192 MiB of RAM at most
#            (kt_zram_add), the group allowed 1 GiB of it
#            (kt_cgroup_allow_swap).  The device exists only during the
#            zram runs; kt_cleanup removes it on failure and INT/TERM too.
SWAP_LIMIT_MIB=256
SWAP_BENIGN_MIB=400
SWAP_RATE=64
SWAP_WATCH=15
[ -n "$QUICK" ] && SWAP_WATCH=8
SWAP_MAX=60
SWAP_WORKLOADS=(benign runaway)
declare -A SWAP_BASE_OOM SWAP_NOTES

# swap_run WORKLOAD SWAP MODE REP
swap_run() {
	local w=$1 sw=$2 mode=$3 rep=$4 log=$TMP/swap-lmkd.log out=$TMP/swap-ag.out onset deadline
	local oom_t='' oom0 pid dead='' full='' t line kill_t='' kills lead='' vmswap='' key=$1-$2
	kt_cgroup_create psi-lmkd-bench-swap "$SWAP_LIMIT_MIB"
	[ "$sw" = zram ] && kt_cgroup_allow_swap $((1024 * 1024 * 1024))
	vmp_start "$TMP/swap-vmp.log"
	: >"$log"
	if [ "$mode" = lmkd ]; then
		conf=$TMP/swap.conf
		pol_conf_from_shipped "$TOP/conf/psi-lmkd.conf"
		lmkd_start "$conf" "$log" -v
		lmkd_wait_running "$log"
	fi
	oom0=$(kt_oom_kills)
	if [ "$w" = benign ]; then
		kt_spawn_in_cgroup -o "$out" "$KT_BINDIR/anongrow" 200 0 "$SWAP_BENIGN_MIB" half >/dev/null
	else
		kt_spawn_in_cgroup -o "$out" "$KT_BINDIR/anongrow" "$SWAP_RATE" 0 65536 half >/dev/null
	fi
	pid=$KT_LAST_PID
	kt_wait_ready "$out" "$pid" 10
	onset=$(now_us)
	deadline=$(( onset + SWAP_MAX * 1000000 ))
	while :; do
		t=$(now_us)
		[ -n "$oom_t" ] || oom_t=$(oom_time "$onset" "$oom0" "$TMP/swap-vmp.log")
		if kt_pid_dead "$pid"; then dead=$t; break; fi
		# the benign process: SWAP_WATCH s from when it has it all
		if [ "$w" = benign ] && [ -z "$full" ] && grep -q "^grown $SWAP_BENIGN_MIB " "$out"; then
			full=$t
			deadline=$(( t + SWAP_WATCH * 1000000 ))
		fi
		[ "$t" -ge "$deadline" ] && break
		sleep 0.05
	done
	[ -z "$dead" ] && [ "$w" = benign ] &&
		vmswap=$(awk '$1 == "VmSwap:" { print int($2 / 1024) }' "/proc/$pid/status" 2>/dev/null)
	sleep 0.3	# a kill line written just now
	[ -n "$oom_t" ] || oom_t=$(oom_time "$onset" "$oom0" "$TMP/swap-vmp.log")
	kills=$(lmkd_kill_lines "$log" | wc -l)
	line=$(lmkd_kill_lines "$log" | grep -E "(^|[[:space:]])pid=$pid([[:space:]]|$)" | head -n 1)
	[ -n "$line" ] && kill_t=${line%% *}
	raw swap "$key" "$mode" "$rep" killed "$([ -n "$dead" ] && echo 1 || echo 0)" count
	raw swap "$key" "$mode" "$rep" lmkd_kills "$kills" count
	raw swap "$key" "$mode" "$rep" oom_kills "$(( $(kt_oom_kills) - oom0 ))" count
	[ -n "$full" ] && raw swap "$key" "$mode" "$rep" allocated_ms "$(ms "$onset" "$full")" ms
	[ -n "$vmswap" ] && raw swap "$key" "$mode" "$rep" vmswap_mib "$vmswap" MiB
	[ -n "$dead" ] && raw swap "$key" "$mode" "$rep" death_ms "$(ms "$onset" "${kill_t:-$dead}")" ms
	[ -n "$oom_t" ] && raw swap "$key" "$mode" "$rep" onset_to_oom_ms "$(ms "$onset" "$oom_t")" ms
	if [ "$mode" = none ]; then
		SWAP_BASE_OOM[$key]=
		[ -n "$oom_t" ] && SWAP_BASE_OOM[$key]=$(ms "$onset" "$oom_t")
	elif [ -n "$kill_t" ]; then
		raw swap "$key" "$mode" "$rep" lmkd_kill_ms "$(ms "$onset" "$kill_t")" ms
		SWAP_NOTES[$key]+=" $(kv "$line" tier)/$(kv "$line" reason)"
		if [ -n "${SWAP_BASE_OOM[$key]:-}" ]; then
			lead=$(( SWAP_BASE_OOM[$key] - $(ms "$onset" "$kill_t") ))
			raw swap "$key" "$mode" "$rep" lead_ms "$lead" ms
		fi
	fi
	kt_log "swap $key $mode rep $rep: $([ -n "$dead" ] && echo "died at $(ms "$onset" "${kill_t:-$dead}") ms" || echo alive)${full:+, had its $SWAP_BENIGN_MIB MiB at $(ms "$onset" "$full") ms}${vmswap:+, VmSwap $vmswap MiB}; $kills psi-lmkd kills, $(( $(kt_oom_kills) - oom0 )) OOM kills${lead:+, lead $lead ms}"
	[ -s "$log" ] && cp "$log" "$RESULTS/last-swap-$key.log"
	run_teardown
}

swap_bench() {
	local rep w sw m
	for sw in noswap zram; do
		if [ "$sw" = zram ]; then
			kt_zram_add 1G 192M
			# shellcheck disable=SC2031 # set by kt_zram_add in this shell
			kt_log "zram$KT_ZDEV: disksize 1G, mem_limit 192M, $(tr -d '\n' <"$KT_ZDIR/comp_algorithm")"
		fi
		for rep in $(seq 1 "$REPS"); do
			for w in "${SWAP_WORKLOADS[@]}"; do
				swap_run "$w" "$sw" none "$rep"
				swap_run "$w" "$sw" lmkd "$rep"
			done
		done
		if [ "$sw" = zram ]; then
			kt_zram_remove || kt_fail "the zram device could not be removed"
			kt_log "zram device removed; /proc/swaps: $(awk 'NR > 1 { print $1 }' /proc/swaps | tr '\n' ' ')"
		fi
	done
	for w in "${SWAP_WORKLOADS[@]}"; do
		for sw in noswap zram; do
			for m in none lmkd; do
				summarize swap "$w-$sw" "$m" killed count "$([ "$m" = lmkd ] && echo "kills (tier/reason):${SWAP_NOTES[$w-$sw]:- none}")"
				summarize swap "$w-$sw" "$m" death_ms ms
				summarize swap "$w-$sw" "$m" lmkd_kills count
				summarize swap "$w-$sw" "$m" oom_kills count
				summarize swap "$w-$sw" "$m" onset_to_oom_ms ms
				summarize swap "$w-$sw" "$m" allocated_ms ms
				summarize swap "$w-$sw" "$m" vmswap_mib MiB
				summarize swap "$w-$sw" "$m" lmkd_kill_ms ms
				summarize swap "$w-$sw" "$m" lead_ms ms "the none run's OOM time minus psi-lmkd's kill"
			done
		done
	done
}
