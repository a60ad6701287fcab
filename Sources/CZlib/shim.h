#ifndef COVERD_CZLIB_SHIM_H
#define COVERD_CZLIB_SHIM_H
#include <zlib.h>
#endif
