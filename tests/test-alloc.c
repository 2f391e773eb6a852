/* SPDX-License-Identifier: MIT */
/* test-alloc: out of memory in psi-lmkd's own allocations.
 *
 * The program is linked with -Wl,--wrap=... (Makefile.am) for every
 * allocating function the library calls, so each call from libpsilmkd.a
 * lands in a __wrap_* function below. Armed with N, the seam makes the Nth
 * of those calls fail as the real function fails when memory runs out
 * (NULL and ENOMEM, or REG_ESPACE for the regex functions), and passes every
 * other call to the real function. Each entry point is run with N = 1, 2,
 * 3, ... until a run sees no injected failure; every run must end cleanly
 * (-ENOMEM, or a documented fallback, and a message that says so), release
 * every allocation and fd it made, and the run with no failure must give the
 * same result as a normal one. The seam also counts what is still allocated,
 * so a leak shows at the N that causes it; ASan/LSan (build-asan) and
 * `make check-valgrind` check the same runs again. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <regex.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>
#include <sys/capability.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "caps.h"
#include "cgroup.h"
#include "config.h"
#include "cunit-tap.h"
#include "fake-kernel.h"
#include "daemon-private.h"
#include "event.h"
#include "kill.h"
#include "pick.h"
#include "fileio.h"
#include "policy.h"
#include "probe.h"
#include "procfs.h"
#include "trace.h"
#include "victim.h"
#include "watch.h"

/* ------------------------------------------------------------------ the seam */

void *__real_malloc(size_t size);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t size);
char *__real_strdup(const char *s);
void __real_free(void *p);
void *__real_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off);
int __real_munmap(void *addr, size_t len);
int __real_regcomp(regex_t *re, const char *pattern, int flags);
int __real_regexec(const regex_t *re, const char *s, size_t nmatch, regmatch_t *match, int flags);
void __real_regfree(regex_t *re);
DIR *__real_fdopendir(int fd);
int __real_closedir(DIR *dir);
cap_t __real_cap_get_proc(void);
cap_t __real_cap_init(void);
char *__real_cap_to_name(cap_value_t cap);
int __real_cap_free(void *p);
void __real_qsort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));

void *__wrap_malloc(size_t size);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t size);
char *__wrap_strdup(const char *s);
void __wrap_free(void *p);
void *__wrap_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off);
int __wrap_munmap(void *addr, size_t len);
int __wrap_regcomp(regex_t *re, const char *pattern, int flags);
int __wrap_regexec(const regex_t *re, const char *s, size_t nmatch, regmatch_t *match, int flags);
void __wrap_regfree(regex_t *re);
DIR *__wrap_fdopendir(int fd);
int __wrap_closedir(DIR *dir);
cap_t __wrap_cap_get_proc(void);
cap_t __wrap_cap_init(void);
char *__wrap_cap_to_name(cap_value_t cap);
int __wrap_cap_free(void *p);
void __wrap_qsort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));

/* Test-only state: the wrappers take no user pointer. */
static struct {
	bool armed;
	unsigned long fail_at;   /* the call that fails, counting from 1; 0 = none */
	unsigned long calls;     /* allocating calls since armed */
	unsigned long injected;  /* failures injected */
	long live;               /* allocations made minus allocations released, since armed */
	const char *failed_what; /* the function made to fail */
	unsigned long sorts;     /* qsort calls since armed (see __wrap_qsort) */
} seam;

static void arm(unsigned long n)
{
	memset(&seam, 0, sizeof(seam));
	seam.fail_at = n;
	seam.armed = true;
}

static void disarm(void)
{
	seam.armed = false;
}

/* Counts an allocating call; true if this one must fail (errno is ENOMEM). */
static bool fail_now(const char *what)
{
	if (!seam.armed)
		return false;
	if (++seam.calls != seam.fail_at)
		return false;
	seam.injected++;
	seam.failed_what = what;
	errno = ENOMEM;
	return true;
}

static void *made(void *p)
{
	if (p && seam.armed)
		seam.live++;
	return p;
}

static void released(const void *p)
{
	if (p && seam.armed)
		seam.live--;
}

/* glibc's qsort allocates a buffer of its own for arrays of more than
 * 1 kB (from inside libc, past the seam; it sorts in place when that
 * fails): not an allocation point, but code that must allocate nothing
 * must not sort with it, so its calls are counted. */
void __wrap_qsort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	if (seam.armed)
		seam.sorts++;
	__real_qsort(base, n, size, cmp);
}

void *__wrap_malloc(size_t size)
{
	return fail_now("malloc") ? NULL : made(__real_malloc(size));
}

void *__wrap_calloc(size_t n, size_t size)
{
	return fail_now("calloc") ? NULL : made(__real_calloc(n, size));
}

void *__wrap_realloc(void *p, size_t size)
{
	void *q;

	if (fail_now("realloc"))
		return NULL;
	q = __real_realloc(p, size);
	if (!p)
		made(q);
	else if (!q && size == 0)
		released(p);
	return q;
}

char *__wrap_strdup(const char *s)
{
	return fail_now("strdup") ? NULL : made(__real_strdup(s));
}

void __wrap_free(void *p)
{
	released(p);
	__real_free(p);
}

/* The library maps memory of its own too (the parser's scratch config): an
 * anonymous mapping is an allocation point like malloc. */
static bool map_fails(int flags)
{
	return (flags & MAP_ANONYMOUS) && fail_now("mmap");
}

static void *map_made(void *p, int flags)
{
	if (p != MAP_FAILED && (flags & MAP_ANONYMOUS))
		(void)made(p);
	return p;
}

void *__wrap_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return map_fails(flags) ? MAP_FAILED : map_made(__real_mmap(addr, len, prot, flags, fd, off), flags);
}

#if !defined(__LP64__) && defined(_FILE_OFFSET_BITS) && _FILE_OFFSET_BITS == 64
/* A 32-bit build with large files (configure's AC_SYS_LARGEFILE: armhf)
 * calls mmap64, glibc's header redirecting mmap to it; munmap has no
 * such twin. Without this the cross test saw the maps unmapped but never
 * made: "allocations left behind". */
void *__real_mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off);
void *__wrap_mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off);

