#!/bin/bash
# SPDX-License-Identifier: MIT
# test-utf8-names.sh - a process and a group named with bytes that are not
# UTF-8 (0xff 0xfe, as any user may choose with prctl or mkdir in a
# delegated subtree) leave every output of psi-lmkd valid (review M-2).
#
# In a fresh 64 MiB test group P: a child group "g-\xff\xfe" that a
# cgroup-pattern tier watches, and in it a memhog (adj 900) run from a copy
# of the binary named "\xff\xfe-hog", so that its comm is those bytes. A
# private system bus (the shipped D-Bus policy) carries the Killed signal to
# a listener running as root. psi-lmkd's tier "last" fires at once
# (low_available = 100%) and kills it; then a plain memhog in the same
# group, to show the bus connection survived.
#
# Asserted: both kills; the listener hears Killed for both, the first with
# comm "\xff\xfe-hog" written as text (backslash, x, f, f, ...); no
# "cannot send the Killed signal" in the log; `psi-lmkd --status --json`
# parses as JSON (Python's json, strict UTF-8, and jq) and shows that comm,
# the victim's cgroup and the watched group as display names; the metrics
# file decodes as UTF-8 and labels the group the same way; the daemon's
# whole log decodes as UTF-8.
# Exit: 0 pass, 1 fail, 77 skip (CI=true turns non-kernel skips into fails).

set -u
export LC_ALL=C

srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$srcdir/tests/kernel/lib.sh" || { echo "cannot source $srcdir/tests/kernel/lib.sh" >&2; exit 99; }
# shellcheck source-path=SCRIPTDIR source=e2e-body.sh
. "$srcdir/tests/kernel/e2e-body.sh" || { echo "cannot source $srcdir/tests/kernel/e2e-body.sh" >&2; exit 99; }

kt_require_root_and_psi
kt_install_traps
e2e_find_binaries
command -v jq >/dev/null || kt_skip_or_fail "jq is missing (apt-get install jq)"
PY=/usr/bin/python3
$PY -c 'import gi; gi.require_version("Gio", "2.0"); from gi.repository import Gio' 2>/dev/null ||
	kt_skip_or_fail "python3-gi is missing (apt-get install python3-gi gir1.2-glib-2.0)"
tmp=$(kt_tmpdir)
log=$tmp/daemon.log
BAD=$'\xff\xfe'

kt_system_bus_start "$tmp"
$PY "$srcdir/tests/kernel/killed-listener.py" 60 >"$tmp/listener.out" 2>&1 &
kt_track $!
kt_wait_for 10 kt_file_has "$tmp/listener.out" '^ready' || kt_fail "the listener did not start: $(cat "$tmp/listener.out")"

kt_cgroup_create psi-lmkd-test 64
P_REL=$KT_CG2_REL
mkdir "$KT_CG2_DIR/g-$BAD" || kt_fail "cannot create the group g-\\xff\\xfe"
KT_CG_DIRS+=("$KT_CG2_DIR/g-$BAD")
KT_CG2_DIR=$KT_CG2_DIR/g-$BAD
KT_CG2_REL=$P_REL/g-$BAD
cp "$KT_BINDIR/memhog" "$tmp/$BAD-hog" || kt_fail "cannot copy memhog"
kt_spawn_in_cgroup -o "$tmp/v1.out" "$tmp/$BAD-hog" 8 900 >/dev/null
v1=$KT_LAST_PID
kt_wait_ready "$tmp/v1.out" "$v1" 10
[ "$(cat "/proc/$v1/comm")" = "$BAD-hog" ] || kt_fail "the victim's comm is not \\xff\\xfe-hog"

