/* SPDX-License-Identifier: MIT */
/*
 * Counter kinds checked on known work (machine.h): a kind that opens but
 * does not count must never decide a verdict.  Each check opens its own
 * event, does a known amount of work, reads, closes, and remembers the
 * answer for the rest of the process.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <pmcheck/counters.h>
#include <pmcheck/machine.h>

#include "core_int.h"
#include "counters_int.h"
#include "command.h"
#include "sim/sim_api.h"

#define CHECK_WORK 64u
#define CHECK_LOOP 10000u

/* Each kind's check: its known work and what its verdict says.  The work
 * is named per row, so a new kind is one row and never depends on where
 * it falls in the enum. */
enum check_work {
	WORK_EXACT, /* CHECK_WORK events, each counted once: equal or wrong */
	WORK_LOOP,  /* a loop of CHECK_LOOP iterations: at least one each */
	WORK_TIME,  /* the same loop, counted in time: anything above zero */
};
static const struct {
	const char *name;   /* PMCHECK_FAULT_CHECKS and JSON */
	const char *plural; /* the sentence's subject */
	const char *unit;   /* what the work is made of */
	const char *event;  /* parsed, for the kinds that have a string form */
	enum check_work work;
	bool fires;	    /* a debug exception: "never fire", not "never count" */
} kinds[PMC_KIND_CHECKS] = {
	[PMC_KIND_CHECK_BP_WRITE] = { "breakpoint-write", "write breakpoints", "stores", NULL, WORK_EXACT, true },
	[PMC_KIND_CHECK_BP_RW] = { "breakpoint-rw", "read-write breakpoints", "loads and stores", NULL, WORK_EXACT, true },
	[PMC_KIND_CHECK_BP_EXEC] = { "breakpoint-exec", "execute breakpoints", "calls", NULL, WORK_EXACT, true },
	[PMC_KIND_CHECK_UPROBE] = { "uprobe", "uprobes (calls:)", "calls", "calls:pmc__kind_check_callee", WORK_EXACT, false },
	[PMC_KIND_CHECK_TRACEPOINT] = { "tracepoint", "tracepoints", "getppid(2) calls", "syscalls:sys_enter_getppid", WORK_EXACT, false },
	[PMC_KIND_CHECK_PAGE_FAULTS] = { "page-faults", "page-fault counters", "first writes to fresh pages", "page-faults:u", WORK_EXACT, false },
	[PMC_KIND_CHECK_INSTRUCTIONS] = { "instructions", "instruction counters", "loop iterations", "instructions:u", WORK_LOOP, false },
	[PMC_KIND_CHECK_BRANCHES] = { "branches", "branch counters", "loop iterations", "branches:u", WORK_LOOP, false },
	[PMC_KIND_CHECK_CYCLES] = { "cycles", "cycle counters", "loop iterations", "cycles:u", WORK_TIME, false },
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct pmc_kind_check done[PMC_KIND_CHECKS];
/* The uprobe check's set, closed by the process's exit (see run_check). */
static struct pmc_counters *uprobe_kept;

const char *pmc_kind_check_name(enum pmc_kind_check_id id)
{
	return (unsigned)id < PMC_KIND_CHECKS ? kinds[id].name : "?";
}

const char *pmc_kind_status_name(enum pmc_kind_status status)
{
	switch (status) {
	case PMC_KIND_COUNTS:
		return "available";
	case PMC_KIND_NOT_COUNTING:
		return "opens but does not count";
	case PMC_KIND_UNAVAILABLE:
		return "unavailable";
	}
	return "?";
}

int pmc_kind_check_of(const struct pmc_event_spec *s)
{
	switch (s->kind) {
	case PMC_KIND_BREAKPOINT:
#if defined(__x86_64__) || defined(__i386__)
		/* x86 has no read-only breakpoint: the open explains that. */
		if (s->bp_type == HW_BREAKPOINT_R)
			return -1;
#endif
		/* A length no debug register takes: the open says so. */
		if (s->bp_type != HW_BREAKPOINT_X && (s->bp_len < 1 || s->bp_len > 8))
			return -1;
		return s->bp_type == HW_BREAKPOINT_X   ? PMC_KIND_CHECK_BP_EXEC
		       : s->bp_type == HW_BREAKPOINT_W ? PMC_KIND_CHECK_BP_WRITE
						       : PMC_KIND_CHECK_BP_RW;
	case PMC_KIND_UPROBE:
		return PMC_KIND_CHECK_UPROBE;
	case PMC_KIND_TRACEPOINT:
		return PMC_KIND_CHECK_TRACEPOINT;
	case PMC_KIND_SOFTWARE:
		return s->config == PERF_COUNT_SW_PAGE_FAULTS ||
				       s->config == PERF_COUNT_SW_PAGE_FAULTS_MIN
			       ? PMC_KIND_CHECK_PAGE_FAULTS
			       : -1;
	case PMC_KIND_HARDWARE:
		if (s->config == PERF_COUNT_HW_BRANCH_INSTRUCTIONS)
			return PMC_KIND_CHECK_BRANCHES;
		if (s->config == PERF_COUNT_HW_CPU_CYCLES || s->config == PERF_COUNT_HW_REF_CPU_CYCLES)
			return PMC_KIND_CHECK_CYCLES;
		return PMC_KIND_CHECK_INSTRUCTIONS;
	default:
		/* Any other event of the CPU's PMU: does that PMU count at all? */
		return s->uses_hw_counter ? PMC_KIND_CHECK_INSTRUCTIONS : -1;
	}
}

/* The known work.  Out of line and not cloned, so the breakpoints and the
 * uprobe have one address to watch and the compiler cannot fold the work. */
static volatile long check_word;

PMC__NOIPA __attribute__((used)) void pmc__kind_check_callee(void)
{
	__asm__ __volatile__("" ::: "memory");
}

static PMC__NOIPA void check_loop(unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		__asm__ __volatile__("" ::: "memory");
}

/* The next comma- or space-separated word of *list (its length in *n), or
 * NULL after the last. */
static const char *next_word(const char **list, size_t *n)
{
	const char *w = *list + strspn(*list, ", ");

	*n = strcspn(w, ", ");
	*list = w + *n;
	return *n ? w : NULL;
}

static bool word_is(const char *w, size_t n, const char *name)
{
	return strlen(name) == n && !strncmp(w, name, n);
}

/* Is the kind named in PMCHECK_FAULT_CHECKS? */
static int fault_injected(enum pmc_kind_check_id id)
{
	const char *list = getenv("PMCHECK_FAULT_CHECKS"), *w;
	size_t n;

	while (list && (w = next_word(&list, &n)))
		if (word_is(w, n, "all") || word_is(w, n, kinds[id].name) ||
		    (word_is(w, n, "breakpoint") && !strncmp(kinds[id].name, "breakpoint-", 11)))
			return 1;
	return 0;
}

int pmc__fault_switch_check(char *why, size_t size)
{
	const char *list = getenv("PMCHECK_FAULT_CHECKS"), *w;
	size_t n, used;

	while (list && (w = next_word(&list, &n))) {
		bool known = word_is(w, n, "all") || word_is(w, n, "breakpoint");
		char shown[72];

		for (size_t i = 0; i < PMC_KIND_CHECKS && !known; i++)
			known = word_is(w, n, kinds[i].name);
		for (size_t i = 0; pmc__sim_fault_name(i) && !known; i++)
			known = word_is(w, n, pmc__sim_fault_name(i));
		if (known)
			continue;
		snprintf(shown, sizeof(shown), "%.*s", (int)(n > 64 ? 64 : n), w);
		pmc__escape_ctl(shown, sizeof(shown), shown);
		used = (size_t)snprintf(why, size,
					"PMCHECK_FAULT_CHECKS names \"%s\", which is no fault switch; name some of all, breakpoint",
					shown);
		for (size_t i = 0; i < PMC_KIND_CHECKS && used < size; i++)
			used += (size_t)snprintf(why + used, size - used, ", %s", kinds[i].name);
		for (size_t i = 0; pmc__sim_fault_name(i) && used < size; i++)
			used += (size_t)snprintf(why + used, size - used, ", %s", pmc__sim_fault_name(i));
		if (used < size)
			snprintf(why + used, size - used, " (separated by commas), or unset it");
		return -EINVAL;
	}
	return 0;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The spec a check counts with, or the reason there is none. */
static int check_spec(enum pmc_kind_check_id id, struct pmc_event_spec *s, struct pmc_error *err)
{
	static volatile long *const word = &check_word;

	switch (id) {
	case PMC_KIND_CHECK_BP_WRITE:
		return pmc_event_breakpoint(s, (const void *)word, sizeof(*word), PMC_BP_W, err);
	case PMC_KIND_CHECK_BP_RW:
		return pmc_event_breakpoint(s, (const void *)word, sizeof(*word), PMC_BP_RW, err);
	case PMC_KIND_CHECK_BP_EXEC:
		return pmc_event_breakpoint(s, (const void *)(uintptr_t)pmc__kind_check_callee, 0,
					    PMC_BP_X, err);
	default:
		return pmc_event_parse(kinds[id].event, s, err);
	}
}

/* The page-fault check's stores, outside AddressSanitizer's checks: its
 * shadow memory would fault pages of its own (8 per 64 pages). */
#if defined(__SANITIZE_ADDRESS__) || defined(__clang__)
__attribute__((no_sanitize("address")))
#endif
static void first_writes(char *pages, size_t page)
{
	for (unsigned i = 0; i < CHECK_WORK; i++)
		((volatile char *)pages)[(size_t)i * page] = 1;
}

/* Do the kind's known work between two reads; the figure it should give
 * is CHECK_WORK, or at least CHECK_LOOP for the loop kinds. */
static int count_work(enum pmc_kind_check_id id, struct pmc_counters *set, uint64_t *counted)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct pmc_reading a, b;
	char *pages = NULL;
	long sink = 0;

	if (id == PMC_KIND_CHECK_PAGE_FAULTS) {
		/* Fresh anonymous pages, no huge pages: one fault per first write. */
		pages = mmap(NULL, CHECK_WORK * page, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (pages == MAP_FAILED)
			return -errno;
		madvise(pages, CHECK_WORK * page, MADV_NOHUGEPAGE);
	}
	pmc_counters_read(set, &a);
	switch (id) {
	case PMC_KIND_CHECK_BP_WRITE:
		for (unsigned i = 0; i < CHECK_WORK; i++)
			check_word = i;
		break;
	case PMC_KIND_CHECK_BP_RW:
		for (unsigned i = 0; i < CHECK_WORK / 2; i++) {
			check_word = i;
			sink += check_word;
		}
		break;
	case PMC_KIND_CHECK_BP_EXEC:
	case PMC_KIND_CHECK_UPROBE:
		for (unsigned i = 0; i < CHECK_WORK; i++)
			pmc__kind_check_callee();
		break;
	case PMC_KIND_CHECK_TRACEPOINT:
		for (unsigned i = 0; i < CHECK_WORK; i++)
			sink += syscall(SYS_getppid);
		break;
	case PMC_KIND_CHECK_PAGE_FAULTS:
		first_writes(pages, page);
		break;
	default:
		check_loop(CHECK_LOOP);
		break;
	}
	pmc_counters_read(set, &b);
	if (pages)
		munmap(pages, CHECK_WORK * page);
	(void)sink;
	*counted = b.c[0].value - a.c[0].value;
	return 0;
}

static int counts_as_expected(enum pmc_kind_check_id id, uint64_t counted)
{
	switch (kinds[id].work) {
	case WORK_LOOP:
		/* At least one per iteration; an upper bound would be a guess
		 * about the compiler's loop. */
		return counted >= CHECK_LOOP;
	case WORK_TIME:
		return counted > 0;
	case WORK_EXACT:
		break;
	}
	return counted == CHECK_WORK;
}

static void run_check(enum pmc_kind_check_id id, struct pmc_kind_check *c)
{
	struct pmc_event_spec spec;
	struct pmc_counters *set = NULL;
	struct pmc_error err;
	uint64_t t0 = now_ns();
	uint64_t work = kinds[id].work == WORK_EXACT ? CHECK_WORK : CHECK_LOOP;
	int rc;

	memset(c, 0, sizeof(*c));
	c->id = id;
	c->work = work;
	rc = check_spec(id, &spec, &err);
	/* User space only: it is what a verdict rests on, and it opens for
	 * users that may not watch the kernel. */
	if (!rc)
		spec.exclude_kernel = spec.exclude_hv = 1;
	if (!rc)
		rc = pmc__counters_open_set(&set, &spec, 1, PMC_OPEN_NO_USER_READ, 0, &err);
	if (!rc)
		rc = pmc_counters_enable(set);
	if (!rc)
		rc = count_work(id, set, &c->counted);
	/* A uprobe's removal waits ~50 ms for the kernel; the process's exit
	 * pays it once instead of this call.  pmcheck probe runs this check
	 * in a process of its own. */
	if (id == PMC_KIND_CHECK_UPROBE && !rc)
		uprobe_kept = set;
	else
		pmc_counters_close(set);
	c->cost_ns = now_ns() - t0;
	if (rc) {
		c->status = PMC_KIND_UNAVAILABLE;
		c->error = rc;
		snprintf(c->summary, sizeof(c->summary), "%s: %.400s", kinds[id].plural,
			 err.message[0] ? err.message : pmc_strerror(rc));
		return;
	}
	c->injected = fault_injected(id);
	if (c->injected)
		c->counted = 0;
	c->status = counts_as_expected(id, c->counted) ? PMC_KIND_COUNTS : PMC_KIND_NOT_COUNTING;
	if (c->status == PMC_KIND_COUNTS)
		snprintf(c->summary, sizeof(c->summary),
			 "%s count: a check of %" PRIu64 " %s counted %" PRIu64, kinds[id].plural,
			 work, kinds[id].unit, c->counted);
	else
		snprintf(c->summary, sizeof(c->summary),
			 "%s open but %s on this machine: a check of %" PRIu64 " %s counted %" PRIu64 "%s",
			 kinds[id].plural,
			 c->counted ? "miscount"
			 : kinds[id].fires ? "never fire"
							: "never count",
			 work, kinds[id].unit, c->counted,
			 c->injected ? " (fault injected: PMCHECK_FAULT_CHECKS)"
			 : kinds[id].fires && !c->counted
				 ? " (a hypervisor that does not deliver debug exceptions to its guest does this)"
				 : "");
}

int pmc_kind_check(enum pmc_kind_check_id id, struct pmc_kind_check *out)
{
	struct pmc_kind_check c;

	if ((unsigned)id >= PMC_KIND_CHECKS)
		return -EINVAL;
	pthread_mutex_lock(&lock);
	if (done[id].status != PMC_KIND_COUNTS && done[id].status != PMC_KIND_NOT_COUNTING) {
		run_check(id, &c);
		done[id] = c;
	}
	c = done[id];
	pthread_mutex_unlock(&lock);
	if (out)
		*out = c;
	return c.status == PMC_KIND_COUNTS	  ? 0
	       : c.status == PMC_KIND_NOT_COUNTING ? PMC_E_NOT_COUNTING
						   : c.error;
}

int pmc__kinds_vouch(const struct pmc_event_spec *specs, size_t n, struct pmc_error *err)
{
	unsigned asked = 0;

	for (size_t i = 0; i < n; i++) {
		struct pmc_kind_check c;
		int id = pmc_kind_check_of(&specs[i]);

		/* The uprobe check is pmcheck probe's: see machine.h. */
		if (id < 0 || id == PMC_KIND_CHECK_UPROBE || (asked & (1u << id)))
			continue;
		asked |= 1u << id;
		if (pmc_kind_check((enum pmc_kind_check_id)id, &c) == PMC_E_NOT_COUNTING)
			return pmc__fail(err, PMC_E_NOT_COUNTING, specs[i].name, -1,
					 "cannot count \"%s\": %.300s; no verdict can rest on it here (pmcheck probe lists what counts on this machine)",
					 specs[i].name, c.summary);
	}
	return 0;
}
