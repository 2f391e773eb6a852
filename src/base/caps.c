/* SPDX-License-Identifier: MIT */
/* caps: capability queries and the drop to least privilege (libcap). */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <linux/securebits.h>

#include "caps.h"

/* What each kept capability is for. tests/test-units.sh checks that the
 * systemd unit's CapabilityBoundingSet= lists exactly these and the Android
 * rc's these but CAP_SYS_PTRACE (Android's readproc group stands in for it,
 * and lmkd's policy forbids it), so keep the three in step. */
const cap_value_t caps_needed[] = {
	CAP_KILL,            /* pidfd_send_signal(SIGKILL) to other users' processes */
	CAP_SYS_PTRACE,      /* other users' /proc/PID under hidepid=/ProtectProc= */
	CAP_SYS_RESOURCE,    /* sub-2 s (pre-6.4: any) PSI triggers; own oom_score_adj -1000 */
	CAP_DAC_READ_SEARCH, /* read /proc and cgroup files regardless of their mode */
	CAP_DAC_OVERRIDE,    /* write pressure triggers and cgroup files not owned by us */
	CAP_IPC_LOCK,        /* mlockall beyond RLIMIT_MEMLOCK */
	CAP_SYS_NICE,        /* raise the daemon's own (real-time) priority */
};
const size_t caps_n_needed = sizeof(caps_needed) / sizeof(caps_needed[0]);

/* securebits locked when possible: capabilities are always cleared on a
 * switch away from uid 0 (no keep-caps, no setuid fixup exemption) and the
 * ambient set can never be raised again. SECBIT_NOROOT is left alone: the
 * on_kill hook never runs as uid 0 (config.c refuses on_kill_user = root). */
#define CAPS_SECUREBITS                                                                                      \
	(SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED | SECBIT_NO_CAP_AMBIENT_RAISE |             \
	 SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED)

static int query(cap_value_t cap, cap_flag_t set)
{
	cap_flag_value_t v = CAP_CLEAR;
	cap_t c = cap_get_proc();

	if (!c)
		return errno ? -errno : -ENOMEM;
	if (cap_get_flag(c, cap, set, &v) < 0)
		v = CAP_CLEAR;
	cap_free(c);
	return v == CAP_SET;
}

int caps_query(cap_value_t cap)
{
	return query(cap, CAP_EFFECTIVE);
}

int caps_query_permitted(cap_value_t cap)
{
	return query(cap, CAP_PERMITTED);
}

bool caps_have(cap_value_t cap)
{
	return caps_query(cap) == 1;
}

static bool has_flag(cap_t c, cap_value_t cap, cap_flag_t flag)
{
	cap_flag_value_t v = CAP_CLEAR;

	return cap_get_flag(c, cap, flag, &v) == 0 && v == CAP_SET;
}

static bool in_list(const cap_value_t *list, size_t n, cap_value_t cap)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (list[i] == cap)
			return true;
	return false;
}

/* Appends a warning to err, "; "-separated. */
__attribute__((format(printf, 3, 4))) static void warn(char *err, size_t len, const char *fmt, ...)
{
	size_t used = strnlen(err, len);
	va_list ap;

	if (used + 3 >= len)
		return;
	if (used) {
		memcpy(err + used, "; ", 3);
		used += 2;
	}
	va_start(ap, fmt);
	vsnprintf(err + used, len - used, fmt, ap);
	va_end(ap);
}

/* Drops every bounding-set capability outside kept. Needs CAP_SETPCAP effective. */
static void shrink_bounding_set(const cap_value_t *kept, size_t n_kept, char *err, size_t len)
{
	cap_value_t c, max = cap_max_bits();
	unsigned failed = 0;
	int first_errno = 0;

	for (c = 0; c < max; c++) {
		if (in_list(kept, n_kept, c) || cap_get_bound(c) != 1)
			continue;
		if (cap_drop_bound(c) < 0) {
			if (!failed++)
				first_errno = errno;
		}
	}
	if (failed)
		warn(err, len, "cannot drop %u capabilities from the bounding set: %s", failed, strerror(first_errno));
}

static bool bounding_exceeds(const cap_value_t *kept, size_t n_kept)
{
	cap_value_t c, max = cap_max_bits();

	for (c = 0; c < max; c++)
		if (!in_list(kept, n_kept, c) && cap_get_bound(c) == 1)
			return true;
	return false;
}

int caps_drop_to_needed(char *err, size_t len)
{
	return caps_drop_keep(NULL, 0, err, len);
}

