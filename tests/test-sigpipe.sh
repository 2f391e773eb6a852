#!/bin/sh
# SPDX-License-Identifier: MIT
# test-sigpipe: a log line into a broken pipe must not kill the daemon.
# Under OpenRC the daemon's stderr is a pipe to logger; if logger dies, the
# next line the daemon writes gets EPIPE -- and, unless SIGPIPE is dealt
# with, the daemon dies of SIGPIPE (exit status 141 from the shell).
#
# The daemon runs in the foreground, dry run, on a throwaway root made from
# tests/fixtures (a fake /proc with a pressure file and MemAvailable far
# above the only tier's low_available, so nothing ever fires and no trigger
# is written). It never reads the real /proc; the test only reads its own
# child's /proc/PID/status to see which signals it blocks and has pending,
# and needs no privilege.
#  1. control: stderr to a file; SIGUSR1, SIGHUP and SIGTERM each log a line
#     there (so the same signals below really write to stderr);
#  2. stderr into a FIFO whose reader exits as soon as it is open; then
#     SIGUSR1 (status lines), SIGHUP (reload lines), SIGTERM: the daemon must
#     handle each one and exit 0.
# Exit: 0 pass, 1 fail, 99 hard error.
set -u
test_name=test-sigpipe
# shellcheck source-path=SCRIPTDIR source=lib-fixroot.sh
. "${srcdir:-.}/tests/lib-fixroot.sh" || exit 99
note() { echo "# $*" >&2; }
conf=$tmp/sigpipe.conf
printf '[daemon]\ndry_run = true\n[tier last]\nlow_available = 1%%\nmin_oom_score_adj = 0\n' >"$conf"

# ---------------------------------------------------------------- helpers
# low 32 bits of a signal mask field of /proc/PID/status (SIGHUP..SIGTERM
# are bits 0..14), or nothing once the process is gone
mask() {
	v=$(sed -n "s/^$2:[[:space:]]*//p" "/proc/$1/status" 2>/dev/null) || return 1
	[ -n "$v" ] || return 1
	echo $((0x${v#????????}))
}
# waits (10 s at most) until the daemon blocks SIGHUP, SIGUSR1 and SIGTERM:
# from then on they go to its signalfd and are handled in order
wait_armed() {
	i=0
	while [ $i -lt 100 ]; do
		m=$(mask "$pid" SigBlk) || return 1
		[ $((m & 0x4201)) -eq $((0x4201)) ] && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}
# sends a signal and waits (10 s at most) until the daemon has taken it off
# its pending set, i.e. read it from the signalfd; handling runs right after
# and, signals being read one at a time, is over when the next one is taken
send() {
	bit=$(($(kill -l "$1" 2>/dev/null || echo 0) - 1))
	kill -s "$1" "$pid" 2>/dev/null || return 1
	i=0
	while [ $i -lt 100 ]; do
		m=$(mask "$pid" ShdPnd) || return 1
		[ $((m >> bit & 1)) -eq 0 ] && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}
run() {
	exec env -u JOURNAL_STREAM -u NOTIFY_SOCKET "$bin" -f -n -c "$conf" --root "$root"
}
# the daemon is there and not a zombie (a zombie still answers kill -0)
running() {
	grep -q '^State:[[:space:]]*[^Z[:space:]]' "/proc/$pid/status" 2>/dev/null
}
# sets st to the daemon's exit status once it is gone (killed first if still
# there; wait must run in this shell, not in a command substitution)
reap() {
	kill -KILL "$pid" 2>/dev/null
	wait "$pid"
	st=$?
	pid=
}
# USR1, HUP, TERM; then the exit status. $1 names the run.
signals_then_exit() {
	wait_armed || { reap; fail "$1: the daemon did not arm its signals (status $st)"; }
	send USR1 || { reap; fail "$1: the daemon did not take SIGUSR1 (status $st)"; }
	send HUP || { reap; fail "$1: the daemon did not take SIGHUP after SIGUSR1 (status $st)"; }
	kill -s TERM "$pid" 2>/dev/null || { reap; fail "$1: the daemon died on SIGHUP (status $st)"; }
	i=0
	while running && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	reap
	[ "$st" -eq 0 ] || fail "$1: the daemon exited with status $st on SIGTERM$([ "$st" -eq 141 ] && echo ' (SIGPIPE)')"
}

# ---------------------------------------------------------------- 1. control
run 2>"$tmp/stderr" >/dev/null &
pid=$!
signals_then_exit control
for line in 'status: 1 tiers' 'configuration reloaded from' 'exiting'; do
	grep -q "$line" "$tmp/stderr" || { cat "$tmp/stderr" >&2; fail "control: no \"$line\" on stderr"; }
done
note "control: SIGUSR1, SIGHUP and SIGTERM each logged to stderr, exit 0"

# ---------------------------------------------------------------- 2. broken pipe
mkfifo "$tmp/fifo" || exit 99
# the reader opens the FIFO (meeting the daemon's open for writing) and exits
sh -c 'exit 0' <"$tmp/fifo" &
reader=$!
run 2>"$tmp/fifo" >/dev/null &
pid=$!
wait "$reader"
note "the reader of the daemon's stderr is gone"
signals_then_exit "broken pipe"
note "broken pipe: the daemon logged into it on SIGUSR1, SIGHUP and SIGTERM and exited 0"
exit 0
