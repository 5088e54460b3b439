// SPDX-License-Identifier: GPL-2.0
/*
 * Record file: round trip, overwrite protection, truncation at every byte, corruption at every
 * byte, bad magic / versions, forward compatibility. Expected record counts and offsets are
 * computed from the documented layout (docs/record-format.md), never from the reader itself.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "check.h"
#include "record_file.h"
#include "reasons.h"
#include "../xorshift64.h"

#define EV_REC		80			/* 8-byte record header + 72-byte event */
#define END_REC		24
#define REC_HDR		8			/* every record's header: crc, type, length */
#define LOST_REC	(8 + 8 + 8 * NR_LOST)

static char dir[] = "/tmp/vmexit-test-recXXXXXX";

static size_t pad8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

static __u64 rng = XORSHIFT64_SEED;

static __u64 rnd(void)
{
	return xorshift64(&rng);
}

static void make_event(struct vmexit_event *ev, unsigned int i)
{
	memset(ev, 0, sizeof(*ev));
	ev->ts_ns = 1000000000ull + i * 1234ull;
	ev->latency_ns = rnd() >> (rnd() % 64);
	ev->rip = rnd();
	ev->info1 = rnd();
	ev->info2 = i % 7 ? rnd() : ~0ull;
	ev->intr_info = rnd();
	ev->error_code = rnd();
	ev->tgid = 100 + i % 3;
	ev->tid = 200 + i % 5;
	ev->vcpu = i % 11 == 0 ? -1 : (int)(i % 4);
	ev->reason = i % 13 == 0 ? 0x80000000u | 4 : (__u32)(rnd() % 80);
	ev->cpu = i % 64;
	ev->isa = 1 + i % 3;
	ev->type = 1 + i % 3;
	/* 1.2: an exit that never completed carries the flag (the writer keeps type whole). */
	if (ev->type != VMEXIT_EV_TSC_OFFSET && i % 4 == 1)
		ev->type |= VMEXIT_EV_IN_FLIGHT;
}

static bool same_event(const struct vmexit_event *a, const struct vmexit_event *b)
{
	int bad = check_failures;

	CHECK_EQ_U64(a->ts_ns, b->ts_ns);
	CHECK_EQ_U64(a->latency_ns, b->latency_ns);
	CHECK_EQ_U64(a->rip, b->rip);
	CHECK_EQ_U64(a->info1, b->info1);
	CHECK_EQ_U64(a->info2, b->info2);
	CHECK_EQ_U64(a->intr_info, b->intr_info);
	CHECK_EQ_U64(a->error_code, b->error_code);
	CHECK_EQ_U64(a->tgid, b->tgid);
	CHECK_EQ_U64(a->tid, b->tid);
	CHECK_EQ_U64((__u64)(__s64)a->vcpu, (__u64)(__s64)b->vcpu);
	CHECK_EQ_U64(a->reason, b->reason);
	CHECK_EQ_U64(a->cpu, b->cpu);
	CHECK_EQ_U64(a->isa, b->isa);
	CHECK_EQ_U64(a->type, b->type);
	return bad == check_failures;
}

static void test_meta(struct rec_meta *m)
{
	memset(m, 0, sizeof(*m));
	strcpy(m->host, "testhost.example");
	strcpy(m->kernel, "6.1.0-test");
	m->mono_ns = 123456789012ull;
	m->real_ns = 1700000000123456789ull;
	m->tsc_mhz = 2995.123;
}

static void *slurp(const char *path, size_t *len)
{
	struct stat st;
	void *p;
	int fd = open(path, O_RDONLY);

	if (fd < 0 || fstat(fd, &st))
		return NULL;
	p = malloc(st.st_size ? st.st_size : 1);
	if (p && read(fd, p, st.st_size) != st.st_size) {
		free(p);
		p = NULL;
	}
	close(fd);
	*len = st.st_size;
	return p;
}

static void spill(const char *path, const void *p, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	CHECK(fd >= 0);
	CHECK(write(fd, p, len) == (ssize_t)len);
	close(fd);
}

static __u32 le32(const unsigned char *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (__u32)p[3] << 24;
}

static void set_le32(unsigned char *p, __u32 v)
{
	for (int i = 0; i < 4; i++)
		p[i] = v >> 8 * i;
}

static void test_crc(void)
{
	CHECK_EQ_U64(rec_crc32c(0, "123456789", 9), 0xe3069283u);
	/* Odd lengths and alignments must agree with the byte-at-a-time definition. */
	CHECK_EQ_U64(rec_crc32c(rec_crc32c(0, "1234", 4), "56789", 5), 0xe3069283u);
}

