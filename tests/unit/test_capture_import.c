// SPDX-License-Identifier: GPL-2.0
/*
 * The capture importer's engine: tracepoint records in, the events vmexit's own programs would
 * have sent out. Records are made here by hand (fields named as the kernel's formats name them);
 * every expected value follows from the records fed in.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "capture_import.h"

struct kv {
	const char *name;
	__u64 val;
};

struct rec_fields {
	struct kv f[12];
};

static bool get(const void *ctx, const char *name, __u64 *val)
{
	const struct rec_fields *r = ctx;

	for (int i = 0; i < 12 && r->f[i].name; i++) {
		if (!strcmp(r->f[i].name, name)) {
			*val = r->f[i].val;
			return true;
		}
	}
	return false;
}

static void feed(struct capture_import *ci, const char *event, __u64 ts, __u32 tgid, __u32 tid,
		 const char *comm, struct rec_fields f)
{
	struct tp_record r = {
		.event = event, .ts_ns = ts, .tgid = tgid, .tid = tid, .cpu = 1, .comm = comm,
		.field = get, .ctx = &f,
	};

	CHECK(capture_import_add(ci, &r) == 0);
}

/* The next item, which must be an event. */
static struct vmexit_event next_event(struct capture_import *ci)
{
	struct rec_item it = {};

	CHECK(capture_import_pop(ci, &it) == 1);
	CHECK(it.kind == REC_EVENT);
	return it.ev;
}

static void test_pairs(void)
{
	struct capture_import *ci = capture_import_new("x.dat", "test", false);
	struct vmexit_event e;
	struct rec_item it;

	/* An SVM io exit of vCPU 1, its entry 50 ns later; then a KVM_EXIT_IO and the next run. */
	feed(ci, "kvm_exit", 100, 7, 8, "CPU 1/KVM", (struct rec_fields){ {
		{ "exit_reason", 0x7b }, { "guest_rip", 0xfff0 }, { "isa", VMEXIT_ISA_SVM },
		{ "info1", 0xe90210 }, { "info2", 0x1003 }, { "intr_info", 0 },
		{ "error_code", 0 }, { "vcpu_id", 1 } } });
	CHECK(capture_import_pop(ci, &it) == 0);	/* nothing until its entry */
	feed(ci, "kvm_entry", 150, 7, 8, "CPU 1/KVM", (struct rec_fields){ { { "vcpu_id", 1 } } });
	e = next_event(ci);
	CHECK_EQ_U64(e.type, VMEXIT_EV_EXIT);
	CHECK_EQ_U64(e.ts_ns, 100);
	CHECK_EQ_U64(e.latency_ns, 50);
	CHECK_EQ_U64(e.isa, VMEXIT_ISA_SVM);
	CHECK_EQ_U64(e.reason, 0x7b);
	CHECK_EQ_U64(e.rip, 0xfff0);
	CHECK_EQ_U64(e.info1, 0xe90210);
	CHECK_EQ_U64(e.vcpu, 1);
	CHECK_EQ_U64(e.tgid, 7);
	CHECK_EQ_U64(e.tid, 8);
	feed(ci, "kvm_userspace_exit", 160, 7, 8, "", (struct rec_fields){ {
		{ "reason", 2 }, { "errno", 0 } } });
	/* The FPU put at the end of KVM_RUN does not start a run; the load does. */
	feed(ci, "kvm_fpu", 165, 7, 8, "", (struct rec_fields){ { { "load", 0 } } });
	CHECK(capture_import_pop(ci, &it) == 0);
	feed(ci, "kvm_fpu", 190, 7, 8, "", (struct rec_fields){ { { "load", 1 } } });
	/* An IO exit waits: if it was an IN, its port is traced with its data, in this run. */
	CHECK(capture_import_pop(ci, &it) == 0);
	feed(ci, "kvm_pio", 192, 7, 8, "", (struct rec_fields){ {
		{ "rw", 0 }, { "port", 0xe8 }, { "size", 1 }, { "count", 1 }, { "val", 0 } } });
	e = next_event(ci);
	CHECK_EQ_U64(e.type, VMEXIT_EV_USER_EXIT);
	CHECK_EQ_U64(e.isa, VMEXIT_ISA_USER);
	CHECK_EQ_U64(e.reason, 2);
	CHECK_EQ_U64(e.latency_ns, 30);
	CHECK_EQ_U64(e.vcpu, 1);
	CHECK_EQ_U64(e.key.kind, KEY_PORT);
	CHECK_EQ_U64(e.key.dir, KEY_DIR_IN);
	CHECK_EQ_U64(e.key.key, 0xe8);
	e = next_event(ci);				/* then the kvm_pio itself */
	CHECK_EQ_U64(e.type, VMEXIT_EV_KVM_EVENT);
	CHECK_EQ_U64(e.reason, VMEXIT_KVM_PIO);
	CHECK_EQ_U64(e.ts_ns, 192);
	/* A run that failed (-EINTR): the errno is the reason, as the live side accounts it. */
	feed(ci, "kvm_userspace_exit", 200, 7, 8, "", (struct rec_fields){ {
		{ "reason", 0 }, { "errno", (__u64)-4ll } } });
	/* The end: an exit still open is sent in flight, aged to the last record. */
	feed(ci, "kvm_fpu", 260, 7, 9, "", (struct rec_fields){ { { "load", 0 } } });
	capture_import_end(ci);
	e = next_event(ci);
	CHECK_EQ_U64(e.type, VMEXIT_EV_USER_EXIT | VMEXIT_EV_IN_FLIGHT);
	CHECK_EQ_U64(e.reason, VMEXIT_UREASON_ERRNO | 4);
	CHECK_EQ_U64(e.info1, (__u64)-4ll);
	CHECK_EQ_U64(e.latency_ns, 60);
	CHECK(capture_import_pop(ci, &it) == 0);
	capture_import_free(ci);
}

