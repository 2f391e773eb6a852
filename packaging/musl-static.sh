#!/bin/bash
# SPDX-License-Identifier: MIT
# musl-static.sh - a static psi-lmkd linked against musl, without libsystemd.
#
#   packaging/musl-static.sh INIH_DIR LIBCAP_DIR [BUILD_DIR]
#
# INIH_DIR holds inih's ini.c and ini.h (https://github.com/benhoyt/inih,
# r55 or later), or a built libinih.a beside ini.h: Debian's libinih-dev
# (/usr/lib/MULTIARCH/libinih.a with /usr/include/ini.h, copied into a
# directory of their own, as tests/pkg/test-musl.sh does) links with
# musl-gcc -static, its few libc calls being ones musl also answers
# (__ctype_b_loc, fopen64, __stack_chk_fail). LIBCAP_DIR is an unpacked
# libcap source tree (2.66 was tried:
# https://kernel.org/pub/linux/libs/security/linux-privs/libcap2/, or
# `apt-get source libcap2`). Debian's musl-tools ships no build of either,
# so libcap (and inih given as ini.c) is compiled here with musl-gcc, as a
# static library, into
# BUILD_DIR (default build-musl/): BUILD_DIR/psi-lmkd.unstripped and
# BUILD_DIR/psi-lmkd.stripped, which must answer --version and
# --check-config conf/psi-lmkd.conf.
# With CUNIT_DIR set to an unpacked CUnit 2.1-3 tree (`apt-get source cunit`:
# Debian has no musl build of it either), CUnit's framework is compiled with
# musl-gcc too and every unit test (make check-unit) is built statically
# against musl and run, natively: x86-64 musl needs no emulation.
# Needs musl-tools and the kernel headers of linux-libc-dev (musl-gcc does not
# look in /usr/include: they are linked into BUILD_DIR/kernel-headers).
set -euo pipefail

