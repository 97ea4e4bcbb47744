/* SPDX-License-Identifier: MIT */
/*
 * Conformance: the mmap ring buffer (perf_event_open(2), "MMAP layout"):
 * its layout, the sample fields in their documented order, group reads,
 * the sample_id trailer, records, LOST, wakeups, pausing, redirection and
 * frequency sampling.
 */
#include "conf.h"

#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include <pmcheck/event.h>

/* ---- the mmap ring buffer ------------------------------------------------------------------- */

/* A sampling event on the exact source: one sample per page fault. */
static int sampling_bp(struct pmc_test *t, uint64_t sample_type, int extra_flags)
{
	struct perf_event_attr a;

	conf_source_attr(t, &a);
	a.sample_period = 1;
	a.sample_type = sample_type;
	a.sample_id_all = !!(extra_flags & 1);
	a.comm = !!(extra_flags & 2);
	a.mmap = !!(extra_flags & 4);
	a.wakeup_events = 1;
	return OPEN(t, &a, 0, -1, -1, 0);
}

/* The mmap layout: "data_offset ... data_size" (Linux 4.1) locate the data
 * area right after the control page, 2^n pages long; nothing written yet. */
CONF_TEST(ring, mmap_layout)
{
	int fd = sampling_bp(t, PERF_SAMPLE_IP, 0);
	struct pmc_ring *ring = conf_map_ring(t, fd, 8);
	struct perf_event_mmap_page *pg = pmc_ring_page(ring);
	long psize = sysconf(_SC_PAGESIZE);

	PMC_CHECK_EQ(t, pg->data_offset, psize);
	PMC_CHECK_EQ(t, pg->data_size, 8 * psize);
	PMC_CHECK_EQ(t, pg->data_head, 0);
	/* A data area of 3 pages is not a power of two: EINVAL from mmap. */
	PMC_CHECK(t, mmap(NULL, 4 * (size_t)psize, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) ==
			     MAP_FAILED);
	pmc_ring_unmap(ring);
}

/*
 * PERF_RECORD_SAMPLE: the fields sample_type selects, "in the following
 * order": IDENTIFIER, IP, TID, TIME, ADDR, ID, STREAM_ID, CPU, PERIOD --
 * each record is exactly their size, and every field reads back right.
 */
CONF_TEST(ring, sample_fields_in_order)
{
	struct pmc_sample_layout lay = {
		.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			       PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_ID |
			       PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD,
	};
	int fd = sampling_bp(t, lay.sample_type, 0);
	struct pmc_ring *ring = conf_map_ring(t, fd, 8);
	unsigned char buf[512];
	uint64_t id = 0, last_time = 0;
	struct pmc_error err;
	struct pmc_sample s;
	int n = 0;
	size_t len;

	ioc(t, fd, PERF_EVENT_IOC_ID, (unsigned long)&id);
	ioc(t, fd, PERF_EVENT_IOC_ENABLE, 0);
	conf_fire(20);
	ioc(t, fd, PERF_EVENT_IOC_DISABLE, 0);
	while (pmc_ring_next(ring, buf, sizeof(buf), &len) == 1) {
		if (((struct perf_event_header *)buf)->type != PERF_RECORD_SAMPLE)
			continue;
		PMC_CHECK_EQ(t, len, sizeof(struct perf_event_header) + 9 * 8);
		if (pmc_sample_parse(buf, len, &lay, &s, &err))
			pmc_test_fail(t, "%s", err.message);
		PMC_CHECK_EQ(t, s.identifier, id);
		PMC_CHECK_EQ(t, s.id, id);
		PMC_CHECK_EQ(t, s.pid, getpid());
		PMC_CHECK_EQ(t, s.tid, gettid());
		/* A page fault's address: the n-th fresh page, in order. */
		PMC_CHECK_EQ(t, s.addr, (uintptr_t)conf_fire_base + (uintptr_t)n * (uintptr_t)sysconf(_SC_PAGESIZE));
		PMC_CHECK_EQ(t, s.period, 1);
		PMC_CHECK(t, s.ip != 0 && s.time >= last_time);
		last_time = s.time;
		n++;
	}
	PMC_CHECK_EQ(t, n, 20);
	pmc_ring_unmap(ring);
}

