// SPDX-License-Identifier: GPL-2.0
/*
 * --qmp: QEMU's `info mtree -f` (a real one, captured from qemu-system-x86_64 7.2 -accel kvm
 * -device virtio-rng-pci after SeaBIOS mapped the BARs) read into names; the QMP sockets on
 * QEMU command lines; the QMP client against a fake QEMU in a thread: a good conversation, and
 * every way a socket can fail (not a socket, silent, garbage, closing mid-reply, an error),
 * each said in one line within the timeout; qmp_names asking, re-asking and falling back.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "check.h"
#include "key_groups.h"
#include "key_names.h"
#include "mtree_map.h"
#include "qemu_opts.h"
#include "qmp_client.h"
#include "qmp_cmdline.h"
#include "qmp_ask.h"
#include "qmp_names.h"
#include "text_escape.h"

#define FIXTURE	"tests/unit/data/qemu-7.2-pc-virtio-rng.mtree-f.txt"
#define ARGS(lit)	lit, sizeof(lit) - 1

static char *read_file(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = calloc(1, 1 << 20);
	size_t n;

	if (!f || !buf) {
		fprintf(stderr, "cannot read %s (run from the top of the tree)\n", path);
		exit(1);
	}
	n = fread(buf, 1, (1 << 20) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static void test_mtree(const char *text)
{
	struct mtree_map m = {};
	static const struct { bool io; __u64 a; const char *name; } want[] = {
		{ true, 0x3d4, "vga" },			{ true, 0x3d5, "vga" },
		{ true, 0xcf8, "pci-conf-idx" },	{ true, 0xcf9, "piix3-reset-control" },
		{ true, 0xcfa, "pci-conf-idx" },	{ true, 0xcfc, "pci-conf-data" },
		{ true, 0x70, "rtc-index" },		{ true, 0x71, "rtc" },
		{ true, 0x92, "port92" },		{ true, 0x510, "fwcfg" },
		{ true, 0x518, "fwcfg.dma" },		{ true, 0x20, "kvm-pic" },
		{ true, 0xc040, "virtio-pci" },		{ true, 0xc05f, "virtio-pci" },
		{ true, 0x3f8, "serial" },		{ true, 0x0, "dma-chan" },
		{ false, 0xfe003000, "virtio-pci-notify-virtio-rng" },
		{ false, 0xfe003fff, "virtio-pci-notify-virtio-rng" },
		{ false, 0xfebf0400, "vga ioports remapped" },
		{ false, 0xfebf0515, "bochs dispi interface" },
		{ false, 0xfebf0516, "vga.mmio" },	{ false, 0xfebf0180, "vga.mmio" },
		{ false, 0xc0000, "pc.ram" },		{ false, 0x0, "pc.ram" },
		{ false, 0xa0000, "vga-lowmem" },	{ false, 0xfee00000, "kvm-apic-msi" },
		{ false, 0xffffffff, "pc.bios" },	{ false, 0xfec00000, "kvm-ioapic" },
	};
	/* The I/O root ("io") answers where no device is: no name; nor past the map. */
	static const struct { bool io; __u64 a; } none[] = {
		{ true, 0x402 }, { true, 0x10 }, { true, 0xc070 }, { true, 0xffff },
		{ false, 0x4000000 }, { false, 0x100000000ull }, { false, 0xfe004000 },
	};

	CHECK(mtree_map_parse(&m, text) == 0);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const char *n = mtree_map_name(&m, want[i].io, want[i].a);

		if (!n || strcmp(n, want[i].name)) {
			fprintf(stderr, "%s %#llx: \"%s\", expected \"%s\"\n",
				want[i].io ? "port" : "address", (unsigned long long)want[i].a,
				n ? n : "(none)", want[i].name);
			check_failures++;
		}
	}
	for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++) {
		const char *n = mtree_map_name(&m, none[i].io, none[i].a);

		if (n) {
			fprintf(stderr, "%#llx: \"%s\", expected none\n",
				(unsigned long long)none[i].a, n);
			check_failures++;
		}
	}
	/* 95 ranges of I/O, 38 of them the I/O root's; 23 of memory. */
	CHECK_EQ_U64(m.io.nr, 95 - 38);
	CHECK_EQ_U64(m.mem.nr, 23);
	mtree_map_free(&m);

	/* Not an info mtree -f text: refused, nothing kept. */
	CHECK(mtree_map_parse(&m, "") == -EINVAL);
	CHECK(mtree_map_parse(&m, "unknown command: 'info mtre'\r\n") == -EINVAL);
	CHECK(m.io.nr == 0 && m.mem.nr == 0);
	/* Damaged lines are skipped, not misread. */
	CHECK(mtree_map_parse(&m, "FlatView #0\n AS \"I/O\", root: io\n Root memory region: io\n"
			      "  0000000000000070-0000000000000070 (prio 0, i/o): rtc-index\n"
			      "  00000000000000ff-0000000000000080 (prio 0, i/o): backwards\n"
			      "  0000000000000090-\n  zz-0000000000000091 (prio 0): x\n"
			      "  0000000000000092-0000000000000092 (prio 0, i/o) port92\n"
			      "  0000000000000093-0000000000000093 (prio 0, i/o): \n") == 0);
	CHECK_EQ_U64(m.io.nr, 1);
	CHECK_STR(mtree_map_name(&m, true, 0x70), "rtc-index");
	mtree_map_free(&m);
}

