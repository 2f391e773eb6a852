# shellcheck shell=bash
# lib.sh - helpers for psi-lmkd's real-kernel tests.  Source it from bash:
#
#   . "$srcdir/tests/kernel/lib.sh"
#   kt_require_root_and_psi
#   kt_install_traps      # (trap kt_cleanup EXIT INT TERM also cleans up,
#                         #  but then the script goes on after INT/TERM)
#   kt_cgroup_create psi-lmkd-test 128
#   tmp=$(kt_tmpdir)
#   kt_spawn_in_cgroup -o "$tmp/hog.out" "$KT_BINDIR/memhog" 8 900 >/dev/null
#   hog=$KT_LAST_PID      # or hog=$(kt_spawn_in_cgroup ...): works too, but
#                         # then the process is not a child of the test shell
#   kt_wait_ready "$tmp/hog.out" "$hog" 10
#
# Exit codes follow automake: 0 pass, 1 fail, 77 skip.  A missing
# prerequisite skips (77), except under CI=true, where only a real lack of
# the kernel (no PSI, no cgroup2, no memory cgroup controller) may skip and
# anything else (not root, read-only cgroupfs, missing binaries...) fails.
#
# Safety: pressure is only ever created inside a cgroup made here, with a
# memory limit of at most 512 MiB; kernel tests take a machine-wide lock so
# that only one pressure experiment runs at a time; kt_cleanup kills only
# processes inside our own test cgroups plus pids registered with kt_track.
#
# Do not read the watched memory.pressure file in a loop from a test: on
# kernels >= 6.5, frequent reads starve unprivileged (2 s window) triggers.

# ---------------------------------------------------------------- logging --

KT_T0=${KT_T0:-$(date +%s.%N)}
KT_NAME=${KT_NAME:-$(basename -- "$0")}

# Seconds since the test started, with millisecond precision.
kt_elapsed() {
	local now
	now=$(date +%s.%N)
	awk -v a="$KT_T0" -v b="$now" 'BEGIN { printf "%.3f", b - a }'
}

kt_log() {
	printf '[%7ss] %s: %s\n' "$(kt_elapsed)" "$KT_NAME" "$*" >&2
}

# kt_fail MSG: report and exit 1 (the EXIT trap cleans up).
kt_fail() {
	printf '[%7ss] %s: FAIL: %s\n' "$(kt_elapsed)" "$KT_NAME" "$*" >&2
	exit 1
}

# kt_skip MSG: skip (77) - for a lack of the kernel; allowed even under CI.
kt_skip() {
	printf '[%7ss] %s: SKIP: %s\n' "$(kt_elapsed)" "$KT_NAME" "$*" >&2
	exit 77
}

# kt_skip_or_fail MSG: a missing prerequisite that is not the kernel's
# fault: skip normally, fail under CI=true.
kt_skip_or_fail() {
	if [ "${CI:-}" = true ]; then
		kt_fail "$* (CI=true: a missing prerequisite that the kernel does not explain is a failure)"
	fi
	kt_skip "$*"
}

# ----------------------------------------------------------- small helpers --

# kt_wait_for TIMEOUT_S CMD...: run CMD every 0.1 s until it succeeds;
# returns 1 if it did not within TIMEOUT_S seconds.
kt_wait_for() {
	local timeout=$1 deadline
	shift
	deadline=$(( $(date +%s%N) + timeout * 1000000000 ))
	while ! "$@"; do
		if [ "$(date +%s%N)" -ge "$deadline" ]; then
			return 1
		fi
		sleep 0.1
	done
	return 0
}

# kt_pid_alive PID: true if PID exists and is not a zombie.
kt_pid_alive() {
	local stat state
	stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	# The state follows the ") " closing comm (comm may contain spaces).
	state=${stat##*) }
	state=${state%% *}
	case $state in
	Z|X|x) return 1 ;;
	esac
	return 0
}

kt_pid_dead() {
	! kt_pid_alive "$1"
}

# kt_file_has FILE REGEX: true if FILE has a line matching the ERE.
kt_file_has() {
	grep -Eq -- "$2" "$1" 2>/dev/null
}

