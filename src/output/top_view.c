// SPDX-License-Identifier: GPL-2.0
/*
 * `vmexit top` screen model. Rows arrive keyed tgid x vCPU x isa x reason (a BY_VCPU tracker);
 * each level groups them differently:
 *   LV_VMS      one item per VM
 *   LV_VCPUS    one item per vCPU of the chosen VM (or of every VM)
 *   LV_REASONS  the parents kvm_exit and kvm_userspace_exit, each followed by its children
 *               kvm_exit(REASON) / kvm_userspace_exit(REASON), like kvm_stat's drill-down
 * A VM or vCPU item counts its guest exits (kvm_exit). Exits to the VMM are not added on top:
 * each of them already is one of those guest exits (and its time part of that exit's time), so
 * adding them would count it twice. Only when an entity has no kvm_exit at all (a software KVM
 * backend, where that tracepoint never fires) are its exits to the VMM counted instead, and
 * the row is marked '*'.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "array_grow.h"
#include "durations.h"
#include "top_view.h"
#include "lost_causes.h"
#include "reasons.h"
#include "text_escape.h"

#define W_TOTAL		10
#define W_CUR		8
#define W_PCT		6
#define W_LAT		7
#define W_PID		7
#define W_ONCPU		7	/* --split: "OnCPU%" */
/* " Total Current Time% Avg P99 Max" */
#define W_NUMBERS	(1 + W_TOTAL + 1 + W_CUR + 1 + W_PCT + 3 * (1 + W_LAT))
#define LABEL_MIN	8
#define LABEL_MAX	40
/* A label of LABEL_MAX + 1 columns of 4-byte characters (or escapes), and its NUL. */
#define LABEL_BUF	(4 * (LABEL_MAX + 1) + 1)
#define LOG_REPEAT	20	/* --log: header every this many lines, like vmstat */

static const char *const sort_names[NR_TOP_SORT] = {
	[TS_COUNT] = "count", [TS_RATE] = "rate", [TS_TIME] = "time", [TS_MAX] = "max",
	[TS_P99] = "p99", [TS_ONCPU] = "oncpu",
};

const char *top_sort_name(enum top_sort s)
{
	return s < NR_TOP_SORT ? sort_names[s] : "?";
}

int top_sort_parse(const char *s, enum top_sort *out)
{
	for (int i = 0; i < NR_TOP_SORT; i++) {
		if (!strcmp(s, sort_names[i])) {
			*out = i;
			return 0;
		}
	}
	return -EINVAL;
}

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

void top_view_free(struct top_view *v)
{
	free(v->items);
	free(v->lines);
	row_table_free(&v->g_tot);
	row_table_free(&v->g_cur);
	memset(v, 0, sizeof(*v));
}

/* Lines */

static struct top_line *add_line(struct top_view *v, unsigned int attr)
{
	struct top_line *l;

	if (array_reserve(v->lines, v->nr_lines, v->cap_lines, 64))
		return NULL;
	l = &v->lines[v->nr_lines++];
	l->text[0] = 0;
	l->attr = attr;
	return l;
}

