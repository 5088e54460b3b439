// SPDX-License-Identifier: GPL-2.0
/*
 * The per-event format of --tsv: one tab-separated line per exit (to the guest's kernel or its
 * VMM), under a header naming the columns, for cut, sort and awk. Exits only: a TSC offset
 * write or another kvm event has none of these columns (--json has them).
 */
#include "event_format.h"
#include "lost_causes.h"
#include "out_write.h"
#include "reasons.h"

struct tsv_state {
	bool header_done;
};

static void tsv_header(struct evout *o)
{
	struct tsv_state *st = o->state;

	if (st->header_done)
		return;
	st->header_done = true;
	fputs("#ts_ns\tpid\ttid\tvcpu\treason\tlatency_ns\tin_flight\n", o->f);
}

static int tsv_event(struct evout *o, const struct vmexit_event *ev)
{
	__u16 type = VMEXIT_EV_TYPE(ev->type);
	char rb[REASON_STR_MAX];

	if (type != VMEXIT_EV_EXIT && type != VMEXIT_EV_USER_EXIT)
		return 0;
	tsv_header(o);
	fprintf(o->f, "%llu\t%u\t%u\t%d\t%s\t%llu\t%d\n", (unsigned long long)ev->ts_ns,
		ev->tgid, ev->tid, ev->vcpu, reason_label(ev->isa, ev->reason, rb, sizeof(rb)),
		(unsigned long long)ev->latency_ns, !!(ev->type & VMEXIT_EV_IN_FLIGHT));
	return out_error(o->f);
}

/* Markers are comments: a reader of the columns skips them as it skips the header. */
static void tsv_lost(struct evout *o, __u64 ts_ns, __u64 n, int cause)
{
	tsv_header(o);
	fprintf(o->f, "# LOST %llu records (%s) at ts_ns %llu\n", (unsigned long long)n,
		lost_cause_text(cause), (unsigned long long)ts_ns);
}

static void tsv_stuck(struct evout *o, const struct inflight_exit *e, __u64 age_ns,
		      const char *guest, const char *rname)
{
	(void)guest;
	tsv_header(o);
	fprintf(o->f, "# STUCK pid %u tid %u vcpu %d %s in flight for %llu ns since ts_ns %llu\n",
		e->tgid, e->tid, e->vcpu, rname, (unsigned long long)age_ns,
		(unsigned long long)e->start_ns);
}

const struct evout_ops evout_tsv = {
	.state_size = sizeof(struct tsv_state),
	.event = tsv_event, .stuck = tsv_stuck, .lost = tsv_lost, .flush = evout_flush_file,
};
