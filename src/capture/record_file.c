// SPDX-License-Identifier: GPL-2.0
/*
 * Record file writer and reader. docs/record-format.md is the format's reference; in short:
 * a header (magic, version, length, CRC32C, clocks, then typed items: host, kernel, reason
 * tables, guests) followed by 8-byte aligned records, each {crc32c, type, len, payload}.
 * A per-record checksum is what lets a reader name the exact record that is damaged and hand
 * out every record before it; with SSE4.2 it costs a few ns per record.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/utsname.h>

#include "array_grow.h"
#include "record_file.h"
#include "record_hlt.h"
#include "record_le.h"
#include "reasons.h"

static const unsigned char rec_magic[8] = { 0x89, 'V', 'M', 'E', 'X', 'I', 'T', '\n' };

#define HDR_FIXED_LEN		48	/* magic .. tsc_mhz: the items start here */
#define HDR_CRC_OFF		16
#define HDR_MAX_LEN		(64u << 20)	/* a sanity bound, far above any real header */

enum hdr_item_type {
	HI_HOST = 1,
	HI_KERNEL = 2,
	HI_REASONS = 3,
	HI_GUEST = 4,
	HI_SPLIT = 5,	/* no payload: event records carry the --split fields (1.1) */
	HI_GUEST_START = 6,	/* the next guest item's process start time (1.3) */
	HI_KEYS = 7,	/* no payload: event records carry the --keys fields (1.5) */
	HI_TSC_CLOCK = 8,	/* host TSC / mono pair at start, sysfs TSC kHz (1.6) */
	/* recorded with --wake, the deliveries are wake records (1.8); 1.9: s64 halt_poll_ns (-1
	 * unknown), and the halts are hlt records */
	HI_WAKE = 9,
};

enum rec_type {
	RT_EVENT = 1,
	RT_GUEST = 2,
	RT_LOST = 3,
	RT_END = 4,
	RT_GUEST_START = 5,	/* the next guest record's process start time (1.3) */
	RT_STACK = 6,		/* --stacks: one (guest, reason, stack) and its time (1.4) */
	RT_TSC_CLOCK = 7,	/* host TSC / mono pair, at the end (1.6) */
	RT_TSC_SCALE = 8,	/* a vCPU's TSC scaling ratio (1.6) */
	RT_TSC_APPLIED = 9,	/* a vCPU's TSC offset and scaling from KVM's debugfs (1.7) */
	RT_KEY_REGION = 10,	/* a region of a guest's QEMU map, as record --qmp learnt it (1.7) */
	/*
	 * record --wake (1.8): one interrupt delivery. A record type of its own, not an event
	 * record of a new event type: a 1.7 reader skips it whole (the format's rule for a type
	 * it does not know) rather than count a delivery among the exits.
	 */
	RT_WAKE = 11,
	RT_WAKE_LOST = 12,	/* the delivery programs' loss counters grew (1.8) */
	/*
	 * record --wake (1.9): an interrupt KVM posted to a vCPU in guest mode, no exit. A type of
	 * its own, as RT_WAKE: a 1.8 reader skips it (and says so) rather than count a delivery
	 * of 0 ns. The wake record's layout, its latency and parts 0.
	 */
	RT_WAKE_POSTED = 13,
	RT_HLT = 14,		/* record --wake: a halt or a halted exit (1.9, record_hlt.h) */
	/*
	 * record --wake (1.10): an interrupt made pending for a vCPU never seen entering guest
	 * mode, so not timed. The wake record's layout, its latency and parts 0; a type of its
	 * own, as RT_WAKE_POSTED: a 1.9 reader skips it (and says so).
	 */
	RT_WAKE_UNTIMED = 15,
};

#define REC_HDR_LEN		8
#define EVENT_LEN		72	/* RT_EVENT payload: struct vmexit_event, little endian */
#define EVENT_SPLIT_LEN		96	/* ... and its --split fields (1.1) */
#define EVENT_KEYS_LEN		112	/* ... and its key (1.5; split fields 0 without --split) */
#define END_LEN			16
#define GUEST_START_LEN		16	/* u32 tgid, u32 0, u64 start */
#define STACK_FIXED_LEN		40	/* then the frames, each NUL-terminated */
#define TSC_ITEM_LEN		24	/* u64 tsc, u64 mono_ns, u32 khz, u32 0 */
#define TSC_CLOCK_LEN		16	/* u64 tsc, u64 mono_ns */
#define TSC_SCALE_LEN		24	/* u32 tgid, s32 vcpu, u64 ratio, u32 frac_bits, u32 0 */
/* u32 tgid, s32 vcpu, u64 read_ns, write_ns, offset, ratio, u32 frac_bits, u32 0 */
#define TSC_APPLIED_LEN		48
#define KEY_REGION_LEN		32	/* u32 tgid, u32 space, u64 start, u64 lo, u64 hi; name */
/* u64 ts_ns, latency_ns, the NR_WAKE_PARTS parts; u32 tgid, tid; s32 vcpu; u32 source,
 * vector, cpu */
#define WAKE_LEN		(16 + 8 * NR_WAKE_PARTS + 24)
#define WAKE_VECTOR_MAX		255	/* an x86 vector is a byte: more is not a delivery */
#define STACK_FRAME_MAX		255	/* longest frame name stored; longer ones are cut */
#define IO_BUF_SIZE		(1u << 20)

_Static_assert(sizeof(struct vmexit_event) == EVENT_KEYS_LEN && VMEXIT_EVENT_BASE_LEN ==
	       EVENT_LEN && VMEXIT_EVENT_SPLIT_LEN == EVENT_SPLIT_LEN, "vmexit_event layout "
	       "changed: bump the record format and update docs/record-format.md");

static inline size_t pad8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

/* ---- CRC32C ------------------------------------------------------------------------------ */

static __u32 crc_table[8][256];
static __u32 (*crc_impl)(__u32 crc, const unsigned char *p, size_t len);

/* Slicing-by-8: portable, about 1 byte per cycle. */
static __u32 crc32c_sw(__u32 crc, const unsigned char *p, size_t len)
{
	while (len && ((uintptr_t)p & 7)) {
		crc = crc_table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
		len--;
	}
	while (len >= 8) {
		__u32 lo = get32(p) ^ crc, hi = get32(p + 4);

		crc = crc_table[7][lo & 0xff] ^ crc_table[6][(lo >> 8) & 0xff] ^
		      crc_table[5][(lo >> 16) & 0xff] ^ crc_table[4][lo >> 24] ^
		      crc_table[3][hi & 0xff] ^ crc_table[2][(hi >> 8) & 0xff] ^
		      crc_table[1][(hi >> 16) & 0xff] ^ crc_table[0][hi >> 24];
		p += 8;
		len -= 8;
	}
	while (len--)
		crc = crc_table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return crc;
}

#if defined(__x86_64__)
/* The SSE4.2 crc32 instruction computes exactly CRC32C: 8 bytes per instruction. */
__attribute__((target("sse4.2")))
static __u32 crc32c_hw(__u32 crc, const unsigned char *p, size_t len)
{
	__u64 c = crc;

	while (len >= 8) {
		__u64 v;

		memcpy(&v, p, 8);
		c = __builtin_ia32_crc32di(c, v);
		p += 8;
		len -= 8;
	}
	crc = c;
	while (len--)
		crc = __builtin_ia32_crc32qi(crc, *p++);
	return crc;
}
#endif

/* A constructor, not lazy init, so that concurrent first users can't race on the table. */
__attribute__((constructor))
static void crc32c_init(void)
{
	for (unsigned int i = 0; i < 256; i++) {
		__u32 c = i;

		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0x82f63b78u & -(c & 1));
		crc_table[0][i] = c;
	}
	for (unsigned int i = 0; i < 256; i++)
		for (int t = 1; t < 8; t++)
			crc_table[t][i] = (crc_table[t - 1][i] >> 8) ^
					  crc_table[0][crc_table[t - 1][i] & 0xff];
	crc_impl = crc32c_sw;
#if defined(__x86_64__)
	__builtin_cpu_init();
	if (__builtin_cpu_supports("sse4.2"))
		crc_impl = crc32c_hw;
#endif
}

