/* SPDX-License-Identifier: MIT */
/* fixture-tree: fixture roots for unit tests, see fixture-tree.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/stat.h>

#include <CUnit/CUnit.h>

#include "fileio.h"
#include "fixture-tree.h"

void fixture_put(const char *root, const char *rel, const char *text)
{
	char path[8192];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	CU_ASSERT_TRUE(fputs(text, f) >= 0);
	CU_ASSERT_EQUAL(fclose(f), 0);
}

void fixture_mkdir(const char *root, const char *rel)
{
	char path[8192];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	CU_ASSERT_TRUE(mkdir(path, 0755) == 0 || errno == EEXIST);
}

void fixture_memory_group(const char *root, const char *rel)
{
	char path[1024];

	fixture_mkdir(root, rel);
	snprintf(path, sizeof(path), "%s/memory.max", rel);
	fixture_put(root, path, "104857600\n");
	snprintf(path, sizeof(path), "%s/memory.current", rel);
	fixture_put(root, path, "94371840\n");
	snprintf(path, sizeof(path), "%s/memory.stat", rel);
	fixture_put(root, path, "anon 80000000\ninactive_file 4194304\n");
}

int fixture_root_open(char *dir)
{
	int rootfd;

	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	rootfd = sysroot_open(dir);
	CU_ASSERT_FATAL(rootfd >= 0);
	fixture_mkdir(dir, "proc");
	return rootfd;
}

void fixture_root_close(int rootfd, const char *dir)
{
	char cmd[1100];

	close(rootfd);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	CU_ASSERT_EQUAL(system(cmd), 0);
}
