#ifndef COVERD_CGIF_SHIM_H
#define COVERD_CGIF_SHIM_H
#include <gif_lib.h>
#endif
