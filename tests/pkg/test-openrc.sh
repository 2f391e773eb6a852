#!/bin/bash
# SPDX-License-Identifier: MIT
# test-openrc.sh - the OpenRC script (init/psi-lmkd.openrc.in) under a real
# OpenRC: Debian 12's openrc package, booted by sysvinit in a container.
#
# The container comes from tests/kernel/container.sh with CT_INIT=openrc: a
# cached mmdebstrap image of its own ($PSI_LMKD_TEST_CACHE/bookworm-openrc),
# an overlay on it, booted with systemd-nspawn until OpenRC has reached its
# default runlevel. The .deb that test-deb-build.sh left in $PKG_OUT (default
# $top_builddir/deb) gives the daemon and /etc/psi-lmkd.conf; the package
# does not ship the OpenRC script (debian/rules), so the script is the
# source's, with the package's paths filled in as `make` fills them. Then,
# through rc-service as an administrator would:
#  - start succeeds, status says started, supervise-daemon runs the daemon
#    with -f -c /etc/psi-lmkd.conf and the options of /etc/conf.d/psi-lmkd,
#    and the daemon logs that its tiers are armed into /var/log/psi-lmkd.log
#    (the script's default on this OpenRC, which cannot pipe into a logger);
#  - reload logs the daemon's "configuration reloaded", in the same process;
#    status_log makes it log its status (SIGUSR1);
#  - a daemon killed with SIGKILL is restarted by supervise-daemon;
#  - a reload with a broken configuration fails, shows the daemon's
#    file:line message and leaves the daemon running on the old one;
#  - stop ends the daemon and the supervisor and removes the pidfile;
#  - start with the broken configuration fails with the file:line message,
#    and no daemon is left;
#  - rc-update add psi-lmkd default, then `openrc default` starts it (its
#    depend() resolves in the runlevel);
#  - an error_logger set in /etc/conf.d/psi-lmkd, which this OpenRC's
#    supervise-daemon would ignore: start warns, the lines reach the file.
# The daemon cannot hurt anything: /etc/conf.d/psi-lmkd adds -n (dry run),
# and it runs in the container's pid namespace anyway.
# Needs root and systemd-nspawn; exit 0 pass, 1 fail, 77 skip (CI=true: a
# missing tool or image fails).

set -u
# run by make check-pkg: the outer make's TESTS= must not reach the makes below
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES

srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
out=${PKG_OUT:-${top_builddir:-$srcdir/build}/deb}
KT_NAME=test-openrc.sh
# shellcheck source-path=SCRIPTDIR source=../kernel/lib.sh
. "$srcdir/tests/kernel/lib.sh" || { echo "cannot source $srcdir/tests/kernel/lib.sh" >&2; exit 99; }

CT_INIT=openrc
CT_LOG=/var/log/psi-lmkd.log
# shellcheck source-path=SCRIPTDIR source=../kernel/container.sh
. "$srcdir/tests/kernel/container.sh" || { echo "cannot source $srcdir/tests/kernel/container.sh" >&2; exit 99; }
CT_CTL_TIMEOUT=60
ct_install_traps "psi-lmkd-openrc-$$"

# ---------------------------------------------------------------- prerequisites

ct_require "the script's start_pre refuses to start"
ct_find_deb "$out"

ct_image_ready
openrc_version=$(dpkg-query --admindir="$IMAGE/var/lib/dpkg" -W -f='${Version}' openrc 2>/dev/null)
kt_log "OpenRC ${openrc_version:-?} (Debian 12's openrc), PID 1 sysvinit, in $IMAGE"

ct_root_prepare psi-lmkd-openrc
root=$work/root
cp "$deb" "$root/root/psi-lmkd.deb" || kt_fail "cannot copy $deb into the container"
# the script as `make` fills it in, with the package's paths
if ! sed -e 's|@sbindir[@]|/usr/sbin|g' -e 's|@sysconfdir[@]|/etc|g' \
	"$srcdir/init/psi-lmkd.openrc.in" >"$root/etc/init.d/psi-lmkd" ||
	! chmod 755 "$root/etc/init.d/psi-lmkd"; then
	kt_fail "cannot install the OpenRC script"
fi
# dry run; the log lines go where the script sends them by default on this
# OpenRC, whose supervise-daemon cannot pipe them into a logger: $CT_LOG
mkdir -p "$root/etc/conf.d"
printf 'PSI_LMKD_ARGS="-n"\n' >"$root/etc/conf.d/psi-lmkd" || kt_fail "cannot write /etc/conf.d/psi-lmkd"

