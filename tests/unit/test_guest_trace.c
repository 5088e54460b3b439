// SPDX-License-Identifier: GPL-2.0
/*
 * report --guest-trace's two jobs apart: the Chrome JSON reader (phases, exact fixed-point
 * times past 2^53, both document shapes, args.vcpu, skipped metadata; a file cut at every byte
 * is an error naming an offset, never a crash) and the clock (guest TSC to host ns through an
 * offset, a scaling ratio and the recording's two pairs, an offset rewritten mid-run, the
 * rate's sources and their errors). Expected values come from the arithmetic of guest_clock.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include "check.h"
#include "exit_times.h"
#include "guest_clock.h"
#include "guest_trace.h"

static char path[] = "/tmp/vmexit-test-gtXXXXXX";

static void put(const char *text, size_t len)
{
	FILE *f = fopen(path, "w");

	CHECK(f && fwrite(text, 1, len, f) == len);
	if (f)
		fclose(f);
}

struct got {
	int n;
	struct guest_trace_event e[8];
	char names[8][32];
};

static int collect(void *ctx, const struct guest_trace_event *e)
{
	struct got *g = ctx;

	if (g->n < 8) {
		g->e[g->n] = *e;
		snprintf(g->names[g->n], sizeof(g->names[0]), "%s", e->name);
	}
	g->n++;
	return 0;
}

static const char doc[] =
	"{\"otherData\":{\"x\":[1,2,{\"y\":null}]},\"traceEvents\":[\n"
	"{\"ts\":1125963164599852.123,\"ph\":\"B\",\"pid\":7,\"tid\":8,\"name\":\"main\"},\n"
	"{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":7,\"tid\":8,\"args\":{\"name\":\"t\"}},\n"
	"{\"ts\":2.5,\"ph\":\"X\",\"dur\":0.0016,\"name\":\"a\\\"b\\u0041\",\"args\":"
	"{\"vcpu\":3,\"z\":[true,false]}},\n"
	"{\"ts\":3,\"ph\":\"I\",\"tid\":\"9\"},\n"
	"{\"ts\":4e3,\"ph\":\"E\",\"pid\":7,\"tid\":8},\n"
	"],\"displayTimeUnit\":\"ns\"}\n";

static void test_reader(void)
{
	struct got g = {};
	char err[512] = "";

	put(doc, sizeof(doc) - 1);
	CHECK_EQ_U64(guest_trace_read(path, collect, &g, err, sizeof(err)), 0);
	CHECK_EQ_U64(g.n, 4);
	CHECK_EQ_U64(g.e[0].ph, 'B');
	/* Past 2^53: a double would have lost the last digits. */
	CHECK_EQ_U64(g.e[0].ts, 1125963164599852123ull);
	CHECK_EQ_U64(g.e[0].pid, 7);
	CHECK_EQ_U64(g.e[0].tid, 8);
	CHECK_EQ_U64((__u64)(__s64)g.e[0].vcpu, (__u64)-1);
	CHECK_EQ_U64(g.e[0].line, 2);
	CHECK_STR(g.names[0], "main");
	CHECK_EQ_U64(g.e[1].ph, 'X');
	CHECK_EQ_U64(g.e[1].ts, 2500);
	CHECK_EQ_U64(g.e[1].dur, 2);		/* 1.6 rounds to 2 */
	CHECK_EQ_U64(g.e[1].vcpu, 3);
	CHECK_STR(g.names[1], "a\"bA");
	CHECK_EQ_U64(g.e[1].line, 4);
	CHECK_EQ_U64(g.e[2].ph, 'i');
	CHECK_EQ_U64(g.e[2].tid, 9);
	CHECK_EQ_U64(g.e[3].ph, 'E');
	CHECK_EQ_U64(g.e[3].ts, 4000000);

	/* The bare array form. */
	g.n = 0;
	put("[{\"ts\":1,\"ph\":\"B\",\"name\":\"x\"}]",
	    strlen("[{\"ts\":1,\"ph\":\"B\",\"name\":\"x\"}]"));
	CHECK_EQ_U64(guest_trace_read(path, collect, &g, err, sizeof(err)), 0);
	CHECK_EQ_U64(g.n, 1);
}

