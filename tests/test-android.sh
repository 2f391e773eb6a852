#!/bin/sh
# SPDX-License-Identifier: MIT
# test-android: the Android build and policy files, as far as this machine
# can check them without an Android tree:
#  - Android.bp parses as Blueprint and is in bpfmt's canonical form (Debian's
#    blueprint-tools); the files it names exist. Soong itself (module types,
#    properties, libinih and libcap resolving) is not run here.
#  - every source compiles with android/build-config.h, the Android
#    properties code included, against a stand-in for bionic's
#    <sys/system_properties.h> (tests/android-shim/): host gcc, and the
#    armhf cross-compiler when installed, with glibc headers, not bionic's,
#    so bionic's own gaps would not show.
#  - init/psi-lmkd.rc: only directives this check knows, lmkd.rc's service
#    (socket, class, user, groups, critical, task_profiles), lmkd's
#    capabilities plus DAC_READ_SEARCH only, the same list in the policy;
#    a reinit trigger for each persist.device_config flag psi-lmkd maps.
#  - init/sepolicy/: psi-lmkd.te compiles with checkpolicy in a stand-in base
#    policy (tests/sepolicy/, with stand-ins for AOSP's macros), and every
#    rule of and towards psi_lmkd is one lmkd has (tests/sepolicy/lmkd.te),
#    the kernel log aside; the checker is shown to catch an extra right and
#    a neverallow. AOSP's own policy, macros and neverallows are not run.
# Exit: 0 pass, 1 fail, 77 a tool missing (everything else passed; under
# CI=true a missing tool fails).
set -u
top=${top_srcdir:-${srcdir:-.}}
fail=0
skip=
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

bad() { echo "FAIL: $*" >&2; fail=1; }
note() { echo "# $*" >&2; }
missing() { note "$1 is not installed (Debian: $2): $3 not checked"; skip="$skip $1"; }

bp=$top/Android.bp
rc=$top/init/psi-lmkd.rc
te=$top/init/sepolicy/psi-lmkd.te
fc=$top/init/sepolicy/file_contexts

# ---------------------------------------------------------------- Android.bp
if command -v bpfmt >/dev/null 2>&1; then
	if ! out=$(bpfmt -l "$bp" 2>&1); then
		bad "Android.bp does not parse as Blueprint:"
		printf '%s\n' "$out" >&2
	elif [ -n "$out" ]; then
		bad "Android.bp is not in bpfmt's canonical form (bpfmt -d Android.bp)"
	fi
	# the checker fails on a broken file
	sed '0,/srcs: \[/s//srcs: [[/' "$bp" >"$tmp/broken.bp"
	bpfmt -l "$tmp/broken.bp" >/dev/null 2>&1 && bad "bpfmt accepted a broken Android.bp"
else
	missing bpfmt blueprint-tools "Android.bp's syntax"
fi
# every file or directory it names: srcs (globs), local_include_dirs,
# init_rc, license_text, src (no spaces in them; a glob is expanded below)
# shellcheck disable=SC2013
for f in $(awk '/^ *(srcs|local_include_dirs|init_rc|license_text): \[/ { on = 1 }
	on || /^ *src: "/ { while (match($0, /"[^"]*"/)) { print substr($0, RSTART + 1, RLENGTH - 2); $0 = substr($0, RSTART + RLENGTH) } }
	/\]/ { on = 0 }' "$bp"); do
	# shellcheck disable=SC2086
	case $f in
	*'*'*) set -- "$top"/$f; [ -e "$1" ] || bad "Android.bp: $f matches no file" ;;
	*) [ -e "$top/$f" ] || bad "Android.bp: $f does not exist" ;;
	esac
done
# every part of src/ is an include directory (the sources include "x.h")
for d in "$top"/src/*/; do
	d=${d%/}
	grep -q "\"src/${d##*/}\"" "$bp" || bad "Android.bp: src/${d##*/} is not in local_include_dirs"
