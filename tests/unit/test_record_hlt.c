// SPDX-License-Identifier: GPL-2.0
/*
 * record --wake's halts (format 1.9): each halt and halted exit read back as written; report's
 * halted-exit rows and halt-poll advice of them equal what stat --wake prints from the cells
 * bpf/wake.bpf.c makes of the same halts (made here from the halts' clock readings as it makes
 * them); a hostile hlt record (cut short, parts that do not sum to its latency, another type,
 * unknown flags, a halted exit without a halt) is refused in one line naming its offset, after
 * every record before it; a reader that does not know the type skips it and counts it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "hist.h"
#include "record_file.h"
#include "record_bytes.h"
#include "report_wake.h"
#include "wake_output.h"
#include "../xorshift64.h"

#define RT_HLT		14	/* docs/record-format.md */
#define HLT_REC_LEN	72
#define START_100	5000ull
#define START_200	6000ull
#define HPN		200000	/* the halt_poll_ns the "host" had */

static char dir[] = "/tmp/vmexit-test-rechltXXXXXX";

/* One halt as the clocks saw it: KVM's ns from its start to kvm_vcpu_wakeup (at end). */
struct halt {
	__u64 end, ns;
	bool waited, valid;
	__u64 sleep, wake, on;	/* waited: first sleep, the scheduler's wake-up, on CPU */
};

/* The cells the kernel keeps, and the events it sends, for the same halts. */
struct sim {
	struct wake_snapshot cells;
	struct vmexit_event *evs;
	size_t nr_evs;
};

static struct hlt_cell *cell_of(struct wake_snapshot *s, __u32 tgid, __s32 vcpu)
{
	struct hlt_key k = { tgid, vcpu, tgid == 100 ? START_100 : START_200 };

	for (size_t i = 0; i < s->nr_hlt; i++)
		if (!memcmp(&s->hkeys[i], &k, sizeof(k)))
			return &s->hcells[i];
	s->hkeys[s->nr_hlt] = k;
	memset(&s->hcells[s->nr_hlt], 0, sizeof(struct hlt_cell));
	return &s->hcells[s->nr_hlt++];
}

static struct vmexit_event *ev_new(struct sim *m, __u32 tgid, __s32 vcpu, __u16 type)
{
	struct vmexit_event *ev = &m->evs[m->nr_evs++];

	memset(ev, 0, sizeof(*ev));
	ev->type = type;
	ev->tgid = tgid;
	ev->vcpu = vcpu;
	ev->tid = tgid + 1 + vcpu;
	ev->cpu = vcpu;
	return ev;
}

/*
 * One halted exit, kvm_exit at exit_ts to kvm_entry at entry, its halts h[0..n): what
 * wake_halt_end and hlt_account in bpf/wake_common.bpf.h add to the cell and send.
 */
static void halted_exit(struct sim *m, __u32 tgid, __s32 vcpu, __u64 exit_ts, __u64 entry,
			const struct halt *h, int n)
{
	struct hlt_cell *c = cell_of(&m->cells, tgid, vcpu);
	__u64 acc[NR_HLT_PARTS] = {}, in = 0;
	struct vmexit_event *ev;

	for (int i = 0; i < n; i++) {
		__u64 start = h[i].end - h[i].ns, p[NR_HLT_PARTS] = {};

		c->halts++;
		c->halt_ns += h[i].ns;
		c->invalid += !h[i].valid;
		if (!h[i].waited) {
			c->polled++;
			p[HLT_PART_POLL] = h[i].ns;
			c->hist[hist_bucket(h[i].ns)]++;
			c->wake_sum_ns += h[i].ns;
		} else {
			if (h[i].sleep > start)
				c->poll_slept++;
			else
				c->slept++;
			p[HLT_PART_POLL] = h[i].sleep - start;
			p[HLT_PART_SLEEP] = h[i].wake - h[i].sleep;
			p[HLT_PART_RUNQ] = h[i].on - h[i].wake;
			p[HLT_PART_OTHER] = h[i].end - h[i].on;
			c->hist[hist_bucket(h[i].wake - start)]++;
			c->wake_sum_ns += h[i].wake - start;
			c->slept_halt_ns += h[i].ns;
		}
		ev = ev_new(m, tgid, vcpu, VMEXIT_EV_HALT);
		ev->ts_ns = start;
		ev->latency_ns = h[i].ns;
		ev->error_code = (h[i].waited ? VMEXIT_HALT_WAITED : 0) |
				 (h[i].valid ? VMEXIT_HALT_VALID : 0);
		for (int k = 0; k < NR_HLT_PARTS; k++) {
			*hlt_event_part(ev, k) = p[k];
			if (k < HLT_PART_OTHER)
				acc[k] += p[k];
		}
	}
	c->exits++;
	c->sum_ns += entry - exit_ts;
	ev = ev_new(m, tgid, vcpu, VMEXIT_EV_HLT);
	ev->ts_ns = exit_ts;
	ev->latency_ns = entry - exit_ts;
	ev->intr_info = n;
	for (int k = 0; k < HLT_PART_OTHER; k++) {
		c->parts[k] += acc[k];
		*hlt_event_part(ev, k) = acc[k];
		in += acc[k];
	}
	c->parts[HLT_PART_OTHER] += entry - exit_ts - in;
	*hlt_event_part(ev, HLT_PART_OTHER) = entry - exit_ts - in;
}

