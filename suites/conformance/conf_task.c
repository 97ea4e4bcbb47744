/* SPDX-License-Identifier: MIT */
/*
 * Conformance, continued: prctl, inheritance and exec, breakpoints,
 * overflow notification and sigtrap.
 */
#include "conf.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>

static int write_bp(struct pmc_test *t, int disabled, int inherit)
{
	struct perf_event_attr a;

	conf_source_attr(t, &a);
	a.disabled = disabled;
	a.inherit = inherit;
	return OPEN(t, &a, 0, -1, -1, 0);
}

/* ---- prctl ------------------------------------------------------------------------------ */

/* PR_TASK_PERF_EVENTS_DISABLE: "disable all counters attached to the calling
 * process"; ENABLE turns them back on.  Exact with a write breakpoint. */
CONF_TEST(prctl, disable_enable_exact)
{
	int fd = write_bp(t, 0, 0);

	conf_fire(30);
	PMC_CHECK(t, prctl(PR_TASK_PERF_EVENTS_DISABLE, 0, 0, 0, 0) == 0);
	conf_fire(1000);
	PMC_CHECK(t, prctl(PR_TASK_PERF_EVENTS_ENABLE, 0, 0, 0, 0) == 0);
	conf_fire(12);
	PMC_CHECK_EQ(t, read_u64(t, fd), 42);
}

/* The prctl acts on every event of the process at once, software ones too. */
CONF_TEST(prctl, disable_stops_task_clock)
{
	struct perf_event_attr a;
	uint64_t v1, v2;
	int fd;

	sw_attr(&a, PERF_COUNT_SW_TASK_CLOCK);
	a.disabled = 0;
	fd = OPEN(t, &a, 0, -1, -1, 0);
	conf_spin(100000);
	PMC_CHECK(t, prctl(PR_TASK_PERF_EVENTS_DISABLE, 0, 0, 0, 0) == 0);
	v1 = read_u64(t, fd);
	conf_spin(2000000);
	v2 = read_u64(t, fd);
	PMC_CHECK(t, prctl(PR_TASK_PERF_EVENTS_ENABLE, 0, 0, 0, 0) == 0);
	PMC_CHECK(t, v1 > 0);
	PMC_CHECK_EQ(t, v2, v1);
}

/* ---- inherit and exec ------------------------------------------------------------------- */

static int fire_1000(void *arg)
{
	(void)arg;
	conf_fire(1000);
	return 0;
}

/* The exact source (inherit as given), 1000 events in a child process that
 * exits, then 5 in the parent: what the parent's event reads.  The child
 * shares this address space (CLONE_VM | CLONE_VFORK, on a stack touched in
 * advance), so neither side takes a copy-on-write fault of fork. */
static uint64_t child_then_parent_writes(struct pmc_test *t, int inherit)
{
	enum { STACK = 256 * 1024 };
	char *stack = conf_prefaulted_stack(STACK);
	int fd = write_bp(t, 0, inherit), status;
	pid_t pid;

	PMC_CHECK(t, stack != NULL);
	pid = clone(fire_1000, stack + STACK, CLONE_VM | CLONE_VFORK | SIGCHLD, NULL);
	PMC_CHECK(t, pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status));
	conf_fire(5);
	return read_u64(t, fd);
}

/* inherit: "the counter should count events of child tasks as well";
 * the child's counts reach the parent's event when the child exits. */
CONF_TEST(exec, inherit_counts_children)
{
	PMC_CHECK_EQ(t, child_then_parent_writes(t, 1), 1005);
}

/* Without inherit the child's work is not counted. */
CONF_TEST(exec, no_inherit_no_children)
{
	PMC_CHECK_EQ(t, child_then_parent_writes(t, 0), 5);
}

/* A child that waits for a byte, then execs /bin/true (or busybox true). */
static pid_t child_then_exec(int *go)
{
	int p[2];
	pid_t pid;

	if (pipe(p))
		return -1;
	pid = fork();
	if (pid == 0) {
		char c;

		close(p[1]);
		if (read(p[0], &c, 1) != 1)
			_exit(2);
		execl("/bin/true", "true", (char *)NULL);
		execl("/bin/busybox", "true", (char *)NULL);
		_exit(3);
	}
	close(p[0]);
	*go = p[1];
	return pid;
}

/* enable_on_exec: "the counter should be automatically enabled after a call
 * to exec": nothing before, something after. */
