// SPDX-License-Identifier: GPL-2.0
/*
 * Template engine: every field and flag against strings worked out by hand, every kind of
 * malformed rule against its file:line:col message, rule precedence and the kvmtrace ids, and
 * a differential check of the integer formatter against the C library's printf.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "reasons.h"
#include "template.h"

#define VMX VMEXIT_ISA_VMX
#define SVM VMEXIT_ISA_SVM
#define USR VMEXIT_ISA_USER

/*
 * The reference event: a VMX port write to 0x3f8, one byte (exit qualification: port in 31:16,
 * size - 1 in 2:0, bit 3 clear for OUT), at 5.123456789 s, 2.5 us in the host.
 */
static struct vmexit_event ev_io(void)
{
	return (struct vmexit_event){
		.ts_ns = 5123456789ull, .latency_ns = 2500, .rip = 0xfffff80012345678ull,
		.info1 = 0x03f80000, .info2 = 0, .intr_info = 0, .error_code = 0,
		.tgid = 4242, .tid = 4250, .vcpu = 1, .reason = 30, .cpu = 7,
		.isa = VMX, .type = VMEXIT_EV_EXIT,
	};
}

static struct vmexit_event ev_make(__u16 isa, __u32 reason, __u64 info1)
{
	struct vmexit_event ev = ev_io();

	ev.isa = isa;
	ev.reason = reason;
	ev.info1 = info1;
	return ev;
}

static const char *guest_cb(void *ctx, __u32 tgid, __u64 ts_ns)
{
	(void)ctx;
	(void)ts_ns;
	if (tgid == 4242)
		return "web1";
	if (tgid == 666)
		return "%s%n%p";	/* a hostile VM name is only ever data */
	if (tgid == 667)	/* and can neither end a line nor reach the terminal */
		return "we ird \"na\\me\"\n\f\xfe; <b>x";
	if (tgid == 668)
		return "g\xc3\xa4st-\xc3\xbcn\xc3\xaf" "c\xc3\xb6" "d\xc3\xa9-sehr-lang";
	return NULL;
}

static char out[4096];

/* Renders ev through rules text; "" when the rules fail to parse (and the test then fails). */
static const char *render_env(const char *rules, struct tmpl_env *env,
			      const struct vmexit_event *ev)
{
	struct tmpl_rules *r;
	char err[512];
	int n;

	if (tmpl_rules_parse(rules, strlen(rules), "t.fmt", &r, err, sizeof(err))) {
		fprintf(stderr, "unexpected parse error: %s\n", err);
		check_failures++;
		return "";
	}
	n = tmpl_render(r, env, ev, out, sizeof(out));
	CHECK_EQ_U64(n, strlen(out));
	tmpl_rules_free(r);
	return out;
}

/* One template under `default`, fresh env, first_ts_ns 5 s; the trailing newline dropped. */
static const char *fmt1(const char *tmpl, const struct vmexit_event *ev)
{
	struct tmpl_env env = { .first_ts_ns = 5000000000ull, .guest_name = guest_cb };
	char rules[512];
	size_t n;

	snprintf(rules, sizeof(rules), "default %s", tmpl);
	render_env(rules, &env, ev);
	tmpl_env_release(&env);
	n = strlen(out);
	if (n && out[n - 1] == '\n')
		out[n - 1] = '\0';
	return out;
}

