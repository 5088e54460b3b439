/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The fast path for runs that start on an idle host. The start-up check needs exits to judge
 * the fast path; with no VM running it has none, and the classic pair is attached. The check
 * stays loaded, and a thread watches kvm_exit: once exits begin it runs the check window
 * again, and when the fast path reads them alike it attaches the fast pair and detaches the
 * classic one, each exit counted once across the change (bpf/pair_switch.bpf.h).
 */
#ifndef VMEXIT_FAST_SWITCH_H
#define VMEXIT_FAST_SWITCH_H

#include <stdbool.h>
#include "hooks.h"

struct vmexit_bpf;

/* Whether the session should wait for exits to check the fast path (after hooks_check_finish()):
 * the start-up window saw too few, and the main object has the fast pair loaded. */
bool fast_switch_wanted(const struct hooks *h, const struct vmexit_bpf *skel);
/* Starts the watching thread; -errno (the check is then detached as usual). */
int fast_switch_start(struct hooks *h, struct vmexit_bpf *skel, bool verbose);
/* Ends the thread (a switch under way completes first); the check's objects are left for
 * hooks_free(). Idempotent. */
void fast_switch_stop(struct hooks *h);
/* The fast pair may still be attached: its programs count as the session's. */
bool fast_switch_pending(const struct hooks *h);
/* The kvm_exit pair, the note and the check in effect now: the switch's once it decided. */
void fast_switch_view(const struct hooks *h, enum exit_hook *exit, const char **note,
		      const struct hook_check **check);
void fast_switch_free(struct hooks *h);

#endif /* VMEXIT_FAST_SWITCH_H */
