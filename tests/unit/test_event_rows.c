// SPDX-License-Identifier: GPL-2.0
/*
 * Rows from events (report's path to the stat output) and the userspace event filter.
 * Expected rows are computed here from the events fed in, never read back from the module.
 */
#include <stdlib.h>

#include "check.h"
#include "event_rows.h"
#include "name_cache.h"
#include "vcpu_cache.h"
#include "hist.h"

static struct vmexit_event ev(__u32 tgid, __u32 tid, __s32 vcpu, __u32 isa, __u32 reason,
			      __u64 lat, __u16 type)
{
	struct vmexit_event e = {
		.ts_ns = 1000, .latency_ns = lat, .tgid = tgid, .tid = tid, .vcpu = vcpu,
		.isa = (__u16)isa, .reason = reason, .type = type,
	};
	return e;
}

static struct row *find(struct row_table *rt, __u32 tgid, __s32 vcpu, __u32 isa, __u32 reason)
{
	for (__u32 i = 0; i < rt->nr; i++) {
		struct row *r = &rt->rows[i];

		if (r->key.tgid == tgid && r->key.vcpu == vcpu && r->key.isa == isa &&
		    r->key.reason == reason)
			return r;
	}
	return NULL;
}

static void test_rows_by(void)
{
	static const __u64 lat[] = { 3, 15, 16, 1000, 1001, 250000, 1ull << 40 };
	struct row_table vm, vcpu, reason;
	struct vmexit_event e;
	__u64 total = 0;
	struct row *r;

	row_table_init(&vm);
	row_table_init(&vcpu);
	row_table_init(&reason);
	for (size_t i = 0; i < sizeof(lat) / sizeof(lat[0]); i++) {
		/* Alternate two VMs and two vCPUs; all the same reason (VMX 48). */
		e = ev(100 + (i & 1), 200 + (i & 1), (__s32)(i & 1), VMEXIT_ISA_VMX, 48, lat[i],
		       VMEXIT_EV_EXIT);
		CHECK(event_rows_add(&vm, BY_VM, &e, 0, false) == 0);
		CHECK(event_rows_add(&vcpu, BY_VCPU, &e, 0, false) == 0);
		CHECK(event_rows_add(&reason, BY_REASON, &e, 0, false) == 0);
		total += lat[i];
	}
	/* TSC offset writes are not exits. */
	e = ev(100, 1, 0, VMEXIT_ISA_USER, 0, 0, VMEXIT_EV_TSC_OFFSET);
	CHECK(event_rows_add(&vm, BY_VM, &e, 0, false) == 0);

	CHECK_EQ_U64(vm.nr, 2);
	r = find(&vm, 100, -1, VMEXIT_ISA_VMX, 48);	/* lat[0], [2], [4], [6] */
	CHECK(r != NULL);
	if (r) {
		CHECK_EQ_U64(r->count, 4);
		CHECK_EQ_U64(r->completed, 4);
		CHECK_EQ_U64(r->total_ns, 3 + 16 + 1001 + (1ull << 40));
		CHECK_EQ_U64(r->min_ns, 3);
		CHECK_EQ_U64(r->max_ns, 1ull << 40);
		CHECK_EQ_U64(r->hist[3], 1);			/* exact buckets below 16 */
		CHECK_EQ_U64(r->hist[HIST_EXACT], 1);		/* 16: first log bucket */
		CHECK_EQ_U64(r->hist[NR_BUCKETS - 1], 1);	/* 2^40 >= 2^37: overflow */
		CHECK_EQ_U64(row_hist_total(r), 4);
	}
	r = find(&vm, 101, -1, VMEXIT_ISA_VMX, 48);
	CHECK(r && r->count == 3 && r->min_ns == 15 && r->max_ns == 250000);
	CHECK_EQ_U64(vcpu.nr, 2);
	CHECK(find(&vcpu, 100, 0, VMEXIT_ISA_VMX, 48) != NULL);
	CHECK(find(&vcpu, 101, 1, VMEXIT_ISA_VMX, 48) != NULL);
	CHECK_EQ_U64(reason.nr, 1);
	r = find(&reason, 0, -1, VMEXIT_ISA_VMX, 48);
	CHECK(r && r->count == 7 && r->total_ns == total);

	/* An exit that never completed: counted, as stat counts it, without a latency. */
	e = ev(100, 200, 0, VMEXIT_ISA_VMX, 48, 777, VMEXIT_EV_EXIT | VMEXIT_EV_IN_FLIGHT);
	CHECK(event_rows_add(&reason, BY_REASON, &e, 0, false) == 0);
	r = find(&reason, 0, -1, VMEXIT_ISA_VMX, 48);
	CHECK(r && r->count == 8 && r->completed == 7 && r->total_ns == total &&
	      row_hist_total(r) == 7);
	CHECK(event_filter_match(&(struct event_filter){ .vcpu = -1, .min_latency_ns = 777 }, &e));
	CHECK(!event_filter_match(&(struct event_filter){ .vcpu = -1, .min_latency_ns = 778 },
				  &e));

	/* Same code, other ISA: another row. */
	e = ev(100, 200, 0, VMEXIT_ISA_USER, 48, 5, VMEXIT_EV_USER_EXIT);
	CHECK(event_rows_add(&reason, BY_REASON, &e, 0, false) == 0);
	CHECK_EQ_U64(reason.nr, 2);
	row_table_free(&vm);
	row_table_free(&vcpu);
	row_table_free(&reason);
}