static void test_round_trip(void)
{
	char path[256], err[512];
	struct rec_meta meta;
	struct rec_writer *w;
	struct rec_reader *r;
	struct rec_item *it = malloc(sizeof(*it));
	enum { N = 5000 };
	struct vmexit_event *evs = calloc(N, sizeof(*evs));
	__u64 lost[NR_LOST];
	char longname[400];
	size_t n, got = 0, guests = 0, losts = 0, stacks = 0;
	const struct reason_entry *t;
	int ret;

	snprintf(path, sizeof(path), "%s/rt.vmexit", dir);
	test_meta(&meta);
	w = rec_writer_open(path, false, &meta, err, sizeof(err));
	CHECK(w);
	if (!w)
		return;
	/* Before the first event: these go into the header's guest table. */
	CHECK(!rec_writer_add_guest(w, 100, 0, "vm \"one\"\\"));
	CHECK(!rec_writer_add_guest(w, 101, 0, "vm-two"));
	for (unsigned int i = 0; i < N; i++) {
		make_event(&evs[i], i);
		CHECK(!rec_writer_add_event(w, &evs[i]));
		if (i == N / 2) {
			memset(longname, 'x', sizeof(longname) - 1);
			longname[sizeof(longname) - 1] = '\0';
			CHECK(!rec_writer_add_guest(w, 102, 0, longname));
			for (int k = 0; k < NR_LOST; k++)
				lost[k] = k * 1000 + 7;
			CHECK(!rec_writer_add_lost(w, 5555, lost));
		}
	}
	/* --stacks (1.4): rows at the end, frames as given, a long one cut at 255 bytes. */
	memset(longname, 'f', sizeof(longname) - 1);
	CHECK(!rec_writer_add_stack(w, &(struct stack_row){ .tgid = 100, .isa = 3, .reason = 2,
		.proc_start = 77, .ns = 123456789, .count = 42, .nr_frames = 3,
		.frames = (char *[]){ "__schedule+0x1", "", longname } }));
	CHECK_EQ_U64(rec_writer_events(w), N);
	CHECK_STR(rec_writer_error(w), "");
	CHECK(!rec_writer_close(w));

	r = rec_reader_open(path, err, sizeof(err));
	CHECK(r);
	if (!r) {
		fprintf(stderr, "%s\n", err);
		return;
	}
	CHECK_STR(rec_reader_meta(r)->host, meta.host);
	CHECK_STR(rec_reader_meta(r)->kernel, meta.kernel);
	CHECK_EQ_U64(rec_reader_meta(r)->mono_ns, meta.mono_ns);
	CHECK_EQ_U64(rec_reader_meta(r)->real_ns, meta.real_ns);
	CHECK(rec_reader_meta(r)->tsc_mhz == meta.tsc_mhz);
	CHECK_EQ_U64(rec_reader_version(r), REC_FORMAT_MAJOR << 16 | REC_FORMAT_MINOR);
	/* The file's reason table is the writer's. */
	for (__u32 isa = 1; isa <= 3; isa++) {
		t = reason_table(isa, &n);
		for (size_t k = 0; k < n; k++)
			CHECK_STR(rec_reader_reason_name(r, isa, t[k].code), t[k].name);
	}
	CHECK(rec_reader_reason_name(r, 1, 0x7fffffff) == NULL);
	CHECK(rec_reader_reason_name(r, 9, 0) == NULL);

	while ((ret = rec_reader_next(r, it, err, sizeof(err))) == 1) {
		switch (it->kind) {
		case REC_EVENT:
			if (got < N && !same_event(&it->ev, &evs[got]))
				fprintf(stderr, "  event %zu differs\n", got);
			got++;
			break;
		case REC_GUEST:
			if (guests == 0) {
				CHECK_EQ_U64(it->tgid, 100);
				CHECK_STR(it->name, "vm \"one\"\\");
				CHECK(got == 0);
			} else if (guests == 1) {
				CHECK_EQ_U64(it->tgid, 101);
				CHECK_STR(it->name, "vm-two");
				CHECK(got == 0);
			} else {
				CHECK_EQ_U64(it->tgid, 102);
				CHECK_EQ_U64(strlen(it->name), REC_NAME_MAX);
				CHECK_EQ_U64(got, N / 2 + 1);
			}
			guests++;
			break;
		case REC_LOST:
			CHECK_EQ_U64(it->ts_ns, 5555);
			for (int k = 0; k < NR_LOST; k++)
				CHECK_EQ_U64(it->lost[k], lost[k]);
			losts++;
			break;
		case REC_STACK:
			CHECK_EQ_U64(got, N);
			CHECK_EQ_U64(it->stack.tgid, 100);
			CHECK_EQ_U64(it->stack.isa, 3);
			CHECK_EQ_U64(it->stack.reason, 2);
			CHECK_EQ_U64(it->stack.proc_start, 77);
			CHECK_EQ_U64(it->stack.ns, 123456789);
			CHECK_EQ_U64(it->stack.count, 42);
			CHECK_EQ_U64(it->stack.nr_frames, 3);
			if (it->stack.nr_frames == 3) {
				CHECK_STR(it->stack.frames[0], "__schedule+0x1");
				CHECK_STR(it->stack.frames[1], "");
				CHECK_EQ_U64(strlen(it->stack.frames[2]), 255);
			}
			stacks++;
			break;
		case REC_TSC_CLOCK:
		case REC_TSC_SCALE:
		case REC_TSC_APPLIED:
			CHECK(!"no TSC records were written");
			break;
		case REC_KEY_REGION:
			CHECK(!"no key regions were written");
			break;
		case REC_WAKE:
		case REC_WAKE_LOST:
		case REC_WAKE_POSTED:
		case REC_WAKE_UNTIMED:
		case REC_HLT:
			CHECK(!"no deliveries were written");
			break;
		}
	}
	CHECK_EQ_U64(ret, 0);
	CHECK_EQ_U64(stacks, 1);
	CHECK_EQ_U64(got, N);
	CHECK_EQ_U64(guests, 3);
	CHECK_EQ_U64(losts, 1);
	/* Sticky end. */
	CHECK_EQ_U64(rec_reader_next(r, it, err, sizeof(err)), 0);
	rec_reader_close(r);
	free(evs);
	free(it);
}

/*
 * Three events with split fields (on CPU 100 + i, blocked 600, runq 300, latency 1000 + i) and
 * keys (port 0x3f8 + i out, of kind 1 + i), into path with meta; its size. False on failure.
 */
static bool write_three(const char *path, const struct rec_meta *meta, size_t *size)
{
	struct vmexit_event ev;
	struct rec_writer *w;
	struct stat st;
	char err[512];

	w = rec_writer_open(path, false, meta, err, sizeof(err));
	CHECK(w);
	if (!w)
		return false;
	for (unsigned int i = 0; i < 3; i++) {
		make_event(&ev, i);
		ev.latency_ns = 1000 + i;
		ev.oncpu_ns = 100 + i;
		ev.blocked_ns = 600;
		ev.runq_ns = 300;
		ev.key = (struct key_note){ .key = 0x3f8 + i, .kind = KEY_PORT + i,
					    .dir = KEY_DIR_OUT };
		CHECK(!rec_writer_add_event(w, &ev));
	}
	CHECK(!rec_writer_close(w));
	CHECK(!stat(path, &st));
	*size = st.st_size;
	return true;
}