/* PERF_SAMPLE_READ with PERF_FORMAT_GROUP: each sample carries the whole
 * group's values, "nr" of them, leader first. */
CONF_TEST(ring, sample_read_group)
{
	struct pmc_sample_layout lay = { .sample_type = PERF_SAMPLE_READ,
					 .read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID };
	struct perf_event_attr a;
	unsigned char buf[512];
	struct pmc_error err;
	struct pmc_sample s;
	struct pmc_ring *ring;
	int leader, n = 0;
	size_t len;

	conf_source_attr(t, &a);
	a.sample_period = 1;
	a.sample_type = lay.sample_type;
	a.read_format = lay.read_format;
	leader = OPEN(t, &a, 0, -1, -1, 0);
	sw_attr(&a, PERF_COUNT_SW_TASK_CLOCK);
	a.disabled = 0;
	a.read_format = lay.read_format;
	OPEN(t, &a, 0, -1, leader, 0);
	ring = conf_map_ring(t, leader, 8);
	ioc(t, leader, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP);
	conf_fire(4);
	ioc(t, leader, PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP);
	while (pmc_ring_next(ring, buf, sizeof(buf), &len) == 1) {
		if (((struct perf_event_header *)buf)->type != PERF_RECORD_SAMPLE)
			continue;
		if (pmc_sample_parse(buf, len, &lay, &s, &err))
			pmc_test_fail(t, "%s", err.message);
		n++;
		PMC_CHECK_EQ(t, s.read_nr, 2);
		PMC_CHECK_EQ(t, s.read_value[0], (uint64_t)n); /* the leader: writes so far */
	}
	PMC_CHECK_EQ(t, n, 4);
	pmc_ring_unmap(ring);
}

/* sample_id_all: "TID, TIME, ID, STREAM_ID, CPU and IDENTIFIER ... in
 * non-PERF_RECORD_SAMPLE records" -- a COMM record (comm=1, prctl
 * PR_SET_NAME) ends with them. */
CONF_TEST(ring, sample_id_all_trailer)
{
	struct pmc_sample_layout lay = { .sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_ID |
							PERF_SAMPLE_IDENTIFIER,
					 .sample_id_all = 1 };
	int fd = sampling_bp(t, lay.sample_type, 1 | 2);
	struct pmc_ring *ring = conf_map_ring(t, fd, 8);
	unsigned char buf[512];
	uint64_t id = 0;
	struct pmc_error err;
	struct pmc_sample s;
	int comms = 0;
	size_t len;

	ioc(t, fd, PERF_EVENT_IOC_ID, (unsigned long)&id);
	ioc(t, fd, PERF_EVENT_IOC_ENABLE, 0);
	prctl(PR_SET_NAME, "pmc-conform", 0, 0, 0);
	ioc(t, fd, PERF_EVENT_IOC_DISABLE, 0);
	while (pmc_ring_next(ring, buf, sizeof(buf), &len) == 1) {
		struct perf_event_header *h = (void *)buf;

		if (h->type != PERF_RECORD_COMM)
			continue;
		PMC_CHECK(t, strstr((const char *)buf + 16, "pmc-conform") != NULL);
		if (pmc_sample_id_parse(buf, len, &lay, &s, &err))
			pmc_test_fail(t, "%s", err.message);
		PMC_CHECK_EQ(t, s.tid, gettid());
		PMC_CHECK_EQ(t, s.id, id);
		PMC_CHECK_EQ(t, s.identifier, id);
		comms++;
	}
	PMC_CHECK_EQ(t, comms, 1);
	pmc_ring_unmap(ring);
}

/* mmap=1: "PERF_RECORD_MMAP ... for every mmap() call that has PROT_EXEC",
 * naming the file. */
