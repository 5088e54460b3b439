// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <string.h>
#include "out_write.h"

int out_flush(FILE *f)
{
	errno = 0;
	if (!fflush(f) && !ferror(f))
		return 0;
	/* An error flag from an earlier write (fflush itself may then succeed) has no errno. */
	return errno ? -errno : -EIO;
}

int out_error(FILE *f)
{
	if (!ferror(f))
		return 0;
	return errno ? -errno : -EIO;
}

void out_write_error(const char *what, int err)
{
	if (err == -EPIPE)
		return;
	fprintf(stderr, "vmexit: cannot write %s: %s\n", what, strerror(-err));
}
