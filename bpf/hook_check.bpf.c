// SPDX-License-Identifier: GPL-2.0
/*
 * The start-up check of the kvm_exit fast path (src/hooks.c): the raw and the classic
 * tracepoints, both attached for a short window, read the same exits; the fast path is used
 * only if they agree on every one.
 *
 * Exits are paired per thread, not by time or CPU: a vCPU thread's kvm_exit and kvm_entry
 * alternate, so everything a thread sees from one kvm_exit to its next kvm_exit is one cycle
 * (both exit programs, then the entry programs, in whatever order the kernel calls them). A
 * cycle is judged when the thread's next one starts, and only if it started while armed
 * (userspace arms once all its programs are attached), so attach and detach never show up
 * as a disagreement.
 */
#include "exit_read.bpf.h"
#include "vmx_vector.bpf.h"

#define TP_PASS		1	/* as in vmexit.bpf.c: never hide events from perf users */

/* Test-only: added to the fast path's reasons, to prove that a disagreement is caught. */
const volatile __u32 check_skew = 0;
/* --by rip: the fast path reads the RIP too (bpf/exit_read.bpf.h), and both sides must agree. */
const volatile bool check_rip = false;
/*
 * --by key: the interrupt vectors too. The fast path's is read from KVM's cache at the exit,
 * or else at the cycle's raw entry, as the fast path reads it (bpf/vmx_vector.bpf.h).
 */
const volatile bool check_vector = false;
/*
 * The classic kvm_entry too: only where vmexit's classic pair would take it, a kernel whose BTF
 * has no kvm_entry (src/kernel/hooks.c). Elsewhere both pairs end exits at the BTF-enabled
 * entry, and a classic entry here would only cost its record and, at the end, a grace period.
 */
const volatile bool check_classic_entry = true;

/* Written by userspace through the mmapped .bss. */
bool armed;
/*
 * The verdict is taken: the programs stay attached until a thread of vmexit has detached them
 * (a grace period or more, seconds on a slow machine) and do nothing meanwhile, so that the
 * first exits traced do not pay for the check's hash lookups and its vCPU reads.
 */
bool done;

struct check_result result;

enum { SEEN_RAW_EXIT = 1, SEEN_CLASSIC_EXIT = 2, SEEN_RAW_ENTRY = 4, SEEN_CLASSIC_ENTRY = 8 };

struct cycle {
	bool armed;		/* armed when the cycle's first exit came */
	bool entered;		/* an entry program ran: the next exit starts a new cycle */
	__u8 seen;
	bool vector_unread;	/* the raw side's vector was due and KVM never cached it */
	__u64 vector_vcpu;	/* the raw exit's vCPU, its vector to read at the raw entry */
	struct exit_info raw;
	struct exit_info classic;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct cycle);
} cycles SEC(".maps");

/* Per (isa << 32 | reason): exits of judged cycles as each side read them (--check-hooks). */
struct reason_counts {
	__u64 raw;
	__u64 classic;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u64);
	__type(value, struct reason_counts);
} counts SEC(".maps");

static const struct cycle zero_cycle;

/* Whether both sides give the exit the same vector key, or both none. */
static __always_inline bool vectors_agree(const struct cycle *c)
{
	__u64 raw_v = 0, classic_v = 0;
	bool raw_k, classic_k;

	if (c->vector_unread)
		return !key_exit_vector(c->classic.isa, c->classic.reason, c->classic.intr_info,
					&classic_v);
	raw_k = key_exit_vector(c->raw.isa, c->raw.reason, c->raw.intr_info, &raw_v);
	classic_k = key_exit_vector(c->classic.isa, c->classic.reason, c->classic.intr_info,
				    &classic_v);
	return raw_k == classic_k && raw_v == classic_v;
}

static __always_inline void count_reason(__u32 isa, __u32 reason, bool raw)
{
	__u64 key = (__u64)isa << 32 | reason;
	struct reason_counts *rc, zero = {};

	rc = bpf_map_lookup_elem(&counts, &key);
	if (!rc) {
		bpf_map_update_elem(&counts, &key, &zero, BPF_NOEXIST);
		rc = bpf_map_lookup_elem(&counts, &key);
		if (!rc)
			return;
	}
	__sync_fetch_and_add(raw ? &rc->raw : &rc->classic, 1);
}

