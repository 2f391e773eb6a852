#!/bin/bash
# SPDX-License-Identifier: MIT
# test-hook.sh - the on_kill hook: run after each kill with the victim's
# fields in PSI_LMKD_* variables (control bytes escaped), as on_kill_user
# (default nobody) without capabilities, never blocking the daemon, killed
# by SIGALRM after 10 s.
#
# In a fresh 128 MiB test group: memhogs at adj 900 and 800 (8 MiB; the 800
# one runs from a copy of memhog named "mem<newline>hog", so that is its
# comm) and filepressure at adj 0; one tier "some 100ms 2s",
# min_oom_score_adj 500, and
#
#   on_kill = a temporary script ($tmp, root's, mode 755, under the sticky
#             /tmp, as the ownership rule wants) that writes what it is (id
#             -u, id -G; from /proc/self: CapInh/Prm/Eff/Amb, NoNewPrivs,
#             SigIgn, SigBlk, oom_score_adj, nice) to $out/hook.PID.info,
#             its environment to $out/hook.PID (PID = its PSI_LMKD_PID), its
#             own pid to $out/hookpid.PID ($out belongs to nobody), then
#             execs "sleep 30" (same pid, so the alarm the daemon set before
#             exec is the sleep's).
#
# Asserted:
#  - the daemon holds CAP_SETUID/CAP_SETGID permitted but not effective;
#  - the hook runs as nobody (uid and groups of nobody), with no capability
#    in any set, NoNewPrivs 1, no signal ignored or blocked, oom_score_adj
#    0 (the daemon's is -1000) and nice 0;
#  - after kill #1 (the adj 900 memhog): the hook's file has
#    PSI_LMKD_PID=<victim pid>, PSI_LMKD_COMM=memhog, PSI_LMKD_UID=<our
#    uid>, PSI_LMKD_OOM_SCORE_ADJ=900, PSI_LMKD_RSS_KB=<the kill line's
#    rss_kb>, PSI_LMKD_CGROUP=<the group>, PSI_LMKD_TIER=test,
#    PSI_LMKD_REASON=<the kill line's reason>, and PATH; nothing else of ours
#    (the daemon's environment does not leak: a marker variable we export
#    must be absent);
#  - kill #2 (adj 800) happens while hook #1 still sleeps (the daemon does
#    not wait for it) and runs hook #2 as well, whose environment has
#    PSI_LMKD_COMM=mem\x0ahog on one line;
#  - hook #1 dies of SIGALRM: "on_kill hook (pid N) was killed by Alarm
#    clock (timeout)" about 10 s (9.5..12) after kill #1, for both hooks;
#  - on_kill = a symlink to the script in a directory of nobody's is refused
#    by --check-config (file:line: the directory and its owner) and by a
#    reload; on_kill = a symlink in a directory of root's is reloaded, then
#    re-pointed at another script (which would write $out/evil.PID): kill #3
#    (adj 750) runs the script the daemon checked and opened, confined as
#    before, and never the other;
#  - a reload without on_kill drops CAP_SETUID/CAP_SETGID from the daemon's
#    permitted set and says so; one that brings on_kill back says the hook
#    will not run until a restart, and kill #4 (adj 700, started then) runs
#    no hook.
# Exit: 0 pass, 1 fail, 77 skip (CI=true turns non-kernel skips into fails).

set -u

srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$srcdir/tests/kernel/lib.sh" || { echo "cannot source $srcdir/tests/kernel/lib.sh" >&2; exit 99; }
# shellcheck source-path=SCRIPTDIR source=policy-body.sh
. "$srcdir/tests/kernel/policy-body.sh" || { echo "cannot source $srcdir/tests/kernel/policy-body.sh" >&2; exit 99; }

TIMEOUT=${KT_HOOK_TIMEOUT:-20}

pol_init
kt_cgroup_create psi-lmkd-test 128

