// SPDX-License-Identifier: GPL-2.0
/*
 * The one hash map (src/lib/hashmap.h): lookups, insertion across growth, iteration, clearing, and
 * keys that all hash alike. Expected contents are what the test put in, kept in plain arrays.
 */
#include "check.h"
#include "hashmap.h"

struct key {
	__u32 tgid;
	__s32 vcpu;
};

DEFINE_HASHMAP(by_vcpu, struct key, __u64)

/* Every key in one probe chain: lookups must still tell them apart and wrap around the end. */
static __u64 same_hash(const __u32 *k)
{
	(void)k;
	return 63;
}

DEFINE_HASHMAP_HASH(colliding, __u32, __u32, same_hash)

#define N 5000

static struct key key_of(int i)
{
	/* Negative vCPUs too: -1 is "unknown" for the map's users. */
	struct key k = { .tgid = 1000 + i / 7, .vcpu = i % 7 - 1 };

	return k;
}

static void test_empty(void)
{
	struct by_vcpu m = {};
	struct by_vcpu_slot *s;
	struct key k = key_of(0);
	int n = 0;

	CHECK(!by_vcpu_find(&m, &k));
	hashmap_for_each(s, &m)
		n++;
	CHECK(n == 0);
	by_vcpu_clear(&m);
	by_vcpu_free(&m);
	CHECK(!m.slots && !m.cap && !m.nr);
}

static void test_insert_find(void)
{
	struct by_vcpu m = {};
	struct by_vcpu_slot *s;
	bool added, ok = true, seen_once = true;
	static int seen[N];
	__u64 sum = 0, want_sum = 0;
	__u64 *v;

	for (int i = 0; i < N; i++) {
		struct key k = key_of(i);

		v = by_vcpu_get(&m, &k, &added);
		ok &= v && added && *v == 0;	/* a new value starts zeroed */
		if (v)
			*v = i + 1;
		/* At most half full after every insertion, a power of two of slots. */
		ok &= m.nr == (__u32)i + 1 && m.nr * 2 <= m.cap && !(m.cap & (m.cap - 1));
		want_sum += i + 1;
	}
	CHECK(ok);
	CHECK_EQ_U64(m.nr, N);

	ok = true;
	for (int i = 0; i < N; i++) {
		struct key k = key_of(i);

		v = by_vcpu_find(&m, &k);
		ok &= v && *v == (__u64)i + 1;
		/* get() on a present key neither adds nor resets it */
		v = by_vcpu_get(&m, &k, &added);
		ok &= v && !added && *v == (__u64)i + 1;
	}
	CHECK(ok);
	CHECK_EQ_U64(m.nr, N);

	/* Keys next to the present ones are absent. */
	ok = true;
	for (int i = N; i < N + 100; i++) {
		struct key k = key_of(i);

		ok &= !by_vcpu_find(&m, &k);
	}
	{
		struct key k = { .tgid = 1000, .vcpu = 99 };

		ok &= !by_vcpu_find(&m, &k);
	}
	CHECK(ok);

	hashmap_for_each(s, &m) {
		int i = (int)s->val - 1;
		struct key want = key_of(i);

		sum += s->val;
		if (i < 0 || i >= N || seen[i]++ || memcmp(&s->key, &want, sizeof(want)))
			seen_once = false;
	}
	CHECK(seen_once);
	CHECK_EQ_U64(sum, want_sum);

	/* Cleared: nothing found, memory kept, usable again. */
	{
		__u32 cap = m.cap;
		struct key k = key_of(3);

		by_vcpu_clear(&m);
		CHECK(m.nr == 0 && m.cap == cap);
		CHECK(!by_vcpu_find(&m, &k));
		v = by_vcpu_get(&m, &k, &added);
		CHECK(v && added && *v == 0);
		CHECK(m.nr == 1);
	}
	by_vcpu_free(&m);
	CHECK(!m.slots && !m.cap && !m.nr);
}

/* The same keys added in the same order end in the same slots: perfetto's output relies on it. */
static void test_same_order(void)
{
	struct by_vcpu a = {}, b = {};
	bool added, same = true;

	for (int i = 0; i < 300; i++) {
		struct key k = key_of(i * 13);

		by_vcpu_get(&a, &k, &added);
		by_vcpu_get(&b, &k, &added);
	}
	CHECK(a.cap == b.cap);
	for (__u32 i = 0; i < a.cap && a.cap == b.cap; i++)
		same &= a.slots[i].used == b.slots[i].used &&
			(!a.slots[i].used || !memcmp(&a.slots[i].key, &b.slots[i].key,
						     sizeof(a.slots[i].key)));
	CHECK(same);
	by_vcpu_free(&a);
	by_vcpu_free(&b);
}

static void test_collisions(void)
{
	struct colliding m = {};
	bool added, ok = true;
	__u32 *v;

	/* 63 is the last slot of the first table: every chain wraps around. */
	for (__u32 k = 0; k < 200; k++) {
		v = colliding_get(&m, &k, &added);
		ok &= v && added;
		if (v)
			*v = k * 3;
	}
	for (__u32 k = 0; k < 200; k++) {
		v = colliding_find(&m, &k);
		ok &= v && *v == k * 3;
	}
	for (__u32 k = 200; k < 210; k++)
		ok &= !colliding_find(&m, &k);
	CHECK(ok);
	CHECK_EQ_U64(m.nr, 200);
	colliding_free(&m);
}

int main(void)
{
	test_empty();
	test_insert_find();
	test_same_order();
	test_collisions();
	CHECK_DONE("hashmap");
}
