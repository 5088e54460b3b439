// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: any bytes report -i reads as a perf.data (its header check and the native
 * reader; what that leaves to perf script is counted, not run) end in a clean end or one line
 * naming the file, never a crash, a hang or a leak.
 */
#include "capture_fuzz.h"
#include "import_perfdata.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fz_file(data, size);
	char err[512] = "";
	bool fallback;
	struct event_source *s = perf_native_open(path, &fallback, err, sizeof(err));

	if (!s && fallback) {
		fz_tried += !fz_repeat;
		fz_fallback += !fz_repeat;
		return 0;
	}
	fz_drain(path, s, err);
	return 0;
}
