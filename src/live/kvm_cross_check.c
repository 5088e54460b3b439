// SPDX-License-Identifier: GPL-2.0
#include "kvm_cross_check.h"
#include "kvm_stat_names.h"

static bool agree(__u64 a, __u64 b)
{
	__u64 d = a > b ? a - b : b - a, m = a > b ? a : b;

	return d * 1000000 <= m * KVM_CHECK_TOLERANCE_PPM;
}

int kvm_cross_check(struct kvm_source *ks, const struct row_table *rows, FILE *out)
{
	int n, bad = 0;
	const struct kvm_stat_alias *al = kvm_stat_aliases(&n);

	fprintf(out, "KVM statistics against vmexit's rows (agree within %.1f %%):\n",
		KVM_CHECK_TOLERANCE_PPM / 1e4);
	if (!ks->nr)
		fprintf(out, "  no guest's KVM statistics were read: nothing to compare\n");
	for (int g = 0; g < ks->nr; g++) {
		struct kvm_guest *kg = &ks->guests[g];

		for (int i = 0; i < n; i++) {
			const struct kvm_stat_alias *a = &al[i];
			bool found, hw;
			__u64 kvm = kvm_guest_total(kg, a->kvm, &found);
			__u64 bpf = kvm_stat_bpf_count(a, rows, kg->v.pid, &hw);
			const char *what = a->match == KVM_MATCH_USER || (!hw && a->user_too) ?
					   "exits to the VMM" : "kvm_exit rows";

			if (!found)
				continue;
			/* Without kvm_exit the BPF side has nothing to hold these against. */
			if (!hw && (a->match == KVM_MATCH_HW_ALL ||
				    (a->match == KVM_MATCH_HW && !a->user_too))) {
				fprintf(out, "  %s pid %d %-10s kvm %llu, not compared: "
					"no kvm:kvm_exit rows (this host's KVM does not fire it)\n",
					kg->name, kg->v.pid, a->name, (unsigned long long)kvm);
				continue;
			}
			if (agree(kvm, bpf)) {
				fprintf(out, "  %s pid %d %-10s agree: kvm %s %llu, vmexit %llu (%s)\n",
					kg->name, kg->v.pid, a->name, a->kvm, (unsigned long long)kvm,
					(unsigned long long)bpf, what);
				continue;
			}
			bad++;
			fprintf(out, "  %s pid %d %-10s DIFFER: kvm %s %llu, vmexit %llu (%s), %+lld: %s\n",
				kg->name, kg->v.pid, a->name, a->kvm, (unsigned long long)kvm,
				(unsigned long long)bpf, what, (long long)(kvm - bpf), a->why);
		}
	}
	fprintf(out, "%d disagreement%s\n", bad, bad == 1 ? "" : "s");
	return bad;
}
