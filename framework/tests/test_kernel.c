/* SPDX-License-Identifier: MIT */
/*
 * The counting core against the real kernel: breakpoints and uprobes count
 * exactly, software groups read consistently, failures explain themselves,
 * hardware events skip with the kernel's reason where there is no PMU (and
 * run where there is one, as in the emulated arm64 lane).
 *
 * Longer than 600 lines on purpose: one executable the emulated lane runs
 * as one command on each kernel, made of independent cases that share only
 * the helpers at the top.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <pthread.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <pmcheck/pmcheck.h>

#include "t.h"

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n - 1; /* the directory's own descriptor */
}

/* Open `text` (a list), enable, or fail the case with the library's message. */
static struct pmc_counters *open_list(const char *text, unsigned flags)
{
	struct pmc_event_spec specs[PMC_MAX_EVENTS];
	struct pmc_counters *set = NULL;
	struct pmc_error err;
	size_t n;

	if (pmc_event_parse_list(text, specs, PMC_MAX_EVENTS, &n, &err)) {
		t_fail_at(__FILE__, __LINE__, "parse %s: %s", text, err.message);
		return NULL;
	}
	if (pmc_counters_open(&set, specs, n, flags, &err)) {
		if (err.code == PMC_E_NOT_COUNTING)
			T_SKIP("%s", err.message);
		t_fail_at(__FILE__, __LINE__, "open %s: %s", text, err.message);
		return NULL;
	}
	if (pmc_counters_enable(set)) {
		t_fail_at(__FILE__, __LINE__, "enable %s", text);
		pmc_counters_close(set);
		return NULL;
	}
	return set;
}

static struct pmc_counters *open_specs(struct pmc_event_spec *specs, size_t n)
{
	struct pmc_counters *set = NULL;
	struct pmc_error err;

	if (pmc_counters_open(&set, specs, n, 0, &err)) {
		if (err.code == PMC_E_NOT_COUNTING)
			T_SKIP("%s", err.message);
		t_fail_at(__FILE__, __LINE__, "open %s: %s", specs[0].name, err.message);
		return NULL;
	}
	pmc_counters_enable(set);
	return set;
}

/* Does this kind count on this machine?  A case about something other than
 * breakpoints uses another exact event where breakpoints do not fire. */
static int kind_counts(enum pmc_kind_check_id id)
{
	return pmc_kind_check(id, NULL) == 0;
}

/* An event that counts calls of t_bp_function exactly in every thread and
 * child: an execute breakpoint where breakpoints fire, else the getppid
 * tracepoint (call_bp_function makes both happen), with tracefs mounted in
 * a mount namespace of this case's own when nobody has mounted it. */
static const char *exact_inherited_source(void)
{
	struct pmc_event_spec s;
	struct pmc_error err;

	if (kind_counts(PMC_KIND_CHECK_BP_EXEC))
		return "mem:t_bp_function:x";
	if (pmc_event_parse("syscalls:sys_enter_getppid", &s, &err) == 0)
		return "syscalls:sys_enter_getppid";
	if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
	    mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL) != 0)
		T_SKIP("breakpoints do not count here and tracefs cannot be mounted (%s): no exact event counts every thread; run as root",
		       strerror(errno));
	return "syscalls:sys_enter_getppid";
}

/* ---- breakpoints ------------------------------------------------------------ */

static volatile long t_var;
static volatile long t_other;

PMC__NOIPA void t_bp_function(void)
{
	__asm__ __volatile__("" ::: "memory");
}

static void do_writes(unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		t_var = (long)i;
}

static long do_reads(unsigned n)
{
	long sum = 0;

	for (unsigned i = 0; i < n; i++)
		sum += t_var;
	return sum;
}

T_CASE(bp_write_exact)
{
	static const unsigned ns[] = { 0, 1, 7, 1000, 12345 };
	struct pmc_event_spec s;
	struct pmc_error err;
	struct pmc_counters *set;

	T_CHECK(pmc_event_breakpoint(&s, (const void *)&t_var, sizeof(long), PMC_BP_W, &err) == 0,
		"%s", err.message);
	set = open_specs(&s, 1);
	if (!set)
		return;
	for (size_t k = 0; k < sizeof(ns) / sizeof(ns[0]); k++) {
		struct pmc_region r;
		struct pmc_measurement m;

		pmc_region_init(&r, set);
		pmc_region_begin(&r);
		do_writes(ns[k]);
		t_other = 1; /* a write elsewhere must not count */
		do_reads(3); /* nor reads of the watched variable */
		pmc_region_end(&r, &m);
		if (m.d[0].value != ns[k]) {
			t_fail_at(__FILE__, __LINE__, "%s: %u writes counted as %" PRIu64,
				  s.name, ns[k], m.d[0].value);
			break;
		}
		T_EQ_U64(m.d[0].flags, 0, "breakpoint delta flags");
	}
	pmc_counters_close(set);
}

T_CASE(bp_read_write_exact)
{
	struct pmc_counters *set;
	struct pmc_reading a, b;
	struct pmc_measurement m;
	char text[64];
	long sink;

	snprintf(text, sizeof(text), "mem:0x%lx/8:rw", (unsigned long)(uintptr_t)&t_var);
	set = open_list(text, 0);
	if (!set)
		return;
	pmc_counters_read(set, &a);
	sink = do_reads(300);
	do_writes(200);
	pmc_counters_read(set, &b);
	PMC_DO_NOT_OPTIMIZE(sink);
	pmc_measurement_from(&m, &a, &b);
	pmc_counters_close(set);
	T_EQ_U64(m.d[0].value, 500, "rw breakpoint: 300 reads + 200 writes");
}

