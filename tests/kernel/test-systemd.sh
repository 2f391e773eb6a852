#!/bin/bash
# SPDX-License-Identifier: MIT
# test-systemd.sh - psi-lmkd.service under a real systemd.
#
# This machine's PID 1 need not be systemd: a Debian 12 container with
# systemd is booted with systemd-nspawn from a cached mmdebstrap image
# ($PSI_LMKD_TEST_CACHE, default /var/cache/psi-lmkd-test/bookworm; built
# once, kept outside the source tree; each run works on an overlay of it).
# The source tree is configured and built for /usr and /etc in a scratch
# directory and installed into the container with `make install DESTDIR=`,
# so the unit under test is exactly the one `make install` ships, plus a
# drop-in with a short WatchdogSec=. Then, all through systemctl inside the
# container: start (Type=notify: returns on READY=1), active with a
# StatusText, still active with no restart after two watchdog periods,
# reload (good file: still active, same pid; bad file: still active, same
# pid, the error logged with file:line), psi-lmkd --status on the default
# socket in RuntimeDirectory=, a would-kill of a sleep started for it found
# with journalctl MESSAGE_ID= with its PSI_LMKD_* fields (and only there, not
# again as a stderr line), and in --status --json, stop (clean exit).
#
# The daemon cannot hurt anything: dry_run = true and a scope no process is
# in (but for the would-kill: a scope holding only the test's sleep). The container is always shut down and the overlay removed.
# Needs root, systemd-nspawn (Debian: systemd-container), overlayfs or space
# for a copy, and for the first run mmdebstrap plus a Debian mirror.
# Exit: 0 pass, 1 fail, 77 skip (CI=true turns non-kernel skips into fails).

# shellcheck disable=SC2016 # awk programs in single quotes
set -u

srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
KT_NAME=test-systemd.sh
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$srcdir/tests/kernel/lib.sh" || { echo "cannot source $srcdir/tests/kernel/lib.sh" >&2; exit 99; }

# shellcheck source-path=SCRIPTDIR source=container.sh
. "$srcdir/tests/kernel/container.sh" || { echo "cannot source $srcdir/tests/kernel/container.sh" >&2; exit 99; }
WATCHDOG_S=2
ct_install_traps "psi-lmkd-test-$$"

# ---------------------------------------------------------------- helpers

phase_t0=$(date +%s.%N)
# phase NAME: log how long the previous phase took
phase() {
	local now
	now=$(date +%s.%N)
	kt_log "$(awk -v a="$phase_t0" -v b="$now" 'BEGIN { printf "%.1f s", b - a }') $1"
	phase_t0=$now
}

prop() { ctl systemctl show -p "$1" --value psi-lmkd.service; }
# shellcheck disable=SC2317 # called through kt_wait_for
journal_has() { ctl journalctl -b --no-pager -u psi-lmkd.service | grep -qF -- "$1"; }

# ---------------------------------------------------------------- prerequisites

ct_require "no /proc/pressure/memory"
[ -x "$srcdir/configure" ] || kt_skip_or_fail "$srcdir/configure is missing (run autoreconf -fi)"

# ---------------------------------------------------------------- image (cached)

ct_image_ready
phase "image ready: $IMAGE"

# ---------------------------------------------------------------- root and install

ct_root_prepare psi-lmkd-systemd
mkdir -p "$work/build"

if ! (cd "$work/build" &&
	"$srcdir/configure" --prefix=/usr --sysconfdir=/etc --localstatedir=/var --with-systemd=yes \
		--with-systemdsystemunitdir=/lib/systemd/system --with-openrcdir=no --with-androidrcdir=no &&
	make -j"$(nproc)" && make install DESTDIR="$work/root") >"$work/build.log" 2>&1; then
	tail -n 40 "$work/build.log" >&2
	kt_fail "configure/make/make install for the container failed"
fi
unit=$work/root/lib/systemd/system/psi-lmkd.service
[ -f "$unit" ] || kt_fail "make install did not install lib/systemd/system/psi-lmkd.service"
grep -qx 'ExecStart=/usr/sbin/psi-lmkd -f' "$unit" || kt_fail "installed unit: ExecStart is not /usr/sbin/psi-lmkd -f"
[ -x "$work/root/usr/sbin/psi-lmkd" ] || kt_fail "make install did not install /usr/sbin/psi-lmkd"

# nothing to kill: dry run, and a scope that no process is in
# write_config MIN_ADJ [PRESSURE_FILE]
write_config() {
	cat >"$work/root/etc/psi-lmkd.conf" <<EOF
[daemon]
pressure = ${2:-/proc/pressure/memory}
scope = /psi-lmkd-test-empty.slice
dry_run = true

[tier kernel]
trigger = some 100ms 2s
min_oom_score_adj = $1

[tier userspace]
trigger = some 70ms 1s
min_oom_score_adj = 800
EOF
}
write_config 0
mkdir -p "$work/root/etc/systemd/system/psi-lmkd.service.d"
printf '[Service]\nWatchdogSec=%ss\nTimeoutStartSec=20s\n' "$WATCHDOG_S" >"$work/root/etc/systemd/system/psi-lmkd.service.d/test.conf"
phase "built and installed into the container (make install DESTDIR=)"

