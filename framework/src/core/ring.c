/* SPDX-License-Identifier: MIT */
/* The perf ring buffer reader and the record decoders (sampling.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <pmcheck/sampling.h>

#include "core_int.h"
#include "ring_int.h"

struct pmc_ring {
	struct perf_event_mmap_page *page;
	unsigned char *data;
	uint64_t data_size;
	size_t map_size;
};

int pmc_ring_map(struct pmc_ring **out, int fd, size_t data_pages, struct pmc_error *err)
{
	long psize = sysconf(_SC_PAGESIZE);
	struct pmc_ring *r;
	void *base;

	pmc_error_clear(err);
	*out = NULL;
	if (data_pages == 0 || (data_pages & (data_pages - 1)))
		return pmc__fail(err, -EINVAL, "", -1,
				 "ring buffer of %zu data pages: the kernel wants a power of two (1, 2, 4, ...)",
				 data_pages);
	r = calloc(1, sizeof(*r));
	if (!r)
		return pmc__fail(err, -ENOMEM, "", -1, "out of memory");
	r->map_size = (data_pages + 1) * (size_t)psize;
	base = mmap(NULL, r->map_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED) {
		int rc = -errno;

		free(r);
		if (rc == -EPERM)
			return pmc__fail(err, rc, "", -1,
					 "cannot map a ring of %zu pages: over kernel.perf_event_mlock_kb (and not privileged); map fewer pages or raise the limit",
					 data_pages);
		return pmc__fail(err, rc, "", -1, "cannot map a ring of %zu pages: %s", data_pages,
				 strerror(-rc));
	}
	r->page = base;
	/* data_offset/data_size exist since the page's version 1 era (Linux
	 * 4.1); before that the data area follows the control page. */
	if (r->page->data_size) {
		r->data = (unsigned char *)base + r->page->data_offset;
		r->data_size = r->page->data_size;
	} else {
		r->data = (unsigned char *)base + psize;
		r->data_size = data_pages * (uint64_t)psize;
	}
	*out = r;
	return 0;
}

void pmc_ring_unmap(struct pmc_ring *ring)
{
	if (!ring)
		return;
	munmap(ring->page, ring->map_size);
	free(ring);
}

struct perf_event_mmap_page *pmc_ring_page(const struct pmc_ring *ring)
{
	return ring->page;
}

uint64_t pmc_ring_unread(const struct pmc_ring *ring)
{
	return __atomic_load_n(&ring->page->data_head, __ATOMIC_ACQUIRE) - ring->page->data_tail;
}

