/* SPDX-License-Identifier: MIT */
/* main: command line, exit codes and (without -f) detaching into the
 * background. Everything else is in the daemon module.
 * Exit codes: 0 success, 1 bad config or failure to start, 2 bad usage. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "coldtext.h"
#include "config.h"
#include "brakeio.h"
#include "control.h"
#include "daemon.h"
#include "lmkd-server.h"
#include "fileio.h"
#include "groupset.h"
#include "probe.h"
#include "trace.h"

#ifndef SYSCONFDIR
#define SYSCONFDIR "/etc"
#endif

#define DEFAULT_CONFIG SYSCONFDIR "/psi-lmkd.conf"
/* drop-ins a package ships: read (after DEFAULT_CONFIG's own) only with the default config */
#ifndef VENDOR_CONFDIR
#define VENDOR_CONFDIR "/usr/lib/psi-lmkd/conf.d"
#endif

enum {
	OPT_CHECK_CONFIG = 0x100,
	OPT_VERSION,
	OPT_ROOT,
	OPT_PROBE,
	OPT_RECORD,
	OPT_REPLAY,
	OPT_INTERVAL,
	OPT_DURATION,
	OPT_REINIT,
	OPT_BOOT_COMPLETED,
	OPT_STATUS,
	OPT_CANDIDATES,
	OPT_JSON,
	OPT_RELEASE_BRAKE,
};

enum mode {
	MODE_DAEMON,
	MODE_CHECK_CONFIG,
	MODE_PROBE,
	MODE_RECORD,
	MODE_REPLAY,
	MODE_LMKD_CLIENT,
	MODE_STATUS,
	MODE_RELEASE_BRAKE,
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: psi-lmkd [OPTION]...\n"
		"Kill the least important process when the kernel reports memory stall (PSI).\n"
		"\n"
		"  -c, --config FILE   configuration file (default " DEFAULT_CONFIG "),\n"
		"                      read with its drop-ins FILE.d/*.conf\n"
		"  -f, --foreground    stay in the foreground and log to stderr\n"
		"                      (default: detach and log to syslog)\n"
		"  -n, --dry-run       decide and log \"would-kill\", never send a signal\n"
		"      --check-config  validate the configuration, print the effective tiers and\n"
		"                      where each setting comes from, exit\n"
		"      --probe         report what this kernel offers and, for the configuration,\n"
		"                      which tiers run on kernel triggers or the userspace monitor\n"
		"      --record FILE   sample the configured pressure file's totals into a trace\n"
		"                      (\"-\" = stdout) until Ctrl-C or --duration\n"
		"      --replay FILE   feed a trace to each tier's monitor, print when it fires\n"
		"      --status        ask the running daemon (control_socket) for its tiers,\n"
		"                      pressure, memory, counters and last kills\n"
		"      --candidates    with --status: who each tier would kill now, and why\n"
		"      --json          with --status: print JSON\n"
		"      --interval DUR  --record sampling interval (default 100ms)\n"
		"      --duration DUR  --record for this long, at most 1h (default: until Ctrl-C)\n"
		"      --reinit        ask the running daemon, through its lmkd socket, to\n"
		"                      re-read its configuration (as lmkd --reinit)\n"
		"      --boot-completed  tell the running daemon that boot completed\n"
		"                      (as lmkd --boot_completed)\n"
		"      --release-brake  put memory.high of the memory cgroup back as it was\n"
		"                      before memory_high_brake (after the daemon died)\n"
		"  -v, --verbose       more log output (repeat for debug)\n"
		"      --root DIR      read /proc, /sys and pressure files under DIR (for tests)\n"
		"      --version       print the version and exit\n"
		"  -h, --help          print this help and exit\n"
		"\n"
		"Signals: SIGHUP reloads the configuration, SIGUSR1 logs the status,\n"
		"SIGTERM and SIGINT stop the daemon.\n"
		"Exit status: 0 success, 1 bad configuration or failure to start, 2 bad usage.\n");
}

/* A write to a pipe nobody reads any more -- stderr to OpenRC's logger after
 * logger died, the start-up status byte to a parent that is gone -- must fail
 * with EPIPE, not kill the daemon with SIGPIPE. SIGPIPE is caught by a
 * handler that does nothing rather than set to SIG_IGN: the effect on the
 * daemon's writes is the same (write() returns EPIPE), but a caught signal
 * goes back to its default at execve(), while SIG_IGN would be inherited by
 * the on_kill hook and everything it starts. */
