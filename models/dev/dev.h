/* dev.h — device service models: the ops table, parameters and registry.
 *
 * A device model answers one question: how long does this request take if
 * the device starts it now?  The engine (sim/sim-device.c) owns queueing,
 * servers and completion events; a model only computes service times and
 * keeps whatever mechanical state it needs (head position).  Models:
 *   fixed  per-request overhead + bandwidth (optical drives, ZIP, USB sticks)
 *   disk   seek curve by distance, rotation from rpm, zoned transfer rate,
 *          per-command overhead (Ruemmler & Wilkes 1994 style)
 *   ssd    latency by size and operation, internal parallelism, bandwidth
 *   empirical  measured service-time distributions by size and distance
 *          class (what a fit of an unknown device gives)
 * Parameters live in .ini files under models/devices/ (group [device]),
 * overridable in a scenario's [device NAME] group.  The ops table and the
 * model instance the engine calls are the engine's: sim/sim-devmodel.h.
 */
#pragma once

#include <glib.h>
#include "sim/sim-devmodel.h"

G_BEGIN_DECLS

#define DEV_ERROR (dev_error_quark ())
GQuark dev_error_quark (void);

typedef enum {
  DEV_ERROR_FAILED,
  DEV_ERROR_UNKNOWN_KIND,
  DEV_ERROR_PARAM,      /* bad or out-of-range value; message names key and group */
  DEV_ERROR_NOT_FOUND,  /* model file not found in the search path */
} DevError;

/* The registered kinds (dev-fixed.c, dev-disk.c, dev-ssd.c, dev-empirical.c). */
extern const DevOps dev_fixed_ops;
extern const DevOps dev_disk_ops;
extern const DevOps dev_ssd_ops;
extern const DevOps dev_empirical_ops;

/* For the kinds' init hooks: a DEV_ERROR_PARAM error naming @key; the core
 * prefixes the device, group and model file. */
void      dev_set_param_error        (GError     **error,
                                      const char  *key,
                                      const char  *format,
                                      ...) G_GNUC_PRINTF (3, 4);

/* Registry (explicit array; required hooks checked at first use). */
const DevOps      *dev_ops_lookup  (const char *kind);
const DevOps *const *dev_ops_all   (void);   /* NULL-terminated */

/* Appends one line per parameter of @ops (common ones first): key, type,
 * default and help; for "--list-devices" style listings. */
void      dev_ops_describe_params    (const DevOps *ops,
                                      GString      *out);

/* Build a model from @group of @kf: "kind" selects the ops; the common and
 * the kind's parameters are parsed; keys listed in @ignore_keys (NULL-
 * terminated, may be NULL) are left for the caller; any other unknown key
 * is an error naming it and listing the valid ones.  A trailing
 * " ; comment" or " # comment" after a value is ignored. */
DevModel *dev_model_new_from_keyfile (const char          *name,
                                      GKeyFile            *kf,
                                      const char          *group,
                                      const char *const   *ignore_keys,
                                      GError             **error);

/* Scenario helper: if @group has "model = FILE", load FILE (DIR/FILE.ini or
 * DIR/devices/FILE.ini for DIR in @search_dirs, or a path), take its
 * [device] group, overlay the keys of @group (except "model" and
 * @ignore_keys), and build the model; dev->model_name is FILE's base name.
 * Without "model", @group must give "kind".  Errors name the scenario
 * group, or the model file for keys that came from it. */
DevModel *dev_model_load             (const char          *name,
                                      GKeyFile            *scenario,
                                      const char          *group,
                                      const char *const   *search_dirs,
                                      const char *const   *ignore_keys,
                                      GError             **error);


/* Appends the common parameters and the kind's derived constants (its dump
 * hook) to @out, one "key = value" per line. */
void      dev_model_dump             (DevModel *dev,
                                      GString  *out);

/* Derived constants of a disk model (dev-disk.c), for tests and reports.
 * Seek time for a distance of d >= 1 cylinders is
 *   seek_a_ns + seek_b_ns * sqrt (d - 1) + seek_c_ns * (d - 1),  seek(0) = 0. */
typedef struct {
  guint64 cylinders;
  double  seek_a_ns;
  double  seek_b_ns;
  double  seek_c_ns;
  double  seek_mean_ns;       /* over random pairs of distinct cylinders */
  SimTime period_ns;          /* one revolution */
  guint   spt_outer;          /* sectors per track, outermost zone */
  guint   spt_inner;          /* sectors per track, innermost zone */
} DevDiskGeometry;

/* @dev must be a disk model (asserted). */
void      dev_disk_get_geometry      (DevModel        *dev,
                                      DevDiskGeometry *out);
/* Unrounded seek time in ns for a move of @distance_cyl cylinders. */
double    dev_disk_seek_ns           (DevModel        *dev,
                                      guint64          distance_cyl);
/* The cylinder that holds @sector (linear in LBA, clamped to the last). */
guint64   dev_disk_sector_cylinder   (DevModel        *dev,
                                      guint64          sector);
/* Time from @at_ns until @sector passes under the head, in [0, period). */
SimTime   dev_disk_rotational_latency_ns (DevModel    *dev,
                                      guint64          sector,
                                      SimTime          at_ns);

/* Where dev_model_load looks by default, in order: $IOSIM_MODELS_DIR (if
 * set), the source tree's models/, the installed datadir/iosim/models.
 * Each DIR is searched as DIR/NAME.ini and DIR/devices/NAME.ini. */
char    **dev_model_default_search_dirs (void);

/* Convenience for tests: build from an ini text with a [device] group. */
DevModel *dev_model_new_from_data    (const char *name,
                                      const char *ini_text,
                                      GError    **error);


G_END_DECLS
