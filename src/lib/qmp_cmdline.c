// SPDX-License-Identifier: GPL-2.0
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "proc_names.h"
#include "qemu_opts.h"
#include "qmp_cmdline.h"

#define MAX_CHARDEVS	32
#define OPT_MAX		4096

/* A QMP monitor of the command line: its socket, or the chardev that has it. */
struct qmp_mon {
	char path[QMP_PATH_MAX];	/* "": chardev names it */
	char chardev[64];
};

struct chardev_socket {
	char id[64];
	char path[QMP_PATH_MAX];
};

static bool opt_is(const char *arg, size_t alen, const char *name)
{
	/* QEMU takes "-opt" and "--opt". */
	if (alen > 1 && arg[0] == '-' && arg[1] == '-') {
		arg++;
		alen--;
	}
	return alen == strlen(name) && !memcmp(arg, name, alen);
}

/* A listening socket's path in a QemuOpts value, or false. implied: the path's key when first. */
static bool server_path(const char *opts, const char *implied, char *path)
{
	char v[16], p[QMP_PATH_MAX + 1];

	if (!qemu_opts_get(opts, "server", NULL, v, sizeof(v)) || !qemu_opts_true(v))
		return false;
	/* A path too long for a socket address is none QEMU could listen on. */
	if (!qemu_opts_get(opts, "path", implied, p, sizeof(p)) || !*p ||
	    strlen(p) >= QMP_PATH_MAX)
		return false;
	memcpy(path, p, strlen(p) + 1);
	return true;
}

int qmp_sockets_from_cmdline(const char *args, size_t len, char (*paths)[QMP_PATH_MAX], int max)
{
	struct chardev_socket socks[MAX_CHARDEVS];
	struct qmp_mon mons[MAX_CHARDEVS];
	int nr_socks = 0, nr_mons = 0, n = 0;
	const char *end = args + len, *arg, *next;
	char val[OPT_MAX], v[64];
	size_t alen;

	if (!args || !len)
		return 0;
	next = cmdline_next_arg(args, end, &alen);	/* the program */
	for (arg = next; arg < end && nr_mons < MAX_CHARDEVS; arg = next) {
		bool qmp, chardev, mon;

		next = cmdline_next_arg(arg, end, &alen);
		qmp = opt_is(arg, alen, "-qmp") || opt_is(arg, alen, "-qmp-pretty");
		chardev = opt_is(arg, alen, "-chardev");
		mon = opt_is(arg, alen, "-mon");
		if (!qmp && !chardev && !mon)
			continue;
		if (next >= end)
			break;
		arg = next;
		next = cmdline_next_arg(arg, end, &alen);
		snprintf(val, sizeof(val), "%.*s", (int)alen, arg);
		if (qmp && !strncmp(val, "unix:", 5)) {
			/* The legacy chardev syntax: unix:PATH[,server=on,...]. */
			if (server_path(val + 5, "path", mons[nr_mons].path))
				nr_mons++;
		} else if (chardev && nr_socks < MAX_CHARDEVS &&
			   qemu_opts_get(val, "backend", "backend", v, sizeof(v)) &&
			   !strcmp(v, "socket") &&
			   qemu_opts_get(val, "id", NULL, socks[nr_socks].id, sizeof(socks->id)) &&
			   server_path(val, NULL, socks[nr_socks].path)) {
			nr_socks++;
		} else if (mon && qemu_opts_get(val, "mode", NULL, v, sizeof(v)) &&
			   !strcmp(v, "control") &&
			   qemu_opts_get(val, "chardev", "chardev", mons[nr_mons].chardev,
					 sizeof(mons->chardev))) {
			mons[nr_mons++].path[0] = '\0';
		}
	}
	/* QEMU makes every chardev before any monitor: a -mon may name one given after it. */
	for (int i = 0; i < nr_mons && n < max; i++) {
		const char *p = mons[i].path;

		for (int j = nr_socks - 1; !*p && j >= 0; j--) {
			if (!strcmp(socks[j].id, mons[i].chardev))
				p = socks[j].path;
		}
		if (*p)
			memcpy(paths[n++], p, strlen(p) + 1);	/* < QMP_PATH_MAX: server_path() */
	}
	return n;
}
