// SPDX-License-Identifier: GPL-2.0
/*
 * vmexit explain's findings (explain_findings.h) and words (explain_output.h) on simulated
 * recordings of the five workloads whose cause is known (sim_runs.h), read back by run_load():
 * port hammering, a slow VMM (asleep in nanosleep), a starved vCPU (run queue), faults served
 * late by userfaultfd (kernel exits blocked in handle_userfault) and an idle guest (HLT), plus a
 * quiet guest. The host tests run the real workloads (tests/host/test_explain_host.sh).
 */
#include <unistd.h>
#include "check.h"
#include "explain_findings.h"
#include "explain_output.h"
#include "run_load.h"
#include "sim_runs.h"

static char dir[] = "/tmp/test_explain-XXXXXX";

#define PORT(p)	{ .key = (p), .kind = KEY_PORT, .dir = KEY_DIR_OUT }

/*
 * stacks_s > 0: explained as live, with a stacks step of that long (-r svm:123); < 0: live,
 * without one.
 */
static void check_live(const char *name, const struct sim_kind *k, __u32 nr,
		       enum explain_cause want, const char *words, double stacks_s)
{
	struct sim_run r = { name, 1, 0.5, k, nr };
	struct run_profile p;
	struct run_load_info info;
	struct explain e;
	char path[256], err[512], *text = NULL;
	size_t len = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s.vmexit", dir, name);
	sim_write(&r, 31337, path, NULL);
	run_profile_init(&p, false);
	if (run_load(path, &p, &info, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		CHECK(0);
		return;
	}
	CHECK_EQ_U64(p.nr_guests, 1);
	explain_guest(&p, 0, &e);
	f = open_memstream(&text, &len);
	CHECK(f);
	if (f) {
		CHECK(!explain_print(&e, &(struct explain_source){ .what = path,
			.live = stacks_s != 0, .stacks_s = stacks_s > 0 ? stacks_s : 0,
			.stacks_reason = "svm:123" },
			false, f));
		fclose(f);
	}
	printf("--- %s: %s\n%s", name, explain_cause_key(e.cause), text ? text : "");
	/* No vCPU spends more than all its time out of guest mode. */
	CHECK(e.exit_share <= 1);
	if (e.cause != want)
		fprintf(stderr, "%s: cause %s, expected %s\n", name, explain_cause_key(e.cause),
			explain_cause_key(want));
	CHECK(e.cause == want);
	CHECK(text && strstr(text, words));
	free(text);
	run_profile_free(&p);
}

static void check_scenario(const char *name, const struct sim_kind *k, __u32 nr,
			   enum explain_cause want, const char *words)
{
	check_live(name, k, nr, want, words, 0);
}

int main(void)
{
	const char *nanosleep = "__schedule;schedule;do_nanosleep;hrtimer_nanosleep;"
				"__x64_sys_clock_nanosleep";
	const char *uffd = "__schedule;schedule;handle_userfault;do_user_addr_fault;"
			   "kvm_faultin_pfn;kvm_tdp_page_fault;kvm_mmu_page_fault";
	/* A vCPU that waits for its CPU longer than it runs in its exits (the SVM bed's hog). */
	const struct sim_kind starved_most[] = {
		{ VMEXIT_ISA_USER, 2, PORT(0xe9), 2000, 200000, 0.01, 0.7, NULL },
	};
	/* --io: 20000 short (10 us) exits a second to port 0xe9, on CPU: 20 % of the vCPU. */
	const struct sim_kind hammer[] = {
		{ VMEXIT_ISA_USER, 2, PORT(0xe9), 20000, 10000, 0.01, 0.01, NULL },
	};
	/* --io-sleep-us 50: each exit asleep 50 us of its 60. */
	const struct sim_kind slow[] = {
		{ VMEXIT_ISA_USER, 2, PORT(0xe9), 5000, 60000, 0.83, 0.02, nanosleep },
	};
	/*
	 * The same where kvm_exit fires: each IO exit (SVM io, 0x7b) holds the exit to the VMM
	 * (IO), whose stack the sleep is charged to; 5000 x 60 us is 30 % of the vCPU, not 58 %.
	 */
	const struct sim_kind slow_nested[] = {
		{ VMEXIT_ISA_SVM, 0x7b, PORT(0xe9), 5000, 60000, 0.83, 0.02, NULL },
		{ VMEXIT_ISA_USER, 2, PORT(0xe9), 5000, 55000, 0.9, 0.02, nanosleep },
	};
	/*
	 * Seen in the SVM bed (--io-sleep-us 200): the io exit 52 % on CPU (the emulator), 36 %
	 * asleep in nanosleep, 12 % waiting for a CPU: the sleep is what the handler adds.
	 */
	const struct sim_kind slow_bed[] = {
		{ VMEXIT_ISA_SVM, 0x7b, PORT(0xe9), 30, 7000000, 0.36, 0.12, NULL },
		{ VMEXIT_ISA_USER, 2, PORT(0xe9), 30, 4000000, 0.6, 0.05, nanosleep },
	};
	/*
	 * A hog on the vCPU's CPU: it preempts the vCPU thread in its exits as often as in guest
	 * mode, so the exits wait for the CPU about as long as they run (test_split_host).
	 */
	const struct sim_kind starved[] = {
		{ VMEXIT_ISA_USER, 2, PORT(0xe9), 2000, 200000, 0.01, 0.47, NULL },
	};
	/* --touch --uffd-delay-us: nested page faults blocked until the handler answers. */
	const struct sim_kind late[] = {
		{ VMEXIT_ISA_SVM, 0x400, { .key = 0x200000, .kind = KEY_GPA }, 300, 1000000,
		  0.97, 0.01, uffd },
		{ VMEXIT_ISA_USER, 2, PORT(0xe9), 300, 9000, 0.01, 0.01, NULL },
	};
	/* --hlt: half the vCPU time halted; a few exits of other kinds. */
	const struct sim_kind idle[] = {
		{ VMEXIT_ISA_USER, 5, {}, 500, 1000000, 0.97, 0.01, NULL },
		{ VMEXIT_ISA_USER, 2, PORT(0xe9), 100, 9000, 0.01, 0.01, NULL },
	};
	/* The same with no stack charged: a stacks step that saw no blocked period end. */
	const struct sim_kind slow_nostacks[] = {
		{ VMEXIT_ISA_SVM, 0x7b, PORT(0xe9), 5000, 60000, 0.83, 0.02, NULL },
		{ VMEXIT_ISA_USER, 2, PORT(0xe9), 5000, 55000, 0.9, 0.02, NULL },
	};
	const struct sim_kind quiet[] = {
		{ VMEXIT_ISA_USER, 2, PORT(0xe9), 100, 9000, 0.01, 0.01, NULL },
	};

	if (!mkdtemp(dir)) {
		perror(dir);
		return 1;
	}
	check_scenario("hammer", hammer, 1, EXPLAIN_EXIT_RATE, "0xe9 out debugcon");
	check_scenario("slow", slow, 1, EXPLAIN_SLOW_HANDLER, "in do_nanosleep");
	check_scenario("slow_nested", slow_nested, 2, EXPLAIN_SLOW_HANDLER, "in do_nanosleep");
	check_scenario("slow_bed", slow_bed, 2, EXPLAIN_SLOW_HANDLER, "in do_nanosleep");
	/* A recording without --stacks, and live explain whose stacks step got none. */
	check_scenario("slow_unasked", slow_nostacks, 2, EXPLAIN_SLOW_HANDLER,
		       "kernel stacks of the blocked time: not recorded (record --split --stacks)");
	check_live("slow_nostacks", slow_nostacks, 2, EXPLAIN_SLOW_HANDLER,
		   "kernel stacks of the blocked time: none in the 1.25 s of the stacks step "
		   "(-r svm:123): no period off CPU", 1.25);
	check_scenario("starved", starved, 1, EXPLAIN_STARVED, "waiting for a CPU");
	/* Live, waiting for a CPU the most: explain ran no stacks step, and says it chose not to. */
	check_live("starved_live", starved_most, 1, EXPLAIN_STARVED,
		   "kernel stacks of the blocked time: not traced (explain traces them only when "
		   "the top reason's time is mostly blocked)", -1);
	check_scenario("late", late, 2, EXPLAIN_USERFAULTFD, "in handle_userfault");
	check_scenario("idle", idle, 2, EXPLAIN_IDLE, "nothing stands out");
	check_scenario("quiet", quiet, 1, EXPLAIN_NOTHING, "nothing stands out");
	{
		char cmd[300];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		CHECK(!system(cmd));
	}
	if (check_failures) {
		fprintf(stderr, "test_explain_findings: %d check(s) failed\n", check_failures);
		return 1;
	}
	printf("test_explain_findings: ok\n");
	return 0;
}
