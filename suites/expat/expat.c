/* SPDX-License-Identifier: MIT */
/*
 * A budget gate on a real third-party library: Debian's libexpat, the XML
 * parser, on a few hundred KiB of generated XML.  Each workload is gated
 * twice:
 *   - on the sim backend (valgrind callgrind): instructions, data reads and
 *     writes and branches, exact budgets recorded by --calibrate;
 *   - on the perf backend: how often the parser called malloc, realloc and
 *     free (uprobes; exact and the same on every CPU, so filed under "any").
 *
 * PMCHECK_EXPAT_EXTRA (a number, default 0) makes the "flat" workload parse
 * that many extra small documents inside its region: the end-to-end gate
 * test uses it to inject a regression of a chosen size without rebuilding.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <expat.h>

#include <pmcheck/harness.h>

#define SIM_EVENTS "instructions:u,L1-dcache-loads,L1-dcache-stores,branches"
#define CALL_EVENTS "calls:malloc,calls:realloc,calls:free"

struct doc {
	char *text;
	size_t len;
};

/* Append printf-style text to a growing buffer; exits the case on OOM. */
static void put(struct pmc_test *t, struct doc *d, size_t *cap, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void put(struct pmc_test *t, struct doc *d, size_t *cap, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(d->text + d->len, *cap - d->len, fmt, ap);
		va_end(ap);
		if (n >= 0 && d->len + (size_t)n < *cap)
			break;
		*cap *= 2;
		d->text = realloc(d->text, *cap);
		if (!d->text)
			pmc_test_error(t, "out of memory building the document");
	}
	d->len += (size_t)n;
}

/*
 * Deterministic documents: `flat` is many small elements with text;
 * `attrs` puts the data in attributes, with character and entity
 * references that expat must decode.  Both are about 300 KiB.
 */
static struct doc make_doc(struct pmc_test *t, int attrs)
{
	struct doc d = { .text = malloc(4096) };
	size_t cap = 4096;
	unsigned i;

	if (!d.text)
		pmc_test_error(t, "out of memory building the document");
	put(t, &d, &cap, "<?xml version=\"1.0\"?>\n<catalog>\n");
	for (i = 0; i < 4000; i++) {
		if (attrs)
			put(t, &d, &cap,
			    "<item id=\"%u\" name=\"part &amp; %u\" price=\"%u.%02u\" note=\"&#x41;&lt;%u&gt;\"/>\n",
			    i, i * 7919u % 10007u, i % 97, i % 100, i);
		else
			put(t, &d, &cap,
			    "<item><id>%u</id><name>part %u</name><price>%u.%02u</price></item>\n", i,
			    i * 7919u % 10007u, i % 97, i % 100);
	}
	put(t, &d, &cap, "</catalog>\n");
	return d;
}

struct counts {
	unsigned long elements, attributes, text_bytes;
};

static void XMLCALL on_start(void *data, const XML_Char *name, const XML_Char **atts)
{
	struct counts *c = data;

	(void)name;
	c->elements++;
	for (; atts[0]; atts += 2)
		c->attributes++;
}

static void XMLCALL on_text(void *data, const XML_Char *s, int len)
{
	(void)s;
	((struct counts *)data)->text_bytes += (unsigned long)len;
}

static XML_Parser new_parser(struct counts *c)
{
	XML_Parser p = XML_ParserCreate(NULL);

	if (p) {
		/* expat seeds its hash tables from getrandom(2) per parser
		 * (CVE-2012-0876), so collisions, and with them the counts,
		 * change from run to run (measured: 80331 instructions between
		 * two runs of "flat").  A gate needs the same work every run:
		 * pin the salt, as any seed in code under a counter gate.
		 * expat 2.8 takes 16 bytes and deprecates the old call. */
#if XML_MAJOR_VERSION > 2 || (XML_MAJOR_VERSION == 2 && XML_MINOR_VERSION >= 8)
		static const uint8_t salt[16] = { 0x5e, 0xed };

		XML_SetHashSalt16Bytes(p, salt);
#else
		XML_SetHashSalt(p, 0x5eed);
#endif
		XML_SetUserData(p, c);
		XML_SetStartElementHandler(p, on_start);
		XML_SetCharacterDataHandler(p, on_text);
	}
	return p;
}

/* Parse the whole document in one call: the parser's allocations are part
 * of the region, since creating the parser is. */
static int parse_whole(const struct doc *d, struct counts *c)
{
	XML_Parser p = new_parser(c);
	int ok;

	if (!p)
		return 0;
	ok = XML_Parse(p, d->text, (int)d->len, 1) == XML_STATUS_OK;
	XML_ParserFree(p);
	return ok;
}

