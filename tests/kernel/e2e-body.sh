# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# e2e-body.sh - the body of psi-lmkd's end-to-end kill tests, shared by
# test-e2e-kill.sh, test-e2e-kill-userspace.sh, test-e2e-kill-privileged.sh
# and test-blind-reader.sh.  Source it after lib.sh, set the E2E_* knobs,
# define the optional hooks, then call e2e_main:
#
#   . "$srcdir/tests/kernel/lib.sh"
#   . "$srcdir/tests/kernel/e2e-body.sh"
#   E2E_TRIGGER="some 100ms 1s"
#   E2E_EXPECT_SOURCE=userspace
#   e2e_main
#
# What it does: in a fresh memory-limited test cgroup, four memhogs
# (oom_score_adj 0, 300, 700, 950) and a filepressure reader (adj 100) whose
# file-backed working set is bigger than the limit, so the group's
# memory.pressure shows real stall.  psi-lmkd (outside the group) watches
# that file with one tier "test" (E2E_TRIGGER), band oom_score_adj >= 200,
# scope = the group.
#
# Expected: kills of the adj 950, 700 and 300 memhogs, in that order, each
# logged as a complete "kill pid=..." line; those three really die; the adj 0
# memhog and the reader (both below the band) survive and are never named;
# the daemon keeps running once the band is empty and kills nothing else
# while the pressure goes on.
#
# Knobs (set before e2e_main):
#   E2E_TRIGGER        the tier's trigger (default "some 100ms 2s")
#   E2E_WRAP           array: command prefix for the daemon, e.g. (unshare -Ur);
#                      it must exec the daemon (same pid)
#   E2E_UNPRIVILEGED   non-empty: run the daemon without CAP_SYS_RESOURCE
#                      (kt_unpriv_wrap: nothing to do unless the test has it),
#                      so that the kernel treats its triggers as unprivileged
#   E2E_DAEMON_FLAGS   array: verbosity flags (default (-v))
#   E2E_EXPECT_SOURCE  what the daemon must say the tier runs on:
#                      "userspace"  the armed line names the userspace monitor;
#                      "kernel"     the armed line names a kernel trigger;
#                      "privileged" a kernel trigger, and "userspace monitor"
#                                   appears nowhere in the log;
#                      ""           no check (default)
#   E2E_FIRST_KILL_MAX seconds of pressure within which kill #1 must come
#                      (default: no bound besides E2E_TIMEOUT)
#   E2E_TIMEOUT        seconds of pressure for all three kills
#                      (default KT_E2E_TIMEOUT or 60)
#   E2E_HELPERS        array: more helpers that must be in KT_BINDIR
# Hooks (define the functions to use them):
#   e2e_hook_prereq    after the root/PSI checks and the lock, before the group
#   e2e_hook_setup     after the group and memhogs exist, before the daemon
#   e2e_hook_started   after the daemon started, before the pressure
#   e2e_hook_report    at the end, after every check passed (before PASS)
# Variables the hooks may use: KT_* from lib.sh, tmp, log (daemon log),
#   daemon (its pid), reader (filepressure pid), t0 (pressure start, ns),
#   hog[adj] (memhog pids), kill_at[1..3] (seconds of pressure).
#
# Environment (from the build's AM_TESTS_ENVIRONMENT):
#   PSI_LMKD   absolute path of the daemon
#   KT_BINDIR  directory with the built memhog and filepressure (and psiagree)
#   srcdir     top source dir (for tests/kernel/lib.sh)
# Tunables: KT_E2E_LIMIT_MIB (128), KT_E2E_FILE_MIB (300), KT_E2E_HOG_MIB (8),
#   KT_E2E_TIMEOUT (60 s for the three kills), KT_E2E_SETTLE (8 s afterwards),
#   KT_DISK_TMPDIR (where the big file goes; must not be tmpfs).
# Exit: 0 pass, 1 fail, 77 skip (CI=true turns non-kernel skips into fails).

