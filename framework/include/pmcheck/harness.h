/* SPDX-License-Identifier: MIT */
/*
 * The test harness: test cases whose assertions are about counts.
 *
 *   #include <pmcheck/harness.h>
 *
 *   PMC_TEST(hash, insert, .events = "instructions,calls:malloc", .reps = 9)
 *   {
 *           struct table *tb = table_new();
 *
 *           PMC_REGION(t, "insert") {
 *                   table_insert(tb, 42);
 *           }
 *           table_free(tb);
 *           PMC_EXPECT_LE(t, "insert", "instructions", 1200);
 *           PMC_EXPECT_EQ(t, "insert", "calls:malloc", 0);
 *   }
 *
 * Over 700 lines on purpose: it is the one header a test includes, and
 * most of it is documentation of the API next to each declaration, in
 * sections (verdicts, declaring tests, inside a case, regions, the
 * region's inline path, expectations, budgets, the runner, C++).
 *
 * Link with pmcheck::harness_main (or call pmc_main() from your own main)
 * and register the executable with pmcheck_add_suite() in CMake: every case
 * becomes its own CTest test.
 *
 * How a case runs (in a child process of the runner, with a timeout):
 *   1. .requires is checked; a missing capability is SKIP with its reason.
 *   2. The fixture's setup runs once; it may add events (pmc_test_add_event,
 *      pmc_test_watch) computed at run time, e.g. the address of a buffer.
 *   3. .events plus the added events are opened as one counter set.  An
 *      event this machine cannot count (no hardware PMU, no privilege, no
 *      free breakpoint slot) makes the case SKIP with the core's reason.
 *   4. The cost of an empty region is measured (per event, the minimum over
 *      16 tries) and later subtracted from every sample.
 *   5. The body runs .warmup + .reps times.  Each PMC_REGION execution in a
 *      non-warm-up run is one sample of that region.
 *   6. The expectations recorded by the body (PMC_EXPECT_*) are evaluated
 *      once, on the statistics of all samples; then the fixture's teardown.
 *
 * Expectations are therefore declarations: they may appear anywhere in the
 * body (usually at its end), are recorded once per call site, and are judged
 * after the last repetition.  Immediate checks of the code under test's
 * results are PMC_CHECK*, which end the case on failure.
 *
 * The figure an expectation judges is, by default, the minimum over the
 * samples: for deterministic counts every sample is the same, and for noisy
 * ones interference only ever adds counts, so the minimum is the best
 * estimate of the code's own cost.  .stat selects the median or maximum.
 *
 * A sample taken while an event was multiplexed (running < enabled) or never
 * scheduled is a partial count: an expectation over it is INCONCLUSIVE,
 * never PASS.  So is a sample during which other threads of the process ran
 * while the case counts its own thread only (.inherit = 0), except for a
 * lower bound that holds (the missing counts could only add to it).
 *
 * Over 600 lines because it is the harness's whole public API, every
 * function and macro documented as a public header must be (over a third of
 * its lines are comments), with the regions' inline fast path, which must be
 * in the header.
 */
#ifndef PMCHECK_HARNESS_H
#define PMCHECK_HARNESS_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <pmcheck/counters.h>
#include <pmcheck/event.h>
#include <pmcheck/export.h>
#include <pmcheck/hwdb.h>
#include <pmcheck/region.h>

#if defined(__has_include)
#if __has_include(<sys/single_threaded.h>)
#include <sys/single_threaded.h>
#define PMC__HAVE_SINGLE_THREADED 1
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- verdicts and exit codes ------------------------------------------------ */

/*
 * Outcome of a case.  PMC_PASS to PMC_ERROR are in increasing order of
 * severity for the run; PMC_UNBUDGETED, added later and so numbered last,
 * ranks between PMC_KNOWN_ISSUE and PMC_INCONCLUSIVE.
 */
enum pmc_verdict {
	PMC_PASS = 0,
	PMC_SKIP,         /* cannot run here; carries a reason */
	PMC_KNOWN_ISSUE,  /* failed, in a way documented as a bug of this kernel */
	PMC_INCONCLUSIVE, /* a judged reading was multiplexed or never counted */
	PMC_FAIL,         /* an expectation or check did not hold */
	PMC_ERROR,        /* the case could not run: crash, timeout, bad event, setup */
	/* Nothing failed, but a budget expectation had no budget for this
	 * machine, so it was measured and not judged: never a pass.  Under
	 * --strict, or with CI set (not "0" or "false"), such a case FAILs. */
	PMC_UNBUDGETED,
};

