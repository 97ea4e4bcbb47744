/* SPDX-License-Identifier: MIT */
/*
 * The program's side of the sim backend, the same under either engine.
 *
 * Misses depend on everything the caches and branch predictor saw before
 * a region began, readings included.  So from the first sim set on, the
 * program executes the same instructions and touches the same memory
 * whichever engine counts it, and each engine's own work happens where
 * neither model sees it: in valgrind's handling of a request, or in
 * collect, which valgrind's core calls on the host CPU
 * (VALGRIND_NON_SIMD_CALL1).  The requests are callgrind's, which
 * pmcheck's valgrind tool answers too (pmcheck_tool.h):
 *   set open     engine init (known work, the run's columns), watches,
 *                then START_INSTRUMENTATION when the run defers it: the
 *                models start here, empty, in both;
 *   a reading    DUMP_STATS_AT (callgrind dumps; the tool writes its
 *                counters), then collect (callgrind's dump parsed; the
 *                tool's counters checked);
 *   pause        STOP_INSTRUMENTATION;
 *   attribution  the last reading's dump kept natively (pmc_sim_keep_dump).
 * A build of the tool of protocol 2 has no models and knows none of
 * callgrind's requests: it is read with its own request.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <asm/prctl.h>
#endif

#include <valgrind/callgrind.h>
#include <valgrind/valgrind.h>

#include <pmcheck/reading.h>
#include <pmcheck/sim.h>

#include "engine.h"
#include "sim_api.h"
#include "sim_harness.h"

static struct {
	pid_t pid;         /* the process init ran in */
	unsigned columns;  /* what this run counts */
	unsigned nread;    /* counters a reading gathers: the fixed ones and the watched */
	unsigned protocol; /* the tool's, or 3 for callgrind (every column) */
	int started;       /* this process started the deferred instrumentation */
} lockstep;

/* The engine of this process, found at its first sim set. */
static const struct pmc__sim_engine *engine;

const struct pmc__sim_engine *pmc__sim_engine_here(void)
{
	if (!engine)
		engine = pmc__sim_tool_protocol() ? &pmc__sim_tool : &pmc__sim_callgrind;
	return engine;
}

const char *pmc_sim_engine(void)
{
	return pmc_sim_active() ? pmc__sim_engine_here()->name : NULL;
}

const char *pmc_sim_fallback(void)
{
	if (!pmc_sim_active() || strcmp(pmc__sim_engine_here()->name, "callgrind"))
		return NULL;
	return pmc__sim_run()->fallback[0] ? pmc__sim_run()->fallback : NULL;
}

int pmc_sim_children(uint64_t *ended, uint64_t *execed)
{
	const struct pmc__sim_engine *e = pmc_sim_active() ? pmc__sim_engine_here() : NULL;

	if (!e || !e->children)
		return -ENOTSUP;
	return e->children(ended, execed);
}


/* Which counter of a reading a callgrind column is; -1 for the misses of
 * a tool build of protocol 2. */
static int counter_of(unsigned column)
{
	if (column >= PMC_SIM_NCOLUMNS ||
	    (lockstep.protocol < 3 && pmc__sim_counter[column] >= PMC_TOOL_NFIXED_2))
		return -1;
	return pmc__sim_counter[column];
}

int pmc__sim_check(unsigned mask, const char *name, struct pmc_error *err)
{
	unsigned missing;

	if (!RUNNING_ON_VALGRIND)
		return pmc__fail(err, PMC_E_NO_SIM, "", -1,
				 "the sim backend counts only under valgrind: run the suite with --backend=sim, or the program with `pmcheck sim -- PROGRAM`");
	if (!getenv(SIM_ENV_DIR))
		return pmc__fail(err, PMC_E_NO_SIM, "", -1,
				 "running under valgrind, but not as the sim backend starts it (no " SIM_ENV_DIR "): use --backend=sim or `pmcheck sim -- PROGRAM` rather than calling valgrind yourself");
	if (lockstep.pid != getpid()) {
		int rc = pmc__sim_engine_here()->init(&lockstep.columns, err);

		if (rc)
			return rc;
		lockstep.protocol = engine == &pmc__sim_tool ? pmc__sim_tool_protocol() : 3;
		if (lockstep.nread < PMC_TOOL_NFIXED)
			lockstep.nread = PMC_TOOL_NFIXED;
		lockstep.pid = getpid();
	}
	missing = mask & ~lockstep.columns & ((1u << PMC_SIM_NCOLUMNS) - 1);
	return missing ? engine->refuse(missing, name, err) : 0;
}