E2E_TRIGGER=${E2E_TRIGGER:-some 100ms 2s}
E2E_EXPECT_SOURCE=${E2E_EXPECT_SOURCE:-}
E2E_UNPRIVILEGED=${E2E_UNPRIVILEGED:-}
E2E_FIRST_KILL_MAX=${E2E_FIRST_KILL_MAX:-}
E2E_TIMEOUT=${E2E_TIMEOUT:-${KT_E2E_TIMEOUT:-60}}
if ! declare -p E2E_WRAP >/dev/null 2>&1; then E2E_WRAP=(); fi
if ! declare -p E2E_DAEMON_FLAGS >/dev/null 2>&1; then E2E_DAEMON_FLAGS=(-v); fi
if ! declare -p E2E_HELPERS >/dev/null 2>&1; then E2E_HELPERS=(); fi

# e2e_find_binaries: PSI_LMKD and KT_BINDIR (memhog, filepressure and the
# helpers named in the array E2E_HELPERS), or skip/fail.
e2e_find_binaries() {
	local c b
	if [ -z "${PSI_LMKD:-}" ]; then
		for c in ./psi-lmkd "${srcdir:?}/psi-lmkd" "$srcdir/build/psi-lmkd"; do
			if [ -x "$c" ]; then PSI_LMKD=$c; break; fi
		done
	fi
	[ -n "${PSI_LMKD:-}" ] && [ -x "$PSI_LMKD" ] ||
		kt_skip_or_fail "daemon binary not found (set PSI_LMKD; got '${PSI_LMKD:-}')"
	if [ -z "${KT_BINDIR:-}" ]; then
		for c in ./tests/kernel "$(dirname "$0")" "$srcdir/build/tests/kernel"; do
			if [ -x "$c/memhog" ] && [ -x "$c/filepressure" ]; then KT_BINDIR=$c; break; fi
		done
	fi
	for b in memhog filepressure ${E2E_HELPERS[@]+"${E2E_HELPERS[@]}"}; do
		[ -x "${KT_BINDIR:-}/$b" ] ||
			kt_skip_or_fail "helper '$b' not built (set KT_BINDIR; got '${KT_BINDIR:-}')"
	done
}

# On failure, show what the daemon said.
e2e_fail() {
	if [ -n "${log:-}" ] && [ -s "$log" ]; then
		echo "---- daemon log (last 60 lines) ----" >&2
		tail -n 60 "$log" >&2
		echo "------------------------------------" >&2
	fi
	kt_fail "$@"
}

# e2e_stop_daemon: SIGTERM ends the daemon (the pid in $daemon) within 5 s
e2e_stop_daemon() {
	kill -TERM "$daemon" 2>/dev/null
	kt_wait_for 5 kt_pid_dead "$daemon" || e2e_fail "the daemon $daemon ignores SIGTERM"
}

e2e_daemon_check() {
	if kt_pid_dead "$daemon"; then
		wait "$daemon" 2>/dev/null
		e2e_fail "daemon exited (status $?) $1"
	fi
}

# Seconds since the pressure started (the reader got ready).
e2e_since() {
	awk -v a="$t0" -v b="$(date +%s%N)" 'BEGIN { printf "%.1f", (b - a) / 1e9 }'
}

# A kill line: "kill pid=" not preceded by a word character or '-'
# (so "would-kill pid=" does not count), whatever prefix the log adds.
E2E_KILL_RE='(^|[^[:alnum:]_-])kill pid='
e2e_kill_lines() {
	grep -E -- "$E2E_KILL_RE" "$log" 2>/dev/null
}
e2e_kill_count() {
	e2e_kill_lines | wc -l
}

# e2e_has_kill [PID]: true once the log has a kill line (naming PID, if given).
e2e_has_kill() {
	if [ -n "${1:-}" ]; then
		e2e_kill_lines | grep -Eq "(^|[[:space:]])pid=$1([[:space:]]|\$)"
	else
		[ "$(e2e_kill_count)" -ge 1 ]
	fi
}

# e2e_oom_check WHEN: fail if the kernel OOM killer has killed in the
# memory-limit group (kt_oom_kills), saying WHEN.
e2e_oom_check() {
	local o
	o=$(kt_oom_kills)
	[ "$o" = 0 ] || e2e_fail "the kernel OOM killer acted in the group (oom_kill=$o) $1"
}

