#!/bin/sh
# SPDX-License-Identifier: MIT
# android-smoke.sh - the arm64 guest's smoke test (tests/vm/arm64-smoke,
# issue 26), run by the guest's init under busybox sh: the cross-built
# psi-lmkd on the shipped Android profile, as Android's init would run it,
# against a runaway.
#
#   android-smoke.sh PRESSURE_DEV
#
# A fresh memory cgroup psi-lmkd-smoke (SMOKE_LIMIT_MIB, 256) holds:
#   native-svc  memhog 16 MiB at adj -900: a native service, outside every
#               band (never registered), must live
#   cached-app  memhog 24 MiB, registered through the lmkd socket at adj 900
#               (a cached app): must die first, though the runaway is larger
#   runaway     anongrow, SMOKE_RATE (8) MiB/s, registered at adj 0 (the
#               foreground app gone wrong): must die next, by psi-lmkd
#   reader      dd reading PRESSURE_DEV (larger than the limit) through the
#               group's page cache again and again, adj -800: the thrash
# The daemon runs conf/psi-lmkd-android.conf with only pressure and scope
# pointed at the group, memory_cgroup at it and lmkd_socket in a temp dir
# (not /dev/socket). lmkd-client plays ActivityManager: PURGE, SUBSCRIBE,
# PROCPRIO for the two apps, then expects KILL_OCCURRED and PROCKILL for
# each kill, cached-app's first.
# Asserted: the first kill is cached-app's, though the runaway is larger, by
# the medium tier (PSI: the reader's thrash) or the last resort (memory ran
# low first: the runaway fills the group in ~25 s, and under a loaded host's
# TCG the reader's stall can build later than that; both are the Android
# profile's rules) -- and the kill reason the client got (KILL_OCCURRED) is
# the one lmkd gives that cause; a PSI tier fired during the run (the
# triggers work on arm64: the -vv log's "tier NAME fired (PSI)"); the
# runaway dies by a psi-lmkd kill within SMOKE_TIMEOUT (240)
# s; native-svc lives to the end (SMOKE_SETTLE, 5 s, after the last kill);
# the daemon never exits; no kernel OOM kill (the group's memory.events and
# /proc/vmstat); the client got its reports. Figures: "figure ..." lines.
# Exit 0 pass, 1 fail.
set -u
PRESS=$1
B=/smoke/bin
LIMIT_MIB=${SMOKE_LIMIT_MIB:-256}
RATE=${SMOKE_RATE:-8}
TIMEOUT=${SMOKE_TIMEOUT:-240}
SETTLE=${SMOKE_SETTLE:-5}
CG=/sys/fs/cgroup/psi-lmkd-smoke
T=$(mktemp -d /tmp/smoke.XXXXXX) || exit 1
LOG=$T/daemon.log
daemon='' client='' reader='' native='' cached='' runaway=''

