// SPDX-License-Identifier: MIT
//
// A budget gate on a real C++ library: Debian's pugixml, the DOM XML
// parser, written as a C++ project writes its tests.  Three workloads, each
// gated twice:
//   - on the sim backend: instructions, data reads and writes, branches;
//     exact budgets recorded by --calibrate, per compiler (the budget key
//     names it), so a g++ build and a clang++ build each have their own;
//   - on the perf backend: calls to the allocator and to a pugixml member
//     function named as C++ names it (calls:pugi::xml_node::append_attribute),
//     exact on every CPU and filed under "any".
//
// pugixml picks no code by CPU at run time, so its counts depend on the
// library build and the compiler only; pmcheck's provenance names the
// library when a Debian update rebuilds it.
#include <pmcheck/harness.h>

#include <pugixml.hpp>

#include <cstdio>
#include <cstring>
#include <string>

namespace {

constexpr const char *sim_events = "instructions:u,L1-dcache-loads,L1-dcache-stores,branches";
constexpr const char *call_events =
	"calls:malloc,calls:free,calls:pugi::xml_node::append_attribute";
constexpr unsigned items = 3000;

// A deterministic catalog of about 300 KiB, with attributes and entities.
std::string make_text()
{
	std::string s = "<?xml version=\"1.0\"?>\n<catalog>\n";
	char line[256];

	for (unsigned i = 0; i < items; i++) {
		std::snprintf(line, sizeof line,
			      "<item id=\"%u\" price=\"%u\"><name>part &amp; %u</name><note>%u &lt; %u</note></item>\n",
			      i, i % 97, i * 7919u % 10007u, i, i + 1);
		s += line;
	}
	s += "</catalog>\n";
	return s;
}

// Counts what serializing writes, without keeping it.
struct counting_writer : pugi::xml_writer {
	size_t bytes = 0;
	void write(const void *, size_t size) override { bytes += size; }
};

void sim_budgets(pmc_test *t, const char *region)
{
	PMC_EXPECT_BUDGET(t, region, "instructions:u");
	PMC_EXPECT_BUDGET(t, region, "L1-dcache-loads");
	PMC_EXPECT_BUDGET(t, region, "L1-dcache-stores");
	PMC_EXPECT_BUDGET(t, region, "branches");
}

void call_budgets(pmc_test *t, const char *region)
{
	PMC_EXPECT_BUDGET(t, region, "calls:malloc");
	PMC_EXPECT_BUDGET(t, region, "calls:free");
	PMC_EXPECT_BUDGET(t, region, "calls:pugi::xml_node::append_attribute");
}

// Parse the catalog into a DOM (the document's pages are allocated, and
// freed when it goes out of scope, inside the region).
void parse(pmc_test *t)
{
	const std::string text = make_text();
	size_t n = 0;

	PMC_REGION(t, "parse") {
		pugi::xml_document doc;
		pugi::xml_parse_result r = doc.load_buffer(text.data(), text.size());

		PMC_CHECK(t, r);
		n = static_cast<size_t>(std::distance(doc.child("catalog").begin(),
						      doc.child("catalog").end()));
	}
	PMC_CHECK_EQ(t, n, items);
}

// An XPath query over a parsed document: compiling it and selecting.
void xpath(pmc_test *t)
{
	const std::string text = make_text();
	pugi::xml_document doc;
	size_t n = 0;

	PMC_CHECK(t, doc.load_buffer(text.data(), text.size()));
	PMC_REGION(t, "xpath") {
		n = doc.select_nodes("//item[@price > 50]/name").size();
	}
	size_t expect = 0;
	for (unsigned i = 0; i < items; i++)
		expect += i % 97 > 50;
	PMC_CHECK_EQ(t, n, expect);
}

// Build a DOM node by node and serialize it.
void build(pmc_test *t)
{
	counting_writer w;
	char id[16];

	PMC_REGION(t, "build") {
		pugi::xml_document doc;
		pugi::xml_node cat = doc.append_child("catalog");

		for (unsigned i = 0; i < items; i++) {
			pugi::xml_node item = cat.append_child("item");

			std::snprintf(id, sizeof id, "%u", i);
			item.append_attribute("id").set_value(id);
			item.append_attribute("price").set_value(i % 97);
			item.append_child(pugi::node_pcdata).set_value("part");
		}
		doc.save(w, "", pugi::format_raw);
		PMC_DO_NOT_OPTIMIZE(w.bytes);
	}
	PMC_CHECK(t, w.bytes > items * 20);
}

constexpr pmc_test_options sim_case = pmc::options().events(sim_events).backends(PMC_BACKEND_SIM).reps(3);
constexpr pmc_test_options call_case = pmc::options()
					   .events(call_events)
					   .backends(PMC_BACKEND_PERF | PMC_BACKEND_SIM)
					   .require(PMC_REQ_UPROBE);

} // namespace

PMC_TEST(pugixml, parse, sim_case)
{
	parse(t);
	sim_budgets(t, "parse");
}

PMC_TEST(pugixml, xpath, sim_case)
{
	xpath(t);
	sim_budgets(t, "xpath");
}

PMC_TEST(pugixml, build, sim_case)
{
	build(t);
	sim_budgets(t, "build");
}

PMC_TEST(pugixml, parse_calls, call_case)
{
	parse(t);
	call_budgets(t, "parse");
}

PMC_TEST(pugixml, build_calls, call_case)
{
	build(t);
	call_budgets(t, "build");
	// The one count a reader can check by hand: two attributes per item.
	PMC_EXPECT_EQ(t, "build", "calls:pugi::xml_node::append_attribute", 2 * items);
}
