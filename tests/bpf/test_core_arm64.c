// SPDX-License-Identifier: GPL-2.0
/*
 * The real kvm_exit program (bpf/vmexit.bpf.c) relocated against an arm64 kernel's types on
 * this host: libbpf takes the types from a BTF file we write here (btf_custom_path) instead of
 * the running kernel's, so the CO-RE branches resolve as they would on arm64, and the running
 * kernel's verifier then checks the result. A tracepoint program cannot be test-run, so what is
 * checked is that it loads, and that the instructions the kernel kept read the arm64 fields
 * at the offsets of the BTF. The layout is moved far from the real one (ret at 0x1f0) so that
 * those loads cannot be mistaken for other ones.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "../unit/check.h"
#include "vmexit.skel.h"
#include "bpf_test_util.h"

#define OFF_RET		0x1f0
#define OFF_ESR_EC	0x1f4
#define OFF_VCPU_PC	0x1f8

/*
 * The types the kvm_exit program's relocations name: the arm64 record (int ret; unsigned int
 * esr_ec; unsigned long vcpu_pc, at our offsets), task_struct.mm -> mm_struct.arg_start /
 * arg_end for the VMM command line, and task_struct.group_leader -> start_time for its
 * identity. No exit_reason, isa or vcpu_id: the x86 branch must go.
 */
static int write_arm64_btf(const char *path, bool with_esr_ec)
{
	struct btf *btf = btf__new_empty();
	int t_int, t_uint, t_ulong, t_u8, t_ushort, t_ent, t_rec, t_mm, t_mmp, t_task, t_taskp, t_pad;
	const void *raw;
	__u32 size;
	FILE *f;
	int err = -1;

	if (!btf)
		return -1;
	t_int = btf__add_int(btf, "int", 4, BTF_INT_SIGNED);
	t_uint = btf__add_int(btf, "unsigned int", 4, 0);
	t_ulong = btf__add_int(btf, "long unsigned int", 8, 0);
	t_u8 = btf__add_int(btf, "unsigned char", 1, 0);
	t_ushort = btf__add_int(btf, "short unsigned int", 2, 0);

	t_ent = btf__add_struct(btf, "trace_entry", 8);
	btf__add_field(btf, "type", t_ushort, 0, 0);
	btf__add_field(btf, "flags", t_u8, 16, 0);
	btf__add_field(btf, "preempt_count", t_u8, 24, 0);
	btf__add_field(btf, "pid", t_int, 32, 0);

	t_pad = btf__add_array(btf, t_int, t_u8, OFF_RET - 8);
	t_rec = btf__add_struct(btf, "trace_event_raw_kvm_exit", OFF_VCPU_PC + 8);
	btf__add_field(btf, "ent", t_ent, 0, 0);
	btf__add_field(btf, "pad", t_pad, 64, 0);
	btf__add_field(btf, "ret", t_int, OFF_RET * 8, 0);
	if (with_esr_ec)
		btf__add_field(btf, "esr_ec", t_uint, OFF_ESR_EC * 8, 0);
	btf__add_field(btf, "vcpu_pc", t_ulong, OFF_VCPU_PC * 8, 0);

	t_mm = btf__add_struct(btf, "mm_struct", 16);
	btf__add_field(btf, "arg_start", t_ulong, 0, 0);
	btf__add_field(btf, "arg_end", t_ulong, 64, 0);
	t_mmp = btf__add_ptr(btf, t_mm);
	/* task_struct *, ahead of the struct it points to: the next id but one. */
	t_taskp = btf__add_ptr(btf, btf__type_cnt(btf) + 1);
	t_task = btf__add_struct(btf, "task_struct", 32);
	btf__add_field(btf, "pid", t_int, 0, 0);
	btf__add_field(btf, "tgid", t_int, 32, 0);
	btf__add_field(btf, "mm", t_mmp, 64, 0);
	/* A VMM's identity with its pid (proc_start_time()): group_leader->start_time. */
	btf__add_field(btf, "group_leader", t_taskp, 128, 0);
	btf__add_field(btf, "start_time", t_ulong, 192, 0);

	if (t_int < 0 || t_uint < 0 || t_ulong < 0 || t_rec < 0 || t_task < 0 || t_taskp < 0)
		goto out;
	raw = btf__raw_data(btf, &size);
	f = raw ? fopen(path, "w") : NULL;
	if (f) {
		err = fwrite(raw, 1, size, f) == size ? 0 : -1;
		if (fclose(f))
			err = -1;
	}
out:
	btf__free(btf);
	return err;
}

