/* SPDX-License-Identifier: MIT */
/* fixture-tree: writing the files and directories of a fixture root (a fake
 * /proc, /sys or cgroup tree) for unit tests. A failure fails the test case. */
#pragma once

/* Writes text to ROOT/rel (created or truncated). */
void fixture_put(const char *root, const char *rel, const char *text);
/* Makes the directory ROOT/rel (mode 0755); one that exists is fine. */
void fixture_mkdir(const char *root, const char *rel);
/* A cgroup v2 memory group ROOT/rel of 100 MiB (memory.max), 90 MiB in use
 * of which 4 MiB is inactive file cache: 14 MiB (14336 kB) available. */
void fixture_memory_group(const char *root, const char *rel);
/* Makes a fixture root from dir (a mkdtemp template, rewritten) with an
 * empty proc/ in it and opens it as psi-lmkd's root (sysroot_open); fails
 * the test case if it cannot. */
int fixture_root_open(char *dir);
/* Closes rootfd and removes the fixture root dir with all in it. */
void fixture_root_close(int rootfd, const char *dir);
