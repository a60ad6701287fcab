#ifndef COVERD_CDEFLATE_SHIM_H
#define COVERD_CDEFLATE_SHIM_H
#include <libdeflate.h>
#endif
