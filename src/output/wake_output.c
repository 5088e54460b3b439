// SPDX-License-Identifier: GPL-2.0
/* stat --wake: what bpf/wake.bpf.c kept, in the stat formats. */
#include <errno.h>
#include <stdlib.h>
#include "out_write.h"
#include "text_escape.h"
#include "wake_output.h"

/* The advice's windows, in µs: one list for every format. */
static const unsigned int windows_us[] = {
#define WINDOW_US(us) us,
	HLT_ADVICE_WINDOWS_US(WINDOW_US)
#undef WINDOW_US
};
#define NR_WINDOWS (sizeof(windows_us) / sizeof(windows_us[0]))

/* The total of the rows' POSTED: said too, so that a reader of COUNT alone misses none. */
#define WAKE_UNTIMED_SAID "interrupts made pending (" WAKE_PENDING_HOOK ") for vCPUs never seen " \
	"entering guest mode, in no row: kvm:kvm_entry did not fire for them (a software KVM " \
	"such as kvm_pvm traces no entry; elsewhere, vCPUs halted since before vmexit started)"
#define WAKE_POSTED_SAID "interrupts KVM posted to a vCPU in guest mode (APICv/AVIC): taken " \
	"with no exit, not timed (the rows' posted, not in their count)"

static void table(const struct wake_snapshot *s, const struct hlt_advice *adv, size_t nr_adv,
		  long long hpn, FILE *f)
{
	fprintf(f, "\nInterrupt delivery: pending (" WAKE_PENDING_HOOK ") to the vCPU's next "
		"entry\n");
	fprintf(f, "%-8s %4s %-7s %4s %9s %9s %10s %10s %10s %10s", "PID", "VCPU", "SOURCE",
		"VEC", "COUNT", "POSTED", "AVG_NS", "P50_NS", "P99_NS", "MAX_NS");
	for (int p = 0; p < NR_WAKE_PARTS; p++)
		fprintf(f, " %6s%%", wake_part_name(p));
	fputc('\n', f);
	for (size_t i = 0; i < s->nr_wake; i++) {
		const struct wake_key *k = &s->wkeys[i];
		const struct wake_cell *c = &s->wcells[i];
		struct wake_row r;

		wake_row_of(c, &r);
		fprintf(f, "%-8u %4d %-7s 0x%02x %9llu %9llu %10llu %10llu %10llu %10llu", k->tgid,
			k->vcpu, wake_source_name(k->source), k->vector, (unsigned long long)r.count,
			(unsigned long long)c->posted, (unsigned long long)r.avg_ns,
			(unsigned long long)r.p50_ns, (unsigned long long)r.p99_ns,
			(unsigned long long)c->max_ns);
		for (int p = 0; p < NR_WAKE_PARTS; p++)
			fprintf(f, " %6.1f%%", r.part_pct[p]);
		fputc('\n', f);
	}
	if (s->no_hlt) {
		fprintf(f, "\nHalted exits and halt-poll advice: %s\n", s->no_hlt);
		return;
	}
	fprintf(f, "\nHalted exits (kvm_vcpu_wakeup): kvm_exit to kvm_entry\n");
	fprintf(f, "%-8s %4s %8s %8s %8s %8s %8s %8s %12s", "PID", "VCPU", "EXITS", "HALTS",
		"POLLED", "POLL+SLP", "SLEPT", "INVALID", "TOTAL_NS");
	for (int p = 0; p < NR_HLT_PARTS; p++)
		fprintf(f, " %6s%%", hlt_part_name(p));
	fputc('\n', f);
	for (size_t i = 0; i < s->nr_hlt; i++) {
		const struct hlt_cell *c = &s->hcells[i];
		struct hlt_row r;

		hlt_row_of(c, &r);
		fprintf(f, "%-8u %4d %8llu %8llu %8llu %8llu %8llu %8llu %12llu", s->hkeys[i].tgid,
			s->hkeys[i].vcpu, (unsigned long long)c->exits,
			(unsigned long long)c->halts, (unsigned long long)c->polled,
			(unsigned long long)c->poll_slept, (unsigned long long)c->slept,
			(unsigned long long)c->invalid, (unsigned long long)c->sum_ns);
		for (int p = 0; p < NR_HLT_PARTS; p++)
			fprintf(f, " %6.1f%%", r.part_pct[p]);
		fputc('\n', f);
	}
	fprintf(f, "\nHalt-poll advice: halts woken within a poll window of (halt start to "
		"wake-up, to 1/8 of a bucket)\n");
	fprintf(f, "%-8s %8s %14s %10s", "PID", "HALTS", "POLL_CPU_NS", "NOW");
	for (size_t w = 0; w < NR_WINDOWS; w++)
		fprintf(f, " %6uus", windows_us[w]);
	fputc('\n', f);
	for (size_t i = 0; i < nr_adv; i++) {
		const struct hlt_advice *a = &adv[i];

		fprintf(f, "%-8u %8llu %14llu", a->tgid, (unsigned long long)a->halts,
			(unsigned long long)a->poll_ns);
		if (hpn >= 0)
			fprintf(f, " %9.1f%%",
				wake_pct(wake_hist_at_most(a->hist, (__u64)hpn), a->halts));
		else
			fprintf(f, " %10s", "-");
		for (size_t w = 0; w < NR_WINDOWS; w++)
			fprintf(f, " %7.1f%%", wake_pct(wake_hist_at_most(a->hist,
					windows_us[w] * 1000ull), a->halts));
		fputc('\n', f);
	}
	if (hpn >= 0)
		fprintf(f, "NOW: within halt_poll_ns=%lld (/sys/module/kvm/parameters)\n", hpn);
}

