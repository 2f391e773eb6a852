/* SPDX-License-Identifier: MIT */
/* probe: reports PSI files, trigger support and the smallest window the
 * kernel accepts from us, CAP_SYS_RESOURCE, the cgroup2 mount, pidfd_open,
 * process_mrelease, cgroup.kill, and which tiers of a config would run on
 * kernel triggers and which on the userspace monitor. It asks the kernel
 * (it arms and closes real triggers); it does not guess from versions. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/utsname.h>

#include "coldtext.h"
#include "caps.h"
#include "cgroup.h"
#include "fileio.h"
#include "probe.h"
#include "groupset.h"
#include "procfs.h"
#include "psi.h"
#include "syscalls.h"
#include "trigger.h"

static const char *yes_no(bool b)
{
	return b ? "yes" : "no";
}

static void probe_psi_files(int rootfd, FILE *out)
{
	static const char *const res[] = { "cpu", "memory", "io", "irq" };
	char path[64], buf[512];
	size_t i;

	for (i = 0; i < sizeof(res) / sizeof(res[0]); i++) {
		struct psi_stats st;
		ssize_t n;

		snprintf(path, sizeof(path), "proc/pressure/%s", res[i]);
		n = read_file_at(rootfd, path, buf, sizeof(buf));
		if (n < 0)
			fprintf(out, "psi /proc/pressure/%s: no (%s)\n", res[i], strerror((int)-n));
		else if (psi_parse(buf, &st) < 0)
			fprintf(out, "psi /proc/pressure/%s: unreadable format\n", res[i]);
		else
			fprintf(out, "psi /proc/pressure/%s: yes (some total=%" PRIu64 "us%s)\n", res[i],
				st.some.total_us, st.full.present ? ", full" : "");
	}
}

static void probe_triggers(int rootfd, const struct watch_ops *ops, FILE *out)
{
	static const uint64_t windows[] = { 500000, 1000000, 1500000, 2000000, 4000000, 10000000 };
	uint64_t smallest = 0;
	size_t i;

	fprintf(out, "triggers on /proc/pressure/memory:");
	for (i = 0; i < sizeof(windows) / sizeof(windows[0]); i++) {
		char a[32];
		int fd = ops->trigger_open(rootfd, "/proc/pressure/memory", PSI_SOME, windows[i] / 10, windows[i]);

		fprintf(out, " %s=%s", config_format_duration(a, sizeof(a), windows[i]),
			fd >= 0 ? "accepted" : strerror(-fd));
		if (fd >= 0) {
			if (!smallest)
				smallest = windows[i];
			close(fd);
		}
	}
	fprintf(out, "\n");
	if (smallest) {
		char a[32];

		fprintf(out, "smallest window accepted: %s\n", config_format_duration(a, sizeof(a), smallest));
	} else {
		fprintf(out, "smallest window accepted: none (no kernel triggers: every tier would use the userspace monitor)\n");
	}
}

static void probe_syscalls(FILE *out)
{
	int fd = sys_pidfd_open(getpid(), 0);
	int err = fd < 0 ? -fd : 0;
	int r;

	fprintf(out, "pidfd_open: %s\n", fd >= 0 ? "yes" : strerror(err));
	r = sys_process_mrelease(-1, 0);
	fprintf(out, "process_mrelease: %s\n", r == -ENOSYS ? "no (ENOSYS; needs Linux 5.15)" : "yes");
	if (fd >= 0)
		close(fd);
}

/* cgroup.kill exists in every non-root group of a 5.14+ kernel: look in the
 * first child group of the cgroup2 mount. buf holds the verdict when
 * fdopendir() fails (out of memory). */
static const char *has_cgroup_kill(int rootfd, const char *mnt, char *buf, size_t len)
{
	const char *verdict = "unknown (no child group to look in)";
	struct dirent *de;
	DIR *dir;
	int fd;

	fd = sysroot_openat(rootfd, mnt, O_RDONLY | O_DIRECTORY);
	if (fd < 0)
		return verdict;
	dir = fdopendir(fd);
	if (!dir) {
		snprintf(buf, len, "unknown (cannot list %s: %s)", mnt, strerror(errno));
		close(fd);
		return buf;
	}
	while ((de = readdir(dir))) {
		char path[NAME_MAX + 16];

		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/cgroup.kill", de->d_name);
		verdict = faccessat(dirfd(dir), path, F_OK, 0) == 0 ? "yes" : "no (Linux 5.14+)";
		break;
	}
	closedir(dir);
	return verdict;
}

COLD_TEXT static void probe_cgroups(int rootfd, FILE *out)
{
	char mounts[4096], mnt[512], self[1024], why[600];
	int r = cgroup_mount(rootfd, mnt, sizeof(mnt));
	ssize_t n;

	if (r == -ENOENT)
		fprintf(out, "cgroup2: not mounted\n");
	else if (r < 0)
		fprintf(out, "cgroup2: unknown (cannot read /proc/self/mounts: %s)\n", strerror(-r));
	else
		fprintf(out, "cgroup2: mounted at %s\n", mnt);
	if (r < 0)
		return;
	n = read_file_at(rootfd, "proc/self/cgroup", mounts, sizeof(mounts));
	if (n > 0 && procfs_parse_cgroup(mounts, self, sizeof(self)) == 0)
		fprintf(out, "own cgroup2 group: %s\n", self);
	fprintf(out, "cgroup.kill: %s\n", has_cgroup_kill(rootfd, mnt, why, sizeof(why)));
}

