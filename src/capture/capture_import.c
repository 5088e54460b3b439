// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "array_grow.h"
#include "capture_import.h"
#include "hashmap.h"
#include "key_rules.h"
#include "proc_names.h"
#include "reasons.h"
#include "thread_group.h"

struct thread_id {
	__u32 tgid;
	__u32 tid;
};

struct thread_run {
	__s32 vcpu;			/* the last kvm_exit's vcpu_id, else from the thread name */
	bool named;			/* vcpu looked up from the thread name once */
	bool grouped;			/* no_tgid: its process looked up in /proc once */
	__u32 group;			/* that process, 0 if not found */
	bool in_exit, in_user_exit;
	struct vmexit_event exit;	/* the kvm_exit in flight, its key in exit.key */
	struct vmexit_event user_exit;	/* the kvm_userspace_exit in flight, its key too */
	/*
	 * Keys, as bpf/keys.bpf.h gives them live (include/key_rules.h): the last key event of
	 * this KVM_RUN, and an IO exit to the VMM that has ended and waits for the next key event
	 * (an IN's data is traced in the next KVM_RUN, with its port).
	 */
	struct key_note pend_key;
	bool late;
	struct vmexit_event late_exit;
};

DEFINE_HASHMAP(thread_runs, struct thread_id, struct thread_run)

struct capture_import {
	const char *path, *kind;
	bool no_tgid;
	struct thread_runs threads;
	struct vmexit_event *q;		/* events ready, from q[head] to q[nr - 1] */
	size_t head, nr, cap;
	__u64 lost[NR_LOST];		/* not yet handed out as a lost item */
	__u64 lost_ts;
	bool lost_due;
	__u64 last_ts;
	/* What the capture held, for the notes and for the completions it can make. */
	bool seen_kvm, seen_exit, seen_entry, seen_user_exit, seen_run;
	__u32 threads_grouped, threads_alone;	/* no_tgid: found in /proc or not */
};

/*
 * The kvm events' fields in their vmexit_event slots (include/vmexit.h's layout), by the
 * tracepoint's field names; "a|b": the newer name, then the older. kvm_cpuid packs pairs and
 * is done by hand.
 */
struct tp_slots {
	const char *info1, *info2, *rip, *intr_info, *error_code, *vcpu;
};

static const struct tp_slots tp_slots[VMEXIT_KVM_NR] = {
	[VMEXIT_KVM_PIO] = { "port", "val", "count", "rw", "size", NULL },
	[VMEXIT_KVM_MMIO] = { "gpa", "val", NULL, "type", "len", NULL },
	[VMEXIT_KVM_MSR] = { "ecx", "data", NULL, "write", "exception", NULL },
	[VMEXIT_KVM_CPUID] = { "function", NULL, NULL, "index", NULL, NULL },
	/* Linux 5.19 renamed irq to vector and added soft and reinjected. */
	[VMEXIT_KVM_INJ_VIRQ] = { "vector|irq", NULL, NULL, "soft", "reinjected", NULL },
	/* error_code is 64 bits in info2, its low half in error_code; vcpu_id and guest_rip
	 * since Linux 6.1. */
	[VMEXIT_KVM_PAGE_FAULT] = { "fault_address", "error_code", "guest_rip", NULL, "error_code",
				    "vcpu_id" },
	[VMEXIT_KVM_MSI_SET_IRQ] = { "address", "data", NULL, NULL, NULL, NULL },
	[VMEXIT_KVM_APIC_ACCEPT_IRQ] = { "apicid", "vec", NULL, "dm", "tm", NULL },
	[VMEXIT_KVM_HALT_POLL_NS] = { "new", "old", NULL, "grow", NULL, "vcpu_id" },
};

/* The field named by spec ("a|b": the first the record has), 0 when none. */
static __u64 field_or_zero(const struct tp_record *r, const char *spec)
{
	char name[32];
	__u64 v;

	while (spec && *spec) {
		size_t len = strcspn(spec, "|");

		if (len < sizeof(name)) {
			memcpy(name, spec, len);
			name[len] = 0;
			if (r->field(r->ctx, name, &v))
				return v;
		}
		spec += len + (spec[len] == '|');
	}
	return 0;
}

