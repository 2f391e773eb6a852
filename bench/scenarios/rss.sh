#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/scenarios/rss.sh - sourced by bench/run: rss_bench, the scenario
# "rss" (bench/README.md, section rss); definitions only.

# ------------------------------------------------------------- 3b. rss --

# Idle memory per mapping (issue 16, item 2; issue 30): psi-lmkd on the
# default configuration and on the same minus its warn tier (a server: no
# bus, so libsystemd is never loaded), --dry-run, scoped to an empty test
# group, as in idle, beside earlyoom and nohang; after 5 s, each one's
# /proc/PID/smaps summed per backing object (a library, the program, [heap],
# [stack], [anon]): rss_kb (all resident pages, shared ones too), private_kb
# (resident pages no other process maps: what the process alone costs; a
# clean page counts only while nobody else maps it), pss_kb (each page
# divided among the processes that map it) and locked_kb (the kernel's
# Locked:, shared pages divided among the processes that lock them).
rss_maps() {	# PID: "name rss private locked pss" lines, then "TOTAL ..."
	awk '/^[0-9a-f]+-[0-9a-f]+ / { n = (NF >= 6) ? $6 : "[anon]"; sub(".*/", "", n); sub("[.]so[.].*", ".so", n); next }
		/^Rss:/ { r[n] += $2; tr += $2 }
		/^Pss:/ { s[n] += $2; ts += $2 }
		/^Private_(Clean|Dirty):/ { v[n] += $2; tv += $2 }
		/^Locked:/ { l[n] += $2; tl += $2 }
		END { for (n in r) if (r[n] > 0) print n, r[n], v[n], l[n], s[n]; print "TOTAL", tr, tv, tl, ts }' "/proc/$1/smaps"
}
rss_bench() {
	local names=() pids=() i p n r v l ps c
	kt_cgroup_create psi-lmkd-bench-rss 64
	sed -e "s|^scope *=.*|scope = $KT_CG2_REL|" "$TOP/conf/psi-lmkd.conf" >"$TMP/rss.conf"
	grep -q "^scope = $KT_CG2_REL" "$TMP/rss.conf" ||
		printf '[daemon]\nscope = %s\n' "$KT_CG2_REL" >>"$TMP/rss.conf"
	awk '/^\[tier warn\]/ { skip = 1; next } /^\[/ { skip = 0 } !skip' "$TMP/rss.conf" >"$TMP/rss-nowarn.conf"
	for c in psi-lmkd:rss.conf psi-lmkd-nowarn:rss-nowarn.conf; do
		"$PSI_LMKD" -f -n -c "$TMP/${c#*:}" </dev/null {KT_LOCK_FD}>&- >"$TMP/rss-${c%%:*}.log" 2>&1 &
		kt_track $!
		names+=("${c%%:*}"); pids+=($!)
	done
	for p in earlyoom nohang; do
		if peer_start "$p" "$TMP/rss-$p.log" 0; then
			names+=("$p"); pids+=("$PEER_PID")
		else
			note rss "$p" - status "not run (not installed or no safe uid)"
		fi
	done
	sleep 5
	for i in "${!pids[@]}"; do
		p=${pids[i]}
		kt_pid_alive "$p" || { kt_log "rss: ${names[i]} died"; continue; }
		while read -r n r v l ps; do
			raw rss "${names[i]}" "$n" 0 rss_kb "$r" kB
			raw rss "${names[i]}" "$n" 0 private_kb "$v" kB
			raw rss "${names[i]}" "$n" 0 pss_kb "$ps" kB
			raw rss "${names[i]}" "$n" 0 locked_kb "$l" kB
			summarize rss "${names[i]}" "$n" rss_kb kB
			summarize rss "${names[i]}" "$n" private_kb kB
			summarize rss "${names[i]}" "$n" pss_kb kB
			summarize rss "${names[i]}" "$n" locked_kb kB
		done < <(rss_maps "$p" | sort -k3,3nr)
	done
	run_teardown
}
