// SPDX-License-Identifier: GPL-2.0
/* The process's perf events closed by a process of their own (perf_hand_off.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "perf_hand_off.h"

/* A session holds a few (the classic tracepoints, kprobes and counters); more stay here. */
#define HAND_OFF_MAX	64
/* The skeleton's global data and the ring buffers: a handful of mappings. */
#define MAPS_MAX	64

struct span {
	unsigned long start, len;
};

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

static bool among(int fd, const int *set, int n)
{
	for (int i = 0; i < n; i++)
		if (set[i] == fd)
			return true;
	return false;
}

/* The perf events among the open fds but not[] (links that are perf events themselves), in
 * ascending order. */
static int perf_event_fds(int *fds, int max, const int *not, int n_not)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		char link[64];
		ssize_t len;
		char *end;
		long fd = strtol(e->d_name, &end, 10);

		if (*end || end == e->d_name || fd == dirfd(d) || among((int)fd, not, n_not))
			continue;
		len = readlinkat(dirfd(d), e->d_name, link, sizeof(link) - 1);
		if (len < 0)
			continue;
		link[len] = '\0';
		if (!strcmp(link, "anon_inode:[perf_event]") && n < max)
			fds[n++] = (int)fd;
	}
	closedir(d);
	qsort(fds, (size_t)n, sizeof(*fds), cmp_int);
	return n;
}

/*
 * The process's mappings of BPF maps (the skeleton's global data, ring buffers). Each holds its
 * map: inherited by the other process, every such map (and what it pins) would live until that
 * process ends, and its memory with it. Read here, before the fork: the child may only make
 * async-signal-safe calls.
 */
static int bpf_map_spans(struct span *spans, int max)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char *line = NULL;
	size_t cap = 0;
	int n = 0;

	if (!f)
		return 0;	/* they then stay mapped, as before: nothing is lost */
	while (getline(&line, &cap, f) > 0 && n < max) {
		unsigned long start, end;
		int path = 0;

		if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %n", &start, &end, &path) < 2 || !path)
			continue;
		if (!strncmp(line + path, "anon_inode:bpf-map", 18) && end > start)
			spans[n++] = (struct span){ start, end - start };
	}
	free(line);
	fclose(f);
	return n;
}

/* [from, to] closed: close_range() (Linux 5.9; by syscall(), whatever the C library), else one
 * by one up to the fd limit. */
static void close_span(unsigned int from, unsigned int to)
{
	struct rlimit lim;

	if (from > to || !syscall(SYS_close_range, from, to, 0))
		return;
	if (!getrlimit(RLIMIT_NOFILE, &lim) && lim.rlim_cur <= to)
		to = (unsigned int)lim.rlim_cur - 1;
	for (unsigned int fd = from; fd <= to; fd++)
		close((int)fd);
}

/*
 * The grandchild: every fd but keep[] (the perf events and its ends of the two pipes) closed,
 * stdout's pipe included, whose reader would otherwise wait for it; then `ready`, which tells
 * the parent that the links are its own again; then it waits for the parent to close its
 * references (EOF on `done`), so that the last close, and the grace period, are its own. Only
 * async-signal-safe calls: the parent may have other threads.
 */
static void __attribute__((noreturn)) hold_and_exit(const int *keep, int n, int ready, int done,
						     const struct span *maps, int n_maps,
						     unsigned int hold_s)
{
	struct timespec hold = { .tv_sec = hold_s };
	pid_t self = getpid();
	sigset_t all;
	unsigned int from = 0;
	char byte;

	for (int i = 0; i < n; i++) {
		close_span(from, (unsigned int)keep[i] - 1);
		from = (unsigned int)keep[i] + 1;
	}
	/* To the end: anything another thread opened since the scan goes too. */
	close_span(from, ~0U);
	for (int i = 0; i < n_maps; i++)
		munmap((void *)maps[i].start, maps[i].len);
	prctl(PR_SET_NAME, "vmexit-release", 0, 0, 0);
	/* vmexit's handlers and blocked signals are not its own: a SIGTERM (systemd stopping
	 * serve's unit) ends it, the kernel's wait then running in that exit. */
	for (int sig = 1; sig < NSIG; sig++)
		signal(sig, SIG_DFL);
	sigemptyset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	if (write(ready, &self, sizeof(self)) < 0)
		self = 0;	/* the parent only misses the pid for -v */
	close(ready);
	while (read(done, &byte, 1) < 0 && errno == EINTR)
		;
	close(done);
	/* A test's look at what is held (VMEXIT_TEST_RELEASE_HOLD). */
	while (nanosleep(&hold, &hold) < 0 && errno == EINTR)
		;
	_exit(0);	/* the kernel's wait for the grace period is here, in the exit's close */
}

int perf_events_hand_off(struct perf_hand_off *h, const int *links, int n_links)
{
	const char *hold = getenv("VMEXIT_TEST_RELEASE_HOLD");	/* checked by main() */
	unsigned int hold_s = hold ? (unsigned int)strtoul(hold, NULL, 0) : 0;
	int keep[HAND_OFF_MAX + 2], ready[2], done[2], n, n_maps, status = 0;
	struct span maps[MAPS_MAX];
	pid_t child;
	ssize_t got;
	char byte;

	h->done_fd = -1;
	h->pid = 0;
	n = perf_event_fds(keep, HAND_OFF_MAX, links, n_links);
	if (n <= 0)
		return n;
	n_maps = bpf_map_spans(maps, MAPS_MAX);
	if (pipe2(ready, O_CLOEXEC))
		return -errno;
	if (pipe2(done, O_CLOEXEC)) {
		int err = -errno;

		close(ready[0]);
		close(ready[1]);
		return err;
	}
	keep[n] = ready[1];
	keep[n + 1] = done[0];
	qsort(keep, (size_t)n + 2, sizeof(*keep), cmp_int);
	child = fork();
	if (child < 0) {
		int err = -errno;

		close(ready[0]);
		close(ready[1]);
		close(done[0]);
		close(done[1]);
		return err;
	}
	if (child == 0) {
		/* The child only starts the grandchild: its exit then hands it to init (or to the
		 * nearest subreaper), so that no zombie waits for vmexit to reap it. */
		pid_t g = fork();

		if (g == 0)
			hold_and_exit(keep, n + 2, ready[1], done[0], maps, n_maps, hold_s);
		_exit(g < 0);
	}
	close(ready[1]);
	close(done[0]);
	while (waitpid(child, &status, 0) < 0 && errno == EINTR)
		;
	/* Its pid, then EOF once it holds the perf events alone (EOF alone: it never started). */
	while ((got = read(ready[0], &h->pid, sizeof(h->pid))) < 0 && errno == EINTR)
		;
	if (got != sizeof(h->pid))
		h->pid = 0;
	while (got > 0 && ((got = read(ready[0], &byte, 1)) > 0 || (got < 0 && errno == EINTR)))
		got = 1;
	close(ready[0]);
	h->done_fd = done[1];
	return h->pid && WIFEXITED(status) && !WEXITSTATUS(status) ? n : 0;
}

void perf_hand_off_done(struct perf_hand_off *h)
{
	if (h->done_fd >= 0)
		close(h->done_fd);
	h->done_fd = -1;
}
