#ifndef COVERD_CLINUX_SHIM_H
#define COVERD_CLINUX_SHIM_H
// Linux interfaces the Glibc module does not export.
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/prctl.h>
#include <malloc.h>

// syncfs(2) and sync_file_range(2) are declared only under _GNU_SOURCE.
extern int syncfs(int fd);
extern int sync_file_range(int fd, long long offset, long long nbytes, unsigned int flags);
static const unsigned int COVERD_SYNC_FILE_RANGE_WRITE = 2;

// mallopt(M_ARENA_MAX, n): the macro is not imported into Swift.
static inline int coverd_set_malloc_arena_max(int count) { return mallopt(M_ARENA_MAX, count); }
#endif
