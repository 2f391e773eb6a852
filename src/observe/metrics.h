/* SPDX-License-Identifier: MIT */
/* metrics: the status snapshot in Prometheus text format (for
 * node_exporter's textfile collector), and its atomic replacement on disk.
 * The formatter is pure; metrics_signature tells whether anything a metric
 * shows has changed, so the daemon writes only then (never on a timer). */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "status.h"

void metrics_format(const struct status_snapshot *s, FILE *f);
/* Changes whenever a value metrics_format prints (other than the uptime)
 * changes. */
uint64_t metrics_signature(const struct status_snapshot *s);
/* Writes text to path through a new file of a random name in its directory
 * (opened by trust_open_parent, each time) and renameat(2): a reader sees the
 * old file or the new one, never a part. The temporary file is created with
 * O_EXCL and never waited on, so nothing planted in the directory can block
 * or redirect the write; it is removed if the write fails. 0 or -errno with
 * why set. */
int metrics_write_file(const char *path, const char *text, size_t len, char *why, size_t whylen);
