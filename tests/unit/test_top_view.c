// SPDX-License-Identifier: GPL-2.0
/*
 * The `vmexit top` screen model, without a terminal: hand-built rows go in, and the lines, their
 * order, the filter, the drill-down levels, the keys and the --log lines come out as worked out
 * by hand below.
 *
 * The rows (keys tgid x vCPU x isa x reason, as a BY_VCPU tracker makes them), interval 2 s:
 *   web01 (pid 100) vCPU 0 VMX IO_INSTRUCTION   total 1000, now 200 exits of 10 us
 *   web01 (pid 100) vCPU 1 VMX EPT_VIOLATION    total  500, now 100 exits of  2 us
 *   web01 (pid 100) vCPU 0 KVM_EXIT_IO          total  900, now 180 exits of  5 us
 *   db02  (pid 200) vCPU 0 KVM_EXIT_IO          total  300, now  60 exits of 100 us
 * web01 counts its guest exits (1500, now 300 = 150/s, 2.2 ms in exit = 0.1 % of 2 s, average
 * 7.3 us); its exits to the VMM are part of those and are not added. db02 has no kvm_exit at
 * all (software KVM), so its VMM exits count, marked '*'.
 */
#include <stdlib.h>
#include "check.h"
#include "hist.h"
#include "reasons.h"
#include "text_escape.h"
#include "top_view.h"

#define VMX	VMEXIT_ISA_VMX
#define USER	VMEXIT_ISA_USER

/* count exits of lat_ns each into the row of k. */
static void put_row(struct row_table *rt, const struct row_key *k, __u64 count, __u64 lat_ns)
{
	struct row *r = row_table_get(rt, k);

	r->count += count;
	r->completed += count;
	r->total_ns += count * lat_ns;
	if (lat_ns < r->min_ns)
		r->min_ns = lat_ns;
	if (lat_ns > r->max_ns)
		r->max_ns = lat_ns;
	r->hist[hist_bucket(lat_ns)] += count;
}

static void put(struct row_table *rt, __u32 tgid, __s32 vcpu, __u32 isa, __u32 reason,
		__u64 count, __u64 lat_ns)
{
	put_row(rt, &(struct row_key){ tgid, vcpu, isa, reason, 0, {}, 0 }, count, lat_ns);
}

struct fixture {
	struct row_table cur, tot;
	struct name_cache names;
	struct top_data d;
	struct top_ui ui;
	struct top_view v;
};

static void setup(struct fixture *f)
{
	memset(f, 0, sizeof(*f));
	row_table_init(&f->cur);
	row_table_init(&f->tot);
	name_cache_set(&f->names, 100, "web01");
	name_cache_set(&f->names, 200, "db02");
	put(&f->tot, 100, 0, VMX, 30, 1000, 10000);
	put(&f->tot, 100, 1, VMX, 48, 500, 2000);
	put(&f->tot, 100, 0, USER, 2, 900, 5000);
	put(&f->tot, 200, 0, USER, 2, 300, 100000);
	put(&f->cur, 100, 0, VMX, 30, 200, 10000);
	put(&f->cur, 100, 1, VMX, 48, 100, 2000);
	put(&f->cur, 100, 0, USER, 2, 180, 5000);
	put(&f->cur, 200, 0, USER, 2, 60, 100000);
	f->d = (struct top_data){ .cur = &f->cur, .tot = &f->tot, .interval_s = 2,
				  .since_s = 65, .elapsed_s = 3725, .names = &f->names,
				  .host = "hv1", .kernel = "6.1.0", .filters = "" };
	top_ui_init(&f->ui);
	f->ui.interactive = true;
	f->ui.width = 80;	/* lines use 79: curses wraps a line that fills the last column */
	f->ui.height = 24;
}

static void teardown(struct fixture *f)
{
	top_view_free(&f->v);
	top_ui_free(&f->ui);
	row_table_free(&f->cur);
	row_table_free(&f->tot);
	name_cache_free(&f->names);
}

static void build(struct fixture *f)
{
	CHECK(top_view_build(&f->v, &f->d, &f->ui) == 0);
}

static void key(struct fixture *f, int k)
{
	top_ui_key(&f->ui, k, &f->v, &f->d);
	build(f);
}

static void type(struct fixture *f, const char *s)
{
	for (; *s; s++)
		key(f, *s);
	key(f, TK_ENTER);
}

/* Index of the first line starting with prefix, or -1. */
static int find(const struct top_view *v, const char *prefix)
{
	for (int i = 0; i < v->nr_lines; i++) {
		if (!strncmp(v->lines[i].text, prefix, strlen(prefix)))
			return i;
	}
	return -1;
}

/* The n-th row under the column header (which starts with " VM", " vCPU" or " Event"). */
static const char *row_text(const struct top_view *v, int n)
{
	for (int i = 0; i < v->nr_lines; i++) {
		if (v->lines[i].attr & TOP_A_REVERSE && v->lines[i].text[0] == ' ' &&
		    i + 1 + n < v->nr_lines)
			return v->lines[i + 1 + n].text;
	}
	return "(no column header)";
}

static const char *labels(const struct top_view *v, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = 0;
	for (int i = 0; i < v->nr_items && off < len; i++)
		off += snprintf(buf + off, len - off, "%s%s", i ? "|" : "", v->items[i].label);
	return buf;
}

static void test_vm_level(void)
{
	struct fixture f;
	int hdr;

	setup(&f);
	build(&f);
	CHECK_STR(f.v.lines[0].text, "vmexit top - 2 VMs - traced 1:02:05 - hv1 - Linux 6.1.0");
	CHECK_STR(f.v.lines[1].text, "View: all VMs");
	CHECK_STR(f.v.lines[2].text, "Sort: rate | Every 1s | Totals since start 1:05");
	hdr = find(&f.v, " VM");
	CHECK(hdr == 3);	/* no filter, nothing lost: no line for them */
	CHECK_STR(f.v.lines[3].text,
		  " VM                      PID      Total  Current  Time%     Avg     P99     Max");
	CHECK(f.v.lines[3].attr & TOP_A_REVERSE);
	/*
	 * Label 18 wide (79 - 61 columns of the rest), then the '*' column, PID, Total, Current,
	 * Time%, Avg, P99, Max. p99 of web01: rank 297 of 300 falls among the 10 us exits, whose
	 * bucket [9216, 10240) has its middle at 9728 ns.
	 */
	CHECK_STR(row_text(&f.v, 0),
		  ">web01                   100       1500      150   0.1%   7.3us   9.7us  10.0us");
	CHECK(f.v.lines[hdr + 1].attr & TOP_A_REVERSE);
	CHECK_STR(row_text(&f.v, 1),
		  " db02              *     200        300       30   0.3% 100.0us 100.0us 100.0us");
	CHECK(!(f.v.lines[hdr + 2].attr & TOP_A_REVERSE));
	/* The status line is the screen's last line. */
	CHECK_EQ_U64(f.v.nr_lines, 24);
	CHECK_STR(f.v.lines[23].text, "q quit x drill v vCPUs s sort f filter g/p guest r reset "
		  "h help");
	for (int i = 0; i < f.v.nr_lines; i++)
		CHECK(strlen(f.v.lines[i].text) <= 79);
	teardown(&f);
}

/*
 * Names are escaped, cut at a character and padded by columns (text_escape.h): a newline or
 * an escape sequence in a name starts no line and reaches no terminal, and a long name of
 * 2-byte characters keeps its row's columns where the header's are.
 */
