/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What vmexit uses of trace-cmd's trace.dat beyond the installed <trace-cmd.h>: its magic, and
 * two calls libtracecmd exports that only trace-cmd's private header declares (stable since
 * trace-cmd 2.9; trace-cmd-private.h).
 */
#ifndef VMEXIT_TRACEDAT_FILE_H
#define VMEXIT_TRACEDAT_FILE_H

/* A trace.dat's first bytes. */
#define TRACEDAT_MAGIC		"\x17\x08\x44tracing"
#define TRACEDAT_MAGIC_LEN	(sizeof(TRACEDAT_MAGIC) - 1)

struct tracecmd_input;

/* The file's trace_clock option ("local", "x86-tsc"), NULL when it has none. */
const char *tracecmd_get_trace_clock(struct tracecmd_input *handle);
/* Records keep the timestamps as the kernel wrote them (no TSC-to-ns, no offsets). */
#define TRACECMD_FL_RAW_TS	(1 << 3)
void tracecmd_set_flag(struct tracecmd_input *handle, int flag);

#endif /* VMEXIT_TRACEDAT_FILE_H */
