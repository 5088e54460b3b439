// SPDX-License-Identifier: GPL-2.0
/*
 * 500 damaged record files through `vmexit report`, every output mode, under the sanitizers
 * (make SAN=1): each run ends with status 0 or 1 and says what is wrong in lines of its own,
 * never a crash, an out-of-bounds access, undefined behaviour or a leak. The files are two
 * valid recordings (with and without --split) mutated by a fixed-seed generator: the same 500
 * every run. Half the mutations, and all that set a record's length or type, get their
 * checksums recomputed (record_crcs.h), so that bad lengths, counts and tables reach the
 * parsers behind the checksums.
 *
 * Each report runs in a child whose stderr goes to a file: LeakSanitizer checks it when it
 * exits, and a sanitizer report there fails the test.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "check.h"
#include "commands.h"
#include "../fuzz/record_crcs.h"
#include "../xorshift64.h"

#define RUNS		500

static char dir[] = "/tmp/vmexit-test-mutXXXXXX";
static __u64 rng = 0x2545f4914f6cdd1dull;

static __u64 rnd(void)
{
	return xorshift64(&rng);
}

/* A recording with something of everything report reads: guests (before and after the
 * header, a pid reused, names with UTF-8 and quotes), every event type, losses, applied TSC
 * offsets. */
static int write_base(const char *path, bool split)
{
	static const char *const names[] = { "web01", "g\xc3\xa4st \"q\"", "db", "web01" };
	struct rec_meta meta;
	struct rec_writer *w;
	char err[512];

	rec_meta_now(&meta);
	meta.split = split;
	meta.tsc_mhz = split ? 2100.5 : 0;
	w = rec_writer_open(path, true, &meta, err, sizeof(err));
	if (!w) {
		fprintf(stderr, "%s\n", err);
		return -1;
	}
	for (unsigned int g = 0; g < 2; g++)
		rec_writer_add_guest(w, 100 + g, 1000 + g, names[g]);
	/* A guest already running: its offset read as recording starts (format 1.7). */
	rec_writer_add_tsc_applied(w, 100, 0, meta.mono_ns, 0, (__u64)-2285378128520ll, 0, 0);
	for (unsigned int i = 0; i < 400; i++) {
		struct vmexit_event ev = {
			.ts_ns = meta.mono_ns + 5000ull * i, .latency_ns = 100 + rnd() % 100000,
			.rip = rnd(), .info1 = rnd(), .info2 = rnd(), .tgid = 100 + i % 4,
			.tid = 200 + i % 6, .vcpu = i % 9 ? (int)(i % 3) : -1, .cpu = i % 8,
		};
		__u64 lost[NR_LOST] = {};

		switch (i % 5) {
		case 0:
			ev.type = VMEXIT_EV_EXIT;
			ev.isa = 1 + i % 2;
			ev.reason = i % 7 ? 30 : 0x7b;
			break;
		case 1:
			ev.type = VMEXIT_EV_USER_EXIT | (i % 3 ? 0 : VMEXIT_EV_IN_FLIGHT);
			ev.isa = VMEXIT_ISA_USER;
			ev.reason = 2 + i % 5;
			break;
		case 2:
			ev.type = VMEXIT_EV_TSC_OFFSET;
			break;
		case 3:
			ev.type = VMEXIT_EV_KVM_EVENT;
			ev.reason = 1 + i % (VMEXIT_KVM_NR - 1);
			ev.latency_ns = 0;
			break;
		default:
			ev.type = VMEXIT_EV_EXIT;
			ev.isa = VMEXIT_ISA_ARM64;
			ev.reason = i % 64;
		}
		if (split) {
			ev.oncpu_ns = ev.latency_ns / 2;
			ev.blocked_ns = ev.latency_ns / 4;
			ev.runq_ns = ev.latency_ns - ev.oncpu_ns - ev.blocked_ns;
		}
		rec_writer_add_event(w, &ev);
		/* What record reads from debugfs after an offset write: here half the time not
		 * what was traced. */
		if (ev.type == VMEXIT_EV_TSC_OFFSET && ev.vcpu >= 0)
			rec_writer_add_tsc_applied(w, ev.tgid, ev.vcpu, ev.ts_ns + 1, ev.ts_ns,
						   i % 2 ? ev.info2 : 0,
						   i % 4 ? 0 : 3ull << 47, 48);
		if (i == 200) {
			/* pid 102 reused by a new VMM, and a fourth guest. */
			rec_writer_add_guest(w, 102, ev.ts_ns, names[2]);
			rec_writer_add_guest(w, 103, 0, names[3]);
			lost[i % NR_LOST] = 3;
			rec_writer_add_lost(w, ev.ts_ns, lost);
		}
	}
	/* record --qmp's maps (1.7): damaged lengths and ranges reach their parser too. */
	if (split) {
		rec_writer_add_key_region(w, 100, 1000, true, 0x3d4, 0x3d5, "vga");
		rec_writer_add_key_region(w, 101, 1001, false, 0xa0000, 0xbffff, "vga-lowmem");
	}
	return rec_writer_close(w);
}