static int linef(struct top_view *v, int width, unsigned int attr, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* A line cut at width columns: what does not fit is dropped, never wrapped. */
static int linef(struct top_view *v, int width, unsigned int attr, const char *fmt, ...)
{
	struct top_line *l = add_line(v, attr);
	char tmp[sizeof(l->text)];
	va_list ap;

	if (!l)
		return -ENOMEM;
	va_start(ap, fmt);
	vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	/* Cut at a character, by columns; the names in it are escaped already, and anything
	 * else that would reach the terminal unescaped is escaped here. */
	text_fit(l->text, sizeof(l->text), tmp, 0, width);
	return 0;
}

/*
 * label into exactly w columns (out has room for w columns of 4-byte characters); a cut label
 * ends in '~' so it is not mistaken for another.
 */
static void fit(char *out, size_t len, const char *label, int w)
{
	size_t n;

	if (w < 1)
		w = 1;
	if (text_cols(label) <= w) {
		text_fit(out, len, label, w, w);
		return;
	}
	text_fit(out, len - 1, label, 0, w - 1);
	n = strlen(out);
	out[n++] = '~';
	/* A wide character that did not fit in the last column: a space for it. */
	text_fit(out + n, len - n, "", w - text_cols(out), -1);
}

/* Grouping */

void top_reason_label(__u32 isa, __u32 reason, char *buf, size_t len)
{
	char r[REASON_STR_MAX];

	/* The tracepoint's own name, as kvm_stat lists it. */
	if (isa == TOP_ISA_KVM_EVENT) {
		if (kvm_event_name(reason))
			snprintf(buf, len, "kvm_%s", kvm_event_name(reason));
		else
			snprintf(buf, len, "kvm_event(%u)", reason);
		return;
	}
	reason_str(isa, reason, r, sizeof(r));
	snprintf(buf, len, "%s(%s)", isa == VMEXIT_ISA_USER ? "kvm_userspace_exit" : "kvm_exit",
		 r);
}

static int section_of(__u32 isa)
{
	return isa == VMEXIT_ISA_USER ? 1 : isa == TOP_ISA_KVM_EVENT ? 2 : 0;
}

/* Is a row of the VM drilled into (any, at the top)? */
static bool in_view(const struct top_ui *ui, const struct row_key *k)
{
	/* Kvm event rows know no process start (0): they go with any VMM on their pid. */
	return !ui->tgid ||
	       (k->tgid == ui->tgid && (!ui->start || !k->start || k->start == ui->start));
}

static void entity_label(const struct top_data *d, const struct top_ui *ui,
			 const struct row_key *k, char *buf, size_t len);

/*
 * -f at the VM and vCPU levels: an exit counts when its VM (vCPU) or its reason matches, so
 * that `-f web01` shows that guest and `-f 'io|mmio'` every guest's IO and MMIO exits only.
 */
static bool exit_ok(const struct top_data *d, const struct top_ui *ui,
		    const struct row_key *src, const struct row_key *k)
{
	char label[96];

	if (!ui->have_re)
		return true;
	entity_label(d, ui, k, label, sizeof(label));
	if (!regexec(&ui->re, label, 0, NULL, 0))
		return true;
	top_reason_label(src->isa, src->reason, label, sizeof(label));
	return !regexec(&ui->re, label, 0, NULL, 0);
}

/* Where a source row goes at this level; false if the level does not show it. */
static bool group_key(const struct top_data *d, const struct top_ui *ui,
		      const struct row_key *src, struct row_key *k)
{
	/* Kvm events are not exits: only the drill-down lists them. */
	if (ui->level != LV_REASONS && src->isa == TOP_ISA_KVM_EVENT)
		return false;
	switch (ui->level) {
	case LV_VMS:
		*k = (struct row_key){ src->tgid, -1, section_of(src->isa), 0, src->start, {} };
		return exit_ok(d, ui, src, k);
	case LV_VCPUS:
		if (!in_view(ui, src))
			return false;
		*k = (struct row_key){ src->tgid, src->vcpu, section_of(src->isa), 0, src->start, {} };
		return exit_ok(d, ui, src, k);
	case LV_REASONS:
		if (!in_view(ui, src) || (ui->vcpu >= 0 && src->vcpu != ui->vcpu))
			return false;
		*k = (struct row_key){ 0, -1, src->isa, src->reason, 0, {} };
		return true;
	}
	return false;
}

static int group_into(struct row_table *dst, const struct row_table *src,
		      const struct top_data *d, const struct top_ui *ui)
{
	for (__u32 i = 0; src && i < src->nr; i++) {
		struct row_key k, parent;
		struct row *r;

		if (!group_key(d, ui, &src->rows[i].key, &k))
			continue;
		r = row_table_get(dst, &k);
		if (!r)
			return -ENOMEM;
		row_add(r, &src->rows[i]);
		/* Kvm events have no parent: each is a tracepoint of its own. */
		if (ui->level != LV_REASONS || k.isa == TOP_ISA_KVM_EVENT)
			continue;
		parent = (struct row_key){ 0, -1, 0, section_of(k.isa), 0, {} };
		r = row_table_get(dst, &parent);
		if (!r)
			return -ENOMEM;
		row_add(r, &src->rows[i]);
	}
	return 0;
}

/* The same key with the other section (VM and vCPU levels keep guest / VMM exits apart). */
static struct row_key partner(const struct row_key *k)
{
	struct row_key p = *k;

	p.isa ^= 1;
	return p;
}

/*
 * After this, every key of either table is in both (zero rows where it had none), and at the
 * VM and vCPU levels both sections of every entity exist: lookups below then never insert,
 * so pointers into the tables stay valid.
 */
static int union_keys(struct top_view *v, bool pairs)
{
	for (__u32 i = 0; i < v->g_cur.nr; i++) {
		struct row_key k = v->g_cur.rows[i].key;

		if (!row_table_get(&v->g_tot, &k))
			return -ENOMEM;
	}
	for (__u32 i = 0; pairs && i < v->g_tot.nr; i++) {
		struct row_key k = partner(&v->g_tot.rows[i].key);

		if (!row_table_get(&v->g_tot, &k))
			return -ENOMEM;
	}
	for (__u32 i = 0; i < v->g_tot.nr; i++) {
		struct row_key k = v->g_tot.rows[i].key;

		if (!row_table_get(&v->g_cur, &k))
			return -ENOMEM;
	}
	return 0;
}

static struct top_item *add_item(struct top_view *v)
{
	if (array_reserve(v->items, v->nr_items, v->cap_items, 64))
		return NULL;
	memset(&v->items[v->nr_items], 0, sizeof(v->items[0]));
	return &v->items[v->nr_items++];
}

static bool label_ok(const struct top_ui *ui, const char *label)
{
	return !ui->have_re || !regexec(&ui->re, label, 0, NULL, 0);
}

static __u64 sort_value(enum top_sort s, const struct top_item *it)
{
	switch (s) {
	case TS_COUNT:
		return it->tot->count;
	case TS_TIME:
		return row_time_in_ns(it->cur);
	case TS_MAX:
		return it->cur->completed ? it->cur->max_ns : 0;
	case TS_P99:
		return row_percentile(it->cur, 99);
	case TS_ONCPU:
		return it->cur->oncpu_ns;
	default:
		return it->cur->count;
	}
}

struct sorted {
	struct top_item it;
	__u64 v;
};

static int key_cmp(const struct row_key *a, const struct row_key *b)
{
	if (a->tgid != b->tgid)
		return a->tgid < b->tgid ? -1 : 1;
	if (a->vcpu != b->vcpu)
		return a->vcpu < b->vcpu ? -1 : 1;
	if (a->isa != b->isa)
		return a->isa < b->isa ? -1 : 1;
	if (a->reason != b->reason)
		return a->reason < b->reason ? -1 : 1;
	return a->start < b->start ? -1 : a->start > b->start;
}

/* Sections in order, each parent before its children, then the sort key, busiest first. */
static int item_cmp(const void *pa, const void *pb)
{
	const struct sorted *a = pa, *b = pb;

	if (a->it.section != b->it.section)
		return a->it.section - b->it.section;
	if ((a->it.kind == TI_GROUP) != (b->it.kind == TI_GROUP))
		return a->it.kind == TI_GROUP ? -1 : 1;
	if (a->v != b->v)
		return a->v < b->v ? 1 : -1;
	if (a->it.tot->count != b->it.tot->count)
		return a->it.tot->count < b->it.tot->count ? 1 : -1;
	return key_cmp(&a->it.key, &b->it.key);
}

static int sort_items(struct top_view *v, enum top_sort s)
{
	struct sorted *tmp;

	if (v->nr_items < 2)
		return 0;
	tmp = calloc(v->nr_items, sizeof(*tmp));
	if (!tmp)
		return -ENOMEM;
	for (int i = 0; i < v->nr_items; i++) {
		tmp[i].it = v->items[i];
		tmp[i].v = sort_value(s, &v->items[i]);
	}
	qsort(tmp, v->nr_items, sizeof(*tmp), item_cmp);
	for (int i = 0; i < v->nr_items; i++)
		v->items[i] = tmp[i].it;
	free(tmp);
	return 0;
}

static void entity_label(const struct top_data *d, const struct top_ui *ui,
			 const struct row_key *k, char *buf, size_t len)
{
	const char *vm = name_cache_get_at(d->names, k->tgid, k->start);
	char vcpu[24];
	size_t n;

	if (ui->level != LV_VMS && k->vcpu >= 0)
		snprintf(vcpu, sizeof(vcpu), "vCPU %d", k->vcpu);
	else
		snprintf(vcpu, sizeof(vcpu), "vCPU ?");
	if (ui->level != LV_VMS && ui->tgid) {
		snprintf(buf, len, "%s", vcpu);
		return;
	}
	/* The name escaped (text_escape.h), cut whole if it must be, then its vCPU. */
	text_fit(buf, ui->level == LV_VMS ? len : len - strlen(vcpu) - 1, vm, 0, -1);
	n = strlen(buf);
	if (ui->level != LV_VMS)
		snprintf(buf + n, len - n, " %s", vcpu);
}

/* VM and vCPU items: one per entity, from its guest exits, or its VMM exits if it has none. */
static int entity_items(struct top_view *v, const struct top_data *d, const struct top_ui *ui)
{
	for (__u32 i = 0; i < v->g_tot.nr; i++) {
		const struct row *kt = &v->g_tot.rows[i], *ut, *kc, *uc, *t, *c;
		struct row_key uk;
		struct top_item *it;
		bool user;

		if (kt->key.isa != 0)
			continue;	/* visited from its kernel (section 0) twin */
		uk = partner(&kt->key);
		ut = row_table_get(&v->g_tot, &uk);
		kc = row_table_get(&v->g_cur, &kt->key);
		uc = row_table_get(&v->g_cur, &uk);
		if (!ut || !kc || !uc)
			return -ENOMEM;
		user = !kt->count && !kc->count;
		t = user ? ut : kt;
		c = user ? uc : kc;
		if (!t->count && !c->count && !t->completed && !c->completed)
			continue;
		it = add_item(v);
		if (!it)
			return -ENOMEM;
		it->kind = ui->level == LV_VMS ? TI_VM : TI_VCPU;
		it->key = (struct row_key){ kt->key.tgid, kt->key.vcpu, 0, 0, kt->key.start, {} };
		it->user_src = user;
		it->tot = t;
		it->cur = c;
		/* -f was applied to the exits it is made of (exit_ok). */
		entity_label(d, ui, &it->key, it->label, sizeof(it->label));
	}
	return 0;
}

static int reason_items(struct top_view *v, const struct top_ui *ui)
{
	int shown[3] = { 0, 0, 0 };

	for (int pass = 0; pass < 2; pass++) {
		/* Children first, so a parent knows whether any of them passed the filter. */
		for (__u32 i = 0; i < v->g_tot.nr; i++) {
			const struct row *t = &v->g_tot.rows[i];
			bool group = t->key.isa == 0;
			struct top_item *it;

			if (group != (pass == 1))
				continue;
			it = add_item(v);
			if (!it)
				return -ENOMEM;
			it->kind = group ? TI_GROUP : TI_REASON;
			it->key = t->key;
			it->section = group ? (int)t->key.reason : section_of(t->key.isa);
			it->tot = t;
			it->cur = row_table_get(&v->g_cur, &t->key);
			if (!it->cur)
				return -ENOMEM;
			if (group)
				snprintf(it->label, sizeof(it->label), "%s",
					 t->key.reason ? "kvm_userspace_exit" : "kvm_exit");
			else
				top_reason_label(t->key.isa, t->key.reason, it->label,
					     sizeof(it->label));
			/* A parent stays while any child of it does, or by its own name. */
			if (label_ok(ui, it->label) || (group && shown[it->section]))
				shown[it->section] += !group;
			else
				v->nr_items--;
		}
	}
	return 0;
}

/* Does stuck exit e belong to item it (in the view ui is at)? */
static bool stuck_in_item(const struct top_ui *ui, const struct top_item *it,
			  const struct inflight_exit *e)
{
	switch (it->kind) {
	case TI_VM:
		return e->tgid == it->key.tgid && e->proc_start == it->key.start;
	case TI_VCPU:
		return e->tgid == it->key.tgid && e->proc_start == it->key.start &&
		       e->vcpu == it->key.vcpu;
	default:
		break;
	}
	if (!in_view(ui, &(struct row_key){ .tgid = e->tgid, .start = e->proc_start }) ||
	    (ui->vcpu >= 0 && e->vcpu != ui->vcpu))
		return false;
	if (it->kind == TI_GROUP)
		return section_of(e->isa) == it->section;
	return e->isa == it->key.isa && e->reason == it->key.reason;
}

/* Each item's oldest exit in flight for stuck_ns or more, if it has one. */
static void mark_stuck(struct top_view *v, const struct top_data *d, const struct top_ui *ui)
{
	for (int i = 0; i < v->nr_items; i++) {
		struct top_item *it = &v->items[i];

		it->stuck_ns = 0;
		for (__u32 j = 0; d->stuck_ns && j < d->nr_inflight; j++) {
			const struct inflight_exit *e = &d->inflight[j];
			__u64 age = inflight_age(e, d->now_ns);

			if (inflight_stuck(e, d->now_ns, d->stuck_ns) && stuck_in_item(ui, it, e) &&
			    age > it->stuck_ns)
				it->stuck_ns = age;
		}
	}
}

/* -z: rows without an exit (or event) in the last interval go, unless one is stuck. */
static void drop_idle(struct top_view *v)
{
	int n = 0;

	for (int i = 0; i < v->nr_items; i++) {
		if (v->items[i].cur->count || v->items[i].stuck_ns)
			v->items[n++] = v->items[i];
	}
	v->nr_items = n;
}

static int build_items(struct top_view *v, const struct top_data *d, const struct top_ui *ui)
{
	int err;

	row_table_reset(&v->g_tot);
	row_table_reset(&v->g_cur);
	v->nr_items = 0;
	err = group_into(&v->g_tot, d->tot, d, ui);
	err = err ? err : group_into(&v->g_cur, d->cur, d, ui);
	err = err ? err : union_keys(v, ui->level != LV_REASONS);
	if (err)
		return err;
	err = ui->level == LV_REASONS ? reason_items(v, ui) : entity_items(v, d, ui);
	if (!err)
		mark_stuck(v, d, ui);
	if (!err && ui->skip_zero)
		drop_idle(v);
	return err ? err : sort_items(v, ui->sort);
}

static int tgid_cmp(const void *a, const void *b)
{
	__u32 x = *(const __u32 *)a, y = *(const __u32 *)b;

	return x < y ? -1 : x > y;
}

/* The VMs with any rows, sorted, duplicates dropped; *n of them (NULL with n 0 if none). */
static __u32 *vm_list(const struct top_data *d, int *n)
{
	__u32 total = (d->tot ? d->tot->nr : 0) + (d->cur ? d->cur->nr : 0), k = 0;
	__u32 *v;

	*n = 0;
	if (!total)
		return NULL;
	v = malloc(total * sizeof(*v));
	if (!v)
		return NULL;
	for (__u32 i = 0; d->tot && i < d->tot->nr; i++)
		v[k++] = d->tot->rows[i].key.tgid;
	for (__u32 i = 0; d->cur && i < d->cur->nr; i++)
		v[k++] = d->cur->rows[i].key.tgid;
	qsort(v, k, sizeof(*v), tgid_cmp);
	for (__u32 i = 0; i < k; i++) {
		if (!*n || v[*n - 1] != v[i])
			v[(*n)++] = v[i];
	}
	return v;
}

/* Lines */

static const char *hms(double s, char *buf, size_t len)
{
	unsigned long t = s > 0 ? (unsigned long)s : 0;

	if (t >= 3600)
		snprintf(buf, len, "%lu:%02lu:%02lu", t / 3600, t / 60 % 60, t % 60);
	else
		snprintf(buf, len, "%lu:%02lu", t / 60, t % 60);
	return buf;
}

static void view_name(const struct top_data *d, const struct top_ui *ui, char *buf,
		      size_t len)
{
	char vm[96] = "all VMs", nb[TEXT_NAME_MAX];
	const char *name;

	/* The name cut (whole characters) to leave room for its pid. */
	if (ui->tgid) {
		name = name_cache_get_at(d->names, ui->tgid, ui->start);
		snprintf(vm, sizeof(vm), "%s (pid %u)", text_fit(nb, sizeof(vm) - 20, name, 0, -1),
			 ui->tgid);
	}
	switch (ui->level) {
	case LV_VMS:
		snprintf(buf, len, "all VMs");
		break;
	case LV_VCPUS:
		snprintf(buf, len, "vCPUs of %s", vm);
		break;
	case LV_REASONS:
		if (ui->vcpu >= 0)
			snprintf(buf, len, "exits of %s vCPU %d", vm, ui->vcpu);
		else
			snprintf(buf, len, "exits of %s", vm);
		break;
	}
}

/* Lost counters: every non-zero one, wrapped to the width; never dropped for lack of room. */
static int lost_lines(struct top_view *v, const struct top_data *d, int width)
{
	char buf[TOP_LINE_MAX] = "";
	unsigned int attr = 0;
	size_t n = 0;

	for (int i = 0; i < NR_LOST; i++) {
		char item[64];
		int len;

		if (!d->lost[i])
			continue;
		/* An entry with no exit is a vCPU's first run, not a loss: not an alert. */
		if (i != LOST_UNMATCHED_ENTRY)
			attr = TOP_A_ALERT | TOP_A_BOLD;
		len = snprintf(item, sizeof(item), "%s%s %llu", n ? ", " : "Lost: ",
			       lost_cause_key(i), (unsigned long long)d->lost[i]);
		if (n && (int)(n + len) > width) {
			if (linef(v, width, attr, "%s", buf))
				return -ENOMEM;
			n = snprintf(buf, sizeof(buf), "      %s", item + 2);
		} else {
			n += snprintf(buf + n, sizeof(buf) - n, "%s", item);
		}
	}
	if (n && linef(v, width, attr, "%s", buf))
		return -ENOMEM;
	return 0;
}

/* How many exits are stuck, and the oldest: never scrolled away, unlike its rows. */
static int stuck_line(struct top_view *v, const struct top_data *d, int width)
{
	const struct inflight_exit *old = NULL;
	/* The name unescaped: linef escapes the whole line. */
	char age[24], lim[24], rb[REASON_STR_MAX + 24];
	__u32 n = 0;

	for (__u32 i = 0; d->stuck_ns && i < d->nr_inflight; i++) {
		const struct inflight_exit *e = &d->inflight[i];

		if (!inflight_stuck(e, d->now_ns, d->stuck_ns))
			continue;
		n++;
		if (!old || e->start_ns < old->start_ns)
			old = e;
	}
	if (!n)
		return 0;
	top_reason_label(old->isa, old->reason, rb, sizeof(rb));
	/* The figures first: a narrow screen cuts the names. */
	return linef(v, width, TOP_A_ALERT | TOP_A_BOLD, "Stuck (in flight >= %s, rows !): %u; "
		     "oldest %s: %s vCPU %d %s", fmt_duration(0, d->stuck_ns, lim, sizeof(lim)), n,
		     fmt_duration(0, inflight_age(old, d->now_ns), age, sizeof(age)),
		     name_cache_get_at(d->names, old->tgid, old->proc_start),
		     old->vcpu, rb);
}

static int header_lines(struct top_view *v, const struct top_data *d, const struct top_ui *ui,
			int width)
{
	char up[24], since[24], view[160];
	int err;

	/* What changes first: a long host name may be cut at the right edge, not these. */
	err = linef(v, width, TOP_A_BOLD, "vmexit top - %d VM%s - traced %s - %s - Linux %s",
		    v->nr_vms, v->nr_vms == 1 ? "" : "s", hms(d->elapsed_s, up, sizeof(up)),
		    d->host ? d->host : "?", d->kernel ? d->kernel : "?");
	view_name(d, ui, view, sizeof(view));
	err = err ? err : linef(v, width, 0, "View: %s", view);
	err = err ? err : linef(v, width, 0, "Sort: %s | Every %gs | Totals since %s %s",
				top_sort_name(ui->sort), ui->delay,
				d->was_reset ? "reset" : "start",
				hms(d->since_s, since, sizeof(since)));
	if (!err && ((d->filters && *d->filters) || ui->have_re || ui->skip_zero)) {
		char re[TOP_INPUT_MAX + 16] = "";
		bool cli = d->filters && *d->filters;

		if (ui->have_re)
			snprintf(re, sizeof(re), "%srows /%s/", cli ? " | " : "", ui->filter);
		err = linef(v, width, 0, "Filters: %s%s%s", cli ? d->filters : "", re,
			    !ui->skip_zero ? "" : cli || ui->have_re ? " | -z" : "-z");
	}
	if (!err && d->overhead)
		err = linef(v, width, 0, "%s", d->overhead);
	return err ? err : stuck_line(v, d, width) ? -ENOMEM : lost_lines(v, d, width);
}

static int label_width(const struct top_ui *ui, int width)
{
	int fixed = 1 + W_NUMBERS + (ui->level == LV_REASONS ? 0 : 1) +
		    (ui->level == LV_VMS ? 1 + W_PID : 0) + (ui->split ? 1 + W_ONCPU : 0);
	int w = width - fixed;

	return w < LABEL_MIN ? LABEL_MIN : w > LABEL_MAX ? LABEL_MAX : w;
}

static int column_header(struct top_view *v, const struct top_ui *ui, int width, int lw)
{
	const char *what = ui->level == LV_VMS ? "VM" : ui->level == LV_VCPUS ? "vCPU" : "Event";
	char label[LABEL_BUF], pid[16] = "";

	fit(label, sizeof(label), what, lw + (ui->level == LV_REASONS ? 0 : 1));
	if (ui->level == LV_VMS)
		snprintf(pid, sizeof(pid), " %*s", W_PID, "PID");
	return linef(v, width, TOP_A_REVERSE, " %s%s %*s %*s %*s %*s %*s %*s%s", label, pid,
		     W_TOTAL, "Total", W_CUR, "Current", W_PCT, "Time%", W_LAT, "Avg", W_LAT,
		     "P99", W_LAT, "Max", ui->split ? "  OnCPU%" : "");
}

static int item_line(struct top_view *v, const struct top_data *d, const struct top_ui *ui,
		     int idx, int width, int lw)
{
	const struct top_item *it = &v->items[idx];
	const struct row *c = it->cur;
	bool sel = ui->interactive && idx == ui->sel_idx;
	char label[LABEL_BUF], pid[16] = "", flag[2] = "";
	char avg[24] = "-", p99[24] = "-", max[24] = "-", pct[24], oncpu[24] = "";
	double iv = d->interval_s;
	unsigned int attr;

	fit(label, sizeof(label), it->label, lw);
	if (ui->level != LV_REASONS)
		snprintf(flag, sizeof(flag), "%s", it->user_src ? "*" : " ");
	if (ui->level == LV_VMS)
		snprintf(pid, sizeof(pid), " %*u", W_PID, it->key.tgid);
	if (c->completed) {
		fmt_duration(0, c->total_ns / c->completed, avg, sizeof(avg));
		fmt_duration(0, row_percentile(c, 99), p99, sizeof(p99));
		fmt_duration(0, c->max_ns, max, sizeof(max));
	}
	/* As stat's TIME%: only the part of each exit inside the interval (rows.h). A kvm event
	 * happens at an instant: it has no time. */
	if (it->key.isa == TOP_ISA_KVM_EVENT)
		snprintf(pct, sizeof(pct), "-");
	else
		snprintf(pct, sizeof(pct), "%.1f%%",
			 iv > 0 ? (double)row_time_in_ns(c) / (iv * 1e9) * 100 : 0);
	/* The share of this interval's exit time that was spent on CPU (the rest: off it). */
	if (ui->split && c->total_ns)
		snprintf(oncpu, sizeof(oncpu), " %*.1f%%", W_ONCPU - 1,
			 100.0 * c->oncpu_ns / c->total_ns);
	else if (ui->split)
		snprintf(oncpu, sizeof(oncpu), " %*s", W_ONCPU, "-");
	/* A stuck row: '!' in the cursor's column (a plain-text screen has no colours) and the
	 * alert colour. */
	attr = sel ? TOP_A_REVERSE : it->kind == TI_GROUP ? TOP_A_BOLD : 0;
	if (it->stuck_ns)
		attr |= TOP_A_ALERT;
	return linef(v, width, attr,
		     "%c%s%s%s %*llu %*.0f %*s %*s %*s %*s%s", sel ? '>' : it->stuck_ns ? '!' : ' ',
		     label, flag, pid,
		     W_TOTAL, (unsigned long long)it->tot->count, W_CUR,
		     iv > 0 ? (double)c->count / iv : 0, W_PCT, pct, W_LAT, avg, W_LAT, p99,
		     W_LAT, max, oncpu);
}

static const char *const help_text[] = {
	"Keys:",
	"  q            quit",
	"  x, Enter     drill down: a VM's exit reasons, or a vCPU's; x again goes back",
	"  v            per-vCPU rows of the selected VM (v again goes back)",
	"  b            all VMs' exit reasons together, as kvm_stat (b again: per VM)",
	"  Left, Esc    back up one level; Up/Down, k/j, PgUp/PgDn, Home/End: move",
	"  s / o        sort: count, rate, time, max, p99, oncpu / Total or Current",
	"  f / c        filter names and reasons by a regex (any case) / clear it",
	"  g / p        show one guest, by name / by pid (empty: all VMs)",
	"  r            reset the totals (the kernel counters keep running)",
	"  + / -        refresh less / more often; h, ?: this help",
	"",
	"Total: exits since start or reset. Current: exits/s in the last interval.",
	"Time%: time in exit per interval (100% = one vCPU always out of the guest).",
	"Avg, P99, Max: exit latency in the last interval (kvm_pio...: events, no time).",
	"VM and vCPU rows count guest exits (kvm_exit); '*' marks one without any,",
	"counted from its exits to the VMM instead (software KVM backends).",
	"!: a row with an exit in flight for --stuck (default 1s) or more: a vCPU",
	"stuck in its VMM or in the kernel. The Stuck line names the oldest.",
	"Lost: exits the kernel side could not record; unmatched_entry is benign",
	"(a vCPU's first entry, or one in flight when tracing began).",
	"",
	"Press any key (q too) to return.",
};

static const char *const prompts[] = {
	[PR_FILTER] = "Regex filter on names (empty: none)",
	[PR_GUEST] = "Guest name (empty: all VMs)",
	[PR_PID] = "Guest pid (empty: all VMs)",
};

static int status_line(struct top_view *v, const struct top_ui *ui, int width, int avail)
{
	char range[48] = "";

	if (ui->prompt != PR_NONE)
		return linef(v, width, TOP_A_BOLD, "%s: %s_", prompts[ui->prompt], ui->input);
	if (ui->msg[0])
		return linef(v, width, TOP_A_BOLD, "%s", ui->msg);
	if (ui->help)
		return linef(v, width, 0, "any key: back");
	if (v->nr_items > avail)
		snprintf(range, sizeof(range), "  [%d-%d/%d]", ui->first + 1,
			 ui->first + avail < v->nr_items ? ui->first + avail : v->nr_items,
			 v->nr_items);
	return linef(v, width, 0, "q quit x drill v vCPUs s sort f filter g/p guest r reset "
		     "h help%s", range);
}

/* Keeps the cursor on the same item when it moved, else at the same place; and in view. */
static void fix_cursor(const struct top_view *v, struct top_ui *ui, int avail)
{
	int i;

	for (i = 0; ui->have_sel && i < v->nr_items; i++) {
		if (v->items[i].kind == ui->sel.kind && !key_cmp(&v->items[i].key, &ui->sel.key))
			break;
	}
	if (ui->have_sel && i < v->nr_items)
		ui->sel_idx = i;
	if (ui->sel_idx >= v->nr_items)
		ui->sel_idx = v->nr_items - 1;
	if (ui->sel_idx < 0)
		ui->sel_idx = 0;
	ui->have_sel = v->nr_items > 0;
	if (ui->have_sel) {
		ui->sel.kind = v->items[ui->sel_idx].kind;
		ui->sel.key = v->items[ui->sel_idx].key;
	}
	if (ui->sel_idx < ui->first)
		ui->first = ui->sel_idx;
	if (ui->sel_idx >= ui->first + avail)
		ui->first = ui->sel_idx - avail + 1;
	if (ui->first > v->nr_items - avail)
		ui->first = v->nr_items - avail;
	if (ui->first < 0)
		ui->first = 0;
}

int top_view_build(struct top_view *v, const struct top_data *d, struct top_ui *ui)
{
	int width = ui->width - 1, lw, avail, err, header, nr_rows = 0;
	__u32 *vms;

	/* One column short of the screen: curses would wrap a line that fills the last one. */
	if (width < 20)
		width = 20;
	if (width > TOP_LINE_MAX - 1)
		width = TOP_LINE_MAX - 1;
	v->nr_lines = 0;
	vms = vm_list(d, &v->nr_vms);
	free(vms);
	err = build_items(v, d, ui);
	/* The help takes the whole screen (24 lines): it has no room for the header. */
	err = err || ui->help ? err : header_lines(v, d, ui, width);
	if (err)
		return err;
	header = v->nr_lines;
	avail = ui->height > 0 ? ui->height - header - 1 - (ui->interactive ? 1 : 0) : 0;
	if (ui->height <= 0)
		avail = v->nr_items > 0 ? v->nr_items : 1;
	if (avail < 1)
		avail = 1;
	ui->page = avail;
	fix_cursor(v, ui, avail);

	lw = label_width(ui, width);
	if (ui->help) {
		for (size_t i = 0; i < sizeof(help_text) / sizeof(help_text[0]); i++) {
			if (linef(v, width, 0, "%s", help_text[i]))
				return -ENOMEM;
		}
	} else {
		if (column_header(v, ui, width, lw))
			return -ENOMEM;
		for (int i = ui->first; i < v->nr_items && nr_rows < avail; i++, nr_rows++) {
			if (item_line(v, d, ui, i, width, lw))
				return -ENOMEM;
		}
		if (!v->nr_items &&
		    linef(v, width, 0, "  (%s)", ui->have_re ? "no row matches the filter" :
			  ui->level == LV_VMS ? "no exits yet" : "no exits here yet"))
			return -ENOMEM;
	}
	if (!ui->interactive)
		return 0;
	/* The status line goes on the screen's last line. */
	while (ui->height > 0 && v->nr_lines < ui->height - 1) {
		if (!add_line(v, 0))
			return -ENOMEM;
	}
	return status_line(v, ui, width, avail);
}

/* Keys */

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
	if (ui->level == LV_REASONS && vcpu >= 0) {
		go_to(ui, LV_VCPUS, tgid, start, -1);
		ui->sel = (struct top_sel){ TI_VCPU, { tgid, vcpu, 0, 0, start, {} } };
	} else {
		go_to(ui, LV_VMS, 0, 0, -1);
		ui->sel = (struct top_sel){ TI_VM, { tgid, -1, 0, 0, start, {} } };
	}
	ui->have_sel = tgid != 0;
}

