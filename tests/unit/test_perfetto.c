// SPDX-License-Identifier: GPL-2.0
/*
 * Perfetto / Chrome JSON writer: writes a trace of known events, has python3's json module
 * parse it, and checks every slice, instant and name against what was written.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "trace_events.h"
#include "perfetto.h"

/*
 * Prints one canonical line per trace event, with track ids resolved to the names the UI
 * shows, so the C side compares plain strings. Exits 1 if the file is not valid JSON.
 */
static const char py[] =
"import json, sys, decimal\n"
"t = json.load(open(sys.argv[1], encoding='utf-8', errors='strict'),\n"
"              parse_float=decimal.Decimal)\n"
"assert isinstance(t, list)\n"
"procs, threads, tsc = {}, {}, {}\n"
"for e in t:\n"
"    if e['ph'] == 'M' and e['name'] == 'process_name':\n"
"        procs[e['pid']] = e['args']['name']\n"
"    if e['ph'] == 'M' and e['name'] == 'thread_name':\n"
"        k = (e['pid'], e['tid'])\n"
"        assert threads.get(k, e['args']['name']) == e['args']['name']\n"
"        threads[k] = e['args']['name']\n"
"        if 'tsc_offset' in e['args']:\n"
"            tsc[k] = e['args']['tsc_offset']\n"
"names = {}\n"
"for k, n in threads.items():\n"
"    assert (k[0], n) not in names, 'two tracks named ' + n\n"
"    names[(k[0], n)] = k\n"
"def q(s): return json.dumps(s, ensure_ascii=True)\n"
"def us(x): return int(x * 1000)\n"
"for pid, n in sorted(procs.items()): print('P|%d|%s' % (pid, q(n)))\n"
"for k, v in sorted(tsc.items()): print('T|%d|%s|%s' % (k[0], threads[k], v))\n"
"for e in t:\n"
"    a = json.dumps(e.get('args'), sort_keys=True)\n"
"    if e['ph'] == 'X':\n"
"        print('X|%d|%s|%d|%d|%s|%s|%s' % (e['pid'], threads[(e['pid'], e['tid'])],\n"
"              us(e['ts']), us(e['dur']), e['cat'], q(e['name']), a))\n"
"    elif e['ph'] == 'i':\n"
"        th = threads.get((e['pid'], e['tid']), '-') if e['s'] == 't' else '-'\n"
"        print('I|%s|%d|%s|%d|%s|%s|%s' % (e['s'], e['pid'], th, us(e['ts']), e['cat'],\n"
"              q(e['name']), a))\n"
"    elif e['ph'] == 'C':\n"
"        print('C|%d|%d|%s' % (e['pid'], us(e['ts']), a))\n"
"    else:\n"
"        assert e['ph'] == 'M', e\n";

static char lines[128][1024];
static int nlines;

static bool run_python(const char *path)
{
	char cmd[512];
	FILE *p;

	snprintf(cmd, sizeof(cmd), "python3 -c \"$VMEXIT_PY\" %s", path);
	setenv("VMEXIT_PY", py, 1);
	p = popen(cmd, "r");
	if (!p)
		return false;
	nlines = 0;
	while (nlines < 128 && fgets(lines[nlines], sizeof(lines[0]), p)) {
		lines[nlines][strcspn(lines[nlines], "\n")] = '\0';
		nlines++;
	}
	return pclose(p) == 0;
}

static bool has_line(const char *want)
{
	for (int i = 0; i < nlines; i++)
		if (!strcmp(lines[i], want))
			return true;
	fprintf(stderr, "missing line: %s\n", want);
	return false;
}

static int count_prefix(const char *prefix)
{
	int n = 0;

	for (int i = 0; i < nlines; i++)
		n += !strncmp(lines[i], prefix, strlen(prefix));
	return n;
}