T_CASE(bp_read_only)
{
	struct pmc_event_spec s;
	struct pmc_error err;
	struct pmc_counters *set = NULL;
	int rc;

	pmc_event_breakpoint(&s, (const void *)&t_var, sizeof(long), PMC_BP_R, &err);
	rc = pmc_counters_open(&set, &s, 1, 0, &err);
#if defined(__x86_64__) || defined(__i386__)
	/* x86 debug registers have no read-only mode (R/W bits 11 mean
	 * "read or write"); the kernel refuses HW_BREAKPOINT_R. */
	T_CHECK(rc == PMC_E_UNSUPPORTED, "x86 read-only breakpoint: rc %d (%s)", rc, err.message);
	T_CHECK(strstr(err.message, ":rw") && strstr(err.message, s.name),
		"message must name the event and the remedy: %s", err.message);
#else
	{
		struct pmc_reading a, b;
		struct pmc_measurement m;
		long sink;

		T_CHECK(rc == 0, "read breakpoint: %s", err.message);
		pmc_counters_enable(set);
		pmc_counters_read(set, &a);
		sink = do_reads(321);
		do_writes(100);
		pmc_counters_read(set, &b);
		PMC_DO_NOT_OPTIMIZE(sink);
		pmc_measurement_from(&m, &a, &b);
		pmc_counters_close(set);
		T_EQ_U64(m.d[0].value, 321, "read breakpoint counts reads only");
	}
#endif
}

T_CASE(bp_execute_exact)
{
	struct pmc_event_spec s;
	struct pmc_error err;
	struct pmc_counters *set;
	struct pmc_region r;
	struct pmc_measurement m;
	void (*volatile fn)(void) = t_bp_function;

	T_CHECK(pmc_event_breakpoint(&s, (const void *)(uintptr_t)t_bp_function, 0, PMC_BP_X,
				     &err) == 0,
		"%s", err.message);
	set = open_specs(&s, 1);
	if (!set)
		return;
	pmc_region_init(&r, set);
	pmc_region_begin(&r);
	for (int i = 0; i < 4321; i++)
		fn();
	pmc_region_end(&r, &m);
	pmc_counters_close(set);
	T_EQ_U64(m.d[0].value, 4321, "execute breakpoint: calls");
}

/* ---- threads and child processes ---------------------------------------- */

static void *call_bp_function(void *arg)
{
	void (*volatile fn)(void) = t_bp_function;

	for (uintptr_t i = 0; i < (uintptr_t)arg; i++) {
		fn();
		syscall(SYS_getppid);
	}
	return NULL;
}

/* A set with the per-thread breakdown, or a skip on a kernel that writes no
 * thread counts (the refusal must name the kernel fix). */
static struct pmc_counters *open_per_thread(const char *text)
{
	struct pmc_event_spec specs[PMC_MAX_EVENTS];
	struct pmc_counters *set = NULL;
	struct pmc_error err;
	size_t n;
	int rc;

	rc = pmc_event_parse_list(text, specs, PMC_MAX_EVENTS, &n, &err);
	if (rc == 0)
		rc = pmc_counters_open(&set, specs, n, PMC_OPEN_PER_THREAD, &err);
	if (rc == PMC_E_UNSUPPORTED && strstr(err.message, "c418d8b4d7a4"))
		T_SKIP("%s", err.message);
	if (rc == 0 && pmc_counters_enable(set) == 0)
		return set;
	t_fail_at(__FILE__, __LINE__, "open %s: %s", text, err.message);
	pmc_counters_close(set);
	return NULL;
}

/*
 * Inherit with the per-thread breakdown, on a breakpoint that counts calls
 * exactly: three threads and a child process created inside the region are
 * summed into the reading, and each one's own count comes back as a row.
 */