/*
 * --split (format 1.1): a header item says so and every event record is 96 bytes, the split
 * fields after the 72 of 1.0 (which a 1.0 reader reads and skips the rest). Without --split the
 * file is byte for byte what 1.0 wrote: 72-byte events, no item, the fields read as 0.
 */
static void split_file(const char *name, bool split, size_t *size)
{
	char path[256], err[512];
	struct rec_meta meta;
	struct rec_reader *r;
	struct rec_item it;
	unsigned int got = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	test_meta(&meta);
	meta.split = split;
	if (!write_three(path, &meta, size))
		return;
	r = rec_reader_open(path, err, sizeof(err));
	CHECK(r);
	if (!r)
		return;
	CHECK(rec_reader_meta(r)->split == split);
	while (rec_reader_next(r, &it, err, sizeof(err)) == 1) {
		if (it.kind != REC_EVENT)
			continue;
		CHECK_EQ_U64(it.ev.latency_ns, 1000 + got);
		CHECK_EQ_U64(it.ev.oncpu_ns, split ? 100 + got : 0);
		CHECK_EQ_U64(it.ev.blocked_ns, split ? 600 : 0);
		CHECK_EQ_U64(it.ev.runq_ns, split ? 300 : 0);
		CHECK_EQ_U64(it.ev.key.kind, KEY_NONE);
		got++;
	}
	CHECK_EQ_U64(got, 3);
	rec_reader_close(r);
}

static void test_split(void)
{
	size_t with = 0, without = 0;

	split_file("split.vmexit", true, &with);
	split_file("nosplit.vmexit", false, &without);
	/* 3 x 24 bytes of split fields, and the 8-byte empty header item. */
	CHECK_EQ_U64(with - without, 3 * 24 + 8);
}

/*
 * --keys (format 1.5): a header item says so and every event record is 112 bytes, the key
 * (u64 key, u16 kind, u16 dir, u32 0) after the split fields, which are there as 0 without
 * --split: a 1.4 reader reads its 72 or 96 bytes and skips the rest.
 */
static void keys_file(const char *name, bool split, size_t *size)
{
	char path[256], err[512];
	static unsigned char raw[1 << 16];
	struct rec_meta meta;
	struct rec_reader *r;
	struct rec_item it;
	unsigned int got = 0, hlen;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	test_meta(&meta);
	meta.split = split;
	meta.keys = true;
	if (!write_three(path, &meta, size))
		return;
	/* The first record, right after the header: an event of 112 bytes, its key at 96. */
	f = fopen(path, "rb");
	CHECK(f && fread(raw, 1, sizeof(raw), f) > 48);
	if (f)
		fclose(f);
	hlen = raw[12] | raw[13] << 8 | raw[14] << 16 | (unsigned int)raw[15] << 24;
	CHECK(hlen + REC_HDR + 112 <= sizeof(raw));
	if (hlen + REC_HDR + 112 <= sizeof(raw)) {
		const unsigned char *p = raw + hlen;

		CHECK_EQ_U64(p[4] | p[5] << 8, 1);		/* type: event */
		CHECK_EQ_U64(p[6] | p[7] << 8, 112);		/* len */
		CHECK_EQ_U64(p[8 + 96] | p[8 + 97] << 8, 0x3f8);
		CHECK_EQ_U64(p[8 + 104] | p[8 + 105] << 8, KEY_PORT);
		CHECK_EQ_U64(p[8 + 106] | p[8 + 107] << 8, KEY_DIR_OUT);
	}
	r = rec_reader_open(path, err, sizeof(err));
	CHECK(r);
	if (!r)
		return;
	CHECK(rec_reader_meta(r)->keys);
	CHECK(rec_reader_meta(r)->split == split);
	CHECK(rec_reader_version(r) >= (1 << 16 | 5));
	while (rec_reader_next(r, &it, err, sizeof(err)) == 1) {
		if (it.kind != REC_EVENT)
			continue;
		CHECK_EQ_U64(it.ev.key.key, 0x3f8 + got);
		CHECK_EQ_U64(it.ev.key.kind, KEY_PORT + got);
		CHECK_EQ_U64(it.ev.key.dir, KEY_DIR_OUT);
		CHECK_EQ_U64(it.ev.oncpu_ns, split ? 100 + got : 0);
		got++;
	}
	CHECK_EQ_U64(got, 3);
	rec_reader_close(r);
}

static void test_keys(void)
{
	size_t keys = 0, keys_split = 0, plain = 0;

	keys_file("keys.vmexit", false, &keys);
	keys_file("keys-split.vmexit", true, &keys_split);
	split_file("plain.vmexit", false, &plain);
	/* 3 x 40 bytes of split and key fields, and the 8-byte empty header item. */
	CHECK_EQ_U64(keys - plain, 3 * 40 + 8);
	/* And the split item. */
	CHECK_EQ_U64(keys_split - keys, 8);
}

/* Opens path and adds the two guests test_full_disk()'s files start with; NULL on failure. */
static struct rec_writer *open_with_guests(const char *path, const struct rec_meta *meta)
{
	char err[512];
	struct rec_writer *w = rec_writer_open(path, true, meta, err, sizeof(err));

	CHECK(w);
	if (w) {
		CHECK(!rec_writer_add_guest(w, 100, 7, "vm-one"));
		CHECK(!rec_writer_add_guest(w, 101, 8, "vm-two"));
	}
	return w;
}

/*
 * A full disk takes part of a buffer, cutting a record: the writer counts the events whole in
 * the file (record says how many), which the reader finds there. RLIMIT_FSIZE cuts the file at
 * an exact size, as a full disk does at a block.
 */
