/* SPDX-License-Identifier: MIT */
/*
 * The user-page read arithmetic on synthetic pages: counter widths 40/48/64,
 * wraparound, the seqlock retry, index-0 fallback, time extension (including
 * cap_user_time_short), and the delta flags of measurements.
 */
#define _GNU_SOURCE
#include <linux/perf_event.h>
#include <stdint.h>
#include <string.h>

#include <pmcheck/pmcheck.h>
#include <pmcheck/userpage.h>

#include "t.h"

/* A scripted machine: the counter register value, the timestamp, and an
 * optional "kernel" that rewrites the page during the first read. */
struct fake {
	struct perf_event_mmap_page *pg;
	uint64_t counter;      /* raw register contents */
	uint64_t tsc;
	uint32_t last_counter; /* register number the reader asked for */
	unsigned reads;
	int tear;              /* rewrite the page on this many reads */
	uint64_t new_offset;   /* offset the "kernel" publishes when tearing */
};

static uint64_t fake_counter(uint32_t counter, void *ctx)
{
	struct fake *f = ctx;

	f->last_counter = counter;
	f->reads++;
	if (f->tear > 0) {
		/* Preempted mid-read: the kernel bumps the sequence count and
		 * republishes the offset. */
		f->tear--;
		f->pg->lock += 2;
		f->pg->offset = (int64_t)f->new_offset;
	}
	return f->counter;
}

static uint64_t fake_time(void *ctx)
{
	return ((struct fake *)ctx)->tsc;
}

static void page_init(struct perf_event_mmap_page *pg, uint32_t index, uint16_t width,
		      int64_t offset)
{
	memset(pg, 0, sizeof(*pg));
	pg->lock = 2;
	pg->index = index;
	pg->pmc_width = width;
	pg->offset = offset;
	pg->cap_user_rdpmc = 1;
	pg->time_enabled = 1000;
	pg->time_running = 1000;
}

/* The page's width as the open validates it: unusable widths mean read(2). */
static int read_page(struct perf_event_mmap_page *pg, struct fake *f,
		     struct pmc__upage_value *v)
{
	int shift = pmc__upage_shift(pg->pmc_width);

	f->pg = pg;
	if (shift < 0)
		return PMC__UPAGE_FALLBACK;
	return pmc__upage_read(pg, (unsigned)shift, fake_counter, fake_time, f, v);
}

static int read_value(struct perf_event_mmap_page *pg, struct fake *f, uint64_t *value)
{
	int shift = pmc__upage_shift(pg->pmc_width);

	f->pg = pg;
	if (shift < 0)
		return PMC__UPAGE_FALLBACK;
	return pmc__upage_read_value(pg, (unsigned)shift, fake_counter, f, value);
}

/*
 * The value-only read (group members, whose times are the leader's) follows
 * the same rules as the full one: the value, the sign extension, the
 * fallback when not on a counter or when user reads are off or the width is
 * bad, and the retry on a torn page.
 */
T_CASE(value_only_read)
{
	struct perf_event_mmap_page pg;
	struct fake f = { .counter = 500 };
	struct pmc__upage_value v;
	uint64_t value = 0;

	page_init(&pg, 3, 64, 1000);
	f.pg = &pg;
	T_EQ_U64(read_value(&pg, &f, &value), PMC__UPAGE_OK, "status");
	T_EQ_U64(value, 1500, "offset + counter");
	T_EQ_U64(f.last_counter, 2, "register is index - 1");
	read_page(&pg, &f, &v);
	T_EQ_U64(v.value, value, "the full read agrees");
	f.counter = (1ull << 48) - 750;
	page_init(&pg, 1, 48, 5000 + 1000);
	read_value(&pg, &f, &value);
	T_EQ_U64(value, 5250, "48-bit sign extension");
	page_init(&pg, 0, 64, 77);
	T_EQ_U64(read_value(&pg, &f, &value), PMC__UPAGE_FALLBACK,
		 "index 0: not on a counter");
	page_init(&pg, 1, 64, 77);
	pg.cap_user_rdpmc = 0;
	T_EQ_U64(read_value(&pg, &f, &value), PMC__UPAGE_FALLBACK,
		 "cap_user_rdpmc off (x86 rdpmc switched off at run time)");
	page_init(&pg, 1, 65, 77);
	T_EQ_U64(read_value(&pg, &f, &value), PMC__UPAGE_FALLBACK,
		 "width out of range");
	page_init(&pg, 1, 64, 10);
	f.counter = 5;
	f.tear = 2;
	f.new_offset = 20;
	f.reads = 0;
	T_EQ_U64(read_value(&pg, &f, &value), PMC__UPAGE_OK, "torn twice");
	T_EQ_U64(value, 25, "the value after the kernel's rewrite");
	T_EQ_U64(f.reads, 3, "read again until the sequence count held");
}

