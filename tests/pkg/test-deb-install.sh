#!/bin/bash
# test-deb-install.sh - the built .deb in a booted Debian 12 container.
#
# The container is the one of tests/kernel/test-systemd.sh: the cached
# mmdebstrap image ($PSI_LMKD_TEST_CACHE, default /var/cache/psi-lmkd-test),
# an overlay on it, booted with systemd-nspawn. The .deb that
# test-deb-build.sh left in $PKG_OUT (default $top_builddir/deb) is installed
# with dpkg -i, as a user would, and then:
#  - psi-lmkd.service is enabled and active (postinst starts it; Type=notify,
#    so active means READY=1 came), and the time from dpkg -i to active is
#    logged;
#  - /etc/psi-lmkd.conf is a conffile and the daemon reads it;
#  - apt-get purge stops the unit, and leaves none of the package's files,
#    no enablement symlink and no /etc/psi-lmkd.conf behind.
# The daemon cannot hurt anything: a drop-in written before the install adds
# -n (dry run), and it runs in the container's pid namespace anyway.
# Needs root and systemd-nspawn; exit 0 pass, 1 fail, 77 skip (CI=true: a
# missing tool or image fails).

# shellcheck disable=SC2016 # dpkg-query formats in single quotes
set -u
# run by make check-pkg: the outer make's TESTS= must not reach the makes below
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES

srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
out=${PKG_OUT:-${top_builddir:-$srcdir/build}/deb}
KT_NAME=test-deb-install.sh
# shellcheck source-path=SCRIPTDIR source=../kernel/lib.sh
. "$srcdir/tests/kernel/lib.sh" || { echo "cannot source $srcdir/tests/kernel/lib.sh" >&2; exit 99; }

CACHE=${PSI_LMKD_TEST_CACHE:-/var/cache/psi-lmkd-test}
IMAGE=$CACHE/bookworm
IMAGE_PACKAGES=systemd,systemd-sysv,dbus,libinih1,libcap2,libsystemd0
MACHINE=psi-lmkd-deb-$$
work='' nspawn='' init='' mounted=''

# shellcheck disable=SC2317 # called from the EXIT trap
cleanup() {
	local i
	if [ -n "$nspawn" ] && kill -0 "$nspawn" 2>/dev/null; then
		kill -TERM "$nspawn" 2>/dev/null
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
}
trap cleanup EXIT
trap 'exit 1' INT TERM

ctl() { timeout 120 nsenter -t "$init" -a "$@"; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }

fail_with_logs() {
	if [ -n "$init" ]; then
		ctl systemctl status --no-pager -l psi-lmkd.service >&2 2>&1
		ctl journalctl -b --no-pager -u psi-lmkd.service >&2 2>&1
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
			if [ "$(cat "/proc/$c/comm" 2>/dev/null)" = systemd ] &&
				awk '/^NSpid:/ { exit !($NF == 1 && NF > 2) }' "/proc/$c/status" 2>/dev/null; then
				echo "$c"
				return 0
			fi
			todo+=("$c")
		done
	done
	return 1
}

# ---------------------------------------------------------------- prerequisites

[ "$(id -u)" = 0 ] || kt_skip_or_fail "needs root (overlay mount, systemd-nspawn)"
[ -e /proc/pressure/memory ] || kt_skip "kernel lacks PSI: the unit's ConditionPathExists= would skip it"
for cmd in systemd-nspawn nsenter pgrep timeout dpkg-deb; do
	command -v "$cmd" >/dev/null ||
		kt_skip_or_fail "$cmd is not installed (Debian: systemd-container, util-linux, procps, coreutils, dpkg)"
done
debs=("$out"/psi-lmkd_*.deb)
deb=${debs[0]}
[ -f "$deb" ] || kt_skip_or_fail "no psi-lmkd_*.deb in $out (tests/pkg/test-deb-build.sh makes it)"

mkdir -p "$CACHE" || kt_fail "cannot create $CACHE"
exec 8>"$CACHE/.lock"
flock -w 600 8 || kt_fail "$CACHE is locked by another run for 10 minutes"
if [ ! -x "$IMAGE/lib/systemd/systemd" ]; then
	command -v mmdebstrap >/dev/null || kt_skip_or_fail "no image in $IMAGE and mmdebstrap is not installed"
	kt_log "building the Debian 12 image in $IMAGE (once)"
	rm -rf "$IMAGE.tmp"
	if ! mmdebstrap --variant=minbase --include="$IMAGE_PACKAGES" bookworm "$IMAGE.tmp" \
		>"$CACHE/mmdebstrap.log" 2>&1; then
		tail -n 20 "$CACHE/mmdebstrap.log" >&2
		rm -rf "$IMAGE.tmp"
		kt_skip_or_fail "mmdebstrap failed (no Debian mirror reachable?); see $CACHE/mmdebstrap.log"
	fi
	mv "$IMAGE.tmp" "$IMAGE" || kt_fail "cannot move the image into place"
fi
flock -u 8