static void test_full_disk(void)
{
	char path[256], err[512];
	struct rec_meta meta;
	struct rec_writer *w;
	struct rec_reader *r;
	struct rec_item *it = malloc(sizeof(*it));
	struct vmexit_event ev;
	struct rlimit old, lim;
	struct stat st;
	__u64 hdr, events = 0;
	int ret = 0;

	snprintf(path, sizeof(path), "%s/full.vmexit", dir);
	test_meta(&meta);
	/* The header's size: an empty file is the header and the end record. */
	w = open_with_guests(path, &meta);
	CHECK(w && !rec_writer_close(w));
	CHECK(!stat(path, &st));
	hdr = st.st_size - END_REC;
	CHECK(it && !getrlimit(RLIMIT_FSIZE, &old));
	if (!it)
		return;
	/* Room for 500 events and 37 bytes of the 501st. */
	lim = old;
	lim.rlim_cur = hdr + 500 * EV_REC + 37;
	signal(SIGXFSZ, SIG_IGN);
	w = open_with_guests(path, &meta);
	CHECK(w && !setrlimit(RLIMIT_FSIZE, &lim));
	if (!w)
		goto out;
	/* A first flush that fits, then one the limit cuts. */
	for (unsigned int i = 0; i < 300; i++) {
		make_event(&ev, i);
		CHECK(!rec_writer_add_event(w, &ev));
	}
	CHECK(!rec_writer_flush(w));
	CHECK_EQ_U64(rec_writer_events_written(w), 300);
	for (unsigned int i = 300; i < 2000; i++) {
		make_event(&ev, i);
		CHECK(!rec_writer_add_event(w, &ev));
	}
	CHECK_EQ_U64(rec_writer_flush(w), -EFBIG);
	CHECK_EQ_U64(rec_writer_events(w), 2000);
	CHECK_EQ_U64(rec_writer_events_written(w), 500);
	CHECK(strstr(rec_writer_error(w), "write failed") != NULL);
	CHECK_EQ_U64(rec_writer_close(w), -EFBIG);
	CHECK(!setrlimit(RLIMIT_FSIZE, &old));
	r = rec_reader_open(path, err, sizeof(err));
	CHECK(r);
	while (r && (ret = rec_reader_next(r, it, err, sizeof(err))) == 1)
		events += it->kind == REC_EVENT;
	CHECK(r && ret == -1);
	CHECK_EQ_U64(events, 500);
	rec_reader_close(r);
out:
	setrlimit(RLIMIT_FSIZE, &old);
	signal(SIGXFSZ, SIG_DFL);
	free(it);
}

static void test_overwrite(void)
{
	char path[256], err[512];
	struct rec_meta meta;
	struct rec_writer *w;

	snprintf(path, sizeof(path), "%s/ow.vmexit", dir);
	test_meta(&meta);
	w = rec_writer_open(path, false, &meta, err, sizeof(err));
	CHECK(w);
	CHECK(!rec_writer_close(w));
	err[0] = '\0';
	w = rec_writer_open(path, false, &meta, err, sizeof(err));
	CHECK(!w);
	CHECK(strstr(err, path) != NULL);
	CHECK(strstr(err, "--force") != NULL);
	CHECK(!strchr(err, '\n'));
	w = rec_writer_open(path, true, &meta, err, sizeof(err));
	CHECK(w);
	CHECK(!rec_writer_close(w));

	/* An empty recording is still a valid file: header + end record. */
	{
		struct rec_reader *r = rec_reader_open(path, err, sizeof(err));
		struct rec_item it;

		CHECK(r);
		if (r) {
			CHECK_EQ_U64(rec_reader_next(r, &it, err, sizeof(err)), 0);
			rec_reader_close(r);
		}
	}
	snprintf(path, sizeof(path), "%s/no/such/dir.vmexit", dir);
	w = rec_writer_open(path, false, &meta, err, sizeof(err));
	CHECK(!w);
	CHECK(strstr(err, path) != NULL);
}

/*
 * The small file used by the truncation and corruption tests, and the layout it must have:
 * hdr_guests header guests, then records whose start offsets are in starts[] (the last one is
 * the end record), and how many items (guests included) lie wholly before each record.
 */
struct layout {
	unsigned char *data;
	size_t len, hlen;
	size_t nrec;
	size_t starts[32], ends[32];
	struct vmexit_event evs[16];
};

static void build_small(struct layout *L)
{
	char path[256], err[512];
	struct rec_meta meta;
	struct rec_writer *w;
	__u64 lost[NR_LOST] = { 1, 2, 3 };
	const char *late = "late guest";
	size_t off, sizes[32];
	unsigned int e = 0;

	snprintf(path, sizeof(path), "%s/small.vmexit", dir);
	test_meta(&meta);
	w = rec_writer_open(path, true, &meta, err, sizeof(err));
	CHECK(w);
	rec_writer_add_guest(w, 100, 0, "alpha");
	rec_writer_add_guest(w, 101, 0, "beta");
	L->nrec = 0;
	for (; e < 4; e++) {
		make_event(&L->evs[e], e);
		rec_writer_add_event(w, &L->evs[e]);
		sizes[L->nrec++] = EV_REC;
	}
	rec_writer_add_guest(w, 102, 0, late);
	sizes[L->nrec++] = 8 + pad8(4 + strlen(late));
	rec_writer_add_lost(w, 42, lost);
	sizes[L->nrec++] = LOST_REC;
	for (; e < 7; e++) {
		make_event(&L->evs[e], e);
		rec_writer_add_event(w, &L->evs[e]);
		sizes[L->nrec++] = EV_REC;
	}
	sizes[L->nrec++] = END_REC;
	CHECK(!rec_writer_close(w));

	L->data = slurp(path, &L->len);
	CHECK(L->data != NULL);
	L->hlen = le32(L->data + 12);
	off = L->hlen;
	for (size_t i = 0; i < L->nrec; i++) {
		L->starts[i] = off;
		off += sizes[i];
		L->ends[i] = off;
	}
	CHECK_EQ_U64(off, L->len);
}