static void test_many_rows(void)
{
	struct row_table rt;
	struct vmexit_event e;
	bool ok = true;

	/* Enough distinct keys to make the row array and its index grow several times. */
	row_table_init(&rt);
	for (__u32 round = 0; round < 2; round++) {
		for (__u32 i = 0; i < 3000; i++) {
			e = ev(i % 7 + 1, i, (__s32)(i % 5), VMEXIT_ISA_SVM, i, i, VMEXIT_EV_EXIT);
			ok &= event_rows_add(&rt, BY_VCPU, &e, 0, false) == 0;
		}
	}
	CHECK(ok);
	CHECK_EQ_U64(rt.nr, 3000);
	for (__u32 i = 0; i < 3000; i += 299) {
		struct row *r = find(&rt, i % 7 + 1, (__s32)(i % 5), VMEXIT_ISA_SVM, i);

		CHECK(r && r->count == 2 && r->total_ns == 2ull * i);
	}
	row_table_free(&rt);
}

static void test_filter(void)
{
	struct event_filter f = { .vcpu = -1 };
	struct vmexit_event io = ev(10, 11, 2, VMEXIT_ISA_USER, 2, 500, VMEXIT_EV_USER_EXIT);
	struct vmexit_event tsc = ev(10, 10, 2, VMEXIT_ISA_USER, 0, 0, VMEXIT_EV_TSC_OFFSET);

	CHECK(event_filter_match(&f, &io));
	f.pids[f.nr_pids++] = 9;
	CHECK(!event_filter_match(&f, &io));
	f.pids[f.nr_pids++] = 10;
	CHECK(event_filter_match(&f, &io));
	f.vcpu = 3;
	CHECK(!event_filter_match(&f, &io));
	CHECK(!event_filter_match(&f, &tsc));
	f.vcpu = 2;
	f.min_latency_ns = 501;
	CHECK(!event_filter_match(&f, &io));
	CHECK(event_filter_match(&f, &tsc));	/* not an exit: latency does not apply */
	f.min_latency_ns = 500;
	CHECK(event_filter_match(&f, &io));
	f.reasons[f.nr_reasons++] = (struct reason_sel){ VMEXIT_ISA_SVM, 2 };
	CHECK(!event_filter_match(&f, &io));	/* same code, other ISA */
	CHECK(event_filter_match(&f, &tsc));
	f.reasons[f.nr_reasons++] = (struct reason_sel){ VMEXIT_ISA_USER, 2 };
	CHECK(event_filter_match(&f, &io));
}

static int lookups;

static __s32 lookup_tid_mod(void *ctx, const struct vmexit_event *e)
{
	(*(int *)ctx)++;
	return (__s32)(e->tid % 10);
}

/* Pid 10's VMM of start time 1000 ran tid 11 as vCPU 1, pid 20's as vCPU 0, pid 10's of 3000
 * as vCPU 2 (the event's time tells the two of pid 10 apart). */