static void sockets_are(int line, const char *args, size_t len, const char *want)
{
	char paths[QMP_PATHS][QMP_PATH_MAX], got[1024] = "";
	int n = qmp_sockets_from_cmdline(args, len, paths, QMP_PATHS);

	for (int i = 0; i < n; i++)
		snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%s", i ? " " : "",
			 paths[i]);
	if (strcmp(got, want)) {
		fprintf(stderr, "%s:%d: sockets \"%s\", expected \"%s\"\n", __FILE__, line, got,
			want);
		check_failures++;
	}
}

static void test_cmdline(void)
{
	char v[64];

	CHECK(qemu_opts_get("/a,,b,server=on", "path", "path", v, sizeof(v)));
	CHECK_STR(v, "/a,b");
	CHECK(qemu_opts_get("socket,id=x,server,nowait", "server", NULL, v, sizeof(v)));
	CHECK_STR(v, "on");
	CHECK(qemu_opts_get("socket,id=x,server,nowait", "wait", NULL, v, sizeof(v)));
	CHECK_STR(v, "off");
	CHECK(!qemu_opts_get("socket,id=x", "path", NULL, v, sizeof(v)));

	sockets_are(__LINE__, ARGS("qemu\0-qmp\0unix:/run/q.sock,server=on,wait=off\0"),
		    "/run/q.sock");
	sockets_are(__LINE__, ARGS("qemu\0--qmp\0unix:/run/q.sock,server,nowait\0"), "/run/q.sock");
	sockets_are(__LINE__, ARGS("qemu\0-qmp-pretty\0unix:/r/p,server=on\0"), "/r/p");
	/* QEMU connecting out (no server=on) and TCP are not sockets vmexit can ask. */
	sockets_are(__LINE__, ARGS("qemu\0-qmp\0unix:/run/q.sock\0-qmp\0tcp:localhost:4444,"
				   "server=on\0"), "");
	/* -mon may come before its chardev; a readline monitor (HMP) is no QMP. */
	sockets_are(__LINE__, ARGS("qemu\0-mon\0chardev=m,mode=control\0-chardev\0socket,id=m,"
				   "path=/v/mon.sock,server=on,wait=off\0-chardev\0socket,id=h,"
				   "path=/v/hmp.sock,server=on\0-mon\0h\0-qmp\0unix:/v/2,server\0"),
		    "/v/mon.sock /v/2");
	sockets_are(__LINE__, ARGS("qemu\0-mon\0m,mode=control\0-chardev\0socket,path=/p,"
				   "server=on,id=m\0"), "/p");
	/* libvirt's own monitor is a passed descriptor: no path to ask. */
	sockets_are(__LINE__, ARGS("qemu\0-chardev\0socket,id=charmonitor,fd=35,server=on,"
				   "wait=off\0-mon\0chardev=charmonitor,id=monitor,mode=control\0"),
		    "");
	sockets_are(__LINE__, ARGS("qemu\0-qmp\0"), "");
	sockets_are(__LINE__, ARGS("firecracker\0--api-sock\0/tmp/fc.sock\0"), "");
}

/* The fake QEMU: one behaviour per connection. */
enum fake { GOOD, SILENT, GARBAGE, CLOSE_MID, REFUSE, REFUSE_HOSTILE, EVENTS_ONLY };

struct fake_qemu {
	char path[QMP_PATH_MAX];
	int lfd;
	enum fake mode;
	const char *text;	/* GOOD's answer */
	int conns;
	char got[4096];		/* every line the client sent */
	pthread_t thr;
	bool stop;
};

