/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The screen model of `vmexit top`: a pure function from rows (tracker output) and UI state to
 * text lines, plus the key handling that changes the UI state. Nothing here touches a terminal,
 * so all of it is unit-tested; top_cmd.c only samples, maps keys and paints the lines.
 */
#ifndef VMEXIT_TOP_VIEW_H
#define VMEXIT_TOP_VIEW_H

#include <regex.h>
#include <stdbool.h>
#include "reasons.h"
#include "inflight.h"
#include "name_cache.h"
#include "stack_table.h"
#include "wake_rows.h"

#define TOP_LINE_MAX	512		/* widest line the model builds, NUL included */
#define TOP_INPUT_MAX	128
#define TOP_LOG_COLS	6		/* reason columns in --log mode */
/* What the rows are: all VMs, one VM's vCPUs, the per-reason children of a VM (or vCPU),
 * (top --keys) the keys of one reason of them, or of all; or (top --stacks) the kernel stacks
 * of one reason's time off CPU, or of all reasons'; or (top --wake) the interrupt deliveries
 * and halts of the VM (vCPU) it was entered from, or of all. */
enum top_level { LV_VMS, LV_VCPUS, LV_REASONS, LV_KEYS, LV_STACKS, LV_WAKE };
enum top_sort { TS_COUNT, TS_RATE, TS_TIME, TS_MAX, TS_P99, TS_ONCPU, NR_TOP_SORT };
enum top_prompt { PR_NONE, PR_FILTER, PR_GUEST, PR_PID };

/* Keys the model understands; top_cmd.c maps curses key codes to these (printable: as is). */
enum {
	TK_UP = 0x1000, TK_DOWN, TK_PGUP, TK_PGDN, TK_HOME, TK_END, TK_LEFT, TK_RIGHT,
	TK_ENTER, TK_BACKSPACE, TK_ESC, TK_RESIZE,
};

enum top_action { TA_NONE, TA_QUIT, TA_RESET, TA_DELAY };

enum top_item_kind { TI_VM, TI_VCPU, TI_GROUP, TI_REASON, TI_KEY };

struct guest_symbols;
struct qmp_names;

/* Which item the cursor is on, by identity, so that it follows its row when the order changes. */
struct top_sel {
	enum top_item_kind kind;
	struct row_key key;
};

/* Everything the screen shows that does not come from the user. */
struct top_data {
	struct row_table *cur;		/* last interval, keyed tgid x vCPU x isa x reason */
	struct row_table *tot;		/* since start or the last reset, same keys */
	double interval_s;		/* what cur covers */
	double since_s;			/* what tot covers */
	double elapsed_s;		/* since tracing started */
	bool was_reset;
	struct name_cache *names;
	__u64 lost[NR_LOST];		/* kernel counters, since tracing started */
	const char *host;
	const char *kernel;
	const char *filters;		/* the command-line filters as text, "" if none */
	const char *overhead;		/* --overhead: vmexit's own cost, one line, or NULL */
	/* The exits in flight at the last sample (tracker.h), read against now_ns: rows with one
	 * in flight for stuck_ns or more are marked stuck. stuck_ns 0: none is. */
	const struct inflight_exit *inflight;
	__u32 nr_inflight;
	__u64 now_ns;
	__u64 stuck_ns;
	/* top --keys: rows keyed as cur and tot, and by key (key_rows.h); NULL without. */
	struct row_table *key_cur;
	struct row_table *key_tot;
	struct qmp_names *qmp;		/* --qmp: keys named by each QEMU's memory map; may be NULL */
	bool per_address;		/* --per-address: keys per port / address, not device */
	const struct guest_symbols *syms;	/* --rips --guest-symbols; may be NULL */
	/* top --split --stacks: the kernel's stacks since start, stack_table_sort()ed; NULL
	 * without. */
	const struct stack_table *stacks;
	/*
	 * top --wake: the kernel's wake cells grown in the last interval and since start (or the
	 * reset), row for row the same keys (wake_delta.h); NULL without.
	 */
	const struct wake_snapshot *wake_cur;
	const struct wake_snapshot *wake_tot;
};

