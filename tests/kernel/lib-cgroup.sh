# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# lib-cgroup.sh - the memory-limited test cgroups of psi-lmkd's real-kernel tests:
# making them (cgroup2 or hybrid), leaves, moving and spawning processes
# into them, swap, and reading back the memory-limit group.
# Sourced by lib.sh (source lib.sh, not this file); uses its kt_log/kt_fail,
# kt__write and the KT_CG_DIRS/KT_SPAWNED lists kt_cleanup empties.

# kt_cgroup_create NAME_PREFIX LIMIT_MIB: make a fresh memory-limited test
# group and export
#   KT_CG2_DIR   absolute path of the cgroup2 group
#   KT_CG2_REL   its path relative to the cgroup2 mount, e.g. /psi-lmkd-test-12-345
#   KT_V1_DIR    the cgroup v1 memory group on a hybrid host, else empty
#   KT_PRESSURE  $KT_CG2_DIR/memory.pressure
#   KT_CG_LAYOUT "v2" (memory.max on cgroup2) or "hybrid" (v1 memcg + cgroup2)
# Call it in the main shell (not in $(...)) so that kt_cleanup knows the group.
kt_cgroup_create() {
	local prefix=$1 limit=$2 cg2 v1 name bytes
	[ -n "$prefix" ] || kt_fail "kt_cgroup_create: no name prefix"
	case $limit in
	''|*[!0-9]*) kt_fail "kt_cgroup_create: limit '$limit' is not a number of MiB" ;;
	esac
	if [ "$limit" -lt 1 ] || [ "$limit" -gt 512 ]; then
		kt_fail "kt_cgroup_create: limit ${limit} MiB refused (must be 1..512 MiB)"
	fi
	bytes=$((limit * 1024 * 1024))
	cg2=$(kt_cgroup2_mount)
	[ -n "$cg2" ] || kt_skip "kernel lacks cgroup2 (no cgroup2 mount)"
	name="$prefix-$$-$RANDOM$RANDOM"

	if grep -qw memory "$cg2/cgroup.controllers" 2>/dev/null; then
		# Pure cgroup2 (or cgroup2 owns the memory controller).
		if ! grep -qw memory "$cg2/cgroup.subtree_control"; then
			printf '+memory\n' 2>/dev/null >"$cg2/cgroup.subtree_control" ||
				kt_skip_or_fail "cannot enable +memory in $cg2/cgroup.subtree_control"
		fi
		mkdir "$cg2/$name" || kt_skip_or_fail "cannot create cgroup $cg2/$name"
		KT_CG_DIRS+=("$cg2/$name")
		[ -e "$cg2/$name/memory.max" ] ||
			kt_fail "$cg2/$name has no memory.max although memory is enabled"
		kt__write "$cg2/$name/memory.max" "$bytes"
		if [ -e "$cg2/$name/memory.swap.max" ]; then
			kt__write "$cg2/$name/memory.swap.max" 0
		fi
		KT_V1_DIR=
		KT_CG_LAYOUT=v2
	else
		# Hybrid: the limit comes from a v1 memcg, the pressure file from
		# a cgroup2 group; test processes go into both.
		v1=$(kt_cgroup1_memory_mount)
		[ -n "$v1" ] || kt_skip_or_fail "no memory controller on cgroup2 and no cgroup v1 memory mount"
		mkdir "$v1/$name" || kt_skip_or_fail "cannot create cgroup $v1/$name"
		KT_CG_DIRS+=("$v1/$name")
		kt__write "$v1/$name/memory.limit_in_bytes" "$bytes"
		# No swapping either, like memory.swap.max=0 (best effort).
		[ -e "$v1/$name/memory.swappiness" ] &&
			printf '0\n' 2>/dev/null >"$v1/$name/memory.swappiness"
		[ -e "$v1/$name/memory.memsw.limit_in_bytes" ] &&
			printf '%s\n' "$bytes" 2>/dev/null >"$v1/$name/memory.memsw.limit_in_bytes"
		mkdir "$cg2/$name" || kt_skip_or_fail "cannot create cgroup $cg2/$name"
		KT_CG_DIRS+=("$cg2/$name")
		KT_V1_DIR=$v1/$name
		KT_CG_LAYOUT=hybrid
	fi
	KT_CG2_DIR=$cg2/$name
	KT_CG2_REL=/$name
	KT_PRESSURE=$KT_CG2_DIR/memory.pressure
	export KT_CG2_DIR KT_CG2_REL KT_V1_DIR KT_PRESSURE KT_CG_LAYOUT
	if [ ! -e "$KT_PRESSURE" ]; then
		kt_skip "kernel lacks per-cgroup PSI: $KT_PRESSURE missing (cgroup PSI disabled?)"
	fi
	kt_log "cgroup $KT_CG2_REL ($KT_CG_LAYOUT, limit ${limit} MiB${KT_V1_DIR:+, v1 $KT_V1_DIR})"
}