# ---------------------------------------------------------------- boot

ct_boot
[ "$state" = degraded ] && ctl systemctl --failed --no-pager >&2
phase "container booted ($state), its systemd is pid $init here"

# ---------------------------------------------------------------- start

ctl systemctl start psi-lmkd.service || fail_with_logs "systemctl start psi-lmkd failed"
phase "systemctl start returned (READY=1 received)"
[ "$(prop ActiveState)" = active ] || fail_with_logs "not active after start"
status=$(prop StatusText)
[ -n "$status" ] || fail_with_logs "no StatusText after start (STATUS= not sent)"
kt_log "StatusText: $status"
mainpid=$(prop MainPID)
caps=$(ctl awk '/^Cap(Eff|Bnd):/ { printf "%s=%s ", $1, $2 }' "/proc/$mainpid/status")
kt_log "daemon pid $mainpid in the container: $caps"
# nothing outside caps_needed (src/base/caps.c) may be effective: mask of its 7 capabilities
eff=$(ctl awk '/^CapEff:/ { print $2 }' "/proc/$mainpid/status")
[ $((0x$eff & ~0x1884026)) -eq 0 ] || fail_with_logs "CapEff $eff has capabilities outside the kept list"

# ---------------------------------------------------------------- watchdog

# Deliberate: two watchdog periods and a second, after which the unit must
# be the same process, never restarted.
sleep $((WATCHDOG_S * 2 + 1))
[ "$(prop ActiveState)" = active ] || fail_with_logs "not active after two watchdog periods"
[ "$(prop MainPID)" = "$mainpid" ] || fail_with_logs "the daemon was restarted (watchdog?)"
[ "$(prop NRestarts)" = 0 ] || fail_with_logs "NRestarts is $(prop NRestarts)"
[ "$(prop WatchdogUSec)" != 0 ] || fail_with_logs "the watchdog was not enabled (WatchdogUSec=0)"
phase "still active after $((WATCHDOG_S * 2 + 1)) s with WatchdogSec=${WATCHDOG_S}s"

# ---------------------------------------------------------------- reload

# wait_active: after a reload the unit passes through "reloading" until READY=1
# shellcheck disable=SC2317 # called through kt_wait_for
wait_active() { [ "$(prop ActiveState)" = active ] && [ "$(prop SubState)" = running ]; }

# the new file watches a cgroup2 group's memory.pressure: the sandbox must
# let the daemon write triggers there (no ProtectControlGroups=)
cg2=$(ctl awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)
cgpressure=$cg2/system.slice/memory.pressure
ctl test -w "$cgpressure" || fail_with_logs "no $cgpressure in the container"
write_config 100 "$cgpressure"
ctl systemctl reload psi-lmkd.service || fail_with_logs "systemctl reload failed"
kt_wait_for 10 wait_active || fail_with_logs "not active after a reload"
[ "$(prop MainPID)" = "$mainpid" ] || fail_with_logs "the daemon was restarted by a reload"
kt_wait_for 10 journal_has "configuration reloaded" ||
	fail_with_logs "no 'reloaded' line in the journal after a good reload"
# SIGUSR1: one status line per tier, at notice level
ctl systemctl kill -s USR1 --kill-whom=main psi-lmkd.service || fail_with_logs "systemctl kill -s USR1 failed"
kt_wait_for 10 journal_has "status tier=kernel armed=yes source=kernel" ||
	fail_with_logs "SIGUSR1: no 'status tier=kernel armed=yes source=kernel' line after the reload to $cgpressure"
kt_log "StatusText after reload: $(prop StatusText)"

printf '[tier broken]\ntrigger = sometimes 1s 2s\nmin_oom_score_adj = 0\n' >"$work/root/etc/psi-lmkd.conf"
ctl systemctl reload psi-lmkd.service || fail_with_logs "systemctl reload (bad file) failed"
kt_wait_for 10 wait_active || fail_with_logs "not active after a reload with a bad file"
kt_wait_for 10 journal_has "/etc/psi-lmkd.conf:2: " ||
	fail_with_logs "the bad file's error (psi-lmkd.conf:2: ...) is not in the journal"
[ "$(prop MainPID)" = "$mainpid" ] || fail_with_logs "the daemon died or restarted on a bad reload"
[ "$(prop NRestarts)" = 0 ] || fail_with_logs "NRestarts is $(prop NRestarts) after the reloads"
write_config 0
phase "reloaded a good file and refused a bad one, same pid $mainpid"

# ---------------------------------------------------------------- status, journal fields