int pmc_ring_next(struct pmc_ring *ring, void *buf, size_t size, size_t *len)
{
	/* Acquire: the record bytes are read only after data_head (the
	 * manual's rmb() after reading data_head). */
	uint64_t head = __atomic_load_n(&ring->page->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = ring->page->data_tail;
	int rc = pmc__ring_take(ring->data, ring->data_size, head, tail, buf, size, len);

	/* Release: the kernel may reuse the space only once the copy is done
	 * (the manual's mb() before writing data_tail). */
	if (rc == 1)
		__atomic_store_n(&ring->page->data_tail, tail + *len, __ATOMIC_RELEASE);
	return rc;
}

/* ---- record decoding --------------------------------------------------------------- */

struct cursor {
	const unsigned char *p, *end;
	const char *field; /* where a short record was noticed */
};

static int take(struct cursor *c, void *dst, size_t n, const char *field)
{
	if ((size_t)(c->end - c->p) < n) {
		c->field = field;
		return -1;
	}
	if (dst)
		memcpy(dst, c->p, n);
	c->p += n;
	return 0;
}

static int take_u64(struct cursor *c, uint64_t *v, const char *field)
{
	return take(c, v, 8, field);
}

static const void *take_ptr(struct cursor *c, uint64_t n, const char *field)
{
	const void *at = c->p;

	if ((uint64_t)(c->end - c->p) < n) {
		c->field = field;
		return NULL;
	}
	c->p += n;
	return at;
}

static int read_values(struct cursor *c, uint64_t fmt, struct pmc_sample *s)
{
	uint64_t nr = 1;

	if ((fmt & PERF_FORMAT_GROUP) && take_u64(c, &nr, "read: nr"))
		return -1;
	if (nr > PMC_SAMPLE_READ_MAX) {
		c->field = "read: more group members than PMC_SAMPLE_READ_MAX";
		return -1;
	}
	s->read_nr = nr;
	if (fmt & PERF_FORMAT_GROUP) {
		if ((fmt & PERF_FORMAT_TOTAL_TIME_ENABLED) &&
		    take_u64(c, &s->time_enabled, "read: time_enabled"))
			return -1;
		if ((fmt & PERF_FORMAT_TOTAL_TIME_RUNNING) &&
		    take_u64(c, &s->time_running, "read: time_running"))
			return -1;
		for (uint64_t i = 0; i < nr; i++) {
			if (take_u64(c, &s->read_value[i], "read: value") ||
			    ((fmt & PERF_FORMAT_ID) && take_u64(c, &s->read_id[i], "read: id")) ||
			    ((fmt & PERF_FORMAT_LOST) && take_u64(c, &s->read_lost[i], "read: lost")))
				return -1;
		}
		return 0;
	}
	if (take_u64(c, &s->read_value[0], "read: value") ||
	    ((fmt & PERF_FORMAT_TOTAL_TIME_ENABLED) &&
	     take_u64(c, &s->time_enabled, "read: time_enabled")) ||
	    ((fmt & PERF_FORMAT_TOTAL_TIME_RUNNING) &&
	     take_u64(c, &s->time_running, "read: time_running")) ||
	    ((fmt & PERF_FORMAT_ID) && take_u64(c, &s->read_id[0], "read: id")) ||
	    ((fmt & PERF_FORMAT_LOST) && take_u64(c, &s->read_lost[0], "read: lost")))
		return -1;
	return 0;
}

static int read_regs(struct cursor *c, uint64_t mask, uint64_t *abi, const uint64_t **regs,
		     const char *field)
{
	if (take_u64(c, abi, field))
		return -1;
	if (*abi == PERF_SAMPLE_REGS_ABI_NONE)
		return 0;
	*regs = take_ptr(c, 8 * (uint64_t)__builtin_popcountll(mask), field);
	return *regs ? 0 : -1;
}

#define KNOWN_SAMPLE_BITS                                                                         \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |           \
	 PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |             \
	 PERF_SAMPLE_PERIOD | PERF_SAMPLE_READ | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW |         \
	 PERF_SAMPLE_BRANCH_STACK | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER |              \
	 PERF_SAMPLE_WEIGHT | PERF_SAMPLE_DATA_SRC | PERF_SAMPLE_TRANSACTION |                     \
	 PERF_SAMPLE_REGS_INTR | PERF_SAMPLE_PHYS_ADDR | PERF_SAMPLE_AUX | PERF_SAMPLE_CGROUP |    \
	 PERF_SAMPLE_DATA_PAGE_SIZE | PERF_SAMPLE_CODE_PAGE_SIZE | PERF_SAMPLE_WEIGHT_STRUCT)

int pmc_sample_parse(const void *record, size_t len, const struct pmc_sample_layout *lay,
		     struct pmc_sample *s, struct pmc_error *err)
{
	struct cursor c = { (const unsigned char *)record, (const unsigned char *)record + len, NULL };
	uint64_t t = lay->sample_type;
	uint32_t two[2];

