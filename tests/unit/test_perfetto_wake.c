// SPDX-License-Identifier: GPL-2.0
/*
 * report --perfetto of record --wake's deliveries: each delivery one flow, from a slice at the
 * moment it became pending to one at the entry that delivered it, both on the target vCPU's
 * kvm track (the track of its exits), flow ids unique; each halt a slice on that track named by
 * how it ended, its parts as arguments, and a halt that slept its pieces nested in it, every
 * track's slices nesting properly (Perfetto drops the others); the JSON and protobuf writers
 * agree line for line (tests/unit/perfetto_canon.py). Expectations come from the events
 * written.
 * stream --wake --perfetto: the same events in the ring's order through the per-event output
 * (evout, as stream writes them), in both formats: the same lines as the writers' own, flows
 * checked the same way, and each loss of deliveries a global "lost N records (--wake: ...)"
 * instant where it was said; the formats stream --wake takes (all but --tsv).
 * Run from the top of the source tree (it names the schema and the script by path).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "event_output.h"
#include "trace_events.h"
#include "trace_writer.h"
#include "wake.h"

#define SCHEMA	"docs/perfetto-subset.proto"
#define CANON	"tests/unit/perfetto_canon.py"

/* Deliveries: (tgid, vCPU, pending ns, latency ns); vCPU 1's first pending inside its exit. */
static const struct {
	__u32 tgid;
	__s32 vcpu;
	__u64 ts, lat;
	__u32 source, vector;
} wakes[] = {
	{ 100, 1, 1000500, 1500, WAKE_SRC_TIMER, 0xec },
	{ 100, 0, 1001000, 2000, WAKE_SRC_MSI, 0x41 },
	{ 100, 1, 1010000, 7, WAKE_SRC_IPI, 0xfd },
	{ 200, 0, 1020000, 0, WAKE_SRC_LOCAL, 0x22 },
	{ 100, 1, 1030000, 123456, WAKE_SRC_TIMER, 0xec },
};
#define NR_WAKES (sizeof(wakes) / sizeof(wakes[0]))

/*
 * Halts (tgid, vCPU, start, KVM's time, waited, valid, parts poll, sleep, runq, other), each
 * inside a halted exit written below but the last (db's, whose exit was not kept). The fourth's
 * start was moved back to its first sleep: its pieces (5500 ns) pass its 5000.
 */
static const struct {
	__u32 tgid;
	__s32 vcpu;
	__u64 ts, lat;
	bool waited, valid;
	__u64 poll, sleep, runq, other;
} halts[] = {
	{ 100, 1, 1000100, 1800, true, true, 0, 1500, 200, 100 },
	{ 100, 0, 1040010, 20000, true, false, 3000, 15000, 1000, 1000 },
	{ 100, 0, 1060100, 700, false, true, 700, 0, 0, 0 },
	{ 100, 0, 1070000, 5000, true, true, 0, 4000, 1500, 0 },
	{ 200, 0, 1100000, 300, true, true, 0, 200, 50, 50 },
};
#define NR_HALTS (sizeof(halts) / sizeof(halts[0]))

/*
 * What the halts above must draw, worked out by hand: the halt (name by how it ended: no
 * sleep polled, a sleep after polling poll_slept, else slept), then its non-zero pieces from
 * its start, one after the other; none for the polled one, none for the fourth.
 */
