/* SPDX-License-Identifier: MIT */
/*
 * history.changepoints: the change-point finder (framework/tools/history/changepoint.c)
 * on generated series with known steps and known noise (1% of the level), with
 * a fixed seed so that every run sees the same series, reported as pmcheck
 * history changes reports them (changes under 0.5% of the level dropped).  It prints precision and recall per
 * noise kind and step size (docs/history.md quotes the table) and fails when
 * they fall below what the docs promise:
 *
 * - exact series: every step found at its commit, nothing else;
 * - Gaussian noise: every step of at least 5 sigma found within one commit,
 *   and no change on a stationary series;
 * - Gaussian noise with 2% outliers of 5 to 20 sigma (an interrupt, a
 *   migration): at least 97% of the steps of 5 sigma or more within one
 *   commit, and at most 1% of stationary series with a change;
 * - a fleet's history (run_fleet): exact and noisy series, some stationary
 *   with blips, judged as history changes judges them: every step found,
 *   none on a stationary series, and no regression after the last one, so
 *   that changes --since a commit after it exits 0.
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "changepoint.h"

#define SERIES 200
#define POINTS 200
#define GAP 10 /* steps at least this far from each other and the ends */
#define SIGMA 0.01 /* the noise, relative to the level */
#define MIN_CHANGE 0.005 /* history changes' default --min-change */
#define BLIP_SERIES 100 /* per row of exact counts with blips */

static uint64_t rng = 0x853c49e6748fea9bull;

static double uniform(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (double)(rng >> 11) * (1.0 / 9007199254740992.0);
}

static double gauss(void)
{
	double a = uniform(), b = uniform();

	return sqrt(-2 * log(a + 1e-300)) * cos(2 * M_PI * b);
}

struct tally {
	size_t steps, found, reported, stationary, stationary_flagged, taken_exact;
};

/* Step positions for a series with nsteps steps, GAP apart and from the ends. */
static void place_steps(int nsteps, int *pos)
{
	for (int j = 0; j < nsteps; j++) {
		bool ok;

		do {
			pos[j] = GAP + (int)(uniform() * (POINTS - 2 * GAP));
			ok = true;
			for (int q = 0; q < j; q++)
				ok = ok && abs(pos[q] - pos[j]) >= GAP;
		} while (!ok);
	}
}

/* Tally what was reported against the steps placed. */
static void score(struct tally *t, const struct cp_change *ch, size_t n, const int *pos, int nsteps,
		  bool at_commit)
{
	bool matched[3] = { false, false, false };

	t->steps += (size_t)nsteps;
	t->reported += n;
	if (!nsteps) {
		t->stationary++;
		t->stationary_flagged += n > 0;
	}
	for (size_t c = 0; c < n; c++)
		for (int j = 0; j < nsteps; j++) {
			long d = (long)ch[c].index - pos[j];

			if (!matched[j] && (at_commit ? d == 0 : labs(d) <= 1)) {
				matched[j] = true;
				t->found++;
				break;
			}
		}
}

/*
 * Exact counts with blips, as one machine per commit sees a count that is
 * 5 or 6 at random from unchanged code: SERIES series of a count of 5, the
 * i-th with i % 4 steps of `step` counts (alternating up and down), each
 * commit's count one more than its level with probability `blips`.  Judged
 * as pmcheck history changes judges a series whose runs agree: exact
 * (cp_series_exact) or noisy.  A step is found within one commit.
 */
