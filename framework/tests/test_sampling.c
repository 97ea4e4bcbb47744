/* SPDX-License-Identifier: MIT */
/*
 * The ring reader's arithmetic on plain memory (records that wrap, headers
 * that wrap, corrupt sizes, a buffer too small) and the sample decoder on
 * crafted records (field order, read formats, variable-length fields,
 * sample_id trailers, truncation), and addresses back to functions
 * (pmc_symtab) in this program and its libc.
 */
#include <dlfcn.h>
#include <linux/perf_event.h>

#include <pmcheck/pmcheck.h>

#include "core/ring_int.h"
#include "t.h"

/* Write a record of `size` bytes (header + pattern) at position pos. */
static void put(unsigned char *data, uint64_t dsize, uint64_t pos, uint32_t type, uint16_t size,
		unsigned char fill)
{
	unsigned char rec[256];
	struct perf_event_header h = { type, 0, size };

	memcpy(rec, &h, sizeof(h));
	memset(rec + sizeof(h), fill, size - sizeof(h));
	for (uint16_t i = 0; i < size; i++)
		data[(pos + i) & (dsize - 1)] = rec[i];
}

T_CASE(ring_records_in_order_and_wrapping)
{
	unsigned char data[64], buf[64];
	uint64_t tail = 40, head = tail; /* start near the end: the 2nd record wraps */
	size_t len;

	put(data, sizeof(data), head, PERF_RECORD_SAMPLE, 16, 0xaa), head += 16;
	put(data, sizeof(data), head, PERF_RECORD_LOST, 24, 0xbb), head += 24; /* 56..80: wraps */
	put(data, sizeof(data), head, PERF_RECORD_COMM, 12, 0xcc), head += 12;
	T_CHECK(pmc__ring_take(data, sizeof(data), head, tail, buf, sizeof(buf), &len) == 1 &&
			len == 16 && buf[8] == 0xaa,
		"first record");
	tail += len;
	T_CHECK(pmc__ring_take(data, sizeof(data), head, tail, buf, sizeof(buf), &len) == 1 &&
			len == 24 && ((struct perf_event_header *)buf)->type == PERF_RECORD_LOST &&
			buf[8] == 0xbb && buf[23] == 0xbb,
		"wrapped record joined: len %zu", len);
	tail += len;
	T_CHECK(pmc__ring_take(data, sizeof(data), head, tail, buf, sizeof(buf), &len) == 1 &&
			len == 12,
		"third record");
	tail += len;
	T_CHECK(pmc__ring_take(data, sizeof(data), head, tail, buf, sizeof(buf), &len) == 0, "empty");
}

/* A header split by the end of the area (4 bytes at the end, 4 at the start). */
T_CASE(ring_header_wraps)
{
	unsigned char data[32], buf[32];
	uint64_t tail = 28;
	size_t len;

	put(data, sizeof(data), tail, PERF_RECORD_SAMPLE, 16, 0x5a);
	T_CHECK(pmc__ring_take(data, sizeof(data), tail + 16, tail, buf, sizeof(buf), &len) == 1 &&
			len == 16 && ((struct perf_event_header *)buf)->size == 16 && buf[15] == 0x5a,
		"split header");
}

T_CASE(ring_corrupt_and_too_small)
{
	unsigned char data[64] = { 0 }, buf[8];
	size_t len = 0;

	/* size 0 would loop forever; size beyond what was written is corrupt. */
	T_CHECK(pmc__ring_take(data, sizeof(data), 8, 0, buf, sizeof(buf), &len) == PMC_E_RING,
		"size 0");
	put(data, sizeof(data), 0, PERF_RECORD_SAMPLE, 40, 1);
	T_CHECK(pmc__ring_take(data, sizeof(data), 16, 0, buf, sizeof(buf), &len) == PMC_E_RING,
		"record longer than the unread bytes");
	T_CHECK(pmc__ring_take(data, sizeof(data), 200, 0, buf, sizeof(buf), &len) == PMC_E_RING,
		"head more than a buffer ahead of tail");
	T_CHECK(pmc__ring_take(data, sizeof(data), 40, 0, buf, sizeof(buf), &len) == PMC_E_TOO_LONG &&
			len == 40,
		"buffer too small: %zu", len);
}

/* Build a record from u64 words (the header's size is filled in). */
static size_t rec(uint64_t *w, size_t n)
{
	struct perf_event_header h = { PERF_RECORD_SAMPLE, 0, (uint16_t)(n * 8) };

	memcpy(&w[0], &h, 8);
	return n * 8;
}

#define PID_TID(pid, tid) ((uint64_t)(tid) << 32 | (uint32_t)(pid))

