// SPDX-License-Identifier: GPL-2.0
/*
 * Renders events with compiled rules (template_rules.h): picks the rule for each event, then
 * writes its literal spans and fields. Numbers go through fmt_num's printf-compatible layout,
 * so no text of a rules file ever reaches printf.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "durations.h"
#include "out_write.h"
#include "key_names.h"
#include "kvm_event_fields.h"
#include "reasons.h"
#include "template.h"
#include "template_rules.h"
#include "text_escape.h"
#include "hlt_events.h"
#include "wake_rows.h"

/* ------------------------------------------------------------------------------------------ */
/* Per-vCPU previous timestamps for %(reltsc), keyed by thread id (one thread per vCPU) */

DEFINE_HASHMAP(thread_ts, __u32, __u64)

void tmpl_env_release(struct tmpl_env *env)
{
	struct thread_ts *v = env->priv;

	if (v) {
		thread_ts_free(v);
		free(v);
	}
	env->priv = NULL;
}

/* ------------------------------------------------------------------------------------------ */
/* Rendering */

struct rctx {
	const struct vmexit_event *ev;	/* &evc */
	struct vmexit_event evc;	/* the event, its type without VMEXIT_EV_IN_FLIGHT */
	bool in_flight;
	struct tmpl_env *env;
	const __u8 *words;
	__s64 reltsc;
	__u32 cls;
};

struct out {
	char *buf;
	size_t lim;		/* bytes that may be stored (len - 1) */
	size_t pos;		/* bytes produced, stored or not */
};

static inline void put(struct out *o, const char *s, size_t n)
{
	if (o->pos < o->lim) {
		size_t room = o->lim - o->pos;

		memcpy(o->buf + o->pos, s, n < room ? n : room);
	}
	o->pos += n;
}

static inline void pad(struct out *o, char c, size_t n)
{
	if (o->pos < o->lim) {
		size_t room = o->lim - o->pos;

		memset(o->buf + o->pos, c, n < room ? n : room);
	}
	o->pos += n;
}

static __u64 tsc_of(const struct tmpl_env *env, __u64 ns)
{
	__u64 hz;

	/* !(> 0) also catches NaN; the cap keeps the double-to-integer conversion defined. */
	if (!(env->tsc_mhz > 0))
		return ns;
	if (env->tsc_mhz > 1e6)
		return ns * 1000000u;
	/* Integer Hz and 128-bit product: exact, no double rounding at large uptimes. */
	hz = (__u64)(env->tsc_mhz * 1e6 + 0.5);
	return (__u64)((unsigned __int128)ns * hz / 1000000000u);
}

/* n bytes of s that take cols columns, padded to the field's width on the side it asks for. */
static void emit_padded(struct out *o, const struct op *op, const char *s, size_t n, size_t cols)
{
	size_t fill = op->spec.width > cols ? op->spec.width - cols : 0;

	if (fill && !(op->spec.flags & FMT_MINUS))
		pad(o, ' ', fill);
	put(o, s, n);
	if (fill && (op->spec.flags & FMT_MINUS))
		pad(o, ' ', fill);
}

static void emit_str(struct out *o, const struct op *op, const char *s, size_t n)
{
	if (op->spec.prec >= 0 && n > (size_t)op->spec.prec)
		n = op->spec.prec;
	emit_padded(o, op, s, n, n);
}

/*
 * A guest name: escaped as in every text output (text_escape.h), in a user's --format too.
 * The formats are line-oriented (an event a line, and scripts read them so), so a newline in
 * a name would forge an event and an escape sequence would reach the terminal; whoever needs
 * a name's exact bytes has --json. Width and precision count display columns, as the tables
 * do: a name of printable ASCII prints as printf would print it.
 */
static void emit_name(struct out *o, const struct op *op, const char *s)
{
	char nb[TEXT_NAME_MAX];

	text_fit(nb, sizeof(nb), s, 0, op->spec.prec);
	emit_padded(o, op, nb, strlen(nb), (size_t)text_cols(nb));
}

/*
 * A number field: its sign and magnitude by the field's kind, then fmt_num's printf layout,
 * straight into the buffer while it has room for any number.
 */
