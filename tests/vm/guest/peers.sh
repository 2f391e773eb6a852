#!/bin/bash
# SPDX-License-Identifier: MIT
# peers.sh GUARD SCENARIO - one run of the head-to-head benchmark (bench/peers,
# issue 27 item 1) inside a test guest (tests/vm/guest/run.sh): one
# low-memory guard active system-wide, a desktop in scopes of user.slice, a
# responsiveness probe (tests/kernel/respprobe) beside it, and a culprit.
#
# GUARD: kernel (none: the kernel's OOM killer alone), earlyoom (Debian's
# defaults), nohang (nohang.service, the package's defaults), oomd
# (systemd-oomd with Fedora's settings: ManagedOOMSwap=kill on -.slice,
# ManagedOOMMemoryPressure=kill at 50 % on user.slice, 20 s duration),
# psi-lmkd (the .deb from /vmwork/deb, its shipped /etc/psi-lmkd.conf),
# psi-lmkd+thrash (the same plus the thrash tier a user may add: some 200ms
# 2s, two in a row, down to adj 0; not a shipped profile), psi-lmkd+debug
# (the shipped profile, the daemon at -v -v, and /proc/meminfo and the
# reclaim counters sampled every PEERS_SAMPLE_MS (50) ms into the log: to see
# why it acted, not a guard of its own), psi-lmkd+dry (psi-lmkd+debug with
# --dry-run: what it would have done, and how the scenario goes on without
# it -- the kernel guards alone).
# Every other guard is stopped first: one at a time.
#
# SCENARIO: swap (a runaway beside the desktop, the guest's 1 GiB swap disk,
# throttled by the host), noswap (the same, no swap), zram (512 MiB zram),
# idle3 (no culprit: one idle process sized to leave ~3 % MemAvailable;
# nobody should die), idle3paced (the same, but the process fills 2 MiB at
# a time while MemAvailable stays above 3 %: it never goes below 3 % as
# read, where a size from one reading ends 2.2-3.2 % on the 1 GiB guest), filethrash (tests/kernel/filepressure reading a file
# of 1.5 x RAM: the culprit), and three that add to the desktop:
#   browser: the swap disk; a browser in one scope of user.slice, as a
#     desktop starts it: its main process (a shell named "browser", adj 0)
#     forks 18 tabs (memhog named "tab", BROWSER_TAB_MIB MiB each, adj 300,
#     active), then a 19th tab that grows (anongrow named "tab", adj 300,
#     BROWSER_RATE MiB/s): the culprit. 20 processes; the deaths are counted
#     per process, so a guard that kills the browser's whole scope (or
#     cgroup) for one tab has 19 wrong kills: the user loses 18 tabs and the
#     browser for the one that ran away.
#   build: the swap disk; no culprit (like idle3: any kill is wrong): a
#     make -j BUILD_JOBS loop in one scope (a shell named "make") keeps
#     BUILD_JOBS compiler jobs running for BUILD_SECS s; each job (memhog
#     named "cc1" under timeout) reads a 16 MiB slice of a 128 MiB source
#     file, holds 48-95 MiB for 3-8 s and writes a 4 MiB object (a ring of
#     32): the jobs fit in RAM beside the desktop, with some page cache
#     pressure. A job that did not end by its timeout (exit 124) was killed
#     (victims "jobs:N"), and so was the make loop if it did not finish.
#   slowleak: no swap; a leaker (anongrow named "leaker", adj 0) grows
#     SLOWLEAK_RATE MiB/s until memory runs out: the culprit; it must die
#     before the kernel's OOM killer strikes, and nobody else.
#
# Prints "figure NAME VALUE" lines (the host's bench/peers collects them):
# freeze_ms, worst_ms, rounds (the probe), culprit_death_s (from the
# culprit's start; "none" when it lived), wrong_kills (deaths of anyone but
# the culprit: editor, soundserver, renderer, probe, idle hog, the
# browser and its tabs, the build's make loop and jobs), victims,
# oom_kills (/proc/vmstat oom_kill delta), some_pct and full_pct (the
# machine's memory stall from the culprit's start to the end, % of wall
# time); and the guard's journal lines.
# Exit 0 when the run was measured (whatever the guard did), 1 when not.
# shellcheck disable=SC2154 # pid_NAME: set by eval in run()
set -u
guard=${1:?GUARD}
scen=${2:?SCENARIO}
W=/vmwork
B=$W/build/tests/kernel
RATE=${SCENARIO_RATE:-48}
TIMEOUT=${SCENARIO_TIMEOUT:-180}
AFTER=${PEERS_AFTER:-60}
IDLE_SECS=${PEERS_IDLE_SECS:-90}
BROWSER_TAB_MIB=${PEERS_BROWSER_TAB_MIB:-12}
BROWSER_RATE=${PEERS_BROWSER_RATE:-32}
BUILD_JOBS=${PEERS_BUILD_JOBS:-4}
BUILD_SECS=${PEERS_BUILD_SECS:-75}
SLOWLEAK_RATE=${PEERS_SLOWLEAK_RATE:-4}
# a slow leak takes MemAvailable / SLOWLEAK_RATE s to fill memory (~140 s)
[ "$scen" = slowleak ] && TIMEOUT=${SCENARIO_TIMEOUT:-240}
work=$(mktemp -d /var/tmp/psi-lmkd-peers.XXXXXX) || exit 1
pids=() zdev='' tag=p$$
debug_dropin=/run/systemd/system/psi-lmkd.service.d/90-peers-debug.conf

