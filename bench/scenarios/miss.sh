#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/scenarios/miss.sh - sourced by bench/run: miss_bench, the scenario
# "miss" (bench/README.md, section miss); definitions only.

# ----------------------------------------------------------- 6. misses --

# Thrash that ends in the kernel OOM killer (or never ends), in a fresh
# group without swap (lib.sh: memory.swap.max = 0, or on v1 swappiness 0
# and memsw = the limit).  Workload processes run at oom_score_adj 0 (no
# expendable process: the default medium tier has no candidate).
#   thrash    filepressure: a 300 MiB file-backed working set in 128 MiB
#   fileanon  the same, plus anongrow 8 MiB/s squeezing it until the OOM
#   anon      anongrow 16 MiB/s in 256 MiB (no file cache to reclaim)
# Per repetition two runs of the same workload:
#   base  no psi-lmkd: the kernel's own outcome; the passive observers
#         watch it (vmpressure listener, earlyoom --dryrun, nohang
#         unprivileged): none of them can change what happens
#   lmkd  psi-lmkd on the default tiers scoped to the group, real kills
#         (only processes of the group can be chosen)
# The onset is the grower's "ready" (filepressure's for thrash).
MISS_WORKLOADS=(thrash fileanon anon)
miss_limit() { case $1 in anon) echo 256 ;; *) echo 128 ;; esac; }
miss_describe() {
	case $1 in
	thrash) echo "filepressure 300 MiB in 128 MiB (adj 0)" ;;
	fileanon) echo "filepressure 300 MiB + anongrow 8 MiB/s in 128 MiB (adj 0)" ;;
	anon) echo "anongrow 16 MiB/s in 256 MiB (adj 0)" ;;
	esac
}

# miss_run WORKLOAD MODE REP MAX_S
miss_run() {
	local w=$1 mode=$2 rep=$3 max=$4 lim grower='' fp onset deadline oom_t='' oom0 n t line
	local kill_t kline victim kills oomk p acts lvl first lead rate
	lim=$(miss_limit "$w")
	kt_cgroup_create "psi-lmkd-bench-miss-$w" "$lim"
	vmp_start "$TMP/miss-vmp.log"
	if [ "$mode" = lmkd ]; then
		default_conf "$TMP/miss.conf"
		lmkd_start "$TMP/miss.conf" "$TMP/miss-lmkd.log" -vv
	else
		: >"$TMP/miss-lmkd.log"
		for p in earlyoom nohang; do
			: >"$TMP/miss-$p.log"
			peer_start "$p" "$TMP/miss-$p.log" 10
		done
	fi
	sleep 1
	oom0=$(kt_oom_kills)
	case $w in thrash|fileanon)
		kt_spawn_in_cgroup -o >(exec {KT_LOCK_FD}>&-; bench_stamp >"$TMP/miss-fp.out") \
			"$KT_BINDIR/filepressure" "$MISS_DIR/data" 300 0 >/dev/null
		fp=$KT_LAST_PID
		kt_wait_for 180 grep -q " ready $fp\$" "$TMP/miss-fp.out" ||
			kt_fail "filepressure $fp never got ready"
		onset=$(awk -v p="$fp" '$2 == "ready" && $3 == p { print $1; exit }' "$TMP/miss-fp.out")
	esac
	case $w in fileanon|anon)
		rate=16
		[ "$w" = fileanon ] && rate=8
		kt_spawn_in_cgroup -o >(exec {KT_LOCK_FD}>&-; bench_stamp >"$TMP/miss-ag.out") \
			"$KT_BINDIR/anongrow" "$rate" 0 >/dev/null
		grower=$KT_LAST_PID
		kt_wait_for 20 grep -q " ready $grower\$" "$TMP/miss-ag.out" ||
			kt_fail "anongrow $grower never got ready"
		onset=$(awk -v p="$grower" '$2 == "ready" && $3 == p { print $1; exit }' "$TMP/miss-ag.out")
	esac
	# Until the grower is gone (killed by psi-lmkd or the kernel), or MAX_S.
	# The OOM time: the memcg's OOM notification (vmpressure listener), or
	# else the first poll that sees the oom_kill counter move.
	deadline=$(( onset + max * 1000000 ))
	while [ "$(now_us)" -lt "$deadline" ]; do
		if [ -z "$oom_t" ] && [ "$(kt_oom_kills)" != "$oom0" ]; then
			oom_t=$(vmp_first "$TMP/miss-vmp.log" oom "$onset")
			[ -n "$oom_t" ] || oom_t=$(now_us)
		fi
		[ -n "$grower" ] && kt_pid_dead "$grower" && break
		sleep 0.05
	done
	t=$(now_us)
	sleep 0.3
	if [ -z "$oom_t" ] && [ "$(kt_oom_kills)" != "$oom0" ]; then
		oom_t=$(vmp_first "$TMP/miss-vmp.log" oom "$onset")
		[ -n "$oom_t" ] || oom_t=$t
	fi
	oomk=$(( $(kt_oom_kills) - oom0 ))
	raw miss "$w" "$mode" "$rep" oom_kills "$oomk" count
	raw miss "$w" "$mode" "$rep" run_s "$(( (t - onset) / 1000000 ))" s
	[ -n "$oom_t" ] && raw miss "$w" "$mode" "$rep" onset_to_oom_ms "$(ms "$onset" "$oom_t")" ms
	if [ -n "$oom_t" ]; then
		line="$w $mode rep $rep: kernel OOM $(ms "$onset" "$oom_t") ms after onset ($oomk kills)"
	else
		line="$w $mode rep $rep: no kernel OOM kill"
	fi

	if [ "$mode" = base ]; then
		[ -n "$oom_t" ] && BASE_OOM_MS=$(ms "$onset" "$oom_t") || BASE_OOM_MS=
		if [ -n "$VMP_OK" ]; then
			for lvl in low medium critical; do
				first=$(vmp_first "$TMP/miss-vmp.log" "$lvl" "$onset")
				[ -n "$first" ] || continue
				raw miss "$w" "$mode" "$rep" "vmp_first_${lvl}_ms" "$(ms "$onset" "$first")" ms
				# ahead of the OOM: how long before the kernel killed
				[ -n "$oom_t" ] && [ "$first" -le "$oom_t" ] &&
					raw miss "$w" "$mode" "$rep" "vmp_${lvl}_lead_ms" "$(ms "$first" "$oom_t")" ms
				[ "$lvl" = critical ] && line+="; vmpressure critical $(ms "$onset" "$first") ms"
			done
			raw miss "$w" "$mode" "$rep" vmp_critical_before_oom \
				"$(first=$(vmp_first "$TMP/miss-vmp.log" critical "$onset");
				   [ -n "$first" ] && { [ -z "$oom_t" ] || [ "$first" -le "$oom_t" ]; } && echo 1 || echo 0)" count
		fi
		for p in earlyoom nohang; do
			[ -s "$TMP/miss-$p.log" ] || continue
			acts=$(peer_actions "$TMP/miss-$p.log")
			raw miss "$w" "$mode" "$rep" "${p}_actions" "${acts:-0}" count
			line+="; $p ${acts:-0} actions"
			cp "$TMP/miss-$p.log" "$RESULTS/last-miss-$p.log"
		done
	else
		kills=$(grep -cE '(^|[^[:alnum:]_-])kill pid=' "$TMP/miss-lmkd.log")
		raw miss "$w" "$mode" "$rep" lmkd_kills "${kills:-0}" count
		line+="; psi-lmkd $kills kills"
		kill_t=
		if [ "${kills:-0}" -gt 0 ]; then
			kline=$(grep -m1 -E '(^|[^[:alnum:]_-])kill pid=' "$TMP/miss-lmkd.log")
			kill_t=${kline%% *}
			victim=$(grep -oE 'comm=[^ ]+' <<<"$kline" | sed 's/comm=//')
			victim+=/$(grep -oE 'tier=[^ ]+' <<<"$kline" | sed 's/tier=//')
			MISS_VICTIMS[$w]+=" $victim"
			raw miss "$w" "$mode" "$rep" lmkd_kill_ms "$(ms "$onset" "$kill_t")" ms
			line+=", the first ($victim) $(ms "$onset" "$kill_t") ms after onset"
		fi
		raw miss "$w" "$mode" "$rep" lmkd_before_oom \
			"$([ -n "$kill_t" ] && { [ -z "$oom_t" ] || [ "$kill_t" -le "$oom_t" ]; } && echo 1 || echo 0)" count
		# ahead of the OOM the kernel had in the base run of this repetition
		if [ -n "$kill_t" ] && [ -n "${BASE_OOM_MS:-}" ]; then
			lead=$(( BASE_OOM_MS - $(ms "$onset" "$kill_t") ))
			raw miss "$w" "$mode" "$rep" lmkd_lead_ms "$lead" ms
			line+=" ($lead ms before the base run's OOM)"
		fi
		cp "$TMP/miss-lmkd.log" "$RESULTS/last-miss-$w.log"
	fi
	kt_log "$line"
	run_teardown
}

