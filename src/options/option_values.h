/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Checked parsers for option values. Every number an option takes goes through strict_long()
 * or strict_double() (the whole string, no overflow, finite); the opt_*() store functions that
 * option tables name (cmd_options.h) report a bad value the one way usage errors are reported:
 * argp_error(), naming the option and what to give, exit status 2.
 */
#ifndef VMEXIT_OPTION_VALUES_H
#define VMEXIT_OPTION_VALUES_H

#include <argp.h>
#include <stdbool.h>
#include <linux/types.h>

/* The whole of s as a number (base 0: 0x.. and 0.. prefixes too); false if it is not one. */
bool strict_long(const char *s, int base, long *v);
bool strict_double(const char *s, double *v);

/* A number in [min, max]: "invalid WHAT 'ARG': give a number from MIN to MAX" otherwise. */
long parse_long_arg(const char *arg, const char *what, long min, long max,
		    struct argp_state *state);
/* The index of arg in names[n]; else "invalid WHAT 'ARG': use A, B or C". */
int parse_choice_arg(const char *arg, const char *what, const char *const *names, int n,
		     struct argp_state *state);

/*
 * Two options that choose different outputs, both given: "A and B are different outputs: pick
 * one", rather than one of them silently dropped.
 */
void opt_exclusive(struct argp_state *state, bool a, const char *a_name, bool b,
		   const char *b_name);

/*
 * A store function parses an option's argument (NULL for an option without one) into the
 * field `to` points at. OPT_STORE() declares one with the type of that field, which OPT_TO()
 * (cmd_options.h) checks against the field an option table gives it at compile time.
 */
typedef void opt_store_fn(const char *arg, void *to, struct argp_state *state);
#define OPT_STORE(fn, type)	typedef type fn##_type; opt_store_fn fn
/* The same for a store function of one file. */
#define OPT_STATIC_STORE(fn, type)	typedef type fn##_type; static opt_store_fn fn

OPT_STORE(opt_true, bool);			/* a flag: true */
OPT_STORE(opt_string, const char *);		/* the argument as given */
OPT_STORE(opt_tsc_mhz, double);			/* --tsc-mhz: a TSC frequency in MHz */
/* Durations (durations.h: with their unit, one message), in ns unless said: */
OPT_STORE(opt_min_latency, __u64);		/* --min-latency: 0 to a week */
OPT_STORE(opt_stuck, __u64);			/* stat, top, stream --stuck: 1ns to a week */
OPT_STORE(opt_serve_stuck, __u64);		/* serve --stuck: 0 to a week */
OPT_STORE(opt_keep, __u64);			/* serve --keep: 0 to a week */
OPT_STORE(opt_duration_s, double);		/* stream, record -d: in s, 1ns to a year */
/* The conventions of vmstat and top: a bare number of seconds, or a duration with its unit. */
OPT_STORE(opt_interval, double);		/* seconds, 0.01 to 86400 (stat, top -d) */
OPT_STORE(opt_count, long);			/* a number of intervals >= 1 (stat, top -n) */
OPT_STORE(opt_max_cells, __u32);		/* --max-cells: 16 to 65000 */
OPT_STORE(opt_max_keys, __u32);		/* --max-keys: 1 to 1000000 */
OPT_STORE(opt_key_gpa_shift, __u32);	/* --key-gpa-shift: 12 to 52 */
OPT_STORE(opt_top, __u32);			/* --top: 1 to 1000000 */
OPT_STORE(opt_key_device, __u32);		/* stream, record, top --keys: KEY_MODE_DEVICE */
OPT_STORE(opt_sample, __u32);			/* --sample: N >= 1 */
OPT_STORE(opt_ringbuf_kb, __u32);		/* --ringbuf-kb: a power of two, 4 to 2097152 */
OPT_STORE(opt_kvm_events, __u32);		/* --kvm-events: a mask of VMEXIT_KVM_* bits */
OPT_STORE(opt_perfetto_format, int);		/* --perfetto-format: enum trace_format */
OPT_STORE(opt_stack_min, __u64);		/* --stack-min: 0 to a week */
OPT_STORE(opt_qmp_timeout, int);		/* --qmp-timeout: in ms, 1ms to 60s */
OPT_STORE(opt_max_stacks, __u32);		/* --max-stacks: 16 to 1048576 */

#endif /* VMEXIT_OPTION_VALUES_H */