# e2e_grower OUT ARG...: start "anongrow ARG..." (RATE ADJ [...]) in the
# test group with its output in OUT and wait until it is ready; its pid in
# grower, the time it started (kt_elapsed) in start.
# e2e_idle_group PREFIX LIMIT_MIB HOG_MIB ADJ TAG: a fresh test group
# (kt_cgroup_create PREFIX LIMIT_MIB) holding an idle memhog of HOG_MIB at
# ADJ, its output in $tmp/idle.TAG.out; sets idle. Fails if the fresh group
# already counts a kernel OOM kill.
e2e_idle_group() {
	kt_cgroup_create "$1" "$2"
	kt_spawn_in_cgroup -o "$tmp/idle.$5.out" "$KT_BINDIR/memhog" "$3" "$4" >/dev/null
	idle=$KT_LAST_PID
	kt_wait_ready "$tmp/idle.$5.out" "$idle" 20
	[ "$(kt_oom_kills)" = 0 ] || kt_fail "a fresh group has OOM kill counter '$(kt_oom_kills)', not 0"
}

e2e_grower() {
	local out=$1
	shift
	kt_spawn_in_cgroup -o "$out" "$KT_BINDIR/anongrow" "$@" >/dev/null
	grower=$KT_LAST_PID
	kt_wait_ready "$out" "$grower" 10
	start=$(kt_elapsed)
}

# e2e_wait_first_kill PID WHAT TIMEOUT_S [CMD...]: wait for the first kill
# line while PID (WHAT, e.g. "the grower") grows; on every round the kernel
# OOM killer must not have acted, CMD (if any) must pass and the daemon must
# live.  Fails if PID dies without a kill line or none comes in TIMEOUT_S.
e2e_wait_first_kill() {
	local pid=$1 what=$2 timeout=$3 deadline
	shift 3
	deadline=$(( $(date +%s) + timeout ))
	until e2e_has_kill; do
		e2e_oom_check "before psi-lmkd killed anything ($what growing)"
		[ $# -eq 0 ] || "$@"
		if kt_pid_dead "$pid"; then
			# its kill line may still be on its way through the log stamper
			kt_wait_for 1 e2e_has_kill && break
			e2e_fail "$what died without a psi-lmkd kill line (oom_kill=$(kt_oom_kills))"
		fi
		e2e_daemon_check "while $what grew"
		[ "$(date +%s)" -lt "$deadline" ] || e2e_fail "no kill within ${timeout}s ($what growing)"
		sleep 0.05
	done
}

# e2e_watch SECONDS WHEN [CMD...]: for SECONDS, every 0.2 s, the daemon
# must live (WHEN says when, in the failure) and CMD, if any, must pass:
# the "nothing else happens" stretch after the last expected kill.
e2e_watch() {
	local end=$(( $(date +%s) + $1 )) when=$2
	shift 2
	while [ "$(date +%s)" -lt "$end" ]; do
		e2e_daemon_check "$when"
		[ $# -eq 0 ] || "$@"
		sleep 0.2
	done
}

# e2e_alive PID NAME [PID NAME...]: fail if one of the PIDs is dead.
e2e_alive() {
	while [ $# -ge 2 ]; do
		kt_pid_alive "$1" || e2e_fail "$2 (pid $1) died (kill lines: $(e2e_kill_lines | tr '\n' '|'))"
		shift 2
	done
}

# e2e_killed_after N PID: true if a kill line after the Nth names PID.
e2e_killed_after() {
	e2e_kill_lines | sed -n "$(($1 + 1)),\$p" | grep -Eq "(^|[[:space:]])pid=$2([[:space:]]|\$)"
}

# e2e_alive_unless_later N PID NAME [PID NAME...]: fail if one of the PIDs
# died other than by a kill after the Nth. On a slow machine (a TCG guest)
# the daemon's next kill, under pressure that goes on, can come before the
# test looks at the bystanders; whether that kill took the right process is
# the next kill's check, not this one's. A death no later kill line names
# within 2 s (the line can follow the signal) -- a wrong group kill, a
# crash, the kernel -- still fails.
e2e_alive_unless_later() {
	local n=$1
	shift
	while [ $# -ge 2 ]; do
		kt_pid_alive "$1" || kt_wait_for 2 e2e_killed_after "$n" "$1" ||
			e2e_fail "$2 (pid $1) died, and no kill after #$n names it (kill lines: $(e2e_kill_lines | tr '\n' '|'))"
		shift 2
	done
}

# e2e_kv LINE KEY: the value of " KEY=value" in LINE.
e2e_kv() {
	local re="(^|[[:space:]])$2=([^[:space:]]*)"
	[[ $1 =~ $re ]] && printf '%s' "${BASH_REMATCH[2]}"
}
e2e_is_uint() {
	case $1 in ''|*[!0-9]*) return 1 ;; esac
}

# The line that tells how tier "test" was armed.
e2e_armed_line() {
	grep -E -m1 -- 'tier test armed' "$log" 2>/dev/null
}

# e2e_check_source: the E2E_EXPECT_SOURCE check on the armed line.
e2e_check_source() {
	local armed
	[ -n "$E2E_EXPECT_SOURCE" ] || return 0
	kt_wait_for 5 e2e_armed_line >/dev/null ||
		e2e_fail "the daemon never logged how tier test was armed ('tier test armed')"
	armed=$(e2e_armed_line)
	case $E2E_EXPECT_SOURCE in
	userspace)
		[[ $armed == *"userspace monitor"* ]] ||
			e2e_fail "tier test ($E2E_TRIGGER) should run on the userspace monitor: $armed"
		[[ $armed != *"kernel trigger"* ]] ||
			e2e_fail "tier test ($E2E_TRIGGER) should not run on a kernel trigger: $armed"
		;;
	kernel|privileged)
		[[ $armed == *"kernel trigger"* ]] ||
			e2e_fail "tier test ($E2E_TRIGGER) should run on a kernel trigger: $armed"
		if [ "$E2E_EXPECT_SOURCE" = privileged ] && grep -q -- 'userspace monitor' "$log"; then
			e2e_fail "privileged run: the log mentions the userspace monitor: $(grep -m3 -- 'userspace monitor' "$log")"
		fi
		;;
	*) kt_fail "e2e: unknown E2E_EXPECT_SOURCE '$E2E_EXPECT_SOURCE'" ;;
	esac
	kt_log "tier source ok ($E2E_EXPECT_SOURCE): $armed"
}