log() { printf '[%s] peers %s/%s: %s\n' "$(date +%T.%N | cut -c1-12)" "$guard" "$scen" "$*"; }
fail() { log "FAIL: $*"; debug_dump; exit 1; }
# psi-lmkd+debug: the daemon's every line, and the samples (meminfo in KiB,
# reclaim counters) every PEERS_SAMPLE_MS from the step's start -- a failed
# step too (a hog killed before it was ready)
debug_dump() {
	[ -n "${sampler:-}" ] && [ -n "${since:-}" ] || return 0
	journalctl -u "$unit" --since "$since" --no-pager -o short-monotonic 2>&1 | grep -v -- '-- ' | sed 's/^/  debug| /'
	sed 's/^/  meminfo| /' "$work/meminfo.txt"
}
figure() { printf 'figure %s %s\n' "$1" "$2"; }
oom_kills() { awk '$1 == "oom_kill" { print $2 }' /proc/vmstat; }
# psi_totals: "some_total full_total" (us) of /proc/pressure/memory
psi_totals() { awk '{ for (i = 2; i <= NF; i++) if ($i ~ /^total=/) t[$1] = substr($i, 7) } END { print t["some"] + 0, t["full"] + 0 }' /proc/pressure/memory; }
alive() { [ -d "/proc/$1" ] && ! grep -q '^State:.*[ZX]' "/proc/$1/status" 2>/dev/null; }
secs_since() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }
guards_units="psi-lmkd.service earlyoom.service nohang.service nohang-desktop.service systemd-oomd.service systemd-oomd.socket"

# shellcheck disable=SC2317 # trap
cleanup() {
	local p
	for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
	# what the browser and the build forked lives on in their scopes
	systemctl kill --signal=KILL "$tag-*.scope" 2>/dev/null
	# shellcheck disable=SC2086
	systemctl stop $guards_units 2>/dev/null
	swapoff -a 2>/dev/null
	if [ -n "$zdev" ]; then
		echo 1 >"/sys/block/zram$zdev/reset" 2>/dev/null
		echo "$zdev" >/sys/class/zram-control/hot_remove 2>/dev/null
	fi
	rm -f /etc/psi-lmkd.conf.d/60-peers-thrash.conf
	if [ -e "$debug_dropin" ]; then
		rm -f "$debug_dropin"
		systemctl daemon-reload
	fi
	rm -rf "$work"
}
trap cleanup EXIT

# ---- the guard: every one stopped, then the chosen one started
if ! dpkg-query -W -f='${Status}' psi-lmkd 2>/dev/null | grep -q 'install ok installed'; then
	deb=''
	for f in "$W"/deb/psi-lmkd_*.deb; do [ -f "$f" ] && { deb=$f; break; }; done
	[ -n "$deb" ] || fail "no psi-lmkd_*.deb in $W/deb"
	DEBIAN_FRONTEND=noninteractive dpkg -i "$deb" >"$work/dpkg.log" 2>&1 || { cat "$work/dpkg.log"; fail "dpkg -i $deb failed"; }
