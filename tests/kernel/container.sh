# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# container.sh - a booted Debian 12 container for the tests that need a real
# systemd (tests/kernel/test-systemd.sh, tests/pkg/test-deb-install.sh) or a
# real OpenRC (tests/pkg/test-openrc.sh: set CT_INIT=openrc before sourcing).
# Sourced after lib.sh. The image is built once with mmdebstrap into
# $PSI_LMKD_TEST_CACHE (default /var/cache/psi-lmkd-test) and kept outside
# the source tree; each run works on an overlay of it (or a copy where
# overlayfs is missing) and boots it with systemd-nspawn. The container is
# always shut down and the scratch directory removed, even on failure.
#
#   ct_require WHY [TOOL...]    root, PSI (else skip: WHY) and the tools
#   ct_find_deb DIR             $deb: the psi-lmkd_*.deb in DIR (else skip)
#   now, since T0               a timestamp; the seconds since T0 (2 decimals)
#   ct_install_traps MACHINE    the EXIT/INT/TERM traps; MACHINE names it
#   ct_image_ready              the cached image exists (built on first use)
#   ct_root_prepare PREFIX      $work (mktemp under /var/tmp) and $work/root
#   ct_boot                     boot $work/root; $init, $state set (OpenRC:
#                               the runlevel)
#   ctl CMD...                  run CMD in the container (CT_CTL_TIMEOUT s)
#   fail_with_logs MESSAGE      the unit's state, journal and console; fail
# The unit the diagnostics look at: CT_UNIT (default psi-lmkd.service).
# CT_INIT=openrc: an image of its own ($CACHE/bookworm-openrc: Debian's
# sysvinit-core as PID 1 running Debian's openrc), booted until OpenRC has
# reached its default runlevel; the diagnostics then show rc-status and the
# file CT_LOG (if set) instead of systemd's.

# shellcheck disable=SC2034 # IMAGE_PACKAGES and state are read by the callers
CACHE=${PSI_LMKD_TEST_CACHE:-/var/cache/psi-lmkd-test}
CT_INIT=${CT_INIT:-systemd}
case $CT_INIT in
openrc)
	IMAGE=$CACHE/bookworm-openrc
	IMAGE_PACKAGES=sysvinit-core,openrc,procps,libinih1,libcap2,libsystemd0
	IMAGE_INIT=sbin/openrc-run # a file that a complete image has
	INIT_COMM=init ;;
*)
	IMAGE=$CACHE/bookworm
	IMAGE_PACKAGES=systemd,systemd-sysv,dbus,libinih1,libcap2,libsystemd0
	IMAGE_INIT=lib/systemd/systemd
	INIT_COMM=systemd ;;
esac
CT_LOG=${CT_LOG:-}
CT_CTL_TIMEOUT=${CT_CTL_TIMEOUT:-60}
CT_UNIT=${CT_UNIT:-psi-lmkd.service}
CT_MACHINE=''
work='' nspawn='' init='' mounted='' state='' deb=''

# shellcheck disable=SC2317 # called from the EXIT trap
ct_cleanup() {
	local i
	# sysvinit ignores nspawn's SIGRTMIN+3: SIGKILL to the container's PID 1
	# ends its whole pid namespace, and nspawn with it
	if [ "$CT_INIT" = openrc ] && [ -n "$init" ]; then
		kill -KILL "$init" 2>/dev/null
	fi
	if [ -n "$nspawn" ] && kill -0 "$nspawn" 2>/dev/null; then
		kill -TERM "$nspawn" 2>/dev/null # nspawn halts the container
		for i in $(seq 1 150); do
			kill -0 "$nspawn" 2>/dev/null || break
			sleep 0.1
		done
		kill -0 "$nspawn" 2>/dev/null && kill -KILL "$nspawn" 2>/dev/null
		wait "$nspawn" 2>/dev/null
	fi
	if [ -n "$mounted" ]; then
		umount "$work/root" 2>/dev/null || umount -l "$work/root" 2>/dev/null
	fi
	[ -n "$work" ] && rm -rf "$work"
	[ -n "$CT_MACHINE" ] && rm -rf "/run/systemd/nspawn/propagate/$CT_MACHINE" 2>/dev/null
	return 0
}

# ct_require WHY [TOOL...]: root, PSI and what every container test runs
ct_require() {
	local why=$1 cmd
	shift
	[ "$(id -u)" = 0 ] || kt_skip_or_fail "needs root (overlay mount, systemd-nspawn)"
	[ -e /proc/pressure/memory ] || kt_skip "kernel lacks PSI: $why"
	for cmd in systemd-nspawn nsenter pgrep timeout "$@"; do
		command -v "$cmd" >/dev/null ||
			kt_skip_or_fail "$cmd is not installed (Debian: systemd-container, util-linux, procps, coreutils, dpkg)"
	done
}

# ct_find_deb DIR: $deb, the package that tests/pkg/test-deb-build.sh left in DIR
ct_find_deb() {
	local debs=("$1"/psi-lmkd_*.deb)
	deb=${debs[0]}
	[ -f "$deb" ] || kt_skip_or_fail "no psi-lmkd_*.deb in $1 (tests/pkg/test-deb-build.sh makes it)"
}

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }

ct_install_traps() {
	CT_MACHINE=$1
	trap ct_cleanup EXIT
	trap 'exit 1' INT TERM
}

ctl() { timeout "$CT_CTL_TIMEOUT" nsenter -t "$init" -a "$@"; }

# diagnostics for a failure: the unit's state and journal, the console
fail_with_logs() {
	if [ -n "$init" ] && [ "$CT_INIT" = openrc ]; then
		ctl rc-status -a >&2 2>&1
		[ -n "$CT_LOG" ] && ctl tail -n 40 "$CT_LOG" >&2 2>&1
	elif [ -n "$init" ]; then
		ctl systemctl status --no-pager -l "$CT_UNIT" >&2 2>&1
		ctl journalctl -b --no-pager -u "$CT_UNIT" >&2 2>&1
	fi
	[ -f "$work/console.log" ] && tail -n 40 "$work/console.log" >&2
	kt_fail "$*"
}

# container_init: echo the pid (in this namespace) of the container's PID 1
container_init() {
	local todo=("$nspawn") p c
	while [ ${#todo[@]} -gt 0 ]; do
		p=${todo[0]}
		todo=("${todo[@]:1}")
		for c in $(pgrep -P "$p"); do
			if [ "$(cat "/proc/$c/comm" 2>/dev/null)" = "$INIT_COMM" ] &&
				awk '/^NSpid:/ { exit !($NF == 1 && NF > 2) }' "/proc/$c/status" 2>/dev/null; then
				echo "$c"
				return 0
			fi
			todo+=("$c")
		done
	done
	return 1
}

ct_image_ready() {
	mkdir -p "$CACHE" || kt_fail "cannot create $CACHE"
	# one lock per image: check-pkg may build the systemd and the OpenRC
	# image at once, and each build takes minutes
	exec 8>"$IMAGE.lock"
	flock -w 600 8 || kt_fail "$IMAGE is locked by another run for 10 minutes"
	if [ ! -x "$IMAGE/$IMAGE_INIT" ]; then
		command -v mmdebstrap >/dev/null || kt_skip_or_fail "no image in $IMAGE and mmdebstrap is not installed"
		kt_log "building the Debian 12 image in $IMAGE (once)"
		rm -rf "$IMAGE.tmp"
		if ! mmdebstrap --variant=minbase --include="$IMAGE_PACKAGES" bookworm "$IMAGE.tmp" \
			>"$IMAGE.mmdebstrap.log" 2>&1; then
			tail -n 20 "$IMAGE.mmdebstrap.log" >&2
			rm -rf "$IMAGE.tmp"
			kt_skip_or_fail "mmdebstrap failed (no Debian mirror reachable?); see $IMAGE.mmdebstrap.log"
		fi
		mv "$IMAGE.tmp" "$IMAGE" || kt_fail "cannot move the image into place"
	fi
	flock -u 8
}

# ct_root_prepare PREFIX: $work/root, an overlay on the image
ct_root_prepare() {
	work=$(mktemp -d "/var/tmp/$1.XXXXXX") || kt_fail "cannot create a scratch dir"
	mkdir -p "$work/upper" "$work/ovl" "$work/root"
	if mount -t overlay overlay -o "lowerdir=$IMAGE,upperdir=$work/upper,workdir=$work/ovl" "$work/root" 2>/dev/null; then
		mounted=1
	else
		kt_log "no overlayfs here: copying the image"
		cp -a "$IMAGE/." "$work/root/" || kt_fail "cannot copy $IMAGE"
	fi
}

# ct_openrc_booted: OpenRC is in its default runlevel, and done entering it
ct_openrc_booted() {
	[ "$(ctl rc-status --runlevel 2>/dev/null)" = default ] && ! ctl pgrep -x openrc >/dev/null
}

# ct_boot: boot $work/root and wait until its systemd (or OpenRC) has
# finished booting
ct_boot() {
	local net=()

	# a network namespace of its own gives the container a sysfs of its
	# own: in the host's, its /sys shares the host's superblock, and the
	# sysvinit boot's remount of /sys read-only made the host's /sys
	# read-only too (every later zram test then failed)
	[ "$CT_INIT" = openrc ] && net=(--private-network)
	systemd-nspawn -D "$work/root" -b --register=no --keep-unit --console=pipe -M "$CT_MACHINE" \
		"${net[@]}" --capability=CAP_IPC_LOCK </dev/null >"$work/console.log" 2>&1 &
	nspawn=$!
	kt_wait_for 30 container_init >/dev/null || fail_with_logs "the container's $INIT_COMM did not start"
	init=$(container_init)
	if [ "$CT_INIT" = openrc ]; then
		kt_wait_for 60 ct_openrc_booted || fail_with_logs "OpenRC did not reach its default runlevel"
		state=$(ctl rc-status --runlevel)
		return 0
	fi
	# systemctl needs the manager's private socket; --wait then waits for the boot
	kt_wait_for 30 ctl test -S /run/systemd/private || fail_with_logs "the container's systemd does not answer"
	state=$(ctl systemctl is-system-running --wait 2>/dev/null)
	case $state in
	running|degraded) ;;
	*) fail_with_logs "the container did not boot (is-system-running: ${state:-nothing})" ;;
	esac
}