static const char *const halt_lines[] = {
	"X|100|vCPU 1|1000100|1800|halt|slept|{\"latency_ns\": 1800, \"other_ns\": 100, "
	"\"poll_ns\": 0, \"runq_ns\": 200, \"sleep_ns\": 1500, \"tid\": 102, "
	"\"valid\": true, \"vcpu\": 1}",
	"X|100|vCPU 1|1000100|1500|halt|sleep|{}",
	"X|100|vCPU 1|1001600|200|halt|runq|{}",
	"X|100|vCPU 1|1001800|100|halt|other|{}",
	"X|100|vCPU 0|1040010|20000|halt|poll_slept|{\"latency_ns\": 20000, "
	"\"other_ns\": 1000, \"poll_ns\": 3000, \"runq_ns\": 1000, \"sleep_ns\": 15000, "
	"\"tid\": 101, \"valid\": false, \"vcpu\": 0}",
	"X|100|vCPU 0|1040010|3000|halt|poll|{}",
	"X|100|vCPU 0|1043010|15000|halt|sleep|{}",
	"X|100|vCPU 0|1058010|1000|halt|runq|{}",
	"X|100|vCPU 0|1059010|1000|halt|other|{}",
	"X|100|vCPU 0|1060100|700|halt|polled|{\"latency_ns\": 700, \"other_ns\": 0, "
	"\"poll_ns\": 700, \"runq_ns\": 0, \"sleep_ns\": 0, \"tid\": 101, "
	"\"valid\": true, \"vcpu\": 0}",
	"X|100|vCPU 0|1070000|5000|halt|slept|{\"latency_ns\": 5000, \"other_ns\": 0, "
	"\"poll_ns\": 0, \"runq_ns\": 1500, \"sleep_ns\": 4000, \"tid\": 101, "
	"\"valid\": true, \"vcpu\": 0}",
	"X|200|vCPU 0|1100000|300|halt|slept|{\"latency_ns\": 300, \"other_ns\": 50, "
	"\"poll_ns\": 0, \"runq_ns\": 50, \"sleep_ns\": 200, \"tid\": 201, "
	"\"valid\": true, \"vcpu\": 0}",
	"X|200|vCPU 0|1100000|200|halt|sleep|{}",
	"X|200|vCPU 0|1100200|50|halt|runq|{}",
	"X|200|vCPU 0|1100250|50|halt|other|{}",
};
#define NR_HALT_LINES (sizeof(halt_lines) / sizeof(halt_lines[0]))

static char *slurp(const char *cmd)
{
	static char out[1 << 16];
	size_t n;
	FILE *p = popen(cmd, "r");

	if (!p)
		return NULL;
	n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = '\0';
	return pclose(p) == 0 ? strdup(out) : NULL;
}

/* Where the events go: a trace writer itself, or (o set) stream's per-event output. */
struct sink {
	const struct trace_writer_ops *ops;
	void *w;
	struct evout *o;
};

static void put_guest(struct sink *k, __u32 tgid, const char *name)
{
	if (k->o)
		evout_guest(k->o, tgid, 0, name);
	else
		k->ops->guest(k->w, tgid, name);
}

static void put_event(struct sink *k, const struct vmexit_event *e)
{
	if (k->o)
		CHECK_EQ_U64(evout_event(k->o, e), 0);
	else
		k->ops->event(k->w, e, NULL);
}

/* The events, in the order the ring has them (the halts before their exit). */
static void write_events(struct sink *k)
{
	put_guest(k, 100, "web");
	put_guest(k, 200, "db");
	/* vCPU 1 halted from 1000000 to its entry at 1002000: the first timer's. */
	{
		struct vmexit_event e = ev(VMEXIT_EV_EXIT, 100, 1002, 1, 1000000, 2000,
					   VMEXIT_ISA_SVM, 0x78);

		put_event(k, &e);
	}
	for (size_t i = 0; i < NR_WAKES; i++) {
		struct vmexit_event e = ev(VMEXIT_EV_WAKE, wakes[i].tgid,
					   wakes[i].tgid + 1 + wakes[i].vcpu, wakes[i].vcpu,
					   wakes[i].ts, wakes[i].lat, 0, wakes[i].source);

		e.intr_info = wakes[i].vector;
		e.rip = e.info1 = e.info2 = e.blocked_ns = e.runq_ns = e.oncpu_ns = 0;
		/* The parts: most of it halted asleep, the rest on CPU. */
		e.blocked_ns = wakes[i].lat / 2;
		e.oncpu_ns = wakes[i].lat - e.blocked_ns;
		put_event(k, &e);
	}
	/* Each halt before its exit, as the ring has them: sent at kvm_vcpu_wakeup. */
	for (size_t i = 0; i < NR_HALTS; i++) {
		struct vmexit_event e = ev(VMEXIT_EV_HALT, halts[i].tgid,
					   halts[i].tgid + 1 + halts[i].vcpu, halts[i].vcpu,
					   halts[i].ts, halts[i].lat, 0, 0);

		e.blocked_ns = e.runq_ns = 0;
		*hlt_event_part(&e, HLT_PART_POLL) = halts[i].poll;
		*hlt_event_part(&e, HLT_PART_SLEEP) = halts[i].sleep;
		*hlt_event_part(&e, HLT_PART_RUNQ) = halts[i].runq;
		*hlt_event_part(&e, HLT_PART_OTHER) = halts[i].other;
		e.intr_info = 0;
		e.error_code = (halts[i].waited ? VMEXIT_HALT_WAITED : 0) |
			       (halts[i].valid ? VMEXIT_HALT_VALID : 0);
		put_event(k, &e);
	}
	{
		/* vCPU 0's halted exit, its three halts inside; then the wake programs' record
		 * of it (EV_HLT), read on their own clock: 5 ns later at both ends. Drawn, it
		 * would overlap the exit's slice partially. */
		struct vmexit_event e = ev(VMEXIT_EV_EXIT, 100, 1001, 0, 1040000, 50000,
					   VMEXIT_ISA_SVM, 0x78);
		struct vmexit_event h = ev(VMEXIT_EV_HLT, 100, 1001, 0, 1040005, 50000, 0, 0);

		put_event(k, &e);
		h.intr_info = 3;
		h.error_code = 0;
		put_event(k, &h);
	}
}

