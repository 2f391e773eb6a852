#!/bin/sh
# SPDX-License-Identifier: MIT
# test-layers.sh [TOP]: every #include "x.h" between the parts of src/ (and
# kernel/) is an edge src/parts.txt allows, and the table has no circle: a
# new upward include fails make check. Without TOP it first proves it can
# fail: a scratch copy of the tree with one upward include (base -> daemon)
# and one table with a circle must each be refused, then checks the tree.
set -u
top=${1:-${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}}

# check TOP: prints each offending include; 0 = clean, 1 = not
check() {
	t=$1
	[ -f "$t/src/parts.txt" ] || { echo "no $t/src/parts.txt"; return 1; }
	awk '/^[a-z]+:/ { p = substr($1, 1, length($1) - 1); for (i = 2; i <= NF; i++) print p, $i; print p, p }' \
		"$t/src/parts.txt" >"$tmp/allowed"
	# the table's own order: tsort refuses a circle (self edges aside)
	awk '$1 != $2' "$tmp/allowed" | tsort >/dev/null 2>"$tmp/tsort" || true
	if [ -s "$tmp/tsort" ]; then
		echo "src/parts.txt has a circle:"; cat "$tmp/tsort"; return 1
	fi
	# where each header lives: its part
	: >"$tmp/where"
	for d in "$t"/src/*/ "$t/kernel/"; do
		p=$(basename "$d")
		grep -q "^$p:" "$t/src/parts.txt" || { echo "src/$p/ is not a part of src/parts.txt"; return 1; }
		for h in "$d"*.h; do [ -f "$h" ] && echo "$(basename "$h") $p"; done >>"$tmp/where"
	done
	for f in "$t"/src/*.[ch]; do
		[ -f "$f" ] && { echo "${f#"$t"/}: a file of no part (move it into one of src/*/)"; return 1; }
	done
	bad=0
	for f in "$t"/src/*/*.[ch] "$t"/kernel/*.[ch]; do
		[ -f "$f" ] || continue
		p=$(basename "$(dirname "$f")")
		sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f" | while read -r h; do
			q=$(awk -v h="$h" '$1 == h { print $2; exit }' "$tmp/where")
			[ -n "$q" ] || continue # not a part's header (build-config.h, a system one)
			grep -qx "$p $q" "$tmp/allowed" || echo "${f#"$t"/}: includes \"$h\" of part $q: $p may not use $q (src/parts.txt)"
		done
	done >"$tmp/bad"
	[ -s "$tmp/bad" ] && { cat "$tmp/bad"; bad=1; }
	return $bad
}

tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
if [ $# -eq 0 ]; then
	# the check can fail: a scratch copy with one upward include...
	s=$tmp/scratch
	mkdir -p "$s" && cp -R "$top/src" "$top/kernel" "$s/" || exit 99
	printf '#include "daemon.h"\n' >>"$s/src/base/log.c"
	if check "$s" >"$tmp/out" 2>&1; then
		echo "FAIL: an include of daemon.h in src/base/log.c was not refused"; exit 1
	fi
	grep -q 'src/base/log.c: includes "daemon.h" of part daemon' "$tmp/out" ||
		{ echo "FAIL: the upward include was refused for another reason:"; cat "$tmp/out"; exit 1; }
	# ... and a table with a circle (base may use daemon)
	cp "$top/src/base/log.c" "$s/src/base/log.c" || exit 99
	sed 's/^base:.*/base: daemon/' "$top/src/parts.txt" >"$s/src/parts.txt"
	if check "$s" >"$tmp/out" 2>&1; then
		echo "FAIL: a table where base may use daemon was not refused"; exit 1
	fi
	grep -q 'has a circle' "$tmp/out" || { echo "FAIL: the circle was not named:"; cat "$tmp/out"; exit 1; }
	echo "ok: an upward include and a circle in the table are refused"
fi
if ! check "$top"; then
	echo "FAIL: includes against src/parts.txt (see src/README.md)"; exit 1
fi
echo "ok: every include between parts is one src/parts.txt allows"
exit 0