static void test_fields(void)
{
	struct vmexit_event ev = ev_io(), neg = ev_io(), anon = ev_io();

	neg.vcpu = -1;
	anon.tgid = 77;

	CHECK_STR(fmt1("%(tsc)d", &ev), "5123456789");
	CHECK_STR(fmt1("%(ts_ns)d", &ev), "5123456789");
	CHECK_STR(fmt1("%(rel_ns)d", &ev), "123456789");
	CHECK_STR(fmt1("%(reltime).3f", &ev), "0.123");
	CHECK_STR(fmt1("%(reltsc)d", &ev), "0");		/* first event of the vCPU */
	CHECK_STR(fmt1("%(event)x", &ev), "20005");		/* IO_WRITE */
	CHECK_STR(fmt1("%(event)08x", &ev), "00020005");
	CHECK_STR(fmt1("%(vcpu)08x", &ev), "00000001");
	CHECK_STR(fmt1("%(vcpu)d", &neg), "-1");
	CHECK_STR(fmt1("%(vcpu)08x", &neg), "ffffffff");	/* 32-bit pattern, not 64 */
	CHECK_STR(fmt1("%(vcpu)u", &neg), "4294967295");
	CHECK_STR(fmt1("%(vcpu)5d", &neg), "   -1");
	CHECK_STR(fmt1("%(vcpu)05d", &neg), "-0001");
	CHECK_STR(fmt1("%(vcpu)s", &neg), "-1");
	CHECK_STR(fmt1("%(pid)08x", &ev), "00001092");		/* 4242 */
	CHECK_STR(fmt1("%(pid)d", &ev), "4242");
	/* Under a non-kvmtrace rule the words are reason, rip, info1, info2, intr_info. */
	CHECK_STR(fmt1("%(1)08x", &ev), "0000001e");
	CHECK_STR(fmt1("%(2)x", &ev), "fffff80012345678");
	CHECK_STR(fmt1("%(3)x", &ev), "3f80000");
	CHECK_STR(fmt1("%(4)d", &ev), "0");
	CHECK_STR(fmt1("%(5)d", &ev), "0");
	CHECK_STR(fmt1("%(reason)d", &ev), "30");
	CHECK_STR(fmt1("%(reason)s", &ev), "30");
	CHECK_STR(fmt1("%(reason_name)s", &ev), "IO_INSTRUCTION");
	/* --keys: the exit's key, its parts and stat --by key's KEY column; none without. */
	CHECK_STR(fmt1("%(key_label)s|%(key_kind)s|%(key_dir)s|%(key_name)s|%(key)x", &ev),
		  "(none)|none|||0");
	ev.key = (struct key_note){ .key = 0x3f8, .kind = KEY_PORT, .dir = KEY_DIR_OUT };
	CHECK_STR(fmt1("%(key_label)s|%(key_kind)s|%(key_dir)s|%(key_name)s|%(key)x", &ev),
		  "0x3f8 out serial|port|out|serial|3f8");
	CHECK_STR(fmt1("%(key_kind)d %(key_dir)d %(key_label)-18s|", &ev),
		  "1 2 0x3f8 out serial  |");
	ev.key = (struct key_note){};
	CHECK_STR(fmt1("%(isa)s", &ev), "vmx");
	CHECK_STR(fmt1("%(isa)d", &ev), "1");
	{
		/* An exit that never completed: flagged, still of its type for the rules. */
		struct vmexit_event left = ev;

		left.type |= VMEXIT_EV_IN_FLIGHT;
		CHECK_STR(fmt1("%(in_flight)d", &ev), "0");
		CHECK_STR(fmt1("%(in_flight)d", &left), "1");
		CHECK_STR(fmt1("[%(in_flight)s]", &ev), "[]");
		CHECK_STR(fmt1("[%(in_flight)s]", &left), "[ in_flight]");
		CHECK_STR(fmt1("%(type)s %(type)d", &left), "exit 1");
		CHECK_STR(fmt1("%(event)x", &left), "20005");
	}
	{
		struct vmexit_event arm = ev;

		arm.isa = VMEXIT_ISA_ARM64;
		CHECK_STR(fmt1("%(isa)s", &arm), "arm64");
		arm.isa = 9;	/* an ISA this build does not know: its number */
		CHECK_STR(fmt1("%(isa)s", &arm), "9");
	}
	CHECK_STR(fmt1("%(type)s", &ev), "exit");
	CHECK_STR(fmt1("%(type)d", &ev), "1");
	CHECK_STR(fmt1("%(guest)s", &ev), "web1");
	CHECK_STR(fmt1("%(guest)s", &anon), "77");		/* no name: the tgid */
	CHECK_STR(fmt1("%(guest)5s|", &anon), "   77|");
	CHECK_STR(fmt1("%(tid)d", &ev), "4250");
	CHECK_STR(fmt1("%(cpu)d", &ev), "7");
	CHECK_STR(fmt1("%(rip)x", &ev), "fffff80012345678");
	CHECK_STR(fmt1("%(rip)X", &ev), "FFFFF80012345678");
	CHECK_STR(fmt1("%(rip)d", &ev), "18446735277921949304");	/* unsigned: no sign */
	CHECK_STR(fmt1("%(info1)x", &ev), "3f80000");
	CHECK_STR(fmt1("%(info1)o", &ev), "376000000");	/* 0x3f8 << 16 = 03760 << 15 */
	CHECK_STR(fmt1("%(info2)x", &ev), "0");
	CHECK_STR(fmt1("%(intr_info)08x", &ev), "00000000");
	CHECK_STR(fmt1("%(error_code)d", &ev), "0");
	CHECK_STR(fmt1("%(latency_ns)d", &ev), "2500");
	CHECK_STR(fmt1("%(latency_us)d", &ev), "2");		/* truncated */
	CHECK_STR(fmt1("%(latency_us)s", &ev), "2");
	CHECK_STR(fmt1("%(latency_us).3f", &ev), "2.500");
	CHECK_STR(fmt1("%(latency_us).1f", &ev), "2.5");
	CHECK_STR(fmt1("%(latency_us).0f", &ev), "2");		/* 2.5: tie to even */
	CHECK_STR(fmt1("%(time)d", &ev), "5");
	CHECK_STR(fmt1("%(time)f", &ev), "5.123457");
	CHECK_STR(fmt1("%(time).9f", &ev), "5.123456789");
	CHECK_STR(fmt1("%(time).12f", &ev), "5.123456789000");
	CHECK_STR(fmt1("%(time).0f", &ev), "5");
	CHECK_STR(fmt1("%(time)#.0f", &ev), "5.");
	CHECK_STR(fmt1("%(time)12.4f|", &ev), "      5.1235|");
	CHECK_STR(fmt1("%(time)-12.4f|", &ev), "5.1235      |");
	CHECK_STR(fmt1("%(time)012.4f", &ev), "0000005.1235");
	CHECK_STR(fmt1("%(time)+.2f", &ev), "+5.12");
	CHECK_STR(fmt1("%(cpu)f", &ev), "7.000000");
	CHECK_STR(fmt1("%(ts_ns)ld %(ts_ns)hx", &ev), "5123456789 13161bf15"); /* ignored */
}

static void test_flags(void)
{
	struct vmexit_event ev = ev_io();

	CHECK_STR(fmt1("%(cpu)5d|", &ev), "    7|");
	CHECK_STR(fmt1("%(cpu)-5d|", &ev), "7    |");
	CHECK_STR(fmt1("%(cpu)05d", &ev), "00007");
	CHECK_STR(fmt1("%(cpu)-05d|", &ev), "7    |");		/* '-' beats '0' */
	CHECK_STR(fmt1("%(cpu)+d", &ev), "+7");
	CHECK_STR(fmt1("%(cpu) d", &ev), " 7");
	CHECK_STR(fmt1("%(cpu)+ d", &ev), "+7");			/* '+' beats ' ' */
	CHECK_STR(fmt1("%(cpu)+5d", &ev), "   +7");
	CHECK_STR(fmt1("%(cpu)+05d", &ev), "+0007");
	CHECK_STR(fmt1("%(cpu)+u", &ev), "7");			/* no sign on unsigned */
	CHECK_STR(fmt1("%(cpu).3d", &ev), "007");
	CHECK_STR(fmt1("%(cpu)6.3d|", &ev), "   007|");
	CHECK_STR(fmt1("%(cpu)06.3d|", &ev), "   007|");		/* precision disables '0' */
	CHECK_STR(fmt1("%(cpu)-6.3d|", &ev), "007   |");
	CHECK_STR(fmt1("%(info2).0d|", &ev), "|");		/* C: no digits for zero */
	CHECK_STR(fmt1("%(info2)#.0o|", &ev), "0|");
	CHECK_STR(fmt1("%(info2)#x", &ev), "0");			/* no 0x on zero */
	CHECK_STR(fmt1("%(rip)#x", &ev), "0xfffff80012345678");
	CHECK_STR(fmt1("%(rip)#X", &ev), "0XFFFFF80012345678");
	CHECK_STR(fmt1("%(pid)#10x|", &ev), "    0x1092|");
	CHECK_STR(fmt1("%(pid)#010x|", &ev), "0x00001092|");
	CHECK_STR(fmt1("%(pid)#o", &ev), "010222");		/* 4242 = 0o10222 */
	CHECK_STR(fmt1("%(pid)#.8o", &ev), "00010222");		/* already leads with 0 */
	CHECK_STR(fmt1("%(reason_name)-16s|", &ev), "IO_INSTRUCTION  |");
	CHECK_STR(fmt1("%(reason_name).2s|", &ev), "IO|");
	CHECK_STR(fmt1("%(reason_name)6.2s|", &ev), "    IO|");
	CHECK_STR(fmt1("%(reason_name)020s|", &ev), "      IO_INSTRUCTION|"); /* no '0' for s */
	CHECK_STR(fmt1("%(isa)5s|%(isa)-5s|", &ev), "  vmx|vmx  |");
	CHECK_STR(fmt1("%(pid)255d", &ev) + 251, "4242");
	CHECK_EQ_U64(strlen(fmt1("%(pid)255d", &ev)), 255);
}

