// SPDX-License-Identifier: GPL-2.0
/* process_stats: this test process's own numbers, checked against what it did and knows. */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include "check.h"
#include "process_stats.h"

int main(void)
{
	struct process_stats a, b;
	struct timespec now;
	struct rlimit rl;
	__u64 now_ms;
	int fds[5];
	char *mem;

	clock_gettime(CLOCK_REALTIME, &now);
	now_ms = (__u64)now.tv_sec * 1000 + now.tv_nsec / 1000000;
	CHECK(!process_stats_read(&a));
	/* Started before now, and not long before: a test runs for seconds, not an hour. */
	CHECK(a.start_ms <= now_ms + 20);
	CHECK(a.start_ms + 3600 * 1000 > now_ms);
	CHECK(!getrlimit(RLIMIT_NOFILE, &rl));
	CHECK_EQ_U64(a.max_fds, rl.rlim_cur);
	CHECK(a.resident_bytes > 0 && a.virtual_bytes >= a.resident_bytes);

	/* Five more fds, 64 MB more touched, 50 ms of CPU. */
	for (int i = 0; i < 5; i++)
		fds[i] = open("/dev/null", O_RDONLY);
	mem = malloc(64 << 20);
	for (size_t i = 0; mem && i < 64 << 20; i += 4096)
		mem[i] = 1;
	do
		CHECK(!process_stats_read(&b));
	while (b.cpu_ns < a.cpu_ns + 50000000 && !check_failures);
	CHECK_EQ_U64(b.open_fds, a.open_fds + 5);
	CHECK(b.resident_bytes >= a.resident_bytes + (60 << 20));
	CHECK(b.virtual_bytes >= a.virtual_bytes + (60 << 20));
	CHECK_EQ_U64(b.start_ms, a.start_ms);
	for (int i = 0; i < 5; i++)
		close(fds[i]);
	free(mem);
	CHECK(!process_stats_read(&b));
	CHECK_EQ_U64(b.open_fds, a.open_fds);
	CHECK_DONE("process_stats");
}
