/* SPDX-License-Identifier: GPL-2.0 */
#ifndef VMEXIT_EXPO_ACCEPT_H
#define VMEXIT_EXPO_ACCEPT_H

#include "prom_exposition.h"

/* The format an Accept header asks for (NULL: text). */
enum expo_format expo_negotiate(const char *accept);
const char *expo_content_type(enum expo_format fmt);

#endif