/*
 * Exit status of a runner, the worst outcome of the run first (error, fail,
 * inconclusive, unbudgeted).  CTest treats PMC_EXIT_SKIP as a skip
 * (SKIP_RETURN_CODE 77), everything else non-zero as a failure.
 */
enum pmc_exit {
	PMC_EXIT_PASS = 0,         /* every case passed (known issues count as passed) */
	PMC_EXIT_FAIL = 1,         /* at least one FAIL */
	PMC_EXIT_ERROR = 2,        /* at least one ERROR */
	PMC_EXIT_REGRESSION = 3,   /* a baseline comparison found a regression */
	PMC_EXIT_INCONCLUSIVE = 4, /* nothing failed, but something could not be judged */
	PMC_EXIT_UNBUDGETED = 5,   /* nothing failed, but an expectation had no budget
				    * (with --ctest: 77, so CTest shows a skip) */
	PMC_EXIT_USAGE = 64,       /* bad command line (as sysexits' EX_USAGE) */
	PMC_EXIT_SKIP = 77,        /* every selected case was skipped */
};

/* "PASS", "SKIP", "KNOWN-ISSUE", "INCONCLUSIVE", "FAIL", "ERROR", "UNBUDGETED". */
PMC_API const char *pmc_verdict_name(enum pmc_verdict v);

/* ---- declaring tests ---------------------------------------------------------- */

struct pmc_test; /* opaque: the running case */

/* Backends a case may run on (.backends; 0 means all). */
enum pmc_backend {
	PMC_BACKEND_PERF = 1u << 0, /* the kernel's perf_event counters */
	PMC_BACKEND_SIM = 1u << 1,  /* valgrind callgrind simulation */
};

/* Capabilities a case requires (.requires); missing ones make it SKIP. */
enum pmc_requirement {
	PMC_REQ_ROOT = 1u << 0,        /* effective uid 0 */
	PMC_REQ_HW_PMU = 1u << 1,      /* a CPU PMU (hardware/cache events) */
	PMC_REQ_USER_READ = 1u << 2,   /* counters readable with rdpmc / mrs */
	PMC_REQ_BREAKPOINT = 1u << 3,  /* write breakpoints that count (pmc_kind_check) */
	PMC_REQ_UPROBE = 1u << 4,      /* the uprobe PMU */
	PMC_REQ_TRACEFS = 1u << 5,     /* tracefs mounted (tracepoint ids) */
};

/* Which statistic of the samples an expectation judges (.stat). */
enum pmc_stat {
	PMC_STAT_MIN = 0,
	PMC_STAT_MEDIAN,
	PMC_STAT_MAX,
};

/*
 * Set up and tear down per case.  setup runs once before the counters are
 * opened; whatever it stores in *data is returned by pmc_test_data().  It
 * returns 0, or non-zero for an ERROR (call pmc_test_skip()/pmc_test_fail()
 * for other verdicts).  teardown runs after the last repetition, also when
 * the body failed; it is not run when setup did not return 0.
 */
struct pmc_fixture {
	const char *name;
	int (*setup)(struct pmc_test *t, void **data);
	void (*teardown)(struct pmc_test *t, void *data);
};

/*
 * In C++ every member below starts from zero (a default member initializer),
 * so a C++20 designated initializer that names some of them, and the
 * pmc::options builder, leave the rest as C does, with no
 * missing-field-initializers warning.
 */
#ifdef __cplusplus
#define PMC__ZERO = {}
#define PMC__NULL nullptr
#define PMC__LL(x) static_cast<long long>(x)
#else
#define PMC__ZERO
#define PMC__NULL NULL
#define PMC__LL(x) ((long long)(x))
#endif

/*
 * Per-case options, given in PMC_TEST as designated initializers (C, and
 * C++20 in this order), or in C++ as pmc::options().events(...).reps(...).
 */