/* Reads everything; returns items delivered and fills err with the final message. */
static size_t read_all(struct rec_reader *r, const struct layout *L, int *last, char *err,
		       size_t errlen)
{
	struct rec_item it;
	size_t items = 0, ev = 0;
	int ret;

	while ((ret = rec_reader_next(r, &it, err, errlen)) == 1) {
		items++;
		if (L && it.kind == REC_EVENT && ev < 7)
			same_event(&it.ev, &L->evs[ev++]);
	}
	*last = ret;
	return items;
}

static void test_truncate(const struct layout *L)
{
	char path[256], err[512], want[96];

	snprintf(path, sizeof(path), "%s/cut.vmexit", dir);
	for (size_t cut = 0; cut <= L->len; cut++) {
		for (int mode = 0; mode < 2; mode++) {
			struct rec_reader *r;
			size_t whole = 0, items, at = L->hlen;
			int last;

			err[0] = '\0';
			if (mode == 0) {
				r = rec_reader_open_mem(L->data, cut, err, sizeof(err));
			} else {
				spill(path, L->data, cut);
				r = rec_reader_open(path, err, sizeof(err));
			}
			if (cut < L->hlen) {
				CHECK(!r);
				CHECK(strstr(err, "offset ") != NULL);
				rec_reader_close(r);
				continue;
			}
			CHECK(r);
			if (!r) {
				fprintf(stderr, "cut %zu: %s\n", cut, err);
				continue;
			}
			/* Records wholly before the cut, from the layout (+2 header guests). */
			for (size_t i = 0; i + 1 < L->nrec; i++) {
				if (L->ends[i] <= cut) {
					whole++;
					at = L->ends[i];
				}
			}
			items = read_all(r, L, &last, err, sizeof(err));
			CHECK_EQ_U64(items, whole + 2);
			if (cut == L->len) {
				CHECK_EQ_U64(last, 0);
			} else {
				CHECK_EQ_U64(last, -1);
				/* The damage is at the first record that is not whole. */
				snprintf(want, sizeof(want), "offset %zu:", at);
				if (!strstr(err, want))
					fprintf(stderr, "cut %zu: want \"%s\" in \"%s\"\n", cut,
						want, err), check_failures++;
				/* Cut after a record's header: the record's size and how far
				 * into it the file ends count the same bytes (header included). */
				for (size_t i = 0; i < L->nrec; i++) {
					if (L->ends[i] <= cut)
						continue;
					if (cut - at < REC_HDR)
						break;
					snprintf(want, sizeof(want), "%zu in the file) is cut short: "
						 "the file ends %zu bytes into it", L->ends[i] - at,
						 cut - at);
					if (!strstr(err, want))
						fprintf(stderr, "cut %zu: want \"%s\" in \"%s\"\n",
							cut, want, err), check_failures++;
					break;
				}
			}
			rec_reader_close(r);
		}
	}
}

static void test_corrupt(const struct layout *L)
{
	unsigned char *copy = malloc(L->len);
	char err[512], want[64];

	for (size_t pos = 0; pos < L->len; pos++) {
		struct rec_reader *r;
		size_t rec = 0, items;
		int last;

		memcpy(copy, L->data, L->len);
		copy[pos] ^= 0x40;
		err[0] = '\0';
		r = rec_reader_open_mem(copy, L->len, err, sizeof(err));
		if (pos < L->hlen) {
			/* Any header byte: refused at open, with an offset. */
			CHECK(!r);
			CHECK(strstr(err, "offset ") != NULL);
			rec_reader_close(r);
			continue;
		}
		CHECK(r);
		if (!r)
			continue;
		while (L->ends[rec] <= pos)
			rec++;
		items = read_all(r, L, &last, err, sizeof(err));
		CHECK_EQ_U64(last, -1);
		CHECK_EQ_U64(items, rec + 2);
		snprintf(want, sizeof(want), "offset %zu:", L->starts[rec]);
		if (!strstr(err, want))
			fprintf(stderr, "flip at %zu: want \"%s\" in \"%s\"\n", pos, want, err),
				check_failures++;
		/* Sticky error. */
		{
			struct rec_item it;
			char err2[512];

			CHECK_EQ_U64(rec_reader_next(r, &it, err2, sizeof(err2)), -1);
			CHECK_STR(err2, err);
		}
		rec_reader_close(r);
	}
	free(copy);
}

static void fix_header_crc(unsigned char *d, size_t hlen)
{
	unsigned char zero[4] = { 0 };
	__u32 crc = rec_crc32c(0, d, 16);

	crc = rec_crc32c(crc, zero, 4);
	crc = rec_crc32c(crc, d + 20, hlen - 20);
	d[16] = crc;
	d[17] = crc >> 8;
	d[18] = crc >> 16;
	d[19] = crc >> 24;
}