static bool read_line(int fd, char *out, size_t len)
{
	size_t n = 0;
	char c;

	while (n + 1 < len && read(fd, &c, 1) == 1) {
		out[n++] = c;
		if (c == '\n') {
			out[n] = '\0';
			return true;
		}
	}
	return false;
}

static void put(int fd, const char *s)
{
	size_t n = strlen(s);

	while (n) {
		ssize_t w = write(fd, s, n);

		if (w <= 0)
			return;
		s += w;
		n -= w;
	}
}

/* What the first client said: the rest say the same. */
static void record(struct fake_qemu *f, const char *line)
{
	if (f->conns == 1 && strlen(f->got) + strlen(line) < sizeof(f->got))
		strcat(f->got, line);
}

static void *fake_run(void *arg)
{
	struct fake_qemu *f = arg;
	static const char greet[] = "{\"QMP\": {\"version\": {\"qemu\": {\"micro\": 0, \"minor\": "
				    "2, \"major\": 7}, \"package\": \"\"}, \"capabilities\": "
				    "[\"oob\"]}}\r\n";
	static const char event[] = "{\"timestamp\": {\"seconds\": 1, \"microseconds\": 2}, "
				    "\"event\": \"RTC_CHANGE\", \"data\": {\"offset\": 0}}\r\n";
	char line[1024];

	while (!f->stop) {
		int fd = accept(f->lfd, NULL, NULL);
		char *ans, *p;

		if (fd < 0)
			break;
		f->conns++;
		switch (f->mode) {
		case GOOD:
			put(fd, greet);
			if (!read_line(fd, line, sizeof(line)))
				break;
			record(f, line);
			put(fd, event);
			put(fd, "{\"return\": {}}\r\n");
			if (!read_line(fd, line, sizeof(line)))
				break;
			record(f, line);
			put(fd, event);
			ans = malloc(JSON_ESC_MAX(strlen(f->text)) + 32);
			p = ans + sprintf(ans, "{\"return\": ");
			p = json_esc(p, f->text);
			strcpy(p, "}\r\n");
			put(fd, ans);
			free(ans);
			break;
		case GARBAGE:
			put(fd, "220 smtp.example.com ESMTP\r\n");
			break;
		case CLOSE_MID:
			put(fd, greet);
			read_line(fd, line, sizeof(line));
			put(fd, "{\"return\": {}}\r\n");
			read_line(fd, line, sizeof(line));
			put(fd, "{\"return\": \"FlatView #0\\r\\n AS \\\"I/O\\\", ro");
			break;
		case REFUSE:
			put(fd, greet);
			read_line(fd, line, sizeof(line));
			put(fd, "{\"return\": {}}\r\n");
			read_line(fd, line, sizeof(line));
			put(fd, "{\"error\": {\"class\": \"CommandNotFound\", \"desc\": "
				"\"The command human-monitor-command has not been found\"}}\r\n");
			break;
		case REFUSE_HOSTILE:	/* a desc that would drive the terminal, raw and escaped */
			put(fd, greet);
			read_line(fd, line, sizeof(line));
			put(fd, "{\"return\": {}}\r\n");
			read_line(fd, line, sizeof(line));
			put(fd, "{\"error\": {\"class\": \"GenericError\", \"desc\": "
				"\"no\\u001b[2J\\u0007 \x1b]0;x\x07 \xff\\nend\"}}\r\n");
			break;
		case EVENTS_ONLY:
			put(fd, greet);
			read_line(fd, line, sizeof(line));
			for (int i = 0; i < 3; i++)
				put(fd, event);
			/* and then nothing: the client's deadline ends it */
			read_line(fd, line, sizeof(line));
			break;
		case SILENT:
			break;
		}
		close(fd);
	}
	return NULL;
}

static void fake_start(struct fake_qemu *f, enum fake mode, const char *text)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	memset(f, 0, sizeof(*f));
	snprintf(f->path, sizeof(f->path), "/tmp/vmexit-test-qmp.%d.sock", getpid());
	unlink(f->path);
	strcpy(sa.sun_path, f->path);
	f->mode = mode;
	f->text = text;
	f->lfd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (f->lfd < 0 || bind(f->lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(f->lfd, 4)) {
		perror("fake QEMU");
		exit(1);
	}
	/* SILENT: a QEMU whose one connection another client (libvirt) holds: never accepts. */
	if (mode != SILENT)
		pthread_create(&f->thr, NULL, fake_run, f);
}

