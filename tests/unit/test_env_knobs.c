// SPDX-License-Identifier: GPL-2.0
/*
 * The environment's knobs: every kind takes its values and refuses the rest with one message
 * naming the variable, the value and what it takes; an empty value is as unset.
 */
#include <stdlib.h>

#include "check.h"
#include "env_knobs.h"

static char err[256];

/* env_knobs_check() with only name=value set among the knobs. */
static int check_one(const char *name, const char *value)
{
	static const char *const all[] = {
#define KNOB_NAME(name, kind, words, what) #name,
		VMEXIT_ENV_KNOBS(KNOB_NAME)
#undef KNOB_NAME
	};

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		unsetenv(all[i]);
	if (name)
		setenv(name, value, 1);
	err[0] = 0;
	return env_knobs_check(err, sizeof(err));
}

/* Each kind: the values it takes (1) and refuses (0). */
static const struct {
	const char *name, *value;
	int ok;
} cases[] = {
	/* BOOL */
	{ "VMEXIT_CPU_SLOT", "0", 1 }, { "VMEXIT_CPU_SLOT", "1", 1 }, { "VMEXIT_CPU_SLOT", "", 1 },
	{ "VMEXIT_CPU_SLOT", "off", 0 }, { "VMEXIT_THREAD_HASH", "10", 0 },
	{ "VMEXIT_PERF_SCRIPT", "yes", 0 },
	/* WORD: each word whole, nothing else. */
	{ "VMEXIT_TEST_HOOKS", "no-fentry", 1 }, { "VMEXIT_TEST_HOOKS", "classic", 1 },
	{ "VMEXIT_TEST_HOOKS", "clasic", 0 }, { "VMEXIT_TEST_HOOKS", "no-fentr", 0 },
	{ "VMEXIT_TEST_HOOKS", "classics", 0 }, { "VMEXIT_TEST_HOOKS", "no-fentry|classic", 0 },
	/* UINT */
	{ "VMEXIT_TEST_FAST_PATH_SKEW", "1", 1 }, { "VMEXIT_TEST_FAST_PATH_SKEW", "0x10", 1 },
	{ "VMEXIT_TEST_FAST_PATH_SKEW", "-1", 0 }, { "VMEXIT_TEST_FAST_PATH_SKEW", "1x", 0 },
	{ "VMEXIT_TEST_FAST_PATH_SKEW", "99999999999999999999999", 0 },
	/* NAMED */
	{ "VMEXIT_TEST_KVM_STATS_SKEW", "io_exits:3", 1 },
	{ "VMEXIT_TEST_KVM_STATS_SKEW", "io_exits:-3", 1 },
	{ "VMEXIT_TEST_KVM_STATS_SKEW", "3", 0 }, { "VMEXIT_TEST_KVM_STATS_SKEW", ":3", 0 },
	{ "VMEXIT_TEST_KVM_STATS_SKEW", "io_exits:", 0 },
	/* PATH: anything. */
	{ "VMEXIT_KVM_DEBUGFS", "/nonexistent dir", 1 },
};

int main(void)
{
	CHECK(check_one(NULL, NULL) == 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc = check_one(cases[i].name, cases[i].value);

		if ((rc == 0) != cases[i].ok)
			fprintf(stderr, "%s=%s: %s\n", cases[i].name, cases[i].value,
				cases[i].ok ? "refused" : "taken");
		CHECK((rc == 0) == cases[i].ok);
		/* A refusal names the variable and its value first. */
		CHECK(rc == 0 || !strncmp(err, cases[i].name, strlen(cases[i].name)));
	}
	/* The one message, whole. */
	check_one("VMEXIT_CPU_SLOT", "off");
	CHECK_STR(err, "VMEXIT_CPU_SLOT=off: takes 0 or 1 (0 keeps exits in flight per thread, "
		  "not per CPU); set it so or unset it");
	check_one("VMEXIT_TEST_HOOKS", "clasic");
	CHECK_STR(err, "VMEXIT_TEST_HOOKS=clasic: takes no-fentry|no-direct|classic (a test's "
		  "choice of the hooks other kernels fall back to); set it so or unset it");
	/* The readers. */
	check_one("VMEXIT_DEBUG_TIMING", "1");
	CHECK(env_knob_on("VMEXIT_DEBUG_TIMING"));
	check_one("VMEXIT_DEBUG_TIMING", "0");
	CHECK(!env_knob_on("VMEXIT_DEBUG_TIMING"));
	check_one("VMEXIT_TEST_HOOKS", "classic");
	CHECK(env_knob_is("VMEXIT_TEST_HOOKS", "classic"));
	CHECK(!env_knob_is("VMEXIT_TEST_HOOKS", "no-fentry"));
	check_one(NULL, NULL);
	CHECK(!env_knob_is("VMEXIT_TEST_HOOKS", "classic"));
	CHECK_DONE("env_knobs");
}
