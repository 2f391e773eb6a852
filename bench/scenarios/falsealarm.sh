#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/scenarios/falsealarm.sh - sourced by bench/run: falsealarm_bench, the scenario
# "falsealarm" (bench/README.md, section falsealarm); definitions only.

# ---------------------------------------------------- 5. false alarms --

# Benign workloads, each in a fresh test group with an 8 MiB "expendable"
# memhog at oom_score_adj 900 (so that the medium tier has a candidate: a
# false alarm becomes a would-kill).  All tools watch the same run at once:
# psi-lmkd --dry-run on the default tiers scoped to the group, the
# vmpressure listener on the group's v1 memcg, earlyoom --dryrun and nohang
# (unprivileged, system-wide).
FA_WORKLOADS=(read manyfiles writeread build)
FA_BIG_MIB=1024		# read: one file, read() sequentially over and over
FA_MANY=2048		# manyfiles: this many files of FA_MANY_KIB each
FA_MANY_KIB=256

fa_limit() { echo 128; }
fa_describe() {
	case $1 in
	read) echo "read() a ${FA_BIG_MIB} MiB file sequentially in a loop (no writes)" ;;
	manyfiles) echo "cat $FA_MANY files of $FA_MANY_KIB KiB ($(( FA_MANY * FA_MANY_KIB / 1024 )) MiB) in a loop" ;;
	writeread) echo "write 512 MiB of fresh data; read it back once; delete; repeat" ;;
	build) echo "make clean; make -j2 of a copy of psi-lmkd; repeat" ;;
	esac
}

# The data, made once in a setup group of its own (which is then removed,
# so the measured groups start without any stall history).  The files are
# written with O_DIRECT, so none of them is in the page cache afterwards:
# every read in a measured group is charged to that group.
fa_prepare() {
	local setup
	kt_disk_tmpdir $(( FA_BIG_MIB + FA_MANY * FA_MANY_KIB / 1024 + 512 + 200 ))
	FA_DIR=$KT_DISK_DIR
	kt_cgroup_create psi-lmkd-bench-fasetup 256
	# shellcheck disable=SC2016
	setup='set -e
		d=$1 big=$2 many=$3 kib=$4 top=$5
		dd if=/dev/zero of="$d/big" bs=1M count="$big" oflag=direct status=none
		mkdir "$d/many"
		for ((i = 0; i < many; i++)); do
			dd if=/dev/zero of="$d/many/f$i" bs="${kib}K" count=1 oflag=direct status=none
		done
		mkdir "$d/src"
		tar -C "$top" --exclude=./build --exclude=./build-asan --exclude=./build-fuzz \
			--exclude=./build-scan --exclude=./.git --exclude=./bench/results -cf - . |
			tar -C "$d/src" -xf -
		mkdir "$d/src/b"
		cd "$d/src/b"
		../configure -q >configure.log 2>&1
		make -j2 >make.log 2>&1
		echo done'
	kt_spawn_in_cgroup -o "$TMP/fasetup.out" bash -c "$setup" fasetup \
		"$FA_DIR" "$FA_BIG_MIB" "$FA_MANY" "$FA_MANY_KIB" "$TOP" >/dev/null
	kt_log "false alarms: making ${FA_BIG_MIB} MiB + $FA_MANY files + a configured source copy in $FA_DIR"
	kt_wait_for 600 sh -c "grep -qx done '$TMP/fasetup.out' || ! kill -0 $KT_LAST_PID 2>/dev/null"
	grep -qx 'done' "$TMP/fasetup.out" || {
		sed 's/^/    | /' "$TMP/fasetup.out" >&2
		kt_fail "false-alarm setup failed (see $FA_DIR/src/b/*.log)"
	}
	run_teardown
}

# fa_command WORKLOAD: the workload, a bash -c script ($1 = the data dir).
# shellcheck disable=SC2016
fa_command() {
	case $1 in
	read) printf '%s\n' 'while :; do dd if="$1/big" of=/dev/null bs=1M status=none; echo pass; done' ;;
	manyfiles) printf '%s\n' 'while :; do find "$1/many" -type f -print0 | xargs -0 cat >/dev/null; echo pass; done' ;;
	writeread) printf '%s\n' 'while :; do
			dd if=/dev/urandom of="$1/stream" bs=1M count=512 status=none
			dd if="$1/stream" of=/dev/null bs=1M status=none
			rm -f "$1/stream"; echo pass
		done' ;;
	build) printf '%s\n' 'cd "$1/src/b" || exit 1
		while :; do make -s clean >/dev/null 2>&1; make -j2 >/dev/null 2>&1 || exit 1; echo pass; done' ;;
	esac
}

# pressure_totals FILE: "some_total full_total" (us).  Read twice per run
# only: frequent reads would starve unprivileged triggers on it.
pressure_totals() {
	awk '{ for (i = 2; i <= NF; i++) if ($i ~ /^total=/) t[$1] = substr($i, 7) } END { print t["some"] + 0, t["full"] + 0 }' "$1"
}