[ $# -ge 2 ] || { sed -n '3,4p' "$0" >&2; exit 2; }
top=$(cd "$(dirname "$0")/.." && pwd)
inih=$(cd "$1" && pwd)
libcap=$(cd "$2" && pwd)
out=${3:-$top/build-musl}
mkdir -p "$out"
out=$(cd "$out" && pwd)
if [ ! -f "$inih/ini.h" ] || { [ ! -f "$inih/ini.c" ] && [ ! -f "$inih/libinih.a" ]; }; then
	echo "musl-static: no ini.h with ini.c or libinih.a in $inih" >&2
	exit 1
fi
[ -d "$libcap/libcap" ] || { echo "musl-static: no libcap/ in $libcap" >&2; exit 1; }
command -v musl-gcc >/dev/null || { echo "musl-static: musl-gcc missing (Debian: musl-tools)" >&2; exit 1; }

# kernel headers for musl-gcc: linux/, asm/ (this machine's), asm-generic/
kh=$out/kernel-headers
multiarch=$(gcc -print-multiarch)
mkdir -p "$kh"
ln -sfn /usr/include/linux "$kh/linux"
ln -sfn "/usr/include/$multiarch/asm" "$kh/asm"
ln -sfn /usr/include/asm-generic "$kh/asm-generic"
cc="musl-gcc -isystem $kh"

mkdir -p "$out/inih"
if [ -f "$inih/ini.c" ]; then
	echo "musl-static: inih" >&2
	$cc -Os -c "$inih/ini.c" -o "$out/inih/ini.o"
	ar rcs "$out/inih/libinih.a" "$out/inih/ini.o"
else
	echo "musl-static: inih (the built $inih/libinih.a)" >&2
	cp "$inih/libinih.a" "$out/inih/"
fi
cp "$inih/ini.h" "$out/inih/"

echo "musl-static: libcap" >&2
rm -rf "$out/libcap"
cp -a "$libcap" "$out/libcap"
make -C "$out/libcap/libcap" CC="$cc" BUILD_CC=gcc SHARED=no PAM_CAP=no GOLANG=no libcap.a >"$out/libcap.log" 2>&1 ||
	{ tail -n 20 "$out/libcap.log" >&2; exit 1; }

cunit_cflags=" " cunit_libs=" "
if [ -n "${CUNIT_DIR:-}" ]; then
	echo "musl-static: CUnit" >&2
	cunit=$(cd "$CUNIT_DIR" && pwd)
	[ -f "$cunit/CUnit/Headers/CUnit.h.in" ] || { echo "musl-static: no CUnit/Headers/CUnit.h.in in $cunit" >&2; exit 1; }
	rm -rf "$out/cunit"
	mkdir -p "$out/cunit/include/CUnit" "$out/cunit/obj"
	cp "$cunit"/CUnit/Headers/*.h "$out/cunit/include/CUnit/"
	# CUnit.h is made from CUnit.h.in by CUnit's configure (the tarball's
	# own CUnit.h is an older one)
	sed 's/@VERSION@-@RELEASE@/2.1-3/' "$cunit/CUnit/Headers/CUnit.h.in" >"$out/cunit/include/CUnit/CUnit.h"
	for c in "$cunit"/CUnit/Sources/Framework/*.c "$cunit/CUnit/Sources/Basic/Basic.c"; do
		$cc -O2 -w -I"$out/cunit/include/CUnit" -c "$c" -o "$out/cunit/obj/$(basename "${c%.c}").o"
	done
	ar rcs "$out/cunit/libcunit.a" "$out"/cunit/obj/*.o
	cunit_cflags="-I$out/cunit/include" cunit_libs="$out/cunit/libcunit.a"
fi

echo "musl-static: psi-lmkd" >&2
[ -x "$top/configure" ] || (cd "$top" && autoreconf -fi)
mkdir -p "$out/psi-lmkd"
(cd "$out/psi-lmkd" && "$top/configure" CC="$cc" CFLAGS="-Os" LDFLAGS="-static" \
	--with-systemd=no --with-openrcdir=no --enable-werror \
	INIH_CFLAGS="-I$out/inih" INIH_LIBS="$out/inih/libinih.a" \
	LIBCAP_CFLAGS="-I$out/libcap/libcap/include" LIBCAP_LIBS="$out/libcap/libcap/libcap.a" \
	CUNIT_CFLAGS="$cunit_cflags" CUNIT_LIBS="$cunit_libs") >"$out/configure.log" 2>&1 ||
	{ tail -n 20 "$out/configure.log" >&2; exit 1; }
make -C "$out/psi-lmkd" -j"$(nproc)" psi-lmkd >"$out/make.log" 2>&1 || { tail -n 30 "$out/make.log" >&2; exit 1; }
cp "$out/psi-lmkd/psi-lmkd" "$out/psi-lmkd.unstripped"
strip -o "$out/psi-lmkd.stripped" "$out/psi-lmkd.unstripped"
file "$out/psi-lmkd.stripped" >&2
"$out/psi-lmkd.stripped" --version >&2
"$out/psi-lmkd.stripped" --check-config -c "$top/conf/psi-lmkd.conf" >/dev/null
echo "musl-static: $out/psi-lmkd.stripped: $(stat -c %s "$out/psi-lmkd.stripped") bytes" \
	"($(stat -c %s "$out/psi-lmkd.unstripped") unstripped)" >&2

# Not run: test-alloc. Its seam (-Wl,--wrap=malloc,...) is meant for the
# daemon's own calls; in a static link it also takes libc's: musl's regcomp,
# stdio and opendir allocate through it (81 allocations "left behind" with
# nothing failing), and musl 1.2.3's regcomp dereferences one of its own
# failed allocations (SIGSEGV at the 53rd run). It runs in every glibc build.
musl_skip="tests/test-alloc"
if [ -n "${CUNIT_DIR:-}" ]; then
	echo "musl-static: make check-unit (static, musl; not $musl_skip)" >&2
	t0=$(date +%s)
	rm -f "$out"/psi-lmkd/tests/*.trs "$out"/psi-lmkd/tests/*.log
	if ! make -C "$out/psi-lmkd" -j"$(nproc)" check-unit UNIT_TESTS_SKIP="$musl_skip" >"$out/check.log" 2>&1; then
		grep -E '^(FAIL|ERROR)' "$out/check.log" >&2 || tail -n 40 "$out/check.log" >&2
		echo "musl-static: unit tests failed: $out/check.log" >&2
		exit 1
	fi
	sed -n 's/^# \(TOTAL\|PASS\|SKIP\|FAIL\|ERROR\): */musl-static:   \1: /p' "$out/check.log" >&2
	echo "musl-static: unit tests passed in $(($(date +%s) - t0)) s" >&2
fi