static void test_versions(const struct layout *L)
{
	unsigned char *d = malloc(L->len + 64);
	char err[512], want[96];
	struct rec_reader *r;
	struct rec_item it;
	size_t items;
	int last;

	/* Bad magic. */
	memcpy(d, L->data, L->len);
	memcpy(d, "GARBAGE!", 8);
	r = rec_reader_open_mem(d, L->len, err, sizeof(err));
	CHECK(!r);
	CHECK(strstr(err, "offset 0: bad magic") != NULL);

	/* A text file is not a record file. */
	r = rec_reader_open_mem("hello", 5, err, sizeof(err));
	CHECK(!r);
	CHECK(strstr(err, "not a vmexit record file") != NULL);
	r = rec_reader_open_mem("", 0, err, sizeof(err));
	CHECK(!r);
	CHECK(strstr(err, "offset 0:") != NULL);

	/* Future major version: refused with a clear message, before the checksum. */
	memcpy(d, L->data, L->len);
	d[8] = 2;
	r = rec_reader_open_mem(d, L->len, err, sizeof(err));
	CHECK(!r);
	snprintf(want, sizeof(want), "offset 8: format version 2.%d is not supported",
		 REC_FORMAT_MINOR);
	CHECK(strstr(err, want) != NULL);
	CHECK(strstr(err, "newer vmexit") != NULL);

	/*
	 * Future minor version with an unknown header item and an unknown record type: read as
	 * if they weren't there. Build it: header + 16-byte item, then an unknown 8-byte record
	 * before the end record, whose record count grows by one.
	 */
	{
		size_t hlen = L->hlen, rest = L->len - hlen, o;
		unsigned char unk_rec[16] = { 0, 0, 0, 0, 77, 0, 3, 0, 'a', 'b', 'c' };
		unsigned char *end;
		__u32 crc;

		memcpy(d, L->data, hlen);
		d[10] = REC_FORMAT_MINOR + 1;	/* a minor newer than this reader's */
		memset(d + hlen, 0, 16);
		d[hlen] = 200;			/* item type 200, 5 bytes */
		d[hlen + 4] = 5;
		hlen += 16;
		d[12] = hlen;
		d[13] = hlen >> 8;
		fix_header_crc(d, hlen);
		o = hlen;
		memcpy(d + o, L->data + L->hlen, rest - END_REC);
		o += rest - END_REC;
		crc = rec_crc32c(0, unk_rec + 4, 12);
		memcpy(unk_rec, &crc, 4);
		memcpy(d + o, unk_rec, 16);
		o += 16;
		end = d + o;
		memcpy(end, L->data + L->len - END_REC, END_REC);
		end[16]++;			/* records: + the unknown one */
		crc = rec_crc32c(0, end + 4, 20);
		memcpy(end, &crc, 4);
		o += END_REC;
		r = rec_reader_open_mem(d, o, err, sizeof(err));
		CHECK(r);
		if (r) {
			CHECK_EQ_U64(rec_reader_version(r), 1 << 16 | (REC_FORMAT_MINOR + 1));
			items = read_all(r, L, &last, err, sizeof(err));
			CHECK_EQ_U64(last, 0);
			CHECK_EQ_U64(items, L->nrec - 1 + 2);
			rec_reader_close(r);
		}
	}

	/*
	 * Older minors (1.0, and 1.1 before exits in flight were recorded): the same layout, read
	 * as it is. Their events just never carry VMEXIT_EV_IN_FLIGHT.
	 */
	r = rec_reader_open_mem(L->data, L->len, err, sizeof(err));
	CHECK(r);
	items = r ? read_all(r, L, &last, err, sizeof(err)) : 0;
	rec_reader_close(r);
	for (int minor = 0; minor < REC_FORMAT_MINOR; minor++) {
		size_t old_items;

		memcpy(d, L->data, L->len);
		d[10] = minor;
		fix_header_crc(d, L->hlen);
		r = rec_reader_open_mem(d, L->len, err, sizeof(err));
		CHECK(r);
		if (r) {
			CHECK_EQ_U64(rec_reader_version(r), 1 << 16 | minor);
			old_items = read_all(r, L, &last, err, sizeof(err));
			CHECK_EQ_U64(last, 0);
			CHECK_EQ_U64(old_items, items);
			rec_reader_close(r);
		}
	}

	/* A record missing in the middle is caught by the end record's counts. */
	{
		size_t cut = L->starts[1], len = L->len - EV_REC;

		memcpy(d, L->data, cut);
		memcpy(d + cut, L->data + cut + EV_REC, L->len - cut - EV_REC);
		r = rec_reader_open_mem(d, len, err, sizeof(err));
		CHECK(r);
		if (r) {
			/* NULL layout: the events no longer line up, don't compare them. */
			read_all(r, NULL, &last, err, sizeof(err));
			CHECK_EQ_U64(last, -1);
			CHECK(strstr(err, "records are missing") != NULL);
			rec_reader_close(r);
		}
	}

	/* Trailing garbage after the end record. */
	memcpy(d, L->data, L->len);
	memset(d + L->len, 0, 8);
	r = rec_reader_open_mem(d, L->len + 8, err, sizeof(err));
	CHECK(r);
	if (r) {
		while (rec_reader_next(r, &it, err, sizeof(err)) == 1)
			;
		CHECK(strstr(err, "data after the end record") != NULL);
		rec_reader_close(r);
	}
	free(d);
}

/* The guests of a file, in order: tgid, start, name. */
struct guest_seen {
	__u32 tgid;
	__u64 start;
	char name[16];
};

static size_t read_guests(const void *d, size_t len, struct guest_seen *g, size_t max,
			  __u32 *version)
{
	struct rec_item *it = calloc(1, sizeof(*it));
	char err[512];
	struct rec_reader *r = rec_reader_open_mem(d, len, err, sizeof(err));
	size_t n = 0;
	int ret;

	CHECK(r && it);
	if (!r || !it) {
		free(it);
		return 0;
	}
	*version = rec_reader_version(r);
	while ((ret = rec_reader_next(r, it, err, sizeof(err))) == 1) {
		if (it->kind != REC_GUEST || n >= max)
			continue;
		g[n].tgid = it->tgid;
		g[n].start = it->start;
		snprintf(g[n].name, sizeof(g[n].name), "%.15s", it->name);
		n++;
	}
	CHECK_EQ_U64(ret, 0);
	rec_reader_close(r);
	free(it);
	return n;
}

/*
 * 1.3: a guest carries its VMM's start time (a pid reused by a new VMM is another guest), in a
 * start item / record of its own just before it (24 bytes: 8 + u32 tgid, u32 0, u64 start), so
 * that older readers still read the name. Unknown (0): nothing more is written, and a file
 * without starts (1.2 and before) reads with start 0 for every guest.
 */
