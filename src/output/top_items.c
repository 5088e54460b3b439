// SPDX-License-Identifier: GPL-2.0
/*
 * `vmexit top` items: rows grouped by level, filtered, sorted, stuck exits marked. Rows arrive
 * keyed tgid x vCPU x isa x reason (a BY_VCPU tracker);
 * each level groups them differently:
 *   LV_VMS      one item per VM
 *   LV_VCPUS    one item per vCPU of the chosen VM (or of every VM)
 *   LV_REASONS  the parents kvm_exit and kvm_userspace_exit, each followed by its children
 *               kvm_exit(REASON) / kvm_userspace_exit(REASON), like kvm_stat's drill-down
 *   LV_KEYS     (top --keys) one item per key of a reason, or of every reason, from the
 *               key rows, named: kvm_userspace_exit(IO) 0x3f8 out serial
 *   LV_STACKS   (top --stacks) no items: top_stacks.c lists the reason's kernel stacks
 *   LV_WAKE     (top --wake) no items: top_wake.c lists the deliveries and halts
 * A VM or vCPU item counts its guest exits (kvm_exit). Exits to the VMM are not added on top:
 * each of them already is one of those guest exits (and its time part of that exit's time), so
 * adding them would count it twice. Only when an entity has no kvm_exit at all (a software KVM
 * backend, where that tracepoint never fires) are its exits to the VMM counted instead, and
 * the row is marked '*'.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "array_grow.h"
#include "guest_symbols.h"
#include "key_groups.h"
#include "key_names.h"
#include "qmp_names.h"
#include "reasons.h"
#include "text_escape.h"
#include "top_view_int.h"

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

bool top_in_view(const struct top_ui *ui, __u32 tgid, __u64 start)
{
	/* Kvm event rows know no process start (0): they go with any VMM on their pid. */
	return !ui->tgid || (tgid == ui->tgid && (!ui->start || !start || start == ui->start));
}