static void bad(const char *text, const char *want)
{
	struct got g = {};
	char err[512] = "";

	put(text, strlen(text));
	CHECK_EQ_U64(guest_trace_read(path, collect, &g, err, sizeof(err)), (__u64)-EINVAL);
	if (!strstr(err, want))
		fprintf(stderr, "  '%s': got '%s', want '%s'\n", text, err, want);
	CHECK(strstr(err, want) != NULL);
}

static void test_errors(void)
{
	char want[600];

	/* Cut at every byte: an error naming the file (none of the prefixes is a whole trace). */
	for (size_t len = 0; len < sizeof(doc) - 2; len++) {
		struct got g = {};
		char err[512] = "";
		int ret;

		put(doc, len);
		ret = guest_trace_read(path, collect, &g, err, sizeof(err));
		CHECK(ret == -EINVAL && strncmp(err, path, strlen(path)) == 0);
	}
	snprintf(want, sizeof(want), "%s: offset 17: the file ends inside the trace", path);
	bad("{\"traceEvents\":[{", want);
	snprintf(want, sizeof(want), "%s:3: an event of phase B has no ts", path);
	bad("{\"traceEvents\":[\n{\"ts\":1,\"ph\":\"E\"},\n{\"ph\":\"B\"}]}", want);
	snprintf(want, sizeof(want), "%s:2: a negative ts", path);
	bad("[\n{\"ts\":-1,\"ph\":\"B\"}]", want);
	snprintf(want, sizeof(want), "%s:1: no \"traceEvents\" array", path);
	bad("{\"a\":1}", want);
	snprintf(want, sizeof(want), "%s:1: data after the trace", path);
	bad("[] x", want);
}

/* One event named name (JSON text, escapes as they are) with the given ts and more members. */
static int one(const char *ts, const char *rest, struct got *g, char *err, size_t errlen)
{
	char text[512];

	snprintf(text, sizeof(text), "[{\"ph\":\"X\",\"ts\":%s%s}]", ts, rest);
	put(text, strlen(text));
	memset(g, 0, sizeof(*g));
	return guest_trace_read(path, collect, g, err, errlen);
}

/*
 * Times past what 64 bits hold (the number times 1000) are refused, by the exponent path as by
 * the digits (which must not wrap either); up to it they are exact. Values only skipped
 * (args) may be any number.
 */
static void test_time_range(void)
{
	static const char *const too_large[] = {
		"1e17", "1e19", "1e300", "1e400", "18446744073709551.616", "18446744073709551.6155",
		"18446744073709552", "99999999999999999999", "18446744073709551615000",
	};
	struct got g;
	char err[512];

	for (size_t i = 0; i < sizeof(too_large) / sizeof(too_large[0]); i++) {
		err[0] = '\0';
		CHECK_EQ_U64(one(too_large[i], "", &g, err, sizeof(err)), (__u64)-EINVAL);
		if (!strstr(err, ":1: ts too large: past 18446744073709551.615"))
			fprintf(stderr, "  ts %s: '%s'\n", too_large[i], err);
		CHECK(strstr(err, ":1: ts too large: past 18446744073709551.615") != NULL);
		CHECK_EQ_U64(g.n, 0);
	}
	CHECK_EQ_U64(one("1", ",\"dur\":1e300", &g, err, sizeof(err)), (__u64)-EINVAL);
	CHECK(strstr(err, ":1: dur too large: past 18446744073709551.615") != NULL);
	/* Each fits, the sum does not. */
	CHECK_EQ_U64(one("18446744073709551", ",\"dur\":1", &g, err, sizeof(err)),
		     (__u64)-EINVAL);
	CHECK(strstr(err, ":1: ts + dur too large: past 18446744073709551.615") != NULL);
	/* The largest, both ways: exact. */
	CHECK_EQ_U64(one("18446744073709551.615", "", &g, err, sizeof(err)), 0);
	CHECK_EQ_U64(g.n, 1);
	CHECK_EQ_U64(g.e[0].ts, ~0ull);
	CHECK_EQ_U64(one("1.8e16", "", &g, err, sizeof(err)), 0);
	CHECK_EQ_U64(g.e[0].ts, 18000000000000000000ull);	/* 9 * 5^18 * 2^19: exact */
	CHECK_EQ_U64(one("1e16", ",\"dur\":2.5E-3", &g, err, sizeof(err)), 0);
	CHECK_EQ_U64(g.e[0].ts, 10000000000000000000ull);
	CHECK_EQ_U64(g.e[0].dur, 3);
	CHECK_EQ_U64(one("1", ",\"args\":{\"a\":1e300,\"b\":-99999999999999999999999,\"vcpu\":2}",
			 &g, err, sizeof(err)), 0);
	CHECK_EQ_U64(g.e[0].vcpu, 2);
	CHECK_EQ_U64(one("1e", "", &g, err, sizeof(err)), (__u64)-EINVAL);
	CHECK(strstr(err, ":1: a bad exponent") != NULL);
}

