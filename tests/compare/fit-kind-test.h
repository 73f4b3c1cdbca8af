/* fit-kind-test.h — what the tests of models/fit's kinds of device model
 * (test-fit-disk.c, test-fit-empirical.c, test-fit-ssd.c) share: the
 * choice as fit_device makes it, and a fitted scenario's device loaded as
 * the scenario loader loads it. */
#pragma once

#include <glib.h>
#include "models/dev/dev.h"
#include "models/fit/fit.h"

/* The rebuilt service times and the choice, as fit_device makes it;
 * *@parallelism gets the queue fit's servers. */
static inline void
fit_kind_test_choose (GArray *rqs, guint64 stroke_sectors, FitModelKind requested,
                      guint *parallelism, FitModelChoice *out)
{
  g_autofree double *service = g_new (double, rqs->len + 1);
  FitDeviceQueue queue;

  fit_device_queue ((const TraceRequest *) rqs->data, rqs->len, &queue, service);
  *parallelism = queue.parallelism;
  fit_model_choose ((const TraceRequest *) rqs->data, service, rqs->len, queue.parallelism,
                    stroke_sectors, requested, out);
  fit_device_queue_clear (&queue);
}

/* The [device NAME] group of the scenario text @ini that @r wrote, through
 * dev_model_load with the scenario-only keys left to the scenario. */
static inline DevModel *
fit_kind_test_load_device (const FitResult *r, const char *ini)
{
  static const char *const ignore[] = { "sched", "devno", "via", "loop_max_io", NULL };
  g_autoptr(GKeyFile) kf = g_key_file_new ();
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) dirs = dev_model_default_search_dirs ();
  g_autofree char *group = g_strdup_printf ("device %s", r->device_name);
  DevModel *dev;

  g_assert_true (g_key_file_load_from_data (kf, ini, -1, G_KEY_FILE_NONE, &error));
  g_assert_no_error (error);
  dev = dev_model_load (r->device_name, kf, group, (const char *const *) dirs, ignore, &error);
  g_assert_no_error (error);
  return dev;
}
