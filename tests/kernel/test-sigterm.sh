#!/bin/bash
# SPDX-License-Identifier: MIT
# test-sigterm.sh - kill_signal = SIGTERM with term_timeout: a victim that
# ignores SIGTERM gets SIGKILL term_timeout later; one that honours it dies
# of the SIGTERM alone.
#
# In a fresh 128 MiB test group: a memhog that ignores SIGTERM (SIG_IGN set
# by the shell that execs it: an ignored disposition survives exec; checked
# in /proc/PID/status SigIgn) with 8 MiB at adj 900, a plain memhog at adj
# 800, and filepressure (adj 0) for real PSI stall.  One tier:
#
#   trigger = some 100ms 2s   min_oom_score_adj = 500
#   kill_signal = SIGTERM     term_timeout = 1s
#
# Asserted: kill #1 is the adj 900 memhog, followed by "sent SIGTERM ... in
# 1000 ms" and "pid N (memhog) did not exit ... after SIGTERM; sent SIGKILL";
# that process is still alive 0.5 s after its kill line and dead within
# 0.9..2.0 s of it (measured by polling every 20 ms); the "did not exit" line
# says 900..1500 ms.  Kill #2 is the adj 800 memhog: it dies within 0.5 s of
# its kill line, its "exited N ms" line says < 500, and no "did not exit"
# line names it.  The pressure maker survives; exactly two kills.
# Exit: 0 pass, 1 fail, 77 skip (CI=true turns non-kernel skips into fails).

set -u

srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$srcdir/tests/kernel/lib.sh" || { echo "cannot source $srcdir/tests/kernel/lib.sh" >&2; exit 99; }
# shellcheck source-path=SCRIPTDIR source=policy-body.sh
. "$srcdir/tests/kernel/policy-body.sh" || { echo "cannot source $srcdir/tests/kernel/policy-body.sh" >&2; exit 99; }

TIMEOUT=${KT_SIGTERM_TIMEOUT:-25}	# seconds of pressure for both kills

pol_init
kt_cgroup_create psi-lmkd-test 128