/* A capture without kvm_entry: every exit is counted, none gets a latency, none is lost. */
static void test_no_entry(void)
{
	struct capture_import *ci = capture_import_new("x.dat", "test", false);
	struct vmexit_event e;
	struct rec_item it;

	for (int i = 0; i < 3; i++)
		feed(ci, "kvm_exit", 100 + 10 * i, 7, 8, "", (struct rec_fields){ {
			{ "exit_reason", 30 }, { "isa", VMEXIT_ISA_VMX } } });
	for (int i = 0; i < 2; i++) {
		e = next_event(ci);
		CHECK_EQ_U64(e.type, VMEXIT_EV_EXIT | VMEXIT_EV_IN_FLIGHT);
		CHECK_EQ_U64(e.latency_ns, 0);
		CHECK_EQ_U64(e.ts_ns, 100 + 10 * i);
		CHECK_EQ_U64(e.vcpu, (__u64)-1);	/* no vcpu_id, no vCPU thread name */
	}
	capture_import_end(ci);
	e = next_event(ci);
	CHECK_EQ_U64(e.type, VMEXIT_EV_EXIT | VMEXIT_EV_IN_FLIGHT);
	CHECK_EQ_U64(e.ts_ns, 120);
	CHECK(capture_import_pop(ci, &it) == 0);
	capture_import_free(ci);
}

