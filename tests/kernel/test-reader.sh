#!/bin/bash
# SPDX-License-Identifier: MIT
# test-reader.sh - on stall, the reader, not the biggest (issue 27 item 4):
# when a process thrashes a mapped file beside a bigger idle process that
# its owner marked as more expendable (a tab renderer at adj 300), a stall
# tier kills the reader, which causes the stall, and the idle process lives.
#
# In a fresh 256 MiB test group (no swap): an idle memhog of IDLE_MIB (110)
# MiB at adj 300, then filepressure reading a FILE_MIB (400) MiB file on
# disk through a mapping, over and over, at adj 0. It grows nothing of its
# own (its pages are page cache) and takes few major faults (readahead and
# fault-around map many pages per fault); what marks it is what it reads
# from storage (/proc/PID/io read_bytes). psi-lmkd, scoped to the group,
# victim_order badness (the default), one tier:
#
#   [tier thrash]  trigger = some 200ms 2s   min_events = 2   min_oom_score_adj = 0
#
# (two in a row: in a TCG guest on a 40 MiB/s disk the reader's stall comes
# in bursts, and three in a row of 300 ms did not come in 60 s on 6.12)
#
# By the kernel's badness the idle memhog weighs 110 MiB + 30 % of 256 MiB
# = 187 MiB; the reader at most what of the file is resident (< 146 MiB).
# Control (first; proves the setup discriminates): culprit_growth = off:
# the first kill is the idle memhog.
# Main: the default culprit_growth (1 % of the domain, at least 4 MiB): the
# first kill is the reader, its kill line carries read_kb= of at least 4
# MiB and no grew_kb, the idle memhog lives, exactly one kill, the group's
# kernel OOM kill counter stays 0.
# Exit: 0 pass, 1 fail, 77 skip (CI=true turns non-kernel skips into fails).

set -u

srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$srcdir/tests/kernel/lib.sh" || { echo "cannot source $srcdir/tests/kernel/lib.sh" >&2; exit 99; }
# shellcheck source-path=SCRIPTDIR source=e2e-body.sh
. "$srcdir/tests/kernel/e2e-body.sh" || { echo "cannot source $srcdir/tests/kernel/e2e-body.sh" >&2; exit 99; }

LIMIT_MIB=256
IDLE_MIB=110
FILE_MIB=400

kt_require_root_and_psi
kt_install_traps
e2e_find_binaries
tmp=$(kt_tmpdir)
kt_disk_tmpdir "$FILE_MIB"
daemon=
# the file once, outside the test groups: filepressure keeps a file of the
# right size, so neither run writes it inside its group. Written back before
# the runs (conv=fsync): filepressure drops the file's page cache at its
# start, and dirty pages cannot be dropped -- on a slow disk (the guests'
# 40 MiB/s) most of the file stayed resident, charged to the group that
# wrote it, and the reader's RSS (211 MiB in a 256 MiB group) outweighed
# the idle memhog in the control run
dd if=/dev/urandom of="$KT_DISK_DIR/data" bs=1M count="$FILE_MIB" conv=fsync status=none ||
	kt_fail "cannot write the $FILE_MIB MiB file in $KT_DISK_DIR"

# run NAME CULPRIT_GROWTH_LINE: a fresh group with the idle memhog, the
# daemon, then the reader; waits for the first kill; sets idle, reader, line.
run() {
	e2e_idle_group psi-lmkd-reader "$LIMIT_MIB" "$IDLE_MIB" 300 "$1"
	conf=$tmp/$1.conf
	log=$tmp/$1.log
	kt_write_conf -m "$conf" <<EOF
kill_timeout = 1s
victim_order = badness
$2

[tier thrash]
trigger = some 200ms 2s
min_events = 2
min_oom_score_adj = 0
EOF
	kt_daemon_up "$conf" "$log" -vv
	daemon=$KT_DAEMON_PID
	e2e_daemon_check "during startup ($1)"
	kt_spawn_in_cgroup -o "$tmp/reader.$1.out" "$KT_BINDIR/filepressure" "$KT_DISK_DIR/data" "$FILE_MIB" 0 >/dev/null
	reader=$KT_LAST_PID
	kt_wait_ready "$tmp/reader.$1.out" "$reader" 60
	kt_log "$1: idle memhog $idle ($IDLE_MIB MiB, adj 300), reader $reader ($FILE_MIB MiB file, adj 0)"
	e2e_wait_first_kill "$reader" "the reader" 120
	line=$(e2e_kill_lines | head -n 1)
	kt_log "$1: $line"
}

# ------------------------------------------------------------ control run --

run control "culprit_growth = off"
[ "$(e2e_kv "$line" pid)" = "$idle" ] ||
	e2e_fail "control: by badness alone the idle memhog (pid $idle) should go first; the setup does not discriminate: $line"
ctl_line=$line
e2e_stop_daemon
for p in $(kt_cgroup_pids); do kill -KILL "$p" 2>/dev/null; done

# --------------------------------------------------------------- main run --

run main ""
[ "$(e2e_kv "$line" pid)" = "$reader" ] || e2e_fail "the first kill is not the reader (pid $reader): $line"
read_kb=$(e2e_kv "$line" read_kb)
if ! { e2e_is_uint "$read_kb" && [ "$read_kb" -ge 4096 ]; }; then
	e2e_fail "the kill line has no read_kb of at least 4 MiB: $line"
fi
[ -z "$(e2e_kv "$line" grew_kb)" ] || e2e_fail "the reader was chosen as a culprit that grew, not as a reader: $line"
kt_wait_for 5 kt_pid_dead "$reader" || e2e_fail "the reader $reader is alive 5 s after its kill line"
e2e_watch 4 "after the kill" e2e_alive "$idle" "the idle memhog"
[ "$(e2e_kill_count)" -eq 1 ] || e2e_fail "expected exactly one kill, got: $(e2e_kill_lines | tr '\n' '|')"
e2e_oom_check "after psi-lmkd's kill"
sampled=$(grep -c 'sampled the sizes of' "$log")
e2e_stop_daemon

echo "---- daemon log (main: samples, fires and the kill) ----"
grep -E 'sampled the sizes|refaults since|kill pid=|firing' "$log"
echo "---------------------------"
echo "control (culprit_growth = off): $ctl_line"
echo "main: $line"
echo "main: $sampled samples; the idle memhog lives; kernel OOM kills 0"
echo "PASS"
exit 0
