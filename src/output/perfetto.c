// SPDX-License-Identifier: GPL-2.0
/*
 * Chrome trace-event JSON writer; perfetto.h says what the trace looks like and why.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "array_grow.h"
#include "fmt_num.h"
#include "halt_slices.h"
#include "out_write.h"
#include "perfetto.h"
#include "kvm_event_fields.h"
#include "reasons.h"
#include "text_escape.h"
#include "trace_tracks.h"
#include "trace_writer.h"
#include "wake_rows.h"

/*
 * Synthetic track ids start far above any real tid (the kernel caps pid_max at 2^22), so they
 * can't be mistaken for, or collide with, the threads of other processes in a merged trace.
 */
#define TRACK_TID_BASE		0x40000000u
/* The tracks of guest traces, below those: a VM has far fewer guest threads than 2^28. */
#define GUEST_TID_BASE		0x30000000u

struct guest_track_key {
	__u32 tgid;
	__u32 track;
};

struct perfetto_writer {
	FILE *f;
	bool first;		/* no event written yet: no separator needed */
	struct trace_tracks tt;
	__u64 base_ns;		/* subtracted from every timestamp */
	struct guest_track_key *guest_tracks;	/* announced so far */
	size_t nr_guest_tracks, cap_guest_tracks;
	__u64 flows;		/* wake flows drawn: the next one's id is flows + 1 */
	int err;		/* the first failed write's -errno, sticky */
};

/*
 * Keeps why a write failed, taken right after it (out_error()): by the close the stream may
 * have nothing left to flush, and its error flag alone says only EIO. Every record starts with
 * begin() and the events end with put_line(), so a failure is caught within a record of it.
 */
static void note_error(struct perfetto_writer *w)
{
	if (!w->err)
		w->err = out_error(w->f);
}

/* Every event starts on its own line: a trace cut short is then at worst one partial line. */
static char *sep(struct perfetto_writer *w, char *p)
{
	if (!w->first)
		*p++ = ',';
	*p++ = '\n';
	w->first = false;
	return p;
}

static void begin(struct perfetto_writer *w)
{
	char buf[2];

	fwrite(buf, 1, sep(w, buf) - buf, w->f);
	note_error(w);
}

/*
 * A timestamp relative to the time base, in microseconds with three decimals (exact, and what
 * both UIs expect); events before the base get negative times.
 */
static char *put_ts(struct perfetto_writer *w, char *p, __u64 ns)
{
	if (ns >= w->base_ns)
		return fmt_us3(p, ns - w->base_ns);
	*p++ = '-';
	return fmt_us3(p, w->base_ns - ns);
}

/* The same straight to the file, for the rare lines that are still printf'd. */
static void file_ts(struct perfetto_writer *w, __u64 ns)
{
	char buf[FMT_NUM_MAX];

	fwrite(buf, 1, put_ts(w, buf, ns) - buf, w->f);
}

static void put_thread_name(struct perfetto_writer *w, const struct trace_track *t, int which)
{
	char name[64];

	trace_track_name(t, which, name, sizeof(name));
	begin(w);
	fprintf(w->f, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%u,\"tid\":%u,"
		"\"args\":{\"name\":\"%s\"", t->tgid, t->tid[which], name);
	if (which == TT_KVM && t->has_tsc)
		fprintf(w->f, ",\"tsc_offset\":\"%lld\",\"tsc_offset_hex\":\"0x%llx\"",
			(long long)t->tsc, (unsigned long long)t->tsc);
	fputs("}}", w->f);
}

/* The synthetic tid of one of t's tracks, announcing the track the first time. */
static __u32 track_tid(struct perfetto_writer *w, struct trace_track *t, int which)
{
	bool added;
	__u32 tid = trace_track_id(&w->tt, t, which, &added);

	if (!added)
		return tid;
	put_thread_name(w, t, which);
	begin(w);
	fprintf(w->f, "{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":%u,\"tid\":%u,"
		"\"args\":{\"sort_index\":%lld}}", t->tgid, tid, trace_track_sort(t, which));
	return tid;
}