fi
# shellcheck disable=SC2086
systemctl stop $guards_units 2>/dev/null
# Fedora's systemd-oomd-defaults, as drop-ins (runtime: gone at reboot)
rm -rf /run/systemd/system/-.slice.d /run/systemd/system/user.slice.d /run/systemd/oomd.conf.d
if [ "$guard" = oomd ]; then
	mkdir -p /run/systemd/system/-.slice.d /run/systemd/system/user.slice.d /run/systemd/oomd.conf.d
	printf '[Slice]\nManagedOOMSwap=kill\n' >/run/systemd/system/-.slice.d/10-oomd-root-slice-defaults.conf
	printf '[Slice]\nManagedOOMMemoryPressure=kill\nManagedOOMMemoryPressureLimit=50%%\n' \
		>/run/systemd/system/user.slice.d/10-oomd-user-defaults.conf
	printf '[OOM]\nDefaultMemoryPressureDurationSec=20s\n' >/run/systemd/oomd.conf.d/10-oomd-defaults.conf
fi
systemctl daemon-reload
# the job itself is no candidate of systemd-oomd (ManagedOOMPreference=omit)
setfattr -n user.oomd_omit -v 1 "/sys/fs/cgroup$(sed -n 's/^0:://p' /proc/self/cgroup)" 2>/dev/null
unit=''
thrash_dropin=/etc/psi-lmkd.conf.d/60-peers-thrash.conf
rm -f "$thrash_dropin"
sampler=''
case $guard in
psi-lmkd+debug|psi-lmkd+dry)
	mkdir -p "${debug_dropin%/*}"
	printf '[Service]\nExecStart=\nExecStart=/usr/sbin/psi-lmkd -f -v -v%s\n' \
		"$([ "$guard" = psi-lmkd+dry ] && echo ' --dry-run')" >"$debug_dropin"
	systemctl daemon-reload
	sampler=1 ;;
esac
case $guard in
kernel) ;;
psi-lmkd|psi-lmkd+debug|psi-lmkd+dry) unit=psi-lmkd.service
	cmp -s /etc/psi-lmkd.conf "$W/src/conf/psi-lmkd.conf" || fail "/etc/psi-lmkd.conf is not the shipped conf" ;;
psi-lmkd+thrash) unit=psi-lmkd.service
	# the shipped profile plus the thrash tier a user would add (README,
	# Performance: no shipped tier ends a file thrash, by design), so that
	# what killing the thrasher gives back is measured, not argued
	cmp -s /etc/psi-lmkd.conf "$W/src/conf/psi-lmkd.conf" || fail "/etc/psi-lmkd.conf is not the shipped conf"
	mkdir -p /etc/psi-lmkd.conf.d
	printf '[tier thrash]\ntrigger = some 200ms 2s\nmin_events = 2\nmin_oom_score_adj = 0\n' >"$thrash_dropin" ;;
earlyoom) unit=earlyoom.service ;;
nohang) unit=nohang.service ;;
oomd) unit=systemd-oomd.service ;;
*) fail "unknown guard '$guard' (kernel, psi-lmkd, psi-lmkd+thrash, psi-lmkd+debug, psi-lmkd+dry, earlyoom, nohang, oomd)" ;;
esac

# ---- swap
swapoff -a 2>/dev/null
case $scen in
swap|browser|build)
	dev=/dev/disk/by-label/psivmswap
	[ -e "$dev" ] || fail "no swap disk (LABEL=psivmswap): the host attaches it"
	mkswap -L psivmswap "$dev" >/dev/null 2>&1
	swapon "$dev" || fail "swapon $dev failed"
	;;
zram)
	modprobe zram 2>/dev/null
	[ -e /sys/class/zram-control/hot_add ] || fail "the kernel has no zram"
	zdev=$(cat /sys/class/zram-control/hot_add) || fail "cannot add a zram device"
	echo 512M >"/sys/block/zram$zdev/disksize" || fail "cannot size zram$zdev"
	for _ in $(seq 1 50); do [ -b "/dev/zram$zdev" ] && break; sleep 0.1; done
	mkswap "/dev/zram$zdev" >/dev/null || fail "mkswap /dev/zram$zdev failed"
	swapon -p 100 "/dev/zram$zdev" || fail "swapon /dev/zram$zdev failed"
	;;