int pmc__sim_calls_watch(const struct pmc_event_spec *s, unsigned *slot, struct pmc_error *err)
{
	int rc = pmc__sim_engine_here()->watch(s, slot, err);

	if (rc == 0 && *slot + 1 > lockstep.nread)
		lockstep.nread = *slot + 1;
	return rc;
}

void pmc__sim_start(void)
{
	/* What ran before (start-up, the case's set-up) ran at valgrind's
	 * plain speed, and the models start empty here. */
	if (!lockstep.started && pmc__sim_run()->deferred) {
		CALLGRIND_START_INSTRUMENTATION;
		lockstep.started = 1;
	}
}

void pmc_sim_pause(void)
{
	if (lockstep.started && RUNNING_ON_VALGRIND) {
		CALLGRIND_STOP_INSTRUMENTATION;
		lockstep.started = 0;
	}
}

/* ---- collect, on the host CPU ------------------------------------------------------- */

/*
 * valgrind's core calls this on the host CPU, with the host thread's TLS
 * register, which is not the program's: glibc (errno, the locale, the
 * stack protector's canary) reads the program's thread pointer from it.
 * So the program's is set for the call and the host's put back, with
 * system calls and register moves glibc does not see.
 */
#if defined(__x86_64__)
static long raw_syscall2(long number, long a, long b)
{
	long rc;

	__asm__ volatile("syscall" : "=a"(rc) : "a"(number), "D"(a), "S"(b) : "rcx", "r11", "memory");
	return rc;
}

static void *swap_thread_pointer(void *to)
{
	unsigned long host = 0;

	raw_syscall2(SYS_arch_prctl, ARCH_GET_FS, (long)&host);
	raw_syscall2(SYS_arch_prctl, ARCH_SET_FS, (long)to);
	return (void *)host;
}
#elif defined(__aarch64__)
static void *swap_thread_pointer(void *to)
{
	void *host;

	__asm__ volatile("mrs %0, tpidr_el0\n\tmsr tpidr_el0, %1" : "=&r"(host) : "r"(to) : "memory");
	return host;
}
#else
#error "the sim backend's native collect needs this architecture's thread pointer"
#endif

#if defined(__has_attribute)
#if __has_attribute(no_stack_protector)
#define NO_CANARY __attribute__((no_stack_protector))
#endif
#endif
#ifndef NO_CANARY
#define NO_CANARY
#endif

/* A call valgrind's core makes on the host CPU. */
struct native_call {
	int (*fn)(void *arg);
	void *arg;
	void *thread_pointer; /* the calling thread's */
	int rc;
};

/* No canary here: the thread pointer it would be read through is the
 * host's until swapped.  The tool's side uses no glibc and needs no swap
 * (three system calls, which a reading would otherwise cost). */
NO_CANARY static unsigned long run_natively(unsigned long tid, unsigned long arg)
{
	struct native_call *call = (struct native_call *)arg;
	int libc = engine != &pmc__sim_tool;
	void *host = libc ? swap_thread_pointer(call->thread_pointer) : NULL;

	(void)tid;
	call->rc = call->fn(call->arg);
	if (libc)
		swap_thread_pointer(host);
	return 0;
}

/* fn(arg) on the host CPU (under valgrind; directly elsewhere). */
static int natively(int (*fn)(void *), void *arg)
{
	struct native_call call = { fn, arg, __builtin_thread_pointer(), 0 };

	if (!RUNNING_ON_VALGRIND)
		return fn(arg);
	(void)VALGRIND_NON_SIMD_CALL1(run_natively, &call);
	return call.rc;
}

static int collect(void *x)
{
	return engine->collect(x);
}

