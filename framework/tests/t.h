/* SPDX-License-Identifier: MIT */
/*
 * Minimal case runner for the framework's own tests (the harness is built
 * on top of the counting core, so the core cannot be tested with it).
 *
 *   prog --list      print case names, one per line
 *   prog NAME        run one case: exit 0 pass, 77 skip, 1 fail
 *   prog             run every case in its own child process
 *
 * Checks print both sides and never compile out.
 */
#ifndef PMC_T_H
#define PMC_T_H

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fixture.h"

#define T_MAX_CASES 128

/* AddressSanitizer replaces malloc and friends: tests about libc's own
 * symbols adjust their expectations. */
#if defined(__SANITIZE_ADDRESS__)
#define T_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define T_ASAN 1
#endif
#endif

struct t_case {
	const char *name;
	void (*fn)(void);
};

static struct t_case t_cases[T_MAX_CASES];
static int t_ncases;
static int t_failed;
static const char *t_current;

static inline void t_register(const char *name, void (*fn)(void))
{
	if (t_ncases < T_MAX_CASES)
		t_cases[t_ncases++] = (struct t_case){ name, fn };
}

#define T_CASE(name)                                                           \
	static void t_case_##name(void);                                       \
	__attribute__((constructor)) static void t_reg_##name(void)            \
	{                                                                      \
		t_register(#name, t_case_##name);                              \
	}                                                                      \
	static void t_case_##name(void)

static inline void t_fail_at(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "FAIL %s (%s:%d): ", t_current, file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	t_failed = 1;
}

/* Failing checks end the case: later checks would only repeat the cause. */
#define T_CHECK(cond, ...)                                                     \
	do {                                                                   \
		if (!(cond)) {                                                 \
			t_fail_at(__FILE__, __LINE__, __VA_ARGS__);            \
			return;                                                \
		}                                                              \
	} while (0)

#define T_EQ_U64(actual, expected, what)                                       \
	do {                                                                   \
		uint64_t t_a_ = (uint64_t)(actual), t_e_ = (uint64_t)(expected); \
		T_CHECK(t_a_ == t_e_, "%s: got %" PRIu64 " (0x%" PRIx64        \
			") expected %" PRIu64 " (0x%" PRIx64 ")",              \
			what, t_a_, t_a_, t_e_, t_e_);                         \
	} while (0)

#define T_EQ_STR(actual, expected, what)                                       \
	do {                                                                   \
		const char *t_a_ = (actual), *t_e_ = (expected);               \
		T_CHECK(t_a_ && strcmp(t_a_, t_e_) == 0,                       \
			"%s: got \"%s\" expected \"%s\"", what,                 \
			t_a_ ? t_a_ : "(null)", t_e_);                          \
	} while (0)

#define T_STR_EQ(got, want, what)                                              \
	do {                                                                   \
		const char *t_g_ = (got), *t_w_ = (want);                       \
		T_CHECK(t_g_ && strcmp(t_g_, t_w_) == 0, "%s: got \"%s\" expected \"%s\"", \
			what, t_g_ ? t_g_ : "(null)", t_w_);                   \
	} while (0)

#define T_SKIP(...)                                                            \
	do {                                                                   \
		printf("SKIP %s: ", t_current);                                \
		printf(__VA_ARGS__);                                           \
		printf("\n");                                                  \
		fflush(stdout);                                                \
		exit(77);                                                      \
	} while (0)

static inline int t_run_one(const struct t_case *c)
{
	t_current = c->name;
	t_failed = 0;
	c->fn();
	if (!t_failed)
		printf("PASS %s\n", c->name);
	fflush(stdout);
	return t_failed ? 1 : 0;
}

static inline int t_main(int argc, char **argv)
{
	int fails = 0, skips = 0;

	if (argc > 1 && !strcmp(argv[1], "--list")) {
		for (int i = 0; i < t_ncases; i++)
			printf("%s\n", t_cases[i].name);
		return 0;
	}
	if (argc > 1) {
		for (int i = 0; i < t_ncases; i++)
			if (!strcmp(argv[1], t_cases[i].name))
				return t_run_one(&t_cases[i]);
		fprintf(stderr, "no test case named \"%s\"; --list shows them\n", argv[1]);
		return 2;
	}
	for (int i = 0; i < t_ncases; i++) {
		pid_t pid;
		int status = 0;

		fflush(stdout);
		pid = fork();
		if (pid == 0)
			_exit(t_run_one(&t_cases[i]));
		if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
		    (WEXITSTATUS(status) != 0 && WEXITSTATUS(status) != 77)) {
			if (pid > 0 && !WIFEXITED(status))
				printf("FAIL %s: crashed\n", t_cases[i].name);
			fails++;
		} else if (WEXITSTATUS(status) == 77) {
			skips++;
		}
	}
	printf("%d cases: %d failed, %d skipped\n", t_ncases, fails, skips);
	return fails ? 1 : (skips == t_ncases ? 77 : 0);
}

#endif
