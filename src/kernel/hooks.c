// SPDX-License-Identifier: GPL-2.0
/* Probing the running kernel for the cheapest hooks that measure the same thing. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "env_knobs.h"
#include "hooks.h"
#include "fast_switch.h"
#include "links_destroy.h"
#include "reasons.h"
#include "startup_timing.h"
#include "tracefs.h"
#include "text_escape.h"
#include "vmexit.skel.h"
#include "hook_check.skel.h"
#include "exit_watch.skel.h"

/* vmexit runs on the kernel's architecture: only x86 KVM fires kvm:kvm_fpu. */
#if defined(__x86_64__) || defined(__i386__)
#define KVM_FPU_FIRES	1
#else
#define KVM_FPU_FIRES	0
#endif

const char *run_hook_name(enum run_hook r)
{
	switch (r) {
	case RUN_HOOK_FENTRY:
		return "fentry/kvm_arch_vcpu_ioctl_run";
	case RUN_HOOK_FPU_BTF:
		return "tp_btf/kvm_fpu";
	case RUN_HOOK_FPU:
		return "kvm:kvm_fpu";
	case RUN_HOOK_IOCTL:
		return "syscalls:sys_enter_ioctl";
	default:
		return "none";
	}
}

/* vmlinux's BTF, parsed once for every start-up probe: each parse costs 10-50 ms. */
static struct btf *btf_vmlinux(struct hook_check_run *r)
{
	if (!r->vmlinux_btf)
		r->vmlinux_btf = btf__load_vmlinux_btf();
	return r->vmlinux_btf;
}

/* The kvm module's BTF (split on vmlinux's): KVM's functions and tracepoints live there. */
static struct btf *btf_kvm(struct hook_check_run *r)
{
	if (!r->kvm_btf && btf_vmlinux(r))
		r->kvm_btf = btf__load_module_btf("kvm", r->vmlinux_btf);
	return r->kvm_btf;
}

static void kernel_btf_free(struct hook_check_run *r)
{
	btf__free(r->kvm_btf);
	btf__free(r->vmlinux_btf);
	r->kvm_btf = r->vmlinux_btf = NULL;
}

/* An fd of the kernel's BTF object of module name, to attach to its functions; -errno. */
static int module_btf_fd(const char *name)
{
	__u32 id = 0;

	while (!bpf_btf_get_next_id(id, &id)) {
		char got[64] = "";
		struct bpf_btf_info info = { .name = (__u64)(unsigned long)got,
					     .name_len = sizeof(got) };
		__u32 len = sizeof(info);
		int fd = bpf_btf_get_fd_by_id(id);

		if (fd < 0)
			continue;	/* unloaded meanwhile */
		if (!bpf_obj_get_info_by_fd(fd, &info, &len) && !strcmp(got, name))
			return fd;
		close(fd);
	}
	return -ENOENT;
}

/*
 * 0 when a trampoline attaches to KVM_RUN here, else the -errno of the step that failed. Some
 * kernels refuse fentry programs (lockdown, no DYNAMIC_FTRACE_WITH_DIRECT_CALLS, a sandboxed
 * host): only loading and attaching one tells. The program is two instructions (return 0)
 * loaded by hand against the BTF already parsed: a libbpf object would parse vmlinux's again.
 */
static int fentry_probe(struct hook_check_run *r)
{
	static const char fn[] = "kvm_arch_vcpu_ioctl_run";
	const struct bpf_insn ret0[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = BPF_TRACE_FENTRY);
	struct btf *vmlinux = btf_vmlinux(r), *kvm;
	int id, obj_fd = -1, prog_fd, link_fd, err = 0;

	if (!vmlinux)
		return -errno;
	/* Built in, KVM's functions are in vmlinux's BTF; as a module, in kvm's. */
	id = btf__find_by_name_kind(vmlinux, fn, BTF_KIND_FUNC);
	if (id < 0) {
		kvm = btf_kvm(r);
		id = kvm ? btf__find_by_name_kind(kvm, fn, BTF_KIND_FUNC) : -ENOENT;
		obj_fd = id < 0 ? id : module_btf_fd("kvm");
		if (obj_fd < 0)
			return obj_fd;
		opts.attach_btf_obj_fd = obj_fd;
	}
	opts.attach_btf_id = id;
	prog_fd = bpf_prog_load(BPF_PROG_TYPE_TRACING, "probe_kvm_run", "GPL", ret0,
				sizeof(ret0) / sizeof(ret0[0]), &opts);
	if (prog_fd < 0) {
		err = prog_fd;
	} else {
		link_fd = bpf_raw_tracepoint_open(NULL, prog_fd);
		if (link_fd < 0)
			err = link_fd;
		else
			close(link_fd);
		close(prog_fd);
	}
	if (obj_fd >= 0)
		close(obj_fd);
	startup_mark("fentry probe");
	return err;
}

