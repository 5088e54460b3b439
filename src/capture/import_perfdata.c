// SPDX-License-Identifier: GPL-2.0
/*
 * report -i perf.data, read here rather than through `perf script`: perf's file header, its event
 * attributes, the tracepoint formats perf copied into the file (the HEADER_TRACING_DATA feature,
 * decoded by libtraceevent as trace.dat's are) and each sample's raw tracepoint record. perf
 * script's Python handler (import_perf.c) took minutes for a few million records; this reads
 * them at memory speed (bench/import_bench.sh).
 *
 * perf writes each CPU's buffer as it fills, so the file is in time order per CPU only: the
 * samples are indexed (time, offset) and sorted, as perf script sorts them. Lost-event records
 * are indexed with them and counted with their exact numbers (perf script only warns of them).
 *
 * What this reader leaves to perf script (it returns NULL with *fallback set): a stream of
 * `perf record -o -`, compressed records (`perf record -z`), AUX data, a byte order other than
 * ours, and a file without the tracing data.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <event-parse.h>
#include "array_grow.h"
#include "capture_import.h"
#include "event_format_parse.h"
#include "import_perfdata.h"
#include "tep_field.h"

#define PERF_MAGIC2		0x32454c4946524550ull	/* "PERFILE2", little-endian */
#define HEADER_TRACING_DATA	1			/* perf's feature bit */
/* perf's own record types (tools/lib/perf/include/perf/event.h), never from the kernel. */
#define PERF_RECORD_MISC_LOST_SAMPLES_BPF (1 << 15)	/* dropped by perf's BPF filter */
#define PERF_RECORD_FINISHED_ROUND	68
#define PERF_RECORD_AUXTRACE		71
#define PERF_RECORD_COMPRESSED		81

struct file_section {
	__u64 offset, size;
};

struct file_header {
	__u64 magic, size, attr_size;
	struct file_section attrs, data, event_types;
	__u64 features[4];
};

struct pd_attr {
	struct perf_event_attr a;
	struct tep_event *event;	/* a kvm tracepoint's format, or NULL: not ours */
};

struct pd_id {
	__u64 id;
	int attr;
};

/* One record to hand over, by time: a kvm sample or a lost-events record. */
struct pd_index {
	__u64 ts;
	__u64 off;			/* of the record, in the file */
	int attr;			/* -1: a PERF_RECORD_LOST */
};

struct pd_comm {
	__u32 tid;
	__u32 seq;			/* its place in the file: a thread's last name wins */
	char comm[16];
};

struct perfdata_source {
	struct event_source s;
	const char *path;
	const unsigned char *map;
	size_t len;
	struct tep_handle *tep;
	struct pd_attr *attr;
	int nr_attr;
	struct pd_id *ids;		/* sorted by id */
	size_t nr_ids;
	int id_pos;			/* the sample's id, in u64 from its start, when no IDENTIFIER */
	struct pd_index *idx;
	size_t nr_idx, cap_idx, next;
	struct pd_comm *comm;		/* sorted by tid once read: the thread's last name */
	size_t nr_comm, cap_comm;
	__u64 lost_records;		/* the events PERF_RECORD_LOST said were lost */
	__u64 lost_samples;		/* ... and those perf's PERF_RECORD_LOST_SAMPLES said */
	struct capture_import *ci;
	bool ended;
	char clock[32];
};

/* What a sample says that the importer needs. */
struct pd_sample {
	__u64 ts;
	__u32 pid, tid, cpu;
	const void *raw;
	__u32 raw_size;
};

/* Bounds-checked cursor over one record. */
struct pd_cur {
	const unsigned char *p, *end;
};

static bool take(struct pd_cur *c, void *dst, size_t n)
{
	if ((size_t)(c->end - c->p) < n)
		return false;
	if (dst)
		memcpy(dst, c->p, n);
	c->p += n;
	return true;
}

static bool take_u64(struct pd_cur *c, __u64 *v)
{
	return take(c, v, sizeof(*v));
}

