// SPDX-License-Identifier: GPL-2.0
/*
 * bpf/kernel_load.bpf.h on this kernel (kvm_exit_direct's reads of the vCPU): a direct load
 * through bpf_rdonly_cast() and a stand-in struct reads what the verifier's typed load of the
 * same field reads, 32 and 64 bits, and an address that faults reads 0; the helper-call way
 * reads the same and says it could not read the bad address. The direct way runs wherever
 * vmlinux's BTF has the kfunc (Linux 6.2); a kernel that has it and refuses the program fails.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "../unit/check.h"
#include "vmexit.h"
#include "vmexit_test.skel.h"
#include "bpf_test_util.h"

static bool kernel_has_rdonly_cast(void)
{
	struct btf *btf = btf__load_vmlinux_btf();
	bool has = btf && btf__find_by_name_kind(btf, "bpf_rdonly_cast", BTF_KIND_FUNC) >= 0;

	btf__free(btf);
	return has;
}

static void run(bool direct)
{
	const char *name = direct ? "kload_direct" : "kload_probe";
	struct vmexit_test_bpf *skel = vmexit_test_bpf__open();
	LIBBPF_OPTS(bpf_test_run_opts, opts);
	struct bpf_program *p;
	int err;

	CHECK(skel != NULL);
	if (!skel)
		return;
	/* Only this program: the handlers' test programs are the other tests'. */
	bpf_object__for_each_program(p, skel->obj)
		bpf_program__set_autoload(p, !strcmp(bpf_program__name(p), name));
	err = vmexit_test_bpf__load(skel);
	if (err)
		fprintf(stderr, "%s does not load: %s\n", name, strerror(-err));
	CHECK(!err);
	if (!err) {
		p = bpf_object__find_program_by_name(skel->obj, name);
		CHECK(!bpf_prog_test_run_opts(bpf_program__fd(p), &opts));
		CHECK(skel->bss->kload_ok32 && skel->bss->kload_ok64);
		CHECK_EQ_U64(skel->bss->kload_pid, (__u64)getpid());
		CHECK_EQ_U64(skel->bss->kload_pid_read, skel->bss->kload_pid);
		CHECK(skel->bss->kload_start != 0);
		CHECK_EQ_U64(skel->bss->kload_start_read, skel->bss->kload_start);
		/* A faulting address: 0 either way; only the helper says it could not read. */
		CHECK_EQ_U64(skel->bss->kload_bad, 0);
		CHECK_EQ_U64(skel->bss->kload_bad_ok, direct);
		printf("%s: pid %u, start_time %llu, a bad address %u (%s)\n", name,
		       skel->bss->kload_pid_read, (unsigned long long)skel->bss->kload_start_read,
		       skel->bss->kload_bad, skel->bss->kload_bad_ok ? "said read" : "said unread");
	}
	vmexit_test_bpf__destroy(skel);
}

int main(void)
{
	if (geteuid() != 0) {
		printf("SKIP: test_bpf_kernel_load: needs root to load BPF programs (run as root)\n");
		return 77;
	}
	libbpf_set_print(libbpf_print_quiet);
	run(false);
	if (kernel_has_rdonly_cast())
		run(true);
	else
		printf("kload_direct: not run, this kernel has no bpf_rdonly_cast (before 6.2): "
		       "kvm_exit_fast is its fast path\n");
	CHECK_DONE("test_bpf_kernel_load");
}
