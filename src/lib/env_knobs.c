// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "env_knobs.h"

enum knob_kind { KNOB_BOOL, KNOB_PATH, KNOB_WORD, KNOB_UINT, KNOB_NAMED };

static const struct {
	const char *name;
	enum knob_kind kind;
	const char *words, *what;
} knobs[] = {
#define KNOB_ROW(name, kind, words, what) { #name, KNOB_##kind, words, what },
	VMEXIT_ENV_KNOBS(KNOB_ROW)
#undef KNOB_ROW
};

static bool is_uint(const char *v)
{
	char *end;

	if (*v == '-' || *v == '+')
		return false;
	errno = 0;
	strtoul(v, &end, 0);
	return !errno && end != v && !*end;
}

/* v is one of the |-separated words. */
static bool is_word(const char *words, const char *v)
{
	size_t n = strlen(words), len = strlen(v);

	for (const char *w = words; w < words + n;) {
		size_t wl = strcspn(w, "|");

		if (wl == len && !strncmp(w, v, len))
			return true;
		w += wl + 1;
	}
	return false;
}

static bool is_named(const char *v)
{
	const char *colon = strchr(v, ':');
	char *end;

	if (!colon || colon == v)
		return false;
	errno = 0;
	strtoll(colon + 1, &end, 0);
	return !errno && end != colon + 1 && !*end;
}

static const char *const expect[] = {
	[KNOB_BOOL] = "0 or 1",
	[KNOB_PATH] = "a path",
	[KNOB_UINT] = "an unsigned number",
	[KNOB_NAMED] = "NAME:INTEGER",
};

int env_knobs_check(char *err, size_t errlen)
{
	for (size_t i = 0; i < sizeof(knobs) / sizeof(knobs[0]); i++) {
		const char *v = getenv(knobs[i].name);
		bool ok;

		if (!v || !*v)
			continue;
		switch (knobs[i].kind) {
		case KNOB_BOOL:
			ok = !strcmp(v, "0") || !strcmp(v, "1");
			break;
		case KNOB_WORD:
			ok = is_word(knobs[i].words, v);
			break;
		case KNOB_UINT:
			ok = is_uint(v);
			break;
		case KNOB_NAMED:
			ok = is_named(v);
			break;
		default:
			ok = true;
		}
		if (ok)
			continue;
		snprintf(err, errlen, "%s=%s: takes %s (%s); set it so or unset it",
			 knobs[i].name, v,
			 knobs[i].kind == KNOB_WORD ? knobs[i].words : expect[knobs[i].kind],
			 knobs[i].what);
		return -1;
	}
	return 0;
}

bool env_knob_on(const char *name)
{
	const char *v = getenv(name);

	return v && !strcmp(v, "1");
}

bool env_knob_is(const char *name, const char *word)
{
	const char *v = getenv(name);

	return v && !strcmp(v, word);
}
