#!/bin/bash
# SPDX-License-Identifier: MIT
# test-kernel-oom-count.sh - psi-lmkd counts and says its own misses: kills
# the kernel's OOM killer made where it watches (issue 31, item 1).
#
# In a fresh 64 MiB test group, psi-lmkd watches the group's memory
# (memory_cgroup) with one tier whose band (oom_score_adj >= 1000) holds
# nobody, so it cannot act; a memhog wanting 128 MiB at adj 0 then makes the
# kernel's OOM killer kill in the group.
#
# Asserted: the kernel OOM-killed in the group (the setup works); the daemon
# logs "the kernel's OOM killer killed 1 process in the memory cgroup ...";
# its SIGUSR1 status line says "1 kernel OOM kills"; `psi-lmkd --status
# --json` has "kernel_oom_kills":1 and the metrics file
# psi_lmkd_kernel_oom_kills_total 1. Before that kill every count is 0.
# Exit: 0 pass, 1 fail, 77 skip (CI=true turns non-kernel skips into fails).

set -u

srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$srcdir/tests/kernel/lib.sh" || { echo "cannot source $srcdir/tests/kernel/lib.sh" >&2; exit 99; }
# shellcheck source-path=SCRIPTDIR source=e2e-body.sh
. "$srcdir/tests/kernel/e2e-body.sh" || { echo "cannot source $srcdir/tests/kernel/e2e-body.sh" >&2; exit 99; }

kt_require_root_and_psi
kt_install_traps
e2e_find_binaries memhog
command -v jq >/dev/null || kt_skip_or_fail "jq is missing (apt-get install jq)"
tmp=$(kt_tmpdir)
kt_cgroup_create psi-lmkd-test 64
mkdir -m 700 "$tmp/m" || kt_fail "mkdir $tmp/m"

kt_write_conf -m "$tmp/c.conf" <<CONF
control_socket = $tmp/ctl
metrics_file = $tmp/m/psi-lmkd.prom

[tier nobody]
trigger = some 100ms 2s
min_oom_score_adj = 1000
CONF
log=$tmp/daemon.log
kt_daemon_up "$tmp/c.conf" "$log" -v
daemon=$KT_DAEMON_PID
from=$(wc -l <"$log")
kt_daemon_status "$log" "$daemon" "$from" >/dev/null
grep -q ' 0 kernel OOM kills' "$log" || e2e_fail "the status line does not say 0 kernel OOM kills at start"
o0=$(kt_oom_kills)

kt_spawn_in_cgroup -o "$tmp/hog.out" "$KT_BINDIR/memhog" 128 0 >/dev/null
hog=$KT_LAST_PID
kt_wait_for 20 kt_pid_dead "$hog" || e2e_fail "the memhog wanting 128 MiB in a 64 MiB group is still alive"
[ "$(kt_oom_kills)" -gt "$o0" ] || e2e_fail "the kernel did not OOM-kill in the group: the test proves nothing"
kt_log "the kernel OOM-killed pid $hog in the group ($(kt_oom_kills) kills there)"

from=$(wc -l <"$log")
kill -USR1 "$daemon"
kt_wait_for 5 kt__since_has "$log" "$from" ' 1 kernel OOM kills' ||
	e2e_fail "the SIGUSR1 status line does not say 1 kernel OOM kills: $(grep 'status: ' "$log" | tail -n 1)"
line=$(grep -m1 "the kernel's OOM killer killed 1 process in the memory cgroup" "$log") ||
	e2e_fail "no log line saying the kernel's OOM killer killed in the group"
kt_log "log: ${line#*psi-lmkd: }"
n=$("$PSI_LMKD" --status --json -c "$tmp/c.conf" | jq '.kernel_oom_kills') ||
	e2e_fail "psi-lmkd --status --json failed"
[ "$n" = 1 ] || e2e_fail "--status --json says kernel_oom_kills $n, not 1"
kt_wait_for 5 grep -qx 'psi_lmkd_kernel_oom_kills_total 1' "$tmp/m/psi-lmkd.prom" ||
	e2e_fail "the metrics file does not say psi_lmkd_kernel_oom_kills_total 1: $(grep kernel_oom "$tmp/m/psi-lmkd.prom")"
e2e_daemon_check "after the kernel's OOM kill"
kill -TERM "$daemon" 2>/dev/null
echo "kernel OOM kill counted: log line, SIGUSR1 status, --status --json and metrics all say 1"
echo "PASS"
exit 0