static void emit_int(struct out *o, const struct op *op, const struct field_def *f, __u64 raw)
{
	char tmp[FMT_SPEC_MAX], *p, *end;
	__u8 conv = op->spec.conv;
	bool neg = false;
	__u64 mag = raw;

	if (f->kind == FK_S) {
		neg = (__s64)raw < 0;
		if (neg && (conv == 'd' || conv == 'f' || conv == 's'))
			mag = -raw;
		else if (f->bits < 64)	/* x/o/u of a negative s32: its 32-bit pattern */
			mag &= (1ull << f->bits) - 1;
	}
	if (conv == 's') {
		int ndig = fmt_utoa_rev(tmp + sizeof(tmp), mag / f->scale, 10, false);

		if (neg)
			tmp[sizeof(tmp) - ++ndig] = '-';
		emit_str(o, op, tmp + sizeof(tmp) - ndig, ndig);
		return;
	}
	p = o->pos < o->lim && o->lim - o->pos >= FMT_SPEC_MAX ? o->buf + o->pos : tmp;
	if (conv == 'f')
		end = fmt_spec_fixed(p, &op->spec, mag, neg, f->scale);
	else
		end = fmt_spec_int(p, &op->spec, mag / f->scale, neg);
	if (p == tmp)
		put(o, tmp, end - tmp);
	else
		o->pos += end - p;
}

static __u64 field_value(const struct op *op, const struct rctx *c)
{
	const struct vmexit_event *ev = c->ev;

	switch (op->field) {
	case F_TSC:		return tsc_of(c->env, ev->ts_ns);
	case F_RELTSC:		return c->reltsc;
	case F_EVENT:		return c->cls;
	case F_VCPU:		return (__s64)ev->vcpu;
	case F_PID:		return ev->tgid;
	case F_WORD:		return kvmtrace_word_value(c->words[op->word - 1], ev);
	case F_REASON:		return ev->reason;
	case F_ISA:		return ev->isa;
	case F_TID:		return ev->tid;
	case F_CPU:		return ev->cpu;
	case F_RIP:		return ev->rip;
	case F_INFO1:		return ev->info1;
	case F_INFO2:		return ev->info2;
	case F_INTR_INFO:	return ev->intr_info;
	case F_ERROR_CODE:
		/* A page fault's error code has bits above 31 (SVM NPF): the 64-bit copy. */
		if (ev->type == VMEXIT_EV_KVM_EVENT && ev->reason == VMEXIT_KVM_PAGE_FAULT)
			return ev->info2;
		return ev->error_code;
	case F_LATENCY_NS:
	case F_LATENCY_US:	return ev->latency_ns;
	case F_ONCPU_NS:	return ev->oncpu_ns;
	case F_BLOCKED_NS:	return ev->blocked_ns;
	case F_RUNQ_NS:		return ev->runq_ns;
	case F_TS_NS:
	case F_TIME:		return ev->ts_ns;
	case F_REL_NS:
	case F_RELTIME:		return ev->ts_ns - c->env->first_ts_ns;
	case F_WALLTIME:	return ev->ts_ns + c->env->real_offset_ns;
	case F_TYPE:		return ev->type;
	case F_IN_FLIGHT:	return c->in_flight;
	case F_KVM_EVENT:	return ev->type == VMEXIT_EV_KVM_EVENT ? ev->reason : 0;
	case F_KEY:		return ev->key.key;
	case F_KEY_KIND:	return ev->key.kind;
	case F_KEY_DIR:		return ev->key.dir;
	case F_WAKE_SOURCE:	return wake_event_type(ev->type) ? ev->reason : 0;
	case F_WAKE_PART: {
		struct vmexit_event e = *ev;

		return ev->type == VMEXIT_EV_WAKE ? *wake_event_part(&e, op->word) : 0;
	}
	case F_HLT_PART: {
		struct vmexit_event e = *ev;

		return ev->type == VMEXIT_EV_HALT || ev->type == VMEXIT_EV_HLT ?
		       *hlt_event_part(&e, op->word) : 0;
	}
	case F_HALT_END:	return ev->type == VMEXIT_EV_HALT ? halt_end_of(ev) : 0;
	case F_KVM: {
		const struct kvm_event_field *kf;

		if (ev->type != VMEXIT_EV_KVM_EVENT)
			return 0;
		kf = kvm_event_field_find(ev->reason, tmpl_fields[op->fidx].name);
		return kf ? kvm_event_field_value(kf, ev) : 0;
	}
	default:		return 0;
	}
}