void *__wrap_mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return map_fails(flags) ? MAP_FAILED : map_made(__real_mmap64(addr, len, prot, flags, fd, off), flags);
}
#endif

int __wrap_munmap(void *addr, size_t len)
{
	released(addr);
	return __real_munmap(addr, len);
}

int __wrap_regcomp(regex_t *re, const char *pattern, int flags)
{
	int r;

	if (fail_now("regcomp"))
		return REG_ESPACE;
	r = __real_regcomp(re, pattern, flags);
	if (r == 0)
		made(re);
	return r;
}

/* glibc's regexec() allocates the states of its DFA as it matches, and
 * fails with REG_ESPACE when it cannot. */
int __wrap_regexec(const regex_t *re, const char *s, size_t nmatch, regmatch_t *match, int flags)
{
	if (fail_now("regexec"))
		return REG_ESPACE;
	return __real_regexec(re, s, nmatch, match, flags);
}

void __wrap_regfree(regex_t *re)
{
	released(re);
	__real_regfree(re);
}

/* fdopendir() allocates the DIR and its buffer; on failure the fd stays open. */
DIR *__wrap_fdopendir(int fd)
{
	return fail_now("fdopendir") ? NULL : made(__real_fdopendir(fd));
}

int __wrap_closedir(DIR *dir)
{
	released(dir);
	return __real_closedir(dir);
}

cap_t __wrap_cap_get_proc(void)
{
	return fail_now("cap_get_proc") ? NULL : made(__real_cap_get_proc());
}

cap_t __wrap_cap_init(void)
{
	return fail_now("cap_init") ? NULL : made(__real_cap_init());
}

char *__wrap_cap_to_name(cap_value_t cap)
{
	return fail_now("cap_to_name") ? NULL : made(__real_cap_to_name(cap));
}

int __wrap_cap_free(void *p)
{
	released(p);
	return __real_cap_free(p);
}

/* ------------------------------------------------------------------ the sweep */

#define SWEEP_MAX 10000

/* One entry point: call() runs it once and undoes what it set up; check()
 * judges the result of run n (0: the normal run, armed but never failing),
 * failed telling whether an allocation was made to fail in it. */
struct entry {
	const char *name;
	int (*call)(void *ctx);
	void (*check)(void *ctx, unsigned long n, int r, bool failed);
	void *ctx;
};

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

static void run_once(const struct entry *e, unsigned long n)
{
	int fds = count_fds(), r;

	arm(n);
	r = e->call(e->ctx);
	disarm();
	if (seam.live != 0) {
		printf("# %s, run %lu (%s failing): %ld allocations left behind\n", e->name, n,
		       seam.failed_what ? seam.failed_what : "nothing", seam.live);
		CU_FAIL("allocations left behind");
	}
	if (count_fds() != fds) {
		printf("# %s, run %lu (%s failing): %d fds left behind\n", e->name, n,
		       seam.failed_what ? seam.failed_what : "nothing", count_fds() - fds);
		CU_FAIL("fds left behind");
	}
	e->check(e->ctx, n, r, seam.injected != 0);
}

/* Runs e with allocation N failing for N = 1, 2, ... until a run sees no
 * failure; that must happen right after the allocations of a normal run. */
static unsigned long sweep(const struct entry *e)
{
	unsigned long n, points;

	run_once(e, 0);
	points = seam.calls;
	for (n = 1; n <= SWEEP_MAX; n++) {
		run_once(e, n);
		if (!seam.injected)
			break;
	}
	CU_ASSERT_EQUAL(n - 1, points);
	printf("# %s: %lu allocation points, each made to fail once\n", e->name, n - 1);
	return n - 1;
}

static bool says_nomem(const char *msg)
{
	return strstr(msg, "out of memory") || strstr(msg, strerror(ENOMEM));
}

/* ------------------------------------------------------------------ fixtures */

static char root[] = "/tmp/psi-lmkd-test-alloc-XXXXXX";
static int rootfd = -1;
static int procfd = -1; /* the tests/fixtures/proc tree */

/* A configuration that uses every key, three tiers. */
static const char full_conf[] = "; a desktop's psi-lmkd.conf\n"
				"[daemon]\n"
				"pressure = /proc/pressure/memory\n"
				"scope = /user.slice\n"
				"kill_timeout = 2s\n"
				"idle_poll_interval = 1s\n"
				"settle_time = 500ms\n"
				"dry_run = true\n"
				"protect = ^(systemd|sshd|Xorg|gnome-shell)$\n"
				"prefer = ^(chrome|electron)$\n"
				"avoid = ^(firefox|code)$\n"
				"protect_cmdline = --type=gpu-process\n"
				"prefer_cmdline = --type=renderer\n"
				"avoid_cmdline = ^/usr/bin/python3 .*jupyter\n"
				"protect_cgroup = ^/system\\.slice/ssh\\.service(/|$)\n"
				"avoid_cgroup = /keep\\.scope$\n"
				"trusted_uid_max = 999\n"
				"min_rss = 16M\n"
				"on_kill = /bin/sh\n"
				"memory_cgroup = /sys/fs/cgroup/user.slice\n"
				"nice = -10\n"
				"realtime_priority = 50\n"
				"\n"
				"[tier medium]\n"
				"trigger = some 70ms 1s\n"
				"min_oom_score_adj = 800\n"
				"kill_signal = SIGTERM\n"
				"term_timeout = 1s\n"
				"min_events = 2\n"
				"\n"
				"[tier high]\n"
				"trigger = full 150ms 2s\n"
				"min_oom_score_adj = 200\n"
				"kill_cgroup = true\n"
				"min_available = 5%\n"
				"\n"
				"[tier last]\n"
				"low_available = 256M\n"
				"min_oom_score_adj = 0\n";

/* For victim choice on tests/fixtures/proc: 500 (legacy, adj 950) would be
 * first but is protected, 400 (big, 800 MB at adj 900) is avoided, so 201
 * (adj 900, 200 MB) goes, or 202 (adj 900, 100 MB) if 201 is spared. */