# kt_wait_ready FILE PID TIMEOUT_S: wait for "ready PID" in FILE (what
# memhog and filepressure print), failing the test if PID dies first or the
# time runs out.
kt_wait_ready() {
	local file=$1 pid=$2 timeout=$3 deadline
	deadline=$(( $(date +%s%N) + timeout * 1000000000 ))
	while ! grep -qx "ready $pid" "$file" 2>/dev/null; do
		if kt_pid_dead "$pid"; then
			sed 's/^/    | /' "$file" >&2 2>/dev/null
			kt_fail "pid $pid exited before it was ready (output above)"
		fi
		if [ "$(date +%s%N)" -ge "$deadline" ]; then
			sed 's/^/    | /' "$file" >&2 2>/dev/null
			kt_fail "pid $pid not ready after ${timeout}s"
		fi
		sleep 0.05
	done
}

# kt_tmpdir: echo a private temp dir (small files only: it may be tmpfs),
# removed by kt_cleanup.  kt_install_traps creates it; otherwise the first
# call must be in the main shell, not in $(...), or cleanup would not know it.
kt_tmpdir() {
	if [ -z "${KT_TMPDIR:-}" ] || [ ! -d "$KT_TMPDIR" ]; then
		if [ "$BASHPID" != "$$" ]; then
			kt_fail "kt_tmpdir: first call from a subshell (call kt_install_traps or kt_tmpdir in the main shell first)"
		fi
		KT_TMPDIR=$(mktemp -d "${TMPDIR:-/tmp}/psi-lmkd-test.XXXXXX") ||
			kt_fail "cannot create a temp dir"
		export KT_TMPDIR
	fi
	printf '%s\n' "$KT_TMPDIR"
}

# kt_disk_tmpdir MIB: echo a fresh dir on a real (not tmpfs/ramfs) file
# system with MIB MiB free, for data whose page cache must be reclaimable
# file cache, not shmem.  Tries $KT_DISK_TMPDIR, /var/tmp, the current dir.
# Removed by kt_cleanup.  Call it in the main shell, not in $(...):
# the result is in KT_DISK_DIR.
kt_disk_tmpdir() {
	local need=$1 base fstype avail
	for base in ${KT_DISK_TMPDIR:-} /var/tmp "$PWD"; do
		[ -d "$base" ] && [ -w "$base" ] || continue
		fstype=$(stat -f -c %T "$base" 2>/dev/null) || continue
		case $fstype in
		tmpfs|ramfs) continue ;;
		esac
		avail=$(df -Pm "$base" 2>/dev/null | awk 'NR == 2 { print $4 }')
		[ -n "$avail" ] && [ "$avail" -ge $((need + 64)) ] || continue
		KT_DISK_DIR=$(mktemp -d "$base/psi-lmkd-test.XXXXXX") || continue
		KT_CLEAN_PATHS+=("$KT_DISK_DIR")
		export KT_DISK_DIR
		return 0
	done
	kt_skip_or_fail "no writable non-tmpfs directory with $need MiB free (set KT_DISK_TMPDIR)"
}

# kt_track PID: kt_cleanup kills PID too (SIGTERM, then SIGKILL after 3 s).
# Use it for processes outside the test cgroup, such as the daemon.
kt_track() {
	KT_TRACKED+=("$1")
}

# ------------------------------------------------------------ prerequisites --

# Echo the mount point of the first cgroup2 file system, or nothing.
kt_cgroup2_mount() {
	awk '$3 == "cgroup2" { gsub(/\\040/, " ", $2); print $2; exit }' /proc/self/mounts
}

# Echo the mount point of the cgroup v1 hierarchy carrying the memory
# controller, or nothing.
kt_cgroup1_memory_mount() {
	awk '$3 == "cgroup" {
		n = split($4, o, ",")
		for (i = 1; i <= n; i++)
			if (o[i] == "memory") { gsub(/\\040/, " ", $2); print $2; exit }
	}' /proc/self/mounts
}