	pmc_error_clear(err);
	memset(s, 0, sizeof(*s));
	if (t & ~(uint64_t)KNOWN_SAMPLE_BITS)
		return pmc__fail(err, PMC_E_UNSUPPORTED, "", -1,
				 "sample_type %#llx has bits this decoder does not know (%#llx)",
				 (unsigned long long)t, (unsigned long long)(t & ~(uint64_t)KNOWN_SAMPLE_BITS));
	if (take(&c, NULL, sizeof(struct perf_event_header), "header"))
		goto short_record;
	/* The documented order of PERF_RECORD_SAMPLE's fields. */
	if ((t & PERF_SAMPLE_IDENTIFIER) && take_u64(&c, &s->identifier, "identifier"))
		goto short_record;
	if ((t & PERF_SAMPLE_IP) && take_u64(&c, &s->ip, "ip"))
		goto short_record;
	if (t & PERF_SAMPLE_TID) {
		if (take(&c, two, 8, "pid, tid"))
			goto short_record;
		s->pid = two[0];
		s->tid = two[1];
	}
	if ((t & PERF_SAMPLE_TIME) && take_u64(&c, &s->time, "time"))
		goto short_record;
	if ((t & PERF_SAMPLE_ADDR) && take_u64(&c, &s->addr, "addr"))
		goto short_record;
	if ((t & PERF_SAMPLE_ID) && take_u64(&c, &s->id, "id"))
		goto short_record;
	if ((t & PERF_SAMPLE_STREAM_ID) && take_u64(&c, &s->stream_id, "stream_id"))
		goto short_record;
	if (t & PERF_SAMPLE_CPU) {
		if (take(&c, two, 8, "cpu, res"))
			goto short_record;
		s->cpu = two[0];
	}
	if ((t & PERF_SAMPLE_PERIOD) && take_u64(&c, &s->period, "period"))
		goto short_record;
	if ((t & PERF_SAMPLE_READ) && read_values(&c, lay->read_format, s))
		goto short_record;
	if (t & PERF_SAMPLE_CALLCHAIN) {
		if (take_u64(&c, &s->callchain_nr, "callchain: nr") ||
		    s->callchain_nr > (uint64_t)(c.end - c.p) / 8 ||
		    !(s->callchain = take_ptr(&c, 8 * s->callchain_nr, "callchain: ips"))) {
			c.field = "callchain";
			goto short_record;
		}
	}
	if (t & PERF_SAMPLE_RAW) {
		/* u32 size, then size bytes; the pair is padded to 8 by the kernel. */
		if (take(&c, &s->raw_size, 4, "raw: size") ||
		    !(s->raw = take_ptr(&c, s->raw_size, "raw: data")))
			goto short_record;
	}
	if (t & PERF_SAMPLE_BRANCH_STACK) {
		uint64_t hw_idx;

		if (take_u64(&c, &s->branch_nr, "branch_stack: nr") ||
		    (lay->branch_hw_index && take_u64(&c, &hw_idx, "branch_stack: hw_idx")) ||
		    s->branch_nr > (uint64_t)(c.end - c.p) / sizeof(struct perf_branch_entry) ||
		    !(s->branches = take_ptr(&c, s->branch_nr * sizeof(struct perf_branch_entry),
					     "branch_stack: entries"))) {
			c.field = "branch_stack";
			goto short_record;
		}
	}
	if ((t & PERF_SAMPLE_REGS_USER) &&
	    read_regs(&c, lay->sample_regs_user, &s->regs_user_abi, &s->regs_user, "regs_user"))
		goto short_record;
	if (t & PERF_SAMPLE_STACK_USER) {
		if (take_u64(&c, &s->stack_size, "stack_user: size") ||
		    !(s->stack = take_ptr(&c, s->stack_size, "stack_user: data")) ||
		    (s->stack_size && take_u64(&c, &s->stack_dyn_size, "stack_user: dyn_size")))
			goto short_record;
	}
	if ((t & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT)) &&
	    take_u64(&c, &s->weight, "weight"))
		goto short_record;
	if ((t & PERF_SAMPLE_DATA_SRC) && take_u64(&c, &s->data_src, "data_src"))
		goto short_record;
	if ((t & PERF_SAMPLE_TRANSACTION) && take_u64(&c, &s->transaction, "transaction"))
		goto short_record;
	if ((t & PERF_SAMPLE_REGS_INTR) &&
	    read_regs(&c, lay->sample_regs_intr, &s->regs_intr_abi, &s->regs_intr, "regs_intr"))
		goto short_record;
	if ((t & PERF_SAMPLE_PHYS_ADDR) && take_u64(&c, &s->phys_addr, "phys_addr"))
		goto short_record;
	if ((t & PERF_SAMPLE_CGROUP) && take_u64(&c, &s->cgroup, "cgroup"))
		goto short_record;
	if ((t & PERF_SAMPLE_DATA_PAGE_SIZE) && take_u64(&c, &s->data_page_size, "data_page_size"))
		goto short_record;
	if ((t & PERF_SAMPLE_CODE_PAGE_SIZE) && take_u64(&c, &s->code_page_size, "code_page_size"))
		goto short_record;
	if (t & PERF_SAMPLE_AUX) {
		if (take_u64(&c, &s->aux_size, "aux: size") ||
		    !(s->aux = take_ptr(&c, s->aux_size, "aux: data")))
			goto short_record;
	}
	if (c.p != c.end)
		return pmc__fail(err, PMC_E_SYNTAX, "", -1,
				 "sample record of %zu bytes has %zu bytes left after every field sample_type %#llx selects: the layout does not match the event's attr",
				 len, (size_t)(c.end - c.p), (unsigned long long)t);
	s->present = t;
	return 0;
