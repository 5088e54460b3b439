// SPDX-License-Identifier: GPL-2.0
/*
 * The Perfetto protobuf writer: the same calls go to it and to the JSON writer; protoc decodes
 * the protobuf against the project's schema subset (docs/perfetto-subset.proto), and
 * tests/unit/perfetto_canon.py turns both traces into one line per process, track, slice,
 * instant and counter value. The two must agree line for line, and the lines must be the
 * events written (checked here independently of the JSON writer). Names are interned once.
 * Run from the top of the source tree (it names the schema and the script by path).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "trace_events.h"
#include "trace_writer.h"

#define SCHEMA	"docs/perfetto-subset.proto"
#define CANON	"tests/unit/perfetto_canon.py"

static char *slurp(const char *cmd)
{
	static char out[1 << 16];
	size_t n = 0;
	FILE *p = popen(cmd, "r");

	if (!p)
		return NULL;
	n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = '\0';
	return pclose(p) == 0 ? out : NULL;
}

static int count(const char *text, const char *needle)
{
	int n = 0;

	for (const char *p = text; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

/* Every kind of call the writers get, through the table: both formats see the same. */
static void write_trace(const struct trace_writer_ops *ops, const char *path)
{
	FILE *f = fopen(path, "w");
	struct vmexit_event e[12];
	void *w;

	CHECK(f != NULL);
	if (!f)
		return;
	e[0] = ev(VMEXIT_EV_EXIT, 100, 1001, 0, 1000000, 2500, VMEXIT_ISA_VMX, 30);
	e[1] = ev(VMEXIT_EV_USER_EXIT, 100, 1001, 0, 1001200, 2000, VMEXIT_ISA_USER, 2);
	e[1].rip = e[1].info1 = e[1].info2 = e[1].intr_info = e[1].error_code = 0;
	/* A year of uptime, last: every ns is kept. */
	e[2] = ev(VMEXIT_EV_EXIT, 100, 1002, 1, 31536000123456789ull, 123, VMEXIT_ISA_VMX, 12);
	/* Thread 1003 before its vCPU is known, then with it, then again without. */
	e[3] = ev(VMEXIT_EV_USER_EXIT, 100, 1003, -1, 5000000, 10, VMEXIT_ISA_USER, 17);
	e[4] = ev(VMEXIT_EV_EXIT, 100, 1003, 2, 6000000, 20, VMEXIT_ISA_VMX, 1);
	e[5] = ev(VMEXIT_EV_USER_EXIT, 100, 1003, -1, 7000000, 30, VMEXIT_ISA_USER, 2);
	e[5].info1 = (__u64)-4;		/* -EINTR */
	e[3].rip = e[3].info2 = e[3].intr_info = e[3].error_code = e[3].info1 = 0;
	e[5].rip = e[5].info2 = e[5].intr_info = e[5].error_code = 0;
	e[6] = ev(VMEXIT_EV_EXIT, 200, 2001, 0, 8000000, 40, VMEXIT_ISA_SVM, 0x7b);
	e[7] = ev(VMEXIT_EV_TSC_OFFSET, 200, 2001, 0, 9000000, 0, 0, 0);
	e[7].info1 = (__u64)-5000000000ll;
	e[7].info2 = (__u64)-123456789012345ll;
	e[8] = ev(VMEXIT_EV_EXIT, 300, 3001, 0, 9500000, 1, VMEXIT_ISA_VMX, 0x7777);
	e[8].type |= VMEXIT_EV_IN_FLIGHT;
	/* A pio write of 'A' to COM1 (kvm_event_fields()'s slots). */
	e[9] = ev(VMEXIT_EV_KVM_EVENT, 200, 2001, 0, 8000010, 0, 0, VMEXIT_KVM_PIO);
	e[9].info1 = 0x3f8;
	e[9].info2 = 0x41;
	e[9].rip = e[9].intr_info = e[9].error_code = 1;
	e[10] = ev(VMEXIT_EV_EXIT, 100, 1001, 0, 1004000, 100, VMEXIT_ISA_VMX, 30);
	e[11] = ev(VMEXIT_EV_EXIT, 100, 1001, 0, 250000000, 100, VMEXIT_ISA_VMX, 30);
	e[0].rip = 0xffffffff81000000ull;
	w = ops->open(f, NULL);
	CHECK(w != NULL);
	ops->guest(w, 100, "web \"prod\"");
	ops->guest(w, 200, "ctl");
	for (int i = 0; i < 12; i++) {
		if (i == 8)
			ops->lost(w, 9100000, 42, "ring buffer full");
		if (i != 2)
			ops->event(w, &e[i], NULL);
	}
	ops->event(w, &e[2], NULL);
	ops->stuck(w, 9600000, "stuck: HLT of web (tid 1001) in flight for 1.000000 s");
	ops->guest(w, 200, "ctl renamed");
	CHECK_EQ_U64(ops->close(w), 0);
	fclose(f);
}