static void sigpipe_noop(int sig)
{
	(void)sig;
}

static int survive_sigpipe(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = sigpipe_noop;
	sigemptyset(&sa.sa_mask);
	return sigaction(SIGPIPE, &sa, NULL) < 0 ? -errno : 0;
}

/* Forks; the parent waits until the child reports that it is armed (or failed)
 * through a pipe and exits with the child's verdict. Returns the pipe's write
 * end in the child, -1 in foreground mode. */
static int detach(void)
{
	int p[2];
	pid_t pid;
	char status = 1;

	if (pipe(p) < 0) {
		fprintf(stderr, "psi-lmkd: error: pipe: %s\n", strerror(errno));
		exit(1);
	}
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "psi-lmkd: error: fork: %s\n", strerror(errno));
		exit(1);
	}
	if (pid > 0) {
		close(p[1]);
		if (read(p[0], &status, 1) != 1)
			status = 1;
		exit(status);
	}
	close(p[0]);
	if (setsid() < 0 || chdir("/") < 0)
		exit(1);
	if (fork() > 0)
		_exit(0);
	return p[1];
}

/* stdin, stdout and stderr on the root's /dev/null (the root seam covers
 * /dev too). Returns 0 or -errno. */
static int redirect_stdio(const char *root)
{
	int rootfd = sysroot_open(root), fd, i;

	if (rootfd < 0)
		return rootfd;
	fd = sysroot_openat(rootfd, "/dev/null", O_RDWR);
	close(rootfd);
	if (fd < 0)
		return fd;
	for (i = 0; i <= STDERR_FILENO; i++)
		if (dup2(fd, i) < 0)
			return -errno;
	if (fd > STDERR_FILENO)
		close(fd);
	return 0;
}

/* --probe, --record and --replay: one-shot tools on the same config. */
static int run_tool(enum mode mode, const char *root, const struct config *cfg, const char *trace_path,
		    uint64_t interval_us, uint64_t duration_us)
{
	struct trace_replay_stats st;
	unsigned long bad_line;
	FILE *f;
	int rootfd, r;

	rootfd = sysroot_open(root);
	if (rootfd < 0) {
		fprintf(stderr, "psi-lmkd: error: cannot open root %s: %s\n", root, strerror(-rootfd));
		return 1;
	}
	switch (mode) {
	case MODE_PROBE:
		r = probe_run(rootfd, cfg, NULL, stdout);
		break;
	case MODE_RECORD:
		f = strcmp(trace_path, "-") == 0 ? stdout : fopen(trace_path, "we");
		if (!f) {
			fprintf(stderr, "psi-lmkd: error: cannot write %s: %s\n", trace_path, strerror(errno));
			r = -errno;
			break;
		}
		r = trace_record(rootfd, cfg->pressure, interval_us, duration_us, f);
		if (r < 0)
			fprintf(stderr, "psi-lmkd: error: recording %s: %s\n", cfg->pressure, strerror(-r));
		if (f != stdout && fclose(f) != 0 && r == 0) {
			fprintf(stderr, "psi-lmkd: error: writing %s: %s\n", trace_path, strerror(errno));
			r = -EIO;
		}
		break;
	case MODE_REPLAY:
		f = strcmp(trace_path, "-") == 0 ? stdin : fopen(trace_path, "re");
		if (!f) {
			fprintf(stderr, "psi-lmkd: error: cannot read %s: %s\n", trace_path, strerror(errno));
			r = -errno;
			break;
		}
		r = trace_replay(cfg, f, stdout, &st, &bad_line);
		if (r < 0) {
			fprintf(stderr, "psi-lmkd: error: %s:%lu: not a trace sample \"<time_us> <some_us> <full_us>\" "
				"(or time went backwards)\n", trace_path, bad_line);
		} else {
			size_t i;

			printf("# %lu samples\n", st.samples);
			for (i = 0; i < cfg->n_tiers; i++)
				if (st.skipped[i])
					printf("# tier %s: not replayed (no trigger)\n", cfg->tiers[i].name);
				else
					printf("# tier %s: %lu events\n", cfg->tiers[i].name, st.events[i]);
		}
		if (f != stdin)
			fclose(f);
		break;
	default:
		r = -EINVAL;
	}
	close(rootfd);
	return r < 0 ? 1 : 0;
}

/* --reinit, --boot-completed: one request to the running daemon's lmkd
 * socket (the configured one, else Android's), and its answer. Exit 0 when
 * it did what was asked (BOOT_COMPLETED: now or before), else 1. */
