/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Before libtracecmd opens a trace.dat in this process: its header and sections checked
 * (tracedat_layout.h), then its formats parsed and the file opened in a child process, where
 * a crash of libtraceevent on a damaged format (1.7 dereferences NULL on some) becomes the
 * error naming that format's offset.
 */
#ifndef VMEXIT_TRACEDAT_GUARD_H
#define VMEXIT_TRACEDAT_GUARD_H

#include <stddef.h>

/* 0 when libtracecmd may open path here; -1 with err, one line naming path. */
int tracedat_guard(const char *path, char *err, size_t errlen);

#endif /* VMEXIT_TRACEDAT_GUARD_H */
