/* SPDX-License-Identifier: MIT */
/* test-memory: available memory (system and cgroup v1/v2 fixtures), amounts,
 * the adaptive check period, and cgroup2 mount lookup. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "cgroup.h"
#include "cunit-tap.h"
#include "fixture-tree.h"
#include "fileio.h"
#include "memory.h"
#include "lines.h"
#include "mounts.h"

static void test_meminfo(void)
{
	uint64_t t, a;

	CU_ASSERT_EQUAL(memory_parse_meminfo("MemTotal:       24000000 kB\nMemFree: 1 kB\nMemAvailable:   20000000 kB\n",
					     &t, &a),
			0);
	CU_ASSERT_EQUAL(t, 24000000ULL * 1024);
	CU_ASSERT_EQUAL(a, 20000000ULL * 1024);
	CU_ASSERT_EQUAL(memory_parse_meminfo("MemTotal: 1 kB\n", &t, &a), -EINVAL);
	CU_ASSERT_EQUAL(memory_parse_meminfo("MemTotal: x kB\nMemAvailable: 1 kB\n", &t, &a), -EINVAL);
	CU_ASSERT_EQUAL(memory_stat_value("anon 5\ninactive_file 42\nactive_file 7\n", "inactive_file"), 42);
	CU_ASSERT_EQUAL(memory_stat_value("total_inactive_file 9\n", "inactive_file"), 0);
	/* reclaimable: all inactive file pages, active ones that are not mapped, dirty or under writeback */
	CU_ASSERT_EQUAL(memory_reclaimable("inactive_file 100\nactive_file 50\nfile_mapped 20\nfile_dirty 5\n"
					   "file_writeback 5\n", true, false), 120);
	CU_ASSERT_EQUAL(memory_reclaimable("total_inactive_file 100\ntotal_active_file 50\ntotal_mapped_file 80\n"
					   "inactive_file 999\n", false, false), 100);
	CU_ASSERT_EQUAL(memory_reclaimable("total_inactive_file 7\ntotal_active_file 10\ntotal_dirty 20\n", false, false), 7);
	CU_ASSERT_EQUAL(memory_reclaimable("anon 5\n", true, false), 0);
	/* the multi-gen LRU: "active" is a generation, mapped pages count too */
	CU_ASSERT_EQUAL(memory_reclaimable("inactive_file 3\nactive_file 120\nfile_mapped 118\nfile_dirty 1\n", true, true),
			122);
	CU_ASSERT_EQUAL(memory_reclaimable("inactive_file 3\nactive_file 120\nfile_mapped 118\nfile_dirty 1\n", true, false),
			4);
}

static void test_amounts(void)
{
	struct mem_amount pct = { .set = true, .percent = true, .value = 1000 }; /* 10% */
	struct mem_amount abs = { .set = true, .percent = false, .value = 1 << 20 };

	CU_ASSERT_EQUAL(memory_amount_bytes(&pct, 1000000), 100000);
	CU_ASSERT_EQUAL(memory_amount_bytes(&pct, UINT64_MAX / 2), UINT64_MAX / 2 / 10000 * 1000 + (UINT64_MAX / 2) % 10000 * 1000 / 10000);
	CU_ASSERT_EQUAL(memory_amount_bytes(&abs, 5), 1 << 20);
}

static void test_swap_parsers(void)
{
	static const char swaps[] = "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"
				    "/dev/vda2                               partition\t2097148\t\t1024\t\t-2\n"
				    "/dev/zram12                             partition\t1048572\t\t524288\t\t100\n"
				    "garbage line\n"
				    "/swap\\040file file 4 x 0\n";
	const char *pos = swaps;
	struct swap_entry e;
	struct zram_mm z;
	uint64_t t, f;

	/* meminfo's swap lines; none at all on a kernel without swap support */
	CU_ASSERT_EQUAL(memory_parse_meminfo_swap("MemTotal: 1 kB\nSwapTotal:  1048572 kB\nSwapFree:  524288 kB\n", &t, &f), 0);
	CU_ASSERT_EQUAL(t, 1048572ULL * 1024);
	CU_ASSERT_EQUAL(f, 524288ULL * 1024);
	CU_ASSERT_EQUAL(memory_parse_meminfo_swap("MemTotal: 1 kB\nMemAvailable: 1 kB\n", &t, &f), 0);
	CU_ASSERT_EQUAL(t, 0);
	CU_ASSERT_EQUAL(f, 0);
	CU_ASSERT_EQUAL(memory_parse_meminfo_swap("MemTotal: 1 kB\nSwapTotal: 5 kB\n", &t, &f), -EINVAL);
	CU_ASSERT_EQUAL(memory_parse_meminfo_swap("MemTotal: 1 kB\nSwapTotal: x kB\nSwapFree: 1 kB\n", &t, &f), -EINVAL);

	/* /proc/swaps: the header and malformed lines are skipped */
	CU_ASSERT_EQUAL(memory_next_swap(&pos, &e), 1);
	CU_ASSERT_STRING_EQUAL(e.name, "/dev/vda2");
	CU_ASSERT_EQUAL(e.size_bytes, 2097148ULL * 1024);
	CU_ASSERT_EQUAL(e.used_bytes, 1024ULL * 1024);
	CU_ASSERT_EQUAL(memory_zram_index(e.name), -1);
	CU_ASSERT_EQUAL(memory_next_swap(&pos, &e), 1);
	CU_ASSERT_STRING_EQUAL(e.name, "/dev/zram12");
	CU_ASSERT_EQUAL(e.used_bytes, 524288ULL * 1024);
	CU_ASSERT_EQUAL(memory_zram_index(e.name), 12);
	CU_ASSERT_EQUAL(memory_next_swap(&pos, &e), 0);
	CU_ASSERT_EQUAL(memory_next_swap(&pos, &e), 0);
	CU_ASSERT_EQUAL(memory_zram_index("/dev/zram"), -1);
	CU_ASSERT_EQUAL(memory_zram_index("/dev/zram1p"), -1);
	CU_ASSERT_EQUAL(memory_zram_index("/dev/zramx"), -1);
	CU_ASSERT_EQUAL(memory_zram_index("/dev/zram0"), 0);

	/* mm_stat: orig_data_size compr_data_size mem_used_total mem_limit ... */
	CU_ASSERT_EQUAL(memory_parse_zram_mm_stat("  3145728  1048576  1572864  2097152  1572864  0  0  0  0\n", &z), 0);
	CU_ASSERT_EQUAL(z.orig_data, 3145728);
	CU_ASSERT_EQUAL(z.compr_data, 1048576);
	CU_ASSERT_EQUAL(z.mem_used, 1572864);
	CU_ASSERT_EQUAL(z.mem_limit, 2097152);
	CU_ASSERT_EQUAL(memory_parse_zram_mm_stat("1 2 3\n", &z), -EINVAL);
	CU_ASSERT_EQUAL(memory_parse_zram_mm_stat("1 2 x 4\n", &z), -EINVAL);

	/* zram room: 48 MiB stored in 24 MiB of RAM (2:1), 8 MiB left under
	 * mem_limit: 16 MiB more fits, whatever the free swap space */
	CU_ASSERT_EQUAL(memory_parse_zram_mm_stat("50331648 16777216 25165824 33554432 0 0 0 0 0\n", &z), 0);
	CU_ASSERT_EQUAL(memory_zram_room(&z, 100ULL << 20, 1ULL << 30), 16ULL << 20);
	/* the system's free RAM caps it too (2:1 of 256 KiB) */
	CU_ASSERT_EQUAL(memory_zram_room(&z, 100ULL << 20, 256 << 10), 512 << 10);
	/* and the free space */
	CU_ASSERT_EQUAL(memory_zram_room(&z, 4096, 1ULL << 30), 4096);
	/* no mem_limit: RAM at 2:1 */
	z.mem_limit = 0;
	CU_ASSERT_EQUAL(memory_zram_room(&z, 1ULL << 30, 100ULL << 20), 200ULL << 20);
	/* at or over mem_limit: nothing more */
	z.mem_limit = 25165824;
	CU_ASSERT_EQUAL(memory_zram_room(&z, 1ULL << 30, 1ULL << 30), 0);
	/* empty: no ratio yet, 1:1 */
	z = (struct zram_mm){ .mem_limit = 64ULL << 20 };
	CU_ASSERT_EQUAL(memory_zram_room(&z, 1ULL << 30, 1ULL << 30), 64ULL << 20);
	/* measured on a fresh device: mkswap's header page in 3 pages of RAM;
	 * a 1:3 "ratio" from that would make 192 MiB of room look like 64 */
	z = (struct zram_mm){ .orig_data = 4096, .compr_data = 68, .mem_used = 12288, .mem_limit = 192ULL << 20 };
	CU_ASSERT_EQUAL(memory_zram_room(&z, 1ULL << 30, 1ULL << 30), (192ULL << 20) - 12288);
}

