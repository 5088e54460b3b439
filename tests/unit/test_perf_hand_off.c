// SPDX-License-Identifier: GPL-2.0
/*
 * perf_events_hand_off() (src/kernel/perf_hand_off.h) on real perf events of this process
 * (software "dummy" events: any kernel, no tracepoint needed): the other process holds exactly
 * the perf events that are not links, at their fd numbers, and its end of the pipe, nothing else;
 * a perf event named as a link (kernels before 5.15, where the link is the event) stays here; the
 * process ends once perf_hand_off_done() is called.
 */
#include <errno.h>
#include <dirent.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "perf_hand_off.h"

static int dummy_event(void)
{
	struct perf_event_attr a = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(a),
		.config = PERF_COUNT_SW_DUMMY,
		.disabled = 1,
		/* What an unprivileged user may open where perf_event_paranoid is 2. */
		.exclude_kernel = 1,
		.exclude_hv = 1,
	};

	return (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

static const char *fd_kind(pid_t pid, int fd, char *buf, size_t len)
{
	char path[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)pid, fd);
	n = readlink(path, buf, len - 1);
	if (n < 0)
		return "(closed)";
	buf[n] = '\0';
	return buf;
}

static int count_fds(pid_t pid)
{
	char path[64];
	struct dirent *e;
	DIR *d;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	d = opendir(path);
	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/* Gone, or a zombie its reaper has not reaped yet. */
static int gone(pid_t pid)
{
	char path[64], state = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 1;
	if (fscanf(f, "%*d (%*[^)]) %c", &state) != 1)
		state = 0;
	fclose(f);
	return state == 'Z' || state == 'X';
}

int main(void)
{
	struct perf_hand_off h = { .done_fd = -1 };
	struct timespec tick = { .tv_nsec = 20 * 1000 * 1000 };
	char buf[128];
	int ev[3], held, waited;

	for (int i = 0; i < 3; i++) {
		ev[i] = dummy_event();
		if (ev[i] < 0 && geteuid() != 0 && (errno == EACCES || errno == EPERM)) {
			printf("SKIP: perf_hand_off: perf_event_open refused (%s): run as root\n",
			       strerror(errno));
			return 77;
		}
		if (ev[i] < 0) {
			fprintf(stderr, "perf_event_open (a software dummy event) failed: %s; run "
				"as root or lower kernel.perf_event_paranoid\n", strerror(errno));
			CHECK(ev[i] >= 0);
			CHECK_DONE("perf_hand_off");
		}
	}
	/* ev[1] stands for a link that is its perf event. */
	held = perf_events_hand_off(&h, &ev[1], 1);
	CHECK_EQ_U64(held, 2);
	CHECK(h.pid > 0);
	CHECK(h.done_fd >= 0);
	if (h.pid > 0) {
		CHECK_STR(fd_kind(h.pid, ev[0], buf, sizeof(buf)), "anon_inode:[perf_event]");
		CHECK_STR(fd_kind(h.pid, ev[2], buf, sizeof(buf)), "anon_inode:[perf_event]");
		CHECK_STR(fd_kind(h.pid, ev[1], buf, sizeof(buf)), "(closed)");
		CHECK_STR(fd_kind(h.pid, 1, buf, sizeof(buf)), "(closed)");
		/* The two events and the pipe it waits on. */
		CHECK_EQ_U64(count_fds(h.pid), 3);
	}
	/* Still ours too: the other process holds references, not the only ones. */
	for (int i = 0; i < 3; i++)
		CHECK_STR(fd_kind(getpid(), ev[i], buf, sizeof(buf)), "anon_inode:[perf_event]");
	for (int i = 0; i < 3; i++)
		close(ev[i]);
	perf_hand_off_done(&h);
	CHECK(h.done_fd == -1);
	for (waited = 0; h.pid > 0 && !gone(h.pid) && waited < 250; waited++)
		nanosleep(&tick, NULL);
	CHECK(h.pid <= 0 || gone(h.pid));

	/* No perf event open: nothing to hand off, no process. */
	held = perf_events_hand_off(&h, NULL, 0);
	CHECK_EQ_U64(held, 0);
	CHECK(h.pid == 0);
	perf_hand_off_done(&h);
	CHECK_DONE("perf_hand_off");
}
