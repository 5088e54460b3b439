/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Options declared once. A command, and each group of options several commands share (the
 * filters, the stat view, the live capture), is a struct cmd_options: one table that gives
 * every option's help (as argp shows it) and where its value goes through which checked store
 * function (option_values.h), plus hooks for what a table cannot say (positional arguments,
 * checks once every option is in). cmd_options_parse() turns that into argp's help and parser.
 *
 * Adding an option is one line in a table:
 *	{ "force", 0, NULL, 0, "Overwrite FILE if it exists", 2,
 *	  OPT_TO(struct record_args, force, opt_true) },
 */
#ifndef VMEXIT_CMD_OPTIONS_H
#define VMEXIT_CMD_OPTIONS_H

#include <argp.h>
#include <stddef.h>
#include "option_values.h"

struct cmd_option {
	/* As in struct argp_option; key 0 for a long option without a one-letter form. */
	const char *name;
	int key;
	const char *arg;
	int flags;
	const char *doc;
	int group;
	/* store(arg, (char *)input + offset, state) when the option is given. */
	opt_store_fn *store;
	size_t offset;
};

/* A header line above the options of group; another name for the option before. */
#define OPT_HEADER(text, grp)	{ .doc = (text), .group = (grp) }
#define OPT_ALIAS(alias, grp)	{ .name = (alias), .flags = OPTION_ALIAS, .group = (grp) }

/* Compile-time 0, or an error when cond is false. */
#define OPT_ZERO_UNLESS(cond)	(sizeof(char[(cond) ? 1 : -1]) - 1)

/* The option goes to input->member through fn, which must store member's type. */
#define OPT_TO(type, member, fn)                                                              \
	.store = fn,                                                                          \
	.offset = offsetof(type, member) +                                                    \
		  OPT_ZERO_UNLESS(__builtin_types_compatible_p(__typeof__(((type *)0)->member), \
							       fn##_type))

/* The option goes to the whole input, of type, through fn. */
#define OPT_INPUT(type, fn)                                                                   \
	.store = fn, .offset = OPT_ZERO_UNLESS(__builtin_types_compatible_p(type, fn##_type))

/* A group of options shared by commands, in a command's (or another group's) struct. */
struct cmd_child {
	const struct cmd_options *set;
	size_t offset;			/* of the group's input in the parent's */
	const char *header;		/* as struct argp_child */
	int group;
};

struct cmd_options {
	const struct cmd_option *options;	/* ends with {} */
	const struct cmd_child *children;	/* ends with {}; may be NULL */
	const char *args_doc, *doc;		/* a command's: usage line and help text */
	/* Before any option (defaults that depend on more than zero), may be NULL. */
	void (*init)(void *input);
	/* A positional argument: ARGP_ERR_UNKNOWN when it takes no more. May be NULL. */
	error_t (*arg)(const char *arg, void *input, struct argp_state *state);
	/* Once every option and argument is in: combinations, what is missing. May be NULL. */
	void (*end)(void *input, struct argp_state *state);
	/* An argument nothing took here: NULL leaves it to the groups after this one, else it
	 * is the usage error "unexpected argument 'ARG'" followed by this text. */
	const char *unexpected;
};

/* argp_parse(argc, argv, flags) by set into input. 0, or argp's error (already said). */
error_t cmd_options_parse(const struct cmd_options *set, int argc, char **argv, unsigned flags,
			  void *input);

#endif /* VMEXIT_CMD_OPTIONS_H */
