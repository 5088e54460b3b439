// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "kvm_event_counts.h"
#include "vmexit.skel.h"

static int on_record(void *ctx, void *data, size_t len)
{
	struct kvm_event_counts *c = ctx;
	struct vmexit_event ev = {};
	struct row *r;

	if (len < VMEXIT_EVENT_BASE_LEN)
		return 0;
	memcpy(&ev, data, VMEXIT_EVENT_BASE_LEN);
	if (VMEXIT_EV_TYPE(ev.type) != VMEXIT_EV_KVM_EVENT)
		return 0;
	/* The kernel lets a thread whose vCPU it does not know through -c: it cannot be told. */
	if (c->vcpu >= 0 && ev.vcpu != c->vcpu)
		return 0;
	r = row_table_get(&c->rows, &(struct row_key){ ev.tgid, ev.vcpu, TOP_ISA_KVM_EVENT,
						      ev.reason, 0, {}, 0 });
	if (!r) {
		c->err = -ENOMEM;
		return -ENOMEM;		/* stops ring_buffer__poll() */
	}
	r->count++;
	return 0;
}

int kvm_event_counts_open(struct kvm_event_counts *c, struct session *s, __s32 vcpu)
{
	memset(c, 0, sizeof(*c));
	row_table_init(&c->rows);
	c->vcpu = vcpu;
	c->rb = ring_buffer__new(bpf_map__fd(s->skel->maps.events), on_record, c, NULL);
	if (!c->rb) {
		int err = -errno;

		fprintf(stderr, "vmexit: cannot read the kvm events' ring buffer: %s\n",
			strerror(-err));
		row_table_free(&c->rows);
		return err;
	}
	return 0;
}

int kvm_event_counts_poll(struct kvm_event_counts *c, int timeout_ms)
{
	int n = ring_buffer__poll(c->rb, timeout_ms);

	/*
	 * The kernel wakes this reader only once a batch is pending (event_submit), so a poll
	 * alone leaves a partial batch unread: an interval would miss up to a batch of events.
	 * Consume reads whatever is there, woken or not.
	 */
	if (n >= 0 || n == -EINTR) {
		int m = ring_buffer__consume(c->rb);

		n = m < 0 ? m : n;
	}
	if (c->err)
		return c->err;	/* -ENOMEM: sampler_close() says it */
	if (n < 0 && n != -EINTR) {
		fprintf(stderr, "vmexit: reading the kvm events: %s\n", strerror(-n));
		return n;
	}
	return 0;
}

int kvm_event_counts_take(struct kvm_event_counts *c, struct row_table *into)
{
	for (__u32 i = 0; i < c->rows.nr; i++) {
		struct row *r = row_table_get(into, &c->rows.rows[i].key);

		if (!r)
			return -ENOMEM;
		row_add(r, &c->rows.rows[i]);
	}
	row_table_reset(&c->rows);
	return 0;
}

void kvm_event_counts_close(struct kvm_event_counts *c)
{
	ring_buffer__free(c->rb);
	c->rb = NULL;
	row_table_free(&c->rows);
}
