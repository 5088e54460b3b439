// SPDX-License-Identifier: GPL-2.0
/*
 * A trace.dat's structure, checked field by field (see tracedat_layout.h). The layout is
 * trace-cmd's (Documentation/trace-cmd/trace-cmd.dat.v6.5.txt and .v7.5.txt):
 *
 *   magic, version "6" or "7" (NUL-ended), byte order, long size, page size;
 *   v6: header_page and header_event formats, ftrace's formats, each system's event formats,
 *       kallsyms, printk formats, command lines, the CPU count, then options and the data;
 *   v7: a compression name and version (NUL-ended), the offset of the first options section;
 *       then sections (id, flags, string id, size), each found through an option of that id
 *       holding its offset; the sections 16, 17 and 18 hold what v6 has in line.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include "array_grow.h"
#include "tracedat_file.h"
#include "tracedat_layout.h"

/* trace-cmd's section and option ids (trace-cmd.h, enum tracecmd_option_id). */
enum {
	SEC_OPTIONS = 0,	/* as an option: DONE, holding the next options section */
	OPT_BUFFER = 3,
	SEC_STRINGS = 15,
	SEC_HEADER_INFO = 16,
	SEC_FTRACE_EVENTS = 17,
	SEC_EVENT_FORMATS = 18,
	SEC_KALLSYMS = 19,
	SEC_PRINTK = 20,
	SEC_CMDLINES = 21,
	SEC_FLAG_COMPRESSED = 1,
};
#define SECTION_HEADER	16	/* u16 id, u16 flags, u32 string id, u64 size */
/* A file that chains more options sections than this loops. */
#define MAX_OPTION_SECTIONS	4096

struct td_walk {
	struct tracedat_layout *l;
	const char *path;
	char *err;
	size_t errlen;
	size_t cap_fmt;
};

