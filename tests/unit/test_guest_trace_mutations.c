// SPDX-License-Identifier: GPL-2.0
/*
 * Damaged guest traces through `vmexit report --perfetto --guest-trace`, under the sanitizers
 * (make SAN=1), 320 per format: a Chrome trace as the bundled guest writes one (TSC ticks / 1000,
 * args.vcpu, B/E/X; tools/vmexit_guest_stamps.h) and one as `uftrace dump --chrome` writes it
 * (µs of CLOCK_MONOTONIC with clock=ns, metadata records, no tid; the shape of
 * tests/fuzz/corpus/guest_uftrace/uftrace_tiny.json). Each mutant, from a fixed-seed generator
 * (the same ones every run), must end with status 0 and no error said, or status 1 and exactly
 * one error line naming the trace (warnings and notes, naming it too, aside): never a crash, a
 * sanitizer report or a second error. Every protobuf
 * output of a trace read whole is decoded by protoc (a name with bytes that are no UTF-8 must
 * still give a valid trace).
 *
 * Each report runs in a child whose stderr goes to a file: LeakSanitizer checks it when it
 * exits, and a sanitizer report there fails the test. Run from the top of the source tree.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "check.h"
#include "commands.h"
#include "record_file.h"
#include "../xorshift64.h"

#define RUNS		320	/* per format */
#define TSC_KHZ		3000000u
#define OFFSET_GM	0x4000000000000ull	/* the bundled guest's --tsc-offset in the beds */

static char dir[] = "/tmp/vmexit-test-gtmutXXXXXX";
static __u64 rng = 0x9e3779b97f4a7c15ull;

static __u64 rnd(void)
{
	return xorshift64(&rng);
}

/*
 * Two guests: gm (its vCPUs' TSC offset OFFSET_GM) and gu, whose offset takes the host's TSC
 * at the recording's start to 0, so that its trace's ns since then land in the recording.
 */
static int write_recording(const char *path, struct rec_meta *meta)
{
	struct rec_writer *w;
	char err[512];

	rec_meta_now(meta);
	meta->tsc_khz = TSC_KHZ;
	if (!meta->tsc_start.mono_ns)	/* no TSC here: a pair of our own */
		meta->tsc_start = (struct tsc_pair){ .tsc = 1ull << 40, .mono_ns = meta->mono_ns };
	w = rec_writer_open(path, true, meta, err, sizeof(err));
	if (!w) {
		fprintf(stderr, "%s\n", err);
		return -1;
	}
	rec_writer_add_guest(w, 100, 1000, "gm");
	rec_writer_add_guest(w, 101, 1000, "gu");
	for (int i = 0; i < 4; i++) {
		struct vmexit_event ev = {
			.type = VMEXIT_EV_TSC_OFFSET, .ts_ns = meta->mono_ns, .tgid = 100 + i / 2,
			.tid = 200 + i, .vcpu = i % 2, .cpu = 1,
			.info2 = i < 2 ? OFFSET_GM : -meta->tsc_start.tsc,
		};

		rec_writer_add_event(w, &ev);
	}
	for (int i = 0; i < 20; i++) {
		struct vmexit_event ev = {
			.type = VMEXIT_EV_EXIT, .isa = VMEXIT_ISA_VMX, .reason = 30,
			.ts_ns = meta->mono_ns + 1000000ull * i, .latency_ns = 2000,
			.tgid = 100 + i % 2, .tid = 200 + i % 4, .vcpu = i % 2, .cpu = i % 2,
		};

		rec_writer_add_event(w, &ev);
	}
	return rec_writer_close(w);
}

/* ticks / 1000 with three decimals: the bundled guest's ts. */
static int put_ticks(char *p, size_t room, __u64 ticks)
{
	return snprintf(p, room, "%llu.%03llu", (unsigned long long)(ticks / 1000),
			(unsigned long long)(ticks % 1000));
}