static bool has_field(const struct tp_record *r, const char *name)
{
	__u64 v;

	return r->field(r->ctx, name, &v);
}

struct capture_import *capture_import_new(const char *path, const char *kind, bool no_tgid)
{
	struct capture_import *ci = calloc(1, sizeof(*ci));

	if (!ci)
		return NULL;
	ci->path = path;
	ci->kind = kind;
	ci->no_tgid = no_tgid;
	return ci;
}

static int push(struct capture_import *ci, const struct vmexit_event *ev)
{
	if (ci->head == ci->nr)
		ci->head = ci->nr = 0;
	if (array_reserve(ci->q, ci->nr, ci->cap, 64))
		return -ENOMEM;
	ci->q[ci->nr++] = *ev;
	return 0;
}

static void lose(struct capture_import *ci, enum vmexit_lost cause, __u64 ts)
{
	ci->lost[cause]++;
	ci->lost_ts = ts;
	ci->lost_due = true;
}

/* An exit whose end the capture cannot show (no kvm_entry / KVM_RUN in it): counted only. */
static int send_open(struct capture_import *ci, struct vmexit_event *ev, __u64 now)
{
	ev->type |= VMEXIT_EV_IN_FLIGHT;
	ev->latency_ns = now > ev->ts_ns ? now - ev->ts_ns : 0;
	return push(ci, ev);
}

static int send_done(struct capture_import *ci, struct vmexit_event *ev, __u64 now)
{
	ev->latency_ns = now > ev->ts_ns ? now - ev->ts_ns : 0;
	return push(ci, ev);
}

static int settle(struct capture_import *ci, struct thread_run *t);

static void event_base(struct vmexit_event *ev, const struct tp_record *r, __u32 tgid,
		       __s32 vcpu)
{
	memset(ev, 0, sizeof(*ev));
	ev->ts_ns = r->ts_ns;
	ev->tgid = tgid;
	ev->tid = r->tid;
	ev->cpu = r->cpu;
	ev->vcpu = vcpu;
}

/*
 * A new exit of the thread, whose last one (*ev, *open) may not have ended: lost, as the
 * kernel side counts it, once the capture is known to hold what ends exits (ends_seen); else
 * the capture cannot end any, and the old one is sent, counted without latency. Then *ev is
 * the new one, of the given type.
 */
static int exit_begin(struct capture_import *ci, struct vmexit_event *ev, bool *open,
		      bool ends_seen, enum vmexit_lost cause, const struct tp_record *r, __u32 tgid,
		      __s32 vcpu, __u16 type)
{
	int err = 0;

	if (*open) {
		if (ends_seen)
			lose(ci, cause, r->ts_ns);
		else
			err = send_open(ci, ev, ev->ts_ns);
	}
	event_base(ev, r, tgid, vcpu);
	ev->type = type;
	*open = true;
	return err;
}

/* kvm_exit: x86 (exit_reason, isa...) or arm64 (ret, esr_ec, vcpu_pc). */
static int on_kvm_exit(struct capture_import *ci, struct thread_run *t, const struct tp_record *r,
		   __u32 tgid)
{
	struct vmexit_event *ev = &t->exit;
	__u64 v;
	int err;

	ci->seen_exit = true;
	/* vcpu_id joined kvm_exit in Linux 5.4. */
	if (r->field(r->ctx, "vcpu_id", &v))
		t->vcpu = (__s32)v;
	err = settle(ci, t);
	if (!err)
		err = exit_begin(ci, ev, &t->in_exit, ci->seen_entry, LOST_OVERWRITTEN_EXIT, r,
				 tgid, t->vcpu, VMEXIT_EV_EXIT);
	if (has_field(r, "exit_reason")) {
		ev->isa = (__u16)field_or_zero(r, "isa");
		ev->reason = (__u32)field_or_zero(r, "exit_reason");
		ev->rip = field_or_zero(r, "guest_rip");
		ev->info1 = field_or_zero(r, "info1");
		ev->info2 = field_or_zero(r, "info2");
		ev->intr_info = (__u32)field_or_zero(r, "intr_info");
		ev->error_code = (__u32)field_or_zero(r, "error_code");
		if (key_exit_vector(ev->isa, ev->reason, ev->intr_info, &ev->key.key))
			ev->key.kind = KEY_VECTOR;
	} else {
		ev->isa = VMEXIT_ISA_ARM64;
		ev->reason = vmexit_arm64_reason((__u32)field_or_zero(r, "ret"),
						 (__u32)field_or_zero(r, "esr_ec"));
		ev->rip = field_or_zero(r, "vcpu_pc");
	}
	return err;
}

