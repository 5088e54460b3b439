/* SPDX-License-Identifier: GPL-2.0 */
/* Growing arrays by doubling: appends cost amortised O(1), never a realloc per element. */
#ifndef VMEXIT_ARRAY_GROW_H
#define VMEXIT_ARRAY_GROW_H

#include <errno.h>
#include <stdlib.h>

/*
 * Room for one more element at arr[nr]: when nr has reached cap, arr is reallocated to twice
 * cap (min when empty) and cap updated. 0, or -ENOMEM with arr and cap as they were.
 */
#define array_reserve(arr, nr, cap, min)                                                     \
	({                                                                                    \
		int __ret = 0;                                                                \
                                                                                              \
		if ((nr) >= (cap)) {                                                          \
			__typeof__(cap) __ncap = (cap) ? (cap) * 2 : (min);                   \
			__typeof__(arr) __n = reallocarray((arr), __ncap, sizeof(*(arr)));   \
                                                                                              \
			if (__n) {                                                            \
				(arr) = __n;                                                  \
				(cap) = __ncap;                                               \
			} else {                                                              \
				__ret = -ENOMEM;                                              \
			}                                                                     \
		}                                                                             \
		__ret;                                                                        \
	})

#endif /* VMEXIT_ARRAY_GROW_H */
