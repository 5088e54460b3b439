// SPDX-License-Identifier: GPL-2.0
/* stat --wake: load and attach bpf/wake.bpf.c, read its cells. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "wake_progs.h"
#include "wake.skel.h"

int wake_progs_open(struct wake_progs *w, const struct wake_scope *sc)
{
	return wake_progs_open_stream(w, sc, -1, 0);
}

/*
 * "tp_btf on kvm_entry, kvm_exit, ..." from the object itself: the build's architecture has its
 * own set (Makefile, WAKE_BPF_SRC_*), and a list written here would tell the other's.
 */
static const char *wake_hooks(struct bpf_object *obj, char *buf, size_t len)
{
	struct bpf_program *prog;
	size_t n = 0;
	const char *kind = NULL;

	buf[0] = 0;
	bpf_object__for_each_program(prog, obj) {
		const char *sec = bpf_program__section_name(prog), *slash = strchr(sec, '/');
		int w;

		if (!slash)
			continue;
		/* Each kind named where it starts: arm64's set ends with a kprobe. */
		if (kind && !strncmp(kind, sec, slash - sec + 1))
			w = snprintf(buf + n, len - n, ", %s", slash + 1);
		else
			w = snprintf(buf + n, len - n, "%s%.*s on %s", kind ? "; " : "",
				     (int)(slash - sec), sec, slash + 1);
		kind = sec;
		if (w < 0 || (size_t)w >= len - n)
			break;
		n += w;
	}
	return buf;
}

int wake_progs_open_stream(struct wake_progs *w, const struct wake_scope *sc, int ring_fd,
			   unsigned int wake_shift)
{
	struct bpf_program *prog;
	char hooks[512];
	int err;

	w->skel = wake_bpf__open();
	if (!w->skel) {
		err = -errno;
		fprintf(stderr, "vmexit: --wake: cannot open its BPF object: %s\n", strerror(-err));
		return err;
	}
	if (ring_fd >= 0) {
		/* The stream's own ring: one reader, the deliveries among the exits in order. */
		err = bpf_map__reuse_fd(w->skel->maps.events, ring_fd);
		if (err) {
			fprintf(stderr, "vmexit: --wake: cannot share the stream's ring buffer: "
				"%s\n", strerror(-err));
			goto fail;
		}
		w->skel->rodata->emit_events = true;
		w->skel->rodata->stream_wake_shift = wake_shift;
	}
	/*
	 * Filtered in the kernel, as the exits: every guest's deliveries in the stream's ring
	 * would take the room of the traced guests' exits, and a command's forked VMM is in the
	 * session's map, not known here (stat --wake -- sh -c 'qemu ...').
	 */
	if (sc->filter_pids) {
		err = bpf_map__reuse_fd(w->skel->maps.pid_filter, sc->pid_fd);
		if (err) {
			fprintf(stderr, "vmexit: --wake: cannot share the session's pid filter: "
				"%s\n", strerror(-err));
			goto fail;
		}
		w->skel->rodata->filter_pids = true;
	}
	w->skel->rodata->filter_vcpu = sc->vcpu;
	err = wake_bpf__load(w->skel);
	if (err) {
		fprintf(stderr, "vmexit: --wake: cannot load its programs (%s; is kvm loaded?): "
			"%s\n", wake_hooks(w->skel->obj, hooks, sizeof(hooks)), strerror(-err));
		goto fail;
	}
	/* One by one, so that the message names the hook this kernel refused. */
	bpf_object__for_each_program(prog, w->skel->obj) {
		struct bpf_link *l = w->nr_links < WAKE_MAX_LINKS ? bpf_program__attach(prog) : NULL;

		if (!l) {
			err = w->nr_links < WAKE_MAX_LINKS ? -errno : -E2BIG;
			fprintf(stderr, "vmexit: --wake: cannot attach %s: %s\n",
				bpf_program__section_name(prog), strerror(-err));
			goto fail;
		}
		w->links[w->nr_links++] = l;
	}
	return 0;
fail:
	wake_progs_close(w);
	return err;
}

/* Every key and value of a hash map, in arrays grown as they fill. */
static int map_copy(int fd, size_t ksz, size_t vsz, void **keys, void **vals, size_t *nr)
{
	size_t cap = 0, n = 0;
	void *k = NULL, *v = NULL, *prev = NULL, *next = malloc(ksz);
	int err = 0;

	if (!next)
		return -ENOMEM;
	while (!bpf_map_get_next_key(fd, prev, next)) {
		if (n == cap) {
			void *nk, *nv;

			cap = cap ? 2 * cap : 64;
			nk = realloc(k, cap * ksz);
			if (nk)
				k = nk;
			nv = nk ? realloc(v, cap * vsz) : NULL;
			if (nv)
				v = nv;
			if (!nk || !nv) {
				err = -ENOMEM;
				break;
			}
		}
		memcpy((char *)k + n * ksz, next, ksz);
		/* A key deleted since: none is, the cells live as long as the programs. */
		if (bpf_map_lookup_elem(fd, next, (char *)v + n * vsz)) {
			err = -errno;
			break;
		}
		prev = (char *)k + n * ksz;
		n++;
	}
	free(next);
	if (err) {
		free(k);
		free(v);
		return err;
	}
	*keys = k;
	*vals = v;
	*nr = n;
	return 0;
}

