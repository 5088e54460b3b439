// SPDX-License-Identifier: GPL-2.0
/*
 * JSON and CSV escaping: exact strings worked out by hand, then every case round-tripped
 * through python3's json and csv modules, whose decoders are the independent oracle (for bad
 * UTF-8, bytes.decode("utf-8", "replace") gives the expected U+FFFD placement).
 */
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "text_escape.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

static char *json_of(const char *s)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);

	if (!f)
		return NULL;
	json_put_str(f, s);
	fclose(f);
	return buf;
}

static char *csv_of(const char *s)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);

	if (!f)
		return NULL;
	csv_put_field(f, s);
	fclose(f);
	return buf;
}

/* json_esc() into a buffer, NUL-terminated: freed by the caller. */
static char *json_esc_of(const char *s)
{
	char *buf = malloc(JSON_ESC_MAX(s ? strlen(s) : 0) + 1);

	if (buf)
		*json_esc(buf, s) = '\0';
	return buf;
}

/* Both ways of escaping give the same text. */
#define JSON_IS(in, want)						\
	do {								\
		char *__j = json_of(in), *__e = json_esc_of(in);	\
		CHECK_STR(__j, want);					\
		CHECK_STR(__e, want);					\
		free(__j);						\
		free(__e);						\
	} while (0)

#define CSV_IS(in, want)						\
	do {								\
		char *__c = csv_of(in);					\
		CHECK_STR(__c, want);					\
		free(__c);						\
	} while (0)

static void test_json_exact(void)
{
	JSON_IS(NULL, "null");
	JSON_IS("", "\"\"");
	JSON_IS("plain", "\"plain\"");
	JSON_IS("a\"b\\c/d", "\"a\\\"b\\\\c/d\"");
	JSON_IS("\n\r\t\b\f", "\"\\n\\r\\t\\b\\f\"");
	JSON_IS("\x01\x1f x", "\"\\u0001\\u001f x\"");
	JSON_IS("\x7f", "\"\x7f\"");			/* DEL needs no escape in JSON */
	JSON_IS("caf\xc3\xa9", "\"caf\xc3\xa9\"");
	JSON_IS("\xe2\x82\xac", "\"\xe2\x82\xac\"");	/* U+20AC */
	JSON_IS("\xf0\x9f\x98\x80", "\"\xf0\x9f\x98\x80\"");	/* U+1F600 */
	JSON_IS("\xef\xbf\xbf", "\"\xef\xbf\xbf\"");	/* U+FFFF is a valid scalar */
	JSON_IS("\xf4\x8f\xbf\xbf", "\"\xf4\x8f\xbf\xbf\"");	/* U+10FFFF, the last one */
	JSON_IS("\xff", "\"\\ufffd\"");
	JSON_IS("a\x80z", "\"a\\ufffdz\"");		/* stray continuation byte */
	JSON_IS("\xc0\xaf", "\"\\ufffd\\ufffd\"");	/* overlong '/': C0 is never valid */
	JSON_IS("\xe0\x80\xaf", "\"\\ufffd\\ufffd\\ufffd\"");	/* overlong 3-byte */
	JSON_IS("\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\"");	/* surrogate U+D800 */
	JSON_IS("\xf4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");	/* > U+10FFFF */
	JSON_IS("\xe2\x82x", "\"\\ufffdx\"");		/* truncated: one U+FFFD for E2 82 */
	JSON_IS("\xf0\x9f\x98", "\"\\ufffd\"");		/* truncated by the string's end */
	JSON_IS("\xc3", "\"\\ufffd\"");
}

/*
 * json_put_str() escapes long strings in pieces of 256 bytes: sequences that straddle a piece
 * boundary, valid or not, come out as in one piece. The worst case fills json_esc()'s room.
 */
static void test_json_long(void)
{
	char in[1024], want[2048], *p;

	for (int off = 248; off <= 260; off++) {
		memset(in, 'a', off);
		strcpy(in + off, "\xe2\x82\xac\xf0\x9f\x98z\"\x01");
		memset(want, 'a', off + 1);
		want[0] = '"';
		strcpy(want + off + 1, "\xe2\x82\xac\\ufffdz\\\"\\u0001\"");
		JSON_IS(in, want);
	}
	/* Every byte escaped to 6, across a piece boundary: JSON_ESC_MAX() room and no more. */
	memset(in, '\x1f', 300);
	in[300] = '\0';
	p = want;
	*p++ = '"';
	for (int i = 0; i < 300; i++)
		p = stpcpy(p, "\\u001f");
	strcpy(p, "\"");
	JSON_IS(in, want);
	CHECK_EQ_U64(strlen(want), JSON_ESC_MAX(300) - 2);
}