static const char pick_conf[] = "[daemon]\n"
				"dry_run = true\n"
				"protect = ^legacy$\n"
				"prefer = ^(chrome|electron)$\n"
				"avoid = ^big$\n"
				"[tier t]\n"
				"trigger = some 100ms 2s\n"
				"min_oom_score_adj = 0\n";

/* pick.conf with a cgroup-pattern tier on two fixture groups */
static const char groups_conf[] = "[daemon]\n"
				  "dry_run = true\n"
				  "[tier t]\n"
				  "trigger = some 100ms 2s\n"
				  "min_oom_score_adj = 0\n"
				  "[tier g]\n"
				  "trigger = some 150ms 2s\n"
				  "min_oom_score_adj = 0\n"
				  "cgroup = /jobs/*\n";

static struct config full_cfg, pick_cfg, groups_cfg;

static void put_file(const char *rel, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static void put_dir(const char *rel)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	mkdir(path, 0755);
}


static int suite_init(void)
{
	static const char psi[] = "some avg10=0.00 avg60=0.00 avg300=0.00 total=1000\n"
				  "full avg10=0.00 avg60=0.00 avg300=0.00 total=500\n";
	struct config_error err;
	const char *fx = getenv("FIXTURES");
	char path[512];
	int fxfd;

	if (!mkdtemp(root))
		return -1;
	put_dir("proc");
	put_dir("proc/pressure");
	put_dir("proc/self");
	put_dir("sys");
	put_dir("sys/fs");
	put_dir("sys/fs/cgroup");
	put_dir("sys/fs/cgroup/app");
	put_file("proc/pressure/memory", psi);
	put_file("proc/pressure/cpu", psi);
	put_file("proc/pressure/io", psi);
	put_file("proc/meminfo", "MemTotal:       24000000 kB\nMemAvailable:   20000000 kB\n");
	put_file("proc/self/mounts", "proc /proc proc rw,nosuid,nodev,noexec 0 0\n"
				     "cgroup2 /sys/fs/cgroup cgroup2 rw,nosuid,nodev,noexec 0 0\n");
	put_file("proc/self/cgroup", "0::/user.slice/app\n");
	put_file("sys/fs/cgroup/app/cgroup.procs", "201\n202\n");
	put_file("sys/fs/cgroup/app/cgroup.kill", "");
	put_dir("sys/fs/cgroup/jobs");
	put_dir("sys/fs/cgroup/jobs/j1");
	put_dir("sys/fs/cgroup/jobs/j2");
	put_file("sys/fs/cgroup/jobs/j1/memory.pressure", psi);
	put_file("sys/fs/cgroup/jobs/j2/memory.pressure", psi);
	put_file("sys/fs/cgroup/jobs/cgroup.kill", "");
	put_file("sys/fs/cgroup/jobs/j1/cgroup.kill", "");
	put_file("sys/fs/cgroup/jobs/j2/cgroup.kill", "");
	put_file("sys/fs/cgroup/jobs/j1/cgroup.procs", "");
	put_file("sys/fs/cgroup/jobs/j2/cgroup.procs", "");
	put_dir("proc/self/fd");
	put_file("proc/self/fd/0", "");
	put_file("proc/self/fd/1", "");
	put_file("proc/self/fd/2", "");
	put_file("alloc.conf", full_conf);
	put_file("pick.conf", pick_conf);
	put_file("log", "");
	rootfd = sysroot_open(root);
	fxfd = sysroot_open(fx ? fx : "tests/fixtures");
	if (rootfd < 0 || fxfd < 0)
		return -1;
	procfd = sysroot_openat(fxfd, "/proc", O_RDONLY | O_DIRECTORY);
	close(fxfd);
	snprintf(path, sizeof(path), "%s/pick.conf", root);
	if (procfd < 0 || config_parse_string(&full_cfg, full_conf, "alloc.conf", &err) < 0 ||
	    config_load_file(&pick_cfg, path, NULL, &err) < 0 || config_parse_string(&groups_cfg, groups_conf, "groups.conf", &err) < 0)
		return -1;
	return 0;
}

static int suite_cleanup(void)
{
	char cmd[300];

	close(procfd);
	close(rootfd);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd) == 0 ? 0 : -1;
}

/* stderr (the daemon's log) goes to ROOT/log between capture_begin() and capture_end(). */
static int capture_begin(void)
{
	char path[512];
	int saved, fd;

	snprintf(path, sizeof(path), "%s/log", root);
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return -1;
	fflush(stderr);
	saved = dup(STDERR_FILENO);
	dup2(fd, STDERR_FILENO);
	close(fd);
	return saved;
}

static void capture_end(int saved, char *log, size_t size)
{
	fflush(stderr);
	if (saved >= 0) {
		dup2(saved, STDERR_FILENO);
		close(saved);
	}
	if (read_file_at(rootfd, "log", log, size) < 0)
		log[0] = '\0';
}

/* What a child sends back to in_child(). */
struct child_report {
	int r;
	unsigned long calls, injected;
	long live;
	const char *failed_what; /* a string literal: the same address in both */
};

/* LeakSanitizer, in the ASan build: a child ends with _exit(), which skips
 * its check at exit, so the child asks for one. NULL without ASan. */
int __lsan_do_recoverable_leak_check(void) __attribute__((weak));

/* Runs fn(ctx) in a child process (it changes the process: capabilities,
 * signal mask, mlockall), which inherits the armed seam and reports back its
 * result and the seam's counts. Returns INT_MIN if the child did not exit
 * normally. */
static int in_child(int (*fn)(void *ctx), void *ctx)
{
	struct child_report rep;
	int pfd[2], status;
	ssize_t got;
	pid_t pid;

	if (pipe(pfd) < 0)
		return INT_MIN;
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		close(pfd[0]);
		memset(&rep, 0, sizeof(rep)); /* padding too: it goes through write() */
		rep.r = fn(ctx);
		rep.calls = seam.calls;
		rep.injected = seam.injected;
		rep.live = seam.live;
		rep.failed_what = seam.failed_what;
		if (__lsan_do_recoverable_leak_check && __lsan_do_recoverable_leak_check() != 0)
			_exit(1);
		_exit(write(pfd[1], &rep, sizeof(rep)) == (ssize_t)sizeof(rep) ? 0 : 1);
	}
	close(pfd[1]);
	got = pid > 0 ? read(pfd[0], &rep, sizeof(rep)) : -1;
	close(pfd[0]);
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
	    got != (ssize_t)sizeof(rep))
		return INT_MIN;
	seam.calls = rep.calls;
	seam.injected = rep.injected;
	seam.live = rep.live;
	seam.failed_what = rep.failed_what;
	return rep.r;
}

