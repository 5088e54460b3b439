// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "event_output.h"
#include "out_write.h"
#include "fmt_num.h"
#include "lost_causes.h"
#include "reasons.h"
#include "template.h"
#include "text_escape.h"
#include "trace_writer.h"

bool lost_cause_drops_events(int cause)
{
	/* An entry without an exit is a vCPU's first run (or one in flight at attach time):
	 * nothing that happened while we traced is missing. A stack not kept (--stacks) drops
	 * no event either. */
	return cause >= 0 && cause < NR_LOST && cause != LOST_UNMATCHED_ENTRY &&
	       cause != LOST_STACK_COLLISION && cause != LOST_STACKS_FULL;
}

/* Each event is named by its own VMM: a pid's old VMM's late events keep the old name. */
static const char *guest_cb(void *ctx, __u32 tgid, __u64 ts_ns)
{
	return name_cache_get_at_time(ctx, tgid, ts_ns);
}

int evout_open(struct evout *o, const struct evout_opts *opts)
{
	char err[512];
	int ret = 0;

	memset(o, 0, sizeof(*o));
	o->mode = opts->mode;
	o->tsc_mhz = opts->tsc_mhz;
	o->split = opts->split;
	o->names = opts->names;
	o->f = stdout;
	switch (opts->mode) {
	case EVOUT_LINES:
		o->env = calloc(1, sizeof(*o->env));
		if (!o->env) {
			ret = -ENOMEM;
			snprintf(err, sizeof(err), "out of memory");
			break;
		}
		o->env->tsc_mhz = opts->tsc_mhz;
		o->env->guest_name = guest_cb;
		o->env->ctx = opts->names;
		o->env->real_offset_ns = opts->real_offset_ns;
		o->env->unit_ns = opts->unit_ns;
		if (opts->format_path) {
			ret = tmpl_rules_load(opts->format_path, &o->rules, err, sizeof(err));
		} else {
			ret = tmpl_rules_default(&o->rules, err, sizeof(err));
			o->header_due = true;
		}
		/* Every rules-file problem is a usage error, whatever errno the engine chose. */
		if (ret && ret != -ENOMEM)
			ret = -EINVAL;
		break;
	case EVOUT_PERFETTO:
		if (strcmp(opts->perfetto_path, "-")) {
			o->f = fopen(opts->perfetto_path, "we");
			if (!o->f) {
				ret = -errno;
				snprintf(err, sizeof(err), "cannot create %s: %s",
					 opts->perfetto_path, strerror(errno));
				break;
			}
			o->own_file = true;
		}
		o->tw = trace_writer_for(opts->perfetto_format, opts->perfetto_path);
		o->pw = o->tw->open(o->f);
		if (!o->pw) {
			ret = -ENOMEM;
			snprintf(err, sizeof(err), "out of memory");
		}
		break;
	case EVOUT_JSON:
		break;
	}
	if (ret) {
		fprintf(stderr, "vmexit: %s\n", err);
		evout_close(o);
	}
	return ret;
}

/* The built-in line's columns, and which clock its absolute time is: once, before its first
 * line (the output may be another file than at open). */
static void lines_header(struct evout *o)
{
	if (!o->header_due)
		return;
	o->header_due = false;
	fprintf(o->f, "#%12s %17s %-16s %4s %-22s %10s\n", "REL_TIME(s)",
		o->env->real_offset_ns ? "CLOCK_REALTIME(s)" : "CLOCK_MONOTONIC(s)", "GUEST",
		"vCPU", "REASON", "LATENCY");
}

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

static void json_event(struct evout *o, const struct vmexit_event *ev)
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
	if (o->tsc_mhz > 0) {
		p = json_room(o, buf, p, FMT_F0_MAX + 32);
		p = fmt_f0(json_key(p, "latency_cycles"), ev->latency_ns * o->tsc_mhz / 1e3);
	}
out:
	p = fmt_lit(p, "}\n");
	fwrite(buf, 1, p - buf, o->f);
}

int evout_event(struct evout *o, const struct vmexit_event *ev)
{
	int ret;

	if (o->err)
		return o->err;
	if (!o->first_ts)
		o->first_ts = ev->ts_ns;
	o->events++;
	switch (o->mode) {
	case EVOUT_LINES:
		lines_header(o);
		ret = tmpl_render_file(o->rules, o->env, ev, o->f);
		if (ret < 0)
			o->err = ret;
		break;
	case EVOUT_JSON:
		json_event(o, ev);
		o->err = out_error(o->f);
		break;
	case EVOUT_PERFETTO:
		o->tw->event(o->pw, ev, NULL);
		break;
	}
	return o->err;
}

void evout_guest(struct evout *o, __u32 tgid, __u64 start, const char *name)
{
	(void)start;	/* a trace's process is its pid: the name it shows is the latest */
	if (o->mode == EVOUT_PERFETTO && o->pw)
		o->tw->guest(o->pw, tgid, name);
}

