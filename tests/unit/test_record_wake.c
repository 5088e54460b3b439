// SPDX-License-Identifier: GPL-2.0
/*
 * record --wake's deliveries in the record file: each one read back as written, beside the
 * exits; report's rows of them equal the rows stat --wake prints from the cells the kernel
 * makes of the same deliveries (made here as bpf/wake.bpf.c makes them); a wake record that
 * is cut short, or whose parts do not sum to its latency, or whose vector is past a byte, is
 * refused in one line naming its offset; a reader that does not know the record type skips it
 * and counts it. Offsets come from the documented layout (docs/record-format.md).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "check.h"
#include "commands.h"
#include "hist.h"
#include "record_file.h"
#include "record_bytes.h"
#include "report_wake.h"
#include "wake_output.h"
#include "../xorshift64.h"

#define RT_WAKE		11	/* docs/record-format.md */
#define RT_WAKE_POSTED	13	/* docs/record-format.md: a posted interrupt (1.9) */
#define RT_WAKE_UNTIMED	15	/* docs/record-format.md: an untimed interrupt (1.10) */
#define RT_WAKE_LOST	12
#define WAKE_REC_LEN	88	/* its payload */

static char dir[] = "/tmp/vmexit-test-recwakeXXXXXX";

/* The workload: who got how many deliveries of what, and how late (ns) the first one was. */
static const struct {
	__u32 tgid;
	__s32 vcpu;
	__u32 source, vector, count;
	__u64 first_ns, step_ns;
	__u32 posted;	/* and how many more KVM posted (no exit, not timed) */
	__u32 untimed;	/* and how many were made pending before the vCPU's first entry */
} sends[] = {
	{ 100, 1, WAKE_SRC_TIMER, 0xec, 20, 1000, 37, 0, 3 },
	{ 100, 0, WAKE_SRC_MSI, 0x41, 7, 250000, 1000, 4, 0 },
	{ 200, 1, WAKE_SRC_IPI, 0xfd, 5, 3, 1, 2, 5 },
};
#define NR_POSTED	6
#define NR_UNTIMED	8
#define LOST_AFTER	9	/* the round after which the loss record is written */
#define NR_SENDS (sizeof(sends) / sizeof(sends[0]))
#define START_100	5000ull		/* the VMMs' start times */
#define START_200	6000ull

/* Delivery k of send s: its latency split into six random parts that sum to it, the same
 * each time it is made (the generator seeded by s and k). */
static void make_wake(struct vmexit_event *ev, size_t s, __u32 k)
{
	__u64 left, rng = XORSHIFT64_SEED ^ (s << 32 | (k + 1));

	memset(ev, 0, sizeof(*ev));
	ev->type = VMEXIT_EV_WAKE;
	ev->ts_ns = 1000000 + 10000ull * k + s;
	ev->latency_ns = sends[s].first_ns + sends[s].step_ns * k;
	ev->tgid = sends[s].tgid;
	ev->tid = sends[s].tgid + 1 + sends[s].vcpu;
	ev->vcpu = sends[s].vcpu;
	ev->reason = sends[s].source;
	ev->intr_info = sends[s].vector;
	ev->cpu = k % 2;
	left = ev->latency_ns;
	for (int p = 0; p < NR_WAKE_PARTS - 1; p++) {
		__u64 v = left ? xorshift64(&rng) % (left + 1) : 0;

		*wake_event_part(ev, p) = v;
		left -= v;
	}
	*wake_event_part(ev, NR_WAKE_PARTS - 1) = left;
}

/* Posted interrupt k of send s: its source and vector, no time (the sender's thread). */
static void make_posted(struct vmexit_event *ev, size_t s, __u32 k)
{
	memset(ev, 0, sizeof(*ev));
	ev->type = VMEXIT_EV_WAKE_POSTED;
	ev->ts_ns = 1500000 + 10000ull * k + s;
	ev->tgid = sends[s].tgid;
	ev->tid = sends[s].tgid + 50;
	ev->vcpu = sends[s].vcpu;
	ev->reason = sends[s].source;
	ev->intr_info = sends[s].vector;
	ev->cpu = 1;
}

/* Untimed interrupt k of send s: no vCPU record to time it or tell a timer by (source unknown
 * but for KVM's notes), its vector. */
