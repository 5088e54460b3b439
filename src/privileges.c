// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/capability.h>
#include "privileges.h"

int privileges_keep_only(__u64 keep)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct caps[2];

	if (syscall(SYS_capget, &hdr, caps))
		return -errno;
	for (int i = 0; i < 2; i++) {
		caps[i].permitted &= (__u32)(keep >> (32 * i));
		caps[i].effective &= caps[i].permitted;
		/* The ambient set goes with it (it is kept within permitted and inheritable). */
		caps[i].inheritable = 0;
	}
	if (syscall(SYS_capset, &hdr, caps))
		return -errno;
	return 0;
}