/* One VM's exit rates for one window. */
static void draw_rates(void *ctx, struct trace_track *vm, __u64 ts_ns, __u64 kvm, __u64 vmm)
{
	struct perfetto_writer *w = ctx;

	begin(w);
	fprintf(w->f, "{\"name\":\"exits/s\",\"ph\":\"C\",\"pid\":%u,\"ts\":", vm->tgid);
	file_ts(w, ts_ns);
	fprintf(w->f, ",\"args\":{\"guest exits\":%llu,\"exits to VMM\":%llu}}",
		(unsigned long long)kvm, (unsigned long long)vmm);
}

/* One reason's rate in one VM for one window: a counter of its own, as outside counters are. */
static void draw_reason_rate(void *ctx, struct trace_rate *r, __u64 ts_ns, __u64 per_s)
{
	struct perfetto_writer *w = ctx;
	char name[REASON_STR_MAX + 32];

	trace_rate_name(r, name, sizeof(name));
	begin(w);
	fputs("{\"name\":", w->f);
	json_put_str(w->f, name);
	fprintf(w->f, ",\"ph\":\"C\",\"pid\":%u,\"ts\":", r->k.tgid);
	file_ts(w, ts_ns);
	fprintf(w->f, ",\"args\":{\"value\":%llu}}", (unsigned long long)per_s);
}

struct perfetto_writer *perfetto_open(FILE *f)
{
	struct perfetto_writer *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->f = f;
	w->first = true;
	trace_tracks_init(&w->tt, TRACK_TID_BASE, draw_rates, draw_reason_rate, w);
	fputs("[", f);
	return w;
}

void perfetto_time_base(struct perfetto_writer *w, __u64 base_ns)
{
	w->base_ns = base_ns;
}

void perfetto_guest(struct perfetto_writer *w, __u32 tgid, const char *name)
{
	begin(w);
	fprintf(w->f, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%u,\"args\":{\"name\":",
		tgid);
	json_put_str(w->f, name ? name : "");
	fputs("}}", w->f);
}

/*
 * The events themselves are assembled in a line buffer and written with one fwrite: printf
 * with a dozen conversions per event cost more than everything else report does. The text is
 * exactly what the printf version wrote.
 */
#define PF_LINE_MAX	1024	/* fixed text < 600 bytes, the reason name escaped < 400 */
#define PF_NAME_MAX	64	/* names longer than reason_str() makes go the slow way */

static void put_line(struct perfetto_writer *w, const char *buf, const char *end)
{
	fwrite(buf, 1, end - buf, w->f);
	note_error(w);
}

/*
 * Another kvm tracepoint: an instant on the vCPU's kvm track. It happens inside an exit (a pio
 * during the IO exit that it belongs to), and an instant cannot break the nesting of the exit
 * slices there the way a slice of made-up length could.
 */
static void kvm_event_instant(struct perfetto_writer *w, struct trace_track *t,
			      const struct vmexit_event *ev)
{
	const struct kvm_event_field *kf;
	const char *name = kvm_event_name(ev->reason);
	char buf[PF_LINE_MAX], *p;
	__u32 tid;
	size_t n;

	tid = track_tid(w, t, TT_KVM);	/* may announce the track: before this line */
	p = sep(w, buf);
	if (name) {
		p = fmt_lit(p, "{\"name\":\"kvm_");
		p = fmt_str(p, name);
		*p++ = '"';
	} else {
		p = fmt_u64(fmt_lit(p, "{\"name\":\"kvm_event_"), ev->reason);
		*p++ = '"';
	}
	p = fmt_lit(p, ",\"cat\":\"kvm_event\",\"ph\":\"i\",\"s\":\"t\"");
	p = json_u64(p, "pid", ev->tgid);
	p = json_u64(p, "tid", tid);
	p = put_ts(w, json_key(p, "ts"), ev->ts_ns);
	p = fmt_lit(p, ",\"args\":{");
	kf = kvm_event_fields(ev->reason, &n);
	for (size_t i = 0; i < n; i++) {
		/* The table's names and access strings are short: room for any one field. */
		if (buf + sizeof(buf) - p < 256) {
			put_line(w, buf, p);
			p = buf;
		}
		*p++ = '"';
		p = fmt_lit(fmt_str(p, kf[i].name), "\":");
		if (kf[i].fmt == KF_STR) {
			*p++ = '"';
			p = fmt_str(p, kvm_event_access(ev));
			*p++ = '"';
		} else if (kf[i].fmt == KF_HEX) {
			p = json_hexstr(p, kvm_event_field_value(&kf[i], ev));
		} else {
			p = fmt_u64(p, kvm_event_field_value(&kf[i], ev));
		}
		*p++ = ',';
	}
	if (buf + sizeof(buf) - p < 256) {
		put_line(w, buf, p);
		p = buf;
	}
	p = fmt_u64(fmt_lit(p, "\"cpu\":"), ev->cpu);
	p = json_u64(p, "tid", ev->tid);
	p = json_s64(p, "vcpu", ev->vcpu);
	p = fmt_lit(p, "}}");
	put_line(w, buf, p);
}

