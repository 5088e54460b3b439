// SPDX-License-Identifier: GPL-2.0
/*
 * Perfetto's native protobuf trace (`--perfetto FILE.pftrace`, `--perfetto-format proto`):
 * the tracks and events of the JSON writer (perfetto.h; trace_tracks.h has the track model),
 * written as TracePackets of one sequence, for ui.perfetto.dev and trace_processor. The fields
 * written are exactly those of docs/perfetto-subset.proto; its operations are
 * perfetto_proto_ops (trace_writer.h).
 *
 *  - one process track per VM (pid = VMM tgid, named after the guest), its children ordered:
 *    the exit-rate counters ("guest exits/s", "exits to VMM/s", then one per reason, "HLT
 *    exits/s", "IO exits to VMM/s"), then per vCPU "vCPU N" and "vCPU N (VMM)", then the
 *    tracks of threads whose vCPU is not known yet;
 *  - an exit is a slice (a begin and an end packet) on its track, named after the reason, with
 *    the JSON writer's args as debug annotations; TSC offset writes and the other kvm
 *    tracepoints are instants on the vCPU track, a recorded halt a slice there with its pieces
 *    nested (halt_slices.h); lost records and stuck exits are instants on
 *    a global "vmexit" track;
 *  - timestamps are on the events' clock: CLOCK_MONOTONIC ns (clock 3) for vmexit's own, a
 *    POSIX clock Perfetto knows by its builtin id, or (an import on trace_clock=local,
 *    perf_clock...) a clock of the sequence's own (id 64), so that the trace never claims a
 *    clock its times are not on; a clock snapshot makes that clock the trace's time base;
 *  - event, category and argument names are interned: each is written once, in the packet
 *    that first uses it.
 * Streamed: each packet goes to the file as it is made; memory is one entry per VM, vCPU,
 * thread and interned name.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "array_grow.h"
#include "halt_slices.h"
#include "hashmap.h"
#include "out_write.h"
#include "proto_enc.h"
#include "kvm_event_fields.h"
#include "reasons.h"
#include "trace_tracks.h"
#include "trace_writer.h"
#include "wake_rows.h"

/* Field numbers, as docs/perfetto-subset.proto names them. */
enum {
	TRACE_PACKET = 1,

	PKT_TIMESTAMP = 8,
	PKT_SEQUENCE_ID = 10,
	PKT_INTERNED_DATA = 12,
	PKT_SEQUENCE_FLAGS = 13,
	PKT_DEFAULTS = 59,
	PKT_CLOCK_SNAPSHOT = 6,
	PKT_TRACK_EVENT = 11,
	PKT_TRACK_DESCRIPTOR = 60,

	DEFAULTS_CLOCK_ID = 58,
	SNAPSHOT_CLOCKS = 1,
	CLOCK_ID = 1,
	CLOCK_TIMESTAMP = 2,

	INTERNED_IID = 1,
	INTERNED_NAME = 2,

	TD_UUID = 1,
	TD_PARENT_UUID = 5,
	TD_NAME = 2,
	TD_PROCESS = 3,
	TD_COUNTER = 8,
	TD_CHILD_ORDERING = 11,
	TD_SIBLING_RANK = 12,
	PD_PID = 1,
	PD_NAME = 6,
	CD_UNIT_NAME = 6,

	TE_TYPE = 9,
	TE_TRACK_UUID = 11,
	TE_CATEGORY_IIDS = 3,
	TE_NAME_IID = 10,
	TE_NAME = 23,
	TE_COUNTER_VALUE = 30,
	TE_DOUBLE_COUNTER_VALUE = 44,
	TE_DEBUG_ANNOTATIONS = 4,
	TE_FLOW_IDS = 47,		/* fixed64: the flows this event is on */
	TE_TERMINATING_FLOW_IDS = 48,	/* fixed64: the flows it ends */

	DA_NAME_IID = 1,
	DA_BOOL = 2,
	DA_UINT = 3,
	DA_INT = 4,
	DA_STRING = 6,
	DA_POINTER = 7,
};

enum { SEQ_CLEARED = 1, SEQ_NEEDS_STATE = 2 };
enum { TYPE_SLICE_BEGIN = 1, TYPE_SLICE_END = 2, TYPE_INSTANT = 3, TYPE_COUNTER = 4 };
/* ClockSnapshot.Clock's builtin ids, and the first of the sequence-scoped ones (64-127). */
enum { CLOCK_REALTIME_ID = 1, CLOCK_MONOTONIC_ID = 3, CLOCK_MONOTONIC_RAW_ID = 5,
       CLOCK_BOOTTIME_ID = 6, CLOCK_SEQUENCE_ID = 64 };
enum { CHILD_ORDERING_EXPLICIT = 3 };

/* The three interned tables, numbered as InternedData's fields. */
enum intern_kind { IN_CATEGORY = 1, IN_EVENT_NAME = 2, IN_ARG_NAME = 3, IN_KVM_EVENT = 4 };

/* The sequence every packet is on: one writer, one sequence. */
#define SEQ_ID		1

