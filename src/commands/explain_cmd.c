// SPDX-License-Identifier: GPL-2.0
/* vmexit explain: why a guest leaves guest mode, in words, with the figures that show it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "cmd_options.h"
#include "commands.h"
#include "explain_findings.h"
#include "explain_output.h"
#include "guest_symbols_option.h"
#include "option_values.h"
#include "out_write.h"
#include "proc_names.h"
#include "reasons.h"
#include "run_load.h"

static const char doc[] =
"Run the drill-down an expert would on a guest's exits and say what stands out,\n"
"in words, with the figures: the reasons by time, the top reason's keys (ports,\n"
"addresses, with device names), its time split into on CPU, blocked and waiting\n"
"for a CPU, the kernel stacks of the blocked part, and the guest RIPs where\n"
"kvm_exit fires. An idle guest whose exit time is HLT is said to be no problem;\n"
"what the data could not show (kvm_exit not firing, no --split, no --keys) is\n"
"said too.\n"
"\n"
"USAGE: vmexit explain [-p PID | -g NAME] [-d DURATION | -i FILE] [--json]\n"
"\n"
"Live (needs root): traces for DURATION (default 2s) with `vmexit record --split\n"
"--keys`; only if the top reason's time is mostly blocked, a second DURATION\n"
"with --stacks on that reason alone. Nothing else is loaded, and nothing stays\n"
"loaded once a step has its data. With -i: anything `vmexit report` reads (a\n"
"recording made with --split --keys [--stacks] says the most; a trace.dat or\n"
"perf.data; stat --json output).\n"
"\n"
"EXAMPLES:\n"
"    vmexit explain -g web01             # 2 s of web01, then the answer\n"
"    vmexit explain -p 4242 -d 5s --json  # for tools and agents\n"
"    vmexit explain -i exits.vmexit       # every guest of a recording\n"
"    vmexit explain -i exits.vmexit -g web01\n"
"    vmexit explain -g web01 --guest-symbols web01=System.map   # RIPs named\n";

struct explain_args {
	struct guest_symbols syms;	/* --guest-symbols */
	const char *pid, *guest, *input;
	double duration_s;
	bool json;
};

static const struct cmd_option options[] = {
	{ "pid", 'p', "PID", 0, "The VMM process to explain (live)", 0,
	  OPT_TO(struct explain_args, pid, opt_string) },
	{ "guest", 'g', "NAME", 0, "The guest to explain (QEMU -name)", 0,
	  OPT_TO(struct explain_args, guest, opt_string) },
	{ "duration", 'd', "DURATION", 0, "Trace each step this long (default 2s)", 0,
	  OPT_TO(struct explain_args, duration_s, opt_duration_s) },
	{ "input", 'i', "FILE", 0, "Explain a recording, capture or stat --json file instead", 0,
	  OPT_TO(struct explain_args, input, opt_string) },
	{ "guest-symbols", 0, "GUEST=FILE", 0, "Name GUEST's RIPs symbol+offset from FILE, its System.map or a "
	  "copy of its /proc/kallsyms (repeatable)", 0,
	  OPT_TO(struct explain_args, syms, opt_guest_symbols) },
	{ "json", 0, NULL, 0, "One JSON object per guest, the same findings and figures", 0,
	  OPT_TO(struct explain_args, json, opt_true) },
	{},
};

static void check(void *input, struct argp_state *state)
{
	struct explain_args *a = input;

	if (a->pid && a->guest)
		argp_error(state, "give the guest by -p PID or by -g NAME, not both");
	if (a->input && a->duration_s > 0)
		argp_error(state, "-d is how long to trace live: drop it with -i FILE");
	if (a->input && a->pid)
		argp_error(state, "-p is for live tracing: with -i FILE give the guest's name "
			   "(-g NAME)");
	if (a->pid) {
		char *end;
		long v = strtol(a->pid, &end, 10);

		if (*end || v <= 0)
			argp_error(state, "-p %s: give the VMM's process id", a->pid);
	}
	if (!a->duration_s)
		a->duration_s = 2;
}

