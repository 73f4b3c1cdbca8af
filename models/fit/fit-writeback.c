/* fit-writeback.c — page-cache writeback in a block trace, fitted as the
 * simulator's buffered writers (fit.h, "Writeback"): which processes'
 * writes were writeback, the writers that stand for them (pages, region,
 * sequential or not, fsyncs, start), the host the simulated page cache
 * needs, and the largest request when it is a queue limit.  The scenario,
 * report and JSON parts are in fit-output-writeback.c.
 */
#include <string.h>
#include "models/fit/fit.h"
#include "models/fit/fit-private.h"
#include "models/wb/wb-limits.h"

#define FIT_SECTOR_BYTES 512
#define FIT_PAGE_SECTORS (FIT_WRITER_BS_BYTES / FIT_SECTOR_BYTES)
/* The era the scenario simulates: blk-mq kernels all have IO-less
 * throttling (3.2+); its thresholds are computed as wb-ioless.c does. */
#define FIT_WB_KVER WB_KERNEL_VERSION (3, 2, 0)
/* The kernel's floor for vm.dirty_bytes: two pages (dirty_bytes_min). */
#define FIT_DIRTY_BYTES_MIN (2 * WB_PAGE_SIZE_BYTES)
/* The simulated page cache needs room for a few readahead windows. */
#define FIT_HOST_MEMORY_MIN (1024 * 1024)

gboolean
fit_comm_is_flusher (const char *comm)
{
  g_return_val_if_fail (comm != NULL, FALSE);
  /* bdi_wq (3.10+) is an unbound workqueue, but any kworker may run
   * wb_workfn; the high-priority pools ("...H") are kblockd's: they
   * dispatch and sequence flushes, they do not write pages back. */
  if (g_str_has_prefix (comm, "kworker/"))
    return comm[strlen (comm) - 1] != 'H';
  return g_str_has_prefix (comm, "flush-") || strcmp (comm, "pdflush") == 0
         || strcmp (comm, "bdflush") == 0 || strcmp (comm, "kupdated") == 0;
}

gboolean
fit_comm_is_pool (const char *comm)
{
  g_return_val_if_fail (comm != NULL, FALSE);
  return strcmp (comm, "nfsd") == 0 || strcmp (comm, "iosim-nfsd") == 0;
}

/* ---- The host ------------------------------------------------------------- */

gboolean
fit_host_check (const FitHost *host, GError **error)
{
  const guint dirty = FIT_HOST_DIRTY_RATIO | FIT_HOST_DIRTY_BACKGROUND_RATIO
                      | FIT_HOST_DIRTY_BYTES | FIT_HOST_DIRTY_BACKGROUND_BYTES
                      | FIT_HOST_DIRTY_EXPIRE | FIT_HOST_DIRTY_WRITEBACK;

  g_return_val_if_fail (host != NULL, FALSE);
  if ((host->given & dirty) != 0 && (host->given & FIT_HOST_MEMORY) == 0)
    return g_set_error (error, FIT_ERROR, FIT_ERROR_OPTIONS,
                        "the dirty limits (--dirty-*) need --host-memory: the simulated "
                        "page cache is that size"), FALSE;
  if ((host->given & FIT_HOST_MEMORY) != 0 && host->memory_bytes < FIT_HOST_MEMORY_MIN)
    return g_set_error (error, FIT_ERROR, FIT_ERROR_OPTIONS,
                        "--host-memory %" G_GUINT64_FORMAT " bytes: at least 1 MiB",
                        host->memory_bytes), FALSE;
  if (((host->given & FIT_HOST_DIRTY_RATIO) != 0 && host->dirty_ratio_pct > 100)
      || ((host->given & FIT_HOST_DIRTY_BACKGROUND_RATIO) != 0
          && host->dirty_background_ratio_pct > 100))
    return g_set_error (error, FIT_ERROR, FIT_ERROR_OPTIONS,
                        "--dirty-ratio and --dirty-background-ratio are percentages "
                        "(0 to 100)"), FALSE;
  /* Writing either sysctl of a pair zeroes the other: both non-zero is no
   * state a kernel can be in. */
  if ((host->given & FIT_HOST_DIRTY_RATIO) != 0 && host->dirty_ratio_pct > 0
      && (host->given & FIT_HOST_DIRTY_BYTES) != 0 && host->dirty_bytes > 0)
    return g_set_error (error, FIT_ERROR, FIT_ERROR_OPTIONS,
                        "give --dirty-ratio or --dirty-bytes, not both (the kernel keeps "
                        "one: writing either zeroes the other)"), FALSE;
  if ((host->given & FIT_HOST_DIRTY_BACKGROUND_RATIO) != 0 && host->dirty_background_ratio_pct > 0
      && (host->given & FIT_HOST_DIRTY_BACKGROUND_BYTES) != 0 && host->dirty_background_bytes > 0)
    return g_set_error (error, FIT_ERROR, FIT_ERROR_OPTIONS,
                        "give --dirty-background-ratio or --dirty-background-bytes, not both "
                        "(the kernel keeps one: writing either zeroes the other)"), FALSE;
  if ((host->given & FIT_HOST_DIRTY_BYTES) != 0 && host->dirty_bytes > 0
      && host->dirty_bytes < FIT_DIRTY_BYTES_MIN)
    return g_set_error (error, FIT_ERROR, FIT_ERROR_OPTIONS,
                        "--dirty-bytes %" G_GUINT64_FORMAT ": the kernel's least is two pages "
                        "(8192)", host->dirty_bytes), FALSE;
  return TRUE;
}