static void write_trace(const struct trace_writer_ops *ops, const char *path)
{
	FILE *f = fopen(path, "w");
	struct sink k = { .ops = ops };

	CHECK(f != NULL);
	if (!f)
		return;
	k.w = ops->open(f, NULL);
	write_events(&k);
	CHECK(ops->close(k.w) == 0);
	fclose(f);
}

/*
 * stream --wake's losses of deliveries, as the live loop says them (evout_wake_lost): slots 2
 * and the ring 4 at one check, the ring 1 at the next; a full cell map (9) loses stat's cells,
 * not the stream's deliveries: no marker.
 */
#define LOST_TS1	1200000ull
#define LOST_TS2	1300000ull
static const char *const lost_lines[] = {
	"I|g|0|-|1200000|vmexit_lost|lost 2 records (--wake: pending interrupts past the "
	"vCPU's slots)|{\"lost\": 2}",
	"I|g|0|-|1200000|vmexit_lost|lost 4 records (--wake: deliveries the event ring could "
	"not take)|{\"lost\": 4}",
	"I|g|0|-|1300000|vmexit_lost|lost 1 record (--wake: deliveries the event ring could "
	"not take)|{\"lost\": 1}",
};
#define NR_LOST_LINES (sizeof(lost_lines) / sizeof(lost_lines[0]))

/* The same events through stream's per-event output into path, in format fmt. */
static void write_stream(int fmt, const char *path)
{
	__u64 d1[NR_WAKE_LOSSES] = { [WAKE_LOST_SLOTS] = 2, [WAKE_LOST_CELLS] = 9,
				     [WAKE_LOST_RING] = 4 };
	__u64 d2[NR_WAKE_LOSSES] = { [WAKE_LOST_RING] = 1 };
	struct name_cache names = { 0 };
	struct evout_opts opts = { .mode = EVOUT_PERFETTO, .perfetto_format = fmt,
				   .names = &names };
	struct evout o;
	struct sink k = { .o = &o };

	opts.arg[EVOUT_PERFETTO] = path;
	CHECK_EQ_U64(evout_open(&o, &opts), 0);
	write_events(&k);
	evout_wake_lost(&o, LOST_TS1, d1);
	evout_wake_lost(&o, LOST_TS2, d2);
	CHECK_EQ_U64(evout_close(&o), 0);
	name_cache_free(&names);
}