void evout_stuck(struct evout *o, const struct stuck_exit *e)
{
	char rb[REASON_STR_MAX], line[256], nb[TEXT_NAME_MAX];
	const char *guest = name_cache_get_at_time(o->names, e->tgid, e->start_ns);
	const char *rname = reason_name(e->isa, e->reason);

	if (o->err)
		return;
	if (!rname)
		rname = reason_str(e->isa, e->reason, rb, sizeof(rb));
	switch (o->mode) {
	case EVOUT_LINES:
		lines_header(o);
		/* The names and the clock of the lines around it. */
		fprintf(o->f, "# STUCK %s pid %u tid %u vcpu %d %s in flight for %.6f s since %.6f\n",
			text_esc(nb, guest), e->tgid, e->tid, e->vcpu,
			reason_label(e->isa, e->reason, rb, sizeof(rb)), e->age_ns / 1e9,
			(e->start_ns + o->env->real_offset_ns) / 1e9);
		break;
	case EVOUT_JSON:
		fprintf(o->f, "{\"stuck\":true,\"ts_ns\":%llu,\"time\":%.9f,\"age_ns\":%llu,"
			   "\"pid\":%u,\"guest\":", (unsigned long long)e->start_ns,
			e->start_ns / 1e9, (unsigned long long)e->age_ns, e->tgid);
		json_put_str(o->f, guest);
		fprintf(o->f, ",\"tid\":%u,\"vcpu\":%d,\"kind\":\"%s\",\"isa\":\"%s\","
			   "\"reason\":%u,\"reason_name\":", e->tid, e->vcpu,
			e->isa == VMEXIT_ISA_USER ? "user" : "kernel", isa_name(e->isa), e->reason);
		json_put_str(o->f, rname);
		fputs("}\n", o->f);
		break;
	case EVOUT_PERFETTO:
		snprintf(line, sizeof(line), "stuck: %s of %s (tid %u) in flight for %.6f s", rname,
			 guest, e->tid, e->age_ns / 1e9);
		o->tw->stuck(o->pw, e->start_ns + e->age_ns, line);
		break;
	}
	if (!o->err)
		o->err = out_error(o->f);
}

void evout_lost(struct evout *o, __u64 ts_ns, const __u64 delta[NR_LOST])
{
	for (int i = 0; i < NR_LOST; i++) {
		if (!delta[i])
			continue;
		o->lost[i] += delta[i];
		if (!lost_cause_drops_events(i))
			continue;
		switch (o->mode) {
		case EVOUT_LINES:
			lines_header(o);
			fprintf(o->f, "# LOST %llu records (%s) at %.6f\n",
				(unsigned long long)delta[i], lost_cause_text(i),
				(ts_ns + o->env->real_offset_ns) / 1e9);
			break;
		case EVOUT_JSON:
			fprintf(o->f, "{\"lost\":%llu,\"cause\":\"%s\",\"what\":\"%s\","
				   "\"ts_ns\":%llu,\"time\":%.9f}\n",
				(unsigned long long)delta[i], lost_cause_key(i), lost_cause_text(i),
				(unsigned long long)ts_ns, ts_ns / 1e9);
			break;
		case EVOUT_PERFETTO:
			o->tw->lost(o->pw, ts_ns, delta[i], lost_cause_text(i));
			break;
		}
	}
}

void evout_counter(struct evout *o, const char *name, __u64 ts_ns, double value)
{
	if (o->mode == EVOUT_PERFETTO && o->pw && !o->err)
		o->tw->counter(o->pw, name, ts_ns, value);
}

void evout_flush(struct evout *o)
{
	if (o->mode != EVOUT_PERFETTO && fflush(o->f) && !o->err)
		o->err = -errno;
}

int evout_close(struct evout *o)
{
	int ret;

	if (o->pw) {
		ret = o->tw->close(o->pw);
		if (ret && !o->err)
			o->err = ret;
		o->pw = NULL;
	}
	if (o->f && fflush(o->f) && !o->err)
		o->err = -errno;
	if (o->own_file && fclose(o->f) && !o->err)
		o->err = -errno;
	o->f = NULL;
	o->own_file = false;
	if (o->rules)
		tmpl_rules_free(o->rules);
	o->rules = NULL;
	if (o->env) {
		tmpl_env_release(o->env);
		free(o->env);
		o->env = NULL;
	}
	return o->err;
}

void evout_summary(FILE *f, const char *tail, __u64 events, const __u64 lost[NR_LOST])
{
	__u64 dropped = 0;
	bool first = true;

	for (int i = 0; i < NR_LOST; i++) {
		if (lost_cause_drops_events(i))
			dropped += lost[i];
	}
	fprintf(f, "vmexit: %llu events, %llu lost", (unsigned long long)events,
		(unsigned long long)dropped);
	for (int i = 0; i < NR_LOST; i++) {
		if (!lost[i] || !lost_cause_drops_events(i))
			continue;
		fprintf(f, "%s%s %llu", first ? " (" : ", ", lost_cause_text(i),
			(unsigned long long)lost[i]);
		first = false;
	}
	fprintf(f, "%s%s%s\n", first ? "" : ")", tail ? "; " : "", tail ? tail : "");
}