static int on_entry(struct capture_import *ci, struct thread_run *t, const struct tp_record *r)
{
	ci->seen_entry = true;
	if (!t->in_exit) {
		lose(ci, LOST_UNMATCHED_ENTRY, r->ts_ns);
		return 0;
	}
	t->in_exit = false;
	return send_done(ci, &t->exit, r->ts_ns);
}

static int on_user_exit(struct capture_import *ci, struct thread_run *t,
			const struct tp_record *r, __u32 tgid)
{
	struct vmexit_event *ev = &t->user_exit;
	__s32 err = (__s32)field_or_zero(r, "errno");
	int ret;

	ci->seen_user_exit = true;
	ret = settle(ci, t);
	if (!ret)
		ret = exit_begin(ci, ev, &t->in_user_exit, ci->seen_run, LOST_UNMATCHED_RUN, r,
				 tgid, t->vcpu, VMEXIT_EV_USER_EXIT);
	ev->isa = VMEXIT_ISA_USER;
	ev->reason = (__u32)field_or_zero(r, "reason");
	if (err < 0)
		ev->reason = VMEXIT_UREASON_ERRNO | (__u32)-err;
	ev->info1 = (__u64)(__s64)err;
	/* The key of the guest exit that led to it, else what this KVM_RUN traced last. */
	if (t->in_exit && t->exit.key.kind != KEY_NONE)
		ev->key = t->exit.key;
	else if (key_fits_user_exit(t->pend_key.kind, ev->reason))
		ev->key = t->pend_key;
	t->pend_key.kind = KEY_NONE;
	return ret;
}

/* kvm_fpu with load set: x86 loads the guest FPU at the start of every KVM_RUN. */
static int on_fpu(struct capture_import *ci, struct thread_run *t, const struct tp_record *r)
{
	if (!field_or_zero(r, "load"))
		return 0;
	ci->seen_run = true;
	/* A new KVM_RUN: what the last one traced describes no exit to come. */
	t->pend_key.kind = KEY_NONE;
	if (!t->in_user_exit)
		return 0;
	t->in_user_exit = false;
	if (t->user_exit.reason == KEY_KVM_EXIT_IO) {
		/* Its IN's port comes next, if it was one: it waits (settle). */
		t->user_exit.latency_ns = r->ts_ns > t->user_exit.ts_ns ?
					  r->ts_ns - t->user_exit.ts_ns : 0;
		t->late_exit = t->user_exit;
		t->late = true;
		return 0;
	}
	return send_done(ci, &t->user_exit, r->ts_ns);
}

/* The IO exit to the VMM that waited for its IN's completion, sent with the key it has. */
static int settle(struct capture_import *ci, struct thread_run *t)
{
	if (!t->late)
		return 0;
	t->late = false;
	return push(ci, &t->late_exit);
}

/*
 * A kvm event that says what the thread is doing (key_rules.h, as bpf/vmexit.bpf.c's key
 * programs read them). A capture has no kvm_pio data pointer: an IN seen while an IO exit
 * waits is taken as its completion, which it is wherever kvm_exit is traced (any IN the guest
 * makes after the next entry follows a kvm_exit, which settles the wait first).
 */