/* @given with the kernel's defaults where a field was not given (given
 * keeps saying which were). */
static void
fit_host_resolve (const FitHost *given, FitHost *out)
{
  static const FitHost defaults = {
    .dirty_ratio_pct = FIT_HOST_DEFAULT_DIRTY_RATIO_PCT,
    .dirty_background_ratio_pct = FIT_HOST_DEFAULT_DIRTY_BACKGROUND_RATIO_PCT,
    .dirty_expire_centisecs = FIT_HOST_DEFAULT_DIRTY_EXPIRE_CENTISECS,
    .dirty_writeback_centisecs = FIT_HOST_DEFAULT_DIRTY_WRITEBACK_CENTISECS,
  };

  *out = defaults;
  if (given == NULL)
    return;
  out->given = given->given;
  out->source = given->source;
  if (given->given & FIT_HOST_MEMORY)
    out->memory_bytes = given->memory_bytes;
  if (given->given & FIT_HOST_DIRTY_RATIO)
    out->dirty_ratio_pct = given->dirty_ratio_pct;
  if (given->given & FIT_HOST_DIRTY_BACKGROUND_RATIO)
    out->dirty_background_ratio_pct = given->dirty_background_ratio_pct;
  if (given->given & FIT_HOST_DIRTY_BYTES)
    out->dirty_bytes = given->dirty_bytes;
  if (given->given & FIT_HOST_DIRTY_BACKGROUND_BYTES)
    out->dirty_background_bytes = given->dirty_background_bytes;
  if (given->given & FIT_HOST_DIRTY_EXPIRE)
    out->dirty_expire_centisecs = given->dirty_expire_centisecs;
  if (given->given & FIT_HOST_DIRTY_WRITEBACK)
    out->dirty_writeback_centisecs = given->dirty_writeback_centisecs;
}

/* The background threshold the simulated era computes when the writer
 * starts (wb-ioless.c limits(): nothing else in the page cache yet). */
static guint64
fit_background_thresh_bytes (const FitHost *host)
{
  WbDirtyTunables t;
  WbMemInfo mem = { 0 };
  guint64 bg_pages, dirty_pages;

  wb_dirty_tunables_init (&t, FIT_WB_KVER);
  wb_dirty_tunables_set_ratio (&t, host->dirty_ratio_pct);
  wb_dirty_tunables_set_background_ratio (&t, host->dirty_background_ratio_pct);
  if (host->dirty_bytes > 0)
    wb_dirty_tunables_set_bytes (&t, host->dirty_bytes);
  if (host->dirty_background_bytes > 0)
    wb_dirty_tunables_set_background_bytes (&t, host->dirty_background_bytes);
  mem.total_pages = host->memory_bytes / WB_PAGE_SIZE_BYTES;
  mem.free_pages = mem.total_pages;
  wb_global_dirty_limits (FIT_WB_KVER, &t, &mem, FALSE, &bg_pages, &dirty_pages);
  return bg_pages * WB_PAGE_SIZE_BYTES;
}

