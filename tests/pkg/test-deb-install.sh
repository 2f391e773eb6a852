#!/bin/bash
# SPDX-License-Identifier: MIT
# test-deb-install.sh - the built .deb in a booted Debian 12 container.
#
# The container is the one of tests/kernel/test-systemd.sh: the cached
# mmdebstrap image ($PSI_LMKD_TEST_CACHE, default /var/cache/psi-lmkd-test),
# an overlay on it, booted with systemd-nspawn. The .deb that
# test-deb-build.sh left in $PKG_OUT (default $top_builddir/deb) is installed
# with dpkg -i, as a user would, and then:
#  - psi-lmkd.service is enabled and active (postinst starts it; Type=notify,
#    so active means READY=1 came), and the time from dpkg -i to active is
#    logged;
#  - /etc/psi-lmkd.conf is a conffile and the daemon reads it;
#  - apt-get purge stops the unit, and leaves none of the package's files,
#    no enablement symlink and no /etc/psi-lmkd.conf behind.
# The daemon cannot hurt anything: a drop-in written before the install adds
# -n (dry run), and it runs in the container's pid namespace anyway.
# Needs root and systemd-nspawn; exit 0 pass, 1 fail, 77 skip (CI=true: a
# missing tool or image fails).

# shellcheck disable=SC2016 # dpkg-query formats in single quotes
set -u
# run by make check-pkg: the outer make's TESTS= must not reach the makes below
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES

srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
out=${PKG_OUT:-${top_builddir:-$srcdir/build}/deb}
KT_NAME=test-deb-install.sh
# shellcheck source-path=SCRIPTDIR source=../kernel/lib.sh
. "$srcdir/tests/kernel/lib.sh" || { echo "cannot source $srcdir/tests/kernel/lib.sh" >&2; exit 99; }

# shellcheck source-path=SCRIPTDIR source=../kernel/container.sh
. "$srcdir/tests/kernel/container.sh" || { echo "cannot source $srcdir/tests/kernel/container.sh" >&2; exit 99; }
CT_CTL_TIMEOUT=120
ct_install_traps "psi-lmkd-deb-$$"

# ---------------------------------------------------------------- prerequisites

ct_require "the unit's ConditionPathExists= would skip it" dpkg-deb
ct_find_deb "$out"

ct_image_ready

ct_root_prepare psi-lmkd-deb
cp "$deb" "$work/root/root/psi-lmkd.deb" || kt_fail "cannot copy $deb into the container"
# dry run: the package's unit, with -n added (not a file of the package)
mkdir -p "$work/root/etc/systemd/system/psi-lmkd.service.d"
printf '[Service]\nExecStart=\nExecStart=/usr/sbin/psi-lmkd -f -n\n' \
	>"$work/root/etc/systemd/system/psi-lmkd.service.d/dry-run.conf"

# ---------------------------------------------------------------- boot

ct_boot
kt_log "container booted ($state)"

# ---------------------------------------------------------------- install

t0=$(now)
ctl env DEBIAN_FRONTEND=noninteractive dpkg -i /root/psi-lmkd.deb >"$work/dpkg.log" 2>&1 ||
	{ cat "$work/dpkg.log" >&2; fail_with_logs "dpkg -i failed"; }
t_dpkg=$(since "$t0")
kt_wait_for 30 ctl systemctl is-active --quiet psi-lmkd.service || fail_with_logs "psi-lmkd is not active after dpkg -i"
t_active=$(since "$t0")
kt_log "install-to-active: dpkg -i returned after $t_dpkg s, psi-lmkd.service active after $t_active s"
[ "$(ctl systemctl is-enabled psi-lmkd.service)" = enabled ] || fail_with_logs "psi-lmkd.service is not enabled"
ctl systemctl is-active psi-lmkd.service >&2
ctl systemctl show -p StatusText --value psi-lmkd.service | sed 's/^/  StatusText: /' >&2
grep -qx /etc/psi-lmkd.conf "$work/root/var/lib/dpkg/info/psi-lmkd.conffiles" ||
	fail_with_logs "/etc/psi-lmkd.conf is not registered as a conffile"
ctl journalctl -b --no-pager -u psi-lmkd.service | grep -q '/etc/psi-lmkd.conf\|tier' ||
	fail_with_logs "the journal shows nothing of the daemon's start"
ctl dpkg-query -L psi-lmkd >"$work/files" || fail_with_logs "dpkg-query -L failed"

# ---------------------------------------------------------------- purge

ctl env DEBIAN_FRONTEND=noninteractive apt-get purge -y psi-lmkd >"$work/purge.log" 2>&1 ||
	{ cat "$work/purge.log" >&2; fail_with_logs "apt-get purge failed"; }
ctl systemctl is-active --quiet psi-lmkd.service && fail_with_logs "psi-lmkd is still active after purge"
pgrep -x psi-lmkd >/dev/null && ctl pgrep -x psi-lmkd && fail_with_logs "a psi-lmkd process outlived the purge"
rm -rf "$work/root/etc/systemd/system/psi-lmkd.service.d"
left=''
while IFS= read -r f; do
	[ -d "$work/root$f" ] && continue # directories (or merged-/usr links to them) are shared
	[ -e "$work/root$f" ] || [ -L "$work/root$f" ] && left="$left $f"
done <"$work/files"
for f in /etc/psi-lmkd.conf /etc/systemd/system/multi-user.target.wants/psi-lmkd.service \
	/var/lib/systemd/deb-systemd-helper-enabled/psi-lmkd.service \
	/var/lib/dpkg/info/psi-lmkd.list /usr/share/doc/psi-lmkd; do
	[ -e "$work/root$f" ] || [ -L "$work/root$f" ] && left="$left $f"
done
[ -z "$left" ] || fail_with_logs "left behind after purge:$left"
ctl dpkg-query -W -f='${db:Status-Abbrev}' psi-lmkd 2>/dev/null | grep -q '^ii' &&
	fail_with_logs "dpkg still lists psi-lmkd as installed"
kt_log "purge: unit stopped, $(wc -l <"$work/files") paths checked, nothing left"

kt_log "PASS ($(kt_elapsed) s in all)"
exit 0