static void test_odd_names(void)
{
	struct fixture f;
	int hdr;

	setup(&f);
	name_cache_set(&f.names, 100,
		       "g\xc3\xa4st-\xc3\xbcn\xc3\xaf" "c\xc3\xb6" "d\xc3\xa9-sehr-lang");
	name_cache_set(&f.names, 200, "d\nb\x1b[2J");
	build(&f);
	hdr = find(&f.v, " VM");
	CHECK(hdr == 3);
	CHECK_STR(row_text(&f.v, 0), ">g\xc3\xa4st-\xc3\xbcn\xc3\xaf" "c\xc3\xb6" "d\xc3\xa9-sehr~"
		  "      100       1500      150   0.1%   7.3us   9.7us  10.0us");
	CHECK_STR(row_text(&f.v, 1),
		  " d\\nb\\x1b[2J       *     200        300       30   0.3% 100.0us 100.0us "
		  "100.0us");
	CHECK_EQ_U64(text_cols(row_text(&f.v, 0)), text_cols(f.v.lines[hdr].text));
	/* A name typed at the g prompt that no VM has: the names seen, escaped. */
	key(&f, 'g');
	type(&f, "nosuch");
	CHECK_STR(f.v.lines[f.v.nr_lines - 1].text, "no VM named 'nosuch' has exits; seen: "
		  "g\xc3\xa4st-\xc3\xbcn\xc3\xaf" "c\xc3\xb6" "d\xc3\xa9-sehr-lang d\\nb\\x1b[2J");
	/* Drilled into by pid: the view line names it escaped too. */
	key(&f, 'p');
	type(&f, "200");
	CHECK_STR(f.v.lines[1].text, "View: exits of d\\nb\\x1b[2J (pid 200)");
	for (int i = 0; i < f.v.nr_lines; i++)
		CHECK(!strpbrk(f.v.lines[i].text, "\n\x1b"));
	teardown(&f);

	/* --once, 100 columns: a 36-character name and a 2-byte one keep the header's columns. */
	setup(&f);
	name_cache_set(&f.names, 100, "abcdefghijklmnopqrstuvwxyz0123456789");
	name_cache_set(&f.names, 200, "g\xc3\xa4st-\xc3\xbcn\xc3\xaf" "c\xc3\xb6" "d\xc3\xa9");
	f.ui.interactive = false;
	f.ui.height = 0;
	f.ui.width = 101;
	build(&f);
	hdr = find(&f.v, " VM");
	CHECK(hdr >= 0);
	if (hdr >= 0) {
		CHECK_STR(row_text(&f.v, 0), " abcdefghijklmnopqrstuvwxyz0123456789         100       1500"
			  "      150   0.1%   7.3us   9.7us  10.0us");
		CHECK_STR(row_text(&f.v, 1), " g\xc3\xa4st-\xc3\xbcn\xc3\xaf" "c\xc3\xb6" "d\xc3\xa9"
			  "                           *     200        300       30   0.3% 100.0us 100.0us "
			  "100.0us");
		CHECK_EQ_U64(text_cols(row_text(&f.v, 0)), text_cols(f.v.lines[hdr].text));
		CHECK_EQ_U64(text_cols(row_text(&f.v, 1)), text_cols(f.v.lines[hdr].text));
	}
	/* At every width, at every level: each row as wide as its header (the lines are full). */
	for (int lv = LV_VMS; lv <= LV_VCPUS; lv++) {
		for (int w = 60; w <= 140; w++) {
			f.ui.width = w;
			f.ui.level = lv;
			build(&f);
			hdr = find(&f.v, lv == LV_VMS ? " VM" : " vCPU");
			CHECK(hdr >= 0);
			for (int i = hdr + 1; hdr >= 0 && i < f.v.nr_lines; i++)
				if (text_cols(f.v.lines[i].text) != text_cols(f.v.lines[hdr].text))
					CHECK(!fprintf(stderr, "width %d: '%s' under '%s'\n", w,
						       f.v.lines[i].text, f.v.lines[hdr].text));
		}
	}
	teardown(&f);
}

static void test_sort_keeps_cursor(void)
{
	struct fixture f;
	char b[256];

	setup(&f);
	build(&f);
	CHECK_STR(labels(&f.v, b, sizeof(b)), "web01|db02");	/* rate: 150/s over 30/s */
	key(&f, 's');
	CHECK(f.ui.sort == TS_TIME);
	CHECK_STR(f.ui.msg, "sort by time");
	CHECK_STR(labels(&f.v, b, sizeof(b)), "db02|web01");	/* 6 ms over 2.2 ms */
	/* The cursor stayed on web01, now the second row. */
	CHECK_EQ_U64(f.ui.sel_idx, 1);
	CHECK(row_text(&f.v, 1)[0] == '>' && !strncmp(row_text(&f.v, 1) + 1, "web01", 5));
	key(&f, 's');
	CHECK(f.ui.sort == TS_MAX);
	CHECK_STR(labels(&f.v, b, sizeof(b)), "db02|web01");	/* 100 us over 10 us */
	key(&f, 's');
	CHECK(f.ui.sort == TS_P99);
	key(&f, 's');
	CHECK(f.ui.sort == TS_COUNT);
	CHECK_STR(labels(&f.v, b, sizeof(b)), "web01|db02");	/* 1500 over 300 */
	key(&f, 's');
	CHECK(f.ui.sort == TS_RATE);
	teardown(&f);
}

/*
 * --split: web01's guest exits of the interval were all on CPU (2 ms + 0.2 ms), db02's exits
 * to the VMM only 0.6 ms of their 6 ms (10 %). By time db02 leads; by on-CPU time web01.
 */
static void test_split(void)
{
	struct fixture f;
	char b[64];

	setup(&f);
	f.ui.split = true;
	row_table_get(&f.cur, &(struct row_key){ 100, 0, VMX, 30, 0, {}, 0 })->oncpu_ns = 2000000;
	row_table_get(&f.cur, &(struct row_key){ 100, 1, VMX, 48, 0, {}, 0 })->oncpu_ns = 200000;
	row_table_get(&f.cur, &(struct row_key){ 200, 0, USER, 2, 0, {}, 0 })->blocked_ns = 5400000;
	row_table_get(&f.cur, &(struct row_key){ 200, 0, USER, 2, 0, {}, 0 })->oncpu_ns = 600000;
	f.ui.sort = TS_TIME;
	build(&f);
	CHECK_STR(labels(&f.v, b, sizeof(b)), "db02|web01");
	CHECK(strstr(row_text(&f.v, -1), "OnCPU%") != NULL);
	CHECK(strstr(row_text(&f.v, 0), " 10.0%") != NULL);
	CHECK(strstr(row_text(&f.v, 1), "100.0%") != NULL);
	/* s goes from p99 to oncpu only with --split. */
	f.ui.sort = TS_P99;
	key(&f, 's');
	CHECK(f.ui.sort == TS_ONCPU);
	CHECK_STR(f.ui.msg, "sort by oncpu");
	CHECK_STR(labels(&f.v, b, sizeof(b)), "web01|db02");
	f.ui.split = false;
	f.ui.sort = TS_P99;
	key(&f, 's');
	CHECK(f.ui.sort == TS_COUNT);
	CHECK(strstr(row_text(&f.v, -1), "OnCPU%") == NULL);
	teardown(&f);
}

