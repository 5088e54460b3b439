// SPDX-License-Identifier: GPL-2.0
/*
 * `vmexit top` keys and prompts: what each key does to the UI state (level, cursor, sort,
 * filter, delay, guest), and the line prompts for a filter, a guest name or a pid.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "text_escape.h"
#include "top_view_int.h"

void top_ui_init(struct top_ui *ui)
{
	memset(ui, 0, sizeof(*ui));
	ui->level = LV_VMS;
	ui->vcpu = -1;
	ui->sort = TS_RATE;	/* busiest now first, like kvm_stat */
	ui->delay = 1;
	ui->width = 80;
}

void top_ui_free(struct top_ui *ui)
{
	if (ui->have_re)
		regfree(&ui->re);
	ui->have_re = false;
}

int top_ui_set_filter(struct top_ui *ui, const char *re, char *err, size_t errlen)
{
	regex_t n;
	int rc;

	if (!*re) {
		top_ui_free(ui);
		ui->filter[0] = 0;
		return 0;
	}
	if (strlen(re) >= sizeof(ui->filter)) {
		snprintf(err, errlen, "regex too long (at most %zu characters)",
			 sizeof(ui->filter) - 1);
		return -1;
	}
	/* Case-insensitive: "io" should find kvm_userspace_exit(IO). */
	rc = regcomp(&n, re, REG_EXTENDED | REG_NOSUB | REG_ICASE);
	if (rc) {
		char why[96];

		regerror(rc, &n, why, sizeof(why));
		snprintf(err, errlen, "bad regex '%s': %s", re, why);
		return -1;
	}
	top_ui_free(ui);
	ui->re = n;
	ui->have_re = true;
	snprintf(ui->filter, sizeof(ui->filter), "%s", re);
	return 0;
}

/* To a level, of the VM tgid (0: all) started at start (0: any process on the pid). */
static void go_to(struct top_ui *ui, enum top_level level, __u32 tgid, __u64 start, __s32 vcpu)
{
	ui->level = level;
	ui->tgid = tgid;
	ui->start = start;
	ui->vcpu = vcpu;
	ui->have_sel = false;
	ui->sel_idx = 0;
	ui->first = 0;
}

/* Back up one level, with the cursor on the item we came from. */
static void go_up(struct top_ui *ui)
{
	__u32 tgid = ui->tgid;
	__u64 start = ui->start;
	__s32 vcpu = ui->vcpu;

	if (ui->level == LV_VMS) {
		snprintf(ui->msg, sizeof(ui->msg), "already at the top (all VMs)");
		return;
	}
	if (ui->level == LV_WAKE) {
		/* Back where w was pressed, in the same scope (the VMs' list has none). */
		enum top_level from = ui->wake_from;

		go_to(ui, from, from == LV_VMS ? 0 : tgid, from == LV_VMS ? 0 : start,
		      from <= LV_VCPUS ? -1 : vcpu);
		return;
	}
	if (ui->level == LV_KEYS || ui->level == LV_STACKS) {
		bool one = !ui->key_all;

		go_to(ui, LV_REASONS, tgid, start, vcpu);
		ui->sel = (struct top_sel){ TI_REASON, { 0, -1, ui->key_isa, ui->key_reason, 0, {}, 0 } };
		ui->have_sel = one;
		return;
	}
	if (ui->level == LV_REASONS && vcpu >= 0) {
		go_to(ui, LV_VCPUS, tgid, start, -1);
		ui->sel = (struct top_sel){ TI_VCPU, { tgid, vcpu, 0, 0, start, {}, 0 } };
	} else {
		go_to(ui, LV_VMS, 0, 0, -1);
		ui->sel = (struct top_sel){ TI_VM, { tgid, -1, 0, 0, start, {}, 0 } };
	}
	ui->have_sel = tgid != 0;
}

static const struct top_item *selected(const struct top_ui *ui, const struct top_view *v)
{
	if (!ui->have_sel || ui->sel_idx < 0 || ui->sel_idx >= v->nr_items)
		return NULL;
	return &v->items[ui->sel_idx];
}

/* top --keys (--stacks): a reason's keys (stacks), in the scope of its row (VM, vCPU or all). */
static void to_reason(struct top_ui *ui, enum top_level level, __u32 isa, __u32 reason)
{
	go_to(ui, level, ui->tgid, ui->start, ui->vcpu);
	ui->key_all = false;
	ui->key_isa = isa;
	ui->key_reason = reason;
}