static __s32 lookup_by_process(void *ctx, const struct vmexit_event *e)
{
	(*(int *)ctx)++;
	if (e->tgid == 10)
		return e->ts_ns >= 3000 ? 2 : 1;
	return 0;
}

static void test_vcpu_cache(void)
{
	struct vcpu_cache c = { .use_proc = false };
	struct vmexit_event a = ev(10, 11, -1, VMEXIT_ISA_USER, 2, 1, VMEXIT_EV_USER_EXIT);
	struct vmexit_event b = ev(10, 11, 4, VMEXIT_ISA_VMX, 30, 1, VMEXIT_EV_EXIT);
	bool ok = true;

	CHECK(vcpu_cache_resolve(&c, &a, 1000) == -1);	/* nothing known yet */
	CHECK(vcpu_cache_resolve(&c, &b, 1000) == 4);	/* the kernel says */
	a.vcpu = -1;
	CHECK(vcpu_cache_resolve(&c, &a, 1000) == 4);	/* learnt from the thread's kvm_exit */
	CHECK_EQ_U64(a.vcpu, 4);
	for (__u32 tid = 1000; tid < 1500; tid++) {
		struct vmexit_event e = ev(10, tid, (__s32)(tid % 9), VMEXIT_ISA_VMX, 1, 1,
					   VMEXIT_EV_EXIT);

		vcpu_cache_resolve(&c, &e, 1000);
	}
	for (__u32 tid = 1000; tid < 1500; tid++) {
		struct vmexit_event e = ev(10, tid, -1, VMEXIT_ISA_USER, 2, 1,
					   VMEXIT_EV_USER_EXIT);

		ok &= vcpu_cache_resolve(&c, &e, 1000) == (__s32)(tid % 9);
	}
	CHECK(ok);
	vcpu_cache_free(&c);

	/* A thread seen first with vcpu -1 asks lookup() once, and keeps its answer. */
	c = (struct vcpu_cache){ .lookup = lookup_tid_mod, .lookup_ctx = &lookups };
	a = ev(10, 23, -1, VMEXIT_ISA_USER, 2, 1, VMEXIT_EV_USER_EXIT);
	CHECK(vcpu_cache_resolve(&c, &a, 1000) == 3);
	a.vcpu = -1;
	CHECK(vcpu_cache_resolve(&c, &a, 1000) == 3);
	CHECK_EQ_U64(lookups, 1);
	vcpu_cache_free(&c);

	/*
	 * Guest A's vCPU 1 is tid 11; A exits, and guest B's vCPU 0 gets tid 11; then a VMM on A's
	 * pid gets it too: three threads, each looked up once, each with its own vCPU.
	 */
	c = (struct vcpu_cache){ .lookup = lookup_by_process, .lookup_ctx = &lookups };
	lookups = 0;
	a = ev(10, 11, -1, VMEXIT_ISA_USER, 2, 1, VMEXIT_EV_USER_EXIT);
	CHECK(vcpu_cache_resolve(&c, &a, 1000) == 1);
	a = ev(20, 11, -1, VMEXIT_ISA_USER, 2, 1, VMEXIT_EV_USER_EXIT);
	CHECK(vcpu_cache_resolve(&c, &a, 2000) == 0);
	a = ev(10, 11, -1, VMEXIT_ISA_USER, 2, 1, VMEXIT_EV_USER_EXIT);
	a.ts_ns = 3000;
	CHECK(vcpu_cache_resolve(&c, &a, 3000) == 2);
	a = ev(20, 11, -1, VMEXIT_ISA_USER, 2, 1, VMEXIT_EV_USER_EXIT);
	CHECK(vcpu_cache_resolve(&c, &a, 2000) == 0);
	CHECK_EQ_U64(lookups, 3);
	vcpu_cache_free(&c);
}

/*
 * A pid reused by a new VMM (report's path): each exit goes to the row of the process that ran
 * at its time, as name_cache tells from the guests' start times, whatever order they come in.
 */
