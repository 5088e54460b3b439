// SPDX-License-Identifier: GPL-2.0
/*
 * Built-in key names (src/model/key_names.c) against the numbers of their sources: the host's
 * interrupt vectors of Linux's arch/x86/include/asm/irq_vectors.h.
 */
#include "check.h"
#include "key_names.h"

static const char *name_of(__u32 kind, __u64 key)
{
	struct key_note k = { .kind = kind, .key = key };

	return key_builtin_name(&k);
}

static void test_vectors(void)
{
	struct key_note k = { .kind = KEY_VECTOR, .key = 0xec };
	char b[64];

	CHECK_STR(name_of(KEY_VECTOR, 0x02), "NMI");
	CHECK_STR(name_of(KEY_VECTOR, 0xec), "LOCAL_TIMER");
	CHECK_STR(name_of(KEY_VECTOR, 0xf0), "POSTED_INTR_NESTED");
	CHECK_STR(name_of(KEY_VECTOR, 0xf1), "POSTED_INTR_WAKEUP");
	CHECK_STR(name_of(KEY_VECTOR, 0xf2), "POSTED_INTR");
	CHECK_STR(name_of(KEY_VECTOR, 0xf6), "IRQ_WORK");
	CHECK_STR(name_of(KEY_VECTOR, 0xfb), "CALL_FUNCTION_SINGLE");
	CHECK_STR(name_of(KEY_VECTOR, 0xfc), "CALL_FUNCTION");
	CHECK_STR(name_of(KEY_VECTOR, 0xfd), "RESCHEDULE");
	CHECK_STR(name_of(KEY_VECTOR, 0xff), "SPURIOUS_APIC");
	/* 0xf5 is unused; 0x41 is a device's (allocated at run time); 0xeb only since 6.10. */
	CHECK_STR(name_of(KEY_VECTOR, 0xf5), "");
	CHECK_STR(name_of(KEY_VECTOR, 0x41), "");
	CHECK_STR(name_of(KEY_VECTOR, 0xeb), "");
	/* The numbers name vectors only: port 0xfd is no RESCHEDULE. */
	CHECK_STR(name_of(KEY_PORT, 0xfd), "fpu");
	CHECK_STR(key_kind_name(KEY_VECTOR), "vector");
	CHECK_STR(key_str(&k, key_builtin_name(&k), b, sizeof(b)), "0xec LOCAL_TIMER");
}

int main(void)
{
	test_vectors();
	CHECK_DONE("test_key_names");
}
