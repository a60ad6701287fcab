#ifndef COVERD_CLINUX_SHIM_H
#define COVERD_CLINUX_SHIM_H
// Linux interfaces the Glibc module does not export.
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/prctl.h>
#endif
