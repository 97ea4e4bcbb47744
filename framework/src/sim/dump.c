/* SPDX-License-Identifier: MIT */
/*
 * callgrind's dump format: the column names, the events: line and the
 * totals of a dump.  The bottom of the sim folder: the callgrind engine,
 * the function table and calls: all read dumps through this.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pmcheck/sim.h>

#include "sim_api.h"

static const char *const column_names[PMC_SIM_NCOLUMNS] = {
	"Ir", "Dr", "Dw", "I1mr", "D1mr", "D1mw", "ILmr", "DLmr", "DLmw", "Bc", "Bcm", "Bi", "Bim",
};

const char *pmc_sim_column_name(unsigned column)
{
	return column < PMC_SIM_NCOLUMNS ? column_names[column] : NULL;
}

int pmc__sim_column_of(const char *name, size_t len)
{
	for (unsigned c = 0; c < PMC_SIM_NCOLUMNS; c++)
		if (strlen(column_names[c]) == len && !strncmp(column_names[c], name, len))
			return (int)c;
	return -1;
}

/* ---- dump files --------------------------------------------------------------------- */

int pmc__sim_events_line(const char *q, const char *e, int *map, int max)
{
	int n = 0;

	while (q < e) {
		const char *w;

		while (q < e && (*q == ' ' || *q == '\t'))
			q++;
		w = q;
		while (q < e && *q != ' ' && *q != '\t' && *q != '\r')
			q++;
		if (q == w)
			break;
		if (n == max)
			return -1;
		map[n++] = pmc__sim_column_of(w, (size_t)(q - w));
	}
	return n;
}

static const char *line_end(const char *p, const char *end)
{
	const char *nl = memchr(p, '\n', (size_t)(end - p));

	return nl ? nl : end;
}

int pmc_sim_dump_parse(const char *name, const char *text, size_t len, struct pmc_sim_dump *out,
		       struct pmc_error *err)
{
	const char *p = text, *end = text + len;
	int map[64], nevents = -1, line = 0, have_totals = 0;

	memset(out, 0, sizeof(*out));
	while (p < end) {
		const char *e = line_end(p, end);
		size_t n = (size_t)(e - p);

		line++;
		if (n > 6 && !strncmp(p, "desc: ", 6)) {
			if (n > 15 && !strncmp(p + 6, "Trigger: ", 9))
				snprintf(out->trigger, sizeof(out->trigger), "%.*s", (int)(n - 15),
					 p + 15);
			else if (memmem(p, n, " cache: ", 8)) {
				size_t used = strlen(out->caches);

				snprintf(out->caches + used, sizeof(out->caches) - used, "%s%.*s",
					 used ? "; " : "", (int)(n - 6), p + 6);
			}
		} else if (n >= 7 && !strncmp(p, "events:", 7)) {
			nevents = pmc__sim_events_line(p + 7, e, map, 64);
			if (nevents < 0)
				return pmc__fail(err, PMC_E_SYNTAX, name, line,
						 "%s:%d: more than %zu events on the events: line",
						 name, line, sizeof(map) / sizeof(map[0]));
			for (int k = 0; k < nevents; k++)
				if (map[k] >= 0)
					out->present |= 1u << map[k];
		} else if ((n >= 8 && !strncmp(p, "summary:", 8)) || (n >= 7 && !strncmp(p, "totals:", 7))) {
			/*
			 * Both lines hold the interval's costs.  totals: is the
			 * sum of the cost lines the dump prints, and callgrind
			 * leaves some of the interval's cost out of those lines
			 * (measured: a region around one snprintf(3) 56
			 * instructions, loads and branches more than executed,
			 * and 50 more on its first call); summary: is callgrind's
			 * running total, which agrees with pmcheck's own tool to
			 * the instruction.  So summary: wins; totals: serves a
			 * dump that has no summary: line.
			 */
			int is_summary = p[0] == 's', width = is_summary ? 8 : 7, k = 0;
			const char *what = is_summary ? "summary:" : "totals:";
			const char *q = p + width;
			uint64_t v_line[PMC_SIM_NCOLUMNS] = { 0 };

			if (nevents < 0)
				return pmc__fail(err, PMC_E_SYNTAX, name, line,
						 "%s:%d: %s before the events: line", name, line, what);
			while (q < e) {
				char *stop;
				unsigned long long v;

				while (q < e && (*q == ' ' || *q == '\t' || *q == '\r'))
					q++;
				if (q == e)
					break;
				if (*q < '0' || *q > '9')
					return pmc__fail(err, PMC_E_SYNTAX, name, line,
							 "%s:%d: expected a count in %s found \"%.*s\"",
							 name, line, what, (int)(e - q), q);
				errno = 0;
				v = strtoull(q, &stop, 10);
				if (errno)
					return pmc__fail(err, PMC_E_SYNTAX, name, line,
							 "%s:%d: count out of range in %s", name, line, what);
				if (k >= nevents)
					return pmc__fail(err, PMC_E_SYNTAX, name, line,
							 "%s:%d: %s has more figures than the %d events named",
							 name, line, what, nevents);
				if (map[k] >= 0)
					v_line[map[k]] = v;
				k++;
				q = stop;
			}
			/* Fewer figures than events: callgrind omits trailing zeros. */
			if (is_summary || have_totals != 2)
				memcpy(out->totals, v_line, sizeof(v_line));
			have_totals = is_summary ? 2 : have_totals ? have_totals : 1;
		}
		p = e < end ? e + 1 : end;
	}
	if (nevents < 0)
		return pmc__fail(err, PMC_E_SYNTAX, name, -1,
				 "%s: no events: line (not a callgrind dump?)", name);
	if (!have_totals)
		return pmc__fail(err, PMC_E_SYNTAX, name, -1,
				 "%s: no totals: line (a truncated callgrind dump?)", name);
	return 0;
}

