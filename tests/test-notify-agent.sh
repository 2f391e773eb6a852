#!/bin/bash
# SPDX-License-Identifier: MIT
# test-notify-agent.sh - how tools/psi-lmkd-notify-agent picks the process
# a low-memory warning names, on fixture /proc trees (no bus, no kernel):
# the highest oom_score wins, of equal scores the larger VmRSS; a process
# that vanished between its oom_score and its status is skipped, not a
# crash; a hidden pid 1 or an unreadable oom_score (hidepid=) makes the
# answer "unknown" (None), and so does a tree where nothing scores above 0.
# Also: the level names and urgencies (50 low/0, 100 medium/1, 255
# critical/2), and --warn-interval refusing a negative value.
# The kernel path (a real warn tier, two users' agents) is
# tests/kernel/test-warn-agent.sh.
# Exit: 0 pass, 1 fail, 77 skip (python3-gi missing; a failure with CI=true).
set -u

srcdir=${srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
PY=/usr/bin/python3
fail() { echo "FAIL: $*" >&2; exit 1; }
if ! $PY -c 'import gi; gi.require_version("Gio", "2.0"); from gi.repository import Gio' 2>/dev/null; then
	[ "${CI:-}" = true ] && fail "python3-gi is missing (CI=true)"
	echo "SKIP: python3-gi is missing (Debian: python3-gi)"
	exit 77
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test-notify-agent.XXXXXX") || fail "mktemp"
trap 'rm -rf "$tmp"' EXIT

if $PY "$srcdir/tools/psi-lmkd-notify-agent" --warn-interval -1 >"$tmp/neg.out" 2>&1; then
	fail "--warn-interval -1 was accepted"
fi
grep -q 'warn-interval must be 0 or more' "$tmp/neg.out" || fail "--warn-interval -1: $(cat "$tmp/neg.out")"

$PY - "$srcdir/tools/psi-lmkd-notify-agent" "$tmp" <<'EOP' || fail "see above"
import os
import sys
from importlib.machinery import SourceFileLoader

agent = SourceFileLoader("agent", sys.argv[1]).load_module()
base = sys.argv[2]
failed = []


def tree(name, procs):
    """procs: pid -> (oom_score or None, uid, rss_kb, comm); a None field
    leaves that file out (a process that vanished meanwhile)."""
    root = os.path.join(base, name)
    os.makedirs(root)
    open(os.path.join(root, "meminfo"), "w").write("MemTotal: 1 kB\n")
    for pid, (score, uid, rss, comm) in procs.items():
        d = os.path.join(root, str(pid))
        os.makedirs(d)
        if score is not None:
            open(os.path.join(d, "oom_score"), "w").write("%d\n" % score)
        if uid is not None:
            open(os.path.join(d, "status"), "w").write(
                "Name:\t%s\nUmask:\t0022\nState:\tS (sleeping)\nUid:\t%d\t%d\t%d\t%d\nVmRSS:\t%8d kB\n" %
                (comm, uid, uid, uid, uid, rss))
        if comm is not None:
            open(os.path.join(d, "comm"), "w").write(comm + "\n")
    return root


def check(name, procs, want):
    agent.PROC = tree(name, procs)
    got = agent.top_process()
    if got != want:
        failed.append("%s: got %r, want %r" % (name, got, want))


init = (0, 0, 10000, "systemd")
check("highest-score", {1: init, 10: (700, 1000, 500000, "firefox"), 11: (900, 1000, 1000, "memhog"),
                        12: (300, 0, 900000, "Xorg")}, (11, "memhog", 1000, 1000))
check("tie-larger-rss", {1: init, 10: (900, 1000, 1000, "small"), 11: (900, 1001, 2048, "large")},
      (11, "large", 1001, 2048))
# the larger one vanished after its score was read: the other one, no crash
check("vanished", {1: init, 10: (900, 1000, 1000, "small"), 11: (900, None, 0, None)}, (10, "small", 1000, 1000))
# a process with no oom_score any more is skipped
check("vanished-early", {1: init, 10: (None, 1000, 1000, "gone"), 11: (5, 1000, 64, "bash")}, (11, "bash", 1000, 64))
check("hidepid-no-pid1", {10: (900, 1000, 1000, "memhog")}, None)
check("nothing-scores", {1: init, 10: (0, 1000, 1000, "bash")}, None)

# an oom_score we may not read (hidepid=1): unknown (only as non-root)
if os.getuid() != 0:
    root = tree("hidepid-1", {1: init, 10: (900, 1000, 1000, "memhog")})
    os.chmod(os.path.join(root, "10", "oom_score"), 0)
    agent.PROC = root
    if agent.top_process() is not None:
        failed.append("hidepid-1: an unreadable oom_score did not make it unknown")

for level, want in ((50, ("low", 0)), (100, ("medium", 1)), (255, ("critical", 2))):
    if agent.level_name(level) != want:
        failed.append("level %d: %r" % (level, agent.level_name(level)))

# the real /proc: whatever it is, no crash, and a real process or None
agent.PROC = "/proc"
top = agent.top_process()
if top is not None and not (isinstance(top[0], int) and isinstance(top[1], str)):
    failed.append("real /proc: %r" % (top,))
print("real /proc: %r" % (top,))

for f in failed:
    print("FAIL:", f, file=sys.stderr)
sys.exit(1 if failed else 0)
EOP
echo PASS
