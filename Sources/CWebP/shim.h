#ifndef COVERD_CWEBP_SHIM_H
#define COVERD_CWEBP_SHIM_H
#include <webp/decode.h>
#include <webp/demux.h>
#endif