noswap|idle3|idle3paced|filethrash|slowleak) ;;
*) fail "unknown scenario '$scen' (swap, noswap, zram, idle3, idle3paced, filethrash, browser, build, slowleak)" ;;
esac
# the build's sources, on disk before the page cache is dropped
if [ "$scen" = build ]; then
	mkdir "$work/obj" || fail "cannot make $work/obj"
	dd if=/dev/zero of="$work/src.dat" bs=1M count=128 conv=fsync 2>/dev/null || fail "cannot write $work/src.dat"
fi
sync
echo 3 >/proc/sys/vm/drop_caches
log "swap: $(awk 'NR > 1 { printf "%s %s KiB; ", $1, $3 }' /proc/swaps)MemTotal $(awk '/^MemTotal/ { print $2 }' /proc/meminfo) KiB, MemAvailable $(awk '/^MemAvailable/ { print $2 }' /proc/meminfo) KiB"

since=$(date '+%Y-%m-%d %H:%M:%S')
sleep 1
if [ -n "$unit" ]; then
	# shellcheck disable=SC2046 # the image masks them all
	systemctl unmask "$unit" $([ "$guard" = oomd ] && echo systemd-oomd.socket) >/dev/null 2>&1
	systemctl start "$unit" || fail "systemctl start $unit failed"
	sleep 2
	systemctl is-active --quiet "$unit" || fail "$unit is not active: $(journalctl -u "$unit" -n 5 --no-pager)"
	log "$unit active, pid $(systemctl show -p MainPID --value "$unit")"
fi

if [ -n "$sampler" ]; then
	# meminfo and the reclaim/THP counters every PEERS_SAMPLE_MS (50) ms, read
	# with builtins only (a fork per sample costs ~10 ms under TCG): how
	# MemAvailable moves through a fill, and what reclaim does meanwhile
	sample_ms=${PEERS_SAMPLE_MS:-50}
	sample_s=$((sample_ms / 1000)).$(printf '%03d' $((sample_ms % 1000)))
	printf 't_ms MemAvailable MemFree file AnonPages AnonHugePages PageTables KReclaimable pgscan_kswapd pgscan_direct pgsteal_kswapd pgsteal_direct allocstall thp_fault_alloc thp_fault_fallback compact_stall nr_isolated_file nr_isolated_anon\n' >"$work/meminfo.txt"
	(
		declare -A m
		exec {tick}<> <(:)
		t0us=${EPOCHREALTIME/./}
		while :; do
			while read -r k v _; do [ -n "$k" ] && m[$k]=$v; done </proc/meminfo
			while read -r k v; do [ -n "$k" ] && m[$k]=$v; done </proc/vmstat
			now=${EPOCHREALTIME/./}
			printf '%d %s %s %d %s %s %s %s %s %s %s %s %d %s %s %s %s %s\n' $(( (now - t0us) / 1000 )) \
				"${m[MemAvailable:]}" "${m[MemFree:]}" $(( ${m[Active(file):]} + ${m[Inactive(file):]} )) \
				"${m[AnonPages:]}" "${m[AnonHugePages:]}" "${m[PageTables:]}" "${m[KReclaimable:]:-0}" \
				"${m[pgscan_kswapd]}" "${m[pgscan_direct]}" "${m[pgsteal_kswapd]}" "${m[pgsteal_direct]}" \
				$(( ${m[allocstall_dma32]:-0} + ${m[allocstall_normal]:-0} + ${m[allocstall_movable]:-0} )) \
				"${m[thp_fault_alloc]:-0}" "${m[thp_fault_fallback]:-0}" "${m[compact_stall]:-0}" \
				"${m[nr_isolated_file]}" "${m[nr_isolated_anon]}"
			read -r -t "$sample_s" -u "$tick" _ || :
		done >>"$work/meminfo.txt"
	) &
	pids+=($!)
fi

