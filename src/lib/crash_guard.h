/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Runs work a library may crash on (libtraceevent on a damaged event format) in a child
 * process, so that the crash becomes an error message and not the end of vmexit. The work
 * marks its progress with crash_guard_at(); the parent learns the last mark before a death.
 */
#ifndef VMEXIT_CRASH_GUARD_H
#define VMEXIT_CRASH_GUARD_H

#include <stdbool.h>
#include <linux/types.h>

struct crash_guard;

/* What became of the child: done, or dead, with the last mark it made before dying. */
struct crash_guard_result {
	bool done;		/* the work returned */
	int status;		/* its return value (done), else the signal or exit status */
	bool killed;		/* ... status is a signal */
	bool marked;		/* a mark was made */
	__u64 mark;		/* the last one */
	bool timed_out;		/* ... killed for taking longer than the limit */
};

/*
 * The child's time limit: a library that loops for ever on a damaged input would hang vmexit
 * (a parse, an open: seconds even on large files). Killed then, and said so.
 */
#define CRASH_GUARD_SECONDS	60

/*
 * Runs work(g, arg) in a child (stderr to /dev/null: a library's complaints and a sanitizer's
 * report would add lines to a one-line error). 0 with *r filled, or -errno when no child
 * could be made.
 */
int crash_guard_run(int (*work)(struct crash_guard *g, void *arg), void *arg,
		    struct crash_guard_result *r);
/* In the work: what it is about to do (a file offset), for the parent to name. */
void crash_guard_at(struct crash_guard *g, __u64 mark);
/* The limit in seconds (CRASH_GUARD_SECONDS unless set: the unit test's short one). */
void crash_guard_set_limit(unsigned int seconds);
/* How a child that did not finish ended, for a message: "crashed: signal 11", "did not
 * finish within 60 s". */
void crash_guard_death(const struct crash_guard_result *r, char *buf, size_t len);

#endif /* VMEXIT_CRASH_GUARD_H */
