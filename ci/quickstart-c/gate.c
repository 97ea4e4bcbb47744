#include <stdio.h>
#include <stdlib.h>

#include <expat.h>
#include <pmcheck/harness.h>

static char doc[64 * 1024];

static int catalog(void)       /* MYXMLGATE_ITEMS: grow the work on purpose */
{
	const char *env = getenv("MYXMLGATE_ITEMS");
	int items = env ? atoi(env) : 1000, len = sprintf(doc, "<catalog>");

	for (int i = 0; i < items && len < (int)sizeof(doc) - 64; i++)
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

PMC_TEST(xml, parse, .events = "instructions:u", .backends = PMC_BACKEND_SIM)
{
	parse(t);
	PMC_EXPECT_BUDGET(t, "parse", "instructions:u");
}

PMC_TEST(xml, parse_calls, .events = "calls:malloc,calls:XML_ParserCreate")
{
	parse(t);
	PMC_EXPECT_BUDGET(t, "parse", "calls:malloc");
	PMC_EXPECT_EQ(t, "parse", "calls:XML_ParserCreate", 1);
}
