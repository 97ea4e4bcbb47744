// SPDX-License-Identifier: MIT
// Benchmarks as a C++ team writes them: sorting with its set-up paused
// inside the loop, strings over a range of sizes, a map, a fixture, and a
// threaded one.  TEAMBENCH_SORT_PERCENT grows the sort's input (100: as
// written); TEAMBENCH_FAULT makes BM_faulty fail in one way on purpose.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

static int percent(const char *name)
{
	const char *s = std::getenv(name);
	return s ? std::atoi(s) : 100;
}

static void BM_sort(benchmark::State &state)
{
	std::mt19937 rng(42);
	size_t n = static_cast<size_t>(state.range(0));
	if (n == 1024)
		n = n * static_cast<size_t>(percent("TEAMBENCH_SORT_PERCENT")) / 100;
	std::vector<int> v(n);
	for (auto _ : state) {
		state.PauseTiming();
		for (auto &x : v)
			x = static_cast<int>(rng());
		state.ResumeTiming();
		std::sort(v.begin(), v.end());
		benchmark::DoNotOptimize(v.data());
	}
}
BENCHMARK(BM_sort)->Arg(256)->Arg(1024);

static void BM_concat(benchmark::State &state)
{
	for (auto _ : state) {
		std::string s;
		for (int64_t i = 0; i < state.range(0); i++)
			s += std::to_string(i);
		benchmark::DoNotOptimize(s);
	}
}
BENCHMARK(BM_concat)->Range(8, 64)->MinTime(0.2);

static void BM_map(benchmark::State &state)
{
	for (auto _ : state) {
		std::map<int, int> m;
		for (int i = 0; i < 200; i++)
			m[i * 7 % 101] += i;
		benchmark::DoNotOptimize(m);
	}
}
BENCHMARK(BM_map);
// Its count fixed in the source: kept (ci/bench times it against the same
// run under valgrind --tool=none).
BENCHMARK(BM_map)->Name("BM_map_fixed")->Iterations(20);
// One name registered twice, once with its own count and once with the
// clock's settings (pmcheck fixes its count; the two stay two cases).
BENCHMARK(BM_map)->Name("BM_twice")->Iterations(7);
BENCHMARK(BM_map)->Name("BM_twice")->MinTime(0.1)->Repetitions(3);

class Words : public benchmark::Fixture {
public:
	void SetUp(const benchmark::State &) override
	{
		words.clear();
		for (int i = 0; i < 64; i++)
			words.push_back("word" + std::to_string(i * 37 % 64));
	}
	std::vector<std::string> words;
};

BENCHMARK_F(Words, Longest)(benchmark::State &state)
{
	for (auto _ : state) {
		size_t best = 0;
		for (const auto &w : words)
			best = std::max(best, w.size());
		benchmark::DoNotOptimize(best);
	}
}

static void BM_threaded(benchmark::State &state)
{
	for (auto _ : state) {
		std::vector<int> v(64, state.thread_index());
		benchmark::DoNotOptimize(v.data());
	}
}
BENCHMARK(BM_threaded)->Threads(2);

static void BM_faulty(benchmark::State &state)
{
	const char *fault = std::getenv("TEAMBENCH_FAULT");
	fault = fault ? fault : "";
	if (!std::strcmp(fault, "error"))
		state.SkipWithError("the input file is missing");
	if (!std::strcmp(fault, "noloop"))
		return;
	for (auto _ : state) {
		if (!std::strcmp(fault, "abort"))
			std::abort();
		while (!std::strcmp(fault, "hang"))
			benchmark::ClobberMemory();
		benchmark::DoNotOptimize(fault);
	}
}
BENCHMARK(BM_faulty);
