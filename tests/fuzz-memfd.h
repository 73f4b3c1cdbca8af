/* fuzz-memfd.h — a libFuzzer input as a file, for harnesses of readers
 * that take a path (tests/traces/fuzz-trace.c, tests/fit/fuzz-fit.c,
 * tests/compare/fuzz-compare.c). */
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <glib.h>

/* A memory file holding @len bytes of @bytes, its /proc/self/fd path in
 * *@path (caller frees); the descriptor (caller closes), or -1. */
static inline int
fuzz_memory_file (const guint8 *bytes, size_t len, char **path)
{
  int fd = memfd_create ("fuzz", MFD_CLOEXEC);
  if (fd < 0)
    return -1;
  if (len > 0 && write (fd, bytes, len) != (ssize_t) len)
    {
      close (fd);
      return -1;
    }
  *path = g_strdup_printf ("/proc/self/fd/%d", fd);
  return fd;
}
