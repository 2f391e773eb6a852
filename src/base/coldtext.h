/* SPDX-License-Identifier: MIT */
/* coldtext: code the daemon runs only at start-up, on a reload or as a
 * command-line tool, never on the kill path (parsing the configuration, the
 * command line, the probe). COLD_TEXT puts a function in a section of its
 * own, so that this code fills whole pages apart from the rest; the daemon
 * drops those pages before it locks itself in memory (coldtext_drop, from
 * lock_memory). The program's text is otherwise all resident and locked:
 * the kernel maps file pages 64 kB around each fault, so a daemon that runs
 * a few functions of each window maps all of it.
 *
 * Only for a function that cannot run on the kill path, directly or through
 * a pointer: a dropped page comes back with a page fault when its code
 * runs (from the page cache, or from disk if it was evicted), which is what
 * mlockall is there to keep off the kill path. A reload brings the pages
 * it runs back (and they stay, locked). */
#pragma once

#include <stddef.h>

#define COLD_TEXT __attribute__((section("psi_cold_text")))

/* Unmaps the whole pages of the cold section from the daemon's address
 * space (they stay in the page cache), and those of the program's unwind
 * tables (.eh_frame_hdr, .eh_frame: read only to unwind the stack, which
 * C code does only for a debugger, a backtrace or pthread_cancel, never on
 * the kill path; mapped only because the kernel maps 64 kB around each
 * fault in .rodata). Before mlockall: a locked page cannot be dropped.
 * Returns the bytes dropped (0: nothing to drop), or -errno. */
long coldtext_drop(void);