/*
 * The workload. VMM 100 vCPU 0: 10 exits, each one halt polled 5 us, 8 us exit to entry.
 * VMM 100 vCPU 1: random halts that slept (polled first or not), one to three per exit, some
 * invalid. VMM 200 vCPU 0: 4 exits, each one halt slept 1 ms without polling.
 */
static void make_workload(struct sim *m)
{
	__u64 rng = XORSHIFT64_SEED, t = 1000000;

	memset(m, 0, sizeof(*m));
	m->cells.hkeys = calloc(8, sizeof(struct hlt_key));
	m->cells.hcells = calloc(8, sizeof(struct hlt_cell));
	m->evs = calloc(1000, sizeof(*m->evs));
	m->cells.halt_poll_ns = HPN;
	for (int i = 0; i < 10; i++, t += 20000) {
		struct halt h = { .end = t + 6000, .ns = 5000, .valid = true };

		halted_exit(m, 100, 0, t, t + 8000, &h, 1);
	}
	for (int i = 0; i < 40; i++) {
		struct halt h[3];
		int n = 1 + xorshift64(&rng) % 3;
		__u64 exit_ts = t, now = t + 1000 + xorshift64(&rng) % 500;

		for (int j = 0; j < n; j++) {
			__u64 start = now;
			bool polled = xorshift64(&rng) % 2;

			h[j].waited = true;
			h[j].valid = xorshift64(&rng) % 4 != 0;
			h[j].sleep = start + (polled ? 1 + xorshift64(&rng) % 300000 : 0);
			h[j].wake = h[j].sleep + xorshift64(&rng) % 3000000;
			h[j].on = h[j].wake + xorshift64(&rng) % 50000;
			h[j].end = h[j].on + xorshift64(&rng) % 2000;
			h[j].ns = h[j].end - start;
			now = h[j].end + xorshift64(&rng) % 100;
		}
		t = now + 700 + xorshift64(&rng) % 3000;
		halted_exit(m, 100, 1, exit_ts, t, h, n);
		t += 5000;
	}
	for (int i = 0; i < 4; i++, t += 2000000) {
		struct halt h = { .waited = true, .valid = true, .sleep = t + 100,
				  .wake = t + 100 + 1000000, .on = t + 100 + 1000000 + 300,
				  .end = t + 100 + 1000000 + 500, .ns = 1000000 + 500 };

		halted_exit(m, 200, 0, t, h.end + 1000, &h, 1);
	}
}

static char *print_of(const struct wake_snapshot *s, enum out_format fmt)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	CHECK(wake_print(s, fmt, HPN, f) == 0);
	fclose(f);
	return text;
}

static char *report_of(struct report_wake *rw, enum out_format fmt)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	CHECK(report_wake_print(rw, fmt, f) == 0);
	fclose(f);
	return text;
}

static void write_file(const char *path, const struct sim *m)
{
	struct rec_meta meta = { .mono_ns = 1, .wake = true, .halt_poll_ns = HPN };
	char err[512];
	struct rec_writer *w = rec_writer_open(path, false, &meta, err, sizeof(err));

	CHECK(w != NULL);
	if (!w)
		return;
	rec_writer_add_guest(w, 100, START_100, "web");
	rec_writer_add_guest(w, 200, START_200, "db");
	for (size_t i = 0; i < m->nr_evs; i++) {
		struct vmexit_event ex = { .type = VMEXIT_EV_EXIT, .ts_ns = m->evs[i].ts_ns,
					   .latency_ns = 500, .tgid = 100, .tid = 101,
					   .isa = VMEXIT_ISA_SVM, .reason = 0x78 };

		/* Through the exits' call: it knows a halt by its type. */
		CHECK(rec_writer_add_event(w, &m->evs[i]) == 0);
		CHECK(rec_writer_add_event(w, &ex) == 0);
	}
	CHECK(rec_writer_close(w) == 0);
}

