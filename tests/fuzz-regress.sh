#!/bin/sh
# SPDX-License-Identifier: MIT
# fuzz-regress: runs every seed corpus file (tests/fuzz/corpus/TARGET/) and
# every regression input (tests/fuzz/regress/TARGET/: inputs that once broke
# a parser) through the fuzz targets once. In a plain build the targets are
# replay binaries (tests/fuzz/standalone.c); in a --enable-fuzzing build they
# are the libFuzzer binaries, which run the files given and exit. Fails when
# any input crashes, trips a sanitizer or a target's checks.
set -u
srcdir=${srcdir:-.}
bindir=${FUZZ_BINDIR:-tests/fuzz}
rc=0
for t in config psi procfs trigger trace lmkd moom; do
	bin=$bindir/fuzz-$t
	if [ ! -x "$bin" ]; then
		echo "fuzz-regress: $bin is missing (make check builds it)" >&2
		exit 99
	fi
	list=$(find "$srcdir/tests/fuzz/corpus/$t" "$srcdir/tests/fuzz/regress/$t" -type f 2>/dev/null | LC_ALL=C sort)
	if [ -z "$list" ]; then
		echo "fuzz-regress: no inputs for $t" >&2
		rc=1
		continue
	fi
	n=$(printf '%s\n' "$list" | wc -l)
	# shellcheck disable=SC2086 # one word per file: the paths have no blanks
	if "$bin" $list >"fuzz-regress-$t.out" 2>&1; then
		echo "ok: fuzz-$t, $n inputs"
	else
		rc=1
		echo "FAILED: fuzz-$t (output follows)"
		tail -n 60 "fuzz-regress-$t.out"
	fi
	rm -f "fuzz-regress-$t.out"
done
exit $rc