# ---------------------------------------------------------------- boot

t0=$(now)
# the host's /sys mount options (rw or ro), before and after the container
sys_mode() { awk '$2 == "/sys" { split($4, o, ","); print o[1] }' /proc/mounts; }
sys_mode0=$(sys_mode)
ct_boot
kt_log "container booted: OpenRC in runlevel $state after $(since "$t0") s"

t0=$(now)
ctl env DEBIAN_FRONTEND=noninteractive dpkg -i /root/psi-lmkd.deb >"$work/dpkg.log" 2>&1 ||
	{ cat "$work/dpkg.log" >&2; fail_with_logs "dpkg -i failed"; }
kt_log "dpkg -i: $(since "$t0") s"
ctl pgrep -x psi-lmkd >/dev/null && fail_with_logs "dpkg -i started a daemon without OpenRC"

# rc CMD...: rc-service psi-lmkd CMD..., its output in $work/rc.out
rc() {
	ctl rc-service psi-lmkd "$@" >"$work/rc.out" 2>&1
	local st=$?
	sed "s/^/  rc-service psi-lmkd $*: /" "$work/rc.out" >&2
	return $st
}
# daemon_pid: the pid (in the container) of the one psi-lmkd process
daemon_pid() {
	local p
	p=$(ctl pgrep -x psi-lmkd) || return 1
	[ "$(printf '%s\n' "$p" | wc -l)" = 1 ] || return 1
	printf '%s\n' "$p"
}
# logged_after N PATTERN: the daemon's log has PATTERN after its line N
logged_after() { ctl tail -n "+$(($1 + 1))" "$CT_LOG" 2>/dev/null | grep -q -- "$2"; }
log_lines() { ctl cat "$CT_LOG" 2>/dev/null | wc -l; }
pidfile=/run/supervise-psi-lmkd.pid

# ---------------------------------------------------------------- start, status

t0=$(now)
rc start || fail_with_logs "rc-service psi-lmkd start failed"
kt_wait_for 10 logged_after 0 'armed\|ready\|tier' || fail_with_logs "the daemon logged nothing into $CT_LOG"
t_start=$(since "$t0")
rc status || fail_with_logs "rc-service psi-lmkd status failed after start"
grep -q 'started' "$work/rc.out" || fail_with_logs "status does not say started"
pid=$(daemon_pid) || fail_with_logs "not exactly one psi-lmkd process after start"
args=$(ctl cat "/proc/$pid/cmdline" | tr '\0' ' ')
case "$args" in
"/usr/sbin/psi-lmkd -f -c /etc/psi-lmkd.conf -n "*) ;;
*) fail_with_logs "the daemon runs as '$args', not with -f -c /etc/psi-lmkd.conf -n" ;;
esac
parent=$(ctl ps -o args= -p "$(ctl ps -o ppid= -p "$pid" | tr -d ' ')" | awk '{ print $1 }')
[ "${parent##*/}" = supervise-daemon ] || fail_with_logs "the daemon's parent is '$parent', not supervise-daemon"
ctl test -s "$pidfile" || fail_with_logs "no pidfile $pidfile"
logged_after 0 'DRY RUN' || fail_with_logs "the daemon's log does not say dry run"
kt_log "start: daemon $pid ($args) under supervise-daemon, log lines after $t_start s"

# ---------------------------------------------------------------- reload, status_log

n=$(log_lines)
rc reload || fail_with_logs "rc-service psi-lmkd reload failed"
kt_wait_for 10 logged_after "$n" 'configuration reloaded' || fail_with_logs "the daemon did not log a reload"
[ "$(daemon_pid)" = "$pid" ] || fail_with_logs "reload replaced the daemon"
n=$(log_lines)
rc status_log || fail_with_logs "rc-service psi-lmkd status_log failed"
kt_wait_for 10 logged_after "$n" . || fail_with_logs "SIGUSR1 made the daemon log nothing"
ctl tail -n "+$((n + 1))" "$CT_LOG" | sed 's/^/  status_log: /' >&2
kt_log "reload: logged, same process; status_log: logged"

# ---------------------------------------------------------------- respawn

