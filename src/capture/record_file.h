/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The vmexit record file: `vmexit record -o FILE` writes it, `vmexit report -i FILE` reads it.
 * docs/record-format.md describes the bytes; this header describes the C API.
 *
 * Every message written into an err buffer is one complete line without a trailing newline
 * that names the file (or "<memory>"), e.g.
 *	"trace.vmexit: offset 4816: checksum mismatch in event record (stored 0x1234abcd,
 *	 computed 0x9f00e1c2)"
 * so callers print it as is, prefixed with "vmexit: ".
 */
#ifndef VMEXIT_RECORD_FILE_H
#define VMEXIT_RECORD_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "vmexit.h"
#include "wake.h"
#include "stack_table.h"
#include "tsc_clock.h"

#define REC_FORMAT_MAJOR	1	/* incompatible changes: readers refuse a larger major */
#define REC_FORMAT_MINOR	10	/* compatible additions: readers skip the unknown */

#define REC_NAME_MAX		255	/* longest guest name stored; longer ones are cut */

/* What the writer knew about the host and its clocks when recording started. */
struct rec_meta {
	char host[65];		/* uname nodename */
	char kernel[65];	/* uname release */
	__u64 mono_ns;		/* CLOCK_MONOTONIC at start: event ts_ns use this clock */
	__u64 real_ns;		/* CLOCK_REALTIME at the same moment: wall = real + (ts - mono) */
	double tsc_mhz;		/* 0 when unknown */
	bool split;		/* recorded with --split: exits carry oncpu/blocked/runq (1.1) */
	bool keys;		/* recorded with --keys: exits carry their key (1.5) */
	bool wake;		/* recorded with --wake: the deliveries are wake records (1.8) */
	/* ... and the interrupts KVM posted with no exit are wake posted records (1.9; a 1.8
	 * file kept none: its posted are unknown, not 0). Set by the reader. */
	bool wake_posted;
	/* ... and the interrupts made pending for vCPUs never seen entering guest mode are wake
	 * untimed records (1.10; older files kept none: unknown, not 0). Set by the reader. */
	bool wake_untimed;
	bool halts;		/* ... and the halts hlt records (a 1.9 writer's; reader only) */
	long long halt_poll_ns;	/* --wake: KVM's halt_poll_ns when recording began; -1 unknown */
	/* Host TSC against mono at start (1.6; mono_ns 0: none), and the kernel's TSC kHz
	 * from sysfs (0: not exported). The pair at the end is a REC_TSC_CLOCK item. */
	struct tsc_pair tsc_start;
	__u32 tsc_khz;
};

/* Fills host, kernel and the two clocks from uname() / clock_gettime(), the TSC pair and
 * kHz where the host has them; tsc_mhz = 0. */
void rec_meta_now(struct rec_meta *meta);

enum rec_kind {
	REC_EVENT = 1,		/* item.ev is valid */
	REC_GUEST = 2,		/* item.tgid / .start / .name: a VM's name, for later events */
	REC_LOST = 3,		/* item.ts_ns / item.lost[]: kernel loss counters grew by these */
	REC_STACK = 4,		/* item.stack: --stacks, at the end of a recording (1.4) */
	REC_TSC_CLOCK = 5,	/* item.tsc_pair: host TSC against mono when recording ended (1.6) */
	REC_TSC_SCALE = 6,	/* item.tgid, .vcpu, .ratio, .frac_bits: a vCPU's TSC scaling (1.6) */
	REC_TSC_APPLIED = 7,	/* item.tgid, .vcpu, .ts_ns, .write_ns, .tsc_offset, .ratio,
				 * .frac_bits: a vCPU's TSC as KVM applied it, read (1.7) */
	/* item.tgid, .start, .io, .lo, .hi, .name: a region of a guest's QEMU map (record --qmp,
	 * 1.7): report names and groups that guest's keys with it as stat --qmp does live. */
	REC_KEY_REGION = 8,
	/* item.ev, type VMEXIT_EV_WAKE (include/vmexit.h says its fields): one interrupt
	 * delivery (record --wake, 1.8), its parts summing exactly to its latency. */
	REC_WAKE = 9,
	/* item.ts_ns / item.wake_lost[]: the delivery programs' loss counters (enum wake_lost)
	 * grew by these (record --wake, 1.8). */
	REC_WAKE_LOST = 10,
	/* item.ev, type VMEXIT_EV_WAKE_POSTED: an interrupt KVM posted to a vCPU in guest mode,
	 * taken with no exit (record --wake, 1.9): counted, not timed. */
	REC_WAKE_POSTED = 11,
	/* item.ev, type VMEXIT_EV_HALT or VMEXIT_EV_HLT: a halt or a halted exit (record --wake,
	 * 1.9), its parts summing exactly to its latency. */
	REC_HLT = 12,
	/* item.ev, type VMEXIT_EV_WAKE_UNTIMED: an interrupt made pending for a vCPU never seen
	 * entering guest mode (record --wake, 1.10): counted, not timed. */
	REC_WAKE_UNTIMED = 13,
};