struct pmc_test_options {
	const char *events PMC__ZERO;   /* comma-separated event list (event syntax) */
	unsigned reps PMC__ZERO;        /* measured repetitions of the body; 0 = 5 */
	unsigned warmup PMC__ZERO;      /* unmeasured runs before them; default 1 */
	int no_warmup PMC__ZERO;        /* set to 1 for no warm-up run at all */
	double timeout PMC__ZERO;       /* seconds for the whole case; 0 = 30 */
	unsigned backends PMC__ZERO;    /* enum pmc_backend mask; 0 = any */
	/* enum pmc_requirement mask.  C++20 made `requires` a keyword, so C++
	 * spells the same member `require`. */
#ifdef __cplusplus
	unsigned require PMC__ZERO;
#else
	unsigned requires;
#endif
	enum pmc_stat stat PMC__ZERO;   /* statistic the expectations judge */
	const struct pmc_fixture *fixture PMC__ZERO;
	const char *labels PMC__ZERO;   /* extra CTest labels, ';'-separated */
	/* 1: count the threads and child processes the case creates too
	 * (PMC_OPEN_INHERIT; read with read(2)).  0: the calling thread only;
	 * a sample during which other threads of the process ran is then
	 * flagged PMC_DELTA_OTHER_THREADS and an expectation the missing
	 * counts could change is INCONCLUSIVE.  The sim backend always counts
	 * every thread of the process. */
	int inherit PMC__ZERO;
};

/* A registered case.  Filled by PMC_TEST; users never build one by hand. */
struct pmc_test_def {
	const char *suite;
	const char *name;
	const char *file;
	int line;
	void (*body)(struct pmc_test *t);
	struct pmc_test_options opt;
	/* The compiler and build that compiled the case ("gcc-12.2.0-O-Release"):
	 * part of the sim backend's budget key, since simulated counts are
	 * exact for one binary only. */
	const char *build;
};

#define PMC__STR2(x) #x
#define PMC__STR(x) PMC__STR2(x)
#if defined(__clang__)
#define PMC__CC "clang-" PMC__STR(__clang_major__) "." PMC__STR(__clang_minor__) "." PMC__STR(__clang_patchlevel__)
#elif defined(__GNUC__)
#define PMC__CC "gcc-" PMC__STR(__GNUC__) "." PMC__STR(__GNUC_MINOR__) "." PMC__STR(__GNUC_PATCHLEVEL__)
#else
#define PMC__CC "cc"
#endif
#if defined(__OPTIMIZE_SIZE__)
#define PMC__OPT "-Os"
#elif defined(__OPTIMIZE__)
#define PMC__OPT "-O"
#else
#define PMC__OPT "-O0"
#endif
/* pmcheck_add_suite() defines PMCHECK_BUILD_FLAGS as the CMake build type. */
#ifdef PMCHECK_BUILD_FLAGS
#define PMC__BUILD PMC__CC PMC__OPT "-" PMCHECK_BUILD_FLAGS
#else
#define PMC__BUILD PMC__CC PMC__OPT
#endif

/* Register a case (called by PMC_TEST's constructor). */
PMC_API void pmc_test_register(const struct pmc_test_def *def);

/*
 * Declare a case; the block that follows is its body and sees `t`.
 * suite and name are C identifiers; the case's full name is "suite.name".
 * The options may be left out: PMC_TEST(suite, name).
 *
 *   C, C++20:  PMC_TEST(s, n, .events = "instructions", .reps = 9)
 *   C++17:     PMC_TEST(s, n, pmc::options().events("instructions").reps(9))
 *
 * (PMC_TEST adds an empty last argument, so a case without options still
 * passes one to the variadic macro: no pedantic warning in C11 or C++17.)
 */
#define PMC_TEST(...) PMC__TEST(__VA_ARGS__, )
#ifdef __cplusplus
/* C++ registers with a static object, constructed after the definition
 * above it even when an option is computed at run time. */
#define PMC__TEST_REGISTER(suite, name)                                        \
	static const ::pmc::detail::registrar pmc__reg_##suite##__##name(      \
		&pmc__def_##suite##__##name);
#else
#define PMC__TEST_REGISTER(suite, name)                                        \
	__attribute__((constructor)) static void pmc__reg_##suite##__##name(void) \
	{                                                                      \
		pmc_test_register(&pmc__def_##suite##__##name);                \
	}
#endif
#define PMC__TEST(suite, name, ...)                                            \
	static void pmc__body_##suite##__##name(struct pmc_test *t);           \
	static const struct pmc_test_def pmc__def_##suite##__##name = {        \
		#suite, #name, __FILE__, __LINE__,                             \
		pmc__body_##suite##__##name, { __VA_ARGS__ }, PMC__BUILD       \
	};                                                                     \
	PMC__TEST_REGISTER(suite, name)                                        \
	static void pmc__body_##suite##__##name(struct pmc_test *t __attribute__((unused)))

