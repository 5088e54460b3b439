// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/capability.h>
#include "privileges.h"

int privileges_drop(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct none[2] = {};

	/* The ambient set goes with the permitted one (it is kept within it). */
	if (syscall(SYS_capset, &hdr, none))
		return -errno;
	return 0;
}
