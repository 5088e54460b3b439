/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Simulated runs of a known workload for the diff and explain tests: each vCPU makes each
 * kind's exits as a Poisson process of a given rate (exponential gaps), with log-normal
 * latencies of a given median, split into on CPU, blocked and run-queue time in given shares,
 * written as a vmexit recording (with --split --keys) and, from the same exits, as the
 * `stat --json --hist --by vcpu --split` output of them. Fixed seeds: a failure repeats.
 */
#ifndef VMEXIT_SIM_RUNS_H
#define VMEXIT_SIM_RUNS_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "event_rows.h"
#include "name_cache.h"
#include "record_file.h"
#include "stat_output.h"
#include "../xorshift64.h"

struct sim_kind {
	__u32 isa, reason;
	struct key_note key;
	double rate;		/* exits per second per vCPU */
	double median_ns;	/* of the latency */
	double blocked, runq;	/* shares of each exit's time; the rest on CPU */
	const char *stack;	/* the blocked time's stack, innermost first, ';'-separated */
};

struct sim_run {
	const char *guest;
	__u32 vcpus;
	double seconds;
	const struct sim_kind *kinds;
	__u32 nr_kinds;
};

static double sim_uniform(__u64 *s)
{
	return ((xorshift64(s) >> 11) + 0.5) / 9007199254740992.0;
}

static double sim_normal(__u64 *s)
{
	return sqrt(-2 * log(sim_uniform(s))) * cos(2 * M_PI * sim_uniform(s));
}

/* The run into path (a recording) and, when json is not NULL, its stat --json. */
static void sim_write(const struct sim_run *r, __u64 seed, const char *path, const char *json)
{
	struct rec_meta meta = { .mono_ns = 1000000000ull, .split = true, .keys = true };
	struct row_table rows;
	struct name_cache names = {};
	struct rec_writer *w;
	char err[512];
	__u64 s = seed, t0 = meta.mono_ns, end = t0 + (__u64)(r->seconds * 1e9);
	__u64 last = t0;

	row_table_init(&rows);
	w = rec_writer_open(path, true, &meta, err, sizeof(err));
	CHECK(w);
	if (!w)
		return;
	CHECK(!rec_writer_add_guest(w, 4242, 7, r->guest));
	CHECK(!name_cache_set_at(&names, 4242, 7, r->guest));
	for (__u32 v = 0; v < r->vcpus; v++) {
		for (__u32 k = 0; k < r->nr_kinds; k++) {
			const struct sim_kind *sk = &r->kinds[k];
			double t = (double)t0;

			for (;;) {
				struct vmexit_event ev = {};
				double lat;

				t += -log(sim_uniform(&s)) / sk->rate * 1e9;
				if (t >= (double)end)
					break;
				lat = sk->median_ns * exp(0.3 * sim_normal(&s));
				ev.ts_ns = (__u64)t;
				ev.latency_ns = (__u64)lat;
				ev.blocked_ns = (__u64)(lat * sk->blocked);
				ev.runq_ns = (__u64)(lat * sk->runq);
				ev.oncpu_ns = ev.latency_ns - ev.blocked_ns - ev.runq_ns;
				ev.tgid = 4242;
				ev.tid = 5000 + v;
				ev.vcpu = (__s32)v;
				ev.isa = (__u16)sk->isa;
				ev.reason = sk->reason;
				ev.type = sk->isa == VMEXIT_ISA_USER ? VMEXIT_EV_USER_EXIT :
					  VMEXIT_EV_EXIT;
				ev.key = sk->key;
				CHECK(!rec_writer_add_event(w, &ev));
				CHECK(!event_rows_add(&rows, BY_VCPU, &ev, 7, false));
				if (ev.ts_ns + ev.latency_ns > last)
					last = ev.ts_ns + ev.latency_ns;
			}
		}
	}
	for (__u32 k = 0; k < r->nr_kinds; k++) {
		const struct sim_kind *sk = &r->kinds[k];
		char buf[512], *frames[32], *save = NULL, *f;
		struct stack_row st = { .tgid = 4242, .isa = sk->isa, .reason = sk->reason,
					.proc_start = 7, .count = 1, .frames = frames };

		if (!sk->stack)
			continue;
		snprintf(buf, sizeof(buf), "%s", sk->stack);
		for (f = strtok_r(buf, ";", &save); f && st.nr_frames < 32;
		     f = strtok_r(NULL, ";", &save))
			frames[st.nr_frames++] = f;
		/* The blocked time of the kind: its rate x median x share, as the kernel sums it. */
		st.ns = (__u64)(sk->rate * r->seconds * r->vcpus * sk->median_ns * sk->blocked);
		CHECK(!rec_writer_add_stack(w, &st));
	}
	CHECK(!rec_writer_close(w));
	if (json) {
		FILE *f = fopen(json, "w");
		struct stat_view view = { .by = BY_VCPU, .fmt = OUT_JSON, .hist = true,
					  .split = true, .names = &names };
		struct stat_report rep = { .rows = &rows, .final = true,
					   .interval_s = (last - t0) / 1e9 };

		rep.elapsed_s = rep.interval_s;
		CHECK(f);
		if (f) {
			CHECK(!stat_print(&view, &rep, f));
			fclose(f);
		}
	}
	row_table_free(&rows);
	name_cache_free(&names);
}

#endif /* VMEXIT_SIM_RUNS_H */