/* The attribute a sample belongs to: its id, looked up; -1 when no attribute has it. */
static int attr_of_id(const struct perfdata_source *d, __u64 id)
{
	size_t lo = 0, hi = d->nr_ids;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (d->ids[mid].id == id)
			return d->ids[mid].attr;
		if (d->ids[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

static int sample_attr(const struct perfdata_source *d, const unsigned char *body, size_t n)
{
	__u64 id;

	if (d->nr_attr == 1)
		return 0;
	if (d->id_pos < 0 || (size_t)(d->id_pos + 1) * 8 > n)
		return -1;
	memcpy(&id, body + d->id_pos * 8, sizeof(id));
	return attr_of_id(d, id);
}

/* A PERF_RECORD_SAMPLE's fields in the order perf_event.h gives, up to the raw record. */
static bool parse_sample(const struct perf_event_attr *a, const unsigned char *body, size_t n,
			 struct pd_sample *s)
{
	struct pd_cur c = { body, body + n };
	__u64 st = a->sample_type, rf = a->read_format, nr, v;
	__u32 two[2];

	memset(s, 0, sizeof(*s));
	if ((st & PERF_SAMPLE_IDENTIFIER) && !take(&c, NULL, 8))
		return false;
	if ((st & PERF_SAMPLE_IP) && !take(&c, NULL, 8))
		return false;
	if (st & PERF_SAMPLE_TID) {
		if (!take(&c, two, sizeof(two)))
			return false;
		s->pid = two[0];
		s->tid = two[1];
	}
	if ((st & PERF_SAMPLE_TIME) && !take_u64(&c, &s->ts))
		return false;
	if ((st & PERF_SAMPLE_ADDR) && !take(&c, NULL, 8))
		return false;
	if ((st & PERF_SAMPLE_ID) && !take(&c, NULL, 8))
		return false;
	if ((st & PERF_SAMPLE_STREAM_ID) && !take(&c, NULL, 8))
		return false;
	if (st & PERF_SAMPLE_CPU) {
		if (!take(&c, two, sizeof(two)))
			return false;
		s->cpu = two[0];
	}
	if ((st & PERF_SAMPLE_PERIOD) && !take(&c, NULL, 8))
		return false;
	if (st & PERF_SAMPLE_READ) {
		/* Per value: the value, and its id and lost count when asked for. */
		size_t per = 8 * (1 + !!(rf & PERF_FORMAT_ID) + !!(rf & PERF_FORMAT_LOST));
		size_t times = 8 * (!!(rf & PERF_FORMAT_TOTAL_TIME_ENABLED) +
				    !!(rf & PERF_FORMAT_TOTAL_TIME_RUNNING));

		if (rf & PERF_FORMAT_GROUP) {
			if (!take_u64(&c, &nr) || !take(&c, NULL, times) ||
			    nr > (size_t)(c.end - c.p) / per || !take(&c, NULL, nr * per))
				return false;
		} else if (!take(&c, NULL, per + times)) {
			return false;
		}
	}
	if (st & PERF_SAMPLE_CALLCHAIN) {
		if (!take_u64(&c, &v) || v > (size_t)(c.end - c.p) / 8 || !take(&c, NULL, v * 8))
			return false;
	}
	if (st & PERF_SAMPLE_RAW) {
		if (!take(&c, two, sizeof(two[0])) || two[0] > (size_t)(c.end - c.p))
			return false;
		s->raw = c.p;
		s->raw_size = two[0];
	}
	return true;
}

/* The time in a non-sample record's trailing sample_id (attr's layout), or 0 without one. */
static __u64 trailer_time(const struct perf_event_attr *a, const unsigned char *body, size_t n)
{
	__u64 st = a->sample_type, ts;
	size_t after = 0;	/* bytes of the trailer after its time */

	if (!a->sample_id_all || !(st & PERF_SAMPLE_TIME))
		return 0;
	after += (st & PERF_SAMPLE_ID) ? 8 : 0;
	after += (st & PERF_SAMPLE_STREAM_ID) ? 8 : 0;
	after += (st & PERF_SAMPLE_CPU) ? 8 : 0;
	after += (st & PERF_SAMPLE_IDENTIFIER) ? 8 : 0;
	if (n < after + 8)
		return 0;
	memcpy(&ts, body + n - after - 8, sizeof(ts));
	return ts;
}

static int fail(char *err, size_t errlen, const char *path, __u64 off, const char *what)
{
	snprintf(err, errlen, "%s: offset %llu: damaged perf.data: %s", path,
		 (unsigned long long)off, what);
	return -1;
}

/*
 * The tracing data (perf's util/trace-event-info.c writes it as trace-cmd does): a magic and
 * version, byte order, long and page size, the header_page and header_event formats, ftrace's
 * own formats, then per system its event formats, then kallsyms, printk formats and cmdlines.
 * Only the kvm system's formats are parsed. 1 read, 0 not ours to read (fallback), -1 damaged.
 */
static int read_tracing_data(struct perfdata_source *d, __u64 off, __u64 size, char *err,
			     size_t errlen)
{
	static const char magic[] = "\027\010\104tracing";
	struct pd_cur c = { d->map + off, d->map + off + size };
	const unsigned char *nul;
	unsigned char endian, long_size;
	__u32 page_size, count, systems;
	struct event_format_text *fmt = NULL;
	size_t nr_fmt = 0, cap_fmt = 0;
	__u64 sz;
	int ret;

	if ((size_t)(c.end - c.p) < sizeof(magic) - 1 ||
	    memcmp(c.p, magic, sizeof(magic) - 1))
		return fail(err, errlen, d->path, off, "its tracing data has no magic");
	c.p += sizeof(magic) - 1;
	nul = memchr(c.p, 0, c.end - c.p);	/* the version, "0.6" */
	if (!nul)
		return fail(err, errlen, d->path, off, "its tracing data ends in its version");
	c.p = nul + 1;
	if (!take(&c, &endian, 1) || !take(&c, &long_size, 1) || !take(&c, &page_size, 4))
		return fail(err, errlen, d->path, off, "its tracing data ends in its header");
	if (endian != 0)
		return 0;
	tep_set_file_bigendian(d->tep, TEP_LITTLE_ENDIAN);
	tep_set_local_bigendian(d->tep, TEP_LITTLE_ENDIAN);
	tep_set_long_size(d->tep, long_size);
	tep_set_page_size(d->tep, (int)page_size);
	for (int i = 0; i < 2; i++) {
		static const char *const name[] = { "header_page", "header_event" };
		size_t len = strlen(name[i]) + 1;

		if ((size_t)(c.end - c.p) < len || memcmp(c.p, name[i], len) ||
		    !take(&c, NULL, len) || !take_u64(&c, &sz) || sz > (size_t)(c.end - c.p) ||
		    !take(&c, NULL, sz))
			return fail(err, errlen, d->path, off, "its tracing data has no page or "
				    "event header format");
	}
	if (!take(&c, &count, 4))
		return fail(err, errlen, d->path, off, "its tracing data ends in ftrace's formats");
	for (__u32 i = 0; i < count; i++) {
		if (!take_u64(&c, &sz) || sz > (size_t)(c.end - c.p) || !take(&c, NULL, sz))
			return fail(err, errlen, d->path, off, "an ftrace format runs past its end");
	}
	if (!take(&c, &systems, 4))
		return fail(err, errlen, d->path, off, "its tracing data ends before its events");
	ret = 0;
	for (__u32 s = 0; s < systems && !ret; s++) {
		const char *sys = (const char *)c.p;
		bool kvm;

		nul = memchr(c.p, 0, c.end - c.p);
		if (!nul || (c.p = nul + 1, !take(&c, &count, 4))) {
			ret = fail(err, errlen, d->path, (const char *)c.p - (const char *)d->map,
				   "a system of events runs past its end");
			break;
		}
		kvm = !strcmp(sys, "kvm");
		for (__u32 i = 0; i < count; i++) {
			if (!take_u64(&c, &sz) || sz > (size_t)(c.end - c.p)) {
				ret = fail(err, errlen, d->path, c.p - d->map,
					   "an event format runs past its end");
				break;
			}
			if (kvm && array_reserve(fmt, nr_fmt, cap_fmt, 128)) {
				ret = -ENOMEM;
				break;
			}
			if (kvm)
				fmt[nr_fmt++] = (struct event_format_text){
					(const char *)c.p, sz, c.p - d->map, "kvm" };
			c.p += sz;
		}
	}
	/* A format libtraceevent cannot parse (kvm_inj_exception on some kernels) only leaves
	 * that event undecoded, as with trace.dat; one it crashes on is the error. */
	if (!ret)
		ret = event_formats_parse(d->tep, fmt, nr_fmt, d->path, "perf.data", err, errlen);
	free(fmt);
	return ret ? (ret == -ENOMEM ? ret : -1) : 1;
}

static int cmp_id(const void *a, const void *b)
{
	const struct pd_id *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static int cmp_idx(const void *a, const void *b)
{
	const struct pd_index *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->off < y->off ? -1 : x->off > y->off;
}

static int cmp_comm(const void *a, const void *b)
{
	const struct pd_comm *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The attributes and their ids. 1 read, 0 fallback, -1 damaged or out of memory. */
static int read_attrs(struct perfdata_source *d, const struct file_header *h, char *err,
		      size_t errlen)
{
	size_t one = h->attr_size, asz;
	__u64 st0;

	/* Each entry: the attribute as perf wrote it (its own size), then its ids' section. */
	if (one <= sizeof(struct file_section) || h->attrs.size % one)
		return fail(err, errlen, d->path, h->attrs.offset, "its attribute size");
	asz = one - sizeof(struct file_section);
	d->nr_attr = (int)(h->attrs.size / one);
	if (!d->nr_attr)
		return fail(err, errlen, d->path, h->attrs.offset, "it has no event attributes");
	d->attr = calloc(d->nr_attr, sizeof(*d->attr));
	if (!d->attr)
		return -ENOMEM;
	for (int i = 0; i < d->nr_attr; i++) {
		const unsigned char *e = d->map + h->attrs.offset + i * one;
		struct file_section ids;
		struct pd_id *n;
		__u64 nid;

		memcpy(&d->attr[i].a, e, asz < sizeof(d->attr[i].a) ? asz : sizeof(d->attr[i].a));
		memcpy(&ids, e + asz, sizeof(ids));
		if (ids.offset > d->len || ids.size > d->len - ids.offset || ids.size % 8)
			return fail(err, errlen, d->path, h->attrs.offset + i * one + asz,
				    "an attribute's ids lie outside the file");
		nid = ids.size / 8;
		n = reallocarray(d->ids, d->nr_ids + nid, sizeof(*n));
		if (!n)
			return -ENOMEM;
		d->ids = n;
		for (__u64 k = 0; k < nid; k++) {
			memcpy(&d->ids[d->nr_ids].id, d->map + ids.offset + k * 8, 8);
			d->ids[d->nr_ids++].attr = i;
		}
	}
	qsort(d->ids, d->nr_ids, sizeof(*d->ids), cmp_id);
	/* Where a sample's id is when it is not first (perf keeps it there for every event). */
	st0 = d->attr[0].a.sample_type;
	d->id_pos = -1;
	if (st0 & PERF_SAMPLE_IDENTIFIER) {
		d->id_pos = 0;
	} else if (st0 & PERF_SAMPLE_ID) {
		d->id_pos = !!(st0 & PERF_SAMPLE_IP) + !!(st0 & PERF_SAMPLE_TID) +
			    !!(st0 & PERF_SAMPLE_TIME) + !!(st0 & PERF_SAMPLE_ADDR);
	}
	if (d->nr_attr > 1 && d->id_pos < 0)
		return 0;
	return 1;
}

static int add_index(struct perfdata_source *d, __u64 ts, __u64 off, int attr)
{
	if (d->nr_idx == d->cap_idx) {
		size_t cap = d->cap_idx ? 2 * d->cap_idx : 4096;
		struct pd_index *n = reallocarray(d->idx, cap, sizeof(*n));

		if (!n)
			return -ENOMEM;
		d->idx = n;
		d->cap_idx = cap;
	}
	d->idx[d->nr_idx++] = (struct pd_index){ .ts = ts, .off = off, .attr = attr };
	return 0;
}

static int add_comm(struct perfdata_source *d, __u32 tid, const unsigned char *name, size_t n)
{
	struct pd_comm *c;

	if (d->nr_comm == d->cap_comm) {
		size_t cap = d->cap_comm ? 2 * d->cap_comm : 256;
		struct pd_comm *m = reallocarray(d->comm, cap, sizeof(*m));

		if (!m)
			return -ENOMEM;
		d->comm = m;
		d->cap_comm = cap;
	}
	c = &d->comm[d->nr_comm];
	c->tid = tid;
	c->seq = (__u32)d->nr_comm++;
	n = strnlen((const char *)name, n < sizeof(c->comm) ? n : sizeof(c->comm) - 1);
	memcpy(c->comm, name, n);
	c->comm[n] = 0;
	return 0;
}

/* The records of the data section: indexed, or noted. 1 read, 0 fallback, -1 damaged. */
static int index_data(struct perfdata_source *d, const struct file_header *h, char *err,
		      size_t errlen)
{
	__u64 off = h->data.offset, end = h->data.offset + h->data.size;

	while (off < end) {
		struct perf_event_header eh;
		const unsigned char *body;
		struct pd_sample s;
		size_t n;
		int a, ret = 0;

		if (end - off < sizeof(eh))
			return fail(err, errlen, d->path, off, "a record header is cut short");
		memcpy(&eh, d->map + off, sizeof(eh));
		if (eh.size < sizeof(eh) || eh.size > end - off)
			return fail(err, errlen, d->path, off, eh.size < sizeof(eh) ?
				    "a record's size is less than its header" :
				    "a record runs past the data section");
		body = d->map + off + sizeof(eh);
		n = eh.size - sizeof(eh);
		switch (eh.type) {
		case PERF_RECORD_SAMPLE:
			a = sample_attr(d, body, n);
			if (a < 0 || !d->attr[a].event)
				break;
			if (!parse_sample(&d->attr[a].a, body, n, &s) || !s.raw)
				return fail(err, errlen, d->path, off, "a sample is cut short");
			ret = add_index(d, s.ts, off, a);
			break;
		case PERF_RECORD_LOST:
			if (n < 16)
				return fail(err, errlen, d->path, off, "a lost record is cut short");
			ret = add_index(d, trailer_time(&d->attr[0].a, body, n), off, -1);
			d->lost_records += ((const __u64 *)body)[1];
			break;
		case PERF_RECORD_LOST_SAMPLES:
			/* perf reads each event's lost count as it ends (kernels >= 6.0): one
			 * record per event and CPU, at time 0, after the data. */
			if (n >= 8 && !(eh.misc & PERF_RECORD_MISC_LOST_SAMPLES_BPF))
				d->lost_samples += ((const __u64 *)body)[0];
			break;
		case PERF_RECORD_COMM:
			if (n > 8)
				ret = add_comm(d, ((const __u32 *)body)[1], body + 8, n - 8);
			break;
		case PERF_RECORD_AUXTRACE:
		case PERF_RECORD_COMPRESSED:
			return 0;
		default:
			break;
		}
		if (ret)
			return ret;
		off += eh.size;
	}
	/* None of either is NULL: qsort must not see it (a perf.data without kvm samples). */
	if (d->nr_idx)
		qsort(d->idx, d->nr_idx, sizeof(*d->idx), cmp_idx);
	if (d->nr_comm)
		qsort(d->comm, d->nr_comm, sizeof(*d->comm), cmp_comm);
	return 1;
}

static const char *comm_of(const struct perfdata_source *d, __u32 tid)
{
	const struct pd_comm *c = NULL;
	size_t lo = 0, hi = d->nr_comm;

	/* The last entry for tid: the comm array is sorted by tid, then by place in the file. */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (d->comm[mid].tid <= tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && d->comm[lo - 1].tid == tid)
		c = &d->comm[lo - 1];
	return c ? c->comm : "";
}

static int feed(struct perfdata_source *d, const struct pd_index *x)
{
	const unsigned char *rec = d->map + x->off;
	struct perf_event_header eh;
	struct tep_record tr = { 0 };
	struct tep_field_ctx fc;
	struct tp_record r = { .field = tep_field, .ctx = &fc };
	struct pd_sample s;
	__u64 lost;

	memcpy(&eh, rec, sizeof(eh));
	if (x->attr < 0) {
		/* { id, lost }: the kernel's count of the events that did not fit. */
		memcpy(&lost, rec + sizeof(eh) + 8, sizeof(lost));
		capture_import_missed(d->ci, x->ts, lost ? lost : 1);
		return 0;
	}
	parse_sample(&d->attr[x->attr].a, rec + sizeof(eh), eh.size - sizeof(eh), &s);
	tr.ts = s.ts;
	tr.cpu = (int)s.cpu;
	tr.data = (void *)s.raw;
	tr.size = (int)s.raw_size;
	fc.event = d->attr[x->attr].event;
	fc.rec = &tr;
	r.event = fc.event->name;
	r.ts_ns = s.ts;
	r.tgid = s.pid;
	r.tid = s.tid;
	r.cpu = s.cpu;
	r.comm = comm_of(d, s.tid);
	return capture_import_add(d->ci, &r);
}

static int perfdata_next(struct event_source *s, struct rec_item *item, char *err,
			 size_t errlen)
{
	struct perfdata_source *d = (struct perfdata_source *)s;

	while (!capture_import_pop(d->ci, item)) {
		int ret;

		if (d->ended)
			return 0;
		if (d->next == d->nr_idx) {
			/*
			 * The kernel writes a lost record once room is back: what was lost near
			 * the end has none, and perf's per-event counts hold it. Those are
			 * counted as lost at the last record's time.
			 */
			if (d->lost_samples > d->lost_records)
				capture_import_missed(d->ci, d->nr_idx ? d->idx[d->nr_idx - 1].ts : 0,
						      d->lost_samples - d->lost_records);
			d->ended = true;
			capture_import_end(d->ci);
			capture_import_notes(d->ci);
			continue;
		}
		ret = feed(d, &d->idx[d->next]);
		if (ret) {
			snprintf(err, errlen, "%s: offset %llu: %s", d->path,
				 (unsigned long long)d->idx[d->next].off, strerror(-ret));
			return -1;
		}
		d->next++;
	}
	return 1;
}

static void perfdata_close(struct event_source *s)
{
	struct perfdata_source *d = (struct perfdata_source *)s;

	if (d->map)
		munmap((void *)d->map, d->len);
	if (d->tep)
		tep_free(d->tep);
	capture_import_free(d->ci);
	free(d->attr);
	free(d->ids);
	free(d->idx);
	free(d->comm);
	free(d);
}

static const struct event_source_ops perfdata_ops = {
	.next = perfdata_next, .close = perfdata_close,
};

/* The kvm tracepoints among the attributes, by the formats read. */
static void match_events(struct perfdata_source *d)
{
	for (int i = 0; i < d->nr_attr; i++) {
		struct tep_event *e;

		if (d->attr[i].a.type != PERF_TYPE_TRACEPOINT)
			continue;
		e = tep_find_event(d->tep, (int)d->attr[i].a.config);
		if (e && e->system && !strcmp(e->system, "kvm"))
			d->attr[i].event = e;
	}
}

struct event_source *perfdata_source_open(const char *path, const char *clock, bool *fallback,
					  char *err, size_t errlen)
{
	struct perfdata_source *d = calloc(1, sizeof(*d));
	struct file_header h;
	struct file_section ft;
	struct stat st;
	int fd = -1, ret = -ENOMEM;

	*fallback = false;
	if (!d)
		goto nomem;
	d->s.ops = &perfdata_ops;
	d->s.lost_source = LOST_SRC_PERF;
	/* Keys from the capture's own kvm_pio, kvm_mmio... (capture_import.c). */
	d->s.meta.keys = true;
	snprintf(d->clock, sizeof(d->clock), "%s", clock);
	d->s.clock = d->clock;
	d->path = path;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
		goto out;
	}
	d->len = (size_t)st.st_size;
	if (d->len < sizeof(h)) {
		*fallback = true;
		goto out;
	}
	d->map = mmap(NULL, d->len, PROT_READ, MAP_PRIVATE, fd, 0);
	if (d->map == MAP_FAILED) {
		d->map = NULL;
		snprintf(err, errlen, "%s: cannot map: %s", path, strerror(errno));
		goto out;
	}
	memcpy(&h, d->map, sizeof(h));
	/* perf_header_check (import_perf.c) has checked the sections lie within the file. */
	if (h.magic != PERF_MAGIC2 || h.size != sizeof(h) ||
	    !(h.features[0] & (1ull << HEADER_TRACING_DATA))) {
		*fallback = true;
		goto out;
	}
	/* The feature sections follow the data, one per feature bit set, lowest first. */
	memcpy(&ft, d->map + h.data.offset + h.data.size, sizeof(ft));
	d->tep = tep_alloc();
	d->ci = capture_import_new(path, "perf.data", false);
	if (!d->tep || !d->ci)
		goto nomem;
	ret = read_tracing_data(d, ft.offset, ft.size, err, errlen);
	if (ret > 0)
		ret = read_attrs(d, &h, err, errlen);
	if (ret > 0) {
		match_events(d);
		ret = index_data(d, &h, err, errlen);
	}
	if (ret == -ENOMEM)
		goto nomem;
	if (ret <= 0) {
		*fallback = !ret;
		goto out;
	}
	close(fd);
	return &d->s;
nomem:
	snprintf(err, errlen, "%s: %s", path, strerror(ENOMEM));
out:
	if (fd >= 0)
		close(fd);
	if (d)
		perfdata_close(&d->s);
	return NULL;
}