static void test_swap_condition(void)
{
	struct mem_info mi = { .total_bytes = 1ULL << 30, .swap_total_bytes = 1000ULL << 20, .swap_free_bytes = 500ULL << 20 };
	struct mem_amount unset = { 0 }, abs = { .set = true, .value = 600ULL << 20 };
	struct mem_amount pct = { .set = true, .percent = true, .value = 5000 }, zero = { .set = true, .value = 0 };
	uint64_t thr;

	/* default: 10% of the swap */
	CU_ASSERT_FALSE(memory_swap_low(&mi, &unset, &thr));
	CU_ASSERT_EQUAL(thr, 100ULL << 20);
	CU_ASSERT_TRUE(memory_swap_low(&mi, &abs, &thr));
	CU_ASSERT_EQUAL(thr, 600ULL << 20);
	/* at or below: 50% of 1000 MiB is exactly what is free */
	CU_ASSERT_TRUE(memory_swap_low(&mi, &pct, &thr));
	CU_ASSERT_FALSE(memory_swap_low(&mi, &zero, &thr));
	mi.swap_free_bytes = 100ULL << 20;
	CU_ASSERT_TRUE(memory_swap_low(&mi, &unset, &thr));
	mi.swap_free_bytes = 0;
	CU_ASSERT_TRUE(memory_swap_low(&mi, &zero, &thr));
	/* no swap: the condition holds, whatever low_swap says */
	mi.swap_total_bytes = mi.swap_free_bytes = 0;
	CU_ASSERT_TRUE(memory_swap_low(&mi, &unset, &thr));
	CU_ASSERT_TRUE(memory_swap_low(&mi, &zero, &thr));
}

static char root[] = "/tmp/psi-lmkd-test-memory-XXXXXX";



