/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one hash map of vmexit's userspace: open addressing with linear probing over a power of
 * two of slots, kept at most half full, doubled when it would be more. There is no removal:
 * every user keeps what it learnt until it frees the whole map.
 *
 * DEFINE_HASHMAP(name, key_type, value_type) declares `struct name` and its functions as static
 * inline ones, so that each map's lookup is compiled for its key: report and stream look up
 * several maps per event. A zeroed `struct name` is an empty map.
 *
 *   name_find(m, &key)          the value, or NULL
 *   name_get(m, &key, &added)   the value, added zeroed when absent; NULL only on ENOMEM
 *   name_clear(m)               forgets every entry, keeps the memory
 *   name_free(m)                frees it; the map is empty again
 *   hashmap_for_each(slot, m)   each used slot (slot->key, slot->val) in slot order
 *
 * Keys are hashed and compared as bytes: a key type is a whole number of 32-bit words without
 * padding (checked at compile time as far as C can: the size).
 */
#ifndef VMEXIT_HASHMAP_H
#define VMEXIT_HASHMAP_H

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <linux/types.h>

#define HASHMAP_MIN_SLOTS 64

/*
 * Keys are read 32 bits at a time, as their fields were written: a wider load over a key its
 * caller has just built field by field stalls on store forwarding (report looks a row key up
 * per event). Each word gets its own odd multiplier, so the multiplies run in parallel, and
 * the shift brings the products' high bits, which depend on every bit of a word, down to the
 * slot index.
 */
#define HASHMAP_MAX_KEY	48

static inline __u32 hashmap_word(const void *key, size_t i)
{
	__u32 w;

	memcpy(&w, (const unsigned char *)key + 4 * i, sizeof(w));
	return w;
}

static inline __u64 hashmap_hash_bytes(const void *key, size_t size)
{
	static const __u64 mul[HASHMAP_MAX_KEY / 4] = {
		0x9e3779b97f4a7c15ull, 0xc2b2ae3d27d4eb4full, 0x165667b19e3779f9ull,
		0xd6e8feb86659fd93ull, 0xbf58476d1ce4e5b9ull, 0x94d049bb133111ebull,
		0xff51afd7ed558ccdull, 0xc4ceb9fe1a85ec53ull, 0x9fb21c651e98df25ull,
		0xa0761d6478bd642full, 0xe7037ed1a0b428dbull, 0x8ebc6af09c88c6e3ull,
	};
	__u64 h = size;

#pragma GCC unroll 12
	for (size_t i = 0; i < size / 4; i++)
		h += hashmap_word(key, i) * mul[i];
	return h ^ (h >> 29);
}

/* Bytewise equality, word by word for the reason above. */
static inline bool hashmap_key_eq(const void *a, const void *b, size_t size)
{
#pragma GCC unroll 12
	for (size_t i = 0; i < size / 4; i++)
		if (hashmap_word(a, i) != hashmap_word(b, i))
			return false;
	return true;
}

#define hashmap_hash_key(k) hashmap_hash_bytes((k), sizeof(*(k)))

#define hashmap_for_each(slot, m)                                                             \
	for (slot = (m)->slots; slot && slot < (m)->slots + (m)->cap; slot++)                 \
		if (!slot->used) {                                                            \
		} else

#define DEFINE_HASHMAP(name, key_type, value_type)                                            \
	DEFINE_HASHMAP_HASH(name, key_type, value_type, hashmap_hash_key)

/* With the map's own hash function hash(const key_type *): only where the slot order is seen
 * in an output and must stay as it was. */
#define DEFINE_HASHMAP_HASH(name, key_type, value_type, hash)                                 \
	_Static_assert(sizeof(key_type) % 4 == 0 && sizeof(key_type) <= HASHMAP_MAX_KEY,       \
		       #key_type ": whole 32-bit words, HASHMAP_MAX_KEY bytes at most");       \
                                                                                               \
	struct name##_slot {                                                                  \
		key_type key;                                                                 \
		value_type val;                                                               \
		bool used;                                                                    \
	};                                                                                    \
                                                                                               \
	struct name {                                                                         \
		struct name##_slot *slots;                                                    \
		__u32 cap; /* a power of two, or 0 */                                         \
		__u32 nr;                                                                     \
	};                                                                                    \
                                                                                               \
	static inline struct name##_slot *name##_probe(struct name##_slot *slots, __u32 cap,  \
						       const key_type *k)                      \
	{                                                                                     \
		__u32 i = (__u32)hash(k) & (cap - 1);                                         \
                                                                                               \
		while (slots[i].used && !hashmap_key_eq(&slots[i].key, k, sizeof(*k)))        \
			i = (i + 1) & (cap - 1);                                              \
		return &slots[i];                                                             \
	}                                                                                     \
                                                                                               \
	static inline value_type *name##_find(const struct name *m, const key_type *k)        \
	{                                                                                     \
		struct name##_slot *s;                                                        \
                                                                                               \
		if (!m->cap)                                                                  \
			return NULL;                                                          \
		s = name##_probe(m->slots, m->cap, k);                                        \
		return s->used ? &s->val : NULL;                                              \
	}                                                                                     \
                                                                                               \
	/* Moves the entries in slot order: the same keys added in the same order always     \
	 * end in the same slots. */                                                          \
	static inline int name##_grow(struct name *m)                                         \
	{                                                                                     \
		__u32 cap = m->cap ? m->cap * 2 : HASHMAP_MIN_SLOTS;                          \
		struct name##_slot *slots, *s;                                                \
                                                                                               \
		if (!cap)                                                                     \
			return -ENOMEM;                                                       \
		slots = calloc(cap, sizeof(*slots));                                          \
		if (!slots)                                                                   \
			return -ENOMEM;                                                       \
		hashmap_for_each(s, m)                                                        \
			*name##_probe(slots, cap, &s->key) = *s;                              \
		free(m->slots);                                                               \
		m->slots = slots;                                                             \
		m->cap = cap;                                                                 \
		return 0;                                                                     \
	}                                                                                     \
                                                                                               \
	static inline value_type *name##_get(struct name *m, const key_type *k, bool *added)  \
	{                                                                                     \
		struct name##_slot *s = NULL;                                                 \
                                                                                               \
		*added = false;                                                               \
		if (m->cap) {                                                                 \
			s = name##_probe(m->slots, m->cap, k);                                \
			if (s->used)                                                          \
				return &s->val;                                               \
		}                                                                             \
		if (!s || (m->nr + 1) * 2 > m->cap) {                                         \
			if (name##_grow(m))                                                   \
				return NULL;                                                  \
			s = name##_probe(m->slots, m->cap, k);                                \
		}                                                                             \
		memset(s, 0, sizeof(*s));                                                     \
		s->key = *k;                                                                  \
		s->used = true;                                                               \
		m->nr++;                                                                      \
		*added = true;                                                                \
		return &s->val;                                                               \
	}                                                                                     \
                                                                                               \
	static inline void name##_clear(struct name *m)                                       \
	{                                                                                     \
		if (m->slots)                                                                 \
			memset(m->slots, 0, (size_t)m->cap * sizeof(*m->slots));             \
		m->nr = 0;                                                                    \
	}                                                                                     \
                                                                                               \
	static inline void name##_free(struct name *m)                                        \
	{                                                                                     \
		free(m->slots);                                                               \
		m->slots = NULL;                                                              \
		m->cap = m->nr = 0;                                                           \
	}

#endif /* VMEXIT_HASHMAP_H */
