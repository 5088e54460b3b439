// SPDX-License-Identifier: GPL-2.0
/* A numeric tracepoint field through libtraceevent (see tep_field.h). */
#include <event-parse.h>
#include "tep_field.h"

/*
 * For `make SAN=1` builds (LeakSanitizer asks for these at start; unused otherwise): libtraceevent
 * 1.7 leaks a token when an event format fails to parse (kvm_inj_exception's on recent kernels,
 * inside tep_parse_event(), called by tracecmd_open() and by the perf.data reader), which
 * tep_free() cannot free. Unlisted, the suppressed leak would add lines to a one-line error.
 */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	/*
	 * libtracecmd 1.3 leaks the clock name it reads with sscanf("%m[...]") from a version 6
	 * trace.dat (tracecmd_parse_trace_clock); the default unwinder stops in glibc, so that
	 * frame is all the report has. vmexit's own code allocates with no %m conversion.
	 */
	return "leak:libtraceevent.so\nleak:__vfscanf_internal\n";
}

const char *__lsan_default_options(void);
const char *__lsan_default_options(void)
{
	return "print_suppressions=0";
}

/* A numeric field within the record (a damaged format may place one past it). */
static bool field_fits(const struct tep_format_field *f, const struct tep_record *rec)
{
	return f->offset >= 0 && f->size > 0 && f->size <= 8 && rec->size >= f->size &&
	       f->offset <= rec->size - f->size;
}

bool tep_common_fit(struct tep_handle *tep, const struct tep_record *rec)
{
	/* libtraceevent takes the common fields' places from its first event (__parse_common). */
	struct tep_event *first = tep_get_event(tep, 0);
	static const char *const common[] = { "common_type", "common_pid" };

	for (size_t i = 0; i < sizeof(common) / sizeof(common[0]); i++) {
		struct tep_format_field *f = first ? tep_find_common_field(first, common[i]) : NULL;

		if (!f || !field_fits(f, rec))
			return false;
	}
	return true;
}

bool tep_field(const void *ctx, const char *name, __u64 *val)
{
	const struct tep_field_ctx *c = ctx;
	struct tep_format_field *f = tep_find_field(c->event, name);
	unsigned long long v;

	/* A damaged format may place a field past the record: libtraceevent reads it anyway. */
	if (!f || !field_fits(f, c->rec) || tep_read_number_field(f, c->rec->data, &v))
		return false;
	/* Signed fields (kvm_userspace_exit's errno) come back zero-extended. */
	if ((f->flags & TEP_FIELD_IS_SIGNED) && f->size > 0 && f->size < 8 &&
	    (v & (1ull << (f->size * 8 - 1))))
		v |= ~0ull << (f->size * 8);
	*val = v;
	return true;
}
