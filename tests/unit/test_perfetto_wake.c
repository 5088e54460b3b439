// SPDX-License-Identifier: GPL-2.0
/*
 * report --perfetto of record --wake's deliveries: each delivery one flow, from a slice at the
 * moment it became pending to one at the entry that delivered it, both on the target vCPU's
 * kvm track (the track of its exits), flow ids unique; the JSON and protobuf writers agree line
 * for line (tests/unit/perfetto_canon.py). Expectations come from the deliveries written.
 * Run from the top of the source tree (it names the schema and the script by path).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "trace_events.h"
#include "trace_writer.h"
#include "wake.h"

#define SCHEMA	"docs/perfetto-subset.proto"
#define CANON	"tests/unit/perfetto_canon.py"

/* Deliveries: (tgid, vCPU, pending ns, latency ns); vCPU 1's first pending inside its exit. */
static const struct {
	__u32 tgid;
	__s32 vcpu;
	__u64 ts, lat;
	__u32 source, vector;
} wakes[] = {
	{ 100, 1, 1000500, 1500, WAKE_SRC_TIMER, 0xec },
	{ 100, 0, 1001000, 2000, WAKE_SRC_MSI, 0x41 },
	{ 100, 1, 1010000, 7, WAKE_SRC_IPI, 0xfd },
	{ 200, 0, 1020000, 0, WAKE_SRC_LOCAL, 0x22 },
	{ 100, 1, 1030000, 123456, WAKE_SRC_TIMER, 0xec },
};
#define NR_WAKES (sizeof(wakes) / sizeof(wakes[0]))

static char *slurp(const char *cmd)
{
	static char out[1 << 16];
	size_t n;
	FILE *p = popen(cmd, "r");

	if (!p)
		return NULL;
	n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = '\0';
	return pclose(p) == 0 ? strdup(out) : NULL;
}

static void write_trace(const struct trace_writer_ops *ops, const char *path)
{
	FILE *f = fopen(path, "w");
	void *w;

	CHECK(f != NULL);
	if (!f)
		return;
	w = ops->open(f, NULL);
	ops->guest(w, 100, "web");
	ops->guest(w, 200, "db");
	/* vCPU 1 halted from 1000000 to its entry at 1002000: the first timer's. */
	{
		struct vmexit_event e = ev(VMEXIT_EV_EXIT, 100, 1002, 1, 1000000, 2000,
					   VMEXIT_ISA_SVM, 0x78);

		ops->event(w, &e, NULL);
	}
	for (size_t i = 0; i < NR_WAKES; i++) {
		struct vmexit_event e = ev(VMEXIT_EV_WAKE, wakes[i].tgid,
					   wakes[i].tgid + 1 + wakes[i].vcpu, wakes[i].vcpu,
					   wakes[i].ts, wakes[i].lat, 0, wakes[i].source);

		e.intr_info = wakes[i].vector;
		e.rip = e.info1 = e.info2 = e.blocked_ns = e.runq_ns = e.oncpu_ns = 0;
		/* The parts: most of it halted asleep, the rest on CPU. */
		e.blocked_ns = wakes[i].lat / 2;
		e.oncpu_ns = wakes[i].lat - e.blocked_ns;
		ops->event(w, &e, NULL);
	}
	CHECK(ops->close(w) == 0);
	fclose(f);
}

/* The flow lines of a canonical trace, checked against the deliveries. */
static void check_flows(const char *canon)
{
	bool out_seen[NR_WAKES + 1] = {}, in_seen[NR_WAKES + 1] = {};
	__u64 out_ts[NR_WAKES + 1] = {}, in_ts[NR_WAKES + 1] = {};
	char out_track[NR_WAKES + 1][64] = {}, in_track[NR_WAKES + 1][64] = {};
	__u32 out_pid[NR_WAKES + 1] = {};
	int flows = 0;

	for (const char *p = canon; (p = strstr(p, "\nF|")); p++) {
		unsigned long long id, ts;
		unsigned int pid;
		char dir[4], track[64];

		CHECK(sscanf(p + 1, "F|%llu|%3[^|]|%u|%63[^|]|%llu", &id, dir, &pid, track,
			     &ts) == 5);
		/* Ids 1..n, each once each way. */
		CHECK(id >= 1 && id <= NR_WAKES);
		if (id < 1 || id > NR_WAKES)
			continue;
		if (!strcmp(dir, "out")) {
			CHECK(!out_seen[id]);
			out_seen[id] = true;
			out_ts[id] = ts;
			out_pid[id] = pid;
			snprintf(out_track[id], sizeof(out_track[id]), "%s", track);
			flows++;
		} else {
			CHECK(!strcmp(dir, "in"));
			CHECK(!in_seen[id]);
			in_seen[id] = true;
			in_ts[id] = ts;
			snprintf(in_track[id], sizeof(in_track[id]), "%s", track);
		}
	}
	CHECK_EQ_U64(flows, NR_WAKES);
	/* Flow i + 1 is delivery i: the writers number them in the order they draw them. */
	for (size_t i = 0; i < NR_WAKES; i++) {
		char vcpu[64];

		snprintf(vcpu, sizeof(vcpu), "vCPU %d", wakes[i].vcpu);
		CHECK(out_seen[i + 1] && in_seen[i + 1]);
		CHECK_EQ_U64(out_ts[i + 1], wakes[i].ts);
		CHECK_EQ_U64(in_ts[i + 1], wakes[i].ts + wakes[i].lat);
		CHECK_EQ_U64(out_pid[i + 1], wakes[i].tgid);
		CHECK_STR(out_track[i + 1], vcpu);
		CHECK_STR(in_track[i + 1], vcpu);
	}
	/* On the track of vCPU 1's exits. */
	CHECK(strstr(canon, "\nX|100|vCPU 1|1000000|2000|kvm_exit|") != NULL);
}

int main(void)
{
	char json[] = "/tmp/vmexit-pfwake-XXXXXX", proto[] = "/tmp/vmexit-pfwake-pb-XXXXXX";
	char cmd[512], *cj, *cp;
	int fd1 = mkstemp(json), fd2 = mkstemp(proto);

	CHECK(fd1 >= 0 && fd2 >= 0);
	close(fd1);
	close(fd2);
	write_trace(&perfetto_json_ops, json);
	write_trace(&perfetto_proto_ops, proto);
	snprintf(cmd, sizeof(cmd), "python3 " CANON " json %s", json);
	cj = slurp(cmd);
	snprintf(cmd, sizeof(cmd), "protoc --decode=vmexit.perfetto.Trace -I docs " SCHEMA
		 " < %s > %s.txt && python3 " CANON " proto %s.txt", proto, proto, proto);
	cp = slurp(cmd);
	CHECK(cj != NULL && cp != NULL);
	if (cj && cp) {
		if (getenv("V"))
			printf("%s", cj);
		check_flows(cj);
		check_flows(cp);
		CHECK_STR(cp, cj);
	}
	free(cj);
	free(cp);
	if (!getenv("KEEP"))
		unlink(json);
	unlink(proto);
	snprintf(cmd, sizeof(cmd), "%s.txt", proto);
	unlink(cmd);
	CHECK_DONE("perfetto_wake");
}
