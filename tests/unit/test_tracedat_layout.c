// SPDX-License-Identifier: GPL-2.0
/*
 * tracedat_layout: a version 6 trace.dat built here passes and lists its formats; each fixed
 * header field and each size, damaged in turn, is named with its own offset (issue 27: every
 * error blamed the file's end).
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include "check.h"
#include "tracedat_layout.h"

static const char page_fmt[] = "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n";
static const char kvm_fmt[] = "name: kvm_pio\nID: 1\nformat:\n\tfield:unsigned short "
			      "common_type;\toffset:0;\tsize:2;\tsigned:0;\n\nprint fmt: \"\"\n";

struct buf {
	unsigned char b[1024];
	size_t n;
};

static size_t put(struct buf *b, const void *p, size_t n)
{
	size_t at = b->n;

	memcpy(b->b + b->n, p, n);
	b->n += n;
	return at;
}

static size_t put_num(struct buf *b, uint64_t v, int size)
{
	return put(b, &v, size);	/* little endian, as the file says */
}

/* Where each field went, for the expected messages. */
struct at {
	size_t version, endian, long_size, page, event_name, event_size, sys_count, kvm_size;
	size_t page_text, kvm_text;
};

static void build(struct buf *b, struct at *a)
{
	b->n = 0;
	put(b, "\027\010Dtracing", 10);
	a->version = put(b, "6", 2);
	a->endian = put_num(b, 0, 1);
	a->long_size = put_num(b, 8, 1);
	a->page = put_num(b, 4096, 4);
	put(b, "header_page", 12);
	put_num(b, sizeof(page_fmt) - 1, 8);
	a->page_text = put(b, page_fmt, sizeof(page_fmt) - 1);
	a->event_name = put(b, "header_event", 13);
	a->event_size = put_num(b, 4, 8);
	put(b, "abcd", 4);
	put_num(b, 0, 4);			/* ftrace formats */
	a->sys_count = put_num(b, 1, 4);
	put(b, "kvm", 4);
	put_num(b, 1, 4);
	a->kvm_size = put_num(b, sizeof(kvm_fmt) - 1, 8);
	a->kvm_text = put(b, kvm_fmt, sizeof(kvm_fmt) - 1);
	put_num(b, 0, 4);			/* kallsyms */
	put_num(b, 0, 4);			/* printk */
	put_num(b, 0, 8);			/* command lines */
	put_num(b, 0, 4);			/* CPUs */
}

static char path[] = "/tmp/test_tracedat_layoutXXXXXX";

/* The message for b, "" when it passes; l kept for a pass. */
static const char *check(const struct buf *b, struct tracedat_layout *l)
{
	static char err[512];
	int fd = open(path, O_WRONLY | O_TRUNC);

	CHECK(fd >= 0 && write(fd, b->b, b->n) == (ssize_t)b->n);
	close(fd);
	err[0] = 0;
	if (!tracedat_layout_read(path, l, err, sizeof(err)))
		return "";
	/* The path is the test's own: the rest is what a user reads. */
	return err + strlen(path) + 2;
}

int main(void)
{
	struct tracedat_layout l;
	struct buf b;
	struct at a;
	char want[256];
	int fd = mkstemp(path);

	CHECK(fd >= 0);
	close(fd);
	build(&b, &a);
	CHECK_STR(check(&b, &l), "");
	CHECK_EQ_U64(l.version, 6);
	CHECK_EQ_U64(l.nr_fmt, 2);
	CHECK(l.nr_fmt == 2 && !l.fmt[0].system && l.fmt[0].off == a.page_text &&
	      l.fmt[1].off == a.kvm_text && !strcmp(l.fmt[1].system, "kvm") &&
	      l.fmt[1].size == sizeof(kvm_fmt) - 1);
	tracedat_layout_free(&l);

	b.b[a.version] = '9';
	snprintf(want, sizeof(want), "offset %zu: damaged trace.dat: the version is not \"6\" or "
		 "\"7\" (NUL-ended): libtracecmd reads those", a.version);
	CHECK_STR(check(&b, &l), want);
	build(&b, &a);
	b.b[a.endian] = 2;
	snprintf(want, sizeof(want), "offset %zu: damaged trace.dat: the byte order is not 0 "
		 "(little endian) or 1 (big endian)", a.endian);
	CHECK_STR(check(&b, &l), want);
	build(&b, &a);
	b.b[a.long_size] = 5;
	snprintf(want, sizeof(want), "offset %zu: damaged trace.dat: the size of a long is not 4 "
		 "or 8 bytes", a.long_size);
	CHECK_STR(check(&b, &l), want);
	build(&b, &a);
	b.b[a.page + 1] ^= 0x01;		/* 4096 + 256 */
	snprintf(want, sizeof(want), "offset %zu: damaged trace.dat: the page size is not a power "
		 "of two from 1 KiB to 16 MiB", a.page);
	CHECK_STR(check(&b, &l), want);
	build(&b, &a);
	b.b[a.event_name + 3] = 'X';
	snprintf(want, sizeof(want), "offset %zu: damaged trace.dat: no \"header_event\" where its "
		 "format should start", a.event_name);
	CHECK_STR(check(&b, &l), want);
	build(&b, &a);
	b.b[a.kvm_size + 2] = 0x40;		/* 4 MiB */
	snprintf(want, sizeof(want), "offset %zu: damaged trace.dat: format 1 of 1 of kvm: its "
		 "size (%zu bytes) runs past the file's end", a.kvm_size,
		 (size_t)0x400000 + sizeof(kvm_fmt) - 1);
	CHECK_STR(check(&b, &l), want);
	build(&b, &a);
	b.n = a.kvm_text + 10;			/* cut in the kvm format */
	snprintf(want, sizeof(want), "offset %zu: damaged trace.dat: format 1 of 1 of kvm: its "
		 "size (%zu bytes) runs past the file's end", a.kvm_size, sizeof(kvm_fmt) - 1);
	CHECK_STR(check(&b, &l), want);
	build(&b, &a);
	b.n -= 2;				/* cut in the CPU count */
	snprintf(want, sizeof(want), "offset %zu: damaged trace.dat: the CPU count is cut short",
		 b.n - 2);
	CHECK_STR(check(&b, &l), want);
	unlink(path);
	CHECK_DONE("tracedat_layout");
}
