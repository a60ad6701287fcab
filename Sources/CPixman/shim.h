#ifndef COVERD_CPIXMAN_SHIM_H
#define COVERD_CPIXMAN_SHIM_H
#include <pixman.h>

// pixman_double_to_fixed is a macro.
static inline pixman_fixed_t coverd_pixman_fixed(double value) { return pixman_double_to_fixed(value); }
#endif
