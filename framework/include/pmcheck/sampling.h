/* SPDX-License-Identifier: MIT */
/*
 * Sampling: the perf_event ring buffer and the records the kernel writes
 * into it (PERF_RECORD_SAMPLE, LOST, MMAP, COMM, ...), one event sampled on
 * the calling thread (pmc_sampler), and sampled addresses back to
 * functions (pmc_symtab); both are described further down.
 *
 *   int fd = perf_event_open(...sample_period, sample_type...);
 *   struct pmc_ring *ring;
 *   pmc_ring_map(&ring, fd, 8, &err);            // 1 + 8 pages
 *   ... run ...
 *   while (pmc_ring_next(ring, buf, sizeof(buf), &len) == 1) {
 *           const struct perf_event_header *h = (const void *)buf;
 *           if (h->type == PERF_RECORD_SAMPLE)
 *                   pmc_sample_parse(buf, len, &layout, &s, &err);
 *   }
 *   pmc_ring_unmap(ring);
 *
 * The reader follows the manual page's protocol: data_head is read with
 * acquire semantics, records are copied out (a record may wrap around the
 * end of the data area), and data_tail is written with release semantics
 * only after the copy, so the kernel never overwrites unread data (it
 * writes PERF_RECORD_LOST instead).
 */
#ifndef PMCHECK_SAMPLING_H
#define PMCHECK_SAMPLING_H

#include <stddef.h>
#include <stdint.h>

#include <pmcheck/counters.h>
#include <pmcheck/error.h>
#include <pmcheck/event.h>
#include <pmcheck/export.h>