static void test_round_trip(const char *path, struct sim *m)
{
	char err[512];
	struct rec_reader *r = rec_reader_open(path, err, sizeof(err));
	struct rec_item *it = calloc(1, sizeof(*it));
	struct report_wake rw = {};
	size_t seen = 0;
	char *want, *got;
	int n;

	CHECK(r != NULL);
	if (!r)
		return;
	CHECK(rec_reader_meta(r)->halts);
	CHECK_EQ_U64(rec_reader_meta(r)->halt_poll_ns, HPN);
	report_wake_set_halts(&rw, rec_reader_meta(r)->halts, rec_reader_meta(r)->halt_poll_ns);
	while ((n = rec_reader_next(r, it, err, sizeof(err))) == 1) {
		if (it->kind != REC_HLT)
			continue;
		CHECK(seen < m->nr_evs);
		if (seen < m->nr_evs)
			CHECK(!memcmp(&it->ev, &m->evs[seen], sizeof(it->ev)));
		seen++;
		CHECK(report_wake_add(&rw, &it->ev, it->ev.tgid == 100 ? START_100 :
				      START_200) == 0);
	}
	if (n)
		fprintf(stderr, "  %s\n", err);
	CHECK(n == 0);
	CHECK_EQ_U64(seen, m->nr_evs);
	rec_reader_close(r);
	free(it);

	wake_snapshot_sort(&m->cells);
	/* As a recording's: the deliveries' ring losses said, no posted count (no halts' part). */
	m->cells.ring = true;
	for (int fmt = OUT_TABLE; fmt <= OUT_JSON; fmt++) {
		want = print_of(&m->cells, fmt);
		got = report_of(&rw, fmt);
		CHECK_STR(got, want);
		if (fmt == OUT_CSV) {
			/* By hand: 10 exits of 8 us, each a 5 us halt that polled. */
			CHECK(strstr(got, "\nhlt,100,0,10,10,10,0,0,0,80000,50000,50000,0,0,"
					  "30000\n") != NULL);
			/* 4 exits of 1,001,600 ns, each a halt of 1,000,500 asleep from its
			 * start: poll 0, sleep 1 ms, runq 300, other the rest (1,300). */
			CHECK(strstr(got, "\nhlt,200,0,4,4,0,0,4,0,4006400,4002000,0,4000000,"
					  "1200,5200\n") != NULL);
		}
		free(want);
		free(got);
	}
	report_wake_free(&rw);
}

static void short_len(unsigned char *rec)
{
	put_le(rec + 6, 40, 2);
}

static void parts_off(unsigned char *rec)
{
	rec[8 + 16]++;		/* the poll part's low byte: one ns off its latency */
}

static void bad_type(unsigned char *rec)
{
	put_le(rec + 8 + 16 + 8 * NR_HLT_PARTS + 12, VMEXIT_EV_WAKE, 4);
}

static void bad_flags(unsigned char *rec)
{
	put_le(rec + 8 + 16 + 8 * NR_HLT_PARTS + 16, 4, 4);
}

static void no_halts(unsigned char *rec)
{
	put_le(rec + 8 + 16 + 8 * NR_HLT_PARTS + 16, 0, 4);
}

static void test_hostile(const char *path)
{
	FILE *f = fopen(path, "rb");
	unsigned char *d = malloc(1 << 20), *t;
	size_t len = f ? fread(d, 1, 1 << 20, f) : 0, off;
	char err[512];
	__u64 hlts, skipped;

	if (f)
		fclose(f);
	/* The workload's records: 0 a halt, 1 its exit (VMM 100 vCPU 0). */
	off = find_record(d, len, RT_HLT, 2);
	CHECK(off != 0);
	CHECK_EQ_U64(d[off + 6] | d[off + 7] << 8, HLT_REC_LEN);
	check_refused(d, len, RT_HLT, REC_HLT, 2,
		      "hlt record too short (40 bytes, need 72)", short_len);
	check_refused(d, len, RT_HLT, REC_HLT, 2,
		      "hlt record whose parts sum to 5001 ns, not its latency 5000 ns",
		      parts_off);
	check_refused(d, len, RT_HLT, REC_HLT, 4,
		      "hlt record of type 5 (7 a halt, 8 a halted exit)", bad_type);
	check_refused(d, len, RT_HLT, REC_HLT, 4, "hlt record of a halt with flags 0x4", bad_flags);
	check_refused(d, len, RT_HLT, REC_HLT, 3,
		      "hlt record of a halted exit without a halt", no_halts);
	/* Cut inside one: named, every one before it read. */
	CHECK(read_all(d, off + 8 + 40, REC_HLT, err, sizeof(err), &hlts, &skipped) == -1);
	CHECK(strstr(err, "hlt record (type 14, 72 bytes; 80 in the file) is cut short") != NULL);
	CHECK_EQ_U64(hlts, 2);
	/* A reader that knows no type 14 (a 1.8 one): skips them all, counts them. */
	t = malloc(len);
	memcpy(t, d, len);
	for (int i = 0; (off = find_record(t, len, RT_HLT, 0)); i++) {
		put_le(t + off + 4, 99, 2);
		reseal(t + off);
	}
	CHECK(read_all(t, len, REC_HLT, err, sizeof(err), &hlts, &skipped) == 0);
	CHECK_EQ_U64(hlts, 0);
	CHECK(skipped > 0);
	free(t);
	free(d);
}

int main(void)
{
	char path[128], cmd[200];
	struct sim m;

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(path, sizeof(path), "%s/h.vmexit", dir);
	make_workload(&m);
	write_file(path, &m);
	test_round_trip(path, &m);
	test_hostile(path);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		fprintf(stderr, "cannot remove %s\n", dir);
	wake_snapshot_free(&m.cells);
	free(m.evs);
	CHECK_DONE("record_hlt");
}
