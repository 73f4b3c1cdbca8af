/* realdev-sched.h — what the `iosim validate` realdev tests share:
 * spawning a program, a loop device's queue/scheduler (the one in force,
 * the ones offered, writing one), and whether this kernel can record block
 * traces at all. */
#pragma once

#include <glib.h>

/* g_spawn_sync on PATH; FALSE (with a test message) when it could not run. */
gboolean realdev_run             (const char *const *argv,
                                  char              **out,
                                  char              **err,
                                  int                *status);
/* The bracketed word of @sched_file; NULL when unreadable. */
char    *realdev_active_sched    (const char *sched_file);
gboolean realdev_sched_available (const char *sched_file,
                                  const char *name);
/* Write @name and read it back: TRUE only when it is in force. */
gboolean realdev_write_sched     (const char *sched_file,
                                  const char *name);
/* NULL when the kernel has tracefs and the blk tracer (tracefs need not
 * be mounted: iosim capture mounts it and unmounts it afterwards; the test
 * never mounts it), else why not. */
char    *realdev_blk_tracer_missing (void);

/* A loop device over a sparse file in a fresh folder of /dev/shm, attached
 * with losetup (as a user would), its scheduler noted so that detaching
 * puts it back: a detached loop device keeps its queue settings, and the
 * next user of /dev/loopN would inherit them. */
typedef struct {
  char *dir;              /* /dev/shm/PREFIX-XXXXXX */
  char *backing;          /* DIR/backing.img */
  char *loop;             /* /dev/loopN, NULL until attached */
  char *sched_file;       /* /sys/block/loopN/queue/scheduler */
  char *original_sched;   /* the device's own */
} RealdevLoop;

/* NULL when attached, else why not (what was made is left for
 * realdev_loop_detach). */
char    *realdev_loop_attach (RealdevLoop *dev,
                              const char  *prefix,
                              guint64      size_bytes);
/* Put the scheduler back, detach, remove the backing file and the folder
 * (which must hold nothing else by then); safe on a part-made device.
 * What fails is said in the test log. */
void     realdev_loop_detach (RealdevLoop *dev);