static void test_drilldown(void)
{
	struct fixture f;
	char b[256];

	setup(&f);
	build(&f);
	key(&f, 'x');		/* on web01 */
	CHECK(f.ui.level == LV_REASONS && f.ui.tgid == 100 && f.ui.vcpu == -1);
	CHECK_STR(f.v.lines[1].text, "View: exits of web01 (pid 100)");
	/* Guest exits, then exits to the VMM; each parent first, its children by rate. */
	CHECK_STR(labels(&f.v, b, sizeof(b)), "kvm_exit|kvm_exit(IO_INSTRUCTION)|"
		  "kvm_exit(EPT_VIOLATION)|kvm_userspace_exit|kvm_userspace_exit(IO)");
	CHECK_STR(find(&f.v, " Event") >= 0 ? f.v.lines[find(&f.v, " Event")].text : "",
		  " Event                            Total  Current  Time%     Avg     P99     Max");
	/* Label 27 wide: no PID and no '*' column at this level. */
	CHECK_STR(row_text(&f.v, 0),
		  ">kvm_exit                          1500      150   0.1%   7.3us   9.7us  10.0us");
	CHECK(f.v.lines[find(&f.v, ">kvm_exit")].attr & TOP_A_REVERSE);
	CHECK_STR(row_text(&f.v, 2),
		  " kvm_exit(EPT_VIOLATION)            500       50   0.0%   2.0us   2.0us   2.0us");
	CHECK(f.v.lines[find(&f.v, " kvm_userspace_exit ")].attr & TOP_A_BOLD);
	CHECK_STR(row_text(&f.v, 4),
		  " kvm_userspace_exit(IO)             900       90   0.0%   5.0us   5.0us   5.0us");
	/* Sorting never mixes the two kinds. */
	key(&f, 's');
	CHECK_STR(labels(&f.v, b, sizeof(b)), "kvm_exit|kvm_exit(IO_INSTRUCTION)|"
		  "kvm_exit(EPT_VIOLATION)|kvm_userspace_exit|kvm_userspace_exit(IO)");
	/* Enter goes no deeper; x toggles back up, onto web01. */
	key(&f, TK_ENTER);
	CHECK_STR(f.ui.msg, "exit reasons are the deepest level");
	key(&f, 'x');
	CHECK(f.ui.level == LV_VMS);
	CHECK_STR(f.v.items[f.ui.sel_idx].label, "web01");
	key(&f, TK_LEFT);
	CHECK_STR(f.ui.msg, "already at the top (all VMs)");

	/* db02 (second row): only exits to the VMM. */
	while (f.ui.sort != TS_RATE)
		key(&f, 's');
	key(&f, TK_DOWN);
	key(&f, TK_ENTER);
	CHECK(f.ui.level == LV_REASONS && f.ui.tgid == 200);
	CHECK_STR(labels(&f.v, b, sizeof(b)), "kvm_userspace_exit|kvm_userspace_exit(IO)");
	teardown(&f);
}

/* top --keys: rows per key (as key_rows makes them, BY_VCPU x key) for web01's reasons. */
static void put_key(struct row_table *rt, __s32 vcpu, __u32 isa, __u32 reason,
		    struct key_note k, __u64 count, __u64 lat_ns)
{
	put_row(rt, &(struct row_key){ 100, vcpu, isa, reason, 0, k, 0 }, count, lat_ns);
}

static void test_key_view(void)
{
	const struct key_note serial = { .key = 0x3f8, .kind = KEY_PORT, .dir = KEY_DIR_OUT };
	const struct key_note cmos = { .key = 0x70, .kind = KEY_PORT, .dir = KEY_DIR_OUT };
	struct row_table kcur, ktot;
	struct fixture f;
	char b[256];

	setup(&f);
	row_table_init(&kcur);
	row_table_init(&ktot);
	/* web01's 1000 IO_INSTRUCTION exits: 700 to the serial port, 300 to the RTC's index. */
	put_key(&ktot, 0, VMX, 30, serial, 700, 10000);
	put_key(&ktot, 0, VMX, 30, cmos, 300, 10000);
	put_key(&ktot, 0, USER, 2, serial, 900, 5000);
	put_key(&kcur, 0, VMX, 30, serial, 40, 10000);
	put_key(&kcur, 0, VMX, 30, cmos, 160, 10000);
	build(&f);
	/* Without --keys a reason row is the deepest level, as before. */
	key(&f, 'x');
	CHECK(f.ui.level == LV_REASONS);
	key(&f, TK_DOWN);	/* kvm_exit(IO_INSTRUCTION) */
	key(&f, TK_ENTER);
	CHECK(f.ui.level == LV_REASONS);
	CHECK_STR(f.ui.msg, "exit reasons are the deepest level");
	f.d.key_cur = &kcur;
	f.d.key_tot = &ktot;
	key(&f, 'x');
	CHECK(f.ui.level == LV_KEYS && !f.ui.key_all && f.ui.key_isa == VMX &&
	      f.ui.key_reason == 30 && f.ui.tgid == 100);
	CHECK_STR(f.v.lines[1].text, "View: keys of kvm_exit(IO_INSTRUCTION) of web01 (pid 100)");
	/* Busiest now first (rate): the RTC's 160 in 2 s, then the serial port's 40. */
	CHECK_STR(labels(&f.v, b, sizeof(b)), "kvm_exit(IO_INSTRUCTION) 0x70 out rtc|"
		  "kvm_exit(IO_INSTRUCTION) 0x3f8 out serial");
	/* The label column is 27 wide at 80 columns (test_drilldown): the key wins over the
	 * tracepoint's prefix, which would cut it ("kvm_exit(IO_INSTRUCTION) 0~"); the title
	 * names the reason. */
	CHECK_STR(row_text(&f.v, 0),
		  ">0x70 out rtc                       300       80   0.1%  10.0us  10.0us  10.0us");
	CHECK_STR(row_text(&f.v, 1),
		  " 0x3f8 out serial                   700       20   0.0%  10.0us  10.0us  10.0us");
	key(&f, TK_ENTER);
	CHECK_STR(f.ui.msg, "keys are the deepest level");
	/* x goes back, onto the reason it came from. */
	key(&f, 'x');
	CHECK(f.ui.level == LV_REASONS);
	CHECK_STR(f.v.items[f.ui.sel_idx].label, "kvm_exit(IO_INSTRUCTION)");
	/* -x --keys: every reason's keys; -f sees the key's name. */
	f.ui.level = LV_KEYS;
	f.ui.key_all = true;
	build(&f);
	CHECK_STR(f.v.lines[1].text, "View: keys of exits of web01 (pid 100)");
	CHECK_EQ_U64(f.v.nr_items, 3);
	CHECK(!top_ui_set_filter(&f.ui, "serial", NULL, 0));
	build(&f);
	CHECK_STR(labels(&f.v, b, sizeof(b)), "kvm_exit(IO_INSTRUCTION) 0x3f8 out serial|"
		  "kvm_userspace_exit(IO) 0x3f8 out serial");
	/* Every reason's keys at 80 columns: the reason's short name and the whole key, two
	 * keys of one port two labels (not "kvm_exit(IO_INSTRUCTION) 0~" twice). */
	CHECK_STR(row_text(&f.v, 0),
		  ">IO_INSTRUCTION 0x3f8 out s~        700       20   0.0%  10.0us  10.0us  10.0us");
	CHECK_STR(row_text(&f.v, 1),
		  " IO 0x3f8 out serial                900        0   0.0%       -       -       -");
	row_table_free(&kcur);
	row_table_free(&ktot);
	teardown(&f);
}

