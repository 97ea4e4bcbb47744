/* SPDX-License-Identifier: MIT */
/* pmcheck: hardware-counter assertions for C.  Umbrella header. */
#ifndef PMCHECK_PMCHECK_H
#define PMCHECK_PMCHECK_H

#include <pmcheck/version.h>
#include <pmcheck/export.h>
#include <pmcheck/error.h>
#include <pmcheck/event.h>
#include <pmcheck/counters.h>
#include <pmcheck/region.h>
#include <pmcheck/machine.h>
#include <pmcheck/hwdb.h>
#include <pmcheck/sampling.h>
#include <pmcheck/sim.h>


#endif