/* A captured log as TAP comments. */
static void print_log(const char *log)
{
	while (*log) {
		int n = (int)strcspn(log, "\n");

		printf("#   %.*s\n", n, log);
		log += n + (log[n] == '\n');
	}
}

static void print_config(const struct config *c, char *buf, size_t size)
{
	FILE *f = fmemopen(buf, size, "w");

	buf[0] = '\0';
	if (!f)
		return;
	config_print(c, f);
	fclose(f);
}

/* ------------------------------------------------------------------ config */

struct config_ctx {
	const char *path; /* config_load_file(path), or */
	const char *text; /* config_parse_string(text) */
	struct config cfg;
	struct config_error err;
	char want[4096], got[4096];
};

static int config_call(void *ctx)
{
	struct config_ctx *c = ctx;

	memset(&c->cfg, 0x5a, sizeof(c->cfg));
	if (c->path)
		return config_load_file(&c->cfg, c->path, NULL, &c->err);
	return config_parse_string(&c->cfg, c->text, "alloc.conf", &c->err);
}

static void config_check(void *ctx, unsigned long n, int r, bool failed)
{
	struct config_ctx *c = ctx;
	const unsigned char *b = (const unsigned char *)&c->cfg;
	size_t i;

	if (failed) {
		printf("# run %lu, %s fails: %d, \"%s\"\n", n, seam.failed_what, r, c->err.msg);
		CU_ASSERT_EQUAL(r, -ENOMEM);
		CU_ASSERT_TRUE(says_nomem(c->err.msg));
		for (i = 0; i < sizeof(c->cfg) && b[i] == 0x5a; i++)
			;
		CU_ASSERT_EQUAL(i, sizeof(c->cfg)); /* a failed load leaves the config alone */
		return;
	}
	CU_ASSERT_EQUAL(r, 0);
	CU_ASSERT_EQUAL(c->cfg.n_tiers, 3);
	print_config(&c->cfg, n ? c->got : c->want, sizeof(c->want));
	if (n)
		CU_ASSERT_STRING_EQUAL(c->got, c->want);
}

static void test_config_parse_string(void)
{
	static struct config_ctx c = { .text = full_conf };
	const struct entry e = { "config_parse_string", config_call, config_check, &c };

	/* the parser and its scratch config (mapped), and the eight regexes */
	CU_ASSERT_EQUAL(sweep(&e), 10);
}

static void test_config_load_file(void)
{
	static struct config_ctx c;
	static char path[512];
	const struct entry e = { "config_load_file", config_call, config_check, &c };

	snprintf(path, sizeof(path), "%s/alloc.conf", root);
	c.path = path;
	/* the file's text, then as config_parse_string */
	CU_ASSERT_EQUAL(sweep(&e), 11);
}

/* ------------------------------------------------------------------ policy */

struct policy_ctx {
	struct policy pol;
	char err[256];
	unsigned compiled;      /* regexes compiled by a successful policy_init() */
	bool clean_after_error; /* a failed policy_init() left nothing compiled */
};

static int policy_call(void *ctx)
{
	struct policy_ctx *c = ctx;
	int r, i;

	c->err[0] = '\0';
	c->compiled = 0;
	r = policy_init(&c->pol, &full_cfg, c->err, sizeof(c->err));
	c->clean_after_error = true;
	for (i = 0; i < POLICY_N; i++) {
		c->compiled += c->pol.compiled[i];
		c->clean_after_error &= !c->pol.compiled[i];
	}
	if (r == 0)
		policy_deinit(&c->pol);
	return r;
}

static void policy_check(void *ctx, unsigned long n, int r, bool failed)
{
	struct policy_ctx *c = ctx;

	if (failed) {
		printf("# run %lu, %s fails: %d, \"%s\"\n", n, seam.failed_what, r, c->err);
		CU_ASSERT_EQUAL(r, -ENOMEM);
		CU_ASSERT_TRUE(says_nomem(c->err));
		CU_ASSERT_TRUE(c->clean_after_error);
		return;
	}
	CU_ASSERT_EQUAL(r, 0);
	CU_ASSERT_EQUAL(c->compiled, POLICY_N);
}

static void test_policy(void)
{
	static struct policy_ctx c;
	const struct entry e = { "policy_init/policy_deinit", policy_call, policy_check, &c };

	CU_ASSERT_EQUAL(sweep(&e), POLICY_N);
}

/* ------------------------------------------------------------------ /proc scan */

struct scan_ctx {
	struct procfs_scan_stats st, want_st;
	pid_t pids[64], want[64];
	size_t n, want_n;
};

static void scan_visit(const struct proc_info *pi, void *userdata)
{
	struct scan_ctx *c = userdata;

	if (c->n < sizeof(c->pids) / sizeof(c->pids[0]))
		c->pids[c->n++] = pi->pid;
}

static int scan_call(void *ctx)
{
	struct scan_ctx *c = ctx;

	c->n = 0;
	return procfs_scan(procfd, -1000, scan_visit, c, &c->st);
}

static void scan_check(void *ctx, unsigned long n, int r, bool failed)
{
	struct scan_ctx *c = ctx;

	if (failed) {
		printf("# run %lu, %s fails: %d (%s)\n", n, seam.failed_what, r, strerror(-r));
		CU_ASSERT_EQUAL(r, -ENOMEM);
		CU_ASSERT_EQUAL(c->n, 0);
		CU_ASSERT_EQUAL(c->st.seen, 0);
		return;
	}
	CU_ASSERT_EQUAL(r, 0);
	if (!n) {
		CU_ASSERT_EQUAL(c->st.seen, 10);
		CU_ASSERT_EQUAL(c->st.read, 9);
		c->want_st = c->st;
		c->want_n = c->n;
		memcpy(c->want, c->pids, sizeof(c->want));
		return;
	}
	CU_ASSERT_EQUAL(memcmp(&c->st, &c->want_st, sizeof(c->st)), 0);
	CU_ASSERT_EQUAL(c->n, c->want_n);
	CU_ASSERT_EQUAL(memcmp(c->pids, c->want, c->n * sizeof(c->pids[0])), 0);
}