/* The bundled guest's trace of two vCPUs, names with quotes, escapes and UTF-8. */
static size_t base_guest(char *buf, size_t room, const struct rec_meta *meta)
{
	static const char *const names[] = {
		"guest after io exit %d", "g\\u00e4st \\\"q\\\" %d", "gr\xc3\xb6\xc3\x9f" "e %d",
		"tab\\there %d",
	};
	__u64 t = meta->tsc_start.tsc + OFFSET_GM + 3000000;	/* 1 ms in */
	size_t n = snprintf(buf, room, "{\"traceEvents\":[");

	for (int k = 0; k < 24; k++, t += 30000) {
		char name[64];

		snprintf(name, sizeof(name), names[k % 4], k);
		n += snprintf(buf + n, room - n, "%s\n{\"name\":\"%s\",\"ph\":\"%s\",\"pid\":77,"
			      "\"tid\":%d,\"ts\":", k ? "," : "", name, k % 2 ? "X" : "B", k % 2);
		n += put_ticks(buf + n, room - n, t);
		if (k % 2) {
			n += snprintf(buf + n, room - n, ",\"dur\":");
			n += put_ticks(buf + n, room - n, 9000);
		}
		n += snprintf(buf + n, room - n, ",\"args\":{\"vcpu\":%d,\"exit\":%d}}", k % 2, k);
		if (k % 2)
			continue;
		n += snprintf(buf + n, room - n, ",\n{\"ph\":\"E\",\"pid\":77,\"tid\":%d,\"ts\":",
			      k % 2);
		n += put_ticks(buf + n, room - n, t + 12000);
		n += snprintf(buf + n, room - n, ",\"args\":{\"vcpu\":%d}}", k % 2);
	}
	n += snprintf(buf + n, room - n, "\n],\"displayTimeUnit\":\"ns\",\"metadata\":"
		      "{\"tsc_offset_applied\":\"yes\"}}\n");
	return n;
}

/* uftrace's: µs since the recording started (clock=ns), nested calls of one process. */
static size_t base_uftrace(char *buf, size_t room)
{
	static const char *const calls[] = { "main", "middle", "leaf", "leaf", "leaf" };
	size_t n = snprintf(buf, room, "{\"traceEvents\":[\n"
			    "{\"ts\":0,\"ph\":\"M\",\"pid\":4242,\"name\":\"process_name\","
			    "\"args\":{\"name\":\"[4242] tiny\"}},\n"
			    "{\"ts\":0,\"ph\":\"M\",\"pid\":4242,\"name\":\"thread_name\","
			    "\"args\":{\"name\":\"[4242] tiny\"}}");
	double us = 1000.125;

	for (int r = 0; r < 4; r++) {
		for (int i = 0; i < 3; i++, us += 0.1)
			n += snprintf(buf + n, room - n, ",\n{\"ts\":%.3f,\"ph\":\"B\","
				      "\"pid\":4242,\"name\":\"%s\"}", us, calls[i + (r & 1) * 2]);
		for (int i = 2; i >= 0; i--, us += 0.07)
			n += snprintf(buf + n, room - n, ",\n{\"ts\":%.3f,\"ph\":\"E\","
				      "\"pid\":4242,\"name\":\"%s\"}", us, calls[i + (r & 1) * 2]);
	}
	n += snprintf(buf + n, room - n, "\n], \"displayTimeUnit\": \"ns\", \"metadata\": {\n"
		      "\"version\":\"uftrace v0.13 ( x86_64 dwarf python3 luajit tui perf sched "
		      "dynamic )\",\n\"command_line\":\"uftrace record -d ud ./tiny\"\n} }\n");
	return n;
}

/* What a hostile or damaged trace puts where a value, a name or a byte was. */
static const char *const hostile[] = {
	"1e17", "1e19", "1e300", "18446744073709551.615", "18446744073709551.616", "-1", "1e",
	"99999999999999999999", "\"\\u0000\"", "\"\\ud800\"", "\"\\u00", "\"bad\xff\xfe\xc3(\"",
	"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[", "{", "]", "null",
	"\"\x1b[2J\\u001b\"", ",", "\"ph\":\"X\",\"dur\":1e300", "\"ts\":\"12\"", "0.0000000001",
};

static const char meaningful[] = {
	'"', '\\', '{', '}', '[', ']', ',', ':', '0', '1', '9', '.', 'e', 'E', '-', 'u', '\0',
	'\xff', '\n', ' ',
};

