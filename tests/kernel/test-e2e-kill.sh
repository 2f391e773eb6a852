#!/bin/bash
# SPDX-License-Identifier: MIT
# test-e2e-kill.sh - psi-lmkd against the real kernel, end to end, with an
# unprivileged kernel trigger: tier "some 100ms 2s" (a window the kernel
# accepts without CAP_SYS_RESOURCE; if the test has that capability, the
# daemon runs without it).  The daemon must say the tier runs on
# a kernel trigger, then kill the adj 950, 700 and 300 memhogs in that order
# and never the adj 0 memhog or the pressure maker.  See e2e-body.sh for the
# setup, the checks and the tunables.
# Exit: 0 pass, 1 fail, 77 skip (CI=true turns non-kernel skips into fails).

set -u

srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$srcdir/tests/kernel/lib.sh" || { echo "cannot source $srcdir/tests/kernel/lib.sh" >&2; exit 99; }
# shellcheck source-path=SCRIPTDIR source=e2e-body.sh
. "$srcdir/tests/kernel/e2e-body.sh" || { echo "cannot source $srcdir/tests/kernel/e2e-body.sh" >&2; exit 99; }

E2E_TRIGGER="some 100ms 2s"
E2E_EXPECT_SOURCE=kernel
E2E_UNPRIVILEGED=1
e2e_main
