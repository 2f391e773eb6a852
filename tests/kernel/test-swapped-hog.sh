#!/bin/bash
# SPDX-License-Identifier: MIT
# test-swapped-hog.sh - a hog whose memory sits in swap is a candidate
# (C-2 of review-31676fe).
#
# With swap (a zram device this test adds and removes), in a fresh 256 MiB
# test group:
#   - the hog: memhog 160 MiB at adj 0, run as root, which then pages all of
#     it out (MADV_PAGEOUT): VmRSS a few hundred kB, VmSwap ~160 MiB;
#   - a bystander: memhog 24 MiB resident at adj 0, run as uid 65534.
# One tier that fires at once (low_available = 100%, low_swap = 100%) with
# the shipped profile's min_rss = 4M.
#
# Asserted: the first kill is the hog (size_kb counts its swap: size_kb >=
# 150 MiB while rss_kb < 4 MiB), before any kill of the bystander of another
# user (the tier keeps firing, so the bystander may die second). Before the fix min_rss looked at VmRSS alone: the hog was
# "small", never a candidate, and the other user's process died instead.
# Exit: 0 pass, 1 fail, 77 skip (CI=true turns non-kernel skips into fails;
# a kernel without zram skips).

set -u

srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$srcdir/tests/kernel/lib.sh" || { echo "cannot source $srcdir/tests/kernel/lib.sh" >&2; exit 99; }
# shellcheck source-path=SCRIPTDIR source=e2e-body.sh
. "$srcdir/tests/kernel/e2e-body.sh" || { echo "cannot source $srcdir/tests/kernel/e2e-body.sh" >&2; exit 99; }

HOG_MIB=160
BYSTANDER=65534

kt_require_root_and_psi
kt_install_traps
e2e_find_binaries memhog
command -v setpriv >/dev/null 2>&1 || kt_skip_or_fail "no setpriv(1) to run processes as other uids"
tmp=$(kt_tmpdir)
chmod 711 "$tmp" || kt_fail "chmod $tmp"
bin=$tmp/bin
mkdir -m 755 "$bin" && cp "$KT_BINDIR/memhog" "$bin/memhog" && chmod 755 "$bin/memhog" ||
	kt_fail "cannot copy memhog into $bin"

kt_zram_add 512M 256M
kt_cgroup_create psi-lmkd-test 256
kt_cgroup_allow_swap $((512 * 1024 * 1024))

kt_spawn_in_cgroup -o "$tmp/hog.out" "$bin/memhog" "$HOG_MIB" 0 pageout >/dev/null
hog=$KT_LAST_PID
kt_wait_ready "$tmp/hog.out" "$hog" 30
kt_spawn_in_cgroup -o "$tmp/by.out" setpriv --reuid=$BYSTANDER --regid=$BYSTANDER --clear-groups \
	"$bin/memhog" 24 0 >/dev/null
by=$KT_LAST_PID
kt_wait_ready "$tmp/by.out" "$by" 30

mem() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }
hog_rss=$(mem "$hog" VmRSS) hog_swap=$(mem "$hog" VmSwap) by_rss=$(mem "$by" VmRSS)
kt_log "hog $hog: VmRSS $hog_rss kB, VmSwap $hog_swap kB, oom_score $(cat "/proc/$hog/oom_score"); bystander $by (uid $BYSTANDER): VmRSS $by_rss kB, oom_score $(cat "/proc/$by/oom_score")"
[ "${hog_swap:-0}" -ge $((HOG_MIB * 1024 * 9 / 10)) ] ||
	e2e_fail "the hog has only ${hog_swap:-?} kB in swap: MADV_PAGEOUT did not page it out, the test would prove nothing"
[ "${hog_rss:-0}" -lt 4096 ] ||
	e2e_fail "the hog still has $hog_rss kB resident: above min_rss, the test would prove nothing"

kt_write_conf "$tmp/c.conf" <<CONF
control_socket = off
min_rss = 4M
kill_timeout = 2s

[tier last-resort]
low_available = 100%
hold_idle = false
low_swap = 100%
min_oom_score_adj = 0
CONF
log=$tmp/daemon.log
kt_daemon_up "$tmp/c.conf" "$log" -v
daemon=$KT_DAEMON_PID
kt_wait_for 20 e2e_has_kill || e2e_fail "no kill within 20 s (a tier that fires at once)"
line=$(e2e_kill_lines | head -n 1)
kill -TERM "$daemon" 2>/dev/null
kt_log "first kill: $line"
[ "$(e2e_kv "$line" pid)" = "$hog" ] ||
	e2e_fail "the first kill is not the hog in swap (pid $hog) but: $line"
size=$(e2e_kv "$line" size_kb) rss=$(e2e_kv "$line" rss_kb)
e2e_is_uint "$size" && [ "$size" -ge $((HOG_MIB * 1024 * 9 / 10)) ] ||
	e2e_fail "size_kb=$size does not count the hog's swap: $line"
kt_wait_for 5 kt_pid_dead "$hog" || e2e_fail "the hog $hog is still alive 5 s after its kill"
printf 'swapped hog: VmRSS %s kB, VmSwap %s kB; killed first with rss_kb=%s size_kb=%s, before the bystander (uid %s, %s kB resident)\n' \
	"$hog_rss" "$hog_swap" "$rss" "$size" "$BYSTANDER" "$by_rss"
echo "PASS"
exit 0