/* Once entries are in the capture, an exit overwritten before its entry is lost, as live. */
static void test_lost(void)
{
	struct capture_import *ci = capture_import_new("x.dat", "test", false);
	struct rec_item it;

	feed(ci, "kvm_entry", 90, 7, 8, "", (struct rec_fields){ {} });
	CHECK(capture_import_pop(ci, &it) == 1);
	CHECK(it.kind == REC_LOST);
	CHECK_EQ_U64(it.lost[LOST_UNMATCHED_ENTRY], 1);
	feed(ci, "kvm_exit", 100, 7, 8, "", (struct rec_fields){ { { "exit_reason", 30 } } });
	feed(ci, "kvm_exit", 110, 7, 8, "", (struct rec_fields){ { { "exit_reason", 12 } } });
	CHECK(capture_import_pop(ci, &it) == 1);
	CHECK(it.kind == REC_LOST);
	CHECK_EQ_U64(it.lost[LOST_OVERWRITTEN_EXIT], 1);
	CHECK_EQ_U64(it.lost[LOST_UNMATCHED_ENTRY], 0);	/* handed out once */
	capture_import_missed(ci, 115, 5);
	CHECK(capture_import_pop(ci, &it) == 1);
	CHECK(it.kind == REC_LOST);
	CHECK_EQ_U64(it.lost[LOST_RINGBUF_FULL], 5);
	CHECK_EQ_U64(it.ts_ns, 115);
	feed(ci, "kvm_entry", 130, 7, 8, "", (struct rec_fields){ {} });
	CHECK_EQ_U64(next_event(ci).reason, 12);
	CHECK(capture_import_pop(ci, &it) == 0);
	capture_import_free(ci);
}

/* An arm64 stage-2 abort at ts: its kvm_exit (the ESR's class) and kvm_guest_fault. */
static void guest_abort(struct capture_import *ci, __u64 ts, __u32 tid, __u64 pc, __u64 esr,
			__u64 far, __u64 ipa)
{
	feed(ci, "kvm_exit", ts, 0, tid, "", (struct rec_fields){ {
		{ "ret", VMEXIT_ARM64_TRAP }, { "esr_ec", esr >> 26 }, { "vcpu_pc", pc } } });
	feed(ci, "kvm_guest_fault", ts + 1, 0, tid, "", (struct rec_fields){ {
		{ "vcpu_pc", pc }, { "hsr", esr }, { "hxfar", far }, { "ipa", ipa } } });
}

