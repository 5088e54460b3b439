// SPDX-License-Identifier: GPL-2.0
/*
 * report -i perf.data: a perf capture of kvm tracepoints. import_perfdata.c reads most files
 * itself; the rest (perf record -o -, -z, see there) are read by the installed perf: `perf
 * script` runs a small Python handler of ours that prints each kvm record's numeric fields as
 * numbers (the tracepoints' print formats would turn them into text to parse back), one line:
 *	kvm_exit <TAB> time_ns <TAB> pid <TAB> tid <TAB> cpu <TAB> comm <TAB> name=value ...
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <linux/perf_event.h>
#include "env_knobs.h"
#include "capture_import.h"
#include "import_perfdata.h"

extern char **environ;

/* Called for every sample (its sample dict is most of perf's cost): kept to one write. */
static const char perf_handler[] =
	"import sys\n"
	"w = sys.stdout.write\n"
	"def trace_unhandled(event_name, context, fields, sample):\n"
	"    if event_name[:5] != 'kvm__':\n"
	"        return\n"
	"    s = sample['sample']\n"
	"    w('%s\\t%d\\t%d\\t%d\\t%d\\t%s\\t%s\\n' % (event_name[5:], s['time'], s['pid'],\n"
	"      s['tid'], s['cpu'], str(sample.get('comm', '')).replace('\\t', ' ')\n"
	"      .replace('\\n', ' '), ' '.join([k + '=' + str(v) for k, v in fields.items()\n"
	"      if v.__class__ is int and k[:7] != 'common_'])))\n";

#define PERF_FIELDS_MAX	32

struct perf_fields {
	int nr;
	char *name[PERF_FIELDS_MAX];
	__u64 val[PERF_FIELDS_MAX];
};

struct perf_source {
	struct event_source s;
	const char *path;
	int script_fd;			/* the handler, in memory (no file left behind) */
	int err_fd;			/* perf's stderr, in memory, for the messages */
	pid_t pid;
	FILE *out;			/* perf script's standard output */
	char *line;
	size_t line_cap;
	__u64 lineno;
	struct capture_import *ci;
	bool ended;
	char clock[32];
};

static bool perf_field(const void *ctx, const char *name, __u64 *val)
{
	const struct perf_fields *f = ctx;

	for (int i = 0; i < f->nr; i++) {
		if (!strcmp(f->name[i], name)) {
			*val = f->val[i];
			return true;
		}
	}
	return false;
}

/* Splits one handler line in place; false when it is not one (perf printed something else). */
static bool parse_line(char *line, struct tp_record *r, struct perf_fields *f)
{
	char *col[7], *save = NULL, *kv;
	int n = 0;

	line[strcspn(line, "\n")] = 0;
	for (char *p = line; n < 7; n++) {
		col[n] = p;
		p = strchr(p, '\t');
		if (!p)
			break;
		*p++ = 0;
	}
	if (n != 6)
		return false;
	r->event = col[0];
	r->ts_ns = strtoull(col[1], NULL, 10);
	r->tgid = (__u32)strtoul(col[2], NULL, 10);
	r->tid = (__u32)strtoul(col[3], NULL, 10);
	r->cpu = (__u32)strtoul(col[4], NULL, 10);
	r->comm = col[5];
	f->nr = 0;
	for (kv = strtok_r(col[6], " ", &save); kv && f->nr < PERF_FIELDS_MAX;
	     kv = strtok_r(NULL, " ", &save)) {
		char *eq = strchr(kv, '=');

		if (!eq)
			return false;
		*eq = 0;
		f->name[f->nr] = kv;
		/* Signed fields print negative: keep their two's complement, as trace.dat has. */
		f->val[f->nr++] = eq[1] == '-' ? (__u64)strtoll(eq + 1, NULL, 10)
					       : strtoull(eq + 1, NULL, 10);
	}
	return true;
}

/* What perf wrote on its standard error, from the start; NULL if it cannot be read. */
static FILE *perf_stderr(struct perf_source *p)
{
	int fd = dup(p->err_fd);
	FILE *f;

	if (fd < 0)
		return NULL;
	f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		return NULL;
	}
	rewind(f);
	return f;
}

