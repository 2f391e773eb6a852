/* SPDX-License-Identifier: MIT */
/* coldtext: see coldtext.h. */
#include "coldtext.h"

#include <errno.h>
#include <stdint.h>
#include <unistd.h>
#include <sys/mman.h>

/* The linker's bounds of a section named like a C identifier; weak, so that
 * a program without cold code still links (then both are null). */
extern const char __start_psi_cold_text[] __attribute__((weak));
extern const char __stop_psi_cold_text[] __attribute__((weak));

long coldtext_drop(void)
{
	long page = sysconf(_SC_PAGESIZE);
	uintptr_t start = (uintptr_t)__start_psi_cold_text, stop = (uintptr_t)__stop_psi_cold_text;

	if (page <= 0)
		page = 4096;
	if (!start || stop <= start)
		return 0;
	/* only the pages that hold nothing but cold code */
	start = (start + (uintptr_t)page - 1) & ~((uintptr_t)page - 1);
	stop &= ~((uintptr_t)page - 1);
	if (stop <= start)
		return 0;
	if (madvise((void *)start, stop - start, MADV_DONTNEED) < 0)
		return -errno;
	return (long)(stop - start);
}