static void test_csv_exact(void)
{
	CSV_IS(NULL, "");
	CSV_IS("", "");
	CSV_IS("plain", "plain");
	CSV_IS("in side", "in side");
	CSV_IS("a,b", "\"a,b\"");
	CSV_IS("say \"hi\"", "\"say \"\"hi\"\"\"");
	CSV_IS("\"", "\"\"\"\"");
	CSV_IS("line\nbreak", "\"line\nbreak\"");
	CSV_IS("cr\r", "\"cr\r\"");
	CSV_IS(" lead", "\" lead\"");
	CSV_IS("trail ", "\"trail \"");
	CSV_IS("\ttab", "\"\ttab\"");
	CSV_IS("caf\xc3\xa9", "caf\xc3\xa9");
}

/* Inputs for the python round trips: awkward for one format or the other. */
static const char *const samples[] = {
	"", "plain", "vm-01", "guest=x,debug-threads=on", "a\"b\\c", "\n\r\t\b\f\v\x01\x1b\x1f",
	"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "\xff\xfe", "a\x80z", "\xc0\xaf",
	"\xe0\x80\xaf",
	"\xed\xa0\x80\xed\xbf\xbf", "\xf4\x90\x80\x80", "\xe2\x82x", "\xf0\x9f\x98", "\xc3",
	"\xf8\x88\x80\x80\x80", " lead", "trail ", "a,b", "\"quoted\"", "line\nbreak", "\r\n",
	"x\xe2\x82\xacy\xef\xbb\xbfz", "\x7f", "</script>", "\xef\xbf\xbd",
};

static const char json_check_py[] =
	"import json, sys\n"
	"bad = 0\n"
	"for line in open(sys.argv[1], 'rb'):\n"
	"    hexin, out = line.rstrip(b'\\n').split(b'\\t', 1)\n"
	"    want = bytes.fromhex(hexin.decode()).decode('utf-8', 'replace')\n"
	"    text = out.decode('utf-8')\n"          /* raises if we emitted bad UTF-8 */
	"    if any(ord(c) < 0x20 for c in text) or json.loads(text) != want:\n"
	"        print('mismatch:', hexin.decode(), text)\n"
	"        bad += 1\n"
	"print('ok' if not bad else 'bad')\n";

static const char csv_check_py[] =
	"import csv, sys\n"
	"rows = list(csv.reader(open(sys.argv[1], newline='', encoding='latin-1')))\n"
	"want = [bytes.fromhex(h).decode('latin-1') for h in sys.argv[2].split(',')]\n"
	"ok = len(rows) == len(want) and all(r == ['<', w, '>'] for r, w in zip(rows, want))\n"
	"print('ok' if ok else 'bad %r' % rows)\n";

/*
 * Runs python3 script file [arg]; true if it printed "ok". A missing python3 fails the test:
 * tools/install-deps.sh installs it, and the round trips are this test's oracle.
 */
static int run_python(const char *script, const char *file, const char *arg)
{
	char *cmd, out[4096] = "";
	size_t n;
	FILE *p;

	if (system("python3 -c pass >/dev/null 2>&1")) {
		fprintf(stderr, "python3 not found (tools/install-deps.sh): JSON/CSV round trips not run\n");
		return 0;
	}
	/* The script is passed through a file: no shell quoting of its text needed. */
	if (asprintf(&cmd, "python3 %s %s %s", script, file, arg ? arg : "") < 0)
		return 0;
	p = popen(cmd, "r");
	free(cmd);
	if (!p)
		return 0;
	n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = '\0';
	if (pclose(p) || strcmp(out, "ok\n")) {
		fprintf(stderr, "python: %s", out);
		return 0;
	}
	return 1;
}

static char *write_tmp(const char *text, size_t len)
{
	char *path = strdup("/tmp/vmexit-test-escape-XXXXXX");
	int fd = path ? mkstemp(path) : -1;

	if (fd < 0 || write(fd, text, len) != (ssize_t)len) {
		if (fd >= 0) {
			close(fd);
			unlink(path);
		}
		free(path);
		return NULL;
	}
	close(fd);
	return path;
}

static void hex_put(FILE *f, const char *s)
{
	for (; *s; s++)
		fprintf(f, "%02x", (unsigned char)*s);
}

