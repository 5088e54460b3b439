/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The process a thread belongs to, from /proc while it still runs: captures that keep thread
 * ids only (trace-cmd's trace.dat has no thread group) still select their VMM by its pid.
 */
#ifndef VMEXIT_THREAD_GROUP_H
#define VMEXIT_THREAD_GROUP_H

#include <linux/types.h>

/*
 * The thread group (process id) of thread tid, from /proc/TID/status, when that thread is still
 * named comm (the capture's name of it: a thread id reused since by another task is no match;
 * an empty comm matches none). 0 with *tgid, -ESRCH if no such thread runs now, -ENOENT if the
 * thread runs under another name, or -errno.
 */
int thread_group_of(__u32 tid, const char *comm, __u32 *tgid);

#endif /* VMEXIT_THREAD_GROUP_H */
