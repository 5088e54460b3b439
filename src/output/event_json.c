// SPDX-License-Identifier: GPL-2.0
/* The per-event format of --json: one JSON object per line (docs: README, "stream"). */
#include <stdio.h>
#include <string.h>
#include "event_format.h"
#include "fmt_num.h"
#include "lost_causes.h"
#include "out_write.h"
#include "key_names.h"
#include "kvm_event_fields.h"
#include "reasons.h"
#include "text_escape.h"
#include "hlt_events.h"
#include "wake_rows.h"

/*
 * One JSON object per event, assembled in a line buffer and written with one fwrite: printf
 * with a dozen conversions per event cost more than everything else report does. The text is
 * exactly what the printf version wrote (fmt_num.h).
 */
#define JSON_LINE_MAX	2048	/* fixed fields < 700 bytes, names escaped < 400 each */
#define JSON_NAME_MAX	64	/* names longer than name_cache keeps go the slow way */

/* ,"name": for the names of kvm event fields (reasons.c's table) */
static char *put_name(char *p, const char *name)
{
	p = fmt_lit(p, ",\"");
	p = fmt_str(p, name);
	return fmt_lit(p, "\":");
}

static const char *type_name(__u16 type)
{
	switch (type) {
	case VMEXIT_EV_EXIT:
		return "exit";
	case VMEXIT_EV_USER_EXIT:
		return "user_exit";
	case VMEXIT_EV_TSC_OFFSET:
		return "tsc_offset";
	case VMEXIT_EV_KVM_EVENT:
		return "kvm_event";
	case VMEXIT_EV_WAKE:
		return "wake";
	case VMEXIT_EV_WAKE_POSTED:
		return "wake_posted";
	case VMEXIT_EV_WAKE_UNTIMED:
		return "wake_untimed";
	case VMEXIT_EV_HALT:
		return "halt";
	case VMEXIT_EV_HLT:
		return "hlt";
	default:
		return "unknown";
	}
}

/* Writes out the line so far when fewer than n bytes of buf are left; where to go on. */
static char *json_room(struct evout *o, char *buf, char *p, size_t n)
{
	if ((size_t)(buf + JSON_LINE_MAX - p) >= n)
		return p;
	fwrite(buf, 1, p - buf, o->f);
	return buf;
}

/* A kvm event has no ISA or reason: its name and its named fields (reasons.c's table). */
static char *json_kvm_event(struct evout *o, char *buf, char *p, const struct vmexit_event *ev)
{
	const struct kvm_event_field *kf;
	const char *name = kvm_event_name(ev->reason);
	size_t n;

	if (name) {
		p = fmt_lit(p, ",\"kvm_event\":\"");
		p = fmt_str(p, name);
		*p++ = '"';
	} else {	/* an id from a newer vmexit: keep what there is */
		p = json_u64(p, "kvm_event", ev->reason);
	}
	kf = kvm_event_fields(ev->reason, &n);
	for (size_t i = 0; i < n; i++) {
		/* The table's names and access strings are short: room for any one field. */
		p = json_room(o, buf, p, 256);
		p = put_name(p, kf[i].name);
		if (kf[i].fmt == KF_STR) {
			*p++ = '"';
			p = fmt_str(p, kvm_event_access(ev));
			*p++ = '"';
		} else if (kf[i].fmt == KF_HEX) {
			p = json_hexstr(p, kvm_event_field_value(&kf[i], ev));
		} else {
			p = fmt_u64(p, kvm_event_field_value(&kf[i], ev));
		}
	}
	p = json_room(o, buf, p, 256);
	if (!name) {
		p = json_hex(p, "rip", ev->rip);
		p = json_hex(p, "info1", ev->info1);
		p = json_hex(p, "info2", ev->info2);
		p = json_u64(p, "intr_info", ev->intr_info);
		p = json_u64(p, "error_code", ev->error_code);
	}
	return p;
}

/*
 * stream --wake: a delivery, as stat --wake's JSON rows name it (ts_ns: when it became
 * pending, latency_ns: to the entry that delivered it), with its own parts.
 */
static char *json_wake(char *p, const struct vmexit_event *ev)
{
	struct vmexit_event e = *ev;

	p = fmt_lit(p, ",\"source\":\"");
	p = fmt_str(p, wake_source_name(ev->reason));
	*p++ = '"';
	p = json_u64(p, "vector", ev->intr_info);
	p = fmt_lit(p, ",\"parts_ns\":{");
	for (int i = 0; i < NR_WAKE_PARTS; i++) {
		if (i)
			*p++ = ',';
		*p++ = '"';
		p = fmt_str(p, wake_part_name(i));
		p = fmt_u64(fmt_lit(p, "\":"), *wake_event_part(&e, i));
	}
	return fmt_lit(p, "}");
}