CONF_TEST(exec, enable_on_exec)
{
	struct perf_event_attr a;
	int go, fd, status;
	pid_t pid = child_then_exec(&go);

	PMC_CHECK(t, pid > 0);
	sw_attr(&a, PERF_COUNT_SW_TASK_CLOCK);
	a.enable_on_exec = 1;
	fd = OPEN(t, &a, pid, -1, -1, 0);
	usleep(20000);
	PMC_CHECK_EQ(t, read_u64(t, fd), 0);
	PMC_CHECK(t, write(go, "x", 1) == 1);
	waitpid(pid, &status, 0);
	PMC_CHECK(t, WIFEXITED(status) && WEXITSTATUS(status) == 0);
	PMC_CHECK(t, read_u64(t, fd) > 0);
}

/* remove_on_exec (Linux 5.13): "event is removed from the task on exec":
 * after exec it counts no more, while its twin without the bit goes on. */
CONF_TEST(exec, remove_on_exec)
{
	struct perf_event_attr a;
	int go, removed, kept, status;
	pid_t pid;

	conf_require_kernel(t, 5, 13, "remove_on_exec");
	pid = child_then_exec(&go);
	PMC_CHECK(t, pid > 0);
	sw_attr(&a, PERF_COUNT_SW_PAGE_FAULTS);
	a.disabled = 0;
	a.remove_on_exec = 1;
	removed = OPEN(t, &a, pid, -1, -1, 0);
	a.remove_on_exec = 0;
	kept = OPEN(t, &a, pid, -1, -1, 0);
	PMC_CHECK(t, write(go, "x", 1) == 1);
	waitpid(pid, &status, 0);
	/* exec and the new program fault in pages: only the kept event sees them. */
	PMC_CHECK(t, read_u64(t, kept) > read_u64(t, removed) + 10);
}

/* ---- breakpoints ------------------------------------------------------------------------ */

/* One 8-byte word seen as every access width (a union: no aliasing games). */
static volatile union {
	uint8_t b;
	uint16_t h;
	uint32_t w;
	uint64_t d;
} word __attribute__((aligned(8)));

static void bp_len_case(struct pmc_test *t, unsigned len)
{
	struct perf_event_attr a;
	int fd;

	conf_require_kind(t, PMC_KIND_CHECK_BP_WRITE);
	bp_attr(&a, (const void *)&word, len, HW_BREAKPOINT_W);
	a.disabled = 0;
	fd = OPEN(t, &a, 0, -1, -1, 0);
	for (int i = 0; i < 1000; i++) {
		switch (len) {
		case 1:
			word.b = (uint8_t)i;
			break;
		case 2:
			word.h = (uint16_t)i;
			break;
		case 4:
			word.w = (uint32_t)i;
			break;
		default:
			word.d = (uint64_t)i;
		}
	}
	PMC_CHECK_EQ(t, read_u64(t, fd), 1000);
}

/* bp_len HW_BREAKPOINT_LEN_1/2/4/8 with bp_type HW_BREAKPOINT_W: "count when
 * we write the memory location": 1000 writes, 1000 counts. */
CONF_TEST(bp, write_len_1) { bp_len_case(t, 1); }
CONF_TEST(bp, write_len_2) { bp_len_case(t, 2); }
CONF_TEST(bp, write_len_4) { bp_len_case(t, 4); }
CONF_TEST(bp, write_len_8) { bp_len_case(t, 8); }

/* HW_BREAKPOINT_RW: reads and writes both count. */
CONF_TEST(bp, read_write_counts_both)
{
	struct perf_event_attr a;
	uint64_t sum = 0;
	int fd;

	conf_require_kind(t, PMC_KIND_CHECK_BP_RW);

	bp_attr(&a, (const void *)&word, 8, HW_BREAKPOINT_RW);
	a.disabled = 0;
	fd = OPEN(t, &a, 0, -1, -1, 0);
	for (int i = 0; i < 300; i++)
		sum += word.d;
	for (int i = 0; i < 200; i++)
		word.d = (uint64_t)i;
	PMC_CHECK_EQ(t, read_u64(t, fd), 500);
	(void)sum;
}

/*
 * HW_BREAKPOINT_R: "count when we read the memory location".  x86 debug
 * registers have no read-only mode, so the kernel refuses it there (EINVAL;
 * use HW_BREAKPOINT_RW); arm64 watchpoints have one, and count reads only.
 */
