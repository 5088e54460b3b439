// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: any bytes report -i reads as a trace-cmd trace.dat (the real reader:
 * tracedat_layout, the child that parses the formats, libtracecmd) end in a clean end or one
 * line naming the file, never a crash, a hang or a leak.
 */
#include "capture_fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fz_file(data, size);
	char err[512] = "";

	fz_drain(path, tracedat_source_open(path, err, sizeof(err)), err);
	return 0;
}
