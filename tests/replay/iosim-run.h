/* iosim-run.h — running the iosim binary ($IOSIM_BIN) from a test and
 * keeping its exit status, stdout and stderr.  Header-only: each test
 * program that includes it gets its own copy. */
#pragma once

#include <glib.h>

typedef struct {
  int   status;
  char *out, *err;
} Run;

static inline void
run_clear (Run *r)
{
  g_free (r->out);
  g_free (r->err);
}

/* iosim ARGS...; r->status is the wait status as g_spawn_sync gives it. */
static inline void
run_iosim (Run *r, const char *const *args)
{
  g_autoptr (GPtrArray) argv = g_ptr_array_new ();
  g_autoptr (GError) error = NULL;
  const char *bin = g_getenv ("IOSIM_BIN");

  g_assert_nonnull (bin);
  g_ptr_array_add (argv, (gpointer) bin);
  for (guint i = 0; args[i]; i++)
    g_ptr_array_add (argv, (gpointer) args[i]);
  g_ptr_array_add (argv, NULL);
  g_spawn_sync (NULL, (char **) argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL, &r->out,
                &r->err, &r->status, &error);
  g_assert_no_error (error);
}