e2e_main() {
	local adj got c n seen deadline i line want key rss uid end lines badness
	LIMIT_MIB=${KT_E2E_LIMIT_MIB:-128}
	FILE_MIB=${KT_E2E_FILE_MIB:-300}
	HOG_MIB=${KT_E2E_HOG_MIB:-8}
	SETTLE=${KT_E2E_SETTLE:-8}

	kt_require_root_and_psi
	kt_install_traps
	e2e_find_binaries
	if [ -n "$E2E_UNPRIVILEGED" ]; then
		kt_unpriv_wrap
		E2E_WRAP=("${KT_UNPRIV_WRAP[@]}" "${E2E_WRAP[@]}")
	fi
	if declare -F e2e_hook_prereq >/dev/null; then e2e_hook_prereq; fi

	# -------------------------------------------------------- the group --

	kt_cgroup_create psi-lmkd-test "$LIMIT_MIB"
	tmp=$(kt_tmpdir)
	kt_disk_tmpdir "$FILE_MIB"	# sets KT_DISK_DIR (not tmpfs: we need file cache)
	log=$tmp/daemon.log
	conf=$tmp/psi-lmkd.conf
	daemon=

	declare -gA hog			# adj -> pid
	for adj in 0 300 700 950; do
		kt_spawn_in_cgroup -o "$tmp/memhog-$adj.out" \
			"$KT_BINDIR/memhog" "$HOG_MIB" "$adj" >/dev/null
		hog[$adj]=$KT_LAST_PID
		kt_wait_ready "$tmp/memhog-$adj.out" "${hog[$adj]}" 20
		got=$(cat "/proc/${hog[$adj]}/oom_score_adj" 2>/dev/null)
		[ "$got" = "$adj" ] || kt_fail "memhog ${hog[$adj]}: oom_score_adj is '$got', not $adj"
	done
	kt_log "memhogs ready: adj0=${hog[0]} adj300=${hog[300]} adj700=${hog[700]} adj950=${hog[950]}"
	if declare -F e2e_hook_setup >/dev/null; then e2e_hook_setup; fi

	# ------------------------------------------------------- the daemon --

	kt_write_conf "$conf" <<-EOF
	kill_timeout = 1s

	[tier test]
	trigger = $E2E_TRIGGER
	min_oom_score_adj = 200
	EOF

	# shellcheck disable=SC2034 # read by kt_daemon_start
	KT_DAEMON_WRAP=(${E2E_WRAP[@]+"${E2E_WRAP[@]}"})
	kt_daemon_up "$conf" "$log" "${E2E_DAEMON_FLAGS[@]}"
	KT_DAEMON_WRAP=()
	daemon=$KT_DAEMON_PID
	kt_log "daemon started: pid $daemon${E2E_WRAP[*]:+ (under: ${E2E_WRAP[*]})}, trigger '$E2E_TRIGGER'"
	e2e_daemon_check "during startup"
	e2e_check_source
	if declare -F e2e_hook_started >/dev/null; then e2e_hook_started; fi

	# -------------------------------------------------------- pressure --

	kt_spawn_in_cgroup -o "$tmp/filepressure.out" \
		"$KT_BINDIR/filepressure" "$KT_DISK_DIR/data" "$FILE_MIB" 100 >/dev/null
	reader=$KT_LAST_PID
	kt_wait_ready "$tmp/filepressure.out" "$reader" 180
	t0=$(date +%s%N)
	kt_log "filepressure ready: pid $reader (${FILE_MIB} MiB file, ${LIMIT_MIB} MiB limit)"

	# --------------------------------------------- wait for three kills --

	seen=0
	deadline=$(( $(date +%s) + E2E_TIMEOUT ))
	declare -ga kill_at=()
	while [ "$seen" -lt 3 ]; do
		n=$(e2e_kill_count)
		while [ "$seen" -lt "$n" ]; do
			seen=$((seen + 1))
			kill_at[seen]=$(e2e_since)
			kt_log "kill #$seen seen after ${kill_at[$seen]} s of pressure"
		done
		[ "$seen" -ge 3 ] && break
		if [ -n "$E2E_FIRST_KILL_MAX" ] && [ "$seen" -eq 0 ] &&
		   awk -v s="$(e2e_since)" -v m="$E2E_FIRST_KILL_MAX" 'BEGIN { exit !(s > m) }'; then
			e2e_fail "no kill within ${E2E_FIRST_KILL_MAX}s of pressure"
		fi
		e2e_daemon_check "while waiting for kills"
		kt_pid_alive "$reader" || e2e_fail "filepressure $reader died while waiting for kills"
		if [ "$(date +%s)" -ge "$deadline" ]; then
			e2e_fail "only $seen of 3 kills within ${E2E_TIMEOUT}s of pressure"
		fi
		sleep 0.2
	done
	if [ -n "$E2E_FIRST_KILL_MAX" ] &&
	   awk -v s="${kill_at[1]}" -v m="$E2E_FIRST_KILL_MAX" 'BEGIN { exit !(s > m) }'; then
		e2e_fail "kill #1 came after ${kill_at[1]} s of pressure, more than ${E2E_FIRST_KILL_MAX}s"
	fi

	# -------------------------------------------------------- the lines --

	uid=$(id -u)
	mapfile -t lines < <(e2e_kill_lines)
	i=0
	for adj in 950 700 300; do
		line=${lines[i]}
		i=$((i + 1))
		want=${hog[$adj]}
		for key in pid comm uid oom_score_adj rss_kb size_kb badness_kb tier stall_us window_us reason; do
			[ -n "$(e2e_kv "$line" "$key")" ] ||
				e2e_fail "kill #$i lacks $key=: $line"
		done
		# the kernel's points: at least the RSS (adj >= 0 here), never "?" (the domain is readable)
		badness=$(e2e_kv "$line" badness_kb)
		e2e_is_uint "$badness" && [ "$badness" -ge "$(e2e_kv "$line" rss_kb)" ] ||
			e2e_fail "kill #$i: badness_kb=$badness, expected a number >= rss_kb: $line"
		[ "$(e2e_kv "$line" pid)" = "$want" ] ||
			e2e_fail "kill #$i should be the adj $adj memhog (pid $want): $line"
		[ "$(e2e_kv "$line" oom_score_adj)" = "$adj" ] ||
			e2e_fail "kill #$i: oom_score_adj should be $adj: $line"
		[ "$(e2e_kv "$line" comm)" = memhog ] || e2e_fail "kill #$i: comm should be memhog: $line"
		[ "$(e2e_kv "$line" uid)" = "$uid" ] || e2e_fail "kill #$i: uid should be $uid: $line"
		[ "$(e2e_kv "$line" tier)" = test ] || e2e_fail "kill #$i: tier should be test: $line"
		rss=$(e2e_kv "$line" rss_kb)
		# the one size: resident + swap + page tables, never below the RSS
		[ "$(e2e_kv "$line" size_kb)" -ge "$rss" ] 2>/dev/null ||
			e2e_fail "kill #$i: size_kb below rss_kb: $line"
		e2e_is_uint "$rss" && [ "$rss" -ge $((HOG_MIB * 1024 * 9 / 10)) ] ||
			e2e_fail "kill #$i: rss_kb=$rss, expected >= ~$((HOG_MIB * 1024)) for a $HOG_MIB MiB memhog: $line"
		for key in stall_us window_us; do
			e2e_is_uint "$(e2e_kv "$line" "$key")" || e2e_fail "kill #$i: $key is not a number: $line"
		done
		kt_wait_for 5 kt_pid_dead "$want" ||
			e2e_fail "kill #$i: pid $want (adj $adj) is still alive 5 s after its kill line"
		printf 'kill #%d: adj %-3s pid %-7s after %5s s of pressure  [%s]\n' \
			"$i" "$adj" "$want" "${kill_at[$i]}" "$line"
	done

	# ----------------------------- band empty: keep pressure, no more kills --

	kt_log "band empty; keeping pressure for ${SETTLE}s"
	e2e_watch "$SETTLE" "after the band became empty" e2e_alive \
		"$reader" "filepressure (not a candidate: adj 100 < 200)" "${hog[0]}" "the adj 0 memhog (not a candidate)"
	n=$(e2e_kill_count)
	[ "$n" -eq 3 ] || e2e_fail "expected exactly 3 kill lines, got $n"
	mapfile -t lines < <(e2e_kill_lines)
	for line in "${lines[@]}"; do
		case $(e2e_kv "$line" pid) in
		"${hog[0]}"|"$reader") e2e_fail "a non-candidate was named in a kill line: $line" ;;
		esac
	done
	e2e_daemon_check "at the end"
	# Again at the end: the privileged check covers the whole log.
	e2e_check_source

	# The daemon's own account of its tier (SIGUSR1 status lines).
	kt_daemon_status "$log" "$daemon" "$(wc -l <"$log")" >/dev/null

	if declare -F e2e_hook_report >/dev/null; then e2e_hook_report; fi

	# One read of the group's pressure, for the record (not during the wait:
	# frequent reads starve unprivileged triggers).
	printf 'group pressure at the end: %s\n' "$(tr '\n' ' ' <"$KT_PRESSURE")"
	printf 'trigger "%s"%s: kills after %s / %s / %s s of pressure (limit %s MiB, file %s MiB, memhogs %s MiB)\n' \
		"$E2E_TRIGGER" "${E2E_WRAP[*]:+ under ${E2E_WRAP[*]}}" \
		"${kill_at[1]}" "${kill_at[2]}" "${kill_at[3]}" "$LIMIT_MIB" "$FILE_MIB" "$HOG_MIB"
	grep -E -- 'status( |:)' "$log" | tail -n 4
	echo "---- daemon log (last 30 lines) ----"
	tail -n 30 "$log"
	echo "PASS"
	exit 0
}
