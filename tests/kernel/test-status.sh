#!/bin/bash
# SPDX-License-Identifier: MIT
# test-status.sh - psi-lmkd --status, --candidates and --json against a
# daemon that kills under real pressure, the control socket's permissions
# and peer check, and the metrics file (issue 15).
#
# A fresh 192 MiB test group holds a keeper (memhog, 8 MiB, adj 0) and,
# later, anongrow growing 16 MiB/s at adj 900.  psi-lmkd, scoped to the
# group, has a PSI tier whose band is empty (adj >= 1000: it only shows
# where it runs) and a last resort (low_available = 10%, adj >= 0), a
# control socket and a metrics file in the test's temp dir.
#
# Asserted: before the daemon runs, --status fails (exit 1) and says no
# daemon answers; once it runs, the socket is 0600 in a 0700 directory,
# --status lists both tiers, where each runs, the pressure and memory of
# the group, and no kills; --candidates names the grower as the last
# resort's next victim; uid nobody is refused twice (by the socket's mode,
# and, with the modes opened up, by the daemon's SO_PEERCRED check, which
# logs the refusal); after the kill, --status and --json show it in the
# history (pid, tier, reason) and in the tier's counters; the metrics file
# holds psi_lmkd_kills_total{tier="last-resort",reason="low_memory"} 1 and a
# last-kill timestamp, is replaced atomically (no .tmp left) and not
# rewritten while idle; SIGTERM removes the socket.
# Exit: 0 pass, 1 fail, 77 skip (CI=true turns non-kernel skips into fails).

set -u

srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$srcdir/tests/kernel/lib.sh" || { echo "cannot source $srcdir/tests/kernel/lib.sh" >&2; exit 99; }
# shellcheck source-path=SCRIPTDIR source=e2e-body.sh
. "$srcdir/tests/kernel/e2e-body.sh" || { echo "cannot source $srcdir/tests/kernel/e2e-body.sh" >&2; exit 99; }

LIMIT_MIB=192
RATE=16
GROW_TIMEOUT=$(( LIMIT_MIB / RATE + 8 ))

kt_require_root_and_psi
kt_install_traps
e2e_find_binaries anongrow
command -v jq >/dev/null || kt_skip_or_fail "jq is missing (apt-get install jq)"
command -v setpriv >/dev/null || kt_skip_or_fail "setpriv is missing (util-linux)"
tmp=$(kt_tmpdir)
log=$tmp/daemon.log
daemon=
sock=$tmp/run/control
metrics=$tmp/metrics/psi-lmkd.prom
mkdir -p "$tmp/metrics"

kt_cgroup_create psi-lmkd-test "$LIMIT_MIB"
kt_spawn_in_cgroup -o "$tmp/keeper.out" "$KT_BINDIR/memhog" 8 0 >/dev/null
keeper=$KT_LAST_PID
kt_wait_ready "$tmp/keeper.out" "$keeper" 10
memdir=$(kt_mem_dir)
conf=$tmp/psi-lmkd.conf
kt_write_conf -m "$conf" <<EOF
kill_timeout = 1s
control_socket = $sock
metrics_file = $metrics

[tier watch-only]
trigger = some 100ms 2s
min_oom_score_adj = 1000

[tier last-resort]
low_available = 10%
min_oom_score_adj = 0
EOF

status() { "$PSI_LMKD" -c "$conf" --status "$@"; }

# ------------------------------------------------------ no daemon running --
if out=$(status 2>&1); then
	kt_fail "--status succeeded with no daemon running: $out"
fi
grep -q "no psi-lmkd answers on $sock" <<<"$out" || kt_fail "--status without a daemon says: $out"
kt_log "no daemon: $out"

# ------------------------------------------------------------ daemon runs --
kt_daemon_up "$conf" "$log" -v
daemon=$KT_DAEMON_PID
e2e_daemon_check "during startup"
[ -S "$sock" ] || e2e_fail "no socket at $sock"
[ "$(stat -c %a "$sock")" = 600 ] || e2e_fail "the socket's mode is $(stat -c %a "$sock"), not 600"
[ "$(stat -c %a "$tmp/run")" = 700 ] || e2e_fail "the socket's directory mode is $(stat -c %a "$tmp/run"), not 700"

