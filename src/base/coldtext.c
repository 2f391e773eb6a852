/* SPDX-License-Identifier: MIT */
/* coldtext: see coldtext.h. */
#include "coldtext.h"

#include <errno.h>
#include <link.h>
#include <stdint.h>
#include <unistd.h>
#include <sys/mman.h>

/* The linker's bounds of a section named like a C identifier; weak, so that
 * a program without cold code still links (then both are null). */
extern const char __start_psi_cold_text[] __attribute__((weak));
extern const char __stop_psi_cold_text[] __attribute__((weak));

/* Drops the whole pages of [start, stop): 0 or -errno; *bytes grows by their size. */
static int drop_pages(uintptr_t start, uintptr_t stop, uintptr_t page, long *bytes)
{
	start = (start + page - 1) & ~(page - 1);
	stop &= ~(page - 1);
	if (stop <= start)
		return 0;
	if (madvise((void *)start, stop - start, MADV_DONTNEED) < 0)
		return -errno;
	*bytes += (long)(stop - start);
	return 0;
}

struct unwind_range {
	uintptr_t start, stop; /* 0, 0: not found */
};

/* The main program (the first object dl_iterate_phdr reports): from its
 * PT_GNU_EH_FRAME (.eh_frame_hdr) to the end of the read-only segment that
 * holds it. GNU ld and lld put the unwind tables last in that segment
 * (.eh_frame_hdr, .eh_frame, .gcc_except_table), after .rodata. */
static int find_unwind(struct dl_phdr_info *info, size_t size, void *data)
{
	struct unwind_range *u = data;
	uintptr_t hdr = 0;
	int i;

	(void)size;
	for (i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_GNU_EH_FRAME)
			hdr = info->dlpi_phdr[i].p_vaddr;
	for (i = 0; hdr && i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_LOAD && !(ph->p_flags & (PF_W | PF_X)) && hdr >= ph->p_vaddr &&
		    hdr < ph->p_vaddr + ph->p_memsz) {
			u->start = info->dlpi_addr + hdr;
			u->stop = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
		}
	}
	return 1; /* the main program only */
}

long coldtext_drop(void)
{
	long page = sysconf(_SC_PAGESIZE), bytes = 0;
	struct unwind_range u = { 0, 0 };
	int r = 0;
	uintptr_t cold = (uintptr_t)__start_psi_cold_text, cold_end = (uintptr_t)__stop_psi_cold_text;

	if (page <= 0)
		page = 4096;
	if (cold && cold_end > cold)
		r = drop_pages(cold, cold_end, (uintptr_t)page, &bytes);
	(void)dl_iterate_phdr(find_unwind, &u);
	if (r == 0 && u.stop > u.start)
		r = drop_pages(u.start, u.stop, (uintptr_t)page, &bytes);
	return r < 0 ? r : bytes;
}
