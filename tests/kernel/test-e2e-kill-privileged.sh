#!/bin/bash
# SPDX-License-Identifier: MIT
# test-e2e-kill-privileged.sh - the end-to-end kill test on the privileged
# fast path: tier "some 100ms 1s" with the daemon started under
# "unshare -Ur" (a new user namespace, root mapped to root).  The kernel
# checks the opener's raw capability set, which is full there, so it accepts
# the sub-2 s window and serves the trigger from its rtpoll thread, as for a
# daemon with CAP_SYS_RESOURCE.  The daemon must say the tier runs on a
# kernel trigger, never mention the userspace monitor, and kill 950, 700,
# 300 in that order.  See e2e-body.sh.
# (This is a test device: the product must not use a user namespace to get
# past the kernel's policy.)
# No usable "unshare -Ur" (user namespaces disabled, no unshare): skip, but
# fail under CI=true.
# Exit: 0 pass, 1 fail, 77 skip (CI=true turns non-kernel skips into fails).

set -u

srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$srcdir/tests/kernel/lib.sh" || { echo "cannot source $srcdir/tests/kernel/lib.sh" >&2; exit 99; }
# shellcheck source-path=SCRIPTDIR source=e2e-body.sh
. "$srcdir/tests/kernel/e2e-body.sh" || { echo "cannot source $srcdir/tests/kernel/e2e-body.sh" >&2; exit 99; }

E2E_TRIGGER="some 100ms 1s"
E2E_EXPECT_SOURCE=privileged
# unshare execs the daemon: the pid the test tracks is the daemon's.
E2E_WRAP=(unshare -Ur)
# -vv: debug lines say when and why the tier fired (reported, not asserted).
E2E_DAEMON_FLAGS=(-vv)

e2e_hook_prereq() {
	kt_require_userns_root
}

e2e_hook_report() {
	# For the record (the wording of debug lines is not asserted).
	echo "daemon's debug account of its tier events:"
	grep -o -- 'tier test fired ([^)]*)' "$log" | sort | uniq -c | sed 's/^/    /'
	printf '    %s userspace-shadow firings ("before its kernel trigger reported it")\n' \
		"$(grep -c -- 'before its kernel trigger reported it' "$log")"
}

e2e_main
