/* sim-writeback.h — the writeback-policy interface the page cache calls.
 *
 * The page cache (sim/sim-pagecache.c) owns pages, dirty lists and the
 * writeback I/O itself; a policy (models/wb/, one file per era) decides
 * when and how much to write back and what a writer that dirtied pages
 * must do before write() returns (2.6.9 mm/page-writeback.c
 * balance_dirty_pages and its successors).  The page cache calls a policy
 * only through this ops table; policies include this header, never the
 * reverse.
 */
#pragma once

#include <glib.h>
#include "sim/sim.h"
#include "sim/sim-pagecache.h"

G_BEGIN_DECLS

typedef struct _WbOps WbOps;

/* The flusher threads' CPU work (the host model: pdflush threads on the
 * host's CPUs running the profile's writeback path, models/host/host.c).
 * Before a flusher submits a batch of @pages pages of @bdi (the first of
 * @file), @run does that batch's work on flusher thread @thread
 * (WB_FLUSHER_*), then calls @done (@done_data), from which the flusher
 * goes on: submits the batch and may @run its next one.  Without it the
 * flusher's work takes no simulated time. */
typedef void (*WbFlusherDone) (gpointer done_data);
typedef struct {
  void   (*run) (gpointer data, guint thread, SimBdi *bdi, const SimFile *file,
                 guint64 pages, WbFlusherDone done, gpointer done_data);
  gpointer data;
} WbFlusherCpu;

/* 2.6.9 mm/pdflush.c hands each operation to an idle pdflush thread (a
 * pool of 2 to 8): background_writeout and wb_kupdate run on two of them,
 * each at most once at a time (pdflush's `running' flag; wb_kupdate
 * re-arms its timer when it ends). */
enum {
  WB_FLUSHER_BACKGROUND,   /* background_writeout */
  WB_FLUSHER_KUPDATE,      /* wb_kupdate */
  WB_N_FLUSHERS
};

struct _WbPolicy {
  const WbOps  *ops;
  gpointer      priv;         /* priv_size bytes, zeroed */
  SimPageCache *pc;
  Sim          *sim;
  guint         hz;
  SimIoContext  flusher;      /* identity of the flusher threads' I/O */
  const WbFlusherCpu *flusher_cpu; /* wb_policy_set_flusher_cpu, or NULL */
  GArray       *samples;      /* WbBdiSample per device, for time series */
};

struct _WbOps {
  const char *name;           /* "global-2.6" */
  const char *era;
  const char *summary;
  gsize       priv_size;
  guint       flags;          /* WB_F_* */

  /* Required.  Read tunables from the scenario's [writeback] group (may be
   * absent), start timers. */
  gboolean (*init)     (WbPolicy *w, GKeyFile *kf, GError **error);
  /* Optional: teardown. */
  void     (*exit)     (WbPolicy *w);
  /* Required.  @wr made wr->dirtied pages dirty: call
   * sim_page_cache_write_finish() now or later (balance_dirty_pages). */
  void     (*dirtied)  (WbPolicy *w, SimPageWrite *wr, SimTime now_ns);
  /* Optional: a write parked with sim_page_cache_wait_writeback() is woken
   * by a writeback completion. */
  void     (*resume)   (WbPolicy *w, SimPageWrite *wr, SimTime now_ns);
  /* Optional: @pages pages of @bdi finished writeback. */
  void     (*written)  (WbPolicy *w, SimBdi *bdi, guint64 pages, SimTime now_ns);
  /* Optional, for time series: the era's current background and dirty
   * thresholds in pages, global (@bdi NULL) or of @bdi (where the era
   * has per-device limits; leave @bg_pages 0 where it has none). */
  void     (*limits)   (WbPolicy *w, const SimBdi *bdi, guint64 *bg_pages,
                        guint64 *thresh_pages);
};

/* The policy's pdflush and kupdate (WbPdflush, WbKupdate with the default
 * flush) may run on flusher threads: wb_policy_set_flusher_cpu. */
#define WB_F_FLUSHER_CPU      (1u << 1)

/* The era's direct reclaim leaves dirty file pages to the flusher and puts
 * back what it cannot free, marked (3.2+): SIM_RECLAIM_ROTATE. */
#define WB_F_RECLAIM_ROTATES  (1u << 0)

/* The era's direct reclaim puts what it scanned and could not free back at
 * the hot end (2.6 up to 3.1): SIM_RECLAIM_PUTBACK.  Without either flag,
 * SIM_RECLAIM_KEEP_COLD. */
#define WB_F_RECLAIM_PUTBACK  (1u << 2)

/* 2.4's reclaim: writes dirty pages itself, waiting on those it wrote
 * (SIM_RECLAIM_LAUNDER_OWN), or with WB_F_RECLAIM_WAIT_ALL on every page
 * under writeback (SIM_RECLAIM_LAUNDER_ALL). */
#define WB_F_RECLAIM_LAUNDER  (1u << 3)
#define WB_F_RECLAIM_WAIT_ALL (1u << 4)

WbPolicy *wb_policy_new  (const WbOps *ops, SimPageCache *pc, Sim *sim, guint hz,
                          GKeyFile *kf, GError **error);
void      wb_policy_free (WbPolicy *w);

G_END_DECLS