#ifdef __cplusplus
extern "C" {
#endif

struct perf_event_mmap_page;
struct pmc_ring; /* opaque */

/*
 * Map the ring buffer of perf event `fd`: one control page and `data_pages`
 * data pages (a power of two, >= 1), read-write so that data_tail can be
 * written.  On success *out owns the mapping (not the descriptor).  Errors:
 * -EINVAL (data_pages not a power of two), or mmap's negative errno with
 * *err saying what to do (-EPERM: perf_event_mlock_kb exceeded).
 */
PMC_API int pmc_ring_map(struct pmc_ring **out, int fd, size_t data_pages,
			 struct pmc_error *err);

/* Unmap.  NULL is a no-op. */
PMC_API void pmc_ring_unmap(struct pmc_ring *ring);

/* The control page: version, data_head, data_tail, data_offset, ... */
PMC_API struct perf_event_mmap_page *pmc_ring_page(const struct pmc_ring *ring);

/* Bytes of unread records (data_head - data_tail). */
PMC_API uint64_t pmc_ring_unread(const struct pmc_ring *ring);

/*
 * Copy the next record into buf (at most `size` bytes) and consume it.
 * Returns 1 with *len set, 0 when no record is waiting, PMC_E_TOO_LONG when
 * the record does not fit buf (it is not consumed; *len says how big it
 * is), or PMC_E_RING when the buffer holds a record header that cannot be
 * right (size 0 or larger than the unread bytes).
 */
PMC_API int pmc_ring_next(struct pmc_ring *ring, void *buf, size_t size, size_t *len);

/* How the kernel laid out the samples of one event (from its attr). */
struct pmc_sample_layout {
	uint64_t sample_type;       /* PERF_SAMPLE_* */
	uint64_t read_format;       /* PERF_FORMAT_*, for PERF_SAMPLE_READ */
	uint64_t sample_regs_user;  /* register mask, for PERF_SAMPLE_REGS_USER */
	uint64_t sample_regs_intr;  /* register mask, for PERF_SAMPLE_REGS_INTR */
	int branch_hw_index;        /* PERF_SAMPLE_BRANCH_HW_INDEX was requested */
	int sample_id_all;          /* non-sample records carry a sample_id trailer */
};

#define PMC_SAMPLE_READ_MAX 32

/* A decoded sample (or sample_id trailer).  Pointers point into the record
 * the caller passed, which must outlive them. */
struct pmc_sample {
	uint64_t present;           /* PERF_SAMPLE_* bits decoded */
	uint64_t identifier, ip;
	uint32_t pid, tid;
	uint64_t time, addr, id, stream_id;
	uint32_t cpu;
	uint64_t period;
	/* PERF_SAMPLE_READ: values in the order read(2) returns them */
	uint64_t read_nr, time_enabled, time_running;
	uint64_t read_value[PMC_SAMPLE_READ_MAX], read_id[PMC_SAMPLE_READ_MAX],
		read_lost[PMC_SAMPLE_READ_MAX];
	uint64_t callchain_nr;
	const uint64_t *callchain;
	uint32_t raw_size;
	const void *raw;
	uint64_t branch_nr;
	const void *branches;       /* branch_nr struct perf_branch_entry */
	uint64_t regs_user_abi, regs_intr_abi;
	const uint64_t *regs_user, *regs_intr;
	uint64_t stack_size, stack_dyn_size;
	const void *stack;
	uint64_t weight, data_src, transaction, phys_addr, cgroup;
	uint64_t data_page_size, code_page_size;
	uint64_t aux_size;
	const void *aux;
};

/*
 * Decode a PERF_RECORD_SAMPLE record (header included, `len` bytes) laid
 * out as `layout` says, fields in the order the manual documents.  Returns
 * 0, or PMC_E_SYNTAX with *err naming the field that does not fit the
 * record (a record never reads past `len`), or PMC_E_UNSUPPORTED for a
 * sample_type bit this decoder does not know.
 */
PMC_API int pmc_sample_parse(const void *record, size_t len,
			     const struct pmc_sample_layout *layout,
			     struct pmc_sample *out, struct pmc_error *err);

/*
 * Decode the sample_id trailer of a non-sample record (MMAP, COMM, LOST,
 * ...) written with sample_id_all: the TID, TIME, ID, STREAM_ID, CPU and
 * IDENTIFIER fields the sample_type selects, at the end of the record.
 */
PMC_API int pmc_sample_id_parse(const void *record, size_t len,
				const struct pmc_sample_layout *layout,
				struct pmc_sample *out, struct pmc_error *err);

/* Size in bytes of the sample_id trailer `layout` implies (0 without
 * sample_id_all). */
PMC_API size_t pmc_sample_id_size(const struct pmc_sample_layout *layout);

/* "SAMPLE", "LOST", "MMAP2", ... for a PERF_RECORD_* type; "?" if unknown. */
PMC_API const char *pmc_record_name(uint32_t type);

/*
 * One event sampled on the calling thread: every `period` events the
 * kernel records the instruction pointer into a ring of 1 + data_pages
 * pages (a power of two).  flags: PMC_OPEN_INHERIT also samples the
 * threads and children created after the open.  The sampler starts
 * disabled; samples are read with pmc_sampler_drain after a disable (or
 * while enabled, before the ring fills: then the kernel writes LOST
 * records, which the drain adds up).  Tracepoint and breakpoint events
 * are refused (PMC_E_UNSUPPORTED): they fire at one place.
 *
 * A uprobe (calls:FUNC) fires at one place too, the function's entry, so
 * its samples name the callers instead: each sample's address is the
 * return address the call left at the stack pointer, minus 1 (the call
 * instruction's last byte, inside the caller), read with
 * PERF_SAMPLE_STACK_USER; a sample whose stack the kernel could not read
 * counts as lost.  x86-64 only (elsewhere PMC_E_UNSUPPORTED); with period
 * 1, every call is a sample and the callers' counts are exact.
 *
 * Samples are statistical: where a counter overflows is where the sample
 * is taken, give or take the PMU's skid (several instructions on most
 * CPUs without :p), so a function's share of samples estimates its share
 * of the event.
 */
struct pmc_sampler; /* opaque */

typedef void (*pmc_sample_ip_fn)(void *ctx, uint64_t ip, uint32_t pid, uint32_t tid);

PMC_API int pmc_sampler_open(struct pmc_sampler **out, const struct pmc_event_spec *spec,
			     uint64_t period, unsigned flags, size_t data_pages,
			     struct pmc_error *err);
PMC_API int pmc_sampler_enable(struct pmc_sampler *s);
PMC_API int pmc_sampler_disable(struct pmc_sampler *s);
PMC_API uint64_t pmc_sampler_period(const struct pmc_sampler *s);
/* fn for each sample written since the last drain; *lost (may be NULL)
 * grows by the samples the kernel dropped.  0, or PMC_E_RING. */
PMC_API int pmc_sampler_drain(struct pmc_sampler *s, pmc_sample_ip_fn fn, void *ctx,
			      uint64_t *lost);
/* NULL is a no-op. */
PMC_API void pmc_sampler_close(struct pmc_sampler *s);

/*
 * Sampled addresses back to functions.  A table of the objects loaded in
 * this process (the program, its shared libraries); each object's function
 * symbols (.symtab, else .dynsym) are read from its file at the first
 * address that falls in it.  An address in an object loaded later (dlopen)
 * makes the table look at the loaded objects again.
 *
 *   struct pmc_symtab *t;
 *   struct pmc_symbol_at at;
 *   pmc_symtab_open(&t, &err);
 *   if (pmc_symtab_lookup(t, sample.ip, &at) == 1)
 *           printf("%s+%#lx in %s\n", at.function, at.offset, at.object);
 *   pmc_symtab_close(t);
 */
struct pmc_symtab; /* opaque */

struct pmc_symbol_at {
	const char *function; /* NULL when no function symbol covers it */
	const char *object;   /* file of the object holding it; NULL if none */
	uint64_t start;       /* the function's run-time address */
	uint64_t offset;      /* from the function's start; without a function,
				 the link-time address inside the object */
};

PMC_API int pmc_symtab_open(struct pmc_symtab **out, struct pmc_error *err);

/*
 * The objects loaded into this process, the program first, each with its
 * identity: "build-id:HEX" (its GNU build ID), or "fnv1a64:HEX" of its
 * content where it has none.  valgrind's preloads and the kernel's vDSO
 * are left out (the one exists only under valgrind, the other only
 * natively, and neither is the program's).  0, or -ENOMEM; *out is freed
 * with pmc_objects_free().
 */
struct pmc_object {
	char *path, *id;
};
PMC_API int pmc_objects_loaded(struct pmc_object **out, size_t *n);
PMC_API void pmc_objects_free(struct pmc_object *o, size_t n);
/* 1: a function covers addr; 0: it does not (out->object may still name
 * the object).  Strings live as long as the table. */
PMC_API int pmc_symtab_lookup(struct pmc_symtab *t, uint64_t addr, struct pmc_symbol_at *out);
PMC_API void pmc_symtab_close(struct pmc_symtab *t);

#ifdef __cplusplus
}
#endif

#endif
