#!/bin/bash
# SPDX-License-Identifier: MIT
# run.sh - the job of a psi-lmkd test guest (tests/vm/), run at boot by the
# image's psi-lmkd-vm.service from the work disk (/vmwork), which also
# carries the source tree (src/), the host-built binaries (build/), the
# Debian package (deb/) and job.conf (STEPS, CI). Each step's log, exit
# status and duration go to /vmwork/results/; "PSI-VM: ..." lines on the
# serial console mark progress for the host. The unit powers off afterwards.
#
# Steps:  kt:NAME        tests/kernel/NAME as `make check` runs it
#         scenario:MODE  the shipped package system-wide against a runaway
#                        (scenario.sh; MODE none, disk, zram)
#         peers:GUARD:SCENARIO:RUN  one run of the head-to-head benchmark
#                        (peers.sh; bench/peers)
set -u
W=/vmwork
R=$W/results
mkdir -p "$R"
echo "PSI-VM: runner start"
STEPS='' CI='' KT_TIMEOUT=600
# shellcheck source=/dev/null
. "$W/job.conf" || echo "PSI-VM: ERROR: cannot read $W/job.conf"
export CI

# what the tests see: the environment of Makefile.am's AM_TESTS_ENVIRONMENT
export srcdir=$W/src top_srcdir=$W/src top_builddir=$W/build FIXTURES=$W/src/tests/fixtures
export PSI_LMKD=$W/build/psi-lmkd KT_BINDIR=$W/build/tests/kernel LMKD_CLIENT=$W/build/tests/lmkd-client
export SBINDIR=/usr/local/sbin SYSCONFDIR=/usr/local/etc
# big files on the root disk (ext4 on virtio-blk), not on the work disk
export KT_DISK_TMPDIR=/var/tmp

{
	echo "uname: $(uname -a)"
	echo "cmdline: $(cat /proc/cmdline)"
	echo "pid1: $(cat /proc/1/comm)"
	echo "systemd: $(systemctl --version | head -n 1)"
	echo "state: $(systemctl is-system-running)"
	echo "mounts (cgroup):"; grep cgroup /proc/self/mounts
	echo "cgroup2 controllers: $(cat /sys/fs/cgroup/cgroup.controllers 2>&1)"
	echo "self cgroup: $(cat /proc/self/cgroup)"
	echo "swaps:"; cat /proc/swaps
	echo "meminfo:"; head -n 5 /proc/meminfo
	echo "pressure memory:"; cat /proc/pressure/memory
	echo "root disk: $(findmnt -n -o SOURCE,FSTYPE /)"
	echo "nproc: $(nproc)"
} >"$R/guest-info.txt" 2>&1
sed 's/^/PSI-VM: info: /' "$R/guest-info.txt"
# where it was tested: what the daemon finds on this kernel with the shipped config
"$PSI_LMKD" --probe -c "$W/src/conf/psi-lmkd.conf" >"$R/probe.txt" 2>&1
echo "PSI-VM: probe exit $?"

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

for step in $STEPS; do
	name=${step#*:}
	case $step in
	kt:*) name=kt-$name ;;
	scenario:*) name=scenario-$name ;;
	peers:*) name=peers-$(echo "$name" | tr : -) ;;
	esac
	echo "PSI-VM: begin $name"
	t0=$(now)
	case $step in
	kt:*)
		t=$W/src/tests/kernel/${step#kt:}
		if [ -f "$t" ]; then
			(cd "$W/build" && exec timeout -k 10 "$KT_TIMEOUT" bash "$t") >"$R/$name.log" 2>&1
			rc=$?
		else
			echo "no such test: $t" >"$R/$name.log"
			rc=99
		fi
		;;
	scenario:*)
		timeout -k 10 "$KT_TIMEOUT" bash "$W/guest/scenario.sh" "${step#scenario:}" >"$R/$name.log" 2>&1
		rc=$?
		;;
	peers:*)
		IFS=: read -r _ g sc _ <<<"$step"
		timeout -k 10 "$KT_TIMEOUT" bash "$W/guest/peers.sh" "$g" "$sc" >"$R/$name.log" 2>&1
		rc=$?
		;;
	*)
		echo "unknown step '$step'" >"$R/$name.log"
		rc=99
		;;
	esac
	secs=$(since "$t0")
	echo "$rc" >"$R/$name.rc"
	echo "$secs" >"$R/$name.secs"
	echo "$step" >>"$R/steps"
	tail -n 15 "$R/$name.log" | sed "s/^/PSI-VM: $name | /"
	echo "PSI-VM: result $name rc=$rc secs=$secs"
done
dmesg >"$R/dmesg.txt" 2>&1
journalctl -b --no-pager >"$R/journal.txt" 2>&1
grep -E '^oom_kill ' /proc/vmstat >"$R/oom_kill.txt"
sync
echo "PSI-VM: runner done"