static void fake_stop(struct fake_qemu *f)
{
	f->stop = true;
	shutdown(f->lfd, SHUT_RDWR);
	if (f->mode != SILENT)
		pthread_join(f->thr, NULL);
	close(f->lfd);
	unlink(f->path);
}

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Each failure: -errno, a line saying why, and no longer than the timeout (and a margin). */
static void fails_with(int line, enum fake mode, const char *why)
{
	struct fake_qemu f;
	char err[256] = "", *text = (char *)"untouched";
	int pid = 0, rc;
	double t0;

	fake_start(&f, mode, NULL);
	t0 = mono();
	rc = qmp_hmp_ask(f.path, "info mtree -f", 300, &text, &pid, err, sizeof(err));
	if (rc >= 0 || text || !strstr(err, why) || strchr(err, '\n') || mono() - t0 > 0.6) {
		fprintf(stderr, "%s:%d: rc %d, err \"%s\" (expected \"%s\"), %.3f s\n", __FILE__,
			line, rc, err, why, mono() - t0);
		check_failures++;
	}
	fake_stop(&f);
}

static void test_client(const char *fixture)
{
	struct fake_qemu f;
	char err[256] = "", *text = NULL;
	int pid = 0;

	fake_start(&f, GOOD, fixture);
	CHECK(qmp_hmp_ask(f.path, "info mtree -f", 2000, &text, &pid, err, sizeof(err)) == 0);
	CHECK_STR(text, fixture);
	CHECK(pid == getpid());
	/* Nothing but the handshake and the one query. */
	CHECK_STR(f.got, "{\"execute\":\"qmp_capabilities\"}\n{\"execute\":"
			 "\"human-monitor-command\",\"arguments\":{\"command-line\":"
			 "\"info mtree -f\"}}\n");
	free(text);
	fake_stop(&f);
	/* Not a socket, and none at all: said at once, nothing connected to. */
	CHECK(qmp_hmp_ask("/dev/null", "info mtree -f", 300, &text, &pid, err, sizeof(err)) ==
	      -ENOTSOCK);
	CHECK_STR(err, "is not a socket");
	CHECK(qmp_hmp_ask(f.path, "info mtree -f", 300, &text, &pid, err, sizeof(err)) == -ENOENT);
	CHECK_STR(err, "no such socket");
	CHECK(!text);

	fails_with(__LINE__, SILENT, "no answer within 300 ms");
	fails_with(__LINE__, EVENTS_ONLY, "no answer within 300 ms");
	fails_with(__LINE__, GARBAGE, "answered something that is not QMP");
	fails_with(__LINE__, CLOSE_MID, "closed the connection");
	fails_with(__LINE__, REFUSE, "refused the command: The command human-monitor-command "
		   "has not been found");
	/* ESC, BEL and a byte that is no UTF-8 shown as escapes, never sent to the terminal. */
	fails_with(__LINE__, REFUSE_HOSTILE, "refused the command: no\\x1b[2J\\x07 "
		   "\\x1b]0;x\\x07 \\xff\\nend");
	text = NULL;
	CHECK(qmp_hmp_ask("/dev/null", "info mtree -f", 300, &text, &pid, err, sizeof(err)) ==
	      -ENOTSOCK);
	CHECK_STR(err, "is not a socket");
	CHECK(qmp_hmp_ask("/nonexistent/q.sock", "info mtree -f", 300, &text, &pid, err,
			  sizeof(err)) == -ENOENT);
	CHECK_STR(err, "no such socket");
}

/* A row of n exits of key k (guest me, start 42), each of lat_ns. */
static void put_exits(struct row_table *rt, __u32 me, struct key_note k, __u64 n, __u64 lat_ns)
{
	struct row *r = row_table_get(rt, &(struct row_key){ .tgid = me, .vcpu = -1,
				      .isa = VMEXIT_ISA_USER, .reason = 6, .start = 42, .key = k });

	CHECK(r != NULL);
	r->count += n;
	r->completed += n;
	r->total_ns += n * lat_ns;
	r->min_ns = lat_ns;
	r->max_ns = lat_ns;
}

/* The row of span [lo, hi] of kind/dir in rt (hi 0: one key), or NULL. */
static const struct row *span_row(const struct row_table *rt, __u32 me, __u16 kind, __u16 dir,
				  __u64 lo, __u64 hi)
{
	struct row_key k = { .tgid = me, .vcpu = -1, .isa = VMEXIT_ISA_USER, .reason = 6,
			     .start = 42, .key = { .key = lo, .kind = kind, .dir = dir },
			     .key_end = hi };

	for (__u32 i = 0; i < rt->nr; i++)
		if (!row_key_cmp(&rt->rows[i].key, &k))
			return &rt->rows[i];
	return NULL;
}