/*
 * Track uuids: the tracks events are drawn on most get small ones (the synthetic ids of
 * trace_tracks.h, short varints in every event); the VMs' own tracks, their counters and the
 * global track live above 2^32.
 */
#define UUID_PROCESS(tgid)	(1ull << 32 | (tgid))
#define UUID_COUNTER(tgid, i)	(2ull << 32 | (__u64)(tgid) << 1 | (i))
#define UUID_GLOBAL		(3ull << 32)
#define UUID_OUTSIDE(i)		(4ull << 32 | (i))	/* report --counters, in order of use */
#define UUID_GUEST(tgid, track)	(5ull << 56 | (__u64)(tgid) << 24 | (track))	/* --guest-trace */
#define UUID_REASON(seq)	(6ull << 32 | (seq))	/* per-reason rates, in order of use */

/* A VM's children from the top: guest tracks (TRACE_GUEST_SORT), rates, then vCPUs from 0. */
#define RANK_RATES		(-(1ll << 19))

/* A packet is a few hundred bytes; a guest name or a kvm event's fields can't come near. */
#define PACKET_MAX	8192
#define INTERNED_MAX	2048

/* Interned strings are keyed by where they live: the tables of reasons.c, the literals here. */
struct intern_key {
	__u32 kind;
	__u32 lo;
	__u32 hi;
};

DEFINE_HASHMAP(interned, struct intern_key, __u64)

/*
 * The names this writer gives itself, each interned through its own slot: an exit names a
 * dozen arguments, and a hash lookup each cost more than the rest of its encoding.
 */
#define FIXED_NAMES(X)								\
	X(ARG_REASON, IN_ARG_NAME, "reason")					\
	X(ARG_ISA, IN_ARG_NAME, "isa")						\
	X(ARG_RIP, IN_ARG_NAME, "rip")						\
	X(ARG_INFO1, IN_ARG_NAME, "info1")					\
	X(ARG_INFO2, IN_ARG_NAME, "info2")					\
	X(ARG_INTR_INFO, IN_ARG_NAME, "intr_info")				\
	X(ARG_ERROR_CODE, IN_ARG_NAME, "error_code")				\
	X(ARG_LATENCY, IN_ARG_NAME, "latency_ns")				\
	X(ARG_CPU, IN_ARG_NAME, "cpu")						\
	X(ARG_TID, IN_ARG_NAME, "tid")						\
	X(ARG_VCPU, IN_ARG_NAME, "vcpu")					\
	X(ARG_ERRNO, IN_ARG_NAME, "errno")					\
	X(ARG_IN_FLIGHT, IN_ARG_NAME, "in_flight")				\
	X(ARG_PREVIOUS, IN_ARG_NAME, "previous")				\
	X(ARG_NEXT, IN_ARG_NAME, "next")					\
	X(ARG_LOST, IN_ARG_NAME, "lost")					\
	X(CAT_EXIT, IN_CATEGORY, "kvm_exit")					\
	X(CAT_USER_EXIT, IN_CATEGORY, "kvm_userspace_exit")			\
	X(CAT_KVM_EVENT, IN_CATEGORY, "kvm_event")				\
	X(CAT_TSC_OFFSET, IN_CATEGORY, "kvm_tsc_offset")			\
	X(CAT_LOST, IN_CATEGORY, "vmexit_lost")					\
	X(CAT_STUCK, IN_CATEGORY, "vmexit_stuck")				\
	X(CAT_GUEST, IN_CATEGORY, "guest")					\
	X(CAT_WAKE, IN_CATEGORY, "wake")					\
	X(ARG_SOURCE, IN_ARG_NAME, "source")					\
	X(ARG_VECTOR, IN_ARG_NAME, "vector")					\
	X(ARG_VALID, IN_ARG_NAME, "valid")					\
	X(CAT_HALT, IN_CATEGORY, HALT_SLICE_CAT)				\
	X(NAME_TSC_OFFSET, IN_EVENT_NAME, "tsc_offset")

#define FIXED_ENUM(id, table, name)	id,
enum fixed_name { FIXED_NAMES(FIXED_ENUM) NR_FIXED };
#define FIXED_ENTRY(id, table, name)	[id] = { table, name },
static const struct {
	enum intern_kind table;
	const char *name;
} fixed[NR_FIXED] = { FIXED_NAMES(FIXED_ENTRY) };

struct pftrace_writer {
	FILE *f;
	struct trace_tracks tt;
	struct interned interned;
	__u64 next_iid[IN_KVM_EVENT + 1];
	__u64 fixed_iid[NR_FIXED];	/* 0 until interned */
	bool started;		/* the sequence's first packets are out */
	__u32 clock_id;		/* the timestamps' clock (clock_id_of()) */
	bool global_announced;
	char **outside;		/* the names of the outside counters, index = track */
	size_t nr_outside;
	__u64 *guest_uuids;	/* guest tracks described so far */
	size_t nr_guest_uuids, cap_guest_uuids;
	int err;		/* first error, sticky */
	__u64 flows;		/* wake flows drawn: the next one's id is flows + 1 */
	struct pb pkt;		/* the packet being made */
	struct pb in;		/* the interned names it introduces */
	__u8 pkt_buf[PACKET_MAX];
	__u8 in_buf[INTERNED_MAX];
};

