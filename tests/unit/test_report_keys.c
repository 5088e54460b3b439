// SPDX-License-Identifier: GPL-2.0
/*
 * report --keys of a recording made with --keys --qmp: the keys named and grouped by the maps
 * the file kept, as stat --qmp does live. The recording is a VGA text console's work, worked
 * out by hand: 376 character writes (a byte each, 0xa0000 + 2i: one MMIO exit to the VMM
 * each), 30 writes to the CRT index port 0x3d4 and 10 to 0x3d5, 5 to port 0x402 (no device in
 * this VM); the file keeps QEMU's vga-lowmem (0xa0000-0xbffff) and vga (0x3d4-0x3d5).
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "check.h"
#include "commands.h"
#include "record_file.h"

static char dir[] = "/tmp/vmexit-test-rkeysXXXXXX";

static void add(struct rec_writer *w, __u64 *ts, __u32 reason, __u16 kind, __u16 dir_,
		__u64 key)
{
	struct vmexit_event ev = {
		.type = VMEXIT_EV_USER_EXIT, .isa = VMEXIT_ISA_USER, .reason = reason,
		.ts_ns = (*ts += 10000), .latency_ns = 2000, .tgid = 100, .tid = 101,
		.vcpu = 0, .key = { .key = key, .kind = kind, .dir = dir_ },
	};

	CHECK(!rec_writer_add_event(w, &ev));
}

static void write_file(const char *path, bool regions, bool named)
{
	struct rec_meta meta;
	struct rec_writer *w;
	char err[512];
	__u64 ts;

	rec_meta_now(&meta);
	meta.keys = true;
	ts = meta.mono_ns;
	w = rec_writer_open(path, true, &meta, err, sizeof(err));
	CHECK(w != NULL);
	if (!w)
		return;
	if (named)
		CHECK(!rec_writer_add_guest(w, 100, meta.mono_ns - 1000, "vga"));
	for (__u64 i = 0; i < 376; i++)
		add(w, &ts, 6 /* KVM_EXIT_MMIO */, KEY_MMIO, KEY_DIR_WRITE, 0xa0000 + 2 * i);
	for (int i = 0; i < 40; i++)
		add(w, &ts, 2 /* KVM_EXIT_IO */, KEY_PORT, KEY_DIR_OUT, i < 30 ? 0x3d4 : 0x3d5);
	for (int i = 0; i < 5; i++)
		add(w, &ts, 2, KEY_PORT, KEY_DIR_OUT, 0x402);
	if (regions) {
		CHECK(!rec_writer_add_key_region(w, 100, meta.mono_ns - 1000, true, 0x3d4, 0x3d5,
						 "vga"));
		CHECK(!rec_writer_add_key_region(w, 100, meta.mono_ns - 1000, false, 0xa0000,
						 0xbffff, "vga-lowmem"));
	}
	CHECK(!rec_writer_close(w));
}

/* `vmexit report -i path --csv --keys [extra]` into out; its exit status. */
static int report_csv(const char *path, const char *extra, const char *out)
{
	char *argv[8] = { "report", "-i", (char *)path, "--csv", "--keys" };
	int argc = 5, status;
	pid_t pid;

	if (extra)
		argv[argc++] = (char *)extra;
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
			_exit(99);
		exit(cmd_report(argc, argv));
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* The lines of out that end in tail (",kind,key,dir,name,key_end"), and the sum of their
 * NR_Exit (a CSV row's 10th field). */
static int rows_ending(const char *csv, const char *tail, __u64 *exits)
{
	char line[1024];
	size_t tl = strlen(tail);
	int n = 0;
	FILE *f = fopen(csv, "r");

	*exits = 0;
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		size_t l = strcspn(line, "\n");
		char *p = line;

		line[l] = '\0';
		if (l < tl || strcmp(line + l - tl, tail))
			continue;
		for (int i = 0; i < 9 && p; i++) {
			p = strchr(p, ',');
			p = p ? p + 1 : NULL;
		}
		if (p)
			*exits += strtoull(p, NULL, 10);
		n++;
	}
	fclose(f);
	return n;
}

int main(void)
{
	char with[300], without[300], csv[300], cmd[400];
	__u64 n;

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(with, sizeof(with), "%s/with.vmexit", dir);
	snprintf(without, sizeof(without), "%s/without.vmexit", dir);
	snprintf(csv, sizeof(csv), "%s/out.csv", dir);
	write_file(with, true, true);
	write_file(without, false, true);

	/* By device (the default): one row per region, the sums of its keys. */
	CHECK_EQ_U64(report_csv(with, NULL, csv), 0);
	CHECK_EQ_U64(rows_ending(csv, ",mmio,655360,write,vga-lowmem,786431", &n), 1);
	CHECK_EQ_U64(n, 376);
	CHECK_EQ_U64(rows_ending(csv, ",port,980,out,vga,981", &n), 1);
	CHECK_EQ_U64(n, 40);
	/* A port the map lacks: no device, whatever the PC's 0x402 would be. */
	CHECK_EQ_U64(rows_ending(csv, ",port,1026,out,unmapped,1026", &n), 1);
	CHECK_EQ_U64(n, 5);
	/* Per address on request: 376 rows of one exit, named as live. */
	CHECK_EQ_U64(report_csv(with, "--per-address", csv), 0);
	CHECK_EQ_U64(rows_ending(csv, ",write,vga-lowmem,655360", &n), 1);
	CHECK_EQ_U64(rows_ending(csv, "write,vga-lowmem,786431", &n), 0);
	CHECK_EQ_U64(rows_ending(csv, ",port,980,out,vga,980", &n), 1);
	CHECK_EQ_U64(n, 30);
	/* A recording without maps: built-in names, MMIO by 4 KiB page (376 writes span
	 * 0xa0000-0xa02ef, one page). */
	CHECK_EQ_U64(report_csv(without, NULL, csv), 0);
	CHECK_EQ_U64(rows_ending(csv, ",mmio,655360,write,,659455", &n), 1);
	CHECK_EQ_U64(n, 376);
	CHECK_EQ_U64(rows_ending(csv, ",port,1026,out,isa-debugcon,1026", &n), 1);
	CHECK_EQ_U64(rows_ending(csv, ",port,980,out,vga,980", &n), 1);
	CHECK_EQ_U64(n, 30);

	/* A -p the file lacks: the VMMs it has listed, by pid where the file names none (an
	 * import's), as -p takes them; not "(none)" above a table of VMMs. */
	write_file(without, false, false);
	CHECK_EQ_U64(report_csv(without, "-p999", csv), 1);
	CHECK_EQ_U64(rows_ending(csv, "      100  (no name in the file: -p 100)", &n), 1);
	CHECK_EQ_U64(rows_ending(csv, "  (none)", &n), 0);

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		fprintf(stderr, "cannot remove %s\n", dir);
	CHECK_DONE("report_keys");
}