/* The kind of a prototype argument: 'p' pointer, 'i' integer, '?' anything else. */
static char arg_kind(const struct btf *btf, __u32 type_id)
{
	int id = btf__resolve_type(btf, type_id);
	const struct btf_type *t = id < 0 ? NULL : btf__type_by_id(btf, id);

	if (!t)
		return '?';
	if (btf_is_ptr(t))
		return 'p';
	if (btf_is_int(t) || btf_is_enum(t))
		return 'i';
	return '?';
}

/*
 * The argument kinds of tracepoint name's raw prototype (arg_kind(), one letter each, the
 * __data pointer left out) from btf_trace_<name> in vmlinux's BTF or kvm's; "" when the kernel's
 * BTF has no such tracepoint.
 */
static void tp_arg_kinds(struct hook_check_run *r, const char *name, char *kinds, size_t len)
{
	struct btf *btf = btf_vmlinux(r);
	const struct btf_type *t = NULL;
	char tn[96];
	int id = -ENOENT, n;

	kinds[0] = 0;
	snprintf(tn, sizeof(tn), "btf_trace_%s", name);
	if (btf)
		id = btf__find_by_name_kind(btf, tn, BTF_KIND_TYPEDEF);
	if (id < 0 && (btf = btf_kvm(r)))
		id = btf__find_by_name_kind(btf, tn, BTF_KIND_TYPEDEF);
	/* typedef void (*btf_trace_NAME)(void *__data, <the TP_PROTO arguments>) */
	if (id >= 0)
		t = btf__type_by_id(btf, btf__type_by_id(btf, id)->type);
	if (t && btf_is_ptr(t))
		t = btf__type_by_id(btf, t->type);
	if (!t || !btf_is_func_proto(t) || (n = btf_vlen(t)) < 1 || (size_t)n > len)
		return;
	for (int i = 1; i < n; i++)
		kinds[i - 1] = arg_kind(btf, btf_params(t)[i].type);
	kinds[n - 1] = 0;
}

/* Whether struct name in btf has every member of members (NULL-terminated). */
static bool struct_has(const struct btf *btf, const char *name, const char *const *members)
{
	int id = btf__find_by_name_kind(btf, name, BTF_KIND_STRUCT);
	const struct btf_type *t = id < 0 ? NULL : btf__type_by_id(btf, id);

	for (; t && *members; members++) {
		const struct btf_member *m = btf_members(t);
		int i, n = btf_vlen(t);

		for (i = 0; i < n; i++, m++)
			if (!strcmp(btf__name_by_offset(btf, m->name_off), *members))
				break;
		if (i == n)
			return false;
	}
	return t != NULL;
}

/*
 * What bpf/run_key.bpf.h reads, all in vmlinux's BTF: bpf_rdonly_cast types its result with a
 * vmlinux type only ("bpf: Add a kfunc for generic type cast", Linux 6.2; Debian's 6.12 has
 * struct kvm_vcpu and kvm_run in vmlinux's BTF with KVM a module, as a kernel with KVM built in).
 */
static bool run_key_types(const struct btf *btf)
{
	static const char *const vcpu[] = { "pid", "preempt_notifier", "run", NULL };
	static const char *const task[] = { "preempt_notifiers", "thread_pid", NULL };
	static const char *const run[] = { "exit_reason", NULL };

	return btf && btf__find_by_name_kind(btf, "bpf_rdonly_cast", BTF_KIND_FUNC) >= 0 &&
	       struct_has(btf, "kvm_vcpu", vcpu) && struct_has(btf, "task_struct", task) &&
	       struct_has(btf, "kvm_run", run);
}

/* What kvm_exit_direct needs of vmlinux's BTF (bpf/kernel_load.bpf.h): the kfunc, 6.2 on, and
 * the structs that stand for a field's size, in every kernel. */