static const struct top_item *selected(const struct top_ui *ui, const struct top_view *v)
{
	if (!ui->have_sel || ui->sel_idx < 0 || ui->sel_idx >= v->nr_items)
		return NULL;
	return &v->items[ui->sel_idx];
}

static void drill(struct top_ui *ui, const struct top_view *v, bool toggle)
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
		if (toggle)
			go_up(ui);
		else
			snprintf(ui->msg, sizeof(ui->msg), "exit reasons are the deepest level");
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
	__u32 *vms = vm_list(d, &n), pid = 0;
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
	vms = vm_list(d, &n);
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
		move(ui, v, -v->nr_items);
		break;
	case TK_END:
		move(ui, v, v->nr_items);
		break;
	case 'x':
		drill(ui, v, true);
		break;
	case TK_ENTER:
	case TK_RIGHT:
	case '\n':
	case '\r':
		drill(ui, v, false);
		break;
	case TK_LEFT:
	case TK_ESC:
	case TK_BACKSPACE:
		go_up(ui);
		break;
	case 'v':
		vcpus(ui, v);
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

/* --log */

struct log_sum {
	__u32 isa, reason;
	__u64 count;
};

static int log_sum_cmp(const void *pa, const void *pb)
{
	const struct log_sum *a = pa, *b = pb;

	if (a->count != b->count)
		return a->count < b->count ? 1 : -1;
	if (a->isa != b->isa)
		return a->isa < b->isa ? -1 : 1;
	return a->reason < b->reason ? -1 : a->reason > b->reason;
}