/* ---- Which writes were writeback ----------------------------------------- */

static gint64
fit_queue_ns (const TraceIo *io)
{
  return io->queue_ns >= 0 ? io->queue_ns : io->issue_ns;
}

static gboolean
fit_is_data_write (const TraceIo *io)
{
  return io->op == TRACE_OP_WRITE && io->nr_sectors > 0;
}

/* A flusher's I/O is writeback when all of it is async data writes:
 * background and kupdate writeback (WB_SYNC_NONE) carry no REQ_SYNC;
 * sync(2)'s WB_SYNC_ALL work and journal writes (REQ_SYNC, FUA, preflush)
 * are other things and keep the thread trace-driven. */
static gboolean
fit_flusher_is_writeback (const TraceIo *ios, const GArray *idx)
{
  for (guint k = 0; k < idx->len; k++)
    {
      const TraceIo *io = &ios[g_array_index (idx, guint, k)];

      if (!fit_is_data_write (io)
          || (io->rwbs & (TRACE_RWBS_SYNC | TRACE_RWBS_FUA | TRACE_RWBS_FLUSH)) != 0)
        return FALSE;
    }
  return idx->len > 0;
}

/* The fsyncs of a process whose I/O is sync data writes in bursts, each
 * ended by its own flush; 0 when it is anything else.  A burst of more
 * than one bio must have been queued without waiting: writeback submits
 * the dirty pages in one go, while O_DIRECT writes at iodepth 1 (also
 * REQ_SYNC) each wait for the previous one. */
static guint
fit_fsync_bursts (const TraceIo *ios, const GArray *idx)
{
  guint fsyncs = 0, in_burst = 0;
  gboolean waited = FALSE;
  gint64 prev_complete_ns = 0;

  for (guint k = 0; k < idx->len; k++)
    {
      const TraceIo *io = &ios[g_array_index (idx, guint, k)];

      if (fit_io_is_flush (io))
        {
          if (in_burst > 0 && waited)
            return 0;
          fsyncs += in_burst > 0;
          in_burst = 0;
          waited = FALSE;
          continue;
        }
      if (!fit_is_data_write (io) || (io->rwbs & TRACE_RWBS_SYNC) == 0
          || (io->rwbs & (TRACE_RWBS_FUA | TRACE_RWBS_FLUSH)) != 0)
        return 0;
      if (in_burst > 0 && fit_queue_ns (io) >= prev_complete_ns)
        waited = TRUE;
      prev_complete_ns = io->complete_ns;
      in_burst++;
    }
  /* Writes after the last flush were not an fsync's. */
  return in_burst > 0 ? 0 : fsyncs;
}

/* Indices of @ios by pid, queue order kept. */
static GHashTable *
fit_ios_by_pid (const TraceIo *ios, gsize n_ios)
{
  GHashTable *by_pid = g_hash_table_new_full (g_direct_hash, g_direct_equal, NULL,
                                              (GDestroyNotify) g_array_unref);

  for (gsize i = 0; i < n_ios; i++)
    {
      GArray *idx = g_hash_table_lookup (by_pid, GUINT_TO_POINTER (ios[i].pid));
      guint k = (guint) i;

      if (idx == NULL)
        {
          idx = g_array_new (FALSE, FALSE, sizeof (guint));
          g_hash_table_insert (by_pid, GUINT_TO_POINTER (ios[i].pid), idx);
        }
      g_array_append_val (idx, k);
    }
  return by_pid;
}

static void
fit_classify (FitResult *r, GHashTable *by_pid)
{
  const TraceIo *ios = (const TraceIo *) r->ios->data;

  for (guint i = 0; i < r->processes->len; i++)
    {
      FitProcess *p = g_ptr_array_index (r->processes, i);
      const GArray *idx = g_hash_table_lookup (by_pid, GUINT_TO_POINTER (p->pid));

      g_assert (idx != NULL);
      if (fit_comm_is_flusher (p->comm))
        {
          if (fit_flusher_is_writeback (ios, idx))
            p->writeback = FIT_WRITEBACK_FLUSHER;
        }
      else if ((p->fsyncs = fit_fsync_bursts (ios, idx)) > 0)
        p->writeback = FIT_WRITEBACK_FSYNC;
      if (p->writeback != FIT_WRITEBACK_NONE)
        r->writeback_bios += p->ios_by_op[TRACE_OP_WRITE] - p->flushes;
    }
}

