#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/lib/measure.sh - sourced by bench/run: the rows of the results
# (raw, summarize, note), time stamps, and building the C helpers.

raw() { printf '%s,%s,%s,%s,%s,%s,%s\n' "$@" >>"$RAW"; }
# summarize SCENARIO VARIANT PARAM METRIC UNIT [NOTE]: median/min/max of the
# raw values with that key.
summarize() {
	local s=$1 v=$2 p=$3 m=$4 u=$5 note=${6:-}
	awk -F, -v s="$s" -v v="$v" -v p="$p" -v m="$m" '
		$1 == s && $2 == v && $3 == p && $5 == m && $6 != "" { print $6 }' "$RAW" |
	sort -g | awk -v s="$s" -v v="$v" -v p="$p" -v m="$m" -v u="$u" -v note="$note" '
		{ x[NR] = $1 }
		END {
			if (NR == 0) { printf "%s,%s,%s,%s,,,,0,%s,%s\n", s, v, p, m, u, note; exit }
			med = (NR % 2) ? x[(NR + 1) / 2] : (x[NR / 2] + x[NR / 2 + 1]) / 2
			printf "%s,%s,%s,%s,%.6g,%.6g,%.6g,%d,%s,%s\n", s, v, p, m, med, x[1], x[NR], NR, u, note
		}' >>"$SUM"
}
note() { printf '%s,%s,%s,%s,,,,0,,%s\n' "$1" "$2" "$3" "$4" "$5" >>"$SUM"; }

# Microseconds since the epoch.
now_us() { local t=$EPOCHREALTIME; echo "${t/./}"; }
# stdin -> stdout, each line prefixed with its arrival time in epoch us.
bench_stamp() {
	local line t
	while IFS= read -r line; do
		t=$EPOCHREALTIME
		printf '%s %s\n' "${t/./}" "$line"
	done
}
# ms A_US B_US: (B - A) in whole milliseconds.
ms() { echo $(( ($2 - $1) / 1000 )); }



cc_helper() {
	local name=$1
	shift
	gcc -std=gnu11 -O2 -Wall -Wextra "$@" -o "$TMP/$name" "$HERE/$name.c" ||
		kt_fail "cannot build bench/$name.c"
}