static void test_kvm_events(void)
{
	struct capture_import *ci = capture_import_new("x.dat", "test", true);
	struct vmexit_event e;

	/* No tgid in the capture: the thread stands for its VMM; its vCPU from its name. */
	feed(ci, "kvm_pio", 10, 0, 42, "CPU 3/KVM", (struct rec_fields){ {
		{ "rw", 1 }, { "port", 0xe9 }, { "size", 1 }, { "count", 1 }, { "val", 0x41 } } });
	e = next_event(ci);
	CHECK_EQ_U64(e.type, VMEXIT_EV_KVM_EVENT);
	CHECK_EQ_U64(e.reason, VMEXIT_KVM_PIO);
	CHECK_EQ_U64(e.tgid, 42);
	CHECK_EQ_U64(e.vcpu, 3);
	CHECK_EQ_U64(e.info1, 0xe9);
	CHECK_EQ_U64(e.info2, 0x41);
	CHECK_EQ_U64(e.rip, 1);
	CHECK_EQ_U64(e.intr_info, 1);
	CHECK_EQ_U64(e.error_code, 1);
	feed(ci, "kvm_cpuid", 20, 0, 42, "CPU 3/KVM", (struct rec_fields){ {
		{ "function", 0 }, { "index", 0 }, { "rax", 0xd }, { "rbx", 0x756e6547 },
		{ "rcx", 0x6c65746e }, { "rdx", 0x49656e69 }, { "found", 1 },
		{ "used_max_basic", 0 } } });
	e = next_event(ci);
	CHECK_EQ_U64(e.reason, VMEXIT_KVM_CPUID);
	CHECK_EQ_U64(e.info2, 0x756e65470000000dull);
	CHECK_EQ_U64(e.rip, 0x49656e696c65746eull);
	CHECK_EQ_U64(e.error_code, 1);
	/* Before Linux 5.19 kvm_inj_virq's vector was called irq. */
	feed(ci, "kvm_inj_virq", 30, 0, 42, "", (struct rec_fields){ { { "irq", 0xec } } });
	CHECK_EQ_U64(next_event(ci).info1, 0xec);
	feed(ci, "kvm_write_tsc_offset", 40, 0, 41, "", (struct rec_fields){ {
		{ "vcpu_id", 2 }, { "previous_tsc_offset", 0 }, { "next_tsc_offset", 0xfff0 } } });
	e = next_event(ci);
	CHECK_EQ_U64(e.type, VMEXIT_EV_TSC_OFFSET);
	CHECK_EQ_U64(e.vcpu, 2);
	CHECK_EQ_U64(e.info2, 0xfff0);
	/* Tracepoints that are no event of ours are passed over. */
	feed(ci, "kvm_set_irq", 50, 0, 42, "", (struct rec_fields){ {} });
	/* arm64: a trap's reason is its exception class, other kinds VMEXIT_ARM64_EXC | ret. */
	feed(ci, "kvm_exit", 60, 0, 43, "", (struct rec_fields){ {
		{ "ret", VMEXIT_ARM64_TRAP }, { "esr_ec", 0x16 }, { "vcpu_pc", 0x4000 } } });
	/* Its HVC's kvm_hvc_arm64: the exit is keyed by x0, the SMCCC function id. */
	feed(ci, "kvm_hvc_arm64", 65, 0, 43, "", (struct rec_fields){ {
		{ "vcpu_pc", 0x4000 }, { "r0", 0x84000000 }, { "imm", 0 } } });
	feed(ci, "kvm_exit", 70, 0, 44, "", (struct rec_fields){ { { "ret", 0 } } });
	/*
	 * A stage-2 data abort to RAM: kvm_guest_fault keys it by its IPA page, write from the
	 * hsr's WnR (ESR EC 0x24, bit 6); an instruction abort (EC 0x20) reads; one to MMIO
	 * takes the kvm_mmio that follows its fault.
	 */
	guest_abort(ci, 80, 45, 0x4010, 0x93c00046, 0x40003007, 0x40003000);
	guest_abort(ci, 90, 46, 0x40000000, 0x82000046, 0x40000000, 0x40000000);
	guest_abort(ci, 100, 47, 0x4014, 0x93c00046, 0x10000008, 0x10000000);
	feed(ci, "kvm_mmio", 102, 0, 47, "", (struct rec_fields){ {
		{ "type", 2 }, { "len", 1 }, { "gpa", 0x10000008 }, { "val", 0 } } });
	capture_import_end(ci);
	for (int i = 0; i < 5; i++) {
		static const struct { __u32 tid; __u64 reason, rip, key; __u16 kind, dir; } want[] = {
			{ 43, 0x16, 0x4000, 0x84000000, KEY_HYPERCALL, KEY_DIR_SMCCC },
			{ 44, VMEXIT_ARM64_EXC, 0, 0, KEY_NONE, KEY_DIR_NONE },
			{ 45, 0x24, 0x4010, 0x40003000, KEY_GPA, KEY_DIR_WRITE },
			{ 46, 0x20, 0x40000000, 0x40000000, KEY_GPA, KEY_DIR_READ },
			{ 47, 0x24, 0x4014, 0x10000008, KEY_MMIO, KEY_DIR_WRITE },
		};
		int w = 0;

		/* kvm_mmio is also an event of its own (--kvm-events), before the exit it keys. */
		do
			e = next_event(ci);
		while (e.type == VMEXIT_EV_KVM_EVENT);
		while (w < 4 && want[w].tid != e.tid)
			w++;
		CHECK_EQ_U64(e.tid, want[w].tid);
		CHECK_EQ_U64(e.isa, VMEXIT_ISA_ARM64);
		CHECK_EQ_U64(e.reason, want[w].reason);
		CHECK_EQ_U64(e.rip, want[w].rip);
		CHECK_EQ_U64(e.key.kind, want[w].kind);
		CHECK_EQ_U64(e.key.dir, want[w].dir);
		CHECK_EQ_U64(e.key.key, want[w].key);
	}
	capture_import_free(ci);
}

