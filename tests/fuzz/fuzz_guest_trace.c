// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: any bytes handed to the --guest-trace reader (Chrome JSON, as the bundled
 * guest and `uftrace dump --chrome` write it; seeds in corpus/guest_json and
 * corpus/guest_uftrace) end in a clean end or one error line naming the input, never a crash,
 * a hang, a leak or undefined behaviour (float-cast-overflow included). Every event read keeps
 * the reader's promises (a drawn phase, a name cut to its limit, ts + dur within 64 bits) and
 * goes on to both Perfetto writers, whose strings come from it.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest_trace.h"
#include "trace_writer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static FILE *devnull;

struct sink {
	void *w[2];
	__u64 n;
};

static int one_event(void *ctx, const struct guest_trace_event *e)
{
	static const struct trace_writer_ops *const ops[2] = { &perfetto_json_ops,
							      &perfetto_proto_ops };
	struct sink *s = ctx;
	struct trace_guest_event ge = {
		.tgid = 100, .track = (__u32)(s->n % 4), .track_name = e->name, .ph = e->ph,
		.ts_ns = e->ts, .dur_ns = e->dur, .name = e->name,
	};
	__u64 end;

	if (!strchr("BEXi", e->ph) || !e->ph || strlen(e->name) >= 512 ||
	    (e->ph == 'X' && __builtin_add_overflow(e->ts, e->dur, &end)))
		abort();
	for (int i = 0; i < 2; i++)
		ops[i]->guest_event(s->w[i], &ge);
	s->n++;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sink s = {};
	char err[512] = "";
	int ret;

	if (!devnull)
		devnull = fopen("/dev/null", "w");
	if (!devnull)
		abort();
	s.w[0] = perfetto_json_ops.open(devnull, NULL);
	s.w[1] = perfetto_proto_ops.open(devnull, NULL);
	if (!s.w[0] || !s.w[1])
		abort();
	perfetto_json_ops.guest(s.w[0], 100, "fuzz");
	perfetto_proto_ops.guest(s.w[1], 100, "fuzz");
	ret = guest_trace_read_mem("fuzz.json", data, size, one_event, &s, err, sizeof(err));
	/* One line that names the input, or nothing to say. */
	if (ret && (ret != -EINVAL || strncmp(err, "fuzz.json", 9) || strchr(err, '\n')))
		abort();
	perfetto_json_ops.close(s.w[0]);
	perfetto_proto_ops.close(s.w[1]);
	return 0;
}
