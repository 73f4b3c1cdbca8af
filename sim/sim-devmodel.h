/* sim-devmodel.h — the device service-model interface the engine calls.
 *
 * A device model answers one question: how long does this request take if
 * the device starts it now?  The engine (sim/sim-device.c) owns queueing,
 * servers and completion events and calls a model only through this ops
 * table (as the kernel's block core calls a driver through blk_mq_ops);
 * the kinds, their parameter parsing and registry live in models/dev/ and
 * include this header, never the reverse.
 */
#pragma once

#include <glib.h>
#include "sim/sim.h"
#include "sim/sim-request.h"
#include "sim/sim-rng.h"

G_BEGIN_DECLS

/* How a parameter is stored in the model's private struct. */
typedef enum {
  DEV_PARAM_TIME,       /* SimTime, ns; text takes units ("8.5ms") */
  DEV_PARAM_SIZE,       /* guint64, bytes; text takes units ("30GiB") */
  DEV_PARAM_RATE,       /* double, bytes per second; text "40MB/s" */
  DEV_PARAM_UINT,       /* guint */
  DEV_PARAM_DOUBLE,     /* double */
  DEV_PARAM_BOOL,       /* gboolean */
  DEV_PARAM_STRING,     /* char *, the raw text (inline comment cut), owned by
                         * the model and freed by dev_model_free; for values
                         * the kind's init parses itself (lists).  A default
                         * of "" is the usual way to mean "not given". */
} DevParamType;

/* One tunable row (fio option-table style). */
typedef struct {
  const char   *key;
  DevParamType  type;
  const char   *default_value;  /* text, parsed like user input; NULL = required;
                                 * "=KEY": whatever KEY ends up with (write_*
                                 * rows that default to their read twin) */
  gsize         offset;         /* into the model's private struct */
  const char   *help;           /* one line, with the reason for the default */
} DevParam;

typedef struct _DevModel DevModel;

/* A kind's own default for a common parameter ("queue_depth" = "32" for an
 * SSD with NCQ); tables end with a row whose key is NULL. */
typedef struct {
  const char *key;
  const char *default_value;
} DevDefault;

typedef struct {
  const char     *name;         /* matched by "kind = NAME" */
  const char     *summary;      /* one line for listings */
  const DevParam *params;       /* terminated by a row with key == NULL */
  gsize           priv_size;    /* zero-allocated before params are parsed */

  /* Required.  Called once the params are parsed into dev->priv: check
   * ranges (GError naming the key), derive constants, and set
   * dev->parallelism (number of requests served at once, >= 1). */
  gboolean (*init)          (DevModel *dev, GError **error);

  /* Required.  Service time of a request that starts now on a free server.
   * May update mechanical state (the head is at the end of this request
   * afterwards).  Must not read any clock but @now_ns. */
  SimTime  (*service_time)  (DevModel *dev,
                             SimOp     op,
                             guint64   sector,
                             guint32   nr_sectors,
                             SimTime   now_ns);

  /* Optional: human-readable derived state for tests and --verbose. */
  void     (*dump)          (DevModel *dev, GString *out);

  /* Optional: kind-specific defaults of the common parameters. */
  const DevDefault *common_defaults;

  /* Optional: free what init allocated in dev->priv (string parameters
   * and dev->priv itself are the core's).  Called once by dev_model_free,
   * also after a failed init. */
  void     (*finalize)      (DevModel *dev);
} DevOps;

struct _DevModel {
  const DevOps *ops;
  gpointer      priv;
  char         *name;           /* device name from the scenario ("hda") */
  char         *model_name;     /* model file name or kind */
  /* Common parameters, parsed by the core for every kind: */
  guint64       capacity_bytes; /* "capacity", default 64GiB */
  guint         queue_depth;    /* "queue_depth": commands the host may have outstanding; default 1 */
  gboolean      rotational;     /* "rotational": for the elevators (hw_tag, idling) */
  guint32       max_sectors;    /* "max_sectors_kb" as sectors, default 512 KiB */
  /* Set by the model's init: */
  guint         parallelism;
  gboolean      write_cache;    /* a volatile write cache the host is told of
                                 * (sd: QUEUE_FLAG_WC); default FALSE */
  /* Set by the engine (sim_device_new): the device's own random stream,
   * "device.NAME.service", for models with random service times.  NULL
   * when the model is used outside a simulation (unit tests). */
  SimRng       *rng;
};

/* Frees the model: the kind's finalize hook, its string parameters, its
 * private data.  NULL-tolerant. */
void      dev_model_free             (DevModel *dev);

static inline SimTime
dev_model_service_time (DevModel *dev, SimOp op, guint64 sector,
                        guint32 nr_sectors, SimTime now_ns)
{
  return dev->ops->service_time (dev, op, sector, nr_sectors, now_ns);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (DevModel, dev_model_free)

G_END_DECLS