T_CASE(width_64)
{
	struct perf_event_mmap_page pg;
	struct fake f = { .counter = 500 };
	struct pmc__upage_value v;

	page_init(&pg, 3, 64, 1000);
	T_EQ_U64(read_page(&pg, &f, &v), PMC__UPAGE_OK, "status");
	T_EQ_U64(v.value, 1500, "offset + counter");
	T_EQ_U64(f.last_counter, 2, "register is index - 1");
	T_EQ_U64(v.retries, 0, "retries");
	/* Full 64-bit values wrap modulo 2^64 like the kernel's u64 count. */
	f.counter = UINT64_MAX - 4;
	page_init(&pg, 1, 64, 10);
	read_page(&pg, &f, &v);
	T_EQ_U64(v.value, 5, "64-bit wrap");
}

T_CASE(width_48_negative_start)
{
	struct perf_event_mmap_page pg;
	/* The kernel programs -1000 into a 48-bit counter (bits 48..63 read as
	 * zero on Intel) and keeps offset = count - (-1000). */
	struct fake f = { .counter = ((1ull << 48) - 1000) };
	struct pmc__upage_value v;

	page_init(&pg, 1, 48, 5000 + 1000);
	read_page(&pg, &f, &v);
	T_EQ_U64(v.value, 5000, "48-bit counter sign-extended");
	/* 250 events later the counter still reads negative. */
	f.counter = (1ull << 48) - 750;
	read_page(&pg, &f, &v);
	T_EQ_U64(v.value, 5250, "48-bit after 250 events");
}

T_CASE(width_40_upper_garbage)
{
	struct perf_event_mmap_page pg;
	/* Bits above pmc_width are UNKNOWN (arm64 32-bit counters, AMD 48,
	 * old Intel 40): they must not leak into the value. */
	struct fake f = { .counter = 0xdead000000000000ull | 0x123 };
	struct pmc__upage_value v;

	page_init(&pg, 1, 40, 77);
	read_page(&pg, &f, &v);
	T_EQ_U64(v.value, 77 + 0x123, "bits 40..63 ignored");
	f.counter = 0xbeef00ffffffff00ull; /* -256 in 40 bits */
	page_init(&pg, 1, 40, 1256);
	read_page(&pg, &f, &v);
	T_EQ_U64(v.value, 1000, "negative 40-bit value");
	/* 32-bit counters (arm64 without config1:0) follow the same rule. */
	f.counter = 0xffffffff00000010ull;
	page_init(&pg, 1, 32, 100);
	read_page(&pg, &f, &v);
	T_EQ_U64(v.value, 116, "32-bit counter");
}

T_CASE(wraparound_delta)
{
	struct perf_event_mmap_page pg;
	struct fake f = { .counter = (1ull << 48) - 10 };
	struct pmc__upage_value a, b;

	page_init(&pg, 1, 48, 1000000);
	read_page(&pg, &f, &a);
	f.counter = 5; /* the register wrapped through zero */
	read_page(&pg, &f, &b);
	T_EQ_U64(b.value - a.value, 15, "delta across the wrap");
	T_EQ_U64(a.value, 1000000 - 10, "before the wrap");
}

