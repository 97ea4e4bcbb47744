/* SPDX-License-Identifier: MIT */
/*
 * The core API for C++ tests that are not pmcheck cases: a GoogleTest TEST,
 * a Catch2 TEST_CASE, a benchmark's own loop.
 *
 *   #include <pmcheck/pmcheck.hpp>
 *
 *   TEST(Map, InsertAllocatesOnce)
 *   {
 *           pmc::counters c("calls:malloc,page-faults");   // throws pmc::error
 *           std::map<int, int> m;
 *           pmc::counts n;
 *           {
 *                   pmc::count scope(c, n);                // counts until '}'
 *                   m[1] = 1;
 *           }
 *           EXPECT_EQ(n["calls:malloc"], 1u);
 *   }
 *
 * The counters are those of <pmcheck/pmcheck.h>: one set for the calling
 * thread, opened and enabled by the constructor, closed by the destructor.
 * pmc::count is pmc_region_begin() in its constructor and pmc_region_end()
 * in its destructor -- the same inline reads as C regions and PMC_REGION,
 * nothing else inside the counted window -- and the counts it stores have
 * the cost of an empty region (measured once, when the set opens)
 * subtracted, as the harness does.
 *
 * A figure read from pmc::counts is exact only when the event counted all
 * along: operator[] throws pmc::error for a count that was multiplexed or
 * never scheduled (its value would be partial), and for an event the set
 * does not have.  Needs C++11 and exceptions; links with pmcheck::pmcheck.
 */
#ifndef PMCHECK_PMCHECK_HPP
#define PMCHECK_PMCHECK_HPP

#include <pmcheck/pmcheck.h>

#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace pmc {

/* What the C API reports in struct pmc_error, as an exception. */
class error : public std::runtime_error {
public:
	explicit error(const pmc_error &e) : std::runtime_error(e.message), code_(e.code) {}
	error(int code, const std::string &message) : std::runtime_error(message), code_(code) {}
	/* The PMC_E_* or negative errno code. */
	int code() const noexcept { return code_; }

private:
	int code_;
};

class counters;

/* The counts of one region, by event name (as written in the list, or its
 * canonical form). */
class counts {
public:
	counts() : set_(nullptr) { std::memset(&m_, 0, sizeof m_); }

	/* The count of `event`; throws pmc::error when the set has no such
	 * event, when nothing was counted yet, or when the count is partial
	 * (multiplexed, never scheduled). */
	uint64_t operator[](const char *event) const;
	uint64_t operator[](const std::string &event) const { return (*this)[event.c_str()]; }

	/* The raw deltas, in the order of the event list. */
	const pmc_measurement &measurement() const noexcept { return m_; }

private:
	friend class count;
	const counters *set_;
	pmc_measurement m_;
};

/* An open, enabled counter set of the calling thread. */
class counters {
public:
	/* events: the event syntax's comma-separated list.  flags: enum
	 * pmc_open_flags (PMC_OPEN_INHERIT to count the threads it starts). */
	explicit counters(const char *events, unsigned flags = 0) : set_(nullptr)
	{
		pmc_event_spec specs[PMC_MAX_EVENTS];
		size_t n = 0;
		pmc_error err;

		if (pmc_event_parse_list(events, specs, PMC_MAX_EVENTS, &n, &err) != 0 ||
		    pmc_counters_open(&set_, specs, n, flags, &err) != 0)
			throw error(err);
		/* The names as written, which pmc::counts also answers to. */
		for (const char *e = events; *e;) {
			size_t len = pmc_event_list_token(e);

			given_.emplace_back(e, len);
			e += len;
			if (*e == ',')
				e++;
		}
		int rc = pmc_counters_enable(set_);

		if (rc == 0)
			rc = pmc_counters_overhead(set_, 16, &overhead_);
		if (rc != 0) {
			pmc_counters_close(set_);
			throw error(rc, std::string("pmcheck: cannot enable or read the counters \"") + events +
						"\": " + pmc_strerror(rc));
		}
		pmc_region_init(&region_, set_);
	}
	~counters()
	{
		if (set_)
			pmc_counters_close(set_);
	}
	counters(const counters &) = delete;
	counters &operator=(const counters &) = delete;

	/* Number of events and their canonical names. */
	size_t size() const noexcept { return pmc_counters_count(set_); }
	const char *name(size_t i) const
	{
		const pmc_event_spec *s = pmc_counters_spec(set_, i);

		return s ? s->name : "";
	}
	/* The name event i was given in the list ("" past its end). */
	const char *given(size_t i) const { return i < given_.size() ? given_[i].c_str() : ""; }
	/* The C set, for the rest of the C API. */
	pmc_counters *get() const noexcept { return set_; }

private:
	friend class count;
	friend class counts;
	pmc_counters *set_;
	std::vector<std::string> given_;
	pmc_region region_;
	pmc_measurement overhead_;
};

/*
 * Counts from its construction to its destruction into `out`.  Regions of
 * one set do not nest.  A failed read leaves `out` empty, and reading it
 * then throws.
 */
class count {
public:
	count(counters &c, counts &out) : c_(c), out_(out)
	{
		out_.set_ = nullptr;
		ok_ = pmc_region_begin(&c_.region_) == 0;
	}
	~count()
	{
		if (ok_ && pmc_region_end(&c_.region_, &out_.m_) == 0) {
			pmc_measurement_subtract(&out_.m_, &c_.overhead_);
			out_.set_ = &c_;
		}
	}
	count(const count &) = delete;
	count &operator=(const count &) = delete;

private:
	counters &c_;
	counts &out_;
	bool ok_;
};

inline uint64_t counts::operator[](const char *event) const
{
	char why[256];

	if (!set_)
		throw error(PMC_E_STATE, "pmcheck: no counts here: the region was not counted (or its read failed)");
	for (size_t i = 0; i < m_.n; i++) {
		if (std::strcmp(set_->name(i), event) != 0 && std::strcmp(set_->given(i), event) != 0)
			continue;
		if (m_.d[i].flags & (PMC_DELTA_MULTIPLEXED | PMC_DELTA_NOT_COUNTED)) {
			std::snprintf(why, sizeof why,
				      "pmcheck: \"%s\" was %s during the region: its count is partial",
				      event,
				      (m_.d[i].flags & PMC_DELTA_NOT_COUNTED) ? "never scheduled" : "multiplexed");
			throw error(PMC_E_STATE, why);
		}
		return m_.d[i].value;
	}
	std::snprintf(why, sizeof why, "pmcheck: the counters have no event \"%s\" (they count", event);
	std::string list = why;
	for (size_t i = 0; i < m_.n; i++)
		list += std::string(i ? ", " : " ") + set_->name(i);
	throw error(PMC_E_UNKNOWN_EVENT, list + ")");
}

} // namespace pmc

#endif
