// SPDX-License-Identifier: MIT
#include <algorithm>
#include <cstdlib>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

static void BM_sort(benchmark::State &state)
{
	const char *grow = std::getenv("MYBENCH_GROW");   // grow the work on purpose
	size_t n = static_cast<size_t>(state.range(0)) * (grow ? 11 : 10) / 10;
	std::vector<int> v(n);
	std::mt19937 rng(42);

	for (auto _ : state) {
		state.PauseTiming();                       // the shuffle is not timed
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
BENCHMARK(BM_concat)->Range(8, 64);

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