static void render_rule(const struct rule *ru, const struct rctx *c, struct out *o)
{
	const struct vmexit_event *ev = c->ev;
	char tmp[REASON_STR_MAX];
	const char *s;
	int i;

	for (i = 0; i < ru->nops; i++) {
		const struct op *op = &ru->ops[i];
		const struct field_def *f;

		if (op->field == OP_LITERAL) {
			put(o, ru->lit + op->off, op->len);
			continue;
		}
		f = &tmpl_fields[op->fidx];
		switch (op->field) {
		case F_REASON_NAME:
			s = reason_name(ev->isa, ev->reason);
			if (!s)
				s = reason_str(ev->isa, ev->reason, tmp, sizeof(tmp));
			emit_str(o, op, s, strlen(s));
			continue;
		case F_REASON_LABEL:
			s = reason_label(ev->isa, ev->reason, tmp, sizeof(tmp));
			emit_str(o, op, s, strlen(s));
			continue;
		case F_LATENCY: {
			char d[48];
			size_t n;

			/* As the tables print it; a fixed unit keeps its suffix on a line. */
			fmt_duration(c->env->unit_ns, ev->latency_ns, d, sizeof(d) - 3);
			n = strlen(d);
			snprintf(d + n, sizeof(d) - n, "%s", fixed_unit_suffix(c->env->unit_ns));
			emit_str(o, op, d, strlen(d));
			continue;
		}
		case F_GUEST:
			s = c->env->guest_name ? c->env->guest_name(c->env->ctx, ev->tgid, ev->ts_ns)
						    : NULL;
			if (s)
				emit_name(o, op, s);
			else	/* no name: the tgid, as a number */
				emit_int(o, op, tmpl_pid_field, ev->tgid);
			continue;
		case F_ISA:
			if (op->spec.conv == 's' && ev->isa >= VMEXIT_ISA_VMX &&
			    ev->isa <= VMEXIT_ISA_ARM64) {
				s = isa_name(ev->isa);
				emit_str(o, op, s, strlen(s));
				continue;
			}
			break;
		case F_TYPE:
			if (op->spec.conv == 's' && ev->type >= VMEXIT_EV_EXIT &&
			    ev->type < NR_EV_TYPES) {
				s = tmpl_type_names[ev->type];
				emit_str(o, op, s, strlen(s));
				continue;
			}
			break;
		case F_IN_FLIGHT:
			/* A marker to end a line with: nothing, or the word after a blank. */
			if (op->spec.conv == 's') {
				s = c->in_flight ? " in_flight" : "";
				emit_str(o, op, s, strlen(s));
				continue;
			}
			break;
		case F_HALT_END:
			s = ev->type == VMEXIT_EV_HALT ? halt_end_name(halt_end_of(ev)) : NULL;
			if (op->spec.conv == 's' && s) {
				emit_str(o, op, s, strlen(s));
				continue;
			}
			break;
		case F_WAKE_SOURCE:
			s = wake_event_type(ev->type) ? wake_source_name(ev->reason) : NULL;
			if (op->spec.conv == 's' && s) {
				emit_str(o, op, s, strlen(s));
				continue;
			}
			break;
		case F_KVM_EVENT:
			s = ev->type == VMEXIT_EV_KVM_EVENT ? kvm_event_name(ev->reason) : NULL;
			if (op->spec.conv == 's' && s) {
				emit_str(o, op, s, strlen(s));
				continue;
			}
			break;
		case F_ACCESS:
			s = kvm_event_access(ev);
			emit_str(o, op, s, strlen(s));
			continue;
		case F_KEY_KIND:
		case F_KEY_DIR:
			if (op->spec.conv == 's') {
				s = op->field == F_KEY_KIND ? key_kind_name(ev->key.kind)
							    : key_dir_name(ev->key.dir);
				emit_str(o, op, s, strlen(s));
				continue;
			}
			break;
		case F_KEY_NAME:
			s = key_builtin_name(&ev->key);
			emit_str(o, op, s, strlen(s));
			continue;
		case F_KEY_LABEL: {
			char kb[96];

			s = key_str(&ev->key, key_builtin_name(&ev->key), kb, sizeof(kb));
			emit_str(o, op, s, strlen(s));
			continue;
		}
		}
		emit_int(o, op, f, field_value(op, c));
	}
}

