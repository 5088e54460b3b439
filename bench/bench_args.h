/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The benchmarks take no arguments (their knobs are environment variables, named at the top of
 * each file): any argument is answered with a line that says so, and the bench does not run.
 * Without this, `bench_user_exits --help` ran the whole bench (minutes, guests started).
 */
#ifndef VMEXIT_BENCH_ARGS_H
#define VMEXIT_BENCH_ARGS_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Returns when there is no argument; else exits, 0 for -h/--help, 2 for anything else. */
static inline void bench_args(int argc, char **argv, const char *src)
{
	bool help;

	if (argc < 2)
		return;
	help = !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help");
	fprintf(help ? stdout : stderr,
		"%s%s takes no arguments: its knobs are environment variables, described at the "
		"top of %s; make bench runs it (bench/run.sh)\n",
		help ? "" : "bench: ", argv[0], src);
	exit(help ? 0 : 2);
}

#endif /* VMEXIT_BENCH_ARGS_H */
