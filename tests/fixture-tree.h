/* SPDX-License-Identifier: MIT */
/* fixture-tree: writing the files and directories of a fixture root (a fake
 * /proc, /sys or cgroup tree) for unit tests. A failure fails the test case. */
#pragma once

/* Writes text to ROOT/rel (created or truncated). */
void fixture_put(const char *root, const char *rel, const char *text);
/* Makes the directory ROOT/rel (mode 0755); one that exists is fine. */
void fixture_mkdir(const char *root, const char *rel);