static void test_python(void)
{
	char *data = NULL, *hexes = NULL, *data_path, *py_path, *csv_path;
	size_t size = 0, hsize = 0, i;
	FILE *f, *h;

	/* JSON: one "hex<TAB>json" line per sample. */
	f = open_memstream(&data, &size);
	for (i = 0; i < ARRAY_SIZE(samples); i++) {
		hex_put(f, samples[i]);
		fputc('\t', f);
		json_put_str(f, samples[i]);
		fputc('\n', f);
	}
	fclose(f);
	data_path = write_tmp(data, size);
	py_path = write_tmp(json_check_py, strlen(json_check_py));
	CHECK(data_path && py_path);
	if (data_path && py_path)
		CHECK(run_python(py_path, data_path, NULL));
	if (data_path)
		unlink(data_path);
	if (py_path)
		unlink(py_path);
	free(data_path);
	free(py_path);
	free(data);

	/* CSV: one "<,FIELD,>" row per sample, CRLF-terminated as RFC 4180 has it. */
	data = NULL;
	f = open_memstream(&data, &size);
	h = open_memstream(&hexes, &hsize);
	for (i = 0; i < ARRAY_SIZE(samples); i++) {
		fputs("<,", f);
		csv_put_field(f, samples[i]);
		fputs(",>\r\n", f);
		if (i)
			fputc(',', h);
		hex_put(h, samples[i]);
	}
	fclose(f);
	fclose(h);
	csv_path = write_tmp(data, size);
	py_path = write_tmp(csv_check_py, strlen(csv_check_py));
	CHECK(csv_path && py_path);
	if (csv_path && py_path)
		CHECK(run_python(py_path, csv_path, hexes));
	if (csv_path)
		unlink(csv_path);
	if (py_path)
		unlink(py_path);
	free(csv_path);
	free(py_path);
	free(data);
	free(hexes);
}

#define FIT(s, width, prec, want)					\
	do {								\
		char __b[TEXT_NAME_MAX];				\
		CHECK_STR(text_fit(__b, sizeof(__b), s, width, prec), want); \
		CHECK_EQ_U64(text_cols(__b), text_cols(want));		\
	} while (0)

/* The human-readable rule (text_escape.h): exact strings worked out by hand. */
static void test_text_exact(void)
{
	char small[8];

	/* Printable ASCII as it is, backslashes and quotes too: what printf("%-16.16s") does. */
	FIT("web01", 16, 16, "web01           ");
	FIT("a\\b \"q\" <b>x", 0, -1, "a\\b \"q\" <b>x");
	FIT("abcdefghijklmnopqrstuvwxyz", 16, 16, "abcdefghijklmnop");
	FIT("", 3, -1, "   ");
	FIT(NULL, 0, -1, "");
	/* Nothing a name holds can start a line or reach the terminal as a control. */
	FIT("we ird \"na\\me\"\n\f\xfe; <b>x", 0, -1,
	    "we ird \"na\\me\"\\n\\x0c\\xfe; <b>x");
	FIT("a\r\tb\x1b[2Jc\x7f", 0, -1, "a\\r\\tb\\x1b[2Jc\\x7f");
	/* C1 controls (U+0085 NEL, U+009B CSI) are controls too, byte by byte. */
	FIT("x\xc2\x85y\xc2\x9b", 0, -1, "x\\xc2\\x85y\\xc2\\x9b");
	/* Ill-formed UTF-8: overlong, surrogate, truncated, stray continuation. */
	FIT("\xc0\xaf\xed\xa0\x80\xe2\x82", 0, -1,
	    "\\xc0\\xaf\\xed\\xa0\\x80\\xe2\\x82");
	FIT("\x80z", 0, -1, "\\x80z");
	/* Well-formed UTF-8 as it is; U+00A0 is the first code point after the C1 block. */
	FIT("g\xc3\xa4st\xc2\xa0", 0, -1, "g\xc3\xa4st\xc2\xa0");
	/* Cut by characters, not bytes: 16 characters, 23 bytes, 16 columns. */
	FIT("g\xc3\xa4st-\xc3\xbcn\xc3\xaf\xc3\xa7\xc3\xb6" "d\xc3\xa9-sehr-lang", 16, 16,
	    "g\xc3\xa4st-\xc3\xbcn\xc3\xaf\xc3\xa7\xc3\xb6" "d\xc3\xa9-seh");
	CHECK_EQ_U64(text_cols("g\xc3\xa4st-\xc3\xbcn\xc3\xaf\xc3\xa7\xc3\xb6" "d\xc3\xa9-seh"),
		     16);
	FIT("\xc3\xa4", 4, 4, "\xc3\xa4   ");
	/* Wide characters take two columns; one that would overflow stays out whole. */
	FIT("\xe6\x97\xa5\xe6\x9c\xac", 5, 5, "\xe6\x97\xa5\xe6\x9c\xac ");
	FIT("\xe6\x97\xa5\xe6\x9c\xac", 3, 3, "\xe6\x97\xa5 ");
	CHECK_EQ_U64(text_cols("\xe6\x97\xa5"), 2);
	/* Emoji, and a combining mark on the letter before it. */
	CHECK_EQ_U64(text_cols("\xf0\x9f\x98\x80"), 2);
	CHECK_EQ_U64(text_cols("e\xcc\x81"), 1);
	/* An escape is never cut: it shows whole or not at all. */
	FIT("ab\n", 3, 3, "ab ");
	FIT("ab\x01", 5, 5, "ab   ");
	FIT("ab\x01", 6, 6, "ab\\x01");
	/* A small buffer: the whole characters that fit, and the NUL. */
	CHECK_STR(text_fit(small, sizeof(small), "abc\x1b\xc3\xa4", 0, -1), "abc\\x1b");
	CHECK_STR(text_fit(small, sizeof(small), "\xc3\xa4\xc3\xa4\xc3\xa4\xc3\xa4", 0, -1),
		  "\xc3\xa4\xc3\xa4\xc3\xa4");
	CHECK_STR(text_fit(small, sizeof(small), "ab", 20, -1), "ab     ");
	/* The output is clean text: escaping it again changes nothing. */
	FIT("we ird \\n\\x0c\\xfe \xc3\xa4", 0, -1, "we ird \\n\\x0c\\xfe \xc3\xa4");
	/* The longest name a record file keeps, every byte escaped, fits TEXT_NAME_MAX. */
	{
		char name[256], b[TEXT_NAME_MAX];

		memset(name, 0x01, 255);
		name[255] = 0;
		CHECK_EQ_U64(strlen(text_fit(b, sizeof(b), name, 0, -1)), 4 * 255);
	}
}