/* Kvm events by their tracepoint's name; exits short, as `vmexit stat` prints them. */
static void log_label(__u32 isa, __u32 reason, char *buf, size_t len)
{
	if (isa == TOP_ISA_KVM_EVENT)
		top_reason_label(isa, reason, buf, len);
	else
		reason_label(isa, reason, buf, len);
}

/*
 * The columns: the busiest reasons of tot. With keep, the columns of the last header stay
 * where they are and only reasons without one are added, so that a line never changes the
 * meaning of the columns above it without a new header.
 */
static bool log_pick(struct top_log *lg, const struct row_table *tot, const regex_t *re,
		     bool keep)
{
	struct log_sum *s = NULL;
	__u32 n = 0;
	struct top_log old = *lg;

	if (tot && tot->nr)
		s = calloc(tot->nr, sizeof(*s));
	for (__u32 i = 0; s && i < tot->nr; i++) {
		const struct row *r = &tot->rows[i];
		__u32 j;

		for (j = 0; j < n; j++) {
			if (s[j].isa == r->key.isa && s[j].reason == r->key.reason)
				break;
		}
		if (j == n) {
			char label[96];

			top_reason_label(r->key.isa, r->key.reason, label, sizeof(label));
			if (re && regexec(re, label, 0, NULL, 0))
				continue;
			s[n++] = (struct log_sum){ r->key.isa, r->key.reason, 0 };
		}
		s[j].count += r->count;
	}
	if (n)
		qsort(s, n, sizeof(*s), log_sum_cmp);
	if (!keep)
		lg->nr = 0;
	for (__u32 i = 0; i < n && lg->nr < TOP_LOG_COLS; i++) {
		struct row_key k = { 0, -1, s[i].isa, s[i].reason, 0, {} };
		int c;

		for (c = 0; c < lg->nr && key_cmp(&lg->cols[c], &k); c++)
			;
		if (c < lg->nr)
			continue;
		lg->cols[lg->nr] = k;
		log_label(s[i].isa, s[i].reason, lg->labels[lg->nr], sizeof(lg->labels[lg->nr]));
		lg->nr++;
	}
	free(s);
	if (old.nr != lg->nr)
		return true;
	for (int i = 0; i < lg->nr; i++) {
		if (key_cmp(&old.cols[i], &lg->cols[i]))
			return true;
	}
	return false;
}