done
grep -q '"init/psi-lmkd.rc"' "$bp" || bad "Android.bp does not install init/psi-lmkd.rc"
grep -q 'overrides: \["lmkd"\]' "$bp" || bad "Android.bp does not leave lmkd out (overrides)"

# ---------------------------------------------------------------- compiled as for Android
# the host compiler, and a 32-bit one (armeabi-v7a's stand-in) when there
# is one; the host's inih and libcap headers serve both
parts=
for d in "$top"/src/*/; do parts="$parts -I$d"; done
for cc in "${ANDROID_CHECK_CC:-cc}" arm-linux-gnueabihf-gcc; do
	command -v "${cc%% *}" >/dev/null 2>&1 || continue
	# shellcheck disable=SC2086 # the flags are words
	if ! out=$($cc -std=gnu11 -fsyntax-only -include "$top/android/build-config.h" -I"$top/tests/android-shim" \
		$parts -I"$top/kernel" ${ANDROID_CHECK_CFLAGS:-} -Wall -Wextra -Werror -Wshadow \
		-Wformat=2 -Wno-unused-parameter "$top"/src/*/*.c "$top"/kernel/psi-monitor.c 2>&1); then
		bad "the sources do not compile with android/build-config.h ($cc):"
		printf '%s\n' "$out" >&2
	fi
done
grep -q 'HAVE_ANDROID_PROPERTIES 1' "$top/android/build-config.h" ||
	bad "android/build-config.h: the Android build reads no properties"

# ---------------------------------------------------------------- init/psi-lmkd.rc
# the grammar this file may use: service options and action commands
awk -v f="$rc" '
	function err(m) { printf "FAIL: psi-lmkd.rc:%d: %s\n", NR, m > "/dev/stderr"; bad = 1 }
	/^[ \t]*(#|$)/ { next }
	/^service / { sec = "service"; if (NF < 3 || $3 !~ /^\//) err("service NAME /PATH [ARGS]"); next }
	/^on / {
		sec = "on"; t = substr($0, 4); n = split(t, c, / && /)
		for (i = 1; i <= n; i++)
			if (c[i] !~ /^property:[a-z0-9_.]+=([^ ]+)$/ && c[i] !~ /^(boot|early-init|init|late-init|post-fs-data)$/)
				err("trigger \"" c[i] "\"")
		next
	}
	/^[^ \t]/ { err("unknown section \"" $1 "\""); next }
	sec == "service" && $1 !~ /^(class|user|group|capabilities|critical|stdio_to_kmsg|task_profiles|socket|seclabel)$/ {
		err("service option \"" $1 "\" is not one this check knows") }
	sec == "service" && $1 == "socket" && ($3 !~ /^(stream|dgram|seqpacket)(\+passcred)?$/ || $4 !~ /^0[0-7][0-7][0-7]$/) {
		err("socket NAME TYPE PERM [USER [GROUP]]") }
	sec == "on" && $1 !~ /^(setprop|exec_background|exec)$/ { err("command \"" $1 "\" is not one this check knows") }
	sec == "on" && $1 == "setprop" && NF != 3 { err("setprop NAME VALUE") }
	sec == "" { err("an option outside a section") }
	END { exit bad }' "$rc" || fail=1
for line in 'class core' 'user lmkd' 'group lmkd system readproc' critical 'task_profiles ServiceCapacityLow' \
	'socket lmkd seqpacket+passcred 0660 system system'; do
	sed 's/^[ \t]*//' "$rc" | grep -qxF "$line" || bad "psi-lmkd.rc: not as lmkd.rc: no '$line'"
done
# capabilities: lmkd.rc's, and DAC_READ_SEARCH, which lmkd's domain holds
caps=$(sed -n 's/^[ \t]*capabilities[ \t]//p' "$rc")
for c in DAC_OVERRIDE KILL IPC_LOCK SYS_NICE SYS_RESOURCE; do
	case " $caps " in *" $c "*) ;; *) bad "psi-lmkd.rc: lmkd's capability $c is missing" ;; esac
done
for c in $caps; do
	case $c in
	DAC_OVERRIDE | KILL | IPC_LOCK | SYS_NICE | SYS_RESOURCE | DAC_READ_SEARCH) ;;
	*) bad "psi-lmkd.rc: capability $c is more than lmkd's" ;;
	esac
	grep -q "^#define CAP_${c}[ 	]" /usr/include/linux/capability.h 2>/dev/null || bad "psi-lmkd.rc: no capability CAP_$c"