struct top_ui {
	enum top_level level;
	__u32 tgid;			/* the VM drilled into; 0: all VMs */
	__u64 start;			/* with tgid, its process (row_key.start); 0: any on the pid */
	__s32 vcpu;			/* LV_REASONS of one vCPU; -1: all */
	enum top_level wake_from;	/* LV_WAKE: the level w (Left) returns to */
	bool key_all;			/* LV_KEYS, LV_STACKS: of every reason, else of: */
	__u32 key_isa, key_reason;
	enum top_sort sort;
	double delay;			/* refresh interval, seconds */
	bool interactive;		/* cursor, status line and scrolling (not for --once) */
	bool split;			/* --split: an OnCPU% column, sort by on-CPU time */
	bool skip_zero;			/* -z: hide rows without exits in the interval */
	int width, height;		/* height 0: as many lines as there are rows */

	char filter[TOP_INPUT_MAX];	/* regex on row labels, "" for none */
	regex_t re;
	bool have_re;

	struct top_sel sel;
	bool have_sel;
	int sel_idx, first;		/* cursor and first shown item, fixed up by each build */
	int page;			/* rows that fit, from the last build */

	bool help;
	enum top_prompt prompt;
	char input[TOP_INPUT_MAX];
	char msg[160];			/* one-shot status message, cleared by the next key */
};

struct top_item {
	enum top_item_kind kind;
	struct row_key key;		/* TI_GROUP: isa 0, reason 0 kvm_exit / 1 kvm_userspace_exit */
	int section;			/* reasons: 0 kernel, 1 userspace, 2 kvm events */
	bool user_src;			/* VM/vCPU counted from its userspace exits (no kvm_exit) */
	char label[96];
	/* TI_KEY: the label with the reason's short name ("IO 0xcf8 out pci-conf-idx"), shown
	 * where the whole one would be cut: the key wins over the event's prefix. */
	char key_label[96];
	const struct row *tot, *cur;
	__u64 stuck_ns;			/* age of its oldest stuck exit; 0: none */
};

struct top_line {
	char text[TOP_LINE_MAX];
	unsigned int attr;		/* TOP_A_* */
};

#define TOP_A_BOLD	1u
#define TOP_A_REVERSE	2u		/* column header, cursor */
#define TOP_A_ALERT	4u		/* lost counters, errors, stuck rows */

struct top_view {
	struct top_item *items;		/* shown rows, in order, filter applied */
	int nr_items, cap_items;
	struct top_line *lines;
	int nr_lines, cap_lines;
	struct row_table g_tot, g_cur;	/* the grouped rows the items point into */
	int nr_vms;
	int nr_text;			/* LV_STACKS: its lines, to scroll through */
};

void top_ui_init(struct top_ui *ui);
void top_ui_free(struct top_ui *ui);
/* Sets (or clears, with "") the row filter; on a bad regex keeps the old one, -1 and err. */
int top_ui_set_filter(struct top_ui *ui, const char *re, char *err, size_t errlen);
const char *top_sort_name(enum top_sort s);
int top_sort_parse(const char *s, enum top_sort *out);

/* A reason's row name: kvm_exit(R), kvm_userspace_exit(R), or kvm_EVENT for TOP_ISA_KVM_EVENT. */
void top_reason_label(__u32 isa, __u32 reason, char *buf, size_t len);

/* Rebuilds items and lines from d and ui (and fixes up ui's cursor). 0 or -ENOMEM. */
int top_view_build(struct top_view *v, const struct top_data *d, struct top_ui *ui);
void top_view_free(struct top_view *v);

/* One key press (TK_* or a character). The caller rebuilds the view afterwards. */
enum top_action top_ui_key(struct top_ui *ui, int key, const struct top_view *v,
			   const struct top_data *d);

/* --log: a vmstat-like line per interval with a column for each of the busiest reasons. */
struct top_log {
	int nr;
	struct row_key cols[TOP_LOG_COLS];	/* isa x reason, summed over VMs and vCPUs */
	char labels[TOP_LOG_COLS][REASON_STR_MAX + 16];
	int lines;				/* since the last header */
	bool started;
	bool skip_zero;				/* -z: no line for an interval of zeros */
	__u64 lost_prev[NR_LOST];
};

/*
 * One interval of --log into buf: a header first when one is due (the first line, every 20
 * lines, or when a new reason got a column), then the line; with lg->skip_zero, nothing ("")
 * for an interval without exits, kvm events or losses. Columns: the busiest reasons (and
 * kvm events) in tot, re (NULL: none) applied to their kvm_exit(R) / kvm_userspace_exit(R) /
 * kvm_EVENT names.
 */
int top_log_emit(struct top_log *lg, const struct row_table *cur, const struct row_table *tot,
		 double interval_s, const __u64 lost[NR_LOST], const char *clock,
		 const regex_t *re, char *buf, size_t len);

#endif /* VMEXIT_TOP_VIEW_H */
