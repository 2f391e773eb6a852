#!/bin/sh
# SPDX-License-Identifier: MIT
# file-cycles.sh BUILDDIR: the pairs of source files that call each other
# both ways. Reads the built objects (nm): a file "uses" another when it
# refers to a symbol (function or object) the other defines. Prints
# "a.c <-> b.c" per circle, and every longer circle's strongly connected
# group; exit 1 when there is any.
set -eu
b=${1:-build}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
# the parts' objects only (src/PART/), not a build directory's leftovers of
# the flat src/ before it
for o in $(find "$b/src" -mindepth 2 -name 'libpsilmkd_a-*.o'; find "$b/kernel" -name 'libpsilmkd_a-*.o' | sort); do
	f=${o##*/libpsilmkd_a-}; f=${f%.o}.c
	nm "$o" | awk -v f="$f" '$(NF-1) ~ /^[TDBR]$/ { print "def", $NF, f } $(NF-1) == "U" { print "use", $NF, f }'
done >"$tmp/syms"
awk '$1 == "def" { d[$2] = $3 } $1 == "use" { u[NR] = $3 " " $2 }
	END { for (i in u) { split(u[i], a, " "); if ((a[2] in d) && d[a[2]] != a[1]) print a[1], d[a[2]] } }' \
	"$tmp/syms" | sort -u >"$tmp/edges"
# the graph's strongly connected groups (tsort reports every cycle it breaks)
awk '{ print $1, $2 }' "$tmp/edges" | tsort 2>"$tmp/cycles" >/dev/null || true
awk '{ e[$1 " " $2] = 1 } END { for (k in e) { split(k, a, " "); if ((a[2] " " a[1]) in e && a[1] < a[2]) print a[1], "<->", a[2] } }' \
	"$tmp/edges" | sort >"$tmp/pairs"
cat "$tmp/pairs"
if [ -s "$tmp/cycles" ]; then echo "longer circles (tsort):"; sed 's/^tsort: //' "$tmp/cycles"; fi
[ ! -s "$tmp/pairs" ] && [ ! -s "$tmp/cycles" ]
