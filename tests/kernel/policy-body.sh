# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# policy-body.sh - shared steps of psi-lmkd's kill-policy tests on the real
# kernel (test-sigterm.sh, test-empty-band.sh, test-gate-available.sh,
# test-kill-cgroup.sh, test-hook.sh, test-last-resort.sh).  Source it after
# lib.sh; it sources e2e-body.sh for e2e_find_binaries, e2e_kv,
# e2e_kill_lines/e2e_kill_count and e2e_fail/e2e_daemon_check, which use the
# globals "log" (daemon log) and "daemon" (its pid) set here.
#
#   . "$srcdir/tests/kernel/lib.sh"
#   . "$srcdir/tests/kernel/policy-body.sh"
#   pol_init [EXTRA_HELPER...]       root/PSI/lock, traps, binaries, tmp, log
#   kt_cgroup_create psi-lmkd-test 128
#   pol_hog NAME MIB ADJ             a memhog in the test group: pid in KT_LAST_PID
#   pol_hog_late NAME MIB ADJ        the same, put at ADJ only once ready (under pressure)
#   pol_conf [-m] <<EOF ... EOF      the config ($conf): kt_write_conf's
#                                    [daemon] header on the test group, then stdin
#   pol_conf_one_tier MIN_ADJ KILL_TIMEOUT   the usual one-tier config
#   pol_daemon_start [FLAG...]       psi-lmkd -f FLAG... -c $conf (default -v)
#   pol_pressure [ADJ]               filepressure in the test group; sets reader, t0
#   pol_wait_kills N TIMEOUT_S       wait for N kill lines
#   pol_kill N TIMEOUT_S [LABEL]     the same; the Nth kill line in line, logged
#   pol_quiet SECONDS                let time pass under pressure; tier test must fire
#   pol_status_value TIER KEY        KEY= of TIER's status line (SIGUSR1)
#   pol_start_fails WHAT PATTERN [FLAG...]  the daemon must exit 1 at start
#   pol_band_kill                    adj 900 memhog dies, adj 300 keeper lives
#   pol_first_kill_is VICTIM TIMEOUT the first kill takes VICTIM; keeper, maker live
#   pol_daemon_stop                  SIGTERM; the daemon must exit 0
#   pol_reload N [ERE]               SIGHUP; wait for reload #N (and a line matching ERE)
#   pol_hook_out                     $out: a directory of nobody's in $tmp, for hooks
#   pol_conf_from_shipped FILE       $conf = a shipped profile, on the test group
#   pol_tier_floor TIER              a tier's min_oom_score_adj in $conf
#   pol_named_copies BIN NAME...     copies of a helper named NAME in $tmp/bin
#   pol_as UID NAME MIB [SETPRIV...] memhog copy NAME, MIB at adj 500, as UID: KT_LAST_PID
#   pol_desktop_set                  pipewire, renderer, editor: pids in pd_pid
#   pol_desktop_runaway RATE         the runaway at adj 0: pid in runaway
#
# Tunables: KT_POL_FILE_MIB (300: the pressure maker's file; with the usual
# 128 MiB limit that is DESIGN.md's recipe), KT_DISK_TMPDIR.

# shellcheck source-path=SCRIPTDIR source=e2e-body.sh disable=SC2154 # srcdir: set by the test script
. "$srcdir/tests/kernel/e2e-body.sh" || { echo "cannot source $srcdir/tests/kernel/e2e-body.sh" >&2; exit 99; }

POL_FILE_MIB=${KT_POL_FILE_MIB:-300}

pol_init() {
	kt_require_root_and_psi
	kt_install_traps
	e2e_find_binaries "$@"
	tmp=$(kt_tmpdir)
	log=$tmp/daemon.log
	conf=$tmp/psi-lmkd.conf
	daemon=
	reader=
}

