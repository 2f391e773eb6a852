# SPDX-License-Identifier: MIT
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

# ------------------------------------------------- what the test made --

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

# kt_install_traps: clean up on exit and on INT/TERM/HUP (then exit 128+n).
kt_install_traps() {
	trap kt_cleanup EXIT
	trap 'kt_cleanup INT' INT
	trap 'kt_cleanup TERM' TERM
	trap 'kt_cleanup HUP' HUP
	kt_tmpdir >/dev/null
}

# ------------------------------------------------------------ the parts --
# The helpers of each concern live beside this file; scripts source lib.sh
# alone.  lib-cgroup.sh: test cgroups, spawning into them, the memory-limit
# group's figures; lib-daemon.sh: the daemon's config, start and status;
# lib-zram.sh: a zram swap device; lib-priv.sh: user namespaces,
# capabilities, setpriv; lib-dbus.sh: a private system bus.
KT_LIBDIR=$(cd "$(dirname -- "${BASH_SOURCE[0]}")" && pwd) || { echo "lib.sh: cannot find its own directory" >&2; exit 99; }
# shellcheck source-path=SCRIPTDIR source=lib-cgroup.sh
. "$KT_LIBDIR/lib-cgroup.sh" || { echo "cannot source $KT_LIBDIR/lib-cgroup.sh" >&2; exit 99; }
# shellcheck source-path=SCRIPTDIR source=lib-daemon.sh
. "$KT_LIBDIR/lib-daemon.sh" || { echo "cannot source $KT_LIBDIR/lib-daemon.sh" >&2; exit 99; }
# shellcheck source-path=SCRIPTDIR source=lib-zram.sh
. "$KT_LIBDIR/lib-zram.sh" || { echo "cannot source $KT_LIBDIR/lib-zram.sh" >&2; exit 99; }
# shellcheck source-path=SCRIPTDIR source=lib-priv.sh
. "$KT_LIBDIR/lib-priv.sh" || { echo "cannot source $KT_LIBDIR/lib-priv.sh" >&2; exit 99; }
# shellcheck source-path=SCRIPTDIR source=lib-dbus.sh
. "$KT_LIBDIR/lib-dbus.sh" || { echo "cannot source $KT_LIBDIR/lib-dbus.sh" >&2; exit 99; }