# The stubborn one: SIGTERM ignored, then exec memhog (same pid).
# shellcheck disable=SC2016
pol_hog stubborn 8 900 sh -c 'trap "" TERM; exec "$0" "$@"'
stubborn=$KT_LAST_PID
sigign=$(awk '$1 == "SigIgn:" { print $2 }' "/proc/$stubborn/status")
# SIGTERM is signal 15: bit 14 of the mask.
(( (16#$sigign >> 14) & 1 )) || kt_fail "memhog $stubborn does not ignore SIGTERM (SigIgn $sigign)"
pol_hog polite 8 800
polite=$KT_LAST_PID
kt_log "memhogs: stubborn (ignores SIGTERM, adj 900) $stubborn, polite (adj 800) $polite"

pol_conf <<EOF
kill_timeout = 1s

[tier test]
trigger = some 100ms 2s
min_oom_score_adj = 500
kill_signal = SIGTERM
term_timeout = 1s
EOF
pol_daemon_start -v
pol_pressure 0

# ----------------------------------------------- kill #1: SIGTERM ignored --

pol_wait_kills 1 "$TIMEOUT"
seen1=$(kt_elapsed)
line1=$(pol_kill_line 1)
kt_log "kill #1 after $(pol_since) s of pressure: $line1"
[ "$(e2e_kv "$line1" pid)" = "$stubborn" ] || e2e_fail "kill #1 is not the adj 900 memhog $stubborn: $line1"
# Watch it every 20 ms until it dies.
died1=
deadline=$(( $(date +%s) + 5 ))
while [ "$(date +%s)" -lt "$deadline" ]; do
	if kt_pid_dead "$stubborn"; then died1=$(kt_elapsed); break; fi
	sleep 0.02
done
[ -n "$died1" ] || e2e_fail "the SIGTERM-ignoring memhog $stubborn is alive 5 s after its kill line"
k1=$(kt_log_time "$line1")
alive1=$(awk -v a="$k1" -v b="$died1" 'BEGIN { printf "%.3f", b - a }')
kt_log "stubborn memhog died ${alive1} s after its kill line (seen by the test ${seen1}s, died ${died1}s)"
awk -v d="$alive1" 'BEGIN { exit !(d >= 0.9 && d <= 2.0) }' ||
	e2e_fail "the SIGTERM-ignoring memhog died ${alive1} s after its kill line, expected ~1 s (term_timeout)"

grep -qE "sent SIGTERM to pid $stubborn; SIGKILL follows in 1000 ms" "$log" ||
	e2e_fail "no 'sent SIGTERM to pid $stubborn; SIGKILL follows in 1000 ms' line"
escal=$(grep -m1 -E "pid $stubborn \(memhog\) did not exit [0-9]+ ms after SIGTERM; sent SIGKILL" "$log")
[ -n "$escal" ] || e2e_fail "no 'pid $stubborn (memhog) did not exit ... after SIGTERM; sent SIGKILL' line"
esc_ms=$(sed -E 's/.* did not exit ([0-9]+) ms .*/\1/' <<<"$escal")
[ "$esc_ms" -ge 900 ] && [ "$esc_ms" -le 1500 ] ||
	e2e_fail "SIGKILL came $esc_ms ms after SIGTERM, expected ~1000 (term_timeout = 1s): $escal"
# The order in the log: kill line, then the escalation, then the exit.
order=$(grep -nE "kill pid=$stubborn |pid $stubborn \(memhog\) did not exit|pid $stubborn \(memhog\) exited" "$log" | cut -d: -f1 | tr '\n' ' ')
# shellcheck disable=SC2086 # split into line numbers
set -- $order
[ $# -eq 3 ] && [ "$1" -lt "$2" ] && [ "$2" -lt "$3" ] ||
	e2e_fail "expected kill line < 'did not exit' < 'exited' for pid $stubborn, got log lines: $order"
exit1=$(grep -m1 -E "pid $stubborn \(memhog\) exited [0-9]+ ms" "$log")

# ---------------------------------------------- kill #2: SIGTERM honoured --

pol_wait_kills 2 "$TIMEOUT"
line2=$(pol_kill_line 2)
kt_log "kill #2 after $(pol_since) s of pressure: $line2"
[ "$(e2e_kv "$line2" pid)" = "$polite" ] || e2e_fail "kill #2 is not the adj 800 memhog $polite: $line2"
kt_wait_for 2 kt_pid_dead "$polite" || e2e_fail "memhog $polite is alive 2 s after its SIGTERM"
died2=$(kt_elapsed)
k2=$(kt_log_time "$line2")
kt_wait_for 3 kt_file_has "$log" "pid $polite \(memhog\) exited [0-9]+ ms" ||
	e2e_fail "no 'pid $polite (memhog) exited N ms' line"
exit2=$(grep -m1 -E "pid $polite \(memhog\) exited [0-9]+ ms" "$log")
ms2=$(sed -E 's/.* exited ([0-9]+) ms .*/\1/' <<<"$exit2")
[ "$ms2" -lt 500 ] || e2e_fail "the polite memhog exited $ms2 ms after SIGTERM, expected at once: $exit2"
! grep -qE "pid $polite \([^)]*\) did not exit" "$log" ||
	e2e_fail "the daemon escalated to SIGKILL for the polite memhog $polite: $(grep -E "pid $polite \([^)]*\) did not exit" "$log")"
grep -qE "sent SIGTERM to pid $polite;" "$log" || e2e_fail "no 'sent SIGTERM to pid $polite' line"

# No third victim exists (adj 0 reader only); a little more pressure, in
# which the tier must fire and kill nothing.
pol_quiet 3
e2e_daemon_check "at the end"
kt_pid_alive "$reader" || e2e_fail "the pressure maker $reader (adj 0) died"
n=$(e2e_kill_count)
[ "$n" -eq 2 ] || e2e_fail "expected exactly 2 kills, got $n"
pol_daemon_stop

echo "---- daemon log ----"
pol_strip <"$log" | sed 's/^/  /'
pol_report_figures
printf 'stubborn (ignores SIGTERM): SIGKILL %s ms after SIGTERM (daemon), died %s s after its kill line (test, 20 ms polling); %s\n' \
	"$esc_ms" "$alive1" "$(pol_strip <<<"$exit1")"
printf 'polite: %s (test saw it dead %.3f s after the kill line)\n' "$(pol_strip <<<"$exit2")" \
	"$(awk -v a="$k2" -v b="$died2" 'BEGIN { print b - a }')"
echo "PASS"
exit 0