static int run_blips(double blips, int step, struct tally *t)
{
	struct cp_options o = { CP_DEFAULT_SIGNIFICANCE, CP_DEFAULT_PERMUTATIONS, CP_DEFAULT_MIN_SIZE, 1 };
	double x[POINTS];
	struct cp_change ch[POINTS];
	char label[64];

	memset(t, 0, sizeof(*t));
	for (int s = 0; s < BLIP_SERIES; s++) {
		int nsteps = s % 4, pos[3];
		size_t n;

		place_steps(nsteps, pos);
		for (int i = 0; i < POINTS; i++) {
			int level = 5 + 2 * step;

			for (int j = 0; j < nsteps; j++)
				if (i >= pos[j])
					level += (j % 2 ? -1 : 1) * step;
			x[i] = level + (uniform() < blips);
		}
		if (cp_series_exact(x, POINTS, CP_DEFAULT_MIN_SIZE)) {
			t->taken_exact++;
			n = cp_exact(x, POINTS, ch, POINTS);
			if (n > POINTS)
				n = POINTS;
		} else {
			n = cp_edivisive(x, POINTS, &o, ch, POINTS);
			if (n == (size_t)-1)
				return -1;
			n = cp_min_change(x, POINTS, ch, n, MIN_CHANGE);
		}
		score(t, ch, n, pos, nsteps, false);
	}
	snprintf(label, sizeof(label), "exact counts, %.0f%% blips of +1", 100 * blips);
	printf("| %-28s | %2d count%s | %5zu | %5zu | %9.1f%% | %6.1f%% | %zu of %zu |\n", label, step,
	       step > 1 ? "s" : " ", t->steps, t->found,
	       t->reported ? 100.0 * (double)t->found / (double)t->reported : 100.0,
	       t->steps ? 100.0 * (double)t->found / (double)t->steps : 100.0, t->stationary_flagged,
	       t->stationary);
	return 0;
}

/*
 * A fleet's history: FLEET_SERIES series of FLEET_POINTS commits, the same
 * code change at the same commits in each series that moves (up at 30, down
 * at 55, up at FLEET_LAST_REGRESSION), in four kinds: exact counts that
 * move; exact counts of 5, stationary, 6 at 5% of commits (blips); noisy
 * (1% Gaussian) that move by 8 sigma; noisy, stationary, with 50% blips of
 * +1 count.  Each series is judged as history changes judges it: exact
 * when cp_series_exact says so (every change at its commit), else
 * E-divisive and cp_min_change with the medians of the levels either side.
 * Returns how many regressions come after commit SINCE (history changes
 * --since exits 1 when there is one), or -1 when out of memory; every step
 * must be found (exact at its commit, noisy within one) and no stationary
 * series may have a change, else *failures is counted up.
 */
#define FLEET_SERIES 40
#define FLEET_POINTS 120
#define FLEET_LAST_REGRESSION 80

static int run_fleet(size_t since, int *failures)
{
	static const int pos[3] = { 30, 55, FLEET_LAST_REGRESSION };
	struct cp_options o = { CP_DEFAULT_SIGNIFICANCE, CP_DEFAULT_PERMUTATIONS, CP_DEFAULT_MIN_SIZE, 1 };
	double x[FLEET_POINTS];
	struct cp_change ch[FLEET_POINTS];
	int after = 0;

	for (int s = 0; s < FLEET_SERIES; s++) {
		int kind = s % 4, nsteps = kind % 2 ? 0 : 3;
		bool noisy = kind >= 2, matched[3] = { false, false, false };
		double base = noisy ? 1e6 : 1000, sigma = 1e6 * SIGMA;
		size_t n;

		for (int i = 0; i < FLEET_POINTS; i++) {
			double level = kind == 1 || kind == 3 ? 5 : base;

			for (int j = 0; j < nsteps; j++)
				if (i >= pos[j])
					level += (j % 2 ? -1 : 1) * (noisy ? 8 * sigma : 7);
			x[i] = kind == 1 ? level + (uniform() < 0.05)
			       : kind == 3 ? level + (uniform() < 0.5)
			       : kind == 2 ? level + sigma * gauss() : level;
		}
		if (cp_series_exact(x, FLEET_POINTS, CP_DEFAULT_MIN_SIZE)) {
			n = cp_exact(x, FLEET_POINTS, ch, FLEET_POINTS);
			if (n > FLEET_POINTS)
				n = FLEET_POINTS;
		} else {
			n = cp_edivisive(x, FLEET_POINTS, &o, ch, FLEET_POINTS);
			if (n == (size_t)-1)
				return -1;
			n = cp_min_change(x, FLEET_POINTS, ch, n, MIN_CHANGE);
		}
		for (size_t c = 0; c < n; c++) {
			size_t lo = c ? ch[c - 1].index : 0, at = ch[c].index;
			size_t hi = c + 1 < n ? ch[c + 1].index : FLEET_POINTS;

			if (at > since && cp_median(x + at, hi - at) > cp_median(x + lo, at - lo))
				after++;
			for (int j = 0; j < nsteps; j++) {
				long d = (long)at - pos[j];

				if (!matched[j] && (noisy ? labs(d) <= 1 : d == 0))
					matched[j] = true;
			}
		}
		for (int j = 0; j < nsteps; j++)
			if (!matched[j]) {
				printf("FAIL: fleet series %d (%s): the step at commit %d not found\n", s,
				       noisy ? "noisy" : "exact", pos[j]);
				++*failures;
			}
		if (!nsteps && n) {
			printf("FAIL: fleet series %d (stationary, %s blips): %zu change(s), the first at commit %zu\n",
			       s, kind == 1 ? "5%" : "50%", n, ch[0].index);
			++*failures;
		}
	}
	return after;
}

