/* SPDX-License-Identifier: MIT */
/*
 * One event sampled on this thread: overflow every `period` events, each
 * sample the instruction pointer, read from the event's ring between
 * enable and disable.  With PMC_OPEN_INHERIT the threads and children made
 * after the open are sampled too; an inherited per-task event cannot be
 * mapped itself (perf_mmap refuses it: EINVAL), so its samples go to the
 * ring of a dummy event on this thread (PERF_EVENT_IOC_SET_OUTPUT).
 *
 * A uprobe (calls:FUNC) fires at the function's first instruction, so its
 * own address names the function only; what a sample of it says is the
 * caller.  At that instruction on x86-64 the call has just pushed its
 * return address and nothing else has moved the stack pointer: the 8
 * bytes at the user stack pointer (PERF_SAMPLE_STACK_USER, size 8) are the
 * return address, exactly.  The sample's address is then the return
 * address minus 1, the last byte of the call instruction, which lies in
 * the caller even when the call is the caller's last instruction.  (A
 * frame-pointer callchain would not do: at the entry the frame pointer is
 * still the caller's, and the chain's first return address is its
 * caller's.)  A function entered by a jump (a tail call) is named by the
 * function the jump's caller returns to.  Other architectures keep the
 * return address elsewhere (arm64: in x30) and are refused.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <pmcheck/sampling.h>

#include "core_int.h"
#include "counters_int.h"

struct pmc_sampler {
	int fd, ring_fd; /* ring_fd: the dummy's (inherit), else fd */
	struct pmc_ring *ring;
	uint64_t period;
	bool callers;    /* a uprobe: samples carry the return address */
};

static int open_attr(struct perf_event_attr *a)
{
	long fd = syscall(SYS_perf_event_open, a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? -errno : (int)fd;
}

int pmc_sampler_open(struct pmc_sampler **out, const struct pmc_event_spec *spec,
		     uint64_t period, unsigned flags, size_t data_pages, struct pmc_error *err)
{
	struct perf_event_attr a;
	struct pmc_sampler *s;
	int rc;

	*out = NULL;
	if (period == 0)
		return pmc__fail(err, -EINVAL, spec->name, -1,
				 "sampling \"%s\": a period of 0 samples nothing; give 1 or more",
				 spec->name);
	if (spec->kind == PMC_KIND_TRACEPOINT || spec->kind == PMC_KIND_BREAKPOINT)
		return pmc__fail(err, PMC_E_UNSUPPORTED, spec->name, -1,
				 "sampling \"%s\": a %s event fires at one place, so its samples name that place only; sample the work around it (instructions, task-clock)",
				 spec->name, pmc_event_kind_name(spec->kind));
#if !defined(__x86_64__)
	if (spec->kind == PMC_KIND_UPROBE)
		return pmc__fail(err, PMC_E_UNSUPPORTED, spec->name, -1,
				 "sampling \"%s\": a uprobe's samples name its callers by the return address on the stack at the function's entry, which only x86-64 keeps there; on this architecture count its calls only",
				 spec->name);
#endif
	s = calloc(1, sizeof(*s));
	if (!s)
		return pmc__fail(err, -ENOMEM, spec->name, -1, "out of memory");
	s->fd = s->ring_fd = -1;
	s->period = period;
	s->callers = spec->kind == PMC_KIND_UPROBE;
	if (flags & PMC_OPEN_INHERIT) {
		memset(&a, 0, sizeof(a));
		a.size = sizeof(a);
		a.type = PERF_TYPE_SOFTWARE;
		a.config = PERF_COUNT_SW_DUMMY;
		a.exclude_kernel = 1;
		rc = open_attr(&a);
		if (rc < 0) {
			pmc__fail(err, rc, "dummy", -1,
				  "sampling \"%s\": cannot open the dummy event that holds the samples of inherited copies: %s",
				  spec->name, strerror(-rc));
			goto fail;
		}
		s->ring_fd = rc;
	}
	/* The ring first: SET_OUTPUT needs its target mapped. */
	if (s->ring_fd >= 0 && (rc = pmc_ring_map(&s->ring, s->ring_fd, data_pages, err)) != 0)
		goto fail;
	pmc__fill_attr(&a, spec, 1, flags & PMC_OPEN_INHERIT);
	a.read_format = 0;
	a.sample_period = period;
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID;
	if (s->callers) {
		a.sample_type |= PERF_SAMPLE_STACK_USER;
		a.sample_stack_user = 8; /* the return address */
	}
	a.disabled = 1;
	rc = open_attr(&a);
	if (rc < 0) {
		rc = pmc__open_error(rc, NULL, spec, err);
		goto fail;
	}
	s->fd = rc;
	if (s->ring_fd < 0) {
		s->ring_fd = s->fd;
		rc = pmc_ring_map(&s->ring, s->ring_fd, data_pages, err);
		if (rc)
			goto fail;
	} else if (ioctl(s->fd, PERF_EVENT_IOC_SET_OUTPUT, s->ring_fd) < 0) {
		rc = -errno;
		pmc__fail(err, rc, spec->name, -1,
			  "sampling \"%s\": cannot send the samples of inherited copies to one ring (PERF_EVENT_IOC_SET_OUTPUT: %s)",
			  spec->name, strerror(-rc));
		goto fail;
	}
	*out = s;
	return 0;
fail:
	pmc_sampler_close(s);
	return rc < 0 ? rc : PMC_E_UNSUPPORTED;
}

int pmc_sampler_enable(struct pmc_sampler *s)
{
	return ioctl(s->fd, PERF_EVENT_IOC_ENABLE, 0) < 0 ? -errno : 0;
}

int pmc_sampler_disable(struct pmc_sampler *s)
{
	return ioctl(s->fd, PERF_EVENT_IOC_DISABLE, 0) < 0 ? -errno : 0;
}

uint64_t pmc_sampler_period(const struct pmc_sampler *s)
{
	return s->period;
}

int pmc_sampler_drain(struct pmc_sampler *s, pmc_sample_ip_fn fn, void *ctx, uint64_t *lost)
{
	/* A SAMPLE here is header, ip, pid/tid, and for a uprobe the user
	 * stack: its size asked (8), that many bytes, and how many of them
	 * the kernel could copy (dyn_size; the size field alone when it
	 * copied none).  LOST is header, id, lost. */
	uint64_t rec[64];
	size_t len;
	int rc;

	while ((rc = pmc_ring_next(s->ring, rec, sizeof(rec), &len)) == 1) {
		const struct perf_event_header *h = (const void *)rec;

		if (h->type == PERF_RECORD_SAMPLE && len >= 24 && !s->callers)
			fn(ctx, rec[1], (uint32_t)rec[2], (uint32_t)(rec[2] >> 32));
		else if (h->type == PERF_RECORD_SAMPLE && len >= 48 && rec[3] == 8 && rec[5] == 8)
			fn(ctx, rec[4] - 1, (uint32_t)rec[2], (uint32_t)(rec[2] >> 32));
		else if (h->type == PERF_RECORD_SAMPLE && s->callers && lost)
			++*lost; /* the stack could not be read: no caller */
		else if (h->type == PERF_RECORD_LOST && len >= 24 && lost)
			*lost += rec[2];
	}
	return rc == 0 ? 0 : rc;
}

void pmc_sampler_close(struct pmc_sampler *s)
{
	if (!s)
		return;
	pmc_ring_unmap(s->ring);
	if (s->ring_fd >= 0 && s->ring_fd != s->fd)
		close(s->ring_fd);
	if (s->fd >= 0)
		close(s->fd);
	free(s);
}