int wake_progs_read(struct wake_progs *w, struct wake_snapshot *out)
{
	int err;

	memset(out, 0, sizeof(*out));
	err = map_copy(bpf_map__fd(w->skel->maps.wake_cells), sizeof(struct wake_key),
		       sizeof(struct wake_cell), (void **)&out->wkeys, (void **)&out->wcells,
		       &out->nr_wake);
	if (!err)
		err = map_copy(bpf_map__fd(w->skel->maps.hlt_cells), sizeof(struct hlt_key),
			       sizeof(struct hlt_cell), (void **)&out->hkeys,
			       (void **)&out->hcells, &out->nr_hlt);
	if (err) {
		fprintf(stderr, "vmexit: --wake: cannot read its cells: %s\n", strerror(-err));
		wake_snapshot_free(out);
		return err;
	}
	memcpy(out->lost, w->skel->bss->wake_lost, sizeof(out->lost));
	out->posted = w->skel->bss->wake_posted;
	out->posted_known = true;
	out->untimed = w->skel->bss->wake_untimed;
	out->untimed_known = true;
	out->halt_poll_ns = wake_halt_poll_ns();
	return 0;
}

typedef bool wake_keep_fn(void *ctx, __u32 tgid, __u64 start);

/* keep() of a key: the pid first, the start time at start_at. */
static bool key_kept(const char *key, size_t start_at, wake_keep_fn *keep, void *ctx)
{
	__u32 tgid;
	__u64 start;

	memcpy(&tgid, key, sizeof(tgid));
	memcpy(&start, key + start_at, sizeof(start));
	return keep(ctx, tgid, start);
}

/* The keys of map fd (ksz bytes) whose VMM keep() refuses, deleted. */
static int forget_in(int fd, size_t ksz, size_t start_at, wake_keep_fn *keep, void *ctx)
{
	char key[64], next[64];
	void *prev = NULL;
	int err = 0;

	/* A deleted key's successor is looked up from the key before it: walk, then delete
	 * the previous key once its successor is known. */
	while (!bpf_map_get_next_key(fd, prev, next)) {
		if (prev && !key_kept(key, start_at, keep, ctx) && bpf_map_delete_elem(fd, key) &&
		    errno != ENOENT)
			err = -errno;
		memcpy(key, next, ksz);
		prev = key;
	}
	if (prev && !key_kept(key, start_at, keep, ctx) && bpf_map_delete_elem(fd, key) &&
	    errno != ENOENT)
		err = -errno;
	return err;
}

int wake_progs_forget(struct wake_progs *w, wake_keep_fn *keep, void *ctx)
{
	_Static_assert(sizeof(struct wake_key) <= 64 && sizeof(struct hlt_key) <= 64, "room");
	_Static_assert(!offsetof(struct wake_key, tgid) && !offsetof(struct hlt_key, tgid),
		       "forget_in() reads the pid first");
	int err = forget_in(bpf_map__fd(w->skel->maps.wake_cells), sizeof(struct wake_key),
			    offsetof(struct wake_key, proc_start), keep, ctx);
	int err2 = forget_in(bpf_map__fd(w->skel->maps.hlt_cells), sizeof(struct hlt_key),
			     offsetof(struct hlt_key, proc_start), keep, ctx);

	return err ? err : err2;
}

void wake_progs_lost(const struct wake_progs *w, __u64 out[NR_WAKE_LOST])
{
	for (int i = 0; i < NR_WAKE_LOST; i++)
		out[i] = w->skel ? __atomic_load_n(&w->skel->bss->wake_lost[i], __ATOMIC_RELAXED)
				 : 0;
}

__u64 wake_progs_events_lost(const struct wake_progs *w)
{
	return w->skel ? __atomic_load_n(&w->skel->bss->events_lost, __ATOMIC_RELAXED) : 0;
}

void wake_progs_detach(struct wake_progs *w)
{
	while (w->nr_links > 0)
		bpf_link__destroy(w->links[--w->nr_links]);
}

void wake_progs_close(struct wake_progs *w)
{
	wake_progs_detach(w);
	wake_bpf__destroy(w->skel);
	w->skel = NULL;
}

int wake_progs_list(const struct wake_progs *w, struct bpf_program **progs, int max)
{
	struct bpf_program *prog;
	int n = 0;

	if (!w->skel)
		return 0;
	bpf_object__for_each_program(prog, w->skel->obj)
		if (n < max)
			progs[n++] = prog;
	return n;
}

long long wake_halt_poll_ns(void)
{
	FILE *f = fopen("/sys/module/kvm/parameters/halt_poll_ns", "r");
	long long v = -1;

	if (!f)
		return -1;
	if (fscanf(f, "%lld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}
