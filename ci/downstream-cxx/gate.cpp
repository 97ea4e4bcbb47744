// The README's C++ quick start: pugixml parsing a generated document, gated
// on the simulator (instructions) and on the kernel (calls, any machine).
#include <pmcheck/harness.h>

#include <pugixml.hpp>

#include <cstdlib>
#include <string>

static std::string catalog()
{
	// MYXMLGATE_ITEMS lets the CI test make the work grow on purpose.
	const char *env = std::getenv("MYXMLGATE_ITEMS");
	int items = env ? std::atoi(env) : 1000;
	std::string s = "<catalog>";

	for (int i = 0; i < items; i++)
		s += "<item id=\"" + std::to_string(i) + "\">part</item>";
	return s + "</catalog>";
}

static void parse(pmc_test *t)
{
	const std::string text = catalog();

	PMC_REGION(t, "parse") {
		pugi::xml_document doc;
		PMC_CHECK(t, doc.load_buffer(text.data(), text.size()));
		PMC_DO_NOT_OPTIMIZE(doc.first_child());
	}
}

PMC_TEST(xml, parse, pmc::options().events("instructions:u").backends(PMC_BACKEND_SIM))
{
	parse(t);
	PMC_EXPECT_BUDGET(t, "parse", "instructions:u");
}

PMC_TEST(xml, parse_calls, pmc::options().events("calls:malloc,calls:pugi::xml_document::load_buffer"))
{
	parse(t);
	PMC_EXPECT_BUDGET(t, "parse", "calls:malloc");
	PMC_EXPECT_EQ(t, "parse", "calls:pugi::xml_document::load_buffer", 1);
}