T_CASE(seqlock_retry)
{
	struct perf_event_mmap_page pg;
	struct fake f = { .counter = 40, .tear = 1, .new_offset = 9000 };
	struct pmc__upage_value v;

	page_init(&pg, 2, 48, 100);
	T_EQ_U64(read_page(&pg, &f, &v), PMC__UPAGE_OK, "status");
	T_EQ_U64(v.retries, 1, "one torn read repeated");
	T_EQ_U64(v.value, 9040, "value from the consistent snapshot, not the torn one");
	T_EQ_U64(f.reads, 2, "counter read twice");
	/* A page whose lock never settles ends in the read(2) fallback. */
	f.tear = 1 << 30;
	f.reads = 0;
	T_EQ_U64(read_page(&pg, &f, &v), PMC__UPAGE_FALLBACK, "endless tearing");
	T_EQ_U64(f.reads, PMC__UPAGE_MAX_RETRIES, "bounded retries");
}

T_CASE(index_zero_fallback)
{
	struct perf_event_mmap_page pg;
	struct fake f = { .counter = 40 };
	struct pmc__upage_value v;

	page_init(&pg, 0, 48, 100); /* not on a counter now */
	T_EQ_U64(read_page(&pg, &f, &v), PMC__UPAGE_FALLBACK, "index 0");
	T_EQ_U64(f.reads, 0, "no register read with index 0");
	page_init(&pg, 1, 48, 100);
	pg.cap_user_rdpmc = 0; /* software event, or rdpmc disabled */
	T_EQ_U64(read_page(&pg, &f, &v), PMC__UPAGE_FALLBACK, "cap_user_rdpmc 0");
	page_init(&pg, 1, 0, 100);
	T_EQ_U64(read_page(&pg, &f, &v), PMC__UPAGE_FALLBACK, "pmc_width 0");
	page_init(&pg, 1, 65, 100);
	T_EQ_U64(read_page(&pg, &f, &v), PMC__UPAGE_FALLBACK, "pmc_width 65");
}

/* Independent reference for the time conversion: exact 128-bit product. */
static uint64_t ref_delta(uint64_t offset, uint64_t cyc, uint32_t mult, uint16_t shift)
{
	return offset + (uint64_t)(((unsigned __int128)cyc * mult) >> shift);
}

T_CASE(time_extension)
{
	struct perf_event_mmap_page pg;
	struct fake f = { .counter = 0 };
	struct pmc__upage_value v;
	static const uint64_t cycles[] = { 0, 1, 1023, 1024, 123456789, 1ull << 40,
					   0x0123456789abcdefull };

	for (size_t i = 0; i < sizeof(cycles) / sizeof(cycles[0]); i++) {
		uint64_t expect;

		page_init(&pg, 1, 48, 0);
		pg.cap_user_time = 1;
		pg.time_shift = 10;
		pg.time_mult = 1365; /* ~1.333 ns per cycle: a 768 MHz counter */
		pg.time_offset = (uint64_t)-5000000; /* negative offsets are normal */
		f.tsc = cycles[i];
		read_page(&pg, &f, &v);
		expect = ref_delta(pg.time_offset, cycles[i], pg.time_mult, pg.time_shift);
		T_EQ_U64(v.enabled_ns, 1000 + expect, "enabled extended");
		T_EQ_U64(v.running_ns, 1000 + expect, "running extended while on a counter");
	}
	/* Off the counter the read gives up at once, before the timestamp:
	 * read(2) has the times (enabled advanced, running frozen). */
	page_init(&pg, 0, 48, 0);
	pg.cap_user_time = 1;
	f.reads = 0;
	T_EQ_U64(read_page(&pg, &f, &v), PMC__UPAGE_FALLBACK, "not on a counter");
	T_EQ_U64(f.reads, 0, "no register read");
	/* No cap_user_time: the page's times as they are. */
	page_init(&pg, 1, 48, 0);
	f.tsc = 999999;
	read_page(&pg, &f, &v);
	T_EQ_U64(v.enabled_ns, 1000, "no extension without cap_user_time");
}

