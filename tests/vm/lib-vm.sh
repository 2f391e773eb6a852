# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# lib-vm.sh - qemu guests for psi-lmkd's tests (issue 26): a Debian 12
# system with systemd as PID 1 and pure cgroup v2, booted on a chosen Debian
# kernel, root on ext4 on virtio-blk. Sourced by tests/vm/vm-run.
#
#   vm_kernel_deb SERIES        the kernel package of SERIES (6.1, 6.12) in
#                               $VM_CACHE/debs (apt-get download, never
#                               installed on the host); sets VM_KDEB
#   vm_deb_download PKG         any VM_ARCH package into $VM_CACHE/debs;
#                               sets VM_DEB
#   vm_image_ready              the cached image for VM_KDEB (built on first
#                               use, ~2 min); sets VM_IMG_DIR
#   vm_boot WORKIMG [SWAPIMG]   boot it (root read-only to qemu: -snapshot
#                               semantics), the work disk as /vmwork, wait
#                               until the guest powers off; VM_CONSOLE is the
#                               serial console log
#   vm_qemu_run ARG...          start $VM_QEMU with ARG (the machine, its
#                               kernel and disks) and wait as vm_boot does:
#                               for a guest of another kind (tests/vm/arm64-smoke)
#   vm_cleanup                  kill our qemu (if any), remove $VM_TMP
#
# VM_ARCH (amd64) is the guest's Debian architecture: amd64 guests are the
# mmdebstrap images below; an arm64 guest (qemu-system-aarch64, always TCG
# on an amd64 host) is the busybox initramfs of tests/vm/arm64-smoke.
#
# The image is keyed by a hash of the package list, the kernel package's
# file name and the files baked into it (this file, tests/vm/image/), so a
# change of any of these builds a new one; older images of the same kernel
# series are removed.

VM_CACHE=${PSI_LMKD_VM_CACHE:-/var/cache/psi-lmkd-vm}
VM_MIRROR=${VM_MIRROR:-http://deb.debian.org/debian}
VM_SECURITY_MIRROR=${VM_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
# What the guest needs: systemd as PID 1, a kernel's initramfs, the
# libraries of the host-built binaries (libinih1, libcap2, libsystemd0), and
# the tools tests/kernel/*.sh call (flock, setpriv, unshare: util-linux;
# pgrep, sysctl: procps; stress-ng, jq, setfattr: attr, strace, dbus-daemon)
# and the peers bench/peers measures psi-lmkd against (earlyoom, nohang,
# systemd-oomd: installed, masked until a run starts one).
VM_PACKAGES=(systemd systemd-sysv udev dbus kmod initramfs-tools linux-base
	util-linux procps e2fsprogs libinih1 libcap2 libsystemd0
	stress-ng jq attr strace gawk
	earlyoom nohang systemd-oomd)
VM_MEM=${VM_MEM:-1024}
VM_SMP=${VM_SMP:-2}
# Throttle of the root disk (bytes/s). Under TCG the emulated CPU is slow and
# the emulated disk fast: unthrottled, re-reading evicted page cache costs
# almost nothing and file thrash builds no memory pressure (DESIGN.md, §5).
VM_DISK_BPS=${VM_DISK_BPS:-$((40 * 1024 * 1024))}
# Throttle of the swap disk (bytes/s): 20 MB/s, a slow laptop disk, so that
# swapping under TCG costs what it would on real hardware.
VM_SWAP_BPS=${VM_SWAP_BPS:-$((20 * 1024 * 1024))}
VM_BOOT_TIMEOUT=${VM_BOOT_TIMEOUT:-240}
VM_ARCH=${VM_ARCH:-amd64}
case $VM_ARCH in
amd64) VM_QEMU=${VM_QEMU:-qemu-system-x86_64} ;;
arm64) VM_QEMU=${VM_QEMU:-qemu-system-aarch64} ;;
*) printf 'vm: ERROR: unknown VM_ARCH %s (amd64 or arm64)\n' "$VM_ARCH" >&2; exit 1 ;;
esac

VM_TMP='' VM_QEMU_PID='' VM_KDEB='' VM_DEB='' VM_IMG_DIR='' VM_CONSOLE=''

vm_say() { printf 'vm: %s\n' "$*" >&2; }
vm_die() { printf 'vm: ERROR: %s\n' "$*" >&2; exit 1; }

