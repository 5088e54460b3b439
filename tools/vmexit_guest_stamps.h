/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vmexit-guest --guest-trace-out FILE and --tsc-offset TICKS: the truth for vmexit report
 * --guest-trace. The guest reads its TSC (rdtsc, in guest code) right before and right after
 * each --io exit and stores both; once the vCPUs are done, the VMM writes the stretches of
 * guest time between two exits as a Chrome trace, times in guest TSC ticks / 1000 (the
 * convention report --guest-trace reads), one track per vCPU (args.vcpu). Stretch k runs from
 * the guest's return from exit k to its next exit, so on the host's timeline it must lie
 * between the end of exit k and the start of exit k + 1. --tsc-offset sets each vCPU's TSC
 * offset (guest TSC - host TSC) to a known value, large enough that a merge that does not
 * shift by it is visibly wrong. Included by vmexit-guest.c only (after its definitions).
 */
#ifndef VMEXIT_GUEST_STAMPS_H
#define VMEXIT_GUEST_STAMPS_H

/* Per vCPU: before and after TSC of each --io exit, 16 bytes, below the stacks. */
#define STAMP_GPA		0x20000ull
#define STAMP_SIZE		0x8000ull
#define STAMP_MAX_EXITS		(STAMP_SIZE / 16)
#define STAMP_MAX_VCPUS		16
#define MSR_IA32_TSC		0x10

/*
 * Sets the vCPU's TSC offset: KVM_VCPU_TSC_OFFSET (Linux 5.16+) sets it exactly; without it, a
 * write of MSR_IA32_TSC makes KVM take offset = value - host TSC, the offset give or take
 * the microseconds between our rdtsc and KVM's. Either way KVM traces kvm_write_tsc_offset.
 */
static int set_tsc_offset(int vcpu_fd, int64_t offset, const char *name)
{
	uint64_t off = (uint64_t)offset;
	struct kvm_device_attr attr = { .group = KVM_VCPU_TSC_CTRL, .attr = KVM_VCPU_TSC_OFFSET,
					.addr = (uint64_t)(uintptr_t)&off };
	struct {
		struct kvm_msrs hdr;
		struct kvm_msr_entry e;
	} msrs = { .hdr.nmsrs = 1, .e.index = MSR_IA32_TSC };

	if (!ioctl(vcpu_fd, KVM_SET_DEVICE_ATTR, &attr))
		return 0;
	msrs.e.data = __rdtsc() + off;
	if (ioctl(vcpu_fd, KVM_SET_MSRS, &msrs) == 1)
		return 0;
	errmsg("%s: cannot set the TSC offset (KVM_VCPU_TSC_OFFSET: %s; MSR_IA32_TSC refused)",
	       name, strerror(errno));
	return -1;
}

/* ts = ticks / 1000 with three decimals: the ticks, exactly. */
static void put_ticks(FILE *f, const char *key, uint64_t ticks)
{
	fprintf(f, "\"%s\":%" PRIu64 ".%03" PRIu64, key, ticks / 1000, ticks % 1000);
}

/*
 * Whether the guest read its TSC with the offset: every stamp within [before, after] of the
 * host's TSC around the run, shifted by it ("yes"), or not shifted ("no": a backend that
 * traces the offset but lets the guest read the host's TSC, as kvm_pvm does), else "unknown"
 * (a scaled TSC). Guest and host TSC are read on the same machine, so this is exact.
 */
static const char *offset_applied(const struct vm *vm, uint64_t before, uint64_t after)
{
	uint64_t n = vm->o->count[K_IO], off = (uint64_t)vm->o->tsc_offset;
	bool yes = true, no = true;

	for (unsigned long v = 0; v < vm->o->vcpus; v++) {
		const uint64_t *s = (const uint64_t *)(vm->mem + STAMP_GPA + STAMP_SIZE * v);

		for (uint64_t k = 0; k < 2 * n; k++) {
			yes = yes && s[k] - (before + off) <= after - before;
			no = no && s[k] - before <= after - before;
		}
	}
	return yes ? "yes" : no ? "no" : "unknown";
}

/* The stretches between exits: B/E pairs and, every other one, an X, to use both forms. */
static int write_stamps(const struct vm *vm, const char *path, uint64_t before, uint64_t after)
{
	FILE *f = fopen(path, "we");
	uint64_t n = vm->o->count[K_IO];
	bool first = true;

	if (!f) {
		errmsg("%s: %s", path, strerror(errno));
		return -1;
	}
	fputs("{\"traceEvents\":[", f);
	for (unsigned long v = 0; v < vm->o->vcpus; v++) {
		const uint64_t *s = (const uint64_t *)(vm->mem + STAMP_GPA + STAMP_SIZE * v);

		for (uint64_t k = 0; k + 1 < n; k++) {
			uint64_t from = s[2 * k + 1], to = s[2 * (k + 1)];

			fprintf(f, "%s\n{\"name\":\"guest after io exit %" PRIu64 "\",\"ph\":\"%s\","
				"\"pid\":%d,\"tid\":%lu,", first ? "" : ",", k, k % 2 ? "X" : "B",
				(int)getpid(), v);
			first = false;
			put_ticks(f, "ts", from);
			if (k % 2) {
				fputc(',', f);
				put_ticks(f, "dur", to - from);
			}
			fprintf(f, ",\"args\":{\"vcpu\":%lu,\"exit\":%" PRIu64 "}}", v, k);
			if (k % 2)
				continue;
			fprintf(f, ",\n{\"ph\":\"E\",\"pid\":%d,\"tid\":%lu,", (int)getpid(), v);
			put_ticks(f, "ts", to);
			fprintf(f, ",\"args\":{\"vcpu\":%lu}}", v);
		}
	}
	fputs("\n],\"displayTimeUnit\":\"ns\"", f);
	if (vm->o->tsc_offset_given) {
		const char *applied = offset_applied(vm, before, after);

		fprintf(f, ",\"metadata\":{\"tsc_offset_applied\":\"%s\"}", applied);
		if (strcmp(applied, "yes"))
			errmsg("%s: note: the guest's TSC does not carry the offset set (%s): this "
			       "KVM traces TSC offsets it does not apply", vm->name, applied);
	}
	fputs("}\n", f);
	if (fclose(f)) {
		errmsg("%s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

#endif /* VMEXIT_GUEST_STAMPS_H */
