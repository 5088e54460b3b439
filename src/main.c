// SPDX-License-Identifier: GPL-2.0
/* vmexit: why and for how long KVM guests leave guest mode. */
#include <argp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include "commands.h"
#include "env_knobs.h"
#include "startup_timing.h"
#include "version.h"

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
} commands[] = {
	{ "stat", cmd_stat, "count exits per VM, vCPU and reason, with time in exit" },
	{ "top", cmd_top, "live view of exits per VM, vCPU and reason (like kvm_stat)" },
	{ "stream", cmd_stream, "print exits one by one as they happen (lines, JSON, Perfetto)" },
	{ "record", cmd_record, "record exits into a file for report" },
	{ "report", cmd_report, "stat and stream output from a recorded file, without root" },
	{ "diff", cmd_diff, "compare two runs: significant changes, ranked by their cost" },
	{ "explain", cmd_explain, "why a guest leaves guest mode, in words, with the figures" },
	{ "serve", cmd_serve, "export exits to Prometheus / OpenMetrics scrapers over HTTP" },
	{ "list", cmd_list, "list exit reason names, or running guests (list guests)" },
};
#define NR_COMMANDS	(sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *f)
{
	fprintf(f, "Usage: vmexit COMMAND [OPTION...]\n\n"
		   "Why and for how long KVM guests leave guest mode.\n\nCommands:\n");
	for (size_t i = 0; i < NR_COMMANDS; i++)
		fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].help);
	fprintf(f, "\n'vmexit COMMAND --help' describes each command.\n");
}

int main(int argc, char **argv)
{
	char err[256];

	startup_mark("main");
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("vmexit " VMEXIT_VERSION "\n");
		return 0;
	}
	if (env_knobs_check(err, sizeof(err))) {
		fprintf(stderr, "vmexit: %s\n", err);
		return 2;
	}
	/* Usage errors exit 2 like every other bad input, not argp's EX_USAGE. */
	argp_err_exit_status = 2;
	for (size_t i = 0; i < NR_COMMANDS; i++) {
		char name[32];

		if (strcmp(argv[1], commands[i].name))
			continue;
		/* argp names the program after argv[0]: make messages say "vmexit stat". */
		snprintf(name, sizeof(name), "vmexit %s", commands[i].name);
		argv[1] = name;
		return commands[i].fn(argc - 1, argv + 1);
	}
	fprintf(stderr, "vmexit: unknown command '%s'; commands:", argv[1]);
	for (size_t i = 0; i < NR_COMMANDS; i++)
		fprintf(stderr, "%s %s", i ? "," : "", commands[i].name);
	fprintf(stderr, " (vmexit --help)\n");
	return 2;
}
