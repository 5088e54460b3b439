// SPDX-License-Identifier: GPL-2.0
/*
 * The BPF per-event logic (bpf/handlers.bpf.h), run in the kernel through BPF_PROG_TEST_RUN
 * with hand-made events (bpf/vmexit_test.bpf.c), checked on the maps it leaves: cells, lost
 * counters, filters, the stream ring buffer; then the userspace tracker on top of the real
 * mmapped cell array. Expected values are derived by hand in the comments.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "../unit/check.h"
#include "hist.h"
#include "reasons.h"
#include "tracker.h"
#include "vmexit_test.skel.h"
#include "vmexit_test.h"
#include "bpf_test_util.h"

#define ISA_VMX		VMEXIT_ISA_VMX
#define ISA_SVM		VMEXIT_ISA_SVM
#define ISA_USER	VMEXIT_ISA_USER
#define ISA_ARM64	VMEXIT_ISA_ARM64

/* A few real reason codes, for readability. */
#define VMX_EXTINT	1
#define VMX_HLT		12
#define VMX_IO		30
#define VMX_MSR_WRITE	32
#define VMX_EPT_VIOL	48
#define KVM_EXIT_IO_	2
#define KVM_EXIT_MMIO_	6
/* arm64: ARM_EXCEPTION_* (asm/kvm_asm.h) and ESR_ELx_EC_* (asm/esr.h). */
#define ARM_IRQ		0
#define ARM_TRAP	2
#define ARM_IL		3
#define ARM_HYP_GONE	0xbadca11
#define EC_WFX		0x01
#define EC_HVC64	0x16
#define EC_SYS64	0x18
#define EC_DABT_LOW	0x24

/* Mirrors of handlers.bpf.h internals the maps expose. */
#define CELL_FILTERED	0xffff
struct other_key {
	__u32 tid;
	__u32 isa;
	__u32 reason;
};

struct fx_opts {
	__u32 max_cells;
	const __u32 *pids;
	int nr_pids;
	bool follow_forks;
	bool filter_vcpu;
	__s32 vcpu;
	const __u64 *reasons;	/* isa << 32 | reason */
	int nr_reasons;
	bool stream;
	__u32 ring_bytes;
	__u64 min_lat;
	__u32 sample_every;
	bool task_storage;	/* raw_tp program, per-thread state in task storage */
	bool kvm;		/* also load run_kvm_record (needs the kvm types in BTF) */
	bool kvm_events;	/* top --kvm-events: kvm event records without stream */
	bool split;		/* --split */
	__u64 stuck;		/* stat --stuck */
	bool count_later;	/* no exit counts until bss->counting is set */
};

#define MAX_EVS		256

struct fx {
	struct vmexit_test_bpf *skel;
	struct cell *cells;
	size_t cells_len;
	__u32 max_cells;
	int prog_fd;
	int kvm_fd;		/* run_kvm_record, when loaded */
	struct ring_buffer *rb;
	struct vmexit_event evs[MAX_EVS];
	int nr_evs;
	bool split;
};

static int stream_cb(void *ctx, void *data, size_t len)
{
	struct fx *f = ctx;

	/* The split fields are sent with --split only. */
	CHECK_EQ_U64(len, f->split ? VMEXIT_EVENT_SPLIT_LEN : VMEXIT_EVENT_BASE_LEN);
	if (f->nr_evs < MAX_EVS && len <= sizeof(struct vmexit_event))
		memcpy(&f->evs[f->nr_evs], data, len);
	f->nr_evs++;
	return 0;
}

/* Open, set the tunables and size the maps as src/kernel/session.c does, load, fill the filters. */
static int fx_open(struct fx *f, const struct fx_opts *o)
{
	struct vmexit_test_bpf *skel;
	size_t stride;
	__u8 one = 1;
	int err;

	memset(f, 0, sizeof(*f));
	skel = vmexit_test_bpf__open();
	if (!skel) {
		fprintf(stderr, "cannot open the test object: %s\n", strerror(errno));
		return -1;
	}
	f->skel = skel;
	f->max_cells = o->max_cells ? o->max_cells : 64;
	skel->rodata->use_task_storage = o->task_storage;
	skel->rodata->filter_pids = o->nr_pids > 0;
	skel->rodata->follow_forks = o->follow_forks;
	skel->rodata->filter_reasons = o->nr_reasons > 0;
	skel->rodata->filter_vcpu = o->filter_vcpu ? o->vcpu : -1;
	skel->rodata->max_cells = f->max_cells;
	skel->rodata->stream_enabled = o->stream;
	skel->rodata->stream_min_latency_ns = o->min_lat;
	skel->rodata->stream_sample_every = o->sample_every ? o->sample_every : 1;
	skel->rodata->split_enabled = o->split;
	skel->rodata->kvm_events_enabled = o->kvm_events;
	skel->rodata->stuck_min_ns = o->stuck;
	skel->rodata->count_gated = o->count_later;
	f->split = o->split;

	bpf_map__set_max_entries(skel->maps.cells, f->max_cells);
	bpf_map__set_max_entries(skel->maps.free_cells, f->max_cells);
	if (o->task_storage) {
		bpf_program__set_autoload(skel->progs.run_event, false);
	} else {
		bpf_map__set_max_entries(skel->maps.thread_hash, 16384);
		bpf_map__set_autocreate(skel->maps.thread_storage, false);
		bpf_program__set_autoload(skel->progs.run_event_task, false);
	}
	if (o->stream || o->kvm_events)
		bpf_map__set_max_entries(skel->maps.events, o->ring_bytes ? o->ring_bytes : 65536);
	bpf_program__set_autoload(skel->progs.run_kvm_record, o->kvm);
	err = vmexit_test_bpf__load(skel);
	if (err) {
		fprintf(stderr, "cannot load the test object: %s\n", strerror(-err));
		return -1;
	}
	f->prog_fd = bpf_program__fd(o->task_storage ? skel->progs.run_event_task :
				     skel->progs.run_event);
	f->kvm_fd = o->kvm ? bpf_program__fd(skel->progs.run_kvm_record) : -1;
	for (int i = 0; i < o->nr_pids; i++)
		CHECK(!bpf_map__update_elem(skel->maps.pid_filter, &o->pids[i], sizeof(__u32),
					    &one, 1, BPF_ANY));
	for (int i = 0; i < o->nr_reasons; i++)
		CHECK(!bpf_map__update_elem(skel->maps.reason_filter, &o->reasons[i],
					    sizeof(__u64), &one, 1, BPF_ANY));

	stride = (sizeof(struct cell) + 7) & ~7ul;
	f->cells_len = stride * f->max_cells;
	f->cells_len = (f->cells_len + getpagesize() - 1) & ~((size_t)getpagesize() - 1);
	f->cells = mmap(NULL, f->cells_len, PROT_READ, MAP_SHARED,
			bpf_map__fd(skel->maps.cells), 0);
	if (f->cells == MAP_FAILED) {
		f->cells = NULL;
		fprintf(stderr, "cannot mmap the cells: %s\n", strerror(errno));
		return -1;
	}
	if (o->stream || o->kvm_events) {
		f->rb = ring_buffer__new(bpf_map__fd(skel->maps.events), stream_cb, f, NULL);
		if (!f->rb) {
			fprintf(stderr, "cannot open the ring buffer: %s\n", strerror(errno));
			return -1;
		}
	}
	return 0;
}

static void fx_close(struct fx *f)
{
	ring_buffer__free(f->rb);
	if (f->cells)
		munmap(f->cells, f->cells_len);
	vmexit_test_bpf__destroy(f->skel);
	memset(f, 0, sizeof(*f));
}

static void send(struct fx *f, struct test_ctx c)
{
	LIBBPF_OPTS(bpf_test_run_opts, o, .ctx_in = &c, .ctx_size_in = sizeof(c));
	int err = bpf_prog_test_run_opts(f->prog_fd, &o);

	if (err || o.retval) {
		fprintf(stderr, "test_run op %llu: err %d retval %d\n", (unsigned long long)c.op,
			err, (int)o.retval);
		check_failures++;
	}
}

static void ev_exit(struct fx *f, __u64 now, __u32 tgid, __u32 tid, __s32 vcpu, __u32 isa,
		    __u32 reason)
{
	send(f, (struct test_ctx){ .op = TOP_EXIT, .now = now, .tgid = tgid, .tid = tid,
				   .vcpu = vcpu, .isa = isa, .reason = reason });
}

static void ev_entry(struct fx *f, __u64 now, __u32 tgid, __u32 tid)
{
	send(f, (struct test_ctx){ .op = TOP_ENTRY, .now = now, .tgid = tgid, .tid = tid });
}

static void ev_uexit(struct fx *f, __u64 now, __u32 tgid, __u32 tid, __u32 reason, __s32 err)
{
	send(f, (struct test_ctx){ .op = TOP_USER_EXIT, .now = now, .tgid = tgid, .tid = tid,
				   .reason = reason, .err = err });
}

static void ev_run(struct fx *f, __u64 now, __u32 tgid, __u32 tid)
{
	send(f, (struct test_ctx){ .op = TOP_RUN, .now = now, .tgid = tgid, .tid = tid });
}

/* One in-kernel exit of latency lat starting at t. */
static void ev_pair(struct fx *f, __u64 t, __u64 lat, __u32 tgid, __u32 tid, __s32 vcpu,
		    __u32 isa, __u32 reason)
{
	ev_exit(f, t, tgid, tid, vcpu, isa, reason);
	ev_entry(f, t + lat, tgid, tid);
}

static __u32 nr_cells(struct fx *f)
{
	__u32 n = f->skel->bss->next_cell;

	return n < f->max_cells ? n : f->max_cells;
}

static __u64 lost(struct fx *f, int why)
{
	return f->skel->bss->lost[why];
}

/* The cell of (tgid, tid, isa, reason); a zeroed dummy (and a failure) when there is none. */
static const struct cell *cell_of(struct fx *f, __u32 tgid, __u32 tid, __u32 isa, __u32 reason)
{
	static const struct cell none;
	const struct cell *found = NULL;

	for (__u32 i = 0; i < nr_cells(f); i++) {
		const struct cell_key *k = &f->cells[i].key;

		if (k->ready && k->tgid == tgid && k->tid == tid && k->isa == isa &&
		    k->reason == reason) {
			if (found) {
				fprintf(stderr, "two cells for %u/%u %u:%#x\n", tgid, tid, isa,
					reason);
				check_failures++;
			}
			found = &f->cells[i];
		}
	}
	if (!found) {
		fprintf(stderr, "no cell for %u/%u %u:%#x\n", tgid, tid, isa, reason);
		check_failures++;
		return &none;
	}
	return found;
}

static bool has_cell(struct fx *f, __u32 tgid, __u32 tid, __u32 isa, __u32 reason)
{
	for (__u32 i = 0; i < nr_cells(f); i++) {
		const struct cell_key *k = &f->cells[i].key;

		if (k->tgid == tgid && k->tid == tid && k->isa == isa && k->reason == reason)
			return true;
	}
	return false;
}

static __u64 hist_sum(const struct cell *c)
{
	__u64 n = 0;

	for (__u32 b = 0; b < NR_BUCKETS; b++)
		n += c->hist[b];
	return n;
}

static bool lost_all_zero_but(struct fx *f, int except)
{
	for (int i = 0; i < NR_LOST; i++) {
		if (i != except && lost(f, i)) {
			fprintf(stderr, "lost[%d] == %llu\n", i, (unsigned long long)lost(f, i));
			return false;
		}
	}
	return true;
}

/*
 * Buckets of the latencies used below, from include/hist.h: values < 16 are their own bucket;
 * v >= 16 with e = floor(log2 v) goes to 16 + (e - 4) * 8 + ((v >> (e - 3)) & 7).
 *   500:  e = 8,  500 >> 5 = 15, & 7 = 7  -> 16 + 32 + 7 = 55   [480, 512)
 *   1000: e = 9,  1000 >> 6 = 15, & 7 = 7 -> 16 + 40 + 7 = 63   [960, 1024)
 *   3000: e = 11, 3000 >> 8 = 11, & 7 = 3 -> 16 + 56 + 3 = 75   [2816, 3072)
 *   16:   e = 4,  16 >> 1 = 8, & 7 = 0    -> 16                 [16, 18)
 *   17:   e = 4,  17 >> 1 = 8, & 7 = 0    -> 16
 */
#define B500	55
#define B1000	63
#define B3000	75