CONF_TEST(bp, read_only)
{
	struct perf_event_attr a;
	uint64_t sum = 0;

	bp_attr(&a, (const void *)&word, 8, HW_BREAKPOINT_R);
	a.disabled = 0;
#if defined(__x86_64__) || defined(__i386__)
	EXPECT_ERRNO(t, peo(&a, 0, -1, -1, 0), EINVAL);
	(void)sum;
#else
	{
		int fd = OPEN(t, &a, 0, -1, -1, 0);

		for (int i = 0; i < 300; i++)
			sum += word.d;
		for (int i = 0; i < 200; i++)
			word.d = (uint64_t)i;
		PMC_CHECK_EQ(t, read_u64(t, fd), 300);
	}
#endif
}

__attribute__((noinline, used)) int conf_bp_callee(int x)
{
	__asm__ __volatile__("" : "+r"(x));
	return x + 1;
}

/* HW_BREAKPOINT_X: "count when we execute code at the memory location". */
CONF_TEST(bp, execute_counts_calls)
{
	struct perf_event_attr a;
	int fd, acc = 0;

	conf_require_kind(t, PMC_KIND_CHECK_BP_EXEC);

	bp_attr(&a, (const void *)conf_bp_callee, 0, HW_BREAKPOINT_X);
	a.disabled = 0;
	fd = OPEN(t, &a, 0, -1, -1, 0);
	for (int i = 0; i < 4321; i++)
		acc = conf_bp_callee(acc);
	PMC_CHECK_EQ(t, read_u64(t, fd), 4321);
}

/*
 * Alignment is the architecture's rule, not the manual's: x86 debug
 * registers watch naturally aligned ranges only, so an unaligned one is
 * refused (EINVAL); arm64 watchpoints take any byte range inside a
 * doubleword (a byte-address-select mask), so the same request opens and
 * counts writes that touch those bytes.
 */
CONF_TEST(bp, unaligned_address)
{
	struct perf_event_attr a;

	conf_require_kind(t, PMC_KIND_CHECK_BP_WRITE);

	bp_attr(&a, (const char *)&word + 1, 4, HW_BREAKPOINT_W);
#if defined(__x86_64__) || defined(__i386__)
	EXPECT_ERRNO(t, peo(&a, 0, -1, -1, 0), EINVAL);
#else
	{
		int fd;

		a.disabled = 0;
		fd = OPEN(t, &a, 0, -1, -1, 0);
		for (int i = 0; i < 10; i++)
			word.d = (uint64_t)i;
		word.b = 1; /* byte 0 is outside the watched bytes 1..4 */
		PMC_CHECK_EQ(t, read_u64(t, fd), 10);
	}
#endif
}

/* HW_BREAKPOINT_EMPTY watches nothing: refused with EINVAL. */
CONF_TEST(bp, empty_type_einval)
{
	struct perf_event_attr a;

	bp_attr(&a, (const void *)&word, 8, HW_BREAKPOINT_EMPTY);
	EXPECT_ERRNO(t, peo(&a, 0, -1, -1, 0), EINVAL);
}

/* "ENOSPC is still returned if you try to add more breakpoint events than
 * supported by the hardware." */
CONF_TEST(bp, slots_exhausted_enospc)
{
	struct perf_event_attr a;
	static volatile uint64_t words[16];
	int n = 0;

	for (n = 0; n < 16; n++) {
		bp_attr(&a, (const void *)&words[n], 8, HW_BREAKPOINT_W);
		if (peo(&a, 0, -1, -1, 0) < 0)
			break;
	}
	PMC_CHECK(t, n >= 1 && n < 16);
	PMC_CHECK_EQ(t, errno, ENOSPC);
	pmc_test_note(t, "%d breakpoint slots", n);
}

/* EACCES/EPERM: "setting a breakpoint on a kernel address" needs privilege. */
CONF_TEST(bp, kernel_address_needs_privilege)
{
	struct perf_event_attr a;
	long fd;

	if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0))
		pmc_test_skip(t, "cannot drop privileges to nobody: %s", strerror(errno));
	bp_attr(&a, (const void *)(uintptr_t)-4096, 8, HW_BREAKPOINT_W);
	a.exclude_kernel = 0;
	fd = peo(&a, 0, -1, -1, 0);
	PMC_CHECK(t, fd < 0 && (errno == EACCES || errno == EPERM));
}

/* ---- overflow notification and sigtrap ------------------------------------------------------ */

static volatile sig_atomic_t rt_signals, rt_last_code;

static CONF_NO_ASAN void on_rt(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	rt_signals++;
	rt_last_code = si->si_code;
}

