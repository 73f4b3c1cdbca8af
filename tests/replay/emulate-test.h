/* emulate-test.h — what the tests that drive `iosim emulate` share: whether
 * this machine can run it, and how long tasks waited for a CPU (the host's
 * share of a timing measurement). */
#pragma once

#include <glib.h>
#include <string.h>
#include <unistd.h>

/* Root, IOSIM_BIN, /dev/fuse and /dev/loop-control; skips with the reason
 * otherwise. */
static inline gboolean
emulate_test_can_run (void)
{
  const char *missing = NULL;

  if (geteuid () != 0)
    missing = "not root";
  else if (g_getenv ("IOSIM_BIN") == NULL)
    missing = "IOSIM_BIN not set (run through meson test)";
  else if (access ("/dev/fuse", R_OK | W_OK) != 0)
    missing = "no /dev/fuse";
  else if (access ("/dev/loop-control", R_OK | W_OK) != 0)
    missing = "no /dev/loop-control";
  if (missing != NULL)
    g_test_skip (missing);
  return missing == NULL;
}

/* Microseconds some task waited for a CPU since boot (PSI, the "some"
 * line of /proc/pressure/cpu, Linux 4.20+), or -1 without PSI.  The loop
 * worker is a CFS kworker: behind other work it is late, and so is every
 * request. */
static inline gint64
emulate_test_cpu_wait_us (void)
{
  g_autofree char *text = NULL;
  const char *total;

  if (!g_file_get_contents ("/proc/pressure/cpu", &text, NULL, NULL)
      || (total = strstr (text, "total=")) == NULL)
    return -1;
  return g_ascii_strtoll (total + strlen ("total="), NULL, 10);
}