static void make_untimed(struct vmexit_event *ev, size_t s, __u32 k)
{
	make_posted(ev, s, k);
	ev->type = VMEXIT_EV_WAKE_UNTIMED;
	ev->ts_ns = 1700000 + 10000ull * k + s;
	ev->tid = sends[s].tgid + 60;
	ev->reason = sends[s].source == WAKE_SRC_TIMER ? WAKE_SRC_UNKNOWN : sends[s].source;
}

static bool same_wake(const struct vmexit_event *a, const struct vmexit_event *b)
{
	struct vmexit_event x = *a, y = *b;

	for (int p = 0; p < NR_WAKE_PARTS; p++)
		if (*wake_event_part(&x, p) != *wake_event_part(&y, p))
			return false;
	return a->type == b->type && a->ts_ns == b->ts_ns && a->latency_ns == b->latency_ns &&
	       a->tgid == b->tgid && a->tid == b->tid && a->vcpu == b->vcpu &&
	       a->reason == b->reason && a->intr_info == b->intr_info && a->cpu == b->cpu;
}

/* The cells bpf/wake.bpf.c keeps for the same deliveries (its wake_cells update). */
static void kernel_cells(struct wake_snapshot *s)
{
	memset(s, 0, sizeof(*s));
	s->wkeys = calloc(NR_SENDS, sizeof(*s->wkeys));
	s->wcells = calloc(NR_SENDS, sizeof(*s->wcells));
	s->halt_poll_ns = -1;
	for (size_t i = 0; i < NR_SENDS; i++) {
		struct wake_cell *c = &s->wcells[i];

		s->wkeys[i] = (struct wake_key){ sends[i].tgid, sends[i].vcpu, sends[i].source,
						 sends[i].vector, sends[i].tgid == 100 ? START_100 :
						 START_200 };
		for (__u32 k = 0; k < sends[i].count; k++) {
			struct vmexit_event ev;

			make_wake(&ev, i, k);
			c->count++;
			c->sum_ns += ev.latency_ns;
			if (ev.latency_ns > c->max_ns)
				c->max_ns = ev.latency_ns;
			c->hist[hist_bucket(ev.latency_ns)]++;
			for (int p = 0; p < NR_WAKE_PARTS; p++)
				c->parts[p] += *wake_event_part(&ev, p);
		}
		c->posted = sends[i].posted;
		s->posted += sends[i].posted;
		s->untimed += sends[i].untimed;
	}
	s->posted_known = true;
	s->untimed_known = true;
	s->nr_wake = NR_SENDS;
	s->lost[WAKE_LOST_SLOTS] = 3;
}

/* A recording: guests, exits and deliveries interleaved, 3 deliveries lost; posted: with the
 * posted and untimed interrupts (a 1.10 writer's), else without (as a 1.8 writer had none). */
static void write_file(const char *path, bool posted)
{
	struct rec_meta meta = { .mono_ns = 1, .wake = true };
	/* 5 deliveries the shared ring refused: record --wake's, said apart from the exits'. */
	__u64 wl[NR_WAKE_LOSSES] = { [WAKE_LOST_SLOTS] = 3, [WAKE_LOST_CELLS] = 9,
				     [WAKE_LOST_RING] = 5 };
	char err[512];
	struct rec_writer *w = rec_writer_open(path, false, &meta, err, sizeof(err));

	CHECK(w != NULL);
	if (!w)
		return;
	rec_writer_add_guest(w, 100, START_100, "web");
	rec_writer_add_guest(w, 200, START_200, "db");
	for (__u32 k = 0; k < 20; k++) {
		for (size_t s = 0; s < NR_SENDS; s++) {
			struct vmexit_event ev = { .type = VMEXIT_EV_EXIT, .ts_ns = 1000000 + k,
						   .latency_ns = 500, .tgid = sends[s].tgid,
						   .tid = 101, .vcpu = 0, .isa = VMEXIT_ISA_SVM,
						   .reason = 0x78 };

			if (k < sends[s].count) {
				struct vmexit_event wv;

				make_wake(&wv, s, k);
				/* Through the exits' call: it knows a delivery by its type. */
				CHECK(rec_writer_add_event(w, &wv) == 0);
			}
			if (posted && k < sends[s].posted) {
				struct vmexit_event pv;

				make_posted(&pv, s, k);
				CHECK(rec_writer_add_event(w, &pv) == 0);
			}
			if (posted && k < sends[s].untimed) {
				struct vmexit_event uv;

				make_untimed(&uv, s, k);
				CHECK(rec_writer_add_event(w, &uv) == 0);
			}
			CHECK(rec_writer_add_event(w, &ev) == 0);
		}
		/* Midway, after round 9's records: report --events says it there. */
		if (k == LOST_AFTER)
			CHECK(rec_writer_add_wake_lost(w, 1000000 + 10000ull * k + 5, wl) == 0);
	}
	CHECK_EQ_U64(rec_writer_events(w), 60 + 32 + (posted ? NR_POSTED + NR_UNTIMED : 0));
	CHECK(rec_writer_close(w) == 0);
}