# pol_hog NAME MIB ADJ [PREFIX...]: start "PREFIX... memhog MIB ADJ" in the
# current test group (PREFIX must exec memhog, e.g. sh -c '...; exec "$0" "$@"'),
# wait until it is ready and check its oom_score_adj.  Output in
# $tmp/NAME.out; pid in KT_LAST_PID.
pol_hog() {
	local name=$1 mib=$2 adj=$3 pid got
	shift 3
	kt_spawn_in_cgroup -o "$tmp/$name.out" "$@" "$KT_BINDIR/memhog" "$mib" "$adj" >/dev/null
	pid=$KT_LAST_PID
	kt_wait_ready "$tmp/$name.out" "$pid" 20
	got=$(cat "/proc/$pid/oom_score_adj" 2>/dev/null)
	[ "$got" = "$adj" ] || kt_fail "$name ($pid): oom_score_adj is '$got', not $adj"
	KT_LAST_PID=$pid
}

# pol_hog_late NAME MIB ADJ: pol_hog at adj 0 (no candidate), then put at
# ADJ once ready: a memhog started at ADJ while a tier fires may be killed
# before pol_hog (or kt_spawn_in_cgroup) has seen it alive. Pid in KT_LAST_PID.
pol_hog_late() {
	pol_hog "$1" "$2" 0
	echo "$3" >"/proc/$KT_LAST_PID/oom_score_adj" || kt_fail "cannot set $1's oom_score_adj to $3"
}

# pol_conf [-m] [-p PRESSURE] [-s SCOPE]: the config into $conf: the
# [daemon] header on the test group (kt_write_conf), then stdin.
pol_conf() {
	kt_write_conf "$@" "$conf"
}

# pol_conf_one_tier MIN_ADJ KILL_TIMEOUT: the usual test config: the test
# group's pressure file and scope, one tier "test" on "some 100ms 2s" (a
# window the kernel accepts without privilege) for oom_score_adj >= MIN_ADJ.
pol_conf_one_tier() {
	pol_conf <<EOF
kill_timeout = $2

[tier test]
trigger = some 100ms 2s
min_oom_score_adj = $1
EOF
}

