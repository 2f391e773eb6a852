/* SPDX-License-Identifier: MIT */
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
	struct proc_info st;
	char cg[PROC_CGROUP_MAX], tiny[8];
	int adj, r;
	char *text = fuzz_text(data, size);

	memset(&pi, 0, sizeof(pi));
	if (procfs_parse_stat(text, &pi) == 0) {
		FUZZ_CHECK(strnlen(pi.comm, sizeof(pi.comm)) < sizeof(pi.comm));
		FUZZ_CHECK(pi.state != '\0');
		for (r = 0; pi.comm[r]; r++) /* escaped: no control byte can reach a log line */
			FUZZ_CHECK((unsigned char)pi.comm[r] >= 0x20 && pi.comm[r] != 0x7f);
	}

	memset(&st, 0, sizeof(st));
	st.rss_kb = 1;
	st.threads = 7;
	r = procfs_parse_status(text, &st);
	FUZZ_CHECK(r == 0 || r == -EINVAL);
	if (r == 0 && !strstr(text, "VmRSS:"))
		FUZZ_CHECK(st.rss_kb == 0); /* kernel threads and zombies have no VmRSS line */
	if (r == 0 && !strstr(text, "Threads:"))
		FUZZ_CHECK(st.threads == 0);
	if (r == 0)
		FUZZ_CHECK(st.uid == st.uids[0] && st.uids[3] != (uid_t)-1);

	r = procfs_parse_cgroup(text, cg, sizeof(cg));
	FUZZ_CHECK(r == 0 || r == -EINVAL || r == -ENOENT || r == -ENAMETOOLONG);
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
		FUZZ_CHECK(strlen(cmd) < sizeof(cmd));
		for (r = 0; cmd[r]; r++)
			FUZZ_CHECK((unsigned char)cmd[r] >= 0x20 && cmd[r] != 0x7f);
		procfs_parse_cmdline((const char *)data, size, tiny, sizeof(tiny));
		FUZZ_CHECK(strlen(tiny) < sizeof(tiny));

		r = memory_parse_meminfo(text, &total, &avail);
		FUZZ_CHECK(r == 0 || r == -EINVAL);
		(void)memory_stat_value(text, "inactive_file");
	}
	free(text);
	return 0;
}