static int lmkd_client(const char *socket_path, enum lmkd_cmd cmd)
{
	const char *path = *socket_path ? socket_path : LMKD_ANDROID_SOCKET;
	int32_t v = -1;
	int r = lmkd_client_call(path, cmd, LMKD_CLIENT_TIMEOUT_MS, &v);

	if (r < 0) {
		fprintf(stderr, "psi-lmkd: error: %s through %s: %s\n", lmkd_cmd_name(cmd), path,
			r == -EBADMSG ? "not a reply to the request" : strerror(-r));
		return 1;
	}
	if (cmd == LMKD_BOOT_COMPLETED && (v == LMKD_BOOT_HANDLED || v == LMKD_BOOT_ALREADY)) {
		printf("boot completed: %s\n", v == LMKD_BOOT_HANDLED ? "handled" : "already handled");
		return 0;
	}
	if (cmd == LMKD_UPDATE_PROPS && v == 0) {
		printf("configuration re-read\n");
		return 0;
	}
	fprintf(stderr, "psi-lmkd: error: %s failed (the daemon answered %d)%s\n", lmkd_cmd_name(cmd), (int)v,
		cmd == LMKD_UPDATE_PROPS ? "; it keeps its old configuration and says why in its log" : "");
	return 1;
}

/* --status: the running daemon answers over its control socket. */
static int query_status(const struct config *cfg, const struct control_request *req)
{
	int r;

	if (!*cfg->control_socket) {
		fprintf(stderr, "psi-lmkd: error: %s sets control_socket = off: there is nothing to ask\n", cfg->path);
		return 1;
	}
	r = control_query(cfg->control_socket, req, stdout, stderr);
	if (r == -ENOENT || r == -ECONNREFUSED)
		fprintf(stderr, "psi-lmkd: error: no psi-lmkd answers on %s (%s): is the daemon of %s running?\n",
			cfg->control_socket, strerror(-r), cfg->path);
	else if (r == -EACCES)
		fprintf(stderr, "psi-lmkd: error: %s: %s (only root and the daemon's user may ask)\n", cfg->control_socket,
			strerror(-r));
	else if (r == -EPROTO)
		fprintf(stderr, "psi-lmkd: error: the daemon on %s refused the request (only root and the daemon's "
			"user may ask)\n", cfg->control_socket);
	else if (r < 0)
		fprintf(stderr, "psi-lmkd: error: %s: %s\n", cfg->control_socket, strerror(-r));
	if (fflush(stdout) != 0 && r == 0)
		r = -EIO;
	return r < 0 ? 1 : 0;
}

/* --check-config: the pressure file must be readable PSI too, since the
 * daemon would refuse to start without it; and the groups of the
 * cgroup-pattern tiers are listed as they are now. */
COLD_TEXT static int check_pressure_file(const struct config *cfg, const char *root)
{
	char err[512], where[CONFIG_WHERE_MAX];
	int rootfd = sysroot_open(root), r;

	if (rootfd < 0) {
		fprintf(stderr, "psi-lmkd: error: cannot open root %s: %s\n", root, strerror(-rootfd));
		return rootfd;
	}
	r = watch_check_file(rootfd, cfg->pressure, err, sizeof(err));
	if (r < 0 && cfg->pressure_origin)
		fprintf(stderr, "psi-lmkd: error: %s: %s\n", config_where(cfg, cfg->pressure_origin, where, sizeof(where)),
			err);
	else if (r < 0)
		fprintf(stderr, "psi-lmkd: error: %s\n", err);
	if (r == 0) {
		config_print(cfg, stdout);
		r = groupset_report(rootfd, cfg, stdout, NULL);
	}
	close(rootfd);
	return r;
}

static const struct option long_opts[] = {
	{ "config", required_argument, NULL, 'c' },
	{ "foreground", no_argument, NULL, 'f' },
	{ "dry-run", no_argument, NULL, 'n' },
	{ "check-config", no_argument, NULL, OPT_CHECK_CONFIG },
	{ "verbose", no_argument, NULL, 'v' },
	{ "root", required_argument, NULL, OPT_ROOT },
	{ "probe", no_argument, NULL, OPT_PROBE },
	{ "record", required_argument, NULL, OPT_RECORD },
	{ "replay", required_argument, NULL, OPT_REPLAY },
	{ "interval", required_argument, NULL, OPT_INTERVAL },
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "reinit", no_argument, NULL, OPT_REINIT },
	{ "boot-completed", no_argument, NULL, OPT_BOOT_COMPLETED },
	{ "boot_completed", no_argument, NULL, OPT_BOOT_COMPLETED }, /* lmkd's spelling */
	{ "status", no_argument, NULL, OPT_STATUS },
	{ "candidates", no_argument, NULL, OPT_CANDIDATES },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "release-brake", no_argument, NULL, OPT_RELEASE_BRAKE },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* What the command line asked for. */
