// SPDX-License-Identifier: GPL-2.0
/*
 * Built without libtracecmd (TRACECMD=0): a trace.dat (report -i, --guest-trace) is recognised
 * and refused, with the fix.
 */
#include <errno.h>
#include <stdio.h>
#include "event_source.h"
#include "guest_trace.h"

struct event_source *tracedat_source_open(const char *path, char *err, size_t errlen)
{
	snprintf(err, errlen, "%s: offset 0: a trace-cmd trace.dat, and this vmexit was built "
		 "without trace.dat support (install libtracecmd-dev and rebuild)", path);
	return NULL;
}

int guest_tracedat_read(const char *path, guest_trace_fn fn, void *ctx, char *err, size_t errlen)
{
	(void)fn;
	(void)ctx;
	snprintf(err, errlen, "%s: offset 0: a trace-cmd trace.dat, and this vmexit was built "
		 "without trace.dat support (install libtracecmd-dev and rebuild)", path);
	return -EINVAL;
}