/* ---- inside a case ---------------------------------------------------------- */

/* The fixture's data (what setup stored), or NULL. */
PMC_API void *pmc_test_data(struct pmc_test *t);

/* Repetition index of the current body run: negative during warm-up runs
 * (-warmup .. -1), then 0 .. reps-1. */
PMC_API int pmc_test_rep(const struct pmc_test *t);

/* The backend the case runs on. */
PMC_API enum pmc_backend pmc_test_backend(const struct pmc_test *t);

/*
 * Add an event at run time, from a fixture's setup (before the counters are
 * opened).  `label` is how expectations refer to it; NULL uses the event's
 * canonical name.  pmc_test_watch adds a breakpoint on len bytes at addr
 * (enum pmc_bp_access).  Errors end the case as ERROR.
 */
PMC_API void pmc_test_add_event(struct pmc_test *t, const char *label,
				const char *event);
PMC_API void pmc_test_watch(struct pmc_test *t, const char *label,
			    const void *addr, size_t len, unsigned access);

/* End the case now as SKIP / FAIL / ERROR with a printf-style reason. */
PMC_API __attribute__((noreturn, format(printf, 2, 3))) void
pmc_test_skip(struct pmc_test *t, const char *fmt, ...);
PMC_API __attribute__((noreturn, format(printf, 2, 3))) void
pmc_test_fail(struct pmc_test *t, const char *fmt, ...);
PMC_API __attribute__((noreturn, format(printf, 2, 3))) void
pmc_test_error(struct pmc_test *t, const char *fmt, ...);

/*
 * Declare that a failure of this case is a documented bug of the running
 * kernel (say which, and the fix).  If the case then fails, its verdict is
 * KNOWN-ISSUE with this text; if it passes, PASS with a note.
 */