CONF_TEST(ring, mmap_records)
{
	int fd = sampling_bp(t, PERF_SAMPLE_IP, 4);
	struct pmc_ring *ring = conf_map_ring(t, fd, 8);
	unsigned char buf[4096];
	int file = open("/proc/self/exe", O_RDONLY), found = 0;
	size_t len;
	void *m;

	PMC_CHECK(t, file >= 0);
	ioc(t, fd, PERF_EVENT_IOC_ENABLE, 0);
	m = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, file, 0);
	PMC_CHECK(t, m != MAP_FAILED);
	ioc(t, fd, PERF_EVENT_IOC_DISABLE, 0);
	while (pmc_ring_next(ring, buf, sizeof(buf), &len) == 1) {
		struct perf_event_header *h = (void *)buf;
		uint64_t addr;

		if (h->type != PERF_RECORD_MMAP)
			continue;
		memcpy(&addr, buf + 16, 8); /* pid, tid, then addr */
		if (addr == (uintptr_t)m)
			found++;
	}
	PMC_CHECK_EQ(t, found, 1);
	munmap(m, 4096);
	pmc_ring_unmap(ring);
}

/*
 * A full buffer is not overwritten: the writer respects data_tail and
 * accounts what it dropped in PERF_RECORD_LOST ("id, lost"), written as soon
 * as a record fits again; the records it kept are the oldest ones, in order.
 */
static void drain(struct pmc_test *t, struct pmc_ring *ring, const struct pmc_sample_layout *lay,
		  uint64_t id, uint64_t *kept, uint64_t *lost, uint64_t *last_time)
{
	unsigned char buf[512];
	struct pmc_error err;
	struct pmc_sample s;
	size_t len;

	while (pmc_ring_next(ring, buf, sizeof(buf), &len) == 1) {
		struct perf_event_header *h = (void *)buf;
		uint64_t w[2];

		if (h->type == PERF_RECORD_LOST) {
			memcpy(w, buf + 8, 16);
			PMC_CHECK_EQ(t, w[0], id);
			*lost += w[1];
		} else if (h->type == PERF_RECORD_SAMPLE) {
			if (pmc_sample_parse(buf, len, lay, &s, &err))
				pmc_test_fail(t, "%s", err.message);
			PMC_CHECK(t, s.time >= *last_time);
			*last_time = s.time;
			(*kept)++;
		}
	}
}

CONF_TEST(ring, lost_records_when_full)
{
	struct pmc_sample_layout lay = { .sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TIME |
							PERF_SAMPLE_ID };
	int fd = sampling_bp(t, lay.sample_type, 0);
	struct pmc_ring *ring = conf_map_ring(t, fd, 1);
	uint64_t id = 0, lost = 0, kept = 0, last = 0;

	ioc(t, fd, PERF_EVENT_IOC_ID, (unsigned long)&id);
	ioc(t, fd, PERF_EVENT_IOC_ENABLE, 0);
	conf_fire(2000); /* 2000 x 32-byte samples into one page */
	ioc(t, fd, PERF_EVENT_IOC_DISABLE, 0);
	drain(t, ring, &lay, id, &kept, &lost, &last);
	PMC_CHECK(t, kept > 0 && kept < 2000);
	PMC_CHECK_EQ(t, lost, 0); /* not yet: the LOST record waits for room */
	ioc(t, fd, PERF_EVENT_IOC_ENABLE, 0);
	conf_fire(1);
	ioc(t, fd, PERF_EVENT_IOC_DISABLE, 0);
	drain(t, ring, &lay, id, &kept, &lost, &last);
	PMC_CHECK(t, lost > 0);
	PMC_CHECK_EQ(t, kept + lost, 2001);
	pmc_test_note(t, "%" PRIu64 " samples kept, %" PRIu64 " lost", kept, lost);
	pmc_ring_unmap(ring);
}