static unsigned char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf = malloc(1 << 20);

	*len = f && buf ? fread(buf, 1, 1 << 20, f) : 0;
	if (f)
		fclose(f);
	return buf;
}

static char *csv_of(const struct wake_snapshot *s)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	CHECK(wake_print(s, OUT_CSV, -1, f) == 0);
	fclose(f);
	return text;
}

/* report's own print of rw in fmt. */
static char *report_of(struct report_wake *rw, enum out_format fmt)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	CHECK(report_wake_print(rw, fmt, f) == 0);
	fclose(f);
	return text;
}

/* `vmexit report -i path --events [fmt]` into out; its exit status. */
static int report_events(const char *path, const char *fmt, const char *out)
{
	char *argv[6] = { "report", "-i", (char *)path, "--events" };
	int argc = 4, status;
	pid_t pid;

	if (fmt)
		argv[argc++] = (char *)fmt;
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		if (fd < 0 || dup2(fd, 1) < 0)
			_exit(99);
		exit(cmd_report(argc, argv));
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/*
 * report --events says a recording's lost deliveries where they were lost, as stream --wake
 * said them live: after the events written before the loss record, before those after it;
 * the slots' and the ring's, not the cells' (a full cell map costs no recorded delivery).
 */
static void test_report_events_lost(const char *path)
{
	/* What write_file put before its loss record: rounds 0..LOST_AFTER. */
	__u32 before = 0;
	char out[sizeof(dir) + 16];
	static const struct {
		const char *fmt, *slots, *ring, *cells;
	} forms[] = {
		{ NULL, "# LOST 3 (--wake: pending interrupts past the vCPU's slots) at ",
		  "# LOST 5 (--wake: deliveries the event ring could not take) at ", "# LOST 9" },
		{ "--json", "{\"lost\":3,\"type\":\"wake\",\"cause\":\"slots\"",
		  "{\"lost\":5,\"type\":\"wake\",\"cause\":\"ring\"", "\"lost\":9" },
	};

	for (__u32 k = 0; k <= LOST_AFTER; k++)
		for (size_t s = 0; s < NR_SENDS; s++)
			before += 1 + (k < sends[s].count) + (k < sends[s].posted) +
				  (k < sends[s].untimed);
	snprintf(out, sizeof(out), "%s/events", dir);
	for (size_t f = 0; f < sizeof(forms) / sizeof(forms[0]); f++) {
		FILE *in;
		char line[1024];
		__u32 events = 0, slots_at = 0, ring_at = 0, cells = 0;

		CHECK(report_events(path, forms[f].fmt, out) == 0);
		in = fopen(out, "r");
		CHECK(in != NULL);
		if (!in)
			continue;
		while (fgets(line, sizeof(line), in)) {
			if (!strncmp(line, forms[f].slots, strlen(forms[f].slots)))
				slots_at = events + 1;
			else if (!strncmp(line, forms[f].ring, strlen(forms[f].ring)))
				ring_at = events + 1;
			else if (strstr(line, forms[f].cells))
				cells++;
			else if (line[0] != '#')
				events++;
		}
		fclose(in);
		CHECK_EQ_U64(slots_at, before + 1);
		CHECK_EQ_U64(ring_at, before + 1);
		CHECK_EQ_U64(cells, 0);
		CHECK_EQ_U64(events, 60 + 32 + NR_POSTED + NR_UNTIMED);
	}
	unlink(out);
}

/* Write, read back each record, and the rows of report against those of the kernel's cells. */
static void test_round_trip(const char *path)
{
	char err[512];
	struct rec_reader *r = rec_reader_open(path, err, sizeof(err));
	struct rec_item *it = calloc(1, sizeof(*it));
	struct report_wake rw = {};
	struct wake_snapshot kern;
	__u32 seen[NR_SENDS] = {}, seen_posted[NR_SENDS] = {}, seen_untimed[NR_SENDS] = {};
	__u32 exits = 0, guests = 0, lost = 0;
	__u64 starts[2] = { START_100, START_200 };
	char *want, *got;
	int n;

	CHECK(r != NULL);
	if (!r)
		return;
	CHECK(rec_reader_meta(r)->wake);
	CHECK_EQ_U64(rec_reader_version(r), 1u << 16 | 10);
	CHECK(rec_reader_meta(r)->wake_posted);
	CHECK(rec_reader_meta(r)->wake_untimed);
	rw.ev.s.posted_known = rec_reader_meta(r)->wake_posted;
	rw.ev.s.untimed_known = rec_reader_meta(r)->wake_untimed;
	CHECK(rec_reader_meta(r)->halts);
	while ((n = rec_reader_next(r, it, err, sizeof(err))) == 1) {
		size_t s;

		switch (it->kind) {
		case REC_WAKE:
		case REC_WAKE_POSTED:
		case REC_WAKE_UNTIMED: {
			/* Each kind read back as its maker made it, in the order written. */
			void (*make)(struct vmexit_event *, size_t, __u32) =
				it->kind == REC_WAKE ? make_wake :
				it->kind == REC_WAKE_POSTED ? make_posted : make_untimed;
			__u32 *count = it->kind == REC_WAKE ? seen :
				       it->kind == REC_WAKE_POSTED ? seen_posted : seen_untimed;
			struct vmexit_event want_ev;

			for (s = 0; s < NR_SENDS; s++)
				if (sends[s].tgid == it->ev.tgid && sends[s].vcpu == it->ev.vcpu)
					break;
			CHECK(s < NR_SENDS);
			if (s == NR_SENDS)
				break;
			make(&want_ev, s, count[s]++);
			CHECK(same_wake(&it->ev, &want_ev));
			CHECK(report_wake_add(&rw, &it->ev, starts[it->ev.tgid == 200]) == 0);
			break;
		}
		case REC_EVENT:
			CHECK_EQ_U64(it->ev.type, VMEXIT_EV_EXIT);
			exits++;
			break;
		case REC_GUEST:
			guests++;
			break;
		case REC_WAKE_LOST:
			lost++;
			CHECK_EQ_U64(it->wake_lost[WAKE_LOST_SLOTS], 3);
			CHECK_EQ_U64(it->wake_lost[WAKE_LOST_RING], 5);
			report_wake_lost(&rw, it->wake_lost);
			break;
		default:
			CHECK(!"an item the writer did not write");
		}
	}
	if (n)
		fprintf(stderr, "  %s\n", err);
	CHECK(n == 0);
	CHECK_EQ_U64(exits, 60);
	CHECK_EQ_U64(guests, 2);
	CHECK_EQ_U64(lost, 1);
	for (size_t s = 0; s < NR_SENDS; s++) {
		CHECK_EQ_U64(seen[s], sends[s].count);
		CHECK_EQ_U64(seen_posted[s], sends[s].posted);
		CHECK_EQ_U64(seen_untimed[s], sends[s].untimed);
	}
	rec_reader_close(r);
	free(it);

	/* The same rows, columns and values as stat --wake's CSV of the kernel's cells. */
	kernel_cells(&kern);
	wake_snapshot_sort(&kern);
	want = csv_of(&kern);
	rw.ev.s.halt_poll_ns = -1;
	wake_snapshot_sort(&rw.ev.s);
	/* The kernel's cells never see the ring: its refusals apart (checked below). */
	CHECK_EQ_U64(rw.ev.s.ring_lost, 5);
	rw.ev.s.ring_lost = 0;
	got = csv_of(&rw.ev.s);
	rw.ev.s.ring_lost = 5;
	CHECK_STR(got, want);
	/* The timer row by hand: 20 deliveries of 1000 + 37 k ns, k < 20. */
	CHECK(strstr(got, "\nwake,100,1,timer,236,20,27030,") != NULL);
	/* The MSI row by hand: 7 timed, and 4 posted in the last column. */
	CHECK(strstr(got, "\nwake,100,0,msi,65,7,") != NULL);
	CHECK(strstr(got, ",4\nwake,100,1,timer,") != NULL);
	CHECK(strstr(got, "# posted: 6 interrupts KVM posted") != NULL);
	/* Untimed: in no row (none timed), their total said. */
	CHECK(strstr(got, "# untimed: 8 interrupts made pending") != NULL);
	CHECK(strstr(got, ",unknown,") == NULL);
	free(want);
	free(got);
	/* A 1.8 file's halts (none kept): said absent, in place of their rows. */
	report_wake_set_halts(&rw, false, 200000);
	{
		char *text = report_of(&rw, OUT_CSV);

		CHECK(strstr(text, "# hlt, halt_poll: not in this recording (its format is older "
				   "than 1.9") != NULL);
		CHECK(strstr(text, "kind,pid,vcpu,exits") == NULL);
		free(text);
	}
	/* A 1.9 file keeps them: their (here empty) rows, none said absent. */
	report_wake_set_halts(&rw, true, 200000);
	{
		char *text = report_of(&rw, OUT_CSV);

		CHECK(strstr(text, "not in this recording") == NULL);
		CHECK(strstr(text, "kind,pid,vcpu,exits") != NULL);
		/* A full cell map loses none of a recording's deliveries: not said as lost. */
		CHECK(strstr(text, "# lost: 3 pending interrupts past") != NULL);
		CHECK(strstr(text, "cells (map full)") == NULL);
		/* The ring's refusals are lost deliveries too, in the same section. */
		CHECK(strstr(text, "# lost: 5 deliveries the event ring could not take\n") != NULL);
		free(text);
	}
	{
		char *text = report_of(&rw, OUT_JSON);

		CHECK(strstr(text, "\"deliveries the event ring could not take\":5}") != NULL);
		free(text);
	}
	report_wake_free(&rw);
	wake_snapshot_free(&kern);
}

static void short_len(unsigned char *rec)
{
	put_le(rec + 6, 40, 2);		/* the record's size stays: padding past 40 */
}

static void parts_off(unsigned char *rec)
{
	__u64 guest = 0;

	for (int i = 7; i >= 0; i--)
		guest = guest << 8 | rec[8 + 16 + i];
	put_le(rec + 8 + 16, guest + 1, 8);	/* one ns more than the latency */
}

static void big_vector(unsigned char *rec)
{
	put_le(rec + 8 + 16 + 8 * NR_WAKE_PARTS + 16, 256, 4);
}

/* One ns in an untimed record's first part and its latency: parts still sum to it. */
static void untimed_timed(unsigned char *rec)
{
	put_le(rec + 8 + 8, 1, 8);
	put_le(rec + 8 + 16, 1, 8);
}

static void unknown_type(unsigned char *rec)
{
	put_le(rec + 4, 99, 2);
}

static void test_hostile(const char *path)
{
	size_t len;
	unsigned char *d = slurp(path, &len), *t;
	size_t off = find_record(d, len, RT_WAKE, 4);
	char err[512];
	__u64 wakes, skipped;

	CHECK(off != 0);
	CHECK_EQ_U64(d[off + 6] | d[off + 7] << 8, WAKE_REC_LEN);
	check_refused(d, len, RT_WAKE, REC_WAKE, 4,
		      "wake record too short (40 bytes, need 88)", short_len);
	check_refused(d, len, RT_WAKE, REC_WAKE, 4, "wake record's parts sum to", parts_off);
	check_refused(d, len, RT_WAKE, REC_WAKE, 5, "wake record with vector 256", big_vector);
	/* An untimed interrupt that carries a time: refused, never counted as a delivery. */
	check_refused(d, len, RT_WAKE_UNTIMED, REC_WAKE_UNTIMED, 2,
		      "wake untimed record with 1 ns (none is timed)", untimed_timed);
	/* A loss record without every counter 1.8 has: refused, not read as 0 lost. */
	t = malloc(len);
	memcpy(t, d, len);
	off = find_record(t, len, RT_WAKE_LOST, 0);
	CHECK(off != 0);
	put_le(t + off + 6, 16, 2);
	reseal(t + off);
	CHECK(read_all(t, len, REC_WAKE, err, sizeof(err), &wakes, &skipped) == -1);
	CHECK(strstr(err, "wake lost record too short (16 bytes, at least 32)") != NULL);
	/*
	 * The first 1.8 writers' record, the kernel's three counters only (8 bytes fewer, the
	 * records after it moved up): read, the ring 0.
	 */
	memcpy(t, d, off + 8 + 32);
	memcpy(t + off + 8 + 32, d + off + 8 + 40, len - (off + 8 + 40));
	put_le(t + off + 6, 32, 2);
	reseal(t + off);
	{
		struct rec_reader *r = rec_reader_open_mem(t, len - 8, err, sizeof(err));
		struct rec_item *it = calloc(1, sizeof(*it));
		int n, seen = 0;

		while ((n = rec_reader_next(r, it, err, sizeof(err))) == 1) {
			if (it->kind != REC_WAKE_LOST)
				continue;
			seen++;
			CHECK_EQ_U64(it->wake_lost[WAKE_LOST_SLOTS], 3);
			CHECK_EQ_U64(it->wake_lost[WAKE_LOST_RING], 0);
		}
		if (n)
			fprintf(stderr, "  %s\n", err);
		CHECK(n == 0);
		CHECK(seen == 1);
		rec_reader_close(r);
		free(it);
	}
	free(t);
	off = find_record(d, len, RT_WAKE, 4);
	/* Cut inside it: the reader names it and stops there. */
	CHECK(read_all(d, off + 8 + 40, REC_WAKE, err, sizeof(err), &wakes, &skipped) == -1);
	CHECK(strstr(err, "wake record (type 11, 88 bytes; 96 in the file) is cut short") != NULL);
	CHECK_EQ_U64(wakes, 4);
	/* A reader that knows no such type (as a 1.7 one knows none of 11): skipped, counted. */
	t = malloc(len);
	memcpy(t, d, len);
	for (int i = 0; i < 32; i++) {
		size_t o = find_record(t, len, RT_WAKE, 0);

		unknown_type(t + o);
		reseal(t + o);
	}
	CHECK(read_all(t, len, REC_WAKE, err, sizeof(err), &wakes, &skipped) == 0);
	CHECK_EQ_U64(wakes, 0);
	CHECK_EQ_U64(skipped, 32);
	free(t);
	free(d);
}

/*
 * A 1.8 file (one written without posted records, as a 1.8 writer had none, its minor 8): read
 * as before, its posted unknown rather than 0, so report says no total.
 */
static void test_old_minor(const char *path)
{
	size_t len, hlen;
	unsigned char *d, zero[4] = { 0 };
	char err[512];
	struct rec_reader *r;
	struct rec_item *it = calloc(1, sizeof(*it));
	struct report_wake rw = {};
	__u32 crc;
	char *text;
	int n;

	unlink(path);
	write_file(path, false);
	d = slurp(path, &len);
	hlen = d[12] | d[13] << 8 | d[14] << 16 | (size_t)d[15] << 24;
	put_le(d + 10, 8, 2);
	crc = rec_crc32c(0, d, 16);
	crc = rec_crc32c(crc, zero, 4);
	put_le(d + 16, rec_crc32c(crc, d + 20, hlen - 20), 4);
	r = rec_reader_open_mem(d, len, err, sizeof(err));
	CHECK(r != NULL);
	if (!r)
		return;
	CHECK_EQ_U64(rec_reader_version(r), 1u << 16 | 8);
	CHECK(rec_reader_meta(r)->wake);
	CHECK(!rec_reader_meta(r)->wake_posted);
	CHECK(!rec_reader_meta(r)->wake_untimed);
	rw.ev.s.posted_known = rec_reader_meta(r)->wake_posted;
	rw.ev.s.untimed_known = rec_reader_meta(r)->wake_untimed;
	while ((n = rec_reader_next(r, it, err, sizeof(err))) == 1)
		if (it->kind == REC_WAKE)
			CHECK(report_wake_add(&rw, &it->ev, 0) == 0);
	CHECK(n == 0);
	text = report_of(&rw, OUT_JSON);
	CHECK(strstr(text, "},\"posted\":") == NULL);
	CHECK(strstr(text, "\"untimed\":") == NULL);
	free(text);
	text = report_of(&rw, OUT_CSV);
	CHECK(strstr(text, "# posted:") == NULL);
	free(text);
	report_wake_free(&rw);
	rec_reader_close(r);
	free(it);
	free(d);
}

int main(void)
{
	char path[128], cmd[200];

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(path, sizeof(path), "%s/w.vmexit", dir);
	write_file(path, true);
	test_round_trip(path);
	test_report_events_lost(path);
	test_hostile(path);
	test_old_minor(path);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	/* KEEP=1: the recording stays, for an older vmexit's report to read. */
	if (getenv("KEEP"))
		printf("kept %s\n", path);
	else if (system(cmd))
		fprintf(stderr, "cannot remove %s\n", dir);
	CHECK_DONE("record_wake");
}