# psi-lmkd --status through the unit's RuntimeDirectory= (the default socket)
out=$(ctl /usr/sbin/psi-lmkd --status) || fail_with_logs "psi-lmkd --status failed: $out"
grep -q '^tier kernel: some 100ms 2s, ' <<<"$out" || fail_with_logs "psi-lmkd --status: $out"
[ "$(ctl stat -c %a /run/psi-lmkd/control)" = 600 ] || fail_with_logs "the control socket is not 0600"
# a would-kill (dry run) of a process of our own, by a tier that always
# fires (available memory below 100%, swap ignored): one structured entry
ctl systemd-run --unit=psi-lmkd-victim.service /bin/sleep 600 >/dev/null 2>&1 ||
	fail_with_logs "systemd-run of the would-be victim failed"
victim=$(ctl systemctl show -p MainPID --value psi-lmkd-victim.service)
cat >"$work/root/etc/psi-lmkd.conf" <<EOF
[daemon]
scope = /system.slice/psi-lmkd-victim.service
dry_run = true
[tier always]
low_available = 100%
hold_idle = false
low_swap = 100%
min_oom_score_adj = 0
EOF
ctl systemctl reload psi-lmkd.service || fail_with_logs "systemctl reload (would-kill) failed"
mid=3aad526eb9cf4728993578bee98844ab
# shellcheck disable=SC2317 # called through kt_wait_for
has_entry() { ctl journalctl -b --no-pager -o export MESSAGE_ID=$mid | grep -qx "PSI_LMKD_PID=$victim"; }
kt_wait_for 10 has_entry || fail_with_logs "no journal entry with MESSAGE_ID=$mid for pid $victim"
write_config 0
ctl systemctl reload psi-lmkd.service || fail_with_logs "systemctl reload (back) failed"
entry=$(ctl journalctl -b --no-pager -o export -n 1 MESSAGE_ID=$mid)
for f in "PSI_LMKD_ACTION=would-kill" "PSI_LMKD_PID=$victim" "PSI_LMKD_COMM=sleep" "PSI_LMKD_UID=0" \
	"PSI_LMKD_OOM_SCORE_ADJ=0" "PSI_LMKD_TIER=always" "PSI_LMKD_REASON=low_memory" \
	"PSI_LMKD_CGROUP=/system.slice/psi-lmkd-victim.service" "_SYSTEMD_UNIT=psi-lmkd.service"; do
	grep -qx -- "$f" <<<"$entry" || fail_with_logs "journal entry lacks $f: $entry"
done
for f in PSI_LMKD_RSS_KB PSI_LMKD_BADNESS_KB PSI_LMKD_AVAILABLE_KB PSI_LMKD_PRESSURE_SOME_AVG10 PSI_LMKD_PRESSURE_FULL_AVG10; do
	grep -Eqx -- "$f=[0-9.]+" <<<"$entry" || fail_with_logs "journal entry lacks a number in $f: $entry"
done
grep -qx -- "MESSAGE=would-kill pid=$victim comm=sleep .* reason=low_memory cgroup=/system.slice/psi-lmkd-victim.service" <<<"$entry" ||
	fail_with_logs "journal entry's MESSAGE is not the kill line: $entry"
# the line is not in the journal a second time, as plain stderr text
n=$(ctl journalctl -b --no-pager -o cat -u psi-lmkd.service | grep -c "^would-kill pid=$victim ")
m=$(ctl journalctl -b --no-pager -o cat MESSAGE_ID=$mid | grep -c "^would-kill pid=$victim ")
[ "$n" = "$m" ] || fail_with_logs "$n would-kill lines in the unit's journal, $m of them structured"
json=$(ctl /usr/sbin/psi-lmkd --status --json) || fail_with_logs "psi-lmkd --status --json failed"
grep -q "\"dry_run\":true,\"pid\":$victim,\"comm\":\"sleep\"" <<<"$json" ||
	fail_with_logs "--status --json does not show the would-kill of $victim: $json"
ctl systemctl stop psi-lmkd-victim.service
kt_log "journal entry of the would-kill ($m structured entries): $(grep -E '^(MESSAGE|PSI_LMKD_[A-Z_0-9]+)=' <<<"$entry" | tr '\n' ' ')"
phase "--status answered; would-kill found by journalctl MESSAGE_ID=$mid with its fields"

# ---------------------------------------------------------------- stop

ctl systemctl stop psi-lmkd.service || fail_with_logs "systemctl stop failed"
[ "$(prop ActiveState)" = inactive ] || fail_with_logs "not inactive after stop"
[ "$(prop Result)" = success ] || fail_with_logs "Result=$(prop Result) after stop"
[ "$(prop ExecMainStatus)" = 0 ] || fail_with_logs "exit status $(prop ExecMainStatus) after stop"
phase "stopped cleanly (Result=success, exit status 0)"

kt_log "PASS ($(kt_elapsed) s in all)"
exit 0