/* top --split --stacks: the kernel's stack rows (stack_read.c's, sorted), worked out by hand. */
static void put_stack(struct stack_table *t, __u32 tgid, __u32 isa, __u32 reason, __u64 ms,
		      __u64 count, char **frames, __u32 nr)
{
	struct stack_row r = { .tgid = tgid, .isa = isa, .reason = reason, .nr_frames = nr,
			       .ns = ms * 1000000, .count = count, .frames = frames };

	CHECK(!stack_table_add(t, &r));
}

static void test_stack_view(void)
{
	char *sleep[] = { "__schedule+0x1", "schedule+0x2", "do_nanosleep+0x3",
			  "hrtimer_nanosleep+0x4" };
	char *futex[] = { "__schedule+0x1", "schedule+0x2", "futex_wait+0x5" };
	char *uffd[] = { "schedule+0x2", "handle_userfault+0x9" };
	char *io[] = { "schedule+0x2", "io_schedule+0x6" };
	struct stack_table t = {};
	struct row_table kcur, ktot;
	struct fixture f;
	int h;

	setup(&f);
	row_table_init(&kcur);
	row_table_init(&ktot);
	/* web01's IO exits to the VMM: 180 ms in nanosleep over 36 periods, 20 ms on a futex
	 * over 4; its EPT violations 50 ms in handle_userfault; db02's IO 70 ms in io_schedule. */
	put_stack(&t, 100, USER, 2, 180, 36, sleep, 4);
	put_stack(&t, 100, USER, 2, 20, 4, futex, 3);
	put_stack(&t, 100, VMX, 48, 50, 5, uffd, 2);
	put_stack(&t, 200, USER, 2, 70, 7, io, 2);
	stack_table_sort(&t);
	build(&f);
	key(&f, 'S');
	CHECK_STR(f.ui.msg, "no kernel stacks: start top with --split --stacks");
	f.d.stacks = &t;
	key(&f, 'S');		/* on web01, no reason */
	CHECK(f.ui.level == LV_VMS);
	CHECK_STR(f.ui.msg, "S lists an exit reason's stacks: choose one (x on a VM)");
	key(&f, 'x');
	for (int i = 0; i < 4; i++)
		key(&f, TK_DOWN);	/* kvm_userspace_exit(IO) */
	/* Without --keys, x on a reason row opens its stacks. */
	key(&f, 'x');
	CHECK(f.ui.level == LV_STACKS && !f.ui.key_all && f.ui.key_isa == USER &&
	      f.ui.key_reason == 2 && f.ui.tgid == 100);
	CHECK_STR(f.v.lines[1].text, "View: kernel stacks of kvm_userspace_exit(IO) of web01 "
		  "(pid 100)");
	h = find(&f.v, "   Off CPU");
	CHECK(h == 3 && (f.v.lines[h].attr & TOP_A_REVERSE));
	CHECK_STR(f.v.lines[h].text, "   Off CPU  Share  Periods  Guest and exit; kernel stack, "
		  "innermost frame first");
	/* Its two stacks (not db02's, not the EPT violations'), 200 ms in 40 periods: 90 % and
	 * 10 %, frames innermost first. */
	CHECK_STR(f.v.lines[h + 1].text, "  200.0ms off CPU in 40 periods since start, 2 stacks");
	CHECK_STR(f.v.lines[h + 2].text, "   180.0ms  90.0%       36  web01 kvm_userspace_exit(IO)");
	CHECK_STR(f.v.lines[h + 3].text, "      __schedule+0x1");
	CHECK_STR(f.v.lines[h + 5].text, "      do_nanosleep+0x3");
	CHECK_STR(f.v.lines[h + 6].text, "      hrtimer_nanosleep+0x4");
	CHECK_STR(f.v.lines[h + 7].text, "    20.0ms  10.0%        4  web01 kvm_userspace_exit(IO)");
	CHECK_STR(f.v.lines[h + 10].text, "      futex_wait+0x5");
	CHECK_EQ_U64(f.v.nr_text, 10);
	CHECK(find(&f.v, "      handle_userfault") < 0 && find(&f.v, "      io_schedule") < 0);
	key(&f, TK_ENTER);
	CHECK_STR(f.ui.msg, "stacks are the deepest level");
	/* Scrolling: 24 lines hold them all; 10 lines show 5 (3 header, column, status). */
	f.ui.height = 10;
	key(&f, TK_RESIZE);
	CHECK_STR(f.v.lines[4].text, "  200.0ms off CPU in 40 periods since start, 2 stacks");
	CHECK_STR(f.v.lines[9].text, "q quit x drill v vCPUs s sort f filter g/p guest r reset "
		  "h help  [1-5/10]");
	key(&f, TK_DOWN);
	CHECK_STR(f.v.lines[4].text, "   180.0ms  90.0%       36  web01 kvm_userspace_exit(IO)");
	key(&f, TK_END);
	CHECK_STR(f.v.lines[8].text, "      futex_wait+0x5");
	CHECK(strstr(f.v.lines[9].text, "  [6-10/10]") != NULL);
	key(&f, TK_HOME);
	CHECK(f.ui.first == 0);
	f.ui.height = 24;
	/* x goes back, onto the reason it came from. */
	key(&f, 'x');
	CHECK(f.ui.level == LV_REASONS);
	CHECK_STR(f.v.items[f.ui.sel_idx].label, "kvm_userspace_exit(IO)");
	/* --keys too: x lists the keys, S the stacks (of a reason row or of the keys' reason);
	 * S again goes back. */
	f.d.key_cur = &kcur;
	f.d.key_tot = &ktot;
	key(&f, 'x');
	CHECK(f.ui.level == LV_KEYS);
	key(&f, 'S');
	CHECK(f.ui.level == LV_STACKS && f.ui.key_isa == USER && f.ui.key_reason == 2);
	key(&f, 'S');
	CHECK(f.ui.level == LV_REASONS);
	CHECK_STR(f.v.items[f.ui.sel_idx].label, "kvm_userspace_exit(IO)");
	key(&f, 'S');
	CHECK(f.ui.level == LV_STACKS && f.ui.key_reason == 2);
	/* -x --stacks (--once): every reason's stacks of every VM, most time first; shares of
	 * 320 ms. */
	f.d.key_cur = f.d.key_tot = NULL;
	f.ui = (struct top_ui){ .level = LV_STACKS, .key_all = true, .vcpu = -1,
				.sort = TS_RATE, .delay = 1, .width = 101 };
	build(&f);
	CHECK_STR(f.v.lines[1].text, "View: kernel stacks of exits of all VMs");
	CHECK_STR(f.v.lines[4].text, "  320.0ms off CPU in 52 periods since start, 4 stacks");
	CHECK_STR(f.v.lines[5].text, "   180.0ms  56.2%       36  web01 kvm_userspace_exit(IO)");
	CHECK_STR(f.v.lines[10].text, "    70.0ms  21.9%        7  db02 kvm_userspace_exit(IO)");
	CHECK_STR(f.v.lines[13].text, "    50.0ms  15.6%        5  web01 kvm_exit(EPT_VIOLATION)");
	CHECK_EQ_U64(f.v.nr_lines, 20);
	/* -f finds stacks by a frame. */
	CHECK(!top_ui_set_filter(&f.ui, "userfault", NULL, 0));
	build(&f);
	CHECK_STR(f.v.lines[5].text, "  50.0ms off CPU in 5 periods since start, 1 stack");
	CHECK_STR(f.v.lines[7].text, "      schedule+0x2");
	CHECK_EQ_U64(f.v.nr_lines, 9);
	CHECK(!top_ui_set_filter(&f.ui, "nothing-like-it", NULL, 0));
	build(&f);
	CHECK_STR(f.v.lines[f.v.nr_lines - 1].text, "  (no stack matches the filter)");
	stack_table_free(&t);
	row_table_free(&kcur);
	row_table_free(&ktot);
	teardown(&f);
}

