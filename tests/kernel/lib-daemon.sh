# shellcheck shell=bash
# lib-daemon.sh - the daemon under test in psi-lmkd's real-kernel tests: its config,
# starting it with a stamped log, asking its status.
# Sourced by lib.sh (source lib.sh, not this file); uses its kt_log/kt_fail and kt_track.

# kt__us TIME: a "seconds.fraction" time (date +%s.%N, EPOCHREALTIME) in
# integer microseconds.
kt__us() {
	local s=${1%%.*} f=${1#*.}000000
	[ "$s" = "$1" ] && f=000000
	printf '%s\n' $(( 10#$s * 1000000 + 10#${f:0:6} ))
}

# kt__stamp T0_US: copy stdin to stdout, each line prefixed "[SSSS.mmm] " =
# seconds since T0_US (the time base of kt_log).  No fork per line.
kt__stamp() {
	local t0=$1 line now d
	while IFS= read -r line; do
		now=$(kt__us "$EPOCHREALTIME")
		d=$(( (now - t0) / 1000 ))
		printf '[%4d.%03d] %s\n' $(( d / 1000 )) $(( d % 1000 )) "$line"
	done
}

# kt_daemon_start CONF LOG [FLAG...]: start "$PSI_LMKD -f FLAG... -c CONF"
# in the background (a child of this shell, not in the test group), with
# stdout and stderr in LOG, each line stamped "[SSSS.mmm] " in seconds on
# kt_log's time base (see kt_log_time).  Sets KT_DAEMON_PID and tracks it.
# Call it in the main shell (not in $(...)).
kt_daemon_start() {
	local conf=$1 log=$2 t0
	shift 2
	[ -n "${PSI_LMKD:-}" ] && [ -x "$PSI_LMKD" ] || kt_fail "kt_daemon_start: PSI_LMKD not set"
	t0=$(kt__us "$KT_T0")
	if [ -n "${KT_LOCK_FD:-}" ]; then
		# Neither the daemon (nor its on_kill hooks) nor the stamper may
		# hold the kernel-test lock beyond this test.
		"$PSI_LMKD" -f "$@" -c "$conf" </dev/null {KT_LOCK_FD}>&- \
			2> >(exec {KT_LOCK_FD}>&-; kt__stamp "$t0" >"$log") >&2 &
	else
		"$PSI_LMKD" -f "$@" -c "$conf" </dev/null 2> >(kt__stamp "$t0" >"$log") >&2 &
	fi
	KT_DAEMON_PID=$!
	kt_track "$KT_DAEMON_PID"
}

# kt_daemon_status LOG PID FROM [TIER]: send SIGUSR1 to the daemon PID and
# echo the "status tier=" lines (of TIER only, if given) that its LOG gets
# after line FROM; fails the test if none come within 5 s.
kt_daemon_status() {
	local log=$1 pid=$2 from=$3 pattern="status tier=${4:-}"
	kill -USR1 "$pid" 2>/dev/null || kt_fail "cannot send SIGUSR1 to the daemon $pid"
	kt_wait_for 5 sh -c "tail -n +$((from + 1)) '$log' | grep -q '$pattern'" ||
		kt_fail "no '$pattern' line in $log within 5 s of SIGUSR1"
	sleep 0.2	# the other tiers' lines follow at once
	tail -n +"$((from + 1))" "$log" | grep "$pattern"
}

# kt_log_time LINE: echo the "[SSSS.mmm]" stamp of a kt_daemon_start log
# line as seconds (e.g. 12.345).
kt_log_time() {
	local re='^\[ *([0-9]+\.[0-9]+)\]'
	[[ $1 =~ $re ]] && printf '%s\n' "${BASH_REMATCH[1]}"
}