T_CASE(time_short_counter)
{
	struct perf_event_mmap_page pg;
	struct fake f = { .counter = 0 };
	struct pmc__upage_value v;
	uint64_t cyc;

	/* cap_user_time_short: a 32-bit timestamp counter that wrapped since
	 * time_cycles was published; the masked difference recovers it. */
	page_init(&pg, 1, 64, 0);
	pg.cap_user_time = 1;
	pg.cap_user_time_short = 1;
	pg.time_shift = 4;
	pg.time_mult = 16; /* 1 ns per cycle */
	pg.time_offset = 0;
	pg.time_cycles = 0xfffffff0ull;
	pg.time_mask = 0xffffffffull;
	f.tsc = 0x10; /* 0x20 cycles after time_cycles, across the 32-bit wrap */
	read_page(&pg, &f, &v);
	cyc = 0xfffffff0ull + 0x20;
	T_EQ_U64(v.enabled_ns, 1000 + ref_delta(0, cyc, 16, 4), "short counter extended");
}

T_CASE(sign_extend)
{
	T_EQ_U64(pmc__sign_extend(0x7fffffffffffull, 64 - 48), 0x7fffffffffffull, "max positive 48");
	T_EQ_U64(pmc__sign_extend(0x800000000000ull, 64 - 48), 0xffff800000000000ull, "min negative 48");
	T_EQ_U64(pmc__sign_extend(0xffffffffffull, 64 - 40), UINT64_MAX, "-1 in 40 bits");
	T_EQ_U64(pmc__sign_extend(0x1234, 64 - 64), 0x1234, "64-bit identity");
	T_EQ_U64(pmc__sign_extend(UINT64_MAX, 64 - 64), UINT64_MAX, "64-bit identity max");
}

T_CASE(delta_flags)
{
	struct pmc_reading a = { .n = 4 }, b = { .n = 4 };
	struct pmc_measurement m, ovh;

	/* 0: fully counted; 1: multiplexed; 2: never scheduled; 3: backwards */
	a.c[0] = (struct pmc_count){ 100, 1000, 1000 };
	b.c[0] = (struct pmc_count){ 350, 2000, 2000 };
	a.c[1] = (struct pmc_count){ 100, 1000, 500 };
	b.c[1] = (struct pmc_count){ 200, 2000, 900 };
	a.c[2] = (struct pmc_count){ 0, 1000, 0 };
	b.c[2] = (struct pmc_count){ 0, 2000, 0 };
	a.c[3] = (struct pmc_count){ 500, 1000, 1000 };
	b.c[3] = (struct pmc_count){ 400, 2000, 2000 };
	pmc_measurement_from(&m, &a, &b);
	T_EQ_U64(m.n, 4, "n");
	T_EQ_U64(m.d[0].value, 250, "value 0");
	T_EQ_U64(m.d[0].flags, 0, "flags 0");
	T_EQ_U64(m.d[1].value, 100, "multiplexed value is raw, not scaled");
	T_EQ_U64(m.d[1].flags, PMC_DELTA_MULTIPLEXED, "flags 1");
	T_EQ_U64(m.d[1].running_ns, 400, "running 1");
	T_EQ_U64(m.d[2].flags, PMC_DELTA_NOT_COUNTED, "flags 2");
	T_EQ_U64(m.d[3].flags, PMC_DELTA_NEGATIVE, "flags 3");
	T_EQ_U64(m.d[3].value, 0, "value 3");
	/* Overhead subtraction clamps at zero. */
	ovh = m;
	ovh.d[0].value = 50;
	ovh.d[1].value = 1000;
	pmc_measurement_subtract(&m, &ovh);
	T_EQ_U64(m.d[0].value, 200, "overhead subtracted");
	T_EQ_U64(m.d[1].value, 0, "clamped at zero");
}

/* The capability bits are tested on one copy of the word: their positions
 * must be the bitfields' (the kernel's ABI, little-endian bitfield order). */
T_CASE(capability_bits)
{
	struct perf_event_mmap_page pg;

	memset(&pg, 0, sizeof(pg));
	pg.cap_user_rdpmc = 1;
	T_EQ_U64(pg.capabilities, PMC__CAP_USER_RDPMC, "cap_user_rdpmc");
	memset(&pg, 0, sizeof(pg));
	pg.cap_user_time = 1;
	T_EQ_U64(pg.capabilities, PMC__CAP_USER_TIME, "cap_user_time");
	memset(&pg, 0, sizeof(pg));
	pg.cap_user_time_short = 1;
	T_EQ_U64(pg.capabilities, PMC__CAP_USER_TIME_SHORT, "cap_user_time_short");
	T_EQ_U64(pmc__upage_shift(0), (uint64_t)-1, "width 0 unusable");
	T_EQ_U64(pmc__upage_shift(65), (uint64_t)-1, "width 65 unusable");
	T_EQ_U64(pmc__upage_shift(48), 16, "width 48");
	T_EQ_U64(pmc__upage_shift(64), 0, "width 64");
}