static void test_vcpus(void)
{
	struct fixture f;
	char b[256];

	setup(&f);
	build(&f);
	key(&f, 'v');
	CHECK(f.ui.level == LV_VCPUS && f.ui.tgid == 100);
	CHECK_STR(f.v.lines[1].text, "View: vCPUs of web01 (pid 100)");
	CHECK_STR(labels(&f.v, b, sizeof(b)), "vCPU 0|vCPU 1");	/* 100/s, 50/s */
	CHECK_STR(row_text(&f.v, 1),
		  " vCPU 1                             500       50   0.0%   2.0us   2.0us   2.0us");
	key(&f, 'j');
	key(&f, TK_ENTER);
	CHECK(f.ui.level == LV_REASONS && f.ui.tgid == 100 && f.ui.vcpu == 1);
	CHECK_STR(f.v.lines[1].text, "View: exits of web01 (pid 100) vCPU 1");
	CHECK_STR(labels(&f.v, b, sizeof(b)), "kvm_exit|kvm_exit(EPT_VIOLATION)");
	/* Back up: the vCPU list, on vCPU 1; then the VMs, on web01. */
	key(&f, TK_ESC);
	CHECK(f.ui.level == LV_VCPUS);
	CHECK_STR(f.v.items[f.ui.sel_idx].label, "vCPU 1");
	key(&f, 'v');
	CHECK(f.ui.level == LV_VMS);
	CHECK_STR(f.v.items[f.ui.sel_idx].label, "web01");

	/* All VMs' vCPUs (--vcpus without a guest): named by VM; db02's counted from VMM exits. */
	f.ui.level = LV_VCPUS;
	f.ui.tgid = 0;
	build(&f);
	CHECK_STR(labels(&f.v, b, sizeof(b)), "web01 vCPU 0|web01 vCPU 1|db02 vCPU 0");
	CHECK(!f.v.items[0].user_src && f.v.items[2].user_src);
	teardown(&f);
}

static void test_filter(void)
{
	struct fixture f;
	char b[256], err[160];

	setup(&f);
	build(&f);
	key(&f, 'f');
	CHECK(f.ui.prompt == PR_FILTER);
	key(&f, 'd');
	key(&f, 'b');
	CHECK_STR(f.v.lines[23].text, "Regex filter on names (empty: none): db_");
	key(&f, TK_ENTER);
	CHECK_STR(labels(&f.v, b, sizeof(b)), "db02");
	CHECK(find(&f.v, "Filters: rows /db/") >= 0);

	/* A bad regex: a message, the old filter stays, no crash. */
	key(&f, 'f');
	key(&f, TK_BACKSPACE);
	key(&f, TK_BACKSPACE);
	type(&f, "web(");
	CHECK(!strncmp(f.ui.msg, "bad regex 'web(': ", 18));
	CHECK_STR(f.v.lines[23].text, f.ui.msg);
	CHECK_STR(f.ui.filter, "db");
	CHECK_STR(labels(&f.v, b, sizeof(b)), "db02");

	/* Case-insensitive, and in the drill-down a parent stays with a matching child. */
	key(&f, 'f');
	key(&f, TK_BACKSPACE);
	key(&f, TK_BACKSPACE);
	key(&f, TK_ENTER);
	CHECK_STR(f.ui.msg, "filter cleared");
	CHECK_STR(labels(&f.v, b, sizeof(b)), "web01|db02");
	CHECK_STR(f.v.items[f.ui.sel_idx].label, "db02");	/* the cursor stayed on it */
	key(&f, TK_HOME);
	key(&f, 'x');
	CHECK(top_ui_set_filter(&f.ui, "ept", err, sizeof(err)) == 0);
	build(&f);
	CHECK_STR(labels(&f.v, b, sizeof(b)), "kvm_exit|kvm_exit(EPT_VIOLATION)");
	/* A parent whose own name matches stays, with the children that match too. */
	CHECK(top_ui_set_filter(&f.ui, "^kvm_userspace_exit", err, sizeof(err)) == 0);
	build(&f);
	CHECK_STR(labels(&f.v, b, sizeof(b)), "kvm_userspace_exit|kvm_userspace_exit(IO)");
	CHECK(top_ui_set_filter(&f.ui, "nothing", err, sizeof(err)) == 0);
	build(&f);
	CHECK_EQ_U64(f.v.nr_items, 0);
	CHECK(find(&f.v, "  (no row matches the filter)") >= 0);
	teardown(&f);
}

static void test_guest_prompts(void)
{
	struct fixture f;

	setup(&f);
	build(&f);
	key(&f, 'g');
	type(&f, "db02");
	CHECK(f.ui.level == LV_REASONS && f.ui.tgid == 200);
	key(&f, 'g');
	type(&f, "nosuch");
	CHECK_STR(f.ui.msg, "no VM named 'nosuch' has exits; seen: web01 db02");
	CHECK(f.ui.tgid == 200);	/* unchanged */
	key(&f, 'p');
	type(&f, "12x");
	CHECK_STR(f.ui.msg, "bad pid '12x': give a VMM process id");
	key(&f, 'p');
	type(&f, "100");
	CHECK(f.ui.level == LV_REASONS && f.ui.tgid == 100);
	CHECK_STR(f.ui.msg, "");
	key(&f, 'p');
	type(&f, "4242");
	CHECK(f.ui.tgid == 4242);
	CHECK_STR(f.ui.msg, "pid 4242: no exits seen (yet)");
	CHECK(find(&f.v, "  (no exits here yet)") >= 0);
	key(&f, 'g');
	key(&f, TK_ESC);		/* cancels: still pid 4242 */
	CHECK(f.ui.prompt == PR_NONE && f.ui.tgid == 4242);
	key(&f, 'p');
	type(&f, "");
	CHECK(f.ui.level == LV_VMS && f.ui.tgid == 0);
	CHECK_STR(f.ui.msg, "all VMs");
	teardown(&f);
}

static void test_lost_and_reset(void)
{
	struct fixture f;
	int i;

	setup(&f);
	f.d.lost[LOST_UNMATCHED_ENTRY] = 2;
	build(&f);
	i = find(&f.v, "Lost: ");
	CHECK(i >= 0);
	CHECK_STR(i >= 0 ? f.v.lines[i].text : "", "Lost: unmatched_entry 2");
	CHECK(i >= 0 && !(f.v.lines[i].attr & TOP_A_ALERT));	/* benign */
	f.d.lost[LOST_CELLS_FULL] = 3;
	f.d.lost[LOST_UNMATCHED_RUN] = 12345678901ULL;
	f.d.lost[LOST_OVERWRITTEN_EXIT] = 12345678901ULL;
	f.d.lost[LOST_THREADS_FULL] = 12345678901ULL;
	build(&f);
	i = find(&f.v, "Lost: ");
	/* Wrapped at 79 columns, every counter still there. */
	CHECK_STR(i >= 0 ? f.v.lines[i].text : "", "Lost: cells_full 3, threads_full 12345678901, "
		  "unmatched_entry 2");
	CHECK_STR(i >= 0 ? f.v.lines[i + 1].text : "", "      overwritten_exit 12345678901, "
		  "unmatched_run 12345678901");
	CHECK(i >= 0 && (f.v.lines[i].attr & TOP_A_ALERT));
	CHECK(find(&f.v, " VM ") == i + 2);

	/* r: the command drops its totals; rows with only a current interval remain. */
	CHECK(top_ui_key(&f.ui, 'r', &f.v, &f.d) == TA_RESET);
	CHECK_STR(f.ui.msg, "totals reset");
	row_table_reset(&f.tot);
	f.d.was_reset = true;
	f.d.since_s = 0.5;
	build(&f);
	CHECK_STR(f.v.lines[2].text, "Sort: rate | Every 1s | Totals since reset 0:00");
	CHECK_STR(row_text(&f.v, 0),
		  ">web01                   100          0      150   0.1%   7.3us   9.7us  10.0us");
	teardown(&f);
}

