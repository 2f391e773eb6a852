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
# clean page counts only while nobody else maps it), private_dirty_kb (the
# part of it that is written memory: heap, stack, relocated data; it does not
# depend on who else maps the files), pss_kb (each page divided among the
# processes that map it) and locked_kb (the kernel's Locked:, shared pages
# divided among the processes that lock them). The two psi-lmkd
# configurations run one after the other, each alone: two instances of one
# binary would share its pages, and each would look cheaper than it is. The
# binary is synced first: the page cache's pages of a file just written are
# dirty until written back, and smaps counts them as Private_Dirty.
rss_maps() {	# PID: "name rss private locked pss private_dirty" lines, then "TOTAL ..."
	awk '/^[0-9a-f]+-[0-9a-f]+ / { n = (NF >= 6) ? $6 : "[anon]"; sub(".*/", "", n); sub("[.]so[.].*", ".so", n); next }
		/^Rss:/ { r[n] += $2; tr += $2 }
		/^Pss:/ { s[n] += $2; ts += $2 }
		/^Private_(Clean|Dirty):/ { v[n] += $2; tv += $2 }
		/^Private_Dirty:/ { d[n] += $2; td += $2 }
		/^Locked:/ { l[n] += $2; tl += $2 }
		END { for (n in r) if (r[n] > 0) print n, r[n], v[n], l[n], s[n], d[n]; print "TOTAL", tr, tv, tl, ts, td }' "/proc/$1/smaps"
}
rss_record() {	# NAME PID
	local n r v l ps pd m
	while read -r n r v l ps pd; do
		raw rss "$1" "$n" 0 rss_kb "$r" kB
		raw rss "$1" "$n" 0 private_kb "$v" kB
		raw rss "$1" "$n" 0 private_dirty_kb "$pd" kB
		raw rss "$1" "$n" 0 pss_kb "$ps" kB
		raw rss "$1" "$n" 0 locked_kb "$l" kB
		for m in rss_kb private_kb private_dirty_kb pss_kb locked_kb; do
			summarize rss "$1" "$n" "$m" kB
		done
	done < <(rss_maps "$2" | sort -k3,3nr)
}
rss_bench() {
	local names=() pids=() i p c
	kt_cgroup_create psi-lmkd-bench-rss 64
	sed -e "s|^scope *=.*|scope = $KT_CG2_REL|" "$TOP/conf/psi-lmkd.conf" >"$TMP/rss.conf"
	grep -q "^scope = $KT_CG2_REL" "$TMP/rss.conf" ||
		printf '[daemon]\nscope = %s\n' "$KT_CG2_REL" >>"$TMP/rss.conf"
	awk '/^\[tier warn\]/ { skip = 1; next } /^\[/ { skip = 0 } !skip' "$TMP/rss.conf" >"$TMP/rss-nowarn.conf"
	sync "$PSI_LMKD" 2>/dev/null || sync
	for p in earlyoom nohang; do
		if peer_start "$p" "$TMP/rss-$p.log" 0; then
			names+=("$p"); pids+=("$PEER_PID")
		else
			note rss "$p" - status "not run (not installed or no safe uid)"
		fi
	done
	# The warn tier's cost is its bus connection (libsystemd loaded while it
	# is up): a private bus of ours (lib-dbus.sh, with the shipped policy)
	# stands in for the system bus, which this host may not have (without
	# one the library is unloaded again).
	# (kt_system_bus_start exports its address: restored after this scenario)
	local had_bus=${DBUS_SYSTEM_BUS_ADDRESS+set} old_bus=${DBUS_SYSTEM_BUS_ADDRESS:-}
	mkdir -p "$TMP/rss-bus"
	if command -v dbus-daemon >/dev/null; then
		kt_system_bus_start "$TMP/rss-bus"
	else
		export DBUS_SYSTEM_BUS_ADDRESS=unix:path=$TMP/rss-bus/none
		note rss psi-lmkd - status "no private bus (no dbus-daemon): the warn tier measured without a connection"
	fi
	for c in psi-lmkd-nowarn:rss-nowarn.conf psi-lmkd:rss.conf; do
		"$PSI_LMKD" -f -n -c "$TMP/${c#*:}" </dev/null {KT_LOCK_FD}>&- >"$TMP/rss-${c%%:*}.log" 2>&1 &
		p=$!
		kt_track "$p"
		sleep 5
		if kt_pid_alive "$p"; then
			rss_record "${c%%:*}" "$p"
			[ "${c%%:*}" = psi-lmkd ] && ! grep -q libsystemd "/proc/$p/maps" &&
				note rss psi-lmkd - status "the warn tier had no bus connection: libsystemd was not mapped"
		else
			kt_log "rss: ${c%%:*} died:"; sed 's/^/    | /' "$TMP/rss-${c%%:*}.log" >&2
		fi
		kill -TERM "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	for i in "${!pids[@]}"; do
		kt_pid_alive "${pids[i]}" || { kt_log "rss: ${names[i]} died"; continue; }
		rss_record "${names[i]}" "${pids[i]}"
	done
	cp "$TMP"/rss-*.log "$RESULTS/" 2>/dev/null
	run_teardown
	if [ -n "$had_bus" ]; then export DBUS_SYSTEM_BUS_ADDRESS=$old_bus; else unset DBUS_SYSTEM_BUS_ADDRESS; fi
}