/*
 * Per-reason exit rates: a known pattern of exits per 100 ms window, each series on a thread
 * of its own. A series' value is drawn in window w when it had exits in w or in w - 1 (the
 * drop to 0), worth count * 10 exits/s; the expectations are computed from the pattern here.
 */
#define RATE_WINDOWS	21
static const struct rate_series {
	__u32 tgid;
	__u16 type;
	__u16 isa;
	__u32 reason;
	const char *name;	/* the counter track's */
	int count[RATE_WINDOWS];
} rate_series[] = {
	{ 100, VMEXIT_EV_EXIT, VMEXIT_ISA_VMX, 12, "HLT exits/s", { 1, 2, 3, 4, 0, 0, 2 } },
	{ 100, VMEXIT_EV_EXIT, VMEXIT_ISA_VMX, 30, "IO_INSTRUCTION exits/s",
	  { 0, 3, 0, 3, 0, 3, 0, 3 } },
	{ 100, VMEXIT_EV_USER_EXIT, VMEXIT_ISA_USER, 2, "IO exits to VMM/s", { 1, 1, 1 } },
	/* KVM_EXIT_HLT: a series apart from the guest's HLT exits */
	{ 100, VMEXIT_EV_USER_EXIT, VMEXIT_ISA_USER, 5, "HLT exits to VMM/s", { 1 } },
	/* and after a stretch with no exits anywhere (windows 8 to 19) */
	{ 200, VMEXIT_EV_EXIT, VMEXIT_ISA_SVM, 0x78, "hlt exits/s",
	  { 0, 0, 0, 5, [RATE_WINDOWS - 1] = 1 } },
};
#define NR_RATE_SERIES	(sizeof(rate_series) / sizeof(rate_series[0]))