/* wakeup_events: "wake up after this many samples": not readable after 4,
 * readable after 5. */
CONF_TEST(ring, wakeup_events)
{
	struct perf_event_attr a;
	struct pollfd p;
	struct pmc_ring *ring;
	int fd;

	conf_source_attr(t, &a);
	a.sample_period = 1;
	a.sample_type = PERF_SAMPLE_IP;
	a.wakeup_events = 5;
	fd = OPEN(t, &a, 0, -1, -1, 0);
	ring = conf_map_ring(t, fd, 8);
	p = (struct pollfd){ fd, POLLIN, 0 };
	ioc(t, fd, PERF_EVENT_IOC_ENABLE, 0);
	conf_fire(4);
	PMC_CHECK_EQ(t, poll(&p, 1, 0), 0);
	conf_fire(1);
	PMC_CHECK_EQ(t, poll(&p, 1, 1000), 1);
	pmc_ring_unmap(ring);
}

/* watermark + wakeup_watermark: wake up once that many bytes are waiting. */
CONF_TEST(ring, wakeup_watermark)
{
	struct perf_event_attr a;
	struct pollfd p;
	struct pmc_ring *ring;
	int fd;

	conf_source_attr(t, &a);
	a.sample_period = 1;
	a.sample_type = PERF_SAMPLE_IP; /* 16-byte records */
	a.watermark = 1;
	a.wakeup_watermark = 16 * 20;
	fd = OPEN(t, &a, 0, -1, -1, 0);
	ring = conf_map_ring(t, fd, 8);
	p = (struct pollfd){ fd, POLLIN, 0 };
	ioc(t, fd, PERF_EVENT_IOC_ENABLE, 0);
	conf_fire(10);
	PMC_CHECK_EQ(t, poll(&p, 1, 0), 0);
	conf_fire(15);
	PMC_CHECK_EQ(t, poll(&p, 1, 1000), 1);
	PMC_CHECK(t, pmc_ring_unread(ring) >= 16 * 20);
	pmc_ring_unmap(ring);
}

/* PAUSE_OUTPUT (Linux 4.7): "pause ... writing to the ring buffer"; records
 * made while paused are dropped, output resumes on 0. */
CONF_TEST(ring, pause_output)
{
	int fd = sampling_bp(t, PERF_SAMPLE_IP, 0);
	struct pmc_ring *ring = conf_map_ring(t, fd, 8);
	unsigned char buf[256];
	int samples = 0;
	size_t len;

	conf_require_kernel(t, 4, 7, "PERF_EVENT_IOC_PAUSE_OUTPUT");
	ioc(t, fd, PERF_EVENT_IOC_ENABLE, 0);
	conf_fire(3);
	ioc(t, fd, PERF_EVENT_IOC_PAUSE_OUTPUT, 1);
	conf_fire(50);
	ioc(t, fd, PERF_EVENT_IOC_PAUSE_OUTPUT, 0);
	conf_fire(2);
	ioc(t, fd, PERF_EVENT_IOC_DISABLE, 0);
	while (pmc_ring_next(ring, buf, sizeof(buf), &len) == 1)
		samples += ((struct perf_event_header *)buf)->type == PERF_RECORD_SAMPLE;
	PMC_CHECK_EQ(t, samples, 5);
	pmc_ring_unmap(ring);
}

/* SET_OUTPUT: "report event notifications to the specified file descriptor
 * rather than the default one": B's samples land in A's ring. */