struct cli {
	struct daemon_options dopt;
	struct control_request req;
	const char *config_path;
	bool foreground;
	enum mode mode;
	enum lmkd_cmd lmkd_cmd;
	const char *trace_path;
	uint64_t interval_us, duration_us;
	const char *mode_opt;     /* the option that chose mode (NULL: the daemon) */
	const char *record_opt;   /* --interval or --duration, if given */
};

/* One mode per command line: "--probe --status" would do one and silently
 * drop the other. 0, or 2 (bad usage, said). */
static int set_mode(struct cli *cli, enum mode mode, const char *opt)
{
	if (cli->mode_opt && strcmp(cli->mode_opt, opt) != 0) {
		fprintf(stderr, "psi-lmkd: error: %s and %s cannot be used together\n", cli->mode_opt, opt);
		return 2;
	}
	cli->mode = mode;
	cli->mode_opt = opt;
	return 0;
}

/* --interval (1ms..10s) or --duration. 0, or 2 (bad usage, said). */
static int parse_duration_opt(int c, const char *arg, struct cli *cli)
{
	char why[256] = "";
	uint64_t *out = c == OPT_INTERVAL ? &cli->interval_us : &cli->duration_us;

	uint64_t hi = c == OPT_INTERVAL ? 10000000 : 3600000000ULL;
	int r = config_parse_duration(arg, false, out, why, sizeof(why));

	if (r == -ERANGE || (r == 0 && (*out < 1000 || *out > hi))) {
		fprintf(stderr, "psi-lmkd: error: --%s: must be 1ms..%s, not \"%s\"\n",
			c == OPT_INTERVAL ? "interval" : "duration", c == OPT_INTERVAL ? "10s" : "1h", arg);
		return 2;
	}
	if (r < 0) {
		fprintf(stderr, "psi-lmkd: error: --%s: %s\n", c == OPT_INTERVAL ? "interval" : "duration", why);
		return 2;
	}
	return 0;
}

/* One option into cli: -1 to go on, or the exit status (--version, --help,
 * bad usage). */
static int parse_opt(int c, struct cli *cli)
{
	switch (c) {
	case 'c':
		cli->config_path = optarg;
		break;
	case 'f':
		cli->foreground = true;
		break;
	case 'n':
		cli->dopt.dry_run = true;
		break;
	case 'v':
		if (cli->dopt.log_level < LOG_DEBUG)
			cli->dopt.log_level++;
		break;
	case OPT_CHECK_CONFIG:
		return set_mode(cli, MODE_CHECK_CONFIG, "--check-config") ? 2 : -1;
	case OPT_PROBE:
		return set_mode(cli, MODE_PROBE, "--probe") ? 2 : -1;
	case OPT_STATUS:
		return set_mode(cli, MODE_STATUS, "--status") ? 2 : -1;
	case OPT_RELEASE_BRAKE:
		return set_mode(cli, MODE_RELEASE_BRAKE, "--release-brake") ? 2 : -1;
	case OPT_CANDIDATES:
		cli->req.candidates = true;
		break;
	case OPT_JSON:
		cli->req.json = true;
		break;
	case OPT_RECORD:
	case OPT_REPLAY:
		if (set_mode(cli, c == OPT_RECORD ? MODE_RECORD : MODE_REPLAY, c == OPT_RECORD ? "--record" : "--replay"))
			return 2;
		cli->trace_path = optarg;
		break;
	case OPT_INTERVAL:
	case OPT_DURATION:
		cli->record_opt = c == OPT_INTERVAL ? "--interval" : "--duration";
		return parse_duration_opt(c, optarg, cli) ? 2 : -1;
	case OPT_ROOT:
		cli->dopt.root = optarg;
		break;
	case OPT_REINIT:
	case OPT_BOOT_COMPLETED:
		if (set_mode(cli, MODE_LMKD_CLIENT, c == OPT_REINIT ? "--reinit" : "--boot-completed"))
			return 2;
		cli->lmkd_cmd = c == OPT_REINIT ? LMKD_UPDATE_PROPS : LMKD_BOOT_COMPLETED;
		break;
	case OPT_VERSION:
		printf("psi-lmkd %s\n", VERSION);
		return 0;
	case 'h':
		usage(stdout);
		return 0;
	default:
		usage(stderr);
		return 2;
	}
	return -1;
}

