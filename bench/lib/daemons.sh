#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/lib/daemons.sh - sourced by bench/run: starting and stopping what a
# scenario measures: psi-lmkd in a test group, the vmpressure listener, the
# peers (earlyoom, nohang) without privileges; the per-run teardown.

# Per-run teardown: what kt_cleanup does for groups and tracked pids, but
# keeping the temp dirs, so that the next run can start afresh.
# The zram device of the swap scenario stays (KT_ZDEV= in the subshell).
# shellcheck disable=SC2030
run_teardown() {
	( KT_CLEAN_PATHS=(); KT_TMPDIR=; KT_ZDEV=; kt_cleanup ) 2>>"$TMP/teardown.log"
	KT_CG_DIRS=()
	KT_TRACKED=()
	KT_SPAWNED=()
	KT_CG2_PARENT_DIR=
}

# lmkd_start CONF LOG [FLAG...]: psi-lmkd -f FLAG... -c CONF in the
# background, stderr lines stamped with their arrival (epoch us) into LOG.
lmkd_start() {
	local conf=$1 log=$2
	shift 2
	: >"$log"
	"$PSI_LMKD" -f "$@" -c "$conf" </dev/null {KT_LOCK_FD}>&- \
		2> >(exec {KT_LOCK_FD}>&-; bench_stamp >"$log") >&2 &
	LMKD_PID=$!
	kt_track "$LMKD_PID"
}

# default_conf OUT: the shipped conf/psi-lmkd.conf (its tiers unchanged:
# medium some 70ms 1s >= 800, critical full 700ms 1s >= 0, last-resort
# low_available 2% >= 0), with pressure = the test group's cgroup2
# memory.pressure, scope = that group and memory_cgroup = the group's
# memory-limit dir (on a pure cgroup2 host the daemon would derive the same
# from the pressure file; on the hybrid layout the limit is in the v1 dir).
default_conf() {
	sed -e "s|^pressure *=.*|pressure = $KT_PRESSURE|" \
	    -e "s|^scope *=.*|scope = $KT_CG2_REL\nmemory_cgroup = $(kt_mem_dir)|" \
	    -e "s|^dry_run *=.*|dry_run = false|" "$TOP/conf/psi-lmkd.conf" >"$1"
	grep -q "^scope = $KT_CG2_REL\$" "$1" && grep -q "^pressure = $KT_PRESSURE\$" "$1" ||
		kt_fail "cannot rewrite conf/psi-lmkd.conf for the test group"
}

# vmp_start LOG: the vmpressure listener on the test group's v1 memcg
# (nothing on a pure cgroup2 host).  It stamps its own lines.
vmp_start() {
	: >"$1"
	[ -n "$VMP_OK" ] && [ -n "${KT_V1_DIR:-}" ] || return 1
	"$TMP/vmpressure" "$KT_V1_DIR" </dev/null {KT_LOCK_FD}>&- >"$1" 2>&1 &
	kt_track $!
	kt_wait_for 5 grep -q '^armed ' "$1" || kt_fail "vmpressure listener did not arm (see $1)"
}
# vmp_first LOG LEVEL FROM_US: epoch us of the first LEVEL line at or after
# FROM_US, or nothing.
vmp_first() {
	awk -v l="$2" -v f="$3" '$2 == l && $1 >= f { print $1; exit }' "$1"
}
# vmp_count LOG LEVEL FROM_US TO_US: "NOTIFICATIONS SECONDS" of LEVEL in
# [FROM, TO): the eventfd counts, and in how many of the 1 s slots since
# FROM at least one arrived.
vmp_count() {
	awk -v l="$2" -v f="$3" -v t="$4" '
		$2 == l && $1 >= f && $1 < t { n += $3; s[int(($1 - f) / 1000000)] = 1 }
		END { print n + 0, length(s) }' "$1"
}

# The peers (earlyoom, nohang) run as a uid that owns no process, with no
# capabilities and an empty bounding set: even a bug in their dry-run modes
# could signal nothing but themselves.  nohang has no dry-run mode at all.
PEER_UID=64123
RUNAS=()
# A log line of a peer saying it acts (or would, in dry-run): earlyoom's
# "low memory!" / "sending SIGTERM to process", nohang's corrective action.
PEER_ACT_RE='low memory!|to process [0-9]|corrective action|victim'
peers_prepare() {
	if ! getent passwd "$PEER_UID" >/dev/null && [ -z "$(ps -o pid= -u "$PEER_UID" 2>/dev/null)" ] &&
	   command -v setpriv >/dev/null; then
		RUNAS=(setpriv --reuid="$PEER_UID" --regid="$PEER_UID" --clear-groups --inh-caps=-all --bounding-set=-all)
	else
		kt_log "cannot find a free uid for the peers: not running them"
		return
	fi
	if [ -r /etc/nohang/nohang.conf ]; then
		cp /etc/nohang/nohang.conf "$TMP/nohang.conf"
		chmod a+r "$TMP/nohang.conf"; chmod a+rx "$TMP"
	fi
	command -v earlyoom >/dev/null || kt_log "earlyoom not installed: its figures are missing"
	command -v nohang >/dev/null || kt_log "nohang not installed: its figures are missing"
}
# peer_ok NAME: the peer is installed and may run.
peer_ok() {
	[ ${#RUNAS[@]} -gt 0 ] && command -v "$1" >/dev/null || return 1
	[ "$1" != nohang ] || [ -r "$TMP/nohang.conf" ]
}
# peer_start NAME LOG [REPORT_S]: start one peer (earlyoom --dryrun, or
# nohang --monitor on its stock config) unprivileged; PEER_PID.
peer_start() {
	local name=$1 log=$2 rep=${3:-0}
	PEER_PID=
	peer_ok "$name" || return 1
	case $name in
	earlyoom) "${RUNAS[@]}" earlyoom --dryrun -r "$rep" </dev/null {KT_LOCK_FD}>&- >"$log" 2>&1 & ;;
	nohang) "${RUNAS[@]}" nohang --monitor -c "$TMP/nohang.conf" </dev/null {KT_LOCK_FD}>&- >"$log" 2>&1 & ;;
	esac
	PEER_PID=$!
	kt_track "$PEER_PID"
}
# peer_actions LOG: how many lines of LOG say the peer acted / would act.
peer_actions() {
	grep -ciE "$PEER_ACT_RE" "$1" 2>/dev/null || true
}
