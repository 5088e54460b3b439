// SPDX-License-Identifier: GPL-2.0
/*
 * report --guest-trace GUEST=FILE where FILE is the guest's own trace-cmd trace.dat, recorded
 * in the guest with `trace-cmd record -C x86-tsc`: each record becomes an instant named
 * "system:event" on the track of the guest CPU it was taken on (a guest's CPU n is its vCPU
 * n), at its timestamp as the kernel wrote it, guest TSC ticks. A trace on another clock has
 * no TSC to place it by: refused, naming the option to record it with.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <trace-cmd.h>

#include "guest_trace.h"
#include "tracedat_file.h"

struct guest_tracedat {
	guest_trace_fn fn;
	void *ctx;
	unsigned int nr;	/* records so far: a message's "line" */
	int ret;
};

static int one_record(struct tracecmd_input *in, struct tep_record *rec, int cpu, void *data)
{
	struct guest_tracedat *g = data;
	struct tep_handle *tep = tracecmd_get_tep(in);
	struct tep_event *e = tep_find_event_by_record(tep, rec);
	int pid = tep_data_pid(tep, rec);
	char name[128];
	struct guest_trace_event ge = {
		.ph = 'i', .ts = rec->ts, .name = name, .pid = pid, .tid = pid, .vcpu = rec->cpu,
		.line = ++g->nr,
	};

	(void)cpu;
	if (e)
		snprintf(name, sizeof(name), "%s:%s", e->system, e->name);
	else
		snprintf(name, sizeof(name), "event %d", tep_data_type(tep, rec));
	g->ret = g->fn(g->ctx, &ge);
	return g->ret;
}

/* Every buffer of the file (the top one and each instance's) must be on the guest's TSC. */
static int check_clocks(const char *path, struct tracecmd_input **in, int n, char *err,
			size_t errlen)
{
	for (int i = 0; i < n; i++) {
		const char *clock = tracecmd_get_trace_clock(in[i]);

		if (clock && !strcmp(clock, "x86-tsc"))
			continue;
		snprintf(err, errlen, "%s: a trace.dat on trace_clock %s, not the guest's TSC: "
			 "record it in the guest with trace-cmd record -C x86-tsc", path,
			 clock ? clock : "local (the default)");
		return -EINVAL;
	}
	return 0;
}

int guest_tracedat_read(const char *path, guest_trace_fn fn, void *ctx, char *err, size_t errlen)
{
	struct guest_tracedat g = { .fn = fn, .ctx = ctx };
	struct tracecmd_input *in, **all;
	struct stat st;
	int n, nr = 1;

	tracecmd_set_loglevel(TEP_LOG_NONE);
	in = tracecmd_open(path, TRACECMD_FL_LOAD_NO_PLUGINS);
	if (!in) {
		snprintf(err, errlen, "%s: offset %lld (its end): libtracecmd cannot read this "
			 "trace.dat: truncated or damaged", path,
			 stat(path, &st) ? 0ll : (long long)st.st_size);
		return -EINVAL;
	}
	/* `trace-cmd record -B` / `extract -B` keep an instance's events in a buffer of its own. */
	n = tracecmd_buffer_instances(in);
	all = calloc(n > 0 ? n + 1 : 1, sizeof(*all));
	if (!all) {
		tracecmd_close(in);
		return -ENOMEM;
	}
	all[0] = in;
	for (int i = 0; i < n; i++) {
		all[nr] = tracecmd_buffer_instance_handle(in, i);
		nr += !!all[nr];
	}
	g.ret = check_clocks(path, all, nr, err, errlen);
	if (!g.ret) {
		for (int i = 0; i < nr; i++)
			tracecmd_set_flag(all[i], TRACECMD_FL_RAW_TS);
		tracecmd_iterate_events_multi(all, nr, one_record, &g);
	}
	for (int i = nr - 1; i >= 0; i--)
		tracecmd_close(all[i]);
	free(all);
	return g.ret;
}
