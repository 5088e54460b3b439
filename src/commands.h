/* SPDX-License-Identifier: GPL-2.0 */
/* vmexit's subcommands; each returns the process exit status. */
#ifndef VMEXIT_COMMANDS_H
#define VMEXIT_COMMANDS_H

#define VMEXIT_VERSION	"0.1"

/*
 * A command's argp from its options, parser, usage line, doc and the argp children it shares
 * with other commands (filters, view and live options), as { &argp, 0, header, group } items.
 */
#define COMMAND_ARGP(opts, parse, usage, text, ...)                                          \
	{                                                                                     \
		.options = (opts), .parser = (parse), .args_doc = (usage), .doc = (text),     \
		.children = (const struct argp_child[]){ __VA_ARGS__, {} },                    \
	}

int cmd_stat(int argc, char **argv);
int cmd_stream(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_serve(int argc, char **argv);

#endif /* VMEXIT_COMMANDS_H */