/* Three pages as one group: the leader gives the times, members their
 * values; any counter off its register sends the whole reading to read(2). */
T_CASE(fast_group_read)
{
	struct perf_event_mmap_page pg[3];
	struct fake f = { .counter = 10, .tsc = 0 };
	struct pmc_fast fast = { .n = 3 };
	struct pmc_reading a, b;
	struct pmc_measurement m, ref;

	for (int k = 0; k < 3; k++) {
		page_init(&pg[k], (uint32_t)k + 1, 48, 1000 * (k + 1));
		fast.page[k] = &pg[k];
		fast.shift[k] = 16;
	}
	pg[0].cap_user_time = 1;
	pg[0].time_mult = 1;
	pg[0].time_running = 900; /* was off the counter for 100 ns once */
	pg[1].time_enabled = pg[1].time_running = 77; /* members' times unused */
	f.pg = &pg[0];
	T_EQ_U64(pmc__fast_read_with(&fast, &a, fake_counter, fake_time, &f), 0, "status");
	T_EQ_U64(a.c[0].value, 1010, "leader");
	T_EQ_U64(a.c[2].value, 3010, "member");
	T_EQ_U64(a.c[0].enabled_ns, 1000, "leader's enabled");
	T_EQ_U64(a.c[0].running_ns, 900, "leader's running");
	f.counter = 60;
	f.tsc = 500;
	pmc__fast_read_with(&fast, &b, fake_counter, fake_time, &f);
	T_EQ_U64(b.c[0].enabled_ns, 1500, "extended by the timestamp");
	pmc__fast_delta(&m, &a, &b, 3);
	/* The same readings with every event carrying the group's times, as
	 * read(2) gives them, through the general difference. */
	a.n = b.n = 3;
	a.nparts = b.nparts = 0;
	for (int k = 1; k < 3; k++) {
		a.c[k].enabled_ns = a.c[0].enabled_ns;
		a.c[k].running_ns = a.c[0].running_ns;
		b.c[k].enabled_ns = b.c[0].enabled_ns;
		b.c[k].running_ns = b.c[0].running_ns;
	}
	pmc_measurement_from(&ref, &a, &b);
	T_EQ_U64(m.n, 3, "n");
	for (int k = 0; k < 3; k++) {
		T_EQ_U64(m.d[k].value, ref.d[k].value, "value as pmc_measurement_from");
		T_EQ_U64(m.d[k].flags, ref.d[k].flags, "flags as pmc_measurement_from");
		T_EQ_U64(m.d[k].running_ns, ref.d[k].running_ns, "running");
	}
	T_EQ_U64(m.d[1].value, 50, "delta");
	/* Backwards, and never counted: the flags of the general path. */
	b.c[2].value = a.c[2].value - 1;
	b.c[0].running_ns = a.c[0].running_ns;
	pmc__fast_delta(&m, &a, &b, 3);
	pmc_measurement_from(&ref, &a, &b);
	T_EQ_U64(m.d[2].flags, PMC_DELTA_NEGATIVE | PMC_DELTA_NOT_COUNTED, "negative, not counted");
	T_EQ_U64(m.d[0].flags, ref.d[0].flags, "leader's flags as the general path");
	T_EQ_U64(m.d[2].value, 0, "clamped");
	pg[2].index = 0; /* a member taken off its counter */
	T_EQ_U64(pmc__fast_read_with(&fast, &a, fake_counter, fake_time, &f), 1, "read(2) instead");
	pg[2].index = 3;
	pg[1].cap_user_rdpmc = 0; /* user reads switched off at run time */
	T_EQ_U64(pmc__fast_read_with(&fast, &a, fake_counter, fake_time, &f), 1,
		 "cap_user_rdpmc cleared");
}

int main(int argc, char **argv)
{
	return t_main(argc, argv);
}
