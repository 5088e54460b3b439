/* SPDX-License-Identifier: GPL-2.0 */
/* The events the Perfetto writers' tests (JSON and protobuf) feed both writers. */
#ifndef VMEXIT_TEST_TRACE_EVENTS_H
#define VMEXIT_TEST_TRACE_EVENTS_H

#include "vmexit.h"

/* An event with recognisable exit fields: RIP from its time, the rest fixed. */
static inline struct vmexit_event ev(__u16 type, __u32 tgid, __u32 tid, __s32 vcpu, __u64 ts,
				     __u64 lat, __u16 isa, __u32 reason)
{
	struct vmexit_event e = {
		.ts_ns = ts, .latency_ns = lat, .rip = 0xffffffff81000000ull + ts,
		.info1 = 0x10, .info2 = 0xdeadbeefcafef00dull, .intr_info = 0x800000ec,
		.error_code = 3, .tgid = tgid, .tid = tid, .vcpu = vcpu, .reason = reason,
		.cpu = 7, .isa = isa, .type = type,
	};
	return e;
}

#endif /* VMEXIT_TEST_TRACE_EVENTS_H */
