#!/bin/bash
# test-e2e-kill.sh - psi-lmkd against the real kernel, end to end.
#
# In a fresh memory-limited test cgroup: four memhogs (oom_score_adj 0, 300,
# 700, 950) and a filepressure reader (adj 100) whose file-backed working set
# is bigger than the limit, so the group's memory.pressure shows real stall.
# psi-lmkd (outside the group) watches that file with one tier
# "some 100ms 2s", band oom_score_adj >= 200, scope = the group.
#
# Expected: kills of the adj 950, 700 and 300 memhogs, in that order, each
# logged as a complete "kill pid=..." line; those three really die; the adj 0
# memhog and the reader (both below the band) survive and are never named;
# the daemon keeps running once the band is empty and kills nothing else
# while the pressure goes on.
#
# Environment (from the build's AM_TESTS_ENVIRONMENT):
#   PSI_LMKD   absolute path of the daemon
#   KT_BINDIR  directory with the built memhog and filepressure
#   srcdir     top source dir (for tests/kernel/lib.sh)
# Tunables: KT_E2E_LIMIT_MIB (128), KT_E2E_FILE_MIB (300), KT_E2E_HOG_MIB (8),
#   KT_E2E_TIMEOUT (60 s for the three kills), KT_E2E_SETTLE (8 s afterwards),
#   KT_DISK_TMPDIR (where the big file goes; must not be tmpfs).
# Exit: 0 pass, 1 fail, 77 skip (CI=true turns non-kernel skips into fails).

set -u

srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$srcdir/tests/kernel/lib.sh" || { echo "cannot source $srcdir/tests/kernel/lib.sh" >&2; exit 99; }

LIMIT_MIB=${KT_E2E_LIMIT_MIB:-128}
FILE_MIB=${KT_E2E_FILE_MIB:-300}
HOG_MIB=${KT_E2E_HOG_MIB:-8}
TIMEOUT=${KT_E2E_TIMEOUT:-60}
SETTLE=${KT_E2E_SETTLE:-8}

kt_require_root_and_psi
kt_install_traps

# ------------------------------------------------------------ binaries --

if [ -z "${PSI_LMKD:-}" ]; then
	for c in ./psi-lmkd "$srcdir/psi-lmkd" "$srcdir/build/psi-lmkd"; do
		if [ -x "$c" ]; then PSI_LMKD=$c; break; fi
	done
fi
[ -n "${PSI_LMKD:-}" ] && [ -x "$PSI_LMKD" ] ||
	kt_skip_or_fail "daemon binary not found (set PSI_LMKD; got '${PSI_LMKD:-}')"
if [ -z "${KT_BINDIR:-}" ]; then
	for c in ./tests/kernel "$(dirname "$0")"; do
		if [ -x "$c/memhog" ] && [ -x "$c/filepressure" ]; then KT_BINDIR=$c; break; fi
	done
fi
for b in memhog filepressure; do
	[ -x "${KT_BINDIR:-}/$b" ] ||
		kt_skip_or_fail "helper '$b' not built (set KT_BINDIR; got '${KT_BINDIR:-}')"
done

# ------------------------------------------------------------ the group --

kt_cgroup_create psi-lmkd-test "$LIMIT_MIB"
tmp=$(kt_tmpdir)
kt_disk_tmpdir "$FILE_MIB"		# sets KT_DISK_DIR (not tmpfs: we need file cache)
log=$tmp/daemon.log
conf=$tmp/psi-lmkd.conf
daemon=

# On failure, show what the daemon said.
e2e_fail() {
	if [ -s "$log" ]; then
		echo "---- daemon log (last 60 lines) ----" >&2
		tail -n 60 "$log" >&2
		echo "------------------------------------" >&2
	fi
	kt_fail "$@"
}

declare -A hog			# adj -> pid
for adj in 0 300 700 950; do
	kt_spawn_in_cgroup -o "$tmp/memhog-$adj.out" \
		"$KT_BINDIR/memhog" "$HOG_MIB" "$adj" >/dev/null
	hog[$adj]=$KT_LAST_PID
	kt_wait_ready "$tmp/memhog-$adj.out" "${hog[$adj]}" 20
	got=$(cat "/proc/${hog[$adj]}/oom_score_adj" 2>/dev/null)
	[ "$got" = "$adj" ] || kt_fail "memhog ${hog[$adj]}: oom_score_adj is '$got', not $adj"
done
kt_log "memhogs ready: adj0=${hog[0]} adj300=${hog[300]} adj700=${hog[700]} adj950=${hog[950]}"

# --------------------------------------------------------- the daemon --

cat >"$conf" <<EOF
[daemon]
pressure = $KT_PRESSURE
scope = $KT_CG2_REL
kill_timeout = 1s

[tier test]
trigger = some 100ms 2s
min_oom_score_adj = 200
EOF

"$PSI_LMKD" -f -v -c "$conf" </dev/null >"$log" 2>&1 &
daemon=$!
kt_track "$daemon"
kt_log "daemon started: pid $daemon"

daemon_check() {
	if kt_pid_dead "$daemon"; then
		wait "$daemon" 2>/dev/null
		e2e_fail "daemon exited (status $?) $1"
	fi
}
sleep 1
daemon_check "during startup"

# ------------------------------------------------------------ pressure --

kt_spawn_in_cgroup -o "$tmp/filepressure.out" \
	"$KT_BINDIR/filepressure" "$KT_DISK_DIR/data" "$FILE_MIB" 100 >/dev/null