static void csv(const struct wake_snapshot *s, const struct hlt_advice *adv, size_t nr_adv,
		long long hpn, FILE *f)
{
	fprintf(f, "kind,pid,vcpu,source,vector,count,sum_ns,p50_ns,p99_ns,max_ns");
	for (int p = 0; p < NR_WAKE_PARTS; p++)
		fprintf(f, ",%s_ns", wake_part_name(p));
	/* At the end: scripts count columns. */
	fprintf(f, ",posted\n");
	for (size_t i = 0; i < s->nr_wake; i++) {
		const struct wake_key *k = &s->wkeys[i];
		const struct wake_cell *c = &s->wcells[i];
		struct wake_row r;

		wake_row_of(c, &r);
		fprintf(f, "wake,%u,%d,%s,%u,%llu,%llu,%llu,%llu,%llu", k->tgid, k->vcpu,
			wake_source_name(k->source), k->vector, (unsigned long long)r.count,
			(unsigned long long)c->sum_ns, (unsigned long long)r.p50_ns,
			(unsigned long long)r.p99_ns, (unsigned long long)c->max_ns);
		for (int p = 0; p < NR_WAKE_PARTS; p++)
			fprintf(f, ",%llu", (unsigned long long)c->parts[p]);
		fprintf(f, ",%llu\n", (unsigned long long)c->posted);
	}
	if (s->no_hlt) {
		fprintf(f, "# hlt, halt_poll: %s\n", s->no_hlt);
		return;
	}
	fprintf(f, "kind,pid,vcpu,exits,halts,polled,poll_slept,slept,invalid,sum_ns,halt_ns");
	for (int p = 0; p < NR_HLT_PARTS; p++)
		fprintf(f, ",%s_ns", hlt_part_name(p));
	fputc('\n', f);
	for (size_t i = 0; i < s->nr_hlt; i++) {
		const struct hlt_cell *c = &s->hcells[i];

		fprintf(f, "hlt,%u,%d,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu", s->hkeys[i].tgid,
			s->hkeys[i].vcpu, (unsigned long long)c->exits,
			(unsigned long long)c->halts, (unsigned long long)c->polled,
			(unsigned long long)c->poll_slept, (unsigned long long)c->slept,
			(unsigned long long)c->invalid, (unsigned long long)c->sum_ns,
			(unsigned long long)c->halt_ns);
		for (int p = 0; p < NR_HLT_PARTS; p++)
			fprintf(f, ",%llu", (unsigned long long)c->parts[p]);
		fputc('\n', f);
	}
	fprintf(f, "kind,pid,halts,poll_cpu_ns,halt_poll_ns,within_now");
	for (size_t w = 0; w < NR_WINDOWS; w++)
		fprintf(f, ",within_%uus", windows_us[w]);
	fputc('\n', f);
	for (size_t i = 0; i < nr_adv; i++) {
		const struct hlt_advice *a = &adv[i];

		fprintf(f, "halt_poll,%u,%llu,%llu,%lld,", a->tgid, (unsigned long long)a->halts,
			(unsigned long long)a->poll_ns, hpn);
		if (hpn >= 0)
			fprintf(f, "%llu", (unsigned long long)wake_hist_at_most(a->hist,
										 (__u64)hpn));
		for (size_t w = 0; w < NR_WINDOWS; w++)
			fprintf(f, ",%llu", (unsigned long long)wake_hist_at_most(a->hist,
					windows_us[w] * 1000ull));
		fputc('\n', f);
	}
}