static const struct cmd_options explain_options = {
	.options = options, .end = check, .unexpected = "",
	.args_doc = "", .doc = doc,
};

/* One step of live tracing: `vmexit record` for the duration, into path. 0, or -1 said. */
static int record_step(const struct explain_args *a, const char *path, const char *extra[])
{
	char dur[32], log[4096 + 32];
	const char *argv[24];
	int n = 0, status;
	pid_t pid;

	snprintf(dur, sizeof(dur), "%.9gs", a->duration_s);
	argv[n++] = "vmexit";
	argv[n++] = "record";
	argv[n++] = "--force";
	argv[n++] = "-o";
	argv[n++] = path;
	argv[n++] = "-d";
	argv[n++] = dur;
	if (a->pid) {
		argv[n++] = "-p";
		argv[n++] = a->pid;
	}
	if (a->guest) {
		argv[n++] = "-g";
		argv[n++] = a->guest;
	}
	for (int i = 0; extra[i]; i++)
		argv[n++] = extra[i];
	argv[n] = NULL;
	snprintf(log, sizeof(log), "%s.log", path);
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "vmexit: explain: fork: %s\n", strerror(errno));
		return -1;
	}
	if (!pid) {
		/* record's summary lines would bury the answer: its stderr is shown if it fails. */
		if (!freopen("/dev/null", "w", stdout) || !freopen(log, "w", stderr))
			_exit(1);
		execv("/proc/self/exe", (char **)argv);
		fprintf(stderr, "vmexit: explain: cannot run vmexit record: %s\n", strerror(errno));
		_exit(1);
	}
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status)) {
		FILE *f = fopen(log, "re");
		char line[1024];

		while (f && fgets(line, sizeof(line), f))
			fputs(line, stderr);
		if (f)
			fclose(f);
		fprintf(stderr, "vmexit: explain: tracing failed (vmexit record said the above)\n");
		unlink(log);
		return -1;
	}
	unlink(log);
	return 0;
}

static int load(const char *path, struct run_profile *p, struct run_load_info *info)
{
	char err[512];

	run_profile_init(p, false);
	if (run_load(path, p, info, err, sizeof(err))) {
		fprintf(stderr, "vmexit: %s\n", err);
		return -1;
	}
	return 0;
}

/* Stacks of the step that traced them, into the first step's profile by guest name. */
static int take_stacks(struct run_profile *to, const struct run_profile *from)
{
	for (__u32 i = 0; i < from->nr_stacks; i++) {
		const struct prof_stack *s = &from->stacks[i];
		char *frame = s->folded;

		/* folded is already outermost first: hand it over as one frame */
		if (run_profile_add_stack(to, from->guests[s->guest].name, s->isa, s->reason,
					  &frame, 1, s->ns, s->count))
			return -ENOMEM;
	}
	return 0;
}

/*
 * Live: step 1 everything cheap; step 2 the stacks of the top reason, when it blocks. src
 * learns how long step 2 traced and its reason (into reason, len 32), for an empty answer.
 */
static int trace_live(const struct explain_args *a, struct run_profile *p, char *dir,
		      struct explain_source *src, char *reason)
{
	static const char *step1[] = { "--split", "--keys", NULL };
	char path[4096 + 32];
	struct run_load_info info;
	struct run_profile p2;
	struct explain e;
	int rc = -1;

	snprintf(path, sizeof(path), "%s/step1.vmexit", dir);
	if (record_step(a, path, step1) || load(path, p, &info))
		return -1;
	for (__u32 g = 0; g < p->nr_guests; g++) {
		const char *step2[] = { "--split", "--stacks", "-r", reason, NULL };

		explain_guest(p, g, &e);
		if (!e.top || e.main_part != PART_BLOCKED)
			continue;
		snprintf(reason, 32, "%s:%u", isa_name(e.top->id.isa), e.top->id.reason);
		snprintf(path, sizeof(path), "%s/step2.vmexit", dir);
		run_profile_init(&p2, false);
		if (record_step(a, path, step2) || load(path, &p2, &info)) {
			run_profile_free(&p2);
			return -1;
		}
		rc = take_stacks(p, &p2);
		src->stacks_s = p2.span_s;
		src->stacks_reason = reason;
		run_profile_free(&p2);
		return rc;
	}
	return 0;
}