T_CASE(sample_fixed_fields_in_documented_order)
{
	uint64_t w[16] = { 0, 0x1d, 0x401000, PID_TID(7, 8), 123456, 0xdead, 55, 66,
			   PID_TID(3, 0), 1000 };
	struct pmc_sample_layout lay = {
		.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			       PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_ID |
			       PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD,
	};
	struct pmc_sample s;
	struct pmc_error err;
	size_t n = rec(w, 10);

	T_CHECK(pmc_sample_parse(w, n, &lay, &s, &err) == 0, "%s", err.message);
	T_CHECK(s.identifier == 0x1d && s.ip == 0x401000 && s.pid == 7 && s.tid == 8 &&
			s.time == 123456 && s.addr == 0xdead && s.id == 55 && s.stream_id == 66 &&
			s.cpu == 3 && s.period == 1000,
		"decoded: id %" PRIx64 " ip %" PRIx64 " pid %u tid %u cpu %u period %" PRIu64,
		s.identifier, s.ip, s.pid, s.tid, s.cpu, s.period);
	/* One word short: the field named. */
	T_CHECK(pmc_sample_parse(w, n - 8, &lay, &s, &err) == PMC_E_SYNTAX &&
			strstr(err.message, "\"period\""),
		"truncated: %s", err.message);
	/* One word extra: the layout does not match. */
	T_CHECK(pmc_sample_parse(w, rec(w, 11), &lay, &s, &err) == PMC_E_SYNTAX &&
			strstr(err.message, "left after"),
		"extra bytes: %s", err.message);
}

T_CASE(sample_read_formats)
{
	struct pmc_sample s;
	struct pmc_error err;
	/* GROUP | TIMES | ID: nr, enabled, running, {value, id} x 2 */
	uint64_t g[16] = { 0, 2, 500, 400, 11, 101, 22, 102 };
	struct pmc_sample_layout lay = {
		.sample_type = PERF_SAMPLE_READ,
		.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED |
			       PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID,
	};
	/* single: value, enabled, running, id, lost */
	uint64_t one[8] = { 0, 77, 9, 8, 1234, 5 };

	T_CHECK(pmc_sample_parse(g, rec(g, 8), &lay, &s, &err) == 0, "%s", err.message);
	T_CHECK(s.read_nr == 2 && s.time_enabled == 500 && s.time_running == 400 &&
			s.read_value[0] == 11 && s.read_id[0] == 101 && s.read_value[1] == 22 &&
			s.read_id[1] == 102,
		"group read");
	lay.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING |
			  PERF_FORMAT_ID | PERF_FORMAT_LOST;
	T_CHECK(pmc_sample_parse(one, rec(one, 6), &lay, &s, &err) == 0, "%s", err.message);
	T_CHECK(s.read_nr == 1 && s.read_value[0] == 77 && s.time_enabled == 9 &&
			s.time_running == 8 && s.read_id[0] == 1234 && s.read_lost[0] == 5,
		"single read with LOST");
	/* A group count past what the record holds is refused, not read. */
	g[1] = 1000;
	lay.read_format = PERF_FORMAT_GROUP;
	T_CHECK(pmc_sample_parse(g, rec(g, 8), &lay, &s, &err) == PMC_E_SYNTAX, "huge nr");
}

T_CASE(sample_variable_length_fields)
{
	/* CALLCHAIN: nr=2 + 2 ips; RAW: u32 size=12 + 12 bytes (=16, aligned);
	 * REGS_USER: abi + 2 regs; STACK_USER: size 8, data, dyn_size. */
	uint64_t w[24] = { 0, 2, 0xaaa, 0xbbb };
	struct pmc_sample_layout lay = {
		.sample_type = PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW | PERF_SAMPLE_REGS_USER |
			       PERF_SAMPLE_STACK_USER | PERF_SAMPLE_WEIGHT | PERF_SAMPLE_DATA_SRC,
		.sample_regs_user = 0x5,
	};
	struct pmc_sample s;
	struct pmc_error err;
	uint32_t raw_size = 12;
	size_t i = 4;

	memcpy(&w[i], &raw_size, 4);
	memset((char *)&w[i] + 4, 0x42, 12);
	i += 2;
	w[i++] = PERF_SAMPLE_REGS_ABI_64;
	w[i++] = 100;
	w[i++] = 200;
	w[i++] = 8;           /* stack size */
	w[i++] = 0x1122;      /* stack data */
	w[i++] = 8;           /* dyn_size */
	w[i++] = 33;          /* weight */
	w[i++] = 44;          /* data_src */
	T_CHECK(pmc_sample_parse(w, rec(w, i), &lay, &s, &err) == 0, "%s", err.message);
	T_CHECK(s.callchain_nr == 2 && s.callchain[1] == 0xbbb, "callchain");
	T_CHECK(s.raw_size == 12 && ((const unsigned char *)s.raw)[11] == 0x42, "raw");
	T_CHECK(s.regs_user_abi == PERF_SAMPLE_REGS_ABI_64 && s.regs_user[1] == 200, "regs");
	T_CHECK(s.stack_size == 8 && s.stack_dyn_size == 8 && s.weight == 33 && s.data_src == 44,
		"stack, weight, data_src");
	/* A callchain claiming more entries than the record has. */
	w[1] = 1u << 20;
	T_CHECK(pmc_sample_parse(w, rec(w, i), &lay, &s, &err) == PMC_E_SYNTAX &&
			strstr(err.message, "callchain"),
		"oversized callchain: %s", err.message);
	lay.sample_type |= 1ull << 62;
	T_CHECK(pmc_sample_parse(w, rec(w, i), &lay, &s, &err) == PMC_E_UNSUPPORTED, "unknown bit");
}

