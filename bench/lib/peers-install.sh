#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/lib/peers-install.sh - sourced by bench/run: install_peers, the
# Debian packages of the peers and gnuplot, their services never started.

# The programs psi-lmkd is compared with, and the plotter.
PEER_PKGS=(earlyoom nohang gnuplot-nox)
PEER_UNITS=(earlyoom nohang nohang-desktop)

# install_peers: install the missing PEER_PKGS (Debian: "apt-get update"
# once, then "apt-get install -y").  Their services must never run: while
# apt-get works, invoke-rc.d is told not to start anything (policy-rc.d exit
# 101, unless the machine already has a policy-rc.d); afterwards any unit
# the install left active is stopped, and the units are disabled and masked
# (systemd as PID 1), and any earlyoom/nohang process running as root that
# the install started is terminated (any init).  Runs before the kernel-test
# lock is taken: installing creates no memory pressure.
install_peers() {
	local missing=() p u pid policy='' before t0 age
	command -v dpkg-query >/dev/null 2>&1 || { kt_log "no dpkg: not installing ${PEER_PKGS[*]}"; return 0; }
	for p in "${PEER_PKGS[@]}"; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q 'install ok installed' ||
			missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	command -v apt-get >/dev/null 2>&1 || { kt_log "no apt-get: cannot install ${missing[*]}"; return 0; }
	kt_log "installing ${missing[*]} (apt-get; their services will not be started)"
	before=" $(pgrep -x 'earlyoom|nohang' | tr '\n' ' ') "
	t0=$(date +%s)
	if [ ! -e /usr/sbin/policy-rc.d ]; then
		printf '#!/bin/sh\n# bench/run: no service starts while it installs packages\nexit 101\n' \
			>/usr/sbin/policy-rc.d && chmod 755 /usr/sbin/policy-rc.d && policy=1
		[ -n "$policy" ] && trap 'rm -f /usr/sbin/policy-rc.d' EXIT &&
			trap 'rm -f /usr/sbin/policy-rc.d; exit 130' INT TERM HUP
	fi
	apt-get update -q >&2 || kt_log "apt-get update failed"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >&2 ||
		kt_log "apt-get install ${missing[*]} failed: the comparisons that need them are left out"
	if [ -n "$policy" ]; then
		rm -f /usr/sbin/policy-rc.d
		trap - EXIT INT TERM HUP
	fi
	if [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; then
		for u in "${PEER_UNITS[@]}"; do
			if systemctl is-active --quiet "$u" 2>/dev/null; then
				kt_log "the install started $u.service: stopping it"
				systemctl stop "$u" 2>/dev/null
			fi
			systemctl disable --quiet "$u" 2>/dev/null
			systemctl mask --quiet "$u" 2>/dev/null
		done
	fi
	# Without systemd (init scripts) or anything else the install started:
	# a root earlyoom/nohang that was not there before and is younger than
	# the install.
	for pid in $(pgrep -x -u 0 'earlyoom|nohang'); do
		[[ $before == *" $pid "* ]] && continue
		age=$(ps -o etimes= -p "$pid" 2>/dev/null | tr -d ' ')
		[ -n "$age" ] && [ "$age" -le $(( $(date +%s) - t0 + 1 )) ] || continue
		kt_log "the install started $(cat "/proc/$pid/comm" 2>/dev/null) (pid $pid): terminating it"
		kill -TERM "$pid" 2>/dev/null
		kt_wait_for 5 kt_pid_dead "$pid" || kill -KILL "$pid" 2>/dev/null
	done
}