static bool exit_direct_types(const struct btf *btf)
{
	static const char *const refcount[] = { "refs", NULL };
	static const char *const ts[] = { "tv_sec", NULL };

	return btf && btf__find_by_name_kind(btf, "bpf_rdonly_cast", BTF_KIND_FUNC) >= 0 &&
	       struct_has(btf, "refcount_struct", refcount) && struct_has(btf, "timespec64", ts);
}

/*
 * The fentry probe, the last user of the kernel's BTF we parsed, which then goes: run right after
 * the prototype's probe, the check's and the main object's own parses reuse its freed pages
 * (startup_heap.h).
 */
static void run_probe(struct hook_check_run *r)
{
	/*
	 * Tests only: VMEXIT_TEST_HOOKS=no-fentry leaves the trampoline out, as a kernel that
	 * refuses it; =classic the BTF-enabled tracepoints too. A bed whose kernel offers every
	 * hook then still runs the ones other kernels fall back to.
	 */
	bool classic = env_knob_is("VMEXIT_TEST_HOOKS", "classic");
	char kinds[8];

	if (r->run_probed)
		return;
	r->run_err = classic || env_knob_is("VMEXIT_TEST_HOOKS", "no-fentry") ? -ECANCELED :
		     fentry_probe(r);
	r->run_probed = true;
	/* bpf/vmexit.bpf.c's tp_btf programs read (u32 reason, int errno) and (int load). */
	tp_arg_kinds(r, "kvm_userspace_exit", kinds, sizeof(kinds));
	r->user_btf = !classic && !strcmp(kinds, "ii");
	tp_arg_kinds(r, "kvm_fpu", kinds, sizeof(kinds));
	r->fpu_btf = !classic && !strcmp(kinds, "i");
	/* kvm_entry_fast reads no argument: any prototype will do. */
	tp_arg_kinds(r, "kvm_entry", kinds, sizeof(kinds));
	r->entry_btf = !classic && kinds[0];
	r->run_key_btf = !classic && r->fpu_btf && run_key_types(btf_vmlinux(r));
	/* Tests only: =no-direct runs the fast path by helper calls, as kernels before 6.2. */
	r->exit_direct = !classic && !env_knob_is("VMEXIT_TEST_HOOKS", "no-direct") &&
			 exit_direct_types(btf_vmlinux(r));
	kernel_btf_free(r);
}

void hooks_choose_run(struct hooks *h, struct vmexit_bpf *skel)
{
	int err;
	size_t n;

	run_probe(&h->run_state);
	err = h->run_state.run_err;
	bpf_program__set_autoload(h->run_state.user_btf ? skel->progs.kvm_userspace_exit_btf :
				  skel->progs.kvm_userspace_exit, true);

	h->run_note[0] = 0;
	if (!err) {
		h->run = RUN_HOOK_FENTRY;
		bpf_program__set_autoload(skel->progs.kvm_run_fentry, true);
		return;
	}
	/* 524 is the kernel's ENOTSUPP (no trampolines on this architecture or build), which
	 * libc does not name. */
	if (err == -ECANCELED)
		n = snprintf(h->run_note, sizeof(h->run_note), "fentry left out: VMEXIT_TEST_HOOKS");
	else
		n = snprintf(h->run_note, sizeof(h->run_note), "fentry refused: %s",
			     err == -524 ? "not supported by this kernel" : strerror(-err));
	/*
	 * kvm_fpu is declared for every architecture (include/trace/events/kvm.h), so arm64's
	 * tracefs lists it too, but only x86's KVM_RUN fires it (kvm_load_guest_fpu): elsewhere
	 * it would attach and never end a userspace exit.
	 */
	if (KVM_FPU_FIRES && h->run_state.fpu_btf) {
		h->run = RUN_HOOK_FPU_BTF;
		bpf_program__set_autoload(skel->progs.kvm_run_fpu_btf, true);
		return;
	}
	if (KVM_FPU_FIRES && tracepoint_exists("kvm/kvm_fpu")) {
		h->run = RUN_HOOK_FPU;
		bpf_program__set_autoload(skel->progs.kvm_run_fpu, true);
		return;
	}
	if (n < sizeof(h->run_note))
		snprintf(h->run_note + n, sizeof(h->run_note) - n, KVM_FPU_FIRES ?
			 ", no kvm:kvm_fpu" : ", kvm:kvm_fpu never fires on this architecture");
	if (tracepoint_exists("syscalls/sys_enter_ioctl")) {
		h->run = RUN_HOOK_IOCTL;
		bpf_program__set_autoload(skel->progs.kvm_run_ioctl, true);
		return;
	}
	h->run = RUN_HOOK_NONE;
}