static int on_key_event(struct capture_import *ci, struct thread_run *t, __u32 id,
			const struct tp_record *r)
{
	struct key_note k = { 0 };
	__u64 v;

	switch (id) {
	case VMEXIT_KVM_PIO:
		k.kind = KEY_PORT;
		k.dir = field_or_zero(r, "rw") ? KEY_DIR_OUT : KEY_DIR_IN;
		k.key = field_or_zero(r, "port");
		break;
	case VMEXIT_KVM_MMIO:
		/* type 0: a read that goes to userspace, 1 its completion, 2 a write */
		k.kind = KEY_MMIO;
		k.dir = field_or_zero(r, "type") == 2 ? KEY_DIR_WRITE : KEY_DIR_READ;
		k.key = field_or_zero(r, "gpa");
		break;
	case VMEXIT_KVM_MSR:
		k.kind = KEY_MSR;
		k.dir = field_or_zero(r, "write") ? KEY_DIR_WRITE : KEY_DIR_READ;
		k.key = field_or_zero(r, "ecx");
		break;
	case VMEXIT_KVM_CPUID:
		k.kind = KEY_CPUID;
		k.key = field_or_zero(r, "function");
		break;
	case VMEXIT_KVM_PAGE_FAULT:
		k.kind = KEY_GPA;
		k.dir = field_or_zero(r, "error_code") & 2 ? KEY_DIR_WRITE : KEY_DIR_READ;
		k.key = field_or_zero(r, "fault_address");
		break;
	default:
		if (!strcmp(r->event, "kvm_hypercall") && r->field(r->ctx, "nr", &v)) {
			k = (struct key_note){ .kind = KEY_HYPERCALL, .key = v };
		} else if (!strcmp(r->event, "kvm_hv_hypercall") && r->field(r->ctx, "code", &v)) {
			k = (struct key_note){ .kind = KEY_HYPERCALL, .dir = KEY_DIR_HV,
					       .key = v };
		} else if (!strcmp(r->event, "kvm_hvc_arm64") && r->field(r->ctx, "r0", &v)) {
			/* arm64: x0 is the SMCCC function id */
			k = (struct key_note){ .kind = KEY_HYPERCALL, .dir = KEY_DIR_SMCCC,
					       .key = v };
		} else if (!strcmp(r->event, "kvm_guest_fault") && r->field(r->ctx, "ipa", &v)) {
			/* arm64's stage-2 fault */
			k = (struct key_note){ .kind = KEY_GPA, .key = v,
					       .dir = key_arm64_fault_dir(field_or_zero(r, "hsr")) };
		} else {
			return 0;
		}
	}
	/* A guest-physical fault by its page, as record --keys keys it by default (--key-gpa-shift
	 * 12), whichever event said it. */
	if (k.kind == KEY_GPA)
		k.key &= ~0xfffull;
	if (t->late) {
		if (k.kind == KEY_PORT && k.dir == KEY_DIR_IN)
			t->late_exit.key = k;
		if (settle(ci, t))
			return -ENOMEM;
	}
	if (t->in_exit &&
	    key_replaces(key_exit_is_cpuid(t->exit.isa, t->exit.reason), t->exit.key.kind, k.kind))
		t->exit.key = k;
	t->pend_key = k;
	return 0;
}

static int on_tsc_offset(struct capture_import *ci, const struct tp_record *r, __u32 tgid)
{
	struct vmexit_event ev;

	event_base(&ev, r, tgid, (__s32)field_or_zero(r, "vcpu_id"));
	ev.type = VMEXIT_EV_TSC_OFFSET;
	ev.isa = VMEXIT_ISA_USER;
	ev.info1 = field_or_zero(r, "previous_tsc_offset");
	ev.info2 = field_or_zero(r, "next_tsc_offset");
	return push(ci, &ev);
}

