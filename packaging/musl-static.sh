#!/bin/bash
# SPDX-License-Identifier: MIT
# musl-static.sh - a static psi-lmkd linked against musl, without libsystemd.
#
#   packaging/musl-static.sh INIH_DIR LIBCAP_DIR [BUILD_DIR]
#
# INIH_DIR holds inih's ini.c and ini.h (https://github.com/benhoyt/inih,
# r55 or later); LIBCAP_DIR is an unpacked libcap source tree (2.66 was
# tried: https://kernel.org/pub/linux/libs/security/linux-privs/libcap2/, or
# `apt-get source libcap2`). Debian's musl-tools ships no build of either,
# so both are compiled here with musl-gcc, as static libraries, into
# BUILD_DIR (default build-musl/). The daemon alone is built (the unit tests
# need CUnit, for which there is no musl build either):
# BUILD_DIR/psi-lmkd.unstripped and BUILD_DIR/psi-lmkd.stripped.
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
[ -f "$inih/ini.c" ] || { echo "musl-static: no ini.c in $inih" >&2; exit 1; }
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

echo "musl-static: inih" >&2
mkdir -p "$out/inih"
$cc -Os -c "$inih/ini.c" -o "$out/inih/ini.o"
ar rcs "$out/inih/libinih.a" "$out/inih/ini.o"
cp "$inih/ini.h" "$out/inih/"

echo "musl-static: libcap" >&2
rm -rf "$out/libcap"
cp -a "$libcap" "$out/libcap"
make -C "$out/libcap/libcap" CC="$cc" BUILD_CC=gcc SHARED=no PAM_CAP=no GOLANG=no libcap.a >"$out/libcap.log" 2>&1 ||
	{ tail -n 20 "$out/libcap.log" >&2; exit 1; }

echo "musl-static: psi-lmkd" >&2
[ -x "$top/configure" ] || (cd "$top" && autoreconf -fi)
mkdir -p "$out/psi-lmkd"
(cd "$out/psi-lmkd" && "$top/configure" CC="$cc" CFLAGS="-Os" LDFLAGS="-static" \
	--with-systemd=no --with-openrcdir=no --enable-werror \
	INIH_CFLAGS="-I$out/inih" INIH_LIBS="$out/inih/libinih.a" \
	LIBCAP_CFLAGS="-I$out/libcap/libcap/include" LIBCAP_LIBS="$out/libcap/libcap/libcap.a" \
	CUNIT_CFLAGS=" " CUNIT_LIBS=" ") >"$out/configure.log" 2>&1 ||
	{ tail -n 20 "$out/configure.log" >&2; exit 1; }
make -C "$out/psi-lmkd" -j"$(nproc)" psi-lmkd >"$out/make.log" 2>&1 || { tail -n 30 "$out/make.log" >&2; exit 1; }
cp "$out/psi-lmkd/psi-lmkd" "$out/psi-lmkd.unstripped"
strip -o "$out/psi-lmkd.stripped" "$out/psi-lmkd.unstripped"
file "$out/psi-lmkd.stripped" >&2
"$out/psi-lmkd.stripped" --version >&2
echo "musl-static: $out/psi-lmkd.stripped: $(stat -c %s "$out/psi-lmkd.stripped") bytes" \
	"($(stat -c %s "$out/psi-lmkd.unstripped") unstripped)" >&2
