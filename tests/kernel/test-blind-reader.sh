#!/bin/bash
# SPDX-License-Identifier: MIT
# test-blind-reader.sh - the daemon must not be blinded by another reader of
# its pressure file (DESIGN.md section 5(a)).
#
# On Linux 6.5+ an unprivileged trigger (window a multiple of 2 s, no
# CAP_SYS_RESOURCE) is served by the 2-second averages worker, which updates
# triggers only when now >= avg_next_update; every read of the pressure file
# also advances avg_next_update without updating triggers, so a process that
# reads the file often (a monitoring agent, "watch cat") starves the trigger
# silently.  Here a reader outside the test cgroup reads the watched
# memory.pressure file every 10 ms for the whole test while the daemon runs
# the end-to-end kill test (e2e-body.sh) with tier "some 100ms 2s" on an
# unprivileged kernel trigger (if the test has CAP_SYS_RESOURCE, the daemon
# and the control below run without it).  It must still kill 950, 700, 300
# in that order, the first within KT_BLIND_FIRST_KILL_MAX (12) s of pressure
# and all three within KT_BLIND_TIMEOUT (30) s.
#
# Control (reported, not asserted): a bare kernel trigger with the same
# parameters on the same file, armed by psiagree for the same time, counts
# the events the kernel delivered despite the reader (expected: few or none).
# The reader's actual rate is checked (>= 50 reads/s), or the test would not
# test what it claims.
# Exit: 0 pass, 1 fail, 77 skip (CI=true turns non-kernel skips into fails).

set -u

srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$srcdir/tests/kernel/lib.sh" || { echo "cannot source $srcdir/tests/kernel/lib.sh" >&2; exit 99; }
# shellcheck source-path=SCRIPTDIR source=e2e-body.sh
. "$srcdir/tests/kernel/e2e-body.sh" || { echo "cannot source $srcdir/tests/kernel/e2e-body.sh" >&2; exit 99; }

E2E_TRIGGER="some 100ms 2s"
E2E_EXPECT_SOURCE=kernel
E2E_UNPRIVILEGED=1
E2E_FIRST_KILL_MAX=${KT_BLIND_FIRST_KILL_MAX:-12}
E2E_TIMEOUT=${KT_BLIND_TIMEOUT:-30}
# -vv: debug lines say when and why the tier fired (reported, not asserted).
E2E_DAEMON_FLAGS=(-vv)
BLIND_PERIOD=0.01
BLIND_MIN_RATE=50

# blind_reader FILE OUT: read FILE every BLIND_PERIOD s, forever; every 20
# reads, write "reads N start T0 now T" (EPOCHREALTIME seconds) to OUT.  No
# fork per read: the shell's read builtin reads the whole file, and a timed
# read on a pipe that never has data is the sleep; OUT is replaced whole
# (printf, mv) so that it is valid whenever the reader dies.  No signal trap (a trap that runs inside a timed read can
# leave a forked copy of the loop behind): it is stopped with SIGKILL.
blind_reader() {
	local file=$1 out=$2 n=0 sfd start=$EPOCHREALTIME
	exec {sfd}<> <(:)
	while :; do
		IFS= read -r -d '' _ <"$file"
		n=$((n + 1))
		if [ $((n % 20)) -eq 0 ]; then
			printf 'reads %s start %s now %s\n' "$n" "$start" "$EPOCHREALTIME" >"$out.new" &&
				mv -f "$out.new" "$out"
		fi
		read -r -t "$BLIND_PERIOD" -u "$sfd" _
	done
}

e2e_hook_setup() {
	# Started before the daemon arms its trigger and kept for the whole test.
	blind_reader "$KT_PRESSURE" "$tmp/blind.count" </dev/null >/dev/null 2>&1 &
	blind=$!
	kt_track "$blind"
	kt_log "blind reader started: pid $blind reads $KT_PRESSURE every ${BLIND_PERIOD}s"
	# its first count (20 reads) proves it reads
	kt_wait_for 5 test -s "$tmp/blind.count" ||
		kt_fail "the blind reader left no count within 5 s (alive: $(kt_pid_alive "$blind" && echo yes || echo no))"
	kt_pid_alive "$blind" || kt_fail "the blind reader died at once"
}

control=
e2e_hook_started() {
	# The control: a bare kernel trigger on the same file, same parameters.
	if [ ! -x "$KT_BINDIR/psiagree" ]; then
		kt_log "psiagree not built: no control"
		return 0
	fi
	"${KT_UNPRIV_WRAP[@]}" "$KT_BINDIR/psiagree" "$KT_PRESSURE" - some 100ms 2s "$((E2E_TIMEOUT + KT_E2E_SETTLE_S + 5))s" \
		</dev/null >"$tmp/control.out" 2>&1 &
	control=$!
	kt_track "$control"
	control_t0=$(date +%s%N)
}

e2e_hook_report() {
	local reads secs rate k u ck cs t_start t_now
	# The control ran for the same time as the reader under pressure.
	if [ -n "$control" ]; then
		kill -TERM "$control" 2>/dev/null
		wait "$control" 2>/dev/null
		ck=$(grep -c '^kernel ' "$tmp/control.out")
		cs=$(awk -v a="$control_t0" -v b="$(date +%s%N)" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')
	fi

	kt_pid_alive "$blind" || e2e_fail "the blind reader died during the test"
	kill -KILL "$blind" 2>/dev/null
	wait "$blind" 2>/dev/null
	[ -s "$tmp/blind.count" ] || e2e_fail "the blind reader left no count"
	read -r _ reads _ t_start _ t_now <"$tmp/blind.count"
	secs=$(awk -v a="$t_start" -v b="$t_now" 'BEGIN { printf "%.3f", b - a }')
	rate=$(awk -v n="$reads" -v s="$secs" 'BEGIN { printf "%.0f", (s > 0 ? n / s : 0) }')
	printf 'blind reader: %s reads of %s in %s s (%s/s)\n' "$reads" "$KT_PRESSURE" "$secs" "$rate"
	[ "$rate" -ge "$BLIND_MIN_RATE" ] ||
		e2e_fail "the blind reader read only $rate times/s (< $BLIND_MIN_RATE): the test did not test starvation"

	# For the record (the wording of debug lines is not asserted).
	k=$(grep -c -- 'tier test fired (' "$log")
	u=$(grep -c -- 'before its kernel trigger reported it' "$log")
	printf 'daemon: tier test fired %s times, %s of them on its userspace shadow monitor before the kernel trigger\n' "$k" "$u"
	if [ -n "$control" ]; then
		printf 'control: a bare kernel trigger "some 100ms 2s" on the same file got %s events in %s s\n' "$ck" "$cs"
		sed 's/^/    control | /' "$tmp/control.out"
	fi
}

KT_E2E_SETTLE_S=${KT_E2E_SETTLE:-8}
e2e_main
