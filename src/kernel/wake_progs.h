/* SPDX-License-Identifier: GPL-2.0 */
/* stat --wake: bpf/wake.bpf.c's programs, loaded and attached only when asked for. */
#ifndef VMEXIT_WAKE_PROGS_H
#define VMEXIT_WAKE_PROGS_H

#include <stdbool.h>
#include <stddef.h>
#include "wake_rows.h"

struct wake_bpf;
struct bpf_link;

#define WAKE_MAX_LINKS	16	/* bpf/wake.bpf.c's programs, with room */

struct wake_progs {
	struct wake_bpf *skel;
	/* Attached one by one (the skeleton's attach would not name the hook refused). */
	struct bpf_link *links[WAKE_MAX_LINKS];
	int nr_links;
};

/*
 * What the session traces, so that the deliveries and halts kept are its guests' as its exits
 * are: the hash pid_fd (the session's pid_filter, with the forks it follows) when filter_pids,
 * and one vCPU (-c; -1: all).
 */
struct wake_scope {
	int pid_fd;
	bool filter_pids;
	__s32 vcpu;
};

/* 0, or -errno after one line naming the program that failed to load or attach. */
int wake_progs_open(struct wake_progs *w, const struct wake_scope *sc);
/*
 * stream --wake: the same, each delivery also a VMEXIT_EV_WAKE record in the ring buffer map
 * ring_fd (the session's events; -1: none, as wake_progs_open()); the reader woken as the
 * session's exits wake it (its stream_wake_shift).
 */
int wake_progs_open_stream(struct wake_progs *w, const struct wake_scope *sc, int ring_fd,
			   unsigned int wake_shift);
/* The records the ring buffer could not take (stream --wake), since loading. */
__u64 wake_progs_events_lost(const struct wake_progs *w);
/* The programs' loss counters (enum wake_lost) since loading; 0 without programs. */
void wake_progs_lost(const struct wake_progs *w, __u64 out[NR_WAKE_LOST]);
/* 0 or -ENOMEM / -errno of a map read (said). */
int wake_progs_read(struct wake_progs *w, struct wake_snapshot *out);
/* Detaches the programs (no delivery is kept or emitted after), the maps kept for reading. */
void wake_progs_detach(struct wake_progs *w);
void wake_progs_close(struct wake_progs *w);
/* Its programs (up to max) into progs, for serve's vmexit_bpf_run_seconds; how many. */
struct bpf_program;
int wake_progs_list(const struct wake_progs *w, struct bpf_program **progs, int max);
/*
 * Deletes the delivery and halt cells of every VMM (pid, start time) keep() says no (serve:
 * guests forgotten after --keep), so that a server of months keeps room for the guests to
 * come. 0 or -errno.
 */
int wake_progs_forget(struct wake_progs *w, bool (*keep)(void *ctx, __u32 tgid, __u64 start),
		      void *ctx);
/* /sys/module/kvm/parameters/halt_poll_ns, or -1 when it cannot be read. */
long long wake_halt_poll_ns(void);

#endif /* VMEXIT_WAKE_PROGS_H */