/* Gives s the table's next iid and adds it to the packet's interned data (prefix: "kvm_"). */
static __u64 intern_new(struct pftrace_writer *w, enum intern_kind table, const char *prefix,
			const char *s)
{
	__u64 iid = ++w->next_iid[table];
	__u8 *m = pb_open(&w->in, table);
	char name[64];

	pb_uint(&w->in, INTERNED_IID, iid);
	if (prefix) {
		snprintf(name, sizeof(name), "%s%s", prefix, s);
		s = name;
	}
	pb_str(&w->in, INTERNED_NAME, s);
	pb_close(&w->in, m);
	return iid;
}

/* A name from the tables of reasons.c, by where it lives. */
static __u64 intern(struct pftrace_writer *w, enum intern_kind kind, const char *s)
{
	struct intern_key k = { .kind = kind, .lo = (__u32)(unsigned long)s,
				.hi = (__u32)((unsigned long long)(unsigned long)s >> 32) };
	bool added;
	__u64 *iid = interned_get(&w->interned, &k, &added);

	if (!iid) {
		w->err = -ENOMEM;
		return 0;
	}
	if (added)	/* kvm events are named as the JSON writer names them: "kvm_pio" */
		*iid = kind == IN_KVM_EVENT ? intern_new(w, IN_EVENT_NAME, "kvm_", s) :
					      intern_new(w, kind, NULL, s);
	return *iid;
}

static __u64 fixed_iid(struct pftrace_writer *w, enum fixed_name n)
{
	if (!w->fixed_iid[n])
		w->fixed_iid[n] = intern_new(w, fixed[n].table, NULL, fixed[n].name);
	return w->fixed_iid[n];
}

/* Starts a packet on the sequence: an event's, at ts_ns, or (NO_TS) a description. */
#define NO_TS	UINT64_MAX
static void packet_begin(struct pftrace_writer *w, __u64 ts_ns)
{
	pb_init(&w->pkt, w->pkt_buf, sizeof(w->pkt_buf));
	pb_init(&w->in, w->in_buf, sizeof(w->in_buf));
	if (ts_ns != NO_TS)
		pb_uint(&w->pkt, PKT_TIMESTAMP, ts_ns);
	pb_uint(&w->pkt, PKT_SEQUENCE_ID, SEQ_ID);
}

/* Adds the names the packet introduced and writes it to the file as one Trace.packet. */
static void packet_end(struct pftrace_writer *w, bool uses_interned)
{
	__u8 head[16];
	struct pb h;

	if (pb_len(&w->in))
		pb_bytes(&w->pkt, PKT_INTERNED_DATA, w->in_buf, pb_len(&w->in));
	if (uses_interned)
		pb_uint(&w->pkt, PKT_SEQUENCE_FLAGS, SEQ_NEEDS_STATE);
	if (w->pkt.full || w->in.full) {
		if (!w->err)
			w->err = -EOVERFLOW;
		return;
	}
	pb_init(&h, head, sizeof(head));
	pb_tag(&h, TRACE_PACKET, PB_LEN);
	pb_varint(&h, pb_len(&w->pkt));
	fwrite(head, 1, pb_len(&h), w->f);
	fwrite(w->pkt_buf, 1, pb_len(&w->pkt), w->f);
	/* Why it failed, taken now: by the close the stream's error flag alone says only EIO. */
	if (!w->err)
		w->err = out_error(w->f);
}

/*
 * The clock of the events' times (trace_writer_ops.open's name) as Perfetto numbers clocks:
 * the POSIX ones it has builtin ids for; any other (ftrace's local or global clock, perf's
 * perf_clock, x86-tsc) is none of those, so it gets a clock of this sequence's own.
 */
static __u32 clock_id_of(const char *clock)
{
	static const struct { const char *name; __u32 id; } builtin[] = {
		{ "CLOCK_MONOTONIC", CLOCK_MONOTONIC_ID }, { "CLOCK_REALTIME", CLOCK_REALTIME_ID },
		{ "CLOCK_MONOTONIC_RAW", CLOCK_MONOTONIC_RAW_ID },
		{ "CLOCK_BOOTTIME", CLOCK_BOOTTIME_ID },
	};

	if (!clock)
		return CLOCK_MONOTONIC_ID;
	for (size_t i = 0; i < sizeof(builtin) / sizeof(builtin[0]); i++)
		if (!strcmp(clock, builtin[i].name))
			return builtin[i].id;
	return CLOCK_SEQUENCE_ID;
}

/*
 * The sequence's start: its interning begins here, its timestamps are on w->clock_id, and a
 * snapshot equating that clock with the importer's default (boottime) makes it the trace's
 * time base, so the timestamps show as they are (and line up with other traces on it).
 */