/* The args line python prints for e (sorted keys, json.dumps separators). */
static void expect_args(char *buf, size_t len, const struct vmexit_event *e, const char *isa)
{
	int n = snprintf(buf, len, "{\"cpu\": %u, ", e->cpu);

	if (e->type == VMEXIT_EV_USER_EXIT)
		n += snprintf(buf + n, len - n, "\"errno\": %lld, ", (long long)e->info1);
	snprintf(buf + n, len - n, "\"error_code\": \"0x%x\", \"info1\": \"0x%llx\", "
		 "\"info2\": \"0x%llx\", \"intr_info\": \"0x%x\", \"isa\": \"%s\", "
		 "\"latency_ns\": %llu, \"reason\": %u, \"rip\": \"0x%llx\", \"tid\": %u, "
		 "\"vcpu\": %d}", e->error_code, (unsigned long long)e->info1,
		 (unsigned long long)e->info2, e->intr_info, isa,
		 (unsigned long long)e->latency_ns, e->reason, (unsigned long long)e->rip,
		 e->tid, e->vcpu);
}

static void check_slice(const struct vmexit_event *e, const char *track, const char *name,
			const char *isa)
{
	char args[512], want[1024];

	expect_args(args, sizeof(args), e, isa);
	snprintf(want, sizeof(want), "X|%u|%s|%llu|%llu|%s|\"%s\"|%s", e->tgid, track,
		 (unsigned long long)e->ts_ns, (unsigned long long)e->latency_ns,
		 e->type == VMEXIT_EV_USER_EXIT ? "kvm_userspace_exit" : "kvm_exit", name, args);
	CHECK(has_line(want));
}

static struct vmexit_event kvm_ev(__u32 tid, __s32 vcpu, __u64 ts, __u32 id, __u64 info1,
				   __u64 info2, __u64 rip, __u32 intr_info, __u32 error_code)
{
	struct vmexit_event e = {
		.ts_ns = ts, .rip = rip, .info1 = info1, .info2 = info2, .intr_info = intr_info,
		.error_code = error_code, .tgid = 400, .tid = tid, .vcpu = vcpu, .reason = id,
		.cpu = 7, .type = VMEXIT_EV_KVM_EVENT,
	};
	return e;
}

/*
 * The other kvm tracepoints: one instant each on the vCPU's kvm track, inside the exit they
 * happened in (a pio arrives before the exit that contains it: exits are emitted when they
 * complete), never a slice, and never counted in the exit rates.
 */
