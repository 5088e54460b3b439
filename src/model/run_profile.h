/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One run as `vmexit diff` and `vmexit explain` see it, whatever it was read from (a recording,
 * an import, stat --json): per guest (by name: pids differ between runs) and reason, and where
 * the source has them per key and per vCPU, the exits' counts, time and latency histogram, over
 * the guest's time (the run's span times its vCPUs). Built from the row model (rows.h).
 */
#ifndef VMEXIT_RUN_PROFILE_H
#define VMEXIT_RUN_PROFILE_H

#include <stdbool.h>
#include "hashmap.h"
#include "rows.h"
#include "vmexit.h"

#define PROF_NAME_MAX	64
#define PROF_ALL	"(all)"		/* --all: every guest summed under this name */

/* The levels of the drill-down, each a complete split of the guest x reason rows. */
enum prof_level { PROF_REASON, PROF_KEY, PROF_VCPU, PROF_RIP };

struct prof_id {
	__u32 guest;		/* index in run_profile.guests */
	__u32 level;		/* enum prof_level */
	__s32 vcpu;		/* PROF_VCPU; else -1 */
	__u32 isa;
	__u32 reason;
	__u32 pad;
	struct key_note key;	/* PROF_KEY; else zero */
};

struct prof_row {
	struct prof_id id;
	__u64 count;
	__u64 completed;	/* exits with a latency: those in total_ns and hist */
	__u64 total_ns;
	__u64 min_ns, max_ns;	/* of the completed exits */
	__u64 oncpu_ns, blocked_ns, runq_ns;	/* --split sources; else 0 */
	__u64 hist[NR_BUCKETS];
};

struct prof_guest {
	char name[PROF_NAME_MAX];
	__u32 vcpus;		/* vCPUs seen (at least 1) */
};

/* Kernel stacks of the blocked time, folded ("frame;frame", outermost first). */
struct prof_stack {
	__u32 guest;
	__u32 isa, reason;
	char *folded;
	__u64 ns;
	__u64 count;
};

DEFINE_HASHMAP(prof_index, struct prof_id, __u32)

struct run_profile {
	struct prof_row *rows;
	__u32 nr, cap;
	struct prof_index index;
	struct prof_guest *guests;
	__u32 nr_guests, cap_guests;
	struct prof_stack *stacks;
	__u32 nr_stacks, cap_stacks;
	double span_s;		/* the time the source covers */
	bool all;		/* every guest summed under PROF_ALL */
	bool keys;		/* the source has keys (PROF_KEY rows) */
	bool vcpus;		/* ... vCPUs (PROF_VCPU rows) */
	bool hist;		/* ... latency histograms */
	bool split;		/* ... on CPU / blocked / run-queue time */
	bool rips;		/* ... guest RIPs of kernel exits (PROF_RIP rows) */
	bool kernel_exits;	/* some exit was a kernel one (kvm_exit fired) */
	const char *kind;	/* "recording", "trace.dat", "perf.data", "stat --json" */
};

/* Guest names of source rows: name(ctx, tgid, start). */
typedef const char *prof_name_fn(void *ctx, __u32 tgid, __u64 start);

void run_profile_init(struct run_profile *p, bool all);
void run_profile_free(struct run_profile *p);
/*
 * Adds the rows of rt (any grouping of rows.h: by VM or vCPU, with keys or not) to every level
 * they tell: each row counts once at PROF_REASON, at PROF_KEY when it has a key, at PROF_VCPU
 * when it has a vCPU; a --by rip row (KEY_RIP) only at PROF_RIP (its exits are counted by the
 * other rows already). 0 or -ENOMEM.
 */
int run_profile_add_rows(struct run_profile *p, const struct row_table *rt, prof_name_fn *name,
			 void *ctx);
/* A stack's time, folded frames given innermost first as stack_row has them. 0 or -ENOMEM. */
int run_profile_add_stack(struct run_profile *p, const char *guest, __u32 isa, __u32 reason,
			  char *const *frames, __u32 nr_frames, __u64 ns, __u64 count);
/* The guest's index (added when new), or -ENOMEM. */
int run_profile_guest(struct run_profile *p, const char *name);
/* Seconds of vCPU time of a guest in the run: the span times its vCPUs. */
double run_profile_guest_s(const struct run_profile *p, __u32 guest);
const struct prof_row *run_profile_find(const struct run_profile *p, const struct prof_id *id);
/*
 * The median of a row's histogram, interpolated within its bucket (the exits spread evenly in
 * it): it moves smoothly with the distribution, where the bucket middle that p50 shows jumps by
 * a bucket (up to 1/8) at once. 0 when the row has none.
 */
double prof_row_median(const struct prof_row *r);
/* p50 etc. of a row's histogram; 0 when it has none. */
__u64 prof_row_percentile(const struct prof_row *r, double pct);

#endif /* VMEXIT_RUN_PROFILE_H */
