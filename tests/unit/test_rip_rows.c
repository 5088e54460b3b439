// SPDX-License-Identifier: GPL-2.0
/*
 * --by rip from recorded events (report): each exit's RIP key, the top N RIPs per guest x
 * reason with the rest as (other), and the rows' RIP, symbol and guest mode in the outputs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "event_rows.h"
#include "rip_rows.h"
#include "stat_output.h"

#define SVM_CPUID	0x72
#define SVM_HLT		0x78
#define KVM_EXIT_HLT_	5

static void test_guest_mode(void)
{
	CHECK_STR(rip_guest_mode(0x1000), "user");
	CHECK_STR(rip_guest_mode(0x00007fffffffffffull), "user");
	CHECK_STR(rip_guest_mode(0xffff800000000000ull), "kernel");
	CHECK_STR(rip_guest_mode(0xffffffff81000000ull), "kernel");
}

/* A guest exit has its RIP; an exit to the VMM the one it was flagged with, else none. */
static void test_event_key(void)
{
	struct vmexit_event ev = { .type = VMEXIT_EV_EXIT, .rip = 0x1234 };
	struct key_note k;

	rip_event_key(&ev, &k);
	CHECK_EQ_U64(k.kind, KEY_RIP);
	CHECK_EQ_U64(k.key, 0x1234);
	ev.type = VMEXIT_EV_EXIT | VMEXIT_EV_IN_FLIGHT;
	rip_event_key(&ev, &k);
	CHECK_EQ_U64(k.kind, KEY_RIP);
	ev.type = VMEXIT_EV_USER_EXIT;
	ev.error_code = VMEXIT_UEXIT_RIP;
	rip_event_key(&ev, &k);
	CHECK_EQ_U64(k.kind, KEY_RIP);
	CHECK_EQ_U64(k.key, 0x1234);
	/* Written where no kvm_exit was in flight, or by a writer before the flag. */
	ev.error_code = 0;
	ev.rip = 0;
	rip_event_key(&ev, &k);
	CHECK_EQ_U64(k.kind, KEY_NONE);
	CHECK_EQ_U64(k.key, 0);
}

static void add(struct row_table *rt, __u32 tgid, __u32 isa, __u32 reason, __u16 type, __u64 rip,
		__u32 flag, __u64 lat, int times)
{
	struct vmexit_event ev = { .type = type, .tgid = tgid, .tid = tgid, .vcpu = 0, .isa = isa,
				   .reason = reason, .rip = rip, .error_code = flag,
				   .latency_ns = lat };
	struct key_note k;

	rip_event_key(&ev, &k);
	for (int i = 0; i < times; i++)
		CHECK(!event_rows_add_key(rt, BY_VM, &ev, 0, &k));
}

static const struct row *find(const struct row_table *rt, __u32 tgid, __u32 reason, __u32 kind,
			      __u64 rip)
{
	for (__u32 i = 0; i < rt->nr; i++) {
		const struct row *r = &rt->rows[i];

		if (r->key.tgid == tgid && r->key.reason == reason && r->key.key.kind == kind &&
		    (kind != KEY_RIP || r->key.key.key == rip))
			return r;
	}
	return NULL;
}

/*
 * Guest 10's CPUID exits at 12 RIPs, the i-th 13 - i times, and 5 already in the kernel's
 * (other) row: the 10 busiest stay, the last two (2 + 1 exits) join (other), 8 in all. Its
 * HLT exits and guest 11's are other groups, counted apart. none rows are never cut.
 */
static void test_top(void)
{
	struct row_table rt, out;
	const struct row *r;
	struct row *o;

	row_table_init(&rt);
	row_table_init(&out);
	for (int i = 1; i <= 12; i++)
		add(&rt, 10, VMEXIT_ISA_SVM, SVM_CPUID, VMEXIT_EV_EXIT, 0x1000 + i, 0, 100, 13 - i);
	o = row_table_get(&rt, &(struct row_key){ .tgid = 10, .vcpu = -1, .isa = VMEXIT_ISA_SVM,
						  .reason = SVM_CPUID,
						  .key = { .kind = KEY_OTHER } });
	CHECK(o != NULL);
	if (o)
		o->count = o->completed = 5;
	add(&rt, 10, VMEXIT_ISA_SVM, SVM_HLT, VMEXIT_EV_EXIT, 0x2000, 0, 100, 3);
	add(&rt, 10, VMEXIT_ISA_USER, KVM_EXIT_HLT_, VMEXIT_EV_USER_EXIT, 0x2000, VMEXIT_UEXIT_RIP,
	    100, 3);
	add(&rt, 10, VMEXIT_ISA_USER, KVM_EXIT_HLT_, VMEXIT_EV_USER_EXIT, 0, 0, 100, 4);
	add(&rt, 11, VMEXIT_ISA_SVM, SVM_CPUID, VMEXIT_EV_EXIT, 0x1001, 0, 100, 1);
	CHECK(!rip_rows_top(&rt, 10, &out));
	/* 10 CPUID RIPs + (other), HLT, user HLT at the RIP and (none), guest 11's. */
	CHECK_EQ_U64(out.nr, 15);
	for (int i = 1; i <= 10; i++) {
		r = find(&out, 10, SVM_CPUID, KEY_RIP, 0x1000 + i);
		CHECK(r != NULL);
		if (r)
			CHECK_EQ_U64(r->count, 13 - i);
	}
	CHECK(!find(&out, 10, SVM_CPUID, KEY_RIP, 0x100b));
	CHECK(!find(&out, 10, SVM_CPUID, KEY_RIP, 0x100c));
	r = find(&out, 10, SVM_CPUID, KEY_OTHER, 0);
	CHECK(r != NULL);
	if (r)
		CHECK_EQ_U64(r->count, 5 + 2 + 1);
	r = find(&out, 10, KVM_EXIT_HLT_, KEY_RIP, 0x2000);
	CHECK(r != NULL);
	if (r)
		CHECK_EQ_U64(r->count, 3);
	r = find(&out, 10, KVM_EXIT_HLT_, KEY_NONE, 0);
	CHECK(r != NULL);
	if (r)
		CHECK_EQ_U64(r->count, 4);
	r = find(&out, 11, SVM_CPUID, KEY_RIP, 0x1001);
	CHECK(r != NULL);
	if (r)
		CHECK_EQ_U64(r->count, 1);
	/* --top 1: one RIP per group, HLT's single one stays, CPUID's 11 others (78 - 12 exits)
	 * go to (other): CPUID 2 rows, HLT 1, user HLT 2 (its RIP and none), guest 11's 1. */
	CHECK(!rip_rows_top(&rt, 1, &out));
	CHECK_EQ_U64(out.nr, 6);
	r = find(&out, 10, SVM_CPUID, KEY_OTHER, 0);
	CHECK(r != NULL);
	if (r)
		CHECK_EQ_U64(r->count, 5 + 78 - 12);
	row_table_free(&rt);
	row_table_free(&out);
}