__u32 rec_crc32c(__u32 crc, const void *data, size_t len)
{
	return ~crc_impl(~crc, data, len);
}

/* ---- shared helpers ---------------------------------------------------------------------- */

static void encode_event(unsigned char *p, const struct vmexit_event *ev)
{
	put64(p + 0, ev->ts_ns);
	put64(p + 8, ev->latency_ns);
	put64(p + 16, ev->rip);
	put64(p + 24, ev->info1);
	put64(p + 32, ev->info2);
	put32(p + 40, ev->intr_info);
	put32(p + 44, ev->error_code);
	put32(p + 48, ev->tgid);
	put32(p + 52, ev->tid);
	put32(p + 56, (__u32)ev->vcpu);
	put32(p + 60, ev->reason);
	put32(p + 64, ev->cpu);
	put16(p + 68, ev->isa);
	put16(p + 70, ev->type);
}

static void encode_split(unsigned char *p, const struct vmexit_event *ev)
{
	put64(p + 72, ev->oncpu_ns);
	put64(p + 80, ev->blocked_ns);
	put64(p + 88, ev->runq_ns);
}

static void encode_key(unsigned char *p, const struct vmexit_event *ev)
{
	put64(p + 96, ev->key.key);
	put16(p + 104, ev->key.kind);
	put16(p + 106, ev->key.dir);
	put32(p + 108, 0);
}

static void decode_event(const unsigned char *p, struct vmexit_event *ev)
{
	ev->ts_ns = get64(p + 0);
	ev->latency_ns = get64(p + 8);
	ev->rip = get64(p + 16);
	ev->info1 = get64(p + 24);
	ev->info2 = get64(p + 32);
	ev->intr_info = get32(p + 40);
	ev->error_code = get32(p + 44);
	ev->tgid = get32(p + 48);
	ev->tid = get32(p + 52);
	ev->vcpu = (__s32)get32(p + 56);
	ev->reason = get32(p + 60);
	ev->cpu = get32(p + 64);
	ev->isa = get16(p + 68);
	ev->type = get16(p + 70);
}

static void decode_split(const unsigned char *p, struct vmexit_event *ev)
{
	ev->oncpu_ns = get64(p + 72);
	ev->blocked_ns = get64(p + 80);
	ev->runq_ns = get64(p + 88);
}

static void decode_key(const unsigned char *p, struct vmexit_event *ev)
{
	ev->key.key = get64(p + 96);
	ev->key.kind = get16(p + 104);
	ev->key.dir = get16(p + 106);
}

__attribute__((format(printf, 3, 4)))
static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static void copy_str(char *dst, size_t dstlen, const char *src)
{
	size_t n = strnlen(src, dstlen - 1);

	memcpy(dst, src, n);
	dst[n] = '\0';
}

void rec_meta_now(struct rec_meta *meta)
{
	struct utsname u;
	struct timespec mono, real;

	memset(meta, 0, sizeof(*meta));
	meta->halt_poll_ns = -1;
	if (!uname(&u)) {
		copy_str(meta->host, sizeof(meta->host), u.nodename);
		copy_str(meta->kernel, sizeof(meta->kernel), u.release);
	}
	/* Back to back, so the pair maps one clock onto the other to within a microsecond. */
	clock_gettime(CLOCK_MONOTONIC, &mono);
	clock_gettime(CLOCK_REALTIME, &real);
	meta->mono_ns = (__u64)mono.tv_sec * 1000000000ull + mono.tv_nsec;
	meta->real_ns = (__u64)real.tv_sec * 1000000000ull + real.tv_nsec;
	tsc_pair_now(&meta->tsc_start);
	meta->tsc_khz = tsc_sysfs_khz();
}

/* ---- writer ------------------------------------------------------------------------------ */

struct pending_guest {
	__u32 tgid;
	__u64 start;
	char name[REC_NAME_MAX + 1];
};

struct rec_writer {
	int fd;
	bool close_fd;
	bool regular;			/* fd is a regular file (not stdout, a pipe, a device) */
	bool header_done;
	int error;			/* sticky -errno */
	char *path;
	struct rec_meta meta;
	unsigned char *buf;
	size_t len;
	__u64 offset;			/* file offset of buf[0] */
	__u64 events, records;		/* records: after the header, without the end record */
	__u64 wakes;			/* wake records: events to the recorder, not the end's */
	__u64 events_written;		/* of events: those whole in the file */
	size_t rec_from;		/* where buf's records start (after the header) */
	struct pending_guest *guests;	/* added before the header was written */
	size_t nr_guests, cap_guests;
	char errmsg[512];
};

static int writer_fail(struct rec_writer *w, int err, const char *what)
{
	if (!w->error) {
		w->error = -err;
		snprintf(w->errmsg, sizeof(w->errmsg), "%s: %s: %s", w->path, what, strerror(err));
	}
	return w->error;
}

static int write_all(struct rec_writer *w, const unsigned char *p, size_t n)
{
	while (n) {
		ssize_t r = write(w->fd, p, n);

		if (r < 0) {
			/* Ctrl-C lands here when SA_RESTART is off: finish the write. */
			if (errno == EINTR)
				continue;
			return writer_fail(w, errno, "write failed");
		}
		p += r;
		n -= r;
		w->offset += r;
	}
	return 0;
}

/* Event records whole in buf[from, to): what a write that stopped at to left in the file. */
static __u64 events_in(const unsigned char *buf, size_t from, size_t to)
{
	__u64 n = 0;

	while (from + REC_HDR_LEN <= to) {
		size_t size = REC_HDR_LEN + pad8(get16(buf + from + 6));

		if (from + size > to)
			break;
		switch (get16(buf + from + 4)) {
		case RT_EVENT: case RT_WAKE: case RT_WAKE_POSTED: case RT_WAKE_UNTIMED: case RT_HLT:
			n++;
		}
		from += size;
	}
	return n;
}

static int flush_buf(struct rec_writer *w)
{
	__u64 at = w->offset;
	int ret;

	if (w->error)
		return w->error;
	ret = write_all(w, w->buf, w->len);
	/* A full disk takes part of the buffer: the events it holds are counted one by one. */
	w->events_written += events_in(w->buf, w->rec_from, w->offset - at);
	w->len = 0;
	w->rec_from = 0;
	return ret;
}

/* Room for n more bytes in the buffer; the buffer only ever holds whole records. */
static unsigned char *reserve(struct rec_writer *w, size_t n)
{
	if (w->error)
		return NULL;
	if (IO_BUF_SIZE - w->len < n && flush_buf(w))
		return NULL;
	if (IO_BUF_SIZE - w->len < n)
		return NULL;
	return w->buf + w->len;
}

static size_t name_len(const char *name)
{
	return strnlen(name, REC_NAME_MAX);
}

static const __u32 header_isas[] = {
	VMEXIT_ISA_VMX, VMEXIT_ISA_SVM, VMEXIT_ISA_USER, VMEXIT_ISA_ARM64,
};

/* The header's CRC field counts as zero: writer and reader checksum the same bytes. */
static __u32 header_crc(const unsigned char *h, size_t hlen)
{
	unsigned char zero[4] = { 0 };
	__u32 crc = rec_crc32c(0, h, HDR_CRC_OFF);

	crc = rec_crc32c(crc, zero, 4);
	return rec_crc32c(crc, h + HDR_CRC_OFF + 4, hlen - HDR_CRC_OFF - 4);
}

/* The header's size: the fixed part, host and kernel, each ISA's reason names, the guests. */
static size_t header_len(const struct rec_writer *w, size_t host_len, size_t kern_len)
{
	size_t total = HDR_FIXED_LEN + 8 + pad8(host_len) + 8 + pad8(kern_len);

	for (size_t i = 0; i < sizeof(header_isas) / sizeof(header_isas[0]); i++) {
		size_t n, len = 8;
		const struct reason_entry *t = reason_table(header_isas[i], &n);

		for (size_t k = 0; k < n; k++)
			len += 6 + strnlen(t[k].name, 0xffff);
		total += 8 + pad8(len);
	}
	for (size_t i = 0; i < w->nr_guests; i++) {
		total += 8 + pad8(4 + name_len(w->guests[i].name));
		if (w->guests[i].start)
			total += 8 + GUEST_START_LEN;
	}
	total += 8 * (w->meta.split + w->meta.keys + 2 * w->meta.wake);
	if (w->meta.tsc_start.mono_ns)
		total += 8 + TSC_ITEM_LEN;
	return total;
}

