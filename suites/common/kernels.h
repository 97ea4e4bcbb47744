/* SPDX-License-Identifier: MIT */
/*
 * Known-count microkernels in inline assembly, so that no compiler can change
 * what they execute.  Each comment states the exact count per iteration; a
 * kernel's fixed entry/exit cost (a few moves) cancels when two lengths are
 * differenced, which is how the suites use them.
 */
#ifndef PMCHECK_SUITES_KERNELS_H
#define PMCHECK_SUITES_KERNELS_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/* Instructions per iteration of kernel_loop(); one taken conditional branch
 * per iteration but the last. */
#define KERNEL_LOOP_INSNS 3

/* n >= 1 iterations of: add, decrement, branch-if-not-zero. */
static inline uint64_t kernel_loop(uint64_t n)
{
	uint64_t acc = 0;
#if defined(__x86_64__)
	__asm__ __volatile__("1:\n\t"
			     "add $1, %0\n\t"
			     "dec %1\n\t"
			     "jnz 1b"
			     : "+r"(acc), "+r"(n)
			     :
			     : "cc");
#elif defined(__aarch64__)
	__asm__ __volatile__("1:\n\t"
			     "add %0, %0, #1\n\t"
			     "subs %1, %1, #1\n\t"
			     "b.ne 1b"
			     : "+r"(acc), "+r"(n)
			     :
			     : "cc");
#else
#error "kernels.h: x86_64 and aarch64 only"
#endif
	return acc;
}

/* n >= 1 dependent loads p = *p: exactly one data load, one conditional
 * branch and KERNEL_LOOP_INSNS instructions per iteration. */
static inline void *kernel_chase(void *p, uint64_t n)
{
#if defined(__x86_64__)
	__asm__ __volatile__("1:\n\t"
			     "mov (%0), %0\n\t"
			     "dec %1\n\t"
			     "jnz 1b"
			     : "+r"(p), "+r"(n)
			     :
			     : "cc", "memory");
#elif defined(__aarch64__)
	__asm__ __volatile__("1:\n\t"
			     "ldr %0, [%0]\n\t"
			     "subs %1, %1, #1\n\t"
			     "b.ne 1b"
			     : "+r"(p), "+r"(n)
			     :
			     : "cc", "memory");
#endif
	return p;
}

/* Conditional branches per iteration of kernel_branches(): the data-
 * dependent one and the loop's. */
#define KERNEL_BRANCHES_PER_ITER 2

/* n >= 1 iterations: load bits[i]; branch over an add when it is zero; loop.
 * With random bits the first branch is unpredictable. Returns the number of
 * non-zero bytes. */
static inline uint64_t kernel_branches(const uint8_t *bits, uint64_t n)
{
	uint64_t taken = 0, tmp;
#if defined(__x86_64__)
	__asm__ __volatile__("1:\n\t"
			     "movzbl (%2), %k3\n\t"
			     "inc %2\n\t"
			     "test %k3, %k3\n\t"
			     "jz 2f\n\t"
			     "add $1, %0\n"
			     "2:\n\t"
			     "dec %1\n\t"
			     "jnz 1b"
			     : "+r"(taken), "+r"(n), "+r"(bits), "=&r"(tmp)
			     :
			     : "cc", "memory");
#elif defined(__aarch64__)
	__asm__ __volatile__("1:\n\t"
			     "ldrb %w3, [%2], #1\n\t"
			     "cbz %w3, 2f\n\t"
			     "add %0, %0, #1\n"
			     "2:\n\t"
			     "subs %1, %1, #1\n\t"
			     "b.ne 1b"
			     : "+r"(taken), "+r"(n), "+r"(bits), "=&r"(tmp)
			     :
			     : "cc", "memory");
#endif
	return taken;
}

/*
 * Ordinary compiled C, for gates on "user code" rather than on asm: an
 * Adler-32-style checksum, one load and two modulo reductions per byte.
 */
static inline uint32_t kernel_checksum(const uint8_t *p, size_t n)
{
	uint32_t a = 1, b = 0;

	for (size_t i = 0; i < n; i++) {
		a = (a + p[i]) % 65521;
		b = (b + a) % 65521;
	}
	return b << 16 | a;
}

/* A fixed pseudo-random sequence (xorshift64), the same on every run. */
static inline uint64_t kernel_xorshift(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *state = x;
}

/*
 * Lay one random cycle through `lines` cache lines of `line` bytes at buf:
 * each line holds a pointer to the next, in an order no prefetcher can
 * follow.  Sattolo's shuffle yields a single cycle, so a chase of `lines`
 * steps touches every line once.  Returns buf, or NULL without memory.
 */
