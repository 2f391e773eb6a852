#!/bin/sh
# SPDX-License-Identifier: MIT
# test-cycles.sh: no two files of the library call each other
# (tools/file-cycles.sh on the built objects). First proves it can fail:
# two scratch objects that call each other must be reported.
set -u
top=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
build=${top_builddir:-$top/build}
command -v nm >/dev/null 2>&1 || { echo "SKIP: no nm"; exit 77; }
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/src/x" "$tmp/kernel"
printf 'int b(int);\nint a(int n) { return n ? b(n - 1) : 0; }\n' >"$tmp/a.c"
printf 'int a(int);\nint b(int n) { return n ? a(n - 1) : 1; }\n' >"$tmp/b.c"
${CC:-cc} -c "$tmp/a.c" -o "$tmp/src/x/libpsilmkd_a-a.o" && ${CC:-cc} -c "$tmp/b.c" -o "$tmp/src/x/libpsilmkd_a-b.o" ||
	{ echo "SKIP: cannot compile the fixture"; exit 77; }
if "$top/tools/file-cycles.sh" "$tmp" >"$tmp/out" 2>&1 || ! grep -q '^a.c <-> b.c$' "$tmp/out"; then
	echo "FAIL: a.c and b.c call each other and were not reported:"; cat "$tmp/out"; exit 1
fi
echo "ok: a.c <-> b.c reported"
ls "$build"/src/*/libpsilmkd_a-*.o >/dev/null 2>&1 || { echo "SKIP: no built objects in $build/src"; exit 77; }
if ! "$top/tools/file-cycles.sh" "$build"; then
	echo "FAIL: files of src/ call each other (above): hand down what the lower one needs (src/README.md)"; exit 1
fi
echo "ok: no two files of the library call each other"