static void test_cgroups(void)
{
	struct mem_info mi;
	int rootfd;

	rootfd = fixture_root_open(root);
	fixture_put(root, "proc/meminfo", "MemTotal: 1000 kB\nMemAvailable: 600 kB\n");
	fixture_memory_group(root, "v2");
	fixture_mkdir(root, "v1");
	fixture_put(root, "v1/memory.limit_in_bytes", "134217728\n");
	fixture_put(root, "v1/memory.usage_in_bytes", "134217728\n");
	fixture_put(root, "v1/memory.stat", "cache 1\ntotal_inactive_file 33554432\n");
	fixture_mkdir(root, "nolimit");
	fixture_put(root, "nolimit/memory.max", "max\n");
	fixture_put(root, "nolimit/memory.current", "5\n");

	CU_ASSERT_EQUAL(memory_read_cgroup(rootfd, "/v2", &mi), 0);
	CU_ASSERT_TRUE(mi.cgroup);
	CU_ASSERT_EQUAL(mi.total_bytes, 104857600);
	CU_ASSERT_EQUAL(mi.available_bytes, 104857600 - (94371840 - 4194304));
	CU_ASSERT_TRUE(mi.anon_known);
	CU_ASSERT_EQUAL(mi.anon_bytes, 80000000);
	CU_ASSERT_EQUAL(memory_read_cgroup(rootfd, "/v1", &mi), 0);
	CU_ASSERT_EQUAL(mi.available_bytes, 33554432);
	CU_ASSERT_FALSE(mi.anon_known); /* no total_rss */
	fixture_put(root, "v1/memory.stat", "cache 1\nrss 5\ntotal_rss 4096\ntotal_shmem 8192\ntotal_inactive_file 33554432\n");
	CU_ASSERT_EQUAL(memory_read_cgroup(rootfd, "/v1", &mi), 0);
	CU_ASSERT_TRUE(mi.anon_known);
	CU_ASSERT_EQUAL(mi.anon_bytes, 12288);
	/* a full group whose file pages are all "active" and mapped: a working
	 * set on the classic LRU, a thrashed file on the multi-gen LRU */
	fixture_put(root, "v1/memory.stat", "total_inactive_file 1048576\ntotal_active_file 67108864\n"
					    "total_mapped_file 67108864\n");
	CU_ASSERT_FALSE(memory_mglru(rootfd));
	CU_ASSERT_EQUAL(memory_read_cgroup(rootfd, "/v1", &mi), 0);
	CU_ASSERT_EQUAL(mi.available_bytes, 1048576);
	fixture_mkdir(root, "sys");
	fixture_mkdir(root, "sys/kernel");
	fixture_mkdir(root, "sys/kernel/mm");
	fixture_mkdir(root, "sys/kernel/mm/lru_gen");
	fixture_put(root, "sys/kernel/mm/lru_gen/enabled", "0x0000\n");
	CU_ASSERT_FALSE(memory_mglru(rootfd));
	fixture_put(root, "sys/kernel/mm/lru_gen/enabled", "0x0007\n");
	CU_ASSERT_TRUE(memory_mglru(rootfd));
	CU_ASSERT_EQUAL(memory_read_cgroup(rootfd, "/v1", &mi), 0);
	CU_ASSERT_EQUAL(mi.available_bytes, 1048576 + 67108864);
	fixture_put(root, "sys/kernel/mm/lru_gen/enabled", "0x0000\n");
	fixture_put(root, "v1/memory.stat", "cache 1\nrss 5\ntotal_rss 4096\ntotal_shmem 8192\ntotal_inactive_file 33554432\n");
	CU_ASSERT_EQUAL(memory_read_cgroup(rootfd, "/nolimit", &mi), -ENODATA);
	/* no limit: falls back to the system */
	CU_ASSERT_EQUAL(memory_read(rootfd, "/nolimit", &mi), 0);
	CU_ASSERT_FALSE(mi.cgroup);
	CU_ASSERT_EQUAL(mi.available_bytes, 600 * 1024);
	CU_ASSERT_FALSE(mi.anon_known); /* no AnonPages line */
	fixture_put(root, "proc/meminfo", "MemTotal: 1000 kB\nMemAvailable: 600 kB\nAnonPages: 100 kB\nShmem: 20 kB\n"
					 "ShmemHugePages: 4000 kB\n");
	CU_ASSERT_EQUAL(memory_read(rootfd, "", &mi), 0);
	CU_ASSERT_TRUE(mi.anon_known);
	CU_ASSERT_EQUAL(mi.anon_bytes, 120 * 1024);
	CU_ASSERT_EQUAL(memory_read(rootfd, "", &mi), 0);
	CU_ASSERT_EQUAL(memory_read_cgroup(rootfd, "/missing", &mi), -ENOENT);
	/* no swap anywhere */
	CU_ASSERT_EQUAL(memory_read_cgroup(rootfd, "/v2", &mi), 0);
	CU_ASSERT_EQUAL(mi.swap_total_bytes, 0);
	CU_ASSERT_EQUAL(mi.swap_free_bytes, 0);

	/* 1 GiB of swap, 768 MiB free: a disk and a zram device; the zram
	 * device (512 MiB, 256 MiB used) stored 256 MiB in 64 MiB of RAM
	 * (4:1) and may take 32 MiB more under its mem_limit: 128 MiB more,
	 * not its 256 MiB of free space. */
	fixture_put(root, "proc/meminfo", "MemTotal: 1000 kB\nMemAvailable: 600000 kB\nSwapTotal: 1048576 kB\n"
					 "SwapFree: 786432 kB\n");
	fixture_put(root, "proc/swaps", "Filename Type Size Used Priority\n/dev/vda3 partition 524288 0 -2\n"
				       "/dev/zram3 partition 524288 262144 100\n");
	fixture_mkdir(root, "sys");
	fixture_mkdir(root, "sys/block");
	fixture_mkdir(root, "sys/block/zram3");
	fixture_put(root, "sys/block/zram3/mm_stat", "268435456 60000000 67108864 100663296 67108864 0 0 0 0\n");
	CU_ASSERT_EQUAL(memory_read(rootfd, "", &mi), 0);
	CU_ASSERT_FALSE(mi.cgroup);
	CU_ASSERT_EQUAL(mi.swap_total_bytes, 1024ULL << 20);
	CU_ASSERT_EQUAL(mi.swap_free_bytes, (768ULL - 128) << 20);
	/* the system's RAM caps it too: 16 MiB available, 64 MiB at 4:1 */
	fixture_put(root, "proc/meminfo", "MemTotal: 1000 kB\nMemAvailable: 16384 kB\nSwapTotal: 1048576 kB\n"
					 "SwapFree: 786432 kB\n");
	CU_ASSERT_EQUAL(memory_read(rootfd, "", &mi), 0);
	CU_ASSERT_EQUAL(mi.swap_free_bytes, (768ULL - 192) << 20);
	/* unreadable mm_stat: the device counts at its free space */
	fixture_put(root, "sys/block/zram3/mm_stat", "nonsense\n");
	CU_ASSERT_EQUAL(memory_read(rootfd, "", &mi), 0);
	CU_ASSERT_EQUAL(mi.swap_free_bytes, 768ULL << 20);

	/* a group without a swap limit of its own gets the system's; one with
	 * memory.swap.max its own share (v2) */
	CU_ASSERT_EQUAL(memory_read_cgroup(rootfd, "/v2", &mi), 0);
	CU_ASSERT_EQUAL(mi.swap_total_bytes, 1024ULL << 20);
	CU_ASSERT_EQUAL(mi.swap_free_bytes, 768ULL << 20);
	fixture_put(root, "v2/memory.swap.max", "209715200\n");
	fixture_put(root, "v2/memory.swap.current", "188743680\n");
	CU_ASSERT_EQUAL(memory_read_cgroup(rootfd, "/v2", &mi), 0);
	CU_ASSERT_EQUAL(mi.swap_total_bytes, 200ULL << 20);
	CU_ASSERT_EQUAL(mi.swap_free_bytes, 20ULL << 20);
	fixture_put(root, "v2/memory.swap.max", "max\n");
	CU_ASSERT_EQUAL(memory_read_cgroup(rootfd, "/v2", &mi), 0);
	CU_ASSERT_EQUAL(mi.swap_free_bytes, 768ULL << 20);
	fixture_put(root, "v2/memory.swap.max", "0\n");
	CU_ASSERT_EQUAL(memory_read_cgroup(rootfd, "/v2", &mi), 0);
	CU_ASSERT_EQUAL(mi.swap_total_bytes, 0);
	/* v1: memsw unlimited -> the system's; limited -> memsw less memory */
	fixture_put(root, "v1/memory.swappiness", "60\n");
	fixture_put(root, "v1/memory.memsw.limit_in_bytes", "9223372036854771712\n");
	fixture_put(root, "v1/memory.memsw.usage_in_bytes", "134217728\n");
	CU_ASSERT_EQUAL(memory_read_cgroup(rootfd, "/v1", &mi), 0);
	CU_ASSERT_EQUAL(mi.swap_total_bytes, 1024ULL << 20);
	CU_ASSERT_EQUAL(mi.swap_free_bytes, 768ULL << 20);
	/* limit 128 MiB, memsw 384 MiB: 256 MiB of swap, 200 MiB of it used */
	fixture_put(root, "v1/memory.memsw.limit_in_bytes", "402653184\n");
	fixture_put(root, "v1/memory.memsw.usage_in_bytes", "343932928\n");
	CU_ASSERT_EQUAL(memory_read_cgroup(rootfd, "/v1", &mi), 0);
	CU_ASSERT_EQUAL(mi.swap_total_bytes, 256ULL << 20);
	CU_ASSERT_EQUAL(mi.swap_free_bytes, 56ULL << 20);
	/* swappiness 0: the group's reclaim never swaps */
	fixture_put(root, "v1/memory.swappiness", "0\n");
	CU_ASSERT_EQUAL(memory_read_cgroup(rootfd, "/v1", &mi), 0);
	CU_ASSERT_EQUAL(mi.swap_total_bytes, 0);
	CU_ASSERT_EQUAL(mi.swap_free_bytes, 0);
	CU_ASSERT_EQUAL(mi.available_bytes, 33554432);
	fixture_root_close(rootfd, root);
}

