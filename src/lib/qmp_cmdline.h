/* SPDX-License-Identifier: GPL-2.0 */
/* Where a QEMU serves QMP, as its command line says (vmexit's --qmp auto). */
#ifndef VMEXIT_QMP_CMDLINE_H
#define VMEXIT_QMP_CMDLINE_H

#include <stddef.h>

#define QMP_PATH_MAX	108	/* sockaddr_un.sun_path */

/*
 * The unix socket paths QEMU listens for QMP on, in the order of its command line (args:
 * NUL-separated argv, len bytes): -qmp / -qmp-pretty unix:PATH,server=on[,...], and
 * -chardev socket,id=ID,path=PATH,server=on with -mon chardev=ID,mode=control. Sockets QEMU
 * connects out to (no server=on), TCP and file descriptors passed by a parent are left out.
 * Returns how many went into paths (at most max).
 */
int qmp_sockets_from_cmdline(const char *args, size_t len, char (*paths)[QMP_PATH_MAX], int max);

#endif /* VMEXIT_QMP_CMDLINE_H */