struct keep {
	char *paths;
	size_t size;
	size_t *kept;
	size_t max;
	unsigned long written; /* the tool wrote the interval's functions */
};

static int keep(void *arg)
{
	struct keep *k = arg;

	if (k->written || pmc_sim_claim_dump(k->paths + *k->kept * k->size, k->size) == 0)
		(*k->kept)++;
	return 0;
}

/*
 * The program asks pmcheck's valgrind tool for the last interval's
 * functions under either engine: callgrind answers the default, 0, and
 * its dump is claimed natively.  The request's code is the same whatever
 * the answer, and the answer is only looked at natively, so both engines
 * run the same instructions here.
 */
void pmc_sim_keep_dump(char *paths, size_t size, size_t *kept, size_t max)
{
	struct keep k = { paths, size, kept, max, 0 };

	if (*kept >= max)
		return;
	k.written = VALGRIND_DO_CLIENT_REQUEST_EXPR(0, PMC_TOOL_REQ_FUNCTIONS, paths + *kept * size,
						    size, 0, 0, 0);
	natively(keep, &k);
}

const char *pmc_sim_functions_missing(void)
{
	if (!pmc_sim_active() || strcmp(pmc__sim_engine_here()->name, "pmcheck"))
		return NULL;
	return pmc__sim_run()->nofunctions[0] ? pmc__sim_run()->nofunctions : NULL;
}

/* ---- readings ------------------------------------------------------------------------ */

/* pmc_sim_keep_next's: the interval the next reading begins is kept. */
static int keep_next;

void pmc_sim_keep_next(int keep)
{
	keep_next = keep != 0;
}

/* The last failed reading's words: the counting core reads without an
 * error struct (the hot path), and the harness asks for them. */
static struct pmc_error read_error;

int pmc__sim_read(const unsigned *masks, size_t n, uint64_t t0, unsigned flags,
		  struct pmc_reading *r, struct pmc_error *err)
{
	uint64_t c[PMC__SIM_NCOUNTERS], t;
	struct pmc__sim_exchange x;

	/* No stale words: a failure that sets no message leaves none. */
	read_error.code = 0;
	if (err)
		err->code = 0;
	x.dump.counters = (uintptr_t)c;
	x.dump.n = lockstep.nread;
	x.dump.ended_too = (flags & PMC_OPEN_INHERIT) != 0;
	x.dump.now_ns = 0;
	x.dump.written = 0;
	x.dump.functions = (unsigned)keep_next;
	x.err = err ? err : &read_error;
	x.status = 0;
	if (lockstep.protocol >= 3) {
		VALGRIND_DO_CLIENT_REQUEST_STMT(VG_USERREQ__DUMP_STATS_AT, pmc__sim_dump_tag,
						&x.dump, 0, 0, 0);
		x.status = natively(collect, &x);
	} else {
		x.status = pmc__sim_tool_read(c, lockstep.nread, (flags & PMC_OPEN_INHERIT) != 0,
					      (uint64_t *)&x.dump.now_ns);
	}
	if (x.status == -EIO && x.err->code == 0)
		pmc__fail(x.err, PMC_E_SIM, "", -1, "sim: %s did not answer a reading",
			  engine == &pmc__sim_tool ? "pmcheck's valgrind tool" : engine->name);
	if (x.status && err)
		read_error = *err;
	if (x.status && !read_error.code)
		read_error.message[0] = '\0';
	r->n = n;
	t = x.dump.now_ns - t0 + 1;
	for (size_t i = 0; i < n; i++) {
		uint64_t v = 0;

		if (masks[i] & PMC_SIM_CALLS_MASK)
			v = c[masks[i] & 0xffff];
		else
			for (unsigned k = 0; k < PMC_SIM_NCOLUMNS; k++)
				if ((masks[i] & (1u << k)) && counter_of(k) >= 0)
					v += c[counter_of(k)];
		r->c[i].value = v;
		/* Simulated counters are never multiplexed. */
		r->c[i].enabled_ns = t;
		r->c[i].running_ns = t;
	}
	return x.status;
}

const char *pmc_sim_read_error(void)
{
	return read_error.code && read_error.message[0] ? read_error.message : NULL;
}
