/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-event template engine behind `vmexit stream --format FILE` and the default stream line.
 *
 * A rules file maps events to templates, one rule per line: SELECTOR, whitespace, TEMPLATE.
 * Templates hold literal text and %(name)FMT fields; docs/formats.md is the language reference.
 * Rules are compiled once into literal spans and field operations with pre-parsed flags, width,
 * precision and conversion; rendering formats numbers itself, so no text from the rules file is
 * ever used as a printf format.
 */
#ifndef VMEXIT_TEMPLATE_H
#define VMEXIT_TEMPLATE_H

#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>

#include "vmexit.h"

struct tmpl_rules;

/*
 * Per-stream state. Zero-initialise, set the public fields, and call tmpl_env_release() when
 * the stream ends. One env belongs to one stream (it is not thread-safe).
 */
struct tmpl_env {
	double tsc_mhz;		/* > 0: %(tsc)/%(reltsc) are TSC cycles at this rate, else ns */
	__u64 first_ts_ns;	/* origin of rel_ns/reltime; 0: the first event rendered */
	/* CLOCK_REALTIME minus CLOCK_MONOTONIC when the events were taken, for %(walltime);
	 * 0: unknown, walltime is then time (CLOCK_MONOTONIC). */
	__s64 real_offset_ns;
	__u64 unit_ns;		/* %(latency): 0 scaled as the tables, else in ns, us or ms */
	/* Name of the VM owning tgid at ts_ns (the event's: a pid can be reused by a new VMM)
	 * for %(guest); NULL callback or result: the decimal tgid. */
	const char *(*guest_name)(void *ctx, __u32 tgid, __u64 ts_ns);
	void *ctx;
	void *priv;		/* engine-owned (per-vCPU previous timestamps for %(reltsc)) */
};

/*
 * Compiles rules text (len bytes, need not be NUL-terminated). filename only labels errors.
 * 0 and *out, or a negative errno with "file:line:col: what is wrong" in err.
 */
int tmpl_rules_parse(const char *text, size_t len, const char *filename,
		     struct tmpl_rules **out, char *err, size_t errlen);

/* Reads and compiles a rules file; errors as tmpl_rules_parse() ("path: reason" for I/O). */
int tmpl_rules_load(const char *path, struct tmpl_rules **out, char *err, size_t errlen);

/* The built-in rules used when no --format is given (also printed by docs/formats.md). */
extern const char tmpl_default_rules[];
int tmpl_rules_default(struct tmpl_rules **out, char *err, size_t errlen);
/* The same with a KEY column after the latency (stream --keys, report of such a recording). */
extern const char tmpl_default_key_rules[];
int tmpl_rules_default_keys(struct tmpl_rules **out, char *err, size_t errlen);

void tmpl_rules_free(struct tmpl_rules *r);

/*
 * Renders the rule that matches ev (see "Which rule renders an event" in docs/formats.md),
 * followed by '\n', into buf with snprintf() semantics: at most len - 1 bytes and a NUL (when
 * len > 0). Returns the length of the whole line, so a result >= len means it was truncated.
 * Returns 0 and writes only the NUL when no rule matches. Every call advances the per-vCPU
 * %(reltsc) state whether or not a rule matched.
 */
int tmpl_render(struct tmpl_rules *r, struct tmpl_env *env, const struct vmexit_event *ev,
		char *buf, size_t len);

/* Same, written to f. Returns bytes written, or -EIO / -ENOMEM. */
int tmpl_render_file(struct tmpl_rules *r, struct tmpl_env *env, const struct vmexit_event *ev,
		     FILE *f);

/* Frees the engine state kept in env->priv (the public fields are left alone). */
void tmpl_env_release(struct tmpl_env *env);

#endif /* VMEXIT_TEMPLATE_H */
