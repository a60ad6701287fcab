#ifndef COVERD_CJPEG_SHIM_H
#define COVERD_CJPEG_SHIM_H
// libjpeg reports errors by calling error_exit, which must not return: the
// only safe way out is longjmp back into a frame that called setjmp. Swift
// cannot call setjmp, so each libjpeg call that may fail is wrapped here,
// and nothing else is: decisions stay in Swift (Images/JPEGDecoder.swift).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <jpeglib.h>
#include <jerror.h>

typedef struct coverd_jpeg {
    struct jpeg_decompress_struct info;  // first: the callbacks cast back from it
    struct jpeg_error_mgr errors;
    struct jpeg_progress_mgr progress;
    jmp_buf jump;
    int started;
    int max_scans;
    char message[JMSG_LENGTH_MAX];
} coverd_jpeg;

static void coverd_jpeg_error_exit(j_common_ptr common) {
    coverd_jpeg *self = (coverd_jpeg *)common;
    (*common->err->format_message)(common, self->message);
    longjmp(self->jump, 1);
}

// Warnings (level -1) are mostly corrupt or missing data ("Premature end of
// JPEG file"): libjpeg would carry on with grey pixels; coverd refuses the
// file. A few only describe bytes around the image data and lose no pixel:
// those are tolerated, as browsers do.
static void coverd_jpeg_emit_message(j_common_ptr common, int level) {
    if (level >= 0) return;
    int code = common->err->msg_code;
    if (code == JWRN_EXTRANEOUS_DATA || code == JWRN_JFIF_MAJOR || code == JWRN_ADOBE_XFORM || code == JWRN_BOGUS_ICC) return;
    coverd_jpeg_error_exit(common);
}

// A progressive file may hold thousands of tiny scans, each a full pass over
// the coefficients: a few kilobytes that take minutes to decode. Like djpeg's
// -maxscans, more than max_scans (set by the caller) is an error.
static void coverd_jpeg_progress(j_common_ptr common) {
    coverd_jpeg *self = (coverd_jpeg *)common;
    if (self->max_scans > 0 && self->info.input_scan_number > self->max_scans) {
        snprintf(self->message, sizeof(self->message), "more than %d progressive scans", self->max_scans);
        longjmp(self->jump, 1);
    }
}

static inline coverd_jpeg *coverd_jpeg_create(void) {
    coverd_jpeg *self = calloc(1, sizeof(coverd_jpeg));
    if (self == NULL) return NULL;
    self->info.err = jpeg_std_error(&self->errors);
    self->errors.error_exit = coverd_jpeg_error_exit;
    self->errors.emit_message = coverd_jpeg_emit_message;
    self->progress.progress_monitor = coverd_jpeg_progress;
    if (setjmp(self->jump)) { free(self); return NULL; }
    jpeg_create_decompress(&self->info);
    self->info.progress = &self->progress;
    return self;
}

static inline void coverd_jpeg_destroy(coverd_jpeg *self) {
    jpeg_destroy_decompress(&self->info);
    free(self);
}

// Reads the header from memory (kept by the caller until destroy), saving
// APP1 (for the EXIF orientation). 0, or -1 with message.
static inline int coverd_jpeg_read_header(coverd_jpeg *self, const unsigned char *data, unsigned long size, long max_memory) {
    if (setjmp(self->jump)) return -1;
    self->info.mem->max_memory_to_use = max_memory;
    jpeg_mem_src(&self->info, data, size);
    jpeg_save_markers(&self->info, JPEG_APP0 + 1, 0xFFFF);
    jpeg_read_header(&self->info, TRUE);
    return 0;
}

static inline int coverd_jpeg_start(coverd_jpeg *self, unsigned int scale_num, unsigned int scale_denom, J_COLOR_SPACE out) {
    if (setjmp(self->jump)) return -1;
    self->info.scale_num = scale_num;
    self->info.scale_denom = scale_denom;
    self->info.out_color_space = out;
    self->info.dct_method = JDCT_ISLOW;
    jpeg_start_decompress(&self->info);
    self->started = 1;
    return 0;
}

// Reads up to max_rows more output rows into buffer (rows of `stride` bytes,
// row n at buffer + n * stride), so the caller can stop between calls. 0, or -1 with message.
static inline int coverd_jpeg_read_rows(coverd_jpeg *self, unsigned char *buffer, size_t stride, unsigned int max_rows) {
    if (setjmp(self->jump)) return -1;
    unsigned int end = self->info.output_scanline + max_rows;
    while (self->info.output_scanline < self->info.output_height && self->info.output_scanline < end) {
        JSAMPROW row = buffer + (size_t)self->info.output_scanline * stride;
        jpeg_read_scanlines(&self->info, &row, 1);
    }
    return 0;
}

// After every row: checks the rest of the file. 0, or -1 with message.
static inline int coverd_jpeg_finish(coverd_jpeg *self) {
    if (setjmp(self->jump)) return -1;
    jpeg_finish_decompress(&self->info);
    return 0;
}
#endif