# kt_require_root_and_psi: skip or fail (see the top of this file) unless
# this is root on a kernel with PSI, cgroup2 and a memory controller.  Also
# takes the machine-wide kernel-test lock (waits up to 10 minutes).
kt_require_root_and_psi() {
	local cg2

	if [ "$(id -u)" != 0 ]; then
		kt_skip_or_fail "real-kernel tests need root (they create cgroups)"
	fi
	if [ ! -e /proc/pressure/memory ]; then
		if [ -d /proc/pressure ]; then
			kt_skip "kernel lacks memory PSI: /proc/pressure/memory missing"
		fi
		kt_skip "kernel lacks PSI (CONFIG_PSI=n, or booted with psi=0): /proc/pressure missing"
	fi
	if ! cat /proc/pressure/memory >/dev/null 2>&1; then
		kt_skip "kernel lacks PSI: /proc/pressure/memory is not readable (psi disabled?)"
	fi
	cg2=$(kt_cgroup2_mount)
	if [ -z "$cg2" ]; then
		if ! grep -qw cgroup2 /proc/filesystems; then
			kt_skip "kernel lacks cgroup2 (not in /proc/filesystems)"
		fi
		kt_skip_or_fail "cgroup2 is supported by the kernel but not mounted"
	fi
	if [ ! -e "$cg2/cgroup.procs" ]; then
		kt_skip_or_fail "cgroup2 mount $cg2 looks unusable"
	fi
	if ! grep -qw memory "$cg2/cgroup.controllers" 2>/dev/null &&
	   [ -z "$(kt_cgroup1_memory_mount)" ]; then
		if ! awk '$1 == "memory" && $4 == 1 { f = 1 } END { exit !f }' /proc/cgroups 2>/dev/null; then
			kt_skip "kernel lacks the memory cgroup controller (CONFIG_MEMCG=n or cgroup_disable=memory)"
		fi
		kt_skip_or_fail "memory controller neither on cgroup2 ($cg2) nor mounted as cgroup v1"
	fi
	if [ ! -w "$cg2" ]; then
		kt_skip_or_fail "cgroup2 mount $cg2 is not writable (read-only cgroupfs / container?)"
	fi
	for tool in awk flock mktemp stat df; do
		command -v "$tool" >/dev/null 2>&1 ||
			kt_skip_or_fail "tool '$tool' not found"
	done
	kt_lock
}

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

# kt_lock: serialise kernel tests machine-wide (one pressure experiment at
# a time).  Called by kt_require_root_and_psi; the lock goes with the
# process.
kt_lock() {
	[ -n "${KT_LOCK_FD:-}" ] && return 0
	local lockfile=${KT_LOCKFILE:-/run/lock/psi-lmkd-kernel-tests.lock}
	[ -d "${lockfile%/*}" ] || lockfile=/tmp/psi-lmkd-kernel-tests.lock
	exec {KT_LOCK_FD}>>"$lockfile" || kt_skip_or_fail "cannot open lock $lockfile"
	if ! flock -n "$KT_LOCK_FD"; then
		kt_log "waiting for another kernel test to finish (lock $lockfile)"
		flock -w 600 "$KT_LOCK_FD" ||
			kt_fail "another kernel test holds $lockfile for more than 10 minutes"
	fi
}

# ------------------------------------------------------------------ cgroups --

KT_TRACKED=()
KT_SPAWNED=()		# pids started by kt_spawn_in_cgroup in this shell
KT_CG_DIRS=()		# every cgroup dir we made (v1 and v2), in creation order
KT_CLEAN_PATHS=()	# files/dirs to remove
KT_CLEANED=
KT_ZDEV=		# the number of the zram device kt_zram_add made, while it exists

# kt__write FILE VALUE: write VALUE to a cgroup file, failing the test.
kt__write() {
	if ! printf '%s\n' "$2" 2>/dev/null >"$1"; then
		kt_fail "cannot write '$2' to $1"
	fi
}

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

