// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "event_output.h"
#include "lost_causes.h"
#include "perfetto.h"
#include "reasons.h"
#include "template.h"
#include "text_escape.h"

bool lost_cause_drops_events(int cause)
{
	/* An entry without an exit is a vCPU's first run (or one in flight at attach time):
	 * nothing that happened while we traced is missing. */
	return cause >= 0 && cause < NR_LOST && cause != LOST_UNMATCHED_ENTRY;
}

static const char *guest_cb(void *ctx, __u32 tgid)
{
	return vm_names_get(ctx, tgid);
}

int evout_open(struct evout *o, const struct evout_opts *opts)
{
	char err[512];
	int ret = 0;

	memset(o, 0, sizeof(*o));
	o->mode = opts->mode;
	o->tsc_mhz = opts->tsc_mhz;
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
		if (opts->format_path)
			ret = tmpl_rules_load(opts->format_path, &o->rules, err, sizeof(err));
		else
			ret = tmpl_rules_default(&o->rules, err, sizeof(err));
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
		o->pw = perfetto_open(o->f);
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

static void put_hex(FILE *f, const char *key, __u64 v)
{
	/* 64-bit addresses and qualifications as strings: JSON numbers are doubles. */
	fprintf(f, ",\"%s\":\"0x%llx\"", key, (unsigned long long)v);
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

/* A kvm event has no ISA or reason: its name and its named fields (reasons.c's table). */
static void json_kvm_event(FILE *f, const struct vmexit_event *ev)
{
	const struct kvm_event_field *kf;
	const char *name = kvm_event_name(ev->reason);
	size_t n;

	if (name)
		fprintf(f, ",\"kvm_event\":\"%s\"", name);
	else	/* an id from a newer vmexit: keep what there is */
		fprintf(f, ",\"kvm_event\":%u", ev->reason);
	kf = kvm_event_fields(ev->reason, &n);
	for (size_t i = 0; i < n; i++) {
		if (kf[i].fmt == KF_STR)
			fprintf(f, ",\"%s\":\"%s\"", kf[i].name, kvm_event_access(ev));
		else if (kf[i].fmt == KF_HEX)
			put_hex(f, kf[i].name, kvm_event_field_value(&kf[i], ev));
		else
			fprintf(f, ",\"%s\":%llu", kf[i].name,
				(unsigned long long)kvm_event_field_value(&kf[i], ev));
	}
	if (!name) {
		put_hex(f, "rip", ev->rip);
		put_hex(f, "info1", ev->info1);
		put_hex(f, "info2", ev->info2);
		fprintf(f, ",\"intr_info\":%u,\"error_code\":%u", ev->intr_info, ev->error_code);
	}
	fputs("}\n", f);
}

static void json_event(struct evout *o, const struct vmexit_event *ev)
{
	char rb[REASON_STR_MAX];
	FILE *f = o->f;

	fprintf(f, "{\"type\":\"%s\",\"ts_ns\":%llu,\"time\":%.9f,\"rel_ns\":%lld,"
		   "\"latency_ns\":%llu,\"pid\":%u,\"guest\":", type_name(ev->type),
		(unsigned long long)ev->ts_ns, ev->ts_ns / 1e9,
		(long long)(ev->ts_ns - o->first_ts), (unsigned long long)ev->latency_ns,
		ev->tgid);
	json_put_str(f, vm_names_get(o->names, ev->tgid));
	fprintf(f, ",\"tid\":%u,\"vcpu\":%d,\"cpu\":%u", ev->tid, ev->vcpu, ev->cpu);
	if (ev->type == VMEXIT_EV_KVM_EVENT) {
		json_kvm_event(f, ev);
		return;
	}
	fprintf(f, ",\"isa\":\"%s\"", isa_name(ev->isa));
	if (ev->type == VMEXIT_EV_TSC_OFFSET) {
		put_hex(f, "prev_offset", ev->info1);
		put_hex(f, "next_offset", ev->info2);
		fputs("}\n", f);
		return;
	}
	fprintf(f, ",\"reason\":%u,\"reason_name\":", ev->reason);
	json_put_str(f, reason_str(ev->isa, ev->reason, rb, sizeof(rb)));
	put_hex(f, "rip", ev->rip);
	put_hex(f, "info1", ev->info1);
	put_hex(f, "info2", ev->info2);
	fprintf(f, ",\"intr_info\":%u,\"error_code\":%u", ev->intr_info, ev->error_code);
	if (ev->type == VMEXIT_EV_USER_EXIT)
		fprintf(f, ",\"errno\":%lld", (long long)ev->info1);
	if (o->tsc_mhz > 0)
		fprintf(f, ",\"latency_cycles\":%.0f", ev->latency_ns * o->tsc_mhz / 1e3);
	fputs("}\n", f);
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
		ret = tmpl_render_file(o->rules, o->env, ev, o->f);
		if (ret < 0)
			o->err = ret;
		break;
	case EVOUT_JSON:
		json_event(o, ev);
		if (ferror(o->f))
			o->err = -EIO;
		break;
	case EVOUT_PERFETTO:
		perfetto_event(o->pw, ev, NULL);
		break;
	}
	return o->err;
}

void evout_guest(struct evout *o, __u32 tgid, const char *name)
{
	if (o->mode == EVOUT_PERFETTO && o->pw)
		perfetto_guest(o->pw, tgid, name);
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
			fprintf(o->f, "# LOST %llu records (%s) at %.6f\n",
				(unsigned long long)delta[i], lost_cause_text(i), ts_ns / 1e9);
			break;
		case EVOUT_JSON:
			fprintf(o->f, "{\"lost\":%llu,\"cause\":\"%s\",\"what\":\"%s\","
				   "\"ts_ns\":%llu,\"time\":%.9f}\n",
				(unsigned long long)delta[i], lost_cause_key(i), lost_cause_text(i),
				(unsigned long long)ts_ns, ts_ns / 1e9);
			break;
		case EVOUT_PERFETTO:
			perfetto_lost(o->pw, ts_ns, delta[i], lost_cause_text(i));
			break;
		}
	}
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
		ret = perfetto_close(o->pw);
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