/* The footprint (what processes hold, in RAM or swap, the swap cache once)
 * and the reclaim counter: the evidence recovery.h and hold_idle weigh.
 * Reading pages back from swap leaves the footprint as it is. */
static void test_footprint(void)
{
	struct mem_info mi;
	uint64_t pages = 0, pg = (uint64_t)sysconf(_SC_PAGESIZE);
	int rootfd;
	char dir[] = "/tmp/psi-lmkd-test-footprint-XXXXXX";

	rootfd = fixture_root_open(dir);
	/* 100 MiB anon + 20 shmem, 300 MiB of swap used of which 50 also in RAM */
	fixture_put(dir, "proc/meminfo", "MemTotal: 1048576 kB\nMemFree: 204800 kB\nMemAvailable: 512000 kB\n"
					 "SwapCached: 51200 kB\nAnonPages: 102400 kB\nShmem: 20480 kB\n"
					 "SwapTotal: 1048576 kB\nSwapFree: 741376 kB\n");
	fixture_put(dir, "proc/vmstat", "nr_free_pages 5\npgsteal_kswapd 7\npgsteal_direct 3\npgsteal_khugepaged 0\n"
					"pgsteal_anon 40\npgsteal_file 60\n");
	CU_ASSERT_EQUAL(memory_read(rootfd, "", &mi), 0);
	CU_ASSERT_EQUAL(mi.footprint_bytes, (120ULL + 300 - 50) << 20);
	CU_ASSERT_EQUAL(mi.unused_bytes, 200ULL << 20);
	CU_ASSERT_FALSE(mi.reclaim_known); /* memory_read does not read vmstat */
	CU_ASSERT_EQUAL(memory_read_evidence(rootfd, "", &mi), 0);
	CU_ASSERT_TRUE(mi.reclaim_known);
	CU_ASSERT_EQUAL(mi.reclaimed_bytes, 100 * pg); /* anon + file, not kswapd + direct twice */
	/* older kernels: kswapd + direct + khugepaged */
	CU_ASSERT_EQUAL(memory_parse_vmstat_reclaimed("pgsteal_kswapd 7\npgsteal_direct 3\n", &pages), 0);
	CU_ASSERT_EQUAL(pages, 10);
	CU_ASSERT_EQUAL(memory_parse_vmstat_reclaimed("pgscan_kswapd 7\n", &pages), -ENODATA);
	/* refaults: files and swap apart; v1's hierarchy; none before 5.9 */
	CU_ASSERT_FALSE(mi.refault_known); /* this vmstat has none */
	memory_parse_refaults("workingset_refault_anon 3\nworkingset_refault_file 40\n", "", &mi);
	CU_ASSERT_TRUE(mi.refault_known);
	CU_ASSERT_EQUAL(mi.refault_file, 40);
	CU_ASSERT_EQUAL(mi.refault_anon, 3);
	memory_parse_refaults("workingset_refault_anon 0\nworkingset_refault_file 4\ntotal_workingset_refault_anon 9\n"
			      "total_workingset_refault_file 99\n", "total_", &mi);
	CU_ASSERT_TRUE(mi.refault_known);
	CU_ASSERT_EQUAL(mi.refault_file, 99);
	CU_ASSERT_EQUAL(mi.refault_anon, 9);
	memory_parse_refaults("workingset_refault 40\n", "", &mi);
	CU_ASSERT_FALSE(mi.refault_known);
	CU_ASSERT_EQUAL(mi.refault_file, 0);
	/* a v2 group: anon + shmem + swap.current - swapcached, pgsteal */
	fixture_mkdir(dir, "v2");
	fixture_put(dir, "v2/memory.max", "268435456\n");
	fixture_put(dir, "v2/memory.current", "209715200\n");
	fixture_put(dir, "v2/memory.swap.current", "104857600\n");
	fixture_put(dir, "v2/memory.stat", "anon 104857600\nshmem 1048576\nswapcached 10485760\npgsteal 25\n");
	CU_ASSERT_EQUAL(memory_read_evidence(rootfd, "/v2", &mi), 0);
	CU_ASSERT_TRUE(mi.cgroup);
	CU_ASSERT_EQUAL(mi.footprint_bytes, (100ULL + 1 + 100 - 10) << 20);
	CU_ASSERT_EQUAL(mi.unused_bytes, 56ULL << 20);
	CU_ASSERT_TRUE(mi.reclaim_known);
	CU_ASSERT_EQUAL(mi.reclaimed_bytes, 25 * pg);
	/* a v1 group: total_swap - total_swapcached; no reclaim counter */
	fixture_mkdir(dir, "v1");
	fixture_put(dir, "v1/memory.limit_in_bytes", "134217728\n");
	fixture_put(dir, "v1/memory.usage_in_bytes", "125829120\n");
	fixture_put(dir, "v1/memory.stat", "total_rss 41943040\ntotal_shmem 0\ntotal_swap 20971520\n"
					    "total_swapcached 4194304\n");
	CU_ASSERT_EQUAL(memory_read_evidence(rootfd, "/v1", &mi), 0);
	CU_ASSERT_EQUAL(mi.footprint_bytes, (40ULL + 20 - 4) << 20);
	CU_ASSERT_EQUAL(mi.unused_bytes, 8ULL << 20);
	CU_ASSERT_FALSE(mi.reclaim_known);
	fixture_root_close(rootfd, dir);
}