static void test_procfs_scan(void)
{
	static struct scan_ctx c;
	const struct entry e = { "procfs_scan", scan_call, scan_check, &c };

	CU_ASSERT_EQUAL(sweep(&e), 0); /* the scan allocates nothing */
}

/* The size sample taken while pressure builds (pick_sample): a full
 * sample of the fixture's processes, sorted, all without allocating. */
static int sample_call(void *ctx)
{
	struct pick_ctx c = { .procfd = procfd, .rootfd = -1, .cg2_mount = "", .scope = "/" };
	struct growth_sample *s = ctx;

	return pick_sample(&c, s, 0, 1, true);
}

static void sample_check(void *ctx, unsigned long n, int r, bool failed)
{
	const struct growth_sample *s = ctx;

	(void)n;
	CU_ASSERT_FALSE(failed);
	CU_ASSERT_EQUAL(r, 0);
	CU_ASSERT_TRUE(s->valid);
	CU_ASSERT_TRUE(s->n > 1);
	CU_ASSERT_EQUAL(seam.sorts, 0);
}

/* A full sample (more than glibc's qsort sorts without a buffer) */
static int full_sample_call(void *ctx)
{
	struct growth_sample *s = ctx;
	pid_t pid;

	growth_sample_begin(s, 1, 1, 0, true);
	for (pid = 1; pid <= 2 * GROWTH_ENTRIES; pid++) {
		growth_sample_add(s, (pid * 7919) % 4099 + 2, 1, 1 + (uint64_t)(pid * 31 % 977));
		growth_sample_add_reads(s, (pid * 7919) % 4099 + 2, (uint64_t)(pid * 17 % 1013));
	}
	growth_sample_end(s);
	return 0;
}

static void full_sample_check(void *ctx, unsigned long n, int r, bool failed)
{
	const struct growth_sample *s = ctx;
	size_t i;

	(void)n;
	CU_ASSERT_FALSE(failed);
	CU_ASSERT_EQUAL(r, 0);
	CU_ASSERT_TRUE(s->n > GROWTH_ENTRIES / 2);
	CU_ASSERT_TRUE(s->nr > GROWTH_READERS / 2);
	CU_ASSERT_EQUAL(seam.sorts, 0);
	for (i = 1; i < s->n; i++)
		CU_ASSERT(s->e[i - 1].pid < s->e[i].pid);
	for (i = 1; i < s->nr; i++)
		CU_ASSERT(s->r[i - 1].pid < s->r[i].pid);
}

static void test_pick_sample(void)
{
	static struct growth_sample s;
	const struct entry e = { "pick_sample", sample_call, sample_check, &s };
	const struct entry full = { "growth_sample_end (full)", full_sample_call, full_sample_check, &s };

	CU_ASSERT_EQUAL(sweep(&e), 0); /* the sample allocates nothing */
	CU_ASSERT_EQUAL(sweep(&full), 0); /* nor does sorting a full one */
}

/* ------------------------------------------------------------------ victim choice */

struct collect_ctx {
	struct policy pol;
	struct proc_info list[16], scratch[16];
	size_t n;
};

static void pick_collect(const struct proc_info *pi, void *userdata)
{
	struct collect_ctx *c = userdata;

	if (c->n < sizeof(c->list) / sizeof(c->list[0]))
		c->list[c->n++] = *pi;
}

/* Returns the pid chosen, 0 if none. */
static int pick_call(void *ctx)
{
	struct collect_ctx *c = ctx;
	struct victim_filter f = { .policy = &c->pol.vp, .min_adj = 0, .self = 0, .scope = "/" };
	ssize_t i;

	memcpy(c->scratch, c->list, sizeof(c->list));
	i = victim_choose(&f, c->scratch, c->n);
	return i < 0 ? 0 : (int)c->scratch[i].pid;
}

static void pick_check(void *ctx, unsigned long n, int r, bool failed)
{
	(void)ctx;
	if (failed) {
		/* a regex that cannot be evaluated never makes a process more
		 * likely to die: never the protected 500 or the avoided 400 */
		printf("# run %lu, %s fails: pid %d chosen\n", n, seam.failed_what, r);
		CU_ASSERT_TRUE(r == 201 || r == 202);
		return;
	}
	CU_ASSERT_EQUAL(r, 201);
}

static void test_victim_choice(void)
{
	static struct collect_ctx c;
	const struct entry e = { "victim_choose (regexec)", pick_call, pick_check, &c };
	struct procfs_scan_stats st;
	char err[256];

	CU_ASSERT_EQUAL_FATAL(policy_init(&c.pol, &pick_cfg, err, sizeof(err)), 0);
	c.n = 0;
	CU_ASSERT_EQUAL_FATAL(procfs_scan(procfd, -1000, pick_collect, &c, &st), 0);
	/* protect on the 5 processes that pass the earlier checks, avoid and prefer on 4 */
	CU_ASSERT_TRUE(sweep(&e) >= 9);
	policy_deinit(&c.pol);
}

/* ------------------------------------------------------------------ the kill path */

struct kill_ctx {
	struct killer k;
	struct killer_env env;
	struct tier_state tiers[CONFIG_TIERS_MAX];
	char log[8192];
};

static int nop_watch(void *ctx, int fd)
{
	(void)ctx;
	(void)fd;
	return 0;
}

static void nop_unwatch(void *ctx, int fd)
{
	(void)ctx;
	(void)fd;
}

static int nop_arm(void *ctx, uint64_t us)
{
	(void)ctx;
	(void)us;
	return 0;
}

static void nop_changed(void *ctx)
{
	(void)ctx;
}

static uint64_t real_now(void *ctx)
{
	(void)ctx;
	return event_now_us();
}

static const struct killer_ops nop_killer_ops = { nop_watch, nop_unwatch, nop_arm, nop_changed, real_now, NULL };