# run NAME CMD...: CMD in its own scope of user.slice, as a desktop session
# would start it; its pid (systemd-run and choom exec it) in pid_NAME. It
# starts at oom_score_adj 0, as a session's apps do -- not at this runner's
# -1000 (psi-lmkd-vm.service), which it kept until it set its own: memhog
# sets its adj once it has filled, so a hog filling at -1000 was out of
# every band and a guard acting during the fill took someone else
run() {
	local name=$1
	shift
	systemd-run --quiet --scope --slice=user.slice --unit="$tag-$name" -- choom -n 0 -- "$@" \
		>"$work/$name.out" 2>"$work/$name.err" </dev/null &
	pids+=($!)
	eval "pid_$name=$!"
}
# ready NAME [WAIT] [may-die]: wait until NAME says it is ready; with
# may-die a NAME that died first (a guard killed it while it filled) is no
# failure of the step but a return of 1, and counts as that guard's kill
ready() {
	local name=$1 wait=${2:-300} may_die=${3:-} p
	eval "p=\$pid_$name"
	for _ in $(seq 1 "$wait"); do
		grep -qx "ready $p" "$work/$name.out" && return 0
		alive "$p" || break
		sleep 0.1
	done
	[ -n "$may_die" ] && ! alive "$p" && return 1
	fail "$name (pid $p) not ready: $(cat "$work/$name.out" "$work/$name.err")"
}

# ---- the desktop and the probe (the user's terminal, adj 0)
run probe "$B/respprobe" 32 "$work/probe.file" 32 0
ready probe
names=(probe)
for part in editor:120:0:1000 soundserver:24:200:100 renderer:96:300:500; do
	IFS=: read -r name mib adj ms <<<"$part"
	cp "$B/memhog" "$work/$name"
	run "$name" "$work/$name" "$mib" "$adj" "active=$ms"
	names+=("$name")
done
for name in editor soundserver renderer; do ready "$name"; done
log "desktop: probe $pid_probe, editor $pid_editor (120 MiB adj 0), soundserver $pid_soundserver (24 MiB adj 200), renderer $pid_renderer (96 MiB adj 300), all active"
sleep 3

oom0=$(oom_kills)
dm0=$(dmesg | wc -l)
read -r ps0 pf0 <<<"$(psi_totals)"
pt0=$(date +%s.%N)
culprit=''
case $scen in
swap|noswap|zram)
	fill=sparse
	[ "$scen" = zram ] && fill=half
	cp "$B/anongrow" "$work/runaway"
	t0=$(date +%s.%N)
	run runaway "$work/runaway" "$RATE" 0 65536 "$fill"
	culprit=$pid_runaway
	log "culprit: runaway $culprit, anongrow $RATE MiB/s adj 0 fill $fill"
	;;
filethrash)
	mib=$(awk '/^MemTotal/ { printf "%d", $2 * 1.5 / 1024 }' /proc/meminfo)
	cp "$B/filepressure" "$work/filethrash"
	run filethrash "$work/filethrash" /var/tmp/peers-filethrash.dat "$mib" 0
	ready filethrash 6000
	t0=$(date +%s.%N)
	culprit=$pid_filethrash
	log "culprit: filethrash $culprit reading $mib MiB (page cache dropped)"
	;;
browser)
	# the tabs: memhog and, for the one that runs away, anongrow, both named "tab"
	cp "$B/memhog" "$work/tab"
	mkdir "$work/grow" || fail "cannot make $work/grow"
	cp "$B/anongrow" "$work/grow/tab" || fail "cannot copy the growing tab"
	cat >"$work/browser" <<-'EOF'
	#!/bin/bash
	# browser TABS MIB ADJ RATE DIR: a browser's main process; forks TABS
	# tabs of MIB MiB (active), then, once DIR/browser.go exists, one more
	# that grows RATE MiB/s; prints "tab N PID", "ready PID", "runaway PID T"
	tabs=$1 mib=$2 adj=$3 rate=$4 dir=$5
	for i in $(seq 1 "$tabs"); do
		"$dir/tab" "$mib" "$adj" active=2000 >"$dir/tab$i.out" 2>&1 &
		echo "tab $i $!"
	done
	for i in $(seq 1 "$tabs"); do
		for _ in $(seq 1 600); do grep -q '^ready ' "$dir/tab$i.out" && break; sleep 0.1; done
	done
	echo "ready $$"
	until [ -e "$dir/browser.go" ]; do sleep 0.2; done
	"$dir/grow/tab" "$rate" "$adj" >"$dir/growtab.out" 2>&1 &
	echo "runaway $! $EPOCHREALTIME"
	while :; do sleep 5; done
	EOF
	chmod +x "$work/browser"
	run browser "$work/browser" 18 "$BROWSER_TAB_MIB" 300 "$BROWSER_RATE" "$work"
	ready browser 1200
	while read -r _ i p; do
		eval "pid_tab$i=$p"
		names+=("tab$i")
		pids+=("$p")
	done < <(grep '^tab ' "$work/browser.out")
	names+=(browser)
	sleep 2
	touch "$work/browser.go"
	for _ in $(seq 1 100); do grep -q '^runaway ' "$work/browser.out" && break; sleep 0.1; done
	read -r _ culprit t0 < <(grep '^runaway ' "$work/browser.out")
	[ -n "$culprit" ] || fail "the browser started no runaway tab: $(cat "$work/browser.out" "$work/browser.err")"
	pids+=("$culprit")
	log "culprit: browser $pid_browser (adj 0) with 18 tabs of $BROWSER_TAB_MIB MiB (adj 300) in $tag-browser.scope; tab $culprit grows $BROWSER_RATE MiB/s (adj 300)"
	;;
