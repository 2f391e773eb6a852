/* SPDX-License-Identifier: MIT */
/* zleader - a live process whose thread-group leader has exited.
 *
 * Usage: zleader MIB ADJ
 *
 * Sets /proc/self/oom_score_adj to ADJ, starts a second thread, waits for
 * SIGUSR1 (so that whoever starts it can first see it alive, as a test
 * harness does) and then ends the main thread with pthread_exit(). The
 * process lives on in the second thread,
 * which makes MIB MiB of anonymous memory resident, waits until the leader
 * shows state Z in /proc/PID/stat (and has no VmRSS of its own), prints
 * "ready <pid>" on stdout and sleeps until killed. Such a process is what
 * review C3 found invisible to psi-lmkd: state Z, no VmRSS, yet alive and
 * as large as MIB.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define KH_NAME "zleader"
#include "khelper.h"

static long mib;
static pid_t tgid;

/* The state letter of the thread-group leader, from /proc/TGID/stat. */
static char leader_state(void)
{
	char path[64], buf[1024], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)tgid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		kh_die("open", path);
	n = read(fd, buf, sizeof(buf) - 1);
	if (n < 0)
		kh_die("read", path);
	close(fd);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : '?';
}

static void *worker(void *arg)
{
	size_t size = (size_t)mib << 20;
	long page = sysconf(_SC_PAGESIZE);
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	unsigned char *mem;
	int i;

	(void)arg;
	if (page <= 0)
		page = 4096;
	mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		kh_die("mmap", NULL);
	kh_touch(mem, 0, size, (size_t)page);
	for (i = 0; leader_state() != 'Z'; i++) {
		if (i == 6000) { /* a minute */
			errno = ETIMEDOUT;
			kh_die("waiting for the leader to exit", NULL);
		}
		nanosleep(&ts, NULL);
	}
	if (printf("ready %ld\n", (long)tgid) < 0 || fflush(stdout) != 0)
		kh_die("stdout", NULL);
	for (;;)
		pause();
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;
	sigset_t usr1;
	int r, sig;

	if (argc != 3) {
		fprintf(stderr, "usage: zleader MIB ADJ\n");
		return 2;
	}
	mib = kh_parse_long(argv[1], 1, 65536, "MIB");
	kh_set_oom_score_adj(kh_parse_long(argv[2], -1000, 1000, "ADJ"));
	tgid = getpid();
	/* blocked in both threads: the main one takes it with sigwait() */
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	r = pthread_sigmask(SIG_BLOCK, &usr1, NULL);
	if (r == 0)
		r = pthread_create(&t, NULL, worker, NULL);
	if (r != 0) {
		errno = r;
		kh_die("pthread_create", NULL);
	}
	r = sigwait(&usr1, &sig);
	if (r != 0) {
		errno = r;
		kh_die("sigwait", NULL);
	}
	pthread_exit(NULL);
}
