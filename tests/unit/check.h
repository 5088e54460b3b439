/* SPDX-License-Identifier: GPL-2.0 */
/* Minimal assertion helpers for the unit tests: each failure prints file:line and the values. */
#ifndef VMEXIT_CHECK_H
#define VMEXIT_CHECK_H

#include <stdio.h>
#include <string.h>

static int check_failures;

#define CHECK(cond)							\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "%s:%d: CHECK(%s) failed\n",	\
				__FILE__, __LINE__, #cond);		\
			check_failures++;				\
		}							\
	} while (0)

#define CHECK_EQ_U64(a, b)						\
	do {								\
		unsigned long long __a = (a), __b = (b);		\
		if (__a != __b) {					\
			fprintf(stderr, "%s:%d: %s == %llu, expected %s == %llu\n", \
				__FILE__, __LINE__, #a, __a, #b, __b);	\
			check_failures++;				\
		}							\
	} while (0)

#define CHECK_STR(a, b)							\
	do {								\
		const char *__a = (a), *__b = (b);			\
		if (!__a || !__b || strcmp(__a, __b)) {			\
			fprintf(stderr, "%s:%d: %s == \"%s\", expected \"%s\"\n", \
				__FILE__, __LINE__, #a, __a ? __a : "(null)", \
				__b ? __b : "(null)");			\
			check_failures++;				\
		}							\
	} while (0)

/* Ends main(): prints one PASS/FAIL line the runner counts. */
#define CHECK_DONE(name)						\
	do {								\
		printf("%s: %s\n", check_failures ? "FAIL" : "PASS", name); \
		return check_failures ? 1 : 0;				\
	} while (0)

#endif /* VMEXIT_CHECK_H */
