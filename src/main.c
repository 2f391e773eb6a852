/* main: command line, exit codes and (without -f) detaching into the
 * background. Everything else is in the daemon module.
 * Exit codes: 0 success, 1 bad config or failure to start, 2 bad usage. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "daemon.h"

#ifndef SYSCONFDIR
#define SYSCONFDIR "/etc"
#endif

#define DEFAULT_CONFIG SYSCONFDIR "/psi-lmkd.conf"

enum {
	OPT_CHECK_CONFIG = 0x100,
	OPT_VERSION,
	OPT_ROOT,
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: psi-lmkd [OPTION]...\n"
		"Kill the least important process when the kernel reports memory stall (PSI).\n"
		"\n"
		"  -c, --config FILE   configuration file (default " DEFAULT_CONFIG ")\n"
		"  -f, --foreground    stay in the foreground and log to stderr\n"
		"                      (default: detach and log to syslog)\n"
		"  -n, --dry-run       decide and log \"would-kill\", never send a signal\n"
		"      --check-config  validate the configuration, print the effective tiers, exit\n"
		"  -v, --verbose       more log output (repeat for debug)\n"
		"      --root DIR      read /proc, /sys and pressure files under DIR (for tests)\n"
		"      --version       print the version and exit\n"
		"  -h, --help          print this help and exit\n"
		"\n"
		"Signals: SIGHUP reloads the configuration, SIGUSR1 logs the status,\n"
		"SIGTERM and SIGINT stop the daemon.\n"
		"Exit status: 0 success, 1 bad configuration or failure to start, 2 bad usage.\n");
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

static void redirect_stdio(void)
{
	FILE *f;

	f = freopen("/dev/null", "r", stdin);
	f = f ? freopen("/dev/null", "w", stdout) : NULL;
	f = f ? freopen("/dev/null", "w", stderr) : NULL;
	(void)f;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "foreground", no_argument, NULL, 'f' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "check-config", no_argument, NULL, OPT_CHECK_CONFIG },
		{ "verbose", no_argument, NULL, 'v' },
		{ "root", required_argument, NULL, OPT_ROOT },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct daemon_options dopt = { .root = "/", .log_level = LOG_NOTICE };
	const char *config_path = DEFAULT_CONFIG;
	bool foreground = false, check_only = false;
	struct config_error err;
	struct config *cfg;
	struct daemon *d;
	char *abs_path;
	int c, r, ready_fd = -1;

	while ((c = getopt_long(argc, argv, "c:fnvh", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			config_path = optarg;
			break;
		case 'f':
			foreground = true;
			break;
		case 'n':
			dopt.dry_run = true;
			break;
		case 'v':
			if (dopt.log_level < LOG_DEBUG)
				dopt.log_level++;
			break;
		case OPT_CHECK_CONFIG:
			check_only = true;
			break;
		case OPT_ROOT:
			dopt.root = optarg;
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
	}
	if (optind < argc) {
		fprintf(stderr, "psi-lmkd: error: unexpected argument \"%s\"\n", argv[optind]);
		usage(stderr);
		return 2;
	}

	cfg = malloc(sizeof(*cfg));
	d = malloc(sizeof(*d));
	if (!cfg || !d) {
		fprintf(stderr, "psi-lmkd: error: out of memory\n");
		return 1;
	}
	/* absolute, so that a reload still finds it after the daemon chdir()s to / */
	abs_path = realpath(config_path, NULL);
	r = config_load_file(cfg, abs_path ? abs_path : config_path, &err);
	free(abs_path);
	if (r < 0) {
		fprintf(stderr, "psi-lmkd: error: %s\n", err.msg);
		return 1;
	}
	if (check_only) {
		config_print(cfg, stdout);
		printf("%s: OK\n", config_path);
		return 0;
	}

	if (!foreground) {
		ready_fd = detach();
		dopt.use_syslog = true;
		redirect_stdio();
	}
	r = daemon_init(d, cfg, &dopt);
	if (ready_fd >= 0) {
		char status = r < 0 ? 1 : 0;

		if (write(ready_fd, &status, 1) < 0)
			r = r < 0 ? r : -errno;
		close(ready_fd);
	}
	if (r == 0)
		r = daemon_run(d);
	daemon_deinit(d);
	free(d);
	free(cfg);
	return r < 0 ? 1 : 0;
}
