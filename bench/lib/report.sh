#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/lib/report.sh - sourced last by bench/run: carries over the rows of
# the scenarios left out (--only), writes results/latest.txt, latest.csv,
# raw.csv and the plots. Runs as it is sourced.

# ---------------------------------------------------------------- report --

# A partial run (--only) keeps the other scenarios of the previous results:
# their rows of results/latest.csv and raw.csv are carried over (scenario
# order as in a full run), so that the files, the report and the ratios
# still cover every scenario (their plots and last-*.log files are simply
# not rewritten).  The report's header says which scenarios were carried
# over and from which run (also across several partial runs).
ALL_SCENARIOS=(scan scale rss latency idle killpath peers falsealarm miss profiles swap groups)
CARRIED_NOTE=
merge_previous() {	# NEW PREVIOUS OUT
	local s
	head -n 1 "$1" >"$3"
	for s in "${ALL_SCENARIOS[@]}"; do
		if want "$s"; then
			awk -F, -v s="$s" 'NR > 1 && $1 == s' "$1"
		else
			awk -F, -v s="$s" 'NR > 1 && $1 == s' "$2"
		fi
	done >>"$3"
}
carry_previous() {
	local s carried=()
	[ -f "$RESULTS/latest.csv" ] && [ -f "$RESULTS/raw.csv" ] || return 0
	if [ "$(head -n 1 "$RESULTS/latest.csv")" != "$(head -n 1 "$SUM")" ] ||
		[ "$(head -n 1 "$RESULTS/raw.csv")" != "$(head -n 1 "$RAW")" ]; then
		kt_log "previous results have other columns: not carried over"
		return 0
	fi
	for s in "${ALL_SCENARIOS[@]}"; do
		want "$s" || ! grep -q "^$s," "$RESULTS/latest.csv" || carried+=("$s")
	done
	[ ${#carried[@]} -gt 0 ] || return 0
	merge_previous "$SUM" "$RESULTS/latest.csv" "$TMP/summary-merged.csv" || return 0
	merge_previous "$RAW" "$RESULTS/raw.csv" "$TMP/raw-merged.csv" || return 0
	SUM=$TMP/summary-merged.csv
	RAW=$TMP/raw-merged.csv
	# The run each carried scenario comes from: the previous report's own
	# "carried over" lines, else its header's date.
	CARRIED_NOTE=$(awk -v list="${carried[*]}" '
		/^psi-lmkd benchmark  / && !d { d = $3 }
		/^  \[carried over from the run of / {
			t = $0; sub(/^  \[carried over from the run of /, "", t); sub(/\]$/, "", t)
			r = t; sub(/: .*/, "", r); sub(/^[^ ]*: /, "", t)
			k = split(t, a, " "); for (i = 1; i <= k; i++) from[a[i]] = r
		}
		END {
			n = split(list, s, " ")
			for (i = 1; i <= n; i++) {
				r = (s[i] in from) ? from[s[i]] : (d != "" ? d : "?")
				if (!(r in seen)) { seen[r] = 1; order[++m] = r }
				by[r] = by[r] " " s[i]
			}
			for (j = 1; j <= m; j++) printf "  [carried over from the run of %s:%s]\n", order[j], by[order[j]]
		}' "$RESULTS/latest.txt" 2>/dev/null)
	kt_log "--only ${ONLY}: carried over from the previous results: ${carried[*]}"
}
carry_previous

cp "$RAW" "$RESULTS/raw.csv"
cp "$SUM" "$RESULTS/latest.csv"
T_END=$(date +%s)
{
	printf '\npsi-lmkd benchmark  %s  (%s, %s cpus, kernel %s, %s)%s  run took %d min %d s\n\n' \
		"$(date -u +%FT%TZ)" "$(hostname)" "$(nproc)" "$(uname -r)" "${KT_CG_LAYOUT:-cgroups}" \
		"${QUICK:+  [--quick: 1 repetition]}" $(( (T_END - T_START) / 60 )) $(( (T_END - T_START) % 60 ))
	[ -n "$CARRIED_NOTE" ] && printf '%s\n\n' "$CARRIED_NOTE"
	# The generic rows (false alarms and misses get tables of their own).
	awk -F, 'NR > 1 && $1 !~ /^(falsealarm|miss|profiles|swap)$/ && $8 != 0 {
		printf "%-10s %-20s %-16s %-22s %10s  [%s .. %s] n=%s %s  %s\n", $1, $2, $3, $4, $5, $6, $7, $8, $9, $10
	}
	NR > 1 && $1 !~ /^(falsealarm|miss|profiles|swap)$/ && $8 == 0 && $10 != "" {
		printf "%-10s %-20s %-16s %-22s  %s\n", $1, $2, $3, $4, $10 }' "$SUM"

	# Idle memory: one line per process, its totals side by side, then what
	# the warn tier adds and how far psi-lmkd is from earlyoom (issue 30's
	# goal: private at most earlyoom's + 200 kB without the warn tier).
	awk -F, '
		$1 == "rss" && $3 == "TOTAL" && $8 > 0 { v[$2 "," $4] = $5; if (!($2 in seen)) { seen[$2] = 1; order[++n] = $2 } }
		END {
			if (!n) exit
			printf "\nidle memory (kB, /proc/PID/smaps, 5 s after start)  %-10s %8s %8s %8s %8s\n", "", "rss", "pss", "private", "dirty"
			for (i = 1; i <= n; i++)
				printf "  %-54s %8s %8s %8s %8s\n", order[i], v[order[i] ",rss_kb"], v[order[i] ",pss_kb"], v[order[i] ",private_kb"], v[order[i] ",private_dirty_kb"]
			a = "psi-lmkd,"; b = "psi-lmkd-nowarn,"; e = "earlyoom,"
			if ((a "private_kb") in v && (b "private_kb") in v)
				printf "  the warn tier adds: rss %+d, pss %+d, private %+d, dirty %+d\n", v[a "rss_kb"] - v[b "rss_kb"],
					v[a "pss_kb"] - v[b "pss_kb"], v[a "private_kb"] - v[b "private_kb"], v[a "private_dirty_kb"] - v[b "private_dirty_kb"]
			if ((b "private_kb") in v && (e "private_kb") in v)
				printf "  psi-lmkd-nowarn private - earlyoom private: %+d (goal: <= +200)\n", v[b "private_kb"] - v[e "private_kb"]
		}' "$SUM"

	# False alarms: one line per workload, every tool of the same run.
	awk -F, '
		$1 == "falsealarm" && $8 > 0 { v[$2 SUBSEP $4] = $5; p[$2] = $3 }
		$1 == "falsealarm" && $4 == "passes" { order[++n] = $2; desc[$2] = $10 }
		function g(w, m) { return ((w SUBSEP m) in v) ? v[w SUBSEP m] : "-" }
		END {
			if (!n) exit
			printf "\nfalse alarms: benign workloads, one run each, all tools watching that run at once\n"
			printf "(psi-lmkd --dry-run, default tiers, scoped to the group; vmpressure on its v1 memcg;\n"
			printf " earlyoom --dryrun and nohang unprivileged, system-wide).  Should all be 0 but the stall.\n"
			printf "%-10s %-9s %-11s %5s %6s | %-17s %6s | %-21s %-14s | %5s %5s %4s\n", "workload", "run", "stall s/f %",
				"peak", "passes", "psi-lmkd events", "would", "vmpressure notif.", "1-s slots", "early", "nohng", "OOM"
			printf "%-10s %-9s %-11s %5s %6s | %-17s %6s | %-21s %-14s | %5s %5s %4s\n", "", "", "", "MiB", "",
				"medium/crit/last", "-kills", "low/medium/critical", "low/med/crit", "oom", "ang", "kill"
			for (i = 1; i <= n; i++) {
				w = order[i]
				printf "%-10s %-9s %-11s %5s %6s | %-17s %6s | %-21s %-14s | %5s %5s %4s\n", w, p[w],
					g(w, "some_pct") "/" g(w, "full_pct"), g(w, "peak_mib"), g(w, "passes"),
					g(w, "lmkd_events_medium") "/" g(w, "lmkd_events_critical") "/" g(w, "lmkd_events_last-resort"),
					g(w, "lmkd_would_kills"),
					g(w, "vmp_low") "/" g(w, "vmp_medium") "/" g(w, "vmp_critical"),
					g(w, "vmp_low_s") "/" g(w, "vmp_medium_s") "/" g(w, "vmp_critical_s"),
					g(w, "earlyoom_actions"), g(w, "nohang_actions"), g(w, "oom_kills")
			}
			for (i = 1; i <= n; i++) printf "  %-10s %s\n", order[i], desc[order[i]]
		}' "$SUM"

	# Misses: per workload, the kernel alone against each tool.
	awk -F, '
		$1 == "miss" && $8 > 0 { v[$2 SUBSEP $3 SUBSEP $4] = ($8 > 1) ? sprintf("%s [%s..%s]", $5, $6, $7) : $5 }
		$1 == "miss" && $3 == "base" && $4 == "onset_to_oom_ms" { order[++n] = $2; desc[$2] = $10 }
		$1 == "miss" && $4 == "lmkd_kill_ms" { vict[$2] = $10 }
		$1 == "miss" && $4 == "oom_kills" && $3 == "base" { reps[$2] = $8 }
		function g(w, r, m) { return ((w SUBSEP r SUBSEP m) in v) ? v[w SUBSEP r SUBSEP m] : "-" }
		END {
			if (!n) exit
			printf "\nmisses: thrash in a fresh group without swap, median [min..max] over the repetitions;\n"
			printf "times in ms after the onset; lead = ms ahead of the kernel OOM kill; \"-\" = never happened\n"
			for (i = 1; i <= n; i++) {
				w = order[i]
				printf "%-8s %s, %s repetitions\n", w, desc[w], reps[w]
				printf "  kernel alone       OOM kill at %s ms (%s OOM kills per run)\n",
					g(w, "base", "onset_to_oom_ms"), g(w, "base", "oom_kills")
				printf "  psi-lmkd           first kill at %s ms, lead %s ms; killed before any OOM kill: %s;\n",
					g(w, "lmkd", "lmkd_kill_ms"), g(w, "lmkd", "lmkd_lead_ms"), g(w, "lmkd", "lmkd_before_oom")
				printf "                     %s kills and %s kernel OOM kills per run; %s\n",
					g(w, "lmkd", "lmkd_kills"), g(w, "lmkd", "oom_kills"), vict[w]
				printf "  vmpressure         first low %s, medium %s, critical %s ms; critical lead %s ms\n",
					g(w, "base", "vmp_first_low_ms"), g(w, "base", "vmp_first_medium_ms"),
					g(w, "base", "vmp_first_critical_ms"), g(w, "base", "vmp_critical_lead_ms")
				printf "  earlyoom / nohang  action lines %s / %s\n",
					g(w, "base", "earlyoom_actions"), g(w, "base", "nohang_actions")
			}
		}' "$SUM"

	# The two profiles: per variant, who died in what order, and when.
	awk -F, '
		$1 == "profiles" && $8 > 0 { v[$2 SUBSEP $4] = ($8 > 1) ? sprintf("%s [%s..%s] n=%s", $5, $6, $7, $8) : $5 " n=1" }
		$1 == "profiles" && $4 == "lmkd_kills" { order[++n] = $2; ord[$2] = $10 }
		function g(w, m) { return ((w SUBSEP m) in v) ? v[w SUBSEP m] : "-" }
		END {
			if (!n) exit
			printf "\nprofiles: the desktop set (pipewire adj 200 24 MiB, renderer adj 300 64 MiB, editor adj 0\n"
			printf "16 MiB, runaway adj 0 +32 MiB/s) in 512 MiB without swap; ms after the runaway started,\n"
			printf "median [min..max] n; lead = ms ahead of the kernel OOM kill of the none run\n"
			for (i = 1; i <= n; i++) {
				w = order[i]
				printf "%-16s %s\n", w, ord[w]
				printf "  runaway dead at %s ms; psi-lmkd killed it at %s ms, lead %s ms\n",
					g(w, "runaway_death_ms"), g(w, "runaway_kill_ms"), g(w, "lead_ms")
				printf "  psi-lmkd kills %s, kernel OOM kills %s (first at %s ms)\n",
					g(w, "lmkd_kills"), g(w, "oom_kills"), g(w, "onset_to_oom_ms")
				printf "  died (1/0): pipewire %s at %s ms, renderer %s at %s ms, editor %s at %s ms\n",
					g(w, "pipewire_died"), g(w, "pipewire_death_ms"), g(w, "renderer_died"),
					g(w, "renderer_death_ms"), g(w, "editor_died"), g(w, "editor_death_ms")
			}
		}' "$SUM"

	# Swap: per workload and swap, the kernel alone against psi-lmkd.
	awk -F, '
		$1 == "swap" && $8 > 0 { v[$2 SUBSEP $3 SUBSEP $4] = ($8 > 1) ? sprintf("%s [%s..%s]", $5, $6, $7) : $5 }
		$1 == "swap" && $4 == "killed" && $3 == "none" { order[++n] = $2; reps[$2] = $8 }
		$1 == "swap" && $4 == "killed" && $3 == "lmkd" { kl[$2] = $10 }
		function g(w, r, m) { return ((w SUBSEP r SUBSEP m) in v) ? v[w SUBSEP r SUBSEP m] : "-" }
		END {
			if (!n) exit
			printf "\nswap: 256 MiB group, shipped desktop profile (last resort low_available 5%%, low_swap 10%%\n"
			printf "of the group'"'"'s swap); zram = 1 GiB device, 192 MiB RAM at most; ms after the start;\n"
			printf "killed = the workload process died (by anyone), as a count per run\n"
			printf "%-15s %4s | %-16s %-18s | %-16s %-18s %-18s %-6s %s\n", "workload-swap", "reps",
				"kernel: killed", "OOM kill at", "psi-lmkd: killed", "kill at", "lead", "OOMs", "VmSwap MiB (alive)"
			for (i = 1; i <= n; i++) {
				w = order[i]
				printf "%-15s %4s | %-16s %-18s | %-16s %-18s %-18s %-6s %s\n", w, reps[w],
					g(w, "none", "killed"), g(w, "none", "onset_to_oom_ms"),
					g(w, "lmkd", "killed"), g(w, "lmkd", "lmkd_kill_ms"), g(w, "lmkd", "lead_ms"),
					g(w, "lmkd", "oom_kills"), g(w, "lmkd", "vmswap_mib")
			}
			for (i = 1; i <= n; i++) if (kl[order[i]] != "") printf "  %-15s psi-lmkd %s\n", order[i], kl[order[i]]
		}' "$SUM"

	# Ratios: psi-lmkd against the kernel floor (same trigger) and the peers.
	echo
	awk -F, '
		function ratio(label, a, b) {
			if (a == "" || b == "") return
			if (b + 0 == 0) printf "ratio  %-58s n/a (%s vs %s)\n", label, a, b
			else printf "ratio  %-58s %.2f (%s vs %s)\n", label, a / b, a, b
		}
		$1 == "latency" && $8 > 0 { lat[$2 "," $4] = $5 }
		$1 == "idle" && $8 > 0 { idle[$2 "," $4] = $5 }
		$1 == "falsealarm" && $8 > 0 { fa[$2 "," $4] = $5; if (!($2 in seen)) { seen[$2] = 1; fw[++nf] = $2 } }
		$1 == "miss" && $8 > 0 { mi[$2 "," $3 "," $4] = $5; if (!($2 in mseen)) { mseen[$2] = 1; mw[++nm] = $2 } }
		END {
			ratio("latency lmkd-kernel kill / floor-unpriv event (100ms 2s)", lat["lmkd-kernel,onset_to_kill_ms"], lat["floor-unpriv,onset_to_event_ms"])
			ratio("latency lmkd-priv kill / floor-priv event (70ms 1s)", lat["lmkd-priv,onset_to_kill_ms"], lat["floor-priv,onset_to_event_ms"])
			ratio("latency lmkd-userspace kill / floor-priv event (70ms 1s)", lat["lmkd-userspace,onset_to_kill_ms"], lat["floor-priv,onset_to_event_ms"])
			ratio("latency lmkd-userspace kill / vmpressure first medium", lat["lmkd-userspace,onset_to_kill_ms"], lat["vmpressure,onset_to_medium_ms"])
			ratio("latency lmkd-priv kill / vmpressure first medium", lat["lmkd-priv,onset_to_kill_ms"], lat["vmpressure,onset_to_medium_ms"])
			split("earlyoom nohang", peers, " ")
			split("wakeups_per_min vmrss_kb cpu_ms_per_min", ms, " ")
			for (i = 1; i <= 2; i++)
				for (j = 1; j <= 3; j++)
					ratio(sprintf("idle %s psi-lmkd / %s", ms[j], peers[i]), idle["psi-lmkd," ms[j]], idle[peers[i] "," ms[j]])
			for (i = 1; i <= nf; i++) {
				w = fw[i]
				ratio(sprintf("falsealarm %s: lmkd would-kills / vmpressure medium slots", w), fa[w ",lmkd_would_kills"], fa[w ",vmp_medium_s"])
				ratio(sprintf("falsealarm %s: lmkd would-kills / vmpressure critical slots", w), fa[w ",lmkd_would_kills"], fa[w ",vmp_critical_s"])
				peer = ""
				if ((w ",earlyoom_actions") in fa || (w ",nohang_actions") in fa)
					peer = fa[w ",earlyoom_actions"] + fa[w ",nohang_actions"]
				ratio(sprintf("falsealarm %s: lmkd would-kills / earlyoom+nohang actions", w), fa[w ",lmkd_would_kills"], peer)
			}
			for (i = 1; i <= nm; i++) {
				w = mw[i]
				ratio(sprintf("miss %s: lmkd lead / vmpressure critical lead", w), mi[w ",lmkd,lmkd_lead_ms"], mi[w ",base,vmp_critical_lead_ms"])
				ratio(sprintf("miss %s: lmkd first kill / kernel OOM (time after onset)", w), mi[w ",lmkd,lmkd_kill_ms"], mi[w ",base,onset_to_oom_ms"])
			}
		}' "$SUM"
} | tee "$RESULTS/latest.txt"

# ----------------------------------------------------------------- plots --

plot() { gnuplot 2>>"$TMP/gnuplot.err" || kt_log "gnuplot failed on $1 (optional; see nothing else)"; }
if command -v gnuplot >/dev/null 2>&1 && want scan; then
	awk -F, '$1 == "scan" && $2 == "fixture-minadj0" && $4 == "scan_us" { print $3, $5, $6, $7 }' "$SUM" >"$TMP/scan0.dat"
	awk -F, '$1 == "scan" && $2 == "fixture-minadj700" && $4 == "scan_us" { print $3, $5, $6, $7 }' "$SUM" >"$TMP/scan700.dat"
	awk -F, '$1 == "scan" && $2 == "proc-minadj0" && $4 == "scan_us" { print $3, $5, $6, $7 }' "$SUM" >"$TMP/scanproc.dat"
	plot scan.png <<-EOF
	set terminal pngcairo size 800,500 noenhanced
	set output "$RESULTS/scan.png"
	set title "psi-lmkd: one /proc scan + victim choice (median, min..max)"
	set xlabel "processes"; set ylabel "microseconds"; set key left top; set grid
	plot "$TMP/scan0.dat" using 1:2:3:4 with yerrorlines title "fixture tree, min_adj 0 (all read)", \
	     "$TMP/scan700.dat" using 1:2:3:4 with yerrorlines title "fixture tree, min_adj 700 (30% read)", \
	     "$TMP/scanproc.dat" using 1:2:3:4 with yerrorlines title "real /proc + N sleepers"
	EOF
fi
if command -v gnuplot >/dev/null 2>&1 && want latency; then
	awk -F, '$1 == "latency" && $8 > 0 && ($4 == "onset_to_kill_ms" || ($4 == "onset_to_event_ms" && $2 ~ /^floor/) ||
			($2 == "vmpressure" && ($4 == "onset_to_medium_ms" || $4 == "onset_to_critical_ms"))) {
		name = $2; if ($2 == "vmpressure") { name = $4; sub(/^onset_to_/, "vmp-", name); sub(/_ms$/, "", name) }
		printf "\"%s\" %s %s %s\n", name, $5, $6, $7 }' "$SUM" >"$TMP/lat.dat"
	plot latency.png <<-EOF
	set terminal pngcairo size 1000,500 noenhanced
	set output "$RESULTS/latency.png"
	set title "onset -> first event (floor-*), SIGKILL (lmkd-*), first notification (vmp-*): ms, median, min..max"
	set style fill solid 0.5; set boxwidth 0.6; set grid y; set yrange [0:*]
	set xtics font ",9"
	plot "$TMP/lat.dat" using 0:2:xtic(1) with boxes notitle, "" using 0:2:3:4 with yerrorbars notitle
	EOF
fi
if command -v gnuplot >/dev/null 2>&1 && want falsealarm; then
	# One group of bars per workload: what each tool did in the same run.
	awk -F, '$1 == "falsealarm" && $8 > 0 { v[$2 "," $4] = $5; if (!($2 in s)) { s[$2] = 1; w[++n] = $2 } }
		function g(k) { return (k in v) ? v[k] : "-" }
		END {
			for (i = 1; i <= n; i++)
				print w[i], g(w[i] ",lmkd_events"), g(w[i] ",lmkd_would_kills"), g(w[i] ",vmp_low_s"),
					g(w[i] ",vmp_medium_s"), g(w[i] ",vmp_critical_s"), g(w[i] ",earlyoom_actions"), g(w[i] ",nohang_actions")
		}' "$SUM" >"$TMP/fa.dat"
	plot falsealarm.png <<-EOF
	set terminal pngcairo size 900,500 noenhanced
	set output "$RESULTS/falsealarm.png"
	set title "false alarms on benign workloads (one run each, all tools at once): should be 0"
	set ylabel "count in the run (vmpressure: 1-s slots with a notification)"
	set datafile missing "-"
	set style data histograms; set style histogram clustered gap 1; set style fill solid 0.7 border -1
	set grid y; set yrange [0:*]; set key below
	plot "$TMP/fa.dat" using 2:xtic(1) title "psi-lmkd tier events", "" using 3 title "psi-lmkd would-kills", \
	     "" using 4 title "vmpressure low", "" using 5 title "vmpressure medium", "" using 6 title "vmpressure critical", \
	     "" using 7 title "earlyoom actions", "" using 8 title "nohang actions"
	EOF
fi
if command -v gnuplot >/dev/null 2>&1 && want miss; then
	awk -F, '$1 == "miss" && $8 > 0 { v[$2 "," $3 "," $4] = $5; if (!($2 in s)) { s[$2] = 1; w[++n] = $2 } }
		function g(k) { return (k in v) ? v[k] : "-" }
		END {
			for (i = 1; i <= n; i++)
				print w[i], g(w[i] ",base,onset_to_oom_ms"), g(w[i] ",lmkd,lmkd_kill_ms"),
					g(w[i] ",base,vmp_first_medium_ms"), g(w[i] ",base,vmp_first_critical_ms")
		}' "$SUM" >"$TMP/miss.dat"
	plot miss.png <<-EOF
	set terminal pngcairo size 900,500 noenhanced
	set output "$RESULTS/miss.png"
	set title "misses: ms from onset to the kernel OOM kill / a tool acting (median; no bar = never; earlyoom, nohang: never)"
	set ylabel "ms after onset"
	set datafile missing "-"
	set style data histograms; set style histogram clustered gap 1; set style fill solid 0.7 border -1
	set grid y; set yrange [0:*]; set key below
	plot "$TMP/miss.dat" using 2:xtic(1) title "kernel OOM kill (no psi-lmkd)", "" using 3 title "psi-lmkd first kill", \
	     "" using 4 title "vmpressure first medium", "" using 5 title "vmpressure first critical"
	EOF
fi
kt_log "results in $RESULTS (latest.txt, latest.csv, raw.csv$(ls "$RESULTS"/*.png >/dev/null 2>&1 && echo ', *.png'))"
exit 0