PMC_API void pmc_test_known_issue(struct pmc_test *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* A note printed with the result and stored in the JSON (at most 8 kept). */
PMC_API void pmc_test_note(struct pmc_test *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Fail the case now unless cond holds (checks of results, not of counts). */
#define PMC_CHECK(t, cond)                                                     \
	do {                                                                   \
		if (!(cond))                                                   \
			pmc__check_failed((t), __FILE__, __LINE__,             \
					  "check failed: %s", #cond);          \
	} while (0)

/* Fail the case now unless a == b; prints both values. */
#define PMC_CHECK_EQ(t, a, b)                                                  \
	do {                                                                   \
		long long pmc__a = PMC__LL(a), pmc__b = PMC__LL(b);            \
		if (pmc__a != pmc__b)                                          \
			pmc__check_failed((t), __FILE__, __LINE__,             \
					  "%s == %s: %lld != %lld", #a, #b,    \
					  pmc__a, pmc__b);                     \
	} while (0)

PMC_API __attribute__((noreturn, format(printf, 4, 5))) void
pmc__check_failed(struct pmc_test *t, const char *file, int line,
		  const char *fmt, ...);

/* ---- regions ---------------------------------------------------------------- */

/*
 * Measure the statement or block that follows as one sample of region
 * `name` (a string literal or any string that lives through the case):
 *
 *   PMC_REGION(t, "insert") { ... }
 *
 * The counters are read as the last thing before the block and the first
 * thing after it, with compiler barriers; the block must not be left with
 * break, return or goto (the case then ends as ERROR: "region not closed").
 * Regions do not nest.  Values computed inside and otherwise unused must go
 * through PMC_DO_NOT_OPTIMIZE, or the compiler may delete the work.
 */
#define PMC_REGION(t, name)                                                    \
	for (int pmc__once = pmc__test_begin((t), (name), 1);                  \
	     pmc__once; pmc__once = pmc__test_end((t)))

/*
 * As PMC_REGION, for a block that performs `iterations` units of work (loop
 * trips, elements): results also report per-iteration figures, and budgets
 * may be given per iteration.  A count of 0, or a negative one (above 2^63
 * as a uint64_t), ends the case as ERROR naming the region.
 */
#define PMC_REGION_N(t, name, iterations)                                      \
	for (int pmc__once = pmc__test_begin((t), (name), (iterations));       \
	     pmc__once; pmc__once = pmc__test_end((t)))

/*
 * The figure of `event` in the most recent sample of `region` (overhead
 * subtracted), for checks that relate regions to each other (linearity,
 * differences).  Call after the region ran in a measured repetition:
 * pmc_test_rep(t) >= 0.  An unknown event or a region without samples ends
 * the case as ERROR; a multiplexed or never-counted sample as SKIP, since
 * its value is partial.
 */
PMC_API uint64_t pmc_test_last(struct pmc_test *t, const char *region, const char *event);

/* The functions behind PMC_REGION: begin returns 1, end returns 0.  They can
 * be called directly (begin ... end) where a block does not fit; they take
 * the general path, which the inline one below falls back to. */
PMC_API int pmc_test_region_begin(struct pmc_test *t, const char *name);
PMC_API int pmc_test_region_begin_n(struct pmc_test *t, const char *name,
				    uint64_t iterations);
PMC_API int pmc_test_region_end(struct pmc_test *t);

/* The case's counter set (NULL before the case's events are open, or when
 * it counts none): for ioctls, pmc_counters_fd() and pmc_region_*(). */
PMC_API struct pmc_counters *pmc_test_counters(struct pmc_test *t);

/* How many of the case's samples so far took the general path instead of
 * PMC_REGION's inline one (see struct pmc__hot): for benchmarks and for
 * explaining a slow region. */
PMC_API size_t pmc_test_general_samples(const struct pmc_test *t);

/* ---- PMC_REGION's inline path (names pmc__: not a stable interface) --------- */

/* Samples of one region: n rows of nev deltas (row-major), room for cap.
 * Rows from `settled` on were stored by PMC_REGION's inline path on a
 * one-group set and are raw until the harness settles them (between
 * repetitions, before any read, and before the general path appends): the
 * value deltas only, and in the row's first cell the group's times and, as
 * flags, PMC_DELTA_OTHER_THREADS or 0 (rows are zeroed when reserved). */
struct pmc__stats;
struct pmc__attr;
struct pmc__summary;

struct pmc__region {
	const char *name;        /* the caller's string (lives through the case) */
	uint64_t iterations;     /* units of work per execution */
	size_t n, cap, nev;
	size_t settled;          /* rows before this one are final */
	size_t warm;             /* executions in the warm-up (sizes the storage) */
	struct pmc__region *next; /* the region begun after this one, last time */
	uint64_t *value;         /* n * nev, overhead subtracted once settled */
	unsigned *flags;         /* n * nev, enum pmc_delta_flags */
	uint64_t *enabled_ns;    /* n * nev */
	uint64_t *running_ns;    /* n * nev */
	/* Each column's statistics, computed once for rows [0, stats_rows)
	 * with stats_settled settled (the harness's pmc__region_stats). */
	struct pmc__stats *stats;
	size_t stats_rows, stats_settled;
	/* sim backend: the dumps of the first measured executions, for the
	 * per-function attribution of the record. */
	struct pmc__attr *attr;
	/* Rows summarised so far: a region keeps at most a window of rows;
	 * when it is full they are folded into exact per-event statistics
	 * and the window starts over (harness stats.c). */
	struct pmc__summary *summary;
	size_t stats_folded;
};

/*
 * What PMC_REGION touches on every execution: the first member of the
 * harness's struct pmc_test.  A region that follows the region it followed
 * last time (the same one in a loop, the next of a sequence, or the first
 * of a repetition when it was the first of the last one), with room for
 * its sample, in a measured repetition, while the process has one thread
 * (or the set counts every thread; the check is made at the end of the
 * previous region, see pmc__test_end), on a set of one kernel group, runs
 * inline: one out-of-line read each side (pmc__region_read_call: the
 * library's lean user read, or read(2) where the kernel offers none) and
 * the row's stores.  Anything else (a new region, another order, the
 * warm-up, a full sample store, other threads to watch, sets of several
 * groups and sim sets, an error) takes
 * pmc_test_region_begin_n()/pmc_test_region_end(), whose code inside the
 * counted window is the same at every call site.  Each path's own cost is
 * measured and subtracted from its samples.
 */
struct pmc__hot {
	struct pmc_region core;           /* on the case's set */
	struct pmc__region *expect;       /* the region the inline path may begin; NULL: none */
	struct pmc__region *inline_open;  /* the region open on the inline path */
	struct pmc__region *open;         /* the region open on the general path */
	int watch_threads;                /* counting this thread only */
	int one_group;                    /* the set is one kernel group: inline reads */
	struct pmc__region *first;        /* the region begun first, last repetition */
	struct pmc__region *last;         /* the region begun most recently (this repetition) */
	int recording;                    /* a measured repetition: keep samples */
	size_t general;                   /* measured samples the general path took */
	struct pmc_measurement overhead;  /* the inline path's, subtracted from its samples */
};

/* Reading the counters failed in the inline path: ends the case as ERROR. */
PMC_API __attribute__((noreturn)) void pmc__test_read_failed(struct pmc_test *t, int rc);

/* Has the process only ever had one thread?  (glibc 2.32's flag; unknown
 * elsewhere, where the general path watches the clocks instead.) */
static inline int pmc__one_thread(void)
{
#if PMC__HAVE_SINGLE_THREADED
	return __libc_single_threaded;
#else
	return 0;
#endif
}

static PMC__ALWAYS_INLINE int pmc__test_begin(struct pmc_test *t, const char *name,
					      uint64_t iterations)
{
	struct pmc__hot *h = (struct pmc__hot *)(void *)t;
	struct pmc__region *r = h->expect;
	int rc;

	/* A thread made since the path was armed: the general path, which
	 * tells an idle thread from one that ran by the CPU clocks. */
	if (__builtin_expect(!r || r->name != name || r->iterations != iterations ||
				     r->n >= r->cap || (h->watch_threads && !pmc__one_thread()),
			     0))
		return pmc_test_region_begin_n(t, name, iterations);
	h->inline_open = r;
	h->expect = 0;
	PMC_BARRIER();
	rc = pmc__region_read_call(&h->core, &h->core.start);
	PMC_BARRIER();
	if (__builtin_expect(rc != 0, 0))
		pmc__test_read_failed(t, rc);
	return 1;
}

static PMC__ALWAYS_INLINE int pmc__test_end(struct pmc_test *t)
{
	struct pmc__hot *h = (struct pmc__hot *)(void *)t;
	struct pmc__region *r = h->inline_open, *next;
	size_t n, row, nev, i;
	uint64_t *value;
	int rc;

	if (__builtin_expect(!r, 0))
		return pmc_test_region_end(t);
	/* The inline path runs on one-group sets only (h->expect stays NULL
	 * otherwise): store the raw row, settled between repetitions. */
	PMC_BARRIER();
	rc = pmc__region_read_call(&h->core, &h->core.end);
	PMC_BARRIER();
	if (__builtin_expect(rc != 0, 0))
		pmc__test_read_failed(t, rc);
	n = r->n;
	nev = r->nev; /* at least 1: the case opened a set */
	row = n * nev;
	value = r->value + row;
	i = 0;
	do
		value[i] = h->core.end.c[i].value - h->core.start.c[i].value;
	while (++i < nev);
	r->enabled_ns[row] = h->core.end.c[0].enabled_ns - h->core.start.c[0].enabled_ns;
	r->running_ns[row] = h->core.end.c[0].running_ns - h->core.start.c[0].running_ns;
	next = r->next;
	/* The inline path is armed only while the process has one thread:
	 * another thread now was created inside the region, or since the
	 * last one ended (flagged too: its share may be missing), and the
	 * general path, which watches the CPU clocks, takes over. */
	if (__builtin_expect(!pmc__one_thread(), 0) && h->watch_threads) {
		r->flags[row] = PMC_DELTA_OTHER_THREADS;
		next = 0;
	}
	r->n = n + 1;
	h->inline_open = 0;
	h->expect = next;
	return 0;
}

/* ---- expectations ------------------------------------------------------------ */

enum pmc_expect_kind {
	PMC_EXPECT_KIND_LE = 1,      /* figure <= hi */
	PMC_EXPECT_KIND_GE,          /* figure >= lo */
	PMC_EXPECT_KIND_RANGE,       /* lo <= figure <= hi */
	PMC_EXPECT_KIND_EQ,          /* figure == lo */
	PMC_EXPECT_KIND_RATIO_LE,    /* event / per <= rhi */
	PMC_EXPECT_KIND_RATIO_GE,    /* event / per >= rlo */
	PMC_EXPECT_KIND_RATIO_RANGE, /* rlo <= event / per <= rhi */
	PMC_EXPECT_KIND_BUDGET,      /* within the budget the budget source gives */
	PMC_EXPECT_KIND_FIGURE,      /* a figure the case computed (pmc_test_expect_figure) */
};

/* One expectation; built by the PMC_EXPECT_* macros. */
struct pmc_expectation {
	enum pmc_expect_kind kind;
	const char *region;
	const char *event;
	const char *per;   /* ratios: the denominator event */
	uint64_t lo, hi;   /* counts */
	double rlo, rhi;   /* ratios */
	const char *file;
	int line;
};

/* Record an expectation (first call per file:line counts; later repetitions
 * of the same call site are ignored).  Judged after the last repetition. */
PMC_API void pmc_test_expect(struct pmc_test *t, const struct pmc_expectation *e);

/* What the PMC_EXPECT_* macros call: one expectation built field by field
 * (no compound literal, so the macros mean the same in C and C++). */
static inline void pmc__expect_at(struct pmc_test *t, enum pmc_expect_kind kind,
				  const char *region, const char *event, const char *per,
				  uint64_t lo, uint64_t hi, double rlo, double rhi,
				  const char *file, int line)
{
	struct pmc_expectation e;

	e.kind = kind;
	e.region = region;
	e.event = event;
	e.per = per;
	e.lo = lo;
	e.hi = hi;
	e.rlo = rlo;
	e.rhi = rhi;
	e.file = file;
	e.line = line;
	pmc_test_expect(t, &e);
}

#define PMC__EXPECT(t, kind, region_, event_, per_, lo_, hi_, rlo_, rhi_)      \
	pmc__expect_at((t), (kind), (region_), (event_), (per_), (lo_), (hi_), \
		       (rlo_), (rhi_), __FILE__, __LINE__)

/* Upper bound, lower bound, inclusive range, exact count. */
#define PMC_EXPECT_LE(t, region_, event_, max)                                 \
	PMC__EXPECT(t, PMC_EXPECT_KIND_LE, region_, event_, PMC__NULL, 0, max, 0, 0)
#define PMC_EXPECT_GE(t, region_, event_, min)                                 \
	PMC__EXPECT(t, PMC_EXPECT_KIND_GE, region_, event_, PMC__NULL, min, 0, 0, 0)
#define PMC_EXPECT_RANGE(t, region_, event_, min, max)                         \
	PMC__EXPECT(t, PMC_EXPECT_KIND_RANGE, region_, event_, PMC__NULL, min, max, 0, 0)
#define PMC_EXPECT_EQ(t, region_, event_, value)                               \
	PMC__EXPECT(t, PMC_EXPECT_KIND_EQ, region_, event_, PMC__NULL, value, value, 0, 0)
/* Ratio of two events of the same region, e.g. misses per instruction. */
#define PMC_EXPECT_RATIO_LE(t, region_, event_, per_, max)                     \
	PMC__EXPECT(t, PMC_EXPECT_KIND_RATIO_LE, region_, event_, per_, 0, 0, 0, max)
#define PMC_EXPECT_RATIO_GE(t, region_, event_, per_, min)                     \
	PMC__EXPECT(t, PMC_EXPECT_KIND_RATIO_GE, region_, event_, per_, 0, 0, min, 0)
#define PMC_EXPECT_RATIO_RANGE(t, region_, event_, per_, min, max)             \
	PMC__EXPECT(t, PMC_EXPECT_KIND_RATIO_RANGE, region_, event_, per_, 0, 0, min, max)
/* Within the budget recorded for this machine (see pmc_budget_source). */
#define PMC_EXPECT_BUDGET(t, region_, event_)                                  \
	PMC__EXPECT(t, PMC_EXPECT_KIND_BUDGET, region_, event_, PMC__NULL, 0, 0, 0, 0)

/*
 * Judge a figure the case computed itself -- a difference of two regions, a
 * cost per iteration -- against lo..hi (NAN for an open side), now.  `name`
 * says what the figure is ("per iteration, 2x - 1x"), `event` which count it
 * is made of, and fmt why those bounds (it appears in the report).  Recorded
 * and reported like the other expectations (kind "figure"); called again with
 * the same name and event, the newest figure replaces the old one.  The
 * strings are copied.
 */
PMC_API void pmc_test_expect_figure(struct pmc_test *t, const char *name, const char *event,
				    double measured, double lo, double hi, const char *fmt, ...)
	__attribute__((format(printf, 7, 8)));

/* ---- budgets: the hook hwdb fills ------------------------------------------- */

/* struct pmc_budget_key and struct pmc_budget are in <pmcheck/hwdb.h>. */

/*
 * A budget source: fill *out and return 0, return -ENOENT when no budget
 * is recorded for the key (the case is UNBUDGETED, never a pass; a failure
 * under --strict or CI, or when the suite has budgets under other keys), or another
 * negative code with *err filled (the check is an ERROR with that message).  The runner installs one over the hwdb
 * directories (--hwdb, PMCHECK_HWDB, the built-in hwdb) by default.
 */
struct pmc_budget_source {
	int (*lookup)(void *ctx, const struct pmc_budget_key *key,
		      struct pmc_budget *out, struct pmc_error *err);
	void *ctx;
	/* Optional: the keys under which budgets for `suite` exist on this
	 * backend, as pmc_hwdb_suite_keys().  When a budget is missing but
	 * the suite has budgets under other keys, the expectation fails (a
	 * gate must not pass because it looked in the wrong place). */
	size_t (*suite_keys)(void *ctx, const char *backend, const char *suite,
			     char keys[][PMC_HWDB_KEY_MAX], size_t max);
};

/* Install the runner's budget source (NULL: none; every budget expectation
 * is then unbudgeted).  Call before pmc_main(). */
PMC_API void pmc_harness_set_budget_source(const struct pmc_budget_source *src);

/* ---- the runner ---------------------------------------------------------------- */

/*
 * The runner: parse the command line, run the selected cases, report, and
 * return the exit status (enum pmc_exit).  `pmc_main --help` lists the
 * flags.  pmcheck::harness_main supplies a main() that calls it.
 */
PMC_API int pmc_main(int argc, char **argv);

#ifdef __cplusplus
}

/* ---- C++ ---------------------------------------------------------------------- */

namespace pmc {

/*
 * A case's options as a chain, for C++ before C++20 (designated
 * initializers) or in any order:
 *
 *   PMC_TEST(map, fill, pmc::options().events("instructions").reps(9))
 *
 * Each call sets the member of struct pmc_test_options of the same name;
 * require() is `.requires`.  The chain is constexpr, so a case whose
 * options are constants is initialized before any code runs, as in C.
 */
struct options : pmc_test_options {
	constexpr options() : pmc_test_options() {}
	constexpr options &events(const char *v) { pmc_test_options::events = v; return *this; }
	constexpr options &reps(unsigned v) { pmc_test_options::reps = v; return *this; }
	constexpr options &warmup(unsigned v) { pmc_test_options::warmup = v; return *this; }
	constexpr options &no_warmup() { pmc_test_options::no_warmup = 1; return *this; }
	constexpr options &timeout(double seconds) { pmc_test_options::timeout = seconds; return *this; }
	constexpr options &backends(unsigned mask) { pmc_test_options::backends = mask; return *this; }
	constexpr options &require(unsigned mask) { pmc_test_options::require = mask; return *this; }
	constexpr options &stat(enum pmc_stat v) { pmc_test_options::stat = v; return *this; }
	constexpr options &fixture(const pmc_fixture *v) { pmc_test_options::fixture = v; return *this; }
	constexpr options &labels(const char *v) { pmc_test_options::labels = v; return *this; }
	constexpr options &inherit(int v = 1) { pmc_test_options::inherit = v; return *this; }
};

/*
 * A measured region that ends where its scope ends, for code that leaves
 * by return, break or an exception (PMC_REGION's block must not):
 *
 *   {
 *           pmc::region r(t, "insert");
 *           table.insert(42);
 *   }
 *
 * The same inline path as PMC_REGION: begin in the constructor, end in the
 * destructor, nothing else inside the counted window.
 */
class region {
public:
	region(pmc_test *t, const char *name, uint64_t iterations = 1) : t_(t)
	{
		pmc__test_begin(t, name, iterations);
	}
	~region() { pmc__test_end(t_); }
	region(const region &) = delete;
	region &operator=(const region &) = delete;

private:
	pmc_test *t_;
};

namespace detail {

struct registrar {
	explicit registrar(const pmc_test_def *def) { pmc_test_register(def); }
};

} // namespace detail
} // namespace pmc

#endif

#endif