struct rec_item {
	enum rec_kind kind;
	__u64 offset;				/* file offset of the record (for messages) */
	struct vmexit_event ev;			/* REC_EVENT */
	__u32 tgid;				/* REC_GUEST */
	/* REC_GUEST: the VMM process's start time (cell_key.proc_start, CLOCK_MONOTONIC as the
	 * events' ts_ns), 0 when unknown (files before 1.3): its pid's events from then on are
	 * its own until the pid's next process starts. */
	__u64 start;
	char name[REC_NAME_MAX + 1];		/* REC_GUEST, NUL-terminated, any bytes but NUL */
	__u64 ts_ns;				/* REC_LOST: CLOCK_MONOTONIC when sampled */
	__u64 lost[NR_LOST];			/* REC_LOST: increase of each enum vmexit_lost */
	__u64 wake_lost[NR_WAKE_LOSSES];	/* REC_WAKE_LOST: of each enum wake_lost */
	/* REC_STACK: frames point into the reader's buffer, valid until its next call. */
	struct stack_row stack;
	char *frames[STACK_DEPTH_MAX];
	struct tsc_pair tsc_pair;		/* REC_TSC_CLOCK */
	/* REC_TSC_SCALE: guest TSC = host TSC * ratio / 2^frac_bits + offset */
	__s32 vcpu;
	__u32 frac_bits;
	__u64 ratio;
	/* REC_TSC_APPLIED: the offset KVM's debugfs gave at ts_ns (ratio 0: no scaling files),
	 * read after the kvm_write_tsc_offset event of write_ns (0: at the start of recording, or
	 * when the VMM was first seen) */
	__u64 tsc_offset;
	__u64 write_ns;
	/* REC_KEY_REGION: [lo, hi] in the I/O space (io) or memory, named name */
	bool io;
	__u64 lo, hi;
};

struct rec_writer;

/*
 * Creates path ("-" = standard output) and prepares the header. Refuses an existing file
 * unless force is set. The header is written with the first event / lost record, flush or
 * close, so guests added before that are part of the header's guest table. Returns NULL with
 * a message in err on failure.
 */
struct rec_writer *rec_writer_open(const char *path, bool force, const struct rec_meta *meta,
				   char *err, size_t errlen);
/*
 * Append to a large buffer that is written out when full: few syscalls. All return 0 or
 * -errno; after a failed write every later call fails with the same error (rec_writer_error
 * gives the message).
 */
int rec_writer_add_event(struct rec_writer *w, const struct vmexit_event *ev);
/*
 * A delivery (VMEXIT_EV_WAKE; rec_writer_add_event() sends one here too): a wake record; a
 * posted one (VMEXIT_EV_WAKE_POSTED, likewise): a wake posted record.
 */
int rec_writer_add_wake(struct rec_writer *w, const struct vmexit_event *ev);
/* A halt or halted exit (VMEXIT_EV_HALT, _HLT; rec_writer_add_event() sends them here too). */
int rec_writer_add_hlt(struct rec_writer *w, const struct vmexit_event *ev);
/* The delivery programs' loss counters grew by these by ts_ns. */
int rec_writer_add_wake_lost(struct rec_writer *w, __u64 ts_ns,
			     const __u64 lost[NR_WAKE_LOSSES]);