build)
	cp "$B/memhog" "$work/cc1"
	cat >"$work/make" <<-'EOF'
	#!/bin/bash
	# make JOBS SECS DIR: keeps JOBS compiler jobs running for SECS s; each
	# reads a 16 MiB slice of DIR/src.dat, holds 48-95 MiB for 3-8 s (cc1,
	# ended by timeout: exit 124) and writes a 4 MiB object; prints
	# "job N RC" per job, "done N" at the end
	njobs=$1 secs=$2 dir=$3
	n=0 end=$((SECONDS + secs))
	job() {
		dd if="$dir/src.dat" of=/dev/null bs=1M count=16 skip="$4" 2>/dev/null
		timeout "$2" "$dir/cc1" "$3" 0 active=500 >/dev/null 2>&1
		rc=$?
		dd if=/dev/zero of="$dir/obj/$(($1 % 32)).o" bs=1M count=4 2>/dev/null
		echo "job $1 $rc"
	}
	while [ "$SECONDS" -lt "$end" ]; do
		while [ "$(jobs -rp | wc -l)" -lt "$njobs" ]; do
			n=$((n + 1))
			job "$n" $((3 + RANDOM % 6)) $((48 + RANDOM % 48)) $((RANDOM % 8 * 16)) &
		done
		wait -n
	done
	wait
	echo "done $n"
	EOF
	chmod +x "$work/make"
	t0=$(date +%s.%N)
	run make "$work/make" "$BUILD_JOBS" "$BUILD_SECS" "$work"
	log "build: make $pid_make, $BUILD_JOBS jobs for $BUILD_SECS s (no culprit)"
	;;
slowleak)
	cp "$B/anongrow" "$work/leaker"
	t0=$(date +%s.%N)
	run leaker "$work/leaker" "$SLOWLEAK_RATE" 0
	culprit=$pid_leaker
	log "culprit: leaker $culprit, anongrow $SLOWLEAK_RATE MiB/s adj 0, MemAvailable $(awk '/^MemAvailable/ { print $2 }' /proc/meminfo) KiB"
	;;
idle3|idle3paced)
	# idle3: MemAvailable - 3 %, one reading; idle3paced: at most all of it,
	# filled while 3 % stays (memhog leave=3)
	pace=()
	if [ "$scen" = idle3 ]; then
		avail=$(awk '/^MemAvailable/ { a = $2 } /^MemTotal/ { t = $2 } END { printf "%d", (a - t * 0.03) / 1024 }' /proc/meminfo)
		aim="$avail MiB"
	else
		avail=$(awk '/^MemAvailable/ { printf "%d", $2 / 1024 }' /proc/meminfo)
		pace=(leave=3)
		aim="at most $avail MiB"
	fi
	cp "$B/memhog" "$work/idlehog"
	t0=$(date +%s.%N)
	run idlehog "$work/idlehog" "$avail" 0 "${pace[@]}"
	state=idle
	ready idlehog 300 may-die || state='died during its fill'
	names+=(idlehog)
	log "idle hog $pid_idlehog: $aim$(sed -n 's/^memhog: /, /p' "$work/idlehog.err"), $state; MemAvailable now $(awk '/^MemAvailable/ { print $2 }' /proc/meminfo) KiB"
	;;
