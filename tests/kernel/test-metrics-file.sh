#!/bin/bash
# SPDX-License-Identifier: MIT
# test-metrics-file.sh - metrics_file cannot be made to block the daemon
# (review 31676fe M-4): the file is written through a temporary file that
# psi-lmkd creates itself (O_EXCL, a random name), in a directory that only
# root or the daemon's user may write, checked at load and at each write.
#
# In a fresh 128 MiB test group, one tier "low_available = 100%,
# low_swap = 100%, min_oom_score_adj = 1000" (it fires at once; only an
# adj 1000 process is in its band), metrics_file in $tmp/metrics (root's,
# 755):
#  - the metrics file is written at start;
#  - nobody (uid 65534) cannot plant anything in that directory;
#  - the directory is then made sticky and world-writable (as a shared
#    textfile-collector directory), and nobody plants a FIFO at the old
#    temporary name PATH.tmp, as in the review's reproducer;
#  - an 8 MiB memhog comes into the band (its adj raised from 999 to 1000
#    once it is ready): it is killed within 5 s, the
#    metrics write after the kill is refused with a log line naming the
#    directory and its mode (the daemon does not block: it answers SIGUSR1
#    with its status lines, and is not asleep in wait_for_partner);
#  - the directory is made 755 again and a second memhog arrives: killed,
#    and the metrics file says 2 kills; the FIFO was neither opened nor
#    removed, and no temporary file is left in the directory;
#  - a config whose metrics_file is in a world-writable directory (sticky
#    or not) is refused by --check-config with file:line, and the daemon
#    does not start on it.
# Exit: 0 pass, 1 fail, 77 skip (CI=true turns non-kernel skips into fails).

set -u

srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$srcdir/tests/kernel/lib.sh" || { echo "cannot source $srcdir/tests/kernel/lib.sh" >&2; exit 99; }
# shellcheck source-path=SCRIPTDIR source=policy-body.sh
. "$srcdir/tests/kernel/policy-body.sh" || { echo "cannot source $srcdir/tests/kernel/policy-body.sh" >&2; exit 99; }

pol_init
command -v setpriv >/dev/null || kt_skip_or_fail "setpriv is missing (util-linux)"
kt_cgroup_create psi-lmkd-test 128

# nobody may traverse $tmp (root's, 755) but write only where we let it
chmod 755 "$tmp" || e2e_fail "chmod $tmp"
dir=$tmp/metrics
metrics=$dir/psi-lmkd.prom
mkdir -m 755 "$dir" || e2e_fail "mkdir $dir"
# metrics_conf FILE: the config, with metrics_file = FILE
metrics_conf() {
	pol_conf -m <<EOF
kill_timeout = 1s
control_socket = off
metrics_file = $1

[tier test]
low_available = 100%
hold_idle = false
low_swap = 100%
min_oom_score_adj = 1000
EOF
}
as_nobody() {
	setpriv --reuid=65534 --regid=65534 --clear-groups "$@"
}
# victim_killed N NAME: an 8 MiB memhog comes into the band (adj 1000); it
# must be kill #N within 5 s.
victim_killed() {
	local t pid line
	# at adj 999 until it is ready: out of the band, or it would die before
	pol_hog "$2" 8 999
	pid=$KT_LAST_PID
	t=$(date +%s%N)
	echo 1000 >"/proc/$pid/oom_score_adj" || e2e_fail "cannot set the adj of $pid to 1000"
	pol_wait_kills "$1" 5
	line=$(pol_kill_line "$1")
	[ "$(e2e_kv "$line" pid)" = "$pid" ] || e2e_fail "kill #$1 is not the adj 1000 memhog $pid: $line"
	kt_log "kill #$1 $(awk -v a="$t" -v b="$(date +%s%N)" 'BEGIN { printf "%.2f", (b - a) / 1e9 }') s after the victim came into the band: $line"
}

metrics_conf "$metrics"
pol_daemon_start -v
kt_wait_for 5 test -s "$metrics" || e2e_fail "no metrics file at start"
grep -q '^psi_lmkd_kills_total{tier="test",reason="low_memory"} 0$' "$metrics" ||
	e2e_fail "metrics at start: $(cat "$metrics")"
! as_nobody mkfifo "$metrics.tmp" 2>/dev/null || e2e_fail "nobody could plant a FIFO in the daemon's directory"

# -------------- the directory shared after start, a FIFO planted: no block --
chmod 1777 "$dir" || e2e_fail "chmod $dir"
as_nobody mkfifo "$metrics.tmp" || e2e_fail "nobody cannot make a FIFO in the sticky world-writable $dir"
victim_killed 1 victim-1
refused="metrics_file $metrics not written: metrics_file: the directory $dir is writable by its group or others (mode 1777)"
kt_wait_for 5 grep -qF -- "$refused" "$log" || e2e_fail "no '$refused' line after kill #1"
from=$(wc -l <"$log")
kt_daemon_status "$log" "$daemon" "$from" test >/dev/null
wchan=$(cat "/proc/$daemon/wchan" 2>/dev/null)
[ "$wchan" != wait_for_partner ] || e2e_fail "the daemon sleeps in wait_for_partner (a FIFO's open)"
kt_log "after kill #1: SIGUSR1 answered, the daemon's wchan is '${wchan:-?}'"

# ------------------------- the directory private again: written, nothing left --
chmod 755 "$dir" || e2e_fail "chmod $dir"
victim_killed 2 victim-2
kt_wait_for 5 grep -q '^psi_lmkd_kills_total{tier="test",reason="low_memory"} 2$' "$metrics" ||
	e2e_fail "the metrics file does not say 2 kills: $(grep kills_total "$metrics")"
[ -p "$metrics.tmp" ] || e2e_fail "the FIFO planted at $metrics.tmp is gone"
left=$(find "$dir" -mindepth 1 ! -name psi-lmkd.prom ! -name psi-lmkd.prom.tmp)
[ -z "$left" ] || e2e_fail "left in $dir: $left"
[ "$(stat -c %a "$metrics")" = 644 ] || e2e_fail "the metrics file's mode is $(stat -c %a "$metrics")"
e2e_daemon_check "at the end"
pol_daemon_stop

# --------------------------- a world-writable directory: refused at load --
for mode in 1777 0777; do
	shared=$tmp/shared-$mode
	if ! { mkdir "$shared" && chmod "$mode" "$shared"; }; then
		e2e_fail "mkdir $shared"
	fi
	metrics_conf "$shared/psi-lmkd.prom"
	line=$(grep -n '^metrics_file' "$conf" | cut -d: -f1)
	want="$conf:$line: metrics_file: the directory $shared is writable by its group or others (mode $mode)"
	if out=$("$PSI_LMKD" -c "$conf" --check-config 2>&1); then
		e2e_fail "--check-config accepted metrics_file in a directory of mode $mode"
	fi
	grep -qF -- "$want" <<<"$out" || e2e_fail "--check-config with a $mode directory says: $out"
	kt_log "mode $mode: $want"
done
log=$tmp/daemon-refused.log
pol_start_fails "metrics_file in a world-writable directory" "metrics_file: the directory $shared is writable"

echo "---- daemon log ----"
pol_strip <"$tmp/daemon.log" | sed 's/^/  /'
echo "PASS"
exit 0