/* Feed the document through expat's own buffers, 4 KiB at a time. */
static int parse_chunked(const struct doc *d, struct counts *c)
{
	XML_Parser p = new_parser(c);
	size_t off = 0;
	int ok = p != NULL;

	while (ok && off < d->len) {
		size_t n = d->len - off < 4096 ? d->len - off : 4096;
		void *buf = XML_GetBuffer(p, (int)n);

		if (!buf) {
			ok = 0;
			break;
		}
		memcpy(buf, d->text + off, n);
		off += n;
		ok = XML_ParseBuffer(p, (int)n, off == d->len) == XML_STATUS_OK;
	}
	if (p)
		XML_ParserFree(p);
	return ok;
}

static unsigned long extra_documents(void)
{
	const char *s = getenv("PMCHECK_EXPAT_EXTRA");

	return s ? strtoul(s, NULL, 10) : 0;
}

/*
 * One workload: a generated document parsed by `parse` inside region
 * "parse", plus `extra` tiny documents (the injected regression).  Returns
 * what the parser reported, for the caller's checks.
 */
static struct counts workload(struct pmc_test *t, int attrs,
			      int (*parse)(const struct doc *, struct counts *), unsigned long extra)
{
	static const char tiny[] = "<a><b>x</b></a>";
	struct doc d = make_doc(t, attrs);
	struct counts c = { 0 }, x = { 0 };
	unsigned long k;
	int ok = 0;

	PMC_REGION(t, "parse") {
		ok = parse(&d, &c);
		for (k = 0; k < extra; k++)
			ok &= parse_whole(&(struct doc){ (char *)tiny, sizeof(tiny) - 1 }, &x);
		PMC_DO_NOT_OPTIMIZE(ok);
	}
	free(d.text);
	PMC_CHECK(t, ok);
	return c;
}

static void flat(struct pmc_test *t)
{
	PMC_CHECK_EQ(t, workload(t, 0, parse_whole, extra_documents()).elements, 1 + 4000 * 4);
}

static void attrs(struct pmc_test *t)
{
	PMC_CHECK_EQ(t, workload(t, 1, parse_whole, 0).attributes, 4000 * 4);
}

static void chunked(struct pmc_test *t)
{
	PMC_CHECK_EQ(t, workload(t, 0, parse_chunked, 0).elements, 1 + 4000 * 4);
}

/* The sim gate: executed work, exact per binary and library build. */
#define SIM_BUDGETS(t)                                                         \
	do {                                                                   \
		PMC_EXPECT_BUDGET(t, "parse", "instructions:u");               \
		PMC_EXPECT_BUDGET(t, "parse", "L1-dcache-loads");              \
		PMC_EXPECT_BUDGET(t, "parse", "L1-dcache-stores");             \
		PMC_EXPECT_BUDGET(t, "parse", "branches");                     \
	} while (0)

/* The perf gate: allocator calls, exact on every CPU. */
#define CALL_BUDGETS(t)                                                        \
	do {                                                                   \
		PMC_EXPECT_BUDGET(t, "parse", "calls:malloc");                 \
		PMC_EXPECT_BUDGET(t, "parse", "calls:realloc");                \
		PMC_EXPECT_BUDGET(t, "parse", "calls:free");                   \
	} while (0)

PMC_TEST(expat, flat, .events = SIM_EVENTS, .backends = PMC_BACKEND_SIM, .reps = 3)
{
	flat(t);
	SIM_BUDGETS(t);
}

PMC_TEST(expat, attrs, .events = SIM_EVENTS, .backends = PMC_BACKEND_SIM, .reps = 3)
{
	attrs(t);
	SIM_BUDGETS(t);
}

PMC_TEST(expat, chunked, .events = SIM_EVENTS, .backends = PMC_BACKEND_SIM, .reps = 3)
{
	chunked(t);
	SIM_BUDGETS(t);
}

PMC_TEST(expat, flat_calls, .events = CALL_EVENTS, .backends = PMC_BACKEND_PERF | PMC_BACKEND_SIM,
	 .requires = PMC_REQ_UPROBE)
{
	flat(t);
	CALL_BUDGETS(t);
}

PMC_TEST(expat, attrs_calls, .events = CALL_EVENTS, .backends = PMC_BACKEND_PERF | PMC_BACKEND_SIM,
	 .requires = PMC_REQ_UPROBE)
{
	attrs(t);
	CALL_BUDGETS(t);
}

PMC_TEST(expat, chunked_calls, .events = CALL_EVENTS, .backends = PMC_BACKEND_PERF | PMC_BACKEND_SIM,
	 .requires = PMC_REQ_UPROBE)
{
	chunked(t);
	CALL_BUDGETS(t);
}