static inline void *kernel_chase_build(void *buf, size_t lines, size_t line, uint64_t seed)
{
	size_t *next = (size_t *)malloc(lines * sizeof(*next));
	char *base = (char *)buf;
	size_t i;

	if (!next)
		return NULL;
	for (i = 0; i < lines; i++)
		next[i] = i;
	for (i = lines - 1; i > 0; i--) {
		size_t j = (size_t)(kernel_xorshift(&seed) % i), t = next[i];

		next[i] = next[j];
		next[j] = t;
	}
	for (i = 0; i < lines; i++)
		*(void **)(base + i * line) = base + next[i] * line;
	free(next);
	return buf;
}

/* ---- validation kernels: each states its per-iteration counts ------------------------ */

/* Per iteration: 4 instructions (x86) / 3 (arm64), 2 conditional branches,
 * of which one is never taken (its condition is a constant zero). */
#if defined(__x86_64__)
#define KERNEL_NOT_TAKEN_INSNS 4
#else
#define KERNEL_NOT_TAKEN_INSNS 3
#endif
static inline void kernel_not_taken(uint64_t n)
{
	uint64_t zero = 0;
#if defined(__x86_64__)
	__asm__ __volatile__("1:\n\t"
			     "test %1, %1\n\t"
			     "jnz 2f\n\t"
			     "dec %0\n\t"
			     "jnz 1b\n"
			     "2:"
			     : "+r"(n)
			     : "r"(zero)
			     : "cc");
#elif defined(__aarch64__)
	__asm__ __volatile__("1:\n\t"
			     "cbnz %1, 2f\n\t"
			     "subs %0, %0, #1\n\t"
			     "b.ne 1b\n"
			     "2:"
			     : "+r"(n)
			     : "r"(zero)
			     : "cc");
#endif
}

/* Per iteration: 3 instructions, 2 branches: an unconditional direct jump
 * and the loop's conditional branch. */
#define KERNEL_JUMP_INSNS 3
static inline void kernel_unconditional(uint64_t n)
{
#if defined(__x86_64__)
	__asm__ __volatile__("1:\n\t"
			     "jmp 2f\n"
			     "2:\n\t"
			     "dec %0\n\t"
			     "jnz 1b"
			     : "+r"(n)
			     :
			     : "cc");
#elif defined(__aarch64__)
	__asm__ __volatile__("1:\n\t"
			     "b 2f\n"
			     "2:\n\t"
			     "subs %0, %0, #1\n\t"
			     "b.ne 1b"
			     : "+r"(n)
			     :
			     : "cc");
#endif
}

/* Per iteration: one 8-byte load from *p (always the same line), 3 instructions. */
static inline void kernel_loads(const uint64_t *p, uint64_t n)
{
	uint64_t v;
#if defined(__x86_64__)
	__asm__ __volatile__("1:\n\t"
			     "mov (%2), %1\n\t"
			     "dec %0\n\t"
			     "jnz 1b"
			     : "+r"(n), "=&r"(v)
			     : "r"(p)
			     : "cc", "memory");
#elif defined(__aarch64__)
	__asm__ __volatile__("1:\n\t"
			     "ldr %1, [%2]\n\t"
			     "subs %0, %0, #1\n\t"
			     "b.ne 1b"
			     : "+r"(n), "=&r"(v)
			     : "r"(p)
			     : "cc", "memory");
#endif
	(void)v;
}

/* Per iteration: one 8-byte store to *p, 3 instructions. */
static inline void kernel_stores(uint64_t *p, uint64_t n)
{
#if defined(__x86_64__)
	__asm__ __volatile__("1:\n\t"
			     "mov %0, (%1)\n\t"
			     "dec %0\n\t"
			     "jnz 1b"
			     : "+r"(n)
			     : "r"(p)
			     : "cc", "memory");
#elif defined(__aarch64__)
	__asm__ __volatile__("1:\n\t"
			     "str %0, [%1]\n\t"
			     "subs %0, %0, #1\n\t"
			     "b.ne 1b"
			     : "+r"(n)
			     : "r"(p)
			     : "cc", "memory");
#endif
}

#if defined(__x86_64__)
/* One rep movsb of n bytes: one instruction to the hardware however long,
 * one instruction per byte to valgrind. */
static inline void kernel_rep_movsb(void *dst, const void *src, uint64_t n)
{
	__asm__ __volatile__("rep movsb" : "+D"(dst), "+S"(src), "+c"(n) : : "memory");
}
#endif

#endif