static void put_fixed_header(const struct rec_writer *w, unsigned char *h, size_t total)
{
	__u64 mhz_bits;

	memcpy(h, rec_magic, 8);
	put16(h + 8, REC_FORMAT_MAJOR);
	put16(h + 10, REC_FORMAT_MINOR);
	put32(h + 12, total);
	put32(h + 20, 0);
	put64(h + 24, w->meta.mono_ns);
	put64(h + 32, w->meta.real_ns);
	memcpy(&mhz_bits, &w->meta.tsc_mhz, 8);
	put64(h + 40, mhz_bits);
}

/* One header item of len bytes (padded to 8) at p; returns the end of its padding. */
static unsigned char *put_item(unsigned char *p, __u16 type, const void *data, size_t len)
{
	put16(p, type);
	put32(p + 4, len);
	memcpy(p + 8, data, len);
	return p + 8 + pad8(len);
}

/* An HI_REASONS item: the ISA, the count, then code, length and name of each reason. */
static unsigned char *put_reasons_item(unsigned char *p, __u32 isa)
{
	size_t n;
	const struct reason_entry *t = reason_table(isa, &n);
	unsigned char *start = p + 8, *q = start + 8;

	put32(start, isa);
	put32(start + 4, n);
	for (size_t k = 0; k < n; k++) {
		size_t l = strnlen(t[k].name, 0xffff);

		put32(q, t[k].code);
		put16(q + 4, l);
		memcpy(q + 6, t[k].name, l);
		q += 6 + l;
	}
	put16(p, HI_REASONS);
	put32(p + 4, q - start);
	return start + pad8(q - start);
}

/* A guest's start time, apart from its name: readers that know no start still read the name. */
static void put_guest_start(unsigned char *p, __u32 tgid, __u64 start)
{
	put32(p, tgid);
	put32(p + 4, 0);
	put64(p + 8, start);
}

static unsigned char *put_guest_item(unsigned char *p, const struct pending_guest *g)
{
	size_t l = name_len(g->name);

	if (g->start) {
		put16(p, HI_GUEST_START);
		put32(p + 4, GUEST_START_LEN);
		put_guest_start(p + 8, g->tgid, g->start);
		p += 8 + GUEST_START_LEN;
	}
	put16(p, HI_GUEST);
	put32(p + 4, 4 + l);
	put32(p + 8, g->tgid);
	memcpy(p + 12, g->name, l);
	return p + 8 + pad8(4 + l);
}

/* Writes the header, with the guests added so far, before the first record. */
static int emit_header(struct rec_writer *w)
{
	size_t host_len = strnlen(w->meta.host, sizeof(w->meta.host) - 1);
	size_t kern_len = strnlen(w->meta.kernel, sizeof(w->meta.kernel) - 1);
	size_t total = header_len(w, host_len, kern_len);
	unsigned char *h, *p;
	int ret;

	h = calloc(1, total);
	if (!h)
		return writer_fail(w, ENOMEM, "cannot build header");
	put_fixed_header(w, h, total);
	p = put_item(h + HDR_FIXED_LEN, HI_HOST, w->meta.host, host_len);
	p = put_item(p, HI_KERNEL, w->meta.kernel, kern_len);
	for (size_t i = 0; i < sizeof(header_isas) / sizeof(header_isas[0]); i++)
		p = put_reasons_item(p, header_isas[i]);
	for (size_t i = 0; i < w->nr_guests; i++)
		p = put_guest_item(p, &w->guests[i]);
	if (w->meta.split)
		p = put_item(p, HI_SPLIT, "", 0);
	if (w->meta.keys)
		p = put_item(p, HI_KEYS, "", 0);
	if (w->meta.wake) {
		unsigned char hpn[8];

		put64(hpn, (__u64)w->meta.halt_poll_ns);
		p = put_item(p, HI_WAKE, hpn, sizeof(hpn));
	}
	if (w->meta.tsc_start.mono_ns) {
		unsigned char t[TSC_ITEM_LEN] = { 0 };

		put64(t, w->meta.tsc_start.tsc);
		put64(t + 8, w->meta.tsc_start.mono_ns);
		put32(t + 16, w->meta.tsc_khz);
		p = put_item(p, HI_TSC_CLOCK, t, sizeof(t));
	}
	put32(h + HDR_CRC_OFF, header_crc(h, total));

	w->header_done = true;
	free(w->guests);
	w->guests = NULL;
	w->nr_guests = w->cap_guests = 0;
	/* A header bigger than the buffer (thousands of guests) goes straight to the file. */
	if (total > IO_BUF_SIZE - w->len) {
		ret = flush_buf(w);
		if (!ret)
			ret = write_all(w, h, total);
	} else {
		memcpy(w->buf + w->len, h, total);
		w->len += total;
		w->rec_from = w->len;
		ret = 0;
	}
	free(h);
	return ret;
}

static unsigned char *begin_record(struct rec_writer *w, __u16 type, size_t len)
{
	unsigned char *p;

	if (!w->header_done && emit_header(w))
		return NULL;
	p = reserve(w, REC_HDR_LEN + pad8(len));
	if (!p)
		return NULL;
	put16(p + 4, type);
	put16(p + 6, len);
	/* Zero the padding: the checksum covers it, and files should be reproducible. */
	memset(p + REC_HDR_LEN + len, 0, pad8(len) - len);
	return p;
}

static void end_record(struct rec_writer *w, unsigned char *p, size_t len)
{
	size_t body = 4 + pad8(len);

	put32(p, rec_crc32c(0, p + 4, body));
	w->len += 4 + body;
}

struct rec_writer *rec_writer_open(const char *path, bool force, const struct rec_meta *meta,
				   char *err, size_t errlen)
{
	struct rec_writer *w;
	bool is_stdout = !strcmp(path, "-");
	struct stat st;

	w = calloc(1, sizeof(*w));
	if (!w || !(w->buf = malloc(IO_BUF_SIZE)) || !(w->path = strdup(path))) {
		set_err(err, errlen, "%s: %s", path, strerror(ENOMEM));
		goto fail;
	}
	if (is_stdout) {
		w->fd = STDOUT_FILENO;
	} else {
		/* O_EXCL: never clobber an earlier recording by accident. */
		w->fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | (force ? O_TRUNC : O_EXCL),
			     0644);
		/* Only a regular file holds a recording to lose: a pipe or a device (/dev/stdout,
		 * /dev/null) that exists is written to as it is. */
		if (w->fd < 0 && errno == EEXIST) {
			if (!stat(path, &st) && !S_ISREG(st.st_mode))
				w->fd = open(path, O_WRONLY | O_CLOEXEC);
			else
				errno = EEXIST;	/* not stat's errno: a dangling link exists */
		}
		if (w->fd < 0) {
			if (errno == EEXIST)
				set_err(err, errlen, "%s: file exists; use --force to overwrite it",
					path);
			else
				set_err(err, errlen, "%s: cannot create: %s", path,
					strerror(errno));
			goto fail;
		}
		w->close_fd = true;
		w->regular = !fstat(w->fd, &st) && S_ISREG(st.st_mode);
	}
	if (meta)
		w->meta = *meta;
	w->meta.host[sizeof(w->meta.host) - 1] = '\0';
	w->meta.kernel[sizeof(w->meta.kernel) - 1] = '\0';
	return w;
fail:
	if (w) {
		free(w->buf);
		free(w->path);
	}
	free(w);
	return NULL;
}

