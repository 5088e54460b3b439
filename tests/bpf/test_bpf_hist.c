// SPDX-License-Identifier: GPL-2.0
/*
 * include/hist.h's buckets as the BPF programs compute them (hist_log2()'s de Bruijn table)
 * against userspace's (its search): every power of two and its neighbours, 0 to 2^64 - 1, and
 * pseudo-random values of every width. Both must agree exactly: userspace reads the kernel's
 * buckets with its own bounds.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "../unit/check.h"
#include "hist.h"
#include "vmexit_test.skel.h"
#include "bpf_test_util.h"
#include "../xorshift64.h"

#define N 512

int main(void)
{
	struct vmexit_test_bpf *skel;
	LIBBPF_OPTS(bpf_test_run_opts, opts);
	struct bpf_program *p;
	__u64 in[N];
	int n = 0, err, bad = 0;

	if (geteuid() != 0) {
		printf("SKIP: test_bpf_hist: needs root to load BPF programs (run as root)\n");
		return 77;
	}
	libbpf_set_print(libbpf_print_quiet);
	in[n++] = 0;
	for (int k = 0; k < 64; k++) {
		__u64 v = 1ull << k;

		in[n++] = v;
		in[n++] = v - 1 ? v - 1 : 1;
		in[n++] = v + 1;
		in[n++] = v | (v >> 1);
	}
	in[n++] = ~0ull;
	for (__u64 r = XORSHIFT64_SEED; n < N; n++)
		in[n] = xorshift64(&r) >> (n % 64);
	skel = vmexit_test_bpf__open();
	CHECK(skel != NULL);
	if (!skel)
		CHECK_DONE("test_bpf_hist");
	bpf_object__for_each_program(p, skel->obj)
		bpf_program__set_autoload(p, p == skel->progs.hist_check);
	err = vmexit_test_bpf__load(skel);
	if (err)
		fprintf(stderr, "hist_check does not load: %s\n", strerror(-err));
	CHECK(!err);
	if (!err) {
		memcpy(skel->bss->hist_in, in, sizeof(in));
		CHECK(!bpf_prog_test_run_opts(bpf_program__fd(skel->progs.hist_check), &opts));
		for (int i = 0; i < N; i++) {
			if (skel->bss->hist_out[i] != hist_bucket(in[i]) && bad++ < 10)
				fprintf(stderr, "value %llu: BPF bucket %u, userspace %u\n",
					(unsigned long long)in[i], skel->bss->hist_out[i],
					hist_bucket(in[i]));
		}
		CHECK_EQ_U64(bad, 0);
		printf("test_bpf_hist: %d values, %d buckets differ\n", N, bad);
	}
	vmexit_test_bpf__destroy(skel);
	CHECK_DONE("test_bpf_hist");
}
