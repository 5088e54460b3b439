// SPDX-License-Identifier: GPL-2.0
/* Work a library may crash on, run in a child (see crash_guard.h). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include "crash_guard.h"

/* A sanitizer runtime's, when one is linked in (SAN=1 builds, the fuzzers). */
void __sanitizer_set_death_callback(void (*callback)(void)) __attribute__((weak));

/* Each message is 9 bytes: a tag, then a u64 (pipe writes this small are atomic). */
enum { MSG_MARK = 'm', MSG_DONE = 'd' };

struct crash_guard {
	int fd;
};

static unsigned int limit_s = CRASH_GUARD_SECONDS;

void crash_guard_set_limit(unsigned int seconds)
{
	limit_s = seconds;
}

static void send_msg(int fd, char tag, __u64 v)
{
	char m[9];

	m[0] = tag;
	memcpy(m + 1, &v, sizeof(v));
	/* A short write leaves the parent with the previous mark: no more can be done. */
	if (write(fd, m, sizeof(m)) < 0)
		_exit(127);
}

void crash_guard_at(struct crash_guard *g, __u64 mark)
{
	send_msg(g->fd, MSG_MARK, mark);
}

int crash_guard_run(int (*work)(struct crash_guard *g, void *arg), void *arg,
		    struct crash_guard_result *r)
{
	int p[2], st, err;
	char m[9];
	pid_t pid;
	ssize_t n;

	memset(r, 0, sizeof(*r));
	if (pipe2(p, O_CLOEXEC))
		return -errno;
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		err = -errno;
		close(p[0]);
		close(p[1]);
		return err;
	}
	if (!pid) {
		struct crash_guard g = { .fd = p[1] };
		int null = open("/dev/null", O_WRONLY | O_CLOEXEC);

		close(p[0]);
		if (null >= 0)
			dup2(null, STDERR_FILENO);
		/*
		 * The parent's handlers (Ctrl-C ends a report cleanly; a sanitizer's or libFuzzer's
		 * crash report, which would count the child's death as the parent's) are not the
		 * child's: a fault kills it plainly, without a core file.
		 */
		static const int sigs[] = { SIGINT, SIGTERM, SIGPIPE, SIGSEGV, SIGBUS, SIGFPE,
					    SIGILL, SIGABRT, SIGALRM };
		struct rlimit no_core = { 0, 0 };

		for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
			signal(sigs[i], SIG_DFL);
		setrlimit(RLIMIT_CORE, &no_core);
		if (__sanitizer_set_death_callback)
			__sanitizer_set_death_callback(NULL);
		/* The limit: SIGALRM's default action ends the child (timed_out). */
		alarm(limit_s);
		send_msg(g.fd, MSG_DONE, (__u64)(__s64)work(&g, arg));
		/* _exit: no atexit work (a leak check of the library's parse) in the child. */
		_exit(0);
	}
	close(p[1]);
	for (;;) {
		size_t got = 0;

		while (got < sizeof(m)) {
			n = read(p[0], m + got, sizeof(m) - got);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break;
			got += (size_t)n;
		}
		if (got < sizeof(m))
			break;
		if (m[0] == MSG_DONE) {
			__u64 v;

			memcpy(&v, m + 1, sizeof(v));
			r->done = true;
			r->status = (int)(__s64)v;
		} else {
			memcpy(&r->mark, m + 1, sizeof(r->mark));
			r->marked = true;
		}
	}
	close(p[0]);
	while (waitpid(pid, &st, 0) < 0) {
		if (errno != EINTR)
			return -errno;
	}
	if (!r->done) {
		r->killed = WIFSIGNALED(st);
		r->status = r->killed ? WTERMSIG(st) : WEXITSTATUS(st);
		r->timed_out = r->killed && r->status == SIGALRM;
	}
	return 0;
}

void crash_guard_death(const struct crash_guard_result *r, char *buf, size_t len)
{
	if (r->timed_out)
		snprintf(buf, len, "did not finish within %u s", limit_s);
	else
		snprintf(buf, len, "crashed: %s %d", r->killed ? "signal" : "exit", r->status);
}