fa_run() {
	local w=$1 dur=$2 lim hog onset t1 p0 f0 p1 f1 tier n s lvl p acts param events wk
	lim=$(fa_limit "$w")
	param="${dur}s ${lim}M"
	kt_cgroup_create "psi-lmkd-bench-fa-$w" "$lim"
	kt_spawn_in_cgroup -o "$TMP/hog.out" "$KT_BINDIR/memhog" 8 900 >/dev/null
	hog=$KT_LAST_PID
	kt_wait_ready "$TMP/hog.out" "$hog" 20
	default_conf "$TMP/fa.conf"
	lmkd_start "$TMP/fa.conf" "$TMP/fa-lmkd.log" -n -vv
	vmp_start "$TMP/fa-vmp.log"
	peer_start earlyoom "$TMP/fa-earlyoom.log" 10
	peer_start nohang "$TMP/fa-nohang.log"
	sleep 2
	read -r p0 f0 <<<"$(pressure_totals "$KT_PRESSURE")"
	onset=$(now_us)
	# shellcheck disable=SC2016
	kt_spawn_in_cgroup -o "$TMP/fa-work.out" bash -c "$(fa_command "$w")" "fa-$w" "$FA_DIR" >/dev/null
	kt_log "false alarm $w: $(fa_describe "$w"), ${lim} MiB group, ${dur}s"
	sleep "$dur"
	t1=$(now_us)
	read -r p1 f1 <<<"$(pressure_totals "$KT_PRESSURE")"

	raw falsealarm "$w" "$param" 0 passes "$(grep -cx pass "$TMP/fa-work.out")" count
	raw falsealarm "$w" "$param" 0 some_pct "$(awk -v a="$p0" -v b="$p1" -v t="$(( t1 - onset ))" 'BEGIN { printf "%.1f", (b - a) * 100 / t }')" %
	raw falsealarm "$w" "$param" 0 full_pct "$(awk -v a="$f0" -v b="$f1" -v t="$(( t1 - onset ))" 'BEGIN { printf "%.1f", (b - a) * 100 / t }')" %
	raw falsealarm "$w" "$param" 0 peak_mib "$(( $(kt_mem_stat peak) >> 20 ))" MiB
	raw falsealarm "$w" "$param" 0 oom_kills "$(kt_oom_kills)" count
	# psi-lmkd: events per tier ("tier X fired" debug lines) and would-kills
	events=0
	for tier in medium critical last-resort; do
		s=$(awk -v f="$onset" -v t="$t1" -v k="tier $tier fired (" '$1 >= f && $1 < t && index($0, k) { n++ } END { print n + 0 }' "$TMP/fa-lmkd.log")
		raw falsealarm "$w" "$param" 0 "lmkd_events_$tier" "$s" count
		events=$(( events + s ))
	done
	wk=$(awk -v f="$onset" -v t="$t1" '$1 >= f && $1 < t && / would-kill pid=/ { n++ } END { print n + 0 }' "$TMP/fa-lmkd.log")
	raw falsealarm "$w" "$param" 0 lmkd_events "$events" count
	raw falsealarm "$w" "$param" 0 lmkd_would_kills "$wk" count
	# vmpressure: notifications per level, and in how many 1 s slots
	if [ -n "$VMP_OK" ]; then
		for lvl in low medium critical; do
			read -r n s <<<"$(vmp_count "$TMP/fa-vmp.log" "$lvl" "$onset" "$t1")"
			raw falsealarm "$w" "$param" 0 "vmp_$lvl" "$n" count
			raw falsealarm "$w" "$param" 0 "vmp_${lvl}_s" "$s" s
		done
	fi
	for p in earlyoom nohang; do
		[ -s "$TMP/fa-$p.log" ] || continue
		acts=$(peer_actions "$TMP/fa-$p.log")
		raw falsealarm "$w" "$param" 0 "${p}_actions" "${acts:-0}" count
		cp "$TMP/fa-$p.log" "$RESULTS/last-falsealarm-$p.log"
	done
	cp "$TMP/fa-lmkd.log" "$RESULTS/last-falsealarm-$w.log"
	kt_log "false alarm $w: psi-lmkd $events events, $wk would-kills; vmpressure" \
		"$(awk '$2 ~ /^(low|medium|critical)$/ { n[$2] += $3 } END { printf "low %d medium %d critical %d", n["low"], n["medium"], n["critical"] }' "$TMP/fa-vmp.log")"
	run_teardown
	rm -f "$FA_DIR/stream"
}

falsealarm_bench() {
	local dur=40 w m param
	[ -n "$QUICK" ] && dur=12
	fa_prepare
	for w in "${FA_WORKLOADS[@]}"; do
		fa_run "$w" "$dur"
	done
	for w in "${FA_WORKLOADS[@]}"; do
		param="${dur}s $(fa_limit "$w")M"
		summarize falsealarm "$w" "$param" passes count "$(fa_describe "$w")"
		for m in some_pct:% full_pct:% peak_mib:MiB oom_kills:count \
			 lmkd_events_medium:count lmkd_events_critical:count lmkd_events_last-resort:count \
			 lmkd_events:count lmkd_would_kills:count \
			 vmp_low:count vmp_medium:count vmp_critical:count vmp_low_s:s vmp_medium_s:s vmp_critical_s:s \
			 earlyoom_actions:count nohang_actions:count; do
			summarize falsealarm "$w" "$param" "${m%%:*}" "${m#*:}"
		done
	done
}