/* The flow lines of a canonical trace, checked against the deliveries. */
static void check_flows(const char *canon)
{
	bool out_seen[NR_WAKES + 1] = {}, in_seen[NR_WAKES + 1] = {};
	__u64 out_ts[NR_WAKES + 1] = {}, in_ts[NR_WAKES + 1] = {};
	char out_track[NR_WAKES + 1][64] = {}, in_track[NR_WAKES + 1][64] = {};
	__u32 out_pid[NR_WAKES + 1] = {};
	int flows = 0;

	for (const char *p = canon; (p = strstr(p, "\nF|")); p++) {
		unsigned long long id, ts;
		unsigned int pid;
		char dir[4], track[64];

		CHECK(sscanf(p + 1, "F|%llu|%3[^|]|%u|%63[^|]|%llu", &id, dir, &pid, track,
			     &ts) == 5);
		/* Ids 1..n, each once each way. */
		CHECK(id >= 1 && id <= NR_WAKES);
		if (id < 1 || id > NR_WAKES)
			continue;
		if (!strcmp(dir, "out")) {
			CHECK(!out_seen[id]);
			out_seen[id] = true;
			out_ts[id] = ts;
			out_pid[id] = pid;
			snprintf(out_track[id], sizeof(out_track[id]), "%s", track);
			flows++;
		} else {
			CHECK(!strcmp(dir, "in"));
			CHECK(!in_seen[id]);
			in_seen[id] = true;
			in_ts[id] = ts;
			snprintf(in_track[id], sizeof(in_track[id]), "%s", track);
		}
	}
	CHECK_EQ_U64(flows, NR_WAKES);
	/* Flow i + 1 is delivery i: the writers number them in the order they draw them. */
	for (size_t i = 0; i < NR_WAKES; i++) {
		char vcpu[64];

		snprintf(vcpu, sizeof(vcpu), "vCPU %d", wakes[i].vcpu);
		CHECK(out_seen[i + 1] && in_seen[i + 1]);
		CHECK_EQ_U64(out_ts[i + 1], wakes[i].ts);
		CHECK_EQ_U64(in_ts[i + 1], wakes[i].ts + wakes[i].lat);
		CHECK_EQ_U64(out_pid[i + 1], wakes[i].tgid);
		CHECK_STR(out_track[i + 1], vcpu);
		CHECK_STR(in_track[i + 1], vcpu);
	}
	/* On the track of vCPU 1's exits. */
	CHECK(strstr(canon, "\nX|100|vCPU 1|1000000|2000|kvm_exit|") != NULL);
}

/* The halts' slices: exactly the lines worked out above, the halt before its pieces. */
static void check_halts(const char *canon, bool file_order)
{
	const char *at[NR_HALT_LINES];
	int n = 0;

	for (size_t i = 0; i < NR_HALT_LINES; i++) {
		char want[512];

		snprintf(want, sizeof(want), "\n%s\n", halt_lines[i]);
		at[i] = strstr(canon, want);
		CHECK(at[i] != NULL);
		if (!at[i])
			fprintf(stderr, "missing: %s\n", halt_lines[i]);
	}
	/* And nothing else in the category: no pieces cut to fit, no EV_HLT. */
	for (const char *p = canon; (p = strchr(p, '\n')); p++) {
		unsigned int pid;
		char track[64], cat[32];
		unsigned long long ts, dur;

		if (sscanf(p + 1, "X|%u|%63[^|]|%llu|%llu|%31[^|]|", &pid, track, &ts, &dur,
			   cat) == 5 && !strcmp(cat, "halt"))
			n++;
	}
	CHECK_EQ_U64(n, NR_HALT_LINES);
	/* The JSON writer's order is the file's: a halt precedes the pieces it starts with. */
	if (file_order) {
		CHECK(at[0] && at[1] && at[0] < at[1]);
		CHECK(at[4] && at[5] && at[4] < at[5]);
		CHECK(at[11] && at[12] && at[11] < at[12]);
	}
}

/*
 * Every track's slices nest: two on one track are apart or one holds the other. Perfetto drops
 * (JSON) or mismatches (protobuf ends) slices that overlap partially.
 */
static void check_nesting(const char *canon)
{
	static struct { unsigned int pid; char track[64]; unsigned long long a, b; } x[256];
	size_t n = 0, bad = 0;

	for (const char *p = canon; (p = strchr(p, '\n')) && n < 256; p++) {
		unsigned long long dur;

		if (sscanf(p + 1, "X|%u|%63[^|]|%llu|%llu|", &x[n].pid, x[n].track, &x[n].a,
			   &dur) == 4) {
			x[n].b = x[n].a + dur;
			n++;
		}
	}
	CHECK(n > 20);
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < n; j++)
			if (x[i].pid == x[j].pid && !strcmp(x[i].track, x[j].track) &&
			    x[i].a < x[j].a && x[j].a < x[i].b && x[i].b < x[j].b) {
				fprintf(stderr, "overlap on %u %s: [%llu,%llu] [%llu,%llu]\n",
					x[i].pid, x[i].track, x[i].a, x[i].b, x[j].a, x[j].b);
				bad++;
			}
	CHECK_EQ_U64(bad, 0);
}