static void tsc_offset_instant(struct perfetto_writer *w, struct trace_track *t,
			       const struct vmexit_event *ev)
{
	char buf[PF_LINE_MAX], *p;
	__u32 tid;

	t->has_tsc = true;
	t->tsc = ev->info2;
	tid = track_tid(w, t, TT_KVM);
	p = sep(w, buf);
	p = fmt_lit(p, "{\"name\":\"tsc_offset\",\"cat\":\"kvm_tsc_offset\",\"ph\":\"i\","
		    "\"s\":\"t\"");
	p = json_u64(p, "pid", ev->tgid);
	p = json_u64(p, "tid", tid);
	p = put_ts(w, json_key(p, "ts"), ev->ts_ns);
	p = fmt_s64(fmt_lit(p, ",\"args\":{\"previous\":\""), (__s64)ev->info1);
	p = fmt_s64(fmt_lit(p, "\",\"next\":\""), (__s64)ev->info2);
	*p++ = '"';
	p = json_hex(p, "previous_hex", ev->info1);
	p = json_hex(p, "next_hex", ev->info2);
	p = json_u64(p, "cpu", ev->cpu);
	p = json_u64(p, "tid", ev->tid);
	p = fmt_lit(p, "}}");
	put_line(w, buf, p);
}

/*
 * One end of a delivery's flow (record --wake): a zero-length slice on the vCPU's kvm track, at
 * pending (out) or at the entry that delivered it (in), bound to the flow by its id (Chrome's
 * flow events v2: bind_id with flow_out / flow_in on the slice itself, so neither end depends on
 * which slice happens to enclose it).
 */
static void wake_end(struct perfetto_writer *w, const struct vmexit_event *ev, __u32 tid,
		     __u64 id, bool in)
{
	char buf[PF_LINE_MAX], *p;
	struct vmexit_event e = *ev;

	/* fmt_lit takes a literal: one per end. */
	p = sep(w, buf);
	if (in)
		p = fmt_lit(p, "{\"name\":\"irq delivered ");
	else
		p = fmt_lit(p, "{\"name\":\"irq pending ");
	p = fmt_str(p, wake_source_name(ev->reason));
	p = fmt_lit(p, "\",\"cat\":\"wake\",\"ph\":\"X\"");
	p = json_u64(p, "pid", ev->tgid);
	p = json_u64(p, "tid", tid);
	p = put_ts(w, json_key(p, "ts"), in ? ev->ts_ns + ev->latency_ns : ev->ts_ns);
	p = fmt_lit(p, ",\"dur\":0");
	/*
	 * A number: Perfetto's JSON importer takes a number as it is and a string only as hex
	 * (MaybeExtractFlowIdentifier); ids count from 1, far below JSON's 2^53.
	 */
	p = json_u64(p, "bind_id", id);
	if (in)
		p = fmt_lit(p, ",\"flow_in\":true");
	else
		p = fmt_lit(p, ",\"flow_out\":true");
	p = fmt_lit(p, ",\"args\":{\"source\":\"");
	p = fmt_str(p, wake_source_name(ev->reason));
	*p++ = '"';
	p = json_u64(p, "vector", ev->intr_info);
	p = json_u64(p, "latency_ns", ev->latency_ns);
	for (int i = 0; in && i < NR_WAKE_PARTS; i++) {
		p = fmt_str(fmt_lit(p, ",\""), wake_part_name(i));
		p = fmt_u64(fmt_lit(p, "_ns\":"), *wake_event_part(&e, i));
	}
	p = json_u64(p, "tid", ev->tid);
	p = json_s64(p, "vcpu", ev->vcpu);
	p = fmt_lit(p, "}}");
	put_line(w, buf, p);
}