static int kill_call(void *ctx)
{
	struct kill_ctx *c = ctx;
	const struct fired f = { 0, FIRE_PSI };
	int saved = capture_begin();

	memset(c->tiers, 0, sizeof(c->tiers));
	killer_act(&c->k, &c->env, &f, 1);
	capture_end(saved, c->log, sizeof(c->log));
	return 0;
}

static void kill_check(void *ctx, unsigned long n, int r, bool failed)
{
	struct kill_ctx *c = ctx;
	const char *k = strstr(c->log, "would-kill pid=");

	(void)r;
	if (failed) {
		printf("# run %lu, %s fails: %.*s\n", n, seam.failed_what, (int)strcspn(k ? k : c->log, "\n"),
		       k ? k : c->log);
		CU_ASSERT_STRING_EQUAL(seam.failed_what, "regexec");
		if (strcmp(seam.failed_what, "regexec") == 0) {
			CU_ASSERT_TRUE(k && (strncmp(k, "would-kill pid=201 ", 19) == 0 ||
					     strncmp(k, "would-kill pid=202 ", 19) == 0));
		} else {
			/* no victim, and the log says why */
			CU_ASSERT_PTR_NULL(k);
			CU_ASSERT_TRUE(says_nomem(c->log));
		}
		return;
	}
	CU_ASSERT_PTR_NOT_NULL(k);
	CU_ASSERT_TRUE(k && strncmp(k, "would-kill pid=201 ", 19) == 0);
}

static void test_kill_act(void)
{
	/* a killer on tests/fixtures/proc, dry run: no event loop */
	static struct kill_ctx c;
	static struct policy pol;
	static struct log lg;
	const struct entry e = { "killer_act (dry run)", kill_call, kill_check, &c };
	char err[256];

	CU_ASSERT_EQUAL_FATAL(policy_init(&pol, &pick_cfg, err, sizeof(err)), 0);
	log_init(&lg, LOG_DEBUG, false);
	killer_init(&c.k, &nop_killer_ops, NULL, &lg, procfd, rootfd, "", getpid());
	killer_env_init(&c.env, &pick_cfg, &pol.vp, c.tiers);
	c.env.dry_run = true;
	/* only the regexes on the candidates: the scan and the choice's scratch
	 * (part of the killer) allocate nothing */
	CU_ASSERT_TRUE(sweep(&e) >= 9);
	policy_deinit(&pol);
}

/* ------------------------------------------------------------------ cgroup */

struct cgroup_ctx {
	char mount[256];
	pid_t pids[8];
};

static int cgroup_mount_call(void *ctx)
{
	struct cgroup_ctx *c = ctx;

	c->mount[0] = '\0';
	return cgroup_mount(rootfd, c->mount, sizeof(c->mount));
}

static void cgroup_mount_check(void *ctx, unsigned long n, int r, bool failed)
{
	struct cgroup_ctx *c = ctx;

	(void)n;
	if (failed) {
		CU_ASSERT_EQUAL(r, -ENOMEM);
		return;
	}
	CU_ASSERT_EQUAL(r, 0);
	CU_ASSERT_STRING_EQUAL(c->mount, "/sys/fs/cgroup");
}

static int cgroup_procs_call(void *ctx)
{
	struct cgroup_ctx *c = ctx;

	memset(c->pids, 0, sizeof(c->pids));
	return cgroup_read_procs(rootfd, "/sys/fs/cgroup", "/app", c->pids, 8);
}

static void cgroup_procs_check(void *ctx, unsigned long n, int r, bool failed)
{
	struct cgroup_ctx *c = ctx;

	(void)n;
	if (failed) {
		CU_ASSERT_EQUAL(r, -ENOMEM);
		return;
	}
	CU_ASSERT_EQUAL(r, 2);
	CU_ASSERT_TRUE(c->pids[0] == 201 && c->pids[1] == 202);
}

static void test_cgroup(void)
{
	static struct cgroup_ctx c;
	const struct entry mount = { "cgroup_mount", cgroup_mount_call, cgroup_mount_check, &c };
	const struct entry procs = { "cgroup_read_procs", cgroup_procs_call, cgroup_procs_check, &c };

	CU_ASSERT_EQUAL(sweep(&mount), 1);
	CU_ASSERT_EQUAL(sweep(&procs), 1);
}

/* ------------------------------------------------------------------ watch, trace: nothing allocated */

struct watch_ctx {
	struct watch w;
	char err[512];
	enum tier_source src[3];
	bool fired[CONFIG_TIERS_MAX];
};

static int watch_call(void *ctx)
{
	struct watch_ctx *c = ctx;
	size_t i;
	int r;

	r = watch_open(&c->w, rootfd, &full_cfg, false, 2000000, &fake_kernel_unprivileged, c->err, sizeof(c->err));
	if (r < 0)
		return r;
	for (i = 0; i < 3; i++)
		c->src[i] = c->w.tiers[i].source;
	r = watch_sample(&c->w, c->w.last_sample_us + 100000, c->fired);
	watch_arm_timer(&c->w, c->w.last_sample_us);
	watch_close(&c->w);
	return r;
}

static void watch_check(void *ctx, unsigned long n, int r, bool failed)
{
	struct watch_ctx *c = ctx;

	(void)n;
	CU_ASSERT_FALSE(failed);
	CU_ASSERT_EQUAL(r, 0);
	CU_ASSERT_EQUAL(c->src[0], TIER_SOURCE_USERSPACE);
	CU_ASSERT_EQUAL(c->src[1], TIER_SOURCE_KERNEL);
	CU_ASSERT_EQUAL(c->src[2], TIER_SOURCE_NONE);
}

static void test_watch(void)
{
	static struct watch_ctx c;
	const struct entry e = { "watch_open/watch_sample/watch_close (fake kernel)", watch_call, watch_check, &c };

	CU_ASSERT_EQUAL(sweep(&e), 0);
}

struct trace_ctx {
	struct trace_replay_stats st, want;
	unsigned long bad;
};