now() { cut -d ' ' -f 1 /proc/uptime; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
say() { echo "[$(now)] $*"; }
alive() { [ -n "$1" ] && [ -d "/proc/$1" ] && ! grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null; }
cleanup() {
	for p in $reader $client $daemon; do kill -TERM "$p" 2>/dev/null; done
	[ -f "$CG/cgroup.kill" ] && echo 1 >"$CG/cgroup.kill"
	sleep 1
	rmdir "$CG" 2>/dev/null
}
fail() {
	echo "FAIL: $*"
	echo "---- daemon log (tail) ----"; tail -n 40 "$LOG"
	echo "---- client ----"; cat "$T/client.out" 2>/dev/null
	cleanup
	exit 1
}
# ingroup OUT ADJ PROG ARG...: start PROG in the group at oom_score_adj ADJ, output to OUT
ingroup() {
	out=$1 adj=$2
	shift 2
	sh -c 'echo $$ >"$0/cgroup.procs" && echo "$1" >/proc/self/oom_score_adj && shift && exec "$@"' \
		"$CG" "$adj" "$@" >"$out" 2>&1 &
	STARTED=$!
}
# ready OUT PID: wait (20 s) for the helper's "ready PID"
ready() {
	i=0
	while ! grep -q "^ready $2" "$1" 2>/dev/null; do
		alive "$2" || fail "$1: the helper exited: $(cat "$1")"
		[ $i -lt 200 ] || fail "$1: not ready within 20 s"
		sleep 0.1
		i=$((i + 1))
	done
}
kills() { grep -E '(^|[^[:alnum:]_-])kill pid=' "$LOG"; }
kv() { printf '%s\n' "$1" | sed -n "s/.*[[:space:]]$2=\([^[:space:]]*\).*/\1/p"; }
oom_kills() { awk '$1 == "oom_kill" { print $2 }' /proc/vmstat; }
group_oom_kills() { awk '$1 == "oom_kill" { print $2 }' "$CG/memory.events"; }
no_oom() { [ "$(oom_kills)" = "$oom0" ] && [ "$(group_oom_kills)" = 0 ]; }

# ---- the group and the config
[ -r /proc/pressure/memory ] || fail "no /proc/pressure/memory: PSI is off"
echo +memory >/sys/fs/cgroup/cgroup.subtree_control || fail "cannot enable the memory controller"
mkdir "$CG" || fail "cannot create $CG"
echo $((LIMIT_MIB * 1024 * 1024)) >"$CG/memory.max" || fail "cannot limit $CG"
[ -r "$CG/memory.pressure" ] || fail "no $CG/memory.pressure"
oom0=$(oom_kills)
awk -v cg="$CG" -v sock="$T/lmkd" '
	/^pressure *=/ { print "pressure = " cg "/memory.pressure"; p++; next }
	/^scope *=/ { print "scope = /psi-lmkd-smoke"; print "memory_cgroup = " cg; print "lmkd_socket = " sock; s++; next }
	{ print }
	END { if (p != 1 || s != 1) exit 1 }' /smoke/conf/psi-lmkd-android.conf >"$T/psi-lmkd.conf" ||
	fail "the Android profile has no single pressure and scope line to point at the group"
psi-lmkd --check-config -c "$T/psi-lmkd.conf" >"$T/check-config.out" 2>&1 ||
	{ cat "$T/check-config.out"; fail "the smoke's config does not check"; }
say "config: the Android profile on $CG ($LIMIT_MIB MiB), lmkd_socket $T/lmkd"

# ---- the daemon, as lmkd runs: adj -1000, in the root group
sh -c 'echo -1000 >/proc/self/oom_score_adj && exec psi-lmkd -f -vv -c "$0"' "$T/psi-lmkd.conf" >"$LOG" 2>&1 &
daemon=$!
i=0
until grep -q "serving the lmkd socket $T/lmkd" "$LOG"; do
	alive "$daemon" || fail "the daemon exited at start"
	[ $i -lt 300 ] || fail "the daemon does not serve $T/lmkd within 30 s"
	sleep 0.1
	i=$((i + 1))
done
say "daemon $daemon serves $T/lmkd: $(grep -m 1 'running: ' "$LOG" | sed 's/^.*running: //')"

# ---- the processes
for c in memhog:native-svc memhog:cached-app anongrow:runaway; do
	cp "$B/${c%:*}" "$B/${c#*:}" || fail "cannot copy $B/${c%:*}"
done
ingroup "$T/native.out" -900 $B/native-svc 16 -900; native=$STARTED
ready "$T/native.out" "$native"
ingroup "$T/cached.out" 0 $B/cached-app 24 0; cached=$STARTED
ready "$T/cached.out" "$cached"
ingroup "$T/runaway.out" 0 $B/runaway "$RATE" 0; runaway=$STARTED
ready "$T/runaway.out" "$runaway"
t_start=$(now)
# ActivityManager: PURGE, SUBSCRIBE kill and stat, PROCPRIO (pid uid adj type) for each app;
# then each kill's KILL_OCCURRED (uid, task name = argv[0]) and PROCKILL (16 bytes)
ms=$((TIMEOUT * 1000))
lmkd-client talk "$T/lmkd" >"$T/client.out" 2>&1 <<EOC &
connect 0
send 0 3
send 0 5 0
send 0 5 1
send 0 1 $cached 10100 900 0
send 0 1 $runaway 10101 0 0
await 0 $ms
stat 0 10100 $B/cached-app 5,2,8,3
prockill 0 $cached 10100 16
await 0 $ms
stat 0 10101 $B/runaway
prockill 0 $runaway 10101 16
EOC
client=$!
i=0
until [ "$(cat "/proc/$cached/oom_score_adj" 2>/dev/null)" = 900 ]; do
	[ $i -lt 100 ] || fail "PROCPRIO did not set cached-app ($cached) to adj 900"
	sleep 0.1
	i=$((i + 1))
done
say "registered: cached-app $cached (24 MiB, adj 900, uid 10100), runaway $runaway ($RATE MiB/s, adj 0, uid 10101); native-svc $native (16 MiB, adj -900) unregistered"
# shellcheck disable=SC2016 # the inner shell's $0
ingroup "$T/reader.out" -800 sh -c 'while :; do dd if="$0" of=/dev/null bs=1M 2>/dev/null; done' "$PRESS"
reader=$STARTED
say "reader $reader thrashes $PRESS ($(($(cat "/sys/block/${PRESS##*/}/size") / 2048)) MiB) through the group"

# ---- watch
t_cached='' t_runaway='' first_tier='' first_codes=''
deadline=$(( $(cut -d . -f 1 /proc/uptime) + TIMEOUT ))
while [ -z "$t_runaway" ] || [ -z "$t_cached" ]; do
	alive "$daemon" || fail "the daemon exited"
	no_oom || fail "kernel OOM kill (vmstat oom_kill $(oom_kills), group $(group_oom_kills)): $(dmesg | grep -i -m 3 'killed process')"
	alive "$native" || fail "native-svc (adj -900) died"
	alive "$reader" || fail "the reader died"
	if [ -z "$t_cached" ] && ! alive "$cached"; then
		t_cached=$(since "$t_start")
		first=$(kills | head -n 1)
		[ "$(kv "$first" pid)" = "$cached" ] || fail "the first kill is not cached-app ($cached): ${first:-none}"
		first_tier=$(kv "$first" tier)
		case $first_tier in
		medium) first_codes='5 2' ;;
		last-resort) first_codes='8 3' ;;
		*) fail "cached-app died by tier $first_tier, not medium or last-resort: $first" ;;
		esac
		say "cached-app killed after $t_cached s: ${first#*kill }"
	fi
	if [ -z "$t_runaway" ] && ! alive "$runaway"; then
		t_runaway=$(since "$t_start")
		[ -n "$t_cached" ] || fail "the runaway died before cached-app: $(kills | tr '\n' '|')"
		line=$(kills | grep "kill pid=$runaway ")
		[ -n "$line" ] || fail "the runaway ($runaway) died without a psi-lmkd kill: $(kills | tr '\n' '|')"
		say "runaway killed after $t_runaway s at $(tail -n 1 "$T/runaway.out"): ${line#*kill }"
	fi
	[ "$(cut -d . -f 1 /proc/uptime)" -lt "$deadline" ] ||
		fail "after $TIMEOUT s: cached-app $(alive "$cached" && echo alive || echo dead), runaway $(alive "$runaway" && echo alive at "$(tail -n 1 "$T/runaway.out")" || echo dead); kills: $(kills | tr '\n' '|')"
	sleep 0.2
