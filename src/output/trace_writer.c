// SPDX-License-Identifier: GPL-2.0
/* Which Perfetto writer a --perfetto FILE gets; trace_writer.h lists them. */
#include <string.h>

#include "trace_writer.h"

static const struct trace_writer_ops *const writers[] = {
	[TRACE_JSON] = &perfetto_json_ops,
	[TRACE_PROTO] = &perfetto_proto_ops,
};

/* The names Perfetto's own tools give protobuf traces. */
static const char *const proto_ext[] = { ".pftrace", ".perfetto-trace", ".pb" };

const struct trace_writer_ops *trace_writer_for(enum trace_format format, const char *path)
{
	size_t n = path ? strlen(path) : 0;

	if (format != TRACE_AUTO)
		return writers[format];
	for (size_t i = 0; i < sizeof(proto_ext) / sizeof(proto_ext[0]); i++) {
		size_t e = strlen(proto_ext[i]);

		if (n > e && !strcmp(path + n - e, proto_ext[i]))
			return writers[TRACE_PROTO];
	}
	return writers[TRACE_JSON];
}