static int col_width(const char *label)
{
	int n = (int)strlen(label);

	return n > 9 ? n : 9;
}

int top_log_emit(struct top_log *lg, const struct row_table *cur, const struct row_table *tot,
		 double interval_s, const __u64 lost[NR_LOST], const char *clock,
		 const regex_t *re, char *buf, size_t len)
{
	__u64 kexits = 0, uexits = 0, events = 0, lost_now = 0, per[TOP_LOG_COLS] = {};
	bool changed = false, due = !lg->started || lg->lines >= LOG_REPEAT;
	size_t off = 0;

	buf[0] = 0;
	for (__u32 i = 0; cur && i < cur->nr; i++) {
		const struct row *r = &cur->rows[i];

		if (r->key.isa == VMEXIT_ISA_USER)
			uexits += r->count;
		else if (r->key.isa == TOP_ISA_KVM_EVENT)
			events += r->count;
		else
			kexits += r->count;
	}
	for (int i = 0; i < NR_LOST; i++) {
		if (i != LOST_UNMATCHED_ENTRY)
			lost_now += lost[i] - lg->lost_prev[i];
		lg->lost_prev[i] = lost[i];
	}
	/* -z (kvm_stat's): an idle interval leaves no line, and no header for it. */
	if (lg->skip_zero && !kexits && !uexits && !events && !lost_now)
		return 0;
	/* A reason new since the last header gets a column while there is room for it. */
	if (due || lg->nr < TOP_LOG_COLS)
		changed = log_pick(lg, tot, re, !due);
	if (due || changed) {
		off += snprintf(buf + off, len - off, "%8s %9s %8s %6s", "time", "exits/s",
				"vmm/s", "lost");
		for (int i = 0; i < lg->nr && off < len; i++)
			off += snprintf(buf + off, len - off, " %*s", col_width(lg->labels[i]),
					lg->labels[i]);
		if (off < len)
			off += snprintf(buf + off, len - off, "\n");
		lg->lines = 0;
		lg->started = true;
	}
	for (__u32 i = 0; cur && i < cur->nr; i++) {
		const struct row *r = &cur->rows[i];

		for (int c = 0; c < lg->nr; c++) {
			if (lg->cols[c].isa == r->key.isa && lg->cols[c].reason == r->key.reason)
				per[c] += r->count;
		}
	}
#define RATE(n) (interval_s > 0 ? (double)(n) / interval_s : 0)
	if (off < len)
		off += snprintf(buf + off, len - off, "%8s %9.0f %8.0f %6llu", clock, RATE(kexits),
				RATE(uexits), (unsigned long long)lost_now);
	for (int i = 0; i < lg->nr && off < len; i++)
		off += snprintf(buf + off, len - off, " %*.0f", col_width(lg->labels[i]),
				RATE(per[i]));
#undef RATE
	if (off < len)
		snprintf(buf + off, len - off, "\n");
	lg->lines++;
	return 0;
}
