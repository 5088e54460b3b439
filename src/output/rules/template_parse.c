// SPDX-License-Identifier: GPL-2.0
/*
 * Compiles a rules file (docs/formats.md is the language, compatible with the 2008
 * kvmtrace_format "formats" files; keep the two in step) into template_rules.h's form:
 * literal spans and field operations with flags, width, precision and conversion parsed once.
 * The file is user input: errors name the file, line and column, and say what to write.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "array_grow.h"
#include "reasons.h"
#include "template.h"
#include "template_rules.h"

struct parser {
	const char *file;
	int line;
	const char *lstart;	/* start of the current line, for columns */
	char *err;
	size_t errlen;
	struct tmpl_rules *r;
};

__attribute__((format(printf, 3, 4)))
static int perr(struct parser *p, const char *at, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!p->errlen)
		return -EINVAL;
	n = snprintf(p->err, p->errlen, "%s:%d:%d: ", p->file, p->line, (int)(at - p->lstart) + 1);
	if (n >= 0 && (size_t)n < p->errlen) {
		va_start(ap, fmt);
		vsnprintf(p->err + n, p->errlen - n, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* Levenshtein distance, capped: only used to suggest field names in errors. */
static int edit_distance(const char *a, size_t la, const char *b)
{
	size_t lb = strlen(b), i, j;
	int row[32], prev, tmp;

	if (la >= ARRAY_SIZE(row) || lb >= ARRAY_SIZE(row))
		return 99;
	for (j = 0; j <= lb; j++)
		row[j] = j;
	for (i = 1; i <= la; i++) {
		prev = row[0];
		row[0] = i;
		for (j = 1; j <= lb; j++) {
			int best = prev + (tolower((unsigned char)a[i - 1]) != b[j - 1]);

			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			tmp = row[j];
			row[j] = best;
			prev = tmp;
		}
	}
	return row[lb];
}

static int unknown_field(struct parser *p, const char *at, const char *name, size_t n)
{
	char list[1024];
	size_t i, used = 0;
	bool close = false;

	list[0] = '\0';
	/* Close names first ("did you mean"); with none close, every valid name. */
	for (i = 0; i < tmpl_nr_fields; i++) {
		int d = edit_distance(name, n, tmpl_fields[i].name);

		/* Short names are too alike for two edits to mean anything. */
		if (d <= (n <= 4 ? 1 : 2) && (size_t)d < n && used < sizeof(list)) {
			used += snprintf(list + used, sizeof(list) - used, "%s'%s'",
					 close ? " or " : "", tmpl_fields[i].name);
			close = true;
		}
	}
	if (close)
		return perr(p, at, "unknown field '%.*s' (did you mean %s?)",
			    (int)(n > 64 ? 64 : n), name, list);
	for (i = 0; i < tmpl_nr_fields && used < sizeof(list); i++)
		used += snprintf(list + used, sizeof(list) - used, "%s%s", i ? " " : "",
				 tmpl_fields[i].name);
	return perr(p, at, "unknown field '%.*s' (valid: %s)", (int)(n > 64 ? 64 : n), name, list);
}

static int push_op(struct rule *ru, int *cap, const struct op *op)
{
	if (array_reserve(ru->ops, ru->nops, *cap, 8))
		return -ENOMEM;
	ru->ops[ru->nops++] = *op;
	return 0;
}

/* Appends one literal byte, merging with a preceding literal op. */
static int push_lit(struct rule *ru, int *cap, size_t *litlen, char c)
{
	struct op op = { .field = OP_LITERAL, .off = *litlen, .len = 1 };

	ru->lit[(*litlen)++] = c;
	if (ru->nops && ru->ops[ru->nops - 1].field == OP_LITERAL) {
		ru->ops[ru->nops - 1].len++;
		return 0;
	}
	return push_op(ru, cap, &op);
}

#define CONV_HELP	"(use d, u, x, X, o, f or s)"

/* Reads a width/precision number; rejects what no terminal could want. */
static int parse_num(struct parser *p, const char **s, const char *end, const char *what,
		     int *val)
{
	const char *start = *s;
	long v = 0;

	while (*s < end && isdigit((unsigned char)**s)) {
		v = v * 10 + (**s - '0');
		if (v > FMT_SPEC_WIDTH_MAX)
			return perr(p, start, "%s too large (at most %d)", what,
				    FMT_SPEC_WIDTH_MAX);
		(*s)++;
	}
	*val = v;
	return 0;
}

/* "(name)": the field it names; *c is left on the ')'. */
static int parse_field_name(struct parser *p, const char *pct, const char **c, const char *end,
			    const struct field_def **f)
{
	const char *name = pct + 2;
	size_t i, n;

	for (*c = name; *c < end && **c != ')'; (*c)++)
		;
	if (*c >= end)
		return perr(p, pct, "unterminated '%%(' (missing ')')");
	n = *c - name;
	if (!n)
		return perr(p, pct, "empty field name in '%%()'");
	for (i = 0; i < tmpl_nr_fields; i++) {
		if (strlen(tmpl_fields[i].name) == n && !memcmp(tmpl_fields[i].name, name, n)) {
			*f = &tmpl_fields[i];
			return 0;
		}
	}
	return unknown_field(p, name, name, n);
}

/* Flags, width, precision and an ignored length modifier; *c is left on the conversion. */
static int parse_spec(struct parser *p, const char **c, const char *end, struct fmt_spec *spec)
{
	int v, err;

	for (; *c < end; (*c)++) {
		if (**c == '-')
			spec->flags |= FMT_MINUS;
		else if (**c == '0')
			spec->flags |= FMT_ZERO;
		else if (**c == '+')
			spec->flags |= FMT_PLUS;
		else if (**c == ' ')
			spec->flags |= FMT_SPACE;
		else if (**c == '#')
			spec->flags |= FMT_ALT;
		else
			break;
	}
	if (*c < end && **c == '*')
		return perr(p, *c, "'*' width is not supported: give a number");
	err = parse_num(p, c, end, "width", &v);
	if (err)
		return err;
	spec->width = v;
	if (*c < end && **c == '.') {
		(*c)++;
		if (*c < end && **c == '*')
			return perr(p, *c, "'*' precision is not supported: give a number");
		err = parse_num(p, c, end, "precision", &v);
		if (err)
			return err;
		spec->prec = v;
	}
	/* Python's % accepts and ignores a length modifier; so do we, for its files' sake. */
	if (*c < end && (**c == 'h' || **c == 'l' || **c == 'L'))
		(*c)++;
	return 0;
}

/* The conversion letter at c, and whether field f can be shown that way. */
static int parse_conv(struct parser *p, const char *c, const struct field_def *f,
		      struct fmt_spec *spec)
{
	switch (*c) {
	case 'd':
	case 'i':
		spec->conv = 'd';
		break;
	case 'u':
	case 'x':
	case 'X':
	case 'o':
	case 'f':
	case 's':
		spec->conv = *c;
		break;
	default:
		if (isprint((unsigned char)*c))
			return perr(p, c, "bad conversion '%c' for field '%s' " CONV_HELP, *c,
				    f->name);
		return perr(p, c, "bad conversion byte 0x%02x for field '%s' " CONV_HELP,
			    (unsigned char)*c, f->name);
	}
	if (f->kind == FK_STR && spec->conv != 's')
		return perr(p, c, "field '%s' is text: use %%(%s)s", f->name, f->name);
	return 0;
}

/* Compiles one %(name)FMT field; *s points just past the '%'. */
static int parse_field(struct parser *p, struct rule *ru, int *cap, const char **s,
		       const char *end)
{
	const char *pct = *s - 1, *c;
	const struct field_def *f = NULL;
	struct op op = { .spec.prec = -1 };
	int err;

	err = parse_field_name(p, pct, &c, end, &f);
	if (err)
		return err;
	op.field = f->id;
	op.word = f->word;
	op.fidx = f - tmpl_fields;
	c++;
	err = parse_spec(p, &c, end, &op.spec);
	if (err)
		return err;
	if (c >= end)
		return perr(p, pct, "missing conversion after '%%(%s)' " CONV_HELP, f->name);
	err = parse_conv(p, c, f, &op.spec);
	if (err)
		return err;
	if (op.field == F_RELTSC)
		p->r->need_reltsc = true;
	*s = c + 1;
	return push_op(ru, cap, &op);
}

/* Compiles the template text [s, end) into ru. */
static int parse_template(struct parser *p, struct rule *ru, const char *s, const char *end)
{
	size_t litlen = 0;
	int cap = 0, err = 0;

	/* Unescaping only shrinks the text; +1 for the line's newline. */
	ru->lit = malloc(end - s + 1);
	if (!ru->lit)
		return -ENOMEM;
	while (s < end && !err) {
		if (*s == '%') {
			if (s + 1 < end && s[1] == '%') {
				err = push_lit(ru, &cap, &litlen, '%');
				s += 2;
			} else if (s + 1 < end && s[1] == '(') {
				s++;
				err = parse_field(p, ru, &cap, &s, end);
			} else {
				err = perr(p, s, "'%%' must start a field '%%(name)d' or be "
					   "written '%%%%'");
			}
		} else if (*s == '\\') {
			char c;

			if (s + 1 >= end)
				return perr(p, s, "'\\' at end of line (write '\\\\' for a "
					    "backslash)");
			switch (s[1]) {
			case 'n':  c = '\n'; break;
			case 't':  c = '\t'; break;
			case '\\': c = '\\'; break;
			default:
				return perr(p, s, "unknown escape '\\%c' (use \\n, \\t or \\\\)",
					    isprint((unsigned char)s[1]) ? s[1] : '?');
			}
			err = push_lit(ru, &cap, &litlen, c);
			s += 2;
		} else {
			err = push_lit(ru, &cap, &litlen, *s++);
		}
	}
	if (!err)
		err = push_lit(ru, &cap, &litlen, '\n');
	return err;
}

static int bind_reason(struct parser *p, const char *at, const char *item, __u32 isa,
		       __u32 reason, __u8 level, int rule)
{
	struct tmpl_rules *r = p->r;
	__u16 *slot;
	__u8 *lvl;
	char name[REASON_STR_MAX];
	bool added;

	if (isa >= NR_ISA)
		return 0;
	if (reason < DIRECT_REASONS) {
		slot = &r->direct[isa][reason];
		lvl = &r->level[isa][reason];
	} else {
		struct reason_id id = { .isa = isa, .reason = reason };
		struct big_sel *b = big_sels_get(&r->big, &id, &added);

		if (!b)
			return -ENOMEM;
		slot = &b->rule;
		lvl = &b->level;
	}
	/* An ISA-qualified selector overrides a bare one; two at the same level conflict. */
	if (*slot && *lvl == level && *slot - 1 != rule)
		return perr(p, at, "duplicate selector '%s': %s:%s already has the rule on line %d",
			    item, isa_name(isa), reason_str(isa, reason, name, sizeof(name)),
			    r->rules[*slot - 1].line);
	if (*lvl > level)
		return 0;
	*slot = rule + 1;
	*lvl = level;
	return 0;
}

/* Strict decimal / 0x hex u32; *hex8 says it was written as kvmtrace does, 0x + 8 digits. */
static bool parse_u32_strict(const char *s, __u32 *v, bool *hex8)
{
	unsigned long long x = 0;
	const char *d = s;
	int base = 10;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		d = s + 2;
	}
	if (!*d)
		return false;
	for (; *d; d++) {
		int c = tolower((unsigned char)*d), dv;

		if (isdigit(c))
			dv = c - '0';
		else if (base == 16 && c >= 'a' && c <= 'f')
			dv = c - 'a' + 10;
		else
			return false;
		x = x * base + dv;
		if (x > 0xffffffffull)
			return false;
	}
	*v = x;
	*hex8 = base == 16 && strlen(s) == 10;
	return true;
}

static int bind_once(struct parser *p, const char *at, const char *item, int *line_slot,
		     __u16 *rule_slot, int rule)
{
	if (*line_slot && *line_slot != p->line)
		return perr(p, at, "duplicate selector '%s': already selected on line %d", item,
			    *line_slot);
	*line_slot = p->line;
	if (rule_slot)
		*rule_slot = rule + 1;
	return 0;
}

/* Binds one comma-separated selector item (NUL-terminated copy) to rule. */
static int parse_item(struct parser *p, const char *at, const char *item, int rule)
{
	struct tmpl_rules *r = p->r;
	struct reason_sel sel[16];
	char rerr[256];
	bool hex8;
	__u32 v;
	int i, n, err;

	if (!strcasecmp(item, "default"))
		return bind_once(p, at, item, &r->def_line, &r->def, rule);
	if (!strncasecmp(item, "type:", 5)) {
		for (i = 1; i < NR_EV_TYPES; i++)
			if (!strcasecmp(item + 5, tmpl_type_names[i]))
				return bind_once(p, at, item, &r->type_line[i], &r->type_rule[i],
						 rule);
		return perr(p, at, "unknown event type in '%s' (use type:exit, type:user_exit, "
			    "type:tsc_offset or type:kvm_event)", item);
	}
	if (!strncasecmp(item, "kvm:", 4)) {
		i = kvm_event_lookup(item + 4);
		if (i < 0)
			return perr(p, at, "unknown kvm event in '%s' (use %s)", item,
				    kvm_event_list("kvm:", rerr, sizeof(rerr)));
		return bind_once(p, at, item, &r->kvm_line[i], &r->kvm_rule[i], rule);
	}
	if (parse_u32_strict(item, &v, &hex8)) {
		const struct kvmtrace_id *sd;

		if (v == 0 && hex8)	/* kvmtrace's catch-all rule */
			return bind_once(p, at, item, &r->def_line, &r->def, rule);
		if (v >= 0x10000 && v <= 0x2ffff) {
			sd = kvmtrace_id_find(v);
			if (!sd)
				return perr(p, at, "unknown kvmtrace event id '%s' (known: "
					    "0x00010001-0x00010002, 0x00020001-0x00020013)", item);
			i = kvmtrace_id_index(sd);
			if (sd->id == KVMTRACE_VMEXIT) {
				err = bind_once(p, at, item, &r->type_line[VMEXIT_EV_EXIT],
						&r->type_rule[VMEXIT_EV_EXIT], rule);
				if (err)
					return err;
			}
			return bind_once(p, at, item, &r->kvmtrace_line[i],
					 sd->never || sd->id == KVMTRACE_VMEXIT ?
					 NULL : &r->kvmtrace_class[sd->id & 0xff], rule);
		}
	}
	n = reason_parse_list(item, sel, ARRAY_SIZE(sel), rerr, sizeof(rerr));
	if (n < 0)
		return perr(p, at, "%s", rerr);
	for (i = 0; i < n; i++) {
		err = bind_reason(p, at, item, sel[i].isa, sel[i].reason,
				  strchr(item, ':') ? LVL_QUALIFIED : LVL_BARE, rule);
		if (err)
			return err;
	}
	return 0;
}

static int parse_selector(struct parser *p, const char *s, const char *end, int rule)
{
	char item[128];
	const char *c;
	int err;

	while (s <= end) {
		for (c = s; c < end && *c != ','; c++)
			;
		if (c == s)
			return perr(p, s, "empty item in selector");
		if ((size_t)(c - s) >= sizeof(item))
			return perr(p, s, "selector item too long");
		memcpy(item, s, c - s);
		item[c - s] = '\0';
		err = parse_item(p, s, item, rule);
		if (err)
			return err;
		s = c + 1;
	}
	return 0;
}

static int parse_line(struct parser *p, const char *s, const char *end)
{
	struct tmpl_rules *r = p->r;
	const char *sel, *sel_end;
	struct rule *ru;
	int err;

	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	if (s == end || *s == '#')
		return 0;
	sel = s;
	while (s < end && *s != ' ' && *s != '\t')
		s++;
	sel_end = s;
	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	if (s == end)
		return perr(p, s, "missing template after selector '%.*s'",
			    (int)(sel_end - sel > 64 ? 64 : sel_end - sel), sel);

	if (r->nrules >= TMPL_MAX_RULES)
		return perr(p, sel, "too many rules (at most %d)", TMPL_MAX_RULES);
	if (array_reserve(r->rules, r->nrules, r->cap, 16))
		return -ENOMEM;
	ru = &r->rules[r->nrules++];
	memset(ru, 0, sizeof(*ru));
	ru->line = p->line;
	err = parse_selector(p, sel, sel_end, r->nrules - 1);
	if (err)
		return err;
	return parse_template(p, ru, s, end);
}

void tmpl_rules_free(struct tmpl_rules *r)
{
	int i;

	if (!r)
		return;
	for (i = 0; i < r->nrules; i++) {
		free(r->rules[i].ops);
		free(r->rules[i].lit);
	}
	free(r->rules);
	big_sels_free(&r->big);
	free(r);
}

int tmpl_rules_parse(const char *text, size_t len, const char *filename,
		     struct tmpl_rules **out, char *err, size_t errlen)
{
	struct parser p = { .file = filename ? filename : "<rules>", .err = err,
			    .errlen = errlen };
	const char *s = text, *end = text + len, *eol, *nul;
	int ret = 0;

	*out = NULL;
	if (errlen)
		err[0] = '\0';
	p.r = calloc(1, sizeof(*p.r));
	if (!p.r) {
		snprintf(err, errlen, "%s: out of memory", p.file);
		return -ENOMEM;
	}
	while (s < end && !ret) {
		p.line++;
		p.lstart = s;
		eol = memchr(s, '\n', end - s);
		if (!eol)
			eol = end;
		nul = memchr(s, '\0', eol - s);
		if (nul) {
			ret = perr(&p, nul, "NUL byte in rules text");
			break;
		}
		/* CRLF files: the CR is line ending, not template text. */
		ret = parse_line(&p, s, eol > s && eol[-1] == '\r' ? eol - 1 : eol);
		s = eol + 1;
	}
	if (ret == -ENOMEM)
		snprintf(err, errlen, "%s:%d: out of memory", p.file, p.line);
	if (ret) {
		tmpl_rules_free(p.r);
		return ret;
	}
	*out = p.r;
	return 0;
}

int tmpl_rules_load(const char *path, struct tmpl_rules **out, char *err, size_t errlen)
{
	char *buf = NULL;
	size_t len = 0, cap = 0, n;
	FILE *f;
	int ret;

	*out = NULL;
	f = fopen(path, "r");
	if (!f) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(-ret));
		return ret;
	}
	for (;;) {
		if (len == cap) {
			char *nb;

			cap = cap ? cap * 2 : 4096;
			nb = realloc(buf, cap);
			if (!nb) {
				free(buf);
				fclose(f);
				snprintf(err, errlen, "%s: out of memory", path);
				return -ENOMEM;
			}
			buf = nb;
		}
		n = fread(buf + len, 1, cap - len, f);
		len += n;
		if (n == 0)
			break;
	}
	if (ferror(f)) {
		free(buf);
		fclose(f);
		snprintf(err, errlen, "%s: read error", path);
		return -EIO;
	}
	fclose(f);
	ret = tmpl_rules_parse(buf, len, path, out, err, errlen);
	free(buf);
	return ret;
}