static char *print_rows(struct stat_view *v, struct row_table *rt)
{
	struct stat_report rep = { .rows = rt, .final = true, .interval_s = 1 };
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	CHECK(f != NULL);
	if (!f)
		return NULL;
	CHECK(!stat_print(v, &rep, f));
	fclose(f);
	return text;
}

/* JSON: rip in hex, symbol+offset from the guest's table (null without), guest mode. */
static void test_outputs(void)
{
	char path[] = "/tmp/test_rip_rows.XXXXXX", err[256], arg[64];
	struct name_cache names = {};
	struct stat_view v = { .names = &names, .key_mode = KEY_MODE_RIP, .top = 10,
			       .fmt = OUT_JSON };
	struct row_table rt;
	char *text;
	FILE *f;
	int fd = mkstemp(path);

	CHECK(fd >= 0);
	if (fd < 0)
		return;
	f = fdopen(fd, "w");
	fprintf(f, "0000000000001000 T guest_start\n0000000000001010 t guest_cpuid\n"
		   "ffffffff81000000 T native_safe_halt\n");
	fclose(f);
	snprintf(arg, sizeof(arg), "web01=%s", path);
	CHECK(!guest_symbols_add(&v.syms, arg, err, sizeof(err)));
	name_cache_set_at(&names, 10, 0, "web01");
	name_cache_set_at(&names, 11, 0, "db01");
	row_table_init(&rt);
	add(&rt, 10, VMEXIT_ISA_SVM, SVM_CPUID, VMEXIT_EV_EXIT, 0x1010, 0, 100, 3);
	add(&rt, 10, VMEXIT_ISA_SVM, SVM_HLT, VMEXIT_EV_EXIT, 0xffffffff81000006ull, 0, 100, 2);
	add(&rt, 10, VMEXIT_ISA_USER, KVM_EXIT_HLT_, VMEXIT_EV_USER_EXIT, 0, 0, 100, 1);
	add(&rt, 11, VMEXIT_ISA_SVM, SVM_CPUID, VMEXIT_EV_EXIT, 0x1010, 0, 100, 1);
	text = print_rows(&v, &rt);
	CHECK(text && strstr(text, "\"rip\":\"0x1010\",\"symbol\":\"guest_cpuid\","
				   "\"guest_mode\":\"user\""));
	CHECK(text && strstr(text, "\"rip\":\"0xffffffff81000006\",\"symbol\":"
				   "\"native_safe_halt+0x6\",\"guest_mode\":\"kernel\""));
	CHECK(text && strstr(text, "\"rip\":null,\"symbol\":null,\"guest_mode\":null"));
	/* db01 has no table: its RIP stays raw. */
	CHECK(text && strstr(text, "\"guest\":\"db01\"") &&
	      strstr(strstr(text, "\"guest\":\"db01\""), "\"rip\":\"0x1010\",\"symbol\":null,"));
	free(text);
	v.fmt = OUT_TABLE;
	text = print_rows(&v, &rt);
	CHECK(text && strstr(text, "SYMBOL"));
	CHECK(text && strstr(text, "0x1010") && strstr(text, "guest_cpuid "));
	CHECK(text && strstr(text, "native_safe_halt+0x6"));
	CHECK(text && strstr(text, "note: 1 exit(s) to the VMM with no RIP, (none)"));
	free(text);
	v.fmt = OUT_CSV;
	text = print_rows(&v, &rt);
	CHECK(text && strstr(text, ",Symbol,Guest_Mode\n"));
	CHECK(text && strstr(text, ",rip,4112,,,guest_cpuid,user\n"));
	free(text);
	row_table_free(&rt);
	name_cache_free(&names);
	guest_symbols_free(&v.syms);
	unlink(path);
}

int main(void)
{
	test_guest_mode();
	test_event_key();
	test_top();
	test_outputs();
	CHECK_DONE("rip_rows");
}
