/* fuzz-replay-plan.c — libFuzzer entry point for replay planning
 * (issue 12): the fuzzed bytes are read as a trace of any format
 * (trace_load_ios sniffs it, as `iosim replay` does) and planned against
 * small targets under every option combination; plan-check.c aborts on
 * any planned I/O outside its target or a refusal without a clear error.
 * Built only with clang (-fsanitize=fuzzer); run as
 *   build/tests/replay/fuzz-replay-plan tests/data/
 * The deterministic /replay/plan-mutation tests in
 * test-replay-plan-mutation.c run the same checks in CI without libFuzzer. */
#include <sys/mman.h>
#include <unistd.h>

#include "plan-check.h"

int LLVMFuzzerTestOneInput (const guint8 *data, size_t size);

int
LLVMFuzzerTestOneInput (const guint8 *data, size_t size)
{
  int fd = memfd_create ("fuzz-replay-plan", MFD_CLOEXEC);
  g_autofree char *path = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) ios = NULL;
  PlanCheckStats stats = { 0 };

  if (fd < 0)
    return 0;
  if (size > 0 && write (fd, data, size) != (ssize_t) size)
    {
      close (fd);
      return 0;
    }
  path = g_strdup_printf ("/proc/self/fd/%d", fd);
  ios = trace_load_ios (path, G_MAXUINT32, G_MAXUINT32, NULL, NULL, &error);
  if (ios == NULL && (error == NULL || error->message[0] == '\0'))
    g_error ("a trace refused without a message");
  if (ios != NULL && ios->len > 0)
    {
      /* Not a whole number of 4 KiB blocks, and one of 512-byte ones. */
      plan_check_combinations (ios, (64u << 10) + 512, &stats);
      plan_check_combinations (ios, 3 * 512, &stats);
    }
  close (fd);
  return 0;
}
