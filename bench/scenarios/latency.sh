#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/scenarios/latency.sh - sourced by bench/run: latency_bench, the scenario
# "latency" (bench/README.md, section latency); definitions only.

# ---------------------------------------------------------- 2. latency --

LAT_VARIANTS=(floor-unpriv floor-priv lmkd-kernel lmkd-userspace lmkd-priv vmpressure)
lat_trigger() {
	case $1 in
	floor-unpriv|lmkd-kernel) echo "some 100ms 2s" ;;
	vmpressure) echo "v1 levels" ;;
	*) echo "some 70ms 1s" ;;
	esac
}

# One latency run.  VARIANT:
#   floor-unpriv   bare kernel trigger "some 100ms 2s" (psi-floor)
#   floor-priv     bare kernel trigger "some 70ms 1s" under unshare -Ur
#   lmkd-kernel    psi-lmkd, tier "some 100ms 2s" (unprivileged kernel trigger)
#   lmkd-userspace psi-lmkd, tier "some 70ms 1s" (userspace monitor)
#   lmkd-priv      psi-lmkd under unshare -Ur, tier "some 70ms 1s" (rtpoll)
#   vmpressure     cgroup v1 memory.pressure_level listener (low, medium,
#                  critical) on the group's v1 memcg
lat_run() {
	local variant=$1 rep=$2 trig wrap=() log reader hog onset line t ev deadline
	local kill_t fired_t exited_ms rel_us r lvl first
	trig=$(lat_trigger "$variant")
	case $variant in
	*-priv) wrap=(unshare -Ur) ;;
	esac
	kt_cgroup_create psi-lmkd-bench "$LAT_LIMIT_MIB"
	log=$TMP/lat-$variant-$rep.log
	: >"$log"
	kt_spawn_in_cgroup -o "$TMP/hog.out" "$KT_BINDIR/memhog" 8 900 >/dev/null
	hog=$KT_LAST_PID
	kt_wait_ready "$TMP/hog.out" "$hog" 20

	case $variant in
	floor-*)
		local us=${trig#some } win
		win=${us#* }
		us=${us% *}
		# "100ms" -> 100000, "2s" -> 2000000
		us=$(awk -v x="$us" 'BEGIN { sub(/ms$/, "", x); print x * 1000 }')
		win=$(awk -v x="$win" 'BEGIN { sub(/s$/, "", x); print x * 1000000 }')
		"${wrap[@]}" "$TMP/psi-floor" "$KT_PRESSURE" "some $us $win" 1 "$LAT_TIMEOUT" \
			</dev/null {KT_LOCK_FD}>&- >"$log" 2>&1 &
		kt_track $!
		;;
	lmkd-*)
		cat >"$TMP/lat.conf" <<-EOF
		[daemon]
		pressure = $KT_PRESSURE
		scope = $KT_CG2_REL
		kill_timeout = 1s

		[tier bench]
		trigger = $trig
		min_oom_score_adj = 200
		EOF
		"${wrap[@]}" "$PSI_LMKD" -f -vv -c "$TMP/lat.conf" </dev/null {KT_LOCK_FD}>&- \
			2> >(exec {KT_LOCK_FD}>&-; bench_stamp >"$log") >&2 &
		kt_track $!
		;;
	vmpressure)
		vmp_start "$log" || kt_fail "vmpressure variant without a v1 memcg"
		;;
	esac
	sleep 1
	# The pressure: file working set over the limit.
	kt_spawn_in_cgroup -o >(exec {KT_LOCK_FD}>&-; bench_stamp >"$TMP/fp.out") \
		"$KT_BINDIR/filepressure" "$KT_DISK_DIR/data" "$LAT_FILE_MIB" 100 >/dev/null
	reader=$KT_LAST_PID
	kt_wait_for 180 grep -q " ready $reader\$" "$TMP/fp.out" ||
		kt_fail "filepressure $reader never got ready"
	onset=$(awk -v p="$reader" '$2 == "ready" && $3 == p { print $1; exit }' "$TMP/fp.out")

	deadline=$(( $(date +%s) + LAT_TIMEOUT ))
	r=timeout
	while [ "$(date +%s)" -lt "$deadline" ]; do
		case $variant in
		floor-*) grep -q '^event ' "$log" && { r=ok; break; } ;;
		lmkd-*) grep -q 'exited .* after' "$log" && { r=ok; break; }
			grep -qE '(^|[^[:alnum:]_-])kill pid=' "$log" && kt_pid_dead "$hog" &&
				{ sleep 0.3; r=ok; break; } ;;
		vmpressure) [ -n "$(vmp_first "$log" critical "$onset")" ] &&
				[ -n "$(vmp_first "$log" medium "$onset")" ] && { r=ok; break; } ;;
		esac
		sleep 0.1
	done
	cp "$log" "$RESULTS/last-$variant.log" 2>/dev/null
	if [ "$r" != ok ]; then
		kt_log "latency $variant rep $rep: no event/kill within ${LAT_TIMEOUT}s"
		raw latency "$variant" "$trig" "$rep" timeout 1 count
		run_teardown
		return
	fi
	case $variant in
	floor-*)
		ev=$(awk '$1 == "event" { print $2; exit }' "$log")
		raw latency "$variant" "$trig" "$rep" onset_to_event_ms "$(ms "$onset" "$ev")" ms
		kt_log "latency $variant rep $rep: first event $(ms "$onset" "$ev") ms after onset"
		;;
	lmkd-*)
		line=$(grep -m1 -E '(^|[^[:alnum:]_-])kill pid=' "$log")
		kill_t=${line%% *}
		# the last "tier bench fired" debug line before the kill line
		fired_t=$(awk -v k="$kill_t" '/tier bench fired/ && $1 <= k { t = $1 } END { print t }' "$log")
		exited_ms=$(grep -m1 -oE 'exited [0-9]+ ms after' "$log" | awk '{ print $2 }')
		rel_us=$(grep -m1 -oE 'released in [0-9]+ us' "$log" | awk '{ print $3 }')
		raw latency "$variant" "$trig" "$rep" onset_to_kill_ms "$(ms "$onset" "$kill_t")" ms
		[ -n "$fired_t" ] &&
			raw latency "$variant" "$trig" "$rep" onset_to_event_ms "$(ms "$onset" "$fired_t")" ms
		[ -n "$fired_t" ] &&
			raw latency "$variant" "$trig" "$rep" event_to_killline_us "$(( kill_t - fired_t ))" us
		[ -n "$exited_ms" ] &&
			raw latency "$variant" "$trig" "$rep" kill_to_exit_ms "$exited_ms" ms
		[ -n "$exited_ms" ] &&
			raw latency "$variant" "$trig" "$rep" onset_to_exit_ms \
				"$(( $(ms "$onset" "$kill_t") + exited_ms ))" ms
		[ -n "$rel_us" ] && raw latency "$variant" "$trig" "$rep" mrelease_us "$rel_us" us
		kt_log "latency $variant rep $rep: kill $(ms "$onset" "$kill_t") ms after onset" \
			"(event->kill line ${fired_t:+$(( kill_t - fired_t ))} us, exited ${exited_ms:-?} ms, mrelease ${rel_us:-?} us)"
		;;
	vmpressure)
		# Every level: the first notification at or after the onset.  The
		# "medium" and "critical" ones are what a listener would act on.
		line=
		for lvl in low medium critical; do
			first=$(vmp_first "$log" "$lvl" "$onset")
			[ -n "$first" ] || continue
			raw latency "$variant" "$trig" "$rep" "onset_to_${lvl}_ms" "$(ms "$onset" "$first")" ms
			line+=" $lvl $(ms "$onset" "$first") ms"
		done
		kt_log "latency vmpressure rep $rep: first notification after onset:$line"
		;;
	esac
	run_teardown
}

