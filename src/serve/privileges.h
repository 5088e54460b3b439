/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Giving up capabilities once they are no longer needed: loading and attaching vmexit's
 * programs, finding the kvm module's BTF and turning on the kernel's run-time statistics need
 * them; reading the maps and statistics through the fds then held does not.
 */
#ifndef VMEXIT_PRIVILEGES_H
#define VMEXIT_PRIVILEGES_H

/* Empties the effective, permitted, inheritable and ambient sets. 0 or -errno. */
int privileges_drop(void);

#endif /* VMEXIT_PRIVILEGES_H */