/*
 * --by key by device: a VGA text console's byte writes (0xa0000 + 2 per character) and port
 * accesses summed per region of the map (the fixture's vga-lowmem 0xa0000-0xbffff, vga
 * 0x3d4-0x3d5); a port the map lacks stays alone; without a map (q NULL) MMIO goes to its
 * page or the built-in window, ports stay per port.
 */
static void test_groups(struct qmp_names *q, __u32 me)
{
	struct row_table in, out;
	const struct row *r;
	__u64 lo, hi;
	char b[64];

	row_table_init(&in);
	/* 376 characters written: 376 keys of one exit each, 2000 ns. */
	for (__u64 i = 0; i < 376; i++)
		put_exits(&in, me, (struct key_note){ .key = 0xa0000 + 2 * i, .kind = KEY_MMIO,
						.dir = KEY_DIR_WRITE }, 1, 2000);
	put_exits(&in, me, (struct key_note){ .key = 0x3d4, .kind = KEY_PORT, .dir = KEY_DIR_OUT }, 30,
	    1000);
	put_exits(&in, me, (struct key_note){ .key = 0x3d5, .kind = KEY_PORT, .dir = KEY_DIR_OUT }, 10,
	    3000);
	put_exits(&in, me, (struct key_note){ .key = 0x402, .kind = KEY_PORT, .dir = KEY_DIR_OUT }, 5,
	    1000);
	put_exits(&in, me, (struct key_note){ .key = 0xfee000b0, .kind = KEY_MMIO,
					.dir = KEY_DIR_WRITE }, 7, 1000);

	row_table_init(&out);
	CHECK(!key_groups_build(&in, q, &out));
	CHECK_EQ_U64(out.nr, 4);
	r = span_row(&out, me, KEY_MMIO, KEY_DIR_WRITE, 0xa0000, 0xbffff);
	CHECK(r && r->count == 376 && r->total_ns == 376 * 2000 && r->max_ns == 2000);
	CHECK(qmp_key_region(q, me, 42, &r->key.key, &lo, &hi, b, sizeof(b)) == 1);
	CHECK_STR(b, "vga-lowmem");
	CHECK_STR(key_span_str(&r->key.key, r->key.key_end, "vga-lowmem", b, sizeof(b)),
		  "0xa0000-0xbffff write vga-lowmem");
	r = span_row(&out, me, KEY_PORT, KEY_DIR_OUT, 0x3d4, 0x3d5);
	CHECK(r && r->count == 40 && r->total_ns == 60000 && r->min_ns == 1000 &&
	      r->max_ns == 3000);
	r = span_row(&out, me, KEY_PORT, KEY_DIR_OUT, 0x402, 0);
	CHECK(r && r->count == 5);
	r = span_row(&out, me, KEY_MMIO, KEY_DIR_WRITE, 0xfee00000, 0xfeefffff);
	CHECK(r && r->count == 7);
	row_table_free(&out);

	/* No map: 376 writes in 1 page (0xa0000 + 750 < 0xa1000), the lapic's window, ports
	 * one each. */
	row_table_init(&out);
	CHECK(!key_groups_build(&in, NULL, &out));
	CHECK_EQ_U64(out.nr, 5);
	r = span_row(&out, me, KEY_MMIO, KEY_DIR_WRITE, 0xa0000, 0xa0fff);
	CHECK(r && r->count == 376);
	r = span_row(&out, me, KEY_MMIO, KEY_DIR_WRITE, 0xfee00000, 0xfee00fff);
	CHECK(r && r->count == 7);
	CHECK(span_row(&out, me, KEY_PORT, KEY_DIR_OUT, 0x3d4, 0) &&
	      span_row(&out, me, KEY_PORT, KEY_DIR_OUT, 0x3d5, 0));
	row_table_free(&out);
	row_table_free(&in);
}

static bool keep_42(void *ctx, __u32 tgid, __u64 start)
{
	(void)ctx, (void)tgid;
	return start == 42;
}