static void test_keys_misc(void)
{
	struct fixture f;

	setup(&f);
	build(&f);
	CHECK(top_ui_key(&f.ui, '+', &f.v, &f.d) == TA_DELAY);
	CHECK(f.ui.delay == 2);
	CHECK_STR(f.ui.msg, "refresh every 2s");
	top_ui_key(&f.ui, '-', &f.v, &f.d);
	top_ui_key(&f.ui, '-', &f.v, &f.d);
	CHECK(f.ui.delay == 0.5);
	f.ui.delay = 0.3;	/* -d 0.3: to the neighbouring steps */
	top_ui_key(&f.ui, '+', &f.v, &f.d);
	CHECK(f.ui.delay == 0.5);
	key(&f, 'h');
	CHECK(f.ui.help);
	CHECK(find(&f.v, "  s / o        sort: count, rate, time, max, p99, oncpu / Total or "
		   "Current") >= 0);
	CHECK(find(&f.v, " VM") < 0);
	CHECK(top_ui_key(&f.ui, 'j', &f.v, &f.d) == TA_NONE);	/* any key closes help */
	CHECK(!f.ui.help);
	key(&f, 'Z');
	CHECK_STR(f.ui.msg, "unknown key: h for help");
	CHECK(top_ui_key(&f.ui, 'q', &f.v, &f.d) == TA_QUIT);
	teardown(&f);
}

static void test_scroll_and_small(void)
{
	struct fixture f;
	char name[16];

	setup(&f);
	for (__u32 p = 1; p <= 30; p++) {
		snprintf(name, sizeof(name), "vm%02u", p);
		name_cache_set(&f.names, 1000 + p, name);
		/* 499.5/s down to 485/s: the rate order is vm01..vm30, then web01, db02. */
		put(&f.cur, 1000 + p, 0, VMX, 12, 1000 - p, 1000);
		put(&f.tot, 1000 + p, 0, VMX, 12, 1000 - p, 1000);
	}
	f.ui.height = 10;	/* 3 header + column header + 5 rows + status */
	build(&f);
	CHECK_EQ_U64(f.v.nr_lines, 10);
	CHECK_EQ_U64(f.ui.page, 5);
	CHECK(!strncmp(row_text(&f.v, 0), ">vm01", 5));
	CHECK_STR(f.v.lines[9].text, "q quit x drill v vCPUs s sort f filter g/p guest r reset "
		  "h help  [1-5/32]");
	for (int i = 0; i < 7; i++)
		key(&f, TK_DOWN);
	/* Cursor on the 8th item (vm08): rows 4..8 shown, it on the last. */
	CHECK(!strncmp(row_text(&f.v, 4), ">vm08", 5));
	CHECK(!strncmp(row_text(&f.v, 0), " vm04", 5));
	key(&f, TK_END);
	CHECK(!strncmp(row_text(&f.v, 4), ">db02", 5));
	key(&f, TK_PGUP);
	CHECK_EQ_U64(f.ui.sel_idx, 27);
	key(&f, TK_HOME);
	CHECK(!strncmp(row_text(&f.v, 0), ">vm01", 5));

	/* A terminal too short for rows still shows one, and lines fit a narrow one. */
	f.ui.height = 3;
	f.ui.width = 40;
	build(&f);
	CHECK_EQ_U64(f.ui.page, 1);
	for (int i = 0; i < f.v.nr_lines; i++)
		CHECK(strlen(f.v.lines[i].text) <= 39);
	teardown(&f);
}

static void test_once(void)
{
	struct fixture f;

	setup(&f);
	f.ui.interactive = false;
	f.ui.height = 0;
	f.ui.width = 101;
	f.ui.level = LV_REASONS;	/* --once -x: every VM's reasons together */
	f.ui.tgid = 0;
	build(&f);
	/* No cursor, no status line, every row; labels up to 40 wide. */
	CHECK_EQ_U64(f.v.nr_lines, 4 + 5);
	CHECK_STR(f.v.lines[1].text, "View: exits of all VMs");
	CHECK_STR(row_text(&f.v, 3),
		  " kvm_userspace_exit                             1200      120   0.3%  "
		  "28.8us 100.0us 100.0us");
	CHECK_STR(f.v.lines[f.v.nr_lines - 1].text,
		  " kvm_userspace_exit(IO)                         1200      120   0.3%  "
		  "28.8us 100.0us 100.0us");
	teardown(&f);
}

/*
 * Stuck exits: db02's vCPU 0 in a userspace IO exit for 3 s (stuck at --stuck 1s), web01's
 * vCPU 1 in an EPT_VIOLATION for 0.5 s (not stuck), and a thread of web01 that exited in an IO
 * exit 9 s old (over, not stuck).
 */
static void test_stuck(void)
{
	const __u64 s = 1000000000ull;
	struct inflight_exit ex[] = {
		{ .tgid = 200, .tid = 201, .vcpu = 0, .isa = USER, .reason = 2, .start_ns = 7 * s },
		{ .tgid = 100, .tid = 102, .vcpu = 1, .isa = VMX, .reason = 48,
		  .start_ns = 9 * s + s / 2 },
		{ .tgid = 100, .tid = 101, .vcpu = 0, .isa = VMX, .reason = 30, .start_ns = 1,
		  .end_ns = 9 * s },
	};
	struct fixture f;
	int l;

	setup(&f);
	f.d.inflight = ex;
	f.d.nr_inflight = 3;
	f.d.now_ns = 10 * s;
	f.d.stuck_ns = s;
	f.ui.interactive = false;
	f.ui.height = 0;
	f.ui.width = 101;
	build(&f);
	l = find(&f.v, "Stuck ");
	CHECK(l == 3);
	CHECK_STR(f.v.lines[l].text, "Stuck (in flight >= 1.00s, rows !): 1; oldest 3.00s: db02 "
		  "vCPU 0 kvm_userspace_exit(IO)");
	CHECK(f.v.lines[l].attr & TOP_A_ALERT);
	/* db02 is marked and in the alert colour; web01 (0.5 s, and an ended exit) is not. */
	l = find(&f.v, "!db02 ");
	CHECK(l > 0 && (f.v.lines[l].attr & TOP_A_ALERT));
	l = find(&f.v, " web01 ");
	CHECK(l > 0 && !(f.v.lines[l].attr & TOP_A_ALERT));
	/* Per vCPU: db02's vCPU 0 alone. */
	f.ui.level = LV_VCPUS;
	build(&f);
	CHECK(find(&f.v, "!db02 vCPU 0") > 0);
	CHECK(find(&f.v, " web01 vCPU 0") > 0 && find(&f.v, " web01 vCPU 1") > 0);
	/* Reasons of all VMs: the userspace group and its IO row, no guest exit. */
	f.ui.level = LV_REASONS;
	build(&f);
	CHECK(find(&f.v, "!kvm_userspace_exit ") > 0);
	CHECK(find(&f.v, "!kvm_userspace_exit(IO) ") > 0);
	CHECK(find(&f.v, " kvm_exit ") > 0 && find(&f.v, " kvm_exit(EPT_VIOLATION) ") > 0);
	/* Of web01 only: nothing stuck there. */
	f.ui.tgid = 100;
	build(&f);
	CHECK(find(&f.v, "!") < 0 && find(&f.v, " kvm_userspace_exit(IO) ") > 0);
	/* Once it passes --stuck, web01's EPT_VIOLATION is stuck too. */
	f.d.stuck_ns = s / 4;
	build(&f);
	CHECK(find(&f.v, "!kvm_exit(EPT_VIOLATION) ") > 0 && find(&f.v, "!kvm_exit ") > 0);
	CHECK(find(&f.v, " kvm_exit(IO_INSTRUCTION) ") > 0);
	/* stuck_ns 0: nothing is marked. */
	f.d.stuck_ns = 0;
	build(&f);
	CHECK(find(&f.v, "Stuck ") < 0 && find(&f.v, "!") < 0);
	teardown(&f);
}