out=$(status) || e2e_fail "--status failed: $out"
printf '%s\n' "---- status before pressure ----" "$out" "--------------------------------"
grep -Eq '^tier watch-only: some 100ms 2s, (kernel trigger|userspace monitor); kills oom_score_adj >= 1000$' <<<"$out" ||
	e2e_fail "--status does not show the tier watch-only and where it runs"
grep -Eq '^tier last-resort: no PSI trigger, low_available 10(\.00)?%; kills oom_score_adj >= 0$' <<<"$out" ||
	e2e_fail "--status does not show the tier last-resort"
grep -q "^pressure $KT_PRESSURE:\$" <<<"$out" && grep -Eq '^  some avg10=[0-9.]+% ' <<<"$out" ||
	e2e_fail "--status does not show the pressure of $KT_PRESSURE"
grep -Eq "^memory of $memdir: available [0-9]+ of 192 MiB" <<<"$out" ||
	e2e_fail "--status does not show the group's available memory"
grep -q '^last kills: none$' <<<"$out" || e2e_fail "--status shows kills before any"
[ -f "$metrics" ] || e2e_fail "no metrics file at start"
grep -q '^psi_lmkd_kills_total{tier="last-resort",reason="low_memory"} 0$' "$metrics" ||
	e2e_fail "metrics at start: $(cat "$metrics")"

# ----------------------------------------------------- candidates, refusal --
e2e_grower "$tmp/grow.out" "$RATE" 900
out=$(status --candidates) || e2e_fail "--status --candidates failed: $out"
grep -A1 '^tier last-resort:' <<<"$out" >/dev/null
awk '/^tier last-resort:/ { t = 1; next } /^tier / { t = 0 } t && /next victim:/' <<<"$out" |
	grep -q "next victim: pid $grower (anongrow) uid 0 oom_score_adj 900" ||
	e2e_fail "--candidates does not name the grower $grower for last-resort: $out"
awk '/^tier watch-only:/ { t = 1; next } /^tier / { t = 0 } t && /next victim:/' <<<"$out" |
	grep -q 'next victim: none' || e2e_fail "--candidates names a victim for the empty band: $out"
kt_log "candidates: $(grep 'next victim: pid' <<<"$out")"

# uid nobody: the socket's mode keeps it out ...
client=$tmp/psi-lmkd-client
cp "$PSI_LMKD" "$client" && chmod 755 "$client" && chmod 711 "$tmp" && chmod 644 "$conf" ||
	kt_fail "cannot prepare the unprivileged client"
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$client" -c "$conf" --status; }
if out=$(as_nobody 2>&1); then
	e2e_fail "uid nobody got the status through a 0600 socket: $out"
fi
grep -q 'Permission denied' <<<"$out" || e2e_fail "nobody's --status says: $out"
kt_log "nobody, socket 0600: $out"
# ... and with the modes opened up, the daemon's peer check does
chmod 711 "$tmp/run" && chmod 666 "$sock" || kt_fail "cannot open up the socket's modes"
from=$(wc -l <"$log")
if out=$(as_nobody 2>&1); then
	e2e_fail "uid nobody got the status from the daemon: $out"
fi
grep -q 'refused the request' <<<"$out" || e2e_fail "nobody's --status (open socket) says: $out"
kt_wait_for 5 sh -c "tail -n +$((from + 1)) '$log' | grep -q 'control: refused a request from uid 65534 (pid [0-9]*): only root and uid 0 may query'" ||
	e2e_fail "the daemon did not log the refusal of uid 65534"
kt_log "nobody, socket 0666: $out; daemon: $(grep -m1 'control: refused' "$log" | sed 's/^\[[^]]*\] //')"
chmod 700 "$tmp/run" && chmod 600 "$sock"