/* The start of a value: after a ':' (and its spaces), or a string's opening quote. */
static size_t some_value(const char *m, size_t n)
{
	size_t pick = 0, seen = 0;

	for (size_t i = 0; i + 1 < n; i++)
		if ((m[i] == ':' || m[i] == '"') && rnd() % ++seen == 0)
			pick = i + 1;
	return pick;
}

/* One mutation of base into m (room for 2 * len + 256); the new length. */
static size_t mutate(const char *base, size_t len, char *m, unsigned int run)
{
	size_t n = len, at, from, k, end;
	const char *h;

	memcpy(m, base, len);
	switch (run % 6) {
	case 0:		/* a few random bytes, often ones JSON gives a meaning */
		for (k = 1 + rnd() % 6; k; k--)
			m[rnd() % n] = rnd() % 2 ? meaningful[rnd() % sizeof(meaningful)]
						 : (char)rnd();
		break;
	case 1:		/* cut anywhere */
		n = rnd() % len;
		break;
	case 2:		/* a value replaced by a hostile one */
		at = some_value(m, n);
		h = hostile[rnd() % (sizeof(hostile) / sizeof(hostile[0]))];
		for (end = at; end < n && !strchr(",}]", m[end]); end++)
			;
		k = strlen(h);
		memmove(m + at + k, m + end, n - end);
		memcpy(m + at, h, k);
		n = n - (end - at) + k;
		break;
	case 3:		/* a stretch repeated elsewhere */
		from = rnd() % len;
		k = rnd() % (len - from);
		at = rnd() % len;
		memmove(m + at + k, m + at, len - at);
		memcpy(m + at, base + from, k);
		n = len + k;
		break;
	case 4:		/* a hostile text inserted anywhere */
		at = rnd() % n;
		h = hostile[rnd() % (sizeof(hostile) / sizeof(hostile[0]))];
		k = strlen(h);
		memmove(m + at + k, m + at, n - at);
		memcpy(m + at, h, k);
		n += k;
		break;
	default:	/* a stretch gone */
		from = rnd() % len;
		k = rnd() % (len - from);
		memmove(m + from, m + from + k, len - from - k);
		n = len - k;
	}
	return n;
}

/* Runs `vmexit report -i rec --perfetto out --guest-trace spec` in a child, stderr to errpath. */
static int run_report(const char *rec, const char *out, const char *spec, const char *errpath)
{
	char *argv[] = { "report", "-i", (char *)rec, "--perfetto", (char *)out, "--guest-trace",
			 (char *)spec, NULL };
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		int o = open("/dev/null", O_WRONLY);
		int e = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
			_exit(99);
		exit(cmd_report(7, argv));
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return status;
}

/*
 * The child's stderr: how many error lines, each "vmexit: " and naming the trace, no sanitizer.
 * Warnings and notes ("vmexit: warning: ", "vmexit: note: ": a clock=ns route's bound, events
 * outside the recording) are said of traces read whole too: they must name the trace, and are
 * not counted.
 */
static int message_lines(const char *errpath, const char *trace, bool *clean)
{
	char line[4096];
	int n = 0;
	FILE *f = fopen(errpath, "r");

	*clean = f != NULL;
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		n += strncmp(line, "vmexit: warning: ", 17) && strncmp(line, "vmexit: note: ", 14);
		if (strncmp(line, "vmexit: ", 8) || !strstr(line, trace) ||
		    strstr(line, "Sanitizer") || strstr(line, "runtime error"))
			*clean = false;
	}
	fclose(f);
	return n;
}

/* protoc decodes path without a word (it logs a string that is no UTF-8, and decodes on). */
static bool protoc_decodes(const char *path)
{
	char cmd[512], said[256];
	FILE *p;
	bool quiet;

	snprintf(cmd, sizeof(cmd), "protoc --decode=vmexit.perfetto.Trace -I docs "
		 "docs/perfetto-subset.proto < %s 2>&1 >/dev/null", path);
	p = popen(cmd, "r");
	if (!p)
		return false;
	quiet = !fgets(said, sizeof(said), p);
	if (!quiet)
		fprintf(stderr, "protoc: %s", said);
	return pclose(p) == 0 && quiet;
}

struct format {
	const char *name;
	const char *guest;	/* the --guest-trace spec: GUEST=%s[,clock=ns] */
	char *base;
	size_t len;
};

