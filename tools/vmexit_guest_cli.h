/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the bundled guest workloads (vmexit-guest.c for x86, vmexit-guest-arm64.c) share on
 * their command line: messages, the option loop's splitting of "--opt VAL" / "--opt=VAL",
 * counts and names. Each tool defines PROG and MAX_NAME before including it; static functions
 * only, as the tools are single-file static binaries.
 */
#ifndef VMEXIT_GUEST_CLI_H
#define VMEXIT_GUEST_CLI_H

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void __attribute__((format(printf, 1, 2))) errmsg(const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n;

	/* One write per message: vCPU threads and VM processes share stderr. */
	n = snprintf(line, sizeof(line), PROG ": ");
	va_start(ap, fmt);
	n += vsnprintf(line + n, sizeof(line) - n, fmt, ap);
	va_end(ap);
	if (n >= (int)sizeof(line) - 1)
		n = sizeof(line) - 2;
	line[n++] = '\n';
	if (write(STDERR_FILENO, line, n) < 0)
		return;
}

static void __attribute__((noreturn, format(printf, 1, 2))) usage_error(const char *fmt, ...)
{
	char line[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	errmsg("%s", line);
	exit(2);
}

/*
 * The value of the option at argv[*i] ("--opt=VAL", or "--opt VAL" / "-name VAL", moving *i
 * past VAL), its name in opt. Anything else is a usage error.
 */
static const char *option_value(int argc, char **argv, int *i, char *opt, size_t optlen)
{
	const char *arg = argv[*i], *eq;

	if (strncmp(arg, "--", 2) && strcmp(arg, "-name"))
		usage_error("unexpected argument '%s' (see --help)", arg);
	eq = strchr(arg, '=');
	snprintf(opt, optlen, "%.*s", eq ? (int)(eq - arg) : (int)strlen(arg), arg);
	if (eq)
		return eq + 1;
	if (*i + 1 < argc)
		return argv[++*i];
	usage_error("%s needs a value (see --help)", opt);
}

/* The index of "--NAME" in names (count of them), or count. */
static int option_index(const char *opt, const char *const *names, int count)
{
	int k;

	for (k = 0; k < count; k++) {
		if (!strcmp(opt + 2, names[k]))
			break;
	}
	return k;
}

static uint64_t parse_count(const char *opt, const char *val, uint64_t min, uint64_t max)
{
	char *end;
	unsigned long long n;

	errno = 0;
	n = strtoull(val, &end, 0);
	if (!*val || *end || errno || val[0] == '-' || n < min || n > max)
		usage_error("%s: '%s' is not a valid count (use an integer from %" PRIu64 " to %"
			    PRIu64 ")", opt, val, min, max);
	return n;
}

static bool valid_name(const char *s)
{
	if (!*s || strlen(s) > MAX_NAME)
		return false;
	for (; *s; s++) {
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '-' || *s == '_' || *s == '.'))
			return false;
	}
	return true;
}

/* --name: refused unless valid_name(). */
static const char *parse_name(const char *val)
{
	if (!valid_name(val))
		usage_error("--name: '%s' is not a valid name (use 1-%d letters, digits, '.', '_', "
			    "'-')", val, MAX_NAME);
	return val;
}

/* Parses "guest=NAME,debug-threads=on" (what we put there ourselves) and returns NAME. */
static const char *parse_qemu_name(const char *val)
{
	static char name[MAX_NAME + 1];
	const char *p = strncmp(val, "guest=", 6) ? val : val + 6;
	size_t n = strcspn(p, ",");

	if (n > MAX_NAME)
		usage_error("-name: '%s' is too long (at most %d characters)", val, MAX_NAME);
	memcpy(name, p, n);
	name[n] = '\0';
	if (!valid_name(name))
		usage_error("-name: '%s' is not a valid name (use letters, digits, '.', '_', '-')",
			    val);
	return name;
}

#endif /* VMEXIT_GUEST_CLI_H */