static int trace_call(void *ctx)
{
	static const char trace[] = "# psi-lmkd trace v1 pressure=/proc/pressure/memory interval_us=100000\n"
				    "0 0 0\n100000 0 0\n300000 50000 0\n500000 150000 100000\n600000 160000 120000\n";
	struct trace_ctx *c = ctx;
	FILE *in = fmemopen((void *)trace, strlen(trace), "r"), *out = fopen("/dev/null", "w");
	int r = -EIO;

	if (in && out)
		r = trace_replay(&full_cfg, in, out, &c->st, &c->bad);
	if (in)
		fclose(in);
	if (out)
		fclose(out);
	return r;
}

static void trace_check(void *ctx, unsigned long n, int r, bool failed)
{
	struct trace_ctx *c = ctx;

	CU_ASSERT_FALSE(failed);
	CU_ASSERT_EQUAL(r, 0);
	CU_ASSERT_EQUAL(c->st.samples, 5);
	if (!n)
		c->want = c->st;
	else
		CU_ASSERT_EQUAL(memcmp(&c->st, &c->want, sizeof(c->st)), 0);
}

static void test_trace(void)
{
	static struct trace_ctx c;
	const struct entry e = { "trace_replay", trace_call, trace_check, &c };

	CU_ASSERT_EQUAL(sweep(&e), 0);
}

/* ------------------------------------------------------------------ probe */

struct probe_ctx {
	char out[8192], want[8192];
};

static int probe_call(void *ctx)
{
	struct probe_ctx *c = ctx;
	FILE *f = fmemopen(c->out, sizeof(c->out), "w");
	int r;

	if (!f)
		return INT_MIN;
	r = probe_run(rootfd, &full_cfg, &fake_kernel_unprivileged, f);
	fclose(f);
	return r;
}

static void probe_check(void *ctx, unsigned long n, int r, bool failed)
{
	struct probe_ctx *c = ctx;

	if (failed) {
		const char *what = seam.failed_what;
		const char *line = strstr(c->out, strerror(ENOMEM));

		if (!line)
			line = strstr(c->out, "out of memory");
		printf("# run %lu, %s fails: %d, \"%.*s\"\n", n, what, r, line ? (int)strcspn(line, "\n") : 0,
		       line ? line : "");
		/* either the probe fails, or the line it could not find out says why */
		CU_ASSERT_TRUE(r == -ENOMEM || r == 0);
		CU_ASSERT_TRUE(says_nomem(c->out));
		if (strcmp(what, "cap_get_proc") == 0)
			CU_ASSERT_PTR_NOT_NULL(strstr(c->out, "CAP_SYS_RESOURCE: unknown (cannot read the capability sets"));
		if (strcmp(what, "fdopendir") == 0)
			CU_ASSERT_PTR_NOT_NULL(strstr(c->out, "cgroup.kill: unknown (cannot list /sys/fs/cgroup"));
		return;
	}
	CU_ASSERT_EQUAL(r, 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(c->out, "cgroup.kill: yes"));
	CU_ASSERT_PTR_NOT_NULL(strstr(c->out, "  tier high (full 150ms 2s): kernel trigger"));
	if (!n)
		memcpy(c->want, c->out, sizeof(c->want));
	else
		CU_ASSERT_STRING_EQUAL(c->out, c->want);
}

static void test_probe(void)
{
	static struct probe_ctx c;
	const struct entry e = { "probe_run (fixture root, fake kernel)", probe_call, probe_check, &c };

	/* cap_get_proc, /proc/self/mounts, fdopendir (the cgroup2 mount), the watch */
	CU_ASSERT_EQUAL(sweep(&e), 4);
}

/* ------------------------------------------------------------------ capabilities */

struct caps_ctx {
	char buf[2048], want[2048];
	char err[256];
};

static int caps_query_call(void *ctx)
{
	(void)ctx;
	return caps_query(CAP_KILL);
}

static void caps_query_check(void *ctx, unsigned long n, int r, bool failed)
{
	static int want;

	(void)ctx;
	if (failed) {
		CU_ASSERT_EQUAL(r, -ENOMEM);
		return;
	}
	CU_ASSERT_TRUE(r == 0 || r == 1);
	if (!n)
		want = r;
	else
		CU_ASSERT_EQUAL(r, want);
}

static int caps_describe_call(void *ctx)
{
	struct caps_ctx *c = ctx;

	return caps_describe(c->buf, sizeof(c->buf));
}

static void caps_describe_check(void *ctx, unsigned long n, int r, bool failed)
{
	struct caps_ctx *c = ctx;

	if (failed) {
		CU_ASSERT_EQUAL(r, -ENOMEM);
		return;
	}
	CU_ASSERT_EQUAL(r, 0);
	if (!n)
		memcpy(c->want, c->buf, sizeof(c->want));
	else
		CU_ASSERT_STRING_EQUAL(c->buf, c->want);
}

static int caps_drop_child(void *ctx)
{
	struct caps_ctx *c = ctx;

	return caps_drop_to_needed(c->err, sizeof(c->err));
}

static int caps_drop_call(void *ctx)
{
	return in_child(caps_drop_child, ctx);
}

static void caps_drop_check(void *ctx, unsigned long n, int r, bool failed)
{
	static int want;

	(void)ctx;
	CU_ASSERT_NOT_EQUAL(r, INT_MIN);
	if (failed) {
		CU_ASSERT_EQUAL(r, -ENOMEM);
		return;
	}
	if (!n)
		want = r;
	else
		CU_ASSERT_EQUAL(r, want);
}

static void test_caps(void)
{
	static struct caps_ctx c;
	const struct entry query = { "caps_query", caps_query_call, caps_query_check, &c };
	const struct entry describe = { "caps_describe", caps_describe_call, caps_describe_check, &c };
	const struct entry drop = { "caps_drop_to_needed (in a child)", caps_drop_call, caps_drop_check, &c };
	unsigned long n;

	CU_ASSERT_EQUAL(sweep(&query), 1);
	n = sweep(&describe); /* cap_get_proc, then cap_to_name for each capability held */
	CU_ASSERT_TRUE(n >= 1);
	CU_ASSERT_EQUAL(sweep(&drop), 2); /* cap_get_proc, cap_init */
}

/* ------------------------------------------------------------------ daemon start and reload */

/* The daemon runs in a child (daemon_init() blocks signals, locks memory).
 * Every failed allocation must show in its log as "out of memory" or
 * strerror(ENOMEM), whether the daemon stops or goes on without something. */