/* The raw kvm_exit prototype, from btf_trace_kvm_exit in vmlinux's BTF or kvm's. */
static __u32 exit_shape_probe(struct hook_check_run *r)
{
	__u32 shape = EXIT_SHAPE_NONE;
	char kinds[8];

	tp_arg_kinds(r, "kvm_exit", kinds, sizeof(kinds));
	if (!strcmp(kinds, "pi"))
		shape = EXIT_SHAPE_VCPU_ISA;
	else if (!strcmp(kinds, "ipi"))
		shape = EXIT_SHAPE_REASON_VCPU_ISA;
	else if (!strcmp(kinds, "iii"))
		shape = EXIT_SHAPE_ARM64;
	startup_mark("kvm_exit prototype (BTF)");
	return shape;
}

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* --check-hooks: what each side read, per reason, over the judged cycles. */
static void check_counts_print(struct hook_check_bpf *c, FILE *f)
{
	int fd = bpf_map__fd(c->maps.counts);
	struct { __u64 raw, classic; } v;
	__u64 key, *prev = NULL;
	char rb[64];
	int header = 0;

	while (!bpf_map_get_next_key(fd, prev, &key)) {
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &v))
			continue;
		/* Over the first row only: no exit, no table (the hooks line says why). */
		if (!header++)
			fprintf(f, "vmexit: check: %-8s %-24s %12s %12s\n", "isa", "reason",
				"fast path", "classic");
		fprintf(f, "vmexit: check: %-8s %-24s %12llu %12llu%s\n", isa_name(key >> 32),
			reason_str(key >> 32, (__u32)key, rb, sizeof(rb)),
			(unsigned long long)v.raw, (unsigned long long)v.classic,
			v.raw != v.classic ? "  <- differ" : "");
	}
}