static void test_kvm_events(void)
{
	char path[] = "/tmp/vmexit-test-perfetto-kvmXXXXXX";
	int fd = mkstemp(path);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	struct perfetto_writer *w;
	struct vmexit_event x, k[6];

	CHECK(f != NULL);
	if (!f)
		return;
	w = perfetto_open(f);
	perfetto_guest(w, 400, "kvm");
	/* pio write of 'A' to COM1, during the IO exit [10000, 15000) of vCPU 1. */
	k[0] = kvm_ev(4001, 1, 12000, VMEXIT_KVM_PIO, 0x3f8, 0x41, 1, 1, 1);
	x = ev(VMEXIT_EV_EXIT, 400, 4001, 1, 10000, 5000, VMEXIT_ISA_VMX, 30);
	/* A thread whose vCPU nobody named: its own track. */
	k[1] = kvm_ev(4002, -1, 13000, VMEXIT_KVM_MMIO, 0xfee000b0, 0x1122334455667788ull, 0,
		      2, 4);
	/* CPUID leaf 0 on an AMD host: ebx:eax in info2, edx:ecx in rip. */
	k[2] = kvm_ev(4001, 1, 16000, VMEXIT_KVM_CPUID, 0, 0x687475410000000dull,
		      0x69746e65444d4163ull, 0, 1);
	k[3] = kvm_ev(4001, 1, 17000, VMEXIT_KVM_PAGE_FAULT, 0x7f0000001000ull, 0x100000006ull,
		      0xffffffff81000000ull, 0, 6);
	k[4] = kvm_ev(4001, 1, 18000, VMEXIT_KVM_MSR, 0xc0000080, 0xd01, 0, 1, 1);
	/* An event id from a newer vmexit: named by its number, no fields. */
	k[5] = kvm_ev(4001, 1, 19000, 99, 1, 2, 3, 4, 5);
	perfetto_event(w, &k[0], NULL);
	perfetto_event(w, &x, "IO_INSTRUCTION");
	for (int i = 1; i < 6; i++)
		perfetto_event(w, &k[i], NULL);
	CHECK_EQ_U64(perfetto_close(w), 0);
	fclose(f);
	CHECK(run_python(path));
	for (int i = 0; i < nlines; i++)
		if (getenv("V"))
			printf("%s\n", lines[i]);
	CHECK_EQ_U64(count_prefix("X|"), 1);
	CHECK(count_prefix("X|400|vCPU 1|10000|5000|kvm_exit|\"IO_INSTRUCTION\"|") == 1);
	CHECK_EQ_U64(count_prefix("I|"), 6);
	CHECK(has_line("I|t|400|vCPU 1|12000|kvm_event|\"kvm_pio\"|{\"access\": \"write\", "
		       "\"count\": 1, \"cpu\": 7, \"port\": \"0x3f8\", \"size\": 1, "
		       "\"tid\": 4001, \"val\": \"0x41\", \"vcpu\": 1}"));
	CHECK(has_line("I|t|400|thread 4002|13000|kvm_event|\"kvm_mmio\"|{\"access\": \"write\", "
		       "\"cpu\": 7, \"gpa\": \"0xfee000b0\", \"size\": 4, \"tid\": 4002, "
		       "\"val\": \"0x1122334455667788\", \"vcpu\": -1}"));
	CHECK(has_line("I|t|400|vCPU 1|16000|kvm_event|\"kvm_cpuid\"|{\"cpu\": 7, "
		       "\"eax\": \"0xd\", \"ebx\": \"0x68747541\", \"ecx\": \"0x444d4163\", "
		       "\"edx\": \"0x69746e65\", \"found\": 1, \"function\": \"0x0\", "
		       "\"index\": \"0x0\", \"tid\": 4001, \"used_max_basic\": 0, \"vcpu\": 1}"));
	CHECK(has_line("I|t|400|vCPU 1|17000|kvm_event|\"kvm_page_fault\"|{\"cpu\": 7, "
		       "\"error_code\": \"0x100000006\", \"fault_address\": \"0x7f0000001000\", "
		       "\"rip\": \"0xffffffff81000000\", \"tid\": 4001, \"vcpu\": 1}"));
	CHECK(has_line("I|t|400|vCPU 1|18000|kvm_event|\"kvm_msr\"|{\"access\": \"write\", "
		       "\"cpu\": 7, \"exception\": 1, \"msr\": \"0xc0000080\", \"tid\": 4001, "
		       "\"val\": \"0xd01\", \"vcpu\": 1}"));
	CHECK(has_line("I|t|400|vCPU 1|19000|kvm_event|\"kvm_event_99\"|{\"cpu\": 7, "
		       "\"tid\": 4001, \"vcpu\": 1}"));
	/* The rates count the one exit only: 10/s in window 0, then the drop to 0. */
	CHECK(has_line("C|400|0|{\"exits to VMM\": 0, \"guest exits\": 10}"));
	CHECK(has_line("C|400|100000000|{\"exits to VMM\": 0, \"guest exits\": 0}"));
	CHECK_EQ_U64(count_prefix("C|"), 4);	/* and the same on its reason's own track */
	unlink(path);
}

/*
 * The exact text, byte for byte, of a small trace: edge values (0, the largest u64 and u32, a
 * negative vCPU, errno and TSC offset, times before the base, ns ending in zeros), one event
 * of each kind, and the line layout that lets a trace cut short still load.
 */
