/* SPDX-License-Identifier: GPL-2.0 */
/* Did the output reach its file? One check and one message for every front end's writes. */
#ifndef VMEXIT_OUT_WRITE_H
#define VMEXIT_OUT_WRITE_H

#include <stdio.h>

/* Flushes f: 0 when everything written so far reached it, else -errno of the failed write. */
int out_flush(FILE *f);
/*
 * After a write to f: 0 when f has no error, else -errno of the write that failed. Call it
 * straight after the write: errno says why only until the next call that sets it, and a later
 * fflush has nothing left to retry (so out_flush could only say EIO).
 */
int out_error(FILE *f);
/*
 * Says on stderr that writing what (e.g. "the statistics") failed with err (-errno). A reader
 * that went away (EPIPE, with SIGPIPE ignored) is not an error worth a line, as for coreutils.
 */
void out_write_error(const char *what, int err);

#endif /* VMEXIT_OUT_WRITE_H */