static void test_guest_starts(void)
{
	static const struct guest_seen want[] = {
		{ 300, 0, "a" }, { 301, 1111, "b" }, { 301, 9999, "b2" }, { 302, 0, "c" },
		{ 302, 5, "c2" },
	};
	struct guest_seen got[8];
	unsigned char *with, *without;
	size_t len_with, len_without, n;
	struct vmexit_event ev;
	__u32 version;

	for (int starts = 1; starts >= 0; starts--) {
		char path[256], err[512];
		struct rec_meta meta;
		struct rec_writer *w;

		snprintf(path, sizeof(path), "%s/starts%d.vmexit", dir, starts);
		test_meta(&meta);
		w = rec_writer_open(path, true, &meta, err, sizeof(err));
		CHECK(w);
		if (!w)
			return;
		/* Two in the header, three as records after the first event. */
		for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
			if (i == 2) {
				make_event(&ev, 1);
				CHECK(!rec_writer_add_event(w, &ev));
			}
			CHECK(!rec_writer_add_guest(w, want[i].tgid, starts ? want[i].start : 0,
						    want[i].name));
		}
		CHECK(!rec_writer_close(w));
	}
	{
		char path[256];

		snprintf(path, sizeof(path), "%s/starts1.vmexit", dir);
		with = slurp(path, &len_with);
		snprintf(path, sizeof(path), "%s/starts0.vmexit", dir);
		without = slurp(path, &len_without);
	}
	CHECK(with && without);
	if (!with || !without)
		goto out;
	/* One start item in the header, two start records: 24 bytes each. */
	CHECK_EQ_U64(len_with, len_without + 3 * 24);

	n = read_guests(with, len_with, got, 8, &version);
	CHECK_EQ_U64(n, 5);
	CHECK_EQ_U64(version, REC_FORMAT_MAJOR << 16 | REC_FORMAT_MINOR);
	for (size_t i = 0; i < n && i < 5; i++) {
		CHECK_EQ_U64(got[i].tgid, want[i].tgid);
		CHECK_EQ_U64(got[i].start, want[i].start);
		CHECK_STR(got[i].name, want[i].name);
	}

	/* A file written before 1.3 (no start anywhere; the version says 1.2): start 0. */
	without[10] = 2;
	fix_header_crc(without, le32(without + 12));
	n = read_guests(without, len_without, got, 8, &version);
	CHECK_EQ_U64(version, 1 << 16 | 2);
	CHECK_EQ_U64(n, 5);
	for (size_t i = 0; i < n && i < 5; i++) {
		CHECK_EQ_U64(got[i].tgid, want[i].tgid);
		CHECK_EQ_U64(got[i].start, 0);
		CHECK_STR(got[i].name, want[i].name);
	}
out:
	free(with);
	free(without);
}

/* A start record is for the guest record right after it, of the same pid, and nothing else. */
static void test_guest_start_mismatch(void)
{
	char path[256], err[512];
	struct guest_seen got[4];
	struct rec_meta meta;
	struct rec_writer *w;
	struct vmexit_event ev;
	unsigned char *d;
	size_t len, n, at;
	__u32 version;

	snprintf(path, sizeof(path), "%s/mismatch.vmexit", dir);
	test_meta(&meta);
	w = rec_writer_open(path, true, &meta, err, sizeof(err));
	CHECK(w);
	if (!w)
		return;
	make_event(&ev, 1);
	CHECK(!rec_writer_add_event(w, &ev));
	CHECK(!rec_writer_add_guest(w, 400, 4242, "x"));
	CHECK(!rec_writer_add_guest(w, 401, 0, "y"));
	CHECK(!rec_writer_close(w));
	d = slurp(path, &len);
	CHECK(d != NULL);
	if (!d)
		return;
	/* Make the start record's pid 401's... */
	at = le32(d + 12) + EV_REC;
	CHECK_EQ_U64(le32(d + at + 4), 5 | 16 << 16);	/* type 5, 16 bytes */
	d[at + 8] = 401 & 0xff;
	d[at + 9] = 401 >> 8;
	set_le32(d + at, rec_crc32c(0, d + at + 4, 4 + 16));
	/* ...then it is not 400's, and 401 (not right after it) has none either. */
	n = read_guests(d, len, got, 4, &version);
	CHECK_EQ_U64(n, 2);
	CHECK_EQ_U64(got[0].tgid, 400);
	CHECK_EQ_U64(got[0].start, 0);
	CHECK_EQ_U64(got[1].tgid, 401);
	CHECK_EQ_U64(got[1].start, 0);

	/* A start record shorter than 16 bytes is damage, said as such. */
	d[at + 6] = 8;
	set_le32(d + at, rec_crc32c(0, d + at + 4, 4 + 8));
	{
		struct rec_reader *r = rec_reader_open_mem(d, len, err, sizeof(err));
		struct rec_item it;
		char want[128];

		CHECK(r);
		while (r && rec_reader_next(r, &it, err, sizeof(err)) == 1)
			;
		snprintf(want, sizeof(want), "offset %zu: guest start record too short (8 bytes, "
			 "need 16)", at);
		CHECK(strstr(err, want) != NULL);
		rec_reader_close(r);
	}
	free(d);
}

/*
 * 1.6: the header's TSC pair and kHz, a TSC clock record and a scaling record come back as
 * written; a file written without a pair (a 1.4 writer, an arm64 host) reads with none. The
 * item is 8 + 24 bytes and each record 8 + 16 / 8 + 24, as documented. 1.7: an applied
 * record (8 + 48 bytes) with a negative offset, read at the start and after a write.
 */
