#ifndef COVERD_CPNG_SHIM_H
#define COVERD_CPNG_SHIM_H
// libpng reports errors by longjmp to a frame that called setjmp, which Swift
// cannot do: the encoder's calls are wrapped here. Reading uses libpng's
// simplified API, which needs no setjmp and is called from Swift directly.
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <png.h>

static const unsigned int COVERD_PNG_FORMAT_GRAY = PNG_FORMAT_GRAY;
static const unsigned int COVERD_PNG_FORMAT_RGB = PNG_FORMAT_RGB;
static const unsigned int COVERD_PNG_FORMAT_RGBA = PNG_FORMAT_RGBA;
static const unsigned int COVERD_PNG_FORMAT_GA = PNG_FORMAT_GA;
static const unsigned int COVERD_PNG_IMAGE_VERSION = PNG_IMAGE_VERSION;

typedef struct coverd_png_output {
    unsigned char *data;  // malloc'd; the caller frees it
    size_t size;
    size_t capacity;
    char message[256];
} coverd_png_output;

static void coverd_png_write(png_structp png, png_bytep bytes, size_t length) {
    coverd_png_output *out = png_get_io_ptr(png);
    if (out->size + length > out->capacity) {
        size_t capacity = out->capacity ? out->capacity : 65536;
        while (capacity < out->size + length) capacity *= 2;
        unsigned char *grown = realloc(out->data, capacity);
        if (grown == NULL) png_error(png, "out of memory for the PNG");
        out->data = grown;
        out->capacity = capacity;
    }
    memcpy(out->data + out->size, bytes, length);
    out->size += length;
}

static void coverd_png_flush(png_structp png) { (void)png; }

static void coverd_png_error(png_structp png, png_const_charp message) {
    coverd_png_output *out = png_get_error_ptr(png);
    strncpy(out->message, message, sizeof(out->message) - 1);
    png_longjmp(png, 1);
}

static void coverd_png_warning(png_structp png, png_const_charp message) { (void)png; (void)message; }

// Encodes 8-bit rows (color_type PNG_COLOR_TYPE_GRAY, _RGB or _RGB_ALPHA) with
// the given zlib level and tEXt chunks. 0, or -1 with out->message set.
static inline int coverd_png_encode(
    const unsigned char *pixels, unsigned int width, unsigned int height, int color_type, size_t stride,
    int level, const char *const *keys, const char *const *texts, int text_count, coverd_png_output *out)
{
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, out, coverd_png_error, coverd_png_warning);
    if (png == NULL) { strcpy(out->message, "cannot create a PNG writer"); return -1; }
    png_infop info = png_create_info_struct(png);
    if (info == NULL) {
        png_destroy_write_struct(&png, NULL);
        strcpy(out->message, "cannot create a PNG writer");
        return -1;
    }
    // volatile: assigned after setjmp and read after a longjmp back to it.
    png_textp volatile text = NULL;
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        free(text);
        if (out->message[0] == 0) strcpy(out->message, "libpng failed");
        return -1;
    }
    png_set_write_fn(png, out, coverd_png_write, coverd_png_flush);
    png_set_compression_level(png, level);
    png_set_IHDR(png, info, width, height, 8, color_type, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    if (text_count > 0) {
        text = calloc((size_t)text_count, sizeof(png_text));
        if (text == NULL) png_error(png, "out of memory for the PNG text");
        for (int i = 0; i < text_count; i++) {
            text[i].compression = PNG_TEXT_COMPRESSION_NONE;
            text[i].key = (png_charp)keys[i];
            text[i].text = (png_charp)texts[i];
        }
        png_set_text(png, info, text, text_count);
    }
    png_write_info(png, info);
    for (unsigned int y = 0; y < height; y++) png_write_row(png, pixels + (size_t)y * stride);
    png_write_end(png, info);
    png_destroy_write_struct(&png, &info);
    free(text);
    return 0;
}
#endif