/* A NUL in a name, escaped or raw, shows as '?': it must not cut the name short. */
static void test_nul_in_name(void)
{
	static const char text[] = "[{\"ph\":\"i\",\"ts\":1,\"name\":\"a\\u0000b\"},"
				   "{\"ph\":\"i\",\"ts\":2,\"name\":\"c\0d\"}]";
	struct got g = {};
	char err[512] = "";

	put(text, sizeof(text) - 1);
	CHECK_EQ_U64(guest_trace_read(path, collect, &g, err, sizeof(err)), 0);
	CHECK_EQ_U64(g.n, 2);
	CHECK_STR(g.names[0], "a?b");
	CHECK_STR(g.names[1], "c?d");
}

/*
 * 300,000 \u escapes in a name, the input ending exactly at a page the process may not read:
 * each escape is decoded from its own 4 bytes, never by scanning on towards (and past) the end
 * of the input. A decoder that looked further (sscanf measures the rest of its input) dies
 * here at the first escape, and took time quadratic in the escapes (the bench times it).
 */
#define ESCAPES		300000

static void test_escapes_bounded(void)
{
	static const char head[] = "[{\"ph\":\"i\",\"ts\":1,\"name\":\"", tail[] = "\"}]";
	size_t page = sysconf(_SC_PAGESIZE);
	size_t len = sizeof(head) - 1 + 6 * ESCAPES + sizeof(tail) - 1;
	size_t span = (len + page - 1) / page * page;
	char *map = mmap(NULL, span + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			 -1, 0);
	char *data, *p, err[512] = "";
	struct got g = {};

	CHECK(map != MAP_FAILED);
	if (map == MAP_FAILED)
		return;
	CHECK(!mprotect(map + span, page, PROT_NONE));
	data = map + span - len;
	p = data + sizeof(head) - 1;
	memcpy(data, head, sizeof(head) - 1);
	for (int i = 0; i < ESCAPES; i++, p += 6)
		memcpy(p, i % 2 ? "\\u0062" : "\\u0041", 6);
	memcpy(p, tail, sizeof(tail) - 1);
	CHECK_EQ_U64(guest_trace_read_mem("mem", data, len, collect, &g, err, sizeof(err)), 0);
	CHECK_EQ_U64(g.n, 1);
	CHECK_STR(g.names[0], "AbAbAbAbAbAbAbAbAbAbAbAbAbAbAbA");	/* collect keeps 31 */
	/* Cut inside an escape, against the page: refused, nothing read past it. */
	for (size_t digits = 0; digits < 4; digits++) {
		char cut[64];
		size_t n = snprintf(cut, sizeof(cut), "%s\\u%.*s", head, (int)digits, "0041");

		memcpy(map + span - n, cut, n);
		err[0] = '\0';
		CHECK_EQ_U64(guest_trace_read_mem("mem", map + span - n, n, collect, &g, err,
						  sizeof(err)), (__u64)-EINVAL);
		CHECK(strstr(err, "a bad \\u escape") != NULL);
	}
	munmap(map, span + page);
}

/*
 * The file is parsed as it is read, not loaded first: a 512 MB sparse file that starts like a
 * trace and is NULs from byte 17 is refused there, reading a window of it. Peak RSS (which
 * only grows) rises by far less than the file; loading it would add 512 MB. Then a character
 * device that never ends (which a loader would read until memory ran out).
 */