/* One configuration: SERIES series, the i-th with i % 4 steps (0 to 3) of
 * k sigma (alternating up and down, the j-th of (1 + j/2) times that). */
static int run(const char *noise, double k, double outliers, bool exact, struct tally *t)
{
	struct cp_options o = { CP_DEFAULT_SIGNIFICANCE, CP_DEFAULT_PERMUTATIONS, CP_DEFAULT_MIN_SIZE, 1 };
	double x[POINTS], sigma = 1e6 * SIGMA;
	struct cp_change ch[POINTS];

	memset(t, 0, sizeof(*t));
	for (int s = 0; s < SERIES; s++) {
		int nsteps = s % 4, pos[3];
		size_t n;

		place_steps(nsteps, pos);
		for (int i = 0; i < POINTS; i++) {
			double level = 1e6;

			for (int j = 0; j < nsteps; j++)
				if (i >= pos[j])
					level += (j % 2 ? -1 : 1) * k * sigma * (1 + j / 2);
			x[i] = exact ? level : level + sigma * gauss();
			if (!exact && uniform() < outliers)
				x[i] += sigma * (5 + 15 * uniform());
		}
		if (exact)
			t->taken_exact += cp_series_exact(x, POINTS, CP_DEFAULT_MIN_SIZE) != 0;
		n = exact ? cp_exact(x, POINTS, ch, POINTS) : cp_edivisive(x, POINTS, &o, ch, POINTS);
		if (n == (size_t)-1)
			return -1;
		/* As pmcheck history changes reports them (--min-change). */
		if (!exact)
			n = cp_min_change(x, POINTS, ch, n, MIN_CHANGE);
		score(t, ch, n, pos, nsteps, exact);
	}
	printf("| %-28s | %5.1f | %5zu | %5zu | %9.1f%% | %6.1f%% | %zu of %zu |\n", noise, k, t->steps,
	       t->found, t->reported ? 100.0 * (double)t->found / (double)t->reported : 100.0,
	       t->steps ? 100.0 * (double)t->found / (double)t->steps : 100.0, t->stationary_flagged,
	       t->stationary);
	return 0;
}