struct daemon_ctx {
	bool reload; /* arm the seam for a SIGHUP reload in daemon_run(), not for daemon_init() */
	bool groups; /* groups_cfg, a cgroup-pattern tier on two groups, instead of pick_cfg */
	char log[16384];
};

static int daemon_child(void *ctx)
{
	struct daemon_ctx *c = ctx;
	struct daemon_options opt = { .root = root, .log_level = LOG_DEBUG, .ops = &fake_kernel_unprivileged };
	struct daemon *d = __real_malloc(sizeof(*d)); /* the test's, not the daemon's */
	unsigned long n = seam.fail_at;
	int saved, r;

	if (!d)
		return INT_MIN;
	unsetenv("NOTIFY_SOCKET");
	unsetenv("WATCHDOG_USEC");
	saved = capture_begin();
	if (c->reload)
		disarm();
	r = daemon_init(d, c->groups ? &groups_cfg : &pick_cfg, &opt);
	if (c->reload && r == 0) {
		/* both stay pending on the signalfd: one wakeup reloads, then quits */
		arm(n);
		raise(SIGHUP);
		raise(SIGTERM);
		r = daemon_run(d);
		disarm();
	}
	daemon_deinit(d);
	capture_end(saved, c->log, sizeof(c->log));
	__real_free(d);
	return r;
}

static int daemon_call(void *ctx)
{
	struct daemon_ctx *c = ctx;
	int r = in_child(daemon_child, ctx);

	if (read_file_at(rootfd, "log", c->log, sizeof(c->log)) < 0)
		c->log[0] = '\0';
	return r;
}

static void daemon_check(void *ctx, unsigned long n, int r, bool failed)
{
	struct daemon_ctx *c = ctx;
	const char *line = strstr(c->log, "out of memory");

	CU_ASSERT_NOT_EQUAL(r, INT_MIN);
	if (!line)
		line = strstr(c->log, strerror(ENOMEM));
	if (failed) {
		printf("# run %lu, %s fails: %d%s%.*s%s\n", n, seam.failed_what, r, line ? ", \"" : "",
		       line ? (int)strcspn(line, "\n") : 0, line ? line : "", line ? "\"" : "");
		if (c->reload) {
			/* the reload fails, the daemon runs on with its configuration */
			CU_ASSERT_EQUAL(r, 0);
			CU_ASSERT_PTR_NULL(strstr(c->log, "configuration reloaded"));
			CU_ASSERT_TRUE(strstr(c->log, "reload failed") || strstr(c->log, "reload: out of memory"));
		} else {
			CU_ASSERT_TRUE(r == 0 || r == -ENOMEM);
		}
		/* failing or going on without something, the daemon says why */
		CU_ASSERT_PTR_NOT_NULL(line);
		if (!line)
			print_log(c->log);
		return;
	}
	CU_ASSERT_EQUAL(r, 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(c->log, c->groups ? "running: 2 tiers" : "running: 1 tiers"));
	if (c->groups)
		CU_ASSERT_PTR_NOT_NULL(strstr(c->log, "2 groups watched"));
	if (c->reload)
		CU_ASSERT_PTR_NOT_NULL(strstr(c->log, "configuration reloaded from"));
	if (r != 0)
		print_log(c->log);
}

static void test_daemon_init(void)
{
	static struct daemon_ctx c = { .reload = false };
	const struct entry e = { "daemon_init/daemon_deinit (in a child)", daemon_call, daemon_check, &c };

	/* the policy and its regexes, the watch, /proc/self/mounts twice, capabilities, the fd count */
	CU_ASSERT_TRUE(sweep(&e) >= 9);
}

static void test_daemon_groups(void)
{
	static struct daemon_ctx c = { .groups = true };
	const struct entry e = { "daemon_init with cgroup-pattern tiers (in a child)", daemon_call, daemon_check, &c };

	/* as daemon_init, and the group slots, the walk's listing, each group */
	CU_ASSERT_TRUE(sweep(&e) >= 12);
}

static void test_daemon_reload(void)
{
	static struct daemon_ctx c = { .reload = true };
	const struct entry e = { "reload on SIGHUP in daemon_run (in a child)", daemon_call, daemon_check, &c };

	/* the new config, its file, parser and regexes, the new policy and its regexes, the watch */
	CU_ASSERT_TRUE(sweep(&e) >= 10);
}

/* ------------------------------------------------------------------ fileio */

static int count_call(void *ctx)
{
	(void)ctx;
	return count_entries_at(rootfd, "proc/self/fd");
}

static void count_check(void *ctx, unsigned long n, int r, bool failed)
{
	(void)ctx;
	(void)n;
	CU_ASSERT_EQUAL(r, failed ? -ENOMEM : 3);
}

static void test_count_entries(void)
{
	const struct entry e = { "count_entries_at", count_call, count_check, NULL };

	CU_ASSERT_EQUAL(sweep(&e), 1); /* fdopendir */
}

int main(void)
{
	static CU_TestInfo tests[] = {
		{ "config_parse_string", test_config_parse_string },
		{ "config_load_file", test_config_load_file },
		{ "policy_init and policy_deinit", test_policy },
		{ "procfs_scan", test_procfs_scan },
		{ "pick_sample", test_pick_sample },
		{ "victim choice: regexec failing spares, never kills", test_victim_choice },
		{ "kill_act in dry run", test_kill_act },
		{ "cgroup_mount and cgroup_read_procs", test_cgroup },
		{ "watch_open allocates nothing", test_watch },
		{ "trace_replay allocates nothing", test_trace },
		{ "probe_run", test_probe },
		{ "capabilities", test_caps },
		{ "count_entries_at", test_count_entries },
		{ "daemon_init", test_daemon_init },
		{ "daemon_init with groups", test_daemon_groups },
		{ "reload in daemon_run", test_daemon_reload },
		CU_TEST_INFO_NULL,
	};
	static CU_SuiteInfo suites[] = {
		{ "alloc", suite_init, suite_cleanup, NULL, NULL, tests },
		CU_SUITE_INFO_NULL,
	};

	return cunit_tap_main(suites);
}
