/* SPDX-License-Identifier: GPL-2.0 */
/*
 * QEMU's option values (QemuOpts): "first,key=value,flag,key=value", ",," a literal comma. The
 * first element may stand for one key without saying it (-name NAME, -mon CHARDEV,
 * -chardev BACKEND), and a later element without '=' is a flag.
 */
#ifndef VMEXIT_QEMU_OPTS_H
#define VMEXIT_QEMU_OPTS_H

#include <stdbool.h>
#include <stddef.h>

/*
 * The value of key in opts, the last one given, into out (truncated to outlen - 1). implied:
 * the key a first element without '=' gives a value to (NULL: none); a flag gives key the value
 * "on". false when key is not there.
 */
bool qemu_opts_get(const char *opts, const char *key, const char *implied, char *out,
		   size_t outlen);
/* A QemuOpts boolean: on, yes, true, y (a bare flag is "on"). */
bool qemu_opts_true(const char *v);

#endif /* VMEXIT_QEMU_OPTS_H */
