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
/* Writes text to path through path.tmp and rename(2): a reader sees the old
 * file or the new one, never a part. 0 or -errno. */
int metrics_write_file(const char *path, const char *text, size_t len);