/* perf's first line of complaint, for the one-line error. */
static void perf_complaint(struct perf_source *p, char *buf, size_t len)
{
	FILE *f = perf_stderr(p);
	char line[160];

	snprintf(buf, len, "perf script failed");
	while (f && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		/* perf warns about the kvm formats libtraceevent cannot parse: not the cause. */
		if (!*line || strstr(line, "libtraceevent") || strstr(line, "bad op token") ||
		    strstr(line, "expected type") || line[0] == ' ')
			continue;
		snprintf(buf, len, "perf script: %s", line);
		break;
	}
	if (f)
		fclose(f);
}

/*
 * perf's ring buffers overflowed while it recorded: it says "lost N chunks" at the end, not how
 * many events those chunks held (one or more each): at least N are missing, said so.
 */
static void perf_lost(struct perf_source *p)
{
	FILE *f = perf_stderr(p);
	unsigned long long n = 0;
	char line[160];
	const char *at;

	while (f && fgets(line, sizeof(line), f)) {
		at = strstr(line, " and lost ");
		if (at && sscanf(at, " and lost %llu chunks", &n) == 1)
			break;
	}
	if (f)
		fclose(f);
	if (!n)
		return;
	fprintf(stderr, "vmexit: %s: perf lost %llu chunks of events while recording (one or more "
		"events each): counted as %llu lost, at least that many\n", p->path, n, n);
	capture_import_missed(p->ci, 0, n);
}

/* Waits for perf; 0 when it succeeded, else -1 with the message. */
static int perf_wait(struct perf_source *p, char *err, size_t errlen)
{
	char why[200];
	struct stat st;
	int status = 0;

	if (p->out) {
		fclose(p->out);
		p->out = NULL;
	}
	if (p->pid > 0 && waitpid(p->pid, &status, 0) < 0)
		status = -1;
	p->pid = 0;
	if (WIFEXITED(status) && !WEXITSTATUS(status))
		return 0;
	if (WIFSIGNALED(status))
		snprintf(why, sizeof(why), "perf script was killed by signal %d", WTERMSIG(status));
	else
		perf_complaint(p, why, sizeof(why));
	snprintf(err, errlen, "%s: offset %lld: not a readable perf.data (truncated or damaged?): "
		 "%s", p->path, stat(p->path, &st) ? 0ll : (long long)st.st_size, why);
	return -1;
}

static int perf_next(struct event_source *s, struct rec_item *item, char *err, size_t errlen)
{
	struct perf_source *p = (struct perf_source *)s;
	struct perf_fields f;

	while (!capture_import_pop(p->ci, item)) {
		struct tp_record r = { .field = perf_field, .ctx = &f };
		int ret;

		if (p->ended)
			return 0;
		if (getline(&p->line, &p->line_cap, p->out) < 0) {
			if (perf_wait(p, err, errlen))
				return -1;
			perf_lost(p);
			p->ended = true;
			capture_import_end(p->ci);
			capture_import_notes(p->ci);
			continue;
		}
		p->lineno++;
		if (!parse_line(p->line, &r, &f))
			continue;
		ret = capture_import_add(p->ci, &r);
		if (ret) {
			snprintf(err, errlen, "%s: record %llu: %s", p->path,
				 (unsigned long long)p->lineno, strerror(-ret));
			return -1;
		}
	}
	return 1;
}

static void perf_close(struct event_source *s)
{
	struct perf_source *p = (struct perf_source *)s;

	if (p->out)
		fclose(p->out);
	if (p->pid > 0) {
		kill(p->pid, SIGTERM);
		waitpid(p->pid, NULL, 0);
	}
	if (p->script_fd >= 0)
		close(p->script_fd);
	if (p->err_fd >= 0)
		close(p->err_fd);
	free(p->line);
	capture_import_free(p->ci);
	free(p);
}

static const struct event_source_ops perf_ops = {
	.next = perf_next, .close = perf_close,
};

/* perf.data's fixed header: magic, size, attr_size, (offset, size) of attrs, data and event
 * types, then the bitmap of the feature sections that follow the data. */
struct perf_file_head {
	__u64 magic, size, attr_size;
	__u64 sec[3][2];
	__u64 features[4];
};

/* Whether [off, off + size) lies in a file of len bytes; *end is where it ends. */
static bool section_fits(__u64 off, __u64 size, __u64 len, __u64 *end)
{
	*end = off + size;
	return off <= len && size <= len - off;
}

