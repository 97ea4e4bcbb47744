// SPDX-License-Identifier: MIT
//
// pmcheck's Google Benchmark adapter: compiled into an existing benchmark
// program by pmcheck_add_gbench(), against the program's own
// <benchmark/benchmark.h>, and linked with --wrap for the library
// functions below (PmcheckAddSuite.cmake lists them).  The benchmark
// sources are not touched.  Run without --pmcheck, the program is what it
// was: every wrapper calls the library's function and nothing else.  Run
// as `PROGRAM --pmcheck [runner options]`, its main is pmcheck's runner and
// every benchmark instance a case (docs/gbench.md); the harness's side is
// <pmcheck/gbench.h>.
//
// --wrap reaches the calls the program's own objects make, which is where
// the inline parts of the library's loop (`for (auto _ : state)`,
// KeepRunning) call StartKeepRunning and FinishKeepRunning, and where the
// program calls PauseTiming and ResumeTiming: the same whether the library
// is a shared object or compiled into the program.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <csignal>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#if defined(__has_include) && !__has_include(<benchmark/benchmark.h>)
#error "pmcheck_add_gbench: this target does not see <benchmark/benchmark.h>: it must be a Google Benchmark program, linked to benchmark::benchmark (find_package(benchmark) or FetchContent) before pmcheck_add_gbench(TARGET ...)"
#endif
#include <benchmark/benchmark.h>
#include <pmcheck/gbench.h>

#ifndef PMCHECK_GBENCH_SUITE
#define PMCHECK_GBENCH_SUITE "gbench"
#endif
#ifndef PMCHECK_GBENCH_EVENTS
#define PMCHECK_GBENCH_EVENTS "instructions:u"
#endif
#ifndef PMCHECK_GBENCH_ITERATIONS
#define PMCHECK_GBENCH_ITERATIONS 100
#endif
#ifndef PMCHECK_GBENCH_TIMEOUT
#define PMCHECK_GBENCH_TIMEOUT 0
#endif

using benchmark::State;
// A registration, whatever namespace this version keeps it in.
using Benchmark = std::remove_pointer<decltype(benchmark::RegisterBenchmark(
	"", static_cast<void (*)(State &)>(nullptr)))>::type;
using gb_string = std::string;

// The library's functions, as the linker's --wrap names them.
#define PMC_GB_START _ZN9benchmark5State16StartKeepRunningEv
#define PMC_GB_FINISH _ZN9benchmark5State17FinishKeepRunningEv
#define PMC_GB_PAUSE _ZN9benchmark5State11PauseTimingEv
#define PMC_GB_RESUME _ZN9benchmark5State12ResumeTimingEv
#define PMC_GB_SKIP_ERROR_C _ZN9benchmark5State13SkipWithErrorEPKc
#define PMC_GB_SKIP_ERROR_S _ZN9benchmark5State13SkipWithErrorERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE
#define PMC_GB_SKIP_MESSAGE_S _ZN9benchmark5State15SkipWithMessageERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE
#define PMC_GB_REGISTER _ZN9benchmark8internal25RegisterBenchmarkInternalEPNS0_9BenchmarkE
#define PMC_GB_ITERATIONS _ZN9benchmark8internal9Benchmark10IterationsEl
#define PMC_GB_MIN_TIME _ZN9benchmark8internal9Benchmark7MinTimeEd
#define PMC_GB_MIN_WARMUP _ZN9benchmark8internal9Benchmark13MinWarmUpTimeEd
#define PMC_GB_REPETITIONS _ZN9benchmark8internal9Benchmark11RepetitionsEi
#define PMC_GB_RUN _ZN9benchmark22RunSpecifiedBenchmarksEv
#define PMC_GB_RUN_R _ZN9benchmark22RunSpecifiedBenchmarksEPNS_17BenchmarkReporterE
#define PMC_GB_RUN_RR _ZN9benchmark22RunSpecifiedBenchmarksEPNS_17BenchmarkReporterES1_
#define PMC_GB_RUN_S _ZN9benchmark22RunSpecifiedBenchmarksENSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE
#define PMC_GB_RUN_RS _ZN9benchmark22RunSpecifiedBenchmarksEPNS_17BenchmarkReporterENSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE
#define PMC_GB_RUN_RRS _ZN9benchmark22RunSpecifiedBenchmarksEPNS_17BenchmarkReporterES1_NSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE

#define PMC_GB_CAT2(a, b) a##b
#define PMC_GB_CAT(a, b) PMC_GB_CAT2(a, b)
#define WRAP(f) PMC_GB_CAT(__wrap_, f)
#define REAL(f) PMC_GB_CAT(__real_, f)

// Functions every version has are declared plainly (a missing one is a
// link error that names it); the others weak, so a version without them
// links (the program cannot call what its header does not declare).
extern "C" {
int __real_main(int argc, char **argv);
void REAL(PMC_GB_START)(State *st);
void REAL(PMC_GB_FINISH)(State *st);
void REAL(PMC_GB_PAUSE)(State *st);
void REAL(PMC_GB_RESUME)(State *st);
size_t REAL(PMC_GB_RUN)();
__attribute__((weak)) void REAL(PMC_GB_SKIP_ERROR_C)(State *st, const char *msg);
__attribute__((weak)) void REAL(PMC_GB_SKIP_ERROR_S)(State *st, const gb_string &msg);
__attribute__((weak)) void REAL(PMC_GB_SKIP_MESSAGE_S)(State *st, const gb_string &msg);
__attribute__((weak)) Benchmark *REAL(PMC_GB_REGISTER)(Benchmark *b);
__attribute__((weak)) Benchmark *REAL(PMC_GB_ITERATIONS)(Benchmark *b, int64_t n);
__attribute__((weak)) Benchmark *REAL(PMC_GB_MIN_TIME)(Benchmark *b, double t);
__attribute__((weak)) Benchmark *REAL(PMC_GB_MIN_WARMUP)(Benchmark *b, double t);
__attribute__((weak)) Benchmark *REAL(PMC_GB_REPETITIONS)(Benchmark *b, int n);
__attribute__((weak)) size_t REAL(PMC_GB_RUN_R)(benchmark::BenchmarkReporter *d);
__attribute__((weak)) size_t REAL(PMC_GB_RUN_RR)(benchmark::BenchmarkReporter *d,
						  benchmark::BenchmarkReporter *f);
__attribute__((weak)) size_t REAL(PMC_GB_RUN_S)(gb_string spec);
__attribute__((weak)) size_t REAL(PMC_GB_RUN_RS)(benchmark::BenchmarkReporter *d, gb_string spec);
__attribute__((weak)) size_t REAL(PMC_GB_RUN_RRS)(benchmark::BenchmarkReporter *d,
						   benchmark::BenchmarkReporter *f, gb_string spec);
}