static void test_literals(void)
{
	struct vmexit_event ev = ev_io(), evil = ev_io();

	evil.tgid = 666;
	CHECK_STR(fmt1("100%% a\\tb\\\\c\\nd", &ev), "100% a\tb\\c\nd");
	/* printf directives written as literals come out verbatim: no user text is a format. */
	CHECK_STR(fmt1("%%n %%s %%p %%x %%08d %%%(cpu)d", &ev), "%n %s %p %x %08d %7");
	CHECK_STR(fmt1("[%(guest)s] %%s", &evil), "[%s%n%p] %s");
	CHECK_STR(fmt1("%(guest)-8s|", &evil), "%s%n%p  |");
	/* Names are escaped as in every text output (text_escape.h); width and precision count
	 * columns and never cut a character. */
	evil.tgid = 667;
	CHECK_STR(fmt1("[%(guest)s]", &evil), "[we ird \"na\\me\"\\n\\x0c\\xfe; <b>x]");
	CHECK_STR(fmt1("[%(guest).9s]", &evil), "[we ird \"n]");
	CHECK_STR(fmt1("[%(guest).13s]", &evil), "[we ird \"na\\me]");
	CHECK_STR(fmt1("[%(guest).14s]", &evil), "[we ird \"na\\me\"]");
	evil.tgid = 668;
	CHECK_STR(fmt1("%(guest)-16.16s|", &evil),
		  "g\xc3\xa4st-\xc3\xbcn\xc3\xaf" "c\xc3\xb6" "d\xc3\xa9-seh|");
	CHECK_STR(fmt1("%(guest)24s|", &evil),
		  "  g\xc3\xa4st-\xc3\xbcn\xc3\xaf" "c\xc3\xb6" "d\xc3\xa9-sehr-lang|");
	/* Text that is not a field stays as written, '#' included; a trailing blank too. */
	CHECK_STR(fmt1("a # b (x) ", &ev), "a # b (x) ");
}

static void test_tsc(void)
{
	struct tmpl_env env = { .tsc_mhz = 2000 };
	struct vmexit_event a = ev_io(), b = ev_io(), c = ev_io();
	const char *rules = "default %(tsc)d %(reltsc)d %(time).3f\n";

	a.tid = 10; a.ts_ns = 1000;
	b.tid = 11; b.ts_ns = 1500;
	c.tid = 10; c.ts_ns = 4000;
	/* 2000 MHz: 2 cycles per ns; reltsc is against the same vCPU thread's previous event. */
	CHECK_STR(render_env(rules, &env, &a), "2000 0 0.000\n");
	CHECK_STR(render_env(rules, &env, &b), "3000 0 0.000\n");
	CHECK_STR(render_env(rules, &env, &c), "8000 6000 0.000\n");
	tmpl_env_release(&env);

	env = (struct tmpl_env){ .tsc_mhz = 2000 };
	a = ev_io();
	CHECK_STR(render_env(rules, &env, &a), "10246913578 0 5.123\n");
	tmpl_env_release(&env);

	/* Without a rate both are ns; rel_ns starts at the first event when not preset. */
	env = (struct tmpl_env){ 0 };
	a.tid = 10; a.ts_ns = 1000;
	c.tid = 10; c.ts_ns = 4000;
	rules = "default %(tsc)d %(reltsc)8d %(rel_ns)d\n";
	CHECK_STR(render_env(rules, &env, &a), "1000        0 0\n");
	CHECK_STR(render_env(rules, &env, &c), "4000     3000 3000\n");
	CHECK_EQ_U64(env.first_ts_ns, 1000);
	tmpl_env_release(&env);

	/* An event older than the origin (ring order is not time order) goes negative. */
	env = (struct tmpl_env){ .first_ts_ns = 5200000000ull };
	a = ev_io();
	rules = "default %(rel_ns)d %(reltime).3f %(reltime)09.3f %(reltime)+.1f\n";
	CHECK_STR(render_env(rules, &env, &a), "-76543211 -0.077 -0000.077 -0.1\n");
	tmpl_env_release(&env);
}

/* A rules file in kvmtrace's syntax (written for this test) and the lines it gives. */
static void test_seed_file(void)
{
	const char *rules =
		"# kvmtrace-style rules\n"
		"0x00000000 %(tsc)d (+%(reltsc)6d) other (0x%(event)08x) vcpu 0x%(vcpu)08x "
		"pid 0x%(pid)08x [ 0x%(1)x 0x%(2)x ]\n"
		"0x00010001 %(tsc)d entry\n"
		"0x00010002 %(tsc)d (+%(reltsc)6d) exit vcpu 0x%(vcpu)08x "
		"[ code = 0x%(1)04x, rip = 0x%(2)08x ]\n"
		"0x00020002 %(tsc)d virq\n"
		"0x00020004 %(tsc)d (+%(reltsc)6d) port-in  [ port = 0x%(1)04x, bytes = %(2)d ]\n"
		"0x00020005 %(tsc)d (+%(reltsc)6d) port-out [ port = 0x%(1)04x, bytes = %(2)d ]\n"
		"0x00020006 %(tsc)d cr-read [ cr = %(1)d value = %(2)d ]\n"
		"0x0002000D %(tsc)d intr [ vector = 0x%(1)02x ]\n"
		"0x00020010 %(tsc)d (+%(reltsc)6d) halt vcpu 0x%(vcpu)08x\n"
		"0x00020012 %(tsc)d lmsw [ value = 0x%(1)04x ]\n";
	struct tmpl_env env = { 0 };
	struct vmexit_event io = ev_io(), svmio, hlt, ept, user, cr, intr, lmsw;

	/* SVM IOIO exit info 1: port 0x60 in 31:16, SZ8 (bit 4), IN (bit 0). */
	svmio = ev_make(SVM, 0x7b, (0x60 << 16) | 0x10 | 1);
	svmio.ts_ns = io.ts_ns + 700;
	hlt = ev_make(VMX, 12, 0);
	hlt.ts_ns = io.ts_ns + 1000;
	ept = ev_make(VMX, 48, 0x181);
	ept.ts_ns = io.ts_ns + 1500;
	ept.rip = 0x401000;
	user = ev_make(USR, 2, 0);
	user.type = VMEXIT_EV_USER_EXIT;
	user.rip = 0;
	user.vcpu = 3;
	user.tid = 99;
	cr = ev_make(SVM, 0x03, 0);			/* read_cr3 */
	intr = ev_make(VMX, 1, 0);
	intr.intr_info = 0x800000ef;			/* valid, external, vector 0xef */
	lmsw = ev_make(VMX, 28, (0x0033u << 16) | (3 << 4));	/* LMSW, source 0x33 */

	CHECK_STR(render_env(rules, &env, &io),
		  "5123456789 (+     0) port-out [ port = 0x03f8, bytes = 1 ]\n");
	CHECK_STR(render_env(rules, &env, &svmio),	/* same vCPU thread: +700 */
		  "5123457489 (+   700) port-in  [ port = 0x0060, bytes = 1 ]\n");
	CHECK_STR(render_env(rules, &env, &hlt),
		  "5123457789 (+   300) halt vcpu 0x00000001\n");
	CHECK_STR(render_env(rules, &env, &ept),	/* no PAGE_FAULT rule: VMEXIT's */
		  "5123458289 (+   500) exit vcpu 0x00000001 "
		  "[ code = 0x0030, rip = 0x00401000 ]\n");
	CHECK_STR(render_env(rules, &env, &user),	/* no counterpart: the catch-all */
		  "5123456789 (+     0) other (0x00000000) vcpu 0x00000003 pid 0x00001092 "
		  "[ 0x2 0x0 ]\n");
	CHECK_STR(render_env(rules, &env, &cr), "5123456789 cr-read [ cr = 3 value = 0 ]\n");
	CHECK_STR(render_env(rules, &env, &intr), "5123456789 intr [ vector = 0xef ]\n");
	CHECK_STR(render_env(rules, &env, &lmsw), "5123456789 lmsw [ value = 0x0033 ]\n");
	tmpl_env_release(&env);
}

