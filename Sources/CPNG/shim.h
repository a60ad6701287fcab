#ifndef COVERD_CPNG_SHIM_H
#define COVERD_CPNG_SHIM_H
// coverd decodes PNGs (to scale them) with libpng's simplified API, which
// needs no setjmp and is called from Swift directly; its format macros are
// re-exported as constants here because Swift cannot import them.
#include <png.h>

static const unsigned int COVERD_PNG_FORMAT_GRAY = PNG_FORMAT_GRAY;
static const unsigned int COVERD_PNG_FORMAT_RGB = PNG_FORMAT_RGB;
static const unsigned int COVERD_PNG_FORMAT_RGBA = PNG_FORMAT_RGBA;
static const unsigned int COVERD_PNG_FORMAT_GA = PNG_FORMAT_GA;
static const unsigned int COVERD_PNG_IMAGE_VERSION = PNG_IMAGE_VERSION;
#endif
