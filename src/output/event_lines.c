// SPDX-License-Identifier: GPL-2.0
/*
 * The per-event format of lines: the built-in line, or the rules of a --format file
 * (output/rules/, docs/formats.md).
 */
#include <errno.h>
#include <stdlib.h>
#include "event_format.h"
#include "lost_causes.h"
#include "reasons.h"
#include "template.h"
#include "text_escape.h"
#include "wake_rows.h"

/* The format's own state (o->state). */
struct lines_state {
	struct tmpl_rules *rules;
	struct tmpl_env *env;
	bool header_due;		/* the built-in lines' header before the first */
};

static struct lines_state *ls(const struct evout *o)
{
	return o->state;
}

/* Each event is named by its own VMM: a pid's old VMM's late events keep the old name. */
static const char *guest_cb(void *ctx, __u32 tgid, __u64 ts_ns)
{
	return name_cache_get_at_time(ctx, tgid, ts_ns);
}

static int lines_open(struct evout *o, const struct evout_opts *opts, char *err, size_t errlen)
{
	int ret;

	ls(o)->env = calloc(1, sizeof(*ls(o)->env));
	if (!ls(o)->env) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	ls(o)->env->tsc_mhz = opts->tsc_mhz;
	ls(o)->env->guest_name = guest_cb;
	ls(o)->env->ctx = opts->names;
	ls(o)->env->real_offset_ns = opts->real_offset_ns;
	ls(o)->env->unit_ns = opts->unit_ns;
	if (opts->arg[EVOUT_LINES]) {
		ret = tmpl_rules_load(opts->arg[EVOUT_LINES], &ls(o)->rules, err, errlen);
	} else {
		ret = opts->keys ? tmpl_rules_default_keys(&ls(o)->rules, err, errlen) :
		      tmpl_rules_default(&ls(o)->rules, err, errlen);
		ls(o)->header_due = true;
	}
	/* Every rules-file problem is a usage error, whatever errno the engine chose. */
	return ret && ret != -ENOMEM ? -EINVAL : ret;
}

/* The built-in line's columns, and which clock its absolute time is: once, before its first
 * line (the output may be another file than at open). */
static void lines_header(struct evout *o)
{
	char clock[80];

	if (!ls(o)->header_due)
		return;
	ls(o)->header_due = false;
	snprintf(clock, sizeof(clock), "%s(s)", ls(o)->env->real_offset_ns ? "CLOCK_REALTIME" :
		 o->clock ? o->clock : "CLOCK_MONOTONIC");
	fprintf(o->f, "#%12s %17s %-16s %4s %-22s %10s%s\n", "REL_TIME(s)", clock, "GUEST",
		"vCPU", "REASON", "LATENCY", o->keys ? " KEY" : "");
}

static int lines_event(struct evout *o, const struct vmexit_event *ev)
{
	int ret;

	lines_header(o);
	ret = tmpl_render_file(ls(o)->rules, ls(o)->env, ev, o->f);
	return ret < 0 ? ret : 0;
}

static void lines_stuck(struct evout *o, const struct inflight_exit *e, __u64 age_ns,
			const char *guest, const char *rname)
{
	char rb[REASON_STR_MAX], nb[TEXT_NAME_MAX];

	(void)rname;
	lines_header(o);
	/* The names and the clock of the lines around it. */
	fprintf(o->f, "# STUCK %s pid %u tid %u vcpu %d %s in flight for %.6f s since %.6f\n",
		text_esc(nb, guest), e->tgid, e->tid, e->vcpu,
		reason_label(e->isa, e->reason, rb, sizeof(rb)), age_ns / 1e9,
		(e->start_ns + ls(o)->env->real_offset_ns) / 1e9);
}

static void lines_lost(struct evout *o, __u64 ts_ns, __u64 n, int cause)
{
	lines_header(o);
	fprintf(o->f, "# LOST %llu records (%s) at %.6f\n", (unsigned long long)n,
		lost_cause_text(cause), (ts_ns + ls(o)->env->real_offset_ns) / 1e9);
}

static void lines_wake_lost(struct evout *o, __u64 ts_ns, __u64 n, int cause)
{
	lines_header(o);
	fprintf(o->f, "# LOST %llu (--wake: %s) at %.6f\n", (unsigned long long)n,
		wake_lost_name(cause), (ts_ns + ls(o)->env->real_offset_ns) / 1e9);
}

static int lines_close(struct evout *o)
{
	if (ls(o)->rules)
		tmpl_rules_free(ls(o)->rules);
	ls(o)->rules = NULL;
	if (ls(o)->env) {
		tmpl_env_release(ls(o)->env);
		free(ls(o)->env);
		ls(o)->env = NULL;
	}
	return 0;
}

const struct evout_ops evout_lines = {
	.state_size = sizeof(struct lines_state),
	.open = lines_open, .event = lines_event, .stuck = lines_stuck, .lost = lines_lost,
	.wake_lost = lines_wake_lost, .flush = evout_flush_file, .close = lines_close,
};