/* capture_import_notes()'s lines, caught from stderr. */
static char *notes_of(struct capture_import *ci)
{
	FILE *t = tmpfile();
	int saved = dup(2);
	static char buf[4096];
	size_t n = 0;

	CHECK(t && saved >= 0);
	if (!t || saved < 0)
		return "";
	fflush(stderr);
	dup2(fileno(t), 2);
	capture_import_notes(ci);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	rewind(t);
	n = fread(buf, 1, sizeof(buf) - 1, t);
	buf[n] = '\0';
	fclose(t);
	return buf;
}

/*
 * `perf kvm stat record`'s own file on a host whose kvm_exit never fires: kvm events (a
 * kvm_pio), no exit of either kind: said, with what to record, rather than a bare "(no
 * exits)". Guest exits and no kvm_userspace_exit: the exits to the VMM are said missing.
 */
static void test_notes(void)
{
	struct capture_import *ci = capture_import_new("kvm.data", "perf.data", false);
	const char *t;

	feed(ci, "kvm_pio", 100, 7, 8, "CPU 0/KVM", (struct rec_fields){ {
		{ "rw", 1 }, { "port", 0x70 }, { "size", 1 }, { "count", 1 } } });
	capture_import_end(ci);
	t = notes_of(ci);
	CHECK(strstr(t, "vmexit: kvm.data: kvm events but no exits in the capture: neither "
		  "kvm_exit") != NULL);
	CHECK(strstr(t, "kvm:kvm_userspace_exit") != NULL);
	capture_import_free(ci);

	ci = capture_import_new("kvm.data", "perf.data", false);
	feed(ci, "kvm_exit", 100, 7, 8, "", (struct rec_fields){ {
		{ "exit_reason", 30 }, { "isa", VMEXIT_ISA_VMX } } });
	feed(ci, "kvm_entry", 110, 7, 8, "", (struct rec_fields){ { { "vcpu_id", 0 } } });
	capture_import_end(ci);
	t = notes_of(ci);
	CHECK(!strstr(t, "no exits in the capture"));
	CHECK(strstr(t, "vmexit: kvm.data: no kvm_userspace_exit in the capture: exits to the "
		  "VMM are not counted") != NULL);
	capture_import_free(ci);
}

/* A vCPU thread that runs while the test feeds its records: its id and the process's. */
struct vcpu_thread {
	pthread_t th;
	pid_t tid;
	int go[2];	/* the thread says its tid on go[1]; closing done[1] ends it */
	int done[2];
};

static void *vcpu_thread_run(void *arg)
{
	struct vcpu_thread *v = arg;
	pid_t tid = gettid();
	char c;

	pthread_setname_np(pthread_self(), "CPU 0/KVM");
	CHECK(write(v->go[1], &tid, sizeof(tid)) == sizeof(tid));
	CHECK(read(v->done[0], &c, 1) == 0);
	return NULL;
}

/*
 * A trace.dat keeps thread ids only: a vCPU thread still running under the capture's name for
 * it is put in its process (as -p PID then selects it); a thread of another name (its id reused
 * since, or gone) stays a VMM of its own.
 */
