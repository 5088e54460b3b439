// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: any bytes handed to vmexit diff or explain as a `stat --json` file (seeds in
 * corpus/stat_json: stat's own output) end in a run or one error line naming the file, never a
 * crash, a hang, a leak or undefined behaviour (float-cast-overflow included). What was read
 * goes on as diff and explain take it: diffed against itself (no row of a run against itself
 * may be a change) and explained guest by guest, so hostile counts, times and histograms reach
 * the tests' arithmetic too.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "explain_findings.h"
#include "run_diff.h"
#include "run_load.h"
#include "stat_json_read.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void use(const struct run_profile *p)
{
	struct diff_opts o = { DIFF_ALPHA_DEFAULT, DIFF_MIN_CHANGE_DEFAULT, false };
	struct run_diff d;
	struct explain e;

	for (int per_run = 0; per_run < 2; per_run++) {
		o.per_run = per_run;
		if (run_diff_build(p, p, &o, &d))
			abort();	/* only -ENOMEM, which these sizes cannot cause */
		if (d.nr_sig)
			abort();
		run_diff_free(&d);
	}
	for (__u32 g = 0; g < p->nr_guests; g++)
		explain_guest(p, g, &e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct run_load_info info;
	struct run_profile p;
	char path[64], err[512];
	int fd = memfd_create("stat.json", 0);

	if (fd < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	/* Other bytes go to the record and capture readers, fuzzed on their own. */
	if (!stat_json_looks(path)) {
		close(fd);
		return 0;
	}
	err[0] = 0;
	run_profile_init(&p, false);
	if (run_load(path, &p, &info, err, sizeof(err))) {
		/* One line, naming the file. */
		if (!err[0] || strchr(err, '\n') || strncmp(err, path, strlen(path)))
			abort();
	}
	use(&p);
	run_profile_free(&p);
	close(fd);
	return 0;
}
