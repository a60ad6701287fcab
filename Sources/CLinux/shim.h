#ifndef COVERD_CLINUX_SHIM_H
#define COVERD_CLINUX_SHIM_H
// Linux interfaces the Glibc module does not export.
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/prctl.h>
#include <malloc.h>
#include <sys/vfs.h>

// syncfs(2) and sync_file_range(2) are declared only under _GNU_SOURCE.
extern int syncfs(int fd);
extern int sync_file_range(int fd, long long offset, long long nbytes, unsigned int flags);
static const unsigned int COVERD_SYNC_FILE_RANGE_WRITE = 2;

// The filesystem type (statfs f_type) holding `path`, or -1 when it cannot be read.
static inline long long coverd_filesystem_type(const char *path) {
    struct statfs info;
    return statfs(path, &info) == 0 ? (long long)(unsigned long)info.f_type : -1;  // magic numbers are unsigned
}

// mallopt(M_ARENA_MAX, n): the macro is not imported into Swift.
static inline int coverd_set_malloc_arena_max(int count) { return mallopt(M_ARENA_MAX, count); }
#endif