# --------------------------------------------------------------- the kill --
e2e_wait_first_kill "$grower" "the grower" "$GROW_TIMEOUT"
line=$(e2e_kill_lines | head -n 1)
kt_log "kill line: $line"
[ "$(e2e_kv "$line" pid)" = "$grower" ] || e2e_fail "the first kill is not the grower (pid $grower): $line"
kt_wait_for 5 kt_pid_dead "$grower" || e2e_fail "the grower $grower is alive 5 s after its kill line"
kt_wait_for 5 kt_file_has "$log" "pid $grower \\(anongrow\\) exited" || e2e_fail "no exit line for $grower"

out=$(status) || e2e_fail "--status after the kill failed: $out"
printf '%s\n' "---- status after the kill ----" "$out" "-------------------------------"
grep -Eq "^  [0-9T:.-]+Z kill pid=$grower comm=anongrow uid=0 oom_score_adj=900 rss_kb=[0-9]+ size_kb=[0-9]+ badness_kb=[0-9]+ tier=last-resort reason=low_memory cgroup=/[^ ]* some_avg10=[0-9.]+ full_avg10=[0-9.]+ available_kb=[0-9]+\$" <<<"$out" ||
	e2e_fail "--status does not show the kill of $grower in the history"
grep -Eq '^  events=[1-9][0-9]* .* kills=1 .*last_kill=[0-9]+s-ago$' <<<"$(grep -A1 '^tier last-resort:' <<<"$out")" ||
	e2e_fail "--status: the last-resort tier's counters do not show the kill"
json=$(status --json) || e2e_fail "--status --json failed: $json"
jq -e --argjson p "$grower" '.kills_total == 1 and .kills[0].pid == $p and .kills[0].comm == "anongrow"
	and .kills[0].tier == "last-resort" and .kills[0].reason == "low_memory" and .kills[0].dry_run == false
	and .kills[0].available_bytes > 0 and (.tiers | map(select(.name == "last-resort"))[0].kills == 1)
	and (.tiers | map(select(.name == "watch-only"))[0].source | test("^(kernel|userspace)$"))
	and .memory.total_bytes == 192 * 1048576 and .pressure.some.total_us >= 0' <<<"$json" >/dev/null ||
	e2e_fail "--json does not show the kill: $json"
json=$(status --json --candidates) || e2e_fail "--status --json --candidates failed"
jq -e '.tiers[0].candidate == null and .tiers[1].candidate.comm == "memhog"' <<<"$json" >/dev/null ||
	e2e_fail "--json --candidates: after the grower, the keeper is last-resort's next victim: $json"

# ---------------------------------------------------------------- metrics --
grep -q '^psi_lmkd_kills_total{tier="last-resort",reason="low_memory"} 1$' "$metrics" ||
	e2e_fail "metrics after the kill: $(cat "$metrics")"
grep -Eq '^psi_lmkd_last_kill_timestamp_seconds [1-9][0-9]{9}\.[0-9]{3}$' "$metrics" ||
	e2e_fail "no last-kill timestamp in the metrics: $(grep last_kill "$metrics")"
grep -Eq '^psi_lmkd_tier_events_total\{tier="last-resort"\} [1-9]' "$metrics" || e2e_fail "no events in the metrics"
left=$(find "$tmp/metrics" -mindepth 1 ! -name psi-lmkd.prom)
[ -z "$left" ] || e2e_fail "a temporary file left behind: $left"
[ "$(stat -c %a "$metrics")" = 644 ] || e2e_fail "the metrics file's mode is $(stat -c %a "$metrics")"
# idle: no new value, no new file (every write is a new inode, by rename).
# Deliberate: 1 s for a write still due to land, then 3 s in which none may.
sleep 1
ino=$(stat -c %i "$metrics")
sleep 3
[ "$(stat -c %i "$metrics")" = "$ino" ] || e2e_fail "the metrics file was rewritten while nothing changed"
kt_pid_alive "$keeper" || e2e_fail "the keeper died"

# ------------------------------------------------------------------- exit --
kill -TERM "$daemon"
kt_wait_for 5 kt_pid_dead "$daemon" || e2e_fail "the daemon ignores SIGTERM"
[ ! -e "$sock" ] || e2e_fail "the socket is left behind after SIGTERM"
echo "---- metrics file ----"
cat "$metrics"
echo "---- daemon log ----"
cat "$log"
echo "PASS"
exit 0
