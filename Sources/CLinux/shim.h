#ifndef COVERD_CLINUX_SHIM_H
#define COVERD_CLINUX_SHIM_H
// Linux interfaces the Glibc module does not export.
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/prctl.h>
#include <malloc.h>
#include <sys/vfs.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/ioctl.h>

// syncfs(2) is declared only under _GNU_SOURCE.
extern int syncfs(int fd);

// The filesystem type (statfs f_type) holding `path`, or -1 when it cannot be read.
static inline long long coverd_filesystem_type(const char *path) {
    struct statfs info;
    return statfs(path, &info) == 0 ? (long long)(unsigned long)info.f_type : -1;  // magic numbers are unsigned
}

// Whether a process other than this one holds a lock on bytes [start, start + length) of `fd`:
// 1 or 0, or -1 with errno set. A query only: F_GETLK takes no lock.
static inline int coverd_range_locked_elsewhere(int fd, long long start, long long length) {
    struct flock lock = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = start, .l_len = length };
    if (fcntl(fd, F_GETLK, &lock) != 0) return -1;
    return lock.l_type != F_UNLCK;
}

// mallopt(M_ARENA_MAX, n): the macro is not imported into Swift.
static inline int coverd_set_malloc_arena_max(int count) { return mallopt(M_ARENA_MAX, count); }
// mallopt(M_MMAP_THRESHOLD, bytes), which also stops glibc from raising the threshold itself.
static inline int coverd_set_malloc_mmap_threshold(int bytes) { return mallopt(M_MMAP_THRESHOLD, bytes); }
// mallopt(M_TRIM_THRESHOLD, bytes): how much free memory an arena's top keeps before giving it back.
static inline int coverd_set_malloc_trim_threshold(int bytes) { return mallopt(M_TRIM_THRESHOLD, bytes); }

// A pipe's buffer size: F_SETPIPE_SZ and F_GETPIPE_SZ are defined only under _GNU_SOURCE.
#ifndef F_SETPIPE_SZ
#define F_SETPIPE_SZ 1031
#endif
#ifndef F_GETPIPE_SZ
#define F_GETPIPE_SZ 1032
#endif
static inline int coverd_set_pipe_size(int fd, int bytes) { return fcntl(fd, F_SETPIPE_SZ, bytes); }
static inline int coverd_pipe_size(int fd) { return fcntl(fd, F_GETPIPE_SZ); }

// O_PATH (a descriptor for *at calls and /proc/self/fd paths only) is defined only under _GNU_SOURCE.
#ifndef O_PATH
#define O_PATH 010000000
#endif

// accept4(2) is declared only under _GNU_SOURCE.
extern int accept4(int fd, struct sockaddr *address, socklen_t *length, int flags);

// A Unix socket peer's credentials (SO_PEERCRED): struct ucred is defined only under _GNU_SOURCE.
struct coverd_peer_credentials { int pid; unsigned int uid; unsigned int gid; };
static inline int coverd_peer_credentials(int fd, struct coverd_peer_credentials *out) {
    socklen_t length = sizeof *out;
    return getsockopt(fd, SOL_SOCKET, SO_PEERCRED, out, &length);
}

// The width in columns of the terminal on `fd`, or -1 when it is none or does not say (ioctl is variadic).
static inline int coverd_terminal_columns(int fd) {
    struct winsize size;
    return ioctl(fd, TIOCGWINSZ, &size) == 0 && size.ws_col > 0 ? size.ws_col : -1;
}

// An in-memory file that can be sealed (memfd_create(2)); the call, its flags and F_ADD_SEALS
// are declared only under _GNU_SOURCE.
extern int memfd_create(const char *name, unsigned int flags);
#ifndef MFD_CLOEXEC
#define MFD_CLOEXEC 0x0001U
#endif
#ifndef MFD_ALLOW_SEALING
#define MFD_ALLOW_SEALING 0x0002U
#endif
#ifndef F_ADD_SEALS
#define F_ADD_SEALS 1033
#define F_SEAL_SEAL 0x0001
#define F_SEAL_SHRINK 0x0002
#define F_SEAL_GROW 0x0004
#define F_SEAL_WRITE 0x0008
#endif
static inline int coverd_sealable_memory_file(const char *name) { return memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING); }
// Its size and bytes fixed for good, the seals included (fcntl is variadic).
static inline int coverd_seal_memory_file(int fd) {
    return fcntl(fd, F_ADD_SEALS, F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE);
}
#endif