esac

death=none
if [ -n "$culprit" ]; then
	deadline=$(( $(date +%s) + TIMEOUT ))
	while alive "$culprit" && [ "$(date +%s)" -lt "$deadline" ]; do sleep 0.1; done
	if ! alive "$culprit"; then
		death=$(secs_since "$t0")
		log "culprit died $death s after its start; watching the survivors $AFTER s"
		sleep "$AFTER"
	else
		log "culprit still alive after $TIMEOUT s"
	fi
elif [ "$scen" = build ]; then
	deadline=$(( $(date +%s) + BUILD_SECS + 120 ))
	while alive "$pid_make" && [ "$(date +%s)" -lt "$deadline" ]; do sleep 0.5; done
	log "build over $(secs_since "$t0") s after its start: $(grep -c '^job ' "$work/make.out") jobs ended; watching 15 s"
	sleep 15
else
	sleep "$IDLE_SECS"
fi
oom1=$(oom_kills)
# the machine's memory stall from the culprit's start to the end, % of wall time
read -r ps1 pf1 <<<"$(psi_totals)"
psi_pct() { awk -v a="$1" -v b="$2" -v t0="$pt0" -v t1="$(date +%s.%N)" 'BEGIN { printf "%.1f", (b - a) / 10000 / (t1 - t0) }'; }
psi_some=$(psi_pct "$ps0" "$ps1") psi_full=$(psi_pct "$pf0" "$pf1")

wrong=0 victims=''
for name in "${names[@]}"; do
	eval "p=\$pid_$name"
	if ! alive "$p"; then
		wrong=$((wrong + 1))
		victims="$victims${victims:+,}$name"
	fi
done
if [ "$scen" = build ]; then
	# a job that did not end by its timeout was killed; the make loop, if it did not finish
	started=$(sed -n 's/^done //p' "$work/make.out")
	jobs_killed=$(awk '$1 == "job" && $3 != 124' "$work/make.out" | wc -l)
	if [ -z "$started" ]; then
		wrong=$((wrong + 1))
		victims="$victims${victims:+,}make"
	else
		# the jobs whose line is missing: their shell died with them
		jobs_killed=$((jobs_killed + started - $(grep -c '^job ' "$work/make.out")))
	fi
	if [ "$jobs_killed" -gt 0 ]; then
		wrong=$((wrong + jobs_killed))
		victims="$victims${victims:+,}jobs:$jobs_killed"
	fi
	log "build: ${started:-?} jobs started, $jobs_killed killed; $(awk '$1 == "job" && $3 != 124 { printf "job %s rc %s; ", $2, $3 }' "$work/make.out")"
fi
[ -n "$culprit" ] && ! alive "$culprit" && victims="culprit${victims:+,}$victims"
kill -TERM "$pid_probe" 2>/dev/null
wait "$pid_probe" 2>/dev/null
probe=$(grep '^respprobe ' "$work/probe.out")
[ -n "$probe" ] || probe="respprobe freeze_ms=none worst_ms=none rounds=none (the probe died)"
log "probe: $probe"
grep '^late ' "$work/probe.err" | awk '{ printf "%s@%ss ", $3, $2 } END { print "" }' | sed 's/^/  probe late (ms@s): /' | cut -c1-600
val() { sed -n "s/.*$1=\([^ ]*\).*/\1/p" <<<"$probe"; }
figure freeze_ms "$(val freeze_ms)"
figure worst_ms "$(val worst_ms)"
figure rounds "$(val rounds)"
figure culprit_death_s "$death"
figure wrong_kills "$wrong"
figure victims "${victims:-none}"
figure oom_kills $((oom1 - oom0))
figure some_pct "$psi_some"
figure full_pct "$psi_full"
if [ -n "$sampler" ]; then
	debug_dump
elif [ -n "$unit" ]; then
	journalctl -u "$unit" --since "$since" --no-pager -o short-monotonic 2>&1 |
		grep -iE 'kill|tier|low|sending|oom|swap|pressure' | grep -v -- '-- ' | tail -n 30 | sed 's/^/  journal| /'
fi
dmesg | tail -n +$((dm0 + 1)) | grep -E 'oom-kill:|Killed process' | tail -n 5 | sed 's/^/  dmesg| /'
exit 0