static void json(const struct wake_snapshot *s, const struct hlt_advice *adv, size_t nr_adv,
		 long long hpn, FILE *f)
{
	fprintf(f, "{\"wake\":[");
	for (size_t i = 0; i < s->nr_wake; i++) {
		const struct wake_key *k = &s->wkeys[i];
		const struct wake_cell *c = &s->wcells[i];
		struct wake_row r;

		wake_row_of(c, &r);
		fprintf(f, "%s{\"kind\":\"wake\",\"pid\":%u,\"vcpu\":%d,\"source\":\"%s\","
			"\"vector\":%u,\"count\":%llu,\"posted\":%llu,\"sum_ns\":%llu,"
			"\"p50_ns\":%llu,\"p99_ns\":%llu,\"max_ns\":%llu,\"parts_ns\":{", i ? "," : "", k->tgid,
			k->vcpu, wake_source_name(k->source), k->vector,
			(unsigned long long)r.count, (unsigned long long)c->posted,
			(unsigned long long)c->sum_ns,
			(unsigned long long)r.p50_ns, (unsigned long long)r.p99_ns,
			(unsigned long long)c->max_ns);
		for (int p = 0; p < NR_WAKE_PARTS; p++)
			fprintf(f, "%s\"%s\":%llu", p ? "," : "", wake_part_name(p),
				(unsigned long long)c->parts[p]);
		fprintf(f, "}}");
	}
	fprintf(f, "]");
	if (s->no_hlt) {
		/* null, not []: no halts were kept, which is not "none halted". */
		fprintf(f, ",\"hlt\":null,\"halt_poll\":null,\"hlt_missing\":");
		json_put_str(f, s->no_hlt);
		goto lost;
	}
	fprintf(f, ",\"hlt\":[");
	for (size_t i = 0; i < s->nr_hlt; i++) {
		const struct hlt_cell *c = &s->hcells[i];

		fprintf(f, "%s{\"kind\":\"hlt\",\"pid\":%u,\"vcpu\":%d,\"exits\":%llu,"
			"\"halts\":%llu,\"polled\":%llu,\"poll_slept\":%llu,\"slept\":%llu,"
			"\"invalid\":%llu,\"sum_ns\":%llu,\"halt_ns\":%llu,\"parts_ns\":{",
			i ? "," : "", s->hkeys[i].tgid, s->hkeys[i].vcpu,
			(unsigned long long)c->exits, (unsigned long long)c->halts,
			(unsigned long long)c->polled, (unsigned long long)c->poll_slept,
			(unsigned long long)c->slept, (unsigned long long)c->invalid,
			(unsigned long long)c->sum_ns, (unsigned long long)c->halt_ns);
		for (int p = 0; p < NR_HLT_PARTS; p++)
			fprintf(f, "%s\"%s\":%llu", p ? "," : "", hlt_part_name(p),
				(unsigned long long)c->parts[p]);
		fprintf(f, "}}");
	}
	fprintf(f, "],\"halt_poll\":[");
	for (size_t i = 0; i < nr_adv; i++) {
		const struct hlt_advice *a = &adv[i];

		fprintf(f, "%s{\"kind\":\"halt_poll\",\"pid\":%u,\"halts\":%llu,"
			"\"poll_cpu_ns\":%llu,\"halt_poll_ns\":%lld,\"within_now\":", i ? "," : "",
			a->tgid, (unsigned long long)a->halts, (unsigned long long)a->poll_ns, hpn);
		if (hpn >= 0)
			fprintf(f, "%llu", (unsigned long long)wake_hist_at_most(a->hist,
										 (__u64)hpn));
		else
			fprintf(f, "null");
		fprintf(f, ",\"within_us\":{");
		for (size_t w = 0; w < NR_WINDOWS; w++)
			fprintf(f, "%s\"%u\":%llu", w ? "," : "", windows_us[w],
				(unsigned long long)wake_hist_at_most(a->hist,
								  windows_us[w] * 1000ull));
		fprintf(f, "}}");
	}
	fprintf(f, "]");
lost:
	fprintf(f, ",\"lost\":{");
	for (int l = 0; l < NR_WAKE_LOST; l++)
		fprintf(f, "%s\"%s\":%llu", l ? "," : "", wake_lost_name(l),
			(unsigned long long)s->lost[l]);
	if (s->ring)
		fprintf(f, ",\"%s\":%llu", wake_lost_name(WAKE_LOST_RING),
			(unsigned long long)s->ring_lost);
	fprintf(f, "}");
	if (s->posted_known)
		fprintf(f, ",\"posted\":%llu", (unsigned long long)s->posted);
	if (s->untimed_known)
		fprintf(f, ",\"untimed\":%llu", (unsigned long long)s->untimed);
	fprintf(f, "}\n");
}