/* qmp_names with --qmp PATH served by this process (the guest, as SO_PEERCRED sees it). */
static void test_names(const char *fixture)
{
	struct key_note vga = { .kind = KEY_PORT, .key = 0x3d4, .dir = KEY_DIR_OUT };
	struct key_note dbg = { .kind = KEY_PORT, .key = 0x402, .dir = KEY_DIR_OUT };
	struct key_note notify = { .kind = KEY_MMIO, .key = 0xfe003000, .dir = KEY_DIR_WRITE };
	struct key_note msr = { .kind = KEY_MSR, .key = 0xc0000080 };
	struct name_cache names = {};
	struct qmp_names q;
	struct fake_qemu f;
	__u32 me = (__u32)getpid();
	char b[64];

	fake_start(&f, GOOD, fixture);
	name_cache_set_at(&names, me, 42, "guest");
	qmp_names_init(&q, f.path);
	/* Before any answer, and without --qmp: the built-in names. */
	CHECK_STR(qmp_key_name(&q, me, 42, &vga, b, sizeof(b)), "vga");
	CHECK_STR(qmp_key_name(NULL, me, 42, &dbg, b, sizeof(b)), "isa-debugcon");
	qmp_names_tick(&q, &names, 100.0);
	CHECK(f.conns == 1);
	CHECK_STR(qmp_key_name(&q, me, 42, &notify, b, sizeof(b)), "virtio-pci-notify-virtio-rng");
	CHECK_STR(qmp_key_name(&q, me, 42, &msr, b, sizeof(b)), "EFER");
	test_groups(&q, me);
	/* Another guest (another start) has no map: built-in names. */
	CHECK_STR(qmp_key_name(&q, me, 43, &notify, b, sizeof(b)), "");
	/* top's views summed over guests (tgid 0) or over one pid's processes (start 0): the map
	 * of the guests that match; none matching, the built-in name. */
	CHECK_STR(qmp_key_name(&q, 0, 0, &notify, b, sizeof(b)), "virtio-pci-notify-virtio-rng");
	CHECK_STR(qmp_key_name(&q, me, 0, &notify, b, sizeof(b)), "virtio-pci-notify-virtio-rng");
	CHECK_STR(qmp_key_name(&q, me + 1, 0, &notify, b, sizeof(b)), "");
	/* A port QEMU maps to nothing is no device (this VM has no isa-debugcon, whatever the
	 * PC's port 0x402 would be), and is asked again, rate-limited. */
	CHECK_STR(qmp_key_name(&q, me, 42, &dbg, b, sizeof(b)), "unmapped");
	qmp_names_tick(&q, &names, 100.5);
	CHECK(f.conns == 1);
	qmp_names_tick(&q, &names, 100.0 + QMP_REASK_S);
	CHECK(f.conns == 2);
	/* The same answer again: the next re-ask waits twice as long. */
	qmp_key_name(&q, me, 42, &dbg, b, sizeof(b));
	qmp_names_tick(&q, &names, 100.0 + 3 * QMP_REASK_S - 0.1);
	CHECK(f.conns == 2);
	qmp_names_tick(&q, &names, 100.0 + 3 * QMP_REASK_S);
	CHECK(f.conns == 3);
	/* No key outside the map: no ask at all. */
	qmp_names_tick(&q, &names, 1000.0);
	CHECK(f.conns == 3);
	qmp_names_free(&q);
	fake_stop(&f);

	/* A QMP that fails: the built-in names, one note, asks spaced out. */
	fake_start(&f, GARBAGE, NULL);
	qmp_names_init(&q, f.path);
	qmp_names_tick(&q, &names, 100.0);
	qmp_names_tick(&q, &names, 101.0);
	CHECK(f.conns == 1);
	CHECK_STR(qmp_key_name(&q, me, 42, &vga, b, sizeof(b)), "vga");
	CHECK(q.nr == 1 && q.g[0].noted);
	qmp_names_tick(&q, &names, 100.0 + QMP_REASK_S);
	CHECK(f.conns == 2);
	qmp_names_free(&q);
	fake_stop(&f);

	/* Guests the name cache forgets (serve --keep) leave qmp_names too, with their maps. */
	fake_start(&f, GOOD, fixture);
	qmp_names_init(&q, f.path);
	for (__u32 i = 1; i <= QMP_PRUNE_SLACK + 1; i++)
		name_cache_set_at(&names, me, 42 + i, "again");
	qmp_names_tick(&q, &names, 100.0);
	CHECK_EQ_U64(q.nr, QMP_PRUNE_SLACK + 2);
	CHECK_STR(qmp_key_name(&q, me, 50, &vga, b, sizeof(b)), "vga");
	name_cache_prune(&names, keep_42, NULL);
	qmp_names_tick(&q, &names, 100.1);
	CHECK_EQ_U64(q.nr, 1);
	CHECK_STR(qmp_key_name(&q, me, 42, &notify, b, sizeof(b)), "virtio-pci-notify-virtio-rng");
	CHECK_STR(qmp_key_name(&q, me, 50, &notify, b, sizeof(b)), "");
	qmp_names_free(&q);
	fake_stop(&f);
	name_cache_free(&names);
}

