// SPDX-License-Identifier: GPL-2.0
/* Moving to the fast path once exits begin on a host that was idle at start-up (fast_switch.h). */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "fast_switch.h"
#include "links_destroy.h"
#include "vmexit.h"
#include "vmexit.skel.h"
#include "hook_check.skel.h"
#include "exit_watch.skel.h"

/* How often the thread looks at the watch's count: an idle serve wakes 10 times a second. */
#define POLL_MS		100
/*
 * Longer than any one run of a program: a tracepoint calls its probes with preemption off, and
 * a program runs for microseconds. A run that read pair_overlap before it changed has ended.
 */
#define SETTLE_MS	10

enum switch_state {
	SWITCH_WAITING,		/* the classic pair, the check waiting for exits */
	SWITCH_DONE,		/* the fast pair (note, check: the window that agreed) */
	SWITCH_REFUSED,		/* the classic pair for good (note: why) */
};

struct fast_switch {
	struct hooks *h;
	struct vmexit_bpf *skel;
	bool verbose;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	volatile int stop;
	int state;			/* enum switch_state, published with a release store */
	struct hook_check check;
	char note[240];
};

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* Sleeps ms unless stopped meanwhile; true when stopped. */
static bool wait_stop(struct fast_switch *sw, long ms)
{
	struct timespec until;
	bool stop;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_nsec += ms * 1000000L;
	until.tv_sec += until.tv_nsec / 1000000000L;
	until.tv_nsec %= 1000000000L;
	pthread_mutex_lock(&sw->lock);
	while (!sw->stop && pthread_cond_timedwait(&sw->wake, &sw->lock, &until) != ETIMEDOUT)
		;
	stop = sw->stop;
	pthread_mutex_unlock(&sw->lock);
	return stop;
}

static __u64 watch_exits(const struct hook_check_run *r)
{
	return __atomic_load_n(&r->watch->bss->exits, __ATOMIC_RELAXED);
}

/* Empties a hash map that no program writes to now. */
static void map_clear(struct bpf_map *m, size_t key_size)
{
	char key[16], next[16];
	int fd = bpf_map__fd(m);

	if (key_size > sizeof(key))
		return;
	while (!bpf_map_get_next_key(fd, NULL, next)) {
		memcpy(key, next, key_size);
		if (bpf_map_delete_elem(fd, key))
			return;
	}
}

/*
 * A fresh window over the check's programs, which have returned at once since the last one
 * (done): its results and half-seen cycles forgotten. Cycles begun before armed is set again
 * are not judged (hook_check.bpf.c), so that an exit whose two programs straddle the moment
 * done is cleared cannot look unpaired.
 */
static void check_rearm(struct hook_check_run *r)
{
	struct hook_check_bpf *c = r->obj;

	map_clear(c->maps.cycles, sizeof(__u32));
	map_clear(c->maps.counts, sizeof(__u64));
	memset(&c->bss->result, 0, sizeof(c->bss->result));
	__atomic_store_n(&c->bss->armed, false, __ATOMIC_RELEASE);
	__atomic_store_n(&c->bss->done, false, __ATOMIC_RELEASE);
	sleep_ms(SETTLE_MS);
	r->w = (struct check_window){ .window_s = r->w.window_s };
	__atomic_store_n(&c->bss->armed, true, __ATOMIC_RELEASE);
	r->w.start = r->w.last_seen_at = mono_s();
}

/*
 * The fast pair in the classic one's place. While both are attached, whichever program runs
 * first on a tracepoint handles the event and the other sees it handled (pair_switch.bpf.h):
 * pair_overlap is set before the first fast program can run and cleared after the last
 * classic one has. 0 or -errno (the classic pair then stays, alone). Where the classic kvm_exit
 * already had the BTF-enabled kvm_entry (hooks_exit_autoload()), only the exits change places.
 */
static int pairs_swap(const struct hooks *h, struct vmexit_bpf *skel)
{
	struct bpf_link **classic[] = { &skel->links.kvm_exit, &skel->links.kvm_entry };
	struct bpf_link *had = __atomic_load_n(&skel->links.kvm_entry_fast, __ATOMIC_ACQUIRE);
	struct bpf_link *entry = had, *exit = NULL;
	int err = 0;

	__atomic_store_n(&skel->bss->pair_overlap, true, __ATOMIC_SEQ_CST);
	sleep_ms(SETTLE_MS);
	/* The completing program first, as at start-up (session.c's link_order()). */
	if (!entry)
		entry = bpf_program__attach(skel->progs.kvm_entry_fast);
	if (entry)
		exit = bpf_program__attach(hooks_exit_fast_prog(h, skel));
	if (!exit) {
		err = -errno;
		if (!had)
			bpf_link__destroy(entry);
	} else {
		__atomic_store_n(&skel->links.kvm_entry_fast, entry, __ATOMIC_RELEASE);
		__atomic_store_n(hooks_exit_fast_link(h, skel), exit, __ATOMIC_RELEASE);
		/* kvm_entry's link is NULL when the entry stayed: nothing to destroy there. */
		links_destroy(classic, 2);
	}
	sleep_ms(SETTLE_MS);
	__atomic_store_n(&skel->bss->pair_overlap, false, __ATOMIC_SEQ_CST);
	return err;
}

