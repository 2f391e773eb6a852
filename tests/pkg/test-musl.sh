#!/bin/bash
# SPDX-License-Identifier: MIT
# test-musl.sh - the static musl build (packaging/musl-static.sh) and every
# unit test built statically against musl and run natively: x86-64 musl
# binaries need no emulation. make check-pkg runs it beside the cross-builds.
#
#   PSI_LMKD_MUSL_DIR      build directory (default $top_builddir/musl, as
#                          make check-musl)
#   PSI_LMKD_MUSL_SRC_DIR  where the sources are fetched (default
#                          $top_builddir/musl-src; kept, not fetched again)
#
# Debian has no musl build of inih, libcap or CUnit, so:
#  - libcap and CUnit are built from Debian's source packages (apt-get source
#    libcap2 cunit), fetched with a private deb-src list made from the
#    system's deb lines, and private lists and cache under
#    PSI_LMKD_MUSL_SRC_DIR/apt: the system's apt configuration and state are
#    not changed;
#  - inih is Debian's own static library (libinih-dev's libinih.a, with its
#    ini.h copied into a directory of their own): Debian's mirror serves no
#    inih source here, and libinih.a links with musl-gcc -static (its libc
#    calls are ones musl also answers).
# Exit: 0 pass, 1 fail, 77 skip (CI=true: a missing tool or a failed fetch
# fails).
set -u
# run by make check-pkg: the outer make's TESTS= must not reach the makes below
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES

srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
builddir=${top_builddir:-$srcdir/build}
dir=${PSI_LMKD_MUSL_DIR:-$builddir/musl}
src=${PSI_LMKD_MUSL_SRC_DIR:-$builddir/musl-src}
KT_NAME="test-musl.sh"
# shellcheck source-path=SCRIPTDIR source=../kernel/lib.sh
. "$srcdir/tests/kernel/lib.sh" || { echo "cannot source $srcdir/tests/kernel/lib.sh" >&2; exit 99; }

command -v musl-gcc >/dev/null || kt_skip_or_fail "musl-gcc is missing (Debian: musl-tools)"
command -v apt-get >/dev/null || kt_skip_or_fail "apt-get is missing: no Debian source packages"
command -v dpkg-source >/dev/null || kt_skip_or_fail "dpkg-source is missing (Debian: dpkg-dev)"
multiarch=$(gcc -print-multiarch)
libinih=/usr/lib/$multiarch/libinih.a
if [ ! -f "$libinih" ] || [ ! -f /usr/include/ini.h ]; then
	kt_skip_or_fail "$libinih or /usr/include/ini.h is missing (Debian: libinih-dev)"
fi
[ -x "$srcdir/configure" ] || kt_skip_or_fail "$srcdir/configure is missing (run autoreconf -fi)"

mkdir -p "$src" "$dir" || kt_fail "cannot create $src or $dir"
src=$(cd "$src" && pwd)
t_all=$(date +%s)

# ---------------------------------------------------------------- sources
mkdir -p "$src/inih"
cp "$libinih" /usr/include/ini.h "$src/inih/" || kt_fail "cannot copy Debian's inih into $src/inih"

# find_tree PATTERN: the unpacked source tree of a package, if there is one
find_tree() {
	find "$src/src" -mindepth 1 -maxdepth 1 -type d -name "$1" 2>/dev/null | sort | tail -n 1
}
libcap=$(find_tree 'libcap2-*')
cunit=$(find_tree 'cunit-*')
if [ -z "$libcap" ] || [ -z "$cunit" ]; then
	t0=$(date +%s)
	apt=$src/apt
	rm -rf "$apt" "$src/src"
	mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/sources.list.d" "$src/src"
	# the system's deb lines as deb-src ones, in deb822 and one-line form
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] && sed 's/^Types: *deb$/Types: deb-src/' "$f" >"$apt/sources.list.d/${f##*/}"
	done
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] && sed -n 's/^deb /deb-src /p' "$f"
	done >"$apt/sources.list"
	aptopt=(-o "Dir::Etc::SourceList=$apt/sources.list" -o "Dir::Etc::SourceParts=$apt/sources.list.d"
		-o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache" -o APT::Sandbox::User=root)
	kt_log "apt-get source libcap2 cunit (a private deb-src list, lists and cache in $apt)"
	if ! apt-get "${aptopt[@]}" -qq update >"$src/fetch.log" 2>&1 ||
		! (cd "$src/src" && apt-get "${aptopt[@]}" -qq source libcap2 cunit) >>"$src/fetch.log" 2>&1; then
		tail -n 20 "$src/fetch.log" >&2
		rm -rf "$src/src"
		kt_skip_or_fail "cannot fetch Debian's libcap2 and cunit sources"
	fi
	libcap=$(find_tree 'libcap2-*')
	cunit=$(find_tree 'cunit-*')
	if [ -z "$libcap" ] || [ -z "$cunit" ]; then
		kt_fail "apt-get source unpacked no libcap2-* or cunit-* in $src/src"
	fi
	kt_log "fetched and unpacked in $(($(date +%s) - t0)) s: ${libcap##*/}, ${cunit##*/}"
fi

# ---------------------------------------------------------------- build, test
kt_log "packaging/musl-static.sh: libcap, CUnit, psi-lmkd with musl-gcc -static; make check-unit natively"
if ! CUNIT_DIR=$cunit bash "$srcdir/packaging/musl-static.sh" "$src/inih" "$libcap" "$dir" >"$dir/musl-static.log" 2>&1; then
	cat "$dir/musl-static.log" >&2
	kt_fail "packaging/musl-static.sh failed"
fi
grep '^musl-static:   ' "$dir/musl-static.log" >&2
file -b "$dir/psi-lmkd.unstripped" | grep -q 'statically linked' ||
	kt_fail "psi-lmkd is not statically linked: $(file -b "$dir/psi-lmkd.unstripped")"
grep -q 'ld-musl\|musl' "$dir/psi-lmkd/config.log" || kt_fail "configure in $dir/psi-lmkd did not use musl-gcc"
grep -q '^# PASS: *[1-9]' "$dir/check.log" || kt_fail "no unit test passed with musl"
kt_log "PASS: $(sed -n 's/^# PASS: *//p' "$dir/check.log") unit tests with musl; $(($(date +%s) - t_all)) s in all"
exit 0
