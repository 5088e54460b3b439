// SPDX-License-Identifier: GPL-2.0
/* The option tables: values land where the tables say, hooks run, usage errors exit 2. */
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include "check.h"
#include "cmd_options.h"
#include "stat_output.h"
#include "view_options.h"

struct child_args {
	bool verbose;
	double mhz;
	int inits;
};

struct args {
	struct child_args child;
	bool flag;
	const char *str;
	long count;
	__u64 stuck_ns;
	const char *pos[2];
	int nr_pos;
	int child_inits_at_end;	/* the child's init count when the parent's end ran */
	bool ended;
};

static const struct cmd_option child_options[] = {
	OPT_HEADER("Child:", 5),
	{ "verbose", 'v', NULL, 0, "Child flag", 5, OPT_TO(struct child_args, verbose, opt_true) },
	{ "tsc-mhz", 0, "MHZ", 0, "Child number", 5, OPT_TO(struct child_args, mhz, opt_tsc_mhz) },
	{},
};

static void child_init(void *input)
{
	((struct child_args *)input)->inits++;
}

static const struct cmd_options child_set = { .options = child_options, .init = child_init };

static const struct cmd_option options[] = {
	OPT_HEADER("Parent:", 2),
	{ "flag", 'f', NULL, 0, "A flag", 2, OPT_TO(struct args, flag, opt_true) },
	OPT_ALIAS("other-flag", 2),
	{ "str", 's', "TEXT", 0, "A string", 2, OPT_TO(struct args, str, opt_string) },
	{ "count", 0, "N", 0, "A count", 2, OPT_TO(struct args, count, opt_count) },
	{ "stuck", 0, "DURATION", 0, "A duration", 2, OPT_TO(struct args, stuck_ns, opt_stuck) },
	{},
};

static error_t positional(const char *arg, void *input, struct argp_state *state)
{
	struct args *a = input;

	(void)state;
	if (a->nr_pos >= 2)
		return ARGP_ERR_UNKNOWN;
	a->pos[a->nr_pos++] = arg;
	return 0;
}

static void end(void *input, struct argp_state *state)
{
	struct args *a = input;

	(void)state;
	a->ended = true;
	a->child_inits_at_end = a->child.inits;
}

static const struct cmd_options set = {
	.options = options, .arg = positional, .end = end, .unexpected = " (a hint)",
	.args_doc = "[A [B]]", .doc = "Tests the option tables.",
	.children = (const struct cmd_child[]){
		{ &child_set, offsetof(struct args, child), NULL, 0 }, {} },
};

/*
 * Parses argv by s into input in a child process: its exit status, stdout and stderr (first
 * 4 KiB each).
 */
static int parse_in(const struct cmd_options *s, void *input, char **argv, char *out, char *err)
{
	int po[2], pe[2], status;
	ssize_t n;
	pid_t pid;

	if (pipe(po) || pipe(pe))
		return -1;
	pid = fork();
	if (!pid) {
		int argc = 0;

		while (argv[argc])
			argc++;
		dup2(po[1], 1);
		dup2(pe[1], 2);
		argp_err_exit_status = 2;
		exit(cmd_options_parse(s, argc, argv, 0, input) ? 3 : 0);
	}
	close(po[1]);
	close(pe[1]);
	n = read(po[0], out, 4095);
	out[n > 0 ? n : 0] = 0;
	n = read(pe[0], err, 4095);
	err[n > 0 ? n : 0] = 0;
	close(po[0]);
	close(pe[0]);
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int parse_apart(char **argv, char *out, char *err)
{
	struct args a = {};

	return parse_in(&set, &a, argv, out, err);
}

/* stat's and report's summary options: one format, and CSV has no histogram. */
static int view_apart(char **argv, char *err)
{
	struct stat_view v = {};
	char out[4096];

	return parse_in(&stat_view_options, &v, argv, out, err);
}

int main(void)
{
	char *argv[] = { "t", "-f", "--str", "abc", "p1", "--count=3", "-v", "--tsc-mhz", "2100",
			 "--stuck", "250ms", "p2", NULL };
	char *alias[] = { "t", "--other-flag", NULL };
	char *bad[] = { "t", "--count", "0", NULL };
	char *extra[] = { "t", "a", "b", "c", NULL };
	char *help[] = { "t", "--help", NULL };
	char out[4096], err[4096];
	struct args a = {};

	CHECK(!cmd_options_parse(&set, 12, argv, 0, &a));
	CHECK(a.flag);
	CHECK_STR(a.str, "abc");
	CHECK_EQ_U64(a.count, 3);
	CHECK_EQ_U64(a.stuck_ns, 250000000);
	CHECK(a.child.verbose);
	CHECK(a.child.mhz == 2100);
	CHECK_EQ_U64(a.nr_pos, 2);
	CHECK_STR(a.pos[0], "p1");
	CHECK_STR(a.pos[1], "p2");
	/* Each init once, before any option; the parent's end after every option. */
	CHECK_EQ_U64(a.child.inits, 1);
	CHECK(a.ended);
	CHECK_EQ_U64(a.child_inits_at_end, 1);

	memset(&a, 0, sizeof(a));
	CHECK(!cmd_options_parse(&set, 2, alias, 0, &a));
	CHECK(a.flag);

	/* A bad value: the checked parser's message, as argp_error(), status 2. */
	CHECK_EQ_U64(parse_apart(bad, out, err), 2);
	CHECK(strstr(err, "t: bad count '0': give a whole number of intervals >= 1\n") == err);
	/* An argument the positional hook does not take: "unexpected" and the set's hint. */
	CHECK_EQ_U64(parse_apart(extra, out, err), 2);
	CHECK(strstr(err, "t: unexpected argument 'c' (a hint)\n") == err);
	/* The help lists the tables' options under their headers, long-only ones without a key. */
	CHECK_EQ_U64(parse_apart(help, out, err), 0);
	CHECK(strstr(out, "Usage: t [OPTION...] [A [B]]\nTests the option tables.\n\n Parent:\n"));
	CHECK(strstr(out, "      --count=N              A count\n"));
	CHECK(strstr(out, "  -f, --flag, --other-flag   A flag\n"));
	CHECK(strstr(out, "\n Child:\n      --tsc-mhz=MHZ          Child number\n"));

	/* Two summary formats: a usage error naming both, whichever order; --json --hist is one. */
	CHECK_EQ_U64(view_apart((char *[]){ "t", "--json", "--csv", NULL }, err), 2);
	CHECK(strstr(err, "t: --csv and --json are different outputs: pick one\n") == err);
	CHECK_EQ_U64(view_apart((char *[]){ "t", "--csv", "--json", NULL }, err), 2);
	CHECK(strstr(err, "t: --csv and --json are different outputs: pick one\n") == err);
	CHECK_EQ_U64(view_apart((char *[]){ "t", "--hist", "--csv", NULL }, err), 2);
	CHECK(strstr(err, "t: --csv and --hist are different outputs: pick one\n") == err);
	CHECK_EQ_U64(view_apart((char *[]){ "t", "--json", "--hist", NULL }, err), 0);
	CHECK_EQ_U64(view_apart((char *[]){ "t", "--csv", "--csv", "--by", "vcpu", NULL }, err), 0);
	CHECK_DONE("cmd_options");
}