/* ---- The writers ---------------------------------------------------------- */

typedef struct {
  guint64 first_page;
  guint64 end_page;
} FitPageRun;

static int
fit_page_run_cmp (gconstpointer a, gconstpointer b)
{
  const FitPageRun *x = a, *y = b;

  return (x->first_page > y->first_page) - (x->first_page < y->first_page);
}

static void
fit_writer_free (gpointer data)
{
  FitWriter *w = data;

  if (w == NULL)
    return;
  g_free (w->name);
  g_free (w->flusher_comms);
  g_free (w);
}

/* One writer being built: its page runs and the flusher comms seen. */
typedef struct {
  FitWriter *w;
  GArray    *runs;           /* FitPageRun */
  GPtrArray *comms;          /* char *, distinct */
  gint64     last_flush_ns;  /* queue time of its process's last flush; -1 */
  gint64     last_flusher_ns;/* queue time of the last flusher bio; -1 */
} FitWriterBuild;

static FitWriterBuild *
fit_writer_build_new (const char *name, guint32 pid)
{
  FitWriterBuild *b = g_new0 (FitWriterBuild, 1);

  b->w = g_new0 (FitWriter, 1);
  b->w->name = g_strdup (name);
  b->w->pid = pid;
  b->w->first_queue_ns = G_MAXINT64;
  b->runs = g_array_new (FALSE, FALSE, sizeof (FitPageRun));
  b->comms = g_ptr_array_new_with_free_func (g_free);
  b->last_flush_ns = b->last_flusher_ns = -1;
  return b;
}

static void
fit_writer_add_process (FitWriterBuild *b, const FitProcess *p, const TraceIo *ios,
                        const GArray *idx)
{
  gboolean flusher = p->writeback == FIT_WRITEBACK_FLUSHER;

  if (flusher && !g_ptr_array_find_with_equal_func (b->comms, p->comm, g_str_equal, NULL))
    g_ptr_array_add (b->comms, g_strdup (p->comm));
  b->w->fsyncs += p->fsyncs;
  for (guint k = 0; k < idx->len; k++)
    {
      const TraceIo *io = &ios[g_array_index (idx, guint, k)];
      gint64 q = fit_queue_ns (io);
      FitPageRun run;

      if (fit_io_is_flush (io))
        {
          b->last_flush_ns = MAX (b->last_flush_ns, q);
          continue;
        }
      run.first_page = io->sector / FIT_PAGE_SECTORS;
      run.end_page = (io->sector + io->nr_sectors + FIT_PAGE_SECTORS - 1) / FIT_PAGE_SECTORS;
      g_array_append_val (b->runs, run);
      b->w->first_queue_ns = MIN (b->w->first_queue_ns, q);
      if (flusher)
        {
          b->w->flusher_bios++;
          b->w->flusher_bytes += (guint64) io->nr_sectors * FIT_SECTOR_BYTES;
          b->last_flusher_ns = MAX (b->last_flusher_ns, q);
        }
      else
        {
          b->w->fsync_bios++;
          b->w->fsync_bytes += (guint64) io->nr_sectors * FIT_SECTOR_BYTES;
        }
    }
}

/* The pages written, their extent, and whether they fill it. */
static void
fit_writer_extent (FitWriter *w, GArray *runs)
{
  guint64 first = G_MAXUINT64, end = 0, pages = 0, cur_first = 0, cur_end = 0;

  g_assert (runs->len > 0);
  g_array_sort (runs, fit_page_run_cmp);
  for (guint k = 0; k < runs->len; k++)
    {
      const FitPageRun *run = &g_array_index (runs, FitPageRun, k);

      first = MIN (first, run->first_page);
      end = MAX (end, run->end_page);
      if (k > 0 && run->first_page <= cur_end)
        {
          cur_end = MAX (cur_end, run->end_page);
          continue;
        }
      pages += cur_end - cur_first;
      cur_first = run->first_page;
      cur_end = run->end_page;
    }
  pages += cur_end - cur_first;
  w->offset_bytes = first * FIT_WRITER_BS_BYTES;
  w->region_bytes = (end - first) * FIT_WRITER_BS_BYTES;
  w->size_bytes = pages * FIT_WRITER_BS_BYTES;
  w->sequential = pages == end - first;
}