static void start(struct pftrace_writer *w)
{
	__u8 *d, *snap, *c;

	if (w->started)
		return;
	w->started = true;
	packet_begin(w, NO_TS);
	pb_uint(&w->pkt, PKT_SEQUENCE_FLAGS, SEQ_CLEARED);
	d = pb_open(&w->pkt, PKT_DEFAULTS);
	pb_uint(&w->pkt, DEFAULTS_CLOCK_ID, w->clock_id);
	pb_close(&w->pkt, d);
	packet_end(w, false);
	if (w->clock_id == CLOCK_BOOTTIME_ID)
		return;		/* the default time base already */

	packet_begin(w, NO_TS);
	snap = pb_open(&w->pkt, PKT_CLOCK_SNAPSHOT);
	c = pb_open(&w->pkt, SNAPSHOT_CLOCKS);
	pb_uint(&w->pkt, CLOCK_ID, w->clock_id);
	pb_uint(&w->pkt, CLOCK_TIMESTAMP, 0);
	pb_close(&w->pkt, c);
	c = pb_open(&w->pkt, SNAPSHOT_CLOCKS);
	pb_uint(&w->pkt, CLOCK_ID, CLOCK_BOOTTIME_ID);
	pb_uint(&w->pkt, CLOCK_TIMESTAMP, 0);
	pb_close(&w->pkt, c);
	pb_close(&w->pkt, snap);
	packet_end(w, false);
}

/* A TrackDescriptor packet; its body is written by the caller between these two. */
static __u8 *descriptor_begin(struct pftrace_writer *w, __u64 uuid)
{
	__u8 *d;

	packet_begin(w, NO_TS);
	d = pb_open(&w->pkt, PKT_TRACK_DESCRIPTOR);
	pb_uint(&w->pkt, TD_UUID, uuid);
	return d;
}

static void descriptor_end(struct pftrace_writer *w, __u8 *d)
{
	pb_close(&w->pkt, d);
	packet_end(w, false);
}

static void describe_process(struct pftrace_writer *w, __u32 tgid, const char *name)
{
	__u8 *d = descriptor_begin(w, UUID_PROCESS(tgid)), *p;

	p = pb_open(&w->pkt, TD_PROCESS);
	pb_uint(&w->pkt, PD_PID, tgid);
	if (name)
		pb_str(&w->pkt, PD_NAME, name);
	pb_close(&w->pkt, p);
	pb_uint(&w->pkt, TD_CHILD_ORDERING, CHILD_ORDERING_EXPLICIT);
	descriptor_end(w, d);
}

/* The VM's process track, described once (again by pftrace_guest to name it). */
static void need_process(struct pftrace_writer *w, __u32 tgid)
{
	struct trace_track *vm = trace_tracks_vm(&w->tt, tgid);

	if (!vm) {
		w->err = -ENOMEM;
		return;
	}
	if (vm->announced)
		return;
	vm->announced = true;
	describe_process(w, tgid, NULL);
}

/* The uuid of one of t's tracks, described the first time. */
static __u64 track_uuid(struct pftrace_writer *w, struct trace_track *t, int which)
{
	bool added;
	__u32 id = trace_track_id(&w->tt, t, which, &added);
	__u64 uuid = id;
	long long sort;
	char name[64];
	__u8 *d;

	if (!added)
		return uuid;
	need_process(w, t->tgid);
	/* trace_track_sort() in an int32 rank: threads after vCPUs, each kind in order. */
	sort = trace_track_sort(t, which);
	if (sort >> 32)
		sort = (1ll << 24) + (sort & 0xffffffffll);
	trace_track_name(t, which, name, sizeof(name));
	d = descriptor_begin(w, uuid);
	pb_uint(&w->pkt, TD_PARENT_UUID, UUID_PROCESS(t->tgid));
	pb_str(&w->pkt, TD_NAME, name);
	pb_uint(&w->pkt, TD_SIBLING_RANK, (__u64)(__s64)sort);
	descriptor_end(w, d);
	return uuid;
}

static const char *const rate_names[TT_NR] = { "guest exits/s", "exits to VMM/s" };

/* One value of an exit-rate counter track. */
static void rate_value(struct pftrace_writer *w, __u64 ts_ns, __u64 uuid, __u64 v)
{
	__u8 *e;

	packet_begin(w, ts_ns);
	e = pb_open(&w->pkt, PKT_TRACK_EVENT);
	pb_uint(&w->pkt, TE_TYPE, TYPE_COUNTER);
	pb_uint(&w->pkt, TE_TRACK_UUID, uuid);
	pb_uint(&w->pkt, TE_COUNTER_VALUE, v);
	pb_close(&w->pkt, e);
	packet_end(w, false);
}

static void draw_rates(void *ctx, struct trace_track *vm, __u64 ts_ns, __u64 kvm, __u64 vmm)
{
	struct pftrace_writer *w = ctx;
	__u64 v[TT_NR] = { kvm, vmm };

	need_process(w, vm->tgid);
	if (!vm->counters) {
		for (int i = 0; i < TT_NR; i++) {
			__u8 *d = descriptor_begin(w, UUID_COUNTER(vm->tgid, i)), *c;

			pb_uint(&w->pkt, TD_PARENT_UUID, UUID_PROCESS(vm->tgid));
			pb_str(&w->pkt, TD_NAME, rate_names[i]);
			pb_uint(&w->pkt, TD_SIBLING_RANK, (__u64)(RANK_RATES + i));
			c = pb_open(&w->pkt, TD_COUNTER);
			pb_str(&w->pkt, CD_UNIT_NAME, "exits/s");
			pb_close(&w->pkt, c);
			descriptor_end(w, d);
		}
		vm->counters = true;
	}
	for (int i = 0; i < TT_NR; i++)
		rate_value(w, ts_ns, UUID_COUNTER(vm->tgid, i), v[i]);
}

