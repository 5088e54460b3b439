/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The environment variables vmexit reads, in one table with the values each takes. main()
 * checks them all before any command runs: a misspelt value of a test knob would otherwise run
 * the default path, and a test would pass for the wrong reason.
 */
#ifndef VMEXIT_ENV_KNOBS_H
#define VMEXIT_ENV_KNOBS_H

#include <stdbool.h>
#include <stddef.h>

/*
 * X(name, kind, words, what): kind says which values are taken (an empty value is as unset):
 * BOOL "0" or "1"; PATH any; WORD one of the |-separated words; UINT an unsigned number
 * (strtoul, base 0); NAMED NAME:INTEGER. what is said when the value is wrong.
 */
#define VMEXIT_ENV_KNOBS(X)							\
	X(VMEXIT_CPU_SLOT, BOOL, NULL, "0 keeps exits in flight per thread, not per CPU")	\
	X(VMEXIT_RUN_KEYS, BOOL, NULL, "0 keys exits to the VMM by the key programs, not "	\
	  "from kvm_run")							\
	X(VMEXIT_THREAD_HASH, BOOL, NULL, "1 keeps per-thread state in the hash by thread id "	\
	  "of kernels before 5.11, on a kernel with task storage")		\
	X(VMEXIT_DEBUG_TIMING, BOOL, NULL, "1 times start-up's steps on stderr")	\
	X(VMEXIT_PERF_SCRIPT, BOOL, NULL, "1 reads perf.data through `perf script`")	\
	X(VMEXIT_KALLSYMS, PATH, NULL, "the kernel's symbols, for /proc/kallsyms")	\
	X(VMEXIT_KVM_DEBUGFS, PATH, NULL, "KVM's debugfs, for /sys/kernel/debug/kvm")	\
	X(VMEXIT_TEST_HOOKS, WORD, "no-fentry|no-direct|classic",		\
	  "a test's choice of the hooks other kernels fall back to")		\
	X(VMEXIT_TEST_REFUSE, WORD,						\
	  "kvm_exit_direct|kvm_exit_fast|kvm_entry_fast|kvm_run_fpu_keyed",	\
	  "a test's program the kernel is to refuse, to see what falls back")	\
	X(VMEXIT_TEST_FAST_PATH_SKEW, UINT, NULL,				\
	  "a test's skew of the start-up check's fast path, to see it refused")	\
	X(VMEXIT_TEST_KVM_STATS_SKEW, NAMED, NULL,				\
	  "a test's skew of KVM's statistic NAME by INTEGER")	\
	X(VMEXIT_TEST_RELEASE_HOLD, UINT, NULL,					\
	  "a test's seconds for which vmexit-release keeps the perf events it closes")

/* 0, or -1 with a one-line message in err naming the variable and the values it takes. */
int env_knobs_check(char *err, size_t errlen);

/* A BOOL knob set to "1". */
bool env_knob_on(const char *name);

/* A WORD knob's value equals word. */
bool env_knob_is(const char *name, const char *word);

#endif