pol_hook_out
hook=$tmp/on-kill.sh
sed "s|@OUT@|$out|g" >"$hook" <<'EOF'
#!/bin/sh
f=@OUT@/hook.$PSI_LMKD_PID
{
	# builtins only up to "nice": these lines describe this shell itself
	while IFS= read -r l; do
		case $l in Cap*|NoNewPrivs*|SigIgn*|SigBlk*) echo "$l" ;; esac
	done </proc/self/status
	read -r adj </proc/self/oom_score_adj
	echo "adj $adj"
	read -r st </proc/self/stat
	set -- ${st##*) }
	echo "nice ${17}"
	echo "uid $(id -u)"
	echo "groups $(id -G)"
} >"$f.info.tmp"
mv "$f.info.tmp" "$f.info"
env >"$f.tmp"
mv "$f.tmp" "$f"
echo $$ >"@OUT@/hookpid.$PSI_LMKD_PID"
exec sleep 30
EOF
chmod 755 "$hook"
# Must not reach the hook: the daemon gives it a clean environment.
export PSI_LMKD_TEST_LEAK=1

pol_hog memhog-900 8 900
h900=$KT_LAST_PID
# a comm with a newline in it: the hook must see it escaped, on one line
nlhog="$tmp/mem"$'\n'"hog"
cp "$KT_BINDIR/memhog" "$nlhog" || e2e_fail "cannot copy memhog"
# shellcheck disable=SC2016 # expanded by that sh: run the copy with memhog's arguments
pol_hog memhog-800 8 800 sh -c 'exec "$1" "$3" "$4"' sh "$nlhog"
h800=$KT_LAST_PID
[ "$(cat "/proc/$h800/comm")" = "mem"$'\n'"hog" ] || e2e_fail "the adj 800 hog's comm is not mem<newline>hog"

# The daemon runs at oom_score_adj 300 (or -1000, if it may set that) and
# nice -5, so that the hook's 0 and 0 show that it was reset.
adjwrap=$tmp/psi-lmkd-at-adj-300
printf '#!/bin/sh\necho 300 >/proc/self/oom_score_adj || exit 99\nexec "%s" "$@"\n' "$PSI_LMKD" >"$adjwrap"
chmod 755 "$adjwrap"
PSI_LMKD=$adjwrap
# hook_conf [ON_KILL_LINE]: the config, with or without the hook
hook_conf() {
	pol_conf <<EOF
kill_timeout = 1s
nice = -5
${1:-}

[tier test]
trigger = some 100ms 2s
min_oom_score_adj = 500
EOF
}
hook_conf "on_kill = $hook"
pol_daemon_start -v
pol_pressure 0

# The daemon: CAP_SETUID/CAP_SETGID (bits 7, 6) permitted, never effective.
dprm=$(awk '$1 == "CapPrm:" { print $2 }' "/proc/$daemon/status")
deff=$(awk '$1 == "CapEff:" { print $2 }' "/proc/$daemon/status")
dadj=$(cat "/proc/$daemon/oom_score_adj")
dnice=$(awk '{ sub(/.*\) /, ""); print $17 }' "/proc/$daemon/stat")
kt_log "daemon CapPrm=$dprm CapEff=$deff oom_score_adj=$dadj nice=$dnice"
if [ "$dadj" = 0 ] || [ "$dnice" != -5 ]; then
	e2e_fail "the daemon should run at adj 300 or -1000 and nice -5"
fi
[ $((0x$deff & 0xc0)) -eq 0 ] || e2e_fail "the daemon has CAP_SETUID/CAP_SETGID effective (CapEff=$deff)"
[ $((0x$dprm & 0xc0)) -eq $((0xc0)) ] || e2e_fail "the daemon did not keep CAP_SETUID/CAP_SETGID permitted (CapPrm=$dprm)"

