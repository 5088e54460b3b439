// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: arbitrary rules text through the template compiler, and every rules set
 * that compiles rendered against a few fixed events. Besides the sanitizers, it checks the
 * renderer's snprintf contract: a truncated render is a prefix of the full one and reports the
 * same length.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "template.h"

static const struct vmexit_event events[] = {
	{ .ts_ns = 5123456789ull, .latency_ns = 2500, .rip = 0xfffff80012345678ull,
	  .info1 = 0x03f80000, .tgid = 4242, .tid = 4250, .vcpu = 1, .reason = 30, .cpu = 7,
	  .isa = VMEXIT_ISA_VMX, .type = VMEXIT_EV_EXIT },
	{ .ts_ns = 5123457000ull, .latency_ns = 900000, .rip = 0x401000, .info1 = 0x600011,
	  .info2 = 0xfee00000, .tgid = 4242, .tid = 4250, .vcpu = 1, .reason = 0x7b, .cpu = 3,
	  .isa = VMEXIT_ISA_SVM, .type = VMEXIT_EV_EXIT },
	{ .ts_ns = 1, .latency_ns = ~0ull, .info1 = ~0ull, .tgid = 1, .tid = 2, .vcpu = -1,
	  .reason = 0x80000004, .intr_info = 0x80000b0e, .error_code = ~0u,
	  .isa = VMEXIT_ISA_USER, .type = VMEXIT_EV_USER_EXIT },
	{ .ts_ns = ~0ull, .info1 = 1, .info2 = 2, .tid = 2, .vcpu = 0x7fffffff, .isa = 9,
	  .type = VMEXIT_EV_TSC_OFFSET },
	{ .ts_ns = 7, .reason = 0xffffffff, .isa = VMEXIT_ISA_SVM, .type = 77 },
};

static const char *guest(void *ctx, __u32 tgid, __u64 ts_ns)
{
	(void)ctx;
	(void)ts_ns;
	return tgid == 4242 ? "vm-%s%n" : NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char full[1 << 16], part[1 << 16];
	/* Two envs fed the same events stay in lockstep, so their lines must be identical. */
	struct tmpl_env a = { .guest_name = guest }, b;
	struct tmpl_rules *r;
	char err[256];
	size_t i;

	/* The first byte picks the TSC rate (0: ns), silly ones included. */
	if (size) {
		static const double mhz[] = { 0, 2000, 0.001, 1e9, -5, 3999.999 };

		a.tsc_mhz = mhz[data[0] % (sizeof(mhz) / sizeof(mhz[0]))];
		data++;
		size--;
	}
	b = a;
	if (tmpl_rules_parse((const char *)data, size, "fuzz", &r, err, sizeof(err))) {
		if (!memchr(err, '\0', sizeof(err)) || strncmp(err, "fuzz:", 5))
			abort();
		return 0;
	}
	for (i = 0; i < sizeof(events) / sizeof(events[0]); i++) {
		size_t cut = (size + i * 31) % 97;
		int n = tmpl_render(r, &a, &events[i], full, sizeof(full));
		int m = tmpl_render(r, &b, &events[i], part, cut);

		if (n < 0 || n != m)
			abort();
		if ((size_t)n < sizeof(full) && strlen(full) != (size_t)n)
			abort();
		if (cut && (strlen(part) != ((size_t)n < cut ? (size_t)n : cut - 1) ||
			    memcmp(part, full, strlen(part))))
			abort();
	}
	tmpl_env_release(&a);
	tmpl_env_release(&b);
	tmpl_rules_free(r);
	return 0;
}