# kt_cleanup [SIGNAL]: kill what we started, remove our cgroups and temp
# files.  Idempotent.  With a SIGNAL argument (from a signal trap) it exits
# 128+signal afterwards; as an EXIT trap it keeps the exit status.
kt_cleanup() {
	local rc=$? sig=${1:-} pid d i left
	if [ -z "$KT_CLEANED" ]; then
		KT_CLEANED=1
		trap '' INT TERM

		# Tracked pids (e.g. the daemon): ask first, then insist.
		for pid in "${KT_TRACKED[@]}"; do
			kill -TERM "$pid" 2>/dev/null
		done
		for pid in "${KT_TRACKED[@]}"; do
			kt_wait_for 3 kt_pid_dead "$pid" || kill -KILL "$pid" 2>/dev/null
		done

		# Everything in our groups is ours.
		for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
			left=$(kt_cgroup_pids)
			[ -z "$left" ] && break
			for d in "${KT_CG_DIRS[@]}"; do
				[ -e "$d/cgroup.kill" ] && echo 1 2>/dev/null >"$d/cgroup.kill"
			done
			for pid in $left; do
				kill -KILL "$pid" 2>/dev/null
			done
			sleep 0.25
		done
		[ -n "$left" ] && kt_log "cleanup: pids still in test cgroups: $left"

		# Reap those that are our own children (others are not: wait
		# returns at once for them).
		for pid in "${KT_TRACKED[@]}" "${KT_SPAWNED[@]}"; do
			wait "$pid" 2>/dev/null
		done

		# Remove groups, newest first, retrying (EBUSY while dying).
		for (( i = ${#KT_CG_DIRS[@]} - 1; i >= 0; i-- )); do
			d=${KT_CG_DIRS[i]}
			local _
			for _ in 1 2 3 4 5 6 7 8 9 10; do
				[ -d "$d" ] || break
				rmdir "$d" 2>/dev/null && break
				sleep 0.3
			done
			[ -d "$d" ] && kt_log "cleanup: could not remove cgroup $d"
		done

		for d in "${KT_CLEAN_PATHS[@]}"; do
			[ -n "$d" ] && rm -rf -- "$d"
		done
		if [ -n "${KT_TMPDIR:-}" ] && [ -d "$KT_TMPDIR" ]; then
			rm -rf -- "$KT_TMPDIR"
		fi
	fi
	# A swap device goes after our processes (swapoff of a full group's
	# pages could fail or OOM), and is retried by every call until gone.
	kt_zram_remove
	case $sig in
	INT) trap - INT; exit 130 ;;
	TERM) trap - TERM; exit 143 ;;
	HUP) trap - HUP; exit 129 ;;
	esac
	return "$rc"
}

# ------------------------------------------------------------------- zram --

# kt_zram_add DISKSIZE MEM_LIMIT: hot-add a zram device, make it swap with a
# high priority (32000) and set KT_ZDEV (its number), KT_ZDIR (its sysfs
# dir) and KT_ZDEVNODE (/dev/zramN).  MEM_LIMIT is the most RAM it may take.
# kt_cleanup removes it (kt_zram_remove), also on failure and INT/TERM/HUP.
# Skips when the kernel has no zram (also under CI=true); missing
# mkswap/swapon/swapoff skip, or fail under CI=true.
kt_zram_add() {
	local size=$1 mem=$2 v tool
	if [ ! -e /sys/class/zram-control/hot_add ]; then
		command -v modprobe >/dev/null 2>&1 && modprobe zram num_devices=0 2>/dev/null
		if [ ! -e /sys/class/zram-control/hot_add ]; then
			[ -d /sys/module/zram ] &&
				kt_skip_or_fail "zram is loaded but /sys/class/zram-control/hot_add is missing"
			kt_skip "kernel lacks zram (no /sys/class/zram-control, no zram module)"
		fi
	fi
	for tool in mkswap swapon swapoff; do
		command -v "$tool" >/dev/null 2>&1 || kt_skip_or_fail "tool '$tool' not found"
	done
	[ -z "$KT_ZDEV" ] || kt_fail "kt_zram_add: zram$KT_ZDEV is already ours"
	KT_ZDEV=$(cat /sys/class/zram-control/hot_add) || kt_fail "cannot add a zram device (hot_add)"
	case $KT_ZDEV in ''|*[!0-9]*) v=$KT_ZDEV; KT_ZDEV=; kt_fail "hot_add gave '$v', not a device number" ;; esac
	KT_ZDIR=/sys/block/zram$KT_ZDEV
	KT_ZDEVNODE=/dev/zram$KT_ZDEV
	kt__write "$KT_ZDIR/mem_limit" "$mem"
	kt__write "$KT_ZDIR/disksize" "$size"
	kt_wait_for 5 test -b "$KT_ZDEVNODE" || kt_fail "$KT_ZDEVNODE did not appear"
	mkswap "$KT_ZDEVNODE" >/dev/null 2>&1 || kt_fail "mkswap $KT_ZDEVNODE failed"
	swapon -p 32000 "$KT_ZDEVNODE" || kt_fail "swapon $KT_ZDEVNODE failed"
	grep -q "^${KT_ZDEVNODE}[[:space:]]" /proc/swaps || kt_fail "$KT_ZDEVNODE is not in /proc/swaps after swapon"
}

