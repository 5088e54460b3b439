/* SPDX-License-Identifier: GPL-2.0 */
/* report -i perf.data, read natively (import_perfdata.c); perf script reads the rest. */
#ifndef VMEXIT_IMPORT_PERFDATA_H
#define VMEXIT_IMPORT_PERFDATA_H

#include <stdbool.h>
#include "event_source.h"

/*
 * The capture's kvm records, or NULL: with *fallback set, a perf.data this reader leaves to
 * perf script (no message); without, err says what is wrong with the file. clock: the name of
 * the samples' clock, as import_perf.c read it from the header.
 */
struct event_source *perfdata_source_open(const char *path, const char *clock, bool *fallback,
					  char *err, size_t errlen);

/* perf_source_open() without perf script: the header checked, then the native reader. */
struct event_source *perf_native_open(const char *path, bool *fallback, char *err,
				      size_t errlen);

#endif /* VMEXIT_IMPORT_PERFDATA_H */