/* kvmtrace_classify() through %(event): one event per kvmtrace id that carries over. */
static void test_classes(void)
{
	struct { __u16 isa; __u32 reason; __u64 info1; __u32 intr_info; const char *want; } t[] = {
		{ VMX, 0,  0,    0x80000b0e, "20001" },	/* #PF: valid, hw exception, vector 14 */
		{ VMX, 0,  0,    0x80000202, "2000e" },	/* NMI */
		{ VMX, 0,  0,    0x80000b0d, "10002" },	/* #GP: only VMEXIT */
		{ VMX, 1,  0,    0,          "2000d" },
		{ VMX, 10, 0,    0,          "2000c" },
		{ VMX, 12, 0,    0,          "20010" },
		{ VMX, 18, 0,    0,          "2000f" },
		{ VMX, 28, 0x00, 0,          "20007" },	/* mov to CR */
		{ VMX, 28, 0x10, 0,          "20006" },	/* mov from CR */
		{ VMX, 28, 0x20, 0,          "20011" },	/* CLTS */
		{ VMX, 28, 0x30, 0,          "20012" },	/* LMSW */
		{ VMX, 29, 0x10, 0,          "20008" },
		{ VMX, 29, 0x00, 0,          "20009" },
		{ VMX, 30, 0x08, 0,          "20004" },
		{ VMX, 31, 0,    0,          "2000a" },
		{ VMX, 32, 0,    0,          "2000b" },
		{ VMX, 44, 0,    0,          "20013" },
		{ VMX, 48, 0,    0,          "20001" },
		{ VMX, 0x8000001e, 0, 0,     "10002" },	/* failed entry: not an I/O exit */
		{ SVM, 0x00, 0,  0,          "20006" },
		{ SVM, 0x18, 0,  0,          "20007" },
		{ SVM, 0x27, 0,  0,          "20008" },
		{ SVM, 0x37, 0,  0,          "20009" },
		{ SVM, 0x4e, 0,  0,          "20001" },
		{ SVM, 0x60, 0,  0,          "2000d" },
		{ SVM, 0x61, 0,  0,          "2000e" },
		{ SVM, 0x72, 0,  0,          "2000c" },
		{ SVM, 0x78, 0,  0,          "20010" },
		{ SVM, 0x7b, 0,  0,          "20005" },
		{ SVM, 0x7c, 0,  0,          "2000a" },
		{ SVM, 0x7c, 1,  0,          "2000b" },
		{ SVM, 0x81, 0,  0,          "2000f" },
		{ SVM, 0x400, 0, 0,          "20001" },
		{ SVM, 0x402, 0, 0,          "20013" },
		{ SVM, 0x77, 0,  0,          "10002" },	/* pause */
	};
	struct vmexit_event ev;
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		ev = ev_make(t[i].isa, t[i].reason, t[i].info1);
		ev.intr_info = t[i].intr_info;
		CHECK_STR(fmt1("%(event)x", &ev), t[i].want);
	}
	ev = ev_io();
	ev.type = VMEXIT_EV_TSC_OFFSET;
	CHECK_STR(fmt1("%(event)x %(type)s", &ev), "0 tsc_offset");

	/* Word meanings of the page-fault id: VMX #PF (error code, CR2) and SVM NPF. */
	ev = ev_make(VMX, 0, 0x7f001000);
	ev.intr_info = 0x80000b0e;
	ev.error_code = 6;
	CHECK_STR(render_env("0x00020001 %(1)d 0x%(2)x\n", &(struct tmpl_env){ 0 }, &ev),
		  "6 0x7f001000\n");
	ev = ev_make(SVM, 0x400, 0x100000004ull);
	ev.info2 = 0xfee00000;
	CHECK_STR(render_env("0x00020001 0x%(1)x 0x%(2)x\n", &(struct tmpl_env){ 0 }, &ev),
		  "0x100000004 0xfee00000\n");
	/* Words a kvmtrace id has no meaning for are 0. */
	ev = ev_make(VMX, 10, 0x1234);
	CHECK_STR(render_env("0x0002000C %(1)d %(3)d %(5)d\n", &(struct tmpl_env){ 0 }, &ev),
		  "0 0 0\n");
}