# vm_cleanup: never leave our qemu running, nor our temp files.
# shellcheck disable=SC2317 # called from traps
vm_cleanup() {
	vm_cleanup_qemu
	if [ -n "$VM_TMP" ] && [ -d "$VM_TMP" ] && [ -z "${VM_KEEP:-}" ]; then
		rm -rf -- "$VM_TMP"
	fi
	return 0
}

vm_install_traps() {
	trap vm_cleanup EXIT
	trap 'vm_cleanup; exit 130' INT
	trap 'vm_cleanup; exit 143' TERM
	trap 'vm_cleanup; exit 129' HUP
	VM_TMP=$(mktemp -d "${VM_TMPDIR:-/var/tmp}/psi-lmkd-vm.XXXXXX") || vm_die "cannot create a temp dir"
}

# vm_kernel_meta SERIES: echo Debian's meta package of a kernel series
vm_kernel_meta() {
	case $VM_ARCH:$1 in
	amd64:6.1) echo linux-image-cloud-amd64 ;;       # bookworm (+ bookworm-security)
	amd64:6.12) echo linux-image-6.12-cloud-amd64 ;; # bookworm-security (the trixie kernel built for 12)
	# the generic arm64 flavour, as on arm64 boards and servers (the
	# cloud-arm64 one lacks most drivers)
	arm64:6.1) echo linux-image-arm64 ;;
	*) vm_die "unknown kernel series '$1' for $VM_ARCH (amd64: 6.1 or 6.12; arm64: 6.1)" ;;
	esac
}

# vm_deb_download PKG: VM_DEB = the candidate version of PKG for VM_ARCH,
# downloaded into $VM_CACHE/debs with the host's apt (apt-get download: not
# installed; a foreign VM_ARCH needs dpkg --add-architecture).
vm_deb_download() {
	local pkg=$1 ver file
	command -v apt-get >/dev/null || vm_die "apt-get is missing: the guest's packages come from Debian's archive"
	ver=$(apt-cache policy "$pkg:$VM_ARCH" 2>/dev/null | awk '$1 == "Candidate:" { print $2 }')
	case $ver in
	'' | '(none)') vm_die "apt-cache knows no $pkg:$VM_ARCH (apt-get update? dpkg --add-architecture $VM_ARCH? bookworm and bookworm-security in the host's sources?)" ;;
	esac
	mkdir -p "$VM_CACHE/debs" || vm_die "cannot create $VM_CACHE/debs"
	file=$(printf '%s_%s_%s.deb' "$pkg" "${ver//:/%3a}" "$VM_ARCH")
	if [ ! -s "$VM_CACHE/debs/$file" ]; then
		vm_say "apt-get download $pkg:$VM_ARCH ($ver) into $VM_CACHE/debs"
		(cd "$VM_CACHE/debs" && apt-get download -q "$pkg:$VM_ARCH=$ver" >"$VM_CACHE/debs/download.log" 2>&1) ||
			{ tail -n 5 "$VM_CACHE/debs/download.log" >&2; vm_die "apt-get download $pkg:$VM_ARCH failed (apt-get update?)"; }
		[ -s "$VM_CACHE/debs/$file" ] || vm_die "apt-get download left no $VM_CACHE/debs/$file"
	fi
	VM_DEB=$VM_CACHE/debs/$file
}

# vm_kernel_deb SERIES: VM_KDEB = the kernel image package of SERIES
# (vm_deb_download). The meta package names the versioned one.
vm_kernel_deb() {
	local meta pkg
	meta=$(vm_kernel_meta "$1")
	command -v apt-get >/dev/null || vm_die "apt-get is missing: the kernel package comes from Debian's archive"
	pkg=$(apt-cache depends --important "$meta:$VM_ARCH" 2>/dev/null |
		awk '$1 == "Depends:" && $2 ~ /^linux-image-/ { sub(/:.*/, "", $2); print $2; exit }')
	[ -n "$pkg" ] || vm_die "apt-cache knows no '$meta:$VM_ARCH' (apt-get update? bookworm and bookworm-security in the host's sources?)"
	vm_deb_download "$pkg"
	VM_KDEB=$VM_DEB
}