static void test_streamed(void)
{
	static const char start[] = "{\"traceEvents\":[";
	struct rusage before, after;
	struct got g = {};
	char err[512] = "";
	int fd;

	put(start, sizeof(start) - 1);
	CHECK(!truncate(path, 512ll << 20));
	getrusage(RUSAGE_SELF, &before);
	CHECK_EQ_U64(guest_trace_read(path, collect, &g, err, sizeof(err)), (__u64)-EINVAL);
	getrusage(RUSAGE_SELF, &after);
	CHECK(strstr(err, ":1: an object was expected") != NULL);
	printf("512 MB sparse trace: peak RSS %ld kB before, %ld kB after\n", before.ru_maxrss,
	       after.ru_maxrss);
	CHECK(after.ru_maxrss - before.ru_maxrss < 32 << 10);
	CHECK(!truncate(path, 0));

	fd = open("/dev/zero", O_RDONLY);
	if (fd >= 0) {
		close(fd);
		CHECK_EQ_U64(guest_trace_read("/dev/zero", collect, &g, err, sizeof(err)),
			     (__u64)-EINVAL);
		CHECK_STR(err, "/dev/zero:1: not a Chrome trace: '{' or '[' was expected");
	}
}

/* 3 GHz: start pair (10^12 ticks, 5 s), end pair one second later. */
static void clock_init(struct guest_clock *gc)
{
	memset(gc, 0, sizeof(*gc));
	gc->start = (struct tsc_pair){ .tsc = 1000000000000ull, .mono_ns = 5000000000ull };
	gc->end = (struct tsc_pair){ .tsc = 1003000000000ull, .mono_ns = 6000000000ull };
}

static void test_clock(void)
{
	struct guest_clock gc;
	char err[256];
	__u64 ns = 0, off = 1ull << 50;

	clock_init(&gc);
	CHECK_EQ_U64(guest_clock_set_rate(&gc, 0, 0, err, sizeof(err)), 0);
	CHECK(gc.tsc_hz > 2999999999.0 && gc.tsc_hz < 3000000001.0);
	CHECK_EQ_U64(guest_clock_to_host(&gc, 10, 0, 5, &ns), (__u64)-ENOENT);
	CHECK_EQ_U64(guest_clock_vcpu(&gc, 10, -1), (__u64)-1);
	/* Written at 5 s, rewritten at 5.5 s to 1000 ticks less (the guest's clock stepped). */
	CHECK(!guest_clock_add_offset(&gc, 10, 1, 5000000000ull, off));
	CHECK(!guest_clock_add_offset(&gc, 10, 2, 5000000000ull, off));
	CHECK(!guest_clock_add_offset(&gc, 10, 1, 5500000000ull, off - 3000));
	CHECK_EQ_U64(guest_clock_vcpu(&gc, 10, -1), 1);
	CHECK_EQ_U64(guest_clock_vcpu(&gc, 10, 2), 2);
	CHECK_EQ_U64((__u64)(__s64)guest_clock_vcpu(&gc, 10, 7), (__u64)-1);
	/* 3 ms after the start pair, under the first offset. */
	CHECK_EQ_U64(guest_clock_to_host(&gc, 10, 1, 1000009000000ull + off, &ns), 0);
	CHECK_EQ_U64(ns, 5003000000ull);
	/* 0.6 s in: placed by the second offset, which is 1 us (3000 ticks) less. */
	CHECK_EQ_U64(guest_clock_to_host(&gc, 10, 1, 1001800000000ull + off - 3000, &ns), 0);
	CHECK_EQ_U64(ns, 5600000000ull);
	/* vCPU 2 kept its offset. */
	CHECK_EQ_U64(guest_clock_to_host(&gc, 10, 2, 1001800000000ull + off, &ns), 0);
	CHECK_EQ_U64(ns, 5600000000ull);
	/* A guest TSC that lands before the clock's 0. */
	CHECK_EQ_U64(guest_clock_to_host(&gc, 10, 2, off, &ns), (__u64)-ERANGE);

	/* Scaled by 1.5: guest = host * 1.5 + offset. */
	CHECK(!guest_clock_add_scale(&gc, 10, 2, 3ull << 47, 48));
	CHECK_EQ_U64(guest_clock_to_host(&gc, 10, 2, 1500004500000ull + off, &ns), 0);
	CHECK_EQ_U64(ns, 5001000000ull);
	CHECK((__u64)guest_clock_guest_hz(&gc, 10, 2) == 4500000000ull);
	guest_clock_free(&gc);

	/* The rate: --tsc-mhz, then the kernel's kHz, then the pairs; errors without them. */
	clock_init(&gc);
	CHECK_EQ_U64(guest_clock_set_rate(&gc, 2000, 2500000, err, sizeof(err)), 0);
	CHECK(gc.tsc_hz == 2e9);
	gc.tsc_hz = 0;
	CHECK_EQ_U64(guest_clock_set_rate(&gc, 0, 2500000, err, sizeof(err)), 0);
	CHECK(gc.tsc_hz == 2.5e9);
	gc.tsc_hz = 0;
	gc.end.mono_ns = 0;
	CHECK_EQ_U64(guest_clock_set_rate(&gc, 0, 0, err, sizeof(err)), (__u64)-EINVAL);
	CHECK(strstr(err, "give --tsc-mhz") != NULL);
	gc.start.mono_ns = 0;
	CHECK_EQ_U64(guest_clock_set_rate(&gc, 3000, 0, err, sizeof(err)), (__u64)-EINVAL);
	CHECK(strstr(err, "has no host TSC clock") != NULL);
	guest_clock_free(&gc);

	/*
	 * Past what a signed 64-bit ns holds: --tsc-mhz 1 makes 2^62 ticks 4.6 x 10^24 ns, and at
	 * 1000 MHz 2^63 - 1 s of ticks after a start at 5 s sums past 2^63 (the sum alone).
	 */
	clock_init(&gc);
	CHECK_EQ_U64(guest_clock_set_rate(&gc, 1, 0, err, sizeof(err)), 0);
	CHECK(!guest_clock_add_offset(&gc, 10, 0, 5000000000ull, off));
	CHECK_EQ_U64(guest_clock_to_host(&gc, 10, 0, off + gc.start.tsc + (1ull << 62), &ns),
		     (__u64)-EOVERFLOW);
	gc.tsc_hz = 1e9;
	CHECK_EQ_U64(guest_clock_to_host(&gc, 10, 0, off + gc.start.tsc + (1ull << 63) -
					 1000000000ull, &ns), (__u64)-EOVERFLOW);
	/* A time within range still places at that rate. */
	ns = 0;
	CHECK_EQ_U64(guest_clock_to_host(&gc, 10, 0, off + gc.start.tsc + 1000000000ull, &ns), 0);
	CHECK_EQ_U64(ns, 6000000000ull);
	guest_clock_free(&gc);
}