static void test_precedence(void)
{
	const char *all = "default D\ntype:exit T\n0x00020010 S\nhlt N\nsvm:hlt Q\n"
			  "type:tsc_offset O\n";
	const char *noname = "default D\ntype:exit T\n0x00020010 S\n";
	const char *nodef = "HLT only\n";
	struct tmpl_env env = { 0 };
	struct vmexit_event vh = ev_make(VMX, 12, 0), sh = ev_make(SVM, 0x78, 0);
	struct vmexit_event uh = ev_make(USR, 5, 0), cpuid = ev_make(VMX, 10, 0), tsc = ev_io();
	struct vmexit_event uio = ev_make(USR, 2, 0);
	struct tmpl_rules *r;
	char err[256];

	uh.type = uio.type = VMEXIT_EV_USER_EXIT;
	tsc.type = VMEXIT_EV_TSC_OFFSET;
	CHECK_STR(render_env(all, &env, &vh), "N\n");		/* bare name over kvmtrace id */
	CHECK_STR(render_env(all, &env, &sh), "Q\n");		/* qualified over bare */
	CHECK_STR(render_env(all, &env, &uh), "N\n");		/* "hlt" is KVM_EXIT_HLT too */
	CHECK_STR(render_env(all, &env, &cpuid), "T\n");
	CHECK_STR(render_env(all, &env, &tsc), "O\n");
	CHECK_STR(render_env(all, &env, &uio), "D\n");
	CHECK_STR(render_env(noname, &env, &vh), "S\n");	/* kvmtrace id over type */
	CHECK_STR(render_env(noname, &env, &sh), "S\n");
	CHECK_STR(render_env(noname, &env, &uh), "D\n");	/* user exits have no class */

	/* Numbers: a bare code in every ISA, 0x + 8 digits of zero is the catch-all. */
	CHECK_STR(render_env("48 num\n0x00000000 catch\n", &env, &cpuid), "catch\n");
	CHECK_STR(render_env("48 num\n", &env, &(struct vmexit_event){ .isa = VMX, .reason = 48,
				.type = VMEXIT_EV_EXIT }), "num\n");
	CHECK_STR(render_env("0x30 num\n", &env, &(struct vmexit_event){ .isa = SVM,
				.reason = 0x30, .type = VMEXIT_EV_EXIT }), "num\n");
	CHECK_STR(render_env("0x0 zero\n", &env, &(struct vmexit_event){ .isa = SVM,
				.reason = 0, .type = VMEXIT_EV_EXIT }), "zero\n");
	CHECK_STR(render_env("svm:0x7b,user:IO io\n", &env, &uio), "io\n");
	CHECK_STR(render_env("PF_excp,EPT_VIOLATION pf\n", &env,
			     &(struct vmexit_event){ .isa = SVM, .reason = 0x4e,
			     .type = VMEXIT_EV_EXIT }), "pf\n");
	/* Reason codes past the flat table (SEV-ES GHCB codes, user errno runs). */
	CHECK_STR(render_env("svm:0x80000004 ghcb\n", &env, &(struct vmexit_event){ .isa = SVM,
				.reason = 0x80000004, .type = VMEXIT_EV_EXIT }), "ghcb\n");
	/* A reason rule never catches a TSC-offset record that happens to carry the code. */
	CHECK_STR(render_env("EXCEPTION_NMI x\n", &env, &(struct vmexit_event){ .isa = VMX,
				.type = VMEXIT_EV_TSC_OFFSET }), "");
	tmpl_env_release(&env);

	/* No matching rule: 0, only the NUL. */
	CHECK(!tmpl_rules_parse(nodef, strlen(nodef), "t", &r, err, sizeof(err)));
	out[0] = 'x';
	CHECK_EQ_U64(tmpl_render(r, &env, &cpuid, out, sizeof(out)), 0);
	CHECK_STR(out, "");
	/* Truncation: snprintf's contract. */
	CHECK_EQ_U64(tmpl_render(r, &env, &vh, out, 3), 5);
	CHECK_STR(out, "on");
	CHECK_EQ_U64(tmpl_render(r, &env, &vh, NULL, 0), 5);
	tmpl_rules_free(r);
	tmpl_env_release(&env);

	/* CRLF rules files. */
	CHECK_STR(render_env("HLT a b\r\n", &env, &vh), "a b\n");
}

static void check_err(const char *rules, const char *want, bool prefix)
{
	struct tmpl_rules *r = NULL;
	char err[2048];
	int ret = tmpl_rules_parse(rules, strlen(rules), "t.fmt", &r, err, sizeof(err));

	CHECK_EQ_U64(ret, (unsigned long long)-EINVAL);
	CHECK(r == NULL);
	if (prefix && !strncmp(err, want, strlen(want)))
		return;
	CHECK_STR(err, want);
}