# pol_daemon_start [FLAG...]: start the daemon on $conf (flags default -v),
# wait for its "running" line.
pol_daemon_start() {
	[ $# -gt 0 ] || set -- -v
	kt_daemon_up "$conf" "$log" "$@"
	daemon=$KT_DAEMON_PID
	e2e_daemon_check "during startup"
	kt_log "daemon started: pid $daemon ($*)"
}

# pol_pressure [ADJ]: filepressure (POL_FILE_MIB file) in the current test
# group with oom_score_adj ADJ (default 0); sets reader and t0 (ns, when it
# got ready).  The file goes to a fresh non-tmpfs dir.
pol_pressure() {
	local adj=${1:-0}
	[ -n "${KT_DISK_DIR:-}" ] || kt_disk_tmpdir "$POL_FILE_MIB"
	kt_spawn_in_cgroup -o "$tmp/filepressure.out" \
		"$KT_BINDIR/filepressure" "$KT_DISK_DIR/data" "$POL_FILE_MIB" "$adj" >/dev/null
	reader=$KT_LAST_PID
	kt_wait_ready "$tmp/filepressure.out" "$reader" 120
	t0=$(date +%s%N)
	kt_log "filepressure ready: pid $reader (${POL_FILE_MIB} MiB file, adj $adj)"
}

# pol_wait_kills N TIMEOUT_S: wait until the log has N kill lines; fail if
# the daemon or the pressure maker dies or the time runs out.
pol_wait_kills() {
	local want=$1 timeout=$2 deadline
	deadline=$(( $(date +%s) + timeout ))
	while [ "$(e2e_kill_count)" -lt "$want" ]; do
		e2e_daemon_check "while waiting for kill #$want"
		if [ -n "$reader" ] && kt_pid_dead "$reader"; then
			e2e_fail "the pressure maker $reader died while waiting for kill #$want"
		fi
		[ "$(date +%s)" -lt "$deadline" ] ||
			e2e_fail "only $(e2e_kill_count) of $want kills within ${timeout}s"
		sleep 0.05
	done
}

# pol_status_value TIER KEY: KEY= of TIER's status line, asked for now
# (SIGUSR1): an answer also proves that the daemon's loop ran up to now.
pol_status_value() {
	e2e_kv "$(kt_daemon_status "$log" "$daemon" "$(wc -l <"$log")" "$1" | tail -n 1)" "$2"
}

# pol_quiet SECONDS: let SECONDS pass under pressure -- a deliberate wait:
# the checks after it say that nothing happened meanwhile -- and prove that
# the interval was processed: tier test's event count (status events=)
# grew, so the daemon saw the pressure go on and judged it.
pol_quiet() {
	local ev0 ev1
	ev0=$(pol_status_value test events)
	sleep "$1"
	ev1=$(pol_status_value test events)
	e2e_is_uint "$ev0" && e2e_is_uint "$ev1" || e2e_fail "no events= in tier test's status lines ($ev0, $ev1)"
	[ "$ev1" -gt "$ev0" ] ||
		e2e_fail "tier test had no event in ${1}s of pressure (events $ev0 -> $ev1): nothing happening proves nothing"
	kt_log "${1}s of pressure: tier test events $ev0 -> $ev1"
}

# pol_start_fails WHAT PATTERN [FLAG...]: start the daemon on $conf (flags
# default -v); it must exit with status 1 within 5 s, log PATTERN (an ERE)
# and never say "running". WHAT names the situation in failure messages.
pol_start_fails() {
	local what=$1 pattern=$2 rc=0
	shift 2
	[ $# -gt 0 ] || set -- -v
	kt_daemon_start "$conf" "$log" "$@"
	daemon=$KT_DAEMON_PID
	kt_wait_for 5 kt_pid_dead "$daemon" || e2e_fail "the daemon still runs 5 s after a start with $what"
	wait "$daemon" || rc=$?
	[ "$rc" -eq 1 ] || e2e_fail "exit status $rc with $what, expected 1"
	kt_wait_for 2 kt_file_has "$log" "$pattern" || e2e_fail "no '$pattern' in the log with $what"
	! kt_file_has "$log" 'running: ' || e2e_fail "the daemon said 'running' with $what"
	kt_log "$what: $(grep -E -m1 -- "$pattern" "$log" | pol_strip) (exit 1)"
}

# pol_band_kill: with the daemon running on a tier for adj >= 500 (or any
# floor in 301..900), start a memhog at adj 900 (victim) and a keeper at adj
# 300 (keeper) in the test group, then filepressure at adj 0; the first kill
# must take the memhog, and the keeper and filepressure must live.
pol_band_kill() {
	local line
	pol_hog memhog-900 8 900
	victim=$KT_LAST_PID
	pol_hog keeper-300 8 300
	keeper=$KT_LAST_PID
	pol_pressure 0
	pol_first_kill_is "$victim" 60
	kt_wait_for 5 kt_pid_dead "$victim" || e2e_fail "the adj 900 memhog $victim is alive after its kill"
	kt_log "killed the adj 900 memhog $victim $(pol_since) s after the pressure started; keeper alive"
}

# pol_first_kill_is VICTIM TIMEOUT_S: wait for the first kill line (in
# kline); it must name VICTIM, and the keeper ($keeper, below the band) and
# the pressure maker must be alive.
pol_first_kill_is() {
	pol_wait_kills 1 "$2"
	kline=$(pol_kill_line 1)
	kt_log "kill #1 after $(pol_since) s of pressure: $kline"
	[ "$(e2e_kv "$kline" pid)" = "$1" ] || e2e_fail "kill #1 is not pid $1: $kline"
	kt_pid_alive "$keeper" || e2e_fail "the keeper (adj 300, below the band) died"
	kt_pid_alive "$reader" || e2e_fail "filepressure (adj 0) died"
}

# pol_kill N TIMEOUT_S [LABEL]: pol_wait_kills N, then the Nth kill line in
# "line", logged with the seconds of pressure before it.
pol_kill() {
	pol_wait_kills "$1" "$2"
	line=$(pol_kill_line "$1")
	kt_log "${3:+$3 }kill #$1 after $(pol_since) s of pressure: $line"
}

# pol_kill_line K: the Kth kill line (1-based).
pol_kill_line() {
	e2e_kill_lines | sed -n "${1}p"
}

# pol_strip LINE...: the log lines without their "[time] psi-lmkd: " prefix.
pol_strip() {
	sed -E 's/^\[[^]]*\] (psi-lmkd: )?//'
}

# pol_daemon_stop: SIGTERM the daemon; it must log that it exits and exit 0
# within 5 s.
pol_daemon_stop() {
	local rc
	e2e_daemon_check "before SIGTERM"
	kill -TERM "$daemon" || e2e_fail "cannot signal the daemon $daemon"
	kt_wait_for 5 kt_pid_dead "$daemon" || e2e_fail "the daemon is alive 5 s after SIGTERM"
	wait "$daemon"
	rc=$?
	[ "$rc" -eq 0 ] || e2e_fail "the daemon exited with status $rc after SIGTERM, not 0"
	kt_wait_for 2 kt_file_has "$log" 'signal [^:]*: exiting' ||
		e2e_fail "no 'signal ...: exiting' line after SIGTERM"
	kt_log "daemon exited 0 on SIGTERM"
}

# pol_reload N [ERE]: SIGHUP the daemon, then wait for its Nth
# "configuration reloaded" line and, if given, a line matching ERE.
pol__reloads_ge() {
	[ "$(grep -c 'configuration reloaded from' "$log")" -ge "$1" ]
}
pol_reload() {
	kill -HUP "$daemon"
	kt_wait_for 5 pol__reloads_ge "$1" || e2e_fail "reload #$1 was not logged"
	[ -z "${2:-}" ] || kt_wait_for 2 kt_file_has "$log" "$2" || e2e_fail "reload #$1: no '$2' line"
}

# pol_hook_out: hooks run as nobody: $tmp becomes traversable (root's, not
# writable by others, which the ownership rule accepts) and $out a
# directory of nobody's in it, the only place they may write.
pol_hook_out() {
	chmod 755 "$tmp" || e2e_fail "chmod $tmp"
	out=$tmp/out
	if ! mkdir "$out" || ! chown nobody "$out"; then
		e2e_fail "cannot give nobody the directory $out"
	fi
}

# pol_since: seconds since the pressure started (t0).
pol_since() {
	awk -v a="$t0" -v b="$(date +%s%N)" 'BEGIN { printf "%.1f", (b - a) / 1e9 }'
}

# pol_report_figures: the daemon's SIGKILL->exit and process_mrelease lines.
pol_report_figures() {
	echo "---- timings from the daemon log ----"
	grep -E 'exited [0-9]+ ms after|process_mrelease|did not exit|sent SIGTERM' "$log" | pol_strip
}

# pol_conf_from_shipped FILE: $conf = the shipped profile FILE (conf/...)
# with only what a test group needs changed (kt_conf_from_shipped: pressure
# and scope name the test group, memory_cgroup its memory-limit directory,
# so that available memory and the OOM domain are the group's, also on a
# hybrid host).
# KT_PROFILE_ORDER=adj|badness replaces its victim_order (to show what a
# profile test catches with the other order). Tiers, order and shields stay.
pol_conf_from_shipped() {
	local shipped=$1 order=()
	[ -z "${KT_PROFILE_ORDER:-}" ] || order=(-e "s|^victim_order *=.*|victim_order = $KT_PROFILE_ORDER|")
	kt_conf_from_shipped "$shipped" "$conf" ${order[@]+"${order[@]}"}
	[ -z "${KT_PROFILE_ORDER:-}" ] || kt_log "KT_PROFILE_ORDER: victim_order = $KT_PROFILE_ORDER instead of the shipped one"
	"$PSI_LMKD" --check-config -c "$conf" >"$tmp/check-config.out" 2>&1 || {
		sed 's/^/    | /' "$tmp/check-config.out" >&2
		kt_fail "the profile generated from $shipped does not check"
	}
	kt_log "config from $shipped: $(grep -E '^(victim_order|tier )' "$tmp/check-config.out" | tr '\n' ';')"
}

# pol_tier_floor TIER: the min_oom_score_adj of [tier TIER] in $conf.
pol_tier_floor() {
	awk -v t="$1" '/^\[/ { in_t = ($0 ~ "^\\[tier " t "\\]") } in_t && $1 == "min_oom_score_adj" { print $3; exit }' "$conf"
}

# pol_named_copies BIN NAME...: copies of the helper $KT_BINDIR/BIN as
# $tmp/bin/NAME (so that comm = NAME), made once.
pol_named_copies() {
	local b=$1 n
	shift
	[ -d "$tmp/bin" ] || mkdir -m 755 "$tmp/bin" || kt_fail "mkdir $tmp/bin"
	for n in "$@"; do
		[ -x "$tmp/bin/$n" ] && continue
		cp "$KT_BINDIR/$b" "$tmp/bin/$n" || kt_fail "cannot copy $b to $tmp/bin/$n"
	done
}

# pol_as UID NAME MIB [SETPRIV_ARG...]: a copy of memhog named NAME, MIB MiB
# at oom_score_adj 500, run as the unprivileged UID (setpriv, with the
# group arguments given, else --clear-groups) in the test group; checked
# for its comm, its four uids and its adj. Pid in KT_LAST_PID.
pol_as() {
	local uid=$1 name=$2 mib=$3 pid
	shift 3
	[ $# -gt 0 ] || set -- --clear-groups
	command -v setpriv >/dev/null 2>&1 || kt_skip_or_fail "no setpriv(1) to run processes as other uids"
	chmod 711 "$tmp" || kt_fail "chmod $tmp"
	pol_named_copies memhog "$name"
	chmod 755 "$tmp/bin" "$tmp/bin/$name" || kt_fail "chmod $tmp/bin/$name"
	kt_spawn_in_cgroup -o "$tmp/$name.out" setpriv --reuid="$uid" --regid="$uid" "$@" "$tmp/bin/$name" "$mib" 500 \
		>/dev/null
	pid=$KT_LAST_PID
	kt_wait_ready "$tmp/$name.out" "$pid" 20
	[ "$(cat "/proc/$pid/comm")" = "$name" ] || kt_fail "pid $pid: comm is '$(cat "/proc/$pid/comm")', not $name"
	[ "$(awk '$1 == "Uid:" { print $2 $3 $4 $5 }' "/proc/$pid/status")" = "$uid$uid$uid$uid" ] ||
		kt_fail "pid $pid does not run as uid $uid: $(grep '^Uid:' "/proc/$pid/status")"
	[ "$(cat "/proc/$pid/oom_score_adj")" = 500 ] || kt_fail "pid $pid: oom_score_adj is not 500"
	KT_LAST_PID=$pid
}

# A desktop session's process set (test-profile-desktop.sh, bench/run
# profiles): name MiB oom_score_adj of the memhog copies, and the runaway.
POL_DESKTOP_SET=("pipewire 24 200" "renderer 64 300" "editor 16 0")
POL_DESKTOP_NAMES=(pipewire renderer editor)

# pol_desktop_set: start the desktop set's memhog copies in the current test
# group, each checked for its oom_score_adj and comm; pids in the associative
# array pd_pid (declared here), by name.
# shellcheck disable=SC2034 # pd_pid is for the caller
pol_desktop_set() {
	local spec n mib adj pid
	declare -gA pd_pid=()
	pol_named_copies memhog "${POL_DESKTOP_NAMES[@]}"
	for spec in "${POL_DESKTOP_SET[@]}"; do
		read -r n mib adj <<<"$spec"
		kt_spawn_in_cgroup -o "$tmp/$n.out" "$tmp/bin/$n" "$mib" "$adj" >/dev/null
		pid=$KT_LAST_PID
		kt_wait_ready "$tmp/$n.out" "$pid" 20
		[ "$(cat "/proc/$pid/oom_score_adj")" = "$adj" ] || kt_fail "$n: oom_score_adj is not $adj"
		[ "$(cat "/proc/$pid/comm")" = "$n" ] || kt_fail "$n: comm is '$(cat "/proc/$pid/comm")'"
		pd_pid[$n]=$pid
	done
}

# pol_desktop_runaway RATE [OUT]: the runaway (an anongrow copy) at adj 0,
# growing RATE MiB/s without end, in the current test group; output in OUT
# (default $tmp/runaway.out), pid in runaway once it is ready.
pol_desktop_runaway() {
	local out=${2:-$tmp/runaway.out}
	pol_named_copies anongrow runaway
	kt_spawn_in_cgroup -o "$out" "$tmp/bin/runaway" "$1" 0 >/dev/null
	runaway=$KT_LAST_PID
	kt_wait_ready "$out" "$runaway" 10
}