static void draw_reason_rate(void *ctx, struct trace_rate *r, __u64 ts_ns, __u64 per_s)
{
	struct pftrace_writer *w = ctx;

	need_process(w, r->k.tgid);
	if (!r->announced) {
		__u8 *d = descriptor_begin(w, UUID_REASON(r->seq)), *c;
		char name[REASON_STR_MAX + 32];

		trace_rate_name(r, name, sizeof(name));
		pb_uint(&w->pkt, TD_PARENT_UUID, UUID_PROCESS(r->k.tgid));
		pb_str(&w->pkt, TD_NAME, name);
		pb_uint(&w->pkt, TD_SIBLING_RANK, (__u64)(RANK_RATES + TT_NR + r->seq));
		c = pb_open(&w->pkt, TD_COUNTER);
		pb_str(&w->pkt, CD_UNIT_NAME, "exits/s");
		pb_close(&w->pkt, c);
		descriptor_end(w, d);
		r->announced = true;
	}
	rate_value(w, ts_ns, UUID_REASON(r->seq), per_s);
}

static void *pftrace_open(FILE *f, const char *clock)
{
	struct pftrace_writer *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->f = f;
	w->clock_id = clock_id_of(clock);
	trace_tracks_init(&w->tt, 1, draw_rates, draw_reason_rate, w);
	return w;
}

static void pftrace_guest(void *pw, __u32 tgid, const char *name)
{
	struct pftrace_writer *w = pw;
	struct trace_track *vm = trace_tracks_vm(&w->tt, tgid);

	if (!vm) {
		w->err = -ENOMEM;
		return;
	}
	vm->announced = true;
	start(w);
	describe_process(w, tgid, name ? name : "");
}

/* Argument helpers: each a DebugAnnotation with an interned name. */
static __u8 *arg_open(struct pftrace_writer *w, __u64 name_iid)
{
	__u8 *a = pb_open(&w->pkt, TE_DEBUG_ANNOTATIONS);

	pb_uint(&w->pkt, DA_NAME_IID, name_iid);
	return a;
}

static void arg_uint(struct pftrace_writer *w, __u64 name_iid, int type, __u64 v)
{
	__u8 *a = arg_open(w, name_iid);

	pb_uint(&w->pkt, type, v);
	pb_close(&w->pkt, a);
}

static void arg_str(struct pftrace_writer *w, __u64 name_iid, const char *v)
{
	__u8 *a = arg_open(w, name_iid);

	pb_str(&w->pkt, DA_STRING, v);
	pb_close(&w->pkt, a);
}

/* Opens the packet and TrackEvent of an event at ts on track uuid; returns the event's mark. */
static __u8 *event_begin(struct pftrace_writer *w, __u64 ts_ns, int type, __u64 uuid,
			 enum fixed_name category)
{
	__u8 *e;

	start(w);
	packet_begin(w, ts_ns);
	e = pb_open(&w->pkt, PKT_TRACK_EVENT);
	pb_uint(&w->pkt, TE_TYPE, type);
	pb_uint(&w->pkt, TE_TRACK_UUID, uuid);
	pb_uint(&w->pkt, TE_CATEGORY_IIDS, fixed_iid(w, category));
	return e;
}

static void event_end(struct pftrace_writer *w, __u8 *e)
{
	pb_close(&w->pkt, e);
	packet_end(w, true);
}

/* The end of the slice last begun on track uuid: no name, no category. */
static void slice_end(struct pftrace_writer *w, __u64 ts_ns, __u64 uuid)
{
	__u8 *e;

	packet_begin(w, ts_ns);
	e = pb_open(&w->pkt, PKT_TRACK_EVENT);
	pb_uint(&w->pkt, TE_TYPE, TYPE_SLICE_END);
	pb_uint(&w->pkt, TE_TRACK_UUID, uuid);
	pb_close(&w->pkt, e);
	packet_end(w, false);
}

/* An instant on the vCPU's kvm track, as the JSON writer's (perfetto.c says why). */
static void kvm_event_instant(struct pftrace_writer *w, __u64 uuid, const struct vmexit_event *ev)
{
	const struct kvm_event_field *kf;
	const char *name = kvm_event_name(ev->reason);
	__u8 *e = event_begin(w, ev->ts_ns, TYPE_INSTANT, uuid, CAT_KVM_EVENT);
	size_t n;

	if (name) {
		pb_uint(&w->pkt, TE_NAME_IID, intern(w, IN_KVM_EVENT, name));
	} else {
		char nb[32];

		snprintf(nb, sizeof(nb), "kvm_event_%u", ev->reason);
		pb_str(&w->pkt, TE_NAME, nb);
	}
	kf = kvm_event_fields(ev->reason, &n);
	for (size_t i = 0; i < n; i++) {
		if (kf[i].fmt == KF_STR)
			arg_str(w, intern(w, IN_ARG_NAME, kf[i].name), kvm_event_access(ev));
		else
			arg_uint(w, intern(w, IN_ARG_NAME, kf[i].name), kf[i].fmt == KF_HEX ? DA_POINTER : DA_UINT,
				 kvm_event_field_value(&kf[i], ev));
	}
	arg_uint(w, fixed_iid(w, ARG_CPU), DA_UINT, ev->cpu);
	arg_uint(w, fixed_iid(w, ARG_TID), DA_UINT, ev->tid);
	arg_uint(w, fixed_iid(w, ARG_VCPU), DA_INT, (__u64)(__s64)ev->vcpu);
	event_end(w, e);
}