static void test_errors(void)
{
	check_err("default x %(ripp)x", "t.fmt:1:13: unknown field 'ripp' (did you mean 'rip'?)",
		  false);
	check_err("default %(vcpuu)d",
		  "t.fmt:1:11: unknown field 'vcpuu' (did you mean 'vcpu' or 'cpu'?)", false);
	check_err("default %(bogus)d", "t.fmt:1:11: unknown field 'bogus' (valid: tsc reltsc "
		  "event vcpu pid 1 2 3 4 5 reason reason_name isa guest tid cpu rip info1 info2 "
		  "errno intr_info error_code latency_ns latency_us oncpu_ns blocked_ns runq_ns ts_ns "
		  "rel_ns time reltime walltime reason_label latency type in_flight kvm_event access port gpa msr val size count exception function index eax ebx "
		  "ecx edx found used_max_basic vector soft reinjected fault_address key key_kind key_dir key_name key_label source guest_part_ns exit_part_ns polled_part_ns slept_part_ns runq_part_ns oncpu_part_ns "
		  "halt_end hlt_poll_ns hlt_sleep_ns hlt_runq_ns hlt_other_ns)", false);
	check_err("default %(TSC)d", "t.fmt:1:11: unknown field 'TSC' (did you mean 'tsc'?)",
		  false);
	check_err("default %()d", "t.fmt:1:9: empty field name in '%()'", false);
	check_err("default %(tsc)q",
		  "t.fmt:1:15: bad conversion 'q' for field 'tsc' (use d, u, x, X, o, f or s)",
		  false);
	check_err("default %(tsc)n",
		  "t.fmt:1:15: bad conversion 'n' for field 'tsc' (use d, u, x, X, o, f or s)",
		  false);
	check_err("default %(reason_name)d",
		  "t.fmt:1:23: field 'reason_name' is text: use %(reason_name)s", false);
	check_err("default %(tsc)08",
		  "t.fmt:1:9: missing conversion after '%(tsc)' (use d, u, x, X, o, f or s)",
		  false);
	check_err("default abc %(tsc", "t.fmt:1:13: unterminated '%(' (missing ')')", false);
	check_err("default %(tsc)1000d", "t.fmt:1:15: width too large (at most 255)", false);
	check_err("default %(tsc)256d", "t.fmt:1:15: width too large (at most 255)", false);
	check_err("default %(tsc).300d", "t.fmt:1:16: precision too large (at most 255)", false);
	check_err("default %(tsc)*d", "t.fmt:1:15: '*' width is not supported: give a number",
		  false);
	check_err("default 50%", "t.fmt:1:11: '%' must start a field '%(name)d' or be written '%%'",
		  false);
	check_err("default %d", "t.fmt:1:9: '%' must start a field '%(name)d' or be written '%%'",
		  false);
	check_err("default a\\q", "t.fmt:1:10: unknown escape '\\q' (use \\n, \\t or \\\\)", false);
	check_err("default a\\", "t.fmt:1:10: '\\' at end of line (write '\\\\' for a backslash)",
		  false);
	check_err("HLT a\n# c\n\nhlt b\n",
		  "t.fmt:4:1: duplicate selector 'hlt': vmx:HLT already has the rule on line 1",
		  false);
	check_err("svm:hlt a\nHLT b\n  svm:0x78 c\n",
		  "t.fmt:3:3: duplicate selector 'svm:0x78': svm:hlt already has the rule on "
		  "line 1",
		  false);
	check_err("default a\n0x00000000 b\n",
		  "t.fmt:2:1: duplicate selector '0x00000000': already selected on line 1", false);
	check_err("0x00010002 a\ntype:exit b\n",
		  "t.fmt:2:1: duplicate selector 'type:exit': already selected on line 1", false);
	check_err("0x00020002 a\n0x00020002 b\n",
		  "t.fmt:2:1: duplicate selector '0x00020002': already selected on line 1", false);
	check_err("HLT   ", "t.fmt:1:7: missing template after selector 'HLT'", false);
	check_err("\n\t HLT", "t.fmt:2:6: missing template after selector 'HLT'", false);
	check_err("  FOO_BAR x", "t.fmt:1:3: unknown exit reason 'FOO_BAR'", true);
	check_err("HLT,vmx:NOPE x", "t.fmt:1:5: unknown exit reason 'vmx:NOPE'", true);
	check_err("HLT, x", "t.fmt:1:5: empty item in selector", false);
	check_err("0x00020099 x", "t.fmt:1:1: unknown kvmtrace event id '0x00020099'", true);
	check_err("type:exits x", "t.fmt:1:1: unknown event type in 'type:exits' (use type:exit, "
		  "type:user_exit, type:tsc_offset or type:kvm_event)", false);
	check_err("kvm:pi x", "t.fmt:1:1: unknown kvm event in 'kvm:pi' (use kvm:pio, kvm:mmio, "
		  "kvm:msr, kvm:cpuid, kvm:inj_virq, kvm:page_fault, kvm:msi_set_irq, "
		  "kvm:apic_accept_irq or kvm:halt_poll_ns)", false);
	check_err("kvm:pio a\nkvm:KVM_PIO b\n",
		  "t.fmt:2:1: duplicate selector 'kvm:KVM_PIO': already selected on line 1", false);
	check_err("kvm:mmio %(access)x", "t.fmt:1:19: field 'access' is text: use %(access)s",
		  false);
	{
		struct tmpl_rules *r;
		char err[256];

		CHECK(tmpl_rules_parse("HLT a\0b\n", 8, "t.fmt", &r, err, sizeof(err)) == -EINVAL);
		CHECK_STR(err, "t.fmt:1:6: NUL byte in rules text");
		/* A tiny error buffer is still NUL-terminated. */
		CHECK(tmpl_rules_parse("x", 1, "t.fmt", &r, err, 5) == -EINVAL);
		CHECK_STR(err, "t.fm");
	}
}

/* A kvm event as the kernel packs it (include/vmexit.h), of the reference VM and vCPU. */
static struct vmexit_event ev_kvm(__u32 id, __u64 info1, __u64 info2, __u64 rip,
				  __u32 intr_info, __u32 error_code)
{
	struct vmexit_event ev = ev_io();

	ev.type = VMEXIT_EV_KVM_EVENT;
	ev.isa = 0;
	ev.latency_ns = 0;
	ev.reason = id;
	ev.info1 = info1;
	ev.info2 = info2;
	ev.rip = rip;
	ev.intr_info = intr_info;
	ev.error_code = error_code;
	return ev;
}