# kt_cgroup_add_leaf [NAME]: after kt_cgroup_create, make a child group NAME
# (default "leaf") of the cgroup2 test group and make it the test group:
# kt_spawn_in_cgroup and kt_cgroup_enter put processes there from then on.
# The memory limit stays on the parent (the v1 memcg on a hybrid host, the
# parent's memory.max on cgroup2), so the leaf is limited the same way.
# Exports
#   KT_CG2_PARENT_DIR, KT_CG2_PARENT_REL, KT_PARENT_PRESSURE  the parent
#   KT_CG2_DIR, KT_CG2_REL, KT_PRESSURE                        now the leaf
# With every test process in the leaf, the parent's pressure totals follow
# the leaf's: a test can sample the parent's file without touching the
# leaf's (frequent reads of a file starve its unprivileged triggers).
# Call it in the main shell, before any process enters the group.
kt_cgroup_add_leaf() {
	local leaf=${1:-leaf}
	[ -n "${KT_CG2_DIR:-}" ] || kt_fail "kt_cgroup_add_leaf: no test cgroup (call kt_cgroup_create first)"
	[ -n "${KT_CG2_PARENT_DIR:-}" ] && kt_fail "kt_cgroup_add_leaf: the test group is already a leaf"
	case $leaf in
	''|*/*|.|..) kt_fail "kt_cgroup_add_leaf: bad name '$leaf'" ;;
	esac
	[ -z "$(cat "$KT_CG2_DIR/cgroup.procs" 2>/dev/null)" ] ||
		kt_fail "kt_cgroup_add_leaf: $KT_CG2_DIR already has processes"
	mkdir "$KT_CG2_DIR/$leaf" || kt_skip_or_fail "cannot create cgroup $KT_CG2_DIR/$leaf"
	KT_CG_DIRS+=("$KT_CG2_DIR/$leaf")
	KT_CG2_PARENT_DIR=$KT_CG2_DIR
	KT_CG2_PARENT_REL=$KT_CG2_REL
	KT_PARENT_PRESSURE=$KT_PRESSURE
	KT_CG2_DIR=$KT_CG2_DIR/$leaf
	KT_CG2_REL=$KT_CG2_REL/$leaf
	KT_PRESSURE=$KT_CG2_DIR/memory.pressure
	export KT_CG2_PARENT_DIR KT_CG2_PARENT_REL KT_PARENT_PRESSURE KT_CG2_DIR KT_CG2_REL KT_PRESSURE
	[ -e "$KT_PRESSURE" ] || kt_skip "kernel lacks per-cgroup PSI: $KT_PRESSURE missing"
	kt_log "leaf cgroup $KT_CG2_REL (limit on $KT_CG2_PARENT_REL)"
}

# kt_cgroup_enter PID: move PID into the test group(s).
kt_cgroup_enter() {
	local pid=$1
	[ -n "${KT_CG2_DIR:-}" ] || kt_fail "kt_cgroup_enter: no test cgroup"
	if [ -n "${KT_V1_DIR:-}" ]; then
		printf '%s\n' "$pid" 2>/dev/null >"$KT_V1_DIR/cgroup.procs" ||
			kt_fail "cannot move pid $pid into $KT_V1_DIR"
	fi
	printf '%s\n' "$pid" 2>/dev/null >"$KT_CG2_DIR/cgroup.procs" ||
		kt_fail "cannot move pid $pid into $KT_CG2_DIR"
}

# kt_spawn_in_cgroup [-o OUTFILE] CMD [ARG...]: start CMD in the background
# so that it runs inside the test group(s) from its first instruction (a
# subshell moves itself, then execs CMD: the pid stays the same).  CMD's
# stdout and stderr go to OUTFILE (default /dev/null), stdin is /dev/null.
# Echoes the pid and also sets KT_LAST_PID (when not called inside $(...)).
# Returns once the process is in the group.
kt_spawn_in_cgroup() {
	local out=/dev/null pid
	if [ "${1:-}" = -o ]; then
		out=$2
		shift 2
	fi
	[ $# -gt 0 ] || kt_fail "kt_spawn_in_cgroup: no command"
	[ -n "${KT_CG2_DIR:-}" ] || kt_fail "kt_spawn_in_cgroup: no test cgroup"
	(
		# the kernel-test lock stays with the test, not with what it starts
		[ -n "${KT_LOCK_FD:-}" ] && exec {KT_LOCK_FD}>&-
		if [ -n "${KT_V1_DIR:-}" ]; then
			echo "$BASHPID" >"$KT_V1_DIR/cgroup.procs" || exit 125
		fi
		echo "$BASHPID" >"$KT_CG2_DIR/cgroup.procs" || exit 125
		exec "$@"
	) <"/dev/null" >"$out" 2>&1 &
	pid=$!
	# No "Killed" job notices from bash; it still reaps the child.
	disown "$pid" 2>/dev/null
	KT_LAST_PID=$pid
	KT_SPAWNED+=("$pid")
	# Wait until the move happened (the subshell does it at once).
	if ! kt_wait_for 10 kt__arrived "$pid"; then
		kt_pid_alive "$pid" && kill -KILL "$pid" 2>/dev/null
		[ -f "$out" ] && sed 's/^/    | /' "$out" >&2
		kt_fail "spawned pid $pid ($1) did not arrive in $KT_CG2_REL"
	fi
	kt_pid_alive "$pid" || kt_fail "spawned pid $pid ($1) died at once"
	printf '%s\n' "$pid"
}

# True once PID is in the test group, or once it is dead (no point waiting).
kt__arrived() {
	grep -qx "0::$KT_CG2_REL" "/proc/$1/cgroup" 2>/dev/null || kt_pid_dead "$1"
}

# kt_cgroup_pids: echo the pids in all our test groups.
kt_cgroup_pids() {
	local d
	for d in "${KT_CG_DIRS[@]}"; do
		cat "$d/cgroup.procs" 2>/dev/null
	done | sort -un
}

# kt_cgroup_allow_swap BYTES: let the test group (kt_cgroup_create turned
# swap off for it) swap up to BYTES.  Hybrid: v1 memory.swappiness 60 and
# memory.memsw.limit_in_bytes = limit + BYTES (without swap accounting the
# group swaps without a limit of its own); cgroup2: memory.swap.max.
kt_cgroup_allow_swap() {
	local bytes=$1 limit
	if [ -n "${KT_V1_DIR:-}" ]; then
		[ -e "$KT_V1_DIR/memory.swappiness" ] || kt_skip_or_fail "$KT_V1_DIR has no memory.swappiness"
		kt__write "$KT_V1_DIR/memory.swappiness" 60
		if [ -e "$KT_V1_DIR/memory.memsw.limit_in_bytes" ]; then
			limit=$(cat "$KT_V1_DIR/memory.limit_in_bytes") || kt_fail "cannot read $KT_V1_DIR/memory.limit_in_bytes"
			kt__write "$KT_V1_DIR/memory.memsw.limit_in_bytes" $((limit + bytes))
		else
			kt_log "no memory.memsw.* (swap accounting off): the group swaps without a limit of its own"
		fi
	elif [ -e "$KT_CG2_DIR/memory.swap.max" ]; then
		kt__write "$KT_CG2_DIR/memory.swap.max" "$bytes"
	fi
}

# kt_mem_dir: echo the directory that holds the test group's memory limit:
# the v1 memcg on a hybrid host, else the cgroup2 group (the parent when
# kt_cgroup_add_leaf made a leaf).  Use it for the daemon's memory_cgroup.
kt_mem_dir() {
	printf '%s\n' "${KT_V1_DIR:-${KT_CG2_PARENT_DIR:-$KT_CG2_DIR}}"
}

# kt_mem_stat WHAT: echo a byte count of the memory-limit group, WHAT one of
# usage (memory.current / usage_in_bytes), peak (memory.peak /
# max_usage_in_bytes: high-water mark since creation), limit.
kt_mem_stat() {
	local dir f
	dir=$(kt_mem_dir)
	case $1:${KT_V1_DIR:+v1} in
	usage:v1) f=memory.usage_in_bytes ;;
	peak:v1) f=memory.max_usage_in_bytes ;;
	limit:v1) f=memory.limit_in_bytes ;;
	usage:) f=memory.current ;;
	peak:) f=memory.peak ;;
	limit:) f=memory.max ;;
	*) kt_fail "kt_mem_stat: unknown '$1'" ;;
	esac
	cat "$dir/$f" 2>/dev/null || echo '?'
}

# kt_oom_kills: echo how many processes the kernel OOM killer killed in the
# memory-limit group (v1 memory.oom_control "oom_kill", v2 memory.events
# "oom_kill"), or "?" if the kernel does not say.
kt_oom_kills() {
	local dir f
	dir=$(kt_mem_dir)
	if [ -n "${KT_V1_DIR:-}" ]; then f=memory.oom_control; else f=memory.events; fi
	awk '$1 == "oom_kill" { print $2; found = 1 } END { if (!found) print "?" }' "$dir/$f" 2>/dev/null ||
		echo '?'
}