ctl kill -KILL "$pid"
# shellcheck disable=SC2016 # expanded by eval, at each try
kt_wait_for 10 eval '[ -n "$(daemon_pid)" ] && [ "$(daemon_pid)" != "$pid" ]' ||
	fail_with_logs "supervise-daemon did not restart the killed daemon"
pid=$(daemon_pid)
rc status || fail_with_logs "status fails after the respawn"
kt_log "SIGKILL: supervise-daemon restarted the daemon as $pid"

# ---------------------------------------------------------------- a broken configuration

ctl cp /etc/psi-lmkd.conf /root/psi-lmkd.conf.good
bad_line=$(($(ctl cat /etc/psi-lmkd.conf | wc -l) + 1))
printf 'no_such_key = 1\n' | ctl sh -c 'cat >>/etc/psi-lmkd.conf'
rc reload && fail_with_logs "reload succeeded with a broken configuration"
grep -q "/etc/psi-lmkd.conf:$bad_line" "$work/rc.out" ||
	fail_with_logs "reload's output does not name /etc/psi-lmkd.conf:$bad_line"
[ "$(daemon_pid)" = "$pid" ] || fail_with_logs "the daemon did not survive the failed reload"
kt_log "reload of a broken file: fails with /etc/psi-lmkd.conf:$bad_line, daemon $pid kept"

# ---------------------------------------------------------------- stop

t0=$(now)
rc stop || fail_with_logs "rc-service psi-lmkd stop failed"
t_stop=$(since "$t0")
ctl pgrep -x psi-lmkd >/dev/null && fail_with_logs "a psi-lmkd process outlived stop"
# (pgrep -x matches the 15 characters of comm: supervise-daemo)
ctl pgrep -f '^supervise-daemon psi-lmkd' >/dev/null && fail_with_logs "supervise-daemon outlived stop"
ctl test -e "$pidfile" && fail_with_logs "stop left $pidfile"
rc status
grep -q 'stopped' "$work/rc.out" || fail_with_logs "status does not say stopped after stop"
kt_log "stop: no daemon, no supervisor, no pidfile after $t_stop s"

# ---------------------------------------------------------------- start with a broken configuration

rc start && fail_with_logs "start succeeded with a broken configuration"
grep -q "/etc/psi-lmkd.conf:$bad_line" "$work/rc.out" ||
	fail_with_logs "start's output does not name /etc/psi-lmkd.conf:$bad_line"
sleep 1
ctl pgrep -x psi-lmkd >/dev/null && fail_with_logs "a daemon runs after the failed start"
rc status
grep -q 'stopped' "$work/rc.out" || fail_with_logs "status does not say stopped after the failed start"
kt_log "start with a broken file: fails with /etc/psi-lmkd.conf:$bad_line, no daemon"

# ---------------------------------------------------------------- in the default runlevel

ctl cp /root/psi-lmkd.conf.good /etc/psi-lmkd.conf
ctl rc-update add psi-lmkd default >&2 || fail_with_logs "rc-update add psi-lmkd default failed"
ctl openrc default >"$work/openrc.out" 2>&1 || { cat "$work/openrc.out" >&2; fail_with_logs "openrc default failed"; }
rc status || fail_with_logs "openrc default did not start psi-lmkd"
daemon_pid >/dev/null || fail_with_logs "no daemon after openrc default"
rc stop || fail_with_logs "stop failed after openrc default"
kt_log "rc-update add psi-lmkd default: openrc default starts it"

# ---------------------------------------------------------------- an error_logger this OpenRC ignores

printf 'PSI_LMKD_ARGS="-n"\nerror_logger="logger -t psi-lmkd"\n' | ctl sh -c 'cat >/etc/conf.d/psi-lmkd'
n=$(log_lines)
rc start || fail_with_logs "start failed with error_logger set"
grep -q 'ignores error_logger' "$work/rc.out" || fail_with_logs "start did not warn that error_logger is ignored"
kt_wait_for 10 logged_after "$n" 'running' || fail_with_logs "with error_logger set, nothing reached $CT_LOG"
rc stop || fail_with_logs "stop failed"
kt_log "error_logger set: a warning at start, the lines in $CT_LOG"

# the container must leave the host as it found it
[ "$(sys_mode)" = "$sys_mode0" ] || kt_fail "the host's /sys was $sys_mode0, is now $(sys_mode)"
kt_log "PASS ($(kt_elapsed) s in all)"
exit 0