/* Has a reason row (not a kvm event's) under the cursor. */
static const struct top_item *reason_row(const struct top_ui *ui, const struct top_view *v)
{
	const struct top_item *it = selected(ui, v);

	return ui->level == LV_REASONS && it && it->kind == TI_REASON &&
	       it->key.isa != TOP_ISA_KVM_EVENT ? it : NULL;
}

/* S: the kernel stacks of the reason under the cursor, or of the keys' reason; S again: back. */
static void stacks(struct top_ui *ui, const struct top_view *v, const struct top_data *d)
{
	const struct top_item *it = reason_row(ui, v);

	if (!d->stacks)
		snprintf(ui->msg, sizeof(ui->msg), "no kernel stacks: start top with --split "
			 "--stacks");
	else if (it)
		to_reason(ui, LV_STACKS, it->key.isa, it->key.reason);
	else if (ui->level == LV_KEYS && !ui->key_all)
		to_reason(ui, LV_STACKS, ui->key_isa, ui->key_reason);
	else if (ui->level == LV_STACKS)
		go_up(ui);
	else
		snprintf(ui->msg, sizeof(ui->msg), "S lists an exit reason's stacks: choose one "
			 "(x on a VM)");
}

/*
 * w: the deliveries and halts in the scope of the level in view (all VMs, a VM, a vCPU); w again
 * (or Left): back to that level.
 */
static void wake(struct top_ui *ui, const struct top_data *d)
{
	enum top_level from = ui->level;

	if (ui->level == LV_WAKE) {
		go_up(ui);
		return;
	}
	if (!d->wake_tot) {
		snprintf(ui->msg, sizeof(ui->msg), "no wake-up statistics: start top with --wake");
		return;
	}
	go_to(ui, LV_WAKE, ui->tgid, ui->start, ui->vcpu);
	ui->wake_from = from;
}

static void drill(struct top_ui *ui, const struct top_view *v, const struct top_data *d,
		  bool toggle)
{
	const struct top_item *it = selected(ui, v);

	switch (ui->level) {
	case LV_VMS:
		if (!it) {
			snprintf(ui->msg, sizeof(ui->msg), "no VM to drill into");
			return;
		}
		go_to(ui, LV_REASONS, it->key.tgid, it->key.start, -1);
		break;
	case LV_VCPUS:
		if (!it) {
			snprintf(ui->msg, sizeof(ui->msg), "no vCPU to drill into");
			return;
		}
		go_to(ui, LV_REASONS, it->key.tgid, it->key.start, it->key.vcpu);
		break;
	case LV_REASONS:
		/* Keys first (S lists the stacks then), else the stacks. */
		if (reason_row(ui, v) && (d->key_tot || d->stacks))
			to_reason(ui, d->key_tot ? LV_KEYS : LV_STACKS, it->key.isa, it->key.reason);
		else if (toggle)
			go_up(ui);
		else if (!d->key_tot && !d->stacks)
			snprintf(ui->msg, sizeof(ui->msg), "exit reasons are the deepest level");
		else
			snprintf(ui->msg, sizeof(ui->msg), "no exit reason to list the %s of",
				 d->key_tot ? "keys" : "stacks");
		break;
	case LV_KEYS:
	case LV_STACKS:
		if (toggle)
			go_up(ui);
		else
			snprintf(ui->msg, sizeof(ui->msg), "%s are the deepest level",
				 ui->level == LV_KEYS ? "keys" : "stacks");
		break;
	case LV_WAKE:
		if (toggle)
			go_up(ui);
		else
			snprintf(ui->msg, sizeof(ui->msg), "wake-ups have no level below (w: back)");
		break;
	}
}

static void vcpus(struct top_ui *ui, const struct top_view *v)
{
	const struct top_item *it = selected(ui, v);

	switch (ui->level) {
	case LV_VMS:
		go_to(ui, LV_VCPUS, it ? it->key.tgid : 0, it ? it->key.start : 0, -1);
		break;
	case LV_REASONS:
	case LV_KEYS:
	case LV_STACKS:
	case LV_WAKE:
		go_to(ui, LV_VCPUS, ui->tgid, ui->start, -1);
		break;
	case LV_VCPUS:
		go_up(ui);
		break;
	}
}

/*
 * kvm_stat's b: its default view is every VM's events together, b splits them by guest. Here
 * the default is per VM: b goes to all VMs' reasons together, and back.
 */