/*
 * The clock of the samples' times, from the first event's attributes (perf record takes one
 * clock for all): perf_clock unless recorded with -k/--clockid. off: where the attributes
 * start. The POSIX clocks by their names, as perf's -k takes them.
 */
static void perf_clock_name(FILE *f, __u64 off, char *buf, size_t len)
{
	static const char *const posix[] = {
		[CLOCK_REALTIME] = "CLOCK_REALTIME", [CLOCK_MONOTONIC] = "CLOCK_MONOTONIC",
		[CLOCK_MONOTONIC_RAW] = "CLOCK_MONOTONIC_RAW", [CLOCK_BOOTTIME] = "CLOCK_BOOTTIME",
		[CLOCK_TAI] = "CLOCK_TAI",
	};
	struct perf_event_attr a = { 0 };
	size_t n;

	snprintf(buf, len, "perf_clock");
	if (fseeko(f, (off_t)off, SEEK_SET))
		return;
	n = fread(&a, 1, sizeof(a), f);
	/* clockid came with the attributes' fourth size (Linux 4.1); before, no -k. */
	if (n < offsetof(struct perf_event_attr, clockid) + sizeof(a.clockid) ||
	    a.size < offsetof(struct perf_event_attr, clockid) + sizeof(a.clockid) ||
	    !a.use_clockid)
		return;
	if (a.clockid >= 0 && (size_t)a.clockid < sizeof(posix) / sizeof(posix[0]) &&
	    posix[a.clockid])
		snprintf(buf, len, "%s", posix[a.clockid]);
	else
		snprintf(buf, len, "clockid=%d", a.clockid);
}

/*
 * Every section perf.data's header points to must lie within the file: perf itself crashes on
 * some files cut short instead of saying so. clock gets the samples' clock
 * (perf_clock_name()). 0, or -1 with the message.
 */
static int perf_header_check(const char *path, char *clock, size_t clocklen, char *err,
			     size_t errlen)
{
	static const char *const section[] = { "attributes", "data" };
	struct perf_file_head h;
	__u64 len, end, nfeat = 0, ft[2];
	struct stat st;
	FILE *f = fopen(path, "rb");
	size_t n = f ? fread(&h, 1, sizeof(h), f) : 0;
	int ret = -1;

	if (!f || fstat(fileno(f), &st) || n != sizeof(h)) {
		snprintf(err, errlen, "%s: offset %zu: truncated perf.data: its header is %zu bytes",
			 path, n, sizeof(h));
		goto out;
	}
	len = (__u64)st.st_size;
	/* `perf record -o -` writes a stream with a 16-byte header and no section table; its
	 * attributes come as its first record (PERF_RECORD_HEADER_ATTR, 64), after its own
	 * 8-byte header. */
	if (h.size == 16) {
		struct perf_event_header eh;

		snprintf(clock, clocklen, "perf_clock");
		if (!fseeko(f, 16, SEEK_SET) && fread(&eh, sizeof(eh), 1, f) == 1 && eh.type == 64)
			perf_clock_name(f, 16 + sizeof(eh), clock, clocklen);
		ret = 0;
		goto out;
	}
	/* Each error names the header field that points past the end, as trace.dat's do. */
	for (int i = 0; i < 2; i++) {
		if (!section_fits(h.sec[i][0], h.sec[i][1], len, &end)) {
			snprintf(err, errlen, "%s: offset %zu: truncated or damaged perf.data: its "
				 "%s section (%llu bytes at offset %llu) runs past the file's %llu "
				 "bytes", path, offsetof(struct perf_file_head, sec[i]), section[i],
				 (unsigned long long)h.sec[i][1], (unsigned long long)h.sec[i][0],
				 (unsigned long long)len);
			goto out;
		}
	}
	for (int i = 0; i < 4; i++)
		nfeat += (__u64)__builtin_popcountll(h.features[i]);
	/* The feature table, after the data, and each feature it points to. */
	for (__u64 i = 0; i < nfeat; i++) {
		__u64 at = h.sec[1][0] + h.sec[1][1] + i * sizeof(ft);

		if (fseeko(f, (off_t)at, SEEK_SET) || fread(ft, sizeof(ft), 1, f) != 1) {
			snprintf(err, errlen, "%s: offset %llu: truncated perf.data: its header "
				 "names %llu features, whose table runs past the file's %llu bytes",
				 path, (unsigned long long)at, (unsigned long long)nfeat,
				 (unsigned long long)len);
			goto out;
		}
		if (!section_fits(ft[0], ft[1], len, &end)) {
			snprintf(err, errlen, "%s: offset %llu: truncated or damaged perf.data: "
				 "feature %llu of %llu (%llu bytes at offset %llu) runs past the "
				 "file's %llu bytes", path, (unsigned long long)at,
				 (unsigned long long)i + 1, (unsigned long long)nfeat,
				 (unsigned long long)ft[1], (unsigned long long)ft[0],
				 (unsigned long long)len);
			goto out;
		}
	}
	perf_clock_name(f, h.sec[0][0], clock, clocklen);
	ret = 0;
out:
	if (f)
		fclose(f);
	return ret;
}