namespace {

// The registrations the program made, and those that fixed their own
// iteration count (which is kept: it is fixed already).
std::vector<Benchmark *> &registered()
{
	static std::vector<Benchmark *> v;
	return v;
}
std::vector<Benchmark *> &fixed_by_program()
{
	static std::vector<Benchmark *> v;
	return v;
}

int saved_argc;
char **saved_argv;

// State's accessors changed form between versions (members before 1.6).
template <class S> auto threads_of(const S &s, int) -> decltype(int(s.threads())) { return s.threads(); }
template <class S> int threads_of(const S &s, long) { return s.threads; }
template <class S> auto index_of(const S &s, int) -> decltype(int(s.thread_index())) { return s.thread_index(); }
template <class S> int index_of(const S &s, long) { return s.thread_index; }

void list_instances()
{
	static char list_flag[] = "--benchmark_list_tests=true";
	char *args[] = { saved_argv[0], list_flag, nullptr };
	int n = 2;

	benchmark::Initialize(&n, args);
	REAL(PMC_GB_RUN)();
	std::cout.flush();
	std::fflush(stdout);
}

// While the library runs a case, what it writes to standard error (its
// context header on every run) is held back in a memory file; a run that
// dies of a signal (a failed BM_CHECK aborts) shows it first.
int held_stderr = -1, real_stderr = -1;

extern "C" void show_held_stderr(int sig)
{
	char buf[4096];
	ssize_t got;

	if (held_stderr >= 0 && real_stderr >= 0 && lseek(held_stderr, 0, SEEK_SET) == 0)
		while ((got = read(held_stderr, buf, sizeof(buf))) > 0)
			if (write(real_stderr, buf, static_cast<size_t>(got)) < 0)
				break;
	signal(sig, SIG_DFL);
	raise(sig);
}

void hold_stderr()
{
	static const int fatal[] = { SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL };

	std::cerr.flush();
	held_stderr = memfd_create("pmcheck-gbench-stderr", MFD_CLOEXEC);
	real_stderr = dup(STDERR_FILENO);
	if (held_stderr < 0 || real_stderr < 0)
		return;
	dup2(held_stderr, STDERR_FILENO);
	for (int sig : fatal)
		signal(sig, show_held_stderr);
}

void release_stderr()
{
	std::cerr.flush();
	if (real_stderr >= 0) {
		dup2(real_stderr, STDERR_FILENO);
		close(real_stderr);
	}
	if (held_stderr >= 0)
		close(held_stderr);
	held_stderr = real_stderr = -1;
}

size_t run_instances(const char *regex, uint64_t iterations, int *by_flag)
{
	std::string filter = std::string("--benchmark_filter=") + regex;
	std::string min_time;
	static char reps[] = "--benchmark_repetitions=1";
	static char warmup[] = "--benchmark_min_warmup_time=0";
	static char interleave[] = "--benchmark_enable_random_interleaving=false";
	std::vector<char *> args = { saved_argv[0], &filter[0], reps, warmup, interleave };
	bool fixed = false;

	// The count is fixed on each registration where the library lets the
	// adapter reach it; a library that registers otherwise takes
	// --benchmark_min_time=Nx (1.8 and later), and one that takes
	// neither refuses the flag and the case says so.
	for (Benchmark *b : registered()) {
		bool by_program = false;

		for (Benchmark *f : fixed_by_program())
			by_program |= f == b;
		if (!by_program && REAL(PMC_GB_ITERATIONS))
			REAL(PMC_GB_ITERATIONS)(b, static_cast<int64_t>(iterations));
		fixed = true;
	}
	*by_flag = !fixed;
	if (!fixed) {
		min_time = "--benchmark_min_time=" + std::to_string(iterations) + "x";
		args.push_back(&min_time[0]);
	}
	args.push_back(nullptr);
	int n = static_cast<int>(args.size()) - 1;
	benchmark::Initialize(&n, args.data());
	// The library's table goes nowhere: the case's result says what ran.
	std::cout.flush();
	std::fflush(stdout);
	int out = dup(STDOUT_FILENO), devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (out >= 0 && devnull >= 0)
		dup2(devnull, STDOUT_FILENO);
	hold_stderr();
	size_t ran = REAL(PMC_GB_RUN)();
	release_stderr();
	std::cout.flush();
	std::fflush(stdout);
	if (out >= 0) {
		dup2(out, STDOUT_FILENO);
		close(out);
	}
	if (devnull >= 0)
		close(devnull);
	return ran;
}

[[noreturn]] void run_pmcheck()
{
	static const pmc__gbench_ops ops = { list_instances, run_instances };
	static const pmc__gbench_config cfg = {
		PMCHECK_GBENCH_SUITE, PMCHECK_GBENCH_EVENTS, PMCHECK_GBENCH_ITERATIONS,
		PMCHECK_GBENCH_TIMEOUT, PMC__BUILD, "Google Benchmark",
	};
	int rc = pmc__gbench_main(&ops, &cfg, saved_argc, saved_argv);

	std::cout.flush();
	std::exit(rc);
}

} // namespace