/* Opens vmexit.bpf.o with only kvm_exit to load, its CO-RE types from path. */
static struct vmexit_bpf *open_kvm_exit(const char *path)
{
	LIBBPF_OPTS(bpf_object_open_opts, o, .btf_custom_path = path);
	struct vmexit_bpf *skel = vmexit_bpf__open_opts(&o);
	struct bpf_program *p;

	if (!skel)
		return NULL;
	bpf_object__for_each_program(p, skel->obj)
		bpf_program__set_autoload(p, p == skel->progs.kvm_exit);
	return skel;
}

/* Counts the loads of size (BPF_W, BPF_DW) at offset off in the program the kernel kept. */
static int count_ldx(const struct bpf_insn *insns, __u32 n, int size, int off)
{
	int found = 0;

	for (__u32 i = 0; i < n; i++)
		if (insns[i].code == (BPF_LDX | BPF_MEM | size) && insns[i].off == off)
			found++;
	return found;
}

static void test_arm64_layout(const char *path)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info), n;
	struct bpf_insn *insns;
	struct vmexit_bpf *skel;
	int err, fd;

	CHECK(!write_arm64_btf(path, true));
	skel = open_kvm_exit(path);
	CHECK(skel != NULL);
	if (!skel)
		return;
	err = vmexit_bpf__load(skel);
	if (err)
		fprintf(stderr, "kvm_exit against arm64 types: load failed: %s\n", strerror(-err));
	CHECK(!err);
	if (err)
		goto out;
	fd = bpf_program__fd(skel->progs.kvm_exit);
	CHECK(!bpf_obj_get_info_by_fd(fd, &info, &len));
	n = info.xlated_prog_len / sizeof(*insns);
	insns = calloc(n ? n : 1, sizeof(*insns));
	memset(&info, 0, sizeof(info));
	info.xlated_prog_len = n * sizeof(*insns);
	info.xlated_prog_insns = (__u64)(unsigned long)insns;
	len = sizeof(info);
	if (insns && !bpf_obj_get_info_by_fd(fd, &info, &len) && n) {
		/* ret, esr_ec (4 bytes each) and vcpu_pc (8) read once each, where the BTF says. */
		CHECK_EQ_U64(count_ldx(insns, n, BPF_W, OFF_RET), 1);
		CHECK_EQ_U64(count_ldx(insns, n, BPF_W, OFF_ESR_EC), 1);
		CHECK_EQ_U64(count_ldx(insns, n, BPF_DW, OFF_VCPU_PC), 1);
		printf("kvm_exit against arm64 types: %u instructions, arm64 fields read\n", n);
	} else {
		fprintf(stderr, "cannot read the xlated kvm_exit\n");
		check_failures++;
	}
	free(insns);
out:
	vmexit_bpf__destroy(skel);
}

/*
 * A record with neither layout (no exit_reason, no esr_ec) still loads: both branches are
 * dropped and the exit counts under ISA 0 rather than failing the whole object.
 */
static void test_neither_layout(const char *path)
{
	struct vmexit_bpf *skel;
	int err;

	CHECK(!write_arm64_btf(path, false));
	skel = open_kvm_exit(path);
	CHECK(skel != NULL);
	if (!skel)
		return;
	err = vmexit_bpf__load(skel);
	if (err)
		fprintf(stderr, "kvm_exit against a layout without esr_ec: %s\n", strerror(-err));
	CHECK(!err);
	vmexit_bpf__destroy(skel);
}

int main(void)
{
	char path[] = "/tmp/vmexit-arm64-btf.XXXXXX";
	int fd;

	if (geteuid() != 0) {
		printf("SKIP: test_core_arm64: needs root to load BPF programs (run as root)\n");
		return 77;
	}
	libbpf_set_print(libbpf_print_quiet);
	fd = mkstemp(path);
	if (fd < 0) {
		perror("mkstemp");
		return 1;
	}
	close(fd);
	test_arm64_layout(path);
	test_neither_layout(path);
	unlink(path);
	CHECK_DONE("test_core_arm64");
}
