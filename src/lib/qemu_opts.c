// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include <string.h>
#include "qemu_opts.h"

/* One element's value into out when take, ",," undoubled; returns where the next begins. */
static const char *opts_value(const char *p, bool take, char *out, size_t outlen)
{
	size_t n = 0;

	for (; *p; p++) {
		if (*p == ',') {
			if (p[1] != ',')
				break;
			p++;
		}
		if (take && n + 1 < outlen)
			out[n++] = *p;
	}
	if (take && outlen)
		out[n] = '\0';
	return *p == ',' ? p + 1 : p;
}

bool qemu_opts_get(const char *opts, const char *key, const char *implied, char *out,
		   size_t outlen)
{
	size_t klen = strlen(key);
	bool first = true, found = false;
	const char *p = opts;

	while (*p) {
		size_t n = strcspn(p, "=,");
		bool named = p[n] == '=', take;

		if (named) {
			take = n == klen && !strncmp(p, key, n);
			p = opts_value(p + n + 1, take, out, outlen);
		} else if (first && implied) {
			take = !strcmp(implied, key);
			p = opts_value(p, take, out, outlen);
		} else {
			/* A flag: "server" is server=on, "noserver" server=off. */
			const char *v = NULL;

			if (n == klen && !strncmp(p, key, n))
				v = "on";
			else if (n == klen + 2 && !strncmp(p, "no", 2) && !strncmp(p + 2, key, klen))
				v = "off";
			take = v != NULL;
			if (take && outlen)
				snprintf(out, outlen, "%s", v);
			p = opts_value(p, false, NULL, 0);
		}
		found |= take;
		first = false;
	}
	return found;
}

bool qemu_opts_true(const char *v)
{
	return !strcmp(v, "on") || !strcmp(v, "yes") || !strcmp(v, "true") || !strcmp(v, "y");
}