conf=$tmp/psi-lmkd.conf
cat >"$conf" <<EOF
[daemon]
scope = $P_REL
control_socket = $tmp/control
metrics_file = $tmp/metrics.prom
[tier pattern]
cgroup = $P_REL/*
trigger = some 500ms 2s
min_oom_score_adj = 1000
[tier last]
low_available = 100%
hold_idle = false
low_swap = 100%
min_oom_score_adj = 900
EOF
kt_daemon_start "$conf" "$log" -v
daemon=$KT_DAEMON_PID
kt_wait_for 15 kt_file_has "$log" "kill pid=$v1 " || e2e_fail "the daemon did not kill pid $v1"
# at adj 0 until ready, then into the band: the tier fires at once, and a
# memhog started at 900 could die before kt_spawn_in_cgroup saw it alive
# (it did, under make distcheck's parallel tests)
kt_spawn_in_cgroup -o "$tmp/v2.out" "$KT_BINDIR/memhog" 8 0 >/dev/null
v2=$KT_LAST_PID
kt_wait_ready "$tmp/v2.out" "$v2" 10
echo 900 >"/proc/$v2/oom_score_adj" || kt_fail "cannot set pid $v2's oom_score_adj to 900"
kt_wait_for 15 kt_file_has "$log" "kill pid=$v2 " || e2e_fail "the daemon did not kill pid $v2"

# the bus: both signals, the name as text
kt_wait_for 10 grep -qF "killed $v2 'memhog'" "$tmp/listener.out" ||
	e2e_fail "no Killed signal for the plain memhog $v2: $(cat "$tmp/listener.out")"
grep -qF "killed $v1 '\\\\xff\\\\xfe-hog'" "$tmp/listener.out" ||
	e2e_fail "no Killed signal for pid $v1 named \\xff\\xfe-hog: $(cat "$tmp/listener.out")"
! kt_file_has "$log" 'cannot send the Killed signal' || e2e_fail "a Killed signal could not be sent"

# --status --json: JSON, UTF-8, display names
"$PSI_LMKD" -c "$conf" --status --json >"$tmp/status.json" || e2e_fail "--status --json failed"
$PY - "$tmp/status.json" "$P_REL" "$v1" <<'EOF' >"$tmp/json.out" 2>&1 || e2e_fail "--status --json: $(cat "$tmp/json.out")"
import json
import sys
s = json.load(open(sys.argv[1], encoding="utf-8", errors="strict"))
group = sys.argv[2] + "/g-\\xff\\xfe"
k = [k for k in s["kills"] if k["pid"] == int(sys.argv[3])]
assert k and k[0]["comm"] == "\\xff\\xfe-hog", s["kills"]
assert k[0]["cgroup"] == group, k[0]
assert group in [i["group"] for i in s["groups"]["instances"]], s["groups"]
print("ok")
EOF
jq -e '.kills | length == 2' "$tmp/status.json" >/dev/null || e2e_fail "jq: $(cat "$tmp/status.json")"

# the metrics file and the log: UTF-8 throughout
kt_wait_for 5 test -s "$tmp/metrics.prom" || e2e_fail "no metrics file"
$PY - "$tmp/metrics.prom" "$P_REL" <<'EOF' >"$tmp/metrics.out" 2>&1 || e2e_fail "metrics: $(cat "$tmp/metrics.out")"
import sys
text = open(sys.argv[1], encoding="utf-8", errors="strict").read()
want = 'group="%s/g-\\\\xff\\\\xfe"' % sys.argv[2]
assert want in text, text
print("ok")
EOF
$PY -c 'import sys; open(sys.argv[1], encoding="utf-8", errors="strict").read()' "$log" 2>"$tmp/log.out" ||
	e2e_fail "the daemon's log is not UTF-8: $(tail -n 1 "$tmp/log.out")"
kill -TERM "$daemon"
kt_wait_for 5 kt_pid_dead "$daemon" || e2e_fail "the daemon ignores SIGTERM"
kt_log "Killed: $(tr '\n' ';' <"$tmp/listener.out"); metrics: $(grep -a -m1 'group_kills_total{' "$tmp/metrics.prom")"
echo PASS
exit 0