CONF_TEST(ring, set_output)
{
	struct pmc_sample_layout lay = { .sample_type = PERF_SAMPLE_ID };
	int a_fd = sampling_bp(t, lay.sample_type, 0), b_fd;
	struct perf_event_attr a;
	struct pmc_ring *ring = conf_map_ring(t, a_fd, 8);
	unsigned char buf[256];
	uint64_t id_a = 0, id_b = 0, from_a = 0, from_b = 0;
	struct pmc_error err;
	struct pmc_sample s;
	size_t len;

	sw_attr(&a, PERF_COUNT_SW_PAGE_FAULTS);
	a.exclude_kernel = 0;
	a.sample_period = 1;
	a.sample_type = lay.sample_type;
	b_fd = OPEN(t, &a, 0, -1, -1, 0);
	ioc(t, b_fd, PERF_EVENT_IOC_SET_OUTPUT, (unsigned long)a_fd);
	ioc(t, a_fd, PERF_EVENT_IOC_ID, (unsigned long)&id_a);
	ioc(t, b_fd, PERF_EVENT_IOC_ID, (unsigned long)&id_b);
	/* One at a time: both count page faults. */
	ioc(t, a_fd, PERF_EVENT_IOC_ENABLE, 0);
	conf_fire(3);
	ioc(t, a_fd, PERF_EVENT_IOC_DISABLE, 0);
	ioc(t, b_fd, PERF_EVENT_IOC_ENABLE, 0);
	{
		char *m = mmap(NULL, 4096 * 4, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		for (int i = 0; i < 4; i++)
			m[i * 4096] = 1;
		munmap(m, 4096 * 4);
	}
	ioc(t, b_fd, PERF_EVENT_IOC_DISABLE, 0);
	while (pmc_ring_next(ring, buf, sizeof(buf), &len) == 1) {
		if (((struct perf_event_header *)buf)->type != PERF_RECORD_SAMPLE)
			continue;
		if (pmc_sample_parse(buf, len, &lay, &s, &err))
			pmc_test_fail(t, "%s", err.message);
		from_a += s.id == id_a;
		from_b += s.id == id_b;
	}
	PMC_CHECK_EQ(t, from_a, 3);
	PMC_CHECK(t, from_b >= 4);
	pmc_ring_unmap(ring);
}

/* Frequency sampling (freq=1, sample_freq): "the kernel will adjust the
 * sampling period to try and achieve the desired rate".  task-clock is a
 * timer, so the kernel sets the period to 1e9 / sample_freq ns up front:
 * every PERIOD reads that, and the samples come at that rate (within 30%:
 * the first and last periods are partial, and timer expiry is coarse). */
CONF_TEST(ring, frequency_sampling_rate)
{
	struct pmc_sample_layout lay = { .sample_type = PERF_SAMPLE_PERIOD };
	struct perf_event_attr a;
	unsigned char buf[256];
	struct pmc_error err;
	struct pmc_sample s;
	struct pmc_ring *ring;
	uint64_t t0, cpu_ns, expected;
	int n = 0, fd;
	size_t len;

	sw_attr(&a, PERF_COUNT_SW_TASK_CLOCK);
	a.freq = 1;
	a.sample_freq = 1000;
	a.sample_type = lay.sample_type;
	fd = OPEN(t, &a, 0, -1, -1, 0);
	ring = conf_map_ring(t, fd, 16);
	t0 = conf_thread_cpu_ns();
	ioc(t, fd, PERF_EVENT_IOC_ENABLE, 0);
	while (conf_thread_cpu_ns() - t0 < 100000000)
		conf_spin(10000);
	ioc(t, fd, PERF_EVENT_IOC_DISABLE, 0);
	cpu_ns = conf_thread_cpu_ns() - t0;
	while (pmc_ring_next(ring, buf, sizeof(buf), &len) == 1) {
		if (((struct perf_event_header *)buf)->type != PERF_RECORD_SAMPLE)
			continue;
		if (pmc_sample_parse(buf, len, &lay, &s, &err))
			pmc_test_fail(t, "%s", err.message);
		PMC_CHECK_EQ(t, s.period, 1000000);
		n++;
	}
	expected = cpu_ns / 1000000;
	PMC_CHECK(t, n >= (int)(expected * 7 / 10) && n <= (int)(expected * 13 / 10));
	pmc_test_note(t, "%d samples over %.1f ms of CPU at 1000 Hz", n, cpu_ns / 1e6);
	pmc_ring_unmap(ring);
}