extern "C" {

// pmcheck mode: the program's main runs with no arguments of its own (its
// registrations happen, its flags are pmcheck's), and the runner takes
// over where it asks the library to run the benchmarks.
int __wrap_main(int argc, char **argv)
{
	if (!pmc__gbench_mode())
		return __real_main(argc, argv);
	static char *no_args[2];
	saved_argc = argc;
	saved_argv = argv;
	no_args[0] = argv[0];
	int rc = __real_main(1, no_args);
	std::fprintf(stderr, "%s --pmcheck: the program's main returned (%d) without calling benchmark::RunSpecifiedBenchmarks(), so pmcheck had no benchmarks to run: pmcheck_add_gbench() needs a Google Benchmark main (BENCHMARK_MAIN(), benchmark::benchmark_main, or a main that calls RunSpecifiedBenchmarks)\n",
		     argv[0], rc);
	return PMC_EXIT_ERROR;
}

size_t WRAP(PMC_GB_RUN)()
{
	if (pmc__gbench_mode())
		run_pmcheck();
	return REAL(PMC_GB_RUN)();
}
size_t WRAP(PMC_GB_RUN_R)(benchmark::BenchmarkReporter *d)
{
	if (pmc__gbench_mode())
		run_pmcheck();
	return REAL(PMC_GB_RUN_R)(d);
}
size_t WRAP(PMC_GB_RUN_RR)(benchmark::BenchmarkReporter *d, benchmark::BenchmarkReporter *f)
{
	if (pmc__gbench_mode())
		run_pmcheck();
	return REAL(PMC_GB_RUN_RR)(d, f);
}
size_t WRAP(PMC_GB_RUN_S)(gb_string spec)
{
	if (pmc__gbench_mode())
		run_pmcheck();
	return REAL(PMC_GB_RUN_S)(std::move(spec));
}
size_t WRAP(PMC_GB_RUN_RS)(benchmark::BenchmarkReporter *d, gb_string spec)
{
	if (pmc__gbench_mode())
		run_pmcheck();
	return REAL(PMC_GB_RUN_RS)(d, std::move(spec));
}
size_t WRAP(PMC_GB_RUN_RRS)(benchmark::BenchmarkReporter *d, benchmark::BenchmarkReporter *f,
			    gb_string spec)
{
	if (pmc__gbench_mode())
		run_pmcheck();
	return REAL(PMC_GB_RUN_RRS)(d, f, std::move(spec));
}

// Registrations: kept, so the fixed count reaches each.  In pmcheck mode a
// registration's own minimum time, warm-up and repetitions are left out
// (the count is fixed; pmcheck repeats a case itself), and an iteration
// count it fixes is noted and kept.
Benchmark *WRAP(PMC_GB_REGISTER)(Benchmark *b)
{
	Benchmark *r = REAL(PMC_GB_REGISTER)(b);

	if (pmc__gbench_mode())
		registered().push_back(r);
	return r;
}
Benchmark *WRAP(PMC_GB_ITERATIONS)(Benchmark *b, int64_t n)
{
	if (pmc__gbench_mode())
		fixed_by_program().push_back(b);
	return REAL(PMC_GB_ITERATIONS)(b, n);
}
Benchmark *WRAP(PMC_GB_MIN_TIME)(Benchmark *b, double t)
{
	return pmc__gbench_mode() ? b : REAL(PMC_GB_MIN_TIME)(b, t);
}
Benchmark *WRAP(PMC_GB_MIN_WARMUP)(Benchmark *b, double t)
{
	return pmc__gbench_mode() ? b : REAL(PMC_GB_MIN_WARMUP)(b, t);
}
Benchmark *WRAP(PMC_GB_REPETITIONS)(Benchmark *b, int n)
{
	return pmc__gbench_mode() ? b : REAL(PMC_GB_REPETITIONS)(b, n);
}

// The timed loop.
void WRAP(PMC_GB_START)(State *st)
{
	REAL(PMC_GB_START)(st);
	pmc__gbench_start(st, static_cast<uint64_t>(st->max_iterations), threads_of(*st, 0),
			  index_of(*st, 0));
}
void WRAP(PMC_GB_FINISH)(State *st)
{
	pmc__gbench_finish(st);
	REAL(PMC_GB_FINISH)(st);
}
void WRAP(PMC_GB_PAUSE)(State *st)
{
	pmc__gbench_pause(st);
	REAL(PMC_GB_PAUSE)(st);
}
void WRAP(PMC_GB_RESUME)(State *st)
{
	REAL(PMC_GB_RESUME)(st);
	pmc__gbench_resume(st);
}
void WRAP(PMC_GB_SKIP_ERROR_C)(State *st, const char *msg)
{
	pmc__gbench_skipped(st, msg, 1);
	REAL(PMC_GB_SKIP_ERROR_C)(st, msg);
}
void WRAP(PMC_GB_SKIP_ERROR_S)(State *st, const gb_string &msg)
{
	pmc__gbench_skipped(st, msg.c_str(), 1);
	REAL(PMC_GB_SKIP_ERROR_S)(st, msg);
}
void WRAP(PMC_GB_SKIP_MESSAGE_S)(State *st, const gb_string &msg)
{
	pmc__gbench_skipped(st, msg.c_str(), 0);
	REAL(PMC_GB_SKIP_MESSAGE_S)(st, msg);
}

} // extern "C"