static bool in_view(const struct top_ui *ui, const struct row_key *k)
{
	return top_in_view(ui, k->tgid, k->start);
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
		*k = (struct row_key){ src->tgid, -1, section_of(src->isa), 0, src->start, {}, 0 };
		return exit_ok(d, ui, src, k);
	case LV_VCPUS:
		if (!in_view(ui, src))
			return false;
		*k = (struct row_key){ src->tgid, src->vcpu, section_of(src->isa), 0, src->start, {}, 0 };
		return exit_ok(d, ui, src, k);
	case LV_REASONS:
		if (!in_view(ui, src) || (ui->vcpu >= 0 && src->vcpu != ui->vcpu))
			return false;
		*k = (struct row_key){ 0, -1, src->isa, src->reason, 0, {}, 0 };
		return true;
	case LV_KEYS:
		if (!in_view(ui, src) || (ui->vcpu >= 0 && src->vcpu != ui->vcpu) ||
		    (!ui->key_all && (src->isa != ui->key_isa || src->reason != ui->key_reason)))
			return false;
		/* A RIP is an address in one guest: its rows stay that guest's (and its symbols). */
		if (src->key.kind == KEY_RIP)
			*k = (struct row_key){ src->tgid, -1, src->isa, src->reason, src->start,
					       src->key, 0 };
		else
			*k = (struct row_key){ 0, -1, src->isa, src->reason, 0, src->key, 0 };
		/* Ports and addresses per device, each by its own guest's map (key_groups.h). */
		if (!d->per_address) {
			__u64 lo, hi;

			key_group_span(d->qmp, src->tgid, src->start, &src->key, &lo, &hi);
			k->key.key = lo;
			k->key_end = hi > lo ? hi : 0;
		}
		return true;
	case LV_STACKS:
	case LV_WAKE:
		return false;	/* its lines are the stacks' (top_stacks.c), wake-ups' (top_wake.c) */
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
		parent = (struct row_key){ 0, -1, 0, section_of(k.isa), 0, {}, 0 };
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
	return row_key_cmp(&a->it.key, &b->it.key);
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
		it->key = (struct row_key){ kt->key.tgid, kt->key.vcpu, 0, 0, kt->key.start, {}, 0 };
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

/*
 * top --rips: a RIP's symbol+offset from its guest's --guest-symbols, else ""; in the view of
 * all VMs followed by the guest's name, since each guest's RIPs are its own rows.
 */
static const char *rip_symbol(const struct top_data *d, const struct top_ui *ui,
			      const struct row_key *k, char *buf, size_t len)
{
	const char *vm = name_cache_get_at(d->names, k->tgid, k->start);
	bool sym = d->syms && guest_symbols_lookup(d->syms, vm, k->key.key, buf, len);
	size_t n = sym ? strlen(buf) : 0;

	if (!sym)
		buf[0] = '\0';
	if (!ui->tgid)
		snprintf(buf + n, len - n, "%s(%s)", n ? " " : "", vm);
	return buf;
}

/*
 * "IO 0x71 out rtc": the reason's own name (no tracepoint) and the key; the key alone in one
 * reason's keys, which the view's title names.
 */
static void key_short_label(const struct top_ui *ui, const struct row_key *k, const char *key,
			    char *buf, size_t len)
{
	char r[REASON_STR_MAX];

	if (!ui->key_all) {
		snprintf(buf, len, "%s", key);
		return;
	}
	if (k->isa == TOP_ISA_KVM_EVENT)
		top_reason_label(k->isa, k->reason, r, sizeof(r));
	else
		reason_str(k->isa, k->reason, r, sizeof(r));
	snprintf(buf, len, "%s ", r);
	snprintf(buf + strlen(buf), len - strlen(buf), "%s", key);
}

/* LV_KEYS: an item per key, named by its reason and key (the -f filter sees both). */
static int key_items(struct top_view *v, const struct top_data *d, const struct top_ui *ui)
{
	for (__u32 i = 0; i < v->g_tot.nr; i++) {
		const struct row *t = &v->g_tot.rows[i];
		struct top_item *it;
		char kb[96], nb[96];
		const char *name;
		size_t n;

		it = add_item(v);
		if (!it)
			return -ENOMEM;
		it->kind = TI_KEY;
		it->key = t->key;
		it->section = section_of(t->key.isa);
		it->tot = t;
		it->cur = row_table_get(&v->g_cur, &t->key);
		if (!it->cur)
			return -ENOMEM;
		top_reason_label(t->key.isa, t->key.reason, it->label, sizeof(it->label));
		n = strlen(it->label);
		if (t->key.key.kind == KEY_RIP)
			name = rip_symbol(d, ui, &t->key, nb, sizeof(nb));
		else
			name = qmp_key_name(d->qmp, ui->tgid, ui->start, &t->key.key, nb,
					    sizeof(nb));
		key_span_str(&t->key.key, t->key.key_end, name, kb, sizeof(kb));
		snprintf(it->label + n, sizeof(it->label) - n, " %s", kb);
		key_short_label(ui, &t->key, kb, it->key_label, sizeof(it->key_label));
		if (!label_ok(ui, it->label))
			v->nr_items--;
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
	case TI_KEY:
		return false;	/* what an exit in flight is about is the kernel's alone */
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

int top_build_items(struct top_view *v, const struct top_data *d, const struct top_ui *ui)
{
	int err;

	row_table_reset(&v->g_tot);
	row_table_reset(&v->g_cur);
	v->nr_items = 0;
	if (ui->level == LV_STACKS || ui->level == LV_WAKE)
		return 0;
	if (ui->level == LV_KEYS) {
		err = group_into(&v->g_tot, d->key_tot, d, ui);
		err = err ? err : group_into(&v->g_cur, d->key_cur, d, ui);
	} else {
		err = group_into(&v->g_tot, d->tot, d, ui);
		err = err ? err : group_into(&v->g_cur, d->cur, d, ui);
	}
	err = err ? err : union_keys(v, ui->level < LV_REASONS);
	if (err)
		return err;
	if (ui->level == LV_KEYS)
		err = key_items(v, d, ui);
	else
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
__u32 *top_vm_list(const struct top_data *d, int *n)
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