static void *switch_main(void *arg)
{
	struct fast_switch *sw = arg;
	struct hooks *h = sw->h;
	struct hook_check_run *r = &h->run_state;
	enum check_verdict v = CHECK_TOO_FEW;
	char note[sizeof(sw->note) - 40];
	__u64 base = watch_exits(r);
	double t0 = r->w.start, at;
	bool warned = false;
	int err;

	/* Judged anew only once as many exits came as a window needs: a trickle costs little. */
	while (!wait_stop(sw, POLL_MS)) {
		if (watch_exits(r) - base < CHECK_MIN_MATCHED)
			continue;
		/* --by key chose kvm_run's keys for a KVM that was not to trace kvm_exit
		 * (session.c): its exits in the kernel have no key program. Said once. */
		if (sw->skel->rodata->run_keys && !warned) {
			warned = true;
			fprintf(stderr, "vmexit: warning: kvm_exit fires on this KVM, which has no "
				"kvm_intel or kvm_amd: --by key took exits to the VMM's keys from "
				"kvm_run and attached no key program, so its exits handled in the "
				"kernel are keyed by what kvm_exit alone says (restart vmexit to key "
				"them by port, address and MSR)\n");
		}
		check_rearm(r);
		v = hooks_check_verdict(r, &sw->check, note, sizeof(note), &sw->stop);
		if (sw->stop || v != CHECK_TOO_FEW)
			break;
		base = watch_exits(r);
	}
	if (sw->stop)
		return NULL;
	at = mono_s() - t0;
	if (v == CHECK_AGREED) {
		err = pairs_swap(h, sw->skel);
		if (err) {
			fprintf(stderr, "vmexit: warning: the kvm_exit fast path does not attach (%s): "
				"using the classic tracepoint\n", strerror(-err));
			snprintf(sw->note, sizeof(sw->note), "the fast path does not attach: %s",
				 strerror(-err));
			v = CHECK_REFUSED;
		} else {
			snprintf(sw->note, sizeof(sw->note), "%s; switched %.2f s after start",
				 note, at);
		}
	} else {
		snprintf(sw->note, sizeof(sw->note), "%s; judged %.2f s after start", note, at);
	}
	__atomic_store_n(&sw->state, v == CHECK_AGREED ? SWITCH_DONE : SWITCH_REFUSED,
			 __ATOMIC_RELEASE);
	if (sw->verbose)
		hooks_print(h, true, stderr);
	/* The check is done with: its programs and the watch go (a grace period, here). */
	hooks_check_release(h, sw->verbose);
	return NULL;
}

bool fast_switch_wanted(const struct hooks *h, const struct vmexit_bpf *skel)
{
	const struct hook_check_run *r = &h->run_state;

	/* --check-hooks asks about start-up: its answer is the window's. */
	return h->verdict == CHECK_TOO_FEW && !r->w.verbose && r->obj && r->watch &&
	       bpf_program__fd(hooks_exit_fast_prog(h, skel)) >= 0 &&
	       bpf_program__fd(skel->progs.kvm_entry_fast) >= 0;
}

int fast_switch_start(struct hooks *h, struct vmexit_bpf *skel, bool verbose)
{
	struct fast_switch *sw = calloc(1, sizeof(*sw));
	sigset_t all, old;
	size_t n;
	int err;

	if (!sw)
		return -ENOMEM;
	sw->h = h;
	sw->skel = skel;
	sw->verbose = verbose;
	pthread_mutex_init(&sw->lock, NULL);
	pthread_cond_init(&sw->wake, NULL);
	/* Signals stay with the main thread: its waits are what they must interrupt. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&sw->thread, NULL, switch_main, sw);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		pthread_cond_destroy(&sw->wake);
		pthread_mutex_destroy(&sw->lock);
		free(sw);
		return -err;
	}
	h->sw = sw;
	n = strlen(h->exit_note);
	snprintf(h->exit_note + n, sizeof(h->exit_note) - n, "; checked once exits begin");
	/* Benches wait for the detach line to time the programs that stay: not yet. */
	if (verbose)
		fprintf(stderr, "vmexit: hooks: start-up check kept until exits begin\n");
	return 0;
}

void fast_switch_stop(struct hooks *h)
{
	struct fast_switch *sw = h->sw;

	if (!sw || sw->stop)
		return;
	pthread_mutex_lock(&sw->lock);
	sw->stop = 1;
	pthread_cond_broadcast(&sw->wake);
	pthread_mutex_unlock(&sw->lock);
	pthread_join(sw->thread, NULL);
}

bool fast_switch_pending(const struct hooks *h)
{
	return h->sw;
}

void fast_switch_view(const struct hooks *h, enum exit_hook *exit, const char **note,
		      const struct hook_check **check)
{
	const struct fast_switch *sw = h->sw;
	int state = sw ? __atomic_load_n(&sw->state, __ATOMIC_ACQUIRE) : SWITCH_WAITING;

	*exit = h->exit;
	*note = h->exit_note;
	*check = h->check.ran ? &h->check : NULL;
	if (state == SWITCH_WAITING)
		return;
	*exit = state == SWITCH_DONE ? EXIT_HOOK_FAST : EXIT_HOOK_CLASSIC;
	*note = sw->note;
	*check = sw->check.ran ? &sw->check : NULL;
}

void fast_switch_free(struct hooks *h)
{
	struct fast_switch *sw = h->sw;

	if (!sw)
		return;
	fast_switch_stop(h);
	pthread_cond_destroy(&sw->wake);
	pthread_mutex_destroy(&sw->lock);
	free(sw);
	h->sw = NULL;
}