static void test_log(void)
{
	struct fixture f;
	struct top_log lg = {};
	__u64 lost[NR_LOST] = {};
	char buf[1024];
	regex_t re;

	setup(&f);
	/* Columns: busiest in the totals first (1200 IO, 1000 IO_INSTRUCTION, 500 EPT). */
	top_log_emit(&lg, &f.cur, &f.tot, 2, lost, "10:00:01", NULL, buf, sizeof(buf));
	CHECK_STR(buf,
		  "    time   exits/s    vmm/s   lost KVM_EXIT_IO IO_INSTRUCTION EPT_VIOLATION\n"
		  "10:00:01       150      120      0         120            100            50\n");
	lost[LOST_CELLS_FULL] = 4;
	lost[LOST_UNMATCHED_ENTRY] = 7;		/* not a loss */
	top_log_emit(&lg, &f.cur, &f.tot, 2, lost, "10:00:03", NULL, buf, sizeof(buf));
	CHECK_STR(buf,
		  "10:00:03       150      120      4         120            100            50\n");
	top_log_emit(&lg, &f.cur, &f.tot, 2, lost, "10:00:05", NULL, buf, sizeof(buf));
	CHECK(strstr(buf, "      0         120") != NULL);	/* a delta: 0 more lost */
	/* EPT_VIOLATION becomes the busiest: the columns stay as the header says, no new one. */
	put(&f.tot, 100, 1, VMX, 48, 4000, 2000);
	top_log_emit(&lg, &f.cur, &f.tot, 2, lost, "10:00:06", NULL, buf, sizeof(buf));
	CHECK_STR(buf,
		  "10:00:06       150      120      0         120            100            50\n");
	/* A new reason takes a free column at once, after the others, with a new header. */
	put(&f.tot, 100, 0, VMX, 10, 5000, 100);
	put(&f.cur, 100, 0, VMX, 10, 5000, 100);
	top_log_emit(&lg, &f.cur, &f.tot, 2, lost, "10:00:07", NULL, buf, sizeof(buf));
	CHECK(!strncmp(buf, "    time   exits/s    vmm/s   lost KVM_EXIT_IO IO_INSTRUCTION "
			    "EPT_VIOLATION     CPUID\n", 81));
	/* Then a header every 20 lines, with the columns sorted again: busiest first. */
	for (int i = 0; i < 19; i++) {
		top_log_emit(&lg, &f.cur, &f.tot, 2, lost, "10:00:09", NULL, buf, sizeof(buf));
		CHECK(!strncmp(buf, "10:00:09", 8));
	}
	top_log_emit(&lg, &f.cur, &f.tot, 2, lost, "10:00:11", NULL, buf, sizeof(buf));
	CHECK(!strncmp(buf, "    time   exits/s    vmm/s   lost     CPUID EPT_VIOLATION", 58));
	/* -f picks the columns, matched on the drill-down names. */
	CHECK(regcomp(&re, "userspace", REG_EXTENDED | REG_NOSUB | REG_ICASE) == 0);
	memset(&lg, 0, sizeof(lg));
	top_log_emit(&lg, &f.cur, &f.tot, 2, lost, "10:00:13", &re, buf, sizeof(buf));
	/* A new log's first line counts everything lost since tracing began (the 4). */
	CHECK_STR(buf, "    time   exits/s    vmm/s   lost KVM_EXIT_IO\n"
		  "10:00:13      2650      120      4         120\n");
	regfree(&re);
	teardown(&f);
}

/*
 * kvm_stat habits: -f matches reasons in the default (per-VM) view, -z hides idle rows, the
 * keys c (clear the filter), o (Current / Total), b (all VMs' reasons together, and back),
 * and q on the help screen returns, as the help says.
 */
static void test_kvm_stat_habits(void)
{
	struct fixture f;
	char b[256], err[160];

	setup(&f);
	/* kvm_stat's own -f example: every VM, counting only the exits whose reason matches. */
	CHECK(top_ui_set_filter(&f.ui, "io|mmio", err, sizeof(err)) == 0);
	build(&f);
	CHECK_STR(labels(&f.v, b, sizeof(b)), "web01|db02");
	/* EPT: web01 keeps its 500 EPT_VIOLATION exits only (100 now: 50/s); db02 has none. */
	CHECK(top_ui_set_filter(&f.ui, "ept", err, sizeof(err)) == 0);
	build(&f);
	CHECK_STR(labels(&f.v, b, sizeof(b)), "web01");
	CHECK_STR(row_text(&f.v, 0),
		  ">web01                   100        500       50   0.0%   2.0us   2.0us   2.0us");
	/* A guest's name still selects all of its exits. */
	CHECK(top_ui_set_filter(&f.ui, "^web", err, sizeof(err)) == 0);
	build(&f);
	CHECK_STR(row_text(&f.v, 0),
		  ">web01                   100       1500      150   0.1%   7.3us   9.7us  10.0us");
	/* Per vCPU too: vCPU 1 of web01 has the EPT exits. */
	CHECK(top_ui_set_filter(&f.ui, "ept", err, sizeof(err)) == 0);
	key(&f, 'v');
	CHECK_STR(labels(&f.v, b, sizeof(b)), "vCPU 1");
	/* c clears the filter. */
	key(&f, 'c');
	CHECK_STR(f.ui.msg, "filter cleared");
	CHECK(!f.ui.have_re && !f.ui.filter[0]);
	CHECK_STR(labels(&f.v, b, sizeof(b)), "vCPU 0|vCPU 1");
	key(&f, TK_LEFT);

	/* o: Total first, then Current again. */
	key(&f, 'o');
	CHECK(f.ui.sort == TS_COUNT);
	CHECK_STR(f.ui.msg, "sort by count (Total)");
	key(&f, 'o');
	CHECK(f.ui.sort == TS_RATE);
	key(&f, 's');
	key(&f, 's');
	key(&f, 'o');
	CHECK(f.ui.sort == TS_RATE);

	/* b: every VM's reasons in one list, as kvm_stat shows them; b again: per VM. */
	key(&f, 'b');
	CHECK(f.ui.level == LV_REASONS && f.ui.tgid == 0);
	CHECK_STR(f.v.lines[1].text, "View: exits of all VMs");
	CHECK_STR(labels(&f.v, b, sizeof(b)), "kvm_exit|kvm_exit(IO_INSTRUCTION)|"
		  "kvm_exit(EPT_VIOLATION)|kvm_userspace_exit|kvm_userspace_exit(IO)");
	CHECK_STR(row_text(&f.v, 4),
		  " kvm_userspace_exit(IO)            1200      120   0.3%  28.8us 100.0us 100.0us");
	key(&f, 'b');
	CHECK(f.ui.level == LV_VMS);
	CHECK_STR(labels(&f.v, b, sizeof(b)), "web01|db02");

	/* The help says any key returns: q too, and only a second q quits. */
	key(&f, 'h');
	/* All of it on a 24-line screen, above the status line. */
	CHECK(find(&f.v, "Press any key (q too) to return.") == 22);
	CHECK_EQ_U64(f.v.nr_lines, 24);
	for (int i = 0; i < f.v.nr_lines; i++)
		CHECK(strlen(f.v.lines[i].text) <= 79);
	CHECK(top_ui_key(&f.ui, 'q', &f.v, &f.d) == TA_NONE);
	CHECK(!f.ui.help);
	build(&f);
	CHECK(find(&f.v, " VM") >= 0);
	CHECK(top_ui_key(&f.ui, 'q', &f.v, &f.d) == TA_QUIT);

	/* -z: rows with no exit in the interval go (db02 is idle now), stuck ones stay. */
	row_table_reset(&f.cur);
	put(&f.cur, 100, 1, VMX, 48, 100, 2000);
	f.ui.skip_zero = true;
	build(&f);
	CHECK_STR(labels(&f.v, b, sizeof(b)), "web01");
	CHECK(find(&f.v, "Filters: -z") >= 0);
	key(&f, 'x');
	CHECK_STR(labels(&f.v, b, sizeof(b)), "kvm_exit|kvm_exit(EPT_VIOLATION)");
	f.ui.skip_zero = false;
	build(&f);
	CHECK_STR(labels(&f.v, b, sizeof(b)), "kvm_exit|kvm_exit(EPT_VIOLATION)|"
		  "kvm_exit(IO_INSTRUCTION)|kvm_userspace_exit|kvm_userspace_exit(IO)");
	teardown(&f);
}

