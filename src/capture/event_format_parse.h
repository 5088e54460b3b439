/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The event formats a capture carries, handed to libtraceevent as the readers need them: the
 * fields only (the print format is cut: no reader prints through it, and libtraceevent 1.7
 * crashes on some damaged ones), parsed first in a child process, where a crash on a damaged
 * format becomes the error naming that format's offset.
 */
#ifndef VMEXIT_EVENT_FORMAT_PARSE_H
#define VMEXIT_EVENT_FORMAT_PARSE_H

#include <stddef.h>
#include <linux/types.h>

struct tep_handle;

struct event_format_text {
	const char *text;	/* not NUL-ended */
	size_t size;
	__u64 off;		/* in the file */
	const char *system;
};

/*
 * Parses the n formats into tep (one libtraceevent cannot parse stays undecoded, as before).
 * 0, or -1 with err "PATH: offset N: damaged KIND: ..." when libtraceevent crashed on one.
 */
int event_formats_parse(struct tep_handle *tep, const struct event_format_text *f, size_t n,
			const char *path, const char *kind, char *err, size_t errlen);

#endif /* VMEXIT_EVENT_FORMAT_PARSE_H */