int caps_drop_keep(const cap_value_t *extra, size_t n_extra, char *err, size_t len)
{
	cap_value_t kept[sizeof(caps_needed) / sizeof(caps_needed[0]) + CAPS_EXTRA_MAX];
	size_t i, n_kept = 0, n_effective = 0;
	cap_t cur, next = NULL;
	bool setpcap;
	int r = 0, bits;

	if (len)
		err[0] = '\0';
	if (n_extra > CAPS_EXTRA_MAX)
		return -EINVAL;
	cur = cap_get_proc();
	if (!cur)
		return -errno;
	for (i = 0; i < caps_n_needed + n_extra; i++) {
		cap_value_t c = i < caps_n_needed ? caps_needed[i] : extra[i - caps_n_needed];

		if (has_flag(cur, c, CAP_PERMITTED) && !in_list(kept, n_kept, c))
			kept[n_kept++] = c;
		if (i + 1 == caps_n_needed)
			n_effective = n_kept; /* kept[0..n_effective) are caps_needed */
	}
	setpcap = has_flag(cur, CAP_SETPCAP, CAP_PERMITTED);

	if (setpcap) {
		/* CAP_SETPCAP must be effective for the bounding set and securebits */
		static const cap_value_t pcap[] = { CAP_SETPCAP };

		if (cap_set_flag(cur, CAP_EFFECTIVE, 1, pcap, CAP_SET) < 0 || cap_set_proc(cur) < 0) {
			warn(err, len, "cannot raise CAP_SETPCAP: %s; bounding set not reduced", strerror(errno));
		} else {
			shrink_bounding_set(kept, n_kept, err, len);
			bits = prctl(PR_GET_SECUREBITS);
			if (bits < 0 || ((unsigned)bits & CAPS_SECUREBITS) != CAPS_SECUREBITS) {
				if (bits < 0 || prctl(PR_SET_SECUREBITS, (unsigned long)bits | CAPS_SECUREBITS) < 0)
					warn(err, len, "cannot lock the securebits: %s", strerror(errno));
			}
		}
	} else if (bounding_exceeds(kept, n_kept)) {
		warn(err, len, "bounding set not reduced (no CAP_SETPCAP)");
	}

	if (cap_reset_ambient() < 0 && CAP_AMBIENT_SUPPORTED())
		warn(err, len, "cannot clear the ambient set: %s", strerror(errno));

	next = cap_init(); /* everything clear, inheritable included */
	if (!next || (n_kept && (cap_set_flag(next, CAP_PERMITTED, (int)n_kept, kept, CAP_SET) < 0 ||
				 (n_effective && cap_set_flag(next, CAP_EFFECTIVE, (int)n_effective, kept, CAP_SET) < 0))) ||
	    cap_set_proc(next) < 0)
		r = errno ? -errno : -EPERM;

	if (r == 0 && prctl(PR_SET_NO_NEW_PRIVS, 1UL, 0UL, 0UL, 0UL) < 0)
		warn(err, len, "cannot set no_new_privs: %s", strerror(errno));
	cap_free(next);
	cap_free(cur);
	return r;
}

int caps_drop_permitted(const cap_value_t *caps, size_t n)
{
	cap_t c;
	int r = 0;

	if (n == 0)
		return 0;
	if (n > INT32_MAX)
		return -EINVAL;
	c = cap_get_proc();
	if (!c)
		return errno ? -errno : -ENOMEM;
	if (cap_set_flag(c, CAP_EFFECTIVE, (int)n, caps, CAP_CLEAR) < 0 ||
	    cap_set_flag(c, CAP_PERMITTED, (int)n, caps, CAP_CLEAR) < 0 || cap_set_proc(c) < 0)
		r = errno ? -errno : -EPERM;
	cap_free(c);
	return r;
}

int caps_describe(char *buf, size_t len)
{
	cap_value_t c, max = cap_max_bits();
	size_t used = 0;
	int r = 0;
	cap_t cur;

	if (!len)
		return -ENOSPC;
	buf[0] = '\0';
	cur = cap_get_proc();
	if (!cur)
		return -errno;
	for (c = 0; c < max && r == 0; c++) {
		char *name;
		int n;

		if (!has_flag(cur, c, CAP_EFFECTIVE))
			continue;
		name = cap_to_name(c);
		if (!name) {
			r = -errno;
			break;
		}
		n = snprintf(buf + used, len - used, "%s%s", used ? "," : "", name);
		cap_free(name);
		if (n < 0 || (size_t)n >= len - used)
			r = -ENOSPC;
		else
			used += (size_t)n;
	}
	cap_free(cur);
	if (r == 0 && used == 0)
		r = snprintf(buf, len, "none") >= (int)len ? -ENOSPC : 0;
	return r;
}