/* stderr into a file while qmp_names speaks (its notes are the checked output). */
static int saved_stderr = -1;

static void stderr_to(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	fflush(stderr);
	saved_stderr = dup(2);
	if (fd < 0 || saved_stderr < 0 || dup2(fd, 2) < 0) {
		perror(path);
		exit(1);
	}
	close(fd);
}

/* stderr back; what was said meanwhile (to be freed). */
static char *stderr_back(const char *path)
{
	char *said;

	fflush(stderr);
	dup2(saved_stderr, 2);
	close(saved_stderr);
	said = read_file(path);
	unlink(path);
	return said;
}

static int count(const char *text, const char *what)
{
	int n = 0;

	for (const char *p = text; (p = strstr(p, what)); p++)
		n++;
	return n;
}

/*
 * A QEMU started by vmexit (record -- qemu ...) may have no socket yet at the first ask, or be
 * named by its pid before its start is known (a vCPU's TSC offset comes before its first exit).
 * One guest, asked as one: one note, the later asks' other failures said, the map once the
 * socket answers, and (pid, 0) asked before the start was learnt the same entry afterwards.
 */
static void test_late_socket(const char *fixture)
{
	struct key_note notify = { .kind = KEY_MMIO, .key = 0xfe003000, .dir = KEY_DIR_WRITE };
	struct key_note dbg = { .kind = KEY_PORT, .key = 0x402, .dir = KEY_DIR_OUT };
	char b[64], errf[64], line[QMP_PATH_MAX + 64], *said;
	struct name_cache names = {};
	struct qmp_names q;
	struct fake_qemu f;
	__u32 me = (__u32)getpid();

	snprintf(errf, sizeof(errf), "/tmp/vmexit-test-qmp.%d.err", getpid());
	fake_start(&f, GOOD, fixture);	/* for its path: no socket there yet */
	fake_stop(&f);
	name_cache_set(&names, me, "guest");	/* (me, 0): named before its start was known */
	qmp_names_init(&q, f.path);
	q.verbose = true;	/* -v: each new map said, once */
	stderr_to(errf);
	qmp_names_tick(&q, &names, 100.0);
	/* Its start is learnt: the name cache's entry and qmp's take it, no second note. */
	CHECK(name_cache_born(&names, me, 42) == 0);
	qmp_names_tick(&q, &names, 100.5);
	CHECK_EQ_U64(q.nr, 1);
	CHECK_EQ_U64(q.g[0].start, 42);
	/* The socket now, not QMP: a later ask's failure, said once. */
	fake_start(&f, GARBAGE, NULL);
	qmp_names_tick(&q, &names, 100.0 + QMP_REASK_S);
	qmp_names_tick(&q, &names, 100.0 + 3 * QMP_REASK_S);
	CHECK(f.conns == 2);
	fake_stop(&f);
	/* Then QEMU answers: its names from then on; the same map again is not said again. */
	fake_start(&f, GOOD, fixture);
	qmp_names_tick(&q, &names, 100.0 + 7 * QMP_REASK_S);
	CHECK(f.conns == 1);
	qmp_key_name(&q, me, 42, &dbg, b, sizeof(b));	/* unmapped: asked again when due */
	qmp_names_tick(&q, &names, 100.0 + 8 * QMP_REASK_S);
	CHECK(f.conns == 2);
	/* QEMU quits: the later asks (the same answer twice: 2 re-asks later, then 4) find no
	 * socket. Its map stays, and no note says built-in names; -v says it once. */
	fake_stop(&f);
	qmp_key_name(&q, me, 42, &dbg, b, sizeof(b));
	qmp_names_tick(&q, &names, 100.0 + 10 * QMP_REASK_S);
	qmp_key_name(&q, me, 42, &dbg, b, sizeof(b));
	qmp_names_tick(&q, &names, 100.0 + 14 * QMP_REASK_S);
	CHECK(q.g[0].next_ask > 100.0 + 14 * QMP_REASK_S);	/* both asked */
	said = stderr_back(errf);
	CHECK_STR(qmp_key_name(&q, me, 42, &notify, b, sizeof(b)), "virtio-pci-notify-virtio-rng");
	CHECK_STR(qmp_key_name(&q, me, 0, &notify, b, sizeof(b)), "virtio-pci-notify-virtio-rng");
	CHECK_EQ_U64(count(said, "vmexit: note: --qmp: "), 3);
	CHECK_EQ_U64(count(said, ": no such socket; its ports and addresses keep built-in names\n"),
		     1);
	CHECK_EQ_U64(count(said, "): a later ask: QMP at "), 1);
	CHECK_EQ_U64(count(said, "answered something that is not QMP; its ports"), 1);
	CHECK_EQ_U64(count(said, "answered a later ask; its ports and addresses take QEMU's"), 1);
	snprintf(line, sizeof(line), "): QEMU's map from %s: ", f.path);
	CHECK_EQ_U64(count(said, line), 1);
	CHECK_EQ_U64(count(said, "vmexit: --qmp: guest guest (pid "), 2);
	CHECK_EQ_U64(count(said, ": no such socket; its ports and addresses keep QEMU's last map\n"),
		     1);
	if (count(said, "vmexit: note: --qmp: ") != 3)
		fprintf(stderr, "said:\n%s", said);
	free(said);
	qmp_names_free(&q);
	name_cache_free(&names);
}