latency_bench() {
	local v rep t
	kt_disk_tmpdir "$LAT_FILE_MIB"
	if ! kt_userns_root_ok; then
		kt_log "no unshare -Ur ($KT_USERNS_WHY): skipping privileged variants"
		PRIV_OK=
	else
		PRIV_OK=1
	fi
	for rep in $(seq 1 "$REPS"); do
		for v in "${LAT_VARIANTS[@]}"; do
			[[ $v == *-priv ]] && [ -z "$PRIV_OK" ] && continue
			[ "$v" = vmpressure ] && [ -z "$VMP_OK" ] && continue
			lat_run "$v" "$rep"
		done
	done
	for v in "${LAT_VARIANTS[@]}"; do
		t=$(lat_trigger "$v")
		case $v in
		vmpressure)
			[ -n "$VMP_OK" ] || continue
			summarize latency "$v" "$t" onset_to_low_ms ms
			summarize latency "$v" "$t" onset_to_medium_ms ms "first medium notification"
			summarize latency "$v" "$t" onset_to_critical_ms ms "first critical notification"
			summarize latency "$v" "$t" timeout count
			continue
			;;
		esac
		summarize latency "$v" "$t" onset_to_event_ms ms
		summarize latency "$v" "$t" timeout count
		case $v in lmkd-*)
			summarize latency "$v" "$t" onset_to_kill_ms ms
			summarize latency "$v" "$t" event_to_killline_us us "daemon overhead: 'fired' debug line -> kill line (after mrelease)"
			summarize latency "$v" "$t" kill_to_exit_ms ms
			summarize latency "$v" "$t" onset_to_exit_ms ms
			summarize latency "$v" "$t" mrelease_us us
		esac
	done
}