/* Non-sample records end with {pid,tid} time id stream_id {cpu,res} identifier. */
T_CASE(sample_id_trailer)
{
	uint64_t w[12] = { 0, 0x1111, 0x2222, PID_TID(5, 6), 999, 42, PID_TID(1, 0), 0x77 };
	struct pmc_sample_layout lay = {
		.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID |
			       PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP,
		.sample_id_all = 1,
	};
	struct pmc_sample s;
	struct pmc_error err;
	struct perf_event_header h = { PERF_RECORD_LOST, 0, 64 };

	memcpy(w, &h, 8);
	T_CHECK(pmc_sample_id_size(&lay) == 40, "trailer size %zu (IP is not in it)",
		pmc_sample_id_size(&lay));
	T_CHECK(pmc_sample_id_parse(w, 64, &lay, &s, &err) == 0, "%s", err.message);
	T_CHECK(s.pid == 5 && s.tid == 6 && s.time == 999 && s.id == 42 && s.cpu == 1 &&
			s.identifier == 0x77,
		"trailer: pid %u tid %u time %" PRIu64 " id %" PRIu64, s.pid, s.tid, s.time, s.id);
	T_CHECK(pmc_sample_id_parse(w, 16, &lay, &s, &err) == PMC_E_SYNTAX, "too short");
	T_CHECK(!strcmp(pmc_record_name(PERF_RECORD_LOST), "LOST") &&
			!strcmp(pmc_record_name(PERF_RECORD_SAMPLE), "SAMPLE") &&
			!strcmp(pmc_record_name(9999), "?"),
		"names");
}

/* Addresses back to functions: this program's own (static) function, a
 * shared library's, an address inside a function, and addresses no
 * function or no object covers. */
__attribute__((noinline, used)) static unsigned symtab_target(unsigned x)
{
	for (unsigned i = 0; i < 8; i++)
		x = x * 33 + i;
	return x;
}

T_CASE(symtab_addresses_to_functions)
{
	struct pmc_symtab *t;
	struct pmc_symbol_at at;
	struct pmc_error err;
	uint64_t self = (uint64_t)(uintptr_t)&symtab_target;
	uint64_t lib = (uint64_t)(uintptr_t)dlsym(RTLD_DEFAULT, "getpid");
	uint64_t stack = (uint64_t)(uintptr_t)&at;

	T_CHECK(pmc_symtab_open(&t, &err) == 0, "%s", err.message);
	T_CHECK(pmc_symtab_lookup(t, self, &at) == 1 && !strcmp(at.function, "symtab_target") &&
			at.offset == 0 && at.start == self,
		"own static function: %s+%" PRIu64, at.function ? at.function : "(none)", at.offset);
	T_CHECK(at.object && strstr(at.object, "test_sampling"), "object %s",
		at.object ? at.object : "(none)");
	T_CHECK(pmc_symtab_lookup(t, self + 3, &at) == 1 && !strcmp(at.function, "symtab_target") &&
			at.offset == 3,
		"inside it: %s+%" PRIu64, at.function ? at.function : "(none)", at.offset);
	T_CHECK(lib && pmc_symtab_lookup(t, lib, &at) == 1 && strstr(at.function, "getpid") &&
			strstr(at.object, "libc"),
		"libc's getpid: %s in %s", at.function ? at.function : "(none)",
		at.object ? at.object : "(none)");
	T_CHECK(pmc_symtab_lookup(t, stack, &at) == 0 && !at.function && !at.object,
		"the stack is no object's");
	T_CHECK(pmc_symtab_lookup(t, 16, &at) == 0 && !at.object, "address 16");
	T_CHECK(symtab_target(1) != 0, "keep it");
	pmc_symtab_close(t);
	pmc_symtab_close(NULL);
}

int main(int argc, char **argv)
{
	return t_main(argc, argv);
}
