#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/scenarios/killpath.sh - sourced by bench/run: killpath_bench, the scenario
# "killpath" (bench/README.md, section killpath); definitions only.

# ---------------------------------------------------------- 3c. killpath --

# bench/killpath (issue 16, item 4: page faults and time of the kill path
# under real pressure), run inside this run: it inherits the lock (kt_lock
# returns at once when KT_LOCK_FD is set) and cleans up after itself, in a
# temp dir of its own (KT_TMPDIR emptied: it would remove ours). One raw row
# per kill.
killpath_bench() {
	local i=0 mi ma us
	if ! KT_TMPDIR= KT_LOCK_FD=$KT_LOCK_FD "$HERE/killpath" --kills 5 >"$TMP/killpath.out" 2>&1; then
		kt_log "killpath failed:"
		sed 's/^/    | /' "$TMP/killpath.out" >&2
		return 0
	fi
	while read -r _ _ mi _ _ ma _ _ _ us _; do
		raw killpath psi-lmkd 1000 "$i" minor_faults "$mi" faults
		raw killpath psi-lmkd 1000 "$i" major_faults "$ma" faults
		raw killpath psi-lmkd 1000 "$i" decision_us "$us" us
		i=$((i + 1))
	done < <(grep -o 'kill path: .* to the signal' "$TMP/killpath.out")
	summarize killpath psi-lmkd 1000 minor_faults faults "per kill from the decision to SIGKILL in a thrashing 512 MiB group with 1000 idle processes and the daemon"
	summarize killpath psi-lmkd 1000 major_faults faults
	summarize killpath psi-lmkd 1000 decision_us us
}