/* start: the VMM process's start time (rec_item.start), 0 if unknown. */
int rec_writer_add_guest(struct rec_writer *w, __u32 tgid, __u64 start, const char *name);
int rec_writer_add_lost(struct rec_writer *w, __u64 ts_ns, const __u64 lost[NR_LOST]);
/* A host TSC / mono pair (record writes one as it ends: with the header's, the TSC rate). */
int rec_writer_add_tsc_clock(struct rec_writer *w, const struct tsc_pair *p);
/* A vCPU's TSC scaling ratio (KVM's fixed point, frac_bits fraction bits), where not 1. */
int rec_writer_add_tsc_scale(struct rec_writer *w, __u32 tgid, __s32 vcpu, __u64 ratio,
			     __u32 frac_bits);
/* A vCPU's TSC offset and scaling as KVM applies it, read at read_ns (after the offset write
 * traced at write_ns; 0: none, read at the start or when the VMM appeared). ratio 0: unknown. */
int rec_writer_add_tsc_applied(struct rec_writer *w, __u32 tgid, __s32 vcpu, __u64 read_ns,
			       __u64 write_ns, __u64 offset, __u64 ratio, __u32 frac_bits);
/* record --qmp: a region of guest (tgid, start)'s QEMU map (a flat range of `info mtree -f`). */
int rec_writer_add_key_region(struct rec_writer *w, __u32 tgid, __u64 start, bool io, __u64 lo,
			      __u64 hi, const char *name);
/* --stacks: one (guest, reason, stack) row, frames named (each cut at 255 bytes). */
int rec_writer_add_stack(struct rec_writer *w, const struct stack_row *r);
/*
 * Writes every buffered record. Records are only ever written whole and in order, so a
 * file cut at any point (kill -9, full disk) holds every record of the last flush before it.
 */
int rec_writer_flush(struct rec_writer *w);
/* Writes the end record, flushes, closes and frees (also on error). 0 or -errno. */
int rec_writer_close(struct rec_writer *w);
/* Last error as a one-line message naming the file, "" if none. */
const char *rec_writer_error(const struct rec_writer *w);
/* Events written so far (buffered or not), deliveries included. */
__u64 rec_writer_events(const struct rec_writer *w);
/* Events whose records reached the file whole (a full disk takes part of a buffer). */
__u64 rec_writer_events_written(const struct rec_writer *w);
/* Writes to a regular file it created or truncated (not "-", a pipe or a device such as
 * /dev/null): one that may be removed again when recording never started. */
bool rec_writer_regular(const struct rec_writer *w);

struct rec_reader;

/* Opens path ("-" = standard input) and checks the header. NULL + message on failure. */
struct rec_reader *rec_reader_open(const char *path, char *err, size_t errlen);
/* Same over a memory buffer, which must outlive the reader (fuzzing, tests). */
struct rec_reader *rec_reader_open_mem(const void *data, size_t len, char *err, size_t errlen);
const struct rec_meta *rec_reader_meta(struct rec_reader *r);
/* Format version of the file, as major << 16 | minor. */
__u32 rec_reader_version(struct rec_reader *r);
/*
 * 1 = item filled (kind says which), 0 = clean end (the writer's end record was read and
 * matched), -1 = the file is damaged or could not be read: err says "PATH: offset N: what".
 * Every valid record before the damage has been returned first. The guests of the header
 * come first, as REC_GUEST items. After -1 or 0 every later call returns the same.
 */
int rec_reader_next(struct rec_reader *r, struct rec_item *item, char *err, size_t errlen);
/*
 * The reason's name as the writer knew it (the file's table), or NULL when the writer had no
 * name for it. Valid until rec_reader_close.
 */
const char *rec_reader_reason_name(struct rec_reader *r, __u32 isa, __u32 reason);
/* Number of (isa, code, name) entries in the file's reason table. */
size_t rec_reader_reason_count(struct rec_reader *r);
/*
 * Records of types this reader does not know (a newer minor's), skipped as the format says:
 * how many, and the first one's type. Whoever reads the file says so (one line), never silent.
 */
__u64 rec_reader_skipped(struct rec_reader *r, __u16 *first_type);
void rec_reader_close(struct rec_reader *r);

/* CRC32C (Castagnoli) as used by the format; exported for tests and tools. */
__u32 rec_crc32c(__u32 crc, const void *data, size_t len);

#endif /* VMEXIT_RECORD_FILE_H */
