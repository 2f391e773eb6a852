#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/scenarios/profiles.sh - sourced by bench/run: profiles_bench, the scenario
# "profiles" (bench/README.md, section profiles); definitions only.

# -------------------------------------------------- 7. the two profiles --

# The desktop process set of tests/kernel/test-profile-desktop.sh
# (policy-body.sh: pipewire adj 200 24 MiB, renderer adj 300 64 MiB, editor
# adj 0 16 MiB, and a runaway at adj 0 growing PROF_RATE MiB/s) in a fresh
# 512 MiB group without swap, under
#   none             no daemon: the kernel OOM killer alone
#   desktop-badness  conf/psi-lmkd.conf (victim_order = badness)
#   android-adj      conf/psi-lmkd-android.conf (victim_order = adj)
# the configs generated from the shipped files by pol_conf_from_shipped
# (only pressure, scope and memory_cgroup replaced).  The onset is the
# runaway's "ready"; each process's death is timed by the daemon's kill line
# when it killed it, else by the first 50 ms poll that finds it gone.  A run
# ends PROF_SETTLE s after the runaway is gone (later kills still count), or
# PROF_MAX s after the onset.
PROF_LIMIT_MIB=512
PROF_RATE=32
PROF_SETTLE=2
PROF_MAX=40
PROF_VARIANTS=(none desktop-badness android-adj)
PROF_NAMES=(pipewire renderer editor runaway)
declare -A PROF_ORDERS

# lmkd_wait_running LOG: the daemon of lmkd_start said "running", or fail.
lmkd_wait_running() {
	kt_wait_for 5 grep -q 'running: ' "$1" || { tail -n 20 "$1" >&2; kt_fail "psi-lmkd did not start (see above)"; }
}
# lmkd_kill_lines LOG: the stamped kill lines (not would-kill) of LOG.
lmkd_kill_lines() {
	grep -E '(^|[^[:alnum:]_-])kill pid=' "$1" 2>/dev/null
}
# kv LINE KEY: the value of KEY= in LINE (e2e-body.sh).
kv() { e2e_kv "$@"; }

# oom_time ONSET OOM0 VMPLOG: if the group's OOM kill counter moved past
# OOM0, print the time of its first OOM kill (the memcg's OOM notification
# at or after ONSET where the listener runs, else now).
oom_time() {
	local t
	[ "$(kt_oom_kills)" != "$2" ] || return 1
	t=$(vmp_first "$3" oom "$1")
	[ -n "$t" ] || t=$(now_us)
	echo "$t"
}