# kt_zram_remove: swapoff, reset and hot_remove the device of kt_zram_add.
# Idempotent; returns 1 if it is still there.  Kill the processes whose
# pages it holds first (kt_cleanup does).
kt_zram_remove() {
	local n=$KT_ZDEV i
	[ -n "$n" ] || return 0
	if grep -q "^/dev/zram${n}[[:space:]]" /proc/swaps 2>/dev/null; then
		swapoff "/dev/zram$n" 2>/dev/null || kt_log "cleanup: swapoff /dev/zram$n failed"
	fi
	for i in 1 2 3 4 5 6 7 8 9 10; do
		[ -e "/sys/block/zram$n" ] || break
		echo 1 2>/dev/null >"/sys/block/zram$n/reset"
		echo "$n" 2>/dev/null >/sys/class/zram-control/hot_remove && break
		sleep 0.3
	done
	if [ -e "/sys/block/zram$n" ]; then
		kt_log "cleanup: COULD NOT REMOVE zram$n (check /proc/swaps and /sys/class/zram-control)"
		return 1
	fi
	KT_ZDEV=
	return 0
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

# kt_install_traps: clean up on exit and on INT/TERM/HUP (then exit 128+n).
kt_install_traps() {
	trap kt_cleanup EXIT
	trap 'kt_cleanup INT' INT
	trap 'kt_cleanup TERM' TERM
	trap 'kt_cleanup HUP' HUP
	kt_tmpdir >/dev/null
}

# ------------------------------------------- memory group and daemon helpers --

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

# kt__us TIME: a "seconds.fraction" time (date +%s.%N, EPOCHREALTIME) in
# integer microseconds.
kt__us() {
	local s=${1%%.*} f=${1#*.}000000
	[ "$s" = "$1" ] && f=000000
	printf '%s\n' $(( 10#$s * 1000000 + 10#${f:0:6} ))
}

# kt__stamp T0_US: copy stdin to stdout, each line prefixed "[SSSS.mmm] " =
# seconds since T0_US (the time base of kt_log).  No fork per line.
kt__stamp() {
	local t0=$1 line now d
	while IFS= read -r line; do
		now=$(kt__us "$EPOCHREALTIME")
		d=$(( (now - t0) / 1000 ))
		printf '[%4d.%03d] %s\n' $(( d / 1000 )) $(( d % 1000 )) "$line"
	done
}

# kt_daemon_start CONF LOG [FLAG...]: start "$PSI_LMKD -f FLAG... -c CONF"
# in the background (a child of this shell, not in the test group), with
# stdout and stderr in LOG, each line stamped "[SSSS.mmm] " in seconds on
# kt_log's time base (see kt_log_time).  Sets KT_DAEMON_PID and tracks it.
# Call it in the main shell (not in $(...)).
kt_daemon_start() {
	local conf=$1 log=$2 t0
	shift 2
	[ -n "${PSI_LMKD:-}" ] && [ -x "$PSI_LMKD" ] || kt_fail "kt_daemon_start: PSI_LMKD not set"
	t0=$(kt__us "$KT_T0")
	if [ -n "${KT_LOCK_FD:-}" ]; then
		# Neither the daemon (nor its on_kill hooks) nor the stamper may
		# hold the kernel-test lock beyond this test.
		"$PSI_LMKD" -f "$@" -c "$conf" </dev/null {KT_LOCK_FD}>&- \
			2> >(exec {KT_LOCK_FD}>&-; kt__stamp "$t0" >"$log") >&2 &
	else
		"$PSI_LMKD" -f "$@" -c "$conf" </dev/null 2> >(kt__stamp "$t0" >"$log") >&2 &
	fi
	KT_DAEMON_PID=$!
	kt_track "$KT_DAEMON_PID"
}

# kt_daemon_status LOG PID FROM [TIER]: send SIGUSR1 to the daemon PID and
# echo the "status tier=" lines (of TIER only, if given) that its LOG gets
# after line FROM; fails the test if none come within 5 s.
kt_daemon_status() {
	local log=$1 pid=$2 from=$3 pattern="status tier=${4:-}"
	kill -USR1 "$pid" 2>/dev/null || kt_fail "cannot send SIGUSR1 to the daemon $pid"
	kt_wait_for 5 sh -c "tail -n +$((from + 1)) '$log' | grep -q '$pattern'" ||
		kt_fail "no '$pattern' line in $log within 5 s of SIGUSR1"
	sleep 0.2	# the other tiers' lines follow at once
	tail -n +"$((from + 1))" "$log" | grep "$pattern"
}

# kt_log_time LINE: echo the "[SSSS.mmm]" stamp of a kt_daemon_start log
# line as seconds (e.g. 12.345).
kt_log_time() {
	local re='^\[ *([0-9]+\.[0-9]+)\]'
	[[ $1 =~ $re ]] && printf '%s\n' "${BASH_REMATCH[1]}"
}