# hook_wait VICTIM: wait for its env file; track the hook (it is outside
# the test group: kt_cleanup must end it if the test fails).
hook_wait() {
	kt_wait_for 5 test -s "$out/hookpid.$1" ||
		e2e_fail "the on_kill hook for pid $1 did not run within 5 s (no $out/hookpid.$1)"
	kt_wait_for 2 test -e "$out/hook.$1" || e2e_fail "no environment file from the hook for pid $1"
	kt_track "$(cat "$out/hookpid.$1")"
}

# hook_is_confined VICTIM: what the hook for VICTIM wrote about itself.
hook_is_confined() {
	local info=$out/hook.$1.info k want
	[ -s "$info" ] || e2e_fail "no $info from the hook"
	kt_log "hook for pid $1: $(tr '\n' ' ' <"$info")"
	for k in CapInh CapPrm CapEff CapAmb SigIgn SigBlk; do
		grep -qE "^$k:[[:space:]]+0+\$" "$info" ||
			e2e_fail "the hook's $k is not zero: $(grep "^$k:" "$info" || echo "(no $k)")"
	done
	grep -qE '^NoNewPrivs:[[:space:]]+1$' "$info" || e2e_fail "the hook has no NoNewPrivs: $(grep '^NoNewPrivs' "$info")"
	for want in "uid $(id -u nobody)" "groups $(id -G nobody)" "adj 0" "nice 0"; do
		grep -qxF "$want" "$info" || e2e_fail "the hook's ${want%% *} is not '${want#* }': $(grep "^${want%% *} " "$info")"
	done
}

# ------------------------------------------------ kill #1: the environment --

pol_wait_kills 1 "$TIMEOUT"
line1=$(pol_kill_line 1)
k1=$(kt_log_time "$line1")
kt_log "kill #1 after $(pol_since) s of pressure: $line1"
[ "$(e2e_kv "$line1" pid)" = "$h900" ] || e2e_fail "kill #1 is not the adj 900 memhog $h900: $line1"
hook_wait "$h900"
hp1=$(cat "$out/hookpid.$h900")
env1=$out/hook.$h900
hook_is_confined "$h900"
kt_log "hook #1 pid $hp1 wrote: $(grep '^PSI_LMKD_' "$env1" | tr '\n' ' ')"

# want KEY VALUE: the env file has exactly KEY=VALUE.
want() {
	grep -qxF -- "$1=$2" "$env1" || e2e_fail "hook environment lacks $1=$2: $(grep "^$1=" "$env1" || echo "(no $1)")"
}
want PSI_LMKD_PID "$h900"
want PSI_LMKD_COMM memhog
want PSI_LMKD_UID "$(id -u)"
want PSI_LMKD_OOM_SCORE_ADJ 900
want PSI_LMKD_RSS_KB "$(e2e_kv "$line1" rss_kb)"
want PSI_LMKD_CGROUP "$KT_CG2_REL"
want PSI_LMKD_TIER test
want PSI_LMKD_REASON "$(e2e_kv "$line1" reason)"
grep -q '^PATH=' "$env1" || e2e_fail "hook environment has no PATH"
! grep -q '^PSI_LMKD_TEST_LEAK=' "$env1" || e2e_fail "the daemon's environment leaked into the hook (PSI_LMKD_TEST_LEAK)"
[ "$(grep -c '^PSI_LMKD_' "$env1")" -eq 8 ] ||
	e2e_fail "expected 8 PSI_LMKD_ variables, got: $(grep '^PSI_LMKD_' "$env1" | tr '\n' ' ')"
kt_pid_alive "$hp1" || e2e_fail "hook #1 ($hp1) is not sleeping"
[ "$(cat "/proc/$hp1/comm" 2>/dev/null)" = sleep ] || e2e_fail "hook #1 ($hp1) is not the sleep: $(cat "/proc/$hp1/comm" 2>/dev/null)"

# ----------------------------- kill #2 while hook #1 sleeps: not blocked --