/* The lines of a canonical trace in order: the protobuf's slices come at their ends. */
static int cmp_line(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static char *sorted_lines(const char *canon)
{
	char *copy = strdup(canon), *save, *l, *out, **v = NULL;
	size_t n = 0, len = strlen(canon) + 2;

	out = calloc(1, len);
	for (l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		v = realloc(v, (n + 1) * sizeof(*v));
		v[n++] = l;
	}
	qsort(v, n, sizeof(*v), cmp_line);
	for (size_t i = 0; i < n; i++) {
		strcat(out, v[i]);
		strcat(out, "\n");
	}
	free(v);
	free(copy);
	return out;
}

/* A trace file's canonical lines (perfetto_canon.py), the protobuf decoded first; NULL: failed. */
static char *canon(const char *path, bool proto)
{
	char cmd[512];

	if (proto)
		snprintf(cmd, sizeof(cmd), "protoc --decode=vmexit.perfetto.Trace -I docs " SCHEMA
			 " < %s > %s.txt && python3 " CANON " proto %s.txt", path, path, path);
	else
		snprintf(cmd, sizeof(cmd), "python3 " CANON " json %s", path);
	return slurp(cmd);
}

/* A temporary file's name in path (a template), the file made and closed. */
static void temp_file(char *path)
{
	int fd = mkstemp(path);

	CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);
}

static void remove_trace(const char *path, bool proto)
{
	char txt[256];

	if (!getenv("KEEP"))
		unlink(path);
	snprintf(txt, sizeof(txt), "%s.txt", path);
	if (proto)
		unlink(txt);
}

/*
 * stream's trace in format fmt: the writers' lines (want, sorted) and the losses' instants, the
 * deliveries' flows as check_flows() wants them.
 */
static void check_stream(int fmt, const char *want)
{
	char path[] = "/tmp/vmexit-pfwake-stream-XXXXXX", *c, *got, *all;
	bool proto = fmt == TRACE_PROTO;
	size_t n = strlen(want) + 1;

	temp_file(path);
	write_stream(fmt, path);
	c = canon(path, proto);
	CHECK(c != NULL);
	if (!c) {
		remove_trace(path, proto);
		return;
	}
	check_flows(c);
	check_halts(c, !proto);
	check_nesting(c);
	for (size_t i = 0; i < NR_LOST_LINES; i++)
		n += strlen(lost_lines[i]) + 1;
	all = calloc(1, n);
	strcpy(all, want);
	for (size_t i = 0; i < NR_LOST_LINES; i++) {
		strcat(all, lost_lines[i]);
		strcat(all, "\n");
	}
	got = sorted_lines(c);
	free(c);
	c = sorted_lines(all);
	CHECK_STR(got, c);
	free(c);
	free(got);
	free(all);
	remove_trace(path, proto);
}

int main(void)
{
	char json[] = "/tmp/vmexit-pfwake-XXXXXX", proto[] = "/tmp/vmexit-pfwake-pb-XXXXXX";
	char *cj, *cp;

	temp_file(json);
	temp_file(proto);
	write_trace(&perfetto_json_ops, json);
	write_trace(&perfetto_proto_ops, proto);
	cj = canon(json, false);
	cp = canon(proto, true);
	CHECK(cj != NULL && cp != NULL);
	if (cj && cp) {
		if (getenv("V"))
			printf("%s", cj);
		char *sj = sorted_lines(cj), *sp = sorted_lines(cp);

		check_flows(cj);
		check_flows(cp);
		check_halts(cj, true);
		check_halts(cp, false);
		check_nesting(cj);
		check_nesting(cp);
		CHECK_STR(sp, sj);
		check_stream(TRACE_JSON, sj);
		check_stream(TRACE_PROTO, sj);
		free(sj);
		free(sp);
	}
	free(cj);
	free(cp);
	remove_trace(json, false);
	remove_trace(proto, true);
	/* What stream --wake takes: every format that can say a lost delivery. */
	CHECK(evout_mode_has_wake(EVOUT_LINES));
	CHECK(evout_mode_has_wake(EVOUT_JSON));
	CHECK(evout_mode_has_wake(EVOUT_PERFETTO));
	CHECK(!evout_mode_has_wake(EVOUT_TSV));
	CHECK_DONE("perfetto_wake");
}