static void test_thread_groups(void)
{
	struct capture_import *ci = capture_import_new("t.dat", "trace-cmd trace.dat", true);
	struct vcpu_thread v = {};
	struct vmexit_event e;
	const char *t;

	CHECK(pipe(v.go) == 0 && pipe(v.done) == 0);
	CHECK(pthread_create(&v.th, NULL, vcpu_thread_run, &v) == 0);
	CHECK(read(v.go[0], &v.tid, sizeof(v.tid)) == sizeof(v.tid));
	CHECK(v.tid != getpid());
	/* Two KVM_EXIT_HLTs (5): the first ends at the next run's FPU load. */
	feed(ci, "kvm_userspace_exit", 100, 0, (__u32)v.tid, "CPU 0/KVM", (struct rec_fields){ {
		{ "reason", 5 }, { "errno", 0 } } });
	feed(ci, "kvm_fpu", 120, 0, (__u32)v.tid, "CPU 0/KVM", (struct rec_fields){ {
		{ "load", 1 } } });
	/* Thread 1 (init) runs under another name now: not the capture's vCPU thread. */
	feed(ci, "kvm_userspace_exit", 130, 0, 1, "CPU 9/KVM", (struct rec_fields){ {
		{ "reason", 5 }, { "errno", 0 } } });
	capture_import_end(ci);
	e = next_event(ci);
	CHECK_EQ_U64(e.tid, (__u64)v.tid);
	CHECK_EQ_U64(e.tgid, (__u64)getpid());
	CHECK_EQ_U64(e.vcpu, 0);
	e = next_event(ci);
	CHECK_EQ_U64(e.tgid, 1);
	t = notes_of(ci);
	CHECK(strstr(t, "vmexit: t.dat: a trace-cmd trace.dat keeps thread ids, not process ids: 1 "
		  "of its 2 threads (not running now") != NULL);
	CHECK(strstr(t, "1 of its threads, running now under the same name, are shown in their "
		  "process (from /proc)") != NULL);
	close(v.done[1]);
	CHECK(pthread_join(v.th, NULL) == 0);
	close(v.go[0]);
	close(v.go[1]);
	close(v.done[0]);
	capture_import_free(ci);
}

/*
 * An SVM REP string IO with ECX 0, as the SVM bed's SeaBIOS boots traced it: kvm_exit (io),
 * the emulator's kvm_cpuid (leaf 0, its vendor check) and kvm_entry, no kvm_pio. The exit read
 * no port: no key, not the leaf (key_rules.h key_replaces). A CPUID exit keeps its leaf.
 */
static void test_emulated_cpuid(void)
{
	struct capture_import *ci = capture_import_new("x.dat", "test", true);
	const struct rec_fields cpuid0 = { { { "function", 0 }, { "found", 1 } } };
	struct vmexit_event e;

	feed(ci, "kvm_exit", 100, 7, 8, "", (struct rec_fields){ {
		{ "isa", VMEXIT_ISA_SVM }, { "exit_reason", 0x7b }, { "guest_rip", 0xec788 } } });
	feed(ci, "kvm_cpuid", 101, 7, 8, "", cpuid0);
	feed(ci, "kvm_entry", 110, 7, 8, "", (struct rec_fields){ {} });
	feed(ci, "kvm_exit", 200, 7, 8, "", (struct rec_fields){ {
		{ "isa", VMEXIT_ISA_SVM }, { "exit_reason", 0x72 } } });
	feed(ci, "kvm_cpuid", 201, 7, 8, "", cpuid0);
	feed(ci, "kvm_entry", 205, 7, 8, "", (struct rec_fields){ {} });
	capture_import_end(ci);
	for (int i = 0; i < 2; i++) {
		do
			e = next_event(ci);
		while (e.type == VMEXIT_EV_KVM_EVENT);
		CHECK_EQ_U64(e.isa, VMEXIT_ISA_SVM);
		CHECK_EQ_U64(e.reason, i ? 0x72 : 0x7b);
		CHECK_EQ_U64(e.key.kind, i ? KEY_CPUID : KEY_NONE);
		CHECK_EQ_U64(e.key.key, 0);
	}
	capture_import_free(ci);
}

int main(void)
{
	test_thread_groups();
	test_notes();
	test_pairs();
	test_no_entry();
	test_lost();
	test_kvm_events();
	test_emulated_cpuid();
	CHECK_DONE("capture_import");
}
