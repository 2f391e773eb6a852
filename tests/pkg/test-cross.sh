#!/bin/bash
# SPDX-License-Identifier: MIT
# test-cross.sh - a cross-build for another architecture, its unit tests
# under qemu-user.
#
#   PSI_LMKD_CROSS_HOST  GNU triplet (default aarch64-linux-gnu; also
#                        arm-linux-gnueabihf)
#   PSI_LMKD_CROSS_DIR   build directory (default $top_builddir/cross-HOST)
#
# `configure --host=HOST` with Debian's cross toolchain (crossbuild-essential-
# ARCH) and the ARCH -dev libraries (dpkg --add-architecture ARCH), then every
# unit test under qemu-user (qemu-ARCH, no binfmt_misc needed),
# through automake's harness: each test case is a result of its own.
#
# qemu-user runs without -L: the ARCH -dev packages below pull in libc6:ARCH,
# whose loader and libraries Debian's multiarch puts where the binaries look
# (/lib/ld-linux-armhf.so.3, /lib/ld-linux-aarch64.so.1). With -L /usr/HOST,
# qemu-user 7.2 maps every absolute path it can find under that prefix:
# open("/") gives /usr/HOST, while armhf's statx("/") is not mapped, so the
# daemon takes its root fd for a foreign root (test-notify failed on armhf),
# and a child of fork() hung (the cause of the longer list this had).
#
# Not run under qemu-user (QEMU_UNSUPPORTED): test-kill (its first case counts
# the kill path's page faults, which qemu's translator makes), test-reaper
# (qemu-user answers ENOSYS to process_mrelease), test-hook (and to execveat,
# with which the hook runs its checked program by fd). They run natively in
# every make check.
# Exit: 0 pass, 1 fail, 77 skip (CI=true: a missing toolchain fails).
set -u
# run by make check-pkg: the outer make's TESTS= must not reach the makes below
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES

srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
host=${PSI_LMKD_CROSS_HOST:-aarch64-linux-gnu}
dir=${PSI_LMKD_CROSS_DIR:-${top_builddir:-$srcdir/build}/cross-$host}
KT_NAME="test-cross.sh ($host)"
# shellcheck source-path=SCRIPTDIR source=../kernel/lib.sh
. "$srcdir/tests/kernel/lib.sh" || { echo "cannot source $srcdir/tests/kernel/lib.sh" >&2; exit 99; }

QEMU_UNSUPPORTED="tests/test-kill tests/test-reaper tests/test-hook"
# a unit test that hangs under qemu (a new one that forks) fails after this
# many seconds instead of holding CI until its own time limit
QEMU_TEST_TIMEOUT=${QEMU_TEST_TIMEOUT:-300}

case $host in
aarch64-linux-gnu) arch=arm64 qemu=qemu-aarch64 ;;
arm-linux-gnueabihf) arch=armhf qemu=qemu-arm ;;
*) kt_fail "unknown PSI_LMKD_CROSS_HOST $host (aarch64-linux-gnu or arm-linux-gnueabihf)" ;;
esac
command -v "$host-gcc" >/dev/null || kt_skip_or_fail "$host-gcc is missing (Debian: crossbuild-essential-$arch)"
command -v "$host-pkg-config" >/dev/null || kt_skip_or_fail "$host-pkg-config is missing (Debian: pkgconf:$arch)"
command -v "$qemu" >/dev/null || kt_skip_or_fail "$qemu is missing (Debian: qemu-user)"
for p in libinih-dev libcap-dev libcunit1-dev libsystemd-dev; do
	dpkg-query -W -f='${Status}' "$p:$arch" 2>/dev/null | grep -q 'install ok installed' ||
		kt_skip_or_fail "$p:$arch is not installed (dpkg --add-architecture $arch; apt-get install $p:$arch)"
done
[ -x "$srcdir/configure" ] || kt_skip_or_fail "$srcdir/configure is missing (run autoreconf -fi)"

mkdir -p "$dir" || kt_fail "cannot create $dir"
if [ ! -f "$dir/Makefile" ] || [ "$srcdir/configure" -nt "$dir/config.status" ]; then
	kt_log "configure --host=$host in $dir"
	# the host's compiler and flags in the environment (CC=clang, a CFLAGS
	# of the caller's) would make configure --host build for the host
	(cd "$dir" && env -u CC -u CFLAGS -u CPPFLAGS -u LDFLAGS -u LIBS -u INIH_CFLAGS -u INIH_LIBS \
		-u LIBCAP_CFLAGS -u LIBCAP_LIBS -u CUNIT_CFLAGS -u CUNIT_LIBS -u SYSTEMD_CFLAGS -u SYSTEMD_LIBS \
		"$srcdir/configure" --host="$host" --enable-werror --with-systemd=yes) \
		>"$dir/configure.log" 2>&1 || { tail -n 30 "$dir/configure.log" >&2; kt_fail "configure --host=$host failed"; }
fi
t0=$(date +%s)
make -C "$dir" -j"$(nproc)" >"$dir/make.log" 2>&1 || { tail -n 40 "$dir/make.log" >&2; kt_fail "make failed"; }
kt_log "built psi-lmkd for $host in $(($(date +%s) - t0)) s: $(file -b "$dir/psi-lmkd" | cut -d, -f1-2)"
file -b "$dir/psi-lmkd" | grep -q "$([ "$arch" = arm64 ] && echo aarch64 || echo 'ARM, EABI5')" ||
	kt_fail "psi-lmkd is not a $host binary: $(file -b "$dir/psi-lmkd")"

kt_log "under $qemu: every unit test but $QEMU_UNSUPPORTED"
rm -f "$dir"/tests/*.trs "$dir"/tests/*.log
t0=$(date +%s)
if ! make -C "$dir" -j"$(nproc)" check-unit UNIT_TESTS_SKIP="$QEMU_UNSUPPORTED" \
	LOG_COMPILER="timeout -k 5 $QEMU_TEST_TIMEOUT $qemu" \
	>"$dir/check.log" 2>&1; then
	cat "$dir/check.log" >&2
	kt_fail "unit tests under $qemu failed"
fi
sed -n 's/^# \(TOTAL\|PASS\|SKIP\|FAIL\|ERROR\): */  \1: /p' "$dir/check.log" >&2
grep -q '^# PASS: *[1-9]' "$dir/check.log" || kt_fail "no test case passed under $qemu"
kt_log "PASS: unit tests under $qemu in $(($(date +%s) - t0)) s"
exit 0
