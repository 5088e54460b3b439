// SPDX-License-Identifier: GPL-2.0
/* The exporter's guests: start times, exit, --keep, a pid reused by another process, and
 * forgetting the guests no longer exported. */
#include "check.h"
#include "serve_guests.h"

/* Processes of the fake host: pid -> the start (s) of the process on it (0: none). */
static __u64 running[8];

static bool fake_alive(void *ctx, __u32 tgid, __u64 start, __u64 *ms)
{
	(void)ctx;
	if (tgid >= 8 || !running[tgid] || (start && start != running[tgid]))
		return false;
	*ms = 1000 * running[tgid];
	return true;
}

/* A row of the process now on tgid (or of none: start 0). */
static void add_row(struct row_table *rt, __u32 tgid, __u32 reason)
{
	struct row_key k = { .tgid = tgid, .vcpu = -1, .isa = VMEXIT_ISA_USER, .reason = reason,
			     .start = tgid < 8 ? running[tgid] : 0 };

	CHECK(row_table_get(rt, &k) != NULL);
}

int main(void)
{
	struct serve_guests g = { .start_ms = 50000, .keep_ms = 300000, .alive = fake_alive };
	struct row_table rt;
	const struct serve_guest *x;

	row_table_init(&rt);
	running[2] = 10;	/* started before vmexit (10 s vs 50 s) */
	running[3] = 70;	/* after */
	add_row(&rt, 3, 2);
	add_row(&rt, 2, 2);
	add_row(&rt, 3, 6);
	add_row(&rt, 5, 2);	/* gone before we looked */
	CHECK(!serve_guests_learn(&g, &rt, 60000));
	CHECK_EQ_U64(g.map.nr, 3);
	x = serve_guests_find(&g, 2, 10);
	CHECK(x && x->created_ms == 50000 && !x->ended_ms);
	x = serve_guests_find(&g, 3, 70);
	CHECK(x && x->created_ms == 70000 && !x->ended_ms);
	x = serve_guests_find(&g, 5, 0);
	CHECK(x && x->ended_ms == 60000);
	CHECK(!serve_guests_find(&g, 4, 0));
	CHECK_EQ_U64(serve_guests_running(&g), 2);

	/* 2 exits at 100 s: exported until 100 s + keep, not after. */
	running[2] = 0;
	serve_guests_check(&g, 100000);
	x = serve_guests_find(&g, 2, 10);
	CHECK(x && x->ended_ms == 100000);
	CHECK(serve_guest_exported(&g, x, 100000 + 300000));
	CHECK(!serve_guest_exported(&g, x, 100000 + 300001));
	CHECK_EQ_U64(serve_guests_running(&g), 1);
	/* Its pid comes back as another process: still the guest that ended. */
	running[2] = 90;
	serve_guests_check(&g, 110000);
	CHECK(serve_guests_find(&g, 2, 10)->ended_ms == 100000);
	/* 3's pid now names a process started later: 3 has ended. */
	running[3] = 95;
	serve_guests_check(&g, 120000);
	CHECK(serve_guests_find(&g, 3, 70)->ended_ms == 120000);
	CHECK_EQ_U64(serve_guests_running(&g), 0);
	/* Learning again changes nothing known. */
	CHECK(!serve_guests_learn(&g, &rt, 130000));
	CHECK_EQ_U64(g.map.nr, 3);
	CHECK(serve_guests_find(&g, 3, 70)->created_ms == 70000);

	/* The new process on pid 3 makes exits: another guest, running, its own start. */
	add_row(&rt, 3, 2);
	CHECK(!serve_guests_learn(&g, &rt, 140000));
	CHECK_EQ_U64(g.map.nr, 4);
	x = serve_guests_find(&g, 3, 95);
	CHECK(x && x->created_ms == 95000 && !x->ended_ms);
	serve_guests_check(&g, 150000);
	CHECK(!serve_guests_find(&g, 3, 95)->ended_ms);
	CHECK_EQ_U64(serve_guests_running(&g), 1);

	/* Past --keep, the ended ones expire and are forgotten; the running one stays. */
	CHECK(!serve_guests_expired(&g, 2, 10, 400000));
	CHECK(serve_guests_expired(&g, 2, 10, 400001));
	CHECK(!serve_guests_expired(&g, 3, 95, 10000000));
	CHECK(!serve_guests_expired(&g, 4, 0, 10000000));	/* not known: not expired */
	/* At 400.001 s: 2 (ended at 100 s) and 5 (60 s) go, 3 of 70 s (120 s) stays. */
	CHECK(!serve_guests_prune(&g, 400001));
	CHECK_EQ_U64(g.map.nr, 2);
	CHECK(!serve_guests_find(&g, 2, 10));
	CHECK(!serve_guests_find(&g, 5, 0));
	CHECK(serve_guests_find(&g, 3, 70) != NULL);
	CHECK(!serve_guests_prune(&g, 420001));
	CHECK(!serve_guests_find(&g, 3, 70));
	CHECK(serve_guests_find(&g, 3, 95) != NULL);
	CHECK_EQ_U64(g.map.nr, 1);

	serve_guests_free(&g);
	row_table_free(&rt);
	CHECK_DONE("test_serve_guests");
}