/* How the writer paces itself: its fsyncs, and when it starts.  A block
 * trace does not show when pages were dirtied: the writer dirties them
 * from its first writeback bio on, as fast as the simulated throttling
 * lets it.  Pages a flusher wrote although they stayed under the
 * background threshold were written because they expired (kupdate writes
 * pages dirtied over dirty_expire_centisecs ago): then they were dirtied
 * that long before, and the writer starts that much earlier (at 0 at the
 * earliest). */
static void
fit_writer_pace (FitWriterBuild *b, const FitHost *host, gint64 genesis_ns)
{
  FitWriter *w = b->w;
  gint64 expire_ns = (gint64) host->dirty_expire_centisecs * 10 * 1000000;
  guint64 pages = w->size_bytes / FIT_WRITER_BS_BYTES;

  w->ends_with_fsync = w->fsyncs > 0 && b->last_flush_ns > b->last_flusher_ns;
  if (w->fsyncs >= 2)
    w->fsync_every = (guint) MAX (1, (pages + w->fsyncs / 2) / w->fsyncs);
  w->background_thresh_bytes = fit_background_thresh_bytes (host);
  w->start_ns = w->first_queue_ns - genesis_ns;
  if (w->fsyncs == 0 && w->size_bytes <= w->background_thresh_bytes)
    {
      w->start_ns = MAX (0, w->start_ns - expire_ns);
      w->expiry_start = TRUE;
    }
  w->flusher_comms = b->comms->len == 0 ? g_strdup ("") : NULL;
  if (w->flusher_comms == NULL)
    {
      g_ptr_array_add (b->comms, NULL);
      w->flusher_comms = g_strjoinv (", ", (char **) b->comms->pdata);
      g_ptr_array_remove_index (b->comms, b->comms->len - 1);
    }
}

static FitWriter *
fit_writer_build_finish (FitWriterBuild *b, const FitHost *host, gint64 genesis_ns)
{
  FitWriter *w = b->w;

  fit_writer_extent (w, b->runs);
  fit_writer_pace (b, host, genesis_ns);
  g_array_unref (b->runs);
  g_ptr_array_unref (b->comms);
  g_free (b);
  return w;
}

static gint64
fit_genesis_ns (const FitResult *r)
{
  gint64 genesis = G_MAXINT64;

  for (guint i = 0; i < r->ios->len; i++)
    genesis = MIN (genesis, fit_queue_ns (&g_array_index (r->ios, TraceIo, i)));
  return genesis;
}

/* The pages of @runs, merged: TRUE when they leave no gap. */
static gboolean
fit_runs_contiguous (GArray *runs)
{
  guint64 end = 0;

  g_array_sort (runs, fit_page_run_cmp);
  for (guint k = 0; k < runs->len; k++)
    {
      const FitPageRun *run = &g_array_index (runs, FitPageRun, k);

      if (k > 0 && run->first_page > end)
        return FALSE;
      end = MAX (end, run->end_page);
    }
  return TRUE;
}

/* Move the flusher's writes of @from into @to. */
static void
fit_writer_build_merge (FitWriterBuild *to, FitWriterBuild *from)
{
  g_array_append_vals (to->runs, from->runs->data, from->runs->len);
  for (guint k = 0; k < from->comms->len; k++)
    g_ptr_array_add (to->comms, g_strdup (g_ptr_array_index (from->comms, k)));
  to->w->flusher_bios += from->w->flusher_bios;
  to->w->flusher_bytes += from->w->flusher_bytes;
  to->w->first_queue_ns = MIN (to->w->first_queue_ns, from->w->first_queue_ns);
  to->last_flusher_ns = MAX (to->last_flusher_ns, from->last_flusher_ns);
  fit_writer_free (from->w);
  g_array_unref (from->runs);
  g_ptr_array_unref (from->comms);
  g_free (from);
}

