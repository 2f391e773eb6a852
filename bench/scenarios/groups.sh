#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/scenarios/groups.sh - sourced by bench/run: groups_bench, the scenario
# "groups" (bench/README.md, section groups); definitions only.

# ---------------------------------------------------------- groups --

# Cgroup-pattern tiers (issue 14): psi-lmkd --dry-run with one tier
# "some 100ms 2s" and cgroup = P/* on a fresh test group P holding N empty
# children (N = 1, 10, 100): idle wakeups per minute and RSS over IDLE_S,
# how long the start-up walk took, and, REPS x 5 times, the ms from the
# mkdir of a new child to the daemon's "watched" line (its arming latency).
groups_bench() {
	local n i t a b rss hwm line walk_us t_mk t_arm
	for n in 1 10 100; do
		kt_cgroup_create psi-lmkd-bench-groups 64
		for i in $(seq 1 "$n"); do
			mkdir "$KT_CG2_DIR/g$i" && KT_CG_DIRS+=("$KT_CG2_DIR/g$i")
		done
		printf '[daemon]\nscope = %s\nmax_groups = 256\n[tier grp]\ntrigger = some 100ms 2s\nmin_oom_score_adj = 0\ncgroup = %s/*\n' \
			"$KT_CG2_REL" "$KT_CG2_REL" >"$TMP/groups.conf"
		lmkd_start "$TMP/groups.conf" "$TMP/groups-$n.log" -n -v
		kt_wait_for 10 grep -q " $n groups watched" "$TMP/groups-$n.log" ||
			{ kt_log "groups: $n groups were not armed"; sed 's/^/    | /' "$TMP/groups-$n.log" >&2; run_teardown; continue; }
		walk_us=$(grep -m1 -o "found in [0-9]* us" "$TMP/groups-$n.log" | tr -dc 0-9)
		raw groups psi-lmkd "$n" 0 start_walk_us "$walk_us" us
		summarize groups psi-lmkd "$n" start_walk_us us
		sleep 3	# start-up is not idle
		read -r a _ _ _ _ <<<"$(idle_sample "$LMKD_PID")"
		sleep "$IDLE_S"
		read -r b _ rss hwm _ <<<"$(idle_sample "$LMKD_PID")"
		raw groups psi-lmkd "$n" 0 wakeups_per_min \
			"$(awk -v a="$a" -v b="$b" -v s="$IDLE_S" 'BEGIN { printf "%.1f", (b - a) * 60 / s }')" 1/min
		raw groups psi-lmkd "$n" 0 vmrss_kb "$rss" kB
		raw groups psi-lmkd "$n" 0 vmhwm_kb "$hwm" kB
		for t in wakeups_per_min:1/min vmrss_kb:kB vmhwm_kb:kB; do
			summarize groups psi-lmkd "$n" "${t%%:*}" "${t#*:}"
		done
		for i in $(seq 1 $((REPS * 5))); do
			t_mk=${EPOCHREALTIME/./}
			mkdir "$KT_CG2_DIR/new$i" && KT_CG_DIRS+=("$KT_CG2_DIR/new$i")
			kt_wait_for 5 grep -qF "cgroup $KT_CG2_REL/new$i watched" "$TMP/groups-$n.log" || continue
			line=$(grep -F -m1 "cgroup $KT_CG2_REL/new$i watched" "$TMP/groups-$n.log")
			t_arm=${line%% *}
			raw groups psi-lmkd "$n" "$i" arm_latency_us $(( t_arm - t_mk )) us
		done
		summarize groups psi-lmkd "$n" arm_latency_us us
		cp "$TMP/groups-$n.log" "$RESULTS/groups-$n.log" 2>/dev/null
		run_teardown
	done
}