static __noinline void cycle_judge(struct cycle *c)
{
	bool raw = c->seen & SEEN_RAW_EXIT, classic = c->seen & SEEN_CLASSIC_EXIT;
	__u8 entries = c->seen & (SEEN_RAW_ENTRY | SEEN_CLASSIC_ENTRY);
	__u8 both = SEEN_RAW_ENTRY | (check_classic_entry ? SEEN_CLASSIC_ENTRY : 0);

	if (!c->armed)
		return;
	if (raw)
		count_reason(c->raw.isa, c->raw.reason, true);
	if (classic)
		count_reason(c->classic.isa, c->classic.reason, false);
	if (raw && classic) {
		bool same = c->raw.isa == c->classic.isa && c->raw.reason == c->classic.reason &&
			    c->raw.vcpu == c->classic.vcpu &&
			    (!check_rip || c->raw.rip == c->classic.rip);

		if (same && check_vector && !vectors_agree(c)) {
			__sync_fetch_and_add(&result.vector_mismatched, 1);
			same = false;
		}
		if (same) {
			__sync_fetch_and_add(&result.matched, 1);
		} else if (__sync_fetch_and_add(&result.mismatched, 1) == 0) {
			result.bad_isa = c->classic.isa;
			result.bad_raw = c->raw.reason;
			result.bad_classic = c->classic.reason;
		}
	} else if (classic) {
		__sync_fetch_and_add(&result.unpaired, 1);
	} else if (raw) {
		__sync_fetch_and_add(&result.classic_missed, 1);
	}
	if (entries == both)
		__sync_fetch_and_add(&result.entries, 1);
	else if (entries == SEEN_CLASSIC_ENTRY)
		__sync_fetch_and_add(&result.unpaired, 1);
	else if (entries)
		__sync_fetch_and_add(&result.classic_missed, 1);
}

static __always_inline struct cycle *saw_exit(const struct exit_info *x, bool raw)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct cycle *c = bpf_map_lookup_elem(&cycles, &tid);

	if (!c) {
		bpf_map_update_elem(&cycles, &tid, &zero_cycle, BPF_NOEXIST);
		c = bpf_map_lookup_elem(&cycles, &tid);
		if (!c)
			return NULL;
		c->entered = true;
	}
	if (c->entered) {
		/* The first exit program of a new cycle: judge the last one, start afresh. */
		cycle_judge(c);
		c->seen = 0;
		c->vector_vcpu = 0;
		c->vector_unread = false;
		c->entered = false;
		c->armed = armed;
	}
	c->seen |= raw ? SEEN_RAW_EXIT : SEEN_CLASSIC_EXIT;
	if (raw)
		c->raw = *x;
	else
		c->classic = *x;
	return c;
}

static __always_inline void saw_entry(bool raw)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct cycle *c = bpf_map_lookup_elem(&cycles, &tid);

	/* A thread's first entry, or one whose exit came before we attached: no cycle. */
	if (!c)
		return;
	c->entered = true;
	c->seen |= raw ? SEEN_RAW_ENTRY : SEEN_CLASSIC_ENTRY;
	/* The fast path's late read of the exit's vector (bpf/vmx_vector.bpf.h). */
	if (raw && c->vector_vcpu) {
		c->vector_unread = !vmx_cached_intr_info((void *)c->vector_vcpu, c->raw.reason,
							 &c->raw.intr_info, false);
		c->vector_vcpu = 0;
	}
}

SEC("tp_btf/kvm_exit")
int check_exit_raw(__u64 *ctx)
{
	struct exit_info x = { .vcpu = -1 };
	struct kvm_vcpu *vcpu;
	struct cycle *c;

	if (done)
		return TP_PASS;
	if (!raw_exit_read(ctx, &x, true, check_rip, false)) {
		if (armed)
			__sync_fetch_and_add(&result.unreadable, 1);
		return TP_PASS;
	}
	x.reason += check_skew;
	vcpu = check_vector && vmx_vector_exit(x.isa, x.reason) ? raw_exit_vcpu(ctx) : NULL;
	if (vcpu && vmx_cached_intr_info(vcpu, x.reason, &x.intr_info, false))
		vcpu = NULL;
	c = saw_exit(&x, true);
	if (c && vcpu)
		c->vector_vcpu = (__u64)vcpu;
	return TP_PASS;
}

SEC("tp/kvm/kvm_exit")
int check_exit_classic(struct trace_event_raw_kvm_exit *ctx)
{
	struct exit_info x = { .vcpu = -1 };

	if (done)
		return TP_PASS;
	/* With --by key the record's intr_info too, for the vectors. */
	classic_exit_read(ctx, &x, check_vector);
	if (armed)
		__sync_fetch_and_add(&result.seen, 1);
	saw_exit(&x, false);
	return TP_PASS;
}

SEC("tp_btf/kvm_entry")
int check_entry_raw(void *ctx)
{
	if (done)
		return TP_PASS;
	saw_entry(true);
	return TP_PASS;
}

SEC("tp/kvm/kvm_entry")
int check_entry_classic(void *ctx)
{
	if (done)
		return TP_PASS;
	saw_entry(false);
	return TP_PASS;
}

char LICENSE[] SEC("license") = "GPL";
