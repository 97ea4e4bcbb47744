/* SPDX-License-Identifier: MIT */
/*
 * Dies of SIGSEGV two calls deep, for sim.engines.line_info: valgrind
 * prints the stack trace, with files and lines only when it read the
 * DWARF line tables (PMCHECK_SIM_LINE_INFO=1).
 */
#include <stddef.h>

__attribute__((noinline)) static void sim_crash_store(volatile int *p)
{
	*p = 1;
}

int main(int argc, char **argv)
{
	(void)argv;
	sim_crash_store(argc > 1000 ? (volatile int *)&argc : NULL);
	return 0;
}