static unsigned char *slurp(const char *path, size_t *len)
{
	struct stat st;
	unsigned char *p;
	int fd = open(path, O_RDONLY);

	if (fd < 0 || fstat(fd, &st) || !(p = malloc(st.st_size + 1)) ||
	    read(fd, p, st.st_size) != st.st_size) {
		perror(path);
		exit(1);
	}
	close(fd);
	*len = st.st_size;
	return p;
}

/*
 * A record's header (docs/record-format.md: crc, type, length) picked at random, a guest or
 * lost record as often as an event, which far outnumber them; 0 when there is none.
 */
static size_t some_record(const unsigned char *m, size_t n)
{
	size_t off = le32(m + 12), pick = 0, seen = 0;
	bool rare = rnd() % 2;

	while (off + 8 <= n) {
		if ((!rare || m[off + 4] != 1) && rnd() % ++seen == 0)
			pick = off;
		off += 8 + ((m[off + 6] | m[off + 7] << 8) + 7) / 8 * 8;
	}
	return pick;
}

/* One mutation of base into m (room for 2 * len); the new length. */
static size_t mutate(const unsigned char *base, size_t len, unsigned char *m, unsigned int run)
{
	static const __u16 lens[] = { 0, 1, 4, 7, 8, 12, 255, 256, 300, 0xfff8, 0xffff };
	size_t n = len, at, from, k;

	memcpy(m, base, len);
	switch (run % 6) {
	case 5:		/* a record's length or type (its checksum always fixed) */
		at = some_record(m, n);
		if (!at)
			break;
		if (rnd() % 3) {
			k = lens[rnd() % (sizeof(lens) / sizeof(lens[0]))];
			m[at + 6] = k;
			m[at + 7] = k >> 8;
		} else {
			m[at + 4] = rnd() % 10;	/* every type, 1 to 9, and 0 */
		}
		fix_crcs(m, n);
		return n;
	case 0:		/* a few random bytes */
		for (k = 1 + rnd() % 8; k; k--)
			m[rnd() % n] = rnd();
		break;
	case 1:		/* cut anywhere */
		n = rnd() % len;
		break;
	case 2:		/* a 16- or 32-bit field set to an edge value */
		at = rnd() % (n - 4);
		k = rnd() % 4;
		m[at] = k == 0 ? 0 : k == 1 ? 0xff : rnd();
		m[at + 1] = k == 0 ? 0 : k == 1 ? 0xff : rnd() % 2;
		if (rnd() % 2)
			m[at + 2] = m[at + 3] = k == 1 ? 0xff : 0;
		break;
	case 3:		/* a stretch repeated elsewhere (records twice, out of order) */
		from = rnd() % len;
		k = rnd() % (len - from);
		at = rnd() % len;
		memmove(m + at + k, m + at, len - at);
		memcpy(m + at, base + from, k);
		n = len + k;
		break;
	default:	/* a stretch gone */
		from = rnd() % len;
		k = rnd() % (len - from);
		memmove(m + from, m + from + k, len - from - k);
		n = len - k;
	}
	if (rnd() % 2)
		fix_crcs(m, n);
	return n;
}

