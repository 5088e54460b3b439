/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the trace.dat and perf.data fuzz targets share: the input becomes a file (libtracecmd
 * opens a path), the capture is read to its end, and a refusal must be one line naming the
 * file. VMEXIT_FUZZ_TALLY=1 prints, at exit, how many inputs were read, refused or left to
 * perf script (the fixed mutant set of tests/fuzz/run-capture-mutants.sh reports it).
 */
#ifndef VMEXIT_CAPTURE_FUZZ_H
#define VMEXIT_CAPTURE_FUZZ_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include "event_source.h"

static unsigned long fz_tried, fz_read, fz_refused, fz_fallback;
/* libFuzzer runs an input again right away when it looks like a leak: counted once. */
static bool fz_repeat;

static void fz_tally(void)
{
	fprintf(stderr, "tally: tried %lu, read %lu, refused with one line %lu, left to perf "
		"script %lu\n", fz_tried, fz_read, fz_refused, fz_fallback);
}

/* The input as a file: a memfd, reopened by its /proc path. */
static const char *fz_file(const uint8_t *data, size_t size)
{
	static char path[64];
	static int fd = -1;

	if (fd < 0) {
		fd = memfd_create("fuzz-capture", 0);
		if (fd < 0)
			abort();
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		if (getenv("VMEXIT_FUZZ_TALLY"))
			atexit(fz_tally);
	}
	static uint64_t last_hash;
	uint64_t h = 14695981039346656037ull ^ size;

	for (size_t i = 0; i < size; i++)
		h = (h ^ data[i]) * 1099511628211ull;
	fz_repeat = h == last_hash;
	last_hash = h;
	if (ftruncate(fd, 0) || (size && pwrite(fd, data, size, 0) != (ssize_t)size))
		abort();
	return path;
}

/* An error: one line, naming the file first. */
static void fz_check_err(const char *path, const char *err)
{
	size_t n = strlen(path);

	if (strncmp(err, path, n) || strncmp(err + n, ": ", 2) || !err[n + 2] || strchr(err, '\n')) {
		fprintf(stderr, "not one line naming the file: \"%s\"\n", err);
		abort();
	}
}

/* s (or NULL with err) read to its end. */
static void fz_drain(const char *path, struct event_source *s, const char *err0)
{
	char err[512];
	struct rec_item item;
	int ret, once = !fz_repeat;

	fz_tried += once;
	if (!s) {
		fz_check_err(path, err0);
		fz_refused += once;
		return;
	}
	while ((ret = event_source_next(s, &item, err, sizeof(err))) == 1)
		;
	if (ret < 0) {
		fz_check_err(path, err);
		fz_refused += once;
	} else {
		fz_read += once;
	}
	event_source_close(s);
}

#endif /* VMEXIT_CAPTURE_FUZZ_H */