/* The programs count into the mmapped .bss while userspace reads it. */
static __u64 load_u64(const __u64 *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

/* The rule of the check window: hooks.h. */
bool check_window_open(struct check_window *w, double now, __u64 seen, __u64 matched, __u64 bad)
{
	if (seen != w->last_seen) {
		w->last_seen = seen;
		w->last_seen_at = now;
	}
	if (now >= w->start + CHECK_MAX_WINDOWS * w->window_s)
		return false;
	/*
	 * --check-hooks prints both sides' counts over its whole window, refused or not; past it
	 * only while exits still arrive: a host with none would otherwise wait for the cap.
	 */
	if (w->verbose) {
		if (now < w->start + w->window_s)
			return true;
		return !bad && seen && matched < CHECK_MIN_MATCHED &&
		       now < w->last_seen_at + CHECK_IDLE_S;
	}
	if (bad || matched >= CHECK_ENOUGH)
		return false;
	if (!seen)
		return now < w->start - w->quiet_s + CHECK_IDLE_S;
	if (now < w->start + w->window_s)
		return true;
	return matched < CHECK_MIN_MATCHED && now < w->last_seen_at + CHECK_IDLE_S;
}

/*
 * Counts kvm_exit from the very start, before the BTF work of the check: by the time the check
 * is armed, a host where nothing exited for 0.1 s is known as one without waiting again. Best
 * effort: without it the check's own window is the only clock.
 */
static void watch_start(struct hook_check_run *r)
{
	r->watch = exit_watch_bpf__open_and_load();
	if (r->watch && exit_watch_bpf__attach(r->watch)) {
		exit_watch_bpf__destroy(r->watch);
		r->watch = NULL;
	}
	r->watch_from = mono_s();
	startup_mark("exit watch");
}

/*
 * Loads the check and attaches the raw and classic programs side by side (entries first, so
 * that every exit seen has its entry seen too), then arms it. 0, or -errno when the fast path
 * cannot even be loaded.
 */
static int check_arm(struct hooks *h)
{
	struct hook_check_run *r = &h->run_state;
	const char *skew = getenv("VMEXIT_TEST_FAST_PATH_SKEW");
	struct hook_check_bpf *c = hook_check_bpf__open();
	struct bpf_program *order[4];
	int err;

	if (!c)
		return -errno;
	r->obj = c;
	c->rodata->raw_exit_shape = h->exit_shape;
	/* Test-only: makes the fast path read wrong reasons, to see the check refuse it. */
	if (skew)
		c->rodata->check_skew = (__u32)strtoul(skew, NULL, 0);
	c->rodata->check_rip = h->want_rip;
	c->rodata->check_vector = h->want_vector;
	/* run_probe() has run: the classic entry only where vmexit's pairs would take it. */
	c->rodata->check_classic_entry = !r->entry_btf;
	bpf_program__set_autoload(c->progs.check_entry_classic, !r->entry_btf);
	err = hook_check_bpf__load(c);
	startup_mark("check open and load");
	if (err)
		return err;
	order[0] = c->progs.check_entry_raw;
	order[1] = c->progs.check_entry_classic;
	order[2] = c->progs.check_exit_raw;
	order[3] = c->progs.check_exit_classic;
	for (int i = 0; i < 4; i++) {
		if (!bpf_program__autoload(order[i]))
			continue;
		r->links[i] = bpf_program__attach(order[i]);
		if (!r->links[i])
			return -errno;
	}
	__atomic_store_n(&c->bss->armed, true, __ATOMIC_RELEASE);
	r->w = (struct check_window){ .window_s = r->w.window_s, .verbose = r->w.verbose };
	r->w.start = r->w.last_seen_at = mono_s();
	/* Read after arming: none yet means that none came since the watch attached. */
	if (r->watch && !__atomic_load_n(&r->watch->bss->exits, __ATOMIC_RELAXED))
		r->w.quiet_s = r->w.start - r->watch_from;
	startup_mark("check attach");
	return 0;
}

/* Detaching both objects: the classic tracepoints' perf events each wait for a grace period,
 * all at once (links_destroy.h). */
void check_objects_destroy(struct hook_check_run *r)
{
	struct bpf_link **links[5] = { &r->links[0], &r->links[1], &r->links[2], &r->links[3] };
	int n = 4;

	if (r->watch)
		links[n++] = &r->watch->links.watch_exit;
	links_destroy(links, n);
	hook_check_bpf__destroy(r->obj);
	r->obj = NULL;
	exit_watch_bpf__destroy(r->watch);
	r->watch = NULL;
}

void hooks_check_start(struct hooks *h, const char *classic_why, double window_s,
		       bool verbose_check)
{
	struct hook_check_run *r = &h->run_state;
	int err;

	memset(&h->check, 0, sizeof(h->check));
	memset(r, 0, sizeof(*r));
	r->w.window_s = window_s;
	r->w.verbose = verbose_check;
	h->exit_note[0] = 0;
	h->exit_shape = EXIT_SHAPE_NONE;
	h->exit = EXIT_HOOK_CLASSIC;
	if (classic_why) {
		snprintf(h->exit_note, sizeof(h->exit_note), "%s", classic_why);
		return;
	}
	watch_start(r);
	h->exit_shape = exit_shape_probe(r);
	run_probe(r);
	if (h->exit_shape == EXIT_SHAPE_NONE) {
		snprintf(h->exit_note, sizeof(h->exit_note),
			 "no known raw kvm_exit prototype in the kernel's BTF");
		return;
	}
	err = check_arm(h);
	if (err) {
		check_objects_destroy(r);
		snprintf(h->exit_note, sizeof(h->exit_note), "the fast path does not load: %s",
			 strerror(-err));
		/* Said as a mismatch is: the cheaper path is refused either way. */
		fprintf(stderr, "vmexit: warning: the kvm_exit fast path does not load (%s): "
			"using the classic tracepoint\n", strerror(-err));
	}
}

void hooks_exit_autoload(const struct hooks *h, struct vmexit_bpf *skel)
{
	/* Both, while the check runs: the window's end chooses which ones are attached. */
	bool fast = h->run_state.obj != NULL, entry_btf = h->run_state.entry_btf;

	skel->rodata->raw_exit_shape = h->exit_shape;
	bpf_program__set_autoload(skel->progs.kvm_exit_fast, fast && !h->run_state.exit_direct);
	bpf_program__set_autoload(skel->progs.kvm_exit_direct, fast && h->run_state.exit_direct);
	bpf_program__set_autoload(skel->progs.kvm_exit, true);
	/*
	 * The entry reads nothing of the record (bpf/vmexit.bpf.c), so the classic kvm_exit (a
	 * stream, --by rip on VMX, a run started idle or refused the fast path) takes the
	 * BTF-enabled kvm_entry where there is one: it costs less a run, and its detach waits for
	 * no grace period, where each classic tracepoint's last perf event waits for one, serialized
	 * on the kernel's event_mutex (a stream's Ctrl-C waited for two).
	 */
	bpf_program__set_autoload(skel->progs.kvm_entry_fast, fast || entry_btf);
	bpf_program__set_autoload(skel->progs.kvm_entry, !entry_btf);
	skel->rodata->entry_alone = entry_btf;
}

void hooks_exit_fast_refused(struct hooks *h, struct vmexit_bpf *skel, int err, bool direct)
{
	/* kvm_exit_direct refused: the fast path by helper calls may still load. */
	if (h->run_state.obj && h->run_state.exit_direct && direct) {
		h->run_state.exit_direct = false;
		fprintf(stderr, "vmexit: warning: kvm_exit_direct does not load (%s): reading the "
			"vCPU by helper calls (kvm_exit_fast)\n", strerror(-err));
		return;
	}
	/* The classic kvm_exit's own note (a stream's) stays: only its entry changes. */
	if (h->run_state.obj)
		snprintf(h->exit_note, sizeof(h->exit_note), "the fast path does not load: %s",
			 strerror(-err));
	check_objects_destroy(&h->run_state);
	/* The BTF-enabled entry may be what failed: the classic pair whole. */
	h->run_state.entry_btf = false;
	fprintf(stderr, "vmexit: warning: the kvm_exit fast path does not load (%s): using the "
		"classic tracepoints, kvm_entry's too\n", strerror(-err));
	hooks_exit_autoload(h, skel);
}

/* Waits for the window's end (the rule: check_window_open()), then disarms the check. */
static double check_window_wait(struct hook_check_run *r, const volatile int *stop)
{
	struct timespec tick = { 0, 2 * 1000 * 1000 };
	const struct check_result *res = &r->obj->bss->result;
	double now;

	while (check_window_open(&r->w, (now = mono_s()), load_u64(&res->seen),
				 load_u64(&res->matched), load_u64(&res->mismatched) +
				 load_u64(&res->unpaired) + load_u64(&res->unreadable)) &&
	       !(stop && __atomic_load_n(stop, __ATOMIC_RELAXED)))
		nanosleep(&tick, NULL);
	__atomic_store_n(&r->obj->bss->armed, false, __ATOMIC_RELEASE);
	return now;
}

enum check_verdict hooks_check_verdict(struct hook_check_run *r, struct hook_check *k, char *note,
				       size_t len, const volatile int *stop)
{
	struct hook_check_bpf *c = r->obj;
	const struct check_result *res = &c->bss->result;
	double now = check_window_wait(r, stop), quiet;

	/* How long the host made no exit (when the check saw none): the watch's time counts. */
	quiet = now - r->w.start + r->w.quiet_s;
	k->ran = true;
	k->window_s = now - r->w.start;
	k->matched = res->matched;
	k->mismatched = res->mismatched;
	k->unpaired = res->unpaired;
	k->unreadable = res->unreadable;
	k->entries = res->entries;
	k->classic_missed = res->classic_missed;
	if (k->mismatched && res->vector_mismatched)
		/* Reasons alike, vectors not: say the vectors, not a reason that agreed. */
		snprintf(note, len, "the fast path's interrupt vectors (KVM's cached exit_intr_info) "
			 "differ from the classic record's on %llu exits",
			 (unsigned long long)res->vector_mismatched);
	else if (k->mismatched)
		snprintf(note, len, "the fast path read %s reason %u where the classic tracepoint "
			 "has %u", isa_name(res->bad_isa), res->bad_raw, res->bad_classic);
	if (r->w.verbose)
		check_counts_print(c, stderr);
	/* Until their links are gone (hooks_check_release()), the programs return at once. */
	__atomic_store_n(&c->bss->done, true, __ATOMIC_RELEASE);
	if (k->mismatched || k->unreadable || k->unpaired) {
		if (!k->mismatched)
			snprintf(note, len, "%llu exits unreadable, %llu seen by one side only",
				 (unsigned long long)k->unreadable,
				 (unsigned long long)k->unpaired);
		/* Always said: the user should know the cheaper path was refused, and why. */
		fprintf(stderr, "vmexit: warning: the kvm_exit fast path disagreed with the "
			"classic tracepoint on %llu of %llu exits (%s): using the classic one\n",
			(unsigned long long)(k->mismatched + k->unreadable + k->unpaired),
			(unsigned long long)(k->matched + k->mismatched + k->unreadable +
					     k->unpaired), note);
		return CHECK_REFUSED;
	}
	if (!load_u64(&res->seen)) {
		snprintf(note, len, "not checked: no kvm_exit in the last %.1f s", quiet);
		return CHECK_TOO_FEW;
	}
	if (k->matched < CHECK_MIN_MATCHED) {
		snprintf(note, len, "not checked: %llu exits read alike in the %.2f s check window, "
			 "%d needed", (unsigned long long)k->matched, k->window_s,
			 CHECK_MIN_MATCHED);
		return CHECK_TOO_FEW;
	}
	{
		char missed[64] = "";

		if (k->classic_missed)
			snprintf(missed, sizeof(missed), "; the classic side missed %llu",
				 (unsigned long long)k->classic_missed);
		snprintf(note, len, "checked: %llu exits and %llu entries read alike in %.2f s%s%s",
			 (unsigned long long)k->matched, (unsigned long long)k->entries,
			 k->window_s, missed,
			 c->rodata->check_vector ? " (interrupt vectors too)" : "");
	}
	return CHECK_AGREED;
}

void hooks_check_finish(struct hooks *h)
{
	struct hook_check_run *r = &h->run_state;

	if (!r->obj)
		return;
	/* The window has run while the main object loaded: only the rest is waited for here. */
	h->verdict = hooks_check_verdict(r, &h->check, h->exit_note, sizeof(h->exit_note), NULL);
	startup_mark("check window");
	if (h->verdict == CHECK_AGREED)
		h->exit = EXIT_HOOK_FAST;
}

/* Whether kvm_entry's program is the BTF-enabled one beside the kvm_exit hook exit: the fast
 * pair's, and the classic kvm_exit's wherever the kernel's BTF has kvm_entry. */
static bool entry_btf_used(const struct hooks *h, enum exit_hook exit)
{
	return exit == EXIT_HOOK_FAST || h->run_state.entry_btf;
}

bool hooks_exit_prog_used(const struct hooks *h, const struct vmexit_bpf *skel,
			  const struct bpf_program *prog)
{
	if (prog == skel->progs.kvm_entry_fast)
		return entry_btf_used(h, h->exit);
	if (prog == skel->progs.kvm_entry)
		return !entry_btf_used(h, h->exit);
	if (prog == skel->progs.kvm_exit_fast || prog == skel->progs.kvm_exit_direct)
		return h->exit == EXIT_HOOK_FAST && prog == hooks_exit_fast_prog(h, skel);
	if (prog == skel->progs.kvm_exit)
		return h->exit == EXIT_HOOK_CLASSIC;
	return true;
}

struct bpf_program *hooks_exit_fast_prog(const struct hooks *h, const struct vmexit_bpf *skel)
{
	return h->run_state.exit_direct ? skel->progs.kvm_exit_direct : skel->progs.kvm_exit_fast;
}

struct bpf_link **hooks_exit_fast_link(const struct hooks *h, struct vmexit_bpf *skel)
{
	return h->run_state.exit_direct ? &skel->links.kvm_exit_direct : &skel->links.kvm_exit_fast;
}

static void *check_reaper(void *arg)
{
	struct hook_check_run *r = arg;

	check_objects_destroy(r);
	/* -v: benches time exits once the programs that stay are the only ones (bench/). */
	if (r->say_detached)
		fprintf(stderr, "vmexit: hooks: start-up check detached in %.0f ms\n",
			(mono_s() - r->released_at) * 1e3);
	return NULL;
}

int hooks_check_links(struct hooks *h, struct bpf_link **links[], int max)
{
	struct hook_check_run *r = &h->run_state;
	int n = 0;

	/* Only while no thread owns them: the reaper frees them itself. */
	if (r->reaping)
		return 0;
	for (int i = 0; i < 4 && n < max; i++)
		links[n++] = &r->links[i];
	if (r->watch && n < max)
		links[n++] = &r->watch->links.watch_exit;
	return n;
}

/* The fds of the check's links now (NULL links left out). */
static int check_fds_now(const struct hook_check_run *r, int fds[], int max)
{
	int n = 0;

	for (int i = 0; i < 4 && n < max; i++)
		if (r->links[i])
			fds[n++] = bpf_link__fd(r->links[i]);
	if (r->watch && r->watch->links.watch_exit && n < max)
		fds[n++] = bpf_link__fd(r->watch->links.watch_exit);
	return n;
}

int hooks_check_link_fds(const struct hooks *h, int fds[], int max)
{
	const struct hook_check_run *r = &h->run_state;
	int n = 0;

	/* Not given to the thread: hooks_check_links() hands the links themselves over. */
	if (!r->reaping)
		return 0;
	for (int i = 0; i < r->n_reaped_fds && n < max; i++)
		fds[n++] = r->reaped_fds[i];
	return n;
}

void hooks_check_release(struct hooks *h, bool verbose)
{
	struct hook_check_run *r = &h->run_state;
	sigset_t all, old;

	if (!r->obj && !r->watch) {
		if (verbose)
			fprintf(stderr, "vmexit: hooks: start-up check detached in 0 ms\n");
		return;
	}
	r->say_detached = verbose;
	r->released_at = mono_s();
	r->n_reaped_fds = check_fds_now(r, r->reaped_fds, 5);
	/* Signals stay with the main thread: its waits are what they must interrupt. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r->reaping = !pthread_create(&r->reaper, NULL, check_reaper, r);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!r->reaping)
		check_reaper(r);
}

void hooks_check_reaped(struct hooks *h)
{
	struct hook_check_run *r = &h->run_state;

	if (r->reaping)
		pthread_join(r->reaper, NULL);
	r->reaping = false;
}

void hooks_free(struct hooks *h)
{
	struct hook_check_run *r = &h->run_state;

	/* Its thread may start the reaper: it ends first. */
	fast_switch_free(h);
	if (r->reaping)
		pthread_join(r->reaper, NULL);
	r->reaping = false;
	check_objects_destroy(r);
	kernel_btf_free(r);
}

static const char *user_hook_name(const struct hooks *h)
{
	return h->run_state.user_btf ? "tp_btf/kvm_userspace_exit" : "kvm:kvm_userspace_exit";
}

static const char *exit_hook_name(const struct hooks *h, enum exit_hook exit, bool entry)
{
	if (entry)
		return entry_btf_used(h, exit) ? "tp_btf/kvm_entry" : "kvm:kvm_entry";
	return exit == EXIT_HOOK_FAST ? "tp_btf/kvm_exit" : "kvm:kvm_exit";
}

void hooks_print(const struct hooks *h, bool exit_only, FILE *f)
{
	const struct hook_check *check;
	enum exit_hook exit;
	const char *note;

	/* A run started idle may have moved to the fast path since (fast_switch.h). */
	fast_switch_view(h, &exit, &note, &check);
	fprintf(f, "vmexit: hooks: kvm_exit %s, kvm_entry %s (%s)\n", exit_hook_name(h, exit, false),
		exit_hook_name(h, exit, true), note);
	/* arm64's raw kvm_exit hands its fields over as arguments: nothing is read of the vCPU. */
	if (exit == EXIT_HOOK_FAST && h->exit_shape != EXIT_SHAPE_ARM64)
		fprintf(f, "vmexit: hooks: kvm_exit reads its vCPU %s\n", h->run_state.exit_direct ?
			"by direct loads (kvm_exit_direct)" :
			"by helper calls (kvm_exit_fast)");
	if (exit_only)
		return;
	fprintf(f, "vmexit: hooks: KVM_RUN %s%s%s%s\n", run_hook_name(h->run),
		h->run_note[0] ? " (" : "", h->run_note, h->run_note[0] ? ")" : "");
	fprintf(f, "vmexit: hooks: userspace exit %s\n", user_hook_name(h));
	if (h->run == RUN_HOOK_IOCTL)
		fprintf(f, "vmexit: hooks: every syscall on the host pays for the ioctl "
			"tracepoint\n");
}

void hooks_info(const struct hooks *h, struct hooks_info *out)
{
	const struct hook_check *check;
	enum exit_hook exit;
	const char *note;

	fast_switch_view(h, &exit, &note, &check);
	*out = (struct hooks_info){ .kvm_run = run_hook_name(h->run),
				    .kvm_userspace_exit = user_hook_name(h),
				    .kvm_exit = exit_hook_name(h, exit, false),
				    .kvm_entry = exit_hook_name(h, exit, true),
				    .check = check, .note = note };
}
