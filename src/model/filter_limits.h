/* SPDX-License-Identifier: GPL-2.0 */
/* How many -p pids and -r reason selections a filter holds, live (session) or offline (report). */
#ifndef VMEXIT_FILTER_LIMITS_H
#define VMEXIT_FILTER_LIMITS_H

#define MAX_PID_FILTER	64
#define MAX_REASON_SEL	256

#endif /* VMEXIT_FILTER_LIMITS_H */