reader=$KT_LAST_PID
kt_wait_ready "$tmp/filepressure.out" "$reader" 180
t0=$(date +%s%N)
kt_log "filepressure ready: pid $reader (${FILE_MIB} MiB file, ${LIMIT_MIB} MiB limit)"

since() {	# seconds since the reader got ready
	awk -v a="$t0" -v b="$(date +%s%N)" 'BEGIN { printf "%.1f", (b - a) / 1e9 }'
}

# A kill line: "kill pid=" not preceded by a word character or '-'
# (so "would-kill pid=" does not count), whatever prefix the log adds.
KILL_RE='(^|[^[:alnum:]_-])kill pid='
kill_lines() {
	grep -E -- "$KILL_RE" "$log" 2>/dev/null
}
kill_count() {
	kill_lines | wc -l
}

# ------------------------------------------------- wait for three kills --

seen=0
deadline=$(( $(date +%s) + TIMEOUT ))
declare -a kill_at
while [ "$seen" -lt 3 ]; do
	n=$(kill_count)
	while [ "$seen" -lt "$n" ]; do
		seen=$((seen + 1))
		kill_at[seen]=$(since)
		kt_log "kill #$seen seen after ${kill_at[$seen]} s of pressure"
	done
	[ "$seen" -ge 3 ] && break
	daemon_check "while waiting for kills"
	kt_pid_alive "$reader" || e2e_fail "filepressure $reader died while waiting for kills"
	if [ "$(date +%s)" -ge "$deadline" ]; then
		e2e_fail "only $seen of 3 kills within ${TIMEOUT}s of pressure"
	fi
	sleep 0.2
done

# ------------------------------------------------------------ the lines --

# kv LINE KEY: the value of " KEY=value" in LINE.
kv() {
	local re="(^|[[:space:]])$2=([^[:space:]]*)"
	[[ $1 =~ $re ]] && printf '%s' "${BASH_REMATCH[2]}"
}
is_uint() {
	case $1 in ''|*[!0-9]*) return 1 ;; esac
}

uid=$(id -u)
mapfile -t lines < <(kill_lines)
i=0
for adj in 950 700 300; do
	line=${lines[i]}
	i=$((i + 1))
	want=${hog[$adj]}
	for key in pid comm uid oom_score_adj rss_kb tier stall_us window_us reason; do
		[ -n "$(kv "$line" "$key")" ] ||
			e2e_fail "kill #$i lacks $key=: $line"
	done
	[ "$(kv "$line" pid)" = "$want" ] ||
		e2e_fail "kill #$i should be the adj $adj memhog (pid $want): $line"
	[ "$(kv "$line" oom_score_adj)" = "$adj" ] ||
		e2e_fail "kill #$i: oom_score_adj should be $adj: $line"
	[ "$(kv "$line" comm)" = memhog ] || e2e_fail "kill #$i: comm should be memhog: $line"
	[ "$(kv "$line" uid)" = "$uid" ] || e2e_fail "kill #$i: uid should be $uid: $line"
	[ "$(kv "$line" tier)" = test ] || e2e_fail "kill #$i: tier should be test: $line"
	rss=$(kv "$line" rss_kb)
	is_uint "$rss" && [ "$rss" -ge $((HOG_MIB * 1024 * 9 / 10)) ] ||
		e2e_fail "kill #$i: rss_kb=$rss, expected >= ~$((HOG_MIB * 1024)) for a $HOG_MIB MiB memhog: $line"
	for key in stall_us window_us; do
		is_uint "$(kv "$line" "$key")" || e2e_fail "kill #$i: $key is not a number: $line"
	done
	kt_wait_for 5 kt_pid_dead "$want" ||
		e2e_fail "kill #$i: pid $want (adj $adj) is still alive 5 s after its kill line"
	printf 'kill #%d: adj %-3s pid %-7s after %5s s of pressure  [%s]\n' \
		"$i" "$adj" "$want" "${kill_at[$i]}" "$line"
done

# --------------------------------- band empty: keep pressure, no more kills --

kt_log "band empty; keeping pressure for ${SETTLE}s"
end=$(( $(date +%s) + SETTLE ))
while [ "$(date +%s)" -lt "$end" ]; do
	daemon_check "after the band became empty"
	kt_pid_alive "$reader" || e2e_fail "filepressure $reader died (not a candidate: adj 100 < 200)"
	kt_pid_alive "${hog[0]}" || e2e_fail "adj 0 memhog ${hog[0]} died (not a candidate)"
	sleep 0.5
done
n=$(kill_count)
[ "$n" -eq 3 ] || e2e_fail "expected exactly 3 kill lines, got $n"
mapfile -t lines < <(kill_lines)
for line in "${lines[@]}"; do
	case $(kv "$line" pid) in
	"${hog[0]}"|"$reader") e2e_fail "a non-candidate was named in a kill line: $line" ;;
	esac
done
daemon_check "at the end"

# One read of the group's pressure, for the record (not during the wait:
# frequent reads starve unprivileged triggers).
printf 'group pressure at the end: %s\n' "$(tr '\n' ' ' <"$KT_PRESSURE")"
printf 'kills after %s / %s / %s s of pressure (limit %s MiB, file %s MiB, memhogs %s MiB)\n' \
	"${kill_at[1]}" "${kill_at[2]}" "${kill_at[3]}" "$LIMIT_MIB" "$FILE_MIB" "$HOG_MIB"
echo "---- daemon log (last 30 lines) ----"
tail -n 30 "$log"
echo "PASS"
exit 0