# The image's recipe: bump when vm_image_ready makes the image differently.
VM_IMAGE_RECIPE=2
# vm_root_key: what the system (stage 1, mmdebstrap) depends on;
# vm_image_key: and what is baked into it (stage 2, tests/vm/image/)
vm_root_key() {
	{
		printf '%s\n' "$VM_IMAGE_RECIPE" "$VM_MIRROR" "${VM_PACKAGES[@]}" "$(basename "$VM_KDEB")"
		cat "$VM_HERE/image/modules"
	} | sha256sum | cut -c1-16
}
vm_image_key() {
	{ vm_root_key; cat "$VM_HERE"/image/*; } | sha256sum | cut -c1-16
}
VM_HERE=$(cd "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)

# vm_root_ready SERIES: VM_ROOT_DIR = $VM_CACHE/root-SERIES-KEY, the guest's
# system as a directory: mmdebstrap bookworm minbase with VM_PACKAGES, and
# the kernel package installed inside it after initramfs-tools was told to
# put the virtio modules into the initrd (the cloud kernel has them as
# modules). The longest step (2-3 min): cached apart from the image so that
# a change of tests/vm/image/ costs seconds.
vm_root_ready() {
	local series=$1 key dir inc
	key=$(vm_root_key)
	dir=$VM_CACHE/root-$series-$key
	if [ ! -f "$dir/mmdebstrap.ok" ]; then
		command -v mmdebstrap >/dev/null || vm_die "mmdebstrap is not installed (Debian: mmdebstrap)"
		vm_say "mmdebstrap: the guest system $dir (once per package list and kernel)"
		rm -rf "$dir"
		mkdir -p "$dir" || vm_die "cannot create $dir"
		inc=$(IFS=,; echo "${VM_PACKAGES[*]}")
		if ! mmdebstrap --variant=minbase --include="$inc" \
			--customize-hook="copy-in '$VM_HERE/image/modules' /etc/initramfs-tools/" \
			--customize-hook="copy-in '$VM_KDEB' /tmp/" \
			--customize-hook="chroot \"\$1\" dpkg -i /tmp/$(basename "$VM_KDEB")" \
			--customize-hook="rm -f \"\$1\"/tmp/*.deb" \
			bookworm "$dir/root" \
			"deb $VM_MIRROR bookworm main" \
			"deb $VM_SECURITY_MIRROR bookworm-security main" \
			>"$dir/mmdebstrap.log" 2>&1; then
			tail -n 30 "$dir/mmdebstrap.log" >&2
			vm_die "mmdebstrap failed (log: $dir/mmdebstrap.log; a Debian mirror must be reachable)"
		fi
		touch "$dir/mmdebstrap.ok"
		# older systems of this series go
		for old in "$VM_CACHE/root-$series-"*; do
			[ "$old" = "$dir" ] || rm -rf -- "$old"
		done
	fi
	VM_ROOT_DIR=$dir
}

# vm_image_ready SERIES: VM_IMG_DIR = $VM_CACHE/img-SERIES-KEY with
# root.img (ext4), vmlinuz, initrd.img, kernel-release: the system of
# vm_root_ready with tests/vm/image/ baked in (the job unit and its
# launcher, fstab), built when missing.
vm_image_ready() {
	local series=$1 key dir t0 kver m old
	key=$(vm_image_key)
	dir=$VM_CACHE/img-$series-$key
	mkdir -p "$VM_CACHE" || vm_die "cannot create $VM_CACHE"
	exec {vm_lock}>"$VM_CACHE/.lock" || vm_die "cannot open $VM_CACHE/.lock"
	flock -w 900 "$vm_lock" || vm_die "$VM_CACHE is locked by another build for 15 minutes"
	if [ ! -s "$dir/root.img" ] || [ ! -s "$dir/vmlinuz" ] || [ ! -s "$dir/initrd.img" ]; then
		command -v mkfs.ext4 >/dev/null || vm_die "mkfs.ext4 is not installed (Debian: e2fsprogs)"
		t0=$(date +%s)
		vm_root_ready "$series"
		vm_say "building the guest image $dir"
		rm -rf "$dir.tmp"
		mkdir -p "$dir.tmp" || vm_die "cannot create $dir.tmp"
		cp -a "$VM_ROOT_DIR/root" "$dir.tmp/root" || vm_die "cannot copy $VM_ROOT_DIR/root"
		cp "$VM_HERE/image/fstab" "$VM_HERE/image/hostname" "$dir.tmp/root/etc/" &&
			cp "$VM_HERE/image/psi-lmkd-vm.service" "$dir.tmp/root/etc/systemd/system/" &&
			cp "$VM_HERE/image/psi-lmkd-vm-launch" "$dir.tmp/root/usr/local/sbin/" &&
			chroot "$dir.tmp/root" sh -e /usr/local/sbin/psi-lmkd-vm-launch --setup >"$dir.tmp/setup.log" 2>&1 ||
			{ cat "$dir.tmp/setup.log" >&2; vm_die "cannot set the guest up (tests/vm/image/)"; }
		kver=$(basename "$(ls "$dir.tmp/root/boot"/vmlinuz-* | head -n 1)")
		kver=${kver#vmlinuz-}
		[ -n "$kver" ] && [ -s "$dir.tmp/root/boot/initrd.img-$kver" ] ||
			vm_die "the guest root has no kernel and initrd in /boot"
		# each either built in or a module in the initrd
		for m in virtio_blk virtio_pci ext4; do
			grep -q "/$m\.ko" "$dir.tmp/root/lib/modules/$kver/modules.builtin" ||
				chroot "$dir.tmp/root" lsinitramfs "/boot/initrd.img-$kver" 2>/dev/null | grep -q "/$m\.ko" ||
				vm_die "the guest initrd lacks $m.ko (initramfs-tools config?)"
		done
		cp "$dir.tmp/root/boot/vmlinuz-$kver" "$dir.tmp/vmlinuz" &&
			cp "$dir.tmp/root/boot/initrd.img-$kver" "$dir.tmp/initrd.img" &&
			echo "$kver" >"$dir.tmp/kernel-release" || vm_die "cannot copy the kernel out of the guest root"
		# 4 GiB, sparse: the system takes ~0.5 GiB; the tests' big files
		# go to /var/tmp on it
		truncate -s 4G "$dir.tmp/root.img" &&
			mkfs.ext4 -q -L psivmroot -d "$dir.tmp/root" "$dir.tmp/root.img" ||
			vm_die "mkfs.ext4 -d of the guest root failed"
		rm -rf "$dir.tmp/root"
		for old in "$VM_CACHE/img-$series-"*; do
			[ "$old" = "$dir.tmp" ] || rm -rf -- "$old"
		done
		mv "$dir.tmp" "$dir" || vm_die "cannot move $dir.tmp into place"
		echo "$(($(date +%s) - t0))" >"$dir/build-seconds"
		vm_say "image ready in $(cat "$dir/build-seconds") s ($(du -sh "$dir/root.img" | cut -f1) used; kernel $kver)"
	fi
	flock -u "$vm_lock"
	exec {vm_lock}>&-
	VM_IMG_DIR=$dir
}

# vm_accel: KVM when /dev/kvm is usable and the guest is of the host's
# architecture, TCG otherwise. Not -cpu max,-svm,-vmx: with qemu 7.2's TCG
# the guest then showed every mount path as "xxxxxx" (/proc/self/mounts),
# and systemd failed to set up namespaces; the kvm modules are kept out with
# module_blacklist= instead. arm64 under TCG: a Cortex-A57 (ARMv8.0, no
# pointer authentication to emulate: -cpu max is several times slower);
# VM_ARM64_CPU to choose another.
vm_accel() {
	local host
	host=$(dpkg --print-architecture 2>/dev/null || uname -m)
	case $host in x86_64) host=amd64 ;; aarch64) host=arm64 ;; esac
	if [ -w /dev/kvm ] && [ "$host" = "$VM_ARCH" ]; then
		echo "-accel kvm -cpu host"
	elif [ "$VM_ARCH" = arm64 ]; then
		echo "-accel tcg,thread=multi -cpu ${VM_ARM64_CPU:-cortex-a57}"
	else
		echo "-accel tcg,thread=multi -cpu max"
	fi
}

# vm_boot WORKIMG [SWAPIMG]: boot the image with WORKIMG as /dev/vdb
# (/vmwork in the guest: the job in, the results out) and SWAPIMG as
# /dev/vdc; wait for the guest to power off. Returns 0 when it did, 1 when
# it did not boot or ran out of time (console tail shown).
vm_boot() {
	local work=$1 swap=${2:-}
	vm_qemu_run \
		-kernel "$VM_IMG_DIR/vmlinuz" -initrd "$VM_IMG_DIR/initrd.img" \
		-append "console=ttyS0 root=/dev/vda rw panic=-1 systemd.show_status=1 mitigations=off module_blacklist=kvm,kvm_amd,kvm_intel ${VM_APPEND:-}" \
		-drive "file=$VM_IMG_DIR/root.img,format=raw,if=virtio,snapshot=on,cache=unsafe,throttling.bps-total=$VM_DISK_BPS" \
		-drive "file=$work,format=raw,if=virtio,cache=writeback" \
		${swap:+-drive "file=$swap,format=raw,if=virtio,cache=unsafe,throttling.bps-total=$VM_SWAP_BPS"}
}

# vm_qemu_run ARG...: start $VM_QEMU (accelerator, memory, vCPUs, no
# network, the first serial port to $VM_CONSOLE) with ARG, and wait until
# the guest powers off: "PSI-VM: runner start" on the console within
# VM_BOOT_TIMEOUT, "PSI-VM: runner done" within VM_TIMEOUT of that. Returns
# as vm_boot; sets VM_T_START, and VM_T_BOOTED once the runner started.
vm_qemu_run() {
	local deadline started='' rc=0 now total
	total=${VM_TIMEOUT:-1800}
	VM_CONSOLE=$VM_TMP/console.log
	: >"$VM_CONSOLE"
	# shellcheck disable=SC2046 # vm_accel's words
	nice -n "${VM_NICE:-5}" "$VM_QEMU" $(vm_accel) -m "$VM_MEM" -smp "$VM_SMP" \
		-nodefaults -no-user-config -display none -no-reboot \
		-serial "file:$VM_CONSOLE" -nic none "$@" \
		</dev/null >"$VM_TMP/qemu.log" 2>&1 &
	VM_QEMU_PID=$!
	VM_T_START=$(date +%s.%N)
	deadline=$(( $(date +%s) + VM_BOOT_TIMEOUT ))
	while kill -0 "$VM_QEMU_PID" 2>/dev/null; do
		now=$(date +%s)
		if [ -z "$started" ] && grep -q 'PSI-VM: runner start' "$VM_CONSOLE" 2>/dev/null; then
			started=1
			# shellcheck disable=SC2034 # read by vm-run
			VM_T_BOOTED=$(date +%s.%N)
			vm_say "guest booted in $(vm_since "$VM_T_START") s"
			deadline=$(( now + total ))
		fi
		if [ "$now" -ge "$deadline" ]; then
			if [ -z "$started" ]; then
				vm_say "the guest did not reach the test runner within $VM_BOOT_TIMEOUT s; console tail:"
			else
				vm_say "the guest ran out of time ($total s after boot); console tail:"
			fi
			tail -n 40 "$VM_CONSOLE" | sed 's/^/  | /' >&2
			vm_cleanup_qemu
			return 1
		fi
		sleep 1
	done
	wait "$VM_QEMU_PID"
	rc=$?
	VM_QEMU_PID=''
	if [ -z "$started" ]; then
		vm_say "qemu exited ($rc) before the guest reached the test runner; qemu said:"
		sed 's/^/  | /' "$VM_TMP/qemu.log" >&2
		vm_say "console tail:"
		tail -n 40 "$VM_CONSOLE" | sed 's/^/  | /' >&2
		return 1
	fi
	if ! grep -q 'PSI-VM: runner done' "$VM_CONSOLE"; then
		vm_say "the guest stopped before the runner finished (qemu rc $rc); console tail:"
		tail -n 40 "$VM_CONSOLE" | sed 's/^/  | /' >&2
		return 1
	fi
	return 0
}

# vm_cleanup_qemu: stop our qemu (TERM, then KILL after 5 s), if it runs
# shellcheck disable=SC2317 # called from traps
vm_cleanup_qemu() {
	[ -n "$VM_QEMU_PID" ] || return 0
	kill -TERM "$VM_QEMU_PID" 2>/dev/null
	for _ in $(seq 1 50); do
		kill -0 "$VM_QEMU_PID" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$VM_QEMU_PID" 2>/dev/null
	wait "$VM_QEMU_PID" 2>/dev/null
	VM_QEMU_PID=''
}

vm_since() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }
