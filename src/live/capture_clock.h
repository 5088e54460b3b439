/* SPDX-License-Identifier: GPL-2.0 */
/*
 * When the stream reader (live_events.c) reads the ring buffer, and when it does its chores.
 * The kernel wakes the reader only once a batch of records is pending (stream_wake_shift in
 * bpf/handlers.bpf.h), not at each record: the reader reads on its own clock too, every
 * CAPTURE_READ_NS, so that a record waits no longer than that to be read and written out
 * whatever the rate. The chores that cost system calls (the loss counters, handing cells of
 * exited threads back) run every CAPTURE_CHORES_NS, however often the kernel wakes the reader.
 */
#ifndef VMEXIT_CAPTURE_CLOCK_H
#define VMEXIT_CAPTURE_CLOCK_H

#include <linux/types.h>

#define CAPTURE_READ_NS		(20 * 1000000ull)
#define CAPTURE_CHORES_NS	(100 * 1000000ull)
/*
 * The longest one read of the ring lasts. libbpf's consume returns only once the ring is
 * empty: a reader slower than the exits (the SVM bed, KVM over TCG) stayed in it while the
 * guest ran, so record's tick, and its QMP asks with it, first ran after QEMU quit (its
 * sockets gone: "no such socket", 2 of 3 test_qmp_host bed runs).
 */
#define CAPTURE_SLICE_NS	CAPTURE_CHORES_NS

enum capture_due {
	CAPTURE_READ = 1,		/* read the ring, write the output out */
	CAPTURE_CHORES = 2,		/* and the chores */
};

struct capture_clock {
	__u64 read_at;
	__u64 chores_at;
};

void capture_clock_start(struct capture_clock *c, __u64 now_ns);

/* How long to wait for the kernel's wakeup from now_ns, in ms: until the next read or end_ns
 * (0: none), whichever comes first. */
int capture_clock_wait_ms(const struct capture_clock *c, __u64 now_ns, __u64 end_ns);

/* When a read that begins at now_ns stops, read out or not: a slice later, or at end_ns (0:
 * none) if that comes first. */
__u64 capture_clock_read_until(__u64 now_ns, __u64 end_ns);

/* What is due at now_ns (enum capture_due bits; 0: nothing), each set again a period from
 * now: after a stall (SIGSTOP, a busy host) once, not once per period missed. */
unsigned int capture_clock_due(struct capture_clock *c, __u64 now_ns);

#endif /* VMEXIT_CAPTURE_CLOCK_H */