/* The tiers one watch armed, and how. group: the group it watches, or NULL. */
COLD_TEXT static void print_watch(FILE *out, const struct watch *w, const struct config *cfg, bool privileged, const char *group)
{
	size_t i;

	for (i = 0; i < cfg->n_tiers; i++) {
		const struct tier_config *t = &cfg->tiers[i];
		const struct watch_tier *wt = &w->tiers[i];
		char a[32], b[32];

		if (wt->source == TIER_SOURCE_OFF)
			continue;
		if (wt->source == TIER_SOURCE_NONE) {
			fprintf(out, "  tier %s (low_available %s): available-memory checks only\n", t->name,
				config_format_amount(a, sizeof(a), &t->low_available));
			continue;
		}
		fprintf(out, "  tier %s%s%s (%s %s %s): %s", t->name, group ? " in " : "", group ? group : "",
			psi_state_name(t->state), config_format_duration(a, sizeof(a), t->stall_us),
			config_format_duration(b, sizeof(b), t->window_us),
			wt->source == TIER_SOURCE_KERNEL ? "kernel trigger" : "userspace monitor");
		if (wt->source == TIER_SOURCE_USERSPACE)
			fprintf(out, " (kernel refused: %s: %s)", strerror(-wt->refused),
				trigger_error_hint(wt->refused, t->window_us, privileged));
		fprintf(out, "\n");
	}
	if (w->sentinel_fd >= 0)
		fprintf(out, "  wake-up trigger for userspace tiers%s%s: \"%s\"\n", group ? " in " : "", group ? group : "",
			w->sentinel);
	if (watch_needs_sampling(w))
		fprintf(out, "  idle safety sample%s%s: %s\n", group ? " in " : "", group ? group : "",
			w->idle_poll_us ? "every idle_poll_interval, more often as memory runs short"
					: "off (idle_poll_interval = off)");
	else if (w->n_psi)
		fprintf(out, "  idle cost%s%s: none (privileged kernel triggers only)\n", group ? " in " : "",
			group ? group : "");
}

/* What the configuration would arm: the main file's tiers, then for each
 * cgroup pattern the groups it matches now and its tiers on the first. */
static int probe_config(int rootfd, const struct config *cfg, const struct watch_ops *ops, bool privileged, FILE *out)
{
	char (*first)[CONFIG_PATH_MAX] = NULL;
	struct watch *w = malloc(sizeof(*w));
	char err[512], mount[CONFIG_PATH_MAX], file[2 * CONFIG_PATH_MAX + 32];
	bool groups = config_cgroup_tier_count(cfg) > 0;
	size_t i;

	if (groups)
		first = calloc(CONFIG_TIERS_MAX, sizeof(*first));
	fprintf(out, "config %s: pressure %s\n", cfg->path, cfg->pressure);
	if (!w || (groups && !first)) {
		fprintf(out, "  cannot arm: out of memory\n");
		free(w);
		free(first);
		return -ENOMEM;
	}
	if (watch_open(w, rootfd, cfg, privileged, cfg->idle_poll_us, ops, err, sizeof(err)) < 0) {
		fprintf(out, "  cannot arm: %s\n", err);
	} else {
		print_watch(out, w, cfg, privileged, NULL);
		watch_close(w);
	}
	if (groups && groupset_report(rootfd, cfg, out, first) == 0 && cgroup_mount(rootfd, mount, sizeof(mount)) == 0)
		for (i = 0; i < cfg->n_tiers; i++) {
			struct watch_target target = { .path = file, .tiers = config_cgroup_tiers(cfg, cfg->tiers[i].cgroup) };

			if (!config_cgroup_first(cfg, i) || !*first[i])
				continue; /* no pattern, one probed already, or no group */
			snprintf(file, sizeof(file), "%s%s/memory.pressure", mount, first[i]);
			if (watch_open_target(w, rootfd, cfg, &target, privileged, cfg->idle_poll_us, ops, err,
					      sizeof(err)) < 0) {
				fprintf(out, "  cannot arm in %s: %s\n", first[i], err);
				continue;
			}
			print_watch(out, w, cfg, privileged, first[i]);
			watch_close(w);
		}
	free(w);
	free(first);
	return 0;
}

COLD_TEXT int probe_run(int rootfd, const struct config *cfg, const struct watch_ops *ops, FILE *out)
{
	struct utsname u;
	int sys_resource = caps_query(CAP_SYS_RESOURCE);
	bool privileged = sys_resource == 1;

	if (!ops)
		ops = &watch_kernel_ops;
	if (uname(&u) == 0)
		fprintf(out, "kernel: %s %s %s\n", u.sysname, u.release, u.machine);
	probe_psi_files(rootfd, out);
	if (sys_resource < 0)
		fprintf(out, "CAP_SYS_RESOURCE: unknown (cannot read the capability sets: %s); taken as no\n",
			strerror(-sys_resource));
	else
		fprintf(out, "CAP_SYS_RESOURCE: %s%s\n", yes_no(privileged),
			privileged ? " (any window 500ms..10s, served by the kernel's fast poller)"
				   : " (Linux 6.4+: only windows that are multiples of 2s; such triggers are checked "
				     "every 2s)");
	probe_triggers(rootfd, ops, out);
	probe_syscalls(out);
	probe_cgroups(rootfd, out);

	if (cfg)
		return probe_config(rootfd, cfg, ops, privileged, out);
	return 0;
}