static void by_guest(struct top_ui *ui)
{
	if (ui->level == LV_VMS) {
		go_to(ui, LV_REASONS, 0, 0, -1);
		snprintf(ui->msg, sizeof(ui->msg), "exit reasons of all VMs (b: per VM)");
	} else {
		go_to(ui, LV_VMS, 0, 0, -1);
		snprintf(ui->msg, sizeof(ui->msg), "per VM (b: exit reasons of all VMs)");
	}
}

static void move(struct top_ui *ui, const struct top_view *v, int by)
{
	int i = ui->sel_idx + by;

	/* No cursor among the stacks' lines: they scroll (the build keeps them in range). */
	if (ui->level == LV_STACKS || ui->level == LV_WAKE) {
		ui->first += by;
		return;
	}

	if (i >= v->nr_items)
		i = v->nr_items - 1;
	if (i < 0)
		i = 0;
	ui->sel_idx = i;
	ui->have_sel = v->nr_items > 0;
	if (ui->have_sel) {
		ui->sel.kind = v->items[i].kind;
		ui->sel.key = v->items[i].key;
	}
}

static void change_delay(struct top_ui *ui, int dir)
{
	static const double steps[] = { 0.1, 0.2, 0.5, 1, 2, 3, 5, 10, 30, 60 };
	int n = sizeof(steps) / sizeof(steps[0]);

	if (dir > 0) {
		for (int i = 0; i < n; i++) {
			if (steps[i] > ui->delay + 1e-9) {
				ui->delay = steps[i];
				break;
			}
		}
	} else {
		for (int i = n - 1; i >= 0; i--) {
			if (steps[i] < ui->delay - 1e-9) {
				ui->delay = steps[i];
				break;
			}
		}
	}
	snprintf(ui->msg, sizeof(ui->msg), "refresh every %gs", ui->delay);
}

static void choose_guest(struct top_ui *ui, const struct top_data *d, const char *name)
{
	int n, found = 0;
	__u32 *vms = top_vm_list(d, &n), pid = 0;
	char nb[TEXT_NAME_MAX];
	size_t off;

	for (int i = 0; i < n; i++) {
		if (!strcmp(name_cache_get(d->names, vms[i]), name) && !found++)
			pid = vms[i];
	}
	if (found) {
		go_to(ui, LV_REASONS, pid, 0, -1);
		if (found > 1)
			snprintf(ui->msg, sizeof(ui->msg), "%d VMs are named '%s': showing pid %u "
				 "(p chooses by pid)", found, text_esc(nb, name), pid);
		free(vms);
		return;
	}
	off = snprintf(ui->msg, sizeof(ui->msg), "no VM named '%s' has exits; seen:",
		       text_fit(nb, sizeof(nb), name, 0, 40));
	for (int i = 0; i < n && off < sizeof(ui->msg); i++)
		off += snprintf(ui->msg + off, sizeof(ui->msg) - off, " %s",
				text_esc(nb, name_cache_get(d->names, vms[i])));
	if (!n)
		snprintf(ui->msg + off, sizeof(ui->msg) - off, " none");
	free(vms);
}

static void choose_pid(struct top_ui *ui, const struct top_data *d, const char *s)
{
	int n;
	__u32 *vms;
	char *end;
	unsigned long pid;
	bool seen = false;

	errno = 0;
	pid = strtoul(s, &end, 10);
	if (errno || end == s || *end || !pid || pid > 0x7fffffff) {
		snprintf(ui->msg, sizeof(ui->msg), "bad pid '%.40s': give a VMM process id", s);
		return;
	}
	vms = top_vm_list(d, &n);
	for (int i = 0; i < n; i++)
		seen |= vms[i] == pid;
	free(vms);
	go_to(ui, LV_REASONS, (__u32)pid, 0, -1);
	if (!seen)
		snprintf(ui->msg, sizeof(ui->msg), "pid %lu: no exits seen (yet)", pid);
}

static void prompt_done(struct top_ui *ui, const struct top_data *d)
{
	enum top_prompt p = ui->prompt;
	char err[160];

	ui->prompt = PR_NONE;
	if (p == PR_FILTER) {
		if (top_ui_set_filter(ui, ui->input, err, sizeof(err)))
			snprintf(ui->msg, sizeof(ui->msg), "%s", err);
		else if (ui->have_re)
			snprintf(ui->msg, sizeof(ui->msg), "showing rows matching /%s/", ui->filter);
		else
			snprintf(ui->msg, sizeof(ui->msg), "filter cleared");
		return;
	}
	if (!ui->input[0]) {
		go_to(ui, LV_VMS, 0, 0, -1);
		snprintf(ui->msg, sizeof(ui->msg), "all VMs");
	} else if (p == PR_GUEST) {
		choose_guest(ui, d, ui->input);
	} else {
		choose_pid(ui, d, ui->input);
	}
}