/* A page swapped out and left in the swap cache is in no process's
 * AnonPages, yet holds its swap slot; the fault that maps it back adds it to
 * AnonPages and changes nothing else. The footprint counts the LRU's lists,
 * so the fault leaves it as it is. The figures are a 6.1 guest's with a
 * 1 GiB swap disk, idle 24 MiB processes swapped out beside a runaway, after
 * the runaway's kill (before) and with every page mapped back (after); in
 * such a run (bench/results/footprint-swapcache/) a footprint read from
 * AnonPages "grew" 152 MiB with nothing allocated, and hold_recovery took
 * that for a second culprit. */
static void test_footprint_swap_cache(void)
{
	static const char *const states[] = {
		"MemTotal: 1004436 kB\nMemAvailable: 619520 kB\nSwapCached: 181248 kB\nActive(anon): 122880 kB\n"
		"Inactive(anon): 132096 kB\nUnevictable: 1024 kB\nAnonPages: 74752 kB\nShmem: 0 kB\n"
		"SwapTotal: 1048572 kB\nSwapFree: 818172 kB\n",
		"MemTotal: 1004436 kB\nMemAvailable: 619520 kB\nSwapCached: 181248 kB\nActive(anon): 254976 kB\n"
		"Inactive(anon): 0 kB\nUnevictable: 1024 kB\nAnonPages: 256000 kB\nShmem: 0 kB\n"
		"SwapTotal: 1048572 kB\nSwapFree: 818172 kB\n",
	};
	/* 250 MiB on the LRU + 1 unevictable + 225 of swap - 177 in both */
	const uint64_t want = (122880ULL + 132096 + 1024 + 1048572 - 818172 - 181248) * 1024;
	struct mem_info mi;
	int rootfd;
	char dir[] = "/tmp/psi-lmkd-test-footprint-XXXXXX";

	rootfd = fixture_root_open(dir);
	for (size_t i = 0; i < sizeof(states) / sizeof(states[0]); i++) {
		fixture_put(dir, "proc/meminfo", states[i]);
		CU_ASSERT_EQUAL(memory_read(rootfd, "", &mi), 0);
		CU_ASSERT_TRUE(mi.anon_known);
		CU_ASSERT_EQUAL(mi.footprint_bytes, want);
	}
	/* the same in a v2 group's memory.stat (bytes) and a v1 group's */
	CU_ASSERT_EQUAL(memory_footprint("anon 10485760\nactive_anon 8388608\ninactive_anon 12582912\nunevictable 0\n"
					 "swapcached 10485760\n",
					 &FOOTPRINT_STAT_V2, 1, 10485760, 31457280),
			(8ULL + 12 + 30 - 10) << 20);
	CU_ASSERT_EQUAL(memory_footprint("total_rss 20971520\ntotal_active_anon 20971520\ntotal_inactive_anon 0\n"
					 "total_unevictable 1048576\ntotal_swapcached 10485760\n",
					 &FOOTPRINT_STAT_V1, 1, 20971520, 31457280),
			(20ULL + 1 + 30 - 10) << 20);
	/* without the LRU lines (an older or partial file): anon + swap - cache */
	CU_ASSERT_EQUAL(memory_footprint("SwapCached: 1024 kB\n", &FOOTPRINT_MEMINFO, 1024, 5 << 20, 3 << 20), 7 << 20);
	/* never below zero */
	CU_ASSERT_EQUAL(memory_footprint("swapcached 99999999\n", &FOOTPRINT_STAT_V2, 1, 5, 3), 0);
	fixture_root_close(rootfd, dir);
}

static void test_cgroup_mount(void)
{
	char out[64];

	CU_ASSERT_EQUAL(cgroup_find_mount("proc /proc proc rw 0 0\ncgroup2 /sys/fs/cgroup/unified cgroup2 rw 0 0\n", out,
					  sizeof(out)),
			0);
	CU_ASSERT_STRING_EQUAL(out, "/sys/fs/cgroup/unified");
	CU_ASSERT_EQUAL(cgroup_find_mount("cgroup /sys/fs/cgroup/memory cgroup rw,memory 0 0\n", out, sizeof(out)),
			-ENOENT);
	CU_ASSERT_EQUAL(cgroup_find_mount("none /a/very/long/path/that/does/not/fit/in/the/buffer/given cgroup2 rw 0 0\n",
					  out, 16),
			-ENAMETOOLONG);
	/* a line without four fields is skipped, the last line may lack its newline */
	CU_ASSERT_EQUAL(cgroup_find_mount("garbage\ncgroup2 /cg cgroup2 rw 0 0", out, sizeof(out)), 0);
	CU_ASSERT_STRING_EQUAL(out, "/cg");
}

static void test_lines(void)
{
	uint64_t v = 0;

	/* anchored at a line's start; a longer key is not this one */
	CU_ASSERT_EQUAL(lines_value("xTgid: 3\nTgidX: 5\nTgid:\t7\n", "Tgid", &v), 1);
	CU_ASSERT_EQUAL(v, 7);
	CU_ASSERT_EQUAL(lines_value("anon 4096\nfile 1", "file", &v), 1);
	CU_ASSERT_EQUAL(v, 1);
	CU_ASSERT_EQUAL(lines_value("anon x\n", "anon", &v), -EINVAL);
	CU_ASSERT_EQUAL(lines_value("anon_thp 1\n", "anon", &v), 0);
	CU_ASSERT_PTR_NULL(lines_find("a 0::/x\n", "0::"));
	CU_ASSERT_STRING_EQUAL(lines_find("1:name=systemd:/\n0::/user.slice\n", "0::"), "/user.slice\n");
	/* the line that holds a byte: the newline itself is its line's end */
	const char *t = "a\nbc\n\nd";

	CU_ASSERT_EQUAL(lines_number(t, t), 1);
	CU_ASSERT_EQUAL(lines_number(t, t + 1), 1);
	CU_ASSERT_EQUAL(lines_number(t, t + 2), 2);
	CU_ASSERT_EQUAL(lines_number(t, t + 5), 3);
	CU_ASSERT_EQUAL(lines_number(t, t + 7), 4); /* just past the text */
}