/* Who wrote it: uftrace says so in metadata.version (after the events), others do not. */
static void test_kind(void)
{
	static const char uf[] = "{\"traceEvents\":[{\"ts\":1,\"ph\":\"B\",\"name\":\"m\"}], "
		"\"displayTimeUnit\": \"ns\", \"metadata\": {\"x\":{\"version\":1},"
		"\"version\":\"uftrace v0.13 ( x86_64 dwarf )\",\"command_line\":\"a\"} }";
	static const char other[] = "{\"traceEvents\":[], \"metadata\": {\"version\":\"x\"}}";
	enum guest_trace_kind kind = GUEST_TRACE_TRACEDAT;
	struct got g = {};
	char err[512] = "";

	put(uf, sizeof(uf) - 1);
	CHECK_EQ_U64(guest_trace_read_kind(path, collect, &g, &kind, err, sizeof(err)), 0);
	CHECK_EQ_U64(kind, GUEST_TRACE_UFTRACE);
	CHECK_EQ_U64(g.n, 1);
	put(other, sizeof(other) - 1);
	CHECK_EQ_U64(guest_trace_read_kind(path, collect, &g, &kind, err, sizeof(err)), 0);
	CHECK_EQ_U64(kind, GUEST_TRACE_JSON);
	put(doc, sizeof(doc) - 1);
	CHECK_EQ_U64(guest_trace_read_kind(path, collect, &g, &kind, err, sizeof(err)), 0);
	CHECK_EQ_U64(kind, GUEST_TRACE_JSON);
}

/*
 * Offsets read from KVM's debugfs (record 1.7): a vCPU running before the recording has only
 * the start's read, in effect from before it; a traced write KVM did not apply as traced (the
 * read made for it differs) is placed by the read and noted; a write with no read after it
 * (the vCPU gone first) stays as traced.
 */