struct event_source *perf_native_open(const char *path, bool *fallback, char *err,
				      size_t errlen)
{
	char clock[64];

	*fallback = false;
	if (perf_header_check(path, clock, sizeof(clock), err, errlen))
		return NULL;
	return perfdata_source_open(path, clock, fallback, err, errlen);
}

struct event_source *perf_source_open(const char *path, char *err, size_t errlen)
{
	struct perf_source *p = calloc(1, sizeof(*p));
	posix_spawn_file_actions_t fa;
	int pfd[2] = { -1, -1 }, ret;
	char script[40];
	char *argv[] = { "perf", "script", "-f", "-i", (char *)path, "-s", script, NULL };

	if (!p) {
		snprintf(err, errlen, "%s: %s", path, strerror(ENOMEM));
		return NULL;
	}
	p->script_fd = p->err_fd = -1;
	if (perf_header_check(path, p->clock, sizeof(p->clock), err, errlen)) {
		perf_close(&p->s);
		return NULL;
	}
	/* VMEXIT_PERF_SCRIPT=1: perf script even where the native reader would do (tests). */
	if (!env_knob_on("VMEXIT_PERF_SCRIPT")) {
		bool fallback;
		struct event_source *n = perfdata_source_open(path, p->clock, &fallback, err,
							       errlen);

		if (n || !fallback) {
			perf_close(&p->s);
			return n;
		}
	}
	p->s.ops = &perf_ops;
	p->s.lost_source = LOST_SRC_PERF;
	/* Keys from the capture's own kvm_pio, kvm_mmio... (capture_import.c). */
	p->s.meta.keys = true;
	p->s.clock = p->clock;
	p->path = path;
	p->ci = capture_import_new(path, "perf.data", false);
	/* Both inherited by perf (no CLOEXEC): it runs the handler as /proc/self/fd/N. */
	p->script_fd = memfd_create("vmexit-perf-handler", 0);
	p->err_fd = memfd_create("vmexit-perf-stderr", 0);
	if (!p->ci || p->script_fd < 0 || p->err_fd < 0 || pipe2(pfd, O_CLOEXEC)) {
		snprintf(err, errlen, "%s: cannot prepare perf script: %s", path,
			 strerror(!p->ci ? ENOMEM : errno));
		goto fail;
	}
	if (write(p->script_fd, perf_handler, sizeof(perf_handler) - 1) !=
	    sizeof(perf_handler) - 1) {
		snprintf(err, errlen, "%s: cannot prepare perf script: %s", path, strerror(errno));
		goto fail;
	}
	/* The language given: a path without ".py" does not tell perf. */
	snprintf(script, sizeof(script), "python:/proc/self/fd/%d", p->script_fd);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, pfd[1], STDOUT_FILENO);
	posix_spawn_file_actions_adddup2(&fa, p->err_fd, STDERR_FILENO);
	posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
	ret = posix_spawnp(&p->pid, "perf", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (ret) {
		p->pid = 0;
		snprintf(err, errlen, "%s: offset 0: a perf.data, read with perf, which cannot run "
			 "(%s): install it (Debian: apt-get install linux-perf)", path,
			 strerror(ret));
		goto fail;
	}
	close(pfd[1]);
	pfd[1] = -1;
	p->out = fdopen(pfd[0], "r");
	if (!p->out) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		goto fail;
	}
	return &p->s;
fail:
	for (int i = 0; i < 2; i++) {
		if (pfd[i] >= 0 && !(i == 0 && p->out))
			close(pfd[i]);
	}
	perf_close(&p->s);
	return NULL;
}