static void test_exit_entry(void)
{
	struct fx f;
	const struct cell *c;

	if (fx_open(&f, &(struct fx_opts){ 0 })) {
		check_failures++;
		return;
	}
	/* Three exits of one vCPU thread: 1000, 500 and 3000 ns in guest-exit time. */
	ev_pair(&f, 10000, 1000, 100, 101, 0, ISA_VMX, VMX_IO);
	ev_pair(&f, 20000, 500, 100, 101, 0, ISA_VMX, VMX_IO);
	ev_pair(&f, 30000, 3000, 100, 101, 0, ISA_VMX, VMX_IO);
	CHECK_EQ_U64(f.skel->bss->next_cell, 1);
	c = cell_of(&f, 100, 101, ISA_VMX, VMX_IO);
	CHECK_EQ_U64(c->key.vcpu, 0);
	CHECK_EQ_U64(c->key.ready, 1);
	CHECK_EQ_U64(c->started, 3);
	CHECK_EQ_U64(c->count, 3);
	CHECK_EQ_U64(c->total_ns, 4500);
	CHECK_EQ_U64(c->min_ns, 500);
	CHECK_EQ_U64(c->max_ns, 3000);
	CHECK_EQ_U64(c->hist[B500], 1);
	CHECK_EQ_U64(c->hist[B1000], 1);
	CHECK_EQ_U64(c->hist[B3000], 1);
	CHECK_EQ_U64(hist_sum(c), 3);
	CHECK(lost_all_zero_but(&f, -1));

	/* Exact buckets at the edge of the exact range: 15 -> 15; 16 and 17 share bucket 16. */
	ev_pair(&f, 40000, 15, 100, 101, 0, ISA_VMX, VMX_HLT);
	ev_pair(&f, 41000, 16, 100, 101, 0, ISA_VMX, VMX_HLT);
	ev_pair(&f, 42000, 17, 100, 101, 0, ISA_VMX, VMX_HLT);
	ev_pair(&f, 43000, 0, 100, 101, 0, ISA_VMX, VMX_HLT);
	c = cell_of(&f, 100, 101, ISA_VMX, VMX_HLT);
	CHECK_EQ_U64(c->hist[0], 1);
	CHECK_EQ_U64(c->hist[15], 1);
	CHECK_EQ_U64(c->hist[16], 2);
	CHECK_EQ_U64(c->hist[17], 0);
	CHECK_EQ_U64(c->min_ns, 0);
	CHECK_EQ_U64(c->max_ns, 17);
	CHECK_EQ_U64(c->total_ns, 48);

	/* An exit still in flight is started, not completed. */
	ev_exit(&f, 50000, 100, 101, 0, ISA_VMX, VMX_IO);
	c = cell_of(&f, 100, 101, ISA_VMX, VMX_IO);
	CHECK_EQ_U64(c->started, 4);
	CHECK_EQ_U64(c->count, 3);
	/* A second exit before any entry: the first one's latency is lost. */
	ev_exit(&f, 60000, 100, 101, 0, ISA_VMX, VMX_IO);
	CHECK_EQ_U64(lost(&f, LOST_OVERWRITTEN_EXIT), 1);
	ev_entry(&f, 60700, 100, 101);
	CHECK_EQ_U64(c->started, 5);
	CHECK_EQ_U64(c->count, 4);
	CHECK_EQ_U64(c->total_ns, 4500 + 700);
	/* An entry with nothing in flight, on a known thread and on a never-seen one. */
	ev_entry(&f, 70000, 100, 101);
	ev_entry(&f, 70000, 100, 999);
	CHECK_EQ_U64(lost(&f, LOST_UNMATCHED_ENTRY), 2);
	CHECK_EQ_U64(c->count, 4);

	/* A second thread (vCPU 1) gets its own cell for the same reason. */
	ev_pair(&f, 80000, 1000, 100, 102, 1, ISA_VMX, VMX_IO);
	c = cell_of(&f, 100, 102, ISA_VMX, VMX_IO);
	CHECK_EQ_U64(c->key.vcpu, 1);
	CHECK_EQ_U64(c->count, 1);
	CHECK_EQ_U64(f.skel->bss->next_cell, 3);
	CHECK_EQ_U64(lost(&f, LOST_OVERWRITTEN_EXIT), 1);
	CHECK_EQ_U64(lost(&f, LOST_UNMATCHED_ENTRY), 2);
	CHECK_EQ_U64(lost(&f, LOST_CELLS_FULL), 0);
	CHECK_EQ_U64(lost(&f, LOST_THREADS_FULL), 0);
	CHECK_EQ_U64(lost(&f, LOST_UNMATCHED_RUN), 0);
	CHECK_EQ_U64(lost(&f, LOST_RINGBUF_FULL), 0);
	fx_close(&f);
}

/* Per-interval min/max follow the epoch userspace writes into .bss; lifetime ones do not. */
static void test_epoch(void)
{
	struct fx f;
	const struct cell *c;

	if (fx_open(&f, &(struct fx_opts){ 0 })) {
		check_failures++;
		return;
	}
	ev_pair(&f, 1000, 100, 1, 2, 0, ISA_VMX, VMX_HLT);
	ev_pair(&f, 2000, 300, 1, 2, 0, ISA_VMX, VMX_HLT);
	c = cell_of(&f, 1, 2, ISA_VMX, VMX_HLT);
	CHECK_EQ_U64(c->iv_epoch, 0);
	CHECK_EQ_U64(c->iv_min_ns, 100);
	CHECK_EQ_U64(c->iv_max_ns, 300);
	f.skel->bss->epoch = 1;
	ev_pair(&f, 3000, 200, 1, 2, 0, ISA_VMX, VMX_HLT);
	CHECK_EQ_U64(c->iv_epoch, 1);
	CHECK_EQ_U64(c->iv_min_ns, 200);
	CHECK_EQ_U64(c->iv_max_ns, 200);
	CHECK_EQ_U64(c->min_ns, 100);
	CHECK_EQ_U64(c->max_ns, 300);
	f.skel->bss->epoch = 2;
	ev_pair(&f, 4000, 50, 1, 2, 0, ISA_VMX, VMX_HLT);
	ev_pair(&f, 5000, 400, 1, 2, 0, ISA_VMX, VMX_HLT);
	ev_pair(&f, 6000, 250, 1, 2, 0, ISA_VMX, VMX_HLT);
	CHECK_EQ_U64(c->iv_epoch, 2);
	CHECK_EQ_U64(c->iv_min_ns, 50);
	CHECK_EQ_U64(c->iv_max_ns, 400);
	CHECK_EQ_U64(c->min_ns, 50);
	CHECK_EQ_U64(c->max_ns, 400);
	/* An epoch with no completion leaves the cell's interval fields alone. */
	f.skel->bss->epoch = 3;
	CHECK_EQ_U64(c->iv_epoch, 2);
	CHECK_EQ_U64(c->count, 6);
	fx_close(&f);
}

static void test_user_exits(void)
{
	struct other_key ok = { .tid = 11, .isa = ISA_USER, .reason = VMEXIT_UREASON_ERRNO | EINTR };
	const struct cell *c;
	__u32 ref = 0;
	struct fx f;

	if (fx_open(&f, &(struct fx_opts){ 0 })) {
		check_failures++;
		return;
	}
	/* The thread's first KVM_RUN completes nothing and counts nothing. */
	ev_run(&f, 100, 10, 11);
	CHECK_EQ_U64(f.skel->bss->next_cell, 0);
	/* KVM_EXIT_IO handed to the VMM for 7000 ns; no kvm_exit yet, so vCPU unknown. */
	ev_uexit(&f, 1000, 10, 11, KVM_EXIT_IO_, 0);
	ev_run(&f, 8000, 10, 11);
	c = cell_of(&f, 10, 11, ISA_USER, KVM_EXIT_IO_);
	CHECK_EQ_U64(c->key.vcpu, (__u64)-1);
	CHECK_EQ_U64(c->started, 1);
	CHECK_EQ_U64(c->count, 1);
	CHECK_EQ_U64(c->total_ns, 7000);
	/* 7000: e = 12, 7000 >> 9 = 13, & 7 = 5 -> 16 + 64 + 5 = 85 */
	CHECK_EQ_U64(c->hist[85], 1);
	/* A run that failed with -EINTR: reason ERRNO|4, whatever reason the tracepoint said. */
	ev_uexit(&f, 10000, 10, 11, 0, -EINTR);
	ev_run(&f, 10300, 10, 11);
	c = cell_of(&f, 10, 11, ISA_USER, VMEXIT_UREASON_ERRNO | EINTR);
	CHECK_EQ_U64(c->count, 1);
	CHECK_EQ_U64(c->total_ns, 300);
	/* ERRNO|4 is outside the dense user slots (0..63): its cell is found through other_cells. */
	CHECK(!bpf_map__lookup_elem(f.skel->maps.other_cells, &ok, sizeof(ok), &ref, sizeof(ref),
				    0));
	CHECK_EQ_U64(ref, (__u64)(c - f.cells) + 1);
	CHECK_EQ_U64(map_count(f.skel->maps.other_cells), 1);
	/* Two user exits with no KVM_RUN between: the first one's latency is lost. */
	ev_uexit(&f, 20000, 10, 11, KVM_EXIT_MMIO_, 0);
	ev_uexit(&f, 21000, 10, 11, KVM_EXIT_MMIO_, 0);
	ev_run(&f, 21500, 10, 11);
	CHECK_EQ_U64(lost(&f, LOST_UNMATCHED_RUN), 1);
	c = cell_of(&f, 10, 11, ISA_USER, KVM_EXIT_MMIO_);
	CHECK_EQ_U64(c->started, 2);
	CHECK_EQ_U64(c->count, 1);
	CHECK_EQ_U64(c->total_ns, 500);
	/* Once a kvm_exit told the vCPU, new cells of the thread carry it. */
	ev_pair(&f, 30000, 100, 10, 11, 3, ISA_VMX, VMX_IO);
	ev_uexit(&f, 31000, 10, 11, 7 /* KVM_EXIT_HLT */, 0);
	ev_run(&f, 31010, 10, 11);
	CHECK_EQ_U64(cell_of(&f, 10, 11, ISA_USER, 7)->key.vcpu, 3);
	CHECK_EQ_U64(cell_of(&f, 10, 11, ISA_USER, KVM_EXIT_IO_)->key.vcpu, (__u64)-1);
	/* A KVM_RUN with no user exit pending completes nothing. */
	ev_run(&f, 40000, 10, 11);
	CHECK_EQ_U64(cell_of(&f, 10, 11, ISA_USER, 7)->count, 1);
	CHECK_EQ_U64(lost(&f, LOST_UNMATCHED_RUN), 1);
	CHECK_EQ_U64(lost(&f, LOST_UNMATCHED_ENTRY), 0);
	fx_close(&f);
}

/*
 * stat, top and serve count from when every program is attached: an exit begun before (a
 * kernel exit, a user exit, one of a reason outside the dense slots) completes into no cell
 * and is not lost either; the next ones count, begun and completed.
 */
static void test_count_later(void)
{
	const struct cell *c;
	struct fx f;

	if (fx_open(&f, &(struct fx_opts){ .count_later = true })) {
		check_failures++;
		return;
	}
	ev_exit(&f, 500, 10, 11, 0, ISA_VMX, VMX_IO);
	ev_uexit(&f, 1000, 10, 12, KVM_EXIT_IO_, 0);
	ev_uexit(&f, 1000, 10, 13, 0, -EINTR);
	CHECK_EQ_U64(f.skel->bss->next_cell, 0);
	f.skel->bss->counting = 1;
	ev_entry(&f, 2000, 10, 11);
	ev_run(&f, 2500, 10, 12);
	ev_run(&f, 2500, 10, 13);
	CHECK_EQ_U64(f.skel->bss->next_cell, 0);
	CHECK(lost_all_zero_but(&f, -1));

	ev_pair(&f, 3000, 100, 10, 11, 0, ISA_VMX, VMX_IO);
	c = cell_of(&f, 10, 11, ISA_VMX, VMX_IO);
	CHECK(c->started == 1 && c->count == 1 && c->total_ns == 100 && !c->inflight_ts);
	ev_uexit(&f, 4000, 10, 12, KVM_EXIT_IO_, 0);
	ev_run(&f, 4700, 10, 12);
	c = cell_of(&f, 10, 12, ISA_USER, KVM_EXIT_IO_);
	CHECK(c->started == 1 && c->count == 1 && c->total_ns == 700);
	ev_uexit(&f, 5000, 10, 13, 0, -EINTR);
	ev_run(&f, 5300, 10, 13);
	c = cell_of(&f, 10, 13, ISA_USER, VMEXIT_UREASON_ERRNO | EINTR);
	CHECK(c->started == 1 && c->count == 1 && c->total_ns == 300);
	CHECK_EQ_U64(map_count(f.skel->maps.other_cells), 1);
	CHECK(lost_all_zero_but(&f, -1));
	fx_close(&f);
}

/* Reasons outside the dense slots go through other_cells, one entry per (tid, isa, reason). */
static void test_other_reasons(void)
{
	static const struct { __u32 isa, reason; bool dense; } rs[] = {
		{ ISA_VMX, 127, true },		/* last VMX slot */
		{ ISA_VMX, 128, false },
		{ ISA_SVM, 0x0bf, true },	/* last low SVM slot */
		{ ISA_SVM, 0x0c0, false },
		{ ISA_SVM, 0x400, true },	/* NPF: first high SVM slot */
		{ ISA_SVM, 0x40f, true },
		{ ISA_SVM, 0x410, false },
		{ ISA_SVM, 0x3ff, false },
		{ ISA_SVM, 0xffffffff, false },	/* SVM_EXIT_ERR */
		{ ISA_USER, 63, true },
		{ ISA_USER, 64, false },
		{ ISA_ARM64, 0x00, true },	/* EC UNKNOWN: first arm64 slot */
		{ ISA_ARM64, 0x3f, true },	/* last EC */
		{ ISA_ARM64, 0x40, false },
		{ ISA_ARM64, 0x0ff, false },
		{ ISA_ARM64, 0x100, true },	/* IRQ: first non-trap slot */
		{ ISA_ARM64, 0x103, true },	/* IL */
		{ ISA_ARM64, 0x104, false },
		{ ISA_ARM64, 0x100 | ARM_HYP_GONE, false },
		{ 7, 1, false },		/* an ISA we do not know */
	};
	__u32 n = sizeof(rs) / sizeof(rs[0]), nr_other = 0;
	struct fx f;

	if (fx_open(&f, &(struct fx_opts){ 0 })) {
		check_failures++;
		return;
	}
	/* Each reason twice on thread 21, once on thread 22. */
	for (__u32 i = 0; i < n; i++) {
		ev_pair(&f, 1000 * i, 10 + i, 20, 21, 0, rs[i].isa, rs[i].reason);
		ev_pair(&f, 1000 * i + 500, 10 + i, 20, 21, 0, rs[i].isa, rs[i].reason);
		ev_pair(&f, 1000 * i + 700, 10 + i, 20, 22, 1, rs[i].isa, rs[i].reason);
		nr_other += !rs[i].dense;
	}
	CHECK_EQ_U64(f.skel->bss->next_cell, 2 * n);
	for (__u32 i = 0; i < n; i++) {
		const struct cell *c = cell_of(&f, 20, 21, rs[i].isa, rs[i].reason);
		struct other_key ok = { 21, rs[i].isa, rs[i].reason };
		__u32 ref = 0;
		int err;

		CHECK_EQ_U64(c->started, 2);
		CHECK_EQ_U64(c->count, 2);
		CHECK_EQ_U64(c->total_ns, 2 * (10 + i));
		CHECK_EQ_U64(cell_of(&f, 20, 22, rs[i].isa, rs[i].reason)->count, 1);
		err = bpf_map__lookup_elem(f.skel->maps.other_cells, &ok, sizeof(ok), &ref,
					   sizeof(ref), 0);
		if (rs[i].dense) {
			CHECK(err);
		} else {
			CHECK(!err);
			CHECK_EQ_U64(ref, (__u64)(c - f.cells) + 1);
		}
	}
	CHECK_EQ_U64(map_count(f.skel->maps.other_cells), 2 * nr_other);
	CHECK(lost_all_zero_but(&f, -1));
	fx_close(&f);
}

