#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/scenarios/idle.sh - sourced by bench/run: idle_bench, the scenario
# "idle" (bench/README.md, section idle); definitions only.

# ------------------------------------------------- 3/4. idle and peers --

# idle_sample PID: "voluntary_ctxt_switches nonvoluntary VmRSS VmHWM utime+stime(ticks)"
idle_sample() {
	local v nv rss hwm cpu
	v=$(awk '$1 == "voluntary_ctxt_switches:" { print $2 }' "/proc/$1/status" 2>/dev/null)
	nv=$(awk '$1 == "nonvoluntary_ctxt_switches:" { print $2 }' "/proc/$1/status" 2>/dev/null)
	rss=$(awk '$1 == "VmRSS:" { print $2 }' "/proc/$1/status" 2>/dev/null)
	hwm=$(awk '$1 == "VmHWM:" { print $2 }' "/proc/$1/status" 2>/dev/null)
	cpu=$(awk '{ s = $0; sub(/^.*\) /, "", s); split(s, f, " "); print f[12] + f[13] }' "/proc/$1/stat" 2>/dev/null)
	echo "${v:-0} ${nv:-0} ${rss:-0} ${hwm:-0} ${cpu:-0}"
}

idle_bench() {
	local names=() pids=() i p a b c0 c1 nv rss hwm m
	kt_cgroup_create psi-lmkd-bench-idle 64
	# psi-lmkd: the default configuration, --dry-run, scoped to an empty
	# test group (its tiers still watch /proc/pressure/memory).
	sed -e "s|^scope *=.*|scope = $KT_CG2_REL|" "$TOP/conf/psi-lmkd.conf" >"$TMP/idle.conf"
	grep -q "^scope = $KT_CG2_REL" "$TMP/idle.conf" ||
		printf '[daemon]\nscope = %s\n' "$KT_CG2_REL" >>"$TMP/idle.conf"
	"$PSI_LMKD" -f -n -c "$TMP/idle.conf" </dev/null {KT_LOCK_FD}>&- >"$TMP/idle-psi-lmkd.log" 2>&1 &
	kt_track $!
	names+=(psi-lmkd); pids+=($!)
	# The same under unshare -Ur (CAP_SYS_RESOURCE in its namespace: every
	# tier on a privileged kernel trigger, no safety sample), with the
	# default tiers and without the low_available one (then nothing needs
	# the idle clock).
	if kt_userns_root_ok; then
		awk '/^\[tier last-resort\]/ { exit } { print }' "$TMP/idle.conf" >"$TMP/idle-nolow.conf"
		for p in priv:idle.conf priv-nolow:idle-nolow.conf; do
			unshare -Ur "$PSI_LMKD" -f -n -c "$TMP/${p#*:}" </dev/null {KT_LOCK_FD}>&- \
				>"$TMP/idle-psi-lmkd-${p%%:*}.log" 2>&1 &
			kt_track $!
			names+=("psi-lmkd-${p%%:*}"); pids+=($!)
		done
	else
		note idle psi-lmkd-priv - status "not run (no unshare -Ur: $KT_USERNS_WHY)"
	fi

	for p in earlyoom nohang; do
		# -r 0: no periodic report lines from earlyoom
		if peer_start "$p" "$TMP/idle-$p.log" 0; then
			names+=("$p"); pids+=("$PEER_PID")
		else
			note idle "$p" - status "not run (not installed or no safe uid)"
		fi
	done
	sleep 3	# start-up is not idle
	declare -A s0
	for i in "${!pids[@]}"; do
		p=${pids[i]}
		kt_pid_alive "$p" || { kt_log "idle: ${names[i]} died at start:"; sed 's/^/    | /' "$TMP/idle-${names[i]}.log" >&2; continue; }
		s0[$p]=$(idle_sample "$p")
	done
	kt_log "idle: sampling ${names[*]} for ${IDLE_S}s"
	sleep "$IDLE_S"
	for i in "${!pids[@]}"; do
		p=${pids[i]}
		[ -n "${s0[$p]:-}" ] || continue
		kt_pid_alive "$p" || { kt_log "idle: ${names[i]} died during the idle period"; continue; }
		read -r a _ _ _ c0 <<<"${s0[$p]}"
		read -r b nv rss hwm c1 <<<"$(idle_sample "$p")"
		raw idle "${names[i]}" "${IDLE_S}s" 0 wakeups_per_min \
			"$(awk -v a="$a" -v b="$b" -v s="$IDLE_S" 'BEGIN { printf "%.1f", (b - a) * 60 / s }')" 1/min
		raw idle "${names[i]}" "${IDLE_S}s" 0 cpu_ms_per_min \
			"$(awk -v a="$c0" -v b="$c1" -v s="$IDLE_S" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.1f", (b - a) * 1000 / hz * 60 / s }')" ms
		raw idle "${names[i]}" "${IDLE_S}s" 0 vmrss_kb "$rss" kB
		raw idle "${names[i]}" "${IDLE_S}s" 0 vmhwm_kb "$hwm" kB
		for m in wakeups_per_min:1/min cpu_ms_per_min:ms vmrss_kb:kB vmhwm_kb:kB; do
			summarize idle "${names[i]}" "${IDLE_S}s" "${m%%:*}" "${m#*:}"
		done
	done
	cp "$TMP"/idle-*.log "$RESULTS/" 2>/dev/null
	run_teardown
}
