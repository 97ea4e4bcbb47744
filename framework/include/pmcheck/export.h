/* SPDX-License-Identifier: MIT */
/*
 * PMC_API marks the library's exported symbols.  The library is built with
 * -fvisibility=hidden, so anything without this marker stays internal.
 */
#ifndef PMCHECK_EXPORT_H
#define PMCHECK_EXPORT_H

#if defined(__GNUC__) || defined(__clang__)
#define PMC_API __attribute__((visibility("default")))
#else
#define PMC_API
#endif

#endif