static void tsc_file(const char *name, bool pair, size_t *size)
{
	char path[256], err[512];
	struct rec_meta m;
	struct rec_writer *w;
	struct rec_reader *r;
	struct rec_item *it = calloc(1, sizeof(*it));
	struct tsc_pair end = { .tsc = 0xfedcba9876543210ull, .mono_ns = 987654321ull };
	int n, clocks = 0, scales = 0, applied = 0;
	size_t before;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	test_meta(&m);
	if (pair) {
		m.tsc_start = (struct tsc_pair){ .tsc = 0x123456789abcull, .mono_ns = 555ull };
		m.tsc_khz = 2995123;
	}
	w = rec_writer_open(path, true, &m, err, sizeof(err));
	CHECK(w && it);
	if (!w || !it)
		return;
	CHECK(!rec_writer_add_tsc_clock(w, &end));
	CHECK(!rec_writer_add_tsc_scale(w, 4242, 3, 3ull << 47, 48));
	CHECK(!rec_writer_flush(w));
	free(slurp(path, &before));
	CHECK(!rec_writer_add_tsc_applied(w, 4242, 1, 1000, 0, (__u64)-2285378128520ll, 0, 0));
	CHECK(!rec_writer_add_tsc_applied(w, 4242, 2, 3000, 2000, 1ull << 50, 3ull << 47, 48));
	CHECK(!rec_writer_flush(w));
	free(slurp(path, size));
	CHECK_EQ_U64(*size - before, 2 * (8 + 48));
	CHECK(!rec_writer_close(w));
	r = rec_reader_open(path, err, sizeof(err));
	CHECK(r);
	if (!r)
		return;
	CHECK_EQ_U64(rec_reader_meta(r)->tsc_start.tsc, pair ? 0x123456789abcull : 0);
	CHECK_EQ_U64(rec_reader_meta(r)->tsc_start.mono_ns, pair ? 555 : 0);
	CHECK_EQ_U64(rec_reader_meta(r)->tsc_khz, pair ? 2995123 : 0);
	while ((n = rec_reader_next(r, it, err, sizeof(err))) == 1) {
		if (it->kind == REC_TSC_CLOCK) {
			clocks++;
			CHECK_EQ_U64(it->tsc_pair.tsc, end.tsc);
			CHECK_EQ_U64(it->tsc_pair.mono_ns, end.mono_ns);
		} else if (it->kind == REC_TSC_SCALE) {
			scales++;
			CHECK_EQ_U64(it->tgid, 4242);
			CHECK_EQ_U64(it->vcpu, 3);
			CHECK_EQ_U64(it->ratio, 3ull << 47);
			CHECK_EQ_U64(it->frac_bits, 48);
		} else if (it->kind == REC_TSC_APPLIED) {
			bool start = !applied++;

			CHECK_EQ_U64(it->tgid, 4242);
			CHECK_EQ_U64(it->vcpu, start ? 1 : 2);
			CHECK_EQ_U64(it->ts_ns, start ? 1000 : 3000);
			CHECK_EQ_U64(it->write_ns, start ? 0 : 2000);
			CHECK_EQ_U64(it->tsc_offset, start ? (__u64)-2285378128520ll : 1ull << 50);
			CHECK_EQ_U64(it->ratio, start ? 0 : 3ull << 47);
			CHECK_EQ_U64(it->frac_bits, start ? 0 : 48);
		}
	}
	CHECK_EQ_U64(n, 0);
	CHECK_EQ_U64(clocks, 1);
	CHECK_EQ_U64(scales, 1);
	CHECK_EQ_U64(applied, 2);
	rec_reader_close(r);
	free(it);
	free(slurp(path, size));
}

static void test_tsc_clock(void)
{
	size_t with = 0, without = 0;

	tsc_file("tsc.vmexit", true, &with);
	tsc_file("notsc.vmexit", false, &without);
	CHECK_EQ_U64(with - without, 8 + 24);
}

/* record --qmp's maps (1.7): each region back as written, in its space, with its guest. */
static void test_key_regions(void)
{
	char path[256], err[512];
	struct rec_meta m;
	struct rec_writer *w;
	struct rec_reader *r;
	struct rec_item *it = calloc(1, sizeof(*it));
	int n, io = 0, mem = 0;

	snprintf(path, sizeof(path), "%s/regions.vmexit", dir);
	test_meta(&m);
	w = rec_writer_open(path, true, &m, err, sizeof(err));
	CHECK(w && it);
	if (!w || !it)
		return;
	CHECK(!rec_writer_add_guest(w, 4242, 777, "vga-guest"));
	CHECK(!rec_writer_add_key_region(w, 4242, 777, true, 0x70, 0x70, "rtc-index"));
	CHECK(!rec_writer_add_key_region(w, 4242, 777, false, 0xa0000, 0xbffff, "vga-lowmem"));
	CHECK(!rec_writer_close(w));
	r = rec_reader_open(path, err, sizeof(err));
	CHECK(r);
	if (!r)
		return;
	CHECK(rec_reader_version(r) >= (1u << 16 | 7));	/* 1.7 has the regions */
	while ((n = rec_reader_next(r, it, err, sizeof(err))) == 1) {
		if (it->kind != REC_KEY_REGION)
			continue;
		CHECK_EQ_U64(it->tgid, 4242);
		CHECK_EQ_U64(it->start, 777);
		if (it->io) {
			io++;
			CHECK(it->lo == 0x70 && it->hi == 0x70 && !strcmp(it->name, "rtc-index"));
		} else {
			mem++;
			CHECK(it->lo == 0xa0000 && it->hi == 0xbffff &&
			      !strcmp(it->name, "vga-lowmem"));
		}
	}
	CHECK_EQ_U64(n, 0);
	CHECK(io == 1 && mem == 1);
	rec_reader_close(r);
	free(it);
}

static void test_missing(void)
{
	char err[512];

	CHECK(!rec_reader_open("/nonexistent/x.vmexit", err, sizeof(err)));
	CHECK(strstr(err, "/nonexistent/x.vmexit") != NULL);
}

int main(void)
{
	struct layout L;
	char cmd[300];

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_crc();
	test_round_trip();
	test_split();
	test_keys();
	test_key_regions();
	test_overwrite();
	test_full_disk();
	build_small(&L);
	if (L.data) {
		test_truncate(&L);
		test_corrupt(&L);
		test_versions(&L);
		free(L.data);
	}
	test_missing();
	test_guest_starts();
	test_guest_start_mismatch();
	test_tsc_clock();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		fprintf(stderr, "cannot remove %s\n", dir);
	CHECK_DONE("record_file");
}