pol_wait_kills 2 "$TIMEOUT"
line2=$(pol_kill_line 2)
k2=$(kt_log_time "$line2")
kt_log "kill #2 after $(pol_since) s of pressure: $line2"
[ "$(e2e_kv "$line2" pid)" = "$h800" ] || e2e_fail "kill #2 is not the adj 800 memhog $h800: $line2"
kt_pid_alive "$hp1" || grep -q "on_kill hook (pid $hp1) was killed" "$log" ||
	e2e_fail "hook #1 ($hp1) ended before kill #2 without the daemon reporting it"
awk -v a="$k1" -v b="$k2" 'BEGIN { exit !(b - a < 9.5) }' ||
	e2e_fail "kill #2 came $(awk -v a="$k1" -v b="$k2" 'BEGIN { print b - a }') s after kill #1, not while hook #1 slept"
hook_wait "$h800"
hp2=$(cat "$out/hookpid.$h800")
env2=$out/hook.$h800
hook_is_confined "$h800"
grep -qxF "PSI_LMKD_PID=$h800" "$env2" || e2e_fail "hook #2 environment: $(cat "$env2")"
grep -qxF "PSI_LMKD_OOM_SCORE_ADJ=800" "$env2" || e2e_fail "hook #2 environment: $(cat "$env2")"
grep -qxF 'PSI_LMKD_COMM=mem\x0ahog' "$env2" ||
	e2e_fail "hook #2 does not have PSI_LMKD_COMM=mem\\x0ahog: $(grep -A1 '^PSI_LMKD_COMM=' "$env2")"
if [ "$(grep -c '^PSI_LMKD_' "$env2")" -ne 8 ] || grep -qx 'hog' "$env2"; then
	e2e_fail "hook #2's environment is not 8 one-line PSI_LMKD_ variables: $(cat "$env2")"
fi

# ------------------------------------------------ SIGALRM after 10 s each --

for hp in "$hp1" "$hp2"; do
	kt_wait_for 14 kt_file_has "$log" "on_kill hook \\(pid $hp\\) was killed by Alarm clock \\(timeout\\)" ||
		e2e_fail "no 'on_kill hook (pid $hp) was killed by Alarm clock (timeout)' line"
	kt_pid_dead "$hp" || e2e_fail "hook $hp is alive after its timeout line"
done
a1=$(kt_log_time "$(grep -m1 "on_kill hook (pid $hp1) was killed" "$log")")
a2=$(kt_log_time "$(grep -m1 "on_kill hook (pid $hp2) was killed" "$log")")
d1=$(awk -v a="$k1" -v b="$a1" 'BEGIN { printf "%.3f", b - a }')
d2=$(awk -v a="$k2" -v b="$a2" 'BEGIN { printf "%.3f", b - a }')
for d in "$d1" "$d2"; do
	awk -v d="$d" 'BEGIN { exit !(d >= 9.5 && d <= 12) }' ||
		e2e_fail "a hook was killed $d s after its kill, expected ~10 s"
done
# --------------------- reloads: on_kill removed, then added back: not run --

reload_wait() {
	pol_reload "$@"
}
# -------- symlinks on the path: checked as written, the checked file runs --

# hog_kill N ADJ LABEL: an 8 MiB memhog at ADJ arrives; it must be kill #N
# (its pid in hpid).
hog_kill() {
	local kline
	pol_hog_late "memhog-$2" 8 "$2"
	hpid=$KT_LAST_PID
	pol_wait_kills "$1" "$TIMEOUT"
	kline=$(pol_kill_line "$1")
	kt_log "kill #$1 $3: $kline"
	[ "$(e2e_kv "$kline" pid)" = "$hpid" ] || e2e_fail "kill #$1 is not the adj $2 memhog $hpid: $kline"
}

# A link in a directory nobody owns: nobody could re-point it, so the path
# is refused, by --check-config (file:line) and by a reload.
home=$tmp/home
if ! { mkdir -m 755 "$home" && ln -s "$hook" "$home/hook" && chown -h nobody "$home" "$home/hook"; }; then
	e2e_fail "cannot make nobody's $home/hook"
