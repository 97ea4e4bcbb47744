/* SPDX-License-Identifier: MIT */
/* main() for suites that have none of their own (pmcheck::harness_main). */
#include <pmcheck/harness.h>

int main(int argc, char **argv)
{
	return pmc_main(argc, argv);
}