static void test_pid_filter(void)
{
	static const __u32 pids[] = { 200 };
	__u32 child = 201, stranger = 301, unfollowed = 202, late = 400;
	__u8 v, one = 1;
	struct fx f;

	if (fx_open(&f, &(struct fx_opts){ .pids = pids, .nr_pids = 1, .follow_forks = true })) {
		check_failures++;
		return;
	}
	ev_pair(&f, 1000, 100, 200, 210, 0, ISA_VMX, VMX_HLT);
	ev_pair(&f, 2000, 100, 300, 310, 0, ISA_VMX, VMX_HLT);
	CHECK_EQ_U64(f.skel->bss->next_cell, 1);
	CHECK_EQ_U64(cell_of(&f, 200, 210, ISA_VMX, VMX_HLT)->count, 1);
	CHECK(!has_cell(&f, 300, 310, ISA_VMX, VMX_HLT));
	/* The unwanted VMM is noted for serve to look at (-g), the wanted one is not. */
	CHECK(!bpf_map__lookup_elem(f.skel->maps.unwanted_vmms, &(__u32){ 300 }, 4, &v, 1, 0));
	CHECK(bpf_map__lookup_elem(f.skel->maps.unwanted_vmms, &(__u32){ 200 }, 4, &v, 1, 0));
	/* Entries of unwanted pids are not "unmatched": known thread or not. */
	ev_entry(&f, 3000, 300, 310);
	ev_entry(&f, 3000, 300, 311);
	CHECK_EQ_U64(lost(&f, LOST_UNMATCHED_ENTRY), 0);
	ev_entry(&f, 3000, 200, 211);
	CHECK_EQ_U64(lost(&f, LOST_UNMATCHED_ENTRY), 1);
	/* Forks: a child of a filtered pid joins the filter, others do not. */
	send(&f, (struct test_ctx){ .op = TOP_FORK, .tgid = 200, .tid = child });
	send(&f, (struct test_ctx){ .op = TOP_FORK, .tgid = 300, .tid = stranger });
	CHECK(!bpf_map__lookup_elem(f.skel->maps.pid_filter, &child, 4, &v, 1, 0));
	CHECK(bpf_map__lookup_elem(f.skel->maps.pid_filter, &stranger, 4, &v, 1, 0));
	ev_pair(&f, 4000, 100, child, child, 0, ISA_VMX, VMX_HLT);
	ev_pair(&f, 4000, 100, stranger, stranger, 0, ISA_VMX, VMX_HLT);
	CHECK_EQ_U64(cell_of(&f, child, child, ISA_VMX, VMX_HLT)->count, 1);
	CHECK(!has_cell(&f, stranger, stranger, ISA_VMX, VMX_HLT));
	/* User exits of an unwanted pid: nothing either. */
	ev_uexit(&f, 5000, 300, 310, KVM_EXIT_IO_, 0);
	ev_run(&f, 6000, 300, 310);
	CHECK_EQ_U64(f.skel->bss->next_cell, 2);
	/*
	 * A pid added while its threads run (serve following a guest name): ignored until
	 * filter_gen moves, then counted from the next exit; the exit in flight across the
	 * change ends as an unmatched entry.
	 */
	ev_pair(&f, 7000, 100, late, 410, 0, ISA_VMX, VMX_HLT);
	CHECK(!bpf_map__update_elem(f.skel->maps.pid_filter, &late, 4, &one, 1, BPF_ANY));
	ev_pair(&f, 8000, 100, late, 410, 0, ISA_VMX, VMX_HLT);
	CHECK(!has_cell(&f, late, 410, ISA_VMX, VMX_HLT));
	ev_exit(&f, 9000, late, 410, 0, ISA_VMX, VMX_HLT);
	f.skel->bss->filter_gen++;
	ev_entry(&f, 9100, late, 410);
	CHECK_EQ_U64(lost(&f, LOST_UNMATCHED_ENTRY), 2);
	ev_pair(&f, 10000, 100, late, 410, 0, ISA_VMX, VMX_HLT);
	CHECK_EQ_U64(cell_of(&f, late, 410, ISA_VMX, VMX_HLT)->count, 1);
	/*
	 * The followed child ends: its pid leaves the filter, so a stranger later given that pid
	 * (a new thread, as the first of its process) is not counted.
	 */
	send(&f, (struct test_ctx){ .op = TOP_PROCESS_GONE, .tgid = child });
	CHECK(bpf_map__lookup_elem(f.skel->maps.pid_filter, &child, 4, &v, 1, 0));
	ev_pair(&f, 11000, 100, child, child + 1000, 0, ISA_VMX, VMX_HLT);
	CHECK(!has_cell(&f, child, child + 1000, ISA_VMX, VMX_HLT));
	fx_close(&f);

	/* Without follow_forks, a fork adds nothing. */
	if (fx_open(&f, &(struct fx_opts){ .pids = pids, .nr_pids = 1 })) {
		check_failures++;
		return;
	}
	send(&f, (struct test_ctx){ .op = TOP_FORK, .tgid = 200, .tid = unfollowed });
	CHECK(bpf_map__lookup_elem(f.skel->maps.pid_filter, &unfollowed, 4, &v, 1, 0));
	CHECK_EQ_U64(map_count(f.skel->maps.pid_filter), 1);
	/* Nor does a -p pid's end take it out: serve and stat -p keep what they were given. */
	send(&f, (struct test_ctx){ .op = TOP_PROCESS_GONE, .tgid = 200 });
	CHECK_EQ_U64(map_count(f.skel->maps.pid_filter), 1);
	fx_close(&f);
}

static void test_vcpu_filter(void)
{
	struct fx f;

	if (fx_open(&f, &(struct fx_opts){ .filter_vcpu = true, .vcpu = 2 })) {
		check_failures++;
		return;
	}
	ev_pair(&f, 1000, 100, 1, 12, 2, ISA_VMX, VMX_HLT);
	ev_pair(&f, 1000, 100, 1, 15, 5, ISA_VMX, VMX_HLT);
	CHECK_EQ_U64(f.skel->bss->next_cell, 1);
	CHECK_EQ_U64(cell_of(&f, 1, 12, ISA_VMX, VMX_HLT)->count, 1);
	/* vCPU 5's entries are not unmatched (its exits were skipped on purpose); vCPU 2's are. */
	ev_entry(&f, 2000, 1, 15);
	CHECK_EQ_U64(lost(&f, LOST_UNMATCHED_ENTRY), 0);
	ev_entry(&f, 2000, 1, 12);
	CHECK_EQ_U64(lost(&f, LOST_UNMATCHED_ENTRY), 1);
	/* User exits: skipped for a thread known to be vCPU 5, kept for vCPU 2 ... */
	ev_uexit(&f, 3000, 1, 15, KVM_EXIT_IO_, 0);
	ev_run(&f, 3100, 1, 15);
	ev_uexit(&f, 3000, 1, 12, KVM_EXIT_IO_, 0);
	ev_run(&f, 3100, 1, 12);
	CHECK(!has_cell(&f, 1, 15, ISA_USER, KVM_EXIT_IO_));
	CHECK_EQ_U64(cell_of(&f, 1, 12, ISA_USER, KVM_EXIT_IO_)->count, 1);
	/* ... and kept while the vCPU is unknown (no kvm_exit yet): userspace decides later. */
	ev_uexit(&f, 4000, 1, 17, KVM_EXIT_IO_, 0);
	ev_run(&f, 4100, 1, 17);
	CHECK_EQ_U64(cell_of(&f, 1, 17, ISA_USER, KVM_EXIT_IO_)->key.vcpu, (__u64)-1);
	CHECK_EQ_U64(f.skel->bss->next_cell, 3);
	/* A thread's later kvm_exit naming vCPU 5 stops its recording from then on. */
	ev_pair(&f, 5000, 100, 1, 17, 5, ISA_VMX, VMX_HLT);
	ev_uexit(&f, 6000, 1, 17, KVM_EXIT_IO_, 0);
	ev_run(&f, 6100, 1, 17);
	CHECK_EQ_U64(cell_of(&f, 1, 17, ISA_USER, KVM_EXIT_IO_)->count, 1);
	CHECK_EQ_U64(f.skel->bss->next_cell, 3);
	fx_close(&f);
}

static void test_reason_filter(void)
{
	static const __u64 rs[] = {
		(__u64)ISA_VMX << 32 | VMX_IO,
		(__u64)ISA_USER << 32 | KVM_EXIT_IO_,
	};
	struct other_key ok = { 31, ISA_VMX, 200 };
	__u32 ref = 0;
	struct fx f;

	if (fx_open(&f, &(struct fx_opts){ .reasons = rs, .nr_reasons = 2 })) {
		check_failures++;
		return;
	}
	for (int i = 0; i < 3; i++) {
		ev_pair(&f, 1000 * i, 100, 30, 31, 0, ISA_VMX, VMX_IO);
		ev_pair(&f, 1000 * i + 200, 100, 30, 31, 0, ISA_VMX, VMX_EPT_VIOL);
		ev_pair(&f, 1000 * i + 400, 100, 30, 31, 0, ISA_VMX, 200);
		ev_pair(&f, 1000 * i + 600, 100, 30, 31, 0, ISA_SVM, VMX_IO);	/* other ISA */
		ev_uexit(&f, 1000 * i + 800, 30, 31, KVM_EXIT_IO_, 0);
		ev_run(&f, 1000 * i + 850, 30, 31);
		ev_uexit(&f, 1000 * i + 900, 30, 31, KVM_EXIT_MMIO_, 0);
		ev_run(&f, 1000 * i + 950, 30, 31);
	}
	/* Only the two selected reasons got cells; filtered exits are neither lost nor unmatched. */
	CHECK_EQ_U64(f.skel->bss->next_cell, 2);
	CHECK_EQ_U64(cell_of(&f, 30, 31, ISA_VMX, VMX_IO)->count, 3);
	CHECK_EQ_U64(cell_of(&f, 30, 31, ISA_USER, KVM_EXIT_IO_)->count, 3);
	CHECK(lost_all_zero_but(&f, -1));
	/* A filtered reason outside the dense slots caches CELL_FILTERED in other_cells. */
	CHECK(!bpf_map__lookup_elem(f.skel->maps.other_cells, &ok, sizeof(ok), &ref, sizeof(ref),
				    0));
	CHECK_EQ_U64(ref, CELL_FILTERED);
	fx_close(&f);
}

static void test_cells_full(void)
{
	static const __u32 reasons[] = { VMX_EXTINT, VMX_HLT, VMX_IO, VMX_MSR_WRITE,
					 VMX_EPT_VIOL };
	struct fx f;

	if (fx_open(&f, &(struct fx_opts){ .max_cells = 3 })) {
		check_failures++;
		return;
	}
	/* Two rounds of five reasons: the first three get the three cells, the last two are
	 * lost twice each: 4. Their entries are neither unmatched nor completed. */
	for (int round = 0; round < 2; round++) {
		for (int i = 0; i < 5; i++)
			ev_pair(&f, 10000 * round + 1000 * i, 100, 40, 41, 0, ISA_VMX, reasons[i]);
	}
	CHECK_EQ_U64(lost(&f, LOST_CELLS_FULL), 4);
	for (int i = 0; i < 3; i++) {
		CHECK_EQ_U64(cell_of(&f, 40, 41, ISA_VMX, reasons[i])->started, 2);
		CHECK_EQ_U64(cell_of(&f, 40, 41, ISA_VMX, reasons[i])->count, 2);
	}
	CHECK(!has_cell(&f, 40, 41, ISA_VMX, VMX_MSR_WRITE));
	CHECK(!has_cell(&f, 40, 41, ISA_VMX, VMX_EPT_VIOL));
	/* Reasons without a dense slot retry the allocation on every exit: 3 more lost; another
	 * thread's user exits too: 2 more. */
	for (int i = 0; i < 3; i++)
		ev_pair(&f, 30000 + 1000 * i, 100, 40, 41, 0, ISA_VMX, 200);
	ev_uexit(&f, 40000, 40, 42, KVM_EXIT_IO_, 0);
	ev_run(&f, 40100, 40, 42);
	ev_uexit(&f, 41000, 40, 42, 0, -EINTR);
	ev_run(&f, 41100, 40, 42);
	CHECK_EQ_U64(lost(&f, LOST_CELLS_FULL), 9);
	CHECK(lost_all_zero_but(&f, LOST_CELLS_FULL));
	/* A full array stays put: next_cell does not count on with every failed attempt. */
	CHECK_EQ_U64(f.skel->bss->next_cell, 3);
	CHECK_EQ_U64(map_count(f.skel->maps.other_cells), 0);
	fx_close(&f);
}

static int pin_cpu(void)
{
	int cpu = sched_getcpu();
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	CHECK(!sched_setaffinity(0, sizeof(set), &set));
	return cpu;
}