static void test_reused_pid(void)
{
	struct name_cache names = {};
	struct row_table vm, reason;
	/* pid 100: "old" started at 1000, ran until before 5000, when "new" started. */
	static const struct { __u64 ts, lat; } evs[] = {
		{ 1500, 10 }, { 4000, 20 }, { 5000, 400 }, { 3000, 30 }, { 9000, 500 }, { 6000, 600 },
	};
	__u64 start;
	struct row *r;

	row_table_init(&vm);
	row_table_init(&reason);
	CHECK(name_cache_set_at(&names, 100, 1000, "old") == 0);
	CHECK(name_cache_set_at(&names, 100, 5000, "new") == 0);
	for (size_t i = 0; i < sizeof(evs) / sizeof(evs[0]); i++) {
		struct vmexit_event e = ev(100, 101, 0, VMEXIT_ISA_USER, 2, evs[i].lat,
					   VMEXIT_EV_USER_EXIT);

		e.ts_ns = evs[i].ts;
		start = name_cache_start_at_time(&names, e.tgid, e.ts_ns);
		CHECK(event_rows_add(&vm, BY_VM, &e, start, false) == 0);
		CHECK(event_rows_add(&reason, BY_REASON, &e, start, false) == 0);
	}
	CHECK_EQ_U64(vm.nr, 2);
	for (__u32 i = 0; i < vm.nr; i++) {
		r = &vm.rows[i];
		CHECK_EQ_U64(r->key.tgid, 100);
		if (r->key.start == 1000) {
			CHECK_STR(name_cache_get_at(&names, 100, r->key.start), "old");
			CHECK_EQ_U64(r->count, 3);
			CHECK_EQ_U64(r->total_ns, 10 + 20 + 30);
		} else {
			CHECK_EQ_U64(r->key.start, 5000);
			CHECK_STR(name_cache_get_at(&names, 100, r->key.start), "new");
			CHECK_EQ_U64(r->count, 3);
			CHECK_EQ_U64(r->total_ns, 400 + 500 + 600);
		}
	}
	/* By reason the pid's two VMMs are one row, as in stat. */
	CHECK_EQ_U64(reason.nr, 1);
	CHECK_EQ_U64(reason.rows[0].key.start, 0);
	CHECK_EQ_U64(reason.rows[0].count, 6);
	row_table_free(&vm);
	row_table_free(&reason);
	name_cache_free(&names);
}

/* report --by key: a row per key of a recording made with --keys; one per reason without. */
static void test_rows_by_key(void)
{
	static const struct key_note keys[] = {
		{ .key = 0x3f8, .kind = KEY_PORT, .dir = KEY_DIR_OUT },
		{ .key = 0x3f8, .kind = KEY_PORT, .dir = KEY_DIR_IN },
		{ .key = 0x3f8, .kind = KEY_PORT, .dir = KEY_DIR_OUT },
		{ .key = 0x70, .kind = KEY_PORT, .dir = KEY_DIR_OUT },
	};
	struct row_table keyed, plain;
	struct vmexit_event e;

	row_table_init(&keyed);
	row_table_init(&plain);
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		e = ev(100, 200, 0, VMEXIT_ISA_USER, 2, 10 + i, VMEXIT_EV_USER_EXIT);
		e.key = keys[i];
		CHECK(event_rows_add(&keyed, BY_VM, &e, 0, true) == 0);
		CHECK(event_rows_add(&plain, BY_VM, &e, 0, false) == 0);
	}
	CHECK_EQ_U64(keyed.nr, 3);
	CHECK_EQ_U64(plain.nr, 1);
	CHECK_EQ_U64(plain.rows[0].count, 4);
	CHECK_EQ_U64(plain.rows[0].key.key.kind, KEY_NONE);
	for (__u32 i = 0; i < keyed.nr; i++) {
		const struct row *r = &keyed.rows[i];
		bool out3f8 = r->key.key.key == 0x3f8 && r->key.key.dir == KEY_DIR_OUT;

		CHECK_EQ_U64(r->key.key.kind, KEY_PORT);
		CHECK_EQ_U64(r->count, out3f8 ? 2 : 1);
		CHECK_EQ_U64(r->total_ns, out3f8 ? 10 + 12 : r->key.key.key == 0x70 ? 13 : 11);
	}
	row_table_free(&keyed);
	row_table_free(&plain);
}

int main(void)
{
	test_rows_by();
	test_rows_by_key();
	test_many_rows();
	test_filter();
	test_vcpu_cache();
	test_reused_pid();
	CHECK_DONE("event_rows");
}