work=$(mktemp -d /var/tmp/psi-lmkd-deb.XXXXXX) || kt_fail "cannot create a scratch dir"
mkdir -p "$work/upper" "$work/ovl" "$work/root"
if mount -t overlay overlay -o "lowerdir=$IMAGE,upperdir=$work/upper,workdir=$work/ovl" "$work/root" 2>/dev/null; then
	mounted=1
else
	kt_log "no overlayfs here: copying the image"
	cp -a "$IMAGE/." "$work/root/" || kt_fail "cannot copy $IMAGE"
fi
cp "$deb" "$work/root/root/psi-lmkd.deb" || kt_fail "cannot copy $deb into the container"
# dry run: the package's unit, with -n added (not a file of the package)
mkdir -p "$work/root/etc/systemd/system/psi-lmkd.service.d"
printf '[Service]\nExecStart=\nExecStart=/usr/sbin/psi-lmkd -f -n\n' \
	>"$work/root/etc/systemd/system/psi-lmkd.service.d/dry-run.conf"

# ---------------------------------------------------------------- boot

systemd-nspawn -D "$work/root" -b --register=no --keep-unit --console=pipe -M "$MACHINE" \
	--capability=CAP_IPC_LOCK </dev/null >"$work/console.log" 2>&1 &
nspawn=$!
kt_wait_for 30 container_init >/dev/null || fail_with_logs "the container's systemd did not start"
init=$(container_init)
kt_wait_for 30 ctl test -S /run/systemd/private || fail_with_logs "the container's systemd does not answer"
state=$(ctl systemctl is-system-running --wait 2>/dev/null)
case $state in
running|degraded) ;;
*) fail_with_logs "the container did not boot (is-system-running: ${state:-nothing})" ;;
esac
kt_log "container booted ($state)"

# ---------------------------------------------------------------- install

t0=$(now)
ctl env DEBIAN_FRONTEND=noninteractive dpkg -i /root/psi-lmkd.deb >"$work/dpkg.log" 2>&1 ||
	{ cat "$work/dpkg.log" >&2; fail_with_logs "dpkg -i failed"; }
t_dpkg=$(since "$t0")
kt_wait_for 30 ctl systemctl is-active --quiet psi-lmkd.service || fail_with_logs "psi-lmkd is not active after dpkg -i"
t_active=$(since "$t0")
kt_log "install-to-active: dpkg -i returned after $t_dpkg s, psi-lmkd.service active after $t_active s"
[ "$(ctl systemctl is-enabled psi-lmkd.service)" = enabled ] || fail_with_logs "psi-lmkd.service is not enabled"
ctl systemctl is-active psi-lmkd.service >&2
ctl systemctl show -p StatusText --value psi-lmkd.service | sed 's/^/  StatusText: /' >&2
grep -qx /etc/psi-lmkd.conf "$work/root/var/lib/dpkg/info/psi-lmkd.conffiles" ||
	fail_with_logs "/etc/psi-lmkd.conf is not registered as a conffile"
ctl journalctl -b --no-pager -u psi-lmkd.service | grep -q '/etc/psi-lmkd.conf\|tier' ||
	fail_with_logs "the journal shows nothing of the daemon's start"
ctl dpkg-query -L psi-lmkd >"$work/files" || fail_with_logs "dpkg-query -L failed"

# ---------------------------------------------------------------- purge

ctl env DEBIAN_FRONTEND=noninteractive apt-get purge -y psi-lmkd >"$work/purge.log" 2>&1 ||
	{ cat "$work/purge.log" >&2; fail_with_logs "apt-get purge failed"; }
ctl systemctl is-active --quiet psi-lmkd.service && fail_with_logs "psi-lmkd is still active after purge"
pgrep -x psi-lmkd >/dev/null && ctl pgrep -x psi-lmkd && fail_with_logs "a psi-lmkd process outlived the purge"
rm -rf "$work/root/etc/systemd/system/psi-lmkd.service.d"
left=''
while IFS= read -r f; do
	[ -d "$work/root$f" ] && continue # directories (or merged-/usr links to them) are shared
	[ -e "$work/root$f" ] || [ -L "$work/root$f" ] && left="$left $f"
done <"$work/files"
for f in /etc/psi-lmkd.conf /etc/systemd/system/multi-user.target.wants/psi-lmkd.service \
	/var/lib/systemd/deb-systemd-helper-enabled/psi-lmkd.service \
	/var/lib/dpkg/info/psi-lmkd.list /usr/share/doc/psi-lmkd; do
	[ -e "$work/root$f" ] || [ -L "$work/root$f" ] && left="$left $f"
done
[ -z "$left" ] || fail_with_logs "left behind after purge:$left"
ctl dpkg-query -W -f='${db:Status-Abbrev}' psi-lmkd 2>/dev/null | grep -q '^ii' &&
	fail_with_logs "dpkg still lists psi-lmkd as installed"
kt_log "purge: unit stopped, $(wc -l <"$work/files") paths checked, nothing left"

kt_log "PASS ($(kt_elapsed) s in all)"
exit 0