static int on_kvm_event(struct capture_import *ci, struct thread_run *t, __u32 id,
			const struct tp_record *r, __u32 tgid)
{
	const struct tp_slots *f = &tp_slots[id];
	struct vmexit_event ev;
	__u64 v;

	event_base(&ev, r, tgid, t->vcpu);
	ev.type = VMEXIT_EV_KVM_EVENT;
	ev.reason = id;
	ev.info1 = field_or_zero(r, f->info1);
	ev.info2 = field_or_zero(r, f->info2);
	ev.rip = field_or_zero(r, f->rip);
	ev.intr_info = (__u32)field_or_zero(r, f->intr_info);
	ev.error_code = (__u32)field_or_zero(r, f->error_code);
	if (f->vcpu && r->field(r->ctx, f->vcpu, &v))
		ev.vcpu = (__s32)v;
	if (id == VMEXIT_KVM_CPUID) {
		/* 32-bit results, two to a slot, as the live decoder packs them. */
		ev.info2 = (__u32)field_or_zero(r, "rbx") * (1ull << 32) |
			   (__u32)field_or_zero(r, "rax");
		ev.rip = (__u32)field_or_zero(r, "rdx") * (1ull << 32) |
			 (__u32)field_or_zero(r, "rcx");
		ev.error_code = (field_or_zero(r, "found") ? 1 : 0) |
				(field_or_zero(r, "used_max_basic") ? 2 : 0);
	}
	return push(ci, &ev);
}

/* The VMEXIT_KVM_* id of a tracepoint "kvm_<name>", 0 if it is not one of them. */
static __u32 kvm_event_id(const char *event)
{
	if (strncmp(event, "kvm_", 4))
		return 0;
	for (__u32 id = 1; id < VMEXIT_KVM_NR; id++) {
		const char *name = kvm_event_name(id);

		if (name && !strcmp(event + 4, name))
			return id;
	}
	return 0;
}

int capture_import_add(struct capture_import *ci, const struct tp_record *r)
{
	struct thread_id k = { .tgid = r->tgid, .tid = r->tid };
	struct thread_run *t;
	__u32 tgid = r->tgid ? r->tgid : r->tid;
	bool added;
	__u32 id;
	int ret;

	ci->seen_kvm = true;
	if (r->ts_ns > ci->last_ts)
		ci->last_ts = r->ts_ns;
	t = thread_runs_get(&ci->threads, &k, &added);
	if (!t)
		return -ENOMEM;
	if (added)
		t->vcpu = -1;
	/*
	 * A capture of thread ids alone (trace.dat): a thread still running under the capture's
	 * name for it is put in its process, so that the VMM is one row and -p PID selects it.
	 */
	if (ci->no_tgid && !r->tgid && !t->grouped) {
		t->grouped = true;
		if (!thread_group_of(r->tid, r->comm, &t->group))
			ci->threads_grouped++;
		else
			ci->threads_alone++;
	}
	if (t->group)
		tgid = t->group;
	/* As the live side does for threads whose kernel said no vCPU: the thread's name. */
	if (!t->named && t->vcpu < 0 && r->comm && *r->comm) {
		t->named = true;
		t->vcpu = vcpu_from_thread_name(r->comm);
	}
	if (!strcmp(r->event, "kvm_exit"))
		return on_kvm_exit(ci, t, r, tgid);
	if (!strcmp(r->event, "kvm_entry"))
		return on_entry(ci, t, r);
	if (!strcmp(r->event, "kvm_userspace_exit"))
		return on_user_exit(ci, t, r, tgid);
	if (!strcmp(r->event, "kvm_fpu"))
		return on_fpu(ci, t, r);
	if (!strcmp(r->event, "kvm_write_tsc_offset"))
		return on_tsc_offset(ci, r, tgid);
	id = kvm_event_id(r->event);
	/* What it says of the exit in flight (--by key; an exit waiting for it goes first), and
	 * its own event (--kvm-events). */
	ret = on_key_event(ci, t, id, r);
	return ret || !id ? ret : on_kvm_event(ci, t, id, r, tgid);
}

