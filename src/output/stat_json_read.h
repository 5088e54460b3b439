/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reads back what `vmexit stat --json` (or report --json) printed: its final object's rows, in
 * the row model (rows.h), their guests' names and the time they cover. With --hist the rows
 * carry their histograms; --split, --by vcpu and --by key rows carry what they printed.
 */
#ifndef VMEXIT_STAT_JSON_READ_H
#define VMEXIT_STAT_JSON_READ_H

#include <stdbool.h>
#include <stddef.h>
#include "name_cache.h"
#include "rows.h"

/* Does the file at path start like JSON ('{')? */
bool stat_json_looks(const char *path);
/*
 * Rows into rt (tgid the row's pid, start 0), names into names, *interval_s the time the rows
 * cover. Of several objects (stat -i's intervals), the last. 0, or -1 with one line in err.
 */
int stat_json_read(const char *path, struct row_table *rt, struct name_cache *names,
		   double *interval_s, char *err, size_t errlen);

#endif /* VMEXIT_STAT_JSON_READ_H */
