/* wb.h — writeback and dirty-throttling policies: the ops table.
 *
 * The page cache (sim/sim-pagecache.c) owns pages, dirty lists and the
 * writeback I/O itself; a policy decides when and how much to write back
 * (flusher threads, kupdate-style expiry) and what a writer that dirtied
 * pages must do before write() returns (balance_dirty_pages: write some
 * back itself, sleep, or nothing).  One file per era in models/wb/; the
 * threshold arithmetic of every era is in wb-limits.h.  Policies get the
 * time from the hooks and ask the engine for timers (sim_schedule_*).
 * The ops table and the policy instance the page cache calls are the
 * engine's: sim/sim-writeback.h.
 */
#pragma once

#include <glib.h>
#include "sim/sim-writeback.h"
#include "sim/sim-timeseries.h"
#include "models/wb/wb-limits.h"     /* WB_ERROR */

G_BEGIN_DECLS

extern const WbOps wb_none_ops;
extern const WbOps wb_global_ops;
extern const WbOps wb_bdflush_ops;    /* wb-bdflush.c, "bdflush-2.4" */
extern const WbOps wb_bdflush_2_4_18_ops; /* wb-bdflush.c, "bdflush-2.4.18" */
extern const WbOps wb_perbdi_ops;     /* wb-perbdi.c, "per-bdi-2.6.24" */
extern const WbOps wb_ioless_ops;     /* wb-ioless.c, "io-less-3.2" */

const WbOps        *wb_ops_lookup (const char *name);
const WbOps *const *wb_ops_all    (void);

/* congestion_wait(WRITE, HZ/10): how long throttled writers and the
 * flusher sleep when they cannot make progress. */
#define WB_CONGESTION_WAIT_NS (100 * SIM_NS_PER_MS)
/* Pages the flusher writes of one device before moving to the next. */
#define WB_FLUSH_BATCH_PAGES  32u

/* An unsigned [writeback] key no larger than @max, or untouched @out when
 * absent; GError naming the key otherwise. */
gboolean wb_get_uint (GKeyFile *kf, const char *key, guint *out, guint max, GError **error);

/* Nonblocking writeback (2.6 pdflush/kupdate): pages dirtied at or before
 * @before, each uncongested device in turn in batches, while more than
 * @target pages are dirty; FALSE when it stopped because every device
 * with work was congested. */
gboolean wb_flush (WbPolicy *w, SimTime before, guint64 target);

/* The throttled writer @wr sleeps @ns, then @fn runs (as a Sim event with
 * @w as subject and @wr as object); counted per device for time series. */
void wb_pause (WbPolicy *w, SimPageWrite *wr, SimTime ns, SimEventFunc fn);
/* End @wr's wb_pause sleep now (a wake-up before its timeout): @fn runs
 * from an event of its own; the sleep's unslept rest leaves pause_ns.
 * FALSE when @wr is not sleeping. */
gboolean wb_pause_cut (WbPolicy *w, SimPageWrite *wr, SimEventFunc fn);

/* Time-series rows at each sample of @ts (sim/sim-timeseries.h):
 *   writeback global  dirty_pages, writeback_pages, bg_thresh_pages,
 *                     thresh_pages
 *   bdi NAME          thresh_pages (eras with per-device limits),
 *                     throttled_tasks (at the sample), pauses, pause_ms and
 *                     max_pause_ms (sleeps begun in the interval),
 *                     flusher_pages (pages the flusher started in it) */
void wb_policy_add_timeseries (WbPolicy *w, SimTimeSeries *ts);

/* kupdate-style writeback (wb_kupdate, wb_check_old_data_flush): every
 * dirty_writeback_centisecs, write back what has been dirty longer than
 * dirty_expire_centisecs; the timer stays only while something else goes
 * on.  Embedded in a policy's private data. */
typedef void (*WbFlushOld) (WbPolicy *w, SimTime dirtied_before_ns);

/* wb_flush on a flusher thread (WbFlusherCpu): one batch of one device at
 * a time, each submitted once the thread has done its pages' work.
 * Private to wb.c; embedded in WbKupdate and WbPdflush. */
typedef struct _WbFlushRun WbFlushRun;
struct _WbFlushRun {
  WbPolicy  *w;
  guint      thread;          /* WB_FLUSHER_* */
  gboolean   busy;
  SimTime    before;
  guint64    target;
  guint      next_bdi;        /* the round's next device */
  guint64    started;         /* pages started in the round */
  gboolean   all_congested;   /* every device with work was congested */
  SimBdi    *bdi;             /* the batch on the thread */
  guint64    pages;
  void     (*done) (WbFlushRun *f, gboolean progressed);
};

typedef struct {
  const WbDirtyTunables *t;
  WbFlushOld             flush;   /* NULL: wb_flush (w, before, 0) */
  SimEventId             event;
  SimTime                start_ns; /* of the run on a flusher thread */
  WbFlushRun             run;
} WbKupdate;

void wb_kupdate_start (WbPolicy *w, WbKupdate *k, const WbDirtyTunables *t, WbFlushOld flush);
void wb_kupdate_stop  (WbPolicy *w, WbKupdate *k);

/* pdflush's background_writeout (2.6 before per-device flushers): while
 * dirty pages are over the background threshold that @limits gives, write
 * back nonblocking (wb_flush), sleeping in congestion_wait when every
 * device is congested. */
typedef void (*WbLimitsFunc) (WbPolicy *w, guint64 *bg_pages, guint64 *thresh_pages);
typedef struct {
  WbLimitsFunc limits;
  gboolean     running;
  SimEventId   event;
  WbFlushRun   run;
} WbPdflush;

/* Start background writeout unless it runs or dirty pages are below the
 * background threshold. */
void wb_pdflush_wake (WbPolicy *w, WbPdflush *p);
void wb_pdflush_stop (WbPolicy *w, WbPdflush *p);

/* Run the flusher threads' work on @cpu (borrowed; it outlives @w's
 * run), when @w's policy has WB_F_FLUSHER_CPU; FALSE (nothing changes)
 * when it has not. */
gboolean  wb_policy_set_flusher_cpu (WbPolicy *w, const WbFlusherCpu *cpu);

G_END_DECLS