/*
 * --kvm-events: rows of other kvm tracepoints (TOP_ISA_KVM_EVENT) are listed in the
 * drill-down under their tracepoint names, counted but with no time, and never added to a
 * VM's exits. web01 made 40 kvm_pio events (now 10) and 6 kvm_inj_virq (now 2).
 */
static void put_event(struct row_table *rt, __u32 tgid, __s32 vcpu, __u32 id, __u64 count)
{
	row_table_get(rt, &(struct row_key){ tgid, vcpu, TOP_ISA_KVM_EVENT, id, 0, {}, 0 })->count +=
		count;
}

static void test_kvm_events(void)
{
	struct fixture f;
	struct top_log lg = {};
	__u64 lost[NR_LOST] = {};
	char b[256], buf[1024], err[160];

	setup(&f);
	put_event(&f.tot, 100, 0, VMEXIT_KVM_PIO, 40);
	put_event(&f.cur, 100, 0, VMEXIT_KVM_PIO, 10);
	put_event(&f.tot, 100, 1, VMEXIT_KVM_INJ_VIRQ, 6);
	put_event(&f.cur, 100, 1, VMEXIT_KVM_INJ_VIRQ, 2);
	build(&f);
	/* The VM rows are unchanged. */
	CHECK_STR(row_text(&f.v, 0),
		  ">web01                   100       1500      150   0.1%   7.3us   9.7us  10.0us");
	key(&f, 'x');
	CHECK_STR(labels(&f.v, b, sizeof(b)), "kvm_exit|kvm_exit(IO_INSTRUCTION)|"
		  "kvm_exit(EPT_VIOLATION)|kvm_userspace_exit|kvm_userspace_exit(IO)|"
		  "kvm_pio|kvm_inj_virq");
	CHECK_STR(row_text(&f.v, 5),
		  " kvm_pio                             40        5      -       -       -       -");
	CHECK_STR(row_text(&f.v, 6),
		  " kvm_inj_virq                         6        1      -       -       -       -");
	/* A vCPU's: only its own. */
	key(&f, 'v');
	key(&f, TK_HOME);
	key(&f, TK_ENTER);
	CHECK_STR(f.v.lines[1].text, "View: exits of web01 (pid 100) vCPU 0");
	CHECK(strstr(labels(&f.v, b, sizeof(b)), "|kvm_pio") != NULL);
	CHECK(strstr(b, "kvm_inj_virq") == NULL);
	/* -f finds them by name. */
	CHECK(top_ui_set_filter(&f.ui, "pio", err, sizeof(err)) == 0);
	build(&f);
	CHECK_STR(labels(&f.v, b, sizeof(b)), "kvm_pio");
	/* --log: a column of their own, not in exits/s or vmm/s. */
	top_log_emit(&lg, &f.cur, &f.tot, 2, lost, "10:00:01", NULL, buf, sizeof(buf));
	CHECK_STR(buf,
		  "    time   exits/s    vmm/s   lost KVM_EXIT_IO IO_INSTRUCTION EPT_VIOLATION"
		  "   kvm_pio kvm_inj_virq\n"
		  "10:00:01       150      120      0         120            100            50"
		  "         5            1\n");
	teardown(&f);
}

/* --log -z: an interval without exits, events or losses prints nothing, not even a header. */
static void test_log_skip_zero(void)
{
	struct fixture f;
	struct top_log lg = { .skip_zero = true };
	__u64 lost[NR_LOST] = {};
	char buf[1024];

	setup(&f);
	row_table_reset(&f.cur);
	top_log_emit(&lg, &f.cur, &f.tot, 2, lost, "10:00:01", NULL, buf, sizeof(buf));
	CHECK_STR(buf, "");
	lost[LOST_CELLS_FULL] = 1;		/* a loss is not zero */
	top_log_emit(&lg, &f.cur, &f.tot, 2, lost, "10:00:03", NULL, buf, sizeof(buf));
	CHECK(strstr(buf, "\n10:00:03         0        0      1 ") != NULL);
	top_log_emit(&lg, &f.cur, &f.tot, 2, lost, "10:00:05", NULL, buf, sizeof(buf));
	CHECK_STR(buf, "");
	put(&f.cur, 200, 0, USER, 2, 2, 1000);
	top_log_emit(&lg, &f.cur, &f.tot, 2, lost, "10:00:07", NULL, buf, sizeof(buf));
	CHECK_STR(buf, "10:00:07         0        1      0           1              0"
		  "             0\n");
	teardown(&f);
}

int main(void)
{
	char err[160];
	struct top_ui ui;
	enum top_sort s;

	top_ui_init(&ui);
	CHECK(top_ui_set_filter(&ui, "[", err, sizeof(err)) == -1);
	CHECK(!strncmp(err, "bad regex '[': ", 15));
	CHECK(!ui.have_re);
	top_ui_free(&ui);
	CHECK(top_sort_parse("p99", &s) == 0 && s == TS_P99);
	CHECK(top_sort_parse("bogus", &s) != 0);
	CHECK(top_sort_parse("oncpu", &s) == 0 && s == TS_ONCPU);

	test_vm_level();
	test_odd_names();
	test_sort_keeps_cursor();
	test_split();
	test_drilldown();
	test_key_view();
	test_stack_view();
	test_vcpus();
	test_filter();
	test_guest_prompts();
	test_lost_and_reset();
	test_keys_misc();
	test_scroll_and_small();
	test_once();
	test_stuck();
	test_log();
	test_kvm_stat_habits();
	test_kvm_events();
	test_log_skip_zero();
	CHECK_DONE("test_top_view");
}