/*
 * A QEMU that answered the first ask, then quits (CI: record's third ask found no socket): its
 * map stays, and without -v nothing is said; the note of built-in names would be wrong.
 */
static void test_quit_after_answer(const char *fixture)
{
	struct key_note notify = { .kind = KEY_MMIO, .key = 0xfe003000, .dir = KEY_DIR_WRITE };
	struct key_note dbg = { .kind = KEY_PORT, .key = 0x402, .dir = KEY_DIR_OUT };
	char b[64], errf[64], *said;
	struct name_cache names = {};
	struct qmp_names q;
	struct fake_qemu f;
	__u32 me = (__u32)getpid();

	snprintf(errf, sizeof(errf), "/tmp/vmexit-test-qmp.%d.err", getpid());
	fake_start(&f, GOOD, fixture);
	name_cache_set_at(&names, me, 42, "guest");
	qmp_names_init(&q, f.path);
	stderr_to(errf);
	qmp_names_tick(&q, &names, 100.0);
	CHECK(f.conns == 1);
	fake_stop(&f);
	qmp_key_name(&q, me, 42, &dbg, b, sizeof(b));	/* unmapped: asked again when due */
	qmp_names_tick(&q, &names, 100.0 + QMP_REASK_S);
	CHECK(q.g[0].next_ask > 100.0 + QMP_REASK_S);	/* asked, and failed */
	said = stderr_back(errf);
	CHECK_STR(said, "");
	CHECK_STR(qmp_key_name(&q, me, 42, &notify, b, sizeof(b)), "virtio-pci-notify-virtio-rng");
	free(said);
	qmp_names_free(&q);

	/* -v, record -- qemu's usual life: no socket yet (a note), the answer, QEMU gone (the
	 * same reason as the note before the answer): said once, not at each ask after. */
	fake_start(&f, GOOD, fixture);	/* for its path: no socket there yet */
	fake_stop(&f);
	qmp_names_init(&q, f.path);
	q.verbose = true;
	stderr_to(errf);
	qmp_names_tick(&q, &names, 100.0);
	fake_start(&f, GOOD, fixture);
	qmp_names_tick(&q, &names, 100.0 + QMP_REASK_S);
	CHECK(f.conns == 1);
	fake_stop(&f);
	for (int i = 0; i < 3; i++) {
		qmp_key_name(&q, me, 42, &dbg, b, sizeof(b));
		qmp_names_tick(&q, &names, 100.0 + (3 + 8 * i) * QMP_REASK_S);
	}
	said = stderr_back(errf);
	CHECK_EQ_U64(count(said, ": no such socket; its ports and addresses keep built-in names\n"),
		     1);
	CHECK_EQ_U64(count(said, ": no such socket; its ports and addresses keep QEMU's last map\n"),
		     1);
	CHECK_EQ_U64(count(said, "vmexit: note: --qmp: "), 2);	/* the first, and the answer */
	CHECK_STR(qmp_key_name(&q, me, 42, &notify, b, sizeof(b)), "virtio-pci-notify-virtio-rng");
	free(said);
	qmp_names_free(&q);
	name_cache_free(&names);
}

int main(void)
{
	char *fixture = read_file(FIXTURE);

	test_mtree(fixture);
	test_cmdline();
	test_client(fixture);
	test_names(fixture);
	test_late_socket(fixture);
	test_quit_after_answer(fixture);
	free(fixture);
	CHECK_DONE("qmp");
}