static void test_applied(void)
{
	struct guest_clock gc;
	char err[256];
	__u64 ns = 0, off = 1ull << 50, bad = (__u64)-2285378128520ll;

	clock_init(&gc);
	CHECK_EQ_U64(guest_clock_set_rate(&gc, 0, 0, err, sizeof(err)), 0);
	/* Guest 10, vCPU 0: running before; read at 5.1 s (after the start pair). */
	CHECK(!guest_clock_add_applied(&gc, 10, 0, 5100000000ull, 0, off));
	/* Guest 20, vCPU 0: created at 5.2 s, traced bad, read 0 right after. vCPU 1: traced
	 * at 5.3 s, never read. */
	CHECK(!guest_clock_add_offset(&gc, 20, 0, 5200000000ull, bad));
	CHECK(!guest_clock_add_applied(&gc, 20, 0, 5200100000ull, 5200000000ull, 0));
	CHECK(!guest_clock_add_offset(&gc, 20, 1, 5300000000ull, off));
	CHECK(!guest_clock_resolve(&gc));
	CHECK_EQ_U64(gc.nr_mis, 1);
	if (gc.nr_mis == 1) {
		CHECK_EQ_U64(gc.mis[0].tgid, 20);
		CHECK_EQ_U64(gc.mis[0].traced, bad);
		CHECK_EQ_U64(gc.mis[0].applied, 0);
	}
	CHECK_EQ_U64(guest_clock_vcpu(&gc, 10, -1), 0);
	/* 3 ms after the start pair, before the read: the read's offset holds from before. */
	CHECK_EQ_U64(guest_clock_to_host(&gc, 10, 0, 1000009000000ull + off, &ns), 0);
	CHECK_EQ_U64(ns, 5003000000ull);
	/* Guest 20 vCPU 0 at 0.6 s in, placed with the applied 0, not the traced offset. */
	CHECK_EQ_U64(guest_clock_to_host(&gc, 20, 0, 1001800000000ull, &ns), 0);
	CHECK_EQ_U64(ns, 5600000000ull);
	CHECK_EQ_U64(guest_clock_to_host(&gc, 20, 1, 1001800000000ull + off, &ns), 0);
	CHECK_EQ_U64(ns, 5600000000ull);
	/* The error bound: 50 ns at the start pair, plus the rate's over the time from it. */
	CHECK(guest_clock_error_ns(&gc, 5000000000ull) == 50.0);
	CHECK(guest_clock_error_ns(&gc, 6000000000ull) > 149.0 &&
	      guest_clock_error_ns(&gc, 6000000000ull) < 151.0);
	guest_clock_free(&gc);
}

/* The median exit of each guest, as the lower end of its power-of-two bucket. */
static void test_exit_times(void)
{
	struct exit_times t = {};
	struct vmexit_event ev = { .type = VMEXIT_EV_USER_EXIT, .tgid = 7 };
	__u64 lat[] = { 900, 5000, 6000, 7000, 1000000 };

	CHECK_EQ_U64(exit_times_median(&t, 7), 0);
	for (size_t i = 0; i < sizeof(lat) / sizeof(lat[0]); i++) {
		ev.latency_ns = lat[i];
		CHECK(!exit_times_add(&t, &ev));
	}
	/* Not exits, or still in flight: not counted. */
	ev.type = VMEXIT_EV_USER_EXIT | VMEXIT_EV_IN_FLIGHT;
	ev.latency_ns = 1;
	CHECK(!exit_times_add(&t, &ev));
	ev.type = VMEXIT_EV_TSC_OFFSET;
	CHECK(!exit_times_add(&t, &ev));
	ev.type = VMEXIT_EV_EXIT;
	ev.tgid = 8;
	ev.latency_ns = 0;
	CHECK(!exit_times_add(&t, &ev));
	CHECK_EQ_U64(exit_times_median(&t, 7), 4096);
	CHECK_EQ_U64(exit_times_median(&t, 8), 1);
	CHECK_EQ_U64(exit_times_median(&t, 9), 0);
	exit_times_free(&t);
}

int main(void)
{
	int fd = mkstemp(path);

	if (fd < 0) {
		perror("mkstemp");
		return 1;
	}
	close(fd);
	test_streamed();
	test_reader();
	test_errors();
	test_time_range();
	test_nul_in_name();
	test_escapes_bounded();
	test_clock();
	test_kind();
	test_applied();
	test_exit_times();
	unlink(path);
	CHECK_DONE("guest_trace");
}
