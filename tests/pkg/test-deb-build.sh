#!/bin/bash
# SPDX-License-Identifier: MIT
# test-deb-build.sh - the Debian package builds and lintian finds nothing.
#
# A copy of the source tree (without .git and build directories) is built
# with `dpkg-buildpackage -us -uc -b` in $PKG_OUT/psi-lmkd-VERSION (default
# $top_builddir/deb); the build runs `make check-nokernel` (debian/rules).
# Then lintian --pedantic on the .changes must report no error and no
# warning (info and pedantic tags are listed, not counted). The .deb stays
# in $PKG_OUT for test-deb-install.sh.
# Exit: 0 pass, 1 fail, 77 skip (CI=true: a missing tool fails).
set -u
# run by make check-pkg: the outer make's TESTS= must not reach the makes below
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES

srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
out=${PKG_OUT:-${top_builddir:-$srcdir/build}/deb}
KT_NAME=test-deb-build.sh
# shellcheck source-path=SCRIPTDIR source=../kernel/lib.sh
. "$srcdir/tests/kernel/lib.sh" || { echo "cannot source $srcdir/tests/kernel/lib.sh" >&2; exit 99; }

for cmd in dpkg-buildpackage dh lintian fakeroot; do
	command -v "$cmd" >/dev/null ||
		kt_skip_or_fail "$cmd is not installed (Debian: dpkg-dev, debhelper, lintian, fakeroot)"
done
[ -f "$srcdir/debian/control" ] || kt_fail "$srcdir/debian/control is missing"

command -v dpkg-parsechangelog >/dev/null || kt_skip_or_fail "dpkg-parsechangelog is missing (Debian: dpkg-dev)"
version=$(dpkg-parsechangelog -l "$srcdir/debian/changelog" -S Version) || kt_fail "cannot read debian/changelog"
# named psi-lmkd-VERSION, as dpkg-buildpackage expects (bootstrap does not
# count the package build's own test results again: it skips */psi-lmkd-*/)
src=$out/psi-lmkd-$version
rm -rf "$out"
mkdir -p "$src" || kt_fail "cannot create $src"
tar -C "$srcdir" --exclude=./.git --exclude='./build*' --exclude=./debian/build --exclude=./debian/psi-lmkd --exclude=./debian/.debhelper \
	--exclude='./psi-lmkd-*' -cf - . | tar -C "$src" -xf - ||
	kt_fail "cannot copy the source tree to $src"
# a tree configured in place would break the package's out-of-tree build
rm -f "$src/config.status" "$src/Makefile" "$src/build-config.h"

kt_log "dpkg-buildpackage -us -uc -b in $src"
t0=$(date +%s)
if ! (cd "$src" && DEB_BUILD_OPTIONS="parallel=$(nproc) ${DEB_BUILD_OPTIONS:-}" \
	dpkg-buildpackage -us -uc -b) >"$out/build.log" 2>&1; then
	tail -n 60 "$out/build.log" >&2
	kt_fail "dpkg-buildpackage failed (log: $out/build.log)"
fi
kt_log "built in $(($(date +%s) - t0)) s"
sed -n 's/^# \(TOTAL\|PASS\|SKIP\|FAIL\|ERROR\): */  in-build tests \1: /p' "$out/build.log" >&2
grep -q '^# PASS: *[1-9]' "$out/build.log" || kt_fail "the package build ran no test (make check-nokernel)"

debs=("$out"/psi-lmkd_*.deb)
deb=${debs[0]}
[ -f "$deb" ] || kt_fail "no psi-lmkd_*.deb in $out"
dpkg-deb -c "$deb" >&2
for f in ./usr/sbin/psi-lmkd ./etc/psi-lmkd.conf ./lib/systemd/system/psi-lmkd.service \
	./usr/share/man/man8/psi-lmkd.8.gz ./usr/share/man/man5/psi-lmkd.conf.5.gz \
	./usr/share/doc/psi-lmkd/copyright; do
	dpkg-deb -c "$deb" | awk '{ print $6 }' | grep -qx -- "$f" || kt_fail "$f is not in $(basename "$deb")"
done
rm -rf "$out/root"
dpkg-deb -x "$deb" "$out/root" || kt_fail "cannot extract $(basename "$deb")"
zcat "$out/root/usr/share/doc/psi-lmkd/README.md.gz" | head -n 1 | grep -qx '# psi-lmkd' ||
	kt_fail "usr/share/doc/psi-lmkd/README.md.gz is not the project's README"
[ -f "$out/root/usr/share/doc/psi-lmkd/README.kernel.md.gz" ] || kt_fail "kernel/README.md is not installed"
# every program an installed unit or autostart entry starts is installed too
while IFS= read -r f; do
	while IFS= read -r prog; do
		prog=${prog#[-@+!:]}
		case $prog in /*) ;; *) continue ;; esac
		[ -x "$out/root$prog" ] || [ -x "$prog" ] ||
			kt_fail "${f#"$out/root"} starts $prog, which neither the package nor the system has"
	done < <(sed -n -E 's/^(Exec|ExecStart|ExecStartPre|ExecStartPost|ExecReload|ExecStop)=[[:space:]]*([^[:space:]]+).*/\2/p' "$f")
done < <(find "$out/root" -type f \( -name '*.desktop' -o -name '*.service' \))
for f in ./usr/share/psi-lmkd/psi-lmkd-notify-agent ./usr/share/psi-lmkd/psi-lmkd-plot \
	./etc/xdg/autostart/psi-lmkd-notify-agent.desktop ./usr/share/psi-lmkd/systemd-oomd-psi-lmkd.conf; do
	[ -e "$out/root/$f" ] || kt_fail "$f is not in $(basename "$deb")"
done
[ -e "$out/root/usr/share/psi-lmkd/psi-lmkd-android.conf" ] && kt_fail "the Android profile is in the Debian package"
dpkg-deb -e "$deb" "$out/control" || kt_fail "cannot extract the control files"
grep -qx /etc/psi-lmkd.conf "$out/control/conffiles" || kt_fail "/etc/psi-lmkd.conf is not a conffile"
grep -q 'deb-systemd-helper.*enable' "$out/control/postinst" ||
	kt_fail "postinst does not enable the unit (dh_installsystemd)"
if ! grep -q '_dh_action=start' "$out/control/postinst" ||
	! grep -q 'deb-systemd-invoke .*psi-lmkd.service' "$out/control/postinst"; then
	kt_fail "postinst does not start the unit (dh_installsystemd)"
fi

all_changes=("$out"/psi-lmkd_*.changes)
changes=${all_changes[0]}
lintian --pedantic --display-info --fail-on none "$changes" >"$out/lintian.log" 2>&1
cat "$out/lintian.log" >&2
grep -E '^(E|W): ' "$out/lintian.log" && kt_fail "lintian reports errors or warnings"
kt_log "lintian: $(grep -cE '^(E|W): ' "$out/lintian.log") errors and warnings," \
	"$(grep -cE '^(I|P): ' "$out/lintian.log") info/pedantic tags"
kt_log "PASS: $(basename "$deb"), $(stat -c %s "$deb") bytes"
exit 0