static void test_mounts_next(void)
{
	const char *text = "proc /proc proc rw,nosuid,hidepid=invisible 0 0\nshort line\n"
			   "tmpfs /a\\040b tmpfs rw 0 0";
	const char *pos = text;
	struct mount_entry e;

	CU_ASSERT_EQUAL(mounts_next(&pos, &e), 1);
	CU_ASSERT_STRING_EQUAL(e.dir, "/proc");
	CU_ASSERT_STRING_EQUAL(e.type, "proc");
	CU_ASSERT_STRING_EQUAL(e.opts, "rw,nosuid,hidepid=invisible");
	CU_ASSERT_EQUAL(mounts_next(&pos, &e), 1);
	CU_ASSERT_STRING_EQUAL(e.dir, "/a\\040b"); /* as the kernel escapes it */
	CU_ASSERT_EQUAL(mounts_next(&pos, &e), 0);
	CU_ASSERT_EQUAL(mounts_next(&pos, &e), 0);
}

/* Feeds anon(t) sampled every step_us from t0 for n samples. */
static void feed(struct mem_growth *g, uint64_t t0, uint64_t step_us, unsigned n, uint64_t anon0, int64_t per_step)
{
	unsigned k;

	for (k = 0; k < n; k++)
		memory_growth_add(g, t0 + k * step_us, (uint64_t)((int64_t)anon0 + per_step * (int64_t)k));
}

/* memory_growth_rising: a jump that goes on is growth at once; one that
 * stopped is not, however big; small noise is not */
static void test_growth_rising(void)
{
	struct mem_growth g;
	const uint64_t M = 1 << 20;

	memory_growth_reset(&g);
	CU_ASSERT_FALSE(memory_growth_rising(&g, 4 * M));
	memory_growth_add(&g, 1000000, 100 * M);
	CU_ASSERT_FALSE(memory_growth_rising(&g, 4 * M));
	/* a kill freed 50 MiB, then a restarted worker: +30, +30 -- one step
	 * may be memory allocated once, two are growth */
	memory_growth_add(&g, 1050000, 50 * M);
	memory_growth_add(&g, 1100000, 80 * M);
	CU_ASSERT_FALSE(memory_growth_rising(&g, 4 * M));
	CU_ASSERT_TRUE(memory_growth_jumped(&g, 4 * M)); /* what a recent kill acts on at once */
	CU_ASSERT_FALSE(memory_growth_jumped(&g, 40 * M));
	memory_growth_add(&g, 1150000, 110 * M);
	CU_ASSERT_TRUE(memory_growth_rising(&g, 4 * M));
	/* it stopped: flat at the last check, no growth however big the rise */
	memory_growth_add(&g, 1200000, 110 * M);
	CU_ASSERT_FALSE(memory_growth_rising(&g, 4 * M));
	CU_ASSERT_FALSE(memory_growth_jumped(&g, 4 * M));
	/* noise: +1 MiB over the window is less than the least rise */
	memory_growth_add(&g, 2300000, 110 * M);
	memory_growth_add(&g, 2350000, 111 * M);
	CU_ASSERT_FALSE(memory_growth_rising(&g, 4 * M));
	/* a slow runaway, 16 MiB/s every 50 ms: 4 MiB within the window */
	memory_growth_add(&g, 2400000, 111 * M + 800 * 1024);
	memory_growth_add(&g, 2450000, 112 * M + 600 * 1024);
	memory_growth_add(&g, 2500000, 113 * M + 400 * 1024);
	CU_ASSERT_FALSE(memory_growth_rising(&g, 4 * M)); /* 3.4 MiB above the least (110) so far */
	memory_growth_add(&g, 2550000, 114 * M + 200 * 1024);
	CU_ASSERT_TRUE(memory_growth_rising(&g, 4 * M));
}

/* memory_growth_now: after a fill stops the footprint still moves a few
 * hundred kB a check (compaction's pages coming back to the LRU lists):
 * no growth, though each check is a little above the last and the rate of
 * the second still holds the fill. A runaway, and a leak of 4 MiB/s, are
 * growth; a fill is not from the first check after it stops, nor is
 * memory allocated at once between two checks. */
static void test_growth_now(void)
{
	struct mem_growth g;
	const uint64_t M = 1 << 20;
	uint64_t t = 1000000, a = 500 * M;
	int k;

	memory_growth_reset(&g);
	CU_ASSERT_FALSE(memory_growth_now(&g, 0));
	/* a fill of 200 MiB/s, a check every 50 ms */
	for (k = 0; k < 10; k++)
		memory_growth_add(&g, t += 50000, a += 10 * M);
	CU_ASSERT_TRUE(memory_growth_now(&g, 0));
	CU_ASSERT_TRUE(memory_growth_now(&g, 100 * M));
	CU_ASSERT_FALSE(memory_growth_now(&g, 300 * M)); /* not that fast */
	/* it stops; 60 kB more a check (pages back on the LRU lists): no new
	 * high beyond a check's noise, no growth from the first check on */
	for (k = 0; k < 14; k++) {
		memory_growth_add(&g, t += 50000, a += 60 * 1024);
		CU_ASSERT_FALSE(memory_growth_now(&g, 0));
	}
	CU_ASSERT(memory_growth_rate(&g) > 0); /* the second still says it grows */
	CU_ASSERT_FALSE(memory_growth_rising(&g, 4 * M));
	/* a leak of 4 MiB/s: 1 MiB in 250 ms, above the noise */
	for (k = 0; k < 6; k++)
		memory_growth_add(&g, t += 50000, a += 200 * 1024);
	CU_ASSERT_TRUE(memory_growth_now(&g, 0));
	CU_ASSERT_TRUE(memory_growth_now(&g, 2 * M));
	CU_ASSERT_FALSE(memory_growth_now(&g, 8 * M));
	/* flat at the last check: no growth, whatever came before */
	memory_growth_add(&g, t += 50000, a);
	CU_ASSERT_FALSE(memory_growth_now(&g, 0));
	/* checks 400 ms apart (a busy machine): one rise is a step, two are
	 * growth, judged over both */
	memory_growth_add(&g, t += 400000, a += 2 * M);
	CU_ASSERT_FALSE(memory_growth_now(&g, 0));
	memory_growth_add(&g, t += 400000, a += 2 * M);
	CU_ASSERT_TRUE(memory_growth_now(&g, 4 * M));
	CU_ASSERT_FALSE(memory_growth_now(&g, 6 * M));
	memory_growth_add(&g, t += 400000, a += 400 * 1024);
	CU_ASSERT_FALSE(memory_growth_now(&g, 0));

	/* memory allocated at once between two checks (a buffer pool filled
	 * at GB/s) is no growth, with the footprint's noise after it; a
	 * runaway that goes on after its first step is, at the next check */
	memory_growth_reset(&g);
	for (k = 0; k < 10; k++)
		memory_growth_add(&g, t += 50000, a);
	memory_growth_add(&g, t += 50000, a += 300 * M);
	CU_ASSERT_FALSE(memory_growth_now(&g, 0));
	CU_ASSERT_FALSE(memory_growth_rising(&g, 10 * M));
	for (k = 0; k < 10; k++) {
		a = k % 2 ? a - 80 * 1024 : a + 100 * 1024; /* pages off and back on the LRU lists */
		memory_growth_add(&g, t += 50000, a);
		CU_ASSERT_FALSE(memory_growth_now(&g, 0));
		CU_ASSERT_FALSE(memory_growth_rising(&g, 10 * M));
	}
	/* the same step, then 2 MiB a check (40 MiB/s): growth at the next check */
	memory_growth_add(&g, t += 50000, a += 300 * M);
	CU_ASSERT_FALSE(memory_growth_now(&g, 0));
	memory_growth_add(&g, t += 50000, a += 2 * M);
	CU_ASSERT_TRUE(memory_growth_now(&g, 0));
	CU_ASSERT_TRUE(memory_growth_rising(&g, 10 * M));
	/* a footprint that fell (a kill) is no rise below zero */
	memory_growth_add(&g, t += 50000, a -= 200 * M);
	memory_growth_add(&g, t + 50000, a + 100 * 1024);
	CU_ASSERT_FALSE(memory_growth_now(&g, 0));
}

