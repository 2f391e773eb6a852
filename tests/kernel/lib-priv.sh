# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# lib-priv.sh - the privileged and unprivileged trigger paths of psi-lmkd's real-kernel
# tests: user namespaces, capabilities, setpriv.
# Sourced by lib.sh (source lib.sh, not this file); uses its kt_log/kt_fail family.

# kt_userns_root_ok: true if "unshare -Ur" works here: a new user namespace
# with root mapped to root, where the kernel's capability check for sub-2 s
# PSI trigger windows passes.  Tests use it to reach the privileged (rtpoll)
# trigger path without CAP_SYS_RESOURCE in the initial namespace.  If not,
# KT_USERNS_WHY says why.
kt_userns_root_ok() {
	local out uid first inside
	KT_USERNS_WHY=
	if ! command -v unshare >/dev/null 2>&1; then
		KT_USERNS_WHY="no unshare(1) (util-linux)"
		return 1
	fi
	if ! out=$(unshare -Ur sh -c 'id -u; cat /proc/self/uid_map' 2>&1); then
		KT_USERNS_WHY="unshare -Ur fails (user namespaces disabled?): $(printf '%s' "$out" | tr '\n' ' ')"
		return 1
	fi
	read -r uid first inside _ <<<"$(printf '%s' "$out" | tr '\n' ' ')"
	if [ "$uid" != 0 ] || [ "$first" != 0 ] || [ "$inside" != 0 ]; then
		KT_USERNS_WHY="unshare -Ur does not map root to root (id -u, uid_map: $(printf '%s' "$out" | tr '\n' ' '))"
		return 1
	fi
	return 0
}

# kt_require_userns_root: skip (fail under CI=true) unless kt_userns_root_ok.
kt_require_userns_root() {
	kt_userns_root_ok ||
		kt_skip_or_fail "$KT_USERNS_WHY: cannot test the privileged trigger path"
}

# kt_has_cap BIT: true if this process has capability number BIT (e.g. 24,
# CAP_SYS_RESOURCE) in its effective set.
kt_has_cap() {
	local eff
	eff=$(awk '$1 == "CapEff:" { print $2 }' /proc/self/status 2>/dev/null)
	[ -n "$eff" ] && (( (16#$eff >> $1) & 1 ))
}

# kt_unpriv_wrap: set the array KT_UNPRIV_WRAP to a command prefix that runs
# a program without CAP_SYS_RESOURCE, so that the kernel treats its PSI
# triggers as unprivileged (windows must be multiples of 2 s, served by the
# starvable averages worker): empty if this process already lacks it, else
# setpriv(1) dropping it from the bounding set (root gets its effective set
# from there on exec; the pid stays the same).  Skips (fails under CI=true)
# if that is not possible.
kt_unpriv_wrap() {
	KT_UNPRIV_WRAP=()
	kt_has_cap 24 || return 0
	command -v setpriv >/dev/null 2>&1 ||
		kt_skip_or_fail "this process has CAP_SYS_RESOURCE and there is no setpriv(1) to drop it"
	setpriv --bounding-set=-sys_resource sh -c 'exit 0' 2>/dev/null ||
		kt_skip_or_fail "this process has CAP_SYS_RESOURCE and setpriv cannot drop it (no CAP_SETPCAP?)"
	# shellcheck disable=SC2016
	if setpriv --bounding-set=-sys_resource bash -c \
		'e=$(awk '"'"'$1 == "CapEff:" { print $2 }'"'"' /proc/self/status); (( (16#$e >> 24) & 1 ))'; then
		kt_skip_or_fail "setpriv --bounding-set=-sys_resource leaves CAP_SYS_RESOURCE effective"
	fi
	KT_UNPRIV_WRAP=(setpriv --bounding-set=-sys_resource)
	kt_log "this process has CAP_SYS_RESOURCE: unprivileged programs run under ${KT_UNPRIV_WRAP[*]}"
}