static void tsc_offset_instant(struct pftrace_writer *w, __u64 uuid, const struct vmexit_event *ev)
{
	__u8 *e = event_begin(w, ev->ts_ns, TYPE_INSTANT, uuid, CAT_TSC_OFFSET);

	pb_uint(&w->pkt, TE_NAME_IID, fixed_iid(w, NAME_TSC_OFFSET));
	arg_uint(w, fixed_iid(w, ARG_PREVIOUS), DA_INT, ev->info1);
	arg_uint(w, fixed_iid(w, ARG_NEXT), DA_INT, ev->info2);
	arg_uint(w, fixed_iid(w, ARG_CPU), DA_UINT, ev->cpu);
	arg_uint(w, fixed_iid(w, ARG_TID), DA_UINT, ev->tid);
	event_end(w, e);
}

/* A delivery's parts as arguments: "guest_ns", ... (include/wake.h's list). */
static const char *const wake_part_args[NR_WAKE_PARTS] = {
#define WAKE_PART_ARG(ID, name) [WAKE_PART_##ID] = #name "_ns",
	WAKE_PARTS(WAKE_PART_ARG)
#undef WAKE_PART_ARG
};

/*
 * One end of a delivery's flow (record --wake), as the JSON writer draws it (perfetto.c): an
 * instant on the vCPU's kvm track at pending that starts flow id, and one at the delivering
 * entry that ends it.
 */
static void wake_end(struct pftrace_writer *w, __u64 uuid, const struct vmexit_event *ev,
		     __u64 id, bool in)
{
	struct vmexit_event e = *ev;
	char name[64];
	__u8 *a;

	a = event_begin(w, in ? ev->ts_ns + ev->latency_ns : ev->ts_ns, TYPE_INSTANT, uuid,
			CAT_WAKE);
	snprintf(name, sizeof(name), "irq %s %s", in ? "delivered" : "pending",
		 wake_source_name(ev->reason));
	pb_str(&w->pkt, TE_NAME, name);
	pb_fixed64(&w->pkt, in ? TE_TERMINATING_FLOW_IDS : TE_FLOW_IDS, id);
	arg_str(w, fixed_iid(w, ARG_SOURCE), wake_source_name(ev->reason));
	arg_uint(w, fixed_iid(w, ARG_VECTOR), DA_UINT, ev->intr_info);
	arg_uint(w, fixed_iid(w, ARG_LATENCY), DA_UINT, ev->latency_ns);
	/* intern() keys a name by its address: each part's name is a constant of its own. */
	for (int i = 0; in && i < NR_WAKE_PARTS; i++)
		arg_uint(w, intern(w, IN_ARG_NAME, wake_part_args[i]), DA_UINT,
			 *wake_event_part(&e, i));
	arg_uint(w, fixed_iid(w, ARG_TID), DA_UINT, ev->tid);
	arg_uint(w, fixed_iid(w, ARG_VCPU), DA_INT, (__u64)(__s64)ev->vcpu);
	event_end(w, a);
}

/*
 * A halt (record --wake) and its pieces, as the JSON writer draws them (halt_slices.h): each
 * slice begun and ended in time order, the halt first and ended last, so that they nest.
 */
static void halt_slices(struct pftrace_writer *w, __u64 uuid, const struct vmexit_event *ev)
{
	struct halt_slices hs;
	__u8 *e;

	halt_slices_of(ev, &hs);
	e = event_begin(w, hs.s[0].ts_ns, TYPE_SLICE_BEGIN, uuid, CAT_HALT);
	pb_uint(&w->pkt, TE_NAME_IID, intern(w, IN_EVENT_NAME, hs.s[0].name));
	arg_uint(w, fixed_iid(w, ARG_LATENCY), DA_UINT, ev->latency_ns);
	/* intern() keys a name by its address: each part's name is a constant of its own. */
	for (int i = 0; i < NR_HLT_PARTS; i++)
		arg_uint(w, intern(w, IN_ARG_NAME, halt_slice_arg[i]), DA_UINT, hs.parts[i]);
	arg_uint(w, fixed_iid(w, ARG_VALID), DA_BOOL, hs.valid);
	arg_uint(w, fixed_iid(w, ARG_TID), DA_UINT, ev->tid);
	arg_uint(w, fixed_iid(w, ARG_VCPU), DA_INT, (__u64)(__s64)ev->vcpu);
	event_end(w, e);
	for (unsigned int i = 1; i < hs.n; i++) {
		e = event_begin(w, hs.s[i].ts_ns, TYPE_SLICE_BEGIN, uuid, CAT_HALT);
		pb_uint(&w->pkt, TE_NAME_IID, intern(w, IN_EVENT_NAME, hs.s[i].name));
		event_end(w, e);
		slice_end(w, hs.s[i].ts_ns + hs.s[i].dur_ns, uuid);
	}
	slice_end(w, hs.s[0].ts_ns + hs.s[0].dur_ns, uuid);
}

