// SPDX-License-Identifier: GPL-2.0
/* stat --wake --kvm-check: vmexit's halts against KVM's halt statistics (kvm_halt_check.h). */
#include "kvm_halt_check.h"

/* vmexit's halts of one VMM, its vCPUs summed. */
struct halt_sums {
	__u64 halts, unslept, slept, slept_ns, unslept_ns;
};

static struct halt_sums sums_of(const struct wake_snapshot *w, __u32 tgid)
{
	struct halt_sums s = {};

	for (size_t i = 0; i < w->nr_hlt; i++) {
		const struct hlt_cell *c = &w->hcells[i];

		if (w->hkeys[i].tgid != tgid)
			continue;
		s.halts += c->halts;
		s.unslept += c->polled;
		s.slept += c->poll_slept + c->slept;
		s.slept_ns += c->slept_halt_ns;
		s.unslept_ns += c->halt_ns - c->slept_halt_ns;
	}
	return s;
}

#define ULL(x)	((unsigned long long)(x))

/* Why the two sides can differ: the halts only one of them saw. */
static const char why[] = "a halt in progress when vmexit started (KVM counts it, vmexit has "
			  "no state for its thread yet), or threads past vmexit's map (see lost)";

static int check_guest(struct kvm_guest *g, const struct wake_snapshot *w, FILE *out)
{
	struct halt_sums s = sums_of(w, g->v.pid);
	bool f_wait, f_fail, f_succ, f_hist, f_ok, f_try;
	__u64 wait = kvm_guest_total(g, "halt_wait_ns", &f_wait);
	__u64 fail = kvm_guest_total(g, "halt_poll_fail_ns", &f_fail);
	__u64 succ = kvm_guest_total(g, "halt_poll_success_ns", &f_succ);
	__u64 slept = kvm_guest_hist_total(g, "halt_wait_hist", &f_hist);
	__u64 ok = kvm_guest_total(g, "halt_successful_poll", &f_ok);
	__u64 tried = kvm_guest_total(g, "halt_attempted_poll", &f_try);
	const char *name = g->name;
	int pid = g->v.pid, bad = 0;
	bool fits;

	if (f_wait && f_fail) {
		fits = wait + fail == s.slept_ns;
		bad += !fits;
		fprintf(out, "  %s pid %d halt_wait  %s: kvm halt_wait_ns + halt_poll_fail_ns %llu, "
			"vmexit %llu ns in the %llu halts that slept (their kvm_vcpu_wakeup ns)%s%s\n",
			name, pid, fits ? "agree" : "DIFFER", ULL(wait + fail), ULL(s.slept_ns),
			ULL(s.slept), fits ? "" : ": ", fits ? "" : why);
	} else {
		fprintf(out, "  %s pid %d halt_wait  not compared: KVM has no halt_wait_ns or "
			"halt_poll_fail_ns here (Linux 5.16 and later)\n", name, pid);
	}
	if (f_hist) {
		fits = slept == s.slept;
		bad += !fits;
		fprintf(out, "  %s pid %d halts      %s: kvm halt_wait_hist %llu halts that slept, "
			"vmexit %llu (of %llu halts)%s%s\n", name, pid, fits ? "agree" : "DIFFER",
			ULL(slept), ULL(s.slept), ULL(s.halts), fits ? "" : ": ", fits ? "" : why);
	} else {
		fprintf(out, "  %s pid %d halts      not compared: no halt_wait_hist (KVM's "
			"histograms come only through stats fds the VMM holds, not debugfs)\n",
			name, pid);
	}
	/* Bounds: the halts that polled are some of the halts, the polls that did not sleep
	 * some of the halts that did not, and their poll time part of those halts' time. */
	if (f_ok && f_try && f_succ) {
		fits = ok <= tried && tried <= s.halts && ok <= s.unslept && succ <= s.unslept_ns;
		bad += !fits;
		fprintf(out, "  %s pid %d halt_poll  %s: kvm halt_attempted_poll %llu <= vmexit "
			"%llu halts; kvm halt_successful_poll %llu <= vmexit %llu halts that did not "
			"sleep; kvm halt_poll_success_ns %llu <= vmexit %llu ns in those\n", name,
			pid, fits ? "agree" : "DIFFER", ULL(tried), ULL(s.halts), ULL(ok),
			ULL(s.unslept), ULL(succ), ULL(s.unslept_ns));
	}
	return bad;
}

int kvm_halt_check(struct kvm_source *ks, const struct wake_snapshot *w, FILE *out)
{
	int bad = 0;

	fprintf(out, "KVM halt statistics against vmexit's halts (--wake):\n");
	if (!ks->nr)
		fprintf(out, "  no guest's KVM statistics were read: nothing to compare\n");
	for (int g = 0; g < ks->nr; g++)
		bad += check_guest(&ks->guests[g], w, out);
	fprintf(out, "%d disagreement%s\n", bad, bad == 1 ? "" : "s");
	return bad;
}