static void test_growth(void)
{
	struct mem_growth g;
	uint64_t r;
	unsigned k;

	/* steady growth, 8 MiB/s sampled every 50 ms: 400 KiB per sample */
	memory_growth_reset(&g);
	CU_ASSERT_EQUAL(memory_growth_rate(&g), 0);
	feed(&g, 1000000, 50000, 30, 64 << 20, (8 << 20) / 20);
	r = memory_growth_rate(&g);
	CU_ASSERT(r > (uint64_t)(7.9 * 1048576) && r < (uint64_t)(8.1 * 1048576));
	/* 4 MiB of headroom at 8 MiB/s: 500 ms */
	CU_ASSERT_EQUAL(memory_time_to_limit_us(6 << 20, 2 << 20, 8 << 20), 500000);
	CU_ASSERT_EQUAL(memory_time_to_limit_us(2 << 20, 2 << 20, 8 << 20), 0);
	CU_ASSERT_EQUAL(memory_time_to_limit_us(1 << 20, 2 << 20, 0), 0);
	CU_ASSERT_EQUAL(memory_time_to_limit_us(3 << 20, 2 << 20, 0), UINT64_MAX);
	CU_ASSERT_EQUAL(memory_time_to_limit_us(UINT64_MAX, 0, 1), UINT64_MAX);
	{
		uint64_t ttl;

		/* 8 MiB/s, threshold 2.5 MiB: 5 MiB available is 312 ms away */
		CU_ASSERT_TRUE(memory_growth_low(5 << 20, 5 << 19, 8 << 20, &ttl));
		CU_ASSERT_EQUAL(ttl, 312500);
		/* 7 MiB/s: 357 ms; 4 MiB/s: 625 ms, beyond the horizon */
		CU_ASSERT_TRUE(memory_growth_low(5 << 20, 5 << 19, 7 << 20, &ttl));
		CU_ASSERT_FALSE(memory_growth_low(5 << 20, 5 << 19, 4 << 20, &ttl));
		/* no growth: never, however close */
		CU_ASSERT_FALSE(memory_growth_low((5 << 19) + 1, 5 << 19, 0, &ttl));
		CU_ASSERT_EQUAL(ttl, UINT64_MAX);
		/* below the threshold is the plain rule's, not this one's */
		CU_ASSERT_FALSE(memory_growth_low(5 << 19, 5 << 19, 8 << 20, &ttl));
		CU_ASSERT_EQUAL(ttl, 0);
		/* a fast allocation (58 MiB/s) 30 MiB from a 2.5 MiB threshold:
		 * more than twice the threshold away, not yet */
		CU_ASSERT_FALSE(memory_growth_low(30 << 20, 5 << 19, 58 << 20, &ttl));
		CU_ASSERT(ttl < MEMORY_GROWTH_HORIZON_US);
		CU_ASSERT_TRUE(memory_growth_low(5 << 20, 5 << 19, 58 << 20, &ttl));
		CU_ASSERT_FALSE(memory_growth_low((5 << 20) + 1, 5 << 19, 58 << 20, &ttl));
	}

	/* too short a history: fewer than 3 samples, or less than the minimum span */
	memory_growth_reset(&g);
	feed(&g, 0, 50000, 2, 0, 1 << 20);
	CU_ASSERT_EQUAL(memory_growth_rate(&g), 0);
	memory_growth_reset(&g);
	feed(&g, 0, 50000, MEMORY_GROWTH_MIN_SPAN_US / 50000, 0, 1 << 20);
	CU_ASSERT_EQUAL(memory_growth_rate(&g), 0);
	feed(&g, MEMORY_GROWTH_MIN_SPAN_US, 50000, 1, (MEMORY_GROWTH_MIN_SPAN_US / 50000) << 20, 0);
	CU_ASSERT(memory_growth_rate(&g) > 0);

	/* churn: anonymous memory that goes up and down (noise of a few
	 * hundred KiB around a level, as memory.stat's batched counters and a
	 * file reader's own small allocations give) is no growth */
	memory_growth_reset(&g);
	for (k = 0; k < 40; k++)
		memory_growth_add(&g, 5000000 + k * 50000, (96ULL << 20) + ((k * 7919) % 5) * (128 << 10));
	CU_ASSERT(memory_growth_rate(&g) < (1 << 20));
	/* strictly alternating: 0 */
	memory_growth_reset(&g);
	for (k = 0; k < 40; k++)
		memory_growth_add(&g, k * 50000, (96ULL << 20) + (k % 2) * (512 << 10));
	CU_ASSERT_EQUAL(memory_growth_rate(&g), 0);

	/* one jump (an allocation of 40 MiB at once, then idle): no sustained
	 * growth, whichever half of the window holds it */
	memory_growth_reset(&g);
	feed(&g, 0, 50000, 10, 50 << 20, 0);
	feed(&g, 500000, 50000, 10, 90 << 20, 0);
	CU_ASSERT_EQUAL(memory_growth_rate(&g), 0);
	feed(&g, 1000000, 50000, 10, 90 << 20, 0);
	CU_ASSERT_EQUAL(memory_growth_rate(&g), 0);

	/* noisy growth: 400 KiB per 50 ms (7.8 MiB/s) with up to 512 KiB of
	 * noise on each sample reads as growth within 1 MiB/s of that rate
	 * (512 KiB over a 500 ms half) */
	memory_growth_reset(&g);
	for (k = 0; k < 40; k++)
		memory_growth_add(&g, k * 50000, (32ULL << 20) + k * (400 << 10) + (k % 3) * (256 << 10));
	r = memory_growth_rate(&g);
	CU_ASSERT(r >= (uint64_t)(6.8 * 1048576) && r <= (uint64_t)(8.9 * 1048576));

	/* growth that stopped half a window ago: 0 */
	memory_growth_reset(&g);
	feed(&g, 0, 50000, 20, 0, 400 << 10);
	feed(&g, 1000000, 50000, 10, 19 * (400 << 10), 0);
	CU_ASSERT_EQUAL(memory_growth_rate(&g), 0);
	/* shrinking (a process killed): 0 */
	memory_growth_reset(&g);
	feed(&g, 0, 50000, 20, 100 << 20, -(400 << 10));
	CU_ASSERT_EQUAL(memory_growth_rate(&g), 0);

	/* the window: only the last MEMORY_GROWTH_WINDOW_US counts; older
	 * fast growth followed by a steady 2 MiB/s gives 2 MiB/s */
	memory_growth_reset(&g);
	feed(&g, 0, 50000, 20, 0, 4 << 20);
	feed(&g, 1000000, 50000, 30, 76 << 20, 100 << 10);
	r = memory_growth_rate(&g);
	CU_ASSERT(r > (uint64_t)(1.9 * 1048576) && r < (uint64_t)(2.1 * 1048576));

	/* checks further apart than the window (1.3 s: the idle clock with
	 * 1.3 GiB of headroom, free swap included): the last three give the
	 * rate, 50 MiB/s; one jump among them gives none, nor does a fill
	 * that stopped at the last check */
	memory_growth_reset(&g);
	feed(&g, 0, 1300000, 3, 300 << 20, 65 << 20);
	r = memory_growth_rate(&g);
	CU_ASSERT(r > (uint64_t)(49.9 * 1048576) && r < (uint64_t)(50.1 * 1048576));
	feed(&g, 3900000, 1300000, 1, 430 << 20, 0);
	CU_ASSERT_EQUAL(memory_growth_rate(&g), 0);
	memory_growth_reset(&g);
	feed(&g, 0, 1300000, 2, 300 << 20, 0);
	feed(&g, 2600000, 1300000, 1, 400 << 20, 0);
	CU_ASSERT_EQUAL(memory_growth_rate(&g), 0);

	/* restarts: a gap of more than MEMORY_GROWTH_GAP_US (the 10 s period
	 * of a plentiful check, a suspend) or a clock that goes back starts
	 * over -- no rate across the gap */
	memory_growth_reset(&g);
	feed(&g, 0, 50000, 20, 0, 400 << 10);
	CU_ASSERT(memory_growth_rate(&g) > 0);
	memory_growth_add(&g, 950000 + MEMORY_GROWTH_GAP_US + 1, 200 << 20);
	CU_ASSERT_EQUAL(g.n, 1);
	CU_ASSERT_EQUAL(memory_growth_rate(&g), 0);
	feed(&g, 2000001, 50000, 20, 200 << 20, 400 << 10);
	CU_ASSERT(memory_growth_rate(&g) > 0);
	memory_growth_add(&g, 10, 500 << 20);
	CU_ASSERT_EQUAL(g.n, 1);
	CU_ASSERT_EQUAL(memory_growth_rate(&g), 0);
	/* the same instant twice keeps one sample, the newer */
	memory_growth_reset(&g);
	memory_growth_add(&g, 7, 1);
	memory_growth_add(&g, 7, 2);
	CU_ASSERT_EQUAL(g.n, 1);
	CU_ASSERT_EQUAL(g.s[g.head].anon_bytes, 2);
	/* the ring wraps without losing the rate: 100 samples, 8 MiB/s */
	memory_growth_reset(&g);
	feed(&g, 0, 20000, 100, 0, (8 << 20) / 50);
	r = memory_growth_rate(&g);
	CU_ASSERT(g.n == MEMORY_GROWTH_SAMPLES);
	CU_ASSERT(r > (uint64_t)(7.9 * 1048576) && r < (uint64_t)(8.1 * 1048576));
	/* sparse samples (300 ms apart, a check period far from the edge):
	 * 3 in the window suffice */
	memory_growth_reset(&g);
	feed(&g, 0, 300000, 4, 0, 3 << 20);
	r = memory_growth_rate(&g);
	CU_ASSERT(r == 10 * 1048576);
}

int main(void)
{
	static CU_TestInfo tests[] = {
		{ "meminfo and memory.stat", test_meminfo },
		{ "amounts and check period", test_amounts },
		{ "swap: meminfo, /proc/swaps, zram mm_stat and room", test_swap_parsers },
		{ "swap: the low_swap condition", test_swap_condition },
		{ "cgroup v1 and v2 fixtures", test_cgroups },
		{ "cgroup2 mount", test_cgroup_mount },
		{ "mounts lines", test_mounts_next },
		{ "keyed lines", test_lines },
		{ "growth of the footprint", test_growth },
		{ "growth going on now", test_growth_rising },
		{ "growth at the last check, beyond noise", test_growth_now },
		{ "footprint and reclaim counters", test_footprint },
		{ "footprint: a page mapped back from the swap cache is no growth", test_footprint_swap_cache },
		CU_TEST_INFO_NULL,
	};
	static CU_SuiteInfo suites[] = {
		{ "memory", NULL, NULL, NULL, NULL, tests },
		CU_SUITE_INFO_NULL,
	};

	return cunit_tap_main(suites);
}