static void write_rates(const struct trace_writer_ops *ops, const char *path)
{
	FILE *f = fopen(path, "w");
	void *w;

	CHECK(f != NULL);
	if (!f)
		return;
	w = ops->open(f, NULL);
	CHECK(w != NULL);
	for (int win = 0; win < RATE_WINDOWS; win++) {
		__u64 ts = win * 100000000ull;

		for (size_t i = 0; i < NR_RATE_SERIES; i++) {
			const struct rate_series *r = &rate_series[i];

			for (int n = 0; n < r->count[win]; n++) {
				struct vmexit_event e = ev(r->type, r->tgid, r->tgid + i, i,
							   ts += 1000, 10, r->isa, r->reason);

				ops->event(w, &e, NULL);
			}
		}
	}
	CHECK_EQ_U64(ops->close(w), 0);
	fclose(f);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The lines of text that start with "C|" and are not a VM's total rates, sorted, one string. */
static char *reason_rate_lines(char *text)
{
	char *lines[1024], *out = calloc(1, strlen(text) + 1);
	size_t n = 0;

	for (char *l = strtok(text, "\n"); l && n < 1024; l = strtok(NULL, "\n")) {
		if (!strncmp(l, "C|", 2) && !strstr(l, "|guest exits/s|") &&
		    !strstr(l, "|exits to VMM/s|"))
			lines[n++] = l;
	}
	qsort(lines, n, sizeof(*lines), cmp_str);
	for (size_t i = 0; i < n; i++)
		strcat(strcat(out, lines[i]), "\n");
	return out;
}

static void check_reason_rates(const char *json, const char *proto)
{
	char cmd[1024], *expected[NR_RATE_SERIES * RATE_WINDOWS], *want, *got, *out;
	size_t n = 0;

	write_rates(&perfetto_json_ops, json);
	write_rates(&perfetto_proto_ops, proto);
	for (size_t i = 0; i < NR_RATE_SERIES; i++) {
		const struct rate_series *r = &rate_series[i];

		for (int win = 0; win < RATE_WINDOWS; win++) {
			int c = r->count[win], before = win ? r->count[win - 1] : 0;
			char line[128];

			if (!c && !before)
				continue;
			snprintf(line, sizeof(line), "C|%u|%llu|%s|%d", r->tgid,
				 win * 100000000ull, r->name, c * 10);
			expected[n++] = strdup(line);
		}
	}
	/* the last window's drop to 0 */
	for (size_t i = 0; i < NR_RATE_SERIES; i++) {
		const struct rate_series *r = &rate_series[i];
		char line[128];

		if (!r->count[RATE_WINDOWS - 1])
			continue;
		snprintf(line, sizeof(line), "C|%u|%llu|%s|0", r->tgid,
			 RATE_WINDOWS * 100000000ull, r->name);
		expected[n++] = strdup(line);
	}
	qsort(expected, n, sizeof(*expected), cmp_str);
	want = calloc(n, 128);
	for (size_t i = 0; i < n; i++) {
		strcat(strcat(want, expected[i]), "\n");
		free(expected[i]);
	}

	snprintf(cmd, sizeof(cmd), "protoc --decode=vmexit.perfetto.Trace -I docs " SCHEMA
		 " < %s > %s.txt && python3 " CANON " proto %s.txt", proto, proto, proto);
	out = slurp(cmd);
	CHECK(out != NULL);
	got = reason_rate_lines(out ? out : (char[]){ "" });
	if (getenv("V"))
		printf("%s", got);
	CHECK_STR(got, want);
	free(got);
	snprintf(cmd, sizeof(cmd), "python3 " CANON " json %s", json);
	out = slurp(cmd);
	CHECK(out != NULL);
	got = reason_rate_lines(out ? out : (char[]){ "" });
	CHECK_STR(got, want);
	free(got);
	free(want);
	snprintf(cmd, sizeof(cmd), "%s.txt", proto);
	unlink(cmd);
}

/*
 * Names from guests and files are bytes, a protobuf string must be UTF-8: a guest and its own
 * trace's event both named "bad\xff\xfe\xc3(" still give a trace protoc decodes without a
 * complaint (it logs "invalid UTF-8" and decodes on), each ill-formed sequence one U+FFFD as in
 * the JSON writer's "bad\ufffd\ufffd\ufffd(".
 */
static void check_bad_utf8(void)
{
	static const char bad[] = "bad\xff\xfe\xc3(";
	static const char fixed[] = "bad\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd(";
	char path[] = "/tmp/vmexit-test-pfutf8XXXXXX", cmd[512], want[64], *text;
	struct trace_guest_event ge = { .tgid = 100, .track_name = bad, .ph = 'i', .ts_ns = 2000,
					.name = bad };
	struct vmexit_event e = ev(VMEXIT_EV_EXIT, 100, 1001, 0, 1000, 100, VMEXIT_ISA_VMX, 30);
	int fd = mkstemp(path);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	void *w;

	CHECK(f != NULL);
	if (!f)
		return;
	w = perfetto_proto_ops.open(f, NULL);
	perfetto_proto_ops.guest(w, 100, bad);
	perfetto_proto_ops.event(w, &e, NULL);
	perfetto_proto_ops.guest_event(w, &ge);
	CHECK_EQ_U64(perfetto_proto_ops.close(w), 0);
	fclose(f);
	/* protoc says what it finds wrong (and decodes on): nothing, here. */
	snprintf(cmd, sizeof(cmd), "protoc --decode=vmexit.perfetto.Trace -I docs " SCHEMA
		 " < %s 2>&1", path);
	text = slurp(cmd);
	CHECK(text != NULL);
	text = text ? text : (char[]){ "" };
	if (getenv("V"))
		printf("%s", text);
	CHECK(!strstr(text, "invalid UTF-8"));
	/* The process, the guest track and the guest's event, as protoc prints the bytes. */
	CHECK_EQ_U64(count(text, "\"bad\\357\\277\\275\\357\\277\\275\\357\\277\\275(\""), 3);
	snprintf(cmd, sizeof(cmd), "protoc --decode=vmexit.perfetto.Trace -I docs " SCHEMA
		 " < %s > %s.txt && python3 " CANON " proto %s.txt", path, path, path);
	text = slurp(cmd);
	CHECK(text != NULL);
	text = text ? text : (char[]){ "" };
	snprintf(want, sizeof(want), "P|100|%s\n", fixed);
	CHECK(strstr(text, want) != NULL);
	snprintf(want, sizeof(want), "T|100|%s\n", fixed);
	CHECK(strstr(text, want) != NULL);
	snprintf(want, sizeof(want), "|2000|guest|%s|", fixed);
	CHECK(strstr(text, want) != NULL);
	snprintf(cmd, sizeof(cmd), "%s.txt", path);
	unlink(cmd);
	unlink(path);
}

/*
 * A full disk: the write that failed says why, whatever the stream's buffer holds by the close
 * (unbuffered here, so nothing is left for the last flush to fail on and report: it would only
 * see the stream's error flag and say EIO).
 */
static void check_full_disk(const struct trace_writer_ops *ops)
{
	struct vmexit_event e = ev(VMEXIT_EV_EXIT, 100, 1001, 0, 1000, 100, VMEXIT_ISA_VMX, 30);
	FILE *f = fopen("/dev/full", "w");
	void *w;

	CHECK(f != NULL);
	if (!f)
		return;
	setvbuf(f, NULL, _IONBF, 0);
	w = ops->open(f, NULL);
	ops->guest(w, 100, "web");
	ops->event(w, &e, NULL);
	CHECK_EQ_U64(ops->close(w), (__u64)-ENOSPC);
	fclose(f);
}

int main(void)
{
	char json[] = "/tmp/vmexit-test-pftrace-jXXXXXX", proto[] = "/tmp/vmexit-test-pftraceXXXXXX";
	char cmd[1024], *text, *jl, *pl;
	int fd;

	fd = mkstemp(json);
	close(fd);
	fd = mkstemp(proto);
	close(fd);
	write_trace(&perfetto_json_ops, json);
	write_trace(&perfetto_proto_ops, proto);

	/* It decodes against the schema subset, and every name is interned once. */
	snprintf(cmd, sizeof(cmd), "protoc --decode=vmexit.perfetto.Trace -I docs " SCHEMA
		 " < %s", proto);
	text = slurp(cmd);
	CHECK(text != NULL);
	if (!text)
		CHECK_DONE("perfetto_proto (protoc --decode failed; make deps installs it)");
	text = strdup(text);
	CHECK_EQ_U64(count(text, "name: \"IO_INSTRUCTION\""), 1);	/* used 3 times */
	CHECK_EQ_U64(count(text, "name: \"kvm_exit\""), 1);
	CHECK_EQ_U64(count(text, "name: \"latency_ns\""), 1);
	CHECK_EQ_U64(count(text, "type: TYPE_SLICE_BEGIN"), 10);
	CHECK_EQ_U64(count(text, "type: TYPE_SLICE_END"), 10);

	snprintf(cmd, sizeof(cmd), "protoc --decode=vmexit.perfetto.Trace -I docs " SCHEMA
		 " < %s > %s.txt && python3 " CANON " proto %s.txt", proto, proto, proto);
	pl = slurp(cmd);
	CHECK(pl != NULL);
	pl = strdup(pl ? pl : "");
	snprintf(cmd, sizeof(cmd), "python3 " CANON " json %s", json);
	jl = slurp(cmd);
	CHECK(jl != NULL);
	jl = strdup(jl ? jl : "");
	if (getenv("V"))
		printf("%s", pl);
	CHECK_STR(pl, jl);

	/* What was written, whatever the JSON writer does. */
	CHECK(strstr(pl, "P|100|web \"prod\"\n"));
	CHECK(strstr(pl, "P|200|ctl renamed\n"));
	CHECK(strstr(pl, "T|100|thread 1003 (VMM)\n"));
	CHECK(strstr(pl, "X|100|vCPU 0|1000000|2500|kvm_exit|IO_INSTRUCTION|{\"cpu\": 7, "
		     "\"error_code\": 3, \"info1\": 16, \"info2\": 16045690984503111693, "
		     "\"intr_info\": 2147483884, \"isa\": \"vmx\", \"latency_ns\": 2500, "
		     "\"reason\": 30, \"rip\": 18446744071578845184, \"tid\": 1001, "
		     "\"vcpu\": 0}\n"));
	CHECK(strstr(pl, "X|100|vCPU 2 (VMM)|7000000|30|kvm_userspace_exit|IO|{\"cpu\": 7, "
		     "\"errno\": -4, \"isa\": \"user\", \"latency_ns\": 30, \"reason\": 2, "
		     "\"tid\": 1003, \"vcpu\": -1}\n"));
	CHECK(strstr(pl, "X|100|vCPU 1|31536000123456789|123|kvm_exit|"));
	CHECK(strstr(pl, "X|300|vCPU 0|9500000|1|kvm_exit|UNKNOWN_0x7777|"));
	CHECK(strstr(pl, "\"in_flight\": true"));
	CHECK(strstr(pl, "I|t|200|vCPU 0|9000000|kvm_tsc_offset|tsc_offset|{\"cpu\": 7, "
		     "\"next\": -123456789012345, \"previous\": -5000000000, \"tid\": 2001}\n"));
	CHECK(strstr(pl, "I|t|200|vCPU 0|8000010|kvm_event|kvm_pio|{\"access\": \"write\", "
		     "\"count\": 1, \"cpu\": 7, \"port\": 1016, \"size\": 1, \"tid\": 2001, "
		     "\"val\": 65, \"vcpu\": 0}\n"));
	CHECK(strstr(pl, "I|g|0|-|9100000|vmexit_lost|lost 42 records (ring buffer full)|"
		     "{\"lost\": 42}\n"));
	CHECK(strstr(pl, "I|g|0|-|9600000|vmexit_stuck|stuck: HLT of web"));
	CHECK_EQ_U64(count(pl, "\nX|"), 10);
	CHECK_EQ_U64(count(pl, "\nI|"), 4);
	/* VM 100's exit rates: 3 of each kind in the window at 0, none at 100 ms, 1 guest exit
	 * in the one at 200 ms, none at 300 ms, then the year's one and the drop to 0 after it:
	 * each quiet stretch begins with a 0. */
	CHECK(strstr(pl, "C|100|0|guest exits/s|30\nC|100|0|exits to VMM/s|30\n"));
	CHECK(strstr(pl, "C|100|100000000|guest exits/s|0\nC|100|100000000|exits to VMM/s|0\n"));
	CHECK(strstr(pl, "C|100|200000000|guest exits/s|10\nC|100|200000000|exits to VMM/s|0\n"));
	CHECK(strstr(pl, "C|100|300000000|guest exits/s|0\nC|100|300000000|exits to VMM/s|0\n"));
	CHECK(strstr(pl, "C|100|31536000100000000|guest exits/s|10\n"));
	CHECK(strstr(pl, "C|100|31536000200000000|guest exits/s|0\n"));
	CHECK(strstr(pl, "C|100|0|IO_INSTRUCTION exits/s|20\n"));
	CHECK(strstr(pl, "C|100|200000000|IO_INSTRUCTION exits/s|10\n"));
	/* 20 totals; per reason a window and its drop each, IO_INSTRUCTION two of them */
	CHECK_EQ_U64(count(pl, "\nC|"), 20 + 8 * 2);

	check_reason_rates(json, proto);
	check_bad_utf8();
	check_full_disk(&perfetto_json_ops);
	check_full_disk(&perfetto_proto_ops);

	snprintf(cmd, sizeof(cmd), "%s.txt", proto);
	unlink(cmd);
	unlink(json);
	unlink(proto);
	free(text);
	free(pl);
	free(jl);
	CHECK_DONE("perfetto_proto");
}