done
# the policy grants exactly these
echo "$caps" | tr ' A-Z' '\na-z' | sed '/^$/d' | sort >"$tmp/caps.rc"
sed -n 's/^allow psi_lmkd self:global_capability_class_set { \(.*\) };/\1/p' "$te" | tr ' ' '\n' | sed '/^$/d' |
	sort >"$tmp/caps.te"
cmp -s "$tmp/caps.rc" "$tmp/caps.te" || bad "psi-lmkd.te's capabilities ($(tr '\n' ' ' <"$tmp/caps.te")) are not the rc's"
# the client commands run the service's binary on its configuration
svc=$(sed -n 's/^service psi-lmkd \(.*\) -f \(-c [^ ]*\)$/\1 \2/p' "$rc")
[ -n "$svc" ] || bad "psi-lmkd.rc: no 'service psi-lmkd BINARY -f -c CONFIG'"
for mode in --reinit --boot-completed; do
	grep -qxE "[ 	]+exec_background - system system -- $svc $mode" "$rc" ||
		bad "psi-lmkd.rc: no 'exec_background - system system -- $svc $mode'"
done
# lmkd.rc's experiment triggers, for the flags psi-lmkd maps (src/config/lmkprops.c)
awk '/^static const struct lmk_prop lmk_props/ { on = 1; next } on && /^};/ { on = 0 }
     on && /PK_/ && !/PK_IGNORED/ && !/true \}/ { if (match($0, /"[a-z_]+"/)) print substr($0, RSTART + 1, RLENGTH - 2) }' \
	"$top/src/config/lmkprops.c" | sort >"$tmp/mapped"
[ -s "$tmp/mapped" ] || bad "no mapped property found in src/config/lmkprops.c"
sed -n 's/^on property:sys.boot_completed=1 && property:persist.device_config.lmkd_native.\([a-z_]*\)=\*$/\1/p' "$rc" |
	sort >"$tmp/triggers"
cmp -s "$tmp/mapped" "$tmp/triggers" ||
	bad "psi-lmkd.rc's persist.device_config triggers ($(tr '\n' ' ' <"$tmp/triggers")) are not the mapped properties ($(tr '\n' ' ' <"$tmp/mapped"))"

# ---------------------------------------------------------------- init/sepolicy
while read -r path ctx rest; do
	case $path in '#'* | '') continue ;; esac
	[ -z "$rest" ] || bad "file_contexts: '$path $ctx $rest': more than PATH CONTEXT"
	t=$(echo "$ctx" | sed -n 's/^u:object_r:\([a-z0-9_]*\):s0$/\1/p')
	[ -n "$t" ] || bad "file_contexts: $path: context $ctx is not u:object_r:TYPE:s0"
	[ -z "$t" ] || grep -qE "^type $t," "$te" || bad "file_contexts: $path: type $t is not declared in psi-lmkd.te"
done <"$fc"
grep -q "^/system/bin/psi-lmkd[ 	]" "$fc" || bad "file_contexts does not label /system/bin/psi-lmkd"

policy() { cat "$top/tests/sepolicy/macros.m4" "$top/tests/sepolicy/head.te" "$top/tests/sepolicy/lmkd.te" "$te" "$@" \
	"$top/tests/sepolicy/tail.te" | m4; }