/* The whole command line: -1 to go on, or the exit status. */
static int parse_args(int argc, char **argv, struct cli *cli)
{
	int c, r;

	while ((c = getopt_long(argc, argv, "c:fnvh", long_opts, NULL)) != -1) {
		if (optarg && !*optarg) { /* no option takes an empty word: "-c ''" or "--config=" */
			const char *opt = argv[optind - 1][0] ? argv[optind - 1] : argv[optind - 2];

			fprintf(stderr, "psi-lmkd: error: %s: the argument is empty\n", opt);
			return 2;
		}
		if ((r = parse_opt(c, cli)) >= 0)
			return r;
	}
	if (optind < argc) {
		fprintf(stderr, "psi-lmkd: error: unexpected argument \"%s\"\n", argv[optind]);
		usage(stderr);
		return 2;
	}
	if ((cli->req.candidates || cli->req.json) && cli->mode != MODE_STATUS) {
		fprintf(stderr, "psi-lmkd: error: --candidates and --json go with --status\n");
		return 2;
	}
	if (cli->record_opt && cli->mode != MODE_RECORD) {
		/* without --record, the daemon would start, detached */
		fprintf(stderr, "psi-lmkd: error: %s goes with --record\n", cli->record_opt);
		return 2;
	}
	return -1;
}

/* path made absolute without resolving symlinks, so that a reload finds it
 * after the daemon chdir()s to /, and reads what the name leads to then.
 * NULL (errno set) when the working directory is unknown. */
static char *absolute_path(const char *path)
{
	char *cwd, *abs;
	size_t size;

	if (path[0] == '/')
		return strdup(path);
	cwd = getcwd(NULL, 0);
	if (!cwd)
		return NULL;
	while (path[0] == '.' && path[1] == '/')
		path += 2 + strspn(path + 2, "/");
	size = strlen(cwd) + 1 + strlen(path) + 1;
	abs = malloc(size);
	if (abs)
		snprintf(abs, size, "%s/%s", strcmp(cwd, "/") != 0 ? cwd : "", path);
	free(cwd);
	return abs;
}

/* Loads the configuration into cfg, with the vendor's drop-ins for the
 * default one; 0 or -errno (the error said). */
static int load_config(const char *config_path, struct config *cfg)
{
	struct config_error err;
	char *abs_path;
	int r;

	abs_path = absolute_path(config_path);
	if (!abs_path)
		fprintf(stderr, "psi-lmkd: warning: cannot resolve %s (%s): a reload (SIGHUP) may not find it\n", config_path,
			strerror(errno));
	r = config_load_file(cfg, abs_path ? abs_path : config_path,
			     strcmp(config_path, DEFAULT_CONFIG) == 0 ? VENDOR_CONFDIR : NULL, &err);
	free(abs_path);
	if (r < 0)
		fprintf(stderr, "psi-lmkd: error: %s\n", err.msg);
	return r;
}

/* --release-brake: memory.high of the configuration's memory cgroup back
 * to what it was before a psi-lmkd braked it (memory_high_brake), for a
 * service manager after the daemon died (ExecStopPost=). Exit 0 when
 * nothing is left braked (nothing was, or it was restored), else 1. */
static int release_brake(const struct config *cfg, const char *root)
{
	char dir[CONFIG_PATH_MAX], v[24];
	int rootfd = sysroot_open(root), r;
	uint64_t to = 0;

	if (rootfd < 0) {
		fprintf(stderr, "psi-lmkd: error: cannot open root %s: %s\n", root, strerror(-rootfd));
		return 1;
	}
	brakeio_memory_cgroup(rootfd, cfg, dir, sizeof(dir));
	r = *dir ? brakeio_release(rootfd, dir, &to) : 0;
	close(rootfd);
	if (r < 0)
		fprintf(stderr, "psi-lmkd: error: cannot restore memory.high of %s: %s\n", dir, strerror(-r));
	else if (r == 1)
		printf("%s: memory.high restored to %s\n", dir, brake_value(v, sizeof(v), to));
	else if (r == 2)
		printf("%s: memory.high was changed since psi-lmkd braked it; left as it is\n", dir);
	return r < 0 ? 1 : 0;
}

