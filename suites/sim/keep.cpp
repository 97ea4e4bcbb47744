// SPDX-License-Identifier: MIT
// keep.c compiled as C++: PMC_DO_NOT_OPTIMIZE of an rvalue.
#include "keep.c"