/* A halt (how it ended, valid) or a halted exit (its halts), then the parts: hlt_events.h. */
static char *json_hlt(char *p, const struct vmexit_event *ev)
{
	struct vmexit_event e = *ev;

	if (VMEXIT_EV_TYPE(ev->type) == VMEXIT_EV_HALT) {
		p = fmt_lit(p, ",\"end\":\"");
		p = fmt_str(p, halt_end_name(halt_end_of(ev)));
		/* fmt_lit() takes a literal's size: one literal each. */
		if (ev->error_code & VMEXIT_HALT_VALID)
			p = fmt_lit(p, "\",\"valid\":true");
		else
			p = fmt_lit(p, "\",\"valid\":false");
	} else {
		p = json_u64(p, "halts", ev->intr_info);
	}
	p = fmt_lit(p, ",\"parts_ns\":{");
	for (int i = 0; i < NR_HLT_PARTS; i++) {
		if (i)
			*p++ = ',';
		*p++ = '"';
		p = fmt_str(p, hlt_part_name(i));
		p = fmt_u64(fmt_lit(p, "\":"), *hlt_event_part(&e, i));
	}
	return fmt_lit(p, "}");
}

/* --keys: what the exit was about, as stat --by key's JSON rows say it. */
static char *json_key_fields(struct evout *o, char *buf, char *p, const struct key_note *k)
{
	p = json_room(o, buf, p, 256);
	p = fmt_lit(p, ",\"key_kind\":\"");
	p = fmt_str(p, key_kind_name(k->kind));
	p = json_u64(fmt_lit(p, "\""), "key", k->key);
	p = fmt_lit(p, ",\"key_dir\":\"");
	p = fmt_str(p, key_dir_name(k->dir));
	p = fmt_lit(p, "\",\"key_name\":");
	return json_esc(p, key_builtin_name(k));
}

static void json_line(struct evout *o, const struct vmexit_event *ev)
{
	char buf[JSON_LINE_MAX], rb[REASON_STR_MAX], *p = buf;
	const char *guest = name_cache_get_at_time(o->names, ev->tgid, ev->ts_ns), *rname;
	__u16 type = VMEXIT_EV_TYPE(ev->type);

	p = fmt_lit(p, "{\"type\":\"");
	p = fmt_str(p, type_name(type));
	p = fmt_lit(p, "\",\"ts_ns\":");
	p = fmt_u64(p, ev->ts_ns);
	p = fmt_sec9(json_key(p, "time"), ev->ts_ns);
	p = json_s64(p, "rel_ns", (__s64)(ev->ts_ns - o->first_ts));
	p = json_u64(p, "latency_ns", ev->latency_ns);
	p = json_u64(p, "pid", ev->tgid);
	p = fmt_lit(p, ",\"guest\":");
	if (guest && strnlen(guest, JSON_NAME_MAX) < JSON_NAME_MAX) {
		p = json_esc(p, guest);
	} else {
		p = json_room(o, buf, p, JSON_LINE_MAX);
		json_put_str(o->f, guest);
	}
	p = json_u64(p, "tid", ev->tid);
	p = json_s64(p, "vcpu", ev->vcpu);
	p = json_u64(p, "cpu", ev->cpu);
	if (type == VMEXIT_EV_KVM_EVENT) {
		p = json_kvm_event(o, buf, p, ev);
		goto out;
	}
	if (type == VMEXIT_EV_WAKE) {
		p = json_wake(p, ev);
		goto out;
	}
	/* Posted or untimed: no exit, so no parts; its source and vector as a delivery's. */
	if (type == VMEXIT_EV_WAKE_POSTED || type == VMEXIT_EV_WAKE_UNTIMED) {
		p = fmt_lit(p, ",\"source\":\"");
		p = fmt_str(p, wake_source_name(ev->reason));
		*p++ = '"';
		p = json_u64(p, "vector", ev->intr_info);
		goto out;
	}
	if (type == VMEXIT_EV_HALT || type == VMEXIT_EV_HLT) {
		p = json_hlt(p, ev);
		goto out;
	}
	p = fmt_lit(p, ",\"isa\":\"");
	p = fmt_str(p, isa_name(ev->isa));
	*p++ = '"';
	if (type == VMEXIT_EV_TSC_OFFSET) {
		p = json_hex(p, "prev_offset", ev->info1);
		p = json_hex(p, "next_offset", ev->info2);
		goto out;
	}
	p = json_u64(p, "reason", ev->reason);
	p = fmt_lit(p, ",\"reason_name\":");
	/* The table's name as is; reason_str() only for the ones it has to make up. */
	rname = reason_name(ev->isa, ev->reason);
	if (!rname)
		rname = reason_str(ev->isa, ev->reason, rb, sizeof(rb));
	if (strnlen(rname, JSON_NAME_MAX) < JSON_NAME_MAX) {
		p = json_esc(p, rname);
	} else {
		p = json_room(o, buf, p, JSON_LINE_MAX);
		json_put_str(o->f, rname);
	}
	/* An exit to the VMM has no guest RIP or exit information: 0x0 would read as data. */
	if (type == VMEXIT_EV_USER_EXIT) {
		p = json_s64(p, "errno", (__s64)ev->info1);
	} else {
		p = json_hex(p, "rip", ev->rip);
		p = json_hex(p, "info1", ev->info1);
		p = json_hex(p, "info2", ev->info2);
		p = json_u64(p, "intr_info", ev->intr_info);
		p = json_u64(p, "error_code", ev->error_code);
	}
	/* Never completed (tracing or its thread ended first): latency_ns is its age then. */
	if (ev->type & VMEXIT_EV_IN_FLIGHT)
		p = fmt_lit(p, ",\"in_flight\":true");
	if (o->split && (type == VMEXIT_EV_EXIT || type == VMEXIT_EV_USER_EXIT)) {
		p = json_u64(p, "oncpu_ns", ev->oncpu_ns);
		p = json_u64(p, "blocked_ns", ev->blocked_ns);
		p = json_u64(p, "runq_ns", ev->runq_ns);
	}
	if (o->keys)
		p = json_key_fields(o, buf, p, &ev->key);
	if (o->tsc_mhz > 0) {
		p = json_room(o, buf, p, FMT_F0_MAX + 32);
		p = fmt_f0(json_key(p, "latency_cycles"), ev->latency_ns * o->tsc_mhz / 1e3);
	}
out:
	p = fmt_lit(p, "}\n");
	fwrite(buf, 1, p - buf, o->f);
}