static int bad(struct td_walk *w, __u64 off, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int bad(struct td_walk *w, __u64 off, const char *fmt, ...)
{
	char what[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(w->err, w->errlen, "%s: offset %llu: damaged trace.dat: %s", w->path,
		 (unsigned long long)off, what);
	return -1;
}

static __u64 num(const struct tracedat_layout *l, __u64 off, int size)
{
	__u64 v = 0;

	for (int i = 0; i < size; i++) {
		int b = l->big_endian ? i : size - 1 - i;

		v = v << 8 | l->map[off + b];
	}
	return v;
}

/* A number of size bytes at *pos, below end; false when it does not fit. */
static bool take(const struct tracedat_layout *l, __u64 *pos, __u64 end, int size, __u64 *v)
{
	if (*pos > end || end - *pos < (__u64)size)
		return false;
	*v = num(l, *pos, size);
	*pos += size;
	return true;
}

/* A NUL-ended string at *pos, below end, of at most max bytes; NULL when there is none. */
static const char *take_str(const struct tracedat_layout *l, __u64 *pos, __u64 end, size_t max)
{
	const char *s = (const char *)l->map + *pos;
	const char *nul;

	if (*pos >= end)
		return NULL;
	nul = memchr(s, 0, end - *pos < max ? end - *pos : max);
	if (!nul)
		return NULL;
	*pos += nul - s + 1;
	return s;
}

static int add_format(struct td_walk *w, __u64 off, __u64 size, const char *system)
{
	struct tracedat_layout *l = w->l;

	if (array_reserve(l->fmt, l->nr_fmt, w->cap_fmt, 256))
		return -ENOMEM;
	l->fmt[l->nr_fmt++] = (struct tracedat_format){ off, size, system };
	return 0;
}

/* A u64 size at *pos, then that many bytes, all below end: a format, or another blob. */
static int sized(struct td_walk *w, __u64 *pos, __u64 end, int width, const char *what,
		 __u64 *start, __u64 *size)
{
	__u64 at = *pos;

	if (!take(w->l, pos, end, width, size))
		return bad(w, at, "%s: its size is cut short", what);
	if (*size > end - *pos)
		return bad(w, at, "%s: its size (%llu bytes) runs past %s", what,
			   (unsigned long long)*size,
			   end == w->l->len ? "the file's end" : "its section");
	*start = *pos;
	*pos += *size;
	return 0;
}

/* "header_page" and "header_event", each named and sized. */
static int header_formats(struct td_walk *w, __u64 *pos, __u64 end)
{
	static const char *const name[] = { "header_page", "header_event" };
	__u64 start, size;

	for (int i = 0; i < 2; i++) {
		__u64 at = *pos;
		const char *s = take_str(w->l, pos, end, 16);

		if (!s || strcmp(s, name[i]))
			return bad(w, at, "no \"%s\" where its format should start", name[i]);
		if (sized(w, pos, end, 8, name[i], &start, &size))
			return -1;
		/* header_event is parsed by nobody since trace-cmd 2.0 (fixed layout). */
		if (!i && add_format(w, start, size, NULL))
			return -ENOMEM;
	}
	return 0;
}

/* A count (u32), then that many sized formats of system. */
static int format_list(struct td_walk *w, __u64 *pos, __u64 end, const char *system)
{
	__u64 at = *pos, count, start, size;
	char what[80];

	if (!take(w->l, pos, end, 4, &count))
		return bad(w, at, "the count of %s's formats is cut short", system);
	for (__u64 i = 0; i < count; i++) {
		snprintf(what, sizeof(what), "format %llu of %llu of %s", (unsigned long long)i + 1,
			 (unsigned long long)count, system);
		if (sized(w, pos, end, 8, what, &start, &size))
			return -1;
		if (add_format(w, start, size, system))
			return -ENOMEM;
	}
	return 0;
}

/* A count of systems (u32), then per system its name and its formats. */
static int event_systems(struct td_walk *w, __u64 *pos, __u64 end)
{
	__u64 at = *pos, systems;
	int ret;

	if (!take(w->l, pos, end, 4, &systems))
		return bad(w, at, "the count of event systems is cut short");
	for (__u64 i = 0; i < systems; i++) {
		const char *sys;

		at = *pos;
		sys = take_str(w->l, pos, end, 256);
		if (!sys)
			return bad(w, at, "event system %llu of %llu has no name (NUL-ended, up "
				   "to 255 bytes)", (unsigned long long)i + 1,
				   (unsigned long long)systems);
		ret = format_list(w, pos, end, sys);
		if (ret)
			return ret;
	}
	return 0;
}

/* Version 6: everything in line, up to the CPU count and the options' or data's tag. */
static int walk_v6(struct td_walk *w, __u64 pos)
{
	const struct tracedat_layout *l = w->l;
	__u64 end = l->len, start, size, at;
	int ret;

	ret = header_formats(w, &pos, end);
	if (!ret)
		ret = format_list(w, &pos, end, "ftrace");
	if (!ret)
		ret = event_systems(w, &pos, end);
	if (!ret)
		ret = sized(w, &pos, end, 4, "kallsyms", &start, &size);
	if (!ret)
		ret = sized(w, &pos, end, 4, "the printk formats", &start, &size);
	if (!ret)
		ret = sized(w, &pos, end, 8, "the command lines", &start, &size);
	if (ret)
		return ret;
	at = pos;
	if (!take(l, &pos, end, 4, &size))
		return bad(w, at, "the CPU count is cut short");
	return 0;
}

/* The section of id at off: its content's start and end; compressed ones are noted. */
static int section(struct td_walk *w, __u64 off, int id, const char *what, __u64 *start,
		   __u64 *end)
{
	struct tracedat_layout *l = w->l;
	__u64 pos = off, sid = 0, flags = 0, sstr = 0, size = 0;

	if (off > l->len || l->len - off < SECTION_HEADER)
		return bad(w, off, "the %s section's header lies past the file's end (%zu bytes)",
			   what, l->len);
	take(l, &pos, l->len, 2, &sid);
	take(l, &pos, l->len, 2, &flags);
	take(l, &pos, l->len, 4, &sstr);
	take(l, &pos, l->len, 8, &size);
	if ((int)sid != id)
		return bad(w, off, "section id %llu where the %s section (id %d) should be",
			   (unsigned long long)sid, what, id);
	if (flags & ~(__u64)SEC_FLAG_COMPRESSED)
		return bad(w, off + 2, "the %s section's flags 0x%llx (only 0x1, compressed, is "
			   "defined)", what, (unsigned long long)flags);
	if (size > l->len - pos)
		return bad(w, off + 8, "the %s section's size (%llu bytes) runs past the file's "
			   "end", what, (unsigned long long)size);
	*start = pos;
	*end = pos + size;
	if (flags & SEC_FLAG_COMPRESSED) {
		if (!l->compressed_at)
			l->compressed_at = off;
		return 1;
	}
	return 0;
}

/* The option of id at opt (its data of size bytes): the section it points at, checked. */
static int option_section(struct td_walk *w, __u64 opt, __u64 size, int id)
{
	static const char *const what[] = {
		[SEC_STRINGS] = "strings", [SEC_HEADER_INFO] = "headers",
		[SEC_FTRACE_EVENTS] = "ftrace events", [SEC_EVENT_FORMATS] = "event formats",
		[SEC_KALLSYMS] = "kallsyms", [SEC_PRINTK] = "printk", [SEC_CMDLINES] = "command lines",
	};
	__u64 pos = opt, off, start, end, s, n;
	int ret;

	if (!take(w->l, &pos, opt + size, 8, &off))
		return bad(w, opt, "the option for the %s section is too short for its offset",
			   what[id]);
	ret = section(w, off, id, what[id], &start, &end);
	if (ret)
		return ret < 0 ? ret : 0;
	switch (id) {
	case SEC_HEADER_INFO:
		return header_formats(w, &start, end);
	case SEC_FTRACE_EVENTS:
		return format_list(w, &start, end, "ftrace");
	case SEC_EVENT_FORMATS:
		return event_systems(w, &start, end);
	case SEC_KALLSYMS:
	case SEC_PRINTK:
		return sized(w, &start, end, 4, what[id], &s, &n);
	case SEC_CMDLINES:
		return sized(w, &start, end, 8, what[id], &s, &n);
	default:
		return 0;
	}
}

/* Version 7: the options sections, chained, and the sections their options point at. */
static int walk_v7(struct td_walk *w, __u64 next)
{
	const struct tracedat_layout *l = w->l;
	int ret;

	for (int chained = 0; next; chained++) {
		__u64 pos, end, id, size, at;

		if (chained == MAX_OPTION_SECTIONS)
			return bad(w, next, "more than %d options sections chained (a loop)",
				   MAX_OPTION_SECTIONS);
		ret = section(w, next, SEC_OPTIONS, "options", &pos, &end);
		if (ret)
			return ret < 0 ? ret : 0;
		next = 0;
		while (pos < end) {
			at = pos;
			if (!take(l, &pos, end, 2, &id) || !take(l, &pos, end, 4, &size))
				return bad(w, at, "an option's header is cut short");
			if (size > end - pos)
				return bad(w, at + 2, "option %llu's size (%llu bytes) runs past its "
					   "section", (unsigned long long)id,
					   (unsigned long long)size);
			if (id == SEC_OPTIONS) {
				if (!take(l, &pos, end, 8, &next))
					return bad(w, at, "the last option is too short for the "
						   "next section's offset");
				break;
			}
			if (id == SEC_STRINGS || (id >= SEC_HEADER_INFO && id <= SEC_CMDLINES)) {
				ret = option_section(w, pos, size, (int)id);
				if (ret)
					return ret;
			} else if (id == OPT_BUFFER) {
				__u64 p = pos, off;

				if (!take(l, &p, pos + size, 8, &off) || off > l->len)
					return bad(w, pos, "a buffer's offset lies past the file's end");
			}
			pos += size;
		}
	}
	return 0;
}

static int check(struct td_walk *w)
{
	struct tracedat_layout *l = w->l;
	__u64 pos = TRACEDAT_MAGIC_LEN, v;
	const char *s;
	char *endp;
	long ver;

	if (l->len < TRACEDAT_MAGIC_LEN || memcmp(l->map, TRACEDAT_MAGIC, TRACEDAT_MAGIC_LEN))
		return bad(w, 0, "no trace.dat magic (\\027\\010Dtracing)");
	s = take_str(l, &pos, l->len, 16);
	ver = s ? strtol(s, &endp, 10) : 0;
	if (!s || !*s || *endp || (ver != 6 && ver != 7))
		return bad(w, TRACEDAT_MAGIC_LEN, "the version is not \"6\" or \"7\" (NUL-ended): "
			   "libtracecmd reads those");
	l->version = (int)ver;
	if (!take(l, &pos, l->len, 1, &v) || v > 1)
		return bad(w, pos - 1, "the byte order is not 0 (little endian) or 1 (big endian)");
	l->big_endian = v;
	if (!take(l, &pos, l->len, 1, &v) || (v != 4 && v != 8))
		return bad(w, pos - 1, "the size of a long is not 4 or 8 bytes");
	l->long_size = (unsigned int)v;
	if (!take(l, &pos, l->len, 4, &v) || v < 1024 || (v & (v - 1)) || v > (1u << 24))
		return bad(w, pos - 4, "the page size is not a power of two from 1 KiB to 16 MiB");
	l->page_size = (unsigned int)v;
	if (l->version == 6)
		return walk_v6(w, pos);
	for (int i = 0; i < 2; i++) {
		__u64 at = pos;

		s = take_str(l, &pos, l->len, 64);
		if (!s)
			return bad(w, at, "the compression %s is not NUL-ended within 64 bytes",
				   i ? "version" : "name");
		for (const char *c = s; *c; c++) {
			if (*c < 0x20 || *c > 0x7e)
				return bad(w, at, "the compression %s is not printable",
					   i ? "version" : "name");
		}
	}
	if (!take(l, &pos, l->len, 8, &v))
		return bad(w, pos, "the offset of the first options section is cut short");
	if (v < pos || v >= l->len)
		return bad(w, pos - 8, "the first options section's offset (%llu) lies %s",
			   (unsigned long long)v, v < pos ? "inside the file's header" :
			   "past the file's end");
	return walk_v7(w, v);
}

int tracedat_layout_read(const char *path, struct tracedat_layout *l, char *err, size_t errlen)
{
	struct td_walk w = { .l = l, .path = path, .err = err, .errlen = errlen };
	struct stat st;
	int fd, ret;

	memset(l, 0, sizeof(*l));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file: a trace.dat is read by offsets "
			 "(copy it to a file first)", path);
		close(fd);
		return -1;
	}
	l->len = (size_t)st.st_size;
	l->map = l->len ? mmap(NULL, l->len, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
	close(fd);
	if (l->map == MAP_FAILED) {
		l->map = NULL;
		snprintf(err, errlen, "%s: cannot map: %s", path, strerror(errno));
		return -1;
	}
	ret = check(&w);
	if (ret == -ENOMEM)
		snprintf(err, errlen, "%s: %s", path, strerror(ENOMEM));
	if (ret)
		tracedat_layout_free(l);
	return ret ? -1 : 0;
}

void tracedat_layout_free(struct tracedat_layout *l)
{
	if (l->map)
		munmap((void *)l->map, l->len);
	free(l->fmt);
	memset(l, 0, sizeof(*l));
}