int rec_writer_add_event(struct rec_writer *w, const struct vmexit_event *ev)
{
	size_t len = w->meta.keys ? EVENT_KEYS_LEN : w->meta.split ? EVENT_SPLIT_LEN : EVENT_LEN;
	unsigned char *p;

	if (wake_event_type(VMEXIT_EV_TYPE(ev->type)))
		return rec_writer_add_wake(w, ev);
	if (VMEXIT_EV_TYPE(ev->type) == VMEXIT_EV_HALT || VMEXIT_EV_TYPE(ev->type) == VMEXIT_EV_HLT)
		return rec_writer_add_hlt(w, ev);
	p = begin_record(w, RT_EVENT, len);
	if (!p)
		return w->error;
	encode_event(p + REC_HDR_LEN, ev);
	/* With keys and without --split, the split fields are there as 0. */
	if (w->meta.split)
		encode_split(p + REC_HDR_LEN, ev);
	else if (w->meta.keys)
		memset(p + REC_HDR_LEN + EVENT_LEN, 0, EVENT_SPLIT_LEN - EVENT_LEN);
	if (w->meta.keys)
		encode_key(p + REC_HDR_LEN, ev);
	end_record(w, p, len);
	w->events++;
	w->records++;
	return 0;
}

int rec_writer_add_wake(struct rec_writer *w, const struct vmexit_event *ev)
{
	__u16 type = VMEXIT_EV_TYPE(ev->type);
	unsigned char *p = begin_record(w, type == VMEXIT_EV_WAKE_POSTED ? RT_WAKE_POSTED :
					   type == VMEXIT_EV_WAKE_UNTIMED ? RT_WAKE_UNTIMED : RT_WAKE,
					WAKE_LEN), *q;
	struct vmexit_event e = *ev;

	if (!p)
		return w->error;
	q = p + REC_HDR_LEN;
	put64(q, e.ts_ns);
	put64(q + 8, e.latency_ns);
	for (int i = 0; i < NR_WAKE_PARTS; i++)
		put64(q + 16 + 8 * i, *wake_event_part(&e, i));
	q += 16 + 8 * NR_WAKE_PARTS;
	put32(q, e.tgid);
	put32(q + 4, e.tid);
	put32(q + 8, (__u32)e.vcpu);
	put32(q + 12, e.reason);
	put32(q + 16, e.intr_info);
	put32(q + 20, e.cpu);
	end_record(w, p, WAKE_LEN);
	w->wakes++;
	w->records++;
	return 0;
}

int rec_writer_add_hlt(struct rec_writer *w, const struct vmexit_event *ev)
{
	unsigned char *p = begin_record(w, RT_HLT, HLT_RECORD_LEN);

	if (!p)
		return w->error;
	hlt_record_encode(p + REC_HDR_LEN, ev);
	end_record(w, p, HLT_RECORD_LEN);
	w->wakes++;
	w->records++;
	return 0;
}

int rec_writer_add_wake_lost(struct rec_writer *w, __u64 ts_ns,
			     const __u64 lost[NR_WAKE_LOSSES])
{
	size_t len = 8 + 8 * NR_WAKE_LOSSES;
	unsigned char *p = begin_record(w, RT_WAKE_LOST, len);

	if (!p)
		return w->error;
	put64(p + REC_HDR_LEN, ts_ns);
	for (int i = 0; i < NR_WAKE_LOSSES; i++)
		put64(p + REC_HDR_LEN + 8 + 8 * i, lost[i]);
	end_record(w, p, len);
	w->records++;
	return 0;
}

int rec_writer_add_guest(struct rec_writer *w, __u32 tgid, __u64 start, const char *name)
{
	size_t l;
	unsigned char *p;

	if (!name)
		name = "";
	l = name_len(name);
	if (w->error)
		return w->error;
	if (!w->header_done) {
		struct pending_guest *g;

		if (array_reserve(w->guests, w->nr_guests, w->cap_guests, 16))
			return writer_fail(w, ENOMEM, "cannot add guest");
		g = &w->guests[w->nr_guests++];
		g->tgid = tgid;
		g->start = start;
		memcpy(g->name, name, l);
		g->name[l] = '\0';
		return 0;
	}
	if (start) {
		p = begin_record(w, RT_GUEST_START, GUEST_START_LEN);
		if (!p)
			return w->error;
		put_guest_start(p + REC_HDR_LEN, tgid, start);
		end_record(w, p, GUEST_START_LEN);
		w->records++;
	}
	p = begin_record(w, RT_GUEST, 4 + l);
	if (!p)
		return w->error;
	put32(p + REC_HDR_LEN, tgid);
	memcpy(p + REC_HDR_LEN + 4, name, l);
	end_record(w, p, 4 + l);
	w->records++;
	return 0;
}

int rec_writer_add_lost(struct rec_writer *w, __u64 ts_ns, const __u64 lost[NR_LOST])
{
	size_t len = 8 + 8 * NR_LOST;
	unsigned char *p = begin_record(w, RT_LOST, len);

	if (!p)
		return w->error;
	put64(p + REC_HDR_LEN, ts_ns);
	for (int i = 0; i < NR_LOST; i++)
		put64(p + REC_HDR_LEN + 8 + 8 * i, lost[i]);
	end_record(w, p, len);
	w->records++;
	return 0;
}

int rec_writer_add_stack(struct rec_writer *w, const struct stack_row *r)
{
	__u32 nr = r->nr_frames < STACK_DEPTH_MAX ? r->nr_frames : STACK_DEPTH_MAX;
	size_t len = STACK_FIXED_LEN, off;
	unsigned char *p;

	for (__u32 i = 0; i < nr; i++)
		len += strnlen(r->frames[i], STACK_FRAME_MAX) + 1;
	p = begin_record(w, RT_STACK, len);
	if (!p)
		return w->error;
	put32(p + REC_HDR_LEN, r->tgid);
	put32(p + REC_HDR_LEN + 4, r->isa);
	put32(p + REC_HDR_LEN + 8, r->reason);
	put32(p + REC_HDR_LEN + 12, nr);
	put64(p + REC_HDR_LEN + 16, r->proc_start);
	put64(p + REC_HDR_LEN + 24, r->ns);
	put64(p + REC_HDR_LEN + 32, r->count);
	off = REC_HDR_LEN + STACK_FIXED_LEN;
	for (__u32 i = 0; i < nr; i++) {
		size_t l = strnlen(r->frames[i], STACK_FRAME_MAX);

		memcpy(p + off, r->frames[i], l);
		p[off + l] = 0;
		off += l + 1;
	}
	end_record(w, p, len);
	w->records++;
	return 0;
}

int rec_writer_add_tsc_clock(struct rec_writer *w, const struct tsc_pair *t)
{
	unsigned char *p = begin_record(w, RT_TSC_CLOCK, TSC_CLOCK_LEN);

	if (!p)
		return w->error;
	put64(p + REC_HDR_LEN, t->tsc);
	put64(p + REC_HDR_LEN + 8, t->mono_ns);
	end_record(w, p, TSC_CLOCK_LEN);
	w->records++;
	return 0;
}

int rec_writer_add_key_region(struct rec_writer *w, __u32 tgid, __u64 start, bool io, __u64 lo,
			      __u64 hi, const char *name)
{
	size_t l = name_len(name);
	unsigned char *p = begin_record(w, RT_KEY_REGION, KEY_REGION_LEN + l);

	if (!p)
		return w->error;
	put32(p + REC_HDR_LEN, tgid);
	put32(p + REC_HDR_LEN + 4, io);
	put64(p + REC_HDR_LEN + 8, start);
	put64(p + REC_HDR_LEN + 16, lo);
	put64(p + REC_HDR_LEN + 24, hi);
	memcpy(p + REC_HDR_LEN + KEY_REGION_LEN, name, l);
	end_record(w, p, KEY_REGION_LEN + l);
	w->records++;
	return 0;
}

int rec_writer_add_tsc_scale(struct rec_writer *w, __u32 tgid, __s32 vcpu, __u64 ratio,
			     __u32 frac_bits)
{
	unsigned char *p = begin_record(w, RT_TSC_SCALE, TSC_SCALE_LEN);

	if (!p)
		return w->error;
	put32(p + REC_HDR_LEN, tgid);
	put32(p + REC_HDR_LEN + 4, (__u32)vcpu);
	put64(p + REC_HDR_LEN + 8, ratio);
	put32(p + REC_HDR_LEN + 16, frac_bits);
	put32(p + REC_HDR_LEN + 20, 0);
	end_record(w, p, TSC_SCALE_LEN);
	w->records++;
	return 0;
}