static void test_exact_text(void)
{
	static const char want[] =
		"[\n"
		"{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":4294967295,"
		"\"args\":{\"name\":\"q\\\"\\u0001\"}},\n"
		"{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":4294967295,\"tid\":1073741824,"
		"\"args\":{\"name\":\"vCPU 0\"}},\n"
		"{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":4294967295,"
		"\"tid\":1073741824,\"args\":{\"sort_index\":0}},\n"
		"{\"name\":\"EPT_VIOLATION\",\"cat\":\"kvm_exit\",\"ph\":\"X\","
		"\"pid\":4294967295,\"tid\":1073741824,\"ts\":-0.001,\"dur\":0.000,"
		"\"args\":{\"reason\":48,\"isa\":\"vmx\",\"rip\":\"0xffffffffffffffff\","
		"\"info1\":\"0x0\",\"info2\":\"0xdeadbeefcafef00d\",\"intr_info\":\"0xffffffff\","
		"\"error_code\":\"0x0\",\"latency_ns\":0,\"cpu\":4294967295,\"tid\":4294967295,"
		"\"vcpu\":0}},\n"
		"{\"name\":\"exits/s\",\"ph\":\"C\",\"pid\":4294967295,\"ts\":-0.001,"
		"\"args\":{\"guest exits\":10,\"exits to VMM\":0}},\n"
		"{\"name\":\"EPT_VIOLATION exits/s\",\"ph\":\"C\",\"pid\":4294967295,"
		"\"ts\":-0.001,\"args\":{\"value\":10}},\n"
		/* the drop to 0 where the quiet begins, not where the next exit comes */
		"{\"name\":\"exits/s\",\"ph\":\"C\",\"pid\":4294967295,\"ts\":99999.999,"
		"\"args\":{\"guest exits\":0,\"exits to VMM\":0}},\n"
		"{\"name\":\"EPT_VIOLATION exits/s\",\"ph\":\"C\",\"pid\":4294967295,"
		"\"ts\":99999.999,\"args\":{\"value\":0}},\n"
		"{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":9,\"tid\":1073741825,"
		"\"args\":{\"name\":\"thread 10 (VMM)\"}},\n"
		"{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":9,\"tid\":1073741825,"
		"\"args\":{\"sort_index\":4294967317}},\n"
		"{\"name\":\"a\\\\b\",\"cat\":\"kvm_userspace_exit\",\"ph\":\"X\",\"pid\":9,"
		"\"tid\":1073741825,\"ts\":31535999123456.788,\"dur\":18446744073709551.615,"
		"\"args\":{\"reason\":2,\"isa\":\"user\",\"rip\":\"0x7009d2b5fecd15\","
		"\"info1\":\"0xfffffffffffffffc\",\"info2\":\"0xdeadbeefcafef00d\","
		"\"intr_info\":\"0x800000ec\",\"error_code\":\"0x3\","
		"\"latency_ns\":18446744073709551615,\"cpu\":7,\"tid\":10,\"vcpu\":-1,"
		"\"errno\":-4}},\n"
		"{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":9,\"tid\":1073741826,"
		"\"args\":{\"name\":\"vCPU 3\",\"tsc_offset\":\"-9223372036854775808\","
		"\"tsc_offset_hex\":\"0x8000000000000000\"}},\n"
		"{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":9,\"tid\":1073741826,"
		"\"args\":{\"sort_index\":6}},\n"
		"{\"name\":\"tsc_offset\",\"cat\":\"kvm_tsc_offset\",\"ph\":\"i\",\"s\":\"t\","
		"\"pid\":9,\"tid\":1073741826,\"ts\":999999.999,\"args\":{\"previous\":\"0\","
		"\"next\":\"-9223372036854775808\",\"previous_hex\":\"0x0\","
		"\"next_hex\":\"0x8000000000000000\",\"cpu\":7,\"tid\":11}},\n"
		"{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":400,\"tid\":1073741827,"
		"\"args\":{\"name\":\"vCPU 3\"}},\n"
		"{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":400,\"tid\":1073741827,"
		"\"args\":{\"sort_index\":6}},\n"
		"{\"name\":\"kvm_pio\",\"cat\":\"kvm_event\",\"ph\":\"i\",\"s\":\"t\","
		"\"pid\":400,\"tid\":1073741827,\"ts\":1000000.999,"
		"\"args\":{\"access\":\"write\",\"port\":\"0x3f8\",\"size\":1,\"count\":1,"
		"\"val\":\"0x41\",\"cpu\":7,\"tid\":11,\"vcpu\":3}},\n"
		"{\"name\":\"npf\",\"cat\":\"kvm_exit\",\"ph\":\"X\",\"pid\":9,"
		"\"tid\":1073741826,\"ts\":0.000,\"dur\":1.000,\"args\":{\"reason\":1024,"
		"\"isa\":\"svm\",\"rip\":\"0xffffffffbc9aca01\",\"info1\":\"0x10\","
		"\"info2\":\"0xdeadbeefcafef00d\",\"intr_info\":\"0x800000ec\","
		"\"error_code\":\"0x3\",\"latency_ns\":1000,\"cpu\":7,\"tid\":11,\"vcpu\":3}},\n"
		"{\"name\":\"lost 1 record\",\"cat\":\"vmexit_lost\",\"ph\":\"i\",\"s\":\"g\","
		"\"pid\":0,\"tid\":0,\"ts\":-0.001,\"args\":{\"lost\":1}},\n"
		"{\"name\":\"exits/s\",\"ph\":\"C\",\"pid\":9,\"ts\":31535999099999.999,"
		"\"args\":{\"guest exits\":10,\"exits to VMM\":10}},\n"
		/* per reason: a caller's name for a slice does not rename its reason */
		"{\"name\":\"npf exits/s\",\"ph\":\"C\",\"pid\":9,\"ts\":31535999099999.999,"
		"\"args\":{\"value\":10}},\n"
		"{\"name\":\"IO exits to VMM/s\",\"ph\":\"C\",\"pid\":9,"
		"\"ts\":31535999099999.999,\"args\":{\"value\":10}},\n"
		"{\"name\":\"exits/s\",\"ph\":\"C\",\"pid\":9,\"ts\":31535999199999.999,"
		"\"args\":{\"guest exits\":0,\"exits to VMM\":0}},\n"
		"{\"name\":\"npf exits/s\",\"ph\":\"C\",\"pid\":9,\"ts\":31535999199999.999,"
		"\"args\":{\"value\":0}},\n"
		"{\"name\":\"IO exits to VMM/s\",\"ph\":\"C\",\"pid\":9,"
		"\"ts\":31535999199999.999,\"args\":{\"value\":0}},\n"
		"{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":9,\"tid\":1073741826,"
		"\"args\":{\"name\":\"vCPU 3\",\"tsc_offset\":\"-9223372036854775808\","
		"\"tsc_offset_hex\":\"0x8000000000000000\"}}\n"
		"]\n";
	struct vmexit_event e[5] = {
		ev(VMEXIT_EV_EXIT, UINT32_MAX, UINT32_MAX, 0, 1000000000, 0, VMEXIT_ISA_VMX, 48),
		ev(VMEXIT_EV_USER_EXIT, 9, 10, -1, 31536000123456789, UINT64_MAX, VMEXIT_ISA_USER,
		   2),
		ev(VMEXIT_EV_TSC_OFFSET, 9, 11, 3, 2000000000, 0, 0, 0),
		kvm_ev(11, 3, 2000001000, VMEXIT_KVM_PIO, 0x3f8, 0x41, 1, 1, 1),
		ev(VMEXIT_EV_EXIT, 9, 11, 3, 1000000001, 1000, VMEXIT_ISA_SVM, 0x400),
	};
	struct perfetto_writer *w;
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);

	CHECK(f != NULL);
	if (!f)
		return;
	e[0].rip = UINT64_MAX;
	e[0].info1 = 0;
	e[0].intr_info = UINT32_MAX;
	e[0].error_code = 0;
	e[0].cpu = UINT32_MAX;
	e[1].info1 = (__u64)-4;		/* -EINTR */
	e[2].info1 = 0;
	e[2].info2 = 1ull << 63;	/* the most negative offset */
	w = perfetto_open(f);
	perfetto_time_base(w, 1000000001);
	perfetto_guest(w, UINT32_MAX, "q\"\x01");
	perfetto_event(w, &e[0], NULL);
	perfetto_event(w, &e[1], "a\\b");
	perfetto_event(w, &e[2], NULL);
	perfetto_event(w, &e[3], NULL);
	perfetto_event(w, &e[4], NULL);
	perfetto_lost(w, 1000000000, 1, NULL);
	CHECK_EQ_U64(perfetto_close(w), 0);
	fclose(f);
	if (getenv("V"))
		fputs(buf, stdout);
	CHECK_STR(buf, want);
	free(buf);
}