/* A delivery: a flow from pending to the entry, each end on the target vCPU's kvm track. */
static void wake_flow(struct perfetto_writer *w, struct trace_track *t,
		      const struct vmexit_event *ev)
{
	__u32 tid = track_tid(w, t, TT_KVM);
	__u64 id = ++w->flows;

	wake_end(w, ev, tid, id, false);
	wake_end(w, ev, tid, id, true);
}

/*
 * A halt (record --wake): its slice and its pieces' on the vCPU's kvm track, inside the exit
 * that halted (halt_slices.h), the halt first. The pieces have no arguments: their time is it.
 */
static void halt_slices(struct perfetto_writer *w, struct trace_track *t,
			const struct vmexit_event *ev)
{
	__u32 tid = track_tid(w, t, TT_KVM);
	char buf[PF_LINE_MAX], *p;
	struct halt_slices hs;

	halt_slices_of(ev, &hs);
	for (unsigned int i = 0; i < hs.n; i++) {
		p = fmt_lit(sep(w, buf), "{\"name\":\"");
		p = fmt_str(p, hs.s[i].name);
		p = fmt_lit(p, "\",\"cat\":\"" HALT_SLICE_CAT "\",\"ph\":\"X\"");
		p = json_u64(p, "pid", ev->tgid);
		p = json_u64(p, "tid", tid);
		p = put_ts(w, json_key(p, "ts"), hs.s[i].ts_ns);
		p = fmt_us3(json_key(p, "dur"), hs.s[i].dur_ns);
		if (i) {
			p = fmt_lit(p, "}");
			put_line(w, buf, p);
			continue;
		}
		p = fmt_lit(p, ",\"args\":{\"latency_ns\":");
		p = fmt_u64(p, ev->latency_ns);
		for (int k = 0; k < NR_HLT_PARTS; k++) {
			p = fmt_str(fmt_lit(p, ",\""), halt_slice_arg[k]);
			p = fmt_u64(fmt_lit(p, "\":"), hs.parts[k]);
		}
		/* fmt_lit() takes a literal's size: one literal each. */
		if (hs.valid)
			p = fmt_lit(p, ",\"valid\":true");
		else
			p = fmt_lit(p, ",\"valid\":false");
		p = json_u64(p, "tid", ev->tid);
		p = json_s64(p, "vcpu", ev->vcpu);
		p = fmt_lit(p, "}}");
		put_line(w, buf, p);
	}
}