/* Every mode but the daemon's; loaded: the configuration could be read
 * (--probe and the lmkd commands run without one). The exit status. */
static int run_command(const struct cli *cli, const struct config *cfg, bool loaded)
{
	int r;

	switch (cli->mode) {
	case MODE_CHECK_CONFIG:
		r = check_pressure_file(cfg, cli->dopt.root);
		if (r == 0)
			printf("%s: OK\n", cli->config_path);
		return r < 0 ? 1 : 0;
	case MODE_PROBE:
	case MODE_RECORD:
	case MODE_REPLAY:
		/* only --probe runs without a configuration (main stops the others) */
		return run_tool(cli->mode, cli->dopt.root, loaded || cli->mode != MODE_PROBE ? cfg : NULL, cli->trace_path,
				cli->interval_us, cli->duration_us);
	case MODE_LMKD_CLIENT:
		return lmkd_client(loaded ? cfg->lmkd_socket : "", cli->lmkd_cmd);
	case MODE_STATUS:
		return query_status(cfg, &cli->req);
	case MODE_RELEASE_BRAKE:
		return release_brake(cfg, cli->dopt.root);
	case MODE_DAEMON:
		break;
	}
	return 1;
}

/* The parsed configuration gets a mapping of its own: the daemon keeps a
 * copy, and unmapping this one after daemon_init returns its pages although
 * mlockall has locked them by then (a free() would leave them in the heap,
 * resident). */
static struct config *config_map(void)
{
	void *p = mmap(NULL, sizeof(struct config), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static void config_unmap(struct config **cfg)
{
	if (*cfg)
		munmap(*cfg, sizeof(**cfg));
	*cfg = NULL;
}

/* The daemon: detach unless -f, start, tell the parent how that went, run.
 * Takes cfg: released once the daemon holds its copy. */
static int run_daemon(struct cli *cli, struct config **cfgp)
{
	const struct config *cfg = *cfgp;
	struct daemon *d = daemon_new();
	int r, ready_fd = -1;

	if (!d) {
		fprintf(stderr, "psi-lmkd: error: out of memory\n");
		return 1;
	}
	cli->dopt.drop_caps = true;
	/* under a fixture root (tests) only a control_socket the file names */
	cli->dopt.control = strcmp(cli->dopt.root, "/") == 0 ||
			    strcmp(cfg->control_socket, CONFIG_DEFAULT_CONTROL_SOCKET) != 0;
	if (!cli->foreground) {
		ready_fd = detach();
		cli->dopt.use_syslog = true;
		r = redirect_stdio(cli->dopt.root);
		if (r < 0) {
			fprintf(stderr, "psi-lmkd: error: cannot open %s/dev/null: %s\n", cli->dopt.root, strerror(-r));
			exit(1); /* no status byte: the parent exits 1 */
		}
	}
	cli->dopt.zeroed = true; /* daemon_new's */
	r = daemon_init(d, cfg, &cli->dopt);
	config_unmap(cfgp);
	if (ready_fd >= 0) {
		char status = r < 0 ? 1 : 0;

		if (write(ready_fd, &status, 1) < 0)
			r = r < 0 ? r : -errno;
		close(ready_fd);
	}
	if (r == 0)
		r = daemon_run(d);
	daemon_deinit(d);
	daemon_delete(d);
	return r < 0 ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct cli cli = { .dopt = { .root = "/", .log_level = LOG_NOTICE }, .config_path = DEFAULT_CONFIG,
			   .mode = MODE_DAEMON, .lmkd_cmd = LMKD_UPDATE_PROPS, .interval_us = 100000 };
	struct config *cfg;
	int r;

	/* before anything is written anywhere */
	r = survive_sigpipe();
	if (r < 0) {
		fprintf(stderr, "psi-lmkd: error: sigaction(SIGPIPE): %s\n", strerror(-r));
		return 1;
	}
	r = parse_args(argc, argv, &cli);
	if (r >= 0)
		return r;
	cfg = config_map();
	if (!cfg) {
		fprintf(stderr, "psi-lmkd: error: out of memory\n");
		return 1;
	}
	r = load_config(cli.config_path, cfg);
	if (r < 0 && cli.mode != MODE_PROBE && cli.mode != MODE_LMKD_CLIENT)
		r = 1;
	else if (cli.mode != MODE_DAEMON)
		r = run_command(&cli, cfg, r == 0);
	else
		r = run_daemon(&cli, &cfg);
	config_unmap(&cfg);
	return r;
}