static int json_event(struct evout *o, const struct vmexit_event *ev)
{
	json_line(o, ev);
	return out_error(o->f);
}

static void json_stuck(struct evout *o, const struct inflight_exit *e, __u64 age_ns,
		       const char *guest, const char *rname)
{
	fprintf(o->f, "{\"stuck\":true,\"ts_ns\":%llu,\"time\":%.9f,\"age_ns\":%llu,"
		   "\"pid\":%u,\"guest\":", (unsigned long long)e->start_ns,
		e->start_ns / 1e9, (unsigned long long)age_ns, e->tgid);
	json_put_str(o->f, guest);
	fprintf(o->f, ",\"tid\":%u,\"vcpu\":%d,\"kind\":\"%s\",\"isa\":\"%s\","
		   "\"reason\":%u,\"reason_name\":", e->tid, e->vcpu,
		e->isa == VMEXIT_ISA_USER ? "user" : "kernel", isa_name(e->isa), e->reason);
	json_put_str(o->f, rname);
	fputs("}\n", o->f);
}

static void json_lost(struct evout *o, __u64 ts_ns, __u64 n, int cause)
{
	fprintf(o->f, "{\"lost\":%llu,\"cause\":\"%s\",\"what\":\"%s\",\"ts_ns\":%llu,"
		   "\"time\":%.9f}\n", (unsigned long long)n, lost_cause_key(cause),
		lost_cause_text(cause), (unsigned long long)ts_ns, ts_ns / 1e9);
}

/* As json_lost, of deliveries: "type":"wake" says which. */
static void json_wake_lost(struct evout *o, __u64 ts_ns, __u64 n, int cause)
{
	fprintf(o->f, "{\"lost\":%llu,\"type\":\"wake\",\"cause\":\"%s\",\"what\":\"%s\","
		   "\"ts_ns\":%llu,\"time\":%.9f}\n", (unsigned long long)n, wake_lost_key(cause),
		wake_lost_name(cause), (unsigned long long)ts_ns, ts_ns / 1e9);
}

const struct evout_ops evout_json = {
	.event = json_event, .stuck = json_stuck, .lost = json_lost, .flush = evout_flush_file,
	.wake_lost = json_wake_lost,
};