static void pftrace_event(void *pw, const struct vmexit_event *ev, const char *name)
{
	struct pftrace_writer *w = pw;
	__u16 type = VMEXIT_EV_TYPE(ev->type);
	bool user = type == VMEXIT_EV_USER_EXIT;
	char rb[REASON_STR_MAX];
	struct trace_track *t;
	__u64 uuid;
	__u8 *e;

	if (type != VMEXIT_EV_EXIT && !user && type != VMEXIT_EV_TSC_OFFSET &&
	    type != VMEXIT_EV_KVM_EVENT && type != VMEXIT_EV_WAKE && type != VMEXIT_EV_HALT)
		return;		/* a type this version doesn't know how to draw */
	start(w);
	if (type == VMEXIT_EV_EXIT || user)
		trace_tracks_count(&w->tt, ev, user);
	t = trace_tracks_of_event(&w->tt, ev);
	if (!t) {
		w->err = -ENOMEM;
		return;
	}
	uuid = track_uuid(w, t, user ? TT_VMM : TT_KVM);
	if (type == VMEXIT_EV_KVM_EVENT) {
		kvm_event_instant(w, uuid, ev);
		return;
	}
	if (type == VMEXIT_EV_WAKE) {
		__u64 id = ++w->flows;

		wake_end(w, uuid, ev, id, false);
		wake_end(w, uuid, ev, id, true);
		return;
	}
	if (type == VMEXIT_EV_TSC_OFFSET) {
		tsc_offset_instant(w, uuid, ev);
		return;
	}
	if (type == VMEXIT_EV_HALT) {
		halt_slices(w, uuid, ev);
		return;
	}
	e = event_begin(w, ev->ts_ns, TYPE_SLICE_BEGIN, uuid,
			user ? CAT_USER_EXIT : CAT_EXIT);
	/* Table names are interned; a caller's or a made-up one is written as is. */
	if (!name && (name = reason_name(ev->isa, ev->reason)))
		pb_uint(&w->pkt, TE_NAME_IID, intern(w, IN_EVENT_NAME, name));
	else
		pb_str(&w->pkt, TE_NAME, name ? name : reason_str(ev->isa, ev->reason, rb, sizeof(rb)));
	arg_uint(w, fixed_iid(w, ARG_REASON), DA_UINT, ev->reason);
	arg_str(w, fixed_iid(w, ARG_ISA), isa_name(ev->isa));
	/* An exit to the VMM has no guest RIP or exit information (as in stream --json). */
	if (!user) {
		arg_uint(w, fixed_iid(w, ARG_RIP), DA_POINTER, ev->rip);
		arg_uint(w, fixed_iid(w, ARG_INFO1), DA_POINTER, ev->info1);
		arg_uint(w, fixed_iid(w, ARG_INFO2), DA_POINTER, ev->info2);
		arg_uint(w, fixed_iid(w, ARG_INTR_INFO), DA_POINTER, ev->intr_info);
		arg_uint(w, fixed_iid(w, ARG_ERROR_CODE), DA_POINTER, ev->error_code);
	}
	arg_uint(w, fixed_iid(w, ARG_LATENCY), DA_UINT, ev->latency_ns);
	arg_uint(w, fixed_iid(w, ARG_CPU), DA_UINT, ev->cpu);
	arg_uint(w, fixed_iid(w, ARG_TID), DA_UINT, ev->tid);
	arg_uint(w, fixed_iid(w, ARG_VCPU), DA_INT, (__u64)(__s64)ev->vcpu);
	if (user)
		arg_uint(w, fixed_iid(w, ARG_ERRNO), DA_INT, ev->info1);
	/* Not ended: the slice stops where tracing (or its thread) did. */
	if (ev->type & VMEXIT_EV_IN_FLIGHT)
		arg_uint(w, fixed_iid(w, ARG_IN_FLIGHT), DA_BOOL, 1);
	event_end(w, e);

	/* Each track's exits are strictly sequential: the end can follow right away. */
	slice_end(w, ev->ts_ns + ev->latency_ns, uuid);
}

/* A global instant (lost records, stuck exits) on the trace's own "vmexit" track. */
static __u8 *global_instant(struct pftrace_writer *w, __u64 ts_ns, enum fixed_name category,
			    const char *name)
{
	__u8 *e;

	start(w);
	if (!w->global_announced) {
		__u8 *d = descriptor_begin(w, UUID_GLOBAL);

		pb_str(&w->pkt, TD_NAME, "vmexit");
		descriptor_end(w, d);
		w->global_announced = true;
	}
	e = event_begin(w, ts_ns, TYPE_INSTANT, UUID_GLOBAL, category);
	pb_str(&w->pkt, TE_NAME, name);
	return e;
}

