/* SPDX-License-Identifier: GPL-2.0 */
/* Loading vmexit's BPF programs: preflight checks, tunables, attach, the traced command. */
#ifndef VMEXIT_SESSION_H
#define VMEXIT_SESSION_H

#include <stdbool.h>
#include <sys/types.h>
#include "cell_window.h"
#include "hooks.h"
#include "vmexit.h"
#include "reasons.h"
#include "event_filter.h"

struct session_opts {
	struct event_filter filter;	/* -p (and -g's VMMs), -c, -r, --min-latency */
	__u32 max_cells;
	bool stream;			/* ring buffer of events */
	__u32 ringbuf_kb;
	__u32 sample_every;
	/* Bit VMEXIT_KVM_* per tracepoint to add: stream, record; without stream (top), their
	 * records alone go to the ring buffer. */
	__u32 kvm_events;
	char **command;			/* run this, trace it and its children, stop when it exits */
	bool pid_filter_on;		/* the pid filter is on while empty (serve follows names) */
	bool split;			/* exit time as on CPU, blocked, runq (sched_switch) */
	bool stacks;			/* --stacks (needs split): off-CPU time by kernel stack */
	__u64 stack_min_ns;		/* --stack-min */
	__u32 max_stacks;		/* --max-stacks: stack map and table sizes (0: default) */
	__u64 stuck_ns;			/* stat --stuck: cells keep exits this long (0: off) */
	bool verbose;
	bool check_hooks;		/* a longer fast-path check, its counts on stderr */
	bool force_thread_hash;		/* test/bench knob: per-thread state in a hash */
	bool count_later;		/* statistics count from session_start_counting() on */
	/* The cells read through session_cell_at()'s sliding window, s->cells NULL: the map's
	 * capacity stays out of the reader's memory (cell_window.h). */
	bool cells_windowed;
	__u32 key_mode;			/* enum vmexit_key_mode: --by key / --by rip */
	__u32 max_keys;			/* --max-keys (0: KEYS_DEFAULT_MAX) */
	__u32 key_gpa_shift;		/* --key-gpa-shift (0: 12, a page) */
};

#define KEYS_DEFAULT_MAX	1024
#define KEYS_RESERVE_CELLS	1024	/* cells whose none and other rows the table keeps room for */

struct vmexit_bpf;
struct bpf_object;
struct ring_buffer;

struct session {
	struct vmexit_bpf *skel;
	struct cell *cells;		/* mmapped cell array (NULL: cells_windowed) */
	struct cell_window win;		/* cells_windowed: the part mapped now */
	bool windowed;
	size_t cells_len;
	__u32 max_cells;
	__u32 max_keys;
	pid_t child;			/* the traced command while it runs, or 0 */
	pid_t child_pid;		/* the traced command, or 0: kept after it exits */
	int child_status;		/* its wait status once session_command_done() said so */
	int child_go_fd;		/* write end: closing it lets the child exec */
	int child_exec_fd;		/* read end: the child's errno if its exec failed, else EOF */
	bool child_not_run;		/* it did: session_command_not_run() read it */
	bool task_storage;
	__u64 cells_freed;		/* handed back to the kernel (session_release_cell) */
	__u64 cells_leaked;		/* could not be: lost for the rest of the session */
	struct hooks hooks;		/* the kernel hooks in use */
	int run_keys_err;		/* kvm_run's keys did not load: -errno (the next load goes
					 * without them) */
};

/* Checks privileges, BTF, tracefs and the kvm tracepoints; prints one line and returns -1 if
 * something is missing. Mounts tracefs when it is absent and we may. */
int session_preflight(void);
int session_open(struct session *s, struct session_opts *o);
/* --max-stacks as the kernel's maps are sized. */
__u32 stacks_max(const struct session_opts *o);
/* Lets the command start (after attach). */
void session_start_command(struct session *s);
/* Returns true once the traced command has exited (its wait status in *status, may be NULL). */
bool session_command_done(struct session *s, int *status);
/*
 * The end of a run with a command: says on stderr if it was left running or failed. Returns
 * the exit status vmexit ends with: rc when non-zero, else the command's failing status.
 */
int session_command_report(const struct session *s, int rc);
/* True when the command could not be run at all (its exec failed, and the child said why):
 * there is no run to sum up. Never blocks. */
bool session_command_not_run(struct session *s);
/*
 * The end of a stream: detaches every program but the thread-exit one, those that begin exits
 * first, so that no exit begins or completes any more (a thread that ends still emits its
 * unfinished exits).
 */
void session_stop_exits(struct session *s);
/*
 * After session_stop_exits(): calls fn once per exit still in flight (type flagged
 * VMEXIT_EV_IN_FLIGHT, its age at end_ns as latency, after the stream's kernel filters), and
 * marks them ended so that a thread exiting later does not emit them again. 0, fn's non-zero
 * return, or -errno when the kernel's task iterator could not run.
 */
int session_flush_in_flight(struct session *s, __u64 end_ns,
			    int (*fn)(void *ctx, const struct vmexit_event *ev), void *ctx);
/*
 * Adds the nr_add pids in add to the kernel's pid filter and removes the nr_del in del; the
 * threads of an added pid that the kernel ignored so far are traced from their next event.
 * 0 or -errno (the first failure; the others are still tried).
 */
int session_filter_pids(struct session *s, const int *add, int nr_add, const int *del,
			int nr_del);
/*
 * With the pid filter on: up to max of the processes whose threads made KVM events while not
 * traced (still running; those gone are forgotten). Their number.
 */
int session_unwanted_vmms(struct session *s, int *pids, int max);
/* Cells handed out so far (bounded by max_cells). */
__u32 session_nr_cells(const struct session *s);
/* cells_windowed: cell i, valid until the next call (cell_window_at()); NULL: cannot map. */
const struct cell *session_cell_at(void *session, __u32 i);
/* cell_source.release for the kernel's cells: zeroes cell idx and hands it to the kernel. */
void session_release_cell(void *session, __u32 idx);

struct cell_counts {
	__u32 handed_out;		/* distinct cells ever used (bounded by max_cells) */
	__u64 freed;			/* handed back by userspace */
	__u64 reused;			/* taken again by the kernel */
	__u64 leaked;			/* could not be handed back */
};

/* In use now: handed_out - (freed - reused); none is lost when that matches the live cells. */
void session_cell_counts(const struct session *s, struct cell_counts *c);
void session_lost(const struct session *s, __u64 lost[NR_LOST]);
/*
 * count_later: counting starts now. An exit begun before never counts, not even when it
 * completes later (the kernel keeps no cell for it): completed never exceeds count.
 */
void session_start_counting(struct session *s);
void session_new_epoch(struct session *s);
__u32 session_epoch(const struct session *s);
/* The VMM command line the kernel kept for tgid (name_cache' args hook); length or -errno. */
int session_proc_args(void *session, __u32 tgid, char *buf, size_t len);
/*
 * Up to max of the programs attached, for the kernel's statistics of their runs (--overhead,
 * serve): those loaded but left unused by the start-up check are not.
 */
int session_progs(const struct session *s, struct bpf_program **progs, int max);
void session_close(struct session *s);

#endif /* VMEXIT_SESSION_H */
