#!/bin/bash
# SPDX-License-Identifier: MIT
# test-e2e-kill-userspace.sh - the end-to-end kill test on the userspace
# monitor: tier "some 100ms 1s".  Without CAP_SYS_RESOURCE the kernel (6.5+)
# refuses a window that is not a multiple of 2 s, so the daemon must run the
# tier on its userspace monitor (kernel/psi-monitor fed with the file's
# total=), say so in the log ("userspace monitor" on the tier's armed line),
# and still kill 950, 700, 300 in that order.  See e2e-body.sh.
# If the test has CAP_SYS_RESOURCE, the daemon runs without it (setpriv).
# Exit: 0 pass, 1 fail, 77 skip (CI=true turns non-kernel skips into fails).

set -u

srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$srcdir/tests/kernel/lib.sh" || { echo "cannot source $srcdir/tests/kernel/lib.sh" >&2; exit 99; }
# shellcheck source-path=SCRIPTDIR source=e2e-body.sh
. "$srcdir/tests/kernel/e2e-body.sh" || { echo "cannot source $srcdir/tests/kernel/e2e-body.sh" >&2; exit 99; }

E2E_TRIGGER="some 100ms 1s"
E2E_EXPECT_SOURCE=userspace
E2E_UNPRIVILEGED=1

e2e_main