static void mutate_format(struct format *fm, const char *rec)
{
	char mpath[300], errpath[300], out[300], spec[400], cmd[700];
	char *m = malloc(2 * fm->len + 256);
	unsigned int refused = 0, whole = 0, decoded = 0;
	bool clean;
	int status, lines;

	snprintf(mpath, sizeof(mpath), "%s/mutant.json", dir);
	snprintf(errpath, sizeof(errpath), "%s/err", dir);
	snprintf(spec, sizeof(spec), fm->guest, mpath);
	/* The trace itself merges cleanly, in both formats. */
	for (int f = 0; f < 2; f++) {
		int fd = open(mpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		CHECK(fd >= 0 && write(fd, fm->base, fm->len) == (ssize_t)fm->len);
		close(fd);
		snprintf(out, sizeof(out), "%s/out.%s", dir, f ? "pftrace" : "json");
		status = run_report(rec, out, spec, errpath);
		lines = message_lines(errpath, mpath, &clean);
		if (status || lines) {
			snprintf(cmd, sizeof(cmd), "cat %s >&2", errpath);
			fprintf(stderr, "%s: the unmutated trace: status 0x%x, %d lines:\n",
				fm->name, status, lines);
			if (system(cmd))
				fprintf(stderr, "(cannot show its stderr)\n");
			check_failures++;
		}
		CHECK(!f || protoc_decodes(out));
	}
	for (unsigned int run = 0; m && run < RUNS; run++) {
		size_t n = mutate(fm->base, fm->len, m, run);
		int fd = open(mpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		CHECK(fd >= 0 && write(fd, m, n) == (ssize_t)n);
		close(fd);
		snprintf(out, sizeof(out), "%s/out.%s", dir, run % 2 ? "pftrace" : "json");
		unlink(out);
		status = run_report(rec, out, spec, errpath);
		lines = message_lines(errpath, mpath, &clean);
		if (!WIFEXITED(status) || WEXITSTATUS(status) > 1 || !clean ||
		    lines != WEXITSTATUS(status)) {
			snprintf(cmd, sizeof(cmd), "cat %s >&2", errpath);
			fprintf(stderr, "%s run %u (mutation %u, %zu bytes): wait status 0x%x, %d "
				"lines:\n", fm->name, run, run % 6, n, status, lines);
			if (system(cmd))
				fprintf(stderr, "(cannot show its stderr)\n");
			check_failures++;
			snprintf(cmd, sizeof(cmd), "cp %s /tmp/vmexit-guest-mutation-%s-%u.json",
				 mpath, fm->guest[1] == 'm' ? "guest" : "uftrace", run);
			if (system(cmd))
				fprintf(stderr, "(cannot keep the file)\n");
			continue;
		}
		refused += WEXITSTATUS(status) == 1;
		whole += WEXITSTATUS(status) == 0;
		if (run % 2 && WEXITSTATUS(status) == 0) {
			CHECK(protoc_decodes(out));
			decoded++;
		}
	}
	printf("%s: %u mutants, %u refused with one line, %u read whole (%u protobuf outputs "
	       "decoded by protoc), %u crashed or said more\n", fm->name, RUNS, refused, whole,
	       decoded, RUNS - refused - whole);
	/* The mutations do damage: most are refused, and some get through. */
	CHECK(refused > RUNS / 3);
	CHECK(whole > 0);
	free(m);
}

int main(void)
{
	static char gbuf[16384], ubuf[16384];
	struct format formats[] = {
		{ .name = "guest JSON", .guest = "gm=%s", .base = gbuf },
		{ .name = "uftrace", .guest = "gu=%s,clock=ns", .base = ubuf },
	};
	struct rec_meta meta;
	char rec[300], cmd[400];

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(rec, sizeof(rec), "%s/host.vmexit", dir);
	CHECK(!write_recording(rec, &meta));
	formats[0].len = base_guest(gbuf, sizeof(gbuf), &meta);
	formats[1].len = base_uftrace(ubuf, sizeof(ubuf));
	CHECK(formats[0].len < sizeof(gbuf) - 1 && formats[1].len < sizeof(ubuf) - 1);
	for (int f = 0; f < 2; f++)
		mutate_format(&formats[f], rec);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		fprintf(stderr, "cannot remove %s\n", dir);
	CHECK_DONE("guest_trace_mutations");
}
