# SPDX-License-Identifier: MIT
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
# kt_log's time base (see kt_log_time).  If the array KT_DAEMON_WRAP is set,
# it is the command prefix (e.g. unshare -Ur); it must exec the daemon, so
# that the pid is the daemon's.  Sets KT_DAEMON_PID and tracks it.
# Call it in the main shell (not in $(...)).
kt_daemon_start() {
	local conf=$1 log=$2 t0 wrap=(${KT_DAEMON_WRAP[@]+"${KT_DAEMON_WRAP[@]}"})
	shift 2
	[ -n "${PSI_LMKD:-}" ] && [ -x "$PSI_LMKD" ] || kt_fail "kt_daemon_start: PSI_LMKD not set"
	t0=$(kt__us "$KT_T0")
	if [ -n "${KT_LOCK_FD:-}" ]; then
		# Neither the daemon (nor its on_kill hooks) nor the stamper may
		# hold the kernel-test lock beyond this test.
		${wrap[@]+"${wrap[@]}"} "$PSI_LMKD" -f "$@" -c "$conf" </dev/null {KT_LOCK_FD}>&- \
			2> >(exec {KT_LOCK_FD}>&-; kt__stamp "$t0" >"$log") >&2 &
	else
		${wrap[@]+"${wrap[@]}"} "$PSI_LMKD" -f "$@" -c "$conf" </dev/null 2> >(kt__stamp "$t0" >"$log") >&2 &
	fi
	KT_DAEMON_PID=$!
	kt_track "$KT_DAEMON_PID"
}

# kt_write_conf [-m] [-p PRESSURE] [-s SCOPE] FILE: write the daemon's
# config FILE: a [daemon] section that watches the test group (line 2
# "pressure = $KT_PRESSURE", line 3 "scope = $KT_CG2_REL"; -p and -s name
# others), with -m a line 4 "memory_cgroup = $(kt_mem_dir)" (available
# memory and the OOM domain are the group's, also on a hybrid host), then
# stdin: the section's other keys and the tiers.
kt_write_conf() {
	local pressure=${KT_PRESSURE:-} scope=${KT_CG2_REL:-} mem='' opt OPTIND=1
	while getopts mp:s: opt; do
		case $opt in
		m) mem=$(kt_mem_dir) ;;
		p) pressure=$OPTARG ;;
		s) scope=$OPTARG ;;
		*) kt_fail "kt_write_conf: usage: kt_write_conf [-m] [-p PRESSURE] [-s SCOPE] FILE" ;;
		esac
	done
	shift $((OPTIND - 1))
	[ $# -eq 1 ] || kt_fail "kt_write_conf: no FILE"
	[ -n "$pressure" ] && [ -n "$scope" ] || kt_fail "kt_write_conf: no test group (call kt_cgroup_create first)"
	{
		printf '[daemon]\npressure = %s\nscope = %s\n' "$pressure" "$scope"
		[ -z "$mem" ] || printf 'memory_cgroup = %s\n' "$mem"
		cat
	} >"$1" || kt_fail "cannot write $1"
}

# kt_conf_from_shipped SHIPPED FILE [-e SED_EXPR...]: FILE = the shipped
# config SHIPPED (conf/...) with only what a test group needs changed:
# pressure and scope name the test group, and a memory_cgroup line after
# scope names its memory-limit directory (kt_mem_dir); then the extra sed
# expressions, if any.  SHIPPED must have pressure and scope lines and no
# memory_cgroup line of its own.
kt_conf_from_shipped() {
	local shipped=$1 file=$2 memdir
	shift 2
	memdir=$(kt_mem_dir)
	[ -f "$shipped" ] || kt_fail "no shipped config $shipped"
	grep -Eq '^pressure *=' "$shipped" && grep -Eq '^scope *=' "$shipped" ||
		kt_fail "$shipped has no pressure or scope line to point at the test group"
	grep -Eq '^memory_cgroup *=' "$shipped" && kt_fail "$shipped sets memory_cgroup: the test would override it"
	sed -E -e "s|^pressure *=.*|pressure = $KT_PRESSURE|" \
		-e "s|^scope *=.*|scope = $KT_CG2_REL\nmemory_cgroup = $memdir|" \
		"$@" "$shipped" >"$file" || kt_fail "cannot write $file from $shipped"
	grep -q "^scope = $KT_CG2_REL\$" "$file" || kt_fail "cannot rewrite $shipped for the test group"
}

# kt_daemon_up CONF LOG [FLAG...]: kt_daemon_start, then wait up to 10 s
# for its "psi-lmkd VERSION running: " line; if it exits or stays silent,
# show the log and fail the test.  Sets KT_DAEMON_PID.
kt_daemon_up() {
	local log=$2 rc
	kt_daemon_start "$@"
	# (a daemon that died may still have its last lines in the stamper)
	if ! kt_wait_for 10 kt__up_or_dead "$log" "$KT_DAEMON_PID" ||
	   ! kt_wait_for 1 kt_file_has "$log" 'psi-lmkd [^ ]+ running: '; then
		echo "---- daemon log ($log) ----" >&2
		tail -n 60 "$log" >&2
		if kt_pid_dead "$KT_DAEMON_PID"; then
			wait "$KT_DAEMON_PID" 2>/dev/null
			rc=$?
			kt_fail "the daemon ($1) exited with status $rc before it said 'running'"
		fi
		kt_fail "the daemon ($1) did not say 'running' within 10 s"
	fi
}

# True once LOG says "running", or once PID is dead (no point waiting).
kt__up_or_dead() {
	kt_file_has "$1" 'psi-lmkd [^ ]+ running: ' || kt_pid_dead "$2"
}

# kt_daemon_status LOG PID FROM [TIER]: send SIGUSR1 to the daemon PID and
# echo the "status tier=" lines (of TIER only, if given) that its LOG gets
# after line FROM; fails the test unless the "status: N tiers" line and all
# N tier lines come within 5 s.
kt_daemon_status() {
	local log=$1 pid=$2 from=$3 pattern="status tier=${4:-}" n
	kill -USR1 "$pid" 2>/dev/null || kt_fail "cannot send SIGUSR1 to the daemon $pid"
	kt_wait_for 5 kt__since_has "$log" "$from" 'status: [0-9]+ tiers' ||
		kt_fail "no 'status: N tiers' line in $log within 5 s of SIGUSR1"
	n=$(tail -n +"$((from + 1))" "$log" | sed -nE 's/.*status: ([0-9]+) tiers.*/\1/p' | head -n 1)
	kt_wait_for 5 kt__since_count_ge "$log" "$from" 'status tier=' "$n" ||
		kt_fail "fewer than $n 'status tier=' lines in $log within 5 s of SIGUSR1"
	tail -n +"$((from + 1))" "$log" | grep "$pattern"
}

# kt__since_has LOG FROM ERE: true if LOG has a line matching ERE after line FROM.
kt__since_has() {
	tail -n +"$(($2 + 1))" "$1" | grep -Eq -- "$3"
}

# kt__since_count_ge LOG FROM ERE N: true if LOG has at least N lines
# matching ERE after line FROM.
kt__since_count_ge() {
	[ "$(tail -n +"$(($2 + 1))" "$1" | grep -Ec -- "$3")" -ge "$4" ]
}

# kt_log_time LINE: echo the "[SSSS.mmm]" stamp of a kt_daemon_start log
# line as seconds (e.g. 12.345).
kt_log_time() {
	local re='^\[ *([0-9]+\.[0-9]+)\]'
	[[ $1 =~ $re ]] && printf '%s\n' "${BASH_REMATCH[1]}"
}