int main(void)
{
	char path[] = "/tmp/vmexit-test-perfettoXXXXXX";
	int fd = mkstemp(path);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	struct perfetto_writer *w;
	struct vmexit_event e[9];
	__u64 big = 31536000123456789ull;	/* a year of uptime: the text keeps every ns */

	CHECK(f != NULL);
	if (!f)
		CHECK_DONE("perfetto");
	w = perfetto_open(f);
	CHECK(w != NULL);
	perfetto_guest(w, 100, "web \"prod\"\\1");
	perfetto_guest(w, 200, "ctl\t\x01\n\xff\xfe end");

	e[0] = ev(VMEXIT_EV_EXIT, 100, 1001, 0, 1000, 2500, VMEXIT_ISA_VMX, 30);
	e[1] = ev(VMEXIT_EV_USER_EXIT, 100, 1001, 0, 1200, 2000, VMEXIT_ISA_USER, 2);
	e[2] = ev(VMEXIT_EV_EXIT, 100, 1002, 1, big, 123, VMEXIT_ISA_VMX, 12);
	/* Thread 1003 before its vCPU is known, then with it, then again without. */
	e[3] = ev(VMEXIT_EV_USER_EXIT, 100, 1003, -1, 5000, 10, VMEXIT_ISA_USER, 17);
	e[4] = ev(VMEXIT_EV_EXIT, 100, 1003, 2, 6000, 20, VMEXIT_ISA_VMX, 1);
	e[5] = ev(VMEXIT_EV_USER_EXIT, 100, 1003, -1, 7000, 30, VMEXIT_ISA_USER, 2);
	e[6] = ev(VMEXIT_EV_EXIT, 200, 2001, 0, 8000, 40, VMEXIT_ISA_SVM, 0x7b);
	e[7] = ev(VMEXIT_EV_TSC_OFFSET, 200, 2001, 0, 9000, 0, 0, 0);
	e[7].info1 = (__u64)-5000000000ll;
	e[7].info2 = (__u64)-123456789012345ll;
	e[8] = ev(VMEXIT_EV_EXIT, 300, 3001, 0, 9500, 1, VMEXIT_ISA_VMX, 0x7777);

	perfetto_event(w, &e[0], "IO_INSTRUCTION");
	perfetto_event(w, &e[1], "IO");
	perfetto_event(w, &e[2], "HLT");
	perfetto_event(w, &e[3], "INTR");
	perfetto_event(w, &e[4], "EXTERNAL_INTERRUPT");
	perfetto_event(w, &e[5], "IO");
	perfetto_event(w, &e[6], "io");
	perfetto_event(w, &e[7], NULL);
	perfetto_lost(w, 9100, 42, "ring buffer full");
	perfetto_event(w, &e[8], NULL);	/* unknown reason: named by reason_str() */

	/* Stopped early (kill -9): everything so far is whole events, "]" is all that's missing. */
	fflush(f);
	{
		char cut[300];

		snprintf(cut, sizeof(cut), "cp %s %s.cut && echo ']' >> %s.cut", path, path, path);
		CHECK(system(cut) == 0);
		snprintf(cut, sizeof(cut), "%s.cut", path);
		CHECK(run_python(cut));
		CHECK_EQ_U64(count_prefix("X|"), 8);
		unlink(cut);
	}

	CHECK_EQ_U64(perfetto_close(w), 0);
	fclose(f);
	CHECK(run_python(path));
	for (int i = 0; i < nlines; i++)
		if (getenv("V"))
			printf("%s\n", lines[i]);

	/* Names survive quoting, control characters and invalid UTF-8 (as U+FFFD). */
	CHECK(has_line("P|100|\"web \\\"prod\\\"\\\\1\""));
	CHECK(has_line("P|200|\"ctl\\t\\u0001\\n\\ufffd\\ufffd end\""));
	CHECK_EQ_U64(count_prefix("P|"), 2);

	/* Exactly one slice per exit, on the right track, with the right fields. */
	CHECK_EQ_U64(count_prefix("X|"), 8);
	check_slice(&e[0], "vCPU 0", "IO_INSTRUCTION", "vmx");
	check_slice(&e[1], "vCPU 0 (VMM)", "IO", "user");
	check_slice(&e[2], "vCPU 1", "HLT", "vmx");
	check_slice(&e[3], "thread 1003 (VMM)", "INTR", "user");
	check_slice(&e[4], "vCPU 2", "EXTERNAL_INTERRUPT", "vmx");
	check_slice(&e[5], "vCPU 2 (VMM)", "IO", "user");
	check_slice(&e[6], "vCPU 0", "io", "svm");
	check_slice(&e[8], "vCPU 0", "UNKNOWN_0x7777", "vmx");

	/* TSC offset: an instant on the vCPU track, and the latest value in its metadata. */
	CHECK(has_line("I|t|200|vCPU 0|9000|kvm_tsc_offset|\"tsc_offset\"|{\"cpu\": 7, "
		       "\"next\": \"-123456789012345\", \"next_hex\": \"0xffff8fb779f22087\", "
		       "\"previous\": \"-5000000000\", \"previous_hex\": \"0xfffffffed5fa0e00\", "
		       "\"tid\": 2001}"));
	CHECK(has_line("T|200|vCPU 0|-123456789012345"));
	CHECK_EQ_U64(count_prefix("T|"), 1);

	/* Lost records: a global instant. */
	CHECK(has_line("I|g|0|-|9100|vmexit_lost|\"lost 42 records (ring buffer full)\"|"
		       "{\"lost\": 42}"));
	CHECK_EQ_U64(count_prefix("I|"), 2);

	/*
	 * Rate counters per VM and 100 ms window of start times. e[2] (a year in) closes window
	 * 0 with e[0] and e[1]; the later-written, earlier-started e[3..8] count in e[2]'s
	 * window; close draws that window and then the drop to 0 of every VM that had exits.
	 */
	CHECK(has_line("C|100|0|{\"exits to VMM\": 10, \"guest exits\": 10}"));
	/* The year of quiet after window 0 starts with the drop to 0. */
	CHECK(has_line("C|100|100000000|{\"exits to VMM\": 0, \"guest exits\": 0}"));
	CHECK(has_line("C|100|31536000100000000|{\"exits to VMM\": 20, \"guest exits\": 20}"));
	CHECK(has_line("C|200|31536000100000000|{\"exits to VMM\": 0, \"guest exits\": 10}"));
	CHECK(has_line("C|300|31536000100000000|{\"exits to VMM\": 0, \"guest exits\": 10}"));
	CHECK(has_line("C|100|31536000200000000|{\"exits to VMM\": 0, \"guest exits\": 0}"));
	CHECK(has_line("C|200|31536000200000000|{\"exits to VMM\": 0, \"guest exits\": 0}"));
	CHECK(has_line("C|300|31536000200000000|{\"exits to VMM\": 0, \"guest exits\": 0}"));
	/* Each of the 7 (VM, reason) series: its window and its drop (VM 100's user IO two of
	 * each, at 0 and a year in). */
	CHECK(has_line("C|100|31536000100000000|{\"value\": 10}"));
	CHECK_EQ_U64(count_prefix("C|"), 8 + 2 * 8);

	/* A time base: timestamps become relative, earlier ones negative; durations unchanged. */
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (f) {
		w = perfetto_open(f);
		perfetto_time_base(w, 5000);
		perfetto_event(w, &e[0], "IO_INSTRUCTION");
		perfetto_event(w, &e[4], "EXTERNAL_INTERRUPT");
		CHECK_EQ_U64(perfetto_close(w), 0);
		fclose(f);
		CHECK(run_python(path));
		e[0].ts_ns = -4000;
		e[4].ts_ns = 1000;
		CHECK_EQ_U64(count_prefix("X|"), 2);
		CHECK(count_prefix("X|100|vCPU 0|-4000|2500|") == 1);
		CHECK(count_prefix("X|100|vCPU 2|1000|20|") == 1);
		CHECK(has_line("C|100|-5000|{\"exits to VMM\": 0, \"guest exits\": 20}"));
	}

	unlink(path);
	test_kvm_events();
	test_exact_text();
	CHECK_DONE("perfetto");
}
