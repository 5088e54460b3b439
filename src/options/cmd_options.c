// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include "cmd_options.h"

/* Keys of options without a one-letter form: above every char, below argp's own keys. */
#define AUTO_KEY	0x1000

/* One set's argp, and where its values go; argp hands each parser its node as input. */
struct opt_node {
	const struct cmd_options *set;
	void *input;
	struct argp argp;
	struct argp_option *options;
	struct argp_child *children;
	struct opt_node *kids;
	int nr_kids;
};

static bool is_option(const struct cmd_option *o)
{
	return o->name && !(o->flags & OPTION_ALIAS);
}

static int key_of(const struct cmd_option *o, int i)
{
	return o->key || !is_option(o) ? o->key : AUTO_KEY + i;
}

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	struct opt_node *n = state->input;
	const struct cmd_options *set = n->set;

	for (int i = 0; set->options[i].name || set->options[i].doc; i++) {
		const struct cmd_option *o = &set->options[i];

		if (o->store && key_of(o, i) == key) {
			o->store(arg, (char *)n->input + o->offset, state);
			return 0;
		}
	}
	switch (key) {
	case ARGP_KEY_INIT:
		for (int i = 0; i < n->nr_kids; i++)
			state->child_inputs[i] = &n->kids[i];
		if (set->init)
			set->init(n->input);
		return 0;
	case ARGP_KEY_ARG:
		if (set->arg && set->arg(arg, n->input, state) != ARGP_ERR_UNKNOWN)
			return 0;
		if (set->unexpected)
			argp_error(state, "unexpected argument '%s'%s", arg, set->unexpected);
		break;
	case ARGP_KEY_END:
		if (set->end)
			set->end(n->input, state);
		break;
	}
	return ARGP_ERR_UNKNOWN;
}

static void node_free(struct opt_node *n)
{
	for (int i = 0; n->kids && i < n->nr_kids; i++)
		node_free(&n->kids[i]);
	free(n->kids);
	free(n->children);
	free(n->options);
}

static int node_build(struct opt_node *n, const struct cmd_options *set, void *input)
{
	int nr = 0;

	n->set = set;
	n->input = input;
	while (set->options[nr].name || set->options[nr].doc)
		nr++;
	while (set->children && set->children[n->nr_kids].set)
		n->nr_kids++;
	n->options = calloc(nr + 1, sizeof(*n->options));
	n->children = calloc(n->nr_kids + 1, sizeof(*n->children));
	n->kids = calloc(n->nr_kids, sizeof(*n->kids));
	if (!n->options || !n->children || (n->nr_kids && !n->kids))
		return -ENOMEM;
	for (int i = 0; i < nr; i++) {
		const struct cmd_option *o = &set->options[i];

		n->options[i] = (struct argp_option){ o->name, key_of(o, i), o->arg, o->flags,
						      o->doc, o->group };
	}
	for (int i = 0; i < n->nr_kids; i++) {
		const struct cmd_child *c = &set->children[i];

		if (node_build(&n->kids[i], c->set, (char *)input + c->offset))
			return -ENOMEM;
		n->children[i] = (struct argp_child){ &n->kids[i].argp, 0, c->header, c->group };
	}
	n->argp = (struct argp){ .options = n->options, .parser = parse_opt,
				 .args_doc = set->args_doc, .doc = set->doc,
				 .children = n->nr_kids ? n->children : NULL };
	return 0;
}

error_t cmd_options_parse(const struct cmd_options *set, int argc, char **argv, unsigned flags,
			  void *input)
{
	struct opt_node root = {};
	error_t err;

	err = node_build(&root, set, input);
	if (!err)
		err = argp_parse(&root.argp, argc, argv, flags, NULL, &root);
	else
		fprintf(stderr, "vmexit: out of memory\n");
	node_free(&root);
	return err;
}