/* Names are cut at a character: never a lead byte without its continuation bytes. */
static void test_utf8_copy(void)
{
	char b3[3], b4[4], b5[5], b64[64], one[1], name[84], esc[TEXT_NAME_MAX];

	CHECK_STR(utf8_copy(b3, sizeof(b3), "g\xc3\xa4st"), "g");
	CHECK_STR(utf8_copy(b4, sizeof(b4), "g\xc3\xa4st"), "g\xc3\xa4");
	CHECK_STR(utf8_copy(b4, sizeof(b4), "abc"), "abc");
	CHECK_STR(utf8_copy(one, sizeof(one), "abc"), "");
	/* A 4-byte emoji whole or not at all; a 3-byte character likewise. */
	CHECK_STR(utf8_copy(b5, sizeof(b5), "a\xf0\x9f\x98\x80"), "a");
	CHECK_STR(utf8_copy(b5, sizeof(b5), "\xf0\x9f\x98\x80z"), "\xf0\x9f\x98\x80");
	CHECK_STR(utf8_copy(b5, sizeof(b5), "ab\xe6\x97\xa5"), "ab");
	/* Bytes that are no character (shown as \xHH) are cut between any two of them. */
	CHECK_STR(utf8_copy(b4, sizeof(b4), "ab\xff\xfe"), "ab\xff");
	CHECK_STR(utf8_copy(b4, sizeof(b4), "a\x80\x80\x80"), "a\x80\x80");
	/* The name cache's 64 bytes: "x" and 40 two-byte characters keep 31 of them (63 bytes);
	 * "xy" and 40 keep 30 (62 bytes), not half of the 31st. */
	strcpy(name, "x");
	for (int i = 0; i < 40; i++)
		strcat(name, "\xc3\xa9");
	CHECK_EQ_U64(strlen(utf8_copy(b64, sizeof(b64), name)), 63);
	CHECK(!strncmp(b64, name, 63));
	name[0] = 'y';
	memmove(name + 1, name, strlen(name) + 1);
	name[0] = 'x';
	CHECK_EQ_U64(strlen(utf8_copy(b64, sizeof(b64), name)), 62);
	CHECK(!strncmp(b64, name, 62));
	/* Shown as it is: no \xHH of half a character at the end. */
	CHECK(!strstr(text_esc(esc, b64), "\\x"));
}

int main(void)
{
	test_json_exact();
	test_json_long();
	test_csv_exact();
	test_python();
	test_text_exact();
	test_utf8_copy();
	CHECK_DONE("text_escape");
}