int wake_print(const struct wake_snapshot *s, enum out_format fmt, long long halt_poll_ns,
	       FILE *f)
{
	struct hlt_advice *adv = calloc(s->nr_hlt ? s->nr_hlt : 1, sizeof(*adv));
	size_t nr_adv;

	if (!adv)
		return -ENOMEM;
	nr_adv = hlt_advice_of(s, adv);
	if (fmt == OUT_JSON) {
		json(s, adv, nr_adv, halt_poll_ns, f);
	} else {
		(fmt == OUT_CSV ? csv : table)(s, adv, nr_adv, halt_poll_ns, f);
		/* Lost events are said in every text format, never left out. */
		for (int l = 0; l < NR_WAKE_LOSSES; l++) {
			__u64 n = l == WAKE_LOST_RING ? s->ring_lost : s->lost[l];

			if (n)
				fprintf(f, "%slost: %llu %s\n", fmt == OUT_CSV ? "# " : "",
					(unsigned long long)n, wake_lost_name(l));
		}
		/* Not lost, not timed either: said, so that no one reads the rows as all of them. */
		if (s->posted_known && s->posted)
			fprintf(f, "%sposted: %llu %s\n", fmt == OUT_CSV ? "# " : "",
				(unsigned long long)s->posted, WAKE_POSTED_SAID);
		if (s->untimed_known && s->untimed)
			fprintf(f, "%suntimed: %llu %s\n", fmt == OUT_CSV ? "# " : "",
				(unsigned long long)s->untimed, WAKE_UNTIMED_SAID);
	}
	free(adv);
	return out_flush(f);
}