static void test_kvm_events(void)
{
	/* COM1 gets 'A'; a 4-byte read of an unbacked GPA; EFER read; CPUID leaf 0 on AMD. */
	struct vmexit_event pio = ev_kvm(VMEXIT_KVM_PIO, 0x3f8, 0x41, 1, 1, 1);
	struct vmexit_event mmio = ev_kvm(VMEXIT_KVM_MMIO, 0x10000000, 0, 0, 0, 4);
	struct vmexit_event msr = ev_kvm(VMEXIT_KVM_MSR, 0xc0000080, 0xd01, 0, 0, 0);
	struct vmexit_event cpuid = ev_kvm(VMEXIT_KVM_CPUID, 0, 0x687475410000000dull,
					   0x69746e65444d4163ull, 0, 1);
	struct vmexit_event virq = ev_kvm(VMEXIT_KVM_INJ_VIRQ, 0xec, 0, 0, 0, 1);
	struct vmexit_event pf = ev_kvm(VMEXIT_KVM_PAGE_FAULT, 0x7f0000001000ull, 0x100000006ull,
					0xffffffff81000000ull, 0, 6);
	struct vmexit_event future = ev_kvm(99, 1, 2, 3, 4, 5), io = ev_io();
	const char *prec = "default D\ntype:kvm_event T\nkvm:pio P\nIO R\ntype:exit E\n";
	struct tmpl_env env = { .guest_name = guest_cb, .first_ts_ns = 5000000000ull };
	struct tmpl_rules *r;
	char err[256], line[512];

	/* The built-in line: the exit columns up to the vCPU, then the event's own fields. */
	CHECK(!tmpl_rules_default(&r, err, sizeof(err)));
#define PFX "     0.123457          5.123457 web1                1 "
	tmpl_render(r, &env, &pio, line, sizeof(line));
	CHECK_STR(line, PFX "pio write port 0x3f8 size 1 val 0x41\n");
	tmpl_render(r, &env, &mmio, line, sizeof(line));
	CHECK_STR(line, PFX "mmio unsatisfied-read gpa 0x10000000 size 4 val 0x0\n");
	mmio.intr_info = 1;
	tmpl_render(r, &env, &mmio, line, sizeof(line));
	CHECK_STR(line, PFX "mmio read gpa 0x10000000 size 4 val 0x0\n");
	tmpl_render(r, &env, &msr, line, sizeof(line));
	CHECK_STR(line, PFX "msr read 0xc0000080 val 0xd01 exception 0\n");
	tmpl_render(r, &env, &cpuid, line, sizeof(line));
	CHECK_STR(line, PFX "cpuid 0x0 index 0x0 eax 0xd ebx 0x68747541 ecx 0x444d4163 "
		  "edx 0x69746e65\n");
	tmpl_render(r, &env, &virq, line, sizeof(line));
	CHECK_STR(line, PFX "inj_virq vector 0xec soft 0 reinjected 1\n");
	/* The error code's bits above 31 are kept (SVM NPF sets them). */
	tmpl_render(r, &env, &pf, line, sizeof(line));
	CHECK_STR(line, PFX "page_fault rip 0xffffffff81000000 address 0x7f0000001000 "
		  "error_code 0x100000006\n");
	/* An id this build does not know: its number and raw words. */
	tmpl_render(r, &env, &future, line, sizeof(line));
	CHECK_STR(line, PFX "kvm_event 99 info1=0x1 info2=0x2\n");
#undef PFX
	tmpl_rules_free(r);
	tmpl_env_release(&env);

	/* Fields: names and values per event, 0 / "" on events that lack them. */
	CHECK_STR(fmt1("%(type)s %(type)d %(kvm_event)s %(kvm_event)d %(event)d", &pio),
		  "kvm_event 4 pio 1 0");
	CHECK_STR(fmt1("%(count)d %(port)04x %(gpa)x %(msr)x %(size)d", &pio), "1 03f8 0 0 1");
	CHECK_STR(fmt1("[%(access)s] %(port)d %(kvm_event)d %(kvm_event)s %(val)d", &io),
		  "[] 0 0 0 0");
	CHECK_STR(fmt1("%(msr)#x=%(val)#x %(access)s gp=%(exception)d", &msr),
		  "0xc0000080=0xd01 read gp=0");
	CHECK_STR(fmt1("%(function)x.%(index)x %(eax)x %(ebx)x %(ecx)x %(edx)x %(found)d "
		       "%(used_max_basic)d", &cpuid),
		  "0.0 d 68747541 444d4163 69746e65 1 0");
	CHECK_STR(fmt1("%(vector)d %(soft)d %(reinjected)d", &virq), "236 0 1");
	CHECK_STR(fmt1("%(fault_address)x %(error_code)x %(rip)x %(info2)x", &pf),
		  "7f0000001000 100000006 ffffffff81000000 100000006");
	/* Raw slots stay raw: a pio's error_code is its size, %(1)..%(5) the generic words. */
	CHECK_STR(fmt1("%(error_code)d %(intr_info)d %(1)d %(2)d %(3)x %(4)x %(5)d", &pio),
		  "1 1 1 1 3f8 41 1");
	CHECK_STR(fmt1("%(port)d %(size)d %(latency_ns)d", &future), "0 0 0");

	/* Precedence: kvm:NAME, then type:kvm_event, then default; reason rules never match. */
	CHECK_STR(render_env(prec, &env, &pio), "P\n");
	CHECK_STR(render_env(prec, &env, &mmio), "T\n");
	CHECK_STR(render_env(prec, &env, &future), "T\n");
	CHECK_STR(render_env("default D\nkvm:pio,kvm:kvm_MMIO P\n", &env, &mmio), "P\n");
	CHECK_STR(render_env("default D\nkvm:pio P\n", &env, &msr), "D\n");
	/* pio's event id is 1, isa 0: no reason rule (code 1 in every ISA) takes it. */
	CHECK_STR(render_env("1 one\ntype:exit E\n", &env, &pio), "");
	tmpl_env_release(&env);
}

static void test_load_and_default(void)
{
	char path[] = "/tmp/test_template_XXXXXX", err[512], line[1024];
	struct tmpl_env env = { .guest_name = guest_cb };
	struct vmexit_event ev = ev_io(), user = ev_make(USR, 6, 0);
	struct tmpl_rules *r;
	FILE *f;
	int fd;

	CHECK(tmpl_rules_load("/nonexistent/x.formats", &r, err, sizeof(err)) == -ENOENT);
	CHECK_STR(err, "/nonexistent/x.formats: No such file or directory");

	fd = mkstemp(path);
	CHECK(fd >= 0);
	if (fd >= 0) {
		f = fdopen(fd, "w");
		fputs("# test\nHLT %(vcpu)d halted\n\nbad %(x)d\n", f);
		fclose(f);
		CHECK(tmpl_rules_load(path, &r, err, sizeof(err)) == -EINVAL);
		snprintf(line, sizeof(line), "%s:4:1: unknown exit reason 'bad'", path);
		CHECK(!strncmp(err, line, strlen(line)));
		unlink(path);
	}

	/* The shipped example must load (tests run from the top of the tree). */
	if (access("docs/examples/default.formats", R_OK) == 0) {
		int ret = tmpl_rules_load("docs/examples/default.formats", &r, err, sizeof(err));

		CHECK_EQ_U64(ret, 0);
		if (ret)
			fprintf(stderr, "%s\n", err);
		tmpl_rules_free(r);
	}

	/* docs/formats.md: the built-in rules are docs/examples/builtin.formats, byte for byte. */
	if (access("docs/examples/builtin.formats", R_OK) == 0) {
		FILE *bf = fopen("docs/examples/builtin.formats", "r");
		static char text[16384];	/* well above the rules: a longer file fails */
		size_t n = bf ? fread(text, 1, sizeof(text) - 1, bf) : 0;

		if (bf)
			fclose(bf);
		text[n] = '\0';
		CHECK_STR(text, tmpl_default_rules);
	}

	/* The built-in line: relative and absolute time, VM, vCPU, reason, latency, details. */
	CHECK(!tmpl_rules_default(&r, err, sizeof(err)));
	env.first_ts_ns = 5000000000ull;
	tmpl_render(r, &env, &ev, line, sizeof(line));
	/* %13.6f %17.6f %-16s %4d %-22s %10s (the tables' reason names and latencies), then
	 * the IO_WRITE rule's decoded port. No CLOCK_REALTIME offset: the time is ts_ns. */
	CHECK_STR(line, "     0.123457          5.123457 web1                1 IO_INSTRUCTION  "
		  "            2.5us rip=0xfffff80012345678 out port=0x03f8 size=1\n");
	user.type = VMEXIT_EV_USER_EXIT;
	user.latency_ns = 1234567;
	tmpl_render(r, &env, &user, line, sizeof(line));
	CHECK_STR(line, "     0.123457          5.123457 web1                1 KVM_EXIT_MMIO   "
		  "            1.2ms errno=0\n");
	/* --keys: the same line with the KEY column after the latency. */
	{
		struct tmpl_rules *kr;
		char kline[1024];

		CHECK(!tmpl_rules_default_keys(&kr, err, sizeof(err)));
		user.key = (struct key_note){ .key = 0x10000000, .kind = KEY_MMIO,
					      .dir = KEY_DIR_WRITE };
		tmpl_render(kr, &env, &user, kline, sizeof(kline));
		CHECK_STR(kline, "     0.123457          5.123457 web1                1 "
			  "KVM_EXIT_MMIO               1.2ms 0x10000000 write           errno=0\n");
		user.key = (struct key_note){};
		tmpl_rules_free(kr);
	}
	/* Never completed: the same line, marked at its end; the latency is its age. */
	user.type |= VMEXIT_EV_IN_FLIGHT;
	tmpl_render(r, &env, &user, line, sizeof(line));
	CHECK_STR(line, "     0.123457          5.123457 web1                1 KVM_EXIT_MMIO   "
		  "            1.2ms errno=0 in_flight\n");
	/* Wall-clock time (CLOCK_REALTIME = CLOCK_MONOTONIC + the offset taken at capture), a
	 * fixed unit (report -u) keeping its suffix, seconds scaled as the tables. */
	env.real_offset_ns = 1700000000000000000ll;
	env.unit_ns = 1000;
	tmpl_render(r, &env, &user, line, sizeof(line));
	CHECK_STR(line, "     0.123457 1700000005.123457 web1                1 KVM_EXIT_MMIO   "
		  "         1234.6us errno=0 in_flight\n");
	env.unit_ns = 0;
	user.latency_ns = 1500000000;
	tmpl_render(r, &env, &user, line, sizeof(line));
	CHECK_STR(line, "     0.123457 1700000005.123457 web1                1 KVM_EXIT_MMIO   "
		  "            1.50s errno=0 in_flight\n");
	env.real_offset_ns = 0;

	/* tmpl_render_file writes what tmpl_render returns, long lines included. */
	f = tmpfile();
	CHECK(f != NULL);
	if (f) {
		struct tmpl_rules *big;
		char rules[64];
		int n;

		snprintf(rules, sizeof(rules), "default %%(pid)255d%%(pid)255d%%(pid)255d\n");
		CHECK(!tmpl_rules_parse(rules, strlen(rules), "t", &big, err, sizeof(err)));
		n = tmpl_render_file(r, &env, &ev, f);
		CHECK_EQ_U64(n, 134);
		for (int i = 0; i < 10; i++)
			CHECK_EQ_U64(tmpl_render_file(big, &env, &ev, f), 766);
		CHECK_EQ_U64(ftell(f), 134 + 7660);
		tmpl_rules_free(big);
		fclose(f);
	}
	tmpl_rules_free(r);
	tmpl_env_release(&env);
}