short_record:
	return pmc__fail(err, PMC_E_SYNTAX, "", -1,
			 "sample record of %zu bytes ends inside field \"%s\" (sample_type %#llx): a truncated record, or a layout that does not match the event's attr",
			 len, c.field ? c.field : "?", (unsigned long long)t);
}

/* The sample_id trailer: {pid, tid} time id stream_id {cpu, res} identifier. */
size_t pmc_sample_id_size(const struct pmc_sample_layout *lay)
{
	uint64_t t = lay->sample_type;

	if (!lay->sample_id_all)
		return 0;
	return 8 * (!!(t & PERF_SAMPLE_TID) + !!(t & PERF_SAMPLE_TIME) + !!(t & PERF_SAMPLE_ID) +
		    !!(t & PERF_SAMPLE_STREAM_ID) + !!(t & PERF_SAMPLE_CPU) +
		    !!(t & PERF_SAMPLE_IDENTIFIER));
}

int pmc_sample_id_parse(const void *record, size_t len, const struct pmc_sample_layout *lay,
			struct pmc_sample *s, struct pmc_error *err)
{
	size_t n = pmc_sample_id_size(lay);
	uint64_t t = lay->sample_type;
	struct cursor c;
	uint32_t two[2];

	pmc_error_clear(err);
	memset(s, 0, sizeof(*s));
	if (len < sizeof(struct perf_event_header) + n)
		return pmc__fail(err, PMC_E_SYNTAX, "", -1,
				 "record of %zu bytes cannot hold a %zu-byte sample_id trailer", len, n);
	c = (struct cursor){ (const unsigned char *)record + len - n, (const unsigned char *)record + len, NULL };
	if (t & PERF_SAMPLE_TID) {
		take(&c, two, 8, "pid, tid");
		s->pid = two[0];
		s->tid = two[1];
	}
	if (t & PERF_SAMPLE_TIME)
		take_u64(&c, &s->time, "time");
	if (t & PERF_SAMPLE_ID)
		take_u64(&c, &s->id, "id");
	if (t & PERF_SAMPLE_STREAM_ID)
		take_u64(&c, &s->stream_id, "stream_id");
	if (t & PERF_SAMPLE_CPU) {
		take(&c, two, 8, "cpu, res");
		s->cpu = two[0];
	}
	if (t & PERF_SAMPLE_IDENTIFIER)
		take_u64(&c, &s->identifier, "identifier");
	s->present = t & (PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID |
			  PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER);
	return 0;
}

const char *pmc_record_name(uint32_t type)
{
	static const char *const names[] = {
		[PERF_RECORD_MMAP] = "MMAP",
		[PERF_RECORD_LOST] = "LOST",
		[PERF_RECORD_COMM] = "COMM",
		[PERF_RECORD_EXIT] = "EXIT",
		[PERF_RECORD_THROTTLE] = "THROTTLE",
		[PERF_RECORD_UNTHROTTLE] = "UNTHROTTLE",
		[PERF_RECORD_FORK] = "FORK",
		[PERF_RECORD_READ] = "READ",
		[PERF_RECORD_SAMPLE] = "SAMPLE",
		[PERF_RECORD_MMAP2] = "MMAP2",
		[PERF_RECORD_AUX] = "AUX",
		[PERF_RECORD_ITRACE_START] = "ITRACE_START",
		[PERF_RECORD_LOST_SAMPLES] = "LOST_SAMPLES",
		[PERF_RECORD_SWITCH] = "SWITCH",
		[PERF_RECORD_SWITCH_CPU_WIDE] = "SWITCH_CPU_WIDE",
		[PERF_RECORD_NAMESPACES] = "NAMESPACES",
		[PERF_RECORD_KSYMBOL] = "KSYMBOL",
		[PERF_RECORD_BPF_EVENT] = "BPF_EVENT",
		[PERF_RECORD_CGROUP] = "CGROUP",
		[PERF_RECORD_TEXT_POKE] = "TEXT_POKE",
		[PERF_RECORD_AUX_OUTPUT_HW_ID] = "AUX_OUTPUT_HW_ID",
	};

	return type < sizeof(names) / sizeof(names[0]) && names[type] ? names[type] : "?";
}
