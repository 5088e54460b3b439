// SPDX-License-Identifier: GPL-2.0
/* symbol_map and guest_symbols: System.map and kallsyms lines, lookups, and bad files. */
#include <stdlib.h>
#include <unistd.h>
#include "check.h"
#include "guest_symbols.h"
#include "symbol_map.h"

static struct symbol_map *from_text(const char *text, char *err, size_t errlen)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	struct symbol_map *m = symbol_map_read(f, "t.map", err, errlen);

	fclose(f);
	return m;
}

/* A System.map excerpt, out of order, with data symbols that must not name code. */
static const char system_map[] =
	"ffffffff81000000 T _text\n"
	"ffffffff81002000 t do_one\n"
	"ffffffff82000000 D some_data\n"
	"ffffffff81001000 T startup_64\n"
	"ffffffff81003000 W weak_fn\n"
	"0000000000000000 A irq_stack_union\n";

static void test_lookup(void)
{
	char err[256] = "", b[128];
	struct symbol_map *m = from_text(system_map, err, sizeof(err));

	CHECK(m);
	if (!m)
		return;
	CHECK_EQ_U64(symbol_map_size(m), 4);
	CHECK(symbol_map_lookup(m, 0xffffffff81001000, b, sizeof(b)));
	CHECK_STR(b, "startup_64");
	CHECK(symbol_map_lookup(m, 0xffffffff81002abc, b, sizeof(b)));
	CHECK_STR(b, "do_one+0xabc");
	/* Past the last code symbol (the data one is not code): still weak_fn, nearby. */
	CHECK(symbol_map_lookup(m, 0xffffffff81003010, b, sizeof(b)));
	CHECK_STR(b, "weak_fn+0x10");
	/* Below the first, and far past the last: raw addresses. */
	CHECK(!symbol_map_lookup(m, 0xffffffff80000000, b, sizeof(b)));
	CHECK_STR(b, "0xffffffff80000000");
	CHECK(!symbol_map_lookup(m, 0xffffffff90000000, b, sizeof(b)));
	CHECK_STR(b, "0xffffffff90000000");
	CHECK(!symbol_map_hidden(m));
	symbol_map_free(m);
}

/* kallsyms: modules in brackets, left out of the name; hidden addresses are told. */
static void test_kallsyms(void)
{
	char err[256] = "", b[128];
	struct symbol_map *m = from_text("ffffffffc0a01000 t vcpu_run\t[kvm]\n"
					 "ffffffffc0a00000 T kvm_init\t[kvm]\n", err, sizeof(err));

	CHECK(m && symbol_map_lookup(m, 0xffffffffc0a01004, b, sizeof(b)));
	CHECK_STR(b, "vcpu_run+0x4");
	symbol_map_free(m);
	m = from_text("0000000000000000 T _text\n0000000000000000 t x\n", err, sizeof(err));
	CHECK(m && symbol_map_hidden(m));
	CHECK(m && !symbol_map_lookup(m, 0x10, b, sizeof(b)));
	symbol_map_free(m);
}

/* Each bad line is named by line and column, and nothing is returned. */
static void test_bad(void)
{
	static const struct {
		const char *text, *err;
	} bad[] = {
		{ "ffffffff81000000 T _text\nhello world\n",
		  "t.map:2:1: expected a hexadecimal address" },
		{ "ffffffff81000000T _text\n", "t.map:1:17: expected a space after the address" },
		{ "ffffffff81000000 Tx _text\n", "t.map:1:18: expected a one-letter symbol type and "
		  "a name (System.map or kallsyms format)" },
		{ "ffffffff81000000 T\n", "t.map:1:18: expected a one-letter symbol type and a "
		  "name (System.map or kallsyms format)" },
		{ "ffffffff81000000 T   \n", "t.map:1:22: expected a symbol name" },
		{ "1ffffffff81000000 T _text\n", "t.map:1:17: address longer than 64 bits" },
		{ "ffffffff81000000 T _text junk\n",
		  "t.map:1:26: expected the end of the line or a [module]" },
		{ "ffffffff82000000 D data_only\n", "t.map: no code symbols (expected System.map "
		  "or a copy of /proc/kallsyms)" },
		{ "", "t.map: no code symbols (expected System.map or a copy of /proc/kallsyms)" },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char err[256] = "";
		struct symbol_map *m = from_text(bad[i].text, err, sizeof(err));

		CHECK(!m);
		CHECK_STR(err, bad[i].err);
		symbol_map_free(m);
	}
}

static void test_guests(void)
{
	char path[] = "/tmp/test_symbol_mapXXXXXX", err[256] = "", b[256], absent[64];
	struct guest_symbols g = {};
	int fd = mkstemp(path);
	FILE *notes;
	char *text = NULL;
	size_t len = 0;

	CHECK(fd >= 0 && write(fd, system_map, strlen(system_map)) == (ssize_t)strlen(system_map));
	close(fd);
	snprintf(b, sizeof(b), "web01=%s", path);
	CHECK(!guest_symbols_add(&g, b, err, sizeof(err)));
	CHECK(guest_symbols_lookup(&g, "web01", 0xffffffff81002010, b, sizeof(b)));
	CHECK_STR(b, "do_one+0x10");
	/* Another guest has no table: raw addresses. */
	CHECK(!guest_symbols_lookup(&g, "db01", 0xffffffff81002010, b, sizeof(b)));
	CHECK_STR(b, "0xffffffff81002010");
	CHECK(guest_symbols_add(&g, "web01", err, sizeof(err)));
	CHECK_STR(err, "--guest-symbols 'web01': expected GUEST=FILE (a guest name and its "
		  "System.map or a copy of its /proc/kallsyms)");
	CHECK(guest_symbols_add(&g, "x=/nonexistent/System.map", err, sizeof(err)));
	CHECK_STR(err, "/nonexistent/System.map: No such file or directory");
	guest_symbols_free(&g);
	/*
	 * No process runs a guest of this name: one note naming it. A name of this test's own
	 * (its pid): hosts that run make test often run guests, web01 among them.
	 */
	snprintf(absent, sizeof(absent), "vmexit-test-absent-%d", (int)getpid());
	snprintf(b, sizeof(b), "%s=%s", absent, path);
	CHECK(!guest_symbols_add(&g, b, err, sizeof(err)));
	notes = open_memstream(&text, &len);
	CHECK_EQ_U64(guest_symbols_note_absent(&g, notes), 1);
	fclose(notes);
	snprintf(b, sizeof(b), "vmexit: note: --guest-symbols %s: no running guest has this name "
		 "(its addresses are named if it starts)\n", absent);
	CHECK_STR(text, b);
	free(text);
	guest_symbols_free(&g);
	unlink(path);
}

int main(void)
{
	test_lookup();
	test_kallsyms();
	test_bad();
	test_guests();
	CHECK_DONE("symbol_map");
}