static void prompt_key(struct top_ui *ui, int key, const struct top_data *d)
{
	size_t n = strlen(ui->input);

	if (key == TK_ENTER || key == '\n' || key == '\r') {
		prompt_done(ui, d);
	} else if (key == TK_ESC) {
		ui->prompt = PR_NONE;
	} else if (key == TK_BACKSPACE || key == 127 || key == 8) {
		if (n)
			ui->input[n - 1] = 0;
	} else if (key >= 0x20 && key < 0x7f && n + 1 < sizeof(ui->input)) {
		ui->input[n] = (char)key;
		ui->input[n + 1] = 0;
	}
}

enum top_action top_ui_key(struct top_ui *ui, int key, const struct top_view *v,
			   const struct top_data *d)
{
	if (ui->prompt != PR_NONE) {
		prompt_key(ui, key, d);
		return TA_NONE;
	}
	ui->msg[0] = 0;
	/* As the help says: any key returns from it, q included (a second q quits). */
	if (ui->help) {
		ui->help = false;
		return TA_NONE;
	}
	switch (key) {
	case 'q':
	case 'Q':
		return TA_QUIT;
	case TK_UP:
	case 'k':
		move(ui, v, -1);
		break;
	case TK_DOWN:
	case 'j':
		move(ui, v, 1);
		break;
	case TK_PGUP:
		move(ui, v, -(ui->page > 1 ? ui->page - 1 : 1));
		break;
	case TK_PGDN:
		move(ui, v, ui->page > 1 ? ui->page - 1 : 1);
		break;
	case TK_HOME:
		move(ui, v, -v->nr_items - v->nr_text);
		break;
	case TK_END:
		move(ui, v, v->nr_items + v->nr_text);
		break;
	case 'x':
		drill(ui, v, d, true);
		break;
	case TK_ENTER:
	case TK_RIGHT:
	case '\n':
	case '\r':
		drill(ui, v, d, false);
		break;
	case TK_LEFT:
	case TK_ESC:
	case TK_BACKSPACE:
		go_up(ui);
		break;
	case 'v':
		vcpus(ui, v);
		break;
	case 'S':
		stacks(ui, v, d);
		break;
	case 'w':
		wake(ui, d);
		break;
	case 's':
		ui->sort = (ui->sort + 1) % NR_TOP_SORT;
		if (ui->sort == TS_ONCPU && !ui->split)
			ui->sort = (ui->sort + 1) % NR_TOP_SORT;
		snprintf(ui->msg, sizeof(ui->msg), "sort by %s", top_sort_name(ui->sort));
		break;
	case 'o':
		/* kvm_stat's o: Current or Total first. */
		ui->sort = ui->sort == TS_RATE ? TS_COUNT : TS_RATE;
		snprintf(ui->msg, sizeof(ui->msg), "sort by %s (%s)", top_sort_name(ui->sort),
			 ui->sort == TS_RATE ? "Current" : "Total");
		break;
	case 'b':
		by_guest(ui);
		break;
	case 'c':
		top_ui_set_filter(ui, "", NULL, 0);
		snprintf(ui->msg, sizeof(ui->msg), "filter cleared");
		break;
	case 'f':
		ui->prompt = PR_FILTER;
		snprintf(ui->input, sizeof(ui->input), "%s", ui->filter);
		break;
	case 'g':
	case 'p':
		ui->prompt = key == 'g' ? PR_GUEST : PR_PID;
		ui->input[0] = 0;
		break;
	case 'r':
		snprintf(ui->msg, sizeof(ui->msg), "totals reset");
		return TA_RESET;
	case 'h':
	case '?':
		ui->help = true;
		break;
	case '+':
	case '-':
		change_delay(ui, key == '+' ? 1 : -1);
		return TA_DELAY;
	case TK_RESIZE:
		break;
	default:
		snprintf(ui->msg, sizeof(ui->msg), "unknown key: h for help");
		break;
	}
	return TA_NONE;
}
