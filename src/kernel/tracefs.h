/* SPDX-License-Identifier: GPL-2.0 */
/* tracefs: where it is mounted, and which tracepoints this kernel has. */
#ifndef VMEXIT_TRACEFS_H
#define VMEXIT_TRACEFS_H

#include <stdbool.h>

/* The tracefs mount ("/sys/kernel/tracing", or debugfs' copy), NULL when none is mounted. */
const char *tracefs_dir(void);
/* Does tracefs have this event ("kvm/kvm_fpu")? */
bool tracepoint_exists(const char *name);

#endif /* VMEXIT_TRACEFS_H */