declare -A MISS_VICTIMS
miss_bench() {
	local w rep max v
	kt_disk_tmpdir 300
	MISS_DIR=$KT_DISK_DIR
	for rep in $(seq 1 "$REPS"); do
		for w in "${MISS_WORKLOADS[@]}"; do
			case $w in thrash) max=20 ;; *) max=60 ;; esac
			[ -n "$QUICK" ] && [ "$w" = thrash ] && max=10
			miss_run "$w" base "$rep" "$max"
			miss_run "$w" lmkd "$rep" "$max"
		done
	done
	for w in "${MISS_WORKLOADS[@]}"; do
		summarize miss "$w" base onset_to_oom_ms ms "$(miss_describe "$w")"
		summarize miss "$w" base oom_kills count
		summarize miss "$w" base run_s s
		for v in low medium critical; do
			summarize miss "$w" base "vmp_first_${v}_ms" ms
			summarize miss "$w" base "vmp_${v}_lead_ms" ms "ahead of the OOM kill in the same run"
		done
		summarize miss "$w" base vmp_critical_before_oom count "1 = a critical notification came before any OOM kill"
		summarize miss "$w" base earlyoom_actions count
		summarize miss "$w" base nohang_actions count
		summarize miss "$w" lmkd lmkd_kill_ms ms "first victims (comm/tier):${MISS_VICTIMS[$w]:- none}"
		summarize miss "$w" lmkd lmkd_lead_ms ms "base run's OOM time minus psi-lmkd's kill time"
		summarize miss "$w" lmkd lmkd_before_oom count "1 = psi-lmkd killed before any kernel OOM kill"
		summarize miss "$w" lmkd lmkd_kills count
		summarize miss "$w" lmkd oom_kills count "kernel OOM kills with psi-lmkd running"
		summarize miss "$w" lmkd onset_to_oom_ms ms
	done
}