done
say "both apps dead; watching $SETTLE s more"
end=$(( $(cut -d . -f 1 /proc/uptime) + SETTLE ))
while [ "$(cut -d . -f 1 /proc/uptime)" -lt "$end" ]; do
	alive "$daemon" || fail "the daemon exited"
	alive "$native" || fail "native-svc (adj -900) died after the runaway"
	sleep 0.2
done
kill -KILL "$reader" 2>/dev/null
no_oom || fail "kernel OOM kill (vmstat oom_kill $(oom_kills), group $(group_oom_kills))"
nkills=$(kills | wc -l)
[ "$nkills" = 2 ] || fail "$nkills kills, not 2: $(kills | tr '\n' '|')"
i=0
while alive "$client"; do
	[ $i -lt 100 ] || fail "the client still waits for its reports"
	sleep 0.1
	i=$((i + 1))
done
wait "$client" || fail "the client's checks failed"
client=''
code=$(sed -n 's/^stat uid 10100 reason \([0-9-]*\)$/\1/p' "$T/client.out")
case " $first_codes " in
*" $code "*) say "cached-app's kill reported with lmkd's reason $code (tier $first_tier)" ;;
*) fail "cached-app died by tier $first_tier, but the client got kill_reason '${code}', not one of $first_codes" ;;
esac
grep -Eq 'tier (medium|thrashing|critical) fired \(PSI\)' "$LOG" || fail "no PSI tier fired in the run"
grep -q "lowmemorykiller: Kill '$B/cached-app' ($cached), uid 10100, oom_score_adj 900 to free " "$LOG" ||
	fail "no lmkd kill line for cached-app"
kill -TERM "$daemon"
wait "$daemon"
rc=$?
daemon=''
[ "$rc" = 0 ] || fail "the daemon exited $rc on SIGTERM"
cleanup
echo "---- daemon log ----"
sed 's/^/  /' "$LOG"
echo "--------------------"
echo "figure cached_kill_s=$t_cached runaway_kill_s=$t_runaway runaway_at=\"$(tail -n 1 "$T/runaway.out")\" kernel_oom_kills=0"
echo "PASS"
exit 0
