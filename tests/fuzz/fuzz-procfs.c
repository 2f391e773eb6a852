/* fuzz-procfs: the /proc and cgroup file parsers. Every input goes through
 * all of them (PID/stat, PID/status, PID/cgroup, PID/oom_score_adj,
 * PID/cmdline as raw bytes, /proc/meminfo, memory.stat), so that real files
 * of any kind are seeds as they are. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "memory.h"
#include "procfs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct proc_info pi;
	char cg[PROC_CGROUP_MAX], tiny[8];
	uint64_t rss;
	uid_t uid;
	int adj, r;
	char *text = fuzz_text(data, size);

	memset(&pi, 0, sizeof(pi));
	if (procfs_parse_stat(text, &pi) == 0) {
		FUZZ_CHECK(strnlen(pi.comm, sizeof(pi.comm)) < sizeof(pi.comm));
		FUZZ_CHECK(pi.state != '\0');
	}

	rss = 1;
	r = procfs_parse_status(text, &uid, &rss);
	FUZZ_CHECK(r == 0 || r == -EINVAL);
	if (r == 0 && !strstr(text, "VmRSS:"))
		FUZZ_CHECK(rss == 0); /* kernel threads and zombies have no VmRSS line */

	r = procfs_parse_cgroup(text, cg, sizeof(cg));
	FUZZ_CHECK(r == 0 || r == -EINVAL || r == -ENOENT);
	if (r == 0) {
		FUZZ_CHECK(cg[0] != '\0' && strlen(cg) < sizeof(cg));
		FUZZ_CHECK(strchr(cg, '\n') == NULL);
	}
	r = procfs_parse_cgroup(text, tiny, sizeof(tiny));
	if (r == 0)
		FUZZ_CHECK(strlen(tiny) < sizeof(tiny));

	if (procfs_parse_adj(text, &adj) == 0)
		FUZZ_CHECK(adj >= -1000 && adj <= 1000);

	{
		char cmd[PROC_CMDLINE_MAX];
		uint64_t total, avail;

		/* the raw bytes, NULs included, as read() returns them */
		procfs_parse_cmdline((const char *)data, size, cmd, sizeof(cmd));
		FUZZ_CHECK(strlen(cmd) < sizeof(cmd) && strlen(cmd) <= size);
		procfs_parse_cmdline((const char *)data, size, tiny, sizeof(tiny));
		FUZZ_CHECK(strlen(tiny) < sizeof(tiny));

		r = memory_parse_meminfo(text, &total, &avail);
		FUZZ_CHECK(r == 0 || r == -EINVAL);
		(void)memory_stat_value(text, "inactive_file");
	}
	free(text);
	return 0;
}