void perfetto_event(struct perfetto_writer *w, const struct vmexit_event *ev,
		    const char *name)
{
	char rb[REASON_STR_MAX], buf[PF_LINE_MAX], *p;
	struct trace_track *t;
	__u32 tid;
	__u16 type = VMEXIT_EV_TYPE(ev->type);
	bool user = type == VMEXIT_EV_USER_EXIT;

	if (type != VMEXIT_EV_EXIT && !user && type != VMEXIT_EV_TSC_OFFSET &&
	    type != VMEXIT_EV_KVM_EVENT && type != VMEXIT_EV_WAKE && type != VMEXIT_EV_HALT)
		return;		/* a type this version doesn't know how to draw */
	if (type == VMEXIT_EV_EXIT || user)
		trace_tracks_count(&w->tt, ev, user);
	t = trace_tracks_of_event(&w->tt, ev);
	if (!t)
		return;
	if (type == VMEXIT_EV_WAKE) {
		wake_flow(w, t, ev);
		return;
	}
	if (type == VMEXIT_EV_HALT) {
		halt_slices(w, t, ev);
		return;
	}
	if (type == VMEXIT_EV_KVM_EVENT) {
		kvm_event_instant(w, t, ev);
		return;
	}
	if (type == VMEXIT_EV_TSC_OFFSET) {
		tsc_offset_instant(w, t, ev);
		return;
	}
	tid = track_tid(w, t, user ? TT_VMM : TT_KVM);
	/* The table's name as is; reason_str() only for the ones it has to make up. */
	if (!name)
		name = reason_name(ev->isa, ev->reason);
	if (!name)
		name = reason_str(ev->isa, ev->reason, rb, sizeof(rb));
	p = fmt_lit(sep(w, buf), "{\"name\":");
	if (strnlen(name, PF_NAME_MAX) < PF_NAME_MAX) {
		p = json_esc(p, name);
	} else {
		put_line(w, buf, p);
		json_put_str(w->f, name);
		p = buf;
	}
	p = fmt_lit(p, ",\"cat\":\"");
	p = user ? fmt_lit(p, "kvm_userspace_exit") : fmt_lit(p, "kvm_exit");
	p = fmt_lit(p, "\",\"ph\":\"X\"");
	p = json_u64(p, "pid", ev->tgid);
	p = json_u64(p, "tid", tid);
	p = put_ts(w, json_key(p, "ts"), ev->ts_ns);
	p = fmt_us3(json_key(p, "dur"), ev->latency_ns);
	p = fmt_u64(fmt_lit(p, ",\"args\":{\"reason\":"), ev->reason);
	p = fmt_lit(p, ",\"isa\":\"");
	p = fmt_str(p, isa_name(ev->isa));
	*p++ = '"';
	p = json_hex(p, "rip", ev->rip);
	p = json_hex(p, "info1", ev->info1);
	p = json_hex(p, "info2", ev->info2);
	p = json_hex(p, "intr_info", ev->intr_info);
	p = json_hex(p, "error_code", ev->error_code);
	p = json_u64(p, "latency_ns", ev->latency_ns);
	p = json_u64(p, "cpu", ev->cpu);
	p = json_u64(p, "tid", ev->tid);
	p = json_s64(p, "vcpu", ev->vcpu);
	if (user)
		p = json_s64(p, "errno", (__s64)ev->info1);
	/* Not ended: the slice stops where tracing (or its thread) did. */
	if (ev->type & VMEXIT_EV_IN_FLIGHT)
		p = fmt_lit(p, ",\"in_flight\":true");
	p = fmt_lit(p, "}}");
	put_line(w, buf, p);
}

void perfetto_lost(struct perfetto_writer *w, __u64 ts_ns, __u64 n, const char *what)
{
	char name[128];

	snprintf(name, sizeof(name), "lost %llu record%s%s%s%s", (unsigned long long)n,
		 n == 1 ? "" : "s", what ? " (" : "", what ? what : "", what ? ")" : "");
	begin(w);
	fputs("{\"name\":", w->f);
	json_put_str(w->f, name);
	fputs(",\"cat\":\"vmexit_lost\",\"ph\":\"i\",\"s\":\"g\",\"pid\":0,\"tid\":0,\"ts\":",
	      w->f);
	file_ts(w, ts_ns);
	fprintf(w->f, ",\"args\":{\"lost\":%llu}}", (unsigned long long)n);
}

void perfetto_counter(struct perfetto_writer *w, const char *name, __u64 ts_ns, double value)
{
	begin(w);
	fputs("{\"name\":", w->f);
	json_put_str(w->f, name);
	fputs(",\"ph\":\"C\",\"pid\":0,\"ts\":", w->f);
	file_ts(w, ts_ns);
	fputs(",\"args\":{\"value\":", w->f);
	fprintf(w->f, "%.17g}}", value);
}