/*
 * Differential: the integer formatter against the C library for every defined flag
 * combination. The format given to snprintf here is built by the test from known pieces.
 */
static unsigned int vs_printf_bad;

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
static void vs_printf_unsigned(const char *spec, char conv)
{
	static const unsigned long long vals[] = { 0, 1, 7, 8, 42, 0xff, 4242, 0xdeadbeef,
						    0x7fffffffffffffffull, ~0ull };
	struct vmexit_event ev = ev_io();
	char tmpl[64], cfmt[40], want[256];
	size_t i;

	snprintf(tmpl, sizeof(tmpl), "%%(info1)%s%c", spec, conv);
	snprintf(cfmt, sizeof(cfmt), "%%%sll%c", spec, conv);
	for (i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		ev.info1 = vals[i];
		snprintf(want, sizeof(want), cfmt, vals[i]);
		if (strcmp(fmt1(tmpl, &ev), want) && vs_printf_bad++ < 10)
			fprintf(stderr, "%s: got '%s' want '%s'\n", tmpl, out, want);
	}
}

static void vs_printf_signed(const char *spec)
{
	static const long long vals[] = { 0, 1, -1, 42, -42, -123456789, 9223372036854775807ll };
	/* rel_ns = ts_ns - first_ts_ns: any signed 64-bit value. */
	struct tmpl_env env = { .first_ts_ns = 1ull << 63 };
	struct vmexit_event ev = ev_io();
	char tmpl[64], cfmt[40], want[256];
	size_t i;

	snprintf(tmpl, sizeof(tmpl), "default %%(rel_ns)%sd\n", spec);
	snprintf(cfmt, sizeof(cfmt), "%%%slld\n", spec);
	for (i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		ev.ts_ns = (1ull << 63) + (unsigned long long)vals[i];
		snprintf(want, sizeof(want), cfmt, vals[i]);
		if (strcmp(render_env(tmpl, &env, &ev), want) && vs_printf_bad++ < 10)
			fprintf(stderr, "%s: got '%s' want '%s'\n", tmpl, out, want);
	}
	tmpl_env_release(&env);
}
#pragma GCC diagnostic pop

static void test_vs_printf(void)
{
	static const int widths[] = { 0, 1, 3, 8, 21, 30 };
	static const int precs[] = { -1, 0, 1, 4, 25 };
	unsigned int fl, wi, pi;
	const char *c;
	char spec[32];

	for (fl = 0; fl < 32; fl++) {
		for (wi = 0; wi < sizeof(widths) / sizeof(widths[0]); wi++) {
			for (pi = 0; pi < sizeof(precs) / sizeof(precs[0]); pi++) {
				int n = snprintf(spec, sizeof(spec), "%s%s%s%s%s",
						 fl & 1 ? "-" : "", fl & 2 ? "0" : "",
						 fl & 4 ? "+" : "", fl & 8 ? " " : "",
						 fl & 16 ? "#" : "");

				if (widths[wi])
					n += snprintf(spec + n, sizeof(spec) - n, "%d", widths[wi]);
				if (precs[pi] >= 0)
					snprintf(spec + n, sizeof(spec) - n, ".%d", precs[pi]);
				/* '+' and ' ' are for signed conversions, '#' not for d. */
				if (!(fl & 12))
					for (c = "uxXo"; *c; c++)
						vs_printf_unsigned(spec, *c);
				if (!(fl & 16))
					vs_printf_signed(spec);
			}
		}
	}
	CHECK_EQ_U64(vs_printf_bad, 0);
}

int main(void)
{
	test_fields();
	test_flags();
	test_literals();
	test_tsc();
	test_seed_file();
	test_classes();
	test_precedence();
	test_errors();
	test_load_and_default();
	test_kvm_events();
	test_vs_printf();
	CHECK_DONE("test_template");
}
