/* SPDX-License-Identifier: MIT */
/* Helpers shared by the conformance suite's files. */
#ifndef PMCHECK_CONFORMANCE_H
#define PMCHECK_CONFORMANCE_H

#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <pmcheck/harness.h>
#include <pmcheck/pmcheck.h>
#include <pmcheck/sampling.h>

/* A conformance case runs once, without warm-up: it opens descriptors and
 * breakpoint slots and counts signals, all of which a repetition in the same
 * process would accumulate. */
#define CONF_TEST(area, name, ...) PMC_TEST(area, name, .reps = 1, .no_warmup = 1, ##__VA_ARGS__)

static inline long peo(struct perf_event_attr *a, pid_t pid, int cpu, int group, unsigned long flags)
{
	return syscall(SYS_perf_event_open, a, pid, cpu, group, flags);
}

/* A disabled software event of this thread. */
static inline void sw_attr(struct perf_event_attr *a, uint64_t config)
{
	memset(a, 0, sizeof(*a));
	a->type = PERF_TYPE_SOFTWARE;
	a->size = sizeof(*a);
	a->config = config;
	a->disabled = 1;
}

/* A disabled breakpoint on len bytes at addr. */
static inline void bp_attr(struct perf_event_attr *a, const void *addr, unsigned len, unsigned type)
{
	memset(a, 0, sizeof(*a));
	a->type = PERF_TYPE_BREAKPOINT;
	a->size = sizeof(*a);
	a->bp_addr = (uintptr_t)addr;
	a->bp_len = type == HW_BREAKPOINT_X ? sizeof(long) : len;
	a->bp_type = type;
	a->disabled = 1;
	a->exclude_kernel = 1;
	a->exclude_hv = 1;
}

/* Open or fail the case, naming the call and errno. */
#define OPEN(t, attr, pid, cpu, group, flags)                                                  \
	({                                                                                     \
		long fd_ = peo((attr), (pid), (cpu), (group), (flags));                        \
		if (fd_ < 0)                                                                   \
			pmc_test_fail((t), "%s:%d: perf_event_open: %s", __FILE__, __LINE__,  \
				      strerror(errno));                                        \
		(int)fd_;                                                                      \
	})

/* The call must fail with errno `want` (the documented error). */
#define EXPECT_ERRNO(t, call, want)                                                            \
	do {                                                                                   \
		long r_ = (call);                                                              \
		int e_ = errno;                                                                \
		if (!(r_ == -1 && e_ == (want)))                                               \
			pmc_test_fail((t), "%s: returned %ld, errno %d (%s); documented: %s",   \
				      #call, r_, r_ == -1 ? e_ : 0, r_ == -1 ? strerror(e_) : "-", \
				      strerror(want));                                         \
	} while (0)

static inline uint64_t read_u64(struct pmc_test *t, int fd)
{
	uint64_t v = 0;

	if (read(fd, &v, sizeof(v)) != (ssize_t)sizeof(v))
		pmc_test_fail(t, "read(2) of a counter: %s", strerror(errno));
	return v;
}

static inline void ioc(struct pmc_test *t, int fd, unsigned long req, unsigned long arg)
{
	if (ioctl(fd, req, arg) < 0)
		pmc_test_fail(t, "ioctl %#lx: %s", req, strerror(errno));
}

/* Code whose page faults are counted exactly: AddressSanitizer's shadow
 * accesses would fault in shadow pages of their own. */
#if defined(__SANITIZE_ADDRESS__) || defined(__clang__)
#define CONF_NO_ASAN __attribute__((no_sanitize("address")))
#else
#define CONF_NO_ASAN
#endif

/* Declare known kernel bug `id` (conf_events.c's table) when this kernel
 * is between the release that broke it and the one that fixed it. */
void conf_known_issue(struct pmc_test *t, const char *id);

/* Kernel version as major * 1000 + minor, from uname -r. */
int conf_kernel_version(void);

/* The calling thread's CPU time, in ns (CLOCK_THREAD_CPUTIME_ID). */
uint64_t conf_thread_cpu_ns(void);

/* SKIP unless the running kernel is at least major.minor (feature added then). */
void conf_require_kernel(struct pmc_test *t, int major, int minor, const char *feature);

/* A PMU's type from sysfs, or SKIP naming the PMU. */
uint32_t conf_pmu_type(struct pmc_test *t, const char *pmu);

/* SKIP unless this kind counts on this machine (pmc_kind_check), with the
 * check's words. */
void conf_require_kind(struct pmc_test *t, enum pmc_kind_check_id id);

/*
 * The suite's exact event source for behaviours that are not about an event
 * kind (ioctls, prctl, inheritance, rings, samples, signals): user-space
 * page faults, which count on every machine this suite runs on, where a
 * breakpoint may open and never fire.  conf_source_attr fills a disabled
 * event (or SKIPs where page faults failed their check); conf_fire(n) makes
 * exactly n of them in the calling thread (first writes to n fresh pages;
 * conf_fire_base is the first page of the last call's, unmapped after).
 */
void conf_source_attr(struct pmc_test *t, struct perf_event_attr *a);
void conf_fire(long n);
extern char *conf_fire_base;

/* Another task whose only page faults are conf_fire's: a stack mapped and
 * touched before counting starts (NULL when mmap fails), and a thread on
 * it (its TLS lies there too): 0 or an errno. */
void *conf_prefaulted_stack(size_t size);
int conf_thread_prefaulted(pthread_t *th, void *stack, size_t size, void *(*fn)(void *), void *arg);

/* Map fd's ring (1 + pages pages) or fail the case with the reason. */
struct pmc_ring *conf_map_ring(struct pmc_test *t, int fd, size_t pages);

/* Busy work the compiler cannot remove. */
void conf_spin(long iterations);

#endif