T_CASE(inherit_per_thread_exact)
{
	static const uintptr_t calls[3] = { 100, 200, 300 };
	struct pmc_thread_count rows[8];
	struct pmc_measurement m;
	struct pmc_region r;
	struct pmc_counters *set;
	pthread_t th[3];
	uint64_t lost, mine = 0, seen[3] = { 0 };
	size_t nrows;
	int fds = count_fds(), status, threads = pmc_threads_wait(1);
	pid_t child;

	set = open_per_thread(exact_inherited_source());
	if (!set)
		return;
	T_EQ_U64(pmc_counters_path(set), PMC_PATH_READ, "an inherited set reads with read(2)");
	pmc_region_init(&r, set);
	pmc_region_begin(&r);
	for (int i = 0; i < 3; i++)
		T_CHECK(pthread_create(&th[i], NULL, call_bp_function, (void *)calls[i]) == 0,
			"pthread_create");
	call_bp_function((void *)7);
	for (int i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	T_EQ_U64((uint64_t)pmc_threads_wait(threads), (uint64_t)threads, "the threads are gone");
	child = fork();
	if (child == 0) {
		call_bp_function((void *)50);
		_exit(0);
	}
	waitpid(child, &status, 0);
	pmc_region_end(&r, &m);
	T_EQ_U64(m.d[0].value, 7 + 100 + 200 + 300 + 50,
		 "the reading sums the calling thread, three threads and a child");
	T_EQ_U64(pmc_counters_threads(set, rows, 8, &nrows, &lost), 0, "threads");
	T_EQ_U64(nrows, 4, "one row per thread and per child process");
	T_EQ_U64(lost, 0, "no record lost");
	for (size_t k = 0; k < nrows; k++) {
		if (rows[k].pid == child) {
			T_EQ_U64(rows[k].value[0], 50, "the child process's row");
			continue;
		}
		T_EQ_U64((uint64_t)rows[k].pid, (uint64_t)getpid(), "a thread of this process");
		for (int i = 0; i < 3; i++)
			if (rows[k].value[0] == calls[i])
				seen[i]++;
		mine += rows[k].value[0];
	}
	for (int i = 0; i < 3; i++)
		T_EQ_U64(seen[i], 1, "each thread's own count, once");
	T_EQ_U64(m.d[0].value - mine - 50, 7, "the calling thread's share is the rest");
	T_EQ_U64(pmc_counters_threads(set, rows, 8, &nrows, &lost), 0, "drain again");
	T_EQ_U64(nrows, 0, "rows are taken out once");
	pmc_counters_close(set);
	T_EQ_U64((uint64_t)count_fds(), (uint64_t)fds, "no descriptor left behind");
}

/* More threads exit than the caller has rows for: PMC_E_TOO_MANY, the
 * first rows kept and the rest counted as lost, never silently dropped. */
T_CASE(inherit_per_thread_too_many)
{
	struct pmc_thread_count rows[2];
	struct pmc_counters *set;
	pthread_t th;
	uint64_t lost;
	size_t nrows;

	set = open_per_thread(exact_inherited_source());
	if (!set)
		return;
	for (int i = 0; i < 5; i++) {
		T_CHECK(pthread_create(&th, NULL, call_bp_function, (void *)(uintptr_t)(i + 1)) == 0,
			"pthread_create");
		pthread_join(th, NULL);
		pmc_threads_wait(1);
	}
	T_EQ_U64((uint64_t)-pmc_counters_threads(set, rows, 2, &nrows, &lost),
		 (uint64_t)-PMC_E_TOO_MANY, "five threads, two rows");
	T_EQ_U64(nrows, 2, "rows kept");
	T_EQ_U64(rows[0].value[0] + rows[1].value[0], 3, "the first two threads' counts");
	T_CHECK(lost >= 3, "the other three counted as lost (%" PRIu64 ")", lost);
	T_EQ_U64((uint64_t)-pmc_counters_threads(NULL, rows, 2, &nrows, &lost),
		 (uint64_t)EINVAL, "NULL set");
	pmc_counters_close(set);
	set = open_list(exact_inherited_source(), PMC_OPEN_INHERIT);
	if (!set)
		return;
	T_EQ_U64((uint64_t)-pmc_counters_threads(set, rows, 2, &nrows, &lost),
		 (uint64_t)EINVAL, "a set opened without PMC_OPEN_PER_THREAD");
	pmc_counters_close(set);
}

/* A tracepoint by name: the id from tracefs, counted exactly. */
T_CASE(tracepoint_by_name_exact)
{
	struct pmc_event_spec s;
	struct pmc_error err;
	struct pmc_counters *set;
	struct pmc_measurement m;
	struct pmc_region r;
	int rc = pmc_event_parse("syscalls:sys_enter_getpid", &s, &err);

	if (rc == PMC_E_UNKNOWN_EVENT && strstr(err.message, "tracefs"))
		T_SKIP("%s", err.message);
	T_CHECK(rc == 0, "%s", err.message);
	T_EQ_U64(s.kind, PMC_KIND_TRACEPOINT, "kind");
	set = open_specs(&s, 1);
	if (!set)
		return;
	pmc_region_init(&r, set);
	pmc_region_begin(&r);
	for (int i = 0; i < 123; i++)
		syscall(SYS_getpid);
	pmc_region_end(&r, &m);
	pmc_counters_close(set);
	T_EQ_U64(m.d[0].value, 123, "getpid system calls entered");
}

T_CASE(bp_symbol_form)
{
	/* mem:SYMBOL resolves a variable of the program by name. */
	struct pmc_counters *set = open_list("mem:t_var/8:w", 0);
	struct pmc_reading a, b;
	struct pmc_measurement m;

	if (!set)
		return;
	pmc_counters_read(set, &a);
	do_writes(777);
	pmc_counters_read(set, &b);
	pmc_measurement_from(&m, &a, &b);
	T_EQ_STR(pmc_counters_spec(set, 0)->name, "mem:t_var/8:w", "canonical name");
	pmc_counters_close(set);
	T_EQ_U64(m.d[0].value, 777, "writes through mem:SYMBOL");
}

T_CASE(bp_slots_exhausted)
{
	static volatile long vars[8];
	struct pmc_event_spec s[8];
	struct pmc_error err;
	struct pmc_counters *set = NULL;
	int fds = count_fds(), rc;
	size_t max = 0;

	for (size_t i = 0; i < 8; i++)
		pmc_event_breakpoint(&s[i], (const void *)&vars[i], sizeof(long), PMC_BP_W, &err);
	/* Grow the set until the debug registers run out. */
	if (pmc_kind_check(PMC_KIND_CHECK_BP_WRITE, NULL) == PMC_E_NOT_COUNTING) {
		struct pmc_kind_check c;

		pmc_kind_check(PMC_KIND_CHECK_BP_WRITE, &c);
		T_SKIP("%s", c.summary);
	}
	for (size_t n = 1; n <= 8; n++) {
		rc = pmc_counters_open(&set, s, n, 0, &err);
		if (rc)
			break;
		pmc_counters_close(set);
		set = NULL;
		max = n;
	}
	T_CHECK(rc == PMC_E_NO_SLOTS, "breakpoint %zu failed with %d, expected PMC_E_NO_SLOTS: %s",
		max + 1, rc, err.message);
	T_CHECK(strstr(err.message, "breakpoint slot") && strstr(err.message, s[max].name),
		"message must name the event and the cause: %s", err.message);
	{
		char held[64];

		snprintf(held, sizeof(held), "already holds %zu breakpoint", max);
		T_CHECK(strstr(err.message, held), "message must count the set's breakpoints (%s): %s",
			held, err.message);
	}
	T_CHECK(count_fds() == fds, "descriptors leaked by the failed open: %d -> %d", fds,
		count_fds());
#if defined(__x86_64__) || defined(__i386__)
	T_EQ_U64(max, 4, "x86 has four debug address registers (DR0-DR3)");
#else
	T_CHECK(max >= 1, "no breakpoint slot at all");
#endif
	printf("breakpoint slots: %zu; next: %s\n", max, err.message);
}

/* ---- uprobes ---------------------------------------------------------------- */

PMC__NOIPA int t_probe_target(int x)
{
	return x + 1;
}

T_CASE(calls_program_function)
{
	static const unsigned ns[] = { 0, 1, 1000, 12345 };
	struct pmc_counters *set = open_list("calls:t_probe_target", 0);
	int acc = 0;

	if (!set)
		return;
	for (size_t k = 0; k < sizeof(ns) / sizeof(ns[0]); k++) {
		struct pmc_region r;
		struct pmc_measurement m;

		pmc_region_init(&r, set);
		pmc_region_begin(&r);
		for (unsigned i = 0; i < ns[k]; i++)
			acc = t_probe_target(acc);
		pmc_region_end(&r, &m);
		PMC_DO_NOT_OPTIMIZE(acc);
		if (m.d[0].value != ns[k]) {
			t_fail_at(__FILE__, __LINE__, "%u calls counted as %" PRIu64, ns[k],
				  m.d[0].value);
			break;
		}
	}
	pmc_counters_close(set);
}

T_CASE(calls_libc_getpid)
{
	struct pmc_counters *set;

	/* No dynamic loader (AT_BASE 0): a static program has no libc.so. */
	if (getauxval(AT_BASE) == 0)
		T_SKIP("statically linked program: no shared libc to probe");
	set = open_list("calls:getpid@libc", 0);
	struct pmc_region r;
	struct pmc_measurement m;
	pid_t sum = 0;

	if (!set)
		return;
	pmc_region_init(&r, set);
	pmc_region_begin(&r);
	for (int i = 0; i < 2500; i++)
		sum += getpid();
	pmc_region_end(&r, &m);
	PMC_DO_NOT_OPTIMIZE(sum);
	pmc_counters_close(set);
	T_EQ_U64(m.d[0].value, 2500, "getpid calls");
}

T_CASE(calls_libc_malloc)
{
#ifdef T_ASAN
	T_SKIP("AddressSanitizer replaces malloc, so libc's malloc is never entered");
#else
	struct pmc_counters *set = open_list("calls:malloc", 0);
	struct pmc_region r;
	struct pmc_measurement m;

	if (!set)
		return;
	pmc_region_init(&r, set);
	pmc_region_begin(&r);
	for (int i = 0; i < 1000; i++) {
		void *volatile p = malloc(32 + (size_t)i);

		free(p);
	}
	pmc_region_end(&r, &m);
	pmc_counters_close(set);
	T_EQ_U64(m.d[0].value, 1000, "malloc calls");
#endif
}

/* ---- software events and groups ---------------------------------------------- */

T_CASE(software_group_consistent)
{
	struct pmc_counters *set =
		open_list("task-clock,page-faults,minor-faults,major-faults,context-switches", 0);
	struct pmc_region r;
	struct pmc_measurement m;
	char desc[256];
	size_t pages = 64, ps = (size_t)sysconf(_SC_PAGESIZE);
	volatile char *mem;
	struct timespec t0, t1, t2, t3;
	uint64_t skew;

	if (!set)
		return;
	T_EQ_U64(pmc_counters_groups(set), 1, "software events share one group");
	T_EQ_U64(pmc_counters_path(set), PMC_PATH_READ, "software events are read with read(2)");
	pmc_counters_describe(set, desc, sizeof(desc));
	T_EQ_STR(desc, "{task-clock,page-faults,minor-faults,major-faults,context-switches}",
		 "grouping");
	mem = mmap(NULL, pages * ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	T_CHECK(mem != MAP_FAILED, "mmap");
	pmc_region_init(&r, set);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pmc_region_begin(&r);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	for (size_t i = 0; i < pages; i++)
		mem[i * ps] = 1; /* first touch: one minor fault per page */
	clock_gettime(CLOCK_MONOTONIC, &t2);
	pmc_region_end(&r, &m);
	clock_gettime(CLOCK_MONOTONIC, &t3);
	munmap((void *)mem, pages * ps);
	pmc_counters_close(set);
	T_CHECK(m.d[1].value >= pages, "page-faults %" PRIu64 " < %zu pages touched", m.d[1].value,
		pages);
	/* One atomic group read: the total equals its parts exactly. */
	T_EQ_U64(m.d[1].value, m.d[2].value + m.d[3].value, "page-faults == minor + major");
	for (size_t i = 0; i < m.n; i++) {
		T_EQ_U64(m.d[i].enabled_ns, m.d[0].enabled_ns, "one group, one enabled time");
		T_EQ_U64(m.d[i].flags, 0, "software events are never multiplexed");
	}
	/* task-clock is the task's CPU time and cannot exceed the time the
	 * group was enabled, except that the kernel takes the two from
	 * different clock reads within one read(2), at begin and at end: the
	 * gap is at most as long as those reads took (tens of ns, unless the
	 * vCPU was preempted inside one: 13.5 us was seen on a loaded guest),
	 * plus 1 us for the clocks' own granularity. */
	skew = (uint64_t)((t1.tv_sec - t0.tv_sec) * 1000000000LL + (t1.tv_nsec - t0.tv_nsec) +
			  (t3.tv_sec - t2.tv_sec) * 1000000000LL + (t3.tv_nsec - t2.tv_nsec));
	T_CHECK(m.d[0].value > 0 && m.d[0].value <= m.d[0].enabled_ns + skew + 1000,
		"task-clock %" PRIu64 " ns exceeds enabled %" PRIu64
		" ns + the reads' own %" PRIu64 " ns + 1 us",
		m.d[0].value, m.d[0].enabled_ns, skew);
}

T_CASE(mixed_group_and_no_group)
{
	char text[128], desc[256];
	struct pmc_counters *set;

	/* Where breakpoints do not fire, page faults stand in: the same
	 * software context. */
	snprintf(text, sizeof(text), "task-clock,mem:0x%lx/8:w,calls:t_probe_target",
		 (unsigned long)(uintptr_t)&t_var);
	if (!kind_counts(PMC_KIND_CHECK_BP_WRITE))
		snprintf(text, sizeof(text), "task-clock,page-faults:u,calls:t_probe_target");
	set = open_list(text, 0);
	if (!set)
		return;
	/* Breakpoints and uprobes live in the software context: one group. */
	T_EQ_U64(pmc_counters_groups(set), 1, "groups");
	pmc_counters_close(set);
	set = open_list(text, PMC_OPEN_NO_GROUP);
	if (!set)
		return;
	T_EQ_U64(pmc_counters_groups(set), 3, "PMC_OPEN_NO_GROUP: one group per event");
	T_EQ_U64(pmc_counters_group_of(set, 2), 2, "group of event 2");
	T_EQ_U64(pmc_counters_group_of(set, 3), (uint64_t)-1, "out of range");
	pmc_counters_describe(set, desc, sizeof(desc));
	T_CHECK(desc[0] == '{' && strstr(desc, "} {calls:t_probe_target}"), "describe: %s", desc);
	pmc_counters_close(set);
}

T_CASE(msr_pmu_form)
{
	struct pmc_event_spec s;
	struct pmc_error err;
	struct pmc_counters *set;
	struct pmc_reading a, b;
	int rc = pmc_event_parse("msr/tsc/", &s, &err);

	if (rc == PMC_E_NO_PMU)
		T_SKIP("no msr PMU on this machine (x86 only): %s", err.message);
	T_CHECK(rc == 0, "%s", err.message);
	set = open_specs(&s, 1);
	if (!set)
		return;
	pmc_counters_read(set, &a);
	do_writes(1000);
	pmc_counters_read(set, &b);
	pmc_counters_close(set);
	T_CHECK(b.c[0].value > a.c[0].value, "msr/tsc/ must advance: %" PRIu64 " -> %" PRIu64,
		a.c[0].value, b.c[0].value);
}

/* ---- hardware: skip with the reason where there is no PMU -------------------- */

T_CASE(hardware_instructions)
{
	struct pmc_event_spec s[2];
	struct pmc_error err;
	struct pmc_counters *set = NULL;
	struct pmc_region r;
	struct pmc_measurement m, ovh;
	size_t n;
	int rc;

	pmc_event_parse_list("instructions:u,cycles:u", s, 2, &n, &err);
	rc = pmc_counters_open(&set, s, n, 0, &err);
	if (rc == PMC_E_NO_HW_PMU) {
		T_CHECK(strstr(err.message, "no hardware PMU") && strstr(err.message, "instructions:u"),
			"skip reason must name the event and cause: %s", err.message);
		T_SKIP("%s", err.message);
	}
	T_CHECK(rc == 0, "%s", err.message);
	pmc_counters_enable(set);
	T_CHECK(pmc_counters_overhead(set, 32, &ovh) == 0, "overhead");
	pmc_region_init(&r, set);
	pmc_region_begin(&r);
	do_writes(100000);
	pmc_region_end(&r, &m);
	pmc_measurement_subtract(&m, &ovh);
	pmc_counters_close(set);
	/* Each iteration stores and loops: at least 2 instructions. */
	T_CHECK(m.d[0].value >= 200000, "instructions %" PRIu64 " for 100000 iterations",
		m.d[0].value);
	T_CHECK(m.d[1].value > 0, "cycles");
}

/* ---- failures ------------------------------------------------------------------- */

T_CASE(open_errors)
{
	struct pmc_event_spec s;
	struct pmc_error err;
	struct pmc_counters *set = NULL;
	int rc, fds = count_fds();

	/* Bad attributes: a 9-byte breakpoint the parser would have refused
	 * (x86 takes 1, 2, 4 and 8 bytes; arm64 any of 1..8, so 3 is not
	 * invalid everywhere). */
	pmc_event_breakpoint(&s, (const void *)&t_var, 4, PMC_BP_W, &err);
	s.bp_len = 9;
	rc = pmc_counters_open(&set, &s, 1, 0, &err);
	T_CHECK(rc == -EINVAL && strstr(err.message, s.name) && strstr(err.message, "rejected"),
		"EINVAL: %d %s", rc, err.message);
	/* A software event the kernel does not have. */
	pmc_event_parse("task-clock", &s, &err);
	s.config = 999;
	rc = pmc_counters_open(&set, &s, 1, 0, &err);
	T_CHECK(rc == PMC_E_UNSUPPORTED && strstr(err.message, "does not provide"),
		"ENOENT on software PMU: %d %s", rc, err.message);
	T_CHECK(pmc_counters_open(&set, &s, 0, 0, &err) == -EINVAL, "empty set");
	T_CHECK(pmc_counters_open(&set, &s, PMC_MAX_EVENTS + 1, 0, &err) == PMC_E_TOO_MANY,
		"too many");
	T_CHECK(set == NULL, "failed open leaves *out NULL");
	T_CHECK(count_fds() == fds, "descriptors leaked: %d -> %d", fds, count_fds());
	pmc_counters_close(NULL);
}

T_CASE(privilege_error)
{
	struct pmc_event_spec s;
	struct pmc_error err;
	struct pmc_counters *set = NULL;
	uint64_t paranoid = 0;
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
	int rc;

	if (!f || fscanf(f, "%" SCNu64, &paranoid) != 1)
		T_SKIP("cannot read /proc/sys/kernel/perf_event_paranoid");
	fclose(f);
	if (paranoid < 2 || paranoid > 100)
		T_SKIP("perf_event_paranoid is %" PRIu64 "; unprivileged kernel counting is allowed",
		       paranoid);
	if (geteuid() == 0) {
		/* Become an unprivileged user (this case runs in its own process). */
		if (setgid(65534) != 0 || setuid(65534) != 0)
			T_SKIP("cannot drop privileges to nobody: %s", strerror(errno));
	}
	/* paranoid >= 2: counting kernel mode needs CAP_PERFMON. */
	pmc_event_parse("context-switches", &s, &err);
	if (paranoid >= 3) {
		/* Debian's and Android's level 3: nothing unprivileged at all, and
		 * the message must not offer :u as a way out. */
		rc = pmc_counters_open(&set, &s, 1, 0, &err);
		T_CHECK(rc == PMC_E_PRIVILEGE && strstr(err.message, "forbids all unprivileged") &&
				!strstr(err.message, ":u"),
			"paranoid %" PRIu64 ": %d %s", paranoid, rc, err.message);
		pmc_event_parse("context-switches:u", &s, &err);
		rc = pmc_counters_open(&set, &s, 1, 0, &err);
		T_CHECK(rc == PMC_E_PRIVILEGE, "paranoid %" PRIu64 ", :u: %d %s", paranoid, rc,
			err.message);
		return;
	}
	rc = pmc_counters_open(&set, &s, 1, 0, &err);
	T_CHECK(rc == PMC_E_PRIVILEGE, "unprivileged kernel counting: %d %s", rc, err.message);
	T_CHECK(strstr(err.message, "perf_event_paranoid = ") && strstr(err.message, "CAP_PERFMON") &&
			strstr(err.message, ":u") && strstr(err.message, "context-switches"),
		"message must name the event, the cause and the remedies: %s", err.message);
	/* The remedy it names works. */
	pmc_event_parse("context-switches:u", &s, &err);
	rc = pmc_counters_open(&set, &s, 1, 0, &err);
	T_CHECK(rc == 0, "context-switches:u as nobody: %s", err.message);
	pmc_counters_close(set);
}

T_CASE(out_of_descriptors)
{
	struct pmc_event_spec s[6];
	struct pmc_error err;
	struct pmc_counters *set = NULL;
	struct rlimit rl;
	size_t n;
	int rc, fds = count_fds();

	pmc_event_parse_list("task-clock,cpu-clock,page-faults,minor-faults,major-faults,cs", s, 6,
			     &n, &err);
	getrlimit(RLIMIT_NOFILE, &rl);
	rl.rlim_cur = (rlim_t)fds + 3; /* room for three of the six */
	T_CHECK(setrlimit(RLIMIT_NOFILE, &rl) == 0, "setrlimit");
	rc = pmc_counters_open(&set, s, n, 0, &err);
	T_CHECK(rc == -EMFILE && strstr(err.message, "ulimit -n"), "EMFILE: %d %s", rc, err.message);
	T_CHECK(count_fds() == fds, "descriptors leaked: %d -> %d", fds, count_fds());
}

T_CASE(overhead_is_zero_for_exact_events)
{
	char text[128];
	struct pmc_counters *set;
	struct pmc_measurement ovh;

	snprintf(text, sizeof(text), "mem:0x%lx/8:rw,calls:t_probe_target,context-switches",
		 (unsigned long)(uintptr_t)&t_var);
	/* Where breakpoints do not fire, page faults stand in: a read of the
	 * counters faults no page in user space either. */
	if (!kind_counts(PMC_KIND_CHECK_BP_RW))
		snprintf(text, sizeof(text), "page-faults:u,calls:t_probe_target,context-switches");
	set = open_list(text, 0);
	if (!set)
		return;
	T_CHECK(pmc_counters_overhead(set, 16, &ovh) == 0, "overhead");
	pmc_counters_close(set);
	/* Reading the counters neither touches the watched variable nor calls
	 * the probed function: their empty-region cost is exactly zero. */
	T_EQ_U64(ovh.d[0].value, 0, "breakpoint overhead");
	T_EQ_U64(ovh.d[1].value, 0, "uprobe overhead");
	T_EQ_U64(ovh.n, 3, "n");
}

/* ---- sampling: overflow samples, their IPs back to functions ---------------- */

struct ip_tally {
	struct pmc_symtab *syms;
	const char *fn[2];  /* functions to count samples in */
	size_t in[2], all, other_tid;
	uint32_t tid;
};

static void tally_ip(void *ctx, uint64_t ip, uint32_t pid, uint32_t tid)
{
	struct ip_tally *c = ctx;
	struct pmc_symbol_at at;

	(void)pid;
	c->all++;
	if (pmc_symtab_lookup(c->syms, ip, &at) != 1)
		return;
	for (int i = 0; i < 2; i++)
		if (c->fn[i] && !strcmp(at.function, c->fn[i]) && (!c->tid || tid != c->tid))
			c->in[i]++;
	c->other_tid += c->tid && tid != c->tid;
}

/* Not instrumented: ASan's shadow checks would fault shadow pages too. */
__attribute__((noinline, used, no_sanitize_address)) void sampled_touch(volatile char *p, size_t pages, size_t page)
{
	for (size_t i = 0; i < pages; i++)
		p[i * page] = 1;
}

static char *fresh_pages(size_t pages, size_t page)
{
	char *p = mmap(NULL, pages * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	madvise(p, pages * page, MADV_NOHUGEPAGE); /* one fault per page */
	return p;
}

/* page-faults sampled every fault: each sample is one first touch, and
 * its IP is the store in sampled_touch (exact, no skid: software events
 * sample at the faulting instruction). */
T_CASE(sampler_page_faults_exact)
{
	struct pmc_event_spec spec;
	struct pmc_sampler *s;
	struct pmc_error err;
	struct ip_tally c = { .fn = { "sampled_touch", NULL } };
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	char *p = fresh_pages(48, page);
	uint64_t lost = 0;

	T_CHECK(p && pmc_event_parse("page-faults:u", &spec, &err) == 0, "parse");
	T_CHECK(pmc_sampler_open(&s, &spec, 1, 0, 8, &err) == 0, "%s", err.message);
	T_CHECK(pmc_symtab_open(&c.syms, &err) == 0, "%s", err.message);
	T_CHECK(pmc_sampler_period(s) == 1, "period");
	T_CHECK(pmc_sampler_enable(s) == 0, "enable");
	sampled_touch(p, 48, page);
	T_CHECK(pmc_sampler_disable(s) == 0, "disable");
	T_CHECK(pmc_sampler_drain(s, tally_ip, &c, &lost) == 0, "drain");
	T_EQ_U64(c.in[0], 48, "samples in sampled_touch");
	T_EQ_U64(c.all, 48, "samples in all");
	T_EQ_U64(lost, 0, "lost");
	/* Disabled: touching more pages adds no sample. */
	sampled_touch(p + 0, 1, page);
	c.all = 0;
	T_CHECK(pmc_sampler_drain(s, tally_ip, &c, NULL) == 0 && c.all == 0, "nothing after disable");
	pmc_sampler_close(s);
	pmc_symtab_close(c.syms);
	munmap(p, 48 * page);
}

struct touch_job {
	char *p;
	size_t pages, page;
};

static void *touch_thread(void *arg)
{
	struct touch_job *j = arg;

	sampled_touch(j->p, j->pages, j->page);
	return NULL;
}

/* With PMC_OPEN_INHERIT a thread made after the open is sampled too; its
 * samples reach the ring through the dummy event (SET_OUTPUT). */
T_CASE(sampler_inherit_samples_new_threads)
{
	struct pmc_event_spec spec;
	struct pmc_sampler *s;
	struct pmc_error err;
	struct ip_tally c = { .fn = { "sampled_touch", NULL }, .tid = (uint32_t)gettid() };
	struct touch_job j = { NULL, 40, (size_t)sysconf(_SC_PAGESIZE) };
	pthread_t th;

	j.p = fresh_pages(j.pages, j.page);
	T_CHECK(j.p && pmc_event_parse("page-faults:u", &spec, &err) == 0, "parse");
	T_CHECK(pmc_sampler_open(&s, &spec, 1, PMC_OPEN_INHERIT, 8, &err) == 0, "%s", err.message);
	T_CHECK(pmc_symtab_open(&c.syms, &err) == 0, "%s", err.message);
	T_CHECK(pmc_sampler_enable(s) == 0, "enable");
	T_CHECK(pthread_create(&th, NULL, touch_thread, &j) == 0, "thread");
	pthread_join(th, NULL);
	T_CHECK(pmc_sampler_disable(s) == 0, "disable");
	T_CHECK(pmc_sampler_drain(s, tally_ip, &c, NULL) == 0, "drain");
	T_EQ_U64(c.in[0], 40, "the thread's samples in sampled_touch");
	pmc_sampler_close(s);
	pmc_symtab_close(c.syms);
	munmap(j.p, j.pages * j.page);
}

T_CASE(sampler_refuses_what_cannot_be_sampled)
{
	struct pmc_event_spec spec;
	struct pmc_sampler *s = (void *)1;
	struct pmc_error err;

	T_CHECK(pmc_event_parse("task-clock", &spec, &err) == 0, "parse");
	T_CHECK(pmc_sampler_open(&s, &spec, 0, 0, 8, &err) == -EINVAL && !s &&
			strstr(err.message, "period"),
		"period 0: %s", err.message);
	T_CHECK(pmc_sampler_open(&s, &spec, 1000, 0, 3, &err) == -EINVAL && !s,
		"3 data pages: %s", err.message);
	T_CHECK(pmc_event_parse("mem:sampled_touch:x:u", &spec, &err) == 0, "%s", err.message);
	T_CHECK(pmc_sampler_open(&s, &spec, 1, 0, 8, &err) == PMC_E_UNSUPPORTED &&
			strstr(err.message, "fires at one place"),
		"breakpoint: %s", err.message);
}

/* Two callers of t_probe_target, 3 and 5 calls. */
PMC__NOIPA int t_probe_caller_three(int x)
{
	for (int i = 0; i < 3; i++)
		x = t_probe_target(x);
	return x + 1;
}

PMC__NOIPA int t_probe_caller_five(int x)
{
	for (int i = 0; i < 5; i++)
		x = t_probe_target(x);
	return x + 1;
}

/* A uprobe sampled every call: each sample names the caller, by the
 * return address at the stack pointer (x86-64), exactly. */
T_CASE(sampler_uprobe_names_callers)
{
	struct pmc_event_spec spec;
	struct pmc_sampler *s;
	struct pmc_error err;
	struct ip_tally c = { .fn = { "t_probe_caller_three", "t_probe_caller_five" } };
	uint64_t lost = 0;
	int acc = 0, rc;

	T_CHECK(pmc_event_parse("calls:t_probe_target", &spec, &err) == 0, "%s", err.message);
	rc = pmc_sampler_open(&s, &spec, 1, 0, 8, &err);
#if !defined(__x86_64__)
	T_CHECK(rc == PMC_E_UNSUPPORTED && strstr(err.message, "x86-64"), "%s", err.message);
	return;
#endif
	if (rc && pmc_error_is_capability(rc))
		T_SKIP("%s", err.message);
	T_CHECK(rc == 0, "%s", err.message);
	T_CHECK(pmc_symtab_open(&c.syms, &err) == 0, "%s", err.message);
	T_CHECK(pmc_sampler_enable(s) == 0, "enable");
	acc = t_probe_caller_three(acc);
	acc = t_probe_caller_five(acc);
	T_CHECK(pmc_sampler_disable(s) == 0, "disable");
	PMC_DO_NOT_OPTIMIZE(acc);
	T_CHECK(pmc_sampler_drain(s, tally_ip, &c, &lost) == 0, "drain");
	T_EQ_U64(c.in[0], 3, "samples naming t_probe_caller_three");
	T_EQ_U64(c.in[1], 5, "samples naming t_probe_caller_five");
	T_EQ_U64(c.all, 8, "samples in all");
	T_EQ_U64(lost, 0, "lost (or without a readable stack)");
	pmc_sampler_close(s);
	pmc_symtab_close(c.syms);
}

static volatile uint64_t spin_sink;

__attribute__((noinline, used)) void sampled_spin_hot(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		spin_sink += i * 3;
}

__attribute__((noinline, used)) void sampled_spin_cold(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		spin_sink ^= i;
}

/* Instructions sampled on a real PMU (the emulated lane): three times the
 * work in one function gets more samples than the other.  Measured there:
 * QEMU raises the overflow interrupt at the guest's next timer tick, so
 * samples come at most once per tick (4 ms, 4 million instructions under
 * -icount), whatever the period; 240 million instructions give ~60. */
T_CASE(sampler_instructions_where_the_work_is)
{
	struct pmc_event_spec spec;
	struct pmc_sampler *s;
	struct pmc_error err;
	struct ip_tally c = { .fn = { "sampled_spin_hot", "sampled_spin_cold" } };
	int rc;

	T_CHECK(pmc_event_parse("instructions:u", &spec, &err) == 0, "%s", err.message);
	rc = pmc_sampler_open(&s, &spec, 1000000, 0, 16, &err);
	if (rc == PMC_E_NO_HW_PMU || rc == PMC_E_UNSUPPORTED)
		T_SKIP("%s", err.message);
	T_CHECK(rc == 0, "%s", err.message);
	T_CHECK(pmc_symtab_open(&c.syms, &err) == 0, "%s", err.message);
	T_CHECK(pmc_sampler_enable(s) == 0, "enable");
	sampled_spin_hot(30000000);
	sampled_spin_cold(10000000);
	T_CHECK(pmc_sampler_disable(s) == 0, "disable");
	T_CHECK(pmc_sampler_drain(s, tally_ip, &c, NULL) == 0, "drain");
	printf("instructions sampled: %zu samples, %zu in the hot function, %zu in the cold one\n",
	       c.all, c.in[0], c.in[1]);
	T_CHECK(c.all >= 10 && c.in[0] + c.in[1] >= c.all * 9 / 10, "samples in the two: %zu of %zu",
		c.in[0] + c.in[1], c.all);
	T_CHECK(c.in[0] > 2 * c.in[1] && c.in[1] > 0, "hot %zu against cold %zu (3:1 work)", c.in[0],
		c.in[1]);
	pmc_sampler_close(s);
	pmc_symtab_close(c.syms);
}

int main(int argc, char **argv)
{
	return t_main(argc, argv);
}
