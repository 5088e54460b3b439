// SPDX-License-Identifier: GPL-2.0
/*
 * --guest-trace GUEST=FILE[,clock=ns|tsc]: the forms taken and refused, and a FILE that cannot
 * be read twice (a FIFO, a character device) refused at the option, in one line naming it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "guest_merge.h"

static int parse(const char *arg, struct guest_trace_spec *s, char *err, size_t len)
{
	err[0] = 0;
	return guest_trace_spec_parse(arg, s, err, len);
}

int main(void)
{
	char dir[] = "/tmp/vmexit-gts-XXXXXX", arg[256], fifo[128], file[128], err[512];
	struct guest_trace_spec s;
	FILE *f;

	if (!mkdtemp(dir))
		return 1;
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	snprintf(file, sizeof(file), "%s/g.json", dir);
	CHECK(mkfifo(fifo, 0600) == 0);
	f = fopen(file, "w");
	CHECK(f && fputs("[]\n", f) >= 0 && fclose(f) == 0);

	snprintf(arg, sizeof(arg), "web=%s,clock=ns", file);
	CHECK_EQ_U64(parse(arg, &s, err, sizeof(err)), 0);
	CHECK_STR(s.guest, "web");
	CHECK_STR(s.path, file);
	CHECK(s.ns);
	snprintf(arg, sizeof(arg), "web=%s", file);
	CHECK_EQ_U64(parse(arg, &s, err, sizeof(err)), 0);
	CHECK(!s.ns);
	/* Not there yet: said when it is opened, as any file. */
	CHECK_EQ_U64(parse("web=/nonexistent/g.json", &s, err, sizeof(err)), 0);

	CHECK_EQ_U64(parse("web", &s, err, sizeof(err)), (__u64)-EINVAL);
	CHECK(strstr(err, "GUEST=FILE") != NULL);
	CHECK_EQ_U64(parse("=x", &s, err, sizeof(err)), (__u64)-EINVAL);
	snprintf(arg, sizeof(arg), "web=%s,clock=us", file);
	CHECK_EQ_U64(parse(arg, &s, err, sizeof(err)), (__u64)-EINVAL);
	CHECK(strstr(err, "clock=us is not a clock") != NULL);

	/* Read twice: a FIFO or a device gives its bytes once. */
	snprintf(arg, sizeof(arg), "web=%s", fifo);
	CHECK_EQ_U64(parse(arg, &s, err, sizeof(err)), (__u64)-EINVAL);
	CHECK(strstr(err, fifo) && strstr(err, "not a regular file") &&
	      strstr(err, "copy it to a file"));
	CHECK(strchr(err, '\n') == NULL);
	CHECK_EQ_U64(parse("web=/dev/null", &s, err, sizeof(err)), (__u64)-EINVAL);
	CHECK(strstr(err, "not a regular file") != NULL);

	unlink(fifo);
	unlink(file);
	rmdir(dir);
	CHECK_DONE("guest_trace_spec");
}