void capture_import_missed(struct capture_import *ci, __u64 ts_ns, __u64 n)
{
	ci->lost[LOST_RINGBUF_FULL] += n;
	ci->lost_ts = ts_ns;
	ci->lost_due = true;
}

void capture_import_end(struct capture_import *ci)
{
	struct thread_runs_slot *s;

	hashmap_for_each(s, &ci->threads) {
		settle(ci, &s->val);
		if (s->val.in_exit)
			send_open(ci, &s->val.exit, ci->last_ts);
		if (s->val.in_user_exit)
			send_open(ci, &s->val.user_exit, ci->last_ts);
		s->val.in_exit = s->val.in_user_exit = false;
	}
}

int capture_import_pop(struct capture_import *ci, struct rec_item *item)
{
	if (ci->lost_due) {
		item->kind = REC_LOST;
		item->ts_ns = ci->lost_ts;
		memcpy(item->lost, ci->lost, sizeof(item->lost));
		memset(ci->lost, 0, sizeof(ci->lost));
		ci->lost_due = false;
		return 1;
	}
	if (ci->head == ci->nr)
		return 0;
	item->kind = REC_EVENT;
	item->ev = ci->q[ci->head++];
	return 1;
}

void capture_import_notes(struct capture_import *ci)
{
	if (!ci->seen_kvm) {
		fprintf(stderr, "vmexit: %s: no kvm events in this %s (record them: trace-cmd "
			"record -e kvm, perf record -e 'kvm:*')\n", ci->path, ci->kind);
		return;
	}
	fprintf(stderr, "vmexit: %s: a %s names no guests: VMMs are shown by pid\n", ci->path,
		ci->kind);
	if (ci->no_tgid && ci->threads_alone)
		fprintf(stderr, "vmexit: %s: a %s keeps thread ids, not process ids: %u of its "
			"%u threads (not running now under the same name) are each shown as a VMM "
			"of its own (pid = its thread id)\n", ci->path, ci->kind,
			ci->threads_alone, ci->threads_alone + ci->threads_grouped);
	if (ci->no_tgid && ci->threads_grouped)
		fprintf(stderr, "vmexit: %s: a %s keeps thread ids, not process ids: %u of its "
			"threads, running now under the same name, are shown in their process "
			"(from /proc)\n", ci->path, ci->kind, ci->threads_grouped);
	/*
	 * `perf kvm stat record` records kvm_exit and kvm_entry, never kvm_userspace_exit: on a
	 * host whose kvm_exit does not fire its file holds no exit at all. Say what is missing
	 * rather than leave "(no exits)" to be guessed.
	 */
	if (!ci->seen_exit && !ci->seen_user_exit)
		fprintf(stderr, "vmexit: %s: kvm events but no exits in the capture: neither "
			"kvm_exit (it never fires on some hosts) nor kvm_userspace_exit (perf kvm "
			"stat record never records it): record kvm:kvm_exit, kvm:kvm_entry, "
			"kvm:kvm_userspace_exit and kvm:kvm_fpu\n", ci->path);
	else if (!ci->seen_user_exit)
		fprintf(stderr, "vmexit: %s: no kvm_userspace_exit in the capture: exits to the "
			"VMM are not counted (perf kvm stat record never records it; add "
			"kvm:kvm_userspace_exit and kvm:kvm_fpu)\n", ci->path);
	if (ci->seen_exit && !ci->seen_entry)
		fprintf(stderr, "vmexit: %s: no kvm_entry in the capture: exits are counted, "
			"without latency (record kvm:kvm_entry too)\n", ci->path);
	if (ci->seen_user_exit && !ci->seen_run)
		fprintf(stderr, "vmexit: %s: no kvm_fpu in the capture: userspace exits are "
			"counted, without VMM time (record kvm:kvm_fpu too)\n", ci->path);
}

void capture_import_free(struct capture_import *ci)
{
	if (!ci)
		return;
	thread_runs_free(&ci->threads);
	free(ci->q);
	free(ci);
}
