/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The track model both Perfetto writers draw (perfetto.c: Chrome JSON, perfetto_proto.c: the
 * native protobuf), so the two formats show the same tracks for the same events:
 *  - per vCPU a kvm-exit track and a VMM track right below it (perfetto.h says why two);
 *  - a thread whose vCPU is not known yet has tracks of its own; once any of its events told
 *    its vCPU, its vcpu -1 events go to that vCPU's tracks;
 *  - per VM the exit rates (guest exits/s, exits to the VMM/s), one value per 100 ms window
 *    of the exits' start times, as perf stat -I 100 would give;
 *  - per VM and exit reason the same rate of that reason's exits ("HLT exits/s", "IO exits to
 *    VMM/s"), a counter track for each reason the VM's exits had.
 * Each track gets a synthetic id (unique per trace, in order of first use) that the writers
 * use as a tid (JSON) or in a track uuid (protobuf).
 */
#ifndef VMEXIT_TRACE_TRACKS_H
#define VMEXIT_TRACE_TRACKS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "hashmap.h"
#include "vmexit.h"

/* The values are hashed (track_hash): changing them reorders the trace's counters. */
enum trace_track_kind {
	TT_VCPU = 1,	/* id = vcpu: the tracks of one vCPU */
	TT_THREAD,	/* id = tid: the thread's vCPU once known, its own tracks before */
	TT_VM,		/* id = 0: the VM's exit-rate counters */
};

enum { TT_KVM, TT_VMM, TT_NR };

/* Exit rates are drawn as counter tracks, one value per window (like perf stat -I 100). */
#define TT_RATE_WINDOW_NS	100000000ULL

struct trace_track_key {
	__u32 tgid;
	__u32 id;
	__u32 kind;
};

struct trace_track {
	__u32 tgid;		/* the key again, for the writers */
	__u32 id;
	__u8 kind;
	bool vcpu_known;	/* TT_THREAD */
	bool has_tsc;
	__s32 vcpu;		/* TT_THREAD */
	__u32 tid[TT_NR];	/* synthetic ids, 0 until the track is first used */
	__u64 tsc;		/* latest TSC offset (TT_VCPU / TT_THREAD) */
	__u64 win_kvm;		/* TT_VM: exits in the current rate window */
	__u64 win_vmm;
	bool win_active;	/* TT_VM: drew a non-zero rate last window (so draw the drop to 0) */
	bool announced;		/* TT_VM: the writer has described the VM's own track */
	bool counters;		/* TT_VM: ... and its counter tracks */
};

/*
 * The counters of the VMs are drawn in the map's slot order, so this hash (and the map's
 * growth) decides the order of the lines in a trace: kept as it was for byte-identical output.
 */
static inline __u64 trace_track_hash(const struct trace_track_key *k)
{
	__u64 h = ((__u64)k->tgid << 32 | k->id) * 0x9e3779b97f4a7c15ull;

	return (h ^ (h >> 29) ^ (__u8)k->kind) * 0xbf58476d1ce4e5b9ull >> 17;
}

DEFINE_HASHMAP_HASH(trace_track_map, struct trace_track_key, struct trace_track, trace_track_hash)

/* One reason's exits in one VM: the user flag keeps KVM_EXIT_HLT apart from a HLT exit. */
struct trace_rate_key {
	__u32 tgid;
	__u32 isa;
	__u32 reason;
	__u32 user;
};

struct trace_rate {
	struct trace_rate_key k;	/* again, for the writers */
	__u32 seq;		/* order of first use, from 0: the writers' track numbers */
	__u64 win;		/* exits in the current rate window */
	bool win_active;	/* drew a non-zero rate last window (so draw the drop to 0) */
	bool announced;		/* the writer has described its track */
};

DEFINE_HASHMAP(trace_rate_map, struct trace_rate_key, struct trace_rate)

/* One VM's rates for the window starting at ts_ns, in events per second. */
typedef void (*trace_rate_fn)(void *ctx, struct trace_track *vm, __u64 ts_ns, __u64 kvm_per_s,
			      __u64 vmm_per_s);
/* One reason's rate in one VM for the window starting at ts_ns, after the VMs' own. */
typedef void (*trace_reason_rate_fn)(void *ctx, struct trace_rate *r, __u64 ts_ns, __u64 per_s);

struct trace_tracks {
	struct trace_track_map map;
	__u32 next_id;
	__u64 win;		/* current rate window: ts / TT_RATE_WINDOW_NS */
	bool win_started;
	trace_rate_fn draw;
	trace_reason_rate_fn draw_reason;
	void *ctx;
	struct trace_rate_map rates;
	__u32 nr_rates;
};

/*
 * first_id: the first synthetic id; draw gets each VM's rates as its windows end, draw_reason
 * each reason's.
 */
void trace_tracks_init(struct trace_tracks *tt, __u32 first_id, trace_rate_fn draw,
		       trace_reason_rate_fn draw_reason, void *ctx);
/* The entry an event is drawn on; NULL only on ENOMEM. */
struct trace_track *trace_tracks_of_event(struct trace_tracks *tt, const struct vmexit_event *ev);
/* A VM's entry (its rates, what the writer said of it); NULL only on ENOMEM. */
struct trace_track *trace_tracks_vm(struct trace_tracks *tt, __u32 tgid);
/* Counts an exit (user: to the VMM) in its VM's rate, drawing the windows it closes. */
void trace_tracks_count(struct trace_tracks *tt, const struct vmexit_event *ev, bool user);
/* Track which of t; sets *added when it is first used (the writer then describes it). */
__u32 trace_track_id(struct trace_tracks *tt, struct trace_track *t, int which, bool *added);
/* "HLT exits/s", "IO exits to VMM/s": the counter track of one reason's rate. */
void trace_rate_name(const struct trace_rate *r, char *buf, size_t len);
/* "vCPU 3", "vCPU 3 (VMM)", "thread 1234". */
void trace_track_name(const struct trace_track *t, int which, char *buf, size_t len);
/* vCPUs in numeric order, each VMM track right below its vCPU, threads after. */
long long trace_track_sort(const struct trace_track *t, int which);
/* Draws the last window and the drop to 0 after it. */
void trace_tracks_finish(struct trace_tracks *tt);
void trace_tracks_free(struct trace_tracks *tt);

#define trace_tracks_for_each(slot, tt) hashmap_for_each(slot, &(tt)->map)

#endif /* VMEXIT_TRACE_TRACKS_H */