int rec_writer_add_tsc_applied(struct rec_writer *w, __u32 tgid, __s32 vcpu, __u64 read_ns,
			       __u64 write_ns, __u64 offset, __u64 ratio, __u32 frac_bits)
{
	unsigned char *p = begin_record(w, RT_TSC_APPLIED, TSC_APPLIED_LEN);

	if (!p)
		return w->error;
	put32(p + REC_HDR_LEN, tgid);
	put32(p + REC_HDR_LEN + 4, (__u32)vcpu);
	put64(p + REC_HDR_LEN + 8, read_ns);
	put64(p + REC_HDR_LEN + 16, write_ns);
	put64(p + REC_HDR_LEN + 24, offset);
	put64(p + REC_HDR_LEN + 32, ratio);
	put32(p + REC_HDR_LEN + 40, frac_bits);
	put32(p + REC_HDR_LEN + 44, 0);
	end_record(w, p, TSC_APPLIED_LEN);
	w->records++;
	return 0;
}

int rec_writer_flush(struct rec_writer *w)
{
	if (!w->header_done && emit_header(w))
		return w->error;
	return flush_buf(w);
}

int rec_writer_close(struct rec_writer *w)
{
	unsigned char *p;
	int ret;

	if (!w)
		return 0;
	p = begin_record(w, RT_END, END_LEN);
	if (p) {
		put64(p + REC_HDR_LEN, w->events);
		put64(p + REC_HDR_LEN + 8, w->records);
		end_record(w, p, END_LEN);
	}
	ret = flush_buf(w);
	if (w->close_fd && close(w->fd) && !ret)
		ret = writer_fail(w, errno, "close failed");
	free(w->guests);
	free(w->buf);
	free(w->path);
	free(w);
	return ret;
}

const char *rec_writer_error(const struct rec_writer *w)
{
	return w->errmsg;
}

__u64 rec_writer_events(const struct rec_writer *w)
{
	return w->events + w->wakes;
}

__u64 rec_writer_events_written(const struct rec_writer *w)
{
	return w->events_written;
}

bool rec_writer_regular(const struct rec_writer *w)
{
	return w->regular;
}

/* ---- reader ------------------------------------------------------------------------------ */

struct reason_name {
	__u32 isa;
	__u32 code;
	char *name;
};

enum reader_state { RS_OK, RS_END, RS_ERROR };

struct rec_reader {
	int fd;				/* -1 for memory readers */
	bool close_fd;
	bool eof;			/* nothing more to read into buf */
	enum reader_state state;
	char *path;
	const unsigned char *data;	/* buf, or the caller's memory */
	unsigned char *buf;
	size_t pos, end;		/* unread bytes are data[pos, end) */
	__u64 base;			/* file offset of data[0] */
	struct rec_meta meta;
	__u32 version;
	struct reason_name *reasons;
	size_t nr_reasons;
	struct pending_guest *guests;	/* from the header, handed out first */
	size_t nr_guests, cap_guests, next_guest;
	__u32 start_tgid;		/* a guest start record or item was read for this pid... */
	__u64 start;			/* ...with this start: its next guest takes it (0: none) */
	__u64 events, records;
	__u64 skipped;			/* records of unknown types (a newer minor's) */
	__u16 skipped_type;		/* the first of them */
	char errmsg[512];
};

__attribute__((format(printf, 3, 4)))
static int reader_fail(struct rec_reader *r, __u64 off, const char *fmt, ...)
{
	char what[384];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(r->errmsg, sizeof(r->errmsg), "%s: offset %llu: %s", r->path,
		 (unsigned long long)off, what);
	r->state = RS_ERROR;
	return -1;
}

/*
 * Makes at least n unread bytes contiguous in data[pos..] if the file has them; returns how
 * many are available (fewer than n only at end of file), or -1 on a read error.
 */
