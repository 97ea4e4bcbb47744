/* SPDX-License-Identifier: MIT */
/* `pmcheck validate` (validate.c). */
#ifndef PMCHECK_TOOLS_VALIDATE_H
#define PMCHECK_TOOLS_VALIDATE_H

/* Run the validation suite, print the per-event table, write the report
 * (--output); exit status 0 all judged figures passed, 1 a failure, 77
 * nothing could be validated here, 2 the suite could not run, 64 usage. */
int pmc__validate_command(int argc, char **argv);

#endif