# every rule of psi_lmkd, and towards it or its binary, must be lmkd's
# (psi_lmkd read as lmkd; a rule on an attribute counts for its members);
# prints those that are not. Two setools runs: all rules, all attributes.
compare() {
	{
		seinfo -a -x "$1" | awk '$1 == "attribute" { a = $2; sub(/;$/, "", a); next } a != "" && NF == 1 { print "member", $1, a }'
		sesearch -A "$1" | sed -n 's/^allow /rule /p' | tr -d '{};'
	} | awk '
	$1 == "member" { attr[$2] = attr[$2] " " $3; next }
	$1 == "rule" {
		split($3, tc, ":")
		for (i = 4; i <= NF; i++) { have[$2 SUBSEP tc[1] SUBSEP tc[2] SUBSEP $i] = 1; rules[++n] = $2 SUBSEP tc[1] SUBSEP tc[2] SUBSEP $i }
	}
	END {
		for (k = 1; k <= n; k++) {
			split(rules[k], r, SUBSEP)
			if ((r[1] r[2]) !~ /psi_lmkd/) continue
			if (r[1] == "psi_lmkd" && r[2] == "kmsg_device" && r[3] == "chr_file") continue # stdio_to_kmsg: no liblog
			s = r[1]; t = r[2]; sub(/psi_lmkd/, "lmkd", s); sub(/psi_lmkd/, "lmkd", t)
			if (have[s SUBSEP t SUBSEP r[3] SUBSEP r[4]]) continue
			ok = 0; m = split(attr[t], as, " ")
			for (j = 1; j <= m; j++) if (have[s SUBSEP as[j] SUBSEP r[3] SUBSEP r[4]]) ok = 1
			if (!ok) printf "allow %s %s:%s %s; ", r[1], r[2], r[3], r[4]
		}
	}'
}
if ! command -v checkpolicy >/dev/null 2>&1; then
	missing checkpolicy checkpolicy "psi-lmkd.te"
elif ! command -v m4 >/dev/null 2>&1; then
	missing m4 m4 "psi-lmkd.te"
else
	policy >"$tmp/policy.conf"
	if ! out=$(checkpolicy -c 30 -o "$tmp/policy.bin" "$tmp/policy.conf" 2>&1); then
		bad "psi-lmkd.te does not compile in the stand-in base policy:"
		printf '%s\n' "$out" >&2
	elif ! command -v sesearch >/dev/null 2>&1; then
		missing sesearch setools "psi-lmkd.te's rules against lmkd's"
	elif ! command -v seinfo >/dev/null 2>&1; then
		missing seinfo setools "psi-lmkd.te's rules against lmkd's"
	else
		extra=$(compare "$tmp/policy.bin")
		if [ -n "$extra" ]; then
			bad "psi-lmkd.te grants what lmkd does not have: $extra"
		else
			note "psi-lmkd.te: $(sesearch -A -s psi_lmkd "$tmp/policy.bin" | wc -l) allow rules of psi_lmkd," \
				"each one of lmkd's (the kernel log aside)"
		fi
		# the checker catches an extra right ...
		printf 'allow psi_lmkd proc_zoneinfo:file write;\n' >"$tmp/extra.te"
		policy "$tmp/extra.te" >"$tmp/extra.conf"
		if checkpolicy -c 30 -o "$tmp/extra.bin" "$tmp/extra.conf" >/dev/null 2>&1; then
			[ -n "$(compare "$tmp/extra.bin")" ] || bad "the comparison did not catch an extra right"
		else
			bad "the policy with one extra right did not compile"
		fi
	fi
	# ... and checkpolicy the neverallow
	printf 'allow psi_lmkd self:capability sys_ptrace;\n' >"$tmp/never.te"
	policy "$tmp/never.te" >"$tmp/never.conf"
	checkpolicy -c 30 -o "$tmp/never.bin" "$tmp/never.conf" >/dev/null 2>&1 &&
		bad "checkpolicy accepted sys_ptrace despite the neverallow"
fi

[ $fail -ne 0 ] && exit 1
if [ -n "$skip" ]; then
	# ./bootstrap installs every tool: under CI a missing one is a failure
	[ "${CI:-}" = true ] && { echo "FAIL: CI=true and not installed:$skip" >&2; exit 1; }
	exit 77
fi
exit 0
