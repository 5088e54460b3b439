/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A trace-cmd trace.dat's structure, checked before libtracecmd reads it: the fixed header
 * fields, then the sections that hold the event formats (every one, for version 6 and for an
 * uncompressed version 7), each size and offset against the file. A damaged file is named by
 * the first wrong field and its offset; libtracecmd itself only says that it failed.
 */
#ifndef VMEXIT_TRACEDAT_LAYOUT_H
#define VMEXIT_TRACEDAT_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

/* One format text the file carries, where libtraceevent will parse it. */
struct tracedat_format {
	__u64 off, size;
	const char *system;	/* NULL: the header_page format; "ftrace", "kvm"... */
};

struct tracedat_layout {
	const unsigned char *map;	/* the file, mapped */
	size_t len;
	int version;
	bool big_endian;
	unsigned int long_size, page_size;
	struct tracedat_format *fmt;	/* in file order */
	size_t nr_fmt;
	/* A compressed section holds the formats (version 7): fmt lists none of its. */
	__u64 compressed_at;
};

/*
 * Maps and checks path. 0, or -1 with err "PATH: offset N: damaged trace.dat: WHAT" (or why
 * the file cannot be opened).
 */
int tracedat_layout_read(const char *path, struct tracedat_layout *l, char *err, size_t errlen);
void tracedat_layout_free(struct tracedat_layout *l);

#endif /* VMEXIT_TRACEDAT_LAYOUT_H */