int main(void)
{
	static const double ks[] = { 3, 5, 8, 12 };
	struct tally t;
	int failures = 0;

#define EXPECT(cond, ...)                                   \
	do {                                                \
		if (!(cond)) {                              \
			printf("FAIL: " __VA_ARGS__);       \
			printf("\n");                       \
			failures++;                         \
		}                                           \
	} while (0)

	printf("| noise | step (sigma) | steps | found | precision | recall | stationary flagged |\n");
	printf("|---|---:|---:|---:|---:|---:|---:|\n");
	if (run("none (exact series)", 1, 0, true, &t))
		return 2;
	EXPECT(t.found == t.steps && t.reported == t.steps, "exact: %zu of %zu steps, %zu reported", t.found,
	       t.steps, t.reported);
	EXPECT(t.taken_exact == SERIES, "exact: %zu of %d series taken as exact", t.taken_exact, SERIES);
	for (size_t i = 0; i < sizeof(ks) / sizeof(ks[0]); i++) {
		if (run("Gaussian", ks[i], 0, false, &t))
			return 2;
		EXPECT(t.stationary_flagged == 0, "Gaussian: %zu stationary series with a change",
		       t.stationary_flagged);
		if (ks[i] >= 5)
			EXPECT(t.found == t.steps, "Gaussian, %.0f sigma: %zu of %zu steps within one commit",
			       ks[i], t.found, t.steps);
	}
	for (size_t i = 0; i < sizeof(ks) / sizeof(ks[0]); i++) {
		if (run("Gaussian + 2% outliers", ks[i], 0.02, false, &t))
			return 2;
		EXPECT(t.stationary_flagged * 100 <= t.stationary, "outliers: %zu of %zu stationary series flagged",
		       t.stationary_flagged, t.stationary);
		if (ks[i] >= 5)
			EXPECT(t.found * 100 >= 97 * t.steps, "outliers, %.0f sigma: %zu of %zu steps", ks[i],
			       t.found, t.steps);
	}
	/* Exact counts with blips: noise, so no stationary series may report a
	 * change (one machine per commit, every run of a commit agreeing). */
	{
		static const double rates[] = { 0.05, 0.5 };
		static const int steps[] = { 1, 2, 5 };

		for (size_t i = 0; i < sizeof(rates) / sizeof(rates[0]); i++)
			for (size_t k = 0; k < sizeof(steps) / sizeof(steps[0]); k++) {
				if (run_blips(rates[i], steps[k], &t))
					return 2;
				EXPECT(t.stationary_flagged == 0, "blips %.0f%%: %zu of %zu stationary series with a change",
				       100 * rates[i], t.stationary_flagged, t.stationary);
				EXPECT(t.taken_exact * 10 <= BLIP_SERIES, "blips %.0f%%: %zu of %d series taken as exact",
				       100 * rates[i], t.taken_exact, BLIP_SERIES);
				if (steps[k] >= 2)
					EXPECT(t.found * 100 >= 97 * t.steps, "blips %.0f%%, %d counts: %zu of %zu steps",
					       100 * rates[i], steps[k], t.found, t.steps);
			}
	}
	/* The goal: after the last regression, changes --since exits 0;
	 * since two commits before it (a noisy step may be placed one early), 1. */
	{
		int after = run_fleet(FLEET_LAST_REGRESSION + 1, &failures);
		int before = run_fleet(FLEET_LAST_REGRESSION - 2, &failures);

		if (after < 0 || before < 0)
			return 2;
		printf("fleet of %d series: %d regression(s) after commit %d, %d after commit %d\n", FLEET_SERIES,
		       after, FLEET_LAST_REGRESSION + 1, before, FLEET_LAST_REGRESSION - 2);
		EXPECT(after == 0, "fleet: %d regression(s) after commit %d, the last regression's next: changes --since would exit 1",
		       after, FLEET_LAST_REGRESSION + 1);
		EXPECT(before == FLEET_SERIES / 2, "fleet: %d regression(s) after commit %d, expected %d (one per series that moves)",
		       before, FLEET_LAST_REGRESSION - 2, FLEET_SERIES / 2);
	}
	printf("history.changepoints: %s (%d failure(s))\n", failures ? "FAILED" : "ok", failures);
	return failures ? 1 : 0;
}