fi
hook_conf "on_kill = $home/hook"
want="$conf:$(grep -n '^on_kill' "$conf" | cut -d: -f1): on_kill: the directory $home above $home/hook is owned by uid $(id -u nobody)"
if checked=$("$PSI_LMKD" -c "$conf" --check-config 2>&1); then
	e2e_fail "--check-config accepted on_kill = $home/hook, a link in a directory of nobody's"
fi
grep -qF -- "$want" <<<"$checked" || e2e_fail "--check-config on $home/hook says: $checked"
kill -HUP "$daemon"
kt_wait_for 5 kt_file_has "$log" 'reload failed, keeping the current configuration' ||
	e2e_fail "a reload with on_kill = $home/hook was not refused"
kt_log "on_kill in a directory of nobody's: refused ($want)"
# A link in a directory of root's, re-pointed after the daemon opened it:
# the program checked and opened at the reload still runs, not the new one.
links=$tmp/links
if ! { mkdir -m 755 "$links" && ln -s "$hook" "$links/hook"; }; then
	e2e_fail "cannot make $links/hook"
fi
# shellcheck disable=SC2016 # expanded by that script, not here
printf '#!/bin/sh\necho "$(id -u)" >%s/evil.$PSI_LMKD_PID\n' "$out" >"$links/evil.sh"
chmod 755 "$links/evil.sh"
hook_conf "on_kill = $links/hook"
reload_wait 1 "configuration reloaded from"
ln -sfn "$links/evil.sh" "$links/hook" || e2e_fail "cannot re-point $links/hook"
hog_kill 3 750 "after the link was re-pointed"
h750=$hpid
hook_wait "$h750"
[ ! -e "$out/evil.$h750" ] || e2e_fail "the re-pointed link's program ran for kill #3"
hook_is_confined "$h750"

hook_conf
reload_wait 2 'on_kill removed: CAP_SETUID and CAP_SETGID dropped from the permitted set'
dprm=$(awk '$1 == "CapPrm:" { print $2 }' "/proc/$daemon/status")
[ $((0x$dprm & 0xc0)) -eq 0 ] || e2e_fail "on_kill removed, but the daemon still has CAP_SETUID/CAP_SETGID permitted (CapPrm=$dprm)"
hook_conf "on_kill = $hook"
reload_wait 3 "on_kill $hook will not run until psi-lmkd restarts"
hog_kill 4 700 "after the reloads"
h700=$hpid
kt_wait_for 2 kt_file_has "$log" "on_kill $hook not run: it cannot switch to on_kill_user nobody" ||
	e2e_fail "no 'on_kill ... not run' line for kill #4"
# Deliberate: a hook started anyway would have written its hookpid file
# within this second (the 'not run' line above is the daemon's own account).
sleep 1
[ ! -e "$out/hookpid.$h700" ] || e2e_fail "the hook ran for kill #4 although the daemon gave up CAP_SETUID/CAP_SETGID"
! grep -q "on_kill hook (pid [0-9]*) exited" "$log" || e2e_fail "a hook process was started and failed: $(grep 'on_kill hook' "$log")"

e2e_daemon_check "at the end"
pol_daemon_stop

echo "---- daemon log ----"
pol_strip <"$log" | sed 's/^/  /'
echo "---- hook #1 environment (PSI_LMKD_*, PATH) ----"
grep -E '^(PSI_LMKD_|PATH=)' "$env1" | sed 's/^/  /'
echo "---- hook #2: what it is ----"
sed 's/^/  /' "$out/hook.$h800.info"
grep '^PSI_LMKD_COMM=' "$env2" | sed 's/^/  /'
printf 'kill #2 came %.3f s after kill #1 while hook #1 slept; hooks killed by SIGALRM %s s and %s s after their kills\n' \
	"$(awk -v a="$k1" -v b="$k2" 'BEGIN { print b - a }')" "$d1" "$d2"
echo "PASS"
exit 0