static void pftrace_counter(void *pw, const char *name, __u64 ts_ns, double value)
{
	struct pftrace_writer *w = pw;
	size_t i;
	__u8 *e;

	start(w);
	for (i = 0; i < w->nr_outside && strcmp(w->outside[i], name); i++)
		;
	if (i == w->nr_outside) {
		char **v = realloc(w->outside, (i + 1) * sizeof(*v));
		__u8 *d;

		if (!v || !(v[i] = strdup(name))) {
			if (v)
				w->outside = v;
			w->err = -ENOMEM;
			return;
		}
		w->outside = v;
		w->nr_outside++;
		d = descriptor_begin(w, UUID_OUTSIDE(i));
		pb_str(&w->pkt, TD_NAME, name);
		e = pb_open(&w->pkt, TD_COUNTER);
		pb_close(&w->pkt, e);
		descriptor_end(w, d);
	}
	packet_begin(w, ts_ns);
	e = pb_open(&w->pkt, PKT_TRACK_EVENT);
	pb_uint(&w->pkt, TE_TYPE, TYPE_COUNTER);
	pb_uint(&w->pkt, TE_TRACK_UUID, UUID_OUTSIDE(i));
	pb_double(&w->pkt, TE_DOUBLE_COUNTER_VALUE, value);
	pb_close(&w->pkt, e);
	packet_end(w, false);
}

/* A guest trace's track, described the first time, as a child of the VM's process. */
static __u64 guest_uuid(struct pftrace_writer *w, const struct trace_guest_event *ge)
{
	__u64 uuid = UUID_GUEST(ge->tgid, ge->track & 0xffffff);
	__u8 *d;

	for (size_t i = 0; i < w->nr_guest_uuids; i++) {
		if (w->guest_uuids[i] == uuid)
			return uuid;
	}
	if (array_reserve(w->guest_uuids, w->nr_guest_uuids, w->cap_guest_uuids, 8)) {
		w->err = -ENOMEM;
		return uuid;
	}
	w->guest_uuids[w->nr_guest_uuids++] = uuid;
	need_process(w, ge->tgid);
	d = descriptor_begin(w, uuid);
	pb_uint(&w->pkt, TD_PARENT_UUID, UUID_PROCESS(ge->tgid));
	pb_str(&w->pkt, TD_NAME, ge->track_name);
	pb_uint(&w->pkt, TD_SIBLING_RANK, (__u64)TRACE_GUEST_SORT(ge->track));
	descriptor_end(w, d);
	return uuid;
}

static void pftrace_guest_event(void *pw, const struct trace_guest_event *ge)
{
	struct pftrace_writer *w = pw;
	__u64 uuid;
	__u8 *e;
	int type = ge->ph == 'E' ? TYPE_SLICE_END : ge->ph == 'i' ? TYPE_INSTANT :
		   TYPE_SLICE_BEGIN;

	start(w);
	uuid = guest_uuid(w, ge);
	e = event_begin(w, ge->ts_ns, type, uuid, CAT_GUEST);
	if (type != TYPE_SLICE_END)
		pb_str(&w->pkt, TE_NAME, ge->name ? ge->name : "");
	event_end(w, e);
	if (ge->ph == 'X')
		slice_end(w, ge->ts_ns + ge->dur_ns, uuid);
}

static void pftrace_lost(void *pw, __u64 ts_ns, __u64 n, const char *what)
{
	struct pftrace_writer *w = pw;
	char name[128];
	__u8 *e;

	snprintf(name, sizeof(name), "lost %llu record%s%s%s%s", (unsigned long long)n,
		 n == 1 ? "" : "s", what ? " (" : "", what ? what : "", what ? ")" : "");
	e = global_instant(w, ts_ns, CAT_LOST, name);
	arg_uint(w, fixed_iid(w, ARG_LOST), DA_UINT, n);
	event_end(w, e);
}

static void pftrace_stuck(void *pw, __u64 ts_ns, const char *what)
{
	struct pftrace_writer *w = pw;

	event_end(w, global_instant(w, ts_ns, CAT_STUCK, what));
}

static int pftrace_close(void *pw)
{
	struct pftrace_writer *w = pw;
	int ret;

	if (!w)
		return 0;
	trace_tracks_finish(&w->tt);
	ret = w->err;
	if (!ret)
		ret = out_flush(w->f);
	trace_tracks_free(&w->tt);
	interned_free(&w->interned);
	for (size_t i = 0; i < w->nr_outside; i++)
		free(w->outside[i]);
	free(w->outside);
	free(w->guest_uuids);
	free(w);
	return ret;
}

const struct trace_writer_ops perfetto_proto_ops = {
	.name = "proto",
	.open = pftrace_open,
	.guest = pftrace_guest,
	.event = pftrace_event,
	.lost = pftrace_lost,
	.counter = pftrace_counter,
	.guest_event = pftrace_guest_event,
	.stuck = pftrace_stuck,
	.close = pftrace_close,
};
