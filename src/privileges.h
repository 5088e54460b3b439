/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Giving up capabilities once they are no longer needed: loading and attaching vmexit's
 * programs, finding the kvm module's BTF and turning on the kernel's run-time statistics need
 * them; reading the maps and statistics through the fds then held does not.
 */
#ifndef VMEXIT_PRIVILEGES_H
#define VMEXIT_PRIVILEGES_H

#include <linux/types.h>

/* Keeps, of the capabilities held, only those in keep (bit CAP_X: 1ull << CAP_X), in the
 * effective and permitted sets; empties the inheritable and ambient ones. 0 or -errno. */
int privileges_keep_only(__u64 keep);

#endif /* VMEXIT_PRIVILEGES_H */