/*
 * Overflow notification by signal: O_ASYNC with F_SETSIG and F_SETOWN; a
 * realtime signal is queued per overflow, so 10 overflows are 10 signals
 * (si_code POLL_IN).  The overflows are page faults (period 1) on fresh
 * pages: exact, and the same on every architecture.
 */
static char *fresh_pages(size_t n)
{
	char *m = mmap(NULL, n * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (m != MAP_FAILED)
		madvise(m, n * 4096, MADV_NOHUGEPAGE);
	return m == MAP_FAILED ? NULL : m;
}

static CONF_NO_ASAN void touch(char *m, size_t n)
{
	long psize = sysconf(_SC_PAGESIZE);

	for (size_t i = 0; i < n; i++)
		((volatile char *)m)[i * (size_t)psize] = 1;
}

/*
 * With period 1 every page fault is an overflow, the signal path's own
 * included: the first delivery faults in the handler's code and the stack
 * the frame is built on.  Run that path once (and touch stack and code) before
 * counting, so only the test's faults remain.
 */
static CONF_NO_ASAN void warm_signal_path(int signo)
{
	volatile char stack[64 * 1024];
	char *once = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	for (size_t i = 0; i < sizeof(stack); i += 512)
		stack[i] = 0;
	if (once != MAP_FAILED) {
		touch(once, 1);
		munmap(once, 4096);
	}
	raise(signo);
	rt_signals = 0;
}

static int async_faults(struct pmc_test *t, int signo)
{
	struct perf_event_attr a;
	struct sigaction sa = { 0 };
	int fd;

	sa.sa_sigaction = on_rt;
	sa.sa_flags = SA_SIGINFO;
	sigaction(signo, &sa, NULL);
	warm_signal_path(signo);
	sw_attr(&a, PERF_COUNT_SW_PAGE_FAULTS);
	a.sample_period = 1;
	a.wakeup_events = 1;
	fd = OPEN(t, &a, 0, -1, -1, 0);
	PMC_CHECK(t, fcntl(fd, F_SETFL, O_ASYNC) == 0);
	PMC_CHECK(t, fcntl(fd, F_SETSIG, signo) == 0);
	PMC_CHECK(t, fcntl(fd, F_SETOWN, getpid()) == 0);
	return fd;
}

CONF_TEST(signal, overflow_signals_exact)
{
	char *m = fresh_pages(10);
	int fd = async_faults(t, SIGRTMIN + 1);

	PMC_CHECK(t, m != NULL);
	ioc(t, fd, PERF_EVENT_IOC_ENABLE, 0);
	touch(m, 10);
	ioc(t, fd, PERF_EVENT_IOC_DISABLE, 0);
	PMC_CHECK_EQ(t, rt_signals, 10);
	PMC_CHECK_EQ(t, rt_last_code, POLL_IN);
}

/* Overflow signals stop with the descriptor: an event closed while
 * enabled raises none for the overflows after the close (the event is
 * gone).  Page faults, as above: a breakpoint's signal would be delivered
 * between the watchpoint and the single step over the store on arm64, and
 * on Linux 5.10 the store then traps again for ever (measured in the lane:
 * the guest hung). */
CONF_TEST(signal, none_after_close)
{
	char *m = fresh_pages(10);
	int fd = async_faults(t, SIGRTMIN + 3);

	PMC_CHECK(t, m != NULL);
	ioc(t, fd, PERF_EVENT_IOC_ENABLE, 0);
	touch(m, 5);
	ioc(t, fd, PERF_EVENT_IOC_DISABLE, 0);
	PMC_CHECK_EQ(t, rt_signals, 5);
	ioc(t, fd, PERF_EVENT_IOC_ENABLE, 0);
	close(fd);
	touch(m + 5 * (size_t)sysconf(_SC_PAGESIZE), 5);
	PMC_CHECK_EQ(t, rt_signals, 5);
}

/* REFRESH: "the overflow counter is ... the number of overflows before the
 * event is disabled"; the last signal comes with POLL_HUP. */
CONF_TEST(signal, refresh_disables_after_n)
{
	char *m = fresh_pages(10);
	int fd = async_faults(t, SIGRTMIN + 2);

	PMC_CHECK(t, m != NULL);
	ioc(t, fd, PERF_EVENT_IOC_REFRESH, 3);
	touch(m, 10);
	PMC_CHECK_EQ(t, rt_signals, 3);
	PMC_CHECK_EQ(t, rt_last_code, POLL_HUP);
	PMC_CHECK_EQ(t, read_u64(t, fd), 3);
}

/* PERIOD: "updates the overflow period"; with period 5, 20 faults overflow 4 times. */
CONF_TEST(signal, period_ioctl)
{
	char *m = fresh_pages(20);
	int fd = async_faults(t, SIGRTMIN + 3);
	uint64_t period = 5;

	PMC_CHECK(t, m != NULL);
	ioc(t, fd, PERF_EVENT_IOC_PERIOD, (unsigned long)&period);
	ioc(t, fd, PERF_EVENT_IOC_ENABLE, 0);
	touch(m, 20);
	ioc(t, fd, PERF_EVENT_IOC_DISABLE, 0);
	PMC_CHECK_EQ(t, rt_signals, 4);
}

static volatile sig_atomic_t traps;
static volatile unsigned long trap_data, trap_type, trap_code;

/* The kernel's siginfo layout: after si_addr come the _perf fields
 * { unsigned long data; u32 type; u32 flags; } (glibc does not name them). */
static CONF_NO_ASAN void on_trap(int sig, siginfo_t *si, void *uc)
{
	unsigned long data;
	uint32_t type;

	(void)sig;
	(void)uc;
	memcpy(&data, (const char *)&si->si_addr + sizeof(void *), sizeof(data));
	memcpy(&type, (const char *)&si->si_addr + sizeof(void *) + sizeof(long), sizeof(type));
	traps++;
	trap_code = (unsigned long)si->si_code;
	trap_data = data;
	trap_type = type;
}

/* sigtrap (Linux 5.13): "send synchronous SIGTRAP on event"; si_code
 * TRAP_PERF, si_perf_data = attr.sig_data, si_perf_type = attr.type.  Page
 * faults again: one trap per fault. */
CONF_TEST(signal, sigtrap_siginfo)
{
	struct perf_event_attr a;
	struct sigaction sa = { 0 };
	char *m = fresh_pages(3);

	conf_require_kernel(t, 5, 13, "sigtrap");
	PMC_CHECK(t, m != NULL);
	sa.sa_sigaction = on_trap;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGTRAP, &sa, NULL);
	warm_signal_path(SIGTRAP);
	traps = 0;
	sw_attr(&a, PERF_COUNT_SW_PAGE_FAULTS);
	a.sample_period = 1;
	a.sigtrap = 1;
	a.remove_on_exec = 1;
	a.sig_data = 0xfeedf00d;
	a.disabled = 0;
	OPEN(t, &a, 0, -1, -1, 0);
	touch(m, 3);
	PMC_CHECK_EQ(t, traps, 3);
	PMC_CHECK_EQ(t, trap_code, 6 /* TRAP_PERF */);
	PMC_CHECK_EQ(t, trap_data, 0xfeedf00d);
	PMC_CHECK_EQ(t, trap_type, PERF_TYPE_SOFTWARE);
}

