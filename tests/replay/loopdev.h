/* loopdev.h — a loop device over a file in a temporary folder, for the
 * realdev tests: attached with LOOP_CTL_GET_FREE + LOOP_SET_FD, detached
 * with LOOP_CLR_FD in loopdev_free(), and marked autoclear so that the
 * kernel detaches it anyway when a failed test exits without teardown. */
#pragma once

#include <glib.h>

typedef struct {
  char   *dir;          /* temporary folder holding the backing file */
  char   *backing;      /* backing file path */
  char   *path;         /* /dev/loopN */
  int     fd;           /* open on the loop device (not O_EXCL) */
  guint64 size_bytes;
} LoopDev;

/* NULL with a reason in *skip_reason (caller frees) when the machine
 * cannot give a loop device: not root, no /dev/loop-control. */
LoopDev *loopdev_new      (guint64 size_bytes, char **skip_reason);
void     loopdev_free     (LoopDev *dev);
/* Read the backing file (after the loop has flushed) */
gboolean loopdev_read_backing (LoopDev *dev, guint64 offset, gsize len, guint8 *out);
