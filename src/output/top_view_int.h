/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the pieces of the `vmexit top` model share (top_items.c builds the items that
 * top_layout.c lays out, top_keys.c moves through and top_log.c prints); not for callers.
 */
#ifndef VMEXIT_TOP_VIEW_INT_H
#define VMEXIT_TOP_VIEW_INT_H

#include "top_view.h"

/* v's items for the level ui is at, grouped, filtered, sorted, stuck ones marked. */
int top_build_items(struct top_view *v, const struct top_data *d, const struct top_ui *ui);
/* The VMs with any rows, sorted, duplicates dropped; *n of them (NULL with n 0 if none). */
__u32 *top_vm_list(const struct top_data *d, int *n);

#endif