static void unpin_cpu(void)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	for (int i = 0; i < CPU_SETSIZE; i++)
		CPU_SET(i, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static void test_stream(void)
{
	const struct vmexit_event *e;
	struct fx f;
	int cpu, n;

	if (fx_open(&f, &(struct fx_opts){ .stream = true, .ring_bytes = 65536 })) {
		check_failures++;
		return;
	}
	cpu = pin_cpu();
	/* Ten exits of thread 51 (vCPU 4), the i-th of latency 100 i + 50 at 10000 i. */
	for (int i = 0; i < 10; i++) {
		send(&f, (struct test_ctx){ .op = TOP_EXIT, .now = 10000 * i, .tgid = 50, .tid = 51,
					    .vcpu = 4, .isa = ISA_VMX, .reason = VMX_EPT_VIOL,
					    .rip = 0xffff0000 + i, .info1 = 0x100 + i,
					    .info2 = 0x200 + i,
					    .intr_err = (__u64)(0x80000300 + i) << 32 | (7 + i) });
		ev_entry(&f, 10000 * i + 100 * i + 50, 50, 51);
	}
	/* An exit that never completes emits nothing. */
	ev_exit(&f, 200000, 50, 52, 4, ISA_VMX, VMX_HLT);
	/* Two user exits: one with KVM_EXIT_MMIO, one interrupted by a signal. */
	ev_uexit(&f, 300000, 50, 51, KVM_EXIT_MMIO_, 0);
	ev_run(&f, 302000, 50, 51);
	ev_uexit(&f, 310000, 50, 51, 0, -EINTR);
	ev_run(&f, 310040, 50, 51);
	/* An IO exit to the VMM in a guest IO exit: it carries the guest exit's RIP, flagged. */
	send(&f, (struct test_ctx){ .op = TOP_EXIT, .now = 320000, .tgid = 50, .tid = 51,
				    .vcpu = 4, .isa = ISA_VMX, .reason = VMX_IO,
				    .rip = 0xffffffff81001234ull });
	ev_uexit(&f, 320100, 50, 51, KVM_EXIT_IO_, 0);
	ev_run(&f, 320500, 50, 51);
	ev_entry(&f, 320600, 50, 51);
	/* A TSC offset write: vCPU from the event, offsets in info1/info2. */
	send(&f, (struct test_ctx){ .op = TOP_TSC, .now = 400000, .tgid = 50, .tid = 51,
				    .vcpu = 4, .info1 = 1234, .info2 = (__u64)-5678 });
	n = ring_buffer__consume(f.rb);
	unpin_cpu();
	CHECK_EQ_U64(n, 15);
	CHECK_EQ_U64(f.nr_evs, 15);
	for (int i = 0; i < 10 && i < f.nr_evs; i++) {
		e = &f.evs[i];
		CHECK_EQ_U64(e->type, VMEXIT_EV_EXIT);
		CHECK_EQ_U64(e->ts_ns, 10000 * i);
		CHECK_EQ_U64(e->latency_ns, 100 * i + 50);
		CHECK_EQ_U64(e->rip, 0xffff0000 + i);
		CHECK_EQ_U64(e->info1, 0x100 + i);
		CHECK_EQ_U64(e->info2, 0x200 + i);
		CHECK_EQ_U64(e->intr_info, 0x80000300 + i);
		CHECK_EQ_U64(e->error_code, 7 + i);
		CHECK_EQ_U64(e->tgid, 50);
		CHECK_EQ_U64(e->tid, 51);
		CHECK_EQ_U64(e->vcpu, 4);
		CHECK_EQ_U64(e->isa, ISA_VMX);
		CHECK_EQ_U64(e->reason, VMX_EPT_VIOL);
		CHECK_EQ_U64(e->cpu, cpu);
	}
	if (f.nr_evs == 15) {
		e = &f.evs[10];
		CHECK_EQ_U64(e->type, VMEXIT_EV_USER_EXIT);
		CHECK_EQ_U64(e->ts_ns, 300000);
		CHECK_EQ_U64(e->latency_ns, 2000);
		CHECK_EQ_U64(e->isa, ISA_USER);
		CHECK_EQ_U64(e->reason, KVM_EXIT_MMIO_);
		CHECK_EQ_U64(e->info1, 0);
		CHECK_EQ_U64(e->rip, 0);
		CHECK_EQ_U64(e->error_code, 0);
		CHECK_EQ_U64(e->vcpu, 4);
		e = &f.evs[11];
		CHECK_EQ_U64(e->type, VMEXIT_EV_USER_EXIT);
		CHECK_EQ_U64(e->ts_ns, 310000);
		CHECK_EQ_U64(e->latency_ns, 40);
		CHECK_EQ_U64(e->reason, VMEXIT_UREASON_ERRNO | EINTR);
		CHECK_EQ_U64(e->info1, (__u64)(__s64)-EINTR);
		e = &f.evs[12];
		CHECK_EQ_U64(e->type, VMEXIT_EV_USER_EXIT);
		CHECK_EQ_U64(e->reason, KVM_EXIT_IO_);
		CHECK_EQ_U64(e->rip, 0xffffffff81001234ull);
		CHECK_EQ_U64(e->error_code, VMEXIT_UEXIT_RIP);
		e = &f.evs[13];
		CHECK_EQ_U64(e->type, VMEXIT_EV_EXIT);
		CHECK_EQ_U64(e->rip, 0xffffffff81001234ull);
		e = &f.evs[14];
		CHECK_EQ_U64(e->type, VMEXIT_EV_TSC_OFFSET);
		CHECK_EQ_U64(e->ts_ns, 400000);
		CHECK_EQ_U64(e->latency_ns, 0);
		CHECK_EQ_U64(e->vcpu, 4);
		CHECK_EQ_U64(e->info1, 1234);
		CHECK_EQ_U64(e->info2, (__u64)-5678);
		CHECK_EQ_U64(e->tid, 51);
		CHECK_EQ_U64(e->cpu, cpu);
	}
	CHECK(lost_all_zero_but(&f, -1));
	fx_close(&f);
}

static void ev_arm64(struct fx *f, __u64 now, __u32 tgid, __u32 tid, __u32 ret, __u32 esr_ec,
		     __u64 pc)
{
	send(f, (struct test_ctx){ .op = TOP_ARM64_EXIT, .now = now, .tgid = tgid, .tid = tid,
				   .err = (__s32)ret, .reason = esr_ec, .rip = pc });
}

/*
 * arm64 kvm_exit records as the tracepoint program turns them into exits: a trap is its EC,
 * anything else 0x100 | ret (esr_ec is 0 then, but a stale one must not leak in either). No
 * vCPU id on arm64: cells carry -1 and userspace names the vCPU from the thread.
 */
static void test_arm64_exits(void)
{
	static const struct { __u32 ret, ec, lat, reason; const char *name; } ex[] = {
		{ ARM_TRAP, EC_DABT_LOW, 1000, 0x24, "DABT_LOW" },
		{ ARM_TRAP, EC_WFX, 50000, 0x01, "WFx" },
		{ ARM_IRQ, 0, 300, 0x100, "IRQ" },
		{ ARM_TRAP, EC_HVC64, 700, 0x16, "HVC64" },
		{ ARM_IL, 0, 40, 0x103, "IL" },
		{ ARM_IRQ, EC_SYS64, 500, 0x100, "IRQ" },	/* EC ignored: not a trap */
		{ ARM_HYP_GONE, 0, 90, 0x100 | ARM_HYP_GONE, "HYP_GONE" },
		{ ARM_TRAP, EC_DABT_LOW, 3000, 0x24, "DABT_LOW" },
	};
	struct other_key ok = { .tid = 61, .isa = ISA_ARM64, .reason = 0x100 | ARM_HYP_GONE };
	char name[REASON_STR_MAX];
	const struct cell *c;
	__u32 n = sizeof(ex) / sizeof(ex[0]), ref = 0;
	struct fx f;
	int cpu;

	if (fx_open(&f, &(struct fx_opts){ .stream = true, .ring_bytes = 65536 })) {
		check_failures++;
		return;
	}
	cpu = pin_cpu();
	for (__u32 i = 0; i < n; i++) {
		__u64 t = 100000 * (i + 1);

		ev_arm64(&f, t, 60, 61, ex[i].ret, ex[i].ec, 0xffff800010000000ull + i);
		ev_entry(&f, t + ex[i].lat, 60, 61);
	}
	CHECK_EQ_U64(ring_buffer__consume(f.rb), n);
	unpin_cpu();
	CHECK_EQ_U64(f.nr_evs, n);
	for (__u32 i = 0; i < n && i < (__u32)f.nr_evs; i++) {
		const struct vmexit_event *e = &f.evs[i];

		CHECK_EQ_U64(e->type, VMEXIT_EV_EXIT);
		CHECK_EQ_U64(e->isa, ISA_ARM64);
		CHECK_EQ_U64(e->reason, ex[i].reason);
		CHECK_EQ_U64(e->latency_ns, ex[i].lat);
		CHECK_EQ_U64(e->rip, 0xffff800010000000ull + i);
		CHECK_EQ_U64(e->vcpu, (__u64)-1);
		CHECK_EQ_U64(e->intr_info, 0);
		CHECK_EQ_U64(e->error_code, 0);
		CHECK_EQ_U64(e->cpu, cpu);
		CHECK_STR(reason_str(e->isa, e->reason, name, sizeof(name)), ex[i].name);
	}
	/* Six distinct reasons: DABT_LOW twice, IRQ twice. */
	CHECK_EQ_U64(f.skel->bss->next_cell, 6);
	c = cell_of(&f, 60, 61, ISA_ARM64, EC_DABT_LOW);
	CHECK_EQ_U64(c->key.vcpu, (__u64)-1);
	CHECK_EQ_U64(c->count, 2);
	CHECK_EQ_U64(c->total_ns, 4000);
	CHECK_EQ_U64(c->hist[B1000], 1);
	CHECK_EQ_U64(c->hist[B3000], 1);
	CHECK_EQ_U64(cell_of(&f, 60, 61, ISA_ARM64, 0x100)->total_ns, 800);
	CHECK_EQ_U64(cell_of(&f, 60, 61, ISA_ARM64, EC_WFX)->max_ns, 50000);
	CHECK(!has_cell(&f, 60, 61, ISA_ARM64, EC_SYS64));
	CHECK(!has_cell(&f, 60, 61, ISA_ARM64, 0x102));
	/* Only HYP_GONE is outside the dense arm64 slots. */
	CHECK_EQ_U64(map_count(f.skel->maps.other_cells), 1);
	CHECK(!bpf_map__lookup_elem(f.skel->maps.other_cells, &ok, sizeof(ok), &ref, sizeof(ref),
				    0));
	CHECK_EQ_U64(ref, (__u64)(cell_of(&f, 60, 61, ISA_ARM64, ok.reason) - f.cells) + 1);
	/* The same EC on x86 is another cell: the ISA is part of the key. */
	ev_pair(&f, 2000000, 10, 60, 61, 0, ISA_VMX, EC_DABT_LOW);
	CHECK_EQ_U64(cell_of(&f, 60, 61, ISA_ARM64, EC_DABT_LOW)->count, 2);
	CHECK_EQ_U64(cell_of(&f, 60, 61, ISA_VMX, EC_DABT_LOW)->count, 1);
	CHECK(lost_all_zero_but(&f, -1));
	fx_close(&f);
}

static void test_stream_filters(void)
{
	/* min latency 1000 ns, then 1 in 3: the records are the 1st, 4th, 7th exit of at least
	 * 1000 ns: 1000, 4000 and 7000 (999 and 500 are below the minimum, not sampled). */
	static const __u64 lats[] = { 500, 1000, 2000, 3000, 999, 4000, 5000, 6000, 7000 };
	struct fx f;

	if (fx_open(&f, &(struct fx_opts){ .stream = true, .min_lat = 1000,
					   .sample_every = 3 })) {
		check_failures++;
		return;
	}
	for (__u32 i = 0; i < sizeof(lats) / sizeof(lats[0]); i++)
		ev_pair(&f, 100000 * i, lats[i], 60, 61, 0, ISA_VMX, VMX_IO);
	CHECK_EQ_U64(ring_buffer__consume(f.rb), 3);
	CHECK_EQ_U64(f.evs[0].latency_ns, 1000);
	CHECK_EQ_U64(f.evs[1].latency_ns, 4000);
	CHECK_EQ_U64(f.evs[2].latency_ns, 7000);
	CHECK_EQ_U64(f.evs[2].ts_ns, 800000);
	/* The statistics see every exit, whatever the stream keeps. */
	CHECK_EQ_U64(cell_of(&f, 60, 61, ISA_VMX, VMX_IO)->count, 9);
	/* Sampling counts per thread: another thread's first eligible exit is emitted. */
	ev_pair(&f, 2000000, 1500, 60, 62, 1, ISA_VMX, VMX_IO);
	CHECK_EQ_U64(ring_buffer__consume(f.rb), 1);
	CHECK_EQ_U64(f.evs[3].tid, 62);
	CHECK(lost_all_zero_but(&f, -1));
	fx_close(&f);
}

/*
 * One page of ring buffer and nobody reading: a record takes round_up(72 + 8 byte header, 8)
 * = 80 bytes and the kernel accepts one while the producer stays at most size - 1 = 4095 bytes
 * ahead of the consumer, so floor(4095 / 80) = 51 records fit and the others are lost.
 */
static void test_ringbuf_full(void)
{
	const int n = 100, fit = 4095 / 80;
	struct fx f;

	if (fx_open(&f, &(struct fx_opts){ .stream = true, .ring_bytes = 4096 })) {
		check_failures++;
		return;
	}
	CHECK_EQ_U64(VMEXIT_EVENT_BASE_LEN, 72);
	for (int i = 0; i < n; i++)
		ev_pair(&f, 1000 * i, 10 + i, 70, 71, 0, ISA_VMX, VMX_IO);
	CHECK_EQ_U64(lost(&f, LOST_RINGBUF_FULL), n - fit);
	CHECK_EQ_U64(ring_buffer__consume(f.rb), fit);
	CHECK_EQ_U64(f.nr_evs + lost(&f, LOST_RINGBUF_FULL), n);
	/* The ones kept are the first ones, in order. */
	for (int i = 0; i < fit && i < f.nr_evs; i++)
		CHECK_EQ_U64(f.evs[i].latency_ns, 10 + i);
	CHECK_EQ_U64(cell_of(&f, 70, 71, ISA_VMX, VMX_IO)->count, n);
	/* Drained, it takes records again. */
	ev_pair(&f, 500000, 5, 70, 71, 0, ISA_VMX, VMX_IO);
	CHECK_EQ_U64(ring_buffer__consume(f.rb), 1);
	CHECK_EQ_U64(lost(&f, LOST_RINGBUF_FULL), n - fit);
	fx_close(&f);
}

struct other_thread {
	struct fx *f;
	__u32 tgid, tid;
};

static void *exit_elsewhere(void *arg)
{
	struct other_thread *o = arg;

	ev_exit(o->f, 5000, o->tgid, o->tid, 0, ISA_VMX, VMX_HLT);
	return NULL;
}

/*
 * kvm tracepoint records, built byte by byte at the offsets and sizes the running kernel's BTF
 * gives (so the CO-RE relocations of the decoders are exercised too), through the decoders and
 * handle_kvm_event(): the ring-buffer record must carry each field in the slot
 * include/vmexit.h assigns it.
 */
static struct btf *kvm_btf, *vmlinux_btf;

static const struct btf_type *kvm_struct(const char *name)
{
	__s32 id = btf__find_by_name_kind(kvm_btf, name, BTF_KIND_STRUCT);

	return id > 0 ? btf__type_by_id(kvm_btf, id) : NULL;
}

/* The BTF holding the kvm tracepoint records: vmlinux when kvm is built in, else kvm's. */
static struct btf *find_kvm_btf(void)
{
	vmlinux_btf = btf__load_vmlinux_btf();
	if (!vmlinux_btf)
		return NULL;
	kvm_btf = vmlinux_btf;
	if (kvm_struct("trace_event_raw_kvm_pio"))
		return kvm_btf;
	kvm_btf = btf__load_module_btf("kvm", vmlinux_btf);
	if (kvm_btf && kvm_struct("trace_event_raw_kvm_pio"))
		return kvm_btf;
	btf__free(kvm_btf);
	kvm_btf = NULL;
	return NULL;
}

struct krec {
	const char *type;	/* trace_event_raw_kvm_<event> */
	__u64 b[8];
};

/* Stores v into the record's field at the kernel's offset and width; false if it has none. */
static bool krec_set(struct krec *r, const char *field, __u64 v)
{
	const struct btf_type *t = kvm_struct(r->type);
	const struct btf_member *m;

	if (!t)
		return false;
	m = btf_members(t);
	for (int i = 0; i < btf_vlen(t); i++, m++) {
		__u32 off = btf_member_bit_offset(t, i) / 8;
		__s64 size = btf__resolve_size(kvm_btf, m->type);

		if (strcmp(btf__name_by_offset(kvm_btf, m->name_off), field))
			continue;
		if (size <= 0 || size > 8 || off + (size_t)size > sizeof(r->b)) {
			fprintf(stderr, "%s.%s: %lld bytes at %u\n", r->type, field,
				(long long)size, off);
			check_failures++;
			return false;
		}
		memcpy((char *)r->b + off, &v, size);	/* little-endian: the low bytes */
		return true;
	}
	return false;
}

static void send_kvm(struct fx *f, __u32 event, __u64 now, __u32 tgid, __u32 tid,
		     const struct krec *r)
{
	struct test_kvm_ctx c = { .event = event, .now = now, .tgid = tgid, .tid = tid };
	LIBBPF_OPTS(bpf_test_run_opts, o, .ctx_in = &c, .ctx_size_in = sizeof(c));
	int err;

	memcpy(c.rec, r->b, sizeof(c.rec));
	err = bpf_prog_test_run_opts(f->kvm_fd, &o);
	if (err || o.retval) {
		fprintf(stderr, "run_kvm_record %u: err %d retval %d\n", event, err,
			(int)o.retval);
		check_failures++;
	}
}

static struct krec pio_rec(__u32 port, __u32 val)
{
	struct krec r = { .type = "trace_event_raw_kvm_pio" };

	CHECK(krec_set(&r, "rw", 1));
	CHECK(krec_set(&r, "port", port));
	CHECK(krec_set(&r, "size", 1));
	CHECK(krec_set(&r, "count", 2));
	CHECK(krec_set(&r, "val", val));
	return r;
}

#define CHECK_KVM_EV(e, id, i1, i2, rp, ii, ec, vc)		\
	do {							\
		CHECK_EQ_U64((e)->type, VMEXIT_EV_KVM_EVENT);	\
		CHECK_EQ_U64((e)->reason, id);			\
		CHECK_EQ_U64((e)->isa, 0);			\
		CHECK_EQ_U64((e)->latency_ns, 0);		\
		CHECK_EQ_U64((e)->info1, i1);			\
		CHECK_EQ_U64((e)->info2, i2);			\
		CHECK_EQ_U64((e)->rip, rp);			\
		CHECK_EQ_U64((e)->intr_info, ii);		\
		CHECK_EQ_U64((e)->error_code, ec);		\
		CHECK_EQ_U64((e)->vcpu, (__u64)(__s64)(vc));	\
	} while (0)

static void test_kvm_records(void)
{
	struct krec pio, mmio = { .type = "trace_event_raw_kvm_mmio" };
	struct krec msr = { .type = "trace_event_raw_kvm_msr" };
	struct krec cpuid = { .type = "trace_event_raw_kvm_cpuid" };
	struct krec virq = { .type = "trace_event_raw_kvm_inj_virq" };
	struct krec pf = { .type = "trace_event_raw_kvm_page_fault" };
	bool new_virq, new_pf;
	const struct vmexit_event *e;
	struct fx f;
	int cpu, n;

	if (!find_kvm_btf()) {
		printf("note: the kernel BTF has no kvm tracepoint types: not tested\n");
		btf__free(vmlinux_btf);
		vmlinux_btf = NULL;
		return;
	}
	pio = pio_rec(0x3f8, 0x41);
	CHECK(krec_set(&mmio, "type", 2));
	CHECK(krec_set(&mmio, "len", 4));
	CHECK(krec_set(&mmio, "gpa", 0xfee00030));
	CHECK(krec_set(&mmio, "val", 0x1122334455667788ull));
	CHECK(krec_set(&msr, "write", 1));
	CHECK(krec_set(&msr, "ecx", 0xc0000080));
	CHECK(krec_set(&msr, "data", 0xd01));
	CHECK(krec_set(&msr, "exception", 1));
	CHECK(krec_set(&cpuid, "function", 0x80000001));
	CHECK(krec_set(&cpuid, "index", 3));
	/* Registers are unsigned long in the record: only their low 32 bits are CPUID's. */
	CHECK(krec_set(&cpuid, "rax", 0xffffffff00001111ull));
	CHECK(krec_set(&cpuid, "rbx", 0x2222));
	CHECK(krec_set(&cpuid, "rcx", 0x3333));
	CHECK(krec_set(&cpuid, "rdx", 0x4444));
	CHECK(krec_set(&cpuid, "found", 1));
	CHECK(krec_set(&cpuid, "used_max_basic", 1));
	/* Before 5.19 the vector was irq and there were no flags; before 6.1 no vCPU or RIP. */
	new_virq = krec_set(&virq, "vector", 0xec);
	if (new_virq) {
		CHECK(krec_set(&virq, "soft", 1));
		CHECK(krec_set(&virq, "reinjected", 0));
	} else {
		CHECK(krec_set(&virq, "irq", 0xec));
	}
	new_pf = krec_set(&pf, "vcpu_id", 5);
	if (new_pf)
		CHECK(krec_set(&pf, "guest_rip", 0xffffffff81000000ull));
	CHECK(krec_set(&pf, "fault_address", 0x7f0000001000ull));
	CHECK(krec_set(&pf, "error_code", new_pf ? 0x100000006ull : 6));

	if (fx_open(&f, &(struct fx_opts){ .stream = true, .kvm = true })) {
		check_failures++;
		return;
	}
	cpu = pin_cpu();
	/* Thread 81's kvm_exit (still in flight: nothing streamed) named its vCPU: 3. */
	ev_exit(&f, 50, 80, 81, 3, ISA_VMX, VMX_IO);
	send_kvm(&f, VMEXIT_KVM_PIO, 1000, 80, 81, &pio);
	send_kvm(&f, VMEXIT_KVM_MMIO, 2000, 80, 82, &mmio);	/* thread 82: vCPU unknown */
	send_kvm(&f, VMEXIT_KVM_MSR, 3000, 80, 81, &msr);
	send_kvm(&f, VMEXIT_KVM_CPUID, 4000, 80, 81, &cpuid);
	send_kvm(&f, VMEXIT_KVM_INJ_VIRQ, 5000, 80, 81, &virq);
	send_kvm(&f, VMEXIT_KVM_PAGE_FAULT, 6000, 80, 81, &pf);
	n = ring_buffer__consume(f.rb);
	unpin_cpu();
	CHECK_EQ_U64(n, 6);
	CHECK_EQ_U64(f.nr_evs, 6);
	if (f.nr_evs == 6) {
		for (int i = 0; i < 6; i++) {
			CHECK_EQ_U64(f.evs[i].ts_ns, 1000 * (i + 1));
			CHECK_EQ_U64(f.evs[i].tgid, 80);
			CHECK_EQ_U64(f.evs[i].tid, i == 1 ? 82 : 81);
			CHECK_EQ_U64(f.evs[i].cpu, cpu);
		}
		/* pio: port, val, count, rw, size. */
		CHECK_KVM_EV(&f.evs[0], VMEXIT_KVM_PIO, 0x3f8, 0x41, 2, 1, 1, 3);
		/* mmio: gpa, val, -, type, len. */
		CHECK_KVM_EV(&f.evs[1], VMEXIT_KVM_MMIO, 0xfee00030, 0x1122334455667788ull, 0, 2,
			     4, -1);
		/* msr: index, data, -, write, exception. */
		CHECK_KVM_EV(&f.evs[2], VMEXIT_KVM_MSR, 0xc0000080, 0xd01, 0, 1, 1, 3);
		/* cpuid: function, ebx:eax, edx:ecx, index, found | used_max_basic << 1. */
		CHECK_KVM_EV(&f.evs[3], VMEXIT_KVM_CPUID, 0x80000001, 0x0000222200001111ull,
			     0x0000444400003333ull, 3, 3, 3);
		/* inj_virq: vector, -, -, soft, reinjected. */
		CHECK_KVM_EV(&f.evs[4], VMEXIT_KVM_INJ_VIRQ, 0xec, 0, 0, new_virq, 0, 3);
		/* page_fault: address, error code, guest RIP, -, error code's low half; the vCPU
		 * the record names wins over the thread's. */
		e = &f.evs[5];
		if (new_pf)
			CHECK_KVM_EV(e, VMEXIT_KVM_PAGE_FAULT, 0x7f0000001000ull, 0x100000006ull,
				     0xffffffff81000000ull, 0, 6, 5);
		else
			CHECK_KVM_EV(e, VMEXIT_KVM_PAGE_FAULT, 0x7f0000001000ull, 6, 0, 0, 6, 3);
	}
	CHECK(lost_all_zero_but(&f, -1));
	/* Not exits: they make no statistics cells (the in-flight exit made the only one). */
	CHECK_EQ_U64(nr_cells(&f), 1);
	fx_close(&f);

	/* The pid filter: only VMM 90's events. */
	if (!fx_open(&f, &(struct fx_opts){ .stream = true, .kvm = true,
					    .pids = (const __u32[]){ 90 }, .nr_pids = 1 })) {
		send_kvm(&f, VMEXIT_KVM_PIO, 1000, 80, 81, &pio);
		send_kvm(&f, VMEXIT_KVM_PIO, 2000, 90, 91, &pio);
		CHECK_EQ_U64(ring_buffer__consume(f.rb), 1);
		CHECK_EQ_U64(f.evs[0].tgid, 90);
		fx_close(&f);
	} else {
		check_failures++;
	}

	/*
	 * -c 3: thread 81 is on vCPU 3 and passes, thread 84 on vCPU 4 does not; thread 82 has
	 * no known vCPU and passes (userspace names it); a page fault naming vCPU 5 does not.
	 */
	if (!fx_open(&f, &(struct fx_opts){ .stream = true, .kvm = true, .filter_vcpu = true,
					    .vcpu = 3 })) {
		ev_exit(&f, 10, 80, 81, 3, ISA_VMX, VMX_IO);
		ev_exit(&f, 20, 80, 84, 4, ISA_VMX, VMX_IO);
		send_kvm(&f, VMEXIT_KVM_PIO, 1000, 80, 81, &pio);
		send_kvm(&f, VMEXIT_KVM_PIO, 2000, 80, 84, &pio);
		send_kvm(&f, VMEXIT_KVM_PIO, 3000, 80, 82, &pio);
		send_kvm(&f, VMEXIT_KVM_PAGE_FAULT, 4000, 80, 81, &pf);
		n = ring_buffer__consume(f.rb);
		CHECK_EQ_U64(n, new_pf ? 2 : 3);
		CHECK_EQ_U64(f.evs[0].tid, 81);
		CHECK_EQ_U64(f.evs[0].vcpu, 3);
		CHECK_EQ_U64(f.evs[1].tid, 82);
		CHECK_EQ_U64(f.evs[1].vcpu, (__u64)-1);
		fx_close(&f);
	} else {
		check_failures++;
	}

	/*
	 * msi_set_irq, apic_accept_irq, halt_poll_ns, with the ring buffer on for kvm events alone
	 * (top --kvm-events): their records arrive, completed exits send none. halt_poll_ns names
	 * its vCPU (6); the others take thread 81's (3).
	 */
	if (!fx_open(&f, &(struct fx_opts){ .kvm_events = true, .kvm = true })) {
		struct krec msi = { .type = "trace_event_raw_kvm_msi_set_irq" };
		struct krec apic = { .type = "trace_event_raw_kvm_apic_accept_irq" };
		struct krec halt = { .type = "trace_event_raw_kvm_halt_poll_ns" };

		CHECK(krec_set(&msi, "address", 0xfee01000));
		CHECK(krec_set(&msi, "data", 0x4031));
		CHECK(krec_set(&apic, "apicid", 2));
		CHECK(krec_set(&apic, "dm", 0x400));
		CHECK(krec_set(&apic, "tm", 1));
		CHECK(krec_set(&apic, "vec", 0xef));
		CHECK(krec_set(&halt, "grow", 1));
		CHECK(krec_set(&halt, "vcpu_id", 6));
		CHECK(krec_set(&halt, "new", 20000));
		CHECK(krec_set(&halt, "old", 10000));
		ev_pair(&f, 10, 100, 80, 81, 3, ISA_VMX, VMX_IO);
		send_kvm(&f, VMEXIT_KVM_MSI_SET_IRQ, 1000, 80, 81, &msi);
		send_kvm(&f, VMEXIT_KVM_APIC_ACCEPT_IRQ, 2000, 80, 81, &apic);
		send_kvm(&f, VMEXIT_KVM_HALT_POLL_NS, 3000, 80, 81, &halt);
		CHECK_EQ_U64(ring_buffer__consume(f.rb), 3);
		if (f.nr_evs == 3) {
			/* msi_set_irq: address, data. */
			CHECK_KVM_EV(&f.evs[0], VMEXIT_KVM_MSI_SET_IRQ, 0xfee01000, 0x4031, 0, 0, 0,
				     3);
			/* apic_accept_irq: apicid, vec, -, dm, tm. */
			CHECK_KVM_EV(&f.evs[1], VMEXIT_KVM_APIC_ACCEPT_IRQ, 2, 0xef, 0, 0x400, 1,
				     3);
			/* halt_poll_ns: new, old, -, grow; the record's vCPU. */
			CHECK_KVM_EV(&f.evs[2], VMEXIT_KVM_HALT_POLL_NS, 20000, 10000, 0, 1, 0, 6);
		}
		CHECK_EQ_U64(cell_of(&f, 80, 81, ISA_VMX, VMX_IO)->count, 1);
		fx_close(&f);
	} else {
		check_failures++;
	}

	/*
	 * top counts kvm events beside the exits of its intervals, and exits count from when
	 * counting starts (count_gated): a kvm event before that is not sent either.
	 */
	if (!fx_open(&f, &(struct fx_opts){ .kvm_events = true, .kvm = true,
					   .count_later = true })) {
		send_kvm(&f, VMEXIT_KVM_PIO, 1000, 80, 81, &pio);
		CHECK_EQ_U64(ring_buffer__consume(f.rb), 0);
		f.skel->bss->counting = 1;
		send_kvm(&f, VMEXIT_KVM_PIO, 2000, 80, 81, &pio);
		CHECK_EQ_U64(ring_buffer__consume(f.rb), 1);
		CHECK_EQ_U64(f.nr_evs, 1);
		CHECK_EQ_U64(f.evs[0].ts_ns, 2000);
		CHECK(lost_all_zero_but(&f, -1));
		fx_close(&f);
	} else {
		check_failures++;
	}

	/* A full ring buffer counts them lost like exits: 51 of 60 fit in a page (see above). */
	if (!fx_open(&f, &(struct fx_opts){ .stream = true, .kvm = true, .ring_bytes = 4096 })) {
		for (int i = 0; i < 60; i++)
			send_kvm(&f, VMEXIT_KVM_PIO, 1000 * i, 80, 81, &pio);
		CHECK_EQ_U64(lost(&f, LOST_RINGBUF_FULL), 60 - 4095 / 80);
		CHECK_EQ_U64(ring_buffer__consume(f.rb), 4095 / 80);
		CHECK(lost_all_zero_but(&f, LOST_RINGBUF_FULL));
		fx_close(&f);
	} else {
		check_failures++;
	}
	if (kvm_btf != vmlinux_btf)
		btf__free(kvm_btf);
	btf__free(vmlinux_btf);
	kvm_btf = vmlinux_btf = NULL;
}

/* The task-storage path (the default on 5.11+): state follows the running task, not the tid. */
static void test_task_storage(void)
{
	__u32 tgid = getpid(), tid = syscall(SYS_gettid);
	struct other_thread o;
	const struct cell *c;
	pthread_t th;
	struct fx f;

	if (fx_open(&f, &(struct fx_opts){ .task_storage = true })) {
		check_failures++;
		return;
	}
	/* The test thread's first entry: no storage yet, counted unmatched. */
	ev_entry(&f, 100, tgid, tid);
	CHECK_EQ_U64(lost(&f, LOST_UNMATCHED_ENTRY), 1);
	ev_pair(&f, 1000, 1000, tgid, tid, 0, ISA_VMX, VMX_IO);
	ev_pair(&f, 3000, 500, tgid, tid, 0, ISA_VMX, VMX_IO);
	c = cell_of(&f, tgid, tid, ISA_VMX, VMX_IO);
	CHECK_EQ_U64(c->count, 2);
	CHECK_EQ_U64(c->total_ns, 1500);
	CHECK_EQ_U64(c->hist[B1000], 1);
	CHECK_EQ_U64(c->hist[B500], 1);
	/* The LRU hash is not used on this path. */
	CHECK_EQ_U64(map_count(f.skel->maps.thread_hash), 0);
	/* An exit begun by another thread is not completed by this thread's entry. */
	o.f = &f;
	o.tgid = tgid;
	o.tid = tid + 1000000;
	CHECK(!pthread_create(&th, NULL, exit_elsewhere, &o));
	CHECK(!pthread_join(th, NULL));
	ev_entry(&f, 6000, tgid, tid);
	CHECK_EQ_U64(lost(&f, LOST_UNMATCHED_ENTRY), 2);
	CHECK_EQ_U64(cell_of(&f, tgid, tid + 1000000, ISA_VMX, VMX_HLT)->started, 1);
	CHECK_EQ_U64(cell_of(&f, tgid, tid + 1000000, ISA_VMX, VMX_HLT)->count, 0);
	/* User exits on the same task storage. */
	ev_uexit(&f, 10000, tgid, tid, KVM_EXIT_IO_, 0);
	ev_run(&f, 13000, tgid, tid);
	CHECK_EQ_U64(cell_of(&f, tgid, tid, ISA_USER, KVM_EXIT_IO_)->total_ns, 3000);
	CHECK_EQ_U64(cell_of(&f, tgid, tid, ISA_USER, KVM_EXIT_IO_)->key.vcpu, 0);
	fx_close(&f);
}

static void ev_out(struct fx *f, __u64 now, __u32 tgid, __u32 tid, bool runnable)
{
	send(f, (struct test_ctx){ .op = TOP_SWITCH_OUT, .now = now, .tgid = tgid, .tid = tid,
				   .err = runnable });
}

static void ev_in(struct fx *f, __u64 now, __u32 tgid, __u32 tid)
{
	send(f, (struct test_ctx){ .op = TOP_SWITCH_IN, .now = now, .tgid = tgid, .tid = tid });
}

static void ev_wake(struct fx *f, __u64 now, __u32 tgid, __u32 tid)
{
	send(f, (struct test_ctx){ .op = TOP_WAKEUP, .now = now, .tgid = tgid, .tid = tid });
}

static void check_split(const struct cell *c, __u64 oncpu, __u64 blocked, __u64 runq)
{
	CHECK_EQ_U64(c->oncpu_ns, oncpu);
	CHECK_EQ_U64(c->blocked_ns, blocked);
	CHECK_EQ_U64(c->runq_ns, runq);
	CHECK_EQ_U64(c->oncpu_ns + c->blocked_ns + c->runq_ns, c->total_ns);
}

/*
 * --split: the thread's context switches while exits are in flight, on both per-thread state
 * paths (tid is the caller's own on the task-storage one).
 */
static void split_sequence(bool task)
{
	__u32 tgid = task ? getpid() : 300, tid = task ? syscall(SYS_gettid) : 301;
	struct fx f;

	if (fx_open(&f, &(struct fx_opts){ .split = true, .task_storage = task })) {
		check_failures++;
		return;
	}
	/*
	 * A kernel exit at 0 handed to the VMM at 1000: the VMM sleeps from 2000 to 7000 (blocked
	 * 5000), is preempted from 8000 to 8300 (runq 300), and enters KVM_RUN at 10000: 9000 in
	 * the VMM = 3700 on CPU + 5000 + 300. The kernel exit, done at 12000, holds the same
	 * off-CPU time: 12000 = 6700 + 5000 + 300.
	 */
	ev_exit(&f, 0, tgid, tid, 0, ISA_VMX, VMX_IO);
	ev_uexit(&f, 1000, tgid, tid, KVM_EXIT_IO_, 0);
	ev_out(&f, 2000, tgid, tid, false);
	ev_in(&f, 7000, tgid, tid);
	ev_out(&f, 8000, tgid, tid, true);
	ev_in(&f, 8300, tgid, tid);
	ev_run(&f, 10000, tgid, tid);
	ev_entry(&f, 12000, tgid, tid);
	check_split(cell_of(&f, tgid, tid, ISA_USER, KVM_EXIT_IO_), 3700, 5000, 300);
	check_split(cell_of(&f, tgid, tid, ISA_VMX, VMX_IO), 6700, 5000, 300);
	/* Off CPU with nothing in flight (in the guest): no exit gets it. */
	ev_out(&f, 20000, tgid, tid, false);
	ev_in(&f, 25000, tgid, tid);
	ev_pair(&f, 30000, 1000, tgid, tid, 0, ISA_VMX, VMX_HLT);
	check_split(cell_of(&f, tgid, tid, ISA_VMX, VMX_HLT), 1000, 0, 0);
	/*
	 * A halted vCPU: HLT at 40000, asleep until its wakeup at 90000, waits for a CPU until
	 * 90400, entry at 90500: 50000 blocked, 400 runq, 100 on CPU. A second wakeup while it
	 * waits changes nothing.
	 */
	ev_exit(&f, 40000, tgid, tid, 0, ISA_VMX, VMX_HLT);
	ev_out(&f, 40000, tgid, tid, false);
	ev_wake(&f, 90000, tgid, tid);
	ev_wake(&f, 90200, tgid, tid);
	ev_in(&f, 90400, tgid, tid);
	ev_entry(&f, 90500, tgid, tid);
	check_split(cell_of(&f, tgid, tid, ISA_VMX, VMX_HLT), 1100, 50000, 400);
	/* Its wakeup not seen (attached mid-sleep): the whole period counts as blocked. */
	ev_exit(&f, 50000 + 90500, tgid, tid, 0, ISA_VMX, VMX_HLT);
	ev_out(&f, 50000 + 90500, tgid, tid, false);
	ev_in(&f, 50000 + 91000, tgid, tid);
	ev_entry(&f, 50000 + 91100, tgid, tid);
	check_split(cell_of(&f, tgid, tid, ISA_VMX, VMX_HLT), 1200, 50500, 400);
	/* A wakeup with no exit in flight, or of a thread on its CPU, does nothing. */
	ev_wake(&f, 50000 + 91200, tgid, tid);
	ev_exit(&f, 50000 + 92000, tgid, tid, 0, ISA_VMX, VMX_HLT);
	ev_wake(&f, 50000 + 92100, tgid, tid);
	ev_entry(&f, 50000 + 92500, tgid, tid);
	check_split(cell_of(&f, tgid, tid, ISA_VMX, VMX_HLT), 1700, 50500, 400);
	/*
	 * Clocks of two CPUs a little apart: the switch-in stamped 200 ns after the entry that
	 * followed it. Off CPU is clamped to the latency (1050 = 900 blocked + 150 runq), so that
	 * the three still add up exactly.
	 */
	ev_exit(&f, 100000, tgid, tid, 0, ISA_VMX, VMX_MSR_WRITE);
	ev_out(&f, 100100, tgid, tid, false);
	ev_in(&f, 101000, tgid, tid);
	ev_out(&f, 101000, tgid, tid, true);
	ev_in(&f, 101250, tgid, tid);
	ev_entry(&f, 101050, tgid, tid);
	check_split(cell_of(&f, tgid, tid, ISA_VMX, VMX_MSR_WRITE), 0, 900, 150);
	/* A switch-in stamped before its switch-out adds nothing. */
	ev_exit(&f, 200000, tgid, tid, 0, ISA_VMX, VMX_EPT_VIOL);
	ev_out(&f, 200500, tgid, tid, true);
	ev_in(&f, 200400, tgid, tid);
	ev_entry(&f, 201000, tgid, tid);
	check_split(cell_of(&f, tgid, tid, ISA_VMX, VMX_EPT_VIOL), 1000, 0, 0);
	CHECK(lost_all_zero_but(&f, -1));
	fx_close(&f);
}

static void test_split(void)
{
	const struct cell *c;
	struct fx f;

	split_sequence(false);
	split_sequence(true);
	/* Streamed: each exit's own split in its record (96 bytes, stream_cb checks). */
	if (fx_open(&f, &(struct fx_opts){ .split = true, .stream = true })) {
		check_failures++;
		return;
	}
	ev_uexit(&f, 1000, 500, 501, KVM_EXIT_IO_, 0);
	ev_out(&f, 1100, 500, 501, false);
	ev_in(&f, 1700, 500, 501);
	ev_out(&f, 1800, 500, 501, true);
	ev_in(&f, 1850, 500, 501);
	ev_run(&f, 2000, 500, 501);
	CHECK_EQ_U64(ring_buffer__consume(f.rb), 1);
	CHECK_EQ_U64(f.evs[0].latency_ns, 1000);
	CHECK_EQ_U64(f.evs[0].oncpu_ns, 350);
	CHECK_EQ_U64(f.evs[0].blocked_ns, 600);
	CHECK_EQ_U64(f.evs[0].runq_ns, 50);
	fx_close(&f);
	/* Without --split the switch handlers still run here, but no cell gets a split. */
	if (fx_open(&f, &(struct fx_opts){ 0 })) {
		check_failures++;
		return;
	}
	ev_exit(&f, 0, 400, 401, 0, ISA_VMX, VMX_IO);
	ev_out(&f, 100, 400, 401, false);
	ev_in(&f, 600, 400, 401);
	ev_entry(&f, 1000, 400, 401);
	c = cell_of(&f, 400, 401, ISA_VMX, VMX_IO);
	CHECK_EQ_U64(c->total_ns, 1000);
	CHECK_EQ_U64(c->oncpu_ns + c->blocked_ns + c->runq_ns, 0);
	fx_close(&f);
}

/* The tracker over the real mmapped array. */
struct src_ctx {
	struct fx *f;
};

static __u32 src_nr_cells(void *ctx)
{
	return nr_cells(((struct src_ctx *)ctx)->f);
}

static const struct row *row_find(const struct row_table *rt, __u32 tgid, __s32 vcpu, __u32 isa,
				  __u32 reason)
{
	for (__u32 i = 0; i < rt->nr; i++) {
		const struct row_key *k = &rt->rows[i].key;

		if (k->tgid == tgid && k->vcpu == vcpu && k->isa == isa && k->reason == reason)
			return &rt->rows[i];
	}
	fprintf(stderr, "no row %u/%d %u:%u\n", tgid, vcpu, isa, reason);
	check_failures++;
	return NULL;
}

#define CHECK_ROW(r, cnt, done, tot, mn, mx)				\
	do {								\
		const struct row *__r = (r);				\
		if (__r) {						\
			CHECK_EQ_U64(__r->count, cnt);			\
			CHECK_EQ_U64(__r->completed, done);		\
			CHECK_EQ_U64(__r->total_ns, tot);		\
			CHECK_EQ_U64(__r->min_ns, mn);			\
			CHECK_EQ_U64(__r->max_ns, mx);			\
			CHECK_EQ_U64(row_hist_total(__r), done);	\
		}							\
	} while (0)

static __u32 close_interval(struct fx *f)
{
	__u32 closed = f->skel->bss->epoch;

	f->skel->bss->epoch = closed + 1;
	return closed;
}

static void test_tracker(void)
{
	struct tracker tvm, tvcpu, tv1;
	struct row_table rvm, rvcpu, rv1;
	struct cell_source src = {};
	struct src_ctx sc;
	const struct row *r;
	__u32 closed;
	struct fx f;

	if (fx_open(&f, &(struct fx_opts){ 0 })) {
		check_failures++;
		return;
	}
	sc.f = &f;
	src.cells = f.cells;
	src.nr_cells = src_nr_cells;
	src.ctx = &sc;
	tracker_init(&tvm, &src, BY_VM, -1, false);
	tracker_init(&tvcpu, &src, BY_VCPU, -1, false);
	tracker_init(&tv1, &src, BY_VCPU, 1, false);
	row_table_init(&rvm);
	row_table_init(&rvcpu);
	row_table_init(&rv1);

	/* Interval 1. VM 1000: vCPU 0 IO 1000 + 3000, vCPU 1 IO 500 + EPT 200.
	 * VM 2000: vCPU 0 IO 700, and one IO exit still in flight. */
	ev_pair(&f, 1000, 1000, 1000, 1001, 0, ISA_VMX, VMX_IO);
	ev_pair(&f, 5000, 3000, 1000, 1001, 0, ISA_VMX, VMX_IO);
	ev_pair(&f, 1000, 500, 1000, 1002, 1, ISA_VMX, VMX_IO);
	ev_pair(&f, 2000, 200, 1000, 1002, 1, ISA_VMX, VMX_EPT_VIOL);
	ev_pair(&f, 1000, 700, 2000, 2001, 0, ISA_VMX, VMX_IO);
	ev_exit(&f, 9000, 2000, 2001, 0, ISA_VMX, VMX_IO);
	closed = close_interval(&f);
	CHECK_EQ_U64(closed, 0);
	CHECK(!tracker_sample(&tvm, closed, &rvm));
	CHECK(!tracker_sample(&tvcpu, closed, &rvcpu));
	CHECK(!tracker_sample(&tv1, closed, &rv1));
	CHECK_EQ_U64(tvm.seen, 4);
	CHECK_EQ_U64(rvm.nr, 3);
	r = row_find(&rvm, 1000, -1, ISA_VMX, VMX_IO);
	CHECK_ROW(r, 3, 3, 4500, 500, 3000);
	if (r) {
		/* Sorted 500 (bucket 55), 1000 (63), 3000 (75). p50: rank ceil(1.5) = 2, bucket 63
		 * [960, 1024), middle 992. p0: rank 1, bucket 55 [480, 512), middle 496, raised to
		 * the min 500. p100: rank 3, bucket 75 [2816, 3072), middle 2944 (under the max). */
		CHECK_EQ_U64(row_percentile(r, 50), 992);
		CHECK_EQ_U64(row_percentile(r, 0), 500);
		CHECK_EQ_U64(row_percentile(r, 100), 2944);
		CHECK_EQ_U64(r->hist[B500] + r->hist[B1000] + r->hist[B3000], 3);
	}
	CHECK_ROW(row_find(&rvm, 1000, -1, ISA_VMX, VMX_EPT_VIOL), 1, 1, 200, 200, 200);
	CHECK_ROW(row_find(&rvm, 2000, -1, ISA_VMX, VMX_IO), 2, 1, 700, 700, 700);
	CHECK_EQ_U64(rvcpu.nr, 4);
	CHECK_ROW(row_find(&rvcpu, 1000, 0, ISA_VMX, VMX_IO), 2, 2, 4000, 1000, 3000);
	CHECK_ROW(row_find(&rvcpu, 1000, 1, ISA_VMX, VMX_IO), 1, 1, 500, 500, 500);
	CHECK_ROW(row_find(&rvcpu, 1000, 1, ISA_VMX, VMX_EPT_VIOL), 1, 1, 200, 200, 200);
	CHECK_ROW(row_find(&rvcpu, 2000, 0, ISA_VMX, VMX_IO), 2, 1, 700, 700, 700);
	CHECK_EQ_U64(rv1.nr, 2);
	CHECK_ROW(row_find(&rv1, 1000, 1, ISA_VMX, VMX_IO), 1, 1, 500, 500, 500);

	/* Interval 2: VM 1000 vCPU 0 IO 2000 (min and max of the interval, not of the run);
	 * VM 2000's exit in flight completes after 1234 ns: completed without a new start. */
	ev_pair(&f, 20000, 2000, 1000, 1001, 0, ISA_VMX, VMX_IO);
	ev_entry(&f, 9000 + 1234, 2000, 2001);
	closed = close_interval(&f);
	CHECK(!tracker_sample(&tvm, closed, &rvm));
	CHECK(!tracker_sample(&tvcpu, closed, &rvcpu));
	CHECK(!tracker_sample(&tv1, closed, &rv1));
	CHECK_EQ_U64(rvm.nr, 2);
	CHECK_ROW(row_find(&rvm, 1000, -1, ISA_VMX, VMX_IO), 1, 1, 2000, 2000, 2000);
	CHECK_ROW(row_find(&rvm, 2000, -1, ISA_VMX, VMX_IO), 0, 1, 1234, 1234, 1234);
	CHECK_EQ_U64(rvcpu.nr, 2);
	CHECK_EQ_U64(rv1.nr, 0);
	/* Since the start: */
	CHECK_ROW(row_find(&tvm.cum, 1000, -1, ISA_VMX, VMX_IO), 4, 4, 6500, 500, 3000);
	CHECK_ROW(row_find(&tvm.cum, 2000, -1, ISA_VMX, VMX_IO), 2, 2, 1934, 700, 1234);

	/*
	 * Interval 3, with an exit completing after the epoch turned but before the sample: the
	 * cell's interval fields then belong to the new epoch, and the tracker falls back to the
	 * buckets' bounds: min = low of bucket(5000) = 4096 + 1 * 512 = 4608 (5000 >> 9 = 9,
	 * & 7 = 1), max = high of bucket(6000) - 1 = 6143 (6000 >> 9 = 11, & 7 = 3: [5632, 6144))
	 * lowered to the lifetime max 6000.
	 */
	ev_pair(&f, 30000, 5000, 1000, 1001, 0, ISA_VMX, VMX_IO);
	closed = close_interval(&f);
	ev_pair(&f, 40000, 6000, 1000, 1001, 0, ISA_VMX, VMX_IO);
	CHECK(!tracker_sample(&tvm, closed, &rvm));
	CHECK_EQ_U64(rvm.nr, 1);
	CHECK_ROW(row_find(&rvm, 1000, -1, ISA_VMX, VMX_IO), 2, 2, 11000, 4608, 6000);

	tracker_free(&tvm);
	tracker_free(&tvcpu);
	tracker_free(&tv1);
	row_table_free(&rvm);
	row_table_free(&rvcpu);
	row_table_free(&rv1);
	fx_close(&f);
}

static void ev_thread_exit(struct fx *f, __u64 now, __u32 tgid, __u32 tid)
{
	send(f, (struct test_ctx){ .op = TOP_THREAD_EXIT, .now = now, .tgid = tgid, .tid = tid });
}

/* What session_release_cell() does: zero the cell through the map, hand it to the kernel. */
static void src_release(void *ctx, __u32 idx)
{
	struct fx *f = ((struct src_ctx *)ctx)->f;
	static const struct cell zero;

	CHECK(!bpf_map__update_elem(f->skel->maps.cells, &idx, sizeof(idx), &zero, sizeof(zero),
				    BPF_ANY));
	CHECK(!bpf_map__update_elem(f->skel->maps.free_cells, NULL, 0, &idx, sizeof(idx),
				    BPF_ANY));
}

static const struct inflight_exit *inflight_find(const struct tracker *t, __u32 tid, __u32 isa,
						 __u32 reason)
{
	for (__u32 i = 0; i < t->nr_inflight; i++) {
		const struct inflight_exit *e = &t->inflight[i];

		if (e->tid == tid && e->isa == isa && e->reason == reason)
			return e;
	}
	return NULL;
}

/* A tracker over the fixture's cells, through sc and src (which live as long as it). */
static void fx_tracker(struct fx *f, struct src_ctx *sc, struct cell_source *src,
		       struct tracker *t, enum group_by by)
{
	sc->f = f;
	src->cells = f->cells;
	src->nr_cells = src_nr_cells;
	src->ctx = sc;
	tracker_init(t, src, by, -1, false);
}

/*
 * The start of an exit in flight is in its cell until it completes; a sample lists it. When
 * its thread exits in it, the cells are marked ended (with when), the stream gets the exit
 * flagged in flight with its age as latency, and the thread's state and other_cells are gone.
 */
static void test_inflight(void)
{
	const struct inflight_exit *e;
	struct src_ctx sc = {};
	struct cell_source src = {};
	struct row_table rows;
	const struct cell *c;
	struct tracker t;
	struct other_key ok = { .tid = 11, .isa = ISA_VMX, .reason = 200 };
	struct fx f;

	if (fx_open(&f, &(struct fx_opts){ .stream = true })) {
		check_failures++;
		return;
	}
	fx_tracker(&f, &sc, &src, &t, BY_VCPU);
	row_table_init(&rows);

	ev_exit(&f, 1000, 10, 11, 2, ISA_VMX, VMX_IO);
	c = cell_of(&f, 10, 11, ISA_VMX, VMX_IO);
	CHECK_EQ_U64(c->inflight_ts, 1000);
	ev_uexit(&f, 1100, 10, 11, KVM_EXIT_IO_, 0);
	CHECK(!tracker_sample(&t, 0, &rows));
	CHECK_EQ_U64(t.nr_inflight, 2);
	e = inflight_find(&t, 11, ISA_USER, KVM_EXIT_IO_);
	CHECK(e && e->start_ns == 1100 && e->end_ns == 0 && e->vcpu == 2 && e->tgid == 10);
	ev_run(&f, 1400, 10, 11);
	ev_entry(&f, 1500, 10, 11);
	CHECK_EQ_U64(c->inflight_ts, 0);
	CHECK_EQ_U64(c->total_ns, 500);
	CHECK(!tracker_sample(&t, 0, &rows));
	CHECK_EQ_U64(t.nr_inflight, 0);
	/* An exit outside the dense slots (other_cells), then one the thread never finishes. */
	ev_pair(&f, 2000, 10, 10, 11, 2, ISA_VMX, 200);
	CHECK_EQ_U64(map_count(f.skel->maps.other_cells), 1);
	ev_exit(&f, 3000, 10, 11, 2, ISA_VMX, VMX_HLT);
	ev_thread_exit(&f, 3700, 10, 11);
	c = cell_of(&f, 10, 11, ISA_VMX, VMX_HLT);
	CHECK_EQ_U64(c->ended, 1);
	CHECK_EQ_U64(c->ended_ts, 3700);
	CHECK_EQ_U64(cell_of(&f, 10, 11, ISA_VMX, VMX_IO)->ended, 1);
	CHECK_EQ_U64(cell_of(&f, 10, 11, ISA_VMX, 200)->ended, 1);
	CHECK_EQ_U64(map_count(f.skel->maps.thread_hash), 0);
	CHECK(bpf_map__lookup_elem(f.skel->maps.other_cells, &ok, sizeof(ok), &(__u32){ 0 },
				   sizeof(__u32), 0) != 0);
	ring_buffer__consume(f.rb);
	/* Three completed exits, then the one the thread left: flagged, its age as latency. */
	CHECK_EQ_U64(f.nr_evs, 4);
	for (int i = 0; i < 3; i++)
		CHECK(!(f.evs[i].type & VMEXIT_EV_IN_FLIGHT));
	CHECK_EQ_U64(f.evs[3].type, VMEXIT_EV_EXIT | VMEXIT_EV_IN_FLIGHT);
	CHECK_EQ_U64(f.evs[3].ts_ns, 3000);
	CHECK_EQ_U64(f.evs[3].latency_ns, 700);
	CHECK_EQ_U64(f.evs[3].reason, VMX_HLT);
	CHECK_EQ_U64(f.evs[3].tid, 11);
	/* Listed once, as ended with the thread (no release hook: the cells are just dropped). */
	CHECK(!tracker_sample(&t, 0, &rows));
	CHECK_EQ_U64(t.nr_inflight, 1);
	e = inflight_find(&t, 11, ISA_VMX, VMX_HLT);
	CHECK(e && e->start_ns == 3000 && e->end_ns == 3700);
	CHECK(!tracker_sample(&t, 0, &rows));
	CHECK_EQ_U64(t.nr_inflight, 0);
	tracker_free(&t);
	row_table_free(&rows);
	fx_close(&f);
}

/*
 * stat --stuck: the kernel keeps, per cell, how many exits took stuck_min_ns or more and the last
 * one's start and latency; the tracker lists them per sample (an exit stuck between two samples,
 * never seen in flight by one), and since the start one per thread and reason, the longest, with
 * the exits left by their thread after as long. A thread's last exit of microseconds is not
 * stuck: only counted.
 */
static void test_stuck_done(void)
{
	const struct inflight_exit *e;
	struct src_ctx sc = {};
	struct cell_source src = {};
	struct row_table rows;
	const struct cell *c;
	struct tracker t;
	struct fx f;

	if (fx_open(&f, &(struct fx_opts){ .stuck = 1000 })) {
		check_failures++;
		return;
	}
	fx_tracker(&f, &sc, &src, &t, BY_VM);
	t.stuck_ns = 1000;
	row_table_init(&rows);

	/* Sample 1: 5000 ns (stuck, the longest), 999 ns (not) and 1000 ns (stuck) on one
	 * thread; a thread that ends 50 ns into an exit; one that ends 3000 ns into one. */
	ev_pair(&f, 10000, 5000, 10, 11, 0, ISA_VMX, VMX_IO);
	ev_pair(&f, 20000, 999, 10, 11, 0, ISA_VMX, VMX_IO);
	ev_pair(&f, 30000, 1000, 10, 11, 0, ISA_VMX, VMX_IO);
	c = cell_of(&f, 10, 11, ISA_VMX, VMX_IO);
	CHECK_EQ_U64(c->stuck_done, 2);
	CHECK_EQ_U64(c->stuck_ts, 10000);
	CHECK_EQ_U64(c->stuck_lat_ns, 5000);
	ev_exit(&f, 40000, 10, 12, 1, ISA_VMX, VMX_HLT);
	ev_thread_exit(&f, 40050, 10, 12);
	ev_exit(&f, 40000, 10, 13, 2, ISA_VMX, VMX_HLT);
	ev_thread_exit(&f, 43000, 10, 13);
	CHECK(!tracker_sample(&t, 0, &rows));
	CHECK_EQ_U64(t.nr_stuck, 1);
	e = t.nr_stuck ? &t.stuck[0] : NULL;
	CHECK(e && e->completed && e->tid == 11 && e->nr == 2 && e->start_ns == 10000 &&
	      e->end_ns == 15000);
	CHECK_EQ_U64(t.nr_inflight, 2);		/* both ended: the output picks by age */
	CHECK_EQ_U64(t.cum_ended, 2);
	CHECK_EQ_U64(t.nr_cum_stuck, 2);	/* the completed ones, and the 3000 ns ended one */
	e = t.nr_cum_stuck == 2 ? &t.cum_stuck[1] : NULL;
	CHECK(e && !e->completed && e->tid == 13 && e->end_ns - e->start_ns == 3000);

	/* Sample 2: nothing stuck since; the list is of the sample, the run's stays. */
	ev_pair(&f, 50000, 10, 10, 11, 0, ISA_VMX, VMX_IO);
	CHECK(!tracker_sample(&t, 0, &rows));
	CHECK_EQ_U64(t.nr_stuck, 0);
	CHECK_EQ_U64(t.nr_cum_stuck, 2);

	/* Sample 3, a new epoch: 2000 then 1500 ns: the interval's longest is listed (not sample
	 * 1's 5000 ns), the run keeps its longest and counts 4. */
	close_interval(&f);
	ev_pair(&f, 60000, 2000, 10, 11, 0, ISA_VMX, VMX_IO);
	ev_pair(&f, 70000, 1500, 10, 11, 0, ISA_VMX, VMX_IO);
	CHECK(!tracker_sample(&t, 0, &rows));
	CHECK_EQ_U64(t.nr_stuck, 1);
	e = t.nr_stuck ? &t.stuck[0] : NULL;
	CHECK(e && e->nr == 2 && e->start_ns == 60000 && e->end_ns == 62000);
	e = t.nr_cum_stuck ? &t.cum_stuck[0] : NULL;
	CHECK(e && e->completed && e->nr == 4 && e->start_ns == 10000 && e->end_ns == 15000);
	tracker_free(&t);
	row_table_free(&rows);
	fx_close(&f);

	/* Off (stuck_min_ns 0, top and serve): the cells keep nothing. */
	if (fx_open(&f, &(struct fx_opts){ 0 })) {
		check_failures++;
		return;
	}
	ev_pair(&f, 10000, 5000000, 10, 11, 0, ISA_VMX, VMX_IO);
	CHECK_EQ_U64(cell_of(&f, 10, 11, ISA_VMX, VMX_IO)->stuck_done, 0);
	fx_close(&f);
}

/* The split so far of the exit (tid, isa, reason) in flight at the tracker's last sample. */
static void check_split_so_far(const struct tracker *t, __u32 isa, __u32 reason, __u64 now,
			       __u64 oncpu, __u64 blocked, __u64 runq)
{
	const struct inflight_exit *e = inflight_find(t, 301, isa, reason);
	__u64 on = 0, blk = 0, rq = 0;

	CHECK(e != NULL);
	if (e)
		inflight_split(e, now, &on, &blk, &rq);
	CHECK_EQ_U64(on, oncpu);
	CHECK_EQ_U64(blk, blocked);
	CHECK_EQ_U64(rq, runq);
}

/*
 * --split: exits in flight report their split so far, from what the thread's context switches
 * left in their cells; the time since it left its CPU counts as it will when it is back.
 */
static void test_inflight_split(void)
{
	const __u64 B = 1000000;	/* 0 would read as "no exit in flight" */
	struct src_ctx sc = {};
	struct cell_source src = {};
	struct row_table rows;
	struct tracker t;
	struct fx f;

	if (fx_open(&f, &(struct fx_opts){ .split = true })) {
		check_failures++;
		return;
	}
	sc.f = &f;
	src.cells = f.cells;
	src.nr_cells = src_nr_cells;
	src.ctx = &sc;
	tracker_init(&t, &src, BY_VCPU, -1, false);
	t.split = true;
	row_table_init(&rows);

	/* A kernel IO exit at B, handed to the VMM at B + 1000, which sleeps from B + 2000. */
	ev_exit(&f, B, 300, 301, 0, ISA_VMX, VMX_IO);
	ev_uexit(&f, B + 1000, 300, 301, KVM_EXIT_IO_, 0);
	ev_out(&f, B + 2000, 300, 301, false);
	CHECK(!tracker_sample(&t, 0, &rows));
	check_split_so_far(&t, ISA_USER, KVM_EXIT_IO_, B + 5000, 1000, 3000, 0);
	check_split_so_far(&t, ISA_VMX, VMX_IO, B + 5000, 2000, 3000, 0);
	/* Back on CPU at B + 7000: 5000 blocked, then on CPU again. */
	ev_in(&f, B + 7000, 300, 301);
	CHECK(!tracker_sample(&t, 0, &rows));
	check_split_so_far(&t, ISA_USER, KVM_EXIT_IO_, B + 7500, 1500, 5000, 0);
	/* Preempted at B + 8000: waiting for a CPU. */
	ev_out(&f, B + 8000, 300, 301, true);
	CHECK(!tracker_sample(&t, 0, &rows));
	check_split_so_far(&t, ISA_USER, KVM_EXIT_IO_, B + 8100, 2000, 5000, 100);
	/* Its CPU back at B + 8300, KVM_RUN at B + 10000: only the kernel exit is left. */
	ev_in(&f, B + 8300, 300, 301);
	ev_run(&f, B + 10000, 300, 301);
	CHECK(!tracker_sample(&t, 0, &rows));
	CHECK_EQ_U64(t.nr_inflight, 1);
	check_split_so_far(&t, ISA_VMX, VMX_IO, B + 11000, 5700, 5000, 300);
	/* Asleep in the kernel at B + 11500, woken at B + 12000: runq from then on. */
	ev_out(&f, B + 11500, 300, 301, false);
	ev_wake(&f, B + 12000, 300, 301);
	CHECK(!tracker_sample(&t, 0, &rows));
	check_split_so_far(&t, ISA_VMX, VMX_IO, B + 12100, 6200, 5500, 400);
	ev_in(&f, B + 12200, 300, 301);
	ev_entry(&f, B + 12500, 300, 301);
	CHECK(!tracker_sample(&t, 0, &rows));
	CHECK_EQ_U64(t.nr_inflight, 0);
	/* The next exit in the same cell has not left its CPU: what the cell holds is the last
	 * one's, and all of its age is on CPU. */
	ev_exit(&f, B + 20000, 300, 301, 0, ISA_VMX, VMX_IO);
	CHECK(!tracker_sample(&t, 0, &rows));
	check_split_so_far(&t, ISA_VMX, VMX_IO, B + 21000, 1000, 0, 0);
	/* Its thread exits in it, after a sleep: the split stops at the thread's end. */
	ev_out(&f, B + 21000, 300, 301, false);
	ev_in(&f, B + 24000, 300, 301);
	ev_thread_exit(&f, B + 24500, 300, 301);
	CHECK(!tracker_sample(&t, 0, &rows));
	check_split_so_far(&t, ISA_VMX, VMX_IO, B + 99999, 1500, 3000, 0);
	tracker_free(&t);
	row_table_free(&rows);
	fx_close(&f);
}

/*
 * Many more thread lifetimes than cells: every lifetime's exits are counted, exactly, in the
 * rows since start, the cells go round through free_cells, and none is full or lost. The
 * threads' ids come back (a reused tid must not find the old thread's cells); with task storage
 * every lifetime is the test thread itself, one at a time.
 */
static void test_recycle(bool task_storage)
{
	const __u32 lives = 60, vcpus = task_storage ? 1 : 2, max_cells = 16;
	__u64 io = 0, uio = 0, other = 0, inflight = 0, now = 1000;
	__u32 self = syscall(SYS_gettid);
	struct cell_source src = {};
	struct src_ctx sc = {};
	struct row_table rows;
	struct tracker t;
	struct fx f;

	if (fx_open(&f, &(struct fx_opts){ .max_cells = max_cells, .task_storage = task_storage })) {
		check_failures++;
		return;
	}
	sc.f = &f;
	src.cells = f.cells;
	src.nr_cells = src_nr_cells;
	src.release = src_release;
	src.ctx = &sc;
	tracker_init(&t, &src, BY_REASON, -1, false);
	row_table_init(&rows);
	for (__u32 l = 0; l < lives; l++) {
		__u32 tgid = 5000 + l;

		for (__u32 v = 0; v < vcpus; v++) {
			__u32 tid = task_storage ? self : 100 + v;	/* the same tids every time */

			for (int k = 0; k < 3; k++, io++, now += 100)
				ev_pair(&f, now, 50, tgid, tid, v, ISA_VMX, VMX_IO);
			ev_pair(&f, now, 20, tgid, tid, v, ISA_VMX, 200);	/* other_cells */
			other++;
			for (int k = 0; k < 2; k++, uio++, now += 100) {
				ev_uexit(&f, now, tgid, tid, KVM_EXIT_IO_, 0);
				ev_run(&f, now + 30, tgid, tid);
			}
			ev_uexit(&f, now, tgid, tid, KVM_EXIT_IO_, 0);	/* the last: never ends */
			ev_thread_exit(&f, now + 5, tgid, tid);
		}
		CHECK(!tracker_sample(&t, 0, &rows));
		inflight += t.nr_inflight;
		for (__u32 i = 0; i < t.nr_inflight; i++)
			CHECK(t.inflight[i].end_ns - t.inflight[i].start_ns == 5);
		CHECK_EQ_U64(tracker_live_cells(&t), 0);
	}
	/* 3 cells per thread, 16 cells: every one but the first few came from free_cells. */
	CHECK_EQ_U64(lost(&f, LOST_CELLS_FULL), 0);
	CHECK(nr_cells(&f) <= max_cells);
	CHECK_EQ_U64(f.skel->bss->cells_reused + nr_cells(&f), 3ull * lives * vcpus);
	CHECK_EQ_U64(t.released, 3ull * lives * vcpus);
	CHECK_EQ_U64(inflight, lives * vcpus);
	{
		const struct row *r;

		r = row_find(&t.cum, 0, -1, ISA_VMX, VMX_IO);
		CHECK(r && r->count == io && r->completed == io && r->total_ns == 50 * io);
		r = row_find(&t.cum, 0, -1, ISA_VMX, 200);
		CHECK(r && r->count == other && r->completed == other);
		r = row_find(&t.cum, 0, -1, ISA_USER, KVM_EXIT_IO_);
		CHECK(r && r->count == uio + lives * vcpus && r->completed == uio &&
		      r->total_ns == 30 * uio);
	}
	tracker_free(&t);
	row_table_free(&rows);
	fx_close(&f);
}

int main(void)
{
	if (geteuid() != 0) {
		printf("SKIP: test_bpf_handlers: needs root to load BPF programs (run as root)\n");
		return 77;
	}
	libbpf_set_print(libbpf_print_quiet);
	test_exit_entry();
	test_epoch();
	test_user_exits();
	test_count_later();
	test_other_reasons();
	test_arm64_exits();
	test_pid_filter();
	test_vcpu_filter();
	test_reason_filter();
	test_cells_full();
	test_stream();
	test_stream_filters();
	test_ringbuf_full();
	test_task_storage();
	test_kvm_records();
	test_tracker();
	test_inflight();
	test_inflight_split();
	test_stuck_done();
	test_recycle(false);
	test_recycle(true);
	test_split();
	CHECK_DONE("test_bpf_handlers");
}
