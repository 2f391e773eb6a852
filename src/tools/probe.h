/* SPDX-License-Identifier: MIT */
/* probe: what this kernel offers psi-lmkd, and what the daemon would do with
 * a given configuration (--probe). Every path goes through the root fd. */
#pragma once

#include <stdio.h>

#include "config.h"
#include "watch.h"

/* Prints the report. cfg may be NULL (no usable config). ops is the kernel
 * seam (NULL: the real kernel). Returns 0, or -errno if nothing could be probed. */
int probe_run(int rootfd, const struct config *cfg, const struct watch_ops *ops, FILE *out);
