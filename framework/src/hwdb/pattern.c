/* SPDX-License-Identifier: MIT */
/*
 * The map's signature patterns: POSIX extended regular expressions,
 * refused before regcomp when their compiled size could explode.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <regex.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <pmcheck/event.h>
#include <pmcheck/hwdb.h>
#include <pmcheck/machine.h>

#include "hwdb_int.h"

/*
 * glibc's regcomp copies the subtree under "x+" once and under "x{n,m}" up
 * to m times, and the copies multiply when repetitions stack or nest: while
 * fuzzing, "n++++...+" (80 pluses) and "(a{900}){900}" each asked for more
 * than 2 GB.  A signature is a few dozen characters, so a map pattern is
 * refused when its estimated compiled size (atoms, each multiplied by the
 * repetitions applied to it and to the groups around it) is above
 * MAP_PATTERN_COST, before regcomp sees it.
 */
#define MAP_PATTERN_MAX 255
#define MAP_PATTERN_COST 4096
#define MAP_GROUP_DEPTH 16

static uint64_t cost_mul(uint64_t a, uint64_t b)
{
	return a > MAP_PATTERN_COST || b > MAP_PATTERN_COST ? MAP_PATTERN_COST + 1 : a * b;
}

/* Estimated number of nodes regcomp builds for `pattern` (saturates). */
static uint64_t map_pattern_cost(const char *pattern)
{
	/* Per open group: the cost so far and the cost of its last item. */
	uint64_t total[MAP_GROUP_DEPTH + 1] = { 0 }, last[MAP_GROUP_DEPTH + 1] = { 0 };
	bool quantified = false; /* the previous item was a repetition operator */
	int depth = 0;

	for (const char *p = pattern; *p; p++) {
		uint64_t mul = 0;

		switch (*p) {
		case '(':
			if (depth == MAP_GROUP_DEPTH)
				return MAP_PATTERN_COST + 1;
			depth++;
			total[depth] = last[depth] = 0;
			quantified = false;
			continue;
		case ')':
			if (depth == 0)
				break; /* regcomp reports the unbalanced parenthesis */
			last[depth - 1] = total[depth] + 1;
			total[depth - 1] += last[depth - 1];
			depth--;
			quantified = false;
			continue;
		case '+':
			mul = 2;
			break;
		case '*':
		case '?':
			/* No copies, but each adds alternatives to every epsilon closure. */
			mul = 2;
			break;
		case '{': {
			char *end;
			uint64_t lo = strtoull(p + 1, &end, 10), hi = lo;

			if (*end == ',')
				hi = end[1] == '}' ? lo + 1 : strtoull(end + 1, &end, 10);
			mul = (hi > lo ? hi : lo) + 1;
			if (*end == '}')
				p = end;
			break;
		}
		case '[':
			/* A bracket expression is one atom; "[]...]" and "[^]...]" start with a
			 * literal ']'. */
			p++;
			if (*p == '^')
				p++;
			if (*p == ']')
				p++;
			while (*p && *p != ']')
				p++;
			if (!*p)
				p--; /* regcomp reports the unbalanced bracket */
			last[depth] = 1;
			total[depth] += 1;
			quantified = false;
			continue;
		case '\\':
			/* glibc accepts back-references in EREs; matching them is
			 * exponential and a signature never needs one. */
			if (p[1] >= '1' && p[1] <= '9')
				return UINT64_MAX;
			if (p[1])
				p++;
			break;
		default:
			break;
		}
		if (mul && quantified)
			return UINT64_MAX - 1; /* stacked repetition: undefined in POSIX EREs */
		quantified = mul != 0;
		if (mul) {
			uint64_t grown = cost_mul(last[depth] ? last[depth] : 1, mul);

			total[depth] = total[depth] - last[depth] + grown;
			last[depth] = grown;
		} else {
			last[depth] = 1;
			total[depth] += 1;
		}
		if (total[depth] > MAP_PATTERN_COST)
			return MAP_PATTERN_COST + 1;
	}
	while (depth > 0) {
		total[depth - 1] += total[depth];
		depth--;
	}
	return total[0];
}

int pmc__map_pattern_compile(regex_t *re, const char *pattern, char *why, size_t why_size)
{
	size_t len = strlen(pattern);
	int rc;

	if (len > MAP_PATTERN_MAX) {
		pmc__snprintf(why, why_size, "pattern is %zu characters; at most %d allowed", len,
			      MAP_PATTERN_MAX);
		return -1;
	}
	if (map_pattern_cost(pattern) == UINT64_MAX - 1) {
		pmc__snprintf(why, why_size,
			      "a repetition operator follows another (\"+?\", \"*+\", ...): undefined in "
			      "POSIX EREs; write one operator");
		return -1;
	}
	if (map_pattern_cost(pattern) == UINT64_MAX) {
		pmc__snprintf(why, why_size, "back-references (\\1..\\9) are not allowed in map patterns");
		return -1;
	}
	if (map_pattern_cost(pattern) > MAP_PATTERN_COST) {
		pmc__snprintf(why, why_size,
			      "repetitions make this pattern too large to compile (stacked or nested "
			      "'+' and {n,m}); write the alternatives out, e.g. (8E|9E)");
		return -1;
	}
	rc = regcomp(re, pattern, REG_EXTENDED | REG_NOSUB);
	if (rc) {
		regerror(rc, re, why, why_size);
		return -1;
	}
	return 0;
}