/* The rule for ev (index), or -1; sets c->words to the %(1)..%(5) layout it was chosen by. */
static int match(const struct tmpl_rules *r, struct rctx *c)
{
	const struct vmexit_event *ev = c->ev;

	c->words = kvmtrace_generic_words;
	if ((ev->type == VMEXIT_EV_EXIT || ev->type == VMEXIT_EV_USER_EXIT) && ev->isa < NR_ISA) {
		if (ev->reason < DIRECT_REASONS) {
			if (r->direct[ev->isa][ev->reason])
				return r->direct[ev->isa][ev->reason] - 1;
		} else {
			struct reason_id id = { .isa = ev->isa, .reason = ev->reason };
			const struct big_sel *b = big_sels_find(&r->big, &id);

			if (b && b->rule)
				return b->rule - 1;
		}
	}
	if ((c->cls & 0xffff0000u) == KVMTRACE_CLASS_BASE && r->kvmtrace_class[c->cls & 0xff]) {
		c->words = kvmtrace_id_find(c->cls)->words;
		return r->kvmtrace_class[c->cls & 0xff] - 1;
	}
	if (ev->type == VMEXIT_EV_KVM_EVENT && ev->reason < VMEXIT_KVM_NR &&
	    r->kvm_rule[ev->reason])
		return r->kvm_rule[ev->reason] - 1;
	if (ev->type < ARRAY_SIZE(r->type_rule) && r->type_rule[ev->type])
		return r->type_rule[ev->type] - 1;
	return r->def ? r->def - 1 : -1;
}

/* Matches and advances the per-stream state once per event. */
static int prepare(struct tmpl_rules *r, struct tmpl_env *env, const struct vmexit_event *ev,
		   struct rctx *c)
{
	c->evc = *ev;
	c->evc.type = VMEXIT_EV_TYPE(ev->type);
	c->in_flight = ev->type & VMEXIT_EV_IN_FLIGHT;
	c->ev = ev = &c->evc;
	c->env = env;
	c->reltsc = 0;
	c->cls = kvmtrace_classify(ev);
	if (!env->first_ts_ns)
		env->first_ts_ns = ev->ts_ns;
	if (r->need_reltsc) {
		struct thread_ts *v = env->priv;
		__u64 *prev;
		bool added;

		if (!v)
			v = env->priv = calloc(1, sizeof(*v));
		/* Out of memory only costs %(reltsc) its value (0), not the line. */
		prev = v ? thread_ts_get(v, &ev->tid, &added) : NULL;
		if (prev) {
			if (!added)
				c->reltsc = tsc_of(env, ev->ts_ns) - tsc_of(env, *prev);
			*prev = ev->ts_ns;
		}
	}
	return match(r, c);
}

int tmpl_render(struct tmpl_rules *r, struct tmpl_env *env, const struct vmexit_event *ev,
		char *buf, size_t len)
{
	struct out o = { .buf = buf, .lim = len ? len - 1 : 0 };
	struct rctx c;
	int i = prepare(r, env, ev, &c);

	if (i >= 0)
		render_rule(&r->rules[i], &c, &o);
	if (len)
		buf[o.pos < o.lim ? o.pos : o.lim] = '\0';
	return o.pos > INT_MAX ? INT_MAX : (int)o.pos;
}

int tmpl_render_file(struct tmpl_rules *r, struct tmpl_env *env, const struct vmexit_event *ev,
		     FILE *f)
{
	char stack[2048], *buf = stack;
	struct out o = { .buf = stack, .lim = sizeof(stack) };
	struct rctx c;
	int i = prepare(r, env, ev, &c), ret;

	if (i < 0)
		return 0;
	render_rule(&r->rules[i], &c, &o);
	if (o.pos > sizeof(stack)) {
		/* Rare long line: render again into a fitting buffer (the state is not touched). */
		buf = malloc(o.pos);
		if (!buf)
			return -ENOMEM;
		o = (struct out){ .buf = buf, .lim = o.pos };
		render_rule(&r->rules[i], &c, &o);
	}
	ret = fwrite(buf, 1, o.pos, f) == o.pos ? (int)o.pos : out_error(f);
	if (buf != stack)
		free(buf);
	return ret;
}