/* Whether the flusher's writes continue the only fsync writer's: together
 * one extent without a gap, as one file written front to back whose
 * early pages the flusher wrote and the rest the fsync. */
static gboolean
fit_flusher_continues (const FitWriterBuild *fsync, const FitWriterBuild *flusher)
{
  g_autoptr(GArray) runs = g_array_new (FALSE, FALSE, sizeof (FitPageRun));

  g_array_append_vals (runs, fsync->runs->data, fsync->runs->len);
  g_array_append_vals (runs, flusher->runs->data, flusher->runs->len);
  return fit_runs_contiguous (runs);
}

/* One writer per process that fsync'd, one for the flusher's writes of the
 * device; the latter joins the only fsync writer when it continues its
 * pages (fit_flusher_continues): a block trace does not say who dirtied
 * what the flusher wrote. */
static void
fit_build_writers (FitResult *r, GHashTable *by_pid)
{
  const TraceIo *ios = (const TraceIo *) r->ios->data;
  g_autoptr(GPtrArray) builds = g_ptr_array_new ();
  FitWriterBuild *flusher_build = NULL;
  gint64 genesis_ns = fit_genesis_ns (r);

  for (guint i = 0; i < r->processes->len; i++)
    {
      FitProcess *p = g_ptr_array_index (r->processes, i);
      FitWriterBuild *b;

      if (p->writeback == FIT_WRITEBACK_NONE)
        continue;
      if (p->writeback == FIT_WRITEBACK_FSYNC)
        g_ptr_array_add (builds, b = fit_writer_build_new (p->name, p->pid));
      else if ((b = flusher_build) == NULL)
        b = flusher_build = fit_writer_build_new ("writeback", 0);
      fit_writer_add_process (b, p, ios, g_hash_table_lookup (by_pid, GUINT_TO_POINTER (p->pid)));
      p->in_writer = TRUE;
    }
  if (flusher_build != NULL && builds->len == 1
      && fit_flusher_continues (g_ptr_array_index (builds, 0), flusher_build))
    fit_writer_build_merge (g_ptr_array_index (builds, 0), flusher_build);
  else if (flusher_build != NULL)
    g_ptr_array_add (builds, flusher_build);
  for (guint k = 0; k < builds->len; k++)
    g_ptr_array_add (r->writers, fit_writer_build_finish (g_ptr_array_index (builds, k),
                                                          &r->host, genesis_ns));
}

/* ---- The largest request ----------------------------------------------- */

/* A queue limit shows as a ceiling: requests merged from smaller bios stop
 * growing at it.  The largest request is taken for the limit when at least
 * two requests reached exactly it and it is larger than every bio (so each
 * was merged up to it).  Whether max_sectors_kb or max_segments (pages of a
 * buffered writeback are rarely contiguous in memory: 128 segments of 4 KiB
 * are 512 KiB) set it, a block trace cannot tell. */
static void
fit_request_cap (FitResult *r, const TraceRequest *requests, gsize n_requests)
{
  guint32 max_req = 0;
  guint64 at_max = 0;

  for (guint i = 0; i < r->ios->len; i++)
    {
      const TraceIo *io = &g_array_index (r->ios, TraceIo, i);

      if (io->op == TRACE_OP_READ || io->op == TRACE_OP_WRITE)
        r->max_bio_sectors = MAX (r->max_bio_sectors, io->nr_sectors);
    }
  for (gsize i = 0; i < n_requests; i++)
    {
      if (requests[i].op != TRACE_OP_READ && requests[i].op != TRACE_OP_WRITE)
        continue;
      if (requests[i].nr_sectors > max_req)
        {
          max_req = requests[i].nr_sectors;
          at_max = 0;
        }
      at_max += requests[i].nr_sectors == max_req;
    }
  if (max_req > r->max_bio_sectors && at_max >= 2)
    {
      r->request_cap_sectors = max_req;
      r->request_cap_count = at_max;
    }
}