/* The guests to explain: -g's, else every one, most time in exits first. */
static int explain_all(const struct explain_args *a, struct run_profile *p,
		       const struct explain_source *src)
{
	struct explain *e = calloc(p->nr_guests ? p->nr_guests : 1, sizeof(*e));
	__u32 n = 0;
	int err = 0;

	if (!e) {
		fprintf(stderr, "vmexit: explain: %s\n", strerror(ENOMEM));
		return 1;
	}
	for (__u32 g = 0; g < p->nr_guests; g++) {
		if (a->guest && strcmp(p->guests[g].name, a->guest))
			continue;
		explain_guest(p, g, &e[n]);
		/* most exit time first, by insertion */
		for (__u32 i = n++; i > 0 && e[i - 1].exit_share < e[i].exit_share; i--) {
			struct explain t = e[i];

			e[i] = e[i - 1];
			e[i - 1] = t;
		}
	}
	/* Live, a guest named but silent: no exits this host can see is an answer too. */
	if (!n && src->live && (a->guest || a->pid)) {
		char name[PROF_NAME_MAX];
		int g;

		if (a->guest)
			snprintf(name, sizeof(name), "%s", a->guest);
		else if (guest_name_for_pid(atoi(a->pid), name, sizeof(name)) < 0)
			snprintf(name, sizeof(name), "pid %s", a->pid);
		g = run_profile_guest(p, name);
		if (g >= 0)
			explain_guest(p, (__u32)g, &e[n++]);
	}
	if (!n) {
		if (a->guest)
			fprintf(stderr, "vmexit: explain: no exits of a guest named '%s' in %s\n",
				a->guest, src->what);
		else
			fprintf(stderr, "vmexit: explain: no guest's exits in %s\n", src->what);
		free(e);
		return 1;
	}
	for (__u32 i = 0; i < n && !err; i++) {
		if (i && !a->json)
			putchar('\n');
		err = explain_print(&e[i], src, a->json, stdout);
	}
	if (!err)
		err = out_flush(stdout);
	free(e);
	if (err) {
		out_write_error("the explanation", err);
		return 1;
	}
	return 0;
}

int cmd_explain(int argc, char **argv)
{
	struct explain_args a = {};
	struct run_profile p = {};
	struct run_load_info info;
	struct explain_source src = {};
	char dir[] = "/tmp/vmexit-explain-XXXXXX", what[4096 + 64], stacks_reason[32];
	bool made_dir = false;
	int rc = 1;

	if (cmd_options_parse(&explain_options, argc, argv, 0, &a))
		return 2;
	if (a.input) {
		if (load(a.input, &p, &info))
			goto out;
		snprintf(what, sizeof(what), "%s, %s", a.input, p.kind);
	} else {
		if (!mkdtemp(dir)) {
			fprintf(stderr, "vmexit: explain: %s: %s\n", dir, strerror(errno));
			goto out;
		}
		made_dir = true;
		if (trace_live(&a, &p, dir, &src, stacks_reason))
			goto out;
		/* What was traced, from the recording: -d is what was asked for. */
		snprintf(what, sizeof(what), "%.2f s of live tracing, -d %.9gs", p.span_s,
			 a.duration_s);
		src.live = true;
	}
	src.what = what;
	src.syms = &a.syms;
	rc = explain_all(&a, &p, &src);
out:
	if (made_dir) {
		char path[sizeof(dir) + 32];

		snprintf(path, sizeof(path), "%s/step1.vmexit", dir);
		unlink(path);
		snprintf(path, sizeof(path), "%s/step2.vmexit", dir);
		unlink(path);
		rmdir(dir);
	}
	run_profile_free(&p);
	guest_symbols_free(&a.syms);
	return rc;
}