/* sigtrap without remove_on_exec is refused (a signal handler would not
 * survive exec): EINVAL. */
CONF_TEST(signal, sigtrap_needs_remove_on_exec)
{
	struct perf_event_attr a;

	conf_require_kernel(t, 5, 13, "sigtrap");
	conf_source_attr(t, &a);
	a.sample_period = 1;
	a.sigtrap = 1;
	EXPECT_ERRNO(t, peo(&a, 0, -1, -1, 0), EINVAL);
}

/* poll(): "POLLIN ... when an overflow happens" once wakeup_events samples
 * are in the ring (here 1), not before. */
CONF_TEST(signal, poll_in_on_overflow)
{
	struct perf_event_attr a;
	struct pmc_ring *ring;
	struct pmc_error err;
	struct pollfd p;
	int fd;

	conf_source_attr(t, &a);
	a.sample_period = 1;
	a.wakeup_events = 1;
	a.sample_type = PERF_SAMPLE_IP;
	fd = OPEN(t, &a, 0, -1, -1, 0);
	if (pmc_ring_map(&ring, fd, 1, &err))
		pmc_test_fail(t, "%s", err.message);
	p = (struct pollfd){ fd, POLLIN, 0 };
	PMC_CHECK_EQ(t, poll(&p, 1, 0), 0);
	ioc(t, fd, PERF_EVENT_IOC_ENABLE, 0);
	conf_fire(1);
	PMC_CHECK_EQ(t, poll(&p, 1, 1000), 1);
	PMC_CHECK(t, p.revents & POLLIN);
	pmc_ring_unmap(ring);
}