/* Names a guest track the first time it is used. */
static void guest_track(struct perfetto_writer *w, const struct trace_guest_event *e)
{
	struct guest_track_key k = { e->tgid, e->track };

	for (size_t i = 0; i < w->nr_guest_tracks; i++) {
		if (w->guest_tracks[i].tgid == k.tgid && w->guest_tracks[i].track == k.track)
			return;
	}
	if (!array_reserve(w->guest_tracks, w->nr_guest_tracks, w->cap_guest_tracks, 8))
		w->guest_tracks[w->nr_guest_tracks++] = k;
	begin(w);
	fprintf(w->f, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%u,\"tid\":%u,"
		"\"args\":{\"name\":", e->tgid, GUEST_TID_BASE + e->track);
	json_put_str(w->f, e->track_name);
	fputs("}}", w->f);
	begin(w);
	fprintf(w->f, "{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":%u,\"tid\":%u,"
		"\"args\":{\"sort_index\":%lld}}", e->tgid, GUEST_TID_BASE + e->track,
		TRACE_GUEST_SORT(e->track));
}

void perfetto_guest_event(struct perfetto_writer *w, const struct trace_guest_event *e)
{
	guest_track(w, e);
	begin(w);
	fputs("{\"name\":", w->f);
	json_put_str(w->f, e->name ? e->name : "");
	fprintf(w->f, ",\"cat\":\"guest\",\"ph\":\"%c\",%s\"pid\":%u,\"tid\":%u,\"ts\":", e->ph,
		e->ph == 'i' ? "\"s\":\"t\"," : "", e->tgid, GUEST_TID_BASE + e->track);
	file_ts(w, e->ts_ns);
	if (e->ph == 'X') {
		char buf[FMT_NUM_MAX];

		fputs(",\"dur\":", w->f);
		fwrite(buf, 1, fmt_us3(buf, e->dur_ns) - buf, w->f);
	}
	fputc('}', w->f);
}

void perfetto_stuck(struct perfetto_writer *w, __u64 ts_ns, const char *what)
{
	begin(w);
	fputs("{\"name\":", w->f);
	json_put_str(w->f, what);
	fputs(",\"cat\":\"vmexit_stuck\",\"ph\":\"i\",\"s\":\"g\",\"pid\":0,\"tid\":0,\"ts\":",
	      w->f);
	file_ts(w, ts_ns);
	fputc('}', w->f);
}

int perfetto_close(struct perfetto_writer *w)
{
	struct trace_track_map_slot *s;
	int ret;

	if (!w)
		return 0;
	trace_tracks_finish(&w->tt);
	/* Re-announce tracks whose TSC offset is known: the last thread_name wins. */
	trace_tracks_for_each(s, &w->tt) {
		const struct trace_track *t = &s->val;

		if (t->has_tsc && t->tid[TT_KVM])
			put_thread_name(w, t, TT_KVM);
	}
	fputs("\n]\n", w->f);
	note_error(w);
	ret = w->err ? w->err : out_flush(w->f);
	trace_tracks_free(&w->tt);
	free(w->guest_tracks);
	free(w);
	return ret;
}

/* The same through the table of writers (trace_writer.h). */
/* The JSON format has no clock to declare: its times are shown as they are. */
static void *json_open(FILE *f, const char *clock)
{
	(void)clock;
	return perfetto_open(f);
}

static void json_guest(void *w, __u32 tgid, const char *name)
{
	perfetto_guest(w, tgid, name);
}

static void json_event(void *w, const struct vmexit_event *ev, const char *name)
{
	perfetto_event(w, ev, name);
}

static void json_lost(void *w, __u64 ts_ns, __u64 n, const char *what)
{
	perfetto_lost(w, ts_ns, n, what);
}

static void json_counter(void *w, const char *name, __u64 ts_ns, double value)
{
	perfetto_counter(w, name, ts_ns, value);
}

static void json_guest_event(void *w, const struct trace_guest_event *e)
{
	perfetto_guest_event(w, e);
}

static void json_stuck(void *w, __u64 ts_ns, const char *what)
{
	perfetto_stuck(w, ts_ns, what);
}

static int json_close(void *w)
{
	return perfetto_close(w);
}

const struct trace_writer_ops perfetto_json_ops = {
	.name = "json",
	.open = json_open,
	.guest = json_guest,
	.event = json_event,
	.lost = json_lost,
	.counter = json_counter,
	.guest_event = json_guest_event,
	.stuck = json_stuck,
	.close = json_close,
};