/* Runs `vmexit report -i path ARGS` in a child; its stderr in errpath. Its wait status. */
static int run_report(const char *path, const char *errpath, unsigned int run)
{
	static const char *const modes[][3] = {
		{ NULL }, { "--json" }, { "--csv" }, { "--hist", "--by", "vcpu" },
		{ "--events" }, { "--events", "--json" }, { "--perfetto", "-" },
		{ "--by", "reason", "--json" }, { "-g", "web01", "--hist" },
	};
	const char *const *mode = modes[run % (sizeof(modes) / sizeof(modes[0]))];
	char *argv[8] = { "report", "-i", (char *)path };
	int argc = 3, status;
	pid_t pid;

	for (int i = 0; i < 3 && mode[i]; i++)
		argv[argc++] = (char *)mode[i];
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		int out = open("/dev/null", O_WRONLY);
		int err = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		if (out < 0 || err < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
			_exit(99);
		exit(cmd_report(argc, argv));
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return status;
}

/* The child's messages: lines that start "vmexit: " (the damage and its offset), no report
 * of a sanitizer. */
static bool messages_clean(const char *errpath)
{
	char line[4096];
	bool clean = true;
	FILE *f = fopen(errpath, "r");

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "vmexit: ", 8) || strstr(line, "Sanitizer") ||
		    strstr(line, "runtime error"))
			clean = false;
	}
	fclose(f);
	return clean;
}

int main(void)
{
	char path[2][300], mpath[300], errpath[300], cmd[400];
	unsigned char *base[2], *m;
	size_t len[2], max;
	unsigned int damaged = 0;

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	for (int b = 0; b < 2; b++) {
		snprintf(path[b], sizeof(path[b]), "%s/base%d.vmexit", dir, b);
		CHECK(!write_base(path[b], b));
		base[b] = slurp(path[b], &len[b]);
		/* The valid recordings themselves report cleanly. */
		snprintf(errpath, sizeof(errpath), "%s/err", dir);
		CHECK_EQ_U64(run_report(path[b], errpath, 0), 0);
	}
	max = len[0] > len[1] ? len[0] : len[1];
	m = malloc(2 * max);
	snprintf(mpath, sizeof(mpath), "%s/m.vmexit", dir);
	for (unsigned int run = 0; m && run < RUNS; run++) {
		int b = run / 6 % 2, status, fd;
		size_t n = mutate(base[b], len[b], m, run);

		fd = open(mpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		CHECK(fd >= 0 && write(fd, m, n) == (ssize_t)n);
		close(fd);
		status = run_report(mpath, errpath, run);
		if (!WIFEXITED(status) || WEXITSTATUS(status) > 1 || !messages_clean(errpath)) {
			snprintf(cmd, sizeof(cmd), "cat %s >&2", errpath);
			fprintf(stderr, "run %u (mutation %u of base %d, %zu bytes): wait status 0x%x\n",
				run, run % 6, b, n, status);
			if (system(cmd))
				fprintf(stderr, "(cannot show its stderr)\n");
			check_failures++;
			snprintf(cmd, sizeof(cmd), "cp %s /tmp/vmexit-mutation-%u.vmexit", mpath, run);
			if (system(cmd))
				fprintf(stderr, "(cannot keep the file)\n");
		}
		damaged += WIFEXITED(status) && WEXITSTATUS(status) == 1;
	}
	/* The mutations do damage: most files are refused at some offset. */
	printf("%u of %u mutated files reported damaged\n", damaged, RUNS);
	CHECK(damaged > RUNS / 2);
	free(m);
	free(base[0]);
	free(base[1]);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		fprintf(stderr, "cannot remove %s\n", dir);
	CHECK_DONE("report_mutations");
}
