#!/bin/sh
# SPDX-License-Identifier: MIT
# test-man: the man pages are lint-clean (groff, and mandoc when installed),
# every configuration key of src/config/config-keys.c's key tables has an entry in
# psi-lmkd.conf(5) and every entry there is a key, and every long option of
# src/tools/main.c's option table is documented in psi-lmkd(8) (and every option
# documented under OPTIONS exists). Exit: 0 pass, 1 fail, 77 no groff.
set -u
top=${top_srcdir:-${srcdir:-.}}
man8=$top/man/psi-lmkd.8
man5=$top/man/psi-lmkd.conf.5
fail=0
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

bad() { echo "FAIL: $*" >&2; fail=1; }

if ! command -v groff >/dev/null 2>&1; then
	echo "SKIP: groff is not installed (Debian: groff-base)" >&2
	exit 77
fi

# ---------------------------------------------------------------- lint
for page in "$man8" "$man5"; do
	# -ww: all warnings; -z: no output. Any message is a failure.
	groff -ww -man -z "$page" >"$tmp/groff.out" 2>&1 || bad "groff failed on $page"
	if [ -s "$tmp/groff.out" ]; then
		bad "groff -ww -man -z ${page#"$top"/}:"
		cat "$tmp/groff.out" >&2
	fi
	if command -v mandoc >/dev/null 2>&1; then
		mandoc -T lint "$page" >"$tmp/mandoc.out" 2>&1
		if [ -s "$tmp/mandoc.out" ]; then
			bad "mandoc -T lint ${page#"$top"/}:"
			cat "$tmp/mandoc.out" >&2
		fi
	else
		echo "# mandoc not installed: groff lint only" >&2
	fi
done

# ---------------------------------------------------------------- config keys
# code: the rows of the key tables
# table rows: KEY("name", handler), KEY_DURATION_AT("name", ...), KEY_BOOL_AT("name", ...)
grep -oE '\bKEY(_DURATION_AT|_BOOL_AT)?\("[a-z_0-9]+",' "$top/src/config/config-keys.c" |
	sed -E 's/^[A-Z_]+\("([a-z_0-9]+)".*/\1/' | sort -u >"$tmp/keys.code"
# page: a ".B name" line right after .TP or .TQ
awk 'prev ~ /^\.(TP|TQ)([ \t]|$)/ && $0 ~ /^\.B [a-z_0-9]+[ \t]*$/ { print $2 }
     { prev = $0 }' "$man5" | sort -u >"$tmp/keys.man"
[ -s "$tmp/keys.code" ] || bad "no keys found in src/config/config-keys.c (has the key table format changed?)"
for k in $(comm -23 "$tmp/keys.code" "$tmp/keys.man"); do
	bad "config key '$k' (src/config/config-keys.c) has no entry in man/psi-lmkd.conf.5"
done
for k in $(comm -13 "$tmp/keys.code" "$tmp/keys.man"); do
	bad "man/psi-lmkd.conf.5 documents '$k', which is not a key in src/config/config-keys.c"
done

# ---------------------------------------------------------------- options
# code: { "name", ... } lines of the struct option table in main()
awk '/struct option [a-z_]+\[\] *= *\{/ { on = 1; next }
     on && /^[ \t]*\{ *NULL/ { on = 0 }
     on && match($0, /\{ *"[a-z0-9-]+"/) {
	s = substr($0, RSTART, RLENGTH); sub(/^\{ *"/, "", s); sub(/"$/, "", s); print s
     }' "$top/src/tools/main.c" | sort -u >"$tmp/opts.code"
# page: every \-\-name anywhere, and those in the OPTIONS section's headings
unescape() { sed -e 's/\\-/-/g'; }
grep -oE '\\-\\-[a-z0-9]+(\\-[a-z0-9]+)*' "$man8" | unescape | sed 's/^--//' | sort -u >"$tmp/opts.man"
awk '/^\.SH / { sec = $0 } sec ~ /OPTIONS/ && prev ~ /^\.(TP|TQ)/ { print } { prev = $0 }' "$man8" |
	grep -oE '\\-\\-[a-z0-9]+(\\-[a-z0-9]+)*' | unescape | sed 's/^--//' | sort -u >"$tmp/opts.heads"
[ -s "$tmp/opts.code" ] || bad "no long options found in src/tools/main.c (has the option table moved?)"
for o in $(comm -23 "$tmp/opts.code" "$tmp/opts.man"); do
	bad "option --$o (src/tools/main.c) is not documented in man/psi-lmkd.8"
done
for o in $(comm -23 "$tmp/opts.code" "$tmp/opts.heads"); do
	bad "option --$o has no entry under OPTIONS in man/psi-lmkd.8"
done
for o in $(comm -13 "$tmp/opts.code" "$tmp/opts.heads"); do
	bad "man/psi-lmkd.8 documents option --$o, which src/tools/main.c does not have"
done

echo "# $(wc -l <"$tmp/keys.code") config keys and $(wc -l <"$tmp/opts.code") long options checked" >&2
exit $fail