static ssize_t want(struct rec_reader *r, size_t n)
{
	while (r->end - r->pos < n && !r->eof) {
		ssize_t got;

		if (r->pos) {
			memmove(r->buf, r->buf + r->pos, r->end - r->pos);
			r->base += r->pos;
			r->end -= r->pos;
			r->pos = 0;
		}
		got = read(r->fd, r->buf + r->end, IO_BUF_SIZE - r->end);
		if (got < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (!got)
			r->eof = true;
		r->end += got;
	}
	return r->end - r->pos;
}

static int cmp_reason(const void *a, const void *b)
{
	const struct reason_name *x = a, *y = b;

	if (x->isa != y->isa)
		return x->isa < y->isa ? -1 : 1;
	return x->code < y->code ? -1 : x->code > y->code;
}

static void copy_name(char *dst, const unsigned char *src, size_t len)
{
	if (len > REC_NAME_MAX)
		len = REC_NAME_MAX;
	memcpy(dst, src, len);
	dst[len] = '\0';
	/* An embedded NUL would silently shorten the name; keep it visible instead. */
	for (size_t i = 0; i < len; i++)
		if (!dst[i])
			dst[i] = '?';
}

static int parse_reasons(struct rec_reader *r, const unsigned char *p, size_t len, __u64 off)
{
	__u32 isa, n;
	size_t q = 8;
	struct reason_name *t;

	if (len < 8)
		return reader_fail(r, off, "reason table item too short (%zu bytes)", len);
	isa = get32(p);
	n = get32(p + 4);
	if (n > (len - 8) / 6)
		return reader_fail(r, off, "reason table claims %u entries in %zu bytes", n, len);
	if (!n)
		return 0;	/* and no realloc(p, 0), which frees p */
	t = realloc(r->reasons, (r->nr_reasons + n) * sizeof(*t));
	if (!t)
		return reader_fail(r, off, "out of memory");
	r->reasons = t;
	for (__u32 i = 0; i < n; i++) {
		struct reason_name *e = &r->reasons[r->nr_reasons];
		size_t l;

		if (len - q < 6)
			return reader_fail(r, off + q, "reason entry %u runs past its item", i);
		l = get16(p + q + 4);
		if (len - q - 6 < l)
			return reader_fail(r, off + q, "reason name %u runs past its item", i);
		e->isa = isa;
		e->code = get32(p + q);
		e->name = malloc(l + 1);
		if (!e->name)
			return reader_fail(r, off, "out of memory");
		memcpy(e->name, p + q + 6, l);
		e->name[l] = '\0';
		r->nr_reasons++;
		q += 6 + l;
	}
	return 0;
}

/* A guest start (1.3) for the guest that follows it. */
static int note_start(struct rec_reader *r, const unsigned char *p, __u32 len, __u64 off,
		      const char *what)
{
	if (len < GUEST_START_LEN)
		return reader_fail(r, off, "guest start %s too short (%u bytes, need %d)", what,
				   len, GUEST_START_LEN);
	r->start_tgid = get32(p);
	r->start = get64(p + 8);
	return 0;
}

/* The start time of the guest tgid that is being read: 0 (unknown) unless it came just before. */
static __u64 take_start(struct rec_reader *r, __u32 tgid)
{
	__u64 start = r->start_tgid == tgid ? r->start : 0;

	r->start = 0;
	r->start_tgid = 0;
	return start;
}

static int parse_guest_item(struct rec_reader *r, const unsigned char *p, __u32 len, __u64 off)
{
	struct pending_guest *g;

	if (len < 4)
		return reader_fail(r, off, "guest item too short (%u bytes)", len);
	if (array_reserve(r->guests, r->nr_guests, r->cap_guests, 16))
		return reader_fail(r, off, "out of memory");
	g = &r->guests[r->nr_guests++];
	g->tgid = get32(p);
	g->start = take_start(r, g->tgid);
	copy_name(g->name, p + 4, len - 4);
	return 0;
}

/* The items after the fixed header, in h[HDR_FIXED_LEN, hlen): unknown types are skipped. */
static int parse_header_items(struct rec_reader *r, const unsigned char *h, __u32 hlen)
{
	for (size_t q = HDR_FIXED_LEN; q < hlen;) {
		__u16 type;
		__u32 len;
		const unsigned char *p;

		if (hlen - q < 8)
			return reader_fail(r, q, "header item runs past the header");
		type = get16(h + q);
		len = get32(h + q + 4);
		if (hlen - q - 8 < pad8(len))
			return reader_fail(r, q, "header item (type %u, %u bytes) runs past the "
					   "header", type, len);
		p = h + q + 8;
		switch (type) {
		case HI_HOST:
		case HI_KERNEL: {
			char *dst = type == HI_HOST ? r->meta.host : r->meta.kernel;
			size_t l = len < 64 ? len : 64;

			memcpy(dst, p, l);
			dst[l] = '\0';
			break;
		}
		case HI_REASONS:
			if (parse_reasons(r, p, len, q + 8))
				return -1;
			break;
		case HI_GUEST:
			if (parse_guest_item(r, p, len, q))
				return -1;
			break;
		case HI_SPLIT:
			r->meta.split = true;
			break;
		case HI_KEYS:
			r->meta.keys = true;
			break;
		case HI_WAKE:
			r->meta.wake = true;
			r->meta.wake_posted = r->version >= (1u << 16 | 9);
			r->meta.wake_untimed = r->version >= (1u << 16 | 10);
			/* 1.9: its halts are in the file too, and the host's halt_poll_ns. */
			r->meta.halts = len >= 8;
			r->meta.halt_poll_ns = len >= 8 ? (long long)get64(p) : -1;
			break;
		case HI_GUEST_START:
			if (note_start(r, p, len, q, "item"))
				return -1;
			break;
		case HI_TSC_CLOCK:
			if (len < TSC_ITEM_LEN)
				return reader_fail(r, q, "TSC clock item too short (%u bytes, %u "
						   "expected)", len, TSC_ITEM_LEN);
			r->meta.tsc_start.tsc = get64(p);
			r->meta.tsc_start.mono_ns = get64(p + 8);
			r->meta.tsc_khz = get32(p + 16);
			break;
		default:
			/* An item from a newer minor version: skipping it is the contract. */
			break;
		}
		q += 8 + pad8(len);
	}
	return 0;
}

/* The fixed header's magic, version and header length; *hlen is the whole header's. */
static int check_fixed_header(struct rec_reader *r, __u32 *hlen)
{
	ssize_t avail = want(r, HDR_FIXED_LEN);
	const unsigned char *h;
	__u16 major, minor;

	if (avail < 0)
		return reader_fail(r, 0, "read failed: %s", strerror(errno));
	h = r->data + r->pos;
	if (avail && memcmp(h, rec_magic, avail < 8 ? avail : 8))
		return reader_fail(r, 0, "bad magic: not a vmexit record file");
	if (avail < HDR_FIXED_LEN)
		return reader_fail(r, avail, "file ends inside the %u-byte fixed header: truncated",
				   HDR_FIXED_LEN);
	major = get16(h + 8);
	minor = get16(h + 10);
	r->version = (__u32)major << 16 | minor;
	if (major != REC_FORMAT_MAJOR)
		return reader_fail(r, 8, "format version %u.%u is not supported (this vmexit reads "
				   "%u.x)%s", major, minor, REC_FORMAT_MAJOR,
				   major > REC_FORMAT_MAJOR ? ": written by a newer vmexit" : "");
	*hlen = get32(h + 12);
	if (*hlen < HDR_FIXED_LEN || *hlen % 8 || *hlen > HDR_MAX_LEN)
		return reader_fail(r, 12, "bad header length %u", *hlen);
	return 0;
}

static int parse_header(struct rec_reader *r)
{
	const unsigned char *h;
	ssize_t avail;
	__u32 hlen = 0, crc, stored;
	__u64 mhz_bits;

	if (check_fixed_header(r, &hlen))
		return -1;
	avail = want(r, hlen);
	if (avail < 0)
		return reader_fail(r, r->base + r->end, "read failed: %s", strerror(errno));
	if ((size_t)avail < hlen)
		return reader_fail(r, avail, "file ends inside the %u-byte header: truncated",
				   hlen);
	h = r->data + r->pos;
	stored = get32(h + HDR_CRC_OFF);
	crc = header_crc(h, hlen);
	if (crc != stored)
		return reader_fail(r, 0, "header checksum mismatch (stored 0x%08x, computed "
				   "0x%08x): corrupt header", stored, crc);
	r->meta.mono_ns = get64(h + 24);
	r->meta.real_ns = get64(h + 32);
	mhz_bits = get64(h + 40);
	memcpy(&r->meta.tsc_mhz, &mhz_bits, 8);
	if (parse_header_items(r, h, hlen))
		return -1;
	if (r->nr_reasons)
		qsort(r->reasons, r->nr_reasons, sizeof(*r->reasons), cmp_reason);
	r->pos += hlen;
	return 0;
}

static struct rec_reader *reader_new(const char *path)
{
	struct rec_reader *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->fd = -1;
	r->path = strdup(path);
	if (!r->path) {
		free(r);
		return NULL;
	}
	return r;
}

static struct rec_reader *reader_start(struct rec_reader *r, char *err, size_t errlen)
{
	if (parse_header(r)) {
		set_err(err, errlen, "%s", r->errmsg);
		rec_reader_close(r);
		return NULL;
	}
	return r;
}

struct rec_reader *rec_reader_open(const char *path, char *err, size_t errlen)
{
	struct rec_reader *r = reader_new(path);

	if (!r || !(r->buf = malloc(IO_BUF_SIZE))) {
		set_err(err, errlen, "%s: %s", path, strerror(ENOMEM));
		rec_reader_close(r);
		return NULL;
	}
	r->data = r->buf;
	if (!strcmp(path, "-")) {
		r->fd = STDIN_FILENO;
	} else {
		r->fd = open(path, O_RDONLY | O_CLOEXEC);
		if (r->fd < 0) {
			set_err(err, errlen, "%s: cannot open: %s", path, strerror(errno));
			rec_reader_close(r);
			return NULL;
		}
		r->close_fd = true;
		posix_fadvise(r->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	}
	return reader_start(r, err, errlen);
}

struct rec_reader *rec_reader_open_mem(const void *data, size_t len, char *err, size_t errlen)
{
	struct rec_reader *r = reader_new("<memory>");

	if (!r) {
		set_err(err, errlen, "<memory>: %s", strerror(ENOMEM));
		return NULL;
	}
	r->data = data;
	r->end = len;
	r->eof = true;
	return reader_start(r, err, errlen);
}

const struct rec_meta *rec_reader_meta(struct rec_reader *r)
{
	return &r->meta;
}

__u32 rec_reader_version(struct rec_reader *r)
{
	return r->version;
}

static const char *type_name(__u16 type)
{
	static const char *const names[] = {
		[RT_EVENT] = "event", [RT_GUEST] = "guest", [RT_LOST] = "lost", [RT_END] = "end",
		[RT_GUEST_START] = "guest start", [RT_STACK] = "stack",
		[RT_TSC_CLOCK] = "TSC clock", [RT_TSC_SCALE] = "TSC scale",
		[RT_TSC_APPLIED] = "TSC applied", [RT_KEY_REGION] = "key region",
		[RT_WAKE] = "wake", [RT_WAKE_LOST] = "wake lost",
		[RT_WAKE_POSTED] = "wake posted", [RT_HLT] = "hlt",
		[RT_WAKE_UNTIMED] = "wake untimed",
	};

	return type < sizeof(names) / sizeof(names[0]) && names[type] ? names[type] : "unknown";
}

static int finish(struct rec_reader *r, char *err, size_t errlen)
{
	if (r->state == RS_END)
		return 0;
	set_err(err, errlen, "%s", r->errmsg);
	return -1;
}

/* A record as read and checked: its type, payload length and payload, and where it starts. */
struct raw_record {
	__u64 off;
	const unsigned char *p;
	__u16 type, len;
};

static int read_failed(struct rec_reader *r)
{
	return reader_fail(r, r->base + r->end, "read failed: %s", strerror(errno));
}

/*
 * The next record, whole and checksummed, with r->pos moved past it: 0, or -1 with the reader
 * failed. A file ends with its end record, so running out of data is damage too.
 */
static int next_record(struct rec_reader *r, struct raw_record *rec)
{
	const unsigned char *p;
	ssize_t avail = want(r, REC_HDR_LEN + EVENT_LEN);
	__u32 stored, crc;
	size_t body;

	rec->off = r->base + r->pos;
	if (avail < 0)
		return read_failed(r);
	if (avail == 0)
		return reader_fail(r, rec->off, "file ends without an end record after %llu "
				   "records: the recording was cut short (all records before are "
				   "intact)", (unsigned long long)r->records);
	if (avail < REC_HDR_LEN)
		return reader_fail(r, rec->off, "truncated record header (file ends after %zd of "
				   "%d bytes)", avail, REC_HDR_LEN);
	p = r->data + r->pos;
	rec->type = get16(p + 4);
	rec->len = get16(p + 6);
	body = pad8(rec->len);
	if ((size_t)avail < REC_HDR_LEN + body) {
		avail = want(r, REC_HDR_LEN + body);
		if (avail < 0)
			return read_failed(r);
		p = r->data + r->pos;
		if ((size_t)avail < REC_HDR_LEN + body)
			/* avail counts the header: so does the size it is compared with. */
			return reader_fail(r, rec->off, "%s record (type %u, %u bytes; %zu in "
					   "the file) is cut short: the file ends %zd bytes into it "
					   "(truncated or corrupt)", type_name(rec->type),
					   rec->type, rec->len, REC_HDR_LEN + body, avail);
	}
	stored = get32(p);
	crc = rec_crc32c(0, p + 4, 4 + body);
	if (crc != stored)
		return reader_fail(r, rec->off, "checksum mismatch in %s record (type %u, %u "
				   "bytes; stored 0x%08x, computed 0x%08x): corrupt data",
				   type_name(rec->type), rec->type, rec->len, stored, crc);
	rec->p = p + REC_HDR_LEN;
	r->pos += REC_HDR_LEN + body;
	return 0;
}

/* The decoders of each record type: 1 and the item, 0 at the end, -1 with the reader failed. */

static int decode_event_record(struct rec_reader *r, const struct raw_record *rec,
			       struct rec_item *item)
{
	/* A newer minor may append fields: read ours, skip the rest. */
	if (rec->len < EVENT_LEN)
		return reader_fail(r, rec->off, "event record too short (%u bytes, need %d)",
				   rec->len, EVENT_LEN);
	item->kind = REC_EVENT;
	decode_event(rec->p, &item->ev);
	/* 1.0 files and recordings without --split: no split, which reads as 0. */
	if (rec->len >= EVENT_SPLIT_LEN)
		decode_split(rec->p, &item->ev);
	else
		item->ev.oncpu_ns = item->ev.blocked_ns = item->ev.runq_ns = 0;
	/* Files before 1.5 and recordings without --keys: every exit's key is none. */
	if (rec->len >= EVENT_KEYS_LEN)
		decode_key(rec->p, &item->ev);
	else
		item->ev.key = (struct key_note){};
	r->events++;
	r->records++;
	return 1;
}

/*
 * A delivery: refused, in one line, where it cannot be one (cut short, a vector past a byte,
 * parts that do not sum to its latency), never read as another delivery.
 */
static int decode_wake_record(struct rec_reader *r, const struct raw_record *rec,
			      struct rec_item *item)
{
	const unsigned char *q = rec->p + 16 + 8 * NR_WAKE_PARTS;
	struct vmexit_event *ev = &item->ev;
	__u64 sum = 0;

	/* Posted and untimed: counted, never timed. */
	bool posted = rec->type == RT_WAKE_POSTED, untimed = rec->type == RT_WAKE_UNTIMED;
	const char *what = posted ? "wake posted record" : untimed ? "wake untimed record" :
			   "wake record";

	if (rec->len < WAKE_LEN)
		return reader_fail(r, rec->off, "%s too short (%u bytes, need %d)", what,
				   rec->len, WAKE_LEN);
	memset(ev, 0, sizeof(*ev));
	ev->type = posted ? VMEXIT_EV_WAKE_POSTED : untimed ? VMEXIT_EV_WAKE_UNTIMED : VMEXIT_EV_WAKE;
	ev->ts_ns = get64(rec->p);
	ev->latency_ns = get64(rec->p + 8);
	for (int i = 0; i < NR_WAKE_PARTS; i++) {
		__u64 v = get64(rec->p + 16 + 8 * i);

		*wake_event_part(ev, i) = v;
		if (__builtin_add_overflow(sum, v, &sum))
			return reader_fail(r, rec->off, "wake record's parts overflow 64 bits: "
					   "corrupt data");
	}
	ev->tgid = get32(q);
	ev->tid = get32(q + 4);
	ev->vcpu = (__s32)get32(q + 8);
	ev->reason = get32(q + 12);
	ev->intr_info = get32(q + 16);
	ev->cpu = get32(q + 20);
	if (sum != ev->latency_ns)
		return reader_fail(r, rec->off, "wake record's parts sum to %llu ns, not its "
				   "latency %llu ns: corrupt data", (unsigned long long)sum,
				   (unsigned long long)ev->latency_ns);
	if ((posted || untimed) && sum)
		return reader_fail(r, rec->off, "%s with %llu ns (none is timed): corrupt data",
				   what, (unsigned long long)sum);
	if (ev->intr_info > WAKE_VECTOR_MAX)
		return reader_fail(r, rec->off, "%s with vector %u (at most %u): corrupt data",
				   what, ev->intr_info, WAKE_VECTOR_MAX);
	item->kind = posted ? REC_WAKE_POSTED : untimed ? REC_WAKE_UNTIMED : REC_WAKE;
	r->records++;
	return 1;
}

/* A halt or halted exit: refused, in one line, where it cannot be one (record_hlt.h). */
static int decode_hlt_record(struct rec_reader *r, const struct raw_record *rec,
			     struct rec_item *item)
{
	char why[160];

	if (hlt_record_decode(rec->p, rec->len, &item->ev, why, sizeof(why)))
		return reader_fail(r, rec->off, "hlt record %s", why);
	item->kind = REC_HLT;
	r->records++;
	return 1;
}

static int decode_wake_lost_record(struct rec_reader *r, const struct raw_record *rec,
				   struct rec_item *item)
{
	/*
	 * The kernel's three counters 1.8 began with, as for the other records; the ring's,
	 * written after them since, is 0 when absent (a file of the first 1.8 writers); more
	 * (a later format's) skipped.
	 */
	if (rec->len < 8 + 8 * NR_WAKE_LOST)
		return reader_fail(r, rec->off, "wake lost record too short (%u bytes, at least %u)",
				   rec->len, 8 + 8 * NR_WAKE_LOST);
	item->kind = REC_WAKE_LOST;
	item->ts_ns = get64(rec->p);
	for (unsigned int i = 0; i < NR_WAKE_LOSSES; i++)
		item->wake_lost[i] = 8 + 8 * (i + 1) <= rec->len ? get64(rec->p + 8 + 8 * i) : 0;
	r->records++;
	return 1;
}

static int decode_guest_record(struct rec_reader *r, const struct raw_record *rec,
			       struct rec_item *item)
{
	if (rec->len < 4)
		return reader_fail(r, rec->off, "guest record too short (%u bytes)", rec->len);
	item->kind = REC_GUEST;
	item->tgid = get32(rec->p);
	item->start = take_start(r, item->tgid);
	copy_name(item->name, rec->p + 4, rec->len - 4);
	r->records++;
	return 1;
}

static int decode_lost_record(struct rec_reader *r, const struct raw_record *rec,
			      struct rec_item *item)
{
	unsigned int n = (rec->len - 8) / 8;

	if (rec->len < 8)
		return reader_fail(r, rec->off, "lost record too short (%u bytes)", rec->len);
	item->kind = REC_LOST;
	item->ts_ns = get64(rec->p);
	for (unsigned int i = 0; i < NR_LOST; i++)
		item->lost[i] = i < n ? get64(rec->p + 8 + 8 * i) : 0;
	r->records++;
	return 1;
}

static int decode_tsc_record(struct rec_reader *r, const struct raw_record *rec,
			     struct rec_item *item)
{
	bool scale = rec->type == RT_TSC_SCALE;
	__u32 need = scale ? TSC_SCALE_LEN : TSC_CLOCK_LEN;

	if (rec->len < need)
		return reader_fail(r, rec->off, "%s record too short (%u bytes)",
				   scale ? "TSC scale" : "TSC clock", rec->len);
	if (scale) {
		item->kind = REC_TSC_SCALE;
		item->tgid = get32(rec->p);
		item->vcpu = (__s32)get32(rec->p + 4);
		item->ratio = get64(rec->p + 8);
		item->frac_bits = get32(rec->p + 16);
	} else {
		item->kind = REC_TSC_CLOCK;
		item->tsc_pair.tsc = get64(rec->p);
		item->tsc_pair.mono_ns = get64(rec->p + 8);
	}
	r->records++;
	return 1;
}

static int decode_tsc_applied_record(struct rec_reader *r, const struct raw_record *rec,
				     struct rec_item *item)
{
	if (rec->len < TSC_APPLIED_LEN)
		return reader_fail(r, rec->off, "TSC applied record too short (%u bytes)",
				   rec->len);
	item->kind = REC_TSC_APPLIED;
	item->tgid = get32(rec->p);
	item->vcpu = (__s32)get32(rec->p + 4);
	item->ts_ns = get64(rec->p + 8);
	item->write_ns = get64(rec->p + 16);
	item->tsc_offset = get64(rec->p + 24);
	item->ratio = get64(rec->p + 32);
	item->frac_bits = get32(rec->p + 40);
	r->records++;
	return 1;
}

static int decode_key_region(struct rec_reader *r, const struct raw_record *rec,
			     struct rec_item *item)
{
	if (rec->len < KEY_REGION_LEN)
		return reader_fail(r, rec->off, "key region record too short (%u bytes)", rec->len);
	item->kind = REC_KEY_REGION;
	item->tgid = get32(rec->p);
	item->io = get32(rec->p + 4) != 0;
	item->start = get64(rec->p + 8);
	item->lo = get64(rec->p + 16);
	item->hi = get64(rec->p + 24);
	if (item->hi < item->lo)
		return reader_fail(r, rec->off, "key region record ends (%#llx) before it starts "
				   "(%#llx)", (unsigned long long)item->hi,
				   (unsigned long long)item->lo);
	copy_name(item->name, rec->p + KEY_REGION_LEN, rec->len - KEY_REGION_LEN);
	r->records++;
	return 1;
}

/* Frames point into the record: valid until the next rec_reader_next(). */
static int decode_stack_record(struct rec_reader *r, const struct raw_record *rec,
			       struct rec_item *item)
{
	const char *p = (const char *)rec->p + STACK_FIXED_LEN, *end = (const char *)rec->p + rec->len;
	struct stack_row *s = &item->stack;

	if (rec->len < STACK_FIXED_LEN)
		return reader_fail(r, rec->off, "stack record too short (%u bytes)", rec->len);
	memset(s, 0, sizeof(*s));
	s->tgid = get32(rec->p);
	s->isa = get32(rec->p + 4);
	s->reason = get32(rec->p + 8);
	s->proc_start = get64(rec->p + 16);
	s->ns = get64(rec->p + 24);
	s->count = get64(rec->p + 32);
	if (get32(rec->p + 12) > STACK_DEPTH_MAX)
		return reader_fail(r, rec->off, "stack record with %u frames (at most %u)",
				   get32(rec->p + 12), STACK_DEPTH_MAX);
	s->frames = item->frames;
	for (__u32 i = 0; i < get32(rec->p + 12); i++) {
		const char *nul = memchr(p, 0, (size_t)(end - p));

		if (!nul)
			return reader_fail(r, rec->off, "stack record: frame %u runs past the "
					   "record", i);
		item->frames[s->nr_frames++] = (char *)p;
		p = nul + 1;
	}
	item->kind = REC_STACK;
	r->records++;
	return 1;
}

/* The end record's counts must match what was read, and nothing may follow it. */
static int decode_end_record(struct rec_reader *r, const struct raw_record *rec)
{
	__u64 events, records;
	ssize_t avail;

	if (rec->len < END_LEN)
		return reader_fail(r, rec->off, "end record too short (%u bytes)", rec->len);
	events = get64(rec->p);
	records = get64(rec->p + 8);
	if (events != r->events || records != r->records)
		return reader_fail(r, rec->off, "end record counts %llu events in %llu records, "
				   "the file holds %llu in %llu: records are missing",
				   (unsigned long long)events, (unsigned long long)records,
				   (unsigned long long)r->events, (unsigned long long)r->records);
	avail = want(r, 1);
	if (avail < 0)
		return read_failed(r);
	if (avail)
		return reader_fail(r, r->base + r->pos, "data after the end record");
	r->state = RS_END;
	return 0;
}

/* The guests of the header, handed out before the first record. */
static bool next_header_guest(struct rec_reader *r, struct rec_item *item)
{
	const struct pending_guest *g;

	if (r->next_guest >= r->nr_guests)
		return false;
	g = &r->guests[r->next_guest++];
	item->kind = REC_GUEST;
	item->offset = 0;
	item->tgid = g->tgid;
	item->start = g->start;
	memcpy(item->name, g->name, sizeof(item->name));
	return true;
}

int rec_reader_next(struct rec_reader *r, struct rec_item *item, char *err, size_t errlen)
{
	struct raw_record rec = { 0 };	/* zeroed for gcc: next_record fills it or fails */
	int ret;

	if (r->state != RS_OK)
		return finish(r, err, errlen);
	if (next_header_guest(r, item))
		return 1;
	for (;;) {
		if (next_record(r, &rec))
			return finish(r, err, errlen);
		item->offset = rec.off;
		switch (rec.type) {
		case RT_EVENT:
			ret = decode_event_record(r, &rec, item);
			break;
		case RT_GUEST:
			ret = decode_guest_record(r, &rec, item);
			break;
		case RT_LOST:
			ret = decode_lost_record(r, &rec, item);
			break;
		case RT_END:
			ret = decode_end_record(r, &rec);
			break;
		case RT_STACK:
			ret = decode_stack_record(r, &rec, item);
			break;
		case RT_TSC_CLOCK:
		case RT_TSC_SCALE:
			ret = decode_tsc_record(r, &rec, item);
			break;
		case RT_TSC_APPLIED:
			ret = decode_tsc_applied_record(r, &rec, item);
			break;
		case RT_KEY_REGION:
			ret = decode_key_region(r, &rec, item);
			break;
		case RT_WAKE:
		case RT_WAKE_POSTED:
		case RT_WAKE_UNTIMED:
			ret = decode_wake_record(r, &rec, item);
			break;
		case RT_WAKE_LOST:
			ret = decode_wake_lost_record(r, &rec, item);
			break;
		case RT_HLT:
			ret = decode_hlt_record(r, &rec, item);
			break;
		case RT_GUEST_START:
			/* Not an item of its own: the guest record after it gets it. */
			if (note_start(r, rec.p, rec.len, rec.off, "record"))
				return finish(r, err, errlen);
			r->records++;
			continue;
		default:
			/* A record type from a newer minor version, checksum valid: skip it. */
			if (!r->skipped++)
				r->skipped_type = rec.type;
			r->records++;
			continue;
		}
		return ret > 0 ? 1 : finish(r, err, errlen);
	}
}

const char *rec_reader_reason_name(struct rec_reader *r, __u32 isa, __u32 reason)
{
	struct reason_name key = { .isa = isa, .code = reason }, *e;

	if (!r->nr_reasons)
		return NULL;
	e = bsearch(&key, r->reasons, r->nr_reasons, sizeof(key), cmp_reason);
	return e ? e->name : NULL;
}

size_t rec_reader_reason_count(struct rec_reader *r)
{
	return r->nr_reasons;
}

__u64 rec_reader_skipped(struct rec_reader *r, __u16 *first_type)
{
	if (first_type)
		*first_type = r->skipped_type;
	return r->skipped;
}

void rec_reader_close(struct rec_reader *r)
{
	if (!r)
		return;
	if (r->close_fd)
		close(r->fd);
	for (size_t i = 0; i < r->nr_reasons; i++)
		free(r->reasons[i].name);
	free(r->reasons);
	free(r->guests);
	free(r->buf);
	free(r->path);
	free(r);
}
