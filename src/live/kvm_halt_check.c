// SPDX-License-Identifier: GPL-2.0
/* stat --wake --kvm-check: vmexit's halts against KVM's halt statistics (kvm_halt_check.h). */
#include "kvm_halt_check.h"

/* vmexit's halts of one VMM, its vCPUs summed. */
struct halt_sums {
	__u64 halts, polled, waited, wait_ns;
};

static struct halt_sums sums_of(const struct wake_snapshot *w, __u32 tgid)
{
	struct halt_sums s = {};

	for (size_t i = 0; i < w->nr_hlt; i++) {
		const struct hlt_cell *c = &w->hcells[i];

		if (w->hkeys[i].tgid != tgid)
			continue;
		s.halts += c->halts;
		s.polled += c->polled;
		s.waited += c->poll_slept + c->slept;
		/* Asleep, then woken and waiting for a CPU: KVM's wait, less the instants
		 * between its clock reads and the switches. */
		s.wait_ns += c->parts[HLT_PART_SLEEP] + c->parts[HLT_PART_RUNQ];
	}
	return s;
}

static bool within(__u64 a, __u64 b, __u64 ppm)
{
	__u64 d = a > b ? a - b : b - a, m = a > b ? a : b;

	return d * 1000000 <= m * ppm;
}

static int check_guest(struct kvm_guest *g, const struct wake_snapshot *w, FILE *out)
{
	struct halt_sums s = sums_of(w, g->v.pid);
	bool f_wait, f_ns, f_ok, f_try;
	__u64 waited = kvm_guest_hist_total(g, "halt_wait_hist", &f_wait);
	__u64 wait_ns = kvm_guest_total(g, "halt_wait_ns", &f_ns);
	__u64 ok = kvm_guest_total(g, "halt_successful_poll", &f_ok);
	__u64 tried = kvm_guest_total(g, "halt_attempted_poll", &f_try);
	const char *name = g->name;
	int pid = g->v.pid, bad = 0;

	if (!f_wait) {
		fprintf(out, "  %s pid %d halts      not compared: this kernel's KVM has no "
			"halt_wait_hist (Linux 5.16 and later)\n", name, pid);
	} else if (waited == s.waited) {
		fprintf(out, "  %s pid %d halts      agree: kvm halt_wait_hist %llu halts that "
			"slept, vmexit %llu (of %llu halts)\n", name, pid,
			(unsigned long long)waited, (unsigned long long)s.waited,
			(unsigned long long)s.halts);
	} else {
		bad++;
		fprintf(out, "  %s pid %d halts      DIFFER: kvm halt_wait_hist %llu halts that "
			"slept, vmexit %llu, %+lld: vmexit misses halts of threads it saw no exit "
			"or entry of (its thread map full: see lost)\n", name, pid,
			(unsigned long long)waited, (unsigned long long)s.waited,
			(long long)(waited - s.waited));
	}
	if (f_ns && within(wait_ns, s.wait_ns, KVM_HALT_TIME_TOLERANCE_PPM)) {
		fprintf(out, "  %s pid %d halt_wait  agree: kvm halt_wait_ns %llu, vmexit %llu "
			"(sleep + runq)\n", name, pid, (unsigned long long)wait_ns,
			(unsigned long long)s.wait_ns);
	} else if (f_ns) {
		bad++;
		fprintf(out, "  %s pid %d halt_wait  DIFFER: kvm halt_wait_ns %llu, vmexit %llu "
			"(sleep + runq), %+.2f %%: KVM's clock runs from its poll loop's end to "
			"the wake-up's return, vmexit's from the switch out to the switch in\n",
			name, pid, (unsigned long long)wait_ns, (unsigned long long)s.wait_ns,
			wait_ns ? 100.0 * ((double)s.wait_ns - (double)wait_ns) / wait_ns : 100.0);
	}
	/* Bounds: a halt that polled and did not sleep is one vmexit saw end unslept. */
	if (f_ok && f_try) {
		bool fits = ok <= s.polled && tried <= s.halts && ok <= tried;

		bad += !fits;
		fprintf(out, "  %s pid %d halt_poll  %s: kvm halt_successful_poll %llu <= vmexit "
			"%llu halts that did not sleep, kvm halt_attempted_poll %llu <= vmexit "
			"%llu halts (the others ended before KVM polled: its window was 0)\n",
			name, pid, fits ? "agree" : "DIFFER", (unsigned long long)ok,
			(unsigned long long)s.polled, (unsigned long long)tried,
			(unsigned long long)s.halts);
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
