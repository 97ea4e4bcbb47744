/* SPDX-License-Identifier: MIT */
/*
 * A gate on Debian's libexpat for test_libraries.py: one case on the
 * simulator (instructions), one counting calls of malloc (uprobes, and on
 * the simulator too), both budgeted.  The test then runs it against
 * another libexpat.so.1 (libident_stub.c) to see the library named.
 */
#include <stdio.h>

#include <expat.h>
#include <pmcheck/harness.h>

static char doc[16 * 1024];

static int catalog(void)
{
	int len = sprintf(doc, "<catalog>");

	for (int i = 0; i < 200; i++)
		len += sprintf(doc + len, "<item id=\"%d\">part</item>", i);
	return len + sprintf(doc + len, "</catalog>");
}

static void parse(struct pmc_test *t)
{
	int len = catalog();

	PMC_REGION(t, "parse") {
		XML_Parser p = XML_ParserCreate(NULL);

		PMC_CHECK(t, XML_Parse(p, doc, len, 1) == XML_STATUS_OK);
		XML_ParserFree(p);
	}
}

PMC_TEST(libident, parse, .events = "instructions:u", .backends = PMC_BACKEND_SIM)
{
	parse(t);
	PMC_EXPECT_BUDGET(t, "parse", "instructions:u");
}

PMC_TEST(libident, parse_calls, .events = "calls:malloc")
{
	parse(t);
	PMC_EXPECT_BUDGET(t, "parse", "calls:malloc");
}
