/* host-test.h — what the host model's scenario tests (test-host-scenarios.c,
 * test-host-journal.c, test-raw-io.c, test-classic-reports.c) share:
 * running a scenario from text or from models/scenarios/, loading a
 * profile from models/profiles/, and finding a lock in a run's results. */
#pragma once

#include <glib.h>
#include <string.h>

#include "models/scenario.h"
#include "models/host/host-profile.h"

/* Run @run_index of the scenario text @text (named @name) with @sets. */
static inline SimRunResult *
host_test_run_text (const char *text, const char *name, const char *const *sets, guint run_index)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (Scenario) s = scenario_load_data (text, name, NULL, sets, &error);
  g_assert_no_error (error);
  SimRunResult *r = scenario_run (s, run_index, NULL, &error);
  g_assert_no_error (error);
  return r;
}

/* Run @run_index of models/scenarios/@file with @sets. */
static inline SimRunResult *
host_test_run_file (const char *file, const char *const *sets, guint run_index)
{
  g_autofree char *path = g_test_build_filename (G_TEST_DIST, "..", "models", "scenarios",
                                                 file, NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (Scenario) s = scenario_load_file (path, sets, &error);
  g_assert_no_error (error);
  SimRunResult *r = scenario_run (s, run_index, NULL, &error);
  g_assert_no_error (error);
  return r;
}

/* models/profiles/@name.ini */
static inline HostProfile *
host_test_profile (const char *name)
{
  g_autofree char *dir = g_test_build_filename (G_TEST_DIST, "..", "models", "profiles", NULL);
  const char *const dirs[] = { dir, NULL };
  g_autoptr (GError) error = NULL;
  HostProfile *p = host_profile_load (name, dirs, NULL, &error);
  g_assert_no_error (error);
  return p;
}

/* The lock instance @name of @r, or NULL. */
static inline const SimLockResult *
host_test_lock (const SimRunResult *r, const char *name)
{
  for (guint i = 0; i < r->locks->len; i++)
    {
      const SimLockResult *l = g_ptr_array_index (r->locks, i);
      if (strcmp (l->name, name) == 0)
        return l;
    }
  return NULL;
}