# prof_run VARIANT REP
prof_run() {
	local v=$1 rep=$2 shipped='' log=$TMP/prof-lmkd.log onset deadline end='' oom_t='' oom0 n t
	local line kills deaths='' lead='' kill_t pid w
	declare -A dead_t=() by=()
	kt_cgroup_create psi-lmkd-bench-prof "$PROF_LIMIT_MIB"
	vmp_start "$TMP/prof-vmp.log"
	pol_desktop_set
	: >"$log"
	case $v in
	desktop-badness) shipped=$TOP/conf/psi-lmkd.conf ;;
	android-adj) shipped=$TOP/conf/psi-lmkd-android.conf ;;
	esac
	if [ -n "$shipped" ]; then
		conf=$TMP/prof.conf
		pol_conf_from_shipped "$shipped"
		lmkd_start "$conf" "$log" -v
		lmkd_wait_running "$log"
	fi
	oom0=$(kt_oom_kills)
	pol_desktop_runaway "$PROF_RATE" "$TMP/runaway.out"
	onset=$(now_us)
	pd_pid[runaway]=$runaway
	deadline=$(( onset + PROF_MAX * 1000000 ))
	while :; do
		t=$(now_us)
		[ -n "$oom_t" ] || oom_t=$(oom_time "$onset" "$oom0" "$TMP/prof-vmp.log")
		for n in "${PROF_NAMES[@]}"; do
			[ -z "${dead_t[$n]:-}" ] && kt_pid_dead "${pd_pid[$n]}" && dead_t[$n]=$t
		done
		[ -z "$end" ] && [ -n "${dead_t[runaway]:-}" ] && end=$(( t + PROF_SETTLE * 1000000 ))
		[ -n "$end" ] && [ "$t" -ge "$end" ] && break
		[ "$t" -ge "$deadline" ] && break
		sleep 0.05
	done
	[ -n "$oom_t" ] || oom_t=$(oom_time "$onset" "$oom0" "$TMP/prof-vmp.log")
	# Deaths the daemon caused: the time of its kill line.
	while IFS= read -r line; do
		pid=$(kv "$line" pid)
		for n in "${PROF_NAMES[@]}"; do
			[ "${pd_pid[$n]}" = "$pid" ] || continue
			dead_t[$n]=${line%% *}
			by[$n]=lmkd/$(kv "$line" tier)
		done
	done < <(lmkd_kill_lines "$log")
	kills=$(lmkd_kill_lines "$log" | wc -l)
	raw profiles "$v" desktop "$rep" lmkd_kills "$kills" count
	raw profiles "$v" desktop "$rep" oom_kills "$(( $(kt_oom_kills) - oom0 ))" count
	[ -n "$oom_t" ] && raw profiles "$v" desktop "$rep" onset_to_oom_ms "$(ms "$onset" "$oom_t")" ms
	for n in "${PROF_NAMES[@]}"; do
		if [ -n "${dead_t[$n]:-}" ]; then
			raw profiles "$v" desktop "$rep" "${n}_died" 1 count
			raw profiles "$v" desktop "$rep" "${n}_death_ms" "$(ms "$onset" "${dead_t[$n]}")" ms
		else
			raw profiles "$v" desktop "$rep" "${n}_died" 0 count
		fi
	done
	# The order of the deaths, with who caused each (lmkd/TIER, else the
	# kernel when its OOM counter moved, else "gone").
	deaths=$(for n in "${PROF_NAMES[@]}"; do
		[ -n "${dead_t[$n]:-}" ] || continue
		w=${by[$n]:-}
		[ -n "$w" ] || { [ -n "$oom_t" ] && w=oom || w=gone; }
		printf '%s %s(%s)\n' "${dead_t[$n]}" "$n" "$w"
	done | sort -n | awk '{ printf "%s%s", (NR > 1 ? ">" : ""), $2 }')
	PROF_ORDERS[$v]+=" ${deaths:-nobody}"
	kill_t=
	[ "${by[runaway]:-}" != "" ] && kill_t=${dead_t[runaway]}
	if [ "$v" = none ]; then
		PROF_BASE_OOM=
		[ -n "$oom_t" ] && PROF_BASE_OOM=$(ms "$onset" "$oom_t")
	elif [ -n "$kill_t" ]; then
		raw profiles "$v" desktop "$rep" runaway_kill_ms "$(ms "$onset" "$kill_t")" ms
		if [ -n "${PROF_BASE_OOM:-}" ]; then
			lead=$(( PROF_BASE_OOM - $(ms "$onset" "$kill_t") ))
			raw profiles "$v" desktop "$rep" lead_ms "$lead" ms
		fi
	fi
	kt_log "profiles $v rep $rep: ${deaths:-nobody died}; ${kills} psi-lmkd kills, $(( $(kt_oom_kills) - oom0 )) OOM kills${oom_t:+, OOM at $(ms "$onset" "$oom_t") ms}${lead:+, lead $lead ms}"
	[ -s "$log" ] && cp "$log" "$RESULTS/last-profiles-$v.log"
	run_teardown
}

profiles_bench() {
	local rep v n
	for rep in $(seq 1 "$REPS"); do
		for v in "${PROF_VARIANTS[@]}"; do
			prof_run "$v" "$rep"
		done
	done
	for v in "${PROF_VARIANTS[@]}"; do
		summarize profiles "$v" desktop lmkd_kills count "order of deaths per repetition:${PROF_ORDERS[$v]}"
		summarize profiles "$v" desktop oom_kills count
		summarize profiles "$v" desktop onset_to_oom_ms ms
		summarize profiles "$v" desktop runaway_kill_ms ms
		summarize profiles "$v" desktop lead_ms ms "the none run's OOM time minus psi-lmkd's kill of the runaway"
		for n in "${PROF_NAMES[@]}"; do
			summarize profiles "$v" desktop "${n}_died" count
			summarize profiles "$v" desktop "${n}_death_ms" ms
		done
	done
}