/* How long the kernel took per page to hand writeback to the block layer:
 * a submitter (the flusher, an fsync) prepares page after page (lock it,
 * set_page_writeback, add it to a bio) and queues each bio as it fills,
 * so between two of its writeback bios queued back to back lies the CPU
 * time of the first one's pages.  A submitter that sleeps (a request tag,
 * wbt, the flusher's timer) leaves a longer gap; the median of the
 * per-page times is what the pages cost, the sleeps' rare long gaps
 * aside, and gaps over FIT_WB_PAGE_COST_GAP_NS are not back to back.
 * The figure is the pairs' total time over their total pages, leaving out
 * the pairs whose time a page is above 4 times the median or the 99th
 * percentile, whichever is larger (a sleep; they are rare, one per
 * request at most): a text trace's times are whole microseconds, about a
 * page's time, so the median alone is often 0 and would round the figure
 * away. */
static void
fit_writeback_page_cost (FitResult *r, GHashTable *by_pid)
{
  const TraceIo *ios = (const TraceIo *) r->ios->data;
  g_autoptr(GArray) per_page = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(GArray) gaps = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(GArray) pages = g_array_new (FALSE, FALSE, sizeof (double));
  double median, bound, sum_gap = 0.0, sum_pages = 0.0;

  for (guint i = 0; i < r->processes->len; i++)
    {
      const FitProcess *p = g_ptr_array_index (r->processes, i);
      const GArray *idx = g_hash_table_lookup (by_pid, GUINT_TO_POINTER (p->pid));
      const TraceIo *prev = NULL;

      if (p->writeback == FIT_WRITEBACK_NONE)
        continue;
      for (guint k = 0; k < idx->len; k++)
        {
          const TraceIo *io = &ios[g_array_index (idx, guint, k)];
          gint64 gap;

          if (!fit_is_data_write (io))
            {
              prev = NULL;
              continue;
            }
          r->writeback_bio_max_bytes = MAX (r->writeback_bio_max_bytes,
                                            (guint64) io->nr_sectors * FIT_SECTOR_BYTES);
          gap = prev != NULL ? fit_queue_ns (io) - fit_queue_ns (prev) : -1;
          if (gap >= 0 && gap <= FIT_WB_PAGE_COST_GAP_NS)
            {
              double np = MAX (1.0, prev->nr_sectors / (double) FIT_PAGE_SECTORS);
              double g = (double) gap, v = g / np;
              g_array_append_val (gaps, g);
              g_array_append_val (pages, np);
              g_array_append_val (per_page, v);
            }
          prev = io;
        }
    }
  r->writeback_page_cost_gaps = per_page->len;
  if (per_page->len < FIT_WB_PAGE_COST_MIN)
    return;
  g_array_sort (per_page, fit_double_cmp);
  median = fit_quantile ((const double *) per_page->data, per_page->len, 0.5);
  bound = MAX (4.0 * median, fit_quantile ((const double *) per_page->data, per_page->len, 0.99));
  for (guint k = 0; k < gaps->len; k++)
    if (g_array_index (gaps, double, k) <= bound * g_array_index (pages, double, k))
      {
        sum_gap += g_array_index (gaps, double, k);
        sum_pages += g_array_index (pages, double, k);
      }
  r->writeback_page_cost_ns = sum_pages > 0 ? sum_gap / sum_pages : 0.0;
}

void
fit_writeback (FitResult *r, const TraceRequest *requests, gsize n_requests,
               const FitHost *host)
{
  g_autoptr(GHashTable) by_pid = NULL;

  g_assert (r->processes != NULL && r->ios != NULL);
  fit_host_resolve (host, &r->host);
  r->writers = g_ptr_array_new_with_free_func (fit_writer_free);
  fit_request_cap (r, requests, n_requests);
  by_pid = fit_ios_by_pid ((const TraceIo *) r->ios->data, r->ios->len);
  fit_classify (r, by_pid);
  if (r->writeback_bios == 0)
    return;
  if ((r->host.given & FIT_HOST_MEMORY) == 0)
    {
      r->writeback_note = g_strdup_printf (
        "%" G_GUINT64_FORMAT " bios of page-cache writeback kept trace-driven: a buffered "
        "writer needs the host's page cache, which no trace records (give --host-memory, "
        "and the dirty limits --dirty-ratio or --dirty-bytes and their background twins)",
        r->writeback_bios);
      return;
    }
  fit_build_writers (r, by_pid);
  fit_writeback_page_cost (r, by_pid);
}
